"""The performance equation of Theorem 3.2 ([EbtekarLiu2021]), solved for every tie group.

The performance of player ``i`` is the zero of ``Q_i``, a sum over every opponent term
``j`` -- including ``i``'s own -- of a loss term ``l_j`` if ``j`` placed strictly
better, a win term ``v_j`` if strictly worse and a tie term ``d_j`` if tied.  Players
of one tie group share ``Q``, so there is one zero per group.  The terms and their
sums are :mod:`podium.core.numerics.terms`'s (logistic, :data:`LOGISTIC`, or
Gaussian, :data:`GAUSSIAN`); identical terms are evaluated once
(:func:`~podium.core.numerics.terms.merge_identical`), which changes no number.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    panel_grid,
    panel_span,
    panel_zero,
)
from podium.core.numerics.constants import COUNTED_FROM, GAUSSIAN, LOGISTIC
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import TANH_MULTIPLIER
from podium.core.numerics.terms import (
    DistinctTerms,
    OpponentTerms,
    TieGroups,
    counted_terms,
    group_sums_at,
    merge_identical,
    model_terms,
    term_values_at,
)

__all__ = [
    "SWEEP_BLOCKS",
    "SUM_CHUNK",
    "COUNTED_FROM",
    "COUNTED_WORK",
    "solve_direct",
    "solve_merged",
    "node_sweep",
    "panel_values",
    "n_unsolved",
    "performance_zeros",
]

#: :func:`node_sweep` hands its points to the threads in at most this many blocks; a
#: block reads the groups once for all of its points.
SWEEP_BLOCKS = 8
#: :func:`node_sweep` sums the terms of this many groups at a time
#: (:func:`~podium.core.numerics.terms.group_sums_at`), then runs its prefix sums over them.
SUM_CHUNK = 256
#: Rounds of at least :data:`COUNTED_FROM` players (in
#: :mod:`~podium.core.numerics.constants`) solve each group's equation over the
#: distinct terms times their counts (:func:`_counted_zeros`) when ``distinct terms *
#: groups <= COUNTED_WORK * players``; smaller rounds keep the panels (their numbers
#: unchanged).  A counted solve
#: costs about a dozen Newton steps of one term evaluation per distinct term and group,
#: the panels about 300 sums over every player.
COUNTED_WORK = 8
#: The groups placed on one panel are handed to the threads in at most this many
#: ranges (:func:`_place_groups`), one call each.
_PLACE_RANGES = 256


@nb.njit(cache=True)
def solve_direct(kind: int, terms: OpponentTerms, groups: TieGroups, g: int | np.int64,
                  split_ties: bool) -> tuple[float, int]:
    """Zero of ``Q_g`` by Newton on the direct ``O(N)`` sum of ``Q_g(x)`` and
    ``Q_g'(x)`` for tie group ``g``, from the group's mean centre."""
    mu, pa, pb = terms
    a = groups.start[g]
    b = groups.end[g]
    s = 0.0
    for j in range(a, b):
        s += mu[j]
    state = newton_begin(LO_BOUND, HI_BOUND, s / (b - a))
    while state.running:
        # summed in this loop rather than by a function of the term arrays: each call
        # would count references to them (atomic operations that cost more than the
        # sum over a round of eight)
        x = state.x
        q = 0.0
        qp = 0.0
        for j in range(mu.size):
            lv, lp, wv, wp, dv, dp = model_terms(kind, x, mu[j], pa[j], pb[j], split_ties)
            if j < a:
                q += lv
                qp += lp
            elif j >= b:
                q += wv
                qp += wp
            else:
                q += dv
                qp += dp
        state = newton_next(state, q, qp)
    return state.x, state.status


@nb.njit(cache=True)
def solve_merged(kind: int, terms: DistinctTerms, groups: TieGroups, g: int | np.int64,
                 split_ties: bool) -> tuple[float, int]:
    """:func:`solve_direct` over merged terms (``terms.of`` not empty): each Newton
    step evaluates every distinct term once and adds its values for every copy, in
    the order :func:`solve_direct` adds them -- the same zero, bit for bit, with
    ``O(U)`` term evaluations and ``O(N)`` additions per step."""
    of = terms.of
    mu, pa, pb = terms.terms
    n = of.size
    a = groups.start[g]
    b = groups.end[g]
    s = 0.0
    for j in range(a, b):
        s += mu[of[j]]
    vals = np.empty((mu.size, 6))
    state = newton_begin(LO_BOUND, HI_BOUND, s / (b - a))
    while state.running:
        x = state.x
        for u in range(mu.size):
            lv, lp, wv, wp, dv, dp = model_terms(kind, x, mu[u], pa[u], pb[u], split_ties)
            vals[u, 0] = lv
            vals[u, 1] = lp
            vals[u, 2] = wv
            vals[u, 3] = wp
            vals[u, 4] = dv
            vals[u, 5] = dp
        q = 0.0
        qp = 0.0
        for j in range(a):  # better groups: losses
            q += vals[of[j], 0]
            qp += vals[of[j], 1]
        for j in range(a, b):  # the group itself: ties
            q += vals[of[j], 4]
            qp += vals[of[j], 5]
        for j in range(b, n):  # worse groups: wins
            q += vals[of[j], 2]
            qp += vals[of[j], 3]
        state = newton_next(state, q, qp)
    return state.x, state.status


@nb.njit(cache=True)
def _sweep_points(kind: int, xs: np.ndarray, terms: DistinctTerms, groups: TieGroups,
                  split_ties: bool, wsum: np.ndarray, g0: int | np.int64, g1: int, q: np.ndarray,
                  v: np.ndarray) -> None:
    """:func:`node_sweep` of the points ``xs`` (rows of ``q`` and ``v``), in one thread."""
    K = xs.size
    G = groups.start.size
    U = terms.terms.mu.size if terms.of.size else 0
    values = np.empty((3, K, U))
    if U:
        term_values_at(kind, xs, terms.terms, split_ties, values)
    sl = np.empty((K, SUM_CHUNK))
    sw = np.empty((K, SUM_CHUNK))
    sd = np.empty((K, SUM_CHUNK))
    acc = np.zeros(K)
    # losses against every better group, ties inside (for the groups up to g1)
    for c0 in range(0, g1, SUM_CHUNK):
        c1 = min(g1, c0 + SUM_CHUNK)
        group_sums_at(kind, xs, terms, values, groups, wsum, c0, c1, split_ties, sl, sw, sd)
        for g in range(c0, min(c1, g0)):
            for k in range(K):
                acc[k] += sl[k, g - c0]
        for g in range(max(c0, g0), c1):
            for k in range(K):
                q[k, g - g0] = acc[k] + sd[k, g - c0]
                v[k, g - g0] = sw[k, g - c0]
                acc[k] += sl[k, g - c0]
    # wins against every worse group: the groups past g1 first, then those kept
    for k in range(K):
        acc[k] = 0.0
    c1 = G
    while c1 > g1:
        c0 = max(g1, c1 - SUM_CHUNK)
        group_sums_at(kind, xs, terms, values, groups, wsum, c0, c1, split_ties, sl, sw, sd)
        for g in range(c1 - 1, c0 - 1, -1):
            for k in range(K):
                acc[k] += sw[k, g - c0]
        c1 = c0
    for g in range(g1 - 1, g0 - 1, -1):
        for k in range(K):
            q[k, g - g0] += acc[k]
            acc[k] += v[k, g - g0]


@nb.njit(cache=True, parallel=True)
def node_sweep(kind: int, xs: np.ndarray, terms: DistinctTerms, groups: TieGroups,
               split_ties: bool, wsum: np.ndarray, g0: int | np.int64, g1: int, q: np.ndarray,
               v: np.ndarray) -> None:
    """``Q_g(x)`` at every point ``xs[k]`` for the groups ``g0 <= g < g1``: ``q[k, g - g0]``.

    ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` where ``L_h, V_h, D_h`` are the
    sums of the loss, win and tie terms of group ``h``
    (:func:`~podium.core.numerics.terms.group_sums_at`; ``wsum[h]`` is the group's
    total ``w_out``, logistic kind).  Every group enters the prefix sums, in rank
    order, but only the asked range is stored, so a sweep over a few groups of a
    large round needs little memory; each group's sums are computed once per point.
    ``v`` is scratch of ``q``'s shape.  The points go to the threads in blocks of
    consecutive points (:data:`SWEEP_BLOCKS`), each block reading the groups once.
    ``kind`` is a literal (see :func:`~podium.core.numerics.terms.model_terms`).
    """
    nx = xs.size
    blocks = min(nx, SWEEP_BLOCKS)
    of = terms.of  # a parallel loop takes no nested tuple: rebuilt inside
    mu, pa, pb = terms.terms
    for blk in nb.prange(blocks):
        k0 = blk * nx // blocks
        k1 = (blk + 1) * nx // blocks
        _sweep_points(kind, xs[k0:k1], DistinctTerms(of, OpponentTerms(mu, pa, pb)), groups,
                      split_ties, wsum, g0, g1, q[k0:k1], v[k0:k1])


@nb.njit(cache=True)
def panel_values(kind: int, c: float, r: float, tnodes: np.ndarray, terms: DistinctTerms,
                 groups: TieGroups, split_ties: bool, wsum: np.ndarray, Qv: np.ndarray,
                 Vs: np.ndarray) -> None:
    """:func:`node_sweep` of every group at every node ``c + r tnodes[j]`` of a panel:
    ``Qv[j, g]`` (``Vs``: scratch of the same shape)."""
    xs = np.empty(tnodes.size)
    for jj in range(tnodes.size):
        xs[jj] = c + r * tnodes[jj]
    node_sweep(kind, xs, terms, groups, split_ties, wsum, np.int64(0), groups.start.size, Qv,
               Vs)


@nb.njit(cache=True)
def n_unsolved(solved: np.ndarray) -> int:
    """How many entries of the mask ``solved`` are false (those left to a direct solve)."""
    k = 0
    for s in solved:
        if not s:
            k += 1
    return k


def performance_zeros(kind: int, terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                      min_spread: float, direct_groups: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Performance of every tie group: the zero of ``Q_g`` (Theorem 3.2), exactly.

    Parameters
    ----------
    kind:
        :data:`LOGISTIC` or :data:`GAUSSIAN`.
    terms:
        The opponent terms in standings order (best first).
    groups:
        The tie groups, best first.
    split_ties:
        Count a tie as half a win and half a loss (else as the tie term ``d_j``).
    min_spread:
        The smallest ``delta`` of the round.  The complex singularities of
        every term lie at least ``sqrt(3) * delta_min`` from the real axis
        (tanh poles; the zeros of the normal CDF are farther, ``~2.8 delta``),
        which sets the panel width of the interpolation below.
    direct_groups:
        Rounds with at most this many tie groups are solved directly.

    Notes
    -----
    Every ``Q_g`` is a sum over all ``N`` terms, so solving each of the ``G``
    groups directly costs ``O(G N)`` term evaluations per Newton step.  But
    all groups share the same terms and differ only in which of them count as
    losses, wins or ties, so:

    1. The best and the worst group are solved directly; by Theorem 5.2 every
       other zero lies between them.
    2. That interval is cut into panels of half-width ``sqrt(3)*delta_min/2``.
       On each panel every term is evaluated at ``CHEB_NODES`` Chebyshev-Lobatto
       points (``O(N)`` per node) and prefix sums over the groups in rank order
       give ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` at the nodes for all
       ``g`` at once.
    3. ``Q_g`` is analytic in a strip of half-width ``sqrt(3)*delta_min`` around
       the real axis, so its Chebyshev interpolant on a panel converges
       geometrically (Bernstein ellipse with rho ~ 3.5: error ~ 3.5**-32 of the
       terms' magnitude, i.e. at the level of floating-point rounding).  Each
       group's zero is found by safeguarded Newton on its interpolant, in the
       panel where ``Q_g`` changes sign.  A group not placed this way (rounding
       at the extremes) is solved directly.

    The cost is ``O(N * panels * CHEB_NODES + G * CHEB_NODES**2)`` instead of
    ``O(G * N * iterations)``.

    Identical terms -- players of equal ``(mu, delta)``, such as every newcomer of a
    round -- are evaluated once (:func:`~podium.core.numerics.terms.merge_identical`):
    the sums add the same values in the same order, so the zeros are the same, bit for
    bit, with ``U`` term evaluations per node instead of ``N`` (``U`` distinct terms).

    A massive round (at least :data:`COUNTED_FROM` players) of few distinct terms
    (``U * G <= COUNTED_WORK * N``, e.g. a first round of a million newcomers) is
    solved group by group over the distinct terms times their counts instead
    (:func:`_counted_zeros`): ``O(G * U * iterations)``, exact (nothing interpolated;
    closer to the exact zeros than the panels, whose sums over a million terms lose
    digits where ``Q_g`` is flat), equal to the panels' zeros to rounding rather than
    bit for bit.  Smaller rounds never take it, so their numbers are those of the
    panels.

    Returns
    -------
    perf, status : ndarray
        The zero of each group and a solver status code per group.
    n_direct : int
        How many groups were solved directly (all of them below
        ``direct_groups`` or in a counted solve; otherwise the ones the panels did not
        place).
    """
    # merged here, and the counted solve apart from the panels: the kernels of a round
    # that takes the panels (every round of fewer than COUNTED_FROM players) do not
    # carry the counted solve, which compiles, or loads, with the first massive round
    merged = merge_identical(terms)
    G = groups.start.size
    n = terms.mu.size
    logistic = kind == LOGISTIC
    if (merged.of.size and n >= COUNTED_FROM
            and merged.terms.mu.size * G <= COUNTED_WORK * n):
        perf = np.empty(G)
        status = np.zeros(G, dtype=np.int8)
        (_logistic_counted if logistic else _gaussian_counted)(merged, groups, split_ties,
                                                                perf, status)
        return perf, status, G
    solve = _logistic_zeros if logistic else _gaussian_zeros
    perf, status, n_direct = solve(terms, merged, groups, split_ties, min_spread, direct_groups)
    return perf, status, int(n_direct)


# The kernels performance_zeros calls, one per kind: ``kind`` is a literal inside, so
# that a system compiles only its own terms.
@nb.njit(cache=True)
def _logistic_zeros(terms: OpponentTerms, merged: DistinctTerms, groups: TieGroups,
                    split_ties: bool, min_spread: float, direct_groups: int):
    return _panel_group_zeros(LOGISTIC, terms, merged, groups, split_ties, min_spread,
                              direct_groups)


@nb.njit(cache=True)
def _gaussian_zeros(terms: OpponentTerms, merged: DistinctTerms, groups: TieGroups,
                    split_ties: bool, min_spread: float, direct_groups: int):
    return _panel_group_zeros(GAUSSIAN, terms, merged, groups, split_ties, min_spread,
                              direct_groups)


@nb.njit(cache=True)
def _logistic_counted(merged: DistinctTerms, groups: TieGroups, split_ties: bool,
                      perf: np.ndarray, status: np.ndarray) -> None:
    _counted_zeros(LOGISTIC, merged, groups, split_ties, perf, status)


@nb.njit(cache=True)
def _gaussian_counted(merged: DistinctTerms, groups: TieGroups, split_ties: bool,
                      perf: np.ndarray, status: np.ndarray) -> None:
    _counted_zeros(GAUSSIAN, merged, groups, split_ties, perf, status)


# Serial: the direct solves it does itself are few (rounds of at most ``direct_groups``
# groups, and the odd group the panels do not place); the heavy loops run in parallel
# in _panel_zeros, node_sweep and _place_groups.  (A parallel function costs seconds
# more to compile: its loops are outlined and compiled one by one.)  Inlined (typed
# inside each caller) rather than compiled on its own: every compiled function is
# optimised again with all the functions it calls, so a level fewer on the way to the
# panels saves about a second of compilation.
@nb.njit(cache=True, inline="always")
def _panel_group_zeros(kind: int, terms: OpponentTerms, merged: DistinctTerms,
                       groups: TieGroups, split_ties: bool, min_spread: float,
                       direct_groups: int):
    """:func:`performance_zeros` by the panels (:func:`_panel_zeros`) and direct solves,
    ``merged`` being :func:`~podium.core.numerics.terms.merge_identical` of ``terms``
    and ``kind`` a literal."""
    G = groups.start.size
    perf = np.empty(G)
    status = np.zeros(G, dtype=np.int8)
    if G == 0:
        return perf, status, 0
    solved = np.zeros(G, dtype=np.bool_)
    if G > direct_groups:
        _panel_zeros(kind, merged, groups, split_ties, min_spread, perf, status, solved)
    n_direct = n_unsolved(solved)
    for g in range(G):
        if not solved[g]:
            if merged.of.size:
                pg, st = solve_merged(kind, merged, groups, g, split_ties)
            else:
                pg, st = solve_direct(kind, terms, groups, g, split_ties)
            perf[g] = pg
            status[g] = st
    return perf, status, n_direct


@nb.njit(cache=True, parallel=True)
def _panel_zeros(kind: int, terms: DistinctTerms, groups: TieGroups, split_ties: bool,
                 min_spread: float, perf: np.ndarray, status: np.ndarray,
                 solved: np.ndarray) -> None:
    """Steps 1-3 of :func:`performance_zeros`: the best and the worst group solved
    directly, one per thread (each an ``O(N)`` sum per Newton step), then every group
    whose zero lies between theirs placed by interpolation.

    On each panel the two ends are swept over every group first (which groups change
    sign there), then the inner nodes over the range of those groups only, so that a
    round of a million groups never holds every node of every group."""
    G = groups.start.size
    of = terms.of  # a parallel loop takes no nested tuple: rebuilt inside
    mu, pa, pb = terms.terms
    for e in nb.prange(2):
        g = np.int64(0) if e == 0 else G - 1
        if of.size:
            pg, st = solve_merged(kind, DistinctTerms(of, OpponentTerms(mu, pa, pb)), groups,
                                  g, split_ties)
        else:
            pg, st = solve_direct(kind, OpponentTerms(mu, pa, pb), groups, g, split_ties)
        perf[g] = pg
        status[g] = st
        solved[g] = True
    a_all = perf[G - 1]
    b_all = perf[0]
    if b_all - a_all < 1e-6:
        b_all = a_all + 1e-6
    grid = panel_grid(a_all, b_all, 0.5 * math.sqrt(3.0) * min_spread)
    m = CHEB_NODES
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    # per-group sums of w_out (logistic: loss/win terms are val -/+ w_out)
    wsum = np.zeros(G)
    if kind == LOGISTIC:
        for g in range(G):
            for j in range(groups.start[g], groups.end[g]):
                wsum[g] += pb[of[j]] if of.size else pb[j]
    ends = np.empty((2, G))  # Q_g at the panel's right (t = 1) and left (t = -1) end
    scratch = np.empty((2, G))
    x_ends = np.empty(2)
    x_inner = np.empty(m - 2)
    todo = np.empty(G, dtype=np.int64)
    for p in range(grid.n):
        _, _, c, r = panel_span(grid, p)
        x_ends[0] = c + r * tnodes[0]
        x_ends[1] = c + r * tnodes[m - 1]
        # np.int64(0): a literal 0 would compile node_sweep apart from the call below
        node_sweep(kind, x_ends, terms, groups, split_ties, wsum, np.int64(0), G, ends,
                   scratch)
        # the groups whose zero lies on this panel: consecutive ones (the zeros decrease
        # with the place), listed and then shared out to the threads
        n_todo = 0
        for g in range(G):
            if not solved[g] and ends[1, g] >= 0.0 and ends[0, g] <= 0.0:
                todo[n_todo] = g
                n_todo += 1
        if n_todo == 0:
            continue
        g0 = todo[0]
        g1 = todo[n_todo - 1] + 1
        for k in range(m - 2):
            x_inner[k] = c + r * tnodes[k + 1]
        inner = np.empty((m - 2, g1 - g0))
        node_sweep(kind, x_inner, terms, groups, split_ties, wsum, g0, g1, inner,
                   np.empty((m - 2, g1 - g0)))
        _place_groups(todo[:n_todo], g0, ends, inner, cmat, c, r, perf, solved)


@nb.njit(cache=True, parallel=True)
def _place_groups(todo: np.ndarray, g0: int, ends: np.ndarray, inner: np.ndarray,
                  cmat: np.ndarray, c: float, r: float, perf: np.ndarray,
                  solved: np.ndarray) -> None:
    """Each listed group's zero on the panel ``[c - r, c + r]``: Newton on the
    Chebyshev interpolant of its values at the nodes (``ends[:, g]`` at ``t = +-1``,
    ``inner[:, g - g0]`` between); the groups in ranges, one per call."""
    n = todo.size
    m = cmat.shape[0]
    chunks = max(1, min(n, _PLACE_RANGES))
    for ch in nb.prange(chunks):
        vals = np.empty(m)
        coef = np.empty(m)
        for i in range(ch * n // chunks, (ch + 1) * n // chunks):
            g = todo[i]
            vals[0] = ends[0, g]
            vals[m - 1] = ends[1, g]
            for k in range(m - 2):
                vals[k + 1] = inner[k, g - g0]
            cheb_fit(cmat, vals, coef)
            t = panel_zero(coef, vals[m - 1], vals[0], c, r, 0.0, 0.0, False)
            perf[g] = c + r * t
            solved[g] = True


@nb.njit(cache=True, parallel=True)
def _counted_zeros(kind: int, terms: DistinctTerms, groups: TieGroups, split_ties: bool,
                   perf: np.ndarray, status: np.ndarray) -> None:
    """Every group's zero of ``Q_g`` over the *distinct* terms, each times how many
    copies of it placed better, tied and worse (Theorem 3.2 with identical terms
    gathered: ``Q_g = sum_u n_less(g, u) l_u + n_tied(g, u) d_u + n_more(g, u) v_u``,
    :func:`~podium.core.numerics.terms.counted_terms`), by Newton.

    Exact -- no term is approximated -- at ``O(U)`` per Newton step and group instead
    of the panels' ``O(N)`` sums per node; the sums are gathered in another order, so
    the zeros agree with the panels' to rounding (closer to the exact zeros: the panels'
    prefix sums over a million terms lose digits where ``Q_g`` is flat), not bit for
    bit.  Each solve depends on its group alone -- it starts where the zero would be if
    every term were the count-weighted mean term (logistic; exact when all terms are
    one) -- so the threads (ranges of groups, their counts from one pass over the
    rows) give the same numbers however the groups are shared out.
    """
    of = terms.of  # a parallel loop takes no nested tuple: rebuilt inside
    mu, pa, pb = terms.terms
    U = mu.size
    G = groups.start.size
    chunks = max(1, min(G, _PLACE_RANGES))
    # how many copies of each distinct term lie before each range's first group
    before = np.zeros((chunks + 1, U))
    for c in range(chunks):
        before[c + 1] = before[c]
        for g in range(c * G // chunks, (c + 1) * G // chunks):
            for j in range(groups.start[g], groups.end[g]):
                before[c + 1, of[j]] += 1.0
    total = before[chunks]
    n = total.sum()
    mean_mu = 0.0
    mean_scale = 0.0
    for u in range(U):
        mean_mu += total[u] * mu[u]
        mean_scale += total[u] * pa[u]
    mean_mu /= n
    mean_scale /= n
    if kind != LOGISTIC:  # pa = delta: the logistic w_arg of that spread
        mean_scale = 0.5 * TANH_MULTIPLIER / mean_scale
    for c in nb.prange(chunks):
        _counted_range(kind, DistinctTerms(of, OpponentTerms(mu, pa, pb)), groups, split_ties,
                       c * G // chunks, (c + 1) * G // chunks, before[c].copy(), total,
                       mean_mu, mean_scale, perf, status)


@nb.njit(cache=True)
def _counted_range(kind: int, terms: DistinctTerms, groups: TieGroups, split_ties: bool,
                   g0: int, g1: int, n_less: np.ndarray, total: np.ndarray, mean_mu: float,
                   mean_scale: float, perf: np.ndarray, status: np.ndarray) -> None:
    """:func:`_counted_zeros` of the groups ``g0..g1-1`` (``n_less``: the copies of each
    distinct term before group ``g0``, updated as the groups pass; ``mean_mu``,
    ``mean_scale``: the mean term's centre and ``w_arg``, for the first guess)."""
    of = terms.of
    mu, pa, pb = terms.terms
    U = mu.size
    n = total.sum()
    tie_mult = 1.0 if split_ties else 2.0
    n_tied = np.zeros(U)
    for g in range(g0, g1):
        a = groups.start[g]
        b = groups.end[g]
        for j in range(a, b):
            n_tied[of[j]] += 1.0
        # with one term: tanh((x - mu) w_arg) = (n_more - n_less) / (n_less + n_more + c n_tied)
        size = float(b - a)
        below = float(a)
        above = n - below - size
        start = mean_mu + math.atanh((above - below) / (below + above + tie_mult * size)) \
            / mean_scale
        state = newton_begin(LO_BOUND, HI_BOUND, start)
        while state.running:
            x = state.x
            q = 0.0
            qp = 0.0
            for u in range(U):
                v, vp = counted_terms(kind, x, mu[u], pa[u], pb[u], n_less[u], n_tied[u],
                                      total[u] - n_less[u] - n_tied[u], split_ties)
                q += v
                qp += vp
            state = newton_next(state, q, qp)
        perf[g] = state.x
        status[g] = state.status
        for j in range(a, b):
            n_less[of[j]] += 1.0
            n_tied[of[j]] = 0.0
