"""A SQLite store's writes keep one connection open between them
(:func:`podium.store.engine.kept_write_txn`): later writes reuse it, a failed write
closes it, closing the store closes it (the write-ahead log is checkpointed and removed
as before), and a pool of one connection keeps it for the readers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

from sqlalchemy import event  # noqa: E402

from podium import Contest  # noqa: E402
from podium.store import Store, StoreError  # noqa: E402

T0 = 1_700_000_000


def rounds(n: int, start: int = 0) -> list[Contest]:
    return [Contest([(f"p{(k + j) % 9}", j, j) for j in range(4)], name=f"r{k}",
                    time_seconds=T0 + 86_400 * k) for k in range(start, start + n)]


def test_writes_reuse_one_connection_and_a_failed_write_drops_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.create(url, "mmr") as store:
        checkouts: list[int] = []
        event.listen(store.engine, "checkout", lambda *a: checkouts.append(1))
        for c in rounds(4):
            store.ingest(c)
        store.ingest_many(rounds(3, 4))
        assert len(checkouts) == 1  # the first write's; the others reuse it
        changed = Contest([("p1", 0, 0), ("p2", 1, 1)], name="r0", time_seconds=T0)
        with pytest.raises(StoreError, match="different content"):
            store.ingest(changed)
        store.ingest(rounds(1, 7)[0])
        assert len(checkouts) == 2  # the failed write closed it: the next one took another
        assert store.stats()["contests"] == 8
    with Store.open(url) as store:
        assert [c.name for c in store.contests(limit=10)][:2] == ["r7", "r6"]


def test_closing_the_store_closes_the_kept_connection(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store.create(f"sqlite:///{db}", "mmr") as store:
        for c in rounds(3):
            store.ingest(c)
        assert Path(f"{db}-wal").exists()
    # the last connection to close checkpoints the log and removes it: none is left open
    assert not Path(f"{db}-wal").exists()


def test_a_pool_of_one_connection_keeps_it_for_the_readers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    Store.create(url, "mmr").close()
    with Store.open(url, pool_size=1, max_overflow=0) as store:
        seen: set[str] = set()
        for c in rounds(3):
            store.ingest(c)
            seen.update(c.handles)
            assert store.count_players() == len(seen)
        assert store.engine.pool.checkedout() == 0
