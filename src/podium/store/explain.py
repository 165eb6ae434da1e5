"""Explaining a stored rating change (:meth:`Explainer.explain`, a service of
:class:`~podium.store.Store`).

In one read transaction: the stored contest and the player's row in its standings; a
Rater just before the contest (the newest snapshot at or before it, then the stored
standings replayed up to it: :meth:`podium.store.raters.RaterCache.rater_from_store`);
the system's explanation (:meth:`podium.rater.Rater.explain`); and a check that it
agrees with the stored event, bit for bit.

The Rater before the contest is cached here (the last two, keyed by the store's id,
epoch, revision and the contest's position), so explaining several players of one
contest replays the history once; any write (a new revision) makes the cache miss, and
closing the store drops it (:meth:`Explainer.release`).  A cached Rater unused for
``explain_cache_s`` seconds (a store option, default 60) is dropped by a timer and its
memory handed back to the system (``malloc_trim`` where the C library has it), so that
the process returns to its size before a burst of explanations.

Each explanation's work is bounded: a Rater not in the cache is the nearest snapshot
plus a replay of the contests after it, and an explanation whose replay would exceed
``max_explain_replay`` player-rounds is refused (:class:`ExplainTooCostly`) instead of
taking minutes.  A store that keeps its snapshots (``keep_snapshots``) replays at most
one snapshot interval (``snapshot_every`` contests or ``snapshot_events`` player-rounds)
for any contest: docs/explain.md, "Latency", gives the figures on the whole Codeforces
history.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
from collections import OrderedDict
from dataclasses import replace

from sqlalchemy import Connection, func, select

import podium.store.schema as S
from podium.core.explain import ExplainError, Explanation
from podium.core.guards import HandleError, handle_key, normalize_handle, storable_text
from podium.rater import Rater
from podium.store.common import StoreContext
from podium.store.engine import read_txn
from podium.store.models import StoreError
from podium.store.raters import RaterCache
from podium.store.rows import stored_contest

__all__ = ["Explainer", "ExplainNotFound", "ExplainTooCostly", "EXPLAIN_CACHE_SIZE",
           "release_memory"]

#: How many Raters-before-a-contest :meth:`Explainer.explain` keeps.
EXPLAIN_CACHE_SIZE = 2


class ExplainNotFound(StoreError):
    """The contest is unknown or not rated, or the player is not in it (HTTP 404)."""


class ExplainTooCostly(StoreError):
    """The explanation would replay more player-rounds than ``max_explain_replay``."""


def _libc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    return trim


_MALLOC_TRIM = _libc_trim()


def release_memory() -> None:
    """Collect garbage, then hand the C library's free memory back to the system
    (``malloc_trim(0)`` on glibc; elsewhere only the collection)."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class Explainer:
    """:meth:`explain` over a store context; Raters come from ``raters`` (see the module
    notes).  The cache of Raters-before-a-contest is this object's own."""

    def __init__(self, ctx: StoreContext, raters: RaterCache) -> None:
        self.ctx = ctx
        self.raters = raters
        #: key -> (Rater, monotonic time of its last use)
        self._cache: OrderedDict[tuple[str, int, int, int], tuple[Rater, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def cache_size(self) -> int:
        """How many Raters-before-a-contest are kept now."""
        with self._lock:
            return len(self._cache)

    def release(self) -> None:
        """Drop the kept Raters (closing the store)."""
        with self._lock:
            self._cache = OrderedDict()
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def expire(self, now: float | None = None) -> int:
        """Drop the Raters unused for ``explain_cache_s`` seconds (the timer calls it);
        hand their memory back (:func:`release_memory`).  Returns how many were dropped."""
        clock = time.monotonic() if now is None else now
        ttl = self.ctx.options.explain_cache_s
        with self._lock:
            self._timer = None
            old = [k for k, (_r, used) in self._cache.items() if clock - used >= ttl]
            for k in old:
                del self._cache[k]
            left = bool(self._cache)
        if old:
            release_memory()
        if left:
            self._expire_later()
        return len(old)

    def _expire_later(self) -> None:
        """Start the timer of :meth:`expire` unless one runs."""
        with self._lock:
            if self._timer is not None:
                return
            timer = threading.Timer(self.ctx.options.explain_cache_s + 0.05, self.expire)
            timer.daemon = True
            self._timer = timer
        timer.start()

    def explain(self, contest_id: str, handle: str) -> Explanation:
        """Why ``handle``'s rating changed as it did in contest ``contest_id``.

        The handle is looked up under the store's handle rules (NFC, trimmed; any case
        in a case-insensitive store), then as given.  The explanation's ``mu_after``
        and ``sigma_after`` equal the stored event's, bit for bit (checked), and its
        ``contest_id`` is the stored id.

        Raises
        ------
        ExplainNotFound
            The contest is unknown, was not rated (one side only, or everybody tied
            in a store whose system has ``all_tied="skip"``), or the player is
            not in its standings.
        StoreError
            When the explanation disagrees with the stored event (the store's
            history was rated with other parameters or code; re-rate it).
        """
        if not isinstance(contest_id, str) or not isinstance(handle, str):
            raise TypeError("contest_id and handle must be strings")
        c, p, e = S.contests, S.players, S.events
        with read_txn(self.ctx.engine) as conn:
            row = conn.execute(
                select(c.c.pk, c.c.seq, c.c.cid, c.c.name, c.c.url, c.c.time_seconds,
                       c.c.weight, c.c.perf_ceiling, c.c.rated)
                .where(c.c.cid == contest_id)).first() if storable_text(contest_id) else None
            if row is None:
                raise ExplainNotFound(f"unknown contest {contest_id!r}")
            contest = stored_contest(conn, row)
            stored = self._find_handle(contest.handles, handle)
            if stored is None:
                raise ExplainNotFound(f"player {handle!r} is not in contest {contest_id!r}")
            if not row.rated:
                why = self.ctx.system.skip_reason(contest) or "not rated"
                raise ExplainNotFound(f"contest {contest_id!r} was not rated ({why}): "
                                      "no rating changed")
            event = conn.execute(
                select(e.c.mu, e.c.sigma, e.c.perf)
                .select_from(e.join(p, p.c.pk == e.c.player_pk))
                .where(e.c.contest_pk == row.pk, p.c.handle == stored)).first()
            if event is None:  # pragma: no cover - a rated contest has every event
                raise StoreError(f"contest {contest_id!r} has no stored event for {stored!r}")
            m = self.ctx.read_meta(conn)
            rater = self._rater_before(conn, (m.store_id, m.epoch, m.revision, int(row.seq)))
        try:
            out = rater.explain(contest, stored)
        except ExplainError as exc:
            raise ExplainNotFound(str(exc)) from None
        if (out.mu_after, out.sigma_after) != (float(event.mu), float(event.sigma)):
            raise StoreError(
                f"the explanation of {stored!r} in contest {contest_id!r} gives mu, sigma = "
                f"{out.mu_after!r}, {out.sigma_after!r} but the store holds {float(event.mu)!r},"
                f" {float(event.sigma)!r}: its history was rated differently; re-rate it")
        return replace(out, contest_id=str(row.cid))

    def _find_handle(self, handles: tuple[str, ...] | list[str], handle: str) -> str | None:
        """The stored spelling in ``handles`` of ``handle`` (exact, under the handle
        rules, or by :func:`handle_key` in a case-insensitive store)."""
        wanted = [handle]
        try:
            wanted.insert(0, normalize_handle(handle))
        except HandleError:
            pass
        present = set(handles)
        for w in wanted:
            if w in present:
                return w
        if self.ctx.case_insensitive_handles:
            keys = {handle_key(h): h for h in handles}
            for w in wanted:
                hit = keys.get(handle_key(w))
                if hit is not None:
                    return hit
        return None

    def _rater_before(self, conn: Connection, key: tuple[str, int, int, int]) -> Rater:
        """A Rater that has rated exactly the first ``key[3]`` stored contests (cached)."""
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache[key] = (hit[0], time.monotonic())
                self._cache.move_to_end(key)
                return hit[0]
        self._check_replay(conn, key[3])
        rater = self.raters.rater_from_store(conn, key[3])
        with self._lock:
            self._cache[key] = (rater, time.monotonic())
            while len(self._cache) > EXPLAIN_CACHE_SIZE:
                self._cache.popitem(last=False)
        self._expire_later()
        return rater

    def _check_replay(self, conn: Connection, pos: int) -> None:
        """:class:`ExplainTooCostly` when a Rater after the first ``pos`` contests would
        replay more than ``max_explain_replay`` player-rounds after the nearest
        snapshot."""
        sn, c = S.snapshots, S.contests
        head = int(conn.execute(select(func.coalesce(func.max(sn.c.head_count), 0))
                                .where(sn.c.head_count <= pos)).scalar_one())
        work = int(conn.execute(select(func.coalesce(func.sum(c.c.players), 0))
                                .where(c.c.seq >= head, c.c.seq < pos)).scalar_one())
        limit = self.ctx.options.max_explain_replay
        if work > limit:
            raise ExplainTooCostly(
                f"explaining contest #{pos} would replay {work:,} player-rounds ({pos - head} "
                f"contests after the nearest snapshot, at {head}), more than this store's "
                f"limit of {limit:,} (max_explain_replay); keep more snapshots (podium ingest "
                "--keep-snapshots) so that every contest is near one")

