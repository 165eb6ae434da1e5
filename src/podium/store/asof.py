"""Ratings as of a time, the provisional rule, and the leaderboard in as-of order.

A stored rating is the player's ``(mu, sigma)`` after the last contest.  Read *as of*
a time ``T`` (by default now), it is what the rating system believes at ``T``: the
system's time drift applied for the time since that contest
(:meth:`podium.systems.RatingSystem.drift`, the computation the system's own update
starts a round with), and the display rating of the result.  For a system without time
drift (most of them, and Elo-MMR with ``drift_per_day = 0``) the as-of values are the
stored ones, bit for bit.

:class:`RatingView` holds what a read needs (the system, the time, the ladder's
settings); :func:`read_time` checks the time asked for.  :func:`ranked_page`,
:func:`count_rated` and :func:`rank_of` read a table of ratings -- the ladder's
``players``, or a finished season's ``season_ratings`` -- described by a
:class:`RatingSource`:

* without drift (and without a provisional rule on ``sigma`` to leave players out by),
  they are the index reads of a store without ladders: the rating index in order;
* with drift the order is by as-of display rating, which drift only lowers.  The top
  of the as-of order is found by walking the players by ``mu`` (the index
  ``ix_players_mu``), best first, in growing chunks, until the as-of rating of the row
  the page needs last is above a bound of every row not read yet: the system's
  :meth:`~podium.systems.RatingSystem.as_of_bound` of the last ``mu`` read, for the
  smallest stored ``sigma`` (one read of ``ix_players_sigma``) drifted over the time
  since the latest contest.  The bound holds whatever the read time, so a top page
  needs the rows whose ``mu`` is within the page's as-of rating plus the drift penalty
  of the most certain player: 61 to 86 rows for a top 50 of the whole Codeforces
  history, from the latest contest to twenty years after it (one chunk of 100).  A
  page at offset ``n`` reads at least ``n + limit`` rows.  For a system without a
  bound every row is read.  Counts and ranks under drift read the rows that could
  count (a rating range: those rated at or above its lower end), as told by two
  bounds of the as-of rating: the stored rating, and the system's bound of ``mu``
  (a condition ``mu > mu_lo``).

The page is the rows of the full computation (every row's as-of rating, sorted), in
the same order with the same values: the walk only decides which rows to read, and
the values are :meth:`RatingView.values` of each row.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import ColumnElement, Connection, Table, func, select

from podium.store.common import fmt_time
from podium.store.ladders import LadderSettings
from podium.store.models import LeaderboardRow, StoreError
from podium.systems import RatingSystem

__all__ = ["AsOfError", "RatingView", "RatingSource", "read_time", "ranked_page",
           "count_rated", "rank_of", "FIRST_CHUNK", "PAGE_CHUNKS"]

FloatArray = npt.NDArray[np.float64]

#: Rows of the first chunk of a walk: at least ``FIRST_CHUNK`` and ``PAGE_CHUNKS`` times
#: the rows the page needs (each next chunk twice the last).
FIRST_CHUNK = 64
PAGE_CHUNKS = 2


class AsOfError(StoreError):
    """An ``as_of`` time a ladder cannot be read at (before its latest contest)."""


def read_time(requested: int | None, latest: int | None, now: float | None = None) -> int:
    """The time to read a ladder's ratings at: ``requested``, or by default now (or the
    latest contest's time if that is later: a store of scheduled contests).

    Raises
    ------
    AsOfError
        When ``requested`` is before the latest contest (``latest``): the stored
        ratings are after it, so a past time is read from the histories, or from a
        finished season's leaderboard.
    """
    if requested is None:
        t = int(time.time() if now is None else now)
        return t if latest is None or t >= latest else int(latest)
    if isinstance(requested, bool) or not isinstance(requested, int):
        raise AsOfError(f"as_of must be a unix time in seconds, got {requested!r}")
    if latest is not None and requested < latest:
        raise AsOfError(
            f"as_of {requested} ({fmt_time(requested)}) is before the latest contest "
            f"({fmt_time(latest)}): ratings are read as of a time at or after it (a "
            "past rating is in the player's history, a finished season's in ?season=)")
    return int(requested)


@dataclass(frozen=True)
class RatingView:
    """How a ladder's ratings are read: its system, as of ``time`` (unix seconds), with
    its settings' provisional rule (``latest``: the time of its latest contest)."""

    system: RatingSystem
    time: int
    settings: LadderSettings
    #: The time of the latest contest of the ratings read (no row's last contest is
    #: later), so that every row has drifted at least ``time - latest``; ``None``: not
    #: known (no less than no time).
    latest: int | None = None

    @property
    def drifts(self) -> bool:
        """Whether reading as of :attr:`time` can change a stored rating."""
        return self.system.has_time_drift

    def values(self, mu: FloatArray, sigma: FloatArray,
               last: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(mu, sigma, display rating)`` as of :attr:`time` of players rated ``(mu,
        sigma)`` after their last contest at ``last`` (the stored values when the system
        has no time drift)."""
        mu = np.asarray(mu, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        if self.drifts:
            elapsed = self.time - np.asarray(last, dtype=np.float64)
            mu, sigma = self.system.drift(mu, sigma, np.maximum(elapsed, 0.0))
        shown = np.asarray(self.system.display_rating(mu, sigma), dtype=np.float64)
        return mu, sigma, shown

    def provisional(self, contests: npt.ArrayLike, sigma: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """The ladder's provisional rule on as-of ``sigma``."""
        return self.settings.provisional(contests, sigma)


@dataclass(frozen=True)
class RatingSource:
    """A table of ratings -- ``players``, or ``season_ratings`` of one season -- and the
    conditions that select its rated rows.  Its columns ``handle``, ``mu``, ``sigma``,
    ``display_rating``, ``contests``, ``last_contest_time``, ``max_display_rating`` and
    ``last_change`` are read."""

    table: Table
    where: tuple[ColumnElement[bool], ...]

    def cols(self) -> tuple[Any, ...]:
        """The columns a page reads, in this order (rows are read by position)."""
        c = self.table.c
        return (c.handle, c.display_rating, c.mu, c.sigma, c.contests, c.last_contest_time,
                c.max_display_rating, c.last_change)


def _hides(view: RatingView, hide: bool) -> tuple[bool, bool]:
    """Whether leaving provisional players out needs ``(a contests filter, a sigma
    test)``."""
    s = view.settings
    return (hide and s.provisional_contests > 0,
            hide and s.provisional_sigma is not None)


def _conds(src: RatingSource, view: RatingView, hide: bool, min_contests: int,
           sql_sigma: bool) -> list[ColumnElement[bool]]:
    c = src.table.c
    conds: list[ColumnElement[bool]] = list(src.where)
    need = max(int(min_contests), 1)
    by_contests, by_sigma = _hides(view, hide)
    if by_contests:
        need = max(need, view.settings.provisional_contests)
    if need > 1:
        conds.append(c.contests >= need)
    if by_sigma and sql_sigma:
        conds.append(c.sigma <= float(view.settings.provisional_sigma or 0.0))
    return conds


def _rows(rows: Sequence[Any], view: RatingView, first_rank: int, mu: FloatArray,
          sigma: FloatArray, shown: FloatArray) -> list[LeaderboardRow]:
    """The leaderboard rows of ``rows`` (columns of :meth:`RatingSource.cols`) with
    their as-of values, ranked from ``first_rank``."""
    prov = view.provisional([int(r[4]) for r in rows], sigma).tolist()
    return [
        LeaderboardRow(first_rank + k, r[0], s, m, sg, int(r[4]), int(r[5]), float(r[6]),
                       float(r[7]), p)
        for k, (r, s, m, sg, p) in enumerate(zip(rows, shown.tolist(), mu.tolist(),
                                                 sigma.tolist(), prov, strict=True))
    ]


def _as_of(rows: Sequence[Any], view: RatingView) -> tuple[FloatArray, FloatArray, FloatArray]:
    return view.values(np.array([float(r.mu) for r in rows]),
                       np.array([float(r.sigma) for r in rows]),
                       np.array([int(r.last_contest_time) for r in rows], dtype=np.float64))


def ranked_page(conn: Connection, src: RatingSource, view: RatingView, *, offset: int,
                limit: int, extra: Sequence[ColumnElement[bool]] = (), min_contests: int = 1,
                hide_provisional: bool = False) -> list[LeaderboardRow]:
    """Rows ``offset .. offset + limit - 1`` of the leaderboard of ``src`` as of
    ``view.time``: by as-of display rating, best first, ties by handle (``extra``: more
    conditions, e.g. the activity window); without the provisional players when
    ``hide_provisional`` (see the module notes for how it is read)."""
    table = src.table.c
    order = (table.display_rating.desc(), table.handle.asc())
    _, by_sigma = _hides(view, hide_provisional)
    if not view.drifts:
        conds = [*_conds(src, view, hide_provisional, min_contests, True), *extra]
        rows = conn.execute(select(*src.cols()).where(*conds).order_by(*order)
                            .offset(offset).limit(limit)).all()
        if not rows:
            return []
        return _rows(rows, view, offset + 1, *_as_of(rows, view))
    conds = [*_conds(src, view, hide_provisional, min_contests, False), *extra]
    need = offset + limit
    floor = _floor(conn, src) if need else None
    if floor is None:
        return []
    rows, mu, sigma, shown = _walk(conn, src, view, conds, need, by_sigma, floor)
    if len(rows) > need:  # the rows rated at least the need-th best (ties: all of them)
        cut = np.partition(shown, len(rows) - need)[len(rows) - need]
        keep = np.flatnonzero(shown >= cut).tolist()
    else:
        keep = list(range(len(rows)))
    page = sorted(keep, key=lambda i: (-shown[i], rows[i][0]))[offset:need]
    return _rows([rows[i] for i in page], view, offset + 1, mu[page], sigma[page], shown[page])


def _floor(conn: Connection, src: RatingSource) -> float | None:
    """The smallest stored ``sigma`` of ``src`` (one read of its index; ``None``: no
    rated row)."""
    c = src.table.c
    smin = conn.execute(select(c.sigma).where(*src.where, c.sigma.is_not(None))
                        .order_by(c.sigma.asc()).limit(1)).scalar()
    return None if smin is None else float(smin)


def _walk(conn: Connection, src: RatingSource, view: RatingView,
          conds: Sequence[ColumnElement[bool]], need: int, by_sigma: bool,
          sigma_min: float) -> tuple[list[Any], FloatArray, FloatArray, FloatArray]:
    """The rows of ``src`` read by ``mu``, best first, in growing chunks, until no row
    left can reach the first ``need`` of the as-of order (see the module notes; every
    row when the system gives no bound), without the provisional ones when
    ``by_sigma``: the rows and their as-of ``mu``, ``sigma`` and display rating."""
    c = src.table.c
    elapsed = 0.0 if view.latest is None else float(max(view.time - view.latest, 0))
    got: list[tuple[list[Any], FloatArray, FloatArray, FloatArray]] = []
    read = 0  # rows kept so far
    chunk = max(FIRST_CHUNK, PAGE_CHUNKS * need)
    below: float | None = None
    seen: set[str] = set()  # the rows read with mu == below (a tie the next chunk repeats)
    while True:
        q = select(*src.cols()).where(*conds)
        if below is not None:
            q = q.where(c.mu <= below)
        rows = conn.execute(q.order_by(c.mu.desc(), c.handle.asc()).limit(chunk)).all()
        fresh = [r for r in rows if r[0] not in seen] if seen else rows
        if fresh:
            cols = list(zip(*fresh, strict=True))
            mu, sigma, shown = view.values(np.array(cols[2], dtype=np.float64),
                                           np.array(cols[3], dtype=np.float64),
                                           np.array(cols[5], dtype=np.float64))
            if by_sigma:
                ok = ~view.provisional(np.array(cols[4], dtype=np.int64), sigma)
                fresh = [r for r, k in zip(fresh, ok.tolist(), strict=True) if k]
                mu, sigma, shown = mu[ok], sigma[ok], shown[ok]
            got.append((list(fresh), mu, sigma, shown))
            read += len(fresh)
        if len(rows) < chunk:
            break  # every row read
        below = float(rows[-1][2])
        bound = view.system.as_of_bound(np.array([below]), sigma_min, elapsed)
        if bound is not None and read >= need:
            every = np.concatenate([g[3] for g in got])
            kth = float(np.partition(every, read - need)[read - need])
            top = float(bound[0])
            if kth > top + 1e-9 * max(1.0, abs(top)):  # no row left can reach the page
                break
        seen = {r[0] for r in rows if float(r[2]) == below}
        chunk *= 2
    if not got:
        empty = np.zeros(0)
        return [], empty, empty, empty
    return ([r for g in got for r in g[0]], np.concatenate([g[1] for g in got]),
            np.concatenate([g[2] for g in got]), np.concatenate([g[3] for g in got]))


def _scan(conn: Connection, src: RatingSource, conds: Sequence[ColumnElement[bool]],
          chunk: int = 50_000) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray,
                                        list[str], np.ndarray]:
    """Every selected row's ``mu, sigma, last_contest_time, stored display, handle,
    contests``, read in key order by chunks."""
    c = src.table.c
    mus: list[float] = []
    sgs: list[float] = []
    lasts: list[float] = []
    disp: list[float] = []
    names: list[str] = []
    cnt: list[int] = []
    for r in conn.execute(select(c.mu, c.sigma, c.last_contest_time, c.display_rating,
                                 c.handle, c.contests).where(*conds)
                          .execution_options(yield_per=chunk)):
        mus.append(r[0])
        sgs.append(r[1])
        lasts.append(r[2])
        disp.append(r[3])
        names.append(r[4])
        cnt.append(r[5])
    return (np.array(mus, dtype=np.float64), np.array(sgs, dtype=np.float64),
            np.array(lasts, dtype=np.float64), np.array(disp, dtype=np.float64), names,
            np.array(cnt, dtype=np.int64))


def _reaching(conn: Connection, src: RatingSource, view: RatingView,
              value: float) -> list[ColumnElement[bool]]:
    """Conditions that every row of ``src`` rated ``value`` or more as of the view's
    time meets, when the system gives a bound
    (:meth:`~podium.systems.RatingSystem.as_of_bound`; none otherwise): a stored
    display rating of ``value`` or more (drift only lowers it: the bound of a row's own
    ``mu`` and ``sigma`` with no time elapsed is its stored rating), and ``mu > mu_lo``,
    where the bound of ``mu_lo`` -- which bounds every row with a smaller ``mu`` too --
    is below ``value``."""
    sigma_min = _floor(conn, src)
    if sigma_min is None:
        return []
    c = src.table.c
    stored = c.display_rating >= value
    elapsed = 0.0 if view.latest is None else float(max(view.time - view.latest, 0))
    at_zero = view.system.as_of_bound(np.zeros(1), sigma_min, elapsed)
    if at_zero is None:
        return []
    mu_lo = value - float(at_zero[0]) - 1e-6 * max(1.0, abs(value))  # a guess, checked
    bound = view.system.as_of_bound(np.array([mu_lo]), sigma_min, elapsed)
    if bound is None or not float(bound[0]) < value:
        return [stored]
    return [stored, c.mu > mu_lo]


def count_rated(conn: Connection, src: RatingSource, view: RatingView, *,
                extra: Sequence[ColumnElement[bool]] = (), min_rating: float | None = None,
                max_rating: float | None = None, hide_provisional: bool = False) -> int:
    """How many rows of ``src`` have an as-of display rating in ``[min_rating,
    max_rating)`` (either end open when ``None``), without the provisional players when
    ``hide_provisional``."""
    c = src.table.c
    _, by_sigma = _hides(view, hide_provisional)
    if not view.drifts:
        conds = [*_conds(src, view, hide_provisional, 1, True), *extra]
        if min_rating is not None:
            conds.append(c.display_rating >= float(min_rating))
        if max_rating is not None:
            conds.append(c.display_rating < float(max_rating))
        return int(conn.execute(select(func.count()).select_from(src.table)
                                .where(*conds)).scalar_one())
    conds = [*_conds(src, view, hide_provisional, 1, False), *extra]
    if not by_sigma and min_rating is None and max_rating is None:
        return int(conn.execute(select(func.count()).select_from(src.table)
                                .where(*conds)).scalar_one())
    if min_rating is not None:  # only these can reach the range
        conds += _reaching(conn, src, view, float(min_rating))
    mu, sigma, last, _, _, contests = _scan(conn, src, conds)
    _, sg, shown = view.values(mu, sigma, last)
    ok = np.ones(shown.size, dtype=bool)
    if min_rating is not None:
        ok &= shown >= float(min_rating)
    if max_rating is not None:
        ok &= shown < float(max_rating)
    if by_sigma:
        ok &= ~view.provisional(contests, sg)
    return int(ok.sum())


def rank_of(conn: Connection, src: RatingSource, view: RatingView, handle: str,
            shown: float, *, hide_provisional: bool = False) -> int:
    """The 1-based rank of ``handle``, whose as-of display rating is ``shown``: one plus
    the rows rated above it as of the view's time (ties: handles before it)."""
    c = src.table.c
    _, by_sigma = _hides(view, hide_provisional)
    if not view.drifts:
        conds = _conds(src, view, hide_provisional, 1, True)
        above = select(func.count()).select_from(src.table)
        better = int(conn.execute(above.where(*conds, c.display_rating > shown)).scalar_one())
        better += int(conn.execute(above.where(*conds, c.display_rating == shown,
                                               c.handle < handle)).scalar_one())
        return better + 1
    conds = [*_conds(src, view, hide_provisional, 1, False),
             *_reaching(conn, src, view, float(shown))]
    mu, sigma, last, _, names, contests = _scan(conn, src, conds)
    _, sg, values = view.values(mu, sigma, last)
    ok = np.ones(values.size, dtype=bool)
    if by_sigma:
        ok &= ~view.provisional(contests, sg)
    hand = np.array(names, dtype=object)
    above = (values > shown) | ((values == shown) & (hand < handle))
    return int((above & ok).sum()) + 1
