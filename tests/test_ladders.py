"""Ladders, seasons, ratings as of a time, the provisional rule and cross-ladder
priors, in the store (both databases, the ``store_url`` fixture).

Each property is checked against an independent computation: a plain Rater over the
ladder's contests (with :func:`podium.beliefs.start_season` at the boundaries), the
system's public ``drift`` and ``season_reset`` on the Rater's own table, a brute-force
sort of every player's as-of rating.
"""

from __future__ import annotations

from typing import Any

import _store_cases as cases
import numpy as np
import pytest

from podium import Contest, Rater
from podium.beliefs import SeasonReset, SeasonStart, seed_players, start_season, widened_prior
from podium.errors import ConfigError
from podium.io import synthetic_contests
from podium.store import Store, StoreError, UnknownLadderError
from podium.store.asof import AsOfError
from podium.systems import get_system

T0 = 1_600_000_000
DAY = 86_400


def history(n: int = 6, seed: int = 3, players: int = 30, start: int = T0) -> list[Contest]:
    cs = synthetic_contests(players, n, seed=seed, participation=0.7, start_time=start)
    return cs


def renamed(cs: list[Contest], tag: str, shift: int = 0) -> list[Contest]:
    return [Contest(c.standings, name=f"{tag} {c.name}", time_seconds=c.time_seconds + shift)
            for c in cs]


# ---------------------------------------------------------------------- ladders
def test_ladders_are_independent_stores(store_url: str) -> None:
    a, b = history(6, seed=1), renamed(history(5, seed=2), "b")
    with Store.create(store_url, "mmr", allow_future=True) as store:
        store.ingest_many(a[:3])
        duo = store.create_ladder("duo", "glicko")
        assert duo is store.ladder("duo") and duo.ladder_name == "duo"
        duo.ingest_many(b[:2])
        store.ingest_many(a[3:])
        for c in b[2:]:
            duo.ingest(c)
        ref_a, ref_b = Rater("mmr"), Rater("glicko")
        ref_a.extend(a)
        ref_b.extend(b)
        cases.assert_store_equals_rater(store, ref_a)
        cases.assert_store_equals_rater(duo, ref_b)
        assert [x.name for x in store.ladders()] == ["default", "duo"]
        info = {x.name: x for x in store.ladders()}
        assert (info["duo"].system, info["duo"].contests) == ("glicko", 5)
        assert store.contest(b[0].name) is None and duo.contest(a[0].name) is None
        # another process sees the same
    with Store.open(store_url, ladder="duo") as duo2:
        cases.assert_store_equals_rater(duo2, ref_b)
        assert duo2.ladder("default").stats()["contests"] == 6


@pytest.mark.parametrize("name, why", [
    ("", "must not be empty"), ("   ", "must not be empty"), ("x" * 65, "at most 64"),
    ("a\tb", "control character"), ("a\x00b", "control character"), ("a/b", "'/'"),
    ("..", "'.' or '..'"), ("a\u202eb", "invisible format character"),
    # the identifier rule of handles and contest ids (core.guards.identifier_problem)
    ("duo\u3164", "default-ignorable"), ("\u0301duo", "combining mark"),
    ("d\ue000o", "private-use"),
])
def test_ladder_names_refused(store_url: str, name: str, why: str) -> None:
    with Store.create(store_url, "mmr") as store:
        with pytest.raises(StoreError, match=why):
            store.create_ladder(name, "mmr")
        with pytest.raises(UnknownLadderError):
            store.ladder(name)


def test_unknown_ladder_is_named(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        with pytest.raises(UnknownLadderError, match="no ladder 'nope'") as exc:
            store.ladder("nope")
        assert exc.value.ladder == "nope"
        with pytest.raises(StoreError, match="exists already"):
            store.create_ladder("default", "mmr")
        store.create_ladder("Zoë", "mmr")
        assert store.create_ladder("Zoë", "mmr", exist_ok=True).ladder_name == "Zoë"
        with pytest.raises(StoreError, match="rates with 'mmr', not 'glicko'"):
            store.create_ladder("Zoë", "glicko", exist_ok=True)
    with pytest.raises(UnknownLadderError, match="no ladder 'nope'"):
        Store.open(store_url, ladder="nope")
    with Store.open_or_create(store_url, "glicko", ladder="fresh") as fresh:
        assert fresh.system_name == "glicko"


def test_writes_hold_the_lock_of_their_ladder(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        duo = store.create_ladder("duo", "mmr")
        a, b = store.services.context, duo.services.context
        assert a.lock_key != b.lock_key and a.tables.players.name == "players"
        assert b.tables.players.name == "ladder1_players"


# ---------------------------------------------------------------------- seasons
def _season_reference(items: list[Contest | SeasonStart], system: str = "mmr") -> Rater:
    r = Rater(system)
    for it in items:
        if isinstance(it, SeasonStart):
            start_season(r, it)
        else:
            r.add(it)
    return r


@pytest.mark.parametrize("system", ["mmr", "trueskill", "codeforces", "tcsys"])
def test_seasons_reset_keep_final_leaderboards_and_replay(store_url: str, system: str) -> None:
    cs = history(8)
    boundary = cs[3].time_seconds + 10
    with Store.create(store_url, system, snapshot_every=3) as store:
        store.ingest_many(cs[:4])
        final = store.ratings_frame()
        info = store.new_season("soft:0.5:0.3", time_seconds=boundary)
        assert (info.number, info.contest_id, info.reset) == (2, "season:2", "soft:0.5:0.3")
        store.ingest_many(cs[4:6])
        store.ingest(cs[6])
        start = SeasonStart(2, boundary, SeasonReset(0.5, 0.3))
        ref = _season_reference([*cs[:4], start, *cs[4:7]], system)
        cases.assert_store_equals_rater(store, ref)
        # the final leaderboard of season 1: the ratings before the reset
        old = store.leaderboard(season=1, limit=100)
        assert [(r.handle, r.mu, r.sigma, r.display_rating) for r in old] == [
            (r.handle, r.mu, r.sigma, r.display_rating) for r in final.itertuples()]
        with pytest.raises(StoreError, match="no season 3"):
            store.leaderboard(season=3)
        # the boundary in every history, and explained
        h = old[0].handle
        view = store.player(h)
        assert view is not None
        kinds = [x.kind for x in view.history]
        assert kinds.count("season") == 1
        ev = next(x for x in view.history if x.kind == "season")
        assert ev.contest_id == "season:2" and ev.place == -1
        out = store.explain("season:2", h)
        assert (out.mu_before, out.sigma_before) == (old[0].mu, old[0].sigma)
        assert (out.mu_after, out.sigma_after) == (ev.mu, ev.sigma)
        assert all(e.holds for e in out.equations)
        assert [s.number for s in store.seasons()] == [1, 2]
    # a fresh process replays from the snapshots (some before the boundary)
    with Store.open(store_url, cache=False) as again:
        again.ingest(cs[7])
        ref.add(cs[7])
        cases.assert_store_equals_rater(again, ref)


def test_a_finished_season_is_closed(store_url: str) -> None:
    cs = history(6)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs[:3])
        store.new_season("soft", time_seconds=cs[2].time_seconds + 1)
        store.ingest(cs[4])
        with pytest.raises(StoreError, match="season 1, which ended"):
            store.delete(cs[1].name)
        with pytest.raises(StoreError, match="season 1, which ended"):
            store.ingest(cs[3].__class__(cs[3].standings, name="late",
                                         time_seconds=cs[1].time_seconds + 5),
                         recompute_from=True)
        # the current season can be corrected
        store.ingest(cs[5])
        store.delete(cs[4].name)
        start = SeasonStart(2, cs[2].time_seconds + 1, SeasonReset.parse("soft"))
        cases.assert_store_equals_rater(store, _season_reference([*cs[:3], start, cs[5]]))


def test_reset_policies() -> None:
    assert SeasonReset.parse("hard") == SeasonReset(0.0, 1.0)
    assert SeasonReset.parse("none").text == "none"
    assert SeasonReset.parse(None) == SeasonReset.parse("soft")
    assert SeasonReset.parse("soft:0.25:0.5") == SeasonReset(0.25, 0.5)
    for bad in ("softer", "soft:2", "soft:x", "soft:nan"):
        with pytest.raises(ConfigError):
            SeasonReset.parse(bad)


@pytest.mark.parametrize("system", ["mmr", "mmr-simple", "elo-r", "glicko", "trueskill",
                                    "openskill-pl", "tcsys", "codeforces", "elosrm", "elo-single"])
def test_soft_reset_per_system(system: str) -> None:
    """``none`` changes nothing; a reset moves mu toward the newcomer's mean and sigma toward
    the newcomer's (never away); the system's state then rates from the new belief."""
    cs = history(5, players=20)
    base = Rater(system)
    base.extend(cs[:4])
    same = Rater(system)
    same.extend(cs[:4])
    start_season(same, SeasonStart(2, cs[3].time_seconds + 1, SeasonReset.parse("none")))
    n = base.players.n
    assert np.array_equal(same.players.mu[:n], base.players.mu[:n])
    reset = Rater(system)
    reset.extend(cs[:4])
    run = start_season(reset, SeasonStart(2, cs[3].time_seconds + 1, SeasonReset(0.5, 0.5)))
    m, s0 = reset.system.newcomer(None)
    assert np.all(np.abs(run.mu_after - m) <= np.abs(run.mu_before - m) + 0.5)
    assert np.all((run.sigma_after >= run.sigma_before) | (run.sigma_before > s0))
    reset.add(cs[4])  # rates on
    assert np.isfinite(reset.players.mu[:reset.players.n]).all()


def test_systems_that_re_solve_refuse_a_reset() -> None:
    r = Rater("elo-lsq")
    r.extend(history(3, players=10))
    with pytest.raises(ConfigError, match="re-solves every rating"):
        start_season(r, SeasonStart(2, T0 + 10 * DAY, SeasonReset.parse("soft")))
    start_season(r, SeasonStart(2, T0 + 10 * DAY, SeasonReset.parse("none")))


# ---------------------------------------------------------------------- as of a time
DRIFTING = [("mmr", {"drift_per_day": 25.0}), ("mmr-plus", {"drift_per_day": 9.0}),
            ("mmr-fast", {"drift_per_day": 4.0})]


@pytest.mark.parametrize("system, params", DRIFTING)
def test_ratings_as_of_are_the_systems_drifted_prior(store_url: str, system: str,
                                                     params: dict[str, Any]) -> None:
    """The store's as-of mu and sigma are :meth:`RatingSystem.drift` of an independent
    Rater's table, bit for bit; and drift is the time part of the system's own update
    (one function, ``drift_variance``)."""
    cs = history(6, players=25)
    later = cs[-1].time_seconds + 40 * DAY
    ref = Rater(system, **params)
    ref.extend(cs)
    t = ref.players
    n = t.n
    mu_t, sg_t = ref.system.drift(t.mu[:n], t.sigma[:n], later - t.last_time[:n])
    shown = ref.system.display_rating(mu_t, sg_t)
    want = {h: (float(mu_t[i]), float(sg_t[i]), float(shown[i]))
            for i, h in enumerate(t.handles)}
    assert any(sg_t[i] != t.sigma[i] for i in range(n))
    with Store.create(store_url, system, params) as store:
        store.ingest_many(cs)
        rows = store.leaderboard(limit=1000, as_of=later)
        assert {r.handle: (r.mu, r.sigma, r.display_rating) for r in rows} == want
        # the order is the as-of order (a brute-force sort)
        order = sorted(want, key=lambda h: (-want[h][2], h))
        assert [r.handle for r in rows] == order
        # pages of it, and a player's rating and rank
        assert [r.handle for r in store.leaderboard(offset=5, limit=4, as_of=later)] == \
            order[5:9]
        view = store.player(order[7], as_of=later)
        assert view is not None and view.rank == 8 and view.as_of == later
        assert (view.mu, view.sigma, view.display_rating) == want[order[7]]
        assert store.current_ratings([order[7]], as_of=later)[order[7]][:2] == \
            want[order[7]][:2]
        hi = want[order[3]][2]
        assert store.count_players(min_rating=hi, as_of=later) == 4
        with pytest.raises(AsOfError, match="before the latest contest"):
            store.leaderboard(as_of=cs[-1].time_seconds - 1)
    # the update's own diffusion widens by the same time variance
    import podium.systems.elo_mmr.kernels as K

    d = float(params["drift_per_day"])
    dt = np.array([3.0 * DAY, 0.0, 17.5 * DAY])
    played = np.array([2, 0, 5], dtype=np.int64)
    sys_ = get_system(system, **params)
    _, gamma = K.round_weights(played, 1.0, sys_.weight_limit, np.zeros(0), sys_.sig_limit,
                               d, dt)
    w = 1.0 * sys_.weight_limit
    assert gamma.tolist() == [float(np.sqrt(w * sys_.sig_limit ** 2 + K.drift_variance(d, x)))
                              for x in dt.tolist()]
    sig = np.array([80.0, 90.0, 100.0])
    assert sys_.drift(np.zeros(3), sig, dt)[1].tolist() == [
        float(np.sqrt(s * s + K.drift_variance(d, x))) if K.drift_variance(d, x) else s
        for s, x in zip(sig.tolist(), dt.tolist(), strict=True)]


def test_without_drift_as_of_changes_nothing(store_url: str) -> None:
    cs = history(5)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs)
        now = store.leaderboard(limit=100)
        later = store.leaderboard(limit=100, as_of=cs[-1].time_seconds + 1000 * DAY)
        assert now == later
        assert all(not r.provisional for r in now)


def test_provisional_rule(store_url: str) -> None:
    cs = history(6, players=30)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs)
        frame = store.ratings_frame()
        store.set_ladder_settings(provisional_contests=3)
        rows = store.leaderboard(limit=100)
        assert {r.handle for r in rows if r.provisional} == set(
            frame[frame.contests < 3].handle)
        store.set_ladder_settings(hide_provisional=True)
        shown = store.leaderboard(limit=100)
        assert [r.handle for r in shown] == [r.handle for r in rows if not r.provisional]
        assert [r.rank for r in shown] == list(range(1, len(shown) + 1))
        assert store.count_players() == len(shown)
        assert len(store.leaderboard(limit=100, include_provisional=True)) == len(rows)
        weak = next(r.handle for r in rows if r.provisional)
        view = store.player(weak)
        assert view is not None and view.provisional and view.rank is None
        cut = float(np.median(frame.sigma))
        store.set_ladder_settings(provisional_contests=0, provisional_sigma=cut)
        assert {r.handle for r in store.leaderboard(limit=100, include_provisional=True)
                if r.provisional} == set(frame[frame.sigma > cut].handle)
        with pytest.raises(StoreError, match="unknown ladder setting"):
            store.set_ladder_settings(provisional=3)


# ---------------------------------------------------------------------- priors
def _priors(contests: list[Contest], sources: list[Rater], widen: float,
            taken: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """The priors ladder B takes: each newcomer rated in ladder A (``sources[k]``: A's
    Rater when contest ``k`` is ingested), from A's rating widened, once (``taken``:
    those taken before)."""
    out = dict(taken or {})
    system = get_system("mmr")
    for c, ra in zip(contests, sources, strict=True):
        for h in c.handles:
            if h not in out and h in ra.players.index:
                i = ra.players.index[h]
                mu, sg = widened_prior(system, ra.players.mu[[i]], ra.players.sigma[[i]], widen)
                out[h] = (float(mu[0]), float(sg[0]))
    return out


def _seeded_run(contests: list[Contest], priors: dict[str, Any]) -> Rater:
    """Ladder B's reference: each newcomer with a prior is seeded with it just before its
    first contest."""
    rb = Rater("mmr")
    for c in contests:
        fresh = [h for h in c.handles if h not in rb.players.index and h in priors]
        if fresh:
            seed_players(rb, fresh, [priors[h][0] for h in fresh],
                         [priors[h][1] for h in fresh], c.time_seconds)
        rb.add(c)
    return rb


def test_cross_ladder_newcomer_prior(store_url: str) -> None:
    a = history(5, seed=1, players=20)
    b = renamed(history(4, seed=2, players=24, start=a[-1].time_seconds + DAY), "b")
    ra = Rater("mmr")
    ra.extend(a)
    corrected = Rater("mmr")  # A after its last contest is deleted
    corrected.extend(a[:-1])
    with Store.create(store_url, "mmr", snapshot_every=2) as store:
        store.ingest_many(a)
        duo = store.create_ladder("duo", "mmr", prior_from="default", prior_widen=0.3)
        duo.ingest_many(b[:2])
        duo.ingest(b[2])
        priors = _priors(b[:3], [ra] * 3, 0.3)
        rb = _seeded_run(b[:3], priors)
        cases.assert_store_equals_rater(duo, rb)
        first = duo.contest(b[0].name)
        assert first is not None
        h = next(ch for ch in first.changes if ch.handle in priors)
        assert h.old_display is None  # a debut in this ladder ...
        assert h.new_display - h.change == float(
            rb.system.display_rating(*map(np.array, ([priors[h.handle][0]],
                                                     [priors[h.handle][1]])))[0])
        # ... from the prior taken then: a correction in A changes no prior taken before
        # it (a newcomer after it takes A's corrected rating)
        store.delete(a[-1].name)
        duo.ingest(b[3])
        priors = _priors(b[3:], [corrected], 0.3, priors)
        cases.assert_store_equals_rater(duo, _seeded_run(b, priors))
    with Store.open(store_url, ladder="duo", cache=False) as again:
        # a correction in B replays from the stored priors (those taken stay taken)
        again.delete(b[1].name)
        kept = {h: v for h, v in priors.items() if any(h in c.handles for c in (b[0], *b[2:]))}
        cases.assert_store_equals_rater(again, _seeded_run([b[0], b[2], b[3]], kept))


def test_prior_source_must_exist_and_match(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        with pytest.raises(StoreError, match="'nope' .* does not exist"):
            store.create_ladder("b", "mmr", prior_from="nope")
        store.create_ladder("g", "glicko")
        with pytest.raises(StoreError, match="rates with 'glicko', not 'mmr'"):
            store.set_ladder_settings(prior_from="g")
        with pytest.raises(StoreError, match="from itself"):
            store.set_ladder_settings(prior_from="default")
