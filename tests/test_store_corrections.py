"""Corrections: ``Store.delete`` and ``Store.replace`` (src/podium/store/corrections.py),
on SQLite and PostgreSQL (the ``store_url`` fixture).

Every correction is checked against the history corrected by hand: the store's rows
(every table but snapshots, keys replaced by ids and handles, timestamps left out)
equal those of a fresh store that ingested the corrected history, its ratings and
histories equal a plain :class:`~podium.rater.Rater` over it, and the Rater it caches
equals ``Rater.extend`` of it array by array.  Readers running during a correction
see the old or the new state only.
"""

from __future__ import annotations

import random
import time
from typing import Any

import _corrections as corr
import _store_cases as cases
import _team_system
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podium import Contest
from podium.errors import ContestError
from podium.io import synthetic_contests
from podium.store import CorrectionResult, Store, StoreError, UnknownContestError


def _check(store: Store, history: list[Contest], system: str = "mmr", *, cached: bool = True,
           **options: Any) -> None:
    """The store equals a fresh one of ``history``, a Rater of it, and (``cached``: it
    made the last correction) caches that Rater."""
    corr.assert_same_logical(corr.logical_dump(store), corr.fresh_dump(history, system,
                                                                       **options))
    cases.assert_store_equals_rater(store, cases._reference(history, system))
    if cached:
        corr.assert_cached_rater_is_fresh(store, history, system)


def _without(c: Contest, handle: str) -> Contest:
    """``c`` with ``handle`` disqualified: removed, the places behind it moved up."""
    k = c.handles.index(handle)
    keep = [i for i in range(len(c)) if i != k]
    lo, hi = c.lo.copy(), c.hi.copy()
    tie = int(hi[k] - lo[k])
    after = lo > hi[k]
    lo[after] -= 1
    hi[after] -= 1
    if tie:  # k shared a tie: the others of it now share one place fewer
        same = (lo == c.lo[k]) & (np.arange(len(c)) != k)
        hi[same] -= 1
    return Contest.from_arrays([c.handles[i] for i in keep], lo[keep], hi[keep], name=c.name,
                               time_seconds=c.time_seconds, url=c.url, weight=c.weight,
                               perf_ceiling=c.perf_ceiling)


def _history() -> list[Contest]:
    """Tied history plus a contest of players seen nowhere else (they are removed with
    it) and a contest with a URL id."""
    cs = cases.tied_history(n_players=30, rounds=8, seed=11)
    loners = Contest([("solo_a", 0, 0), ("solo_b", 1, 1), (cs[1].handles[0], 2, 2)],
                     name="loners", time_seconds=cs[4].time_seconds + 1)
    c6 = cs[6]
    url = Contest.from_arrays(c6.handles, c6.lo, c6.hi, name=c6.name,
                              time_seconds=c6.time_seconds, url="https://codeforces.com/contest/1")
    return [*cs[:5], loners, url, *cs[7:]]


def _ingest(url: str, history: list[Contest], **options: Any) -> Store:
    store = Store.create(url, "mmr", **options)
    for c in history:
        store.ingest(c)
    return store


# ---------------------------------------------------------------------- delete

@pytest.mark.parametrize("which", [0, 3, 5, 6, -1])
def test_delete_equals_fresh_history(store_url, which):
    history = _history()
    k = which % len(history)
    with _ingest(store_url, history, snapshot_every=3) as store:
        gone = history[k]
        cid = gone.url or gone.name
        res = store.delete(cid)
        rest = history[:k] + history[k + 1:]
        assert isinstance(res, CorrectionResult)
        assert (res.status, res.contest_id, res.index, res.new_index) == ("deleted", cid, k,
                                                                          None)
        assert res.rerated == len(history) - k - 1
        assert res.players == len(gone)
        left = {h for c in rest for h in c.handles}
        assert res.players_removed == len(set(gone.handles) - left)
        assert store.contest(cid) is None
        _check(store, rest)
        # the store goes on: an appended contest, then a cold process from the snapshots
        x = synthetic_contests(30, 1, seed=99, start_time=history[-1].time_seconds + 5)[0]
        extra = Contest.from_arrays(x.handles, x.lo, x.hi, name="extra",
                                    time_seconds=x.time_seconds)
        assert store.ingest(extra).status == "applied"
    with Store.open(store_url, cache=False) as cold:
        cases.assert_store_equals_rater(cold, cases._reference([*rest, extra], "mmr"))


def test_delete_removes_only_players_in_no_remaining_contest(store_url):
    """``zz_new`` is only in the unrated contest (one player): deleting another
    contest keeps it (unrated); deleting that one removes it; ``solo_*`` go with theirs."""
    history = _history()
    with _ingest(store_url, history) as store:
        res = store.delete("loners")
        assert res.players_removed == 2
        assert store.player("solo_a") is None
        handles = set(store.ratings_frame()["handle"])
        assert history[1].handles[0] in handles
        res = store.delete("alone")
        assert res.players_removed == 1
        assert store.handle_spellings(["zz_new"]) == {}
        rest = [c for c in history if c.name not in ("loners", "alone")]
        _check(store, rest)


def test_delete_everything_and_start_again(store_url):
    history = _history()[:3]
    with _ingest(store_url, history) as store:
        for c in reversed(history):
            store.delete(c.url or c.name)
        assert store.stats()["contests"] == 0 and store.stats()["handles"] == 0
        _check(store, [])
        for c in history:
            store.ingest(c)
        _check(store, history)


def test_unknown_id_changes_nothing(store_url):
    history = _history()[:4]
    with _ingest(store_url, history) as store:
        before = cases.dump(store_url)
        with pytest.raises(UnknownContestError, match="no contest with id 'nope'") as info:
            store.delete("nope")
        assert isinstance(info.value, StoreError) and info.value.contest_id == "nope"
        with pytest.raises(UnknownContestError, match="'renamed'"):
            store.replace(history[1], contest_id="renamed")
        with pytest.raises(UnknownContestError):
            store.delete("")
        assert cases.dump(store_url) == before
        assert store.ingest(_history()[4]).status == "applied"


# ---------------------------------------------------------------------- replace

def test_replace_disqualified_player_equals_fresh_history(store_url):
    history = _history()
    with _ingest(store_url, history, snapshot_every=2) as store:
        k = 6
        fixed = _without(history[k], history[k].handles[0])
        res = store.replace(fixed)
        assert (res.status, res.index, res.new_index, res.rerated) == ("replaced", k, k,
                                                                       len(history) - k - 1)
        assert res.players == len(fixed) and res.previous_players == len(history[k])
        assert res.contest_id == "https://codeforces.com/contest/1"
        assert res.content_hash != res.previous_hash
        corrected = [*history[:k], fixed, *history[k + 1:]]
        _check(store, corrected)
        again = store.replace(fixed)
        assert (again.status, again.rerated) == ("unchanged", 0)
        assert again.content_hash == again.previous_hash == res.content_hash
        _check(store, corrected)


def test_replace_unchanged_writes_nothing(store_url):
    history = _history()
    with _ingest(store_url, history) as store:
        before = cases.dump(store_url)
        res = store.replace(history[3])
        assert res.status == "unchanged" and res.index == res.new_index == 3
        assert cases.dump(store_url) == before


def test_replace_fixes_a_tie_adds_and_removes_players(store_url):
    history = _history()
    with _ingest(store_url, history, snapshot_every=3) as store:
        old = history[5]  # "loners": solo_a, solo_b and a regular
        new = Contest([("solo_a", 0, 1), ("newcomer", 0, 1), (old.handles[2], 2, 2)],
                      name="loners", time_seconds=old.time_seconds)
        res = store.replace(new)
        assert (res.players_added, res.players_removed) == (1, 1)  # newcomer in, solo_b out
        corrected = [*history[:5], new, *history[6:]]
        _check(store, corrected)


@pytest.mark.parametrize("move", ["earlier", "later", "first", "last"])
def test_replace_moves_a_contest_in_time(store_url, move):
    history = _history()
    k = 4
    old = history[k]
    t = {"earlier": history[1].time_seconds, "later": history[8].time_seconds,
         "first": history[0].time_seconds - 100, "last": history[-1].time_seconds + 100}[move]
    new = Contest.from_arrays(old.handles, old.lo, old.hi, name=old.name, time_seconds=t)
    rest = history[:k] + history[k + 1:]
    # after the stored contests of the same or an earlier time
    q = sum(c.time_seconds <= t for c in rest)
    corrected = [*rest[:q], new, *rest[q:]]
    with _ingest(store_url, history, snapshot_every=2) as store:
        res = store.replace(new)
        assert (res.index, res.new_index) == (k, q)
        assert res.rerated == len(history) - min(k, q) - 1
        assert store.contest_ids() == [c.url or c.name for c in corrected]
        _check(store, corrected)


def test_replace_keeps_the_id_when_name_and_url_change(store_url):
    history = _history()
    with _ingest(store_url, history) as store:
        old = history[2]
        new = Contest.from_arrays(old.handles, old.lo, old.hi, name="renamed round",
                                  time_seconds=old.time_seconds, url="https://example.org/r",
                                  weight=0.5)
        res = store.replace(new, contest_id=old.name)
        assert res.contest_id == old.name and res.name == "renamed round"
        view = store.contest(old.name)
        assert view is not None and view.name == "renamed round" and view.weight == 0.5
        corrected = [*history[:2], new, *history[3:]]
        ids = [c.url or c.name for c in corrected]
        ids[2] = old.name
        corr.assert_same_logical(corr.logical_dump(store), corr.fresh_dump(corrected, ids=ids))


def test_replacement_passes_the_input_rules(store_url):
    history = _history()[:4]
    with _ingest(store_url, history) as store:
        before = cases.dump(store_url)
        old = history[1]
        bad = Contest.from_arrays(old.handles, old.lo, old.hi, name=old.name,
                                  time_seconds=old.time_seconds, weight=1e9)
        with pytest.raises(ContestError, match="weight"):
            store.replace(bad)
        bad = Contest([("ok", 0, 0), ("evil\u202egnp", 1, 1)], name=old.name,
                      time_seconds=old.time_seconds)
        with pytest.raises(ContestError, match="U\\+202E"):
            store.replace(bad)
        with pytest.raises(TypeError):
            store.replace("not a contest")  # type: ignore[arg-type]
        assert cases.dump(store_url) == before


def test_team_contests(store_url):
    """Elo-MMR rates team rounds: delete and replace around team contests (teams,
    member weights and team places rebuilt exactly from the standings)."""
    history = _team_system.team_history(rounds=10)
    assert any(c.team_round for c in history)
    with Store.create(store_url, "mmr", snapshot_every=3) as store:
        for c in history:
            store.ingest(c)
        team = next(k for k, c in enumerate(history) if c.team_round and k > 1)
        store.delete(history[team].url or history[team].name)
        rest = history[:team] + history[team + 1:]
        _check(store, rest)
        # replace a team contest by the same teams with the last team left out
        k = next(k for k, c in enumerate(rest) if c.team_round and k > 2)
        c = rest[k]
        teams = c.teams
        assert teams is not None
        cut = int(teams.offsets[-2])
        names = list(teams.names[:-1])
        starts = teams.offsets[:-2]
        new = Contest.from_team_arrays(
            c.handles[:cut], teams.offsets[:-1], names, c.lo[starts],
            np.minimum(c.hi[starts], len(names) - 1), teams.weight[:cut], name=c.name,
            time_seconds=c.time_seconds, url=c.url)
        res = store.replace(new)
        assert res.status == "replaced"
        _check(store, [*rest[:k], new, *rest[k + 1:]])


def test_case_insensitive_store(store_url):
    history = _history()
    with Store.create(store_url, "mmr", case_insensitive_handles=True) as store:
        for c in history:
            store.ingest(c)
        old = history[4]
        shouted = Contest.from_arrays([h.upper() for h in old.handles], old.lo, old.hi,
                                      name=old.name, time_seconds=old.time_seconds)
        assert store.replace(shouted).status == "unchanged"  # respelled as stored
        fixed = _without(shouted, shouted.handles[1])
        res = store.replace(fixed)
        assert res.status == "replaced" and res.players_added == 0
        stored = _without(old, old.handles[1])
        corrected = [*history[:4], stored, *history[5:]]
        corr.assert_same_logical(
            corr.logical_dump(store),
            corr.fresh_dump(corrected, case_insensitive_handles=True))
        cases.assert_store_equals_rater(store, cases._reference(corrected, "mmr"))


def test_other_processes_see_the_correction(store_url):
    """A second Store object (another process's view, with its own cached Rater and
    player keys) ingests correctly after a correction made by the first, even with a
    handle that the correction removed."""
    history = _history()
    with _ingest(store_url, history[:-2]) as writer, Store.open(store_url) as other:
        assert other.ingest(history[-2]).status == "applied"  # caches filled
        writer.delete("loners")  # removes solo_a and solo_b
        late = Contest([("solo_a", 0, 0), ("brand_new", 1, 1), (history[0].handles[0], 2, 2)],
                       name="late", time_seconds=history[-1].time_seconds + 10)
        assert other.ingest(late).status == "applied"
        assert writer.ingest(history[-1], recompute_from=True).status == "recomputed"
        corrected = [*(c for c in history if c.name != "loners"), late]
        cases.assert_store_equals_rater(writer, cases._reference(corrected, "mmr"))
        corr.assert_same_logical(corr.logical_dump(store_url), corr.fresh_dump(corrected))


@pytest.mark.parametrize("system", ["codeforces", "trueskill"])
def test_other_systems(store_url, system):
    """The same for the Codeforces system and TrueSkill; a replacement of the first
    contest re-rates everything."""
    history = _history()
    with Store.create(store_url, system) as store:
        for c in history:
            store.ingest(c)
        fixed = _without(history[0], history[0].handles[2])
        store.replace(fixed)
        store.delete(history[4].name)
        corrected = [fixed, *history[1:4], *history[5:]]
        _check(store, corrected, system)


# ---------------------------------------------------------------------- random sequences

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_corrections_equal_fresh_history(store_url, seed):
    """A random history and a random sequence of deletions and replacements (players
    disqualified, moved in time, new players, whole new standings); after each one the
    store equals the corrected history from scratch."""
    rng = random.Random(seed)
    history = synthetic_contests(25, 10, seed=seed, participation=0.6, tie_resolution=30.0)
    with Store.create(store_url, "mmr", snapshot_every=rng.choice((2, 3, 4))) as store:
        for c in history:
            store.ingest(c)
        current = list(history)
        for step in range(6):
            k = rng.randrange(len(current))
            c = current[k]
            kind = rng.choice(("delete", "dq", "move", "new"))
            if kind == "delete" or len(c) < 3:
                store.delete(c.name)
                current.pop(k)
            else:
                if kind == "dq":
                    new = _without(c, rng.choice(c.handles))
                elif kind == "move":
                    t = rng.choice(current).time_seconds + rng.choice((-1, 0, 1))
                    new = Contest.from_arrays(c.handles, c.lo, c.hi, name=c.name,
                                              time_seconds=t)
                else:
                    hs = rng.sample([f"p{i:02d}" for i in range(25)] + ["x1", "x2"], 6)
                    new = Contest.from_places(hs, [rng.randint(1, 4) for _ in hs], name=c.name,
                                              time_seconds=c.time_seconds)
                res = store.replace(new)
                rest = current[:k] + current[k + 1:]
                q = k if new.time_seconds == c.time_seconds else sum(
                    x.time_seconds <= new.time_seconds for x in rest)
                assert res.new_index == q, (step, kind)
                current = [*rest[:q], new, *rest[q:]]
            if not current:
                break
            _check(store, current)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n_players=st.integers(4, 14), rounds=st.integers(2, 7), seed=st.integers(0, 2**16),
       ops=st.lists(st.tuples(st.sampled_from(["delete", "dq", "move", "new", "tie"]),
                              st.floats(0, 1, exclude_max=True),
                              st.floats(0, 1, exclude_max=True)), min_size=1, max_size=4),
       every=st.integers(1, 4))
def test_any_correction_sequence_equals_fresh_history(n_players, rounds, seed, ops, every):
    """Hypothesis: any history, any sequence of deletions and replacements (a player
    disqualified, the contest moved in time, new standings, everybody tied), any
    snapshot interval: after each correction an in-memory store equals the corrected
    history from scratch."""
    history = synthetic_contests(n_players, rounds, seed=seed, participation=0.7,
                                 tie_resolution=30.0)
    history = [c for c in history if len(c) >= 2]
    with Store.create("sqlite://", "mmr", snapshot_every=every) as store:
        for c in history:
            store.ingest(c)
        current = list(history)
        for kind, u, v in ops:
            if not current:
                break
            k = int(u * len(current))
            c = current[k]
            if kind == "delete" or len(c) < 3:
                store.delete(c.name)
                current.pop(k)
                _check(store, current)
                continue
            if kind == "dq":
                new = _without(c, c.handles[int(v * len(c))])
            elif kind == "move":
                t = current[int(v * len(current))].time_seconds + int(v * 3) - 1
                new = Contest.from_arrays(c.handles, c.lo, c.hi, name=c.name, time_seconds=t)
            elif kind == "tie":
                new = Contest.from_places(list(c.handles), [1] * len(c), name=c.name,
                                          time_seconds=c.time_seconds)
            else:
                hs = list(dict.fromkeys([f"q{i}" for i in range(2 + int(v * 4))]
                                        + list(c.handles[:2])))
                new = Contest.from_places(hs, list(range(1, len(hs) + 1)), name=c.name,
                                          time_seconds=c.time_seconds)
            res = store.replace(new)
            rest = current[:k] + current[k + 1:]
            q = k if new.time_seconds == c.time_seconds else sum(
                x.time_seconds <= new.time_seconds for x in rest)
            assert res.new_index == q
            current = [*rest[:q], new, *rest[q:]]
            _check(store, current)


# ---------------------------------------------------------------------- readers

def test_readers_see_old_or_new_state_during_a_correction(store_url):
    """A reader thread reads the leaderboard, players and contests without pause while
    a correction re-rates 30 contests (slowed down at each stage by its hooks): every
    answer equals the answer of the old state or of the new one, and reads kept going
    during the correction."""
    history = synthetic_contests(200, 32, seed=8, participation=0.5)
    handles = [history[1].handles[0], history[-1].handles[3], history[5].handles[7]]
    ids = [history[1].name, history[10].name, history[-1].name]
    with _ingest(store_url, history) as store:
        old = corr.reads(store, handles, ids)
    corrected = [history[0], *history[2:]]
    with Store.create("sqlite://", "mmr") as ref:
        for c in corrected:
            ref.ingest(c)
        new = corr.reads(ref, handles, ids)
    assert old != new

    def slow(stage: str) -> None:
        time.sleep(0.3)

    with Store.open(store_url, hooks=slow) as store:
        seen, during = corr.read_during(store_url, lambda: store.delete(history[1].name),
                                        handles, ids)
        assert corr.reads(store, handles, ids) == new
    assert during >= 3, during
    n_old = n_new = 0
    for got in seen:
        assert got[0] in (old[0], new[0])
        for part in (1, 2):
            for a, b, c in zip(got[part], old[part], new[part], strict=True):
                assert a in (b, c)
        n_old += got == old
        n_new += got == new
    assert n_old >= 1 and n_new >= 1


# ---------------------------------------------------------------------- command line

def test_cli_delete_and_replace(store_url, tmp_path, capsys):
    """``podium store delete`` and ``podium store replace`` (the file's id names the
    contest; ``--contest-id`` another one), each printing what was re-rated; errors are
    one ``podium: error:`` line naming the id or the file, and change nothing."""
    from podium.cli import main
    from podium.io import write_contest_json

    history = _history()
    _ingest(store_url, history).close()
    capsys.readouterr()
    assert main(["store", "delete", "loners", "--db", store_url]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("deleted #5 'loners': re-rated 3 later contest(s), 2 player(s) "
                          "removed, in ")
    rest = [c for c in history if c.name != "loners"]
    fixed = _without(rest[5], rest[5].handles[0])  # the contest with a URL id
    path = tmp_path / "fixed.json"
    write_contest_json(fixed, path)
    assert main(["store", "replace", str(path), "--db", store_url]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith(f"replaced #5 {fixed.name!r} (https://codeforces.com/contest/1): "
                          f"{len(fixed)} players (were {len(fixed) + 1}); re-rated 2 later "
                          "contest(s), 0 player(s) removed, 0 added, in ")
    assert main(["store", "replace", str(path), "--db", store_url]) == 0
    assert capsys.readouterr().out.startswith("unchanged #5 ")
    corrected = [*rest[:5], fixed, *rest[6:]]
    before = cases.dump(store_url)
    assert main(["store", "delete", "https://codeforces.com/contest/2", "--db",
                 store_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("podium: error: no contest with id "
                          "'https://codeforces.com/contest/2' in ")
    assert err.count("\n") == 1
    assert main(["store", "replace", str(path), "--contest-id", "other", "--db",
                 store_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"podium: error: {path}: no contest with id 'other'")
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "time_seconds": 1, "standings": [["a", 0, 0], ["a", 1, 1]]}')
    assert main(["store", "replace", str(bad), "--db", store_url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("podium: error:") and "bad.json" in err
    two = tmp_path / "two"
    from podium.io import write_contest_dir

    write_contest_dir(history[:2], two)
    assert main(["store", "replace", str(two), "--db", store_url]) == 1
    assert "holds 2 contests" in capsys.readouterr().err
    assert cases.dump(store_url) == before
    with Store.open(store_url) as store:
        _check(store, corrected, cached=False)


def test_ids_no_database_can_hold_are_unknown(store_url):
    with _ingest(store_url, _history()[:2]) as store:
        for cid in ("a\x00b", "\ud800"):
            with pytest.raises(UnknownContestError):
                store.delete(cid)
