"""The cross-ladder newcomer prior of a ladder (:class:`PriorSource`, used by the writes).

A ladder whose settings name ``prior_from`` (:class:`podium.store.ladders.LadderSettings`)
starts a newcomer who is rated in that other ladder from that rating instead of the
system's newcomer prior, as TrueSkill 2 starts a player new to a game mode from the
skill of the other modes:

1. the other ladder's ``mu`` and ``sigma`` of the player, as of the time of the first
   contest that rates the player here (that ladder's time drift,
   :meth:`podium.systems.RatingSystem.drift`, since its last contest there);
2. the variance widened toward the newcomer prior by the share ``prior_widen``
   (:func:`podium.beliefs.widened_prior`); ``mu`` kept.

The prior is taken once -- in the write transaction of the player's first rated contest
here -- and kept in the ladder's ``priors`` table (:meth:`PriorSource.record`), so that
replaying the ladder never asks the other ladder again (a later correction there does
not change this ladder).  Both ladders must rate with the same system.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Connection, select

import podium.store.schema as S
from podium.beliefs import widened_prior
from podium.core.contest import Contest
from podium.core.guards import handle_key
from podium.rater import Rater
from podium.store.bulk import insert_rows
from podium.store.common import Meta, StoreContext, chunks, meta_map
from podium.store.ladders import LadderSettings, find_ladder
from podium.store.models import StoreError
from podium.store.rating import Priors
from podium.store.rows import HandleCache
from podium.systems import RatingSystem, get_system, saved_params

__all__ = ["PriorSource", "source_system"]


def source_system(conn: Connection, ctx: StoreContext, name: str) -> tuple[S.LadderTables,
                                                                           RatingSystem]:
    """The tables and rating system of ladder ``name``, the prior source of the ladder of
    ``ctx``; :class:`StoreError` when there is no such ladder, it is this one, or it
    rates with another system."""
    source = find_ladder(conn, name)
    if source is None:
        raise StoreError(f"{ctx.where}: the ladder {name!r} that newcomer priors are taken "
                         "from (setting prior_from) does not exist")
    if source.pk == ctx.ladder.pk:
        raise StoreError(f"{ctx.where}: a ladder cannot take newcomer priors from itself")
    tables = S.ladder_tables(source.prefix)
    stored = meta_map(conn, tables.meta)
    if stored.get("system") != ctx.system_name:
        raise StoreError(
            f"{ctx.where}: newcomer priors come from ladder {name!r}, which rates with "
            f"{stored.get('system')!r}, not {ctx.system_name!r}: the two scales differ")
    params = saved_params(ctx.system_name, json.loads(stored["params"]))
    return tables, get_system(ctx.system_name, **params)


class PriorSource:
    """The newcomer priors a ladder takes from another one (see the module notes): one
    per ladder context, used by its writes."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx
        # taken in the current write, recorded by record(): handle -> (mu, sigma, time)
        self._pending: dict[str, tuple[float, float, int]] = {}
        self._source = ""

    def take(self, conn: Connection, m: Meta, rater: Rater, contests: Sequence[Contest],
             stored: Priors | None = None) -> Priors | None:
        """The priors for rating ``contests`` after ``rater``: ``stored`` (the ladder's
        priors already taken) and those of the newcomers of these contests who are rated
        in the source ladder (``None`` when there are none)."""
        self._pending = {}
        merged: dict[str, tuple[float, float]] = dict(stored or {})
        settings = LadderSettings.from_json(m.settings)
        if settings.prior_from is None:
            return merged or None
        known = rater.players.index
        first: dict[str, int] = {}
        for c in contests:
            if c.is_outcome_free:
                continue
            for h in c.handles:
                if h not in known and h not in merged and h not in first:
                    first[h] = c.time_seconds
        if not first:
            return merged or None
        tables, system = source_system(conn, self.ctx, settings.prior_from)
        p = tables.players
        insensitive = self.ctx.case_insensitive_handles
        col = p.c.handle_key if insensitive else p.c.handle
        by_key = {(handle_key(h) if insensitive else h): h for h in first}
        rows: list[Any] = []
        for part in chunks(list(by_key)):
            rows.extend(conn.execute(
                select(col, p.c.mu, p.c.sigma, p.c.last_contest_time)
                .where(col.in_(list(part)), p.c.display_rating.is_not(None))).all())
        if not rows:
            return merged or None
        handles = [by_key[r[0]] for r in rows]
        mu = np.array([float(r[1]) for r in rows])
        sigma = np.array([float(r[2]) for r in rows])
        elapsed = np.array([max(first[h] - int(r[3]), 0) for h, r in zip(handles, rows,
                                                                          strict=True)],
                           dtype=np.float64)
        mu_t, sigma_t = system.drift(mu, sigma, elapsed)
        mu_p, sigma_p = widened_prior(self.ctx.system, np.asarray(mu_t), np.asarray(sigma_t),
                                      settings.prior_widen)
        for h, a, b in zip(handles, np.asarray(mu_p).tolist(), np.asarray(sigma_p).tolist(),
                           strict=True):
            merged[h] = (a, b)
            self._pending[h] = (a, b, first[h])
        self._source = settings.prior_from
        return merged

    def record(self, conn: Connection, priors: Priors, handles: HandleCache,
               txn_new: dict[str, int]) -> None:
        """Keep the priors taken by the last :meth:`take` (of players the write has
        inserted, or held before without a rating) in the ladder's ``priors`` table."""
        if not self._pending:
            return
        names = list(self._pending)
        pks = handles.known_keys(names, txn_new)
        insert_rows(conn, self.ctx.tables.priors,
                    ("player_pk", "mu", "sigma", "source", "source_time"),
                    [(pk, *self._pending[h][:2], self._source, self._pending[h][2])
                     for pk, h in zip(pks, names, strict=True)])
        self._pending = {}
