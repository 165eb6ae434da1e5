"""Reading a store (the query service of :class:`~podium.store.Store`).

Every method runs in one read transaction (:func:`podium.store.engine.read_txn`),
so it sees one committed state and never half of a contest, and returns the
frozen dataclasses of :mod:`podium.store.models` with unrounded floats.
Rated players are those whose ``display_rating`` is set (it is NULL until their
first rated contest), so that counts and rankings read the rating index alone.

The leaderboard, counts, a player's rating and rank and the current ratings are read
*as of* a time (``as_of``, default now: :mod:`podium.store.asof`) and follow the
ladder's provisional rule; a finished season's final leaderboard is read from its
``season_ratings`` as of the season's end (``season=``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import Connection, and_, func, select

import podium.store.schema as S
from podium.core.guards import HandleError, handle_key, normalize_handle, storable_text
from podium.store.asof import RatingSource, RatingView, count_rated, rank_of, ranked_page, read_time
from podium.store.common import (
    POLICY_EXACT,
    StoreContext,
    chunks,
    meta_map,
    prefix_upper_bound,
)
from podium.store.engine import display_url, read_txn
from podium.store.ladders import read_settings
from podium.store.models import (
    ContestChange,
    ContestSummary,
    ContestTeam,
    ContestView,
    HistoryRow,
    LeaderboardRow,
    PlayerView,
    StoreError,
    TeamMember,
)

__all__ = ["Queries", "SEARCH_RANGE_ROWS", "stored_spellings"]

#: Prefix search: with at most this many handles in the prefix's range of ``handle_key``
#: they are read through its index and sorted by rating; with more, the players are
#: walked in rating order until ``limit`` of them match (see
#: :meth:`Queries.search_handles`).
SEARCH_RANGE_ROWS = 2000


def stored_spellings(conn: Connection, t: S.LadderTables,
                     handles: Iterable[str]) -> dict[str, str]:
    """``handle_key -> stored handle`` of the ladder's players whose key is that of one
    of ``handles`` (:func:`~podium.core.guards.handle_key`)."""
    p = t.players
    keys = sorted({handle_key(h) for h in handles})
    out: dict[str, str] = {}
    for part in chunks(keys):
        for key, handle in conn.execute(
            select(p.c.handle_key, p.c.handle).where(p.c.handle_key.in_(list(part)))
        ).all():
            out[key] = handle
    return out


class Queries:
    """The reads of a store context (a service of :class:`~podium.store.Store`; see the
    module notes).  It keeps no state of its own."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx

    # ------------------------------------------------------------------ how to read
    def _latest_time(self, conn: Connection) -> int | None:
        c = self.ctx.tables.contests
        t = conn.execute(select(c.c.time_seconds).order_by(c.c.seq.desc()).limit(1)).scalar()
        return None if t is None else int(t)

    def _view(self, conn: Connection, as_of: int | None) -> RatingView:
        """The live ratings as of ``as_of`` (checked against the latest contest)."""
        system = self.ctx.system
        latest = (self._latest_time(conn) if as_of is not None or system.has_time_drift
                  else None)
        return RatingView(system, read_time(as_of, latest),
                          read_settings(conn, self.ctx.tables), latest)

    def _hide(self, view: RatingView, include_provisional: bool | None) -> bool:
        if include_provisional is None:
            return view.settings.hide_provisional
        return not include_provisional

    def _live(self) -> RatingSource:
        p = self.ctx.tables.players
        # A player is rated (contests >= 1) exactly when display_rating is set: it is
        # NULL until the first rated contest (see schema.players).  Testing the indexed
        # column lets counts and deep leaderboard pages read the rating index alone.
        return RatingSource(p, (p.c.display_rating.is_not(None),))

    def _source(self, conn: Connection, season: int | None,
                as_of: int | None) -> tuple[RatingSource, RatingView]:
        """Where a leaderboard of ``season`` is read (``None`` or the current season: the
        live ratings as of ``as_of``; a finished one: its final ratings as of its end)."""
        if season is None:
            return self._live(), self._view(conn, as_of)
        t = self.ctx.tables
        sn = t.seasons
        current = int(conn.execute(select(func.coalesce(func.max(sn.c.number), 1))).scalar_one())
        if isinstance(season, bool) or not isinstance(season, int) or not 1 <= season <= current:
            raise StoreError(f"{self.ctx.where}: no season {season!r}: the ladder has seasons "
                             f"1 to {current} (season {current} is the current one)")
        if season == current:
            return self._live(), self._view(conn, as_of)
        if as_of is not None:
            raise StoreError(f"season {season} is finished: its final leaderboard is read as "
                             "of its end; leave out as_of")
        end = int(conn.execute(select(sn.c.time_seconds)
                               .where(sn.c.number == season + 1)).scalar_one())
        sr = t.season_ratings
        return (RatingSource(sr, (sr.c.season == season,)),
                RatingView(self.ctx.system, end, read_settings(conn, t), end))

    @staticmethod
    def _check_page(offset: int, limit: int) -> None:
        if offset < 0 or limit < 0:
            raise StoreError(f"offset and limit must be >= 0 (got offset={offset}, limit={limit})")

    # ------------------------------------------------------------------ reading
    def leaderboard(self, *, offset: int = 0, limit: int = 50, active_since: int | None = None,
                    min_contests: int = 1, as_of: int | None = None,
                    include_provisional: bool | None = None,
                    season: int | None = None) -> list[LeaderboardRow]:
        """Rated players by display rating as of ``as_of`` (default now), best first (ties:
        handle ascending).

        ``active_since`` keeps players whose last contest is at or after that time;
        ``include_provisional`` ``False`` leaves out the provisional players (``None``:
        as the ladder's ``hide_provisional`` setting says); ``season`` a finished
        season's final leaderboard (as of its end).  ``rank`` is 1-based within the
        filtered set.  Without time drift the order is that of the rating index; with
        it see :func:`podium.store.asof.ranked_page`.
        """
        self._check_page(offset, limit)
        with read_txn(self.ctx.engine) as conn:
            src, view = self._source(conn, season, as_of)
            extra = ([] if active_since is None
                     else [src.table.c.last_contest_time >= int(active_since)])
            return ranked_page(conn, src, view, offset=offset, limit=limit, extra=extra,
                               min_contests=min_contests,
                               hide_provisional=self._hide(view, include_provisional))

    def count_players(self, *, min_rating: float | None = None,
                      max_rating: float | None = None, active_since: int | None = None,
                      as_of: int | None = None, include_provisional: bool | None = None,
                      season: int | None = None) -> int:
        """Number of rated players with display rating (as of ``as_of``) in
        ``[min_rating, max_rating)``; the other filters as for :meth:`leaderboard`."""
        with read_txn(self.ctx.engine) as conn:
            src, view = self._source(conn, season, as_of)
            extra = ([] if active_since is None
                     else [src.table.c.last_contest_time >= int(active_since)])
            return count_rated(conn, src, view, extra=extra, min_rating=min_rating,
                               max_rating=max_rating,
                               hide_provisional=self._hide(view, include_provisional))

    def _lookups(self, handle: str) -> list[tuple[Any, str]]:
        """Where to look for ``handle``: ``(column, value)`` pairs, best first.

        The handle under the handle rules (:func:`~podium.core.guards.normalize_handle`;
        in a case-insensitive store its :func:`~podium.core.guards.handle_key`), then --
        for the handles a store written before the rules may hold -- the text as given.
        Nothing for text that no database can hold (a lone surrogate, a NUL).
        """
        p = self.ctx.tables.players
        if not isinstance(handle, str) or not storable_text(handle):
            return []
        try:
            norm: str | None = normalize_handle(handle)
        except HandleError:
            norm = None
        if self.ctx.case_insensitive_handles:
            return [] if norm is None else [(p.c.handle_key, handle_key(norm))]
        out: list[tuple[Any, str]] = [] if norm is None else [(p.c.handle, norm)]
        if norm != handle:
            out.append((p.c.handle, handle))
        return out

    def player(self, handle: str, *, as_of: int | None = None) -> PlayerView | None:
        """One rated player (None when unknown or never rated): the rating and rank as of
        ``as_of`` (default now), whether provisional, and the full history (each contest's
        stored values; a season's start as an entry of kind ``"season"``).

        ``handle`` is looked up under the handle rules (NFC, trimmed; in a store with
        case-insensitive handles, whatever its case), then as given.  The rank is among
        the players of the leaderboard (``None`` for a provisional player the ladder
        leaves out of it).
        """
        t = self.ctx.tables
        p, e, c, sn = t.players, t.events, t.contests, t.seasons
        with read_txn(self.ctx.engine) as conn:
            r = None
            for col, value in self._lookups(handle):
                r = conn.execute(select(p).where(col == value, p.c.contests >= 1)).first()
                if r is not None:
                    break
            if r is None:
                return None
            view = self._view(conn, as_of)
            mu, sigma, shown = view.values(np.array([float(r.mu)]), np.array([float(r.sigma)]),
                                           np.array([float(r.last_contest_time)]))
            provisional = bool(view.provisional([int(r.contests)], sigma)[0])
            hide = self._hide(view, None)
            rank = (None if hide and provisional else
                    rank_of(conn, self._live(), view, r.handle, float(shown[0]),
                            hide_provisional=hide))
            hist = conn.execute(
                select(c.c.cid, c.c.name, c.c.time_seconds, c.c.seq, c.c.players, e.c.mu,
                       e.c.sigma, e.c.display_rating, e.c.perf, e.c.change, e.c.place,
                       e.c.team, sn.c.number)
                .select_from(e.join(c, c.c.pk == e.c.contest_pk)
                             .outerjoin(sn, sn.c.contest_pk == c.c.pk))
                .where(e.c.player_pk == r.pk).order_by(c.c.seq)
            ).all()
        history = [
            HistoryRow(h.cid, h.name, int(h.time_seconds), int(h.seq), float(h.mu),
                       float(h.sigma), float(h.display_rating), float(h.perf), int(h.place),
                       float(h.change), int(h.players), h.team,
                       "contest" if h.number is None else "season")
            for h in hist
        ]
        return PlayerView(r.handle, float(mu[0]), float(sigma[0]), float(shown[0]),
                          int(r.contests), int(r.last_contest_time),
                          float(r.max_display_rating), float(r.last_change), rank, history,
                          provisional,
                          view.time if view.drifts or as_of is not None else None)

    def search_handles(self, prefix: str, limit: int = 10) -> list[str]:
        """Rated handles starting with ``prefix`` (case-insensitive), best rated first.

        The match is on the case-folded handle (``str.casefold``); ``_`` and ``%`` are
        plain characters.  Ties in rating go by handle.

        The handles with the prefix are a range of the ``handle_key`` index
        (:func:`prefix_upper_bound`).  When it holds at most ``SEARCH_RANGE_ROWS``
        handles (rare prefixes, ``tour``), they are read through that index and sorted
        by rating; otherwise (``a``) the players are walked best first, along the
        rating index, until ``limit`` of them match, which takes few rows when many
        match.  The size of the range is counted on the index first (at most
        ``SEARCH_RANGE_ROWS + 1`` entries).
        """
        self._check_page(0, limit)
        p = self.ctx.tables.players
        if not storable_text(prefix):
            return []
        key = unicodedata.normalize("NFC", prefix.lstrip()).casefold()
        with read_txn(self.ctx.engine) as conn:
            match: list[Any] = []
            if key:
                upper = prefix_upper_bound(key)
                match = [p.c.handle_key >= key]
                if upper is not None:
                    match.append(p.c.handle_key < upper)
                in_range = select(p.c.handle_key).where(*match).limit(SEARCH_RANGE_ROWS + 1)
                n = int(conn.execute(
                    select(func.count()).select_from(in_range.subquery())).scalar_one())
                if n > SEARCH_RANGE_ROWS:
                    # too many to read and sort: walk the rating index instead
                    match = [p.c.handle_key.startswith(key, autoescape=True)]
            q = (
                select(p.c.handle).where(p.c.contests >= 1, *match)
                .order_by(p.c.display_rating.desc(), p.c.handle.asc()).limit(limit)
            )
            return [r[0] for r in conn.execute(q).all()]

    def contest(self, contest_id: str, *, offset: int = 0,
                limit: int | None = None) -> ContestView | None:
        """One contest with its players' changes, in standings order (None if unknown);
        a team contest also with its teams (all of them, whatever the page).

        ``offset`` and ``limit`` select the standings rows ``offset .. offset + limit -
        1`` (0-based positions; ``limit`` ``None``: to the end): ``changes`` holds the
        changes of those rows (a row of an unrated contest has none) and
        ``total`` (equal to ``players``) the number of rows in all.

        The start of a season (kind ``"season"``) has no standings: its changes are the
        players' resets, best rated before it first (``lo`` and ``hi`` their rank then,
        0-based), paged the same way.
        """
        self._check_page(offset, 0 if limit is None else limit)
        t = self.ctx.tables
        c, st, p, e = t.contests, t.standings, t.players, t.events
        if not storable_text(contest_id):
            return None
        with read_txn(self.ctx.engine) as conn:
            row = conn.execute(select(c).where(c.c.cid == contest_id)).first()
            if row is None:
                return None
            number = conn.execute(select(t.seasons.c.number)
                                  .where(t.seasons.c.contest_pk == row.pk)).scalar()
            if number is not None:
                return self._season_view(conn, row, offset, limit)
            q = (
                select(p.c.handle, st.c.lo, st.c.hi, st.c.team, st.c.member_weight,
                       e.c.prev_display, e.c.display_rating, e.c.change, e.c.perf, e.c.mu,
                       e.c.sigma, e.c.debut)
                .select_from(st.join(p, p.c.pk == st.c.player_pk).outerjoin(
                    e, and_(e.c.contest_pk == st.c.contest_pk, e.c.player_pk == st.c.player_pk)))
                .where(st.c.contest_pk == row.pk)
            )
            whole = offset == 0 and (limit is None or limit >= int(row.players))
            if offset:
                q = q.where(st.c.pos >= offset)
            if limit is not None:
                q = q.where(st.c.pos < offset + limit)
            rows = conn.execute(q.order_by(st.c.pos)).all()
            team_rows: Sequence[Any] = rows
            if not whole and conn.execute(
                    select(st.c.team).where(st.c.contest_pk == row.pk, st.c.pos == 0)
            ).scalar() is not None:
                team_rows = conn.execute(
                    select(p.c.handle, st.c.lo, st.c.hi, st.c.team, st.c.member_weight)
                    .select_from(st.join(p, p.c.pk == st.c.player_pk))
                    .where(st.c.contest_pk == row.pk).order_by(st.c.pos)
                ).all()
        # an unrated contest (RatingSystem.skips_round) has no events: no changes, but its teams
        changes = [
            ContestChange(r.handle, int(r.lo), int(r.hi),
                          None if r.debut else float(r.prev_display), float(r.display_rating),
                          float(r.change), float(r.perf), float(r.mu), float(r.sigma), r.team,
                          None if r.member_weight is None else float(r.member_weight))
            for r in rows if r.display_rating is not None
        ]
        teams: list[ContestTeam] | None = None
        if team_rows and team_rows[0].team is not None:
            teams = []
            for r in team_rows:
                if not teams or teams[-1].name != r.team:
                    teams.append(ContestTeam(r.team, int(r.lo), int(r.hi), []))
                teams[-1].members.append(TeamMember(r.handle, float(r.member_weight)))
        return ContestView(row.cid, row.name, row.url, int(row.time_seconds), int(row.seq),
                           int(row.players), changes, bool(row.rated), float(row.weight),
                           None if row.perf_ceiling is None else float(row.perf_ceiling), teams,
                           offset=offset, limit=limit, total=int(row.players))

    def _season_view(self, conn: Connection, row: Any, offset: int,
                     limit: int | None) -> ContestView:
        """The start of a season as a :class:`ContestView` (see :meth:`contest`)."""
        t = self.ctx.tables
        e, p = t.events, t.players
        q = (select(p.c.handle, e.c.prev_display, e.c.display_rating, e.c.change, e.c.perf,
                    e.c.mu, e.c.sigma)
             .select_from(e.join(p, p.c.pk == e.c.player_pk)).where(e.c.contest_pk == row.pk)
             .order_by(e.c.prev_display.desc(), p.c.handle).offset(offset))
        if limit is not None:
            q = q.limit(limit)
        changes = [ContestChange(r.handle, offset + k, offset + k, float(r.prev_display),
                                 float(r.display_rating), float(r.change), float(r.perf),
                                 float(r.mu), float(r.sigma))
                   for k, r in enumerate(conn.execute(q).all())]
        return ContestView(row.cid, row.name, row.url, int(row.time_seconds), int(row.seq),
                           int(row.players), changes, True, float(row.weight), None, None,
                           offset=offset, limit=limit, total=int(row.players), kind="season")

    def contests(self, *, offset: int = 0, limit: int = 50) -> list[ContestSummary]:
        """Contests (and the starts of seasons, kind ``"season"``), newest first."""
        self._check_page(offset, limit)
        t = self.ctx.tables
        c, sn = t.contests, t.seasons
        q = (select(c.c.cid, c.c.name, c.c.url, c.c.time_seconds, c.c.seq, c.c.players,
                    sn.c.number)
             .select_from(c.outerjoin(sn, sn.c.contest_pk == c.c.pk))
             .order_by(c.c.seq.desc()).offset(offset).limit(limit))
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(q).all()
        return [ContestSummary(r.cid, r.name, r.url, int(r.time_seconds), int(r.seq),
                               int(r.players), "contest" if r.number is None else "season")
                for r in rows]

    def handle_spellings(self, handles: Iterable[str]) -> dict[str, str]:
        """``handle_key -> stored handle`` for the stored players whose case-insensitive
        key (:func:`~podium.core.guards.handle_key`) is that of one of ``handles``."""
        with read_txn(self.ctx.engine) as conn:
            return stored_spellings(conn, self.ctx.tables,
                                    [h for h in handles if storable_text(h)])

    def current_ratings(self, handles: Sequence[str], *,
                        as_of: int | None = None) -> dict[str, tuple[float, float, int]]:
        """``handle -> (mu, sigma, contests)`` of the rated players among ``handles``, as
        of ``as_of`` (default now: the prior the system would rate them from now).

        Each handle is looked up as :meth:`player` looks it up (under the handle rules,
        whatever its case in a case-insensitive store, then as given); the answer is
        keyed by the handles as given.
        """
        p = self.ctx.tables.players
        found: dict[str, tuple[float, float, int, int]] = {}
        wanted = list(dict.fromkeys(handles))
        # per pass (normalised handles, then the text as given): column -> value -> askers
        passes: list[dict[Any, dict[str, list[str]]]] = [{}, {}]
        for h in wanted:
            for k, (col, value) in enumerate(self._lookups(h)):
                passes[k].setdefault(col, {}).setdefault(value, []).append(h)
        with read_txn(self.ctx.engine) as conn:
            view = self._view(conn, as_of)
            for by_col in passes:
                for col, asked in by_col.items():
                    for chunk in chunks(list(asked)):
                        for r in conn.execute(
                            select(col, p.c.mu, p.c.sigma, p.c.contests, p.c.last_contest_time)
                            .where(col.in_(list(chunk)), p.c.contests >= 1)
                        ).all():
                            for h in asked[r[0]]:
                                found.setdefault(h, (float(r.mu), float(r.sigma),
                                                     int(r.contests), int(r.last_contest_time)))
        if not found or not view.drifts:
            return {h: v[:3] for h, v in found.items()}
        names = list(found)
        mu, sigma, _ = view.values(np.array([found[h][0] for h in names]),
                                   np.array([found[h][1] for h in names]),
                                   np.array([found[h][3] for h in names], dtype=np.float64))
        return {h: (float(m), float(s), found[h][2])
                for h, m, s in zip(names, mu.tolist(), sigma.tolist(), strict=True)}

    def stats(self) -> dict[str, Any]:
        """Counts and settings: players (rated), contests, events, last_contest_time,
        system, params, schema_version, plus handles, rated_contests, snapshots, epoch,
        revision, database, handle_policy (``exact`` or ``case-insensitive``), the ladder's
        name, its current season and its settings."""
        t = self.ctx.tables
        p, c, sn = t.players, t.contests, t.snapshots
        with read_txn(self.ctx.engine) as conn:
            n_players = conn.execute(
                select(func.count()).select_from(p).where(p.c.contests >= 1)).scalar_one()
            n_handles = conn.execute(select(func.count()).select_from(p)).scalar_one()
            agg = conn.execute(
                select(func.count(), func.max(c.c.time_seconds),
                       func.coalesce(func.sum(c.c.players).filter(c.c.rated.is_(True)), 0),
                       func.count().filter(c.c.rated.is_(True)))
            ).one()
            snaps = conn.execute(
                select(sn.c.head_count, sn.c.size).order_by(sn.c.head_count)).all()
            stored = meta_map(conn, t.meta)
            version = meta_map(conn).get("schema_version", "0")
            season = int(conn.execute(select(func.coalesce(func.max(t.seasons.c.number), 1)))
                         .scalar_one())
            settings = read_settings(conn, t)
        return {
            "players": int(n_players),
            "contests": int(agg[0]),
            "events": int(agg[2]),
            "last_contest_time": None if agg[1] is None else int(agg[1]),
            "system": self.ctx.system_name,
            "params": dict(self.ctx.params),
            "schema_version": int(version),
            "handles": int(n_handles),
            "rated_contests": int(agg[3]),
            "snapshots": [{"head_count": int(h), "bytes": int(s)} for h, s in snaps],
            "epoch": int(stored.get("epoch", 0)),
            "revision": int(stored.get("revision", 0)),
            "database": display_url(self.ctx.url),
            "handle_policy": stored.get("handle_policy", POLICY_EXACT),
            "ladder": self.ctx.ladder.name,
            "season": season,
            "settings": asdict(settings),
        }

    def ratings_frame(self) -> pd.DataFrame:
        """Every rated player's stored rating (after the last contest), in the format of
        :meth:`podium.rater.Rater.ratings`."""
        p = self.ctx.tables.players
        q = (select(p.c.handle, p.c.mu, p.c.sigma, p.c.display_rating, p.c.contests,
                    p.c.last_contest_time, p.c.max_display_rating, p.c.last_change)
             .where(p.c.contests >= 1)
             .order_by(p.c.display_rating.desc(), p.c.handle.asc()))
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(q).all()
        cols = ["handle", "mu", "sigma", "display_rating", "contests", "last_contest_time",
                "max_display_rating", "last_change"]
        df = pd.DataFrame([tuple(r) for r in rows], columns=cols)
        return df.astype({"handle": object, "mu": float, "sigma": float, "display_rating": float,
                          "contests": np.int64, "last_contest_time": np.int64,
                          "max_display_rating": float, "last_change": float})

    def lookup_contests(self, contest_ids: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        """``id -> (content_hash, index, name)`` of the stored contests among ``contest_ids``."""
        c = self.ctx.tables.contests
        out: dict[str, tuple[str, int, str]] = {}
        wanted = [cid for cid in dict.fromkeys(contest_ids) if storable_text(cid)]
        with read_txn(self.ctx.engine) as conn:
            for chunk in chunks(wanted):
                for r in conn.execute(
                    select(c.c.cid, c.c.content_hash, c.c.seq, c.c.name)
                    .where(c.c.cid.in_(list(chunk)))
                ).all():
                    out[r.cid] = (r.content_hash, int(r.seq), r.name)
        return out

    def latest_contest(self) -> ContestSummary | None:
        """The chronologically last stored contest (None for an empty store)."""
        rows = self.contests(limit=1)
        return rows[0] if rows else None

    def contest_ids(self) -> list[str]:
        """Every stored contest id in chronological order."""
        c = self.ctx.tables.contests
        with read_txn(self.ctx.engine) as conn:
            return [r[0] for r in conn.execute(select(c.c.cid).order_by(c.c.seq)).all()]
