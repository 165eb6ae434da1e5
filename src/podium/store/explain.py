"""Explaining a stored rating change (:meth:`Explainer.explain`, a service of
:class:`~podium.store.Store`).

In one read transaction: the stored contest and the player's row in its standings; a
Rater just before the contest (the newest snapshot at or before it, then the stored
standings replayed up to it: :meth:`podium.store.raters.RaterCache.rater_from_store`);
the system's explanation (:meth:`podium.rater.Rater.explain`); and a check that it
agrees with the stored event, bit for bit.

The start of a season is explained by its reset
(:func:`podium.beliefs.explain_reset`): from the player's rating at the end of the
finished season (its ``season_ratings`` row) to the stored event.

The Rater before the contest is cached here (the last two, keyed by the store's id,
epoch, revision and the contest's position), so explaining several players of one
contest replays the history once; any write (a new revision) makes the cache miss, and
closing the store drops it (:meth:`Explainer.release`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, select

from podium.beliefs import SeasonReset, SeasonStart, explain_reset
from podium.core.explain import ExplainError, Explanation
from podium.core.guards import HandleError, handle_key, normalize_handle, storable_text
from podium.rater import Rater
from podium.store.common import StoreContext
from podium.store.engine import read_txn
from podium.store.models import StoreError
from podium.store.raters import RaterCache
from podium.store.rows import stored_contest

__all__ = ["Explainer", "ExplainNotFound", "EXPLAIN_CACHE_SIZE"]

#: How many Raters-before-a-contest :meth:`Explainer.explain` keeps.
EXPLAIN_CACHE_SIZE = 2


class ExplainNotFound(StoreError):
    """The contest is unknown or not rated, or the player is not in it (HTTP 404)."""


class Explainer:
    """:meth:`explain` over a store context; Raters come from ``raters`` (see the module
    notes).  The cache of Raters-before-a-contest is this object's own."""

    def __init__(self, ctx: StoreContext, raters: RaterCache) -> None:
        self.ctx = ctx
        self.raters = raters
        self._cache: OrderedDict[tuple[str, int, int, int], Rater] = OrderedDict()
        self._lock = threading.Lock()

    def cache_size(self) -> int:
        """How many Raters-before-a-contest are kept now."""
        with self._lock:
            return len(self._cache)

    def release(self) -> None:
        """Drop the kept Raters (closing the store)."""
        with self._lock:
            self._cache = OrderedDict()

    def explain(self, contest_id: str, handle: str) -> Explanation:
        """Why ``handle``'s rating changed as it did in contest ``contest_id``.

        The handle is looked up under the store's handle rules (NFC, trimmed; any case
        in a case-insensitive store), then as given.  The explanation's ``mu_after``
        and ``sigma_after`` equal the stored event's, bit for bit (checked), and its
        ``contest_id`` is the stored id.

        Raises
        ------
        ExplainNotFound
            The contest is unknown, was not rated (everybody tied), or the player is
            not in its standings.
        StoreError
            When the explanation disagrees with the stored event (the store's
            history was rated with other parameters or code; re-rate it).
        """
        if not isinstance(contest_id, str) or not isinstance(handle, str):
            raise TypeError("contest_id and handle must be strings")
        t = self.ctx.tables
        c, p, e = t.contests, t.players, t.events
        with read_txn(self.ctx.engine) as conn:
            row = conn.execute(
                select(c.c.pk, c.c.seq, c.c.cid, c.c.name, c.c.url, c.c.time_seconds,
                       c.c.weight, c.c.perf_ceiling, c.c.rated, c.c.players)
                .where(c.c.cid == contest_id)).first() if storable_text(contest_id) else None
            if row is None:
                raise ExplainNotFound(f"unknown contest {contest_id!r}")
            season = conn.execute(select(t.seasons.c.number, t.seasons.c.reset)
                                  .where(t.seasons.c.contest_pk == row.pk)).first()
            if season is not None:
                return self._explain_reset(conn, row, season, handle)
            contest = stored_contest(conn, t, row)
            stored = self._find_handle(contest.handles, handle)
            if stored is None:
                raise ExplainNotFound(f"player {handle!r} is not in contest {contest_id!r}")
            if not row.rated:
                raise ExplainNotFound(f"contest {contest_id!r} was not rated (everybody tied):"
                                      " no rating changed")
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

    def _explain_reset(self, conn: Connection, row: Any, season: Any,
                       handle: str) -> Explanation:
        """The reset of ``handle`` at the season boundary ``row``."""
        t = self.ctx.tables
        p, e, sr = t.players, t.events, t.season_ratings
        found = None
        for h in self._lookup_names(conn, handle):
            found = conn.execute(
                select(p.c.handle, sr.c.mu, sr.c.sigma, sr.c.contests, e.c.mu.label("mu_after"),
                       e.c.sigma.label("sigma_after"))
                .select_from(e.join(p, p.c.pk == e.c.player_pk).join(
                    sr, (sr.c.player_pk == e.c.player_pk)
                    & (sr.c.season == int(season.number) - 1)))
                .where(e.c.contest_pk == row.pk, p.c.handle == h)).first()
            if found is not None:
                break
        if found is None:
            raise ExplainNotFound(f"player {handle!r} was not rated when {row.name!r} began "
                                  f"({row.cid!r}): no reset to explain")
        start = SeasonStart(int(season.number), int(row.time_seconds),
                            SeasonReset.parse(season.reset))
        out = explain_reset(self.ctx.system, self.ctx.system_name, found.handle, start,
                            int(row.players), float(found.mu), float(found.sigma),
                            int(found.contests), float(found.mu_after),
                            float(found.sigma_after))
        return replace(out, contest_id=str(row.cid))

    def _lookup_names(self, conn: Connection, handle: str) -> list[str]:
        """The spellings to look ``handle`` up by: under the handle rules, then as given
        (a case-insensitive store: the stored spelling of its key)."""
        wanted = [handle]
        try:
            wanted.insert(0, normalize_handle(handle))
        except HandleError:
            pass
        if self.ctx.case_insensitive_handles:
            p = self.ctx.tables.players
            for w in [x for x in wanted if storable_text(x)]:
                hit = conn.execute(select(p.c.handle)
                                   .where(p.c.handle_key == handle_key(w))).scalar()
                if hit is not None:
                    wanted.insert(0, hit)
        return [w for w in dict.fromkeys(wanted) if storable_text(w)]

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
                self._cache.move_to_end(key)
                return hit
        rater = self.raters.rater_from_store(conn, key[3])
        with self._lock:
            self._cache[key] = rater
            while len(self._cache) > EXPLAIN_CACHE_SIZE:
                self._cache.popitem(last=False)
        return rater

