"""Correcting the past: deleting or replacing a stored contest (the corrections service
of :class:`~podium.store.Store`).

:meth:`Corrections.delete` removes a contest; :meth:`Corrections.replace` puts other
standings (or name, url, time, weight, ceiling) in its place under the same id.  Either
is **one** write transaction (:meth:`podium.store.writes.Writes.run_write`) holding the
store's write lock, in which every later contest is rated again:

1. read ``meta`` (store id, epoch) and the stored contest (an unknown id raises
   :class:`~podium.store.models.UnknownContestError`); a replacement whose content hash
   equals the stored one is reported ``"unchanged"`` and writes nothing;
2. the point: the contest's position, or for a replacement that changes the time the
   earlier of its old and new positions (a moved contest goes after the stored contests
   of the same or an earlier time, as ``recompute_from`` inserts one);
3. read every stored contest from the newest snapshot at or before the point to the
   end in one query per table (contests; standings' four integer columns, plus the
   team columns of team contests) and replay those before the point into a
   :class:`~podium.rater.Rater` restored from the snapshot;
4. delete the events of every contest from the point on (one statement), the
   snapshots after the point and the old standings (and, for a deletion, the contest's
   row); shift the positions of the contests in between;
5. rate the corrected run -- the later contests, with the replacement at its
   position -- with one ``Rater.extend`` call (:func:`podium.store.rating.rate_run`)
   and write its events in one bulk insert (:mod:`podium.store.bulk`: ``executemany``
   on SQLite, ``COPY`` on PostgreSQL), the replacement's standings and contest row, and
   every re-rated contest's count of debuts (one bulk update);
6. players: those new to the store (a replacement) are inserted; those who appear in
   no remaining contest are deleted; every other player of the run or of the old
   standings gets the Rater's current values (one bulk update; a player left only in
   unrated contests has no rating again);
7. bump ``meta.revision`` and ``meta.epoch`` (so that every process drops its cached
   Rater and handle keys), write a snapshot when the policy asks for one (always after
   a correction that dropped every snapshot after the point), commit.

A correction re-rates the current season only: a contest of a finished season (one
before the ladder's latest season boundary) is refused
(:func:`podium.store.writes.check_current_season`), so that a finished season's final
leaderboard never changes.

The result equals rating the corrected history from scratch, bit for bit: the rows of
every table but surrogate keys and timestamps equal those of a fresh store that
ingested the corrected history, and the cached Rater equals ``Rater.extend`` of it.
Readers see the old state until the commit; an error or a killed process (at any
stage; the crash tests stop the process at each hook) leaves the old state.

The test hooks (:data:`podium.store.common.StoreHooks`) of a correction are
``"locked"``, ``"replayed"``, ``"correction-cleared"``, ``"rated"``, ``"standings"``
(a replacement), ``"events"``, ``"players"``, ``"snapshot"`` (when one is written) and ``"commit"``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

import numpy as np
from sqlalchemy import Connection, Select, bindparam, delete, func, select, update

import podium.store.schema as S
from podium.beliefs import SeasonReset, SeasonStart
from podium.core.contest import Contest
from podium.core.guards import storable_text
from podium.rater import Rater
from podium.store.bulk import update_rows
from podium.store.common import chunks
from podium.store.engine import display_url
from podium.store.migrations import set_meta
from podium.store.models import CorrectionResult, StoreError, UnknownContestError
from podium.store.raters import CachedRater
from podium.store.rating import PLAYER_COLS, RatedRun, rate_run, rated_indices, replay
from podium.store.rows import (
    Item,
    contest_from_rows,
    insert_events,
    insert_new_players,
    insert_standings,
    update_players,
)
from podium.store.writes import Writes, check_current_season, check_item, first_spellings

__all__ = ["Corrections"]

@cache
def _target_q(t: S.LadderTables) -> Select[Any]:
    c = t.contests
    return select(c.c.pk, c.c.seq, c.c.cid, c.c.name, c.c.url, c.c.time_seconds,
                  c.c.players, c.c.content_hash).where(c.c.cid == bindparam("cid"))


_EMPTY_PLAYER = (None, None, None, 0, None, None, None)
#: The columns of an event that a re-rating changes (``place`` and ``team`` come from the
#: standings, which stay).
_EVENT_VALUES = ("mu", "sigma", "display_rating", "perf", "prev_display", "change", "debut")
# The standings of the contests from a position on, in key order (the table's primary
# key): read through the driver's cursor, since they may be millions of rows.
_STANDINGS_SQL = ('SELECT "contest_pk", "player_pk", "lo", "hi" FROM "{st}" '
                  'WHERE "contest_pk" IN (SELECT "pk" FROM "{c}" WHERE "seq" >= {mark}) '
                  'ORDER BY "contest_pk", "pos"')


@cache
def _team_contests_q(t: S.LadderTables) -> Select[Any]:
    """The team contests from a position on: those whose first standings row names a
    team."""
    st, c = t.standings, t.contests
    return select(st.c.contest_pk).where(
        st.c.pos == 0, st.c.team.is_not(None),
        st.c.contest_pk.in_(select(c.c.pk).where(c.c.seq >= bindparam("start"))))


@dataclass
class _Stored:
    """A stored contest read back for a correction: its key, position, id, the contest
    exactly as ingested and the keys of its standings' players (in standings order)."""

    pk: int
    seq: int
    cid: str
    contest: Contest | SeasonStart
    player_pks: list[int]
    new_players: int


@dataclass(frozen=True)
class _Target:
    """The stored contest a correction names."""

    pk: int
    seq: int
    cid: str
    name: str
    players: int
    content_hash: str


class Corrections:
    """Deleting and replacing stored contests; see the module notes.

    A correction is a write of ``writes`` (:meth:`~podium.store.writes.Writes.run_write`):
    it uses that service's Rater cache, player keys and audit log through their public
    methods and keeps no state of its own.
    """

    def __init__(self, writes: Writes) -> None:
        self.writes = writes
        self.ctx = writes.ctx

    # ------------------------------------------------------------------ public
    def delete(self, contest_id: str) -> CorrectionResult:
        """Delete the contest ``contest_id`` and re-rate every later contest, in one
        transaction (all of it or nothing).

        Players who appear in no remaining contest are removed; every other rating,
        event and snapshot ends as if the contest had never been ingested.

        Returns
        -------
        CorrectionResult
            ``status`` ``"deleted"``, the position it had, the number of later contests
            re-rated and of players removed.

        Raises
        ------
        UnknownContestError
            (a :class:`StoreError`) when no contest has that id.  Nothing is changed.
        """
        if not isinstance(contest_id, str) or not contest_id:
            raise UnknownContestError(f"no contest with id {contest_id!r}: a contest id is a "
                                      "non-empty string", str(contest_id))
        if not storable_text(contest_id):
            raise UnknownContestError(f"no contest with id {ascii(contest_id)}: no stored id "
                                      "holds a NUL or a lone surrogate", contest_id)
        return self.writes.run_write(
            f"cannot delete contest {contest_id!r}",
            lambda conn: self._correct_locked(conn, contest_id, None))

    def replace(self, contest: Contest, *, contest_id: str | None = None,
                allow_future: bool | None = None) -> CorrectionResult:
        """Replace the stored contest ``contest_id`` by ``contest`` and re-rate every
        later contest, in one transaction (all of it or nothing).

        The replacement passes the checks of :meth:`ingest` first (handle rules, time,
        weight, ceiling, name, url, team rounds; in a store with case-insensitive
        handles each handle takes the spelling the store first saw).  It keeps the id
        and may change anything else: standings (a disqualified player removed, a tie
        fixed), name, url, weight, ceiling and time -- a new time moves the contest
        after the stored contests of the same or an earlier time, and the contests
        from the earlier of the two positions on are re-rated.

        Parameters
        ----------
        contest:
            The corrected contest.
        contest_id:
            The id of the stored contest to replace (default: ``contest``'s url if set,
            else its name).
        allow_future:
            As for :meth:`ingest`.

        Returns
        -------
        CorrectionResult
            ``status`` ``"replaced"``, or ``"unchanged"`` when the stored contest has
            exactly this content (nothing is written).

        Raises
        ------
        UnknownContestError
            (a :class:`StoreError`) when no contest has that id.  Nothing is changed.
        ContestError
            When the replacement breaks an input rule.  Nothing is changed.
        """
        item = check_item(self.ctx, contest, contest_id, "", allow_future)
        return self.writes.run_write(
            f"cannot replace contest {item.cid!r}",
            lambda conn: self._correct_locked(conn, item.cid, item))

    # ------------------------------------------------------------------ the transaction
    def _correct_locked(self, conn: Connection, cid: str,
                        item: Item | None) -> CorrectionResult:
        """The whole correction (delete when ``item`` is None, else replace by it),
        inside the write transaction."""
        m = self.ctx.read_meta(conn)
        self.ctx.hook("locked")
        t = self.ctx.tables
        _C, _ST = t.contests, t.standings
        row = conn.execute(_target_q(t), {"cid": cid}).first()
        if row is None:
            raise UnknownContestError(
                f"no contest with id {cid!r} in {display_url(self.ctx.url)}; nothing was changed",
                cid)
        target = _Target(int(row.pk), int(row.seq), row.cid, row.name, int(row.players),
                         row.content_hash)
        if item is not None and self.ctx.case_insensitive_handles:
            item = first_spellings(conn, t, [item])[0]
        if item is not None and item.chash == target.content_hash:
            return CorrectionResult("unchanged", cid, item.contest.name, target.seq,
                                    target.seq, len(item.contest), target.players, 0, 0, 0,
                                    item.chash, target.content_hash)
        head = int(conn.execute(select(func.count()).select_from(_C)).scalar_one())
        p = target.seq
        q = p if item is None else self._new_position(conn, target, item.contest)
        start = min(p, q)
        check_current_season(conn, t, start, f"cannot {'delete' if item is None else 'replace'}"
                             f" contest {cid!r}")
        handles, raters = self.writes.handles, self.writes.raters
        handles.refresh(conn, m)
        raters.invalidate()  # the state is about to change; re-cached only after a commit
        rater, snap = raters.from_snapshot(conn, start)
        stored = self._read_stored(conn, snap)
        kept = raters.priors(conn)
        replay(rater, [s.contest for s in stored[:start - snap]], kept)
        if len(rater.contests) != start:  # pragma: no cover - defensive
            raise StoreError(f"internal error: rater at {len(rater.contests)} contests, "
                             f"expected {start}")
        self.ctx.hook("replayed")
        old = next(s for s in stored if s.pk == target.pk)
        run_list: list[_Stored | None] = [s for s in stored[start - snap:] if s.pk != target.pk]
        if item is not None:
            run_list.insert(q - start, None)  # the replacement's place in the run

        # clear: the contest's events and standings, and the snapshots after the point
        # (the events of the later contests are rewritten in place below: the same rows,
        # since a stored contest keeps its players and whether it rates anyone)
        conn.execute(delete(t.events).where(t.events.c.contest_pk == target.pk))
        conn.execute(delete(_ST).where(_ST.c.contest_pk == target.pk))
        if item is None:
            conn.execute(delete(_C).where(_C.c.pk == target.pk))
            conn.execute(update(_C).where(_C.c.seq > p).values(seq=_C.c.seq - 1))
        elif q < p:
            conn.execute(update(_C).where(_C.c.seq >= q, _C.c.seq < p)
                         .values(seq=_C.c.seq + 1))
        elif q > p:
            conn.execute(update(_C).where(_C.c.seq > p, _C.c.seq <= q)
                         .values(seq=_C.c.seq - 1))
        conn.execute(delete(t.snapshots).where(t.snapshots.c.head_count > start))
        self.ctx.hook("correction-cleared")

        contests = [cast(Contest, s.contest) if s is not None else cast(Item, item).contest
                    for s in run_list]
        priors = self.writes.priors.take(conn, m, rater, contests, stored=kept)
        try:
            run = rate_run(rater, contests, priors)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(f"re-rating the {len(contests)} contest(s) from position "
                             f"{start} on failed: {type(exc).__name__}: {exc}") from exc
        self.ctx.hook("rated")
        new_handles: dict[str, int] = {}
        pks = [handles.keys_of(item.contest.handles, new_handles) if s is None and
               item is not None else cast(_Stored, s).player_pks for s in run_list]
        cpks = [target.pk if s is None else s.pk for s in run_list]
        insert_new_players(conn, t, rater, new_handles)
        warnings: tuple[str, ...] = ()
        if item is not None:
            k = q - start
            rep = run.reports[k]
            warnings = tuple(rep.warnings)
            c = item.contest
            conn.execute(update(_C).where(_C.c.pk == target.pk).values(
                seq=q, name=c.name, url=c.url, time_seconds=c.time_seconds, weight=c.weight,
                perf_ceiling=c.perf_ceiling, players=len(c), new_players=rep.new_players,
                rated=not rep.skipped, content_hash=item.chash, ingested_at=int(time.time())))
            insert_standings(conn, t, [target.pk], [c], [pks[k]])
            self.ctx.hook("standings")
        self._write_events(conn, run, cpks, pks, None if item is None else q - start)
        self.ctx.hook("events")
        changed = [(s.pk, rep.new_players) for s, rep in zip(run_list, run.reports, strict=True)
                   if s is not None and rep.new_players != s.new_players]
        update_rows(conn, _C, "pk", ("new_players",), changed)
        if priors:
            self.writes.priors.record(conn, priors, handles, new_handles)
        removed = self._settle_players(conn, rater, run, old, item, new_handles, target.pk)
        self.ctx.hook("players")

        new_head = head if item is not None else head - 1
        epoch = m.epoch + 1
        set_meta(conn, "revision", str(m.revision + 1), t.meta)
        set_meta(conn, "epoch", str(epoch), t.meta)
        detail: dict[str, object] = {"index": p, "rerated": len(run_list) - (item is not None),
                                     "players_removed": removed,
                                     "content_hash_before": target.content_hash}
        if item is not None:
            detail.update(new_index=q, players=len(item.contest),
                          players_added=len(new_handles))
        self.writes.audit.record(conn, "delete" if item is None else "replace",
                           revision=m.revision + 1, contest_id=cid,
                           content_hash=target.content_hash if item is None else item.chash,
                           detail=detail)
        raters.maybe_snapshot(conn, rater, new_head, epoch)
        self.writes.smoothing.update(conn, meta=m)  # issue 29: the smoothed companion
        self.ctx.hook("commit")
        handles.stage(new_handles)
        raters.stage(CachedRater(rater, new_head, m.store_id, epoch))
        rerated = len(run_list) - (item is not None)
        if item is None:
            return CorrectionResult("deleted", cid, target.name, p, None, target.players,
                                    target.players, rerated, removed, 0, target.content_hash,
                                    target.content_hash)
        return CorrectionResult("replaced", cid, item.contest.name, p, q, len(item.contest),
                                target.players, rerated, removed, len(new_handles), item.chash,
                                target.content_hash, warnings)

    # ------------------------------------------------------------------ helpers
    def _write_events(self, conn: Connection, run: RatedRun, cpks: list[int],
                      pks: list[list[int]], new: int | None) -> None:
        """The run's events: those of the stored contests overwrite their rows (one bulk
        update, every row checked to exist), those of the replacement (run position
        ``new``) are inserted."""
        n = len(cpks)
        sizes = np.diff(run.offsets)
        ev_cpk = np.repeat(np.asarray(cpks, dtype=np.int64), sizes)
        rated = [k for k in range(n) if sizes[k] > 0]
        ev_ppk = np.fromiter((p for k in rated for p in pks[k]), dtype=np.int64,
                             count=int(run.offsets[-1]))
        keep = np.ones(len(ev_cpk), dtype=bool)
        t = self.ctx.tables
        if new is not None:
            keep[int(run.offsets[new]):int(run.offsets[new + 1])] = False
            insert_events(conn, t, run, [new], cpks, pks)
        sel = np.flatnonzero(keep) if new is not None else slice(None)
        # a stored contest's event keeps its place and team (its standings are unchanged)
        rows = list(zip(ev_cpk[sel].tolist(), ev_ppk[sel].tolist(), run.mu[sel].tolist(),
                        run.sigma[sel].tolist(), run.display[sel].tolist(),
                        run.perf[sel].tolist(), run.prev_display[sel].tolist(),
                        run.change[sel].tolist(), run.debut[sel].tolist(), strict=True))
        done = update_rows(conn, t.events, ("contest_pk", "player_pk"), _EVENT_VALUES, rows)
        if done != len(rows):
            raise StoreError(f"internal error: {done} stored rating events rewritten, "
                             f"expected {len(rows)}")

    def _new_position(self, conn: Connection, target: _Target, contest: Contest) -> int:
        """The replacement's position: the stored one when the time is unchanged, else
        after the other stored contests of the same or an earlier time."""
        c = self.ctx.tables.contests
        t = int(conn.execute(select(c.c.time_seconds).where(c.c.pk == target.pk))
                .scalar_one())
        if t == contest.time_seconds:
            return target.seq
        return int(conn.execute(
            select(func.count()).select_from(c).where(
                c.c.time_seconds <= contest.time_seconds, c.c.pk != target.pk)
        ).scalar_one())

    def _read_stored(self, conn: Connection, start: int) -> list[_Stored]:
        """Every stored contest from position ``start`` on, exactly as ingested, in time
        order: one query of ``contests`` and one of ``standings`` (handles from the
        in-memory map of player keys, refreshed in this transaction); a season boundary
        as its :class:`~podium.beliefs.SeasonStart`."""
        t = self.ctx.tables
        _C, _ST, sn = t.contests, t.standings, t.seasons
        rows = conn.execute(
            select(_C.c.pk, _C.c.seq, _C.c.cid, _C.c.name, _C.c.url, _C.c.time_seconds,
                   _C.c.weight, _C.c.perf_ceiling, _C.c.new_players, sn.c.number, sn.c.reset)
            .select_from(_C.outerjoin(sn, sn.c.contest_pk == _C.c.pk))
            .where(_C.c.seq >= start).order_by(_C.c.seq)
        ).all()
        if not rows:
            return []
        mark = "%s" if conn.dialect.name == "postgresql" else "?"
        raw = conn.connection.driver_connection
        assert raw is not None
        cur = raw.cursor()  # plain tuples: millions of rows
        try:
            cur.execute(_STANDINGS_SQL.format(st=_ST.name, c=_C.name, mark=mark), (start,))
            st = cur.fetchall()
        finally:
            cur.close()
        # four integer columns: straight into one array (no tuple per row kept)
        arr = np.array(st, dtype=np.int64).reshape(-1, 4)
        del st
        cpk, ppk, lo, hi = arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]
        handles = self.writes.handles.names_by_key()[ppk]
        cut = np.flatnonzero(np.diff(cpk)) + 1
        starts = np.concatenate(([0], cut)).astype(np.int64)
        bounds = dict(zip(cpk[starts].tolist(), zip(
            starts.tolist(), np.concatenate((cut, [len(cpk)])).tolist(), strict=True),
            strict=True))
        teams: dict[int, tuple[list[str | None], list[float | None]]] = {}
        for (tpk,) in conn.execute(_team_contests_q(t), {"start": start}).all():
            trows = conn.execute(select(_ST.c.team, _ST.c.member_weight)
                                 .where(_ST.c.contest_pk == tpk).order_by(_ST.c.pos)).all()
            teams[int(tpk)] = ([r[0] for r in trows], [r[1] for r in trows])
        out: list[_Stored] = []
        for r in rows:
            if r.number is not None:
                out.append(_Stored(int(r.pk), int(r.seq), r.cid,
                                   SeasonStart(int(r.number), int(r.time_seconds),
                                               SeasonReset.parse(r.reset)), [], 0))
                continue
            a, b = bounds.get(int(r.pk), (0, 0))
            meta = {"name": r.name, "time_seconds": int(r.time_seconds),
                    "weight": float(r.weight),
                    "perf_ceiling": None if r.perf_ceiling is None else float(r.perf_ceiling),
                    "url": r.url}
            team, weight = teams.get(int(r.pk), ([None], [None]))
            contest = contest_from_rows(meta, handles[a:b].tolist(), lo[a:b], hi[a:b], team,
                                     weight)
            out.append(_Stored(int(r.pk), int(r.seq), r.cid, contest, ppk[a:b].tolist(),
                               int(r.new_players)))
        return out

    def _settle_players(self, conn: Connection, rater: Rater, run: RatedRun, old: _Stored,
                        item: Item | None, new_handles: dict[str, int],
                        target_pk: int) -> int:
        """Write the Rater's values of the players of the run and of the old standings;
        delete those who appear in no remaining contest.  Returns how many were deleted.

        A player of the old standings whom the Rater does not know was rated in no
        remaining contest: if the player still appears somewhere (in the replacement, or
        in a stored unrated contest) the row stays, without a rating;
        else it is deleted."""
        t = self.ctx.tables
        _C, _ST, _P = t.contests, t.standings, t.players
        keep = set() if item is None else set(item.contest.handles)
        olds = list(zip(cast(Contest, old.contest).handles, old.player_pks, strict=True))
        idx = (rated_indices(rater, [h for h, _ in olds]) if olds
               else np.zeros(0, dtype=np.int64))
        touched = np.concatenate((run.player, idx[idx >= 0])).astype(np.int64)
        update_players(conn, t, rater, touched, self.writes.handles, new_handles)
        unrated = [(h, pk) for (h, pk), i in zip(olds, idx.tolist(), strict=True) if i < 0]
        kept = {pk for h, pk in unrated if h in keep}
        ask = [pk for h, pk in unrated if h not in keep]
        # the contests in which everybody tied (few), then their standings by key range
        tied = [int(r[0]) for r in conn.execute(
            select(_C.c.pk).where(_C.c.rated.is_(False), _C.c.pk != target_pk)).all()]
        if ask and tied:
            want = set(ask)
            for part in chunks(tied):
                kept.update(int(r[0]) for r in conn.execute(
                    select(_ST.c.player_pk).where(_ST.c.contest_pk.in_(list(part)))).all()
                    if int(r[0]) in want)
        update_rows(conn, _P, "pk", PLAYER_COLS, [(pk, *_EMPTY_PLAYER) for pk in sorted(kept)])
        dead = [pk for pk in ask if pk not in kept]
        for part in chunks(dead):
            conn.execute(delete(t.priors).where(t.priors.c.player_pk.in_(list(part))))
            conn.execute(delete(_P).where(_P.c.pk.in_(list(part))))
        return len(dead)
