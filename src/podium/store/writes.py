"""Writing a store: ingestion, batches, recomputation and snapshots (the write service
of :class:`~podium.store.Store`).

Every write is one transaction (see :mod:`podium.store.engine`) holding the
store's write lock:

1. read ``meta`` (store id, epoch);
2. report a contest whose id is stored with the same content (SHA-256 of the
   contest) as ``"duplicate"``, refuse one whose content differs, refuse a contest
   older than the latest one unless ``recompute_from``;
3. get a Rater at the insertion point (:meth:`podium.store.raters.RaterCache.rater_at`):
   the in-process cache when it is still valid (same store, same epoch, not ahead),
   else the newest snapshot at or before the point; then replay the stored standings
   up to the point (replaying is deterministic: a split run is bit-identical to one
   run);
4. rate the new contests -- and, for ``recompute_from``, every later contest
   again -- with one ``Rater.extend`` call (:func:`podium.store.rating.rate_run`);
5. insert the contests, their standings and events, insert new players and
   update the others (one ``executemany`` or ``COPY`` per table, see
   :mod:`podium.store.bulk`); bump ``meta.revision`` (and ``meta.epoch`` after a
   recompute) and add the audit rows (:class:`podium.store.audit.AuditLog`);
6. write a new snapshot when ``snapshot_every`` contests or ``snapshot_events``
   player-rounds have been applied since the newest one (keeping the newest
   ``keep_snapshots``), then commit.

:meth:`Writes.ingest_many` does this once for a whole batch of contests, so
the fixed costs of a transaction (the lock, the metadata and duplicate lookups,
one statement per table, the snapshot check, the commit) are paid once per batch.

:meth:`Writes.run_write` is the frame of every write of a store context, corrections
(:mod:`podium.store.corrections`) included: it holds the context's write lock and hands
what the write asks to keep in memory -- the Rater of the new state
(:class:`~podium.store.raters.RaterCache`) and the keys of the new players
(:class:`~podium.store.rows.HandleCache`) -- to their owners once the transaction has
committed.  Any error rolls the transaction back and drops the in-process Rater, so the
database and the next ingestion are as if the contests had never been seen.  A process
killed at any point leaves the previous committed state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import islice
from typing import Any, TypeVar

from sqlalchemy import Connection, delete, func, select, update

import podium.store.schema as S
from podium.core.contest import Contest
from podium.errors import ContestError
from podium.rater import Rater
from podium.store.audit import AuditLog
from podium.store.bulk import execute, fetch, insert_rows, update_rows
from podium.store.checks import (
    check_case_insensitive,
    check_contest,
    check_contest_id,
    located,
    respell,
)
from podium.store.common import (
    Meta,
    StoreContext,
    chunks,
    content_hash,
    default_contest_id,
    fmt_time,
)
from podium.store.engine import db_errors, kept_write_txn
from podium.store.migrations import set_meta
from podium.store.models import IngestResult, StoreError
from podium.store.priors import PriorSource
from podium.store.queries import stored_spellings
from podium.store.raters import CachedRater, RaterCache, SinceSnapshot
from podium.store.rating import PLAYER_COLS, Priors, RatedRun, rate_run
from podium.store.rows import (
    CONTEST_COLS,
    NEW_PLAYER_COLS,
    HandleCache,
    Item,
    contest_row,
    describe_conflict,
    insert_events,
    insert_new_players,
    insert_standings,
    player_rows,
    stored_contest,
    update_players,
)
from podium.store.smoothing import SmoothCompanion

__all__ = ["Writes", "check_item", "first_spellings", "head_of", "check_current_season"]

_T = TypeVar("_T")

_INT64 = 2**63


# The statements every write runs, written once per ladder and run with the driver's
# cursor (podium.store.bulk.fetch: a few microseconds, against SQLAlchemy's hundred).
@dataclass(frozen=True)
class _StoredRow:
    """A stored contest, as the duplicate check reads it."""

    pk: int
    seq: int
    name: str
    url: str | None
    time_seconds: int
    weight: float
    perf_ceiling: float | None
    players: int
    content_hash: str


@cache
def _sql(t: S.LadderTables) -> dict[str, str]:
    c, m = t.contests.name, t.meta.name
    return {
        "stored": ('SELECT "pk", "seq", "name", "url", "time_seconds", "weight", '
                   f'"perf_ceiling", "players", "content_hash" FROM "{c}" WHERE "cid" = ?'),
        "head": ('SELECT "seq", "time_seconds", "cid", "name", '
                 f'(SELECT coalesce(max("pk"), -1) FROM "{c}") FROM "{c}" '
                 'ORDER BY "seq" DESC LIMIT 1'),
        "revision": f'UPDATE "{m}" SET "value" = ? WHERE "key" = \'revision\'',
    }


def stored_row(conn: Connection, t: S.LadderTables, cid: str) -> _StoredRow | None:
    """The stored contest ``cid`` of the ladder of ``t`` (``None``: none)."""
    rows = fetch(conn, _sql(t)["stored"], (cid,))
    return _StoredRow(*rows[0]) if rows else None


@dataclass(frozen=True)
class _Head:
    """The stored contests' extent: their number, the next free key, the latest one."""

    count: int
    next_pk: int
    latest_time: int | None
    latest_cid: str | None
    latest_name: str | None


def check_item(ctx: StoreContext, contest: Contest, contest_id: str | None, where: str,
               allow_future: bool | None = None) -> Item:
    """``contest`` checked for a write of store context ``ctx`` (the rules of
    :func:`~podium.store.checks.check_contest`, the id, a team round for a system that
    rates them), with its id and content hash; ``where`` prefixes the messages.

    Raises
    ------
    StoreError
        When it has no usable id or its time does not fit a 64-bit integer.
    ContestError
        When it breaks an input rule (naming the contest, the field or player, and the
        rule).
    """
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
    opts = ctx.options
    try:
        contest = check_contest(
            contest, allow_future=opts.allow_future if allow_future is None else allow_future,
            future_margin_s=opts.future_margin_s)
        if ctx.case_insensitive_handles:
            check_case_insensitive(contest)
    except ContestError as exc:
        raise located(exc, where) from None
    problem = check_contest_id(cid)
    if problem is not None:
        shown = cid if len(cid) <= 60 else cid[:60] + "..."
        raise located(ContestError(f"contest id {shown!r}: {problem}",
                                   contest=contest.label), where)
    if contest.team_round and ctx.system.team_rule is None:
        msg = (f"the store's rating system {ctx.system_name!r} does not rate team rounds "
               "(a team has more than one member or a member weight is not 1)")
        if where:
            raise ContestError(f"{where}{msg}")
        raise ContestError(msg, contest=contest.label)
    return Item(contest, cid, content_hash(contest), where)


def first_spellings(conn: Connection, t: S.LadderTables, items: list[Item]) -> list[Item]:
    """``items`` with each handle spelt as the ladder first saw it (a case-insensitive
    store: handles with the same :func:`~podium.core.guards.handle_key` are one
    player); a handle new to the ladder keeps the spelling of its first contest."""
    spelling = stored_spellings(conn, t, {h for it in items for h in it.contest.handles})
    out: list[Item] = []
    for it, c in zip(items, respell([it.contest for it in items], spelling), strict=True):
        out.append(it if c is it.contest else Item(c, it.cid, content_hash(c), it.where))
    return out


def head_of(conn: Connection, t: S.LadderTables) -> _Head:
    """The stored contests' extent (``seq`` is 0..n-1 in time order, so the latest
    contest is the one of the largest ``seq``; both lookups use an index)."""
    rows = fetch(conn, _sql(t)["head"])
    if not rows:
        return _Head(0, 0, None, None, None)
    row = rows[0]
    return _Head(int(row[0]) + 1, int(row[4]) + 1, int(row[1]), row[2], row[3])


def check_current_season(conn: Connection, t: S.LadderTables, pos: int, what: str) -> None:
    """Refuse (:class:`StoreError` starting with ``what``) a write that would re-rate the
    ladder's history from position ``pos`` when a season boundary lies at or after it:
    a finished season is closed, so that its final leaderboard never changes."""
    c, sn = t.contests, t.seasons
    row = conn.execute(
        select(c.c.seq, c.c.cid, c.c.time_seconds, sn.c.number)
        .select_from(c.join(sn, sn.c.contest_pk == c.c.pk))
        .order_by(c.c.seq.desc()).limit(1)).first()
    if row is not None and pos <= int(row.seq):
        raise StoreError(
            f"{what}: it would change season {int(row.number) - 1}, which ended when "
            f"season {int(row.number)} began ({row.cid!r}, {fmt_time(int(row.time_seconds))}"
            "); a finished season is closed: only contests of the current season can be "
            "corrected or inserted in the past")


class Writes:
    """Ingestion and snapshots of one store context; see the module notes.

    Parameters
    ----------
    ctx:
        The store context.
    raters:
        The owner of the Rater cache and the snapshots.
    handles:
        The owner of the player keys.
    audit:
        The audit log each write adds its rows to.
    """

    def __init__(self, ctx: StoreContext, raters: RaterCache, handles: HandleCache,
                 audit: AuditLog) -> None:
        self.ctx = ctx
        self.raters = raters
        self.handles = handles
        self.audit = audit
        self.priors = PriorSource(ctx)
        #: The ladder's smoothed companion (issue 29), updated by every write before it
        #: commits (nothing for a ladder without one).
        self.smoothing = SmoothCompanion(ctx)

    def run_write(self, what: str, body: Callable[[Connection], _T]) -> _T:
        """Run ``body`` in a write transaction holding the context's write lock (database
        failures reported as ``what``).

        What ``body`` stages (:meth:`RaterCache.stage
        <podium.store.raters.RaterCache.stage>`, :meth:`HandleCache.stage
        <podium.store.rows.HandleCache.stage>`) is taken over only once the transaction
        has committed.
        """
        ctx = self.ctx
        with ctx.write_lock:
            self.raters.begin()
            self.handles.begin()
            try:
                with db_errors(ctx.url, what), kept_write_txn(ctx.engine, ctx.lock_key) as conn:
                    out = body(conn)
            except BaseException:
                self.raters.discard()
                self.handles.discard()
                raise
            self.handles.commit()
            self.raters.commit()
            return out

    def bump_revision(self, conn: Connection, m: Meta) -> None:
        """Set the ladder's revision to ``m.revision + 1`` (every write does, once)."""
        execute(conn, _sql(self.ctx.tables)["revision"], (str(m.revision + 1),))

    # ------------------------------------------------------------------ public
    def ingest(self, contest: Contest, *, contest_id: str | None = None,
               recompute_from: bool = False, allow_future: bool | None = None) -> IngestResult:
        """Rate ``contest`` and store it, all in one transaction (all of it or nothing).

        The contest is first checked and its handles normalised
        (:func:`podium.store.checks.check_contest`: handle rules, time, weight,
        ceiling, name and url); in a store with case-insensitive handles each handle
        is then written with the spelling the store first saw.

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
        allow_future:
            Accept a contest dated more than the store's ``future_margin_s`` after the
            clock (default: the store's ``allow_future`` option).

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
        ContestError
            When the contest breaks a rule of :func:`~podium.store.checks.check_contest`
            (naming the contest, the field or player, and the rule).  Nothing is changed.
        """
        item = check_item(self.ctx, contest, contest_id, "", allow_future)
        return self.run_write(f"cannot ingest contest {contest.label!r}",
                              lambda conn: self._ingest_locked(conn, item, recompute_from))

    def ingest_many(self, contests: Sequence[Contest], *,
                    contest_ids: Sequence[str | None] | None = None,
                    allow_future: bool | None = None) -> list[IngestResult]:
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
        allow_future:
            As for :meth:`ingest`.

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
        ContestError
            Naming the contest (``contest #k 'label' of the batch: ...``) when it breaks
            a rule of :func:`~podium.store.checks.check_contest`.  Nothing is changed.
        """
        contests = list(contests)
        if contest_ids is not None and len(contest_ids) != len(contests):
            raise StoreError(f"{len(contest_ids)} contest ids given for {len(contests)} "
                             "contests")
        items = [
            check_item(self.ctx, c, None if contest_ids is None else contest_ids[k],
                       f"contest #{k} {getattr(c, 'label', '')!r} of the batch: ", allow_future)
            for k, c in enumerate(contests)
        ]
        if not items:
            return []
        return self.run_write(f"cannot ingest a batch of {len(items)} contests",
                              lambda conn: self._ingest_many_locked(conn, items))

    def snapshot(self) -> bool:
        """Write a snapshot of the current state unless the newest one is already current.

        Returns True when one was written.  (:meth:`ingest` takes snapshots on its
        own; call this after a batch so that the next process starts at once.)
        """
        def write(conn: Connection) -> bool:
            m = self.ctx.read_meta(conn)
            t = self.ctx.tables
            head = head_of(conn, t).count
            newest = conn.execute(select(func.max(t.snapshots.c.head_count))).scalar_one()
            if newest is not None and int(newest) == head:
                return False
            rater = self.raters.rater_at(conn, m, head)
            self.raters.write_snapshot(conn, rater, head, m.epoch)
            self.raters.stage(CachedRater(rater, head, m.store_id, m.epoch))
            return True

        return self.run_write("cannot write a snapshot", write)

    def _ingest_locked(self, conn: Connection, item: Item,
                       recompute_from: bool) -> IngestResult:
        m = self.ctx.read_meta(conn)
        self.ctx.hook("locked")
        t = self.ctx.tables
        if self.ctx.case_insensitive_handles:
            item = first_spellings(conn, t, [item])[0]
        c = t.contests
        contest = item.contest
        row = stored_row(conn, t, item.cid)
        if row is not None:
            if row.content_hash == item.chash:
                return IngestResult("duplicate", item.cid, int(row.seq), int(row.players), 0, 0,
                                    (), contest.name)
            raise StoreError(describe_conflict(conn, t, row, contest, item.cid))
        head = head_of(conn, t)
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
        check_current_season(conn, t, pos, f"contest {contest.label!r} (id {item.cid!r}) "
                             "cannot be inserted with recompute_from")
        return self._recompute_locked(conn, m, item, pos, head)

    def _ingest_many_locked(self, conn: Connection, items: list[Item]) -> list[IngestResult]:
        m = self.ctx.read_meta(conn)
        self.ctx.hook("locked")
        t = self.ctx.tables
        if self.ctx.case_insensitive_handles:
            items = first_spellings(conn, t, items)
        c = t.contests
        stored: dict[str, Any] = {}
        for part in chunks(list(dict.fromkeys(it.cid for it in items))):
            for r in conn.execute(
                select(c.c.pk, c.c.cid, c.c.seq, c.c.name, c.c.url, c.c.time_seconds,
                       c.c.weight, c.c.perf_ceiling, c.c.players, c.c.content_hash)
                .where(c.c.cid.in_(list(part)))
            ).all():
                stored[r.cid] = r
        head = head_of(conn, t)
        # per contest: its result, or the batch position of its first copy (an int), or
        # None for a new contest (its result comes from _append_locked)
        results: list[IngestResult | int | None] = []
        first: dict[str, int] = {}
        new: list[Item] = []
        prev: Item | None = None
        for k, it in enumerate(items):
            cont = it.contest
            row = stored.get(it.cid)
            if row is not None:
                if row.content_hash != it.chash:
                    raise StoreError(it.where + describe_conflict(conn, t, row, cont, it.cid))
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
            when = cont.time_seconds
            if prev is not None and when < prev.contest.time_seconds:
                raise StoreError(
                    f"{it.where}contest {cont.label!r} (id {it.cid!r}, {fmt_time(when)}) is older "
                    f"than the contest before it in the batch, {prev.contest.label!r} "
                    f"({fmt_time(prev.contest.time_seconds)}); sort the batch by time")
            if prev is None and head.latest_time is not None and when < head.latest_time:
                raise StoreError(
                    f"{it.where}contest {cont.label!r} (id {it.cid!r}, {fmt_time(when)}) is older "
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

    def _append_locked(self, conn: Connection, m: Meta, items: list[Item],
                       head: _Head) -> list[IngestResult]:
        """Rate ``items`` after the stored contests and write them.

        The snapshot policy is applied contest by contest, as if they were ingested one
        at a time: the items are rated and written in segments that end where a
        snapshot is due (one ``Rater.extend`` per segment), so that a batch leaves the
        same snapshots as single ingestions.
        """
        t = self.ctx.tables
        self.handles.refresh(conn, m)
        rater = self.raters.rater_at(conn, m, head.count)
        counts = self.raters.since_snapshot(conn, m, head.count)
        since, events, newest = counts.since, counts.events, counts.snapshot
        priors = self.priors.take(conn, m, rater, [it.contest for it in items])
        all_new: dict[str, int] = {}
        out: list[IngestResult] = []
        now = int(time.time())
        start = 0
        for stop, snap in self._segments(items, since, events, rater):
            seg = items[start:stop]
            contests = [it.contest for it in seg]
            run = self._rate(rater, contests, seg, priors)
            self.ctx.hook("rated")
            n_known = len(all_new)
            pks = [self.handles.keys_of(cont.handles, all_new) for cont in contests]
            seg_new = dict(islice(all_new.items(), n_known, None))
            new_rows, update = player_rows(rater, run, pks, seg_new)
            insert_rows(conn, t.players, NEW_PLAYER_COLS, new_rows)
            cpks = list(range(head.next_pk + start, head.next_pk + stop))
            seqs = range(head.count + start, head.count + stop)
            insert_rows(conn, t.contests, CONTEST_COLS, [
                contest_row(cpk, it, seq, rep.new_players, not rep.skipped, now)
                for cpk, it, seq, rep in zip(cpks, seg, seqs, run.reports, strict=True)
            ])
            insert_standings(conn, t, cpks, contests, pks)
            self.ctx.hook("standings")
            insert_events(conn, t, run, range(len(seg)), cpks, pks)
            self.ctx.hook("events")
            update_rows(conn, t.players, "pk", PLAYER_COLS, update)
            self.ctx.hook("players")
            # the policy's counts after the segment, as since_snapshot reads them
            since += len(seg)
            events += sum(len(it.contest) for it, rep in zip(seg, run.reports, strict=True)
                          if not rep.skipped)
            if snap:
                self.raters.write_snapshot(conn, rater, head.count + stop, m.epoch)
                since, events, newest = 0, 0, head.count + stop
            out.extend(
                IngestResult("applied", it.cid, seq, len(it.contest), rep.new_players, 0,
                             rep.warnings, it.contest.name)
                for it, seq, rep in zip(seg, seqs, run.reports, strict=True))
            start = stop
        if priors:
            self.priors.record(conn, priors, self.handles, all_new)
        self.bump_revision(conn, m)
        self.audit.record_many(conn, "ingest", [
            (it.cid, it.chash, {"index": r.index, "players": r.players})
            for it, r in zip(items, out, strict=True)], revision=m.revision + 1)
        self.smoothing.update(conn, meta=m)  # issue 29: the smoothed companion
        self.ctx.hook("commit")
        self.handles.stage(all_new)
        self.raters.stage(CachedRater(rater, head.count + len(items), m.store_id, m.epoch))
        self.raters.stage_since(SinceSnapshot(m.store_id, m.epoch, head.count + len(items),
                                              newest, since, events))
        return out

    def _segments(self, items: list[Item], since: int, events: int,
                  rater: Rater) -> list[tuple[int, bool]]:
        """``(stop, snapshot)`` of each segment of ``items``: a snapshot is due after
        contest ``stop - 1`` when the policy asks for one then
        (:meth:`~podium.store.common.StoreOptions.snapshot_due`), ``since`` and ``events``
        being the contests and player-rounds since the newest snapshot before ``items``
        and the rating state growing by each rated contest's newcomers."""
        opts = self.ctx.options
        skips = self.ctx.system.skips_round
        known = rater.players.index
        n0 = rater.players.n
        fresh: set[str] = set()
        counted = 0  # the items whose newcomers are in ``fresh``
        rated = [not skips(it.contest) for it in items]
        out: list[tuple[int, bool]] = []
        for k, it in enumerate(items):
            since += 1
            if rated[k]:
                events += len(it.contest)
            # the state then holds n0 + len(fresh) players, which only matters when
            # events >= n0 (fewer player-rounds than players: no snapshot is due by
            # that rule); only then are the items' handles looked up
            players = n0
            if events >= n0:
                for j in range(counted, k + 1):
                    if rated[j]:
                        fresh.update(h for h in items[j].contest.handles if h not in known)
                counted = k + 1
                players += len(fresh)
            if opts.snapshot_due(since, events, players):
                out.append((k + 1, True))
                since = events = 0
        if not out or out[-1][0] < len(items):
            out.append((len(items), False))
        return out

    def _recompute_locked(self, conn: Connection, m: Meta, item: Item, pos: int,
                          head: _Head) -> IngestResult:
        """Insert ``item`` at chronological position ``pos`` and re-rate the later contests
        (all of the current season: :func:`~podium.store.seasons.check_current_season`)."""
        t = self.ctx.tables
        c = t.contests
        self.handles.refresh(conn, m)
        rater = self.raters.rater_at(conn, m, pos)
        later = conn.execute(
            select(c.c.pk, c.c.cid, c.c.seq, c.c.name, c.c.url, c.c.time_seconds, c.c.weight,
                   c.c.perf_ceiling)
            .where(c.c.seq >= pos).order_by(c.c.seq)
        ).all()
        old = [stored_contest(conn, t, row) for row in later]
        conn.execute(delete(t.events).where(
            t.events.c.contest_pk.in_(select(c.c.pk).where(c.c.seq >= pos))
        ))
        conn.execute(update(c).where(c.c.seq >= pos).values(seq=c.c.seq + 1))
        conn.execute(delete(t.snapshots).where(t.snapshots.c.head_count > pos))
        self.ctx.hook("recompute-cleared")

        contests = [item.contest, *old]
        priors = self.priors.take(conn, m, rater, contests, stored=self.raters.priors(conn))
        run = self._rate(rater, contests, [item], priors)
        self.ctx.hook("rated")
        new_handles: dict[str, int] = {}
        pks = [self.handles.keys_of(item.contest.handles, new_handles)]
        pks += [self.handles.keys_of(o.handles, {}) for o in old]
        insert_new_players(conn, t, rater, new_handles)
        rep = run.reports[0]
        cpk = head.next_pk
        insert_rows(conn, t.contests, CONTEST_COLS, [
            contest_row(cpk, item, pos, rep.new_players, not rep.skipped, int(time.time()))
        ])
        insert_standings(conn, t, [cpk], [item.contest], pks[:1])
        self.ctx.hook("standings")
        cpks = [cpk, *(int(row.pk) for row in later)]
        insert_events(conn, t, run, [0], cpks, pks)
        self.ctx.hook("events")
        for k, row in enumerate(later, 1):
            conn.execute(update(c).where(c.c.pk == row.pk)
                         .values(new_players=run.reports[k].new_players))
            insert_events(conn, t, run, [k], cpks, pks)
            self.ctx.hook("recompute-contest")
        update_players(conn, t, rater, run.player, self.handles, new_handles)
        if priors:
            self.priors.record(conn, priors, self.handles, new_handles)
        self.ctx.hook("players")
        epoch = m.epoch + 1
        set_meta(conn, "revision", str(m.revision + 1), t.meta)
        set_meta(conn, "epoch", str(epoch), t.meta)
        self.audit.record(conn, "recompute", revision=m.revision + 1, contest_id=item.cid,
                           content_hash=item.chash,
                           detail={"index": pos, "players": len(item.contest),
                                   "rerated": len(later)})
        self.raters.maybe_snapshot(conn, rater, head.count + 1, epoch)
        self.smoothing.update(conn, meta=m)  # issue 29: the smoothed companion
        self.ctx.hook("commit")
        self.handles.stage(new_handles)
        self.raters.stage(CachedRater(rater, head.count + 1, m.store_id, epoch))
        return IngestResult("recomputed", item.cid, pos, len(item.contest), rep.new_players,
                            len(later), rep.warnings, item.contest.name)

    # ------------------------------------------------------------------ rating
    @staticmethod
    def _rate(rater: Rater, contests: list[Contest], items: Sequence[Item],
              priors: Priors | None = None) -> RatedRun:
        """:func:`rate_run`; a failure of the rating system in a batch names the batch
        (for a single contest it is raised as it is)."""
        try:
            return rate_run(rater, contests, priors)
        except StoreError:
            raise
        except Exception as exc:
            if len(items) == 1 and not items[0].where:
                raise
            labels = ", ".join(f"{it.contest.label!r}" for it in items[:3])
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            raise StoreError(f"rating the batch of contests {labels}{more} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
