"""Writing a store: ingestion, batches, recomputation and snapshots (the write layer
of :class:`~podium.store.Store`).

Every write is one transaction (see :mod:`podium.store.engine`) holding the
store's write lock:

1. read ``meta`` (store id, epoch);
2. report a contest whose id is stored with the same content (SHA-256 of the
   contest) as ``"duplicate"``, refuse one whose content differs, refuse a contest
   older than the latest one unless ``recompute_from``;
3. get a Rater at the insertion point: the in-process cache when it is still
   valid (same store, same epoch, not ahead), else the newest snapshot at or
   before the point; then replay the stored standings up to the point
   (replaying is deterministic: a split run is bit-identical to one run);
4. rate the new contests -- and, for ``recompute_from``, every later contest
   again -- with one ``Rater.extend`` call (:func:`podium.store.rating.rate_run`);
5. insert the contests, their standings and events, insert new players and
   update the others (one ``executemany`` or ``COPY`` per table, see
   :mod:`podium.store.bulk`); bump ``meta.revision`` (and ``meta.epoch`` after a
   recompute);
6. write a new snapshot when ``snapshot_every`` contests or ``snapshot_events``
   player-rounds have been applied since the newest one (keeping the newest
   ``keep_snapshots``), then commit.

:meth:`StoreWrites.ingest_many` does this once for a whole batch of contests, so
the fixed costs of a transaction (the lock, the metadata and duplicate lookups,
one statement per table, the snapshot check, the commit) are paid once per batch.

Any error rolls the transaction back and drops the in-process cache, so the
database and the next ingestion are as if the contests had never been seen.
A process killed at any point leaves the previous committed state.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import Connection, delete, func, select, update

from podium.core.contest import Contest
from podium.errors import CheckpointError
from podium.rater import Rater
from podium.store import schema as S
from podium.store.bulk import insert_rows, update_rows
from podium.store.common import (
    Meta,
    StoreBase,
    chunks,
    content_hash,
    default_contest_id,
    fmt_time,
    json_params,
    same_params,
)
from podium.store.engine import db_errors, write_txn
from podium.store.migrations import set_meta
from podium.store.models import IngestResult, StoreError
from podium.store.rating import (
    PLAYER_COLS,
    RatedRun,
    handle_of,
    player_values,
    rate_run,
    rated_indices,
    replay,
)
from podium.store.snapshot import new_rater, rater_from_bytes, rater_to_bytes

__all__ = ["StoreWrites"]

log = logging.getLogger("podium.store")
_T = TypeVar("_T")

_INT64 = 2**63
_CONTEST_COLS = ("pk", "cid", "seq", "name", "url", "time_seconds", "weight", "perf_ceiling",
                 "players", "new_players", "rated", "content_hash", "ingested_at")
_EVENT_COLS = ("contest_pk", "player_pk", "mu", "sigma", "display_rating", "perf", "place",
               "prev_display", "change", "debut")


@dataclass
class _Cache:
    """A Rater known to equal the first ``count`` contests of store ``store_id`` at ``epoch``."""

    rater: Rater
    count: int
    store_id: str
    epoch: int


@dataclass(frozen=True)
class _Item:
    """One contest of a write, checked before the transaction.

    ``where`` prefixes its error messages (empty for :meth:`StoreWrites.ingest`).
    """

    contest: Contest
    cid: str
    chash: str
    where: str


@dataclass(frozen=True)
class _Head:
    """The stored contests' extent: their number, the next free key, the latest one."""

    count: int
    next_pk: int
    latest_time: int | None
    latest_cid: str | None
    latest_name: str | None


class StoreWrites(StoreBase):
    """Ingestion and snapshots; see :class:`~podium.store.Store`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache: _Cache | None = None
        self._handles: dict[str, int] = {}
        self._handles_store: str | None = None
        self._max_player_pk = -1
        self._pending: _Cache | None = None
        self._pending_handles: dict[str, int] = {}

    def _release(self) -> None:
        self._cache = None

    # ------------------------------------------------------------------ public
    def ingest(self, contest: Contest, *, contest_id: str | None = None,
               recompute_from: bool = False) -> IngestResult:
        """Rate ``contest`` and store it, all in one transaction (all of it or nothing).

        Parameters
        ----------
        contest:
            A validated :class:`~podium.core.contest.Contest`.
        contest_id:
            Its id (default: its url if set, else its name).
        recompute_from:
            Allow a contest older than the latest stored one: it is inserted in
            time order (after the stored contests of the same or an earlier time)
            and every later contest is rated again.

        Returns
        -------
        IngestResult
            ``status`` "applied", "duplicate" (the id is stored with the same
            content: nothing changed) or "recomputed".

        Raises
        ------
        StoreError
            When the id is stored with different content, when the contest is older
            than the latest stored one (without ``recompute_from``), or when it has no
            id.  Nothing is changed.
        """
        item = self._item(contest, contest_id, "")
        return self._run_write(f"cannot ingest contest {contest.label!r}",
                               lambda conn: self._ingest_locked(conn, item, recompute_from))

    def ingest_many(self, contests: Sequence[Contest], *,
                    contest_ids: Sequence[str | None] | None = None) -> list[IngestResult]:
        """Rate a batch of contests and store them in one transaction (all or nothing).

        The batch is rated with one ``Rater.extend`` call and written with one
        statement per table, so that many small contests cost little more than
        their rating; the result is bit-identical to :meth:`ingest` of each contest
        in turn (and to ``podium rate`` of the history).

        Parameters
        ----------
        contests:
            Validated contests, in time order (equal times keep their order), none
            older than the latest stored contest.
        contest_ids:
            Their ids (default, or ``None`` for one: its url if set, else its name).

        Returns
        -------
        list of IngestResult
            One per contest, in the given order: "applied", or "duplicate" for a
            contest already stored, or repeated within the batch, with the same
            content (its ``index`` is the stored one's).

        Raises
        ------
        StoreError
            Naming the contest (``contest #k 'label' of the batch``) when its id is
            stored, or repeated in the batch, with other content; when it is older
            than the contest before it or than the latest stored contest (a batch
            only appends: insert an older contest with
            ``ingest(contest, recompute_from=True)``); or when it has no id.
            Nothing of the batch is changed.
        """
        contests = list(contests)
        if contest_ids is not None and len(contest_ids) != len(contests):
            raise StoreError(f"{len(contest_ids)} contest ids given for {len(contests)} "
                             "contests")
        items = [
            self._item(c, None if contest_ids is None else contest_ids[k],
                       f"contest #{k} {getattr(c, 'label', '')!r} of the batch: ")
            for k, c in enumerate(contests)
        ]
        if not items:
            return []
        return self._run_write(f"cannot ingest a batch of {len(items)} contests",
                               lambda conn: self._ingest_many_locked(conn, items))

    def snapshot(self) -> bool:
        """Write a snapshot of the current state unless the newest one is already current.

        Returns True when one was written.  (:meth:`ingest` takes snapshots on its
        own; call this after a batch so that the next process starts at once.)
        """
        def write(conn: Connection) -> bool:
            m = self._read_meta(conn)
            head = self._head(conn).count
            newest = conn.execute(select(func.max(S.snapshots.c.head_count))).scalar_one()
            if newest is not None and int(newest) == head:
                return False
            rater = self._rater_at(conn, m, head)
            self._write_snapshot(conn, rater, head, m.epoch)
            self._keep(_Cache(rater, head, m.store_id, m.epoch))
            return True

        return self._run_write("cannot write a snapshot", write)

    # ------------------------------------------------------------------ transactions
    def _item(self, contest: Contest, contest_id: str | None, where: str) -> _Item:
        if not isinstance(contest, Contest):
            raise TypeError(f"{where}expected a Contest, got {type(contest).__name__}")
        try:
            cid = default_contest_id(contest) if contest_id is None else contest_id
        except StoreError as exc:
            raise StoreError(f"{where}{exc}") from None
        if not isinstance(cid, str) or not cid:
            raise StoreError(f"{where}contest {contest.label!r}: contest_id must be a "
                             "non-empty string")
        if not -_INT64 <= contest.time_seconds < _INT64:
            raise StoreError(f"{where}contest {contest.label!r}: time_seconds "
                             f"{contest.time_seconds} does not fit a 64-bit integer")
        return _Item(contest, cid, content_hash(contest), where)

    def _run_write(self, what: str, body: Callable[[Connection], _T]) -> _T:
        """Run ``body`` in a write transaction (database failures reported as ``what``).

        What ``body`` asks to keep in memory (:meth:`_keep`, :meth:`_keep_handles`)
        is taken over only once the transaction has committed.
        """
        with self._lock:
            self._pending = None
            self._pending_handles = {}
            try:
                with db_errors(self.url, what), write_txn(self.engine) as conn:
                    out = body(conn)
            except BaseException:
                self._pending = None
                self._pending_handles = {}
                raise
            new = self._pending_handles
            if new:
                self._handles.update(new)
                self._max_player_pk = max(self._max_player_pk, max(new.values()))
            if self._pending is not None:
                self._cache = self._pending if self.use_cache else None
            self._pending = None
            self._pending_handles = {}
            return out

    def _keep(self, cache: _Cache) -> None:
        """Keep the Rater of the state being written, once it is committed."""
        self._pending = cache

    def _ingest_locked(self, conn: Connection, item: _Item,
                       recompute_from: bool) -> IngestResult:
        m = self._read_meta(conn)
        self._hook("locked")
        c = S.contests
        contest = item.contest
        row = conn.execute(
            select(c.c.pk, c.c.seq, c.c.name, c.c.url, c.c.time_seconds, c.c.weight,
                   c.c.perf_ceiling, c.c.players, c.c.content_hash).where(c.c.cid == item.cid)
        ).first()
        if row is not None:
            if row.content_hash == item.chash:
                return IngestResult("duplicate", item.cid, int(row.seq), int(row.players), 0, 0,
                                    (), contest.name)
            raise StoreError(self._describe_conflict(conn, row, contest, item.cid))
        head = self._head(conn)
        if head.latest_time is None or contest.time_seconds >= head.latest_time:
            return self._append_locked(conn, m, [item], head)[0]
        pos = int(conn.execute(
            select(func.count()).select_from(c).where(c.c.time_seconds <= contest.time_seconds)
        ).scalar_one())
        if not recompute_from:
            raise StoreError(
                f"contest {contest.label!r} (id {item.cid!r}, {fmt_time(contest.time_seconds)}) "
                f"is older than the latest applied contest {head.latest_name!r} (id "
                f"{head.latest_cid!r}, {fmt_time(head.latest_time)}); ingest it with "
                f"--recompute-from (recompute_from=True) to insert it in time order and "
                f"re-rate the {head.count - pos} later contest(s)"
            )
        return self._recompute_locked(conn, m, item, pos, head)

    def _ingest_many_locked(self, conn: Connection, items: list[_Item]) -> list[IngestResult]:
        m = self._read_meta(conn)
        self._hook("locked")
        c = S.contests
        stored: dict[str, Any] = {}
        for part in chunks(list(dict.fromkeys(it.cid for it in items))):
            for r in conn.execute(
                select(c.c.pk, c.c.cid, c.c.seq, c.c.name, c.c.url, c.c.time_seconds,
                       c.c.weight, c.c.perf_ceiling, c.c.players, c.c.content_hash)
                .where(c.c.cid.in_(list(part)))
            ).all():
                stored[r.cid] = r
        head = self._head(conn)
        # per contest: its result, or the batch position of its first copy (an int), or
        # None for a new contest (its result comes from _append_locked)
        results: list[IngestResult | int | None] = []
        first: dict[str, int] = {}
        new: list[_Item] = []
        prev: _Item | None = None
        for k, it in enumerate(items):
            cont = it.contest
            row = stored.get(it.cid)
            if row is not None:
                if row.content_hash != it.chash:
                    raise StoreError(it.where + self._describe_conflict(conn, row, cont, it.cid))
                results.append(IngestResult("duplicate", it.cid, int(row.seq), int(row.players),
                                            0, 0, (), cont.name))
                continue
            j = first.get(it.cid)
            if j is not None:
                if items[j].chash != it.chash:
                    raise StoreError(
                        f"{it.where}contest id {it.cid!r} is also the id of contest #{j} "
                        f"{items[j].contest.label!r} of the batch, with different content; "
                        "give one of them another id or leave it out")
                results.append(j)
                continue
            t = cont.time_seconds
            if prev is not None and t < prev.contest.time_seconds:
                raise StoreError(
                    f"{it.where}contest {cont.label!r} (id {it.cid!r}, {fmt_time(t)}) is older "
                    f"than the contest before it in the batch, {prev.contest.label!r} "
                    f"({fmt_time(prev.contest.time_seconds)}); sort the batch by time")
            if prev is None and head.latest_time is not None and t < head.latest_time:
                raise StoreError(
                    f"{it.where}contest {cont.label!r} (id {it.cid!r}, {fmt_time(t)}) is older "
                    f"than the latest applied contest {head.latest_name!r} (id "
                    f"{head.latest_cid!r}, {fmt_time(head.latest_time)}); a batch only "
                    "appends: ingest it alone with --recompute-from (recompute_from=True)")
            first[it.cid] = k
            new.append(it)
            prev = it
            results.append(None)
        applied = self._append_locked(conn, m, new, head) if new else []
        by_pos = dict(zip(first.values(), applied, strict=True))
        out: list[IngestResult] = []
        for k, res in enumerate(results):
            if isinstance(res, IngestResult):
                out.append(res)
            elif res is None:
                out.append(by_pos[k])
            else:  # a repeat of contest #res of the batch
                a = by_pos[res]
                out.append(IngestResult("duplicate", a.contest_id, a.index, a.players, 0, 0,
                                        (), items[k].contest.name))
        return out

    def _append_locked(self, conn: Connection, m: Meta, items: list[_Item],
                       head: _Head) -> list[IngestResult]:
        """Rate ``items`` after the stored contests and write them."""
        self._refresh_handles(conn, m)
        rater = self._rater_at(conn, m, head.count)
        contests = [it.contest for it in items]
        run = self._rate(rater, contests, items)
        self._hook("rated")
        new_handles: dict[str, int] = {}
        pks = [self._player_pks(cont.handles, new_handles) for cont in contests]
        self._insert_new_players(conn, rater, new_handles)
        now = int(time.time())
        cpks = list(range(head.next_pk, head.next_pk + len(items)))
        insert_rows(conn, S.contests, _CONTEST_COLS, [
            self._contest_row(cpk, it, head.count + k, rep.new_players, not rep.skipped, now)
            for k, (cpk, it, rep) in enumerate(zip(cpks, items, run.reports, strict=True))
        ])
        self._insert_standings(conn, cpks, contests, pks)
        self._hook("standings")
        self._insert_events(conn, run, range(len(items)), cpks, pks)
        self._hook("events")
        self._update_players(conn, rater, run.player, new_handles)
        self._hook("players")
        set_meta(conn, "revision", str(m.revision + 1))
        new_head = head.count + len(items)
        self._maybe_snapshot(conn, rater, new_head, m.epoch)
        self._hook("commit")
        self._keep_handles(new_handles)
        self._keep(_Cache(rater, new_head, m.store_id, m.epoch))
        return [
            IngestResult("applied", it.cid, head.count + k, len(it.contest), rep.new_players, 0,
                         rep.warnings, it.contest.name)
            for k, (it, rep) in enumerate(zip(items, run.reports, strict=True))
        ]

    def _recompute_locked(self, conn: Connection, m: Meta, item: _Item, pos: int,
                          head: _Head) -> IngestResult:
        """Insert ``item`` at chronological position ``pos`` and re-rate the later contests."""
        c = S.contests
        self._refresh_handles(conn, m)
        rater = self._rater_at(conn, m, pos)
        later = conn.execute(
            select(c.c.pk, c.c.cid, c.c.seq, c.c.name, c.c.url, c.c.time_seconds, c.c.weight,
                   c.c.perf_ceiling)
            .where(c.c.seq >= pos).order_by(c.c.seq)
        ).all()
        old = [self._stored_contest(conn, row) for row in later]
        conn.execute(delete(S.events).where(
            S.events.c.contest_pk.in_(select(c.c.pk).where(c.c.seq >= pos))
        ))
        conn.execute(update(c).where(c.c.seq >= pos).values(seq=c.c.seq + 1))
        conn.execute(delete(S.snapshots).where(S.snapshots.c.head_count > pos))
        self._hook("recompute-cleared")

        contests = [item.contest, *old]
        run = self._rate(rater, contests, [item])
        self._hook("rated")
        new_handles: dict[str, int] = {}
        pks = [self._player_pks(item.contest.handles, new_handles)]
        pks += [self._player_pks(o.handles, {}) for o in old]
        self._insert_new_players(conn, rater, new_handles)
        rep = run.reports[0]
        cpk = head.next_pk
        insert_rows(conn, S.contests, _CONTEST_COLS, [
            self._contest_row(cpk, item, pos, rep.new_players, not rep.skipped, int(time.time()))
        ])
        self._insert_standings(conn, [cpk], [item.contest], pks[:1])
        self._hook("standings")
        cpks = [cpk, *(int(row.pk) for row in later)]
        self._insert_events(conn, run, [0], cpks, pks)
        self._hook("events")
        for k, row in enumerate(later, 1):
            conn.execute(update(c).where(c.c.pk == row.pk)
                         .values(new_players=run.reports[k].new_players))
            self._insert_events(conn, run, [k], cpks, pks)
            self._hook("recompute-contest")
        self._update_players(conn, rater, run.player, new_handles)
        self._hook("players")
        epoch = m.epoch + 1
        set_meta(conn, "revision", str(m.revision + 1))
        set_meta(conn, "epoch", str(epoch))
        self._maybe_snapshot(conn, rater, head.count + 1, epoch)
        self._hook("commit")
        self._keep_handles(new_handles)
        self._keep(_Cache(rater, head.count + 1, m.store_id, epoch))
        return IngestResult("recomputed", item.cid, pos, len(item.contest), rep.new_players,
                            len(later), rep.warnings, item.contest.name)

    # ------------------------------------------------------------------ rating
    @staticmethod
    def _rate(rater: Rater, contests: list[Contest], items: Sequence[_Item]) -> RatedRun:
        """:func:`rate_run`, with a failure of the rating system naming the batch."""
        try:
            return rate_run(rater, contests)
        except StoreError:
            raise
        except Exception as exc:
            if len(items) == 1 and not items[0].where:
                raise
            labels = ", ".join(f"{it.contest.label!r}" for it in items[:3])
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            raise type(exc)(f"rating the batch of contests {labels}{more}: {exc}") from exc

    def _rater_at(self, conn: Connection, m: Meta, pos: int) -> Rater:
        """A Rater that has rated exactly the first ``pos`` stored contests."""
        c = self._cache
        self._cache = None  # the Rater is about to change; re-cached only after a commit
        if c is not None and c.store_id == m.store_id and c.epoch == m.epoch and c.count <= pos:
            rater, start = c.rater, c.count
        else:
            rater, start = self._rater_from_snapshot(conn, pos)
        replay(rater, list(self._stored_contests(conn, start, pos)))
        if len(rater.contests) != pos:  # pragma: no cover - defensive
            raise StoreError(f"internal error: rater at {len(rater.contests)} contests, "
                             f"expected {pos}")
        return rater

    def _rater_from_snapshot(self, conn: Connection, pos: int) -> tuple[Rater, int]:
        sn = S.snapshots
        row = conn.execute(
            select(sn.c.head_count, sn.c.data).where(sn.c.head_count <= pos)
            .order_by(sn.c.head_count.desc()).limit(1)
        ).first()
        if row is not None:
            try:
                rater = rater_from_bytes(bytes(row.data),
                                         where=f"snapshot at {row.head_count} contests")
                if (rater.system_name == self.system_name
                        and same_params(json_params(rater.system.params()), self.params)
                        and len(rater.contests) == row.head_count):
                    return rater, int(row.head_count)
                log.warning("snapshot at %d contests does not match the store; replaying",
                               row.head_count)
            except CheckpointError as exc:
                log.warning("%s; replaying from the start", exc)
        return new_rater(self.system_name, self.params), 0

    # ------------------------------------------------------------------ reading inside a write
    @staticmethod
    def _head(conn: Connection) -> _Head:
        """The stored contests' extent (``seq`` is 0..n-1 in time order, so the latest
        contest is the one of the largest ``seq``; both lookups use an index)."""
        c = S.contests
        max_pk = select(func.coalesce(func.max(c.c.pk), -1)).scalar_subquery()
        row = conn.execute(
            select(c.c.seq, c.c.time_seconds, c.c.cid, c.c.name, max_pk)
            .order_by(c.c.seq.desc()).limit(1)
        ).first()
        if row is None:
            return _Head(0, 0, None, None, None)
        return _Head(int(row[0]) + 1, int(row[4]) + 1, int(row[1]), row[2], row[3])

    def _stored_contest(self, conn: Connection, row: Any) -> Contest:
        st, p = S.standings, S.players
        rows = conn.execute(
            select(p.c.handle, st.c.lo, st.c.hi)
            .join(p, p.c.pk == st.c.player_pk)
            .where(st.c.contest_pk == row.pk).order_by(st.c.pos)
        ).all()
        handles = [r[0] for r in rows]
        lo = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        hi = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
        return Contest.from_arrays(
            handles, lo, hi, name=row.name, time_seconds=int(row.time_seconds),
            weight=float(row.weight),
            perf_ceiling=None if row.perf_ceiling is None else float(row.perf_ceiling),
            url=row.url,
        )

    def _stored_contests(self, conn: Connection, start: int, stop: int) -> Iterator[Contest]:
        if start >= stop:
            return
        c = S.contests
        rows = conn.execute(
            select(c.c.pk, c.c.name, c.c.url, c.c.time_seconds, c.c.weight, c.c.perf_ceiling)
            .where(c.c.seq >= start, c.c.seq < stop).order_by(c.c.seq)
        ).all()
        for row in rows:
            yield self._stored_contest(conn, row)

    def _describe_conflict(self, conn: Connection, row: Any, contest: Contest, cid: str) -> str:
        diffs = []
        if row.name != contest.name:
            diffs.append(f"name {row.name!r} vs {contest.name!r}")
        if row.url != contest.url:
            diffs.append(f"url {row.url!r} vs {contest.url!r}")
        if int(row.time_seconds) != contest.time_seconds:
            diffs.append(f"time_seconds {row.time_seconds} vs {contest.time_seconds}")
        if float(row.weight) != contest.weight:
            diffs.append(f"weight {row.weight} vs {contest.weight}")
        if row.perf_ceiling != contest.perf_ceiling:
            diffs.append(f"perf_ceiling {row.perf_ceiling} vs {contest.perf_ceiling}")
        stored = self._stored_contest(conn, row).standings
        given = contest.standings
        if len(stored) != len(given):
            diffs.append(f"standings of {len(stored)} players stored, {len(given)} given")
        else:
            for i, (a, b) in enumerate(zip(stored, given, strict=True)):
                if a != b:
                    diffs.append(f"standings differ first at position {i}: stored {a!r}, "
                                 f"given {b!r}")
                    break
        what = "; ".join(diffs) or "content differs"
        return (
            f"contest id {cid!r} is already stored (#{row.seq} {row.name!r}) with different "
            f"content ({what} [stored vs given]); a stored contest is never replaced: give this "
            "one another id or leave it out"
        )

    # ------------------------------------------------------------------ players
    def _refresh_handles(self, conn: Connection, m: Meta) -> None:
        if self._handles_store != m.store_id:
            self._handles = {}
            self._max_player_pk = -1
            self._handles_store = m.store_id
        p = S.players
        rows = conn.execute(
            select(p.c.pk, p.c.handle).where(p.c.pk > self._max_player_pk)
        ).all()
        for pk, h in rows:
            self._handles[h] = pk
            if pk > self._max_player_pk:
                self._max_player_pk = pk

    def _player_pks(self, handles: Sequence[str], new_handles: dict[str, int]) -> list[int]:
        """Player keys of ``handles``; unknown handles get new keys (added to ``new_handles``)."""
        out = []
        known = self._handles
        nxt = self._max_player_pk + 1 + len(new_handles)
        for h in handles:
            pk = known.get(h)
            if pk is None:
                pk = new_handles.get(h)
                if pk is None:
                    pk = nxt
                    nxt += 1
                    new_handles[h] = pk
            out.append(pk)
        return out

    def _keep_handles(self, new_handles: dict[str, int]) -> None:
        """Keep the keys of the players being inserted, once they are committed."""
        self._pending_handles = new_handles

    # ------------------------------------------------------------------ rows
    @staticmethod
    def _contest_row(pk: int, it: _Item, seq: int, new_players: int, rated: bool,
                     now: int) -> tuple[Any, ...]:
        c = it.contest
        return (pk, it.cid, seq, c.name, c.url, c.time_seconds, c.weight, c.perf_ceiling,
                len(c), new_players, rated, it.chash, now)

    @staticmethod
    def _insert_standings(conn: Connection, cpks: Sequence[int], contests: Sequence[Contest],
                          pks: Sequence[list[int]]) -> None:
        rows: list[tuple[int, int, int, int, int]] = []
        for cpk, cont, ppk in zip(cpks, contests, pks, strict=True):
            rows.extend(zip([cpk] * len(ppk), range(len(ppk)), ppk, cont.lo.tolist(),
                            cont.hi.tolist(), strict=True))
        insert_rows(conn, S.standings, ("contest_pk", "pos", "player_pk", "lo", "hi"), rows)

    @staticmethod
    def _insert_events(conn: Connection, run: RatedRun, which: Sequence[int],
                       cpks: Sequence[int], pks: Sequence[list[int]]) -> None:
        """The events of contests ``which`` (positions in the run)."""
        rows: list[tuple[Any, ...]] = []
        for k in which:
            a, b = int(run.offsets[k]), int(run.offsets[k + 1])
            if a == b:
                continue
            rows.extend(zip([cpks[k]] * (b - a), pks[k], run.mu[a:b].tolist(),
                            run.sigma[a:b].tolist(), run.display[a:b].tolist(),
                            run.perf[a:b].tolist(), run.place[a:b].tolist(),
                            run.prev_display[a:b].tolist(), run.change[a:b].tolist(),
                            run.debut[a:b].tolist(), strict=True))
        insert_rows(conn, S.events, _EVENT_COLS, rows)

    def _insert_new_players(self, conn: Connection, rater: Rater,
                            new_handles: dict[str, int]) -> None:
        """Insert the players first seen in this write, with their current ratings (NULL
        for those only seen in contests in which everybody tied)."""
        if not new_handles:
            return
        handles = list(new_handles)
        idx = rated_indices(rater, handles)
        rated = idx >= 0
        vals = iter(player_values(rater, idx[rated]))
        empty = (None, None, None, 0, None, None, None)
        rows = [(new_handles[h], h, h.casefold(), *(next(vals) if r else empty))
                for h, r in zip(handles, rated.tolist(), strict=True)]
        insert_rows(conn, S.players, ("pk", "handle", "handle_key", *PLAYER_COLS), rows)

    def _update_players(self, conn: Connection, rater: Rater, touched: np.ndarray,
                        new_handles: dict[str, int]) -> None:
        """Write the Rater's current values of the players ``touched`` (Rater indices,
        repeats allowed) that were stored before this write."""
        if not len(touched):
            return
        known = self._handles
        idx: list[int] = []
        pks: list[int] = []
        for i in np.unique(touched).tolist():
            h = handle_of(rater, i)
            if h not in new_handles:
                idx.append(i)
                pks.append(known[h])
        if not idx:
            return
        vals = player_values(rater, np.asarray(idx, dtype=np.int64))
        update_rows(conn, S.players, "pk", PLAYER_COLS,
                    [(pk, *v) for pk, v in zip(pks, vals, strict=True)])

    # ------------------------------------------------------------------ snapshots
    def _maybe_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        c, sn = S.contests, S.snapshots
        base = select(func.coalesce(func.max(sn.c.head_count), 0)).scalar_subquery()
        since, events = conn.execute(
            select(func.count(),
                   func.coalesce(func.sum(c.c.players).filter(c.c.rated.is_(True)), 0))
            .where(c.c.seq >= base)
        ).one()
        if int(since) <= 0:
            return
        if int(since) >= self.snapshot_every or int(events) >= self.snapshot_events:
            self._write_snapshot(conn, rater, head, epoch)

    def _write_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        data = rater_to_bytes(rater)
        sn = S.snapshots
        pk = int(conn.execute(select(func.coalesce(func.max(sn.c.pk), -1))).scalar_one()) + 1
        conn.execute(sn.insert().values(pk=pk, head_count=head, epoch=epoch,
                                        created_at=int(time.time()), size=len(data), data=data))
        keep = [r[0] for r in conn.execute(
            select(sn.c.pk).order_by(sn.c.head_count.desc(), sn.c.pk.desc())
            .limit(self.keep_snapshots)
        ).all()]
        conn.execute(delete(sn).where(sn.c.pk.not_in(keep)))
        self._hook("snapshot")
