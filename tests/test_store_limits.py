"""Three former limits of docs/service.md: the activity window is an index range
(``ix_players_active``), the first write of a fresh process reads the newest snapshot
by its key (its bytes are not sorted with the other snapshots') and replays nothing when
that snapshot is current, and a write counts the contests since the newest snapshot
(the snapshot policy) without reading them again when it kept the counts."""

from __future__ import annotations

from typing import Any

import _store_cases as cases
import pytest

pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

from sqlalchemy import event, text  # noqa: E402

from podium import Contest  # noqa: E402
from podium.store import Store, raters  # noqa: E402
from podium.store.engine import make_engine, read_txn  # noqa: E402
from podium.store.raters import since_snapshot  # noqa: E402

T0 = 1_700_000_000


def rounds(n: int) -> list[Contest]:
    return [Contest([(f"p{(k + j) % 9}", j, j) for j in range(4)], name=f"r{k}",
                    time_seconds=T0 + 86_400 * k) for k in range(n)]


def test_activity_window_uses_its_index(tmp_path: Any) -> None:
    sqlite_url = f"sqlite:///{tmp_path / 'store.db'}"
    with Store.create(sqlite_url, "mmr") as store:
        store.ingest_many(rounds(8))
        since = T0 + 86_400 * 5
        want = sum(1 for r in store.leaderboard(limit=100) if r.last_contest_time >= since)
        assert store.count_players(active_since=since) == want > 0
    eng = make_engine(sqlite_url)
    with eng.connect() as conn:
        plan = conn.execute(text(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM players WHERE display_rating IS NOT NULL "
            "AND last_contest_time >= :t"), {"t": since}).all()
    eng.dispose()
    detail = " ".join(str(r[-1]) for r in plan)
    assert "ix_players_active" in detail and "COVERING INDEX" in detail, detail


def test_first_write_reads_the_current_snapshot_by_key(store_url: str) -> None:
    cs = rounds(7)
    with Store.create(store_url, "mmr", snapshot_every=3) as store:
        store.ingest_many(cs[:6])
        store.snapshot()  # current: at 6 contests (as `podium ingest` leaves a store)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [3, 6]
    statements: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()))

    with Store.open(store_url) as store:
        event.listen(store.engine, "before_cursor_execute", seen)
        assert store.ingest(cs[6]).status == "applied"
        event.remove(store.engine, "before_cursor_execute", seen)
    reads = [s for s in statements if "FROM snapshots" in s and "snapshots.data" in s]
    assert not [s for s in reads if "ORDER BY" in s], reads
    if store_url.startswith("sqlite"):  # (PostgreSQL reads the bytes through the driver)
        assert len(reads) == 1, reads
    # nothing was replayed: no stored standings were read
    assert not [s for s in statements if "FROM standings" in s], statements
    with Store.open(store_url, cache=False) as store:  # and the numbers are a batch run's
        cases.assert_store_equals_rater(store, cases._reference(cs, "mmr"))


def test_snapshot_policy_counts_kept_between_writes(
        store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counts a write keeps for the next one's snapshot policy are those the
    ``contests`` table gives, whatever wrote last: single contests, batches across a
    snapshot, an unrated contest, a snapshot or a write by another process, a
    recomputation; the next write does not count them again; and the snapshots are
    those of a store that counts afresh for every write (``cache=False``)."""
    cs = rounds(40)
    cs[9] = Contest([("p1", 0, 0)], name="alone", time_seconds=cs[9].time_seconds)  # unrated
    late = Contest([("p2", 0, 0), ("p3", 1, 1)], name="late",
                   time_seconds=T0 + 86_400 * 33 + 1)
    counted: list[int] = []

    def counting(conn: Any, t: Any) -> tuple[int, int]:
        counted.append(1)
        return since_snapshot(conn, t)

    def check(store: Store) -> None:
        ctx = store.services.context
        with read_txn(store.engine) as conn:
            kept = store.services.raters.since_snapshot(conn, ctx.read_meta(conn),
                                                        len(store.contest_ids()))
            assert (kept.since, kept.events) == since_snapshot(conn, ctx.tables)

    def writes(url: str, cache: bool) -> tuple[list[int], int]:
        with Store.create(url, "mmr", snapshot_every=4, cache=cache) as store:
            for c in cs[:6]:
                store.ingest(c)
                check(store)
            store.ingest_many(cs[6:15])  # across two snapshots, with the unrated contest
            check(store)
            with Store.open(url, snapshot_every=4) as other:  # another writer
                other.ingest(cs[15])
                other.snapshot()
            store.ingest(cs[16])
            check(store)
            store.snapshot()
            check(store)
            store.ingest_many(cs[17:35])
            store.ingest(late, recompute_from=True)
            check(store)
            store.ingest(cs[35])
            counted.clear()
            monkeypatch.setattr(raters, "since_snapshot", counting)
            store.ingest(cs[36])
            store.ingest_many(cs[37:])
            monkeypatch.undo()
            check(store)
            return [s["head_count"] for s in store.stats()["snapshots"]], len(counted)

    kept, reads = writes(store_url, True)
    assert reads == 0
    with Store.open(store_url, cache=False) as store:
        cases.assert_store_equals_rater(store, cases._reference([*cs[:34], late, *cs[34:]],
                                                                "mmr"))
    if store_url.startswith("sqlite"):  # one back end is enough for the reference
        assert writes(store_url.replace(".db", "-fresh.db"), False) == (kept, 2)
