"""The Rater of a store: snapshots and the in-process Rater cache (a service of
:class:`~podium.store.Store`).

A write needs a :class:`~podium.rater.Rater` that has rated exactly the stored
contests before its insertion point.  :meth:`RaterCache.rater_at` gives one: the Rater
kept in memory since the last write when it is still valid (same store, same epoch, not
ahead of the point), else the newest snapshot at or before the point
(:meth:`RaterCache.from_snapshot`), then the stored standings after it replayed
(replaying is deterministic: a split run is bit-identical to one run).

The cached Rater is owned here and nowhere else: a write takes it (so that a failed
write leaves none), :meth:`RaterCache.stage`\\ s the Rater of the state it writes, and
the write service :meth:`RaterCache.commit`\\ s it once the transaction committed;
others drop it with :meth:`RaterCache.invalidate`.

Snapshots (``snapshots`` table) are written by :meth:`RaterCache.write_snapshot`: the
Rater's bytes (:func:`podium.store.snapshot.rater_to_bytes`), keeping the newest
``keep_snapshots``.

The snapshot policy of every write needs the contests and player-rounds stored since
the newest snapshot (:func:`since_snapshot`: a scan of those contests, up to the whole
interval between snapshots -- hundreds of rows for a live game among thousands of
players, tens of thousands among the Codeforces history's players).
:meth:`RaterCache.since_snapshot` keeps them between writes like the Rater, valid for
one state: the same store, epoch, newest snapshot and number of contests (one read of
the small ``snapshots`` table tells).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import cache

from sqlalchemy import Connection, delete, func, select

import podium.store.schema as S
from podium.errors import CheckpointError
from podium.rater import Rater
from podium.store.bulk import fetch
from podium.store.common import Meta, StoreContext, json_params, same_params
from podium.store.models import StoreError
from podium.store.rating import Priors, replay
from podium.store.rows import stored_contests, stored_priors
from podium.store.snapshot import new_rater, rater_from_bytes, rater_to_bytes

__all__ = ["CachedRater", "RaterCache", "SinceSnapshot", "since_snapshot", "snapshot_bytes"]

log = logging.getLogger("podium.store")


@cache
def _since_snapshot_sql(t: S.LadderTables) -> str:
    """Contests and player-rounds after the newest snapshot (run with the driver's cursor:
    every write runs it)."""
    c, sn = t.contests.name, t.snapshots.name
    return (f'SELECT count(*), coalesce(sum(CASE WHEN "rated" THEN "players" ELSE 0 END), 0) '
            f'FROM "{c}" WHERE "seq" >= (SELECT coalesce(max("head_count"), 0) FROM "{sn}")')


@cache
def _newest_snapshot_sql(t: S.LadderTables) -> str:
    """The ``head_count`` of the newest snapshot (0: none)."""
    return f'SELECT coalesce(max("head_count"), 0) FROM "{t.snapshots.name}"'


@dataclass(frozen=True)
class SinceSnapshot:
    """What the snapshot policy counts in one state of a ladder: ``since`` contests and
    ``events`` player-rounds of rated contests stored after the newest snapshot, which
    is at ``snapshot`` contests; the state is that of ``count`` contests of store
    ``store_id`` at ``epoch``."""

    store_id: str
    epoch: int
    count: int
    snapshot: int
    since: int
    events: int


@dataclass
class CachedRater:
    """A Rater known to equal the first ``count`` contests of store ``store_id`` at ``epoch``."""

    rater: Rater
    count: int
    store_id: str
    epoch: int


def since_snapshot(conn: Connection, t: S.LadderTables) -> tuple[int, int]:
    """Contests, and player-rounds of rated contests, stored after the newest snapshot of
    the ladder of ``t``."""
    since, events = fetch(conn, _since_snapshot_sql(t))[0]
    return int(since), int(events)


def snapshot_bytes(conn: Connection, t: S.LadderTables, pk: int) -> bytes:
    """The bytes of snapshot ``pk``; on PostgreSQL in the binary protocol (the text
    protocol sends ``bytea`` as hex: 1.8 s instead of 0.5 s for 159 MB)."""
    if conn.dialect.name == "postgresql":
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor(binary=True) as cur:
            cur.execute(f'SELECT data FROM "{t.snapshots.name}" WHERE pk = %s', (pk,))
            found = cur.fetchone()
        if found is None:  # pragma: no cover - the row was just selected
            raise StoreError(f"snapshot {pk} vanished")
        return bytes(found[0])
    return bytes(conn.execute(select(t.snapshots.c.data)
                              .where(t.snapshots.c.pk == pk)).scalar_one())


class RaterCache:
    """The Raters of one store context: restored from snapshots, replayed, and the one
    kept in memory between writes (see the module notes)."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx
        self._cache: CachedRater | None = None
        self._staged: CachedRater | None = None
        self._since: SinceSnapshot | None = None
        self._since_staged: SinceSnapshot | None = None

    # ------------------------------------------------------------------ the cache
    def cached(self) -> CachedRater | None:
        """The Rater kept since the last write (``None`` when there is none)."""
        return self._cache

    def invalidate(self) -> None:
        """Drop the kept Rater (the state is about to change)."""
        self._cache = None
        self._since = None

    def begin(self) -> None:
        """Start a write: nothing staged."""
        self._staged = None
        self._since_staged = None

    def stage(self, cached: CachedRater) -> None:
        """Keep the Rater of the state being written, once it is committed."""
        self._staged = cached

    def commit(self) -> None:
        """The write committed: keep the staged Rater and snapshot counts (unless the
        store's ``cache`` option is off)."""
        if self._staged is not None:
            self._cache = self._staged if self.ctx.options.cache else None
        self._staged = None
        if self._since_staged is not None:
            self._since = self._since_staged if self.ctx.options.cache else None
        self._since_staged = None

    def discard(self) -> None:
        """The write failed: drop the staged Rater."""
        self._staged = None
        self._since_staged = None

    def release(self) -> None:
        """Drop every Rater kept (closing the store)."""
        self._cache = None
        self._staged = None
        self._since = None
        self._since_staged = None

    def since_snapshot(self, conn: Connection, m: Meta, count: int) -> SinceSnapshot:
        """The snapshot policy's counts (:func:`since_snapshot`) in the state of ``count``
        stored contests of the store and epoch of ``m``: those kept since the last write
        when they are of this state (the newest snapshot read to tell), else read."""
        t = self.ctx.tables
        newest = int(fetch(conn, _newest_snapshot_sql(t))[0][0])
        k = self._since
        if (k is not None and k.store_id == m.store_id and k.epoch == m.epoch
                and k.count == count and k.snapshot == newest):
            return k
        since, events = since_snapshot(conn, t)
        return SinceSnapshot(m.store_id, m.epoch, count, newest, since, events)

    def stage_since(self, counts: SinceSnapshot) -> None:
        """Keep the snapshot policy's counts of the state being written, once it is
        committed."""
        self._since_staged = counts

    # ------------------------------------------------------------------ Raters
    def rater_at(self, conn: Connection, m: Meta, pos: int) -> Rater:
        """A Rater that has rated exactly the first ``pos`` stored contests, for a write:
        the kept Rater is taken (re-kept only after a commit)."""
        c = self._cache
        self._cache = None  # the Rater is about to change; re-cached only after a commit
        if c is not None and c.store_id == m.store_id and c.epoch == m.epoch and c.count <= pos:
            return self._replayed(conn, c.rater, c.count, pos)
        return self.rater_from_store(conn, pos)

    def rater_from_store(self, conn: Connection, pos: int) -> Rater:
        """A new Rater that has rated exactly the first ``pos`` stored contests: the newest
        snapshot at or before ``pos``, then the stored contests after it (the kept Rater
        is neither used nor changed)."""
        rater, start = self.from_snapshot(conn, pos)
        return self._replayed(conn, rater, start, pos)

    def priors(self, conn: Connection) -> Priors | None:
        """The newcomer priors the ladder took from another ladder (``None``: none)."""
        t = self.ctx.tables
        if conn.execute(select(t.priors.c.player_pk).limit(1)).first() is None:
            return None
        return stored_priors(conn, t)

    def _replayed(self, conn: Connection, rater: Rater, start: int, pos: int) -> Rater:
        if start < pos:
            replay(rater, list(stored_contests(conn, self.ctx.tables, start, pos)),
                   self.priors(conn))
        if len(rater.contests) != pos:  # pragma: no cover - defensive
            raise StoreError(f"internal error: rater at {len(rater.contests)} contests, "
                             f"expected {pos}")
        return rater

    def from_snapshot(self, conn: Connection, pos: int) -> tuple[Rater, int]:
        """The Rater of the newest usable snapshot at or before ``pos`` and the number of
        contests it has rated (a new Rater and 0 when there is none)."""
        ctx = self.ctx
        sn = ctx.tables.snapshots
        # The newest snapshot's key first, then its bytes by key: selecting the bytes
        # in the ordered query made SQLite sort every snapshot's blob (150 MB each for
        # the Codeforces history: 1.7 s warm, 4 s cold, against 0.3 s by key).
        row = conn.execute(
            select(sn.c.pk, sn.c.head_count).where(sn.c.head_count <= pos)
            .order_by(sn.c.head_count.desc(), sn.c.pk.desc()).limit(1)
        ).first()
        if row is not None:
            data = snapshot_bytes(conn, ctx.tables, int(row.pk))
            try:
                rater = rater_from_bytes(data, where=f"snapshot at {row.head_count} contests")
                if (rater.system_name == ctx.system_name
                        and same_params(json_params(rater.system.params()), ctx.params)
                        and len(rater.contests) == row.head_count):
                    return rater, int(row.head_count)
                log.warning("snapshot at %d contests does not match the store; replaying",
                            row.head_count)
            except CheckpointError as exc:
                log.warning("%s; replaying from the start", exc)
        return new_rater(ctx.system_name, ctx.params), 0

    # ------------------------------------------------------------------ snapshots
    def maybe_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        """Write a snapshot at ``head`` if the policy asks for one
        (:meth:`~podium.store.common.StoreOptions.snapshot_due`)."""
        since, events = since_snapshot(conn, self.ctx.tables)
        if self.ctx.options.snapshot_due(since, events, rater.players.n):
            self.write_snapshot(conn, rater, head, epoch)

    def write_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        """Write ``rater`` (at ``head`` contests, ``epoch``) as the newest snapshot and
        keep only the newest ``keep_snapshots``."""
        data = rater_to_bytes(rater)
        sn = self.ctx.tables.snapshots
        pk = int(conn.execute(select(func.coalesce(func.max(sn.c.pk), -1))).scalar_one()) + 1
        conn.execute(sn.insert().values(pk=pk, head_count=head, epoch=epoch,
                                        created_at=int(time.time()), size=len(data), data=data))
        keep = [r[0] for r in conn.execute(
            select(sn.c.pk).order_by(sn.c.head_count.desc(), sn.c.pk.desc())
            .limit(self.ctx.options.keep_snapshots)
        ).all()]
        conn.execute(delete(sn).where(sn.c.pk.not_in(keep)))
        self.ctx.hook("snapshot")
