"""Team contests in the store, on SQLite and PostgreSQL (``store_url``).

Each check compares with an independent answer: a plain :class:`~podium.rater.Rater`
over the same contests (bit for bit, after single ingestions, batches, recomputations,
replays from snapshots and a schema upgrade), the contests as built (read back from
the standings exactly: teams, team places, member weights), and the state before a
refused write (unchanged, row for row).

The rating system is a test-only team Elo (``tests/_team_system.py``), plus one shipped
system per team rule (Elo-MMR, TrueSkill, openskill, Glicko as one entity); the refusal
of team rounds by a system without a team rule uses the same test system declared
without one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import _store_cases as cases
import numpy as np
import pytest

pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

import _team_system  # noqa: E402
from sqlalchemy import select, text  # noqa: E402

from podium import Contest, Rater  # noqa: E402
from podium.errors import ContestError  # noqa: E402
from podium.store import SCHEMA_VERSION, Store, StoreError  # noqa: E402
from podium.store import schema as S  # noqa: E402
from podium.store.engine import make_engine  # noqa: E402
from podium.store.migrations import set_meta  # noqa: E402
from podium.store.rows import stored_contests as read_stored_contests  # noqa: E402
from podium.systems import SYSTEMS  # noqa: E402

T0 = _team_system.T0
def _shipped_team_systems() -> list[str]:
    """Shipped systems that rate team rounds, one per team rule: Elo-MMR's two-phase
    rule, TrueSkill's factor graph, openskill's formulas, a team as one entity (Glicko)."""
    return [n for n in ("mmr", "trueskill", "openskill-pl", "glicko")
            if n in SYSTEMS and SYSTEMS[n][0].team_rule is not None]


#: Shipped systems that rate team rounds (when there are any), besides the test system.
SHIPPED_TEAM_SYSTEMS = _shipped_team_systems()


HISTORY = _team_system.team_history()


@pytest.fixture(params=["test", *SHIPPED_TEAM_SYSTEMS])
def system(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test system, then each shipped system that rates team rounds."""
    _team_system.register(monkeypatch)
    return _team_system.NAME if request.param == "test" else str(request.param)


@pytest.fixture()
def team_system(monkeypatch: pytest.MonkeyPatch) -> str:
    """The test system alone (for the checks that do not depend on the system)."""
    return _team_system.register(monkeypatch)


def _rater(contests: list[Contest], system: str) -> Rater:
    r = Rater(system)
    r.extend(contests)
    return r


def assert_teams_stored(store: Store, contests: list[Contest], rater: Rater) -> None:
    """Every player's team per contest (history and contest view) and every contest's
    teams, as built."""
    ev = rater.events_frame()
    for h in rater.players.handles:
        view = store.player(h)
        assert view is not None
        want = [t if isinstance(t, str) else None for t in ev[ev["handle"] == h]["team"]]
        assert [r.team for r in view.history] == want, h
    for c in contests:
        view = store.contest(c.url or c.name)
        assert view is not None
        if c.teams is None:
            assert view.teams is None and all(ch.team is None for ch in view.changes)
            continue
        off = c.teams.offsets.tolist()
        assert view.teams is not None
        assert [t.name for t in view.teams] == list(c.teams.names)
        assert [(t.lo, t.hi) for t in view.teams] == [
            (int(c.lo[a]), int(c.hi[a])) for a in off[:-1]]
        assert [[(m.handle, m.weight) for m in t.members] for t in view.teams] == [
            list(zip(c.handles[a:b], c.teams.weight[a:b].tolist(), strict=True))
            for a, b in zip(off, off[1:], strict=False)]
        if view.rated:
            assert [ch.team for ch in view.changes] == list(c.team_names or ())
            assert [ch.weight for ch in view.changes] == c.teams.weight.tolist()
        else:
            assert view.changes == []


def stored_contests(store: Store) -> list[Contest]:
    with store.engine.connect() as conn:
        n = len(store.contest_ids())
        return list(read_stored_contests(conn, store.services.context.tables, 0, n))


# ---------------------------------------------------------------------- tests
@pytest.mark.parametrize("mode", ["single", "batch", "cold"])
def test_team_contests_equal_rater(store_url: str, system: str, mode: str) -> None:
    ref = _rater(HISTORY, system)
    opts: dict[str, Any] = {"cache": False, "snapshot_every": 2} if mode == "cold" else {}
    with Store.create(store_url, system, **opts) as store:
        if mode == "batch":
            res = store.ingest_many(HISTORY[:5]) + store.ingest_many(HISTORY[5:])
        else:
            res = [store.ingest(c) for c in HISTORY]
        assert [r.status for r in res] == ["applied"] * len(HISTORY)
        assert res[6].new_players == 0 and not res[6].warnings  # every team tied: a draw, rated
    with Store.open(store_url) as store:
        cases.assert_store_equals_rater(store, ref)
        assert_teams_stored(store, HISTORY, ref)
        # the standings give back every contest exactly (teams, places, weights)
        assert stored_contests(store) == HISTORY
        # a cold process (snapshot + replay of the stored team contests) continues exactly
        extra = Contest.from_teams([("x", 0, 0, ["p00", ("p01", 0.5)]), ("y", 1, 1, ["p02"])],
                                   name="extra", time_seconds=T0 + 10**6)
        ref.add(extra)
    with Store.open(store_url, cache=False, snapshot_every=100) as store:
        assert store.ingest(extra).status == "applied"
        cases.assert_store_equals_rater(store, ref)


def test_recompute_with_team_contests(store_url: str, system: str) -> None:
    order = [0, 1, 4, 5, 7, 2, 3, 6]
    with Store.create(store_url, system, snapshot_every=2) as store:
        res = {k: store.ingest(HISTORY[k], recompute_from=True) for k in order}
        assert res[2].status == "recomputed" and res[2].recomputed == 3
        assert res[3].status == "recomputed" and res[6].status == "recomputed"
    ref = _rater(HISTORY, system)
    with Store.open(store_url, cache=False) as store:
        cases.assert_store_equals_rater(store, ref)
        assert_teams_stored(store, HISTORY, ref)
        assert stored_contests(store) == HISTORY


def test_duplicates_and_conflicts_see_the_teams(store_url: str, team_system: str) -> None:
    c = HISTORY[3]
    assert c.teams is not None and c.team_round
    with Store.create(store_url, team_system) as store:
        for x in HISTORY[:4]:
            store.ingest(x)
        before = cases.dump(store_url)
        assert store.ingest(c).status == "duplicate"
        doc = c.to_json_dict()
        # same players, places and names, another member weight: other content
        rows = doc["standings"]
        first = rows[0][3][0]
        rows[0][3][0] = [first, 0.5] if isinstance(first, str) else first[0]
        changed = Contest.from_teams(rows, name=c.name, time_seconds=c.time_seconds, url=c.url)
        assert changed.standings == c.standings
        with pytest.raises(StoreError, match="member weight of"):
            store.ingest(changed)
        # the same rows as an individual contest: other content
        solo = Contest.from_arrays(c.handles, np.arange(len(c)), np.arange(len(c)),
                                   name=c.name, time_seconds=c.time_seconds, url=c.url)
        with pytest.raises(StoreError, match="a team contest stored, an individual one given"):
            store.ingest(solo)
        assert cases.dump(store_url) == before


def test_refused_team_contests_change_nothing(store_url: str, team_system: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.create(store_url, team_system) as store:
        store.ingest_many(HISTORY[:3])
        before = cases.dump(store_url)
        # a player in two teams is no contest at all: refused before the store
        with pytest.raises(ContestError, match=r"contest 'bad', player 'p00': the player is in "
                           r"two teams \('a' and 'b'\)"):
            Contest.from_teams([("a", 0, 0, ["p00", "p01"]), ("b", 1, 1, ["p02", "p00"])],
                               name="bad", time_seconds=T0 + 10**6)
        # a rating failure inside the transaction rolls everything back
        cls = type(store.system)
        original = cls.round_update

        def fail(self: Any, state: Any, rnd: Any) -> Any:
            if rnd.contest.name == "match 3":
                raise RuntimeError("rating failed")
            return original(self, state, rnd)

        monkeypatch.setattr(cls, "round_update", fail)
        with pytest.raises(RuntimeError, match="rating failed"):
            store.ingest(HISTORY[3])
        with pytest.raises(StoreError, match=r"rating the batch of contests 'match 3'"):
            store.ingest_many(HISTORY[3:5])
        assert cases.dump(store_url) == before


def test_a_system_without_team_rule_refuses_team_rounds(store_url: str,
                                                         team_system: str) -> None:
    solo = _team_system.SOLO_NAME  # the test system with team_rule None
    with Store.create(store_url, solo) as store:
        store.ingest(Contest.from_places(["a", "b"], [1, 2], name="first",
                                         time_seconds=T0 - 10))
        # a round of one-member teams is an individual round: accepted
        assert store.ingest(HISTORY[2]).status == "applied"
        before = cases.dump(store_url)
        with pytest.raises(ContestError, match=rf"contest 'match 3': the store's rating system "
                           rf"{solo!r} does not rate team rounds"):
            store.ingest(HISTORY[3])
        with pytest.raises(ContestError, match=r"contest #1 'match 3' of the batch: the store's "
                           "rating system"):
            store.ingest_many([HISTORY[1], HISTORY[3]])
        assert cases.dump(store_url) == before


def test_content_hash_sees_team_structure() -> None:
    from podium.store import content_hash

    c = HISTORY[3]
    rows = c.to_json_dict()["standings"]
    renamed = [[f"{r[0]}!", *r[1:]] if k == 0 else r for k, r in enumerate(rows)]
    moved = [list(r) for r in rows]
    moved[0][3], moved[1][3] = rows[0][3][:-1], [rows[0][3][-1], *rows[1][3]]
    variants = [c, Contest.from_teams(renamed, name=c.name, time_seconds=c.time_seconds,
                                      url=c.url),
                Contest.from_arrays(c.handles, np.arange(len(c)), np.arange(len(c)), name=c.name,
                                    time_seconds=c.time_seconds, url=c.url)]
    if len(rows[0][3]) > 1:
        variants.append(Contest.from_teams(moved, name=c.name, time_seconds=c.time_seconds,
                                           url=c.url))
    hashes = [content_hash(v) for v in variants]
    assert len(set(hashes)) == len(hashes)
    assert content_hash(Contest.from_teams(rows, name=c.name, time_seconds=c.time_seconds,
                                           url=c.url)) == hashes[0]


@pytest.fixture()
def v3_store(store_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A store of schema version 3 holding individual contests (written by this Podium,
    then the version-4, -5, -6 and -7 additions dropped, as version 3 wrote it)."""
    name = _team_system.register(monkeypatch)
    with Store.create(store_url, name) as store:
        store.ingest_many([c for c in HISTORY if c.teams is None])
    eng = make_engine(store_url)
    with eng.begin() as conn:
        for table, col in (("standings", "team"), ("standings", "member_weight"),
                           ("events", "team")):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {col}"))
        # ... and what version 5 added
        for drop in ("DROP TABLE audit", "DROP TABLE tokens", "DROP INDEX ix_players_active"):
            conn.execute(text(drop))
        # ... and what version 6 added
        for table in ("ladders", "seasons", "season_ratings", "priors"):
            conn.execute(text(f"DROP TABLE {table}"))
        # ... and what version 7 added (season_ratings' indexes went with the table)
        # (version 8 keeps them only where ratings drift)
        for index in ("ix_players_mu", "ix_players_sigma"):
            conn.execute(text(f"DROP INDEX IF EXISTS {index}"))
        set_meta(conn, "schema_version", "3")
    eng.dispose()
    yield store_url


def test_upgrade_to_teams(v3_store: str) -> None:
    url = v3_store
    with pytest.raises(StoreError, match="schema version 3, older than this Podium's"):
        Store.open(url)
    assert Store.upgrade(url) == (3, SCHEMA_VERSION)
    eng = make_engine(url)
    with eng.connect() as conn:
        assert conn.execute(select(S.standings.c.team, S.standings.c.member_weight)
                            .distinct()).all() == [(None, None)]
        assert conn.execute(select(S.events.c.team).distinct()).all() == [(None,)]
    eng.dispose()
    solo = [c for c in HISTORY if c.teams is None]
    with Store.open(url, cache=False) as store:
        cases.assert_store_equals_rater(store, _rater(solo, _team_system.NAME))
        assert stored_contests(store) == solo
        # team contests after the upgrade, rated on top of the old history exactly
        later = [Contest.from_teams(c.to_json_dict()["standings"], name=c.name + " (late)",
                                    time_seconds=T0 + 10**6 + k)
                 for k, c in enumerate(HISTORY) if c.teams is not None]
        store.ingest_many(later)
        ref = _rater(solo + later, _team_system.NAME)
        cases.assert_store_equals_rater(store, ref)
        assert_teams_stored(store, solo + later, ref)
    assert json.loads(json.dumps(Store.upgrade(url))) == [SCHEMA_VERSION, SCHEMA_VERSION]


def test_cli_ingest_team_contests(store_url: str, team_system: str, tmp_path: Any,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import main
    from podium.io import write_contest_dir

    write_contest_dir(HISTORY, tmp_path / "h")
    # a system that rates no team round: refused before a store is created
    solo = _team_system.SOLO_NAME
    if store_url.startswith("sqlite"):
        db = tmp_path / "solo.db"
        assert main(["ingest", str(tmp_path / "h"), "--db", str(db), "--system", solo]) == 1
        err = capsys.readouterr().err
        assert f"contest #0 'match 0' of {tmp_path / 'h'}: the rating system {solo!r} does " \
               "not rate team rounds" in err
        assert not db.exists()
    assert main(["ingest", str(tmp_path / "h"), "--db", store_url, "--system", team_system,
                 "-q", "--batch", "3"]) == 0
    assert f"{len(HISTORY)} applied" in capsys.readouterr().out
    assert main(["ingest", str(tmp_path / "h"), "--db", store_url, "-q"]) == 0
    assert f"{len(HISTORY)} duplicate (unchanged)" in capsys.readouterr().out
    ref = _rater(HISTORY, team_system)
    with Store.open(store_url) as store:
        cases.assert_store_equals_rater(store, ref)
        assert stored_contests(store) == HISTORY
