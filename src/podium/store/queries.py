"""Reading a store (the query service of :class:`~podium.store.Store`).

Every method runs in one read transaction (:func:`podium.store.engine.read_txn`),
so it sees one committed state and never half of a contest, and returns the
frozen dataclasses of :mod:`podium.store.models` with unrounded floats.
Rated players are those whose ``display_rating`` is set (it is NULL until their
first rated contest), so that counts and rankings read the rating index alone.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import ColumnElement, Connection, and_, func, select

import podium.store.schema as S
from podium.core.guards import HandleError, handle_key, normalize_handle, storable_text
from podium.store.common import (
    POLICY_EXACT,
    StoreContext,
    chunks,
    meta_map,
    prefix_upper_bound,
)
from podium.store.engine import display_url, read_txn
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


def stored_spellings(conn: Connection, handles: Iterable[str]) -> dict[str, str]:
    """``handle_key -> stored handle`` of the stored players whose key is that of one of
    ``handles`` (:func:`~podium.core.guards.handle_key`)."""
    p = S.players
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

    # ------------------------------------------------------------------ reading
    def _rated_filter(self, *, min_contests: int = 1, active_since: int | None = None,
                      min_rating: float | None = None,
                      max_rating: float | None = None) -> list[Any]:
        p = S.players
        # A player is rated (contests >= 1) exactly when display_rating is set: it is
        # NULL until the first rated contest (see schema.players).  Testing the indexed
        # column lets counts and deep leaderboard pages read the rating index alone.
        conds: list[ColumnElement[bool]]
        if min_contests <= 1:
            conds = [p.c.display_rating.is_not(None)]
        else:
            conds = [p.c.contests >= int(min_contests)]
        if active_since is not None:
            conds.append(p.c.last_contest_time >= int(active_since))
        if min_rating is not None:
            conds.append(p.c.display_rating >= float(min_rating))
        if max_rating is not None:
            conds.append(p.c.display_rating < float(max_rating))
        return conds

    @staticmethod
    def _check_page(offset: int, limit: int) -> None:
        if offset < 0 or limit < 0:
            raise StoreError(f"offset and limit must be >= 0 (got offset={offset}, limit={limit})")

    def leaderboard(self, *, offset: int = 0, limit: int = 50, active_since: int | None = None,
                    min_contests: int = 1) -> list[LeaderboardRow]:
        """Rated players by display rating, best first (ties: handle ascending).

        ``active_since`` keeps players whose last contest is at or after that time;
        ``rank`` is 1-based within the filtered set.
        """
        self._check_page(offset, limit)
        p = S.players
        q = (
            select(p.c.handle, p.c.display_rating, p.c.mu, p.c.sigma, p.c.contests,
                   p.c.last_contest_time, p.c.max_display_rating, p.c.last_change)
            .where(*self._rated_filter(min_contests=min_contests, active_since=active_since))
            .order_by(p.c.display_rating.desc(), p.c.handle.asc())
            .offset(offset).limit(limit)
        )
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(q).all()
        return [
            LeaderboardRow(offset + k + 1, r.handle, float(r.display_rating), float(r.mu),
                           float(r.sigma), int(r.contests), int(r.last_contest_time),
                           float(r.max_display_rating), float(r.last_change))
            for k, r in enumerate(rows)
        ]

    def count_players(self, *, min_rating: float | None = None,
                      max_rating: float | None = None, active_since: int | None = None) -> int:
        """Number of rated players with display rating in ``[min_rating, max_rating)``."""
        p = S.players
        q = select(func.count()).select_from(p).where(*self._rated_filter(
            active_since=active_since, min_rating=min_rating, max_rating=max_rating))
        with read_txn(self.ctx.engine) as conn:
            return int(conn.execute(q).scalar_one())

    def _lookups(self, handle: str) -> list[tuple[Any, str]]:
        """Where to look for ``handle``: ``(column, value)`` pairs, best first.

        The handle under the handle rules (:func:`~podium.core.guards.normalize_handle`;
        in a case-insensitive store its :func:`~podium.core.guards.handle_key`), then --
        for the handles a store written before the rules may hold -- the text as given.
        Nothing for text that no database can hold (a lone surrogate, a NUL).
        """
        p = S.players
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

    def player(self, handle: str) -> PlayerView | None:
        """One rated player (None when unknown or never rated), rank and full history.

        ``handle`` is looked up under the handle rules (NFC, trimmed; in a store with
        case-insensitive handles, whatever its case), then as given.
        """
        p, e, c = S.players, S.events, S.contests
        with read_txn(self.ctx.engine) as conn:
            r = None
            for col, value in self._lookups(handle):
                r = conn.execute(select(p).where(col == value, p.c.contests >= 1)).first()
                if r is not None:
                    break
            if r is None:
                return None
            # the rated players ranked above: two counts over the rating index alone
            # (display_rating is NULL exactly for the unrated ones)
            above = select(func.count()).select_from(p)
            better = int(conn.execute(
                above.where(p.c.display_rating > r.display_rating)).scalar_one())
            better += int(conn.execute(above.where(
                p.c.display_rating == r.display_rating, p.c.handle < r.handle)).scalar_one())
            hist = conn.execute(
                select(c.c.cid, c.c.name, c.c.time_seconds, c.c.seq, c.c.players, e.c.mu,
                       e.c.sigma, e.c.display_rating, e.c.perf, e.c.change, e.c.place,
                       e.c.team)
                .select_from(e.join(c, c.c.pk == e.c.contest_pk))
                .where(e.c.player_pk == r.pk).order_by(c.c.seq)
            ).all()
        history = [
            HistoryRow(h.cid, h.name, int(h.time_seconds), int(h.seq), float(h.mu),
                       float(h.sigma), float(h.display_rating), float(h.perf), int(h.place),
                       float(h.change), int(h.players), h.team)
            for h in hist
        ]
        return PlayerView(r.handle, float(r.mu), float(r.sigma), float(r.display_rating),
                          int(r.contests), int(r.last_contest_time),
                          float(r.max_display_rating), float(r.last_change), int(better) + 1,
                          history)

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
        p = S.players
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
        """
        self._check_page(offset, 0 if limit is None else limit)
        c, st, p, e = S.contests, S.standings, S.players, S.events
        if not storable_text(contest_id):
            return None
        with read_txn(self.ctx.engine) as conn:
            row = conn.execute(select(c).where(c.c.cid == contest_id)).first()
            if row is None:
                return None
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

    def contests(self, *, offset: int = 0, limit: int = 50) -> list[ContestSummary]:
        """Contests, newest first."""
        self._check_page(offset, limit)
        c = S.contests
        q = (select(c.c.cid, c.c.name, c.c.url, c.c.time_seconds, c.c.seq, c.c.players)
             .order_by(c.c.seq.desc()).offset(offset).limit(limit))
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(q).all()
        return [ContestSummary(r.cid, r.name, r.url, int(r.time_seconds), int(r.seq),
                               int(r.players)) for r in rows]

    def handle_spellings(self, handles: Iterable[str]) -> dict[str, str]:
        """``handle_key -> stored handle`` for the stored players whose case-insensitive
        key (:func:`~podium.core.guards.handle_key`) is that of one of ``handles``."""
        with read_txn(self.ctx.engine) as conn:
            return stored_spellings(conn, [h for h in handles if storable_text(h)])

    def current_ratings(self, handles: Sequence[str]) -> dict[str, tuple[float, float, int]]:
        """``handle -> (mu, sigma, contests)`` of the rated players among ``handles``.

        Each handle is looked up as :meth:`player` looks it up (under the handle rules,
        whatever its case in a case-insensitive store, then as given); the answer is
        keyed by the handles as given.
        """
        p = S.players
        out: dict[str, tuple[float, float, int]] = {}
        wanted = list(dict.fromkeys(handles))
        # per pass (normalised handles, then the text as given): column -> value -> askers
        passes: list[dict[Any, dict[str, list[str]]]] = [{}, {}]
        for h in wanted:
            for k, (col, value) in enumerate(self._lookups(h)):
                passes[k].setdefault(col, {}).setdefault(value, []).append(h)
        with read_txn(self.ctx.engine) as conn:
            for by_col in passes:
                for col, asked in by_col.items():
                    for chunk in chunks(list(asked)):
                        for r in conn.execute(
                            select(col, p.c.mu, p.c.sigma, p.c.contests)
                            .where(col.in_(list(chunk)), p.c.contests >= 1)
                        ).all():
                            for h in asked[r[0]]:
                                out.setdefault(h, (float(r.mu), float(r.sigma),
                                                   int(r.contests)))
        return out

    def stats(self) -> dict[str, Any]:
        """Counts and settings: players (rated), contests, events, last_contest_time,
        system, params, schema_version, plus handles, rated_contests, snapshots, epoch,
        revision, database and handle_policy (``exact`` or ``case-insensitive``)."""
        p, c, sn = S.players, S.contests, S.snapshots
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
            stored = meta_map(conn)
        return {
            "players": int(n_players),
            "contests": int(agg[0]),
            "events": int(agg[2]),
            "last_contest_time": None if agg[1] is None else int(agg[1]),
            "system": self.ctx.system_name,
            "params": dict(self.ctx.params),
            "schema_version": int(stored.get("schema_version", 0)),
            "handles": int(n_handles),
            "rated_contests": int(agg[3]),
            "snapshots": [{"head_count": int(h), "bytes": int(s)} for h, s in snaps],
            "epoch": int(stored.get("epoch", 0)),
            "revision": int(stored.get("revision", 0)),
            "database": display_url(self.ctx.url),
            "handle_policy": stored.get("handle_policy", POLICY_EXACT),
        }

    def ratings_frame(self) -> pd.DataFrame:
        """Every rated player, in the format of :meth:`podium.rater.Rater.ratings`."""
        p = S.players
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
        c = S.contests
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
        c = S.contests
        with read_txn(self.ctx.engine) as conn:
            return [r[0] for r in conn.execute(select(c.c.cid).order_by(c.c.seq)).all()]
