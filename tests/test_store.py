"""The persistent store, on SQLite and on PostgreSQL: schema, exact equality with the
Rater, batches, idempotence, time order, recomputation, rollback, queries, schema
versions and migrations.

Most tests take the ``store_url`` fixture (``tests/conftest.py``): a fresh SQLite
file, and a fresh PostgreSQL database when ``PODIUM_TEST_POSTGRES_URL`` is set
(skipped with the reason otherwise; ``.ci/postgres.sh`` starts a server).  A few
tests are about one back end: SQLite files and paths, or PostgreSQL collations.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import _search_cases as search_cases
import _store_cases as cases
import pandas as pd
import pytest
from _require import postgres_database
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

import podium.store.writes as writes_module
from podium import ConfigError, Contest
from podium.io import synthetic_contests
from podium.store import SCHEMA_VERSION, Store, StoreError, normalize_url
from podium.store import schema as S
from podium.store.engine import display_url, make_engine
from podium.store.migrations import set_meta, upgrade


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def icu_url() -> Iterator[str]:
    """A PostgreSQL database whose default collation is ICU's en-US (not code point
    order)."""
    with postgres_database(options="TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu "
                           "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'") as target:
        yield target


# ====================================================================== both databases


def test_schema(store_url: str) -> None:
    from sqlalchemy import inspect

    with Store.create(store_url, "mmr") as store:
        assert store.stats()["schema_version"] == S.SCHEMA_VERSION
        assert store.system_name == "mmr"
        assert store.params == store.system.params()
    eng = make_engine(store_url)
    try:
        insp = inspect(eng)
        assert set(insp.get_table_names()) >= set(S.metadata.tables)
        for name, table in S.metadata.tables.items():
            assert {c["name"] for c in insp.get_columns(name)} == {c.name for c in table.c}
            want = {ix.name for ix in table.indexes}
            got = {ix["name"] for ix in insp.get_indexes(name)}
            assert want <= got, (name, want, got)
    finally:
        eng.dispose()


@pytest.mark.parametrize("mode", ["warm", "cold", "reopen"])
@pytest.mark.parametrize("system", ["mmr", "codeforces", "tcsys", "trueskill"])
def test_ingest_equals_rater(store_url: str, system: str, mode: str) -> None:
    contests = cases.tied_history(draw=True)
    ref = cases._reference(contests, system)
    opts: dict[str, Any] = {}
    if mode == "cold":
        opts = {"cache": False, "snapshot_every": 2}
    results = []
    if mode == "reopen":
        Store.create(store_url, system, snapshot_every=3).close()
        for c in contests:
            with Store.open(store_url, snapshot_every=3) as store:
                results.append(store.ingest(c))
    else:
        with Store.create(store_url, system, **opts) as store:
            for c in contests:
                results.append(store.ingest(c))
    assert [r.status for r in results] == ["applied"] * len(contests)
    assert [r.index for r in results] == list(range(len(contests)))
    assert results[3].new_players == 0 and results[3].warnings  # one side: unrated
    assert not results[-1].warnings  # a draw: rated
    assert sum(r.new_players for r in results) == ref.num_players
    with Store.open(store_url) as store:
        cases.assert_store_equals_rater(store, ref)
        st = store.stats()
        assert st["contests"] == len(contests)
        assert st["players"] == ref.num_players
        assert st["handles"] == ref.num_players + 1  # zz_new: only in the unrated contest
        assert st["events"] == len(ref.events_frame())
        assert store.player("zz_new") is None


def test_idempotence(store_url: str) -> None:
    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        for c in contests[:4]:
            store.ingest(c)
        before = cases.dump(store_url)
        again = store.ingest(contests[1])
        assert again.status == "duplicate" and again.index == 1
        assert again.players == len(contests[1]) and again.new_players == 0
        assert cases.dump(store_url) == before
        # the same id with other standings is refused and changes nothing
        st = contests[1].standings
        swapped = [(st[1][0], st[0][1], st[0][2]), (st[0][0], st[1][1], st[1][2]), *st[2:]]
        other = Contest(swapped, name=contests[1].name, time_seconds=contests[1].time_seconds)
        with pytest.raises(StoreError, match="different content") as info:
            store.ingest(other)
        assert "position 0" in str(info.value) and repr(contests[1].name) in str(info.value)
        # also when it is old: the duplicate check comes first
        assert cases.dump(store_url) == before
        # a duplicate older than the latest contest is still just a duplicate
        assert store.ingest(contests[0]).status == "duplicate"
        assert cases.dump(store_url) == before


def test_older_refused(store_url: str) -> None:
    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        for c in contests[:2] + contests[4:6]:
            store.ingest(c)
        before = cases.dump(store_url)
        with pytest.raises(StoreError) as info:
            store.ingest(contests[2])
        msg = str(info.value)
        assert repr(contests[2].name) in msg and repr(contests[5].name) in msg
        assert "--recompute-from" in msg and "2 later contest" in msg
        assert cases.dump(store_url) == before


def test_recompute(store_url: str) -> None:
    contests = cases.tied_history()
    order = [0, 1, 2, 5, 6, 7, 3, 4]
    with Store.create(store_url, "mmr", snapshot_every=2) as store:
        res = {k: store.ingest(contests[k], recompute_from=True) for k in order}
        assert res[5].status == "applied" and res[5].recomputed == 0
        assert res[3].status == "recomputed" and res[3].recomputed == 3 and res[3].index == 3
        assert res[4].status == "recomputed" and res[4].recomputed == 3 and res[4].index == 4
        assert store.contest_ids() == [c.url or c.name for c in contests]
    ref = cases._reference(contests, "mmr")
    with Store.open(store_url) as store:
        cases.assert_store_equals_rater(store, ref)
    # a cold process (snapshots + replay) continues exactly
    extra = synthetic_contests(40, 9, seed=5, participation=0.7, tie_resolution=40.0)[-1]
    extra = Contest(extra.standings, name="extra", time_seconds=contests[-1].time_seconds + 99)
    ref.add(extra)
    with Store.open(store_url, cache=False) as store:
        assert store.ingest(extra).status == "applied"
        cases.assert_store_equals_rater(store, ref)
    # equal time: inserted after the stored contests of the same time
    same = Contest([("p00", 0, 0), ("new1", 1, 1)], name="same time",
                   time_seconds=contests[2].time_seconds)
    with Store.open(store_url) as store:
        r = store.ingest(same, recompute_from=True)
        assert r.status == "recomputed" and r.index == 3
    ref2 = cases._reference([*contests[:3], same, *contests[3:], extra], "mmr")
    with Store.open(store_url, cache=False) as store:
        cases.assert_store_equals_rater(store, ref2)


def test_two_stores_interleaved(store_url: str) -> None:
    """Two Store objects (two caches) on one database: each sees the other's writes,
    appended contests and re-rated ones alike."""
    contests = cases.tied_history()
    a = Store.create(store_url, "mmr")
    b = Store.open(store_url)
    try:
        a.ingest(contests[0])
        a.ingest(contests[2])
        assert b.ingest(contests[1], recompute_from=True).status == "recomputed"
        a.ingest(contests[3])  # a's cache predates b's recompute
        b.ingest(contests[4])  # b's cache lacks a's contest 3
        a.ingest(contests[5])
        assert b.ingest(contests[6]).index == 6
        a.ingest(contests[7])
        ref = cases._reference(contests, "mmr")
        cases.assert_store_equals_rater(a, ref)
        cases.assert_store_equals_rater(b, ref)
    finally:
        a.close()
        b.close()


def test_failure_rolls_back(store_url: str, monkeypatch: Any) -> None:
    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        for c in contests[:3]:
            store.ingest(c)
        before = cases.dump(store_url)

        def boom(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("disk on fire")

        with monkeypatch.context() as m:
            m.setattr(writes_module, "update_rows", boom)  # the players rows, last
            with pytest.raises(RuntimeError, match="disk on fire"):
                store.ingest(contests[4])
        assert cases.dump(store_url) == before
        # the Rater that rated the failed contest is not reused
        for c in contests[3:]:
            store.ingest(c)
        cases.assert_store_equals_rater(store, cases._reference(contests, "mmr"))


def test_queries(store_url: str) -> None:
    c1 = Contest([("Ann", 0, 0), ("x1", 1, 2), ("x2", 1, 2), ("bob", 3, 3)], name="R1",
                 url="https://example.org/r1", time_seconds=1000)
    c2 = Contest([("anna", 0, 0), ("x1", 1, 2), ("x2", 1, 2), ("a_b", 3, 3), ("a%c", 4, 4)],
                 name="R2", time_seconds=2000)
    c3 = Contest([("Ann", 0, 1), ("ghost", 0, 1)], name="R3", time_seconds=3000)
    with Store.create(store_url, "mmr", {"all_tied": "skip"}) as store:  # R3: unrated
        for c in (c1, c2, c3):
            store.ingest(c)
        # contests, newest first
        summ = store.contests()
        assert [(s.contest_id, s.name, s.index, s.players, s.time_seconds) for s in summ] == [
            ("R3", "R3", 2, 2, 3000), ("R2", "R2", 1, 5, 2000),
            ("https://example.org/r1", "R1", 0, 4, 1000)]
        assert [s.name for s in store.contests(offset=1, limit=1)] == ["R2"]
        # one contest: standings order, tie ranges, debuts measured from the newcomer (690)
        v1 = store.contest("https://example.org/r1")
        assert v1 is not None and v1.url == "https://example.org/r1" and v1.rated
        assert [(c.handle, c.lo, c.hi) for c in v1.changes] == c1.standings
        assert all(c.old_display is None for c in v1.changes)
        newcomer_display = 1500.0 - 3.0 * (350.0 - 80.0)
        assert newcomer_display == 690.0
        assert all(c.change == c.new_display - 690.0 for c in v1.changes)
        assert [c.new_display for c in v1.changes] == sorted(
            (c.new_display for c in v1.changes), reverse=True)
        by1 = {c.handle: c for c in v1.changes}
        assert by1["x1"].mu == by1["x2"].mu and by1["x1"].sigma == by1["x2"].sigma
        v2 = store.contest("R2")
        assert v2 is not None
        by2 = {c.handle: c for c in v2.changes}
        assert by2["x1"].old_display == by1["x1"].new_display
        assert by2["anna"].old_display is None
        v3 = store.contest("R3")
        assert v3 is not None and not v3.rated and v3.changes == [] and v3.players == 2
        assert store.contest("nope") is None
        # players
        assert store.player("ghost") is None and store.player("nobody") is None
        ann = store.player("Ann")
        assert ann is not None and ann.contests == 1 and ann.last_contest_time == 1000
        assert [(h.index, h.place, h.players, h.contest_id) for h in ann.history] == [
            (0, 0, 4, "https://example.org/r1")]
        x1 = store.player("x1")
        assert x1 is not None
        assert [(h.index, h.place, h.players) for h in x1.history] == [(0, 1, 4), (1, 1, 5)]
        assert x1.history[1].change == x1.history[1].display_rating - x1.history[0].display_rating
        assert x1.last_change == x1.history[1].change
        assert x1.max_display_rating == max(h.display_rating for h in x1.history)
        rated = ["Ann", "x1", "x2", "bob", "anna", "a_b", "a%c"]
        views = {h: store.player(h) for h in rated}
        expect = sorted(rated, key=lambda h: (-views[h].display_rating, h))  # type: ignore[union-attr]
        # leaderboard
        board = store.leaderboard()
        assert [r.handle for r in board] == expect
        assert [r.rank for r in board] == list(range(1, 8))
        assert expect.index("x1") + 1 == expect.index("x2")  # equal ratings: handle order
        assert [(r.rank, r.handle) for r in store.leaderboard(offset=2, limit=2)] == [
            (3, expect[2]), (4, expect[3])]
        assert store.leaderboard(offset=7) == []
        for h in rated:
            v = views[h]
            assert v is not None and v.rank == expect.index(h) + 1
        active = [h for h in expect if h not in ("Ann", "bob")]
        assert [(r.rank, r.handle) for r in store.leaderboard(active_since=2000)] == [
            (k + 1, h) for k, h in enumerate(active)]
        assert [(r.rank, r.handle) for r in store.leaderboard(min_contests=2)] == [
            (1, "x1"), (2, "x2")]
        top = board[0]
        assert (top.mu, top.sigma, top.contests) == (views[top.handle].mu,  # type: ignore[union-attr]
                                                     views[top.handle].sigma,  # type: ignore[union-attr]
                                                     views[top.handle].contests)  # type: ignore[union-attr]
        # counts: display rating in [min, max)
        d = {h: views[h].display_rating for h in rated}  # type: ignore[union-attr]
        assert store.count_players() == 7
        assert store.count_players(active_since=2000) == 5
        assert store.count_players(active_since=3001) == 0
        lo = d["x1"]
        assert store.count_players(min_rating=lo) == sum(v >= lo for v in d.values())
        assert store.count_players(max_rating=lo) == sum(v < lo for v in d.values())
        assert store.count_players(min_rating=lo, max_rating=lo) == 0
        # prefix search: case-insensitive, LIKE wildcards taken literally
        assert store.search_handles("a") == [h for h in expect if h.lower().startswith("a")]
        assert set(store.search_handles("ANN")) == {"Ann", "anna"}
        assert store.search_handles("a_") == ["a_b"]
        assert store.search_handles("a%") == ["a%c"]
        assert store.search_handles("a", limit=1) == store.search_handles("a")[:1]
        assert store.search_handles("gh") == []
        # current ratings of known, rated handles only
        cur = store.current_ratings(["x1", "ghost", "nobody", "Ann", "x1"])
        assert cur == {"x1": (x1.mu, x1.sigma, 2), "Ann": (ann.mu, ann.sigma, 1)}
        st = store.stats()
        assert (st["players"], st["contests"], st["events"], st["last_contest_time"],
                st["handles"], st["rated_contests"]) == (7, 3, 9, 3000, 8, 2)
        assert st["system"] == "mmr" and st["schema_version"] == S.SCHEMA_VERSION
        with pytest.raises(StoreError, match="offset"):
            store.leaderboard(offset=-1)


def test_values_round_trip(store_url: str) -> None:
    """Unicode handles, weights and infinite ceilings survive the database exactly."""
    c1 = Contest([("Łukasz", 0, 0), ("Σοφία", 1, 1), ("名前", 2, 2)], name="unicode",
                 time_seconds=10, weight=0.3, perf_ceiling=float("inf"))
    c2 = Contest([("名前", 0, 0), ("Łukasz", 1, 1)], name="second", time_seconds=20,
                 perf_ceiling=1800.0)
    ref = cases._reference([c1, c2], "mmr")
    with Store.create(store_url, "mmr", cache=False, snapshot_every=1) as store:
        store.ingest(c1)
        store.ingest(c2)
        v = store.contest("unicode")
        assert v is not None and v.weight == 0.3 and v.perf_ceiling == float("inf")
        assert store.search_handles("σο") == ["Σοφία"]
        cases.assert_store_equals_rater(store, ref)


# ---------------------------------------------------------------------- processes


def test_contest_without_id_and_bad_arguments(store_url):
    with Store.create(store_url, "mmr") as store:
        before = cases.dump(store_url)
        with pytest.raises(StoreError, match="neither url nor name"):
            store.ingest(Contest([("a", 0, 0), ("b", 1, 1)]))
        with pytest.raises(StoreError, match="64-bit"):
            store.ingest(Contest([("a", 0, 0), ("b", 1, 1)], name="x", time_seconds=2**70))
        with pytest.raises(TypeError):
            store.ingest([("a", 0, 0)])  # type: ignore[arg-type]
        assert store.ingest(Contest([("a", 0, 0), ("b", 1, 1)]), contest_id="given").status \
            == "applied"
        assert store.contest("given") is not None
        assert cases.dump(store_url) != before


def _set_version(store_url: str, version: str) -> None:
    eng = make_engine(store_url)
    with eng.begin() as conn:
        set_meta(conn, "schema_version", version)
    eng.dispose()


def test_schema_version_mismatch_messages(store_url):
    Store.create(store_url, "mmr").close()
    _set_version(store_url, str(SCHEMA_VERSION + 1))
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than this "
                       rf"Podium's {SCHEMA_VERSION}; upgrade Podium"):
        Store.open(store_url)
    with pytest.raises(StoreError, match="newer"):
        Store.create(store_url, "mmr")
    with pytest.raises(StoreError, match="newer"):
        Store.upgrade(store_url)
    _set_version(store_url, "garbage")
    with pytest.raises(StoreError, match="damaged store metadata"):
        Store.open(store_url)


def test_reads_see_committed_state_only(store_url):
    """A reader holding a transaction keeps its state while a writer commits."""
    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        store.ingest(contests[0])
        eng = make_engine(store_url)
        from podium.store.engine import read_txn

        with read_txn(eng) as conn:
            n0 = conn.execute(text("SELECT count(*) FROM events")).scalar_one()
            store.ingest(contests[1])
            assert conn.execute(text("SELECT count(*) FROM events")).scalar_one() == n0
        eng.dispose()
        assert store.stats()["events"] == n0 + len(contests[1])


def test_snapshots_kept_and_restored(store_url):
    contests = cases.tied_history()  # 8 contests
    with Store.create(store_url, "tcsys", snapshot_every=2, keep_snapshots=2) as store:
        for c in contests[:7]:
            store.ingest(c)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [4, 6]
        assert store.snapshot() is True
        assert store.snapshot() is False
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [6, 7]
        store.ingest(contests[7])
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [6, 7]  # 1 < 2 since
    # a damaged snapshot is ignored (replay from the start), never trusted
    eng = make_engine(store_url)
    with eng.begin() as conn:
        conn.execute(S.snapshots.update().values(data=b"garbage"))
    eng.dispose()
    extra = Contest([("p00", 0, 0), ("p01", 1, 1)], name="extra",
                    time_seconds=contests[-1].time_seconds + 1)
    with Store.open(store_url, cache=False, snapshot_every=2) as store:
        store.ingest(extra)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [7, 9]
        cases.assert_store_equals_rater(store, cases._reference([*contests, extra], "tcsys"))


def test_pool_settings(store_url):
    Store.create(store_url, "mmr").close()
    with Store.open(store_url, pool_size=2, max_overflow=1) as store:
        assert store.engine.pool.size() == 2 and store.engine.pool._max_overflow == 1
        assert store.count_players() == 0
    with Store.open_or_create(store_url, pool_size=7) as store:
        assert store.engine.pool.size() == 7
    with pytest.raises(StoreError, match=r"pool_size must be an integer >= 1, got 0"):
        Store.open(store_url, pool_size=0)
    with pytest.raises(StoreError, match=r"max_overflow must be an integer >= 0, got -1"):
        Store.create(store_url, "mmr", max_overflow=-1)
    with pytest.raises(TypeError, match="pool_sise"):
        Store.open(store_url, pool_sise=3)


@pytest.mark.parametrize("through", ["range", "rating-walk"])
def test_search_handles_equals_reference(store_url, monkeypatch, through):
    """Both ways of searching (index range, walk in rating order) give exactly the
    case-insensitive prefix matches, best rated first, unrated players left out."""
    search_cases.case_search(store_url, monkeypatch, through)


def test_cli_ingest(store_url, tmp_path, capsys):
    from podium.cli import main
    from podium.io import write_contest_dir

    contests = cases.tied_history()
    write_contest_dir(contests, tmp_path / "h")
    assert main(["ingest", str(tmp_path / "h"), "--db", store_url, "-q"]) == 0
    assert "8 applied" in capsys.readouterr().out
    assert main(["ingest", str(tmp_path / "h"), "--db", store_url, "-q"]) == 0
    assert "8 duplicate (unchanged)" in capsys.readouterr().out
    assert main(["db-info", "--db", store_url]) == 0
    out = capsys.readouterr().out
    assert "contests:       8 (7 rated)" in out and display_url(store_url) in out



# ====================================================================== batches
@pytest.mark.parametrize("system", ["mmr", "tcsys"])
@pytest.mark.parametrize("sizes", [(8,), (3, 5), (1, 2, 2, 3)])
def test_batches_equal_single_ingestion_and_rater(store_url, tmp_path, system, sizes):
    """Batches leave exactly the rows (and snapshots) of single ingestions, and the
    numbers of a Rater over the history."""
    contests = cases.tied_history()
    single = f"sqlite:///{tmp_path / 'single.db'}"
    with Store.create(single, system, snapshot_every=3) as store:
        for c in contests:
            store.ingest(c)
    results = []
    with Store.create(store_url, system, snapshot_every=3) as store:
        start = 0
        for n in sizes:
            results += store.ingest_many(contests[start:start + n])
            start += n
        assert [r.status for r in results] == ["applied"] * len(contests)
        assert [r.index for r in results] == list(range(len(contests)))
        assert results[3].warnings and results[3].new_players == 0  # one side: unrated
        cases.assert_store_equals_rater(store, cases._reference(contests, system))
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [3, 6]
    cases.assert_same_rows(cases.comparable_dump(store_url, revision=False),
                           cases.comparable_dump(single, revision=False))


def test_batch_duplicates_and_repeats(store_url):
    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        for c in contests[:3]:
            store.ingest(c)
        res = store.ingest_many([contests[1], contests[3], contests[4], contests[3],
                                 contests[5]])
        assert [(r.status, r.index, r.name) for r in res] == [
            ("duplicate", 1, contests[1].name), ("applied", 3, contests[3].name),
            ("applied", 4, contests[4].name), ("duplicate", 3, contests[3].name),
            ("applied", 5, contests[5].name)]
        assert res[3].players == len(contests[3]) and res[3].new_players == 0
        before = cases.dump(store_url)
        again = store.ingest_many(contests[:6])
        assert [r.status for r in again] == ["duplicate"] * 6
        assert [r.index for r in again] == list(range(6))
        assert cases.dump(store_url) == before
        assert store.ingest_many([]) == []
        cases.assert_store_equals_rater(store, cases._reference(contests[:6], "mmr"))


def _swap_first_two(st: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The standings with the handles of the first two places swapped."""
    return [(st[1][0], st[0][1], st[0][2]), (st[0][0], st[1][1], st[1][2]), *st[2:]]


def test_batch_is_all_or_nothing(store_url):
    """A bad contest anywhere in a batch: an error naming it, and nothing of the batch
    is stored; the store then goes on exactly."""
    contests = cases.tied_history()
    other = Contest(_swap_first_two(contests[1].standings), name=contests[1].name,
                    time_seconds=contests[1].time_seconds)
    with Store.create(store_url, "mmr", snapshot_every=1) as store:
        store.ingest_many(contests[:2])
        before = cases.dump(store_url)
        bad_batches = [
            # the same id as a stored contest, other standings
            ([contests[2], contests[3], other], r"contest #2 .* of the batch: contest id "
             rf"{contests[1].name!r} is already stored .*different content"),
            # the same id twice in the batch, other content
            ([contests[2], contests[3], contests[4],
              Contest(_swap_first_two(contests[2].standings), name=contests[2].name,
                      time_seconds=contests[4].time_seconds)],
             rf"contest #3 .* of the batch: contest id {contests[2].name!r} is also the id of "
             r"contest #0"),
            # older than the contest before it
            ([contests[3], contests[2]], r"contest #1 .* of the batch: .* older than the "
             "contest before it in the batch"),
            # older than the latest stored contest
            ([Contest(contests[5].standings, name="late", time_seconds=0)],
             r"contest #0 'late' of the batch: .* older than the latest applied contest .* a "
             r"batch only appends"),
            # no id
            ([contests[2], Contest([("a", 0, 0), ("b", 1, 1)],
                                   time_seconds=contests[2].time_seconds)],
             r"contest #1 .* of the batch: .*neither url nor name"),
        ]
        for batch, message in bad_batches:
            with pytest.raises(StoreError, match=message):
                store.ingest_many(batch)
            assert cases.dump(store_url) == before
        with pytest.raises(TypeError, match=r"contest #1 .* expected a Contest"):
            store.ingest_many([contests[2], [("a", 0, 0)]])  # type: ignore[list-item]
        with pytest.raises(StoreError, match="2 contest ids given for 1 contests"):
            store.ingest_many([contests[2]], contest_ids=["a", "b"])
        assert cases.dump(store_url) == before
        res = store.ingest_many(contests[2:], contest_ids=[None, "tied", *[None] * 4])
        assert res[1].contest_id == "tied" and store.contest("tied") is not None
        ref = cases._reference(contests, "mmr")
        pd.testing.assert_frame_equal(store.ratings_frame(), ref.ratings().reset_index(drop=True),
                                      check_exact=True)


def test_rating_failure_in_a_batch_names_it_and_changes_nothing(store_url, monkeypatch):
    import podium.store.writes as writes

    contests = cases.tied_history()
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(contests[:2])
        before = cases.dump(store_url)
        real = writes.rate_run

        def failing(rater: Any, batch: Any, *rest: Any) -> Any:
            real(rater, batch, *rest)  # the cached Rater has moved on: it must not be reused
            raise FloatingPointError("the system diverged")

        with monkeypatch.context() as m:
            m.setattr(writes, "rate_run", failing)
            with pytest.raises(StoreError, match=r"rating the batch of contests "
                               rf"{contests[2].name!r}, {contests[3].name!r}, "
                               rf"{contests[4].name!r} and 1 more failed: FloatingPointError"):
                store.ingest_many(contests[2:6])
            with pytest.raises(FloatingPointError, match="diverged"):
                store.ingest(contests[2])  # one contest: the error as it is
        assert cases.dump(store_url) == before
        store.ingest_many(contests[2:])
        cases.assert_store_equals_rater(store, cases._reference(contests, "mmr"))


def test_hooks_see_every_stage_and_can_abort(store_url):
    """The hooks are called inside the transaction; one that raises rolls it back."""
    contests = cases.tied_history()
    seen: list[str] = []
    with Store.create(store_url, "mmr", hooks=seen.append, snapshot_every=2) as store:
        store.ingest(contests[0])
        assert seen == ["locked", "rated", "standings", "events", "players", "commit"]
        seen.clear()
        store.ingest_many(contests[1:4])
        # snapshots are due after contests 2 and 4: two segments, each ending in one
        assert seen == ["locked", *["rated", "standings", "events", "players", "snapshot"] * 2,
                        "commit"]
    before = cases.dump(store_url)

    def fail_at_events(stage: str) -> None:
        if stage == "events":
            raise RuntimeError("stop at events")

    with Store.open(store_url, hooks=fail_at_events) as store:
        with pytest.raises(RuntimeError, match="stop at events"):
            store.ingest_many(contests[4:])
        assert cases.dump(store_url) == before
        with pytest.raises(TypeError, match="hooks must be a callable"):
            Store.open(store_url, hooks="events")
        store.hooks = None
        store.ingest_many(contests[4:])
        cases.assert_store_equals_rater(store, cases._reference(contests, "mmr"))



# ====================================================================== SQLite only

def test_synchronous_setting(sqlite_url):
    """The store option ``synchronous``: what a SQLite commit waits for (PRAGMA
    synchronous 1 = NORMAL, the default; 2 = FULL), on every connection of the pool;
    another value is refused naming the two."""
    def setting(store: Store) -> int:
        with store.engine.connect() as conn:
            raw = conn.connection.driver_connection
            return int(raw.execute("PRAGMA synchronous").fetchone()[0])

    with Store.create(sqlite_url, "mmr") as store:
        assert setting(store) == 1
    with Store.open(sqlite_url, synchronous="full") as store:
        store.ingest(Contest([("a", 0, 0), ("b", 1, 1)], name="m", time_seconds=1_700_000_000))
        assert setting(store) == 2 and store.count_players() == 2
    with Store.open(sqlite_url, synchronous="NORMAL") as store:
        assert setting(store) == 1
    with pytest.raises(StoreError, match=r"synchronous must be one of 'normal', 'full'.*"
                                         r"got 'off'"):
        Store.open(sqlite_url, synchronous="off")


def test_bare_path_is_sqlite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert normalize_url("x.db") == "sqlite:///x.db"
    assert normalize_url("/a/b.db") == "sqlite:////a/b.db"
    assert normalize_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    with Store.create("x.db", "tcsys") as store:
        store.ingest(Contest([("a", 0, 0), ("b", 1, 1)], name="r1"))
    assert (tmp_path / "x.db").exists()
    with Store.open(f"sqlite:///{tmp_path / 'x.db'}") as store:
        assert store.system_name == "tcsys" and store.count_players() == 2


def test_unknown_parameter_and_system_rejected(tmp_path):
    path = tmp_path / "new.db"
    with pytest.raises(ConfigError, match="bogus"):
        Store.create(str(path), "mmr", {"bogus": 1})
    with pytest.raises(ConfigError, match="unknown rating system"):
        Store.open_or_create(str(path), "no-such-system")
    assert not path.exists()  # nothing was created
    with Store.create(str(path), "mmr", {"weight_limit": 0.3}) as store:
        assert store.params["weight_limit"] == 0.3
    before = cases.dump(str(path))
    with pytest.raises(StoreError, match=r"weight_limit: stored 0.3, given 0.2"):
        Store.create(str(path), "mmr")
    with pytest.raises(StoreError, match="rates with 'mmr', not 'tcsys'"):
        Store.open_or_create(str(path), "tcsys")
    with pytest.raises(ConfigError, match="bogus"):
        Store.open_or_create(str(path), params={"bogus": 2})
    # the same system and parameters are accepted (also given in full)
    with Store.open_or_create(str(path), "mmr", {"weight_limit": 0.3}) as store:
        full = store.params
    Store.create(str(path), "mmr", full).close()
    assert cases.dump(str(path)) == before


def test_open_errors(tmp_path):
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match=r"no Podium store .*no such file.*podium ingest"):
        Store.open(str(missing))
    assert not missing.exists()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x INTEGER)").connection.commit()
    with pytest.raises(StoreError, match=r"holds no Podium store \(no schema\).*--system"):
        Store.open(str(empty))
    with pytest.raises(StoreError, match="unsupported database"):
        Store.open("mysql://u@h/d")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database file at all" * 100)
    with pytest.raises(StoreError, match=r"junk.db: cannot open .*not a database"):
        Store.open(str(junk))
    with pytest.raises(StoreError, match=r"junk.db: cannot open .*not a database"):
        Store.open_or_create(str(junk), "mmr")


def _make_v1_store(url: str, version: int = 1) -> None:
    """A store as version 1 of the schema wrote it (no players.handle_key), then
    migrated to ``version``."""
    eng = make_engine(url)
    with eng.begin() as conn:
        assert upgrade(conn, target=1) == [1]
        for k, v in (("system", "mmr"), ("params", json.dumps(Store_params())),
                     ("store_id", "v1store"), ("epoch", "0"), ("revision", "0")):
            set_meta(conn, k, v)
        conn.execute(text(
            "INSERT INTO players (pk, handle, mu, sigma, display_rating, contests, "
            "last_contest_time, max_display_rating, last_change) VALUES "
            "(0, 'Alice', 1600, 100, 1540, 1, 5, 1540, 850), "
            "(1, 'bob', 1400, 100, 1340, 1, 5, 1340, 650)"
        ))
        assert upgrade(conn, target=version) == list(range(2, version + 1))
    eng.dispose()


def Store_params():  # noqa: N802 - the mmr preset's full parameters, as a store records them
    from podium.systems import get_system

    return json.loads(json.dumps(get_system("mmr").params()))


@pytest.mark.parametrize("old", range(1, SCHEMA_VERSION))
def test_upgrade_from_older_version(sqlite_url, old):
    _make_v1_store(sqlite_url, old)
    with pytest.raises(StoreError, match=rf"schema version {old}, older than this Podium's "
                       rf"{SCHEMA_VERSION}; run `podium db-upgrade --db {sqlite_url}`"):
        Store.open(sqlite_url)
    with pytest.raises(StoreError, match="older"):
        Store.open_or_create(sqlite_url)
    assert Store.upgrade(sqlite_url) == (old, SCHEMA_VERSION)
    assert Store.upgrade(sqlite_url) == (SCHEMA_VERSION, SCHEMA_VERSION)
    with Store.open(sqlite_url) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.search_handles("AL") == ["Alice"]
        assert store.search_handles("") == ["Alice", "bob"]
        assert store.search_handles("b") == ["bob"] and store.search_handles("c") == []
    eng = make_engine(sqlite_url)
    with eng.connect() as conn:
        keys = dict(conn.execute(select(S.players.c.handle, S.players.c.handle_key)).all())
    eng.dispose()
    assert keys == {"Alice": "alice", "bob": "bob"}
    # the migrated schema is the one a new store gets
    fresh = sqlite_url.replace("store.db", "fresh.db")
    Store.create(fresh, "mmr").close()
    assert _schema_sql(sqlite_url) == _schema_sql(fresh)


def _schema_sql(url: str) -> dict[str, set[str]]:
    from sqlalchemy import inspect

    eng = make_engine(url)
    insp = inspect(eng)
    out = {t: {f"{c['name']}:{c['type']}:{c['nullable']}" for c in insp.get_columns(t)}
           | {f"ix:{ix['name']}:{ix['column_names']}" for ix in insp.get_indexes(t)}
           for t in insp.get_table_names()}
    eng.dispose()
    return out


_PERM_CONTESTS = cases.tied_history(n_players=20, rounds=5, seed=13)
# two contests at the same time: their order is the order of ingestion
_PERM_CONTESTS[2] = Contest(_PERM_CONTESTS[2].standings, name="same time as #1",
                            time_seconds=_PERM_CONTESTS[1].time_seconds)


@settings(max_examples=12, deadline=None)
@given(order=st.permutations(range(len(_PERM_CONTESTS))))
def test_any_ingestion_order_equals_stable_time_sort(order):
    """With --recompute-from, ingesting in any order gives the history sorted by time
    (stably, in ingestion order) rated from scratch."""
    given_order = [_PERM_CONTESTS[k] for k in order]
    with Store.create("sqlite://", "mmr", snapshot_every=2) as store:
        for c in given_order:
            store.ingest(c, recompute_from=True)
        expect = sorted(given_order, key=lambda c: c.time_seconds)
        assert store.contest_ids() == [c.name for c in expect]
        cases.assert_store_equals_rater(store, cases._reference(expect, "mmr"))


def test_prefix_upper_bound():
    from podium.store.store import prefix_upper_bound

    top = chr(0x10FFFF)
    assert prefix_upper_bound("") is None and prefix_upper_bound(top * 3) is None
    assert prefix_upper_bound("tour") == "tous"
    assert prefix_upper_bound("a_") == "a`" and prefix_upper_bound("a%") == "a&"
    assert prefix_upper_bound("a" + top + top) == "b"
    assert prefix_upper_bound("x\ud7ff") == "x\ue000"  # the surrogates are skipped
    assert prefix_upper_bound("σο") == "σπ"



# ====================================================================== PostgreSQL only


@pytest.mark.parametrize("through", ["range", "rating-walk"])
def test_search_and_queries_in_a_non_c_locale(icu_url, monkeypatch, through):
    """In a database that sorts text by a language's rules (ICU en-US: '_' sorts before
    '%', 'a-b' near 'ab'), prefixes are still exact and ties still go by code point."""
    from sqlalchemy import text

    from podium.store.engine import make_engine

    eng = make_engine(icu_url)
    with eng.connect() as conn:
        assert conn.execute(text("SELECT 'a_' < 'a%'")).scalar_one()  # not code point order
    eng.dispose()
    search_cases.case_search(icu_url, monkeypatch, through)


def test_queries_in_a_non_c_locale(icu_url):
    test_queries(icu_url)


def _collation(url: str) -> str | None:
    from sqlalchemy import text

    from podium.store.engine import make_engine

    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            return conn.execute(text(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = 'players' AND column_name = 'handle_key'")).scalar_one()
    finally:
        eng.dispose()


def test_upgrade_from_version_2(icu_url):
    """Version 3 gives handle_key code point order (COLLATE "C") and rebuilds its index."""
    from sqlalchemy import inspect, text

    from podium.store import SCHEMA_VERSION, Store, StoreError
    from podium.store.engine import make_engine
    from podium.store.migrations import set_meta, upgrade
    from podium.systems import get_system

    eng = make_engine(icu_url)
    with eng.begin() as conn:
        assert upgrade(conn, target=2) == [1, 2]
        for k, v in (("system", "mmr"), ("params", json.dumps(get_system("mmr").params())),
                     ("store_id", "v2store"), ("epoch", "0"), ("revision", "0")):
            set_meta(conn, k, v)
        conn.execute(text(
            "INSERT INTO players (pk, handle, handle_key, mu, sigma, display_rating, contests, "
            "last_contest_time, max_display_rating, last_change) VALUES "
            "(0, 'a_b', 'a_b', 1600, 100, 1540, 1, 5, 1540, 850), "
            "(1, 'a%c', 'a%c', 1400, 100, 1340, 1, 5, 1340, 650), "
            "(2, 'A-b', 'a-b', 1500, 100, 1440, 1, 5, 1440, 750)"
        ))
    eng.dispose()
    assert _collation(icu_url) is None  # the database's default (ICU en-US)
    with pytest.raises(StoreError, match=r"schema version 2, older than this Podium's"):
        Store.open(icu_url)
    assert Store.upgrade(icu_url) == (2, SCHEMA_VERSION)
    assert _collation(icu_url) == "C"
    eng = make_engine(icu_url)
    indexes = {ix["name"]: ix["column_names"] for ix in inspect(eng).get_indexes("players")}
    eng.dispose()
    assert indexes["ix_players_handle_key"] == ["handle_key"]
    with Store.open(icu_url) as store:
        assert store.search_handles("a_") == ["a_b"]
        assert store.search_handles("A%") == ["a%c"]
        assert store.search_handles("a-") == ["A-b"]
        assert store.search_handles("a") == ["a_b", "A-b", "a%c"]
    # a store created now has the same column
    with postgres_database() as fresh:
        Store.create(fresh, "mmr").close()
        assert _collation(fresh) == "C"
