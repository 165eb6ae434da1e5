"""Numba kernels of :mod:`podium.evaluation.metrics` (prediction accuracy of ratings).

Every kernel works on one round in standings order (``lo`` non-decreasing; the
Python layer checks this) and costs ``O(n log n)``: pair counts and Kendall's
discordant pairs by a Fenwick tree over rating ranks, rank deviation and
Spearman by one stable sort each.  The only all-pairs sum -- the expected rank
of [Batty2026] (Eq. 4) -- is evaluated by Chebyshev interpolation on panels, exact
to rounding level (see :func:`logistic_sums`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    cheb_eval,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    cover_points,
)

#: Chebyshev-Lobatto nodes per panel of :func:`logistic_sums`.
LOGISTIC_CHEB_NODES = 32
#: Method codes of :func:`logistic_sums`.
METHOD_AUTO = 0
METHOD_DIRECT = 1
METHOD_CHEB = 2
#: Term by term in one thread (:func:`logistic_sums_serial`): the same sums as
#: ``METHOD_DIRECT``, without a thread launch per call.
METHOD_SERIAL = 3
#: Rounds of at most this many players are scored by :func:`small_rounds`: for them
#: ``METHOD_AUTO`` always sums term by term (``2 n^2 <= 98 n``, one panel's cost).
SMALL_ROUND = 48
#: Rough seconds to compile this module's kernels on a first ``podium eval`` (13 on a
#: 2-core EPYC at load 2.4), quoted by the command's notice (:func:`announce_compile`).
COMPILE_SECONDS = 13.0


# --------------------------------------------------------------------------------------
# Tie ranges


@nb.njit(cache=True)
def renumber_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie ranges of a filtered standings list, renumbered among the kept players.

    Walking the list in order, a player's new ``lo`` is the position where the
    current run of equal original ``lo`` began, and (walking backwards) its new
    ``hi`` the position where the run of equal original ``hi`` ends.  This is
    how multi-skill renumbers the subset it scores.
    """
    n = lo.size
    new_lo = np.empty(n, dtype=np.int64)
    new_hi = np.empty(n, dtype=np.int64)
    start = 0
    for i in range(n):
        if i == 0 or lo[i] != lo[i - 1]:
            start = i
        new_lo[i] = start
    end = n - 1
    for i in range(n - 1, -1, -1):
        if i == n - 1 or hi[i] != hi[i + 1]:
            end = i
        new_hi[i] = end
    return new_lo, new_hi


# --------------------------------------------------------------------------------------
# Ranks and a Fenwick tree


@nb.njit(cache=True)
def dense_ranks(v: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense 0-based ranks of ``v`` (equal values share a rank) and the number of ranks."""
    n = v.size
    ranks = np.empty(n, dtype=np.int64)
    if n == 0:
        return ranks, 0
    order = np.argsort(v, kind="mergesort")
    k = 0
    ranks[order[0]] = 0
    for t in range(1, n):
        if v[order[t]] != v[order[t - 1]]:
            k += 1
        ranks[order[t]] = k
    return ranks, k + 1


@nb.njit(cache=True, inline="always")
def _fenwick_add(tree: np.ndarray, pos: int) -> None:
    """Add one at 1-based position ``pos``."""
    m = tree.size
    while pos < m:
        tree[pos] += 1
        pos += pos & (-pos)


@nb.njit(cache=True, inline="always")
def _fenwick_prefix(tree: np.ndarray, pos: int) -> int:
    """Count at 1-based positions ``1..pos``."""
    s = 0
    while pos > 0:
        s += tree[pos]
        pos -= pos & (-pos)
    return s


# --------------------------------------------------------------------------------------
# Pair inversion and rank deviation (multi-skill's Table 2 metrics)


@nb.njit(cache=True)
def pair_counts(mu: np.ndarray, lo: np.ndarray, equal_mu_correct: bool) -> tuple[int, int]:
    """Ordered (winner, loser) pairs of different places, and how many of them
    the ratings predict.

    A pair with ``lo_w < lo_l`` is predicted when ``mu_w > mu_l`` (or ``>=`` with
    ``equal_mu_correct``).  The players are taken group by group (runs of equal
    ``lo``); each one is queried against a Fenwick tree over the rating ranks of
    every better-placed player before its group is inserted: ``O(n log n)``.

    Returns ``(correct, cross)``, both exact integers.
    """
    n = mu.size
    ranks, n_ranks = dense_ranks(mu)
    tree = np.zeros(n_ranks + 1, dtype=np.int64)
    inserted = 0
    correct = 0
    cross = 0
    g0 = 0
    while g0 < n:
        g1 = g0 + 1
        while g1 < n and lo[g1] == lo[g0]:
            g1 += 1
        for b in range(g0, g1):
            # 1-based position of rank r is r + 1; "greater than r" = all - prefix(r + 1)
            below = ranks[b] if equal_mu_correct else ranks[b] + 1
            correct += inserted - _fenwick_prefix(tree, below)
            cross += inserted
        for b in range(g0, g1):
            _fenwick_add(tree, ranks[b] + 1)
        inserted += g1 - g0
        g0 = g1
    return correct, cross


@nb.njit(cache=True)
def rank_deviation_sum(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> int:
    """``sum_i |i - clamp(i, lo, hi)|`` with ``i`` the position in a stable sort by
    rating, best first (players of equal rating keep standings order)."""
    n = mu.size
    order = np.argsort(-mu, kind="mergesort")
    s = 0
    for i in range(n):
        k = order[i]
        if i < lo[k]:
            s += lo[k] - i
        elif i > hi[k]:
            s += i - hi[k]
    return s


# --------------------------------------------------------------------------------------
# Kendall's tau-b and Spearman's rho


@nb.njit(cache=True)
def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of ``(x, y)`` in ``O(n log n)`` (Knight's algorithm).

    Sort by ``x`` then ``y``; ties in ``x`` (``n1``) and joint ties (``n3``) are
    runs of that order; discordant pairs are the strict inversions of ``y`` in
    it, counted with a Fenwick tree over the ranks of ``y``; ties in ``y``
    (``n2``) come from the same ranks.  With ``n0 = n(n-1)/2``,
    ``C - D = n0 - n1 - n2 + n3 - 2 D`` and ``tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2))``.
    NaN when either variable is constant (or ``n < 2``).
    """
    n = x.size
    if n < 2:
        return np.nan
    o1 = np.argsort(y, kind="mergesort")
    xs1 = np.empty(n)
    for t in range(n):
        xs1[t] = x[o1[t]]
    o2 = np.argsort(xs1, kind="mergesort")
    order = np.empty(n, dtype=np.int64)
    for t in range(n):
        order[t] = o1[o2[t]]
    ry, n_ranks = dense_ranks(y)

    n0 = n * (n - 1) // 2
    n1 = 0
    n3 = 0
    run_x = 1
    run_xy = 1
    for t in range(1, n):
        a = order[t - 1]
        b = order[t]
        if x[a] == x[b]:
            run_x += 1
            if y[a] == y[b]:
                run_xy += 1
            else:
                n3 += run_xy * (run_xy - 1) // 2
                run_xy = 1
        else:
            n1 += run_x * (run_x - 1) // 2
            n3 += run_xy * (run_xy - 1) // 2
            run_x = 1
            run_xy = 1
    n1 += run_x * (run_x - 1) // 2
    n3 += run_xy * (run_xy - 1) // 2

    counts = np.zeros(n_ranks, dtype=np.int64)
    for t in range(n):
        counts[ry[t]] += 1
    n2 = 0
    for r in range(n_ranks):
        n2 += counts[r] * (counts[r] - 1) // 2

    tree = np.zeros(n_ranks + 1, dtype=np.int64)
    dis = 0
    for t in range(n):
        r = ry[order[t]]
        dis += t - _fenwick_prefix(tree, r + 1)  # earlier points with a strictly larger y
        _fenwick_add(tree, r + 1)

    if n0 == n1 or n0 == n2:
        return np.nan
    con_minus_dis = (n0 - n1 - n2 + n3) - 2 * dis
    tau = con_minus_dis / math.sqrt(n0 - n1) / math.sqrt(n0 - n2)
    return min(1.0, max(-1.0, tau))


@nb.njit(cache=True)
def average_ranks(v: np.ndarray) -> np.ndarray:
    """1-based ranks of ``v`` with ties given the average of their ranks."""
    n = v.size
    out = np.empty(n)
    order = np.argsort(v, kind="mergesort")
    i = 0
    while i < n:
        j = i + 1
        while j < n and v[order[j]] == v[order[i]]:
            j += 1
        avg = 0.5 * (i + j - 1) + 1.0
        for k in range(i, j):
            out[order[k]] = avg
        i = j
    return out


@nb.njit(cache=True)
def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson correlation of the average ranks; NaN if either is constant."""
    n = x.size
    if n < 2:
        return np.nan
    rx = average_ranks(x)
    ry = average_ranks(y)
    m = 0.5 * (n + 1)  # mean of average ranks, exactly
    sxx = 0.0
    syy = 0.0
    sxy = 0.0
    for i in range(n):
        dx = rx[i] - m
        dy = ry[i] - m
        sxx += dx * dx
        syy += dy * dy
        sxy += dx * dy
    if sxx == 0.0 or syy == 0.0:
        return np.nan
    rho = sxy / math.sqrt(sxx * syy)
    return min(1.0, max(-1.0, rho))


# --------------------------------------------------------------------------------------
# Sums of logistic win probabilities ([Batty2026], Eq. 3-4)


@nb.njit(cache=True, parallel=True)
def logistic_sums_direct(src: np.ndarray, x: np.ndarray, c: float) -> np.ndarray:
    """``out[k] = sum_j 1 / (1 + exp((x[k] - src[j]) c))``, term by term: ``O(|src| |x|)``."""
    nx = x.size
    ns = src.size
    out = np.empty(nx)
    for k in nb.prange(nx):
        xk = x[k]
        s = 0.0
        for j in range(ns):
            s += 1.0 / (1.0 + math.exp((xk - src[j]) * c))
        out[k] = s
    return out


@nb.njit(cache=True)
def logistic_sums_serial(src: np.ndarray, x: np.ndarray, c: float) -> np.ndarray:
    """:func:`logistic_sums_direct` in one thread (the same terms in the same order)."""
    nx = x.size
    ns = src.size
    out = np.empty(nx)
    for k in range(nx):
        xk = x[k]
        s = 0.0
        for j in range(ns):
            s += 1.0 / (1.0 + math.exp((xk - src[j]) * c))
        out[k] = s
    return out


@nb.njit(cache=True, parallel=True)
def _logistic_sums_panels(
    src: np.ndarray, xs: np.ndarray, starts: np.ndarray, c: float, m: int
) -> np.ndarray:
    """Chebyshev evaluation of the logistic sums at sorted points ``xs``, panel by panel."""
    n_panels = starts.size - 1
    ns = src.size
    out = np.empty(xs.size)
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    for p in nb.prange(n_panels):
        i0 = starts[p]
        i1 = starts[p + 1]
        a = xs[i0]
        b = xs[i1 - 1]
        if not (b > a):  # one distinct point: evaluate it directly
            s = 0.0
            for j in range(ns):
                s += 1.0 / (1.0 + math.exp((a - src[j]) * c))
            for i in range(i0, i1):
                out[i] = s
            continue
        x0 = 0.5 * (a + b)
        r = 0.5 * (b - a)
        # exp((x - src_j) c) = exp((x - x0) c) * exp((x0 - src_j) c) = A_k * B_j, with A_k in
        # [exp(-r c), exp(r c)] (finite, positive), so an overflow of B_j gives a term of 0
        # and an underflow a term of 1, as the exact term rounds to.
        amul = np.empty(m)
        for k in range(m):
            amul[k] = math.exp(r * tnodes[k] * c)
        vals = np.zeros(m)
        for j in range(ns):
            bj = math.exp((x0 - src[j]) * c)
            for k in range(m):
                vals[k] += 1.0 / (1.0 + amul[k] * bj)
        coef = np.empty(m)
        cheb_fit(cmat, vals, coef)
        for i in range(i0, i1):
            out[i] = cheb_eval(coef, x0, r, xs[i])
    return out


@nb.njit(cache=True)
def logistic_sums(src: np.ndarray, x: np.ndarray, c: float, method: int) -> np.ndarray:
    """``out[k] = sum_j sigma((src[j] - x[k]) c)`` with ``sigma(z) = 1 / (1 + e^-z)``.

    With ``c = ln(10) / scale`` the term is [Batty2026]'s ``w_j`` (Eq. 3) for a
    player of rating ``x[k]``, so ``out`` is the expected number of players
    beating it, itself counted as half (Eq. 4).

    ``method``: 1 sums every term (``O(|src| |x|)``; 3 the same in one thread); 2
    interpolates on panels; 0 picks the cheaper.  As a function of ``x`` the sum is
    analytic in the strip ``|Im x| < pi / c`` (the poles of each logistic term), so on a panel of
    half-width ``r <= pi / (2c)`` its Chebyshev interpolant converges like
    ``(2 + sqrt 5)^-m``: with ``m = 32`` nodes the error is ~1e-20 of the terms'
    magnitude, i.e. rounding level.  The panels cover the evaluation points
    greedily, so the cost is ``O(|src| * m * panels)`` with at most
    ``min(|x|, range / (pi / c))`` panels -- about 7 for a Codeforces round.
    """
    nx = x.size
    ns = src.size
    if nx == 0:
        return np.empty(0)
    if ns == 0:
        return np.zeros(nx)
    if method == METHOD_DIRECT:
        return logistic_sums_direct(src, x, c)
    if method == METHOD_SERIAL:
        return logistic_sums_serial(src, x, c)
    m = LOGISTIC_CHEB_NODES
    order = np.argsort(x)
    xs = np.empty(nx)
    for k in range(nx):
        xs[k] = x[order[k]]
    starts = cover_points(xs, math.pi / c)
    n_panels = starts.size - 1
    if method == METHOD_AUTO:
        # a direct term costs one exp and one division, a panel term one division
        cost_direct = 2.0 * nx * ns
        cost_panels = n_panels * (m * ns + 2.0 * ns) + 2.0 * m * nx
        if cost_direct <= cost_panels:
            return logistic_sums_direct(src, x, c)
    sums = _logistic_sums_panels(src, xs, starts, c, m)
    out = np.empty(nx)
    for k in range(nx):
        out[order[k]] = sums[k]
    return out


@nb.njit(cache=True)
def rank_log_errors_kernel(mu: np.ndarray, lo: np.ndarray, c: float, method: int) -> np.ndarray:
    """[Batty2026]'s ``e = log2(r_hat) - log2(r)`` per player (Eq. 4-5).

    ``r = 1 + #better + r_ties`` and ``r_hat = 1 + sum_{j not tied} w_j + r_ties``
    with ``r_ties = (group size - 1) / 2``.  The sum over the players not tied
    with ``i`` is the sum over everybody minus the sum over ``i``'s tie group
    (itself included, whose term is 1/2), both from :func:`logistic_sums`.
    """
    n = mu.size
    e = np.empty(n)
    if n == 0:
        return e
    total = logistic_sums(mu, mu, c, method)
    g0 = 0
    while g0 < n:
        g1 = g0 + 1
        while g1 < n and lo[g1] == lo[g0]:
            g1 += 1
        size = g1 - g0
        r_ties = 0.5 * (size - 1)
        r = 1.0 + g0 + r_ties
        log_r = math.log2(r)
        if size == 1:
            e[g0] = math.log2(1.0 + (total[g0] - 0.5)) - log_r
        else:
            grp = mu[g0:g1].copy()
            own = logistic_sums(grp, grp, c, method)
            for i in range(g0, g1):
                r_hat = 1.0 + (total[i] - own[i - g0]) + r_ties
                e[i] = math.log2(r_hat) - log_r
        g0 = g1
    return e


# --------------------------------------------------------------------------------------
# Many small rounds at once


@nb.njit(cache=True)
def _subset(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray, keep: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kept players of a round, their tie ranges renumbered among them."""
    k = _count_true(keep)
    m = np.empty(k)
    lo_k = np.empty(k, dtype=np.int64)
    hi_k = np.empty(k, dtype=np.int64)
    j = 0
    for i in range(keep.size):
        if keep[i]:
            m[j] = mu[i]
            lo_k[j] = lo[i]
            hi_k[j] = hi[i]
            j += 1
    new_lo, new_hi = renumber_ranges(lo_k, hi_k)
    return m, new_lo, new_hi


@nb.njit(cache=True)
def _count_true(keep: np.ndarray) -> int:
    """``np.count_nonzero(keep)``, as a loop: NumPy's reductions and searches are
    Numba's ``numba.np.arraymath``, whose import on loading a cached kernel that calls
    them brings in SciPy's BLAS (about 0.15 s of a warm ``podium eval``)."""
    k = 0
    for i in range(keep.size):
        if keep[i]:
            k += 1
    return k


@nb.njit(cache=True)
def _below(sorted_v: np.ndarray, x: int) -> int:
    """``np.searchsorted(sorted_v, x, side="left")`` (the entries below ``x`` of a
    non-decreasing array), by bisection, as a loop (see :func:`_count_true`)."""
    a = 0
    b = sorted_v.size
    while a < b:
        mid = (a + b) // 2
        if sorted_v[mid] < x:
            a = mid + 1
        else:
            b = mid
    return a


@nb.njit(cache=True)
def _table2_sums(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray, equal_mu_correct: bool
                 ) -> tuple[bool, float, float]:
    """Whether the round counts (not outcome free) and multi-skill's per-round sums of
    pair inversion and rank deviation (as ``metrics._pair_sum`` and ``_rank_sum``)."""
    n = mu.size
    if n == 0 or hi[0] + 1 >= n:
        return False, np.nan, np.nan
    correct, cross = pair_counts(mu, lo, equal_mu_correct)
    tied2 = float(n) * (n - 1.0) - 2.0 * cross
    ps = 100.0 * (2.0 * correct + tied2) / (n - 1.0)
    rs = 100.0 * float(rank_deviation_sum(mu, lo, hi)) / (n - 1.0)
    return True, ps, rs


@nb.njit(cache=True)
def small_rounds(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray, n_prev: np.ndarray,
                 offsets: np.ndarray, min_history: int, top_k: int, c: float,
                 extended: bool, equal_mu_correct: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every metric of :class:`podium.evaluation.metrics.MetricAccumulator` for rounds of
    at most :data:`SMALL_ROUND` players, in one call: round ``r`` is rows
    ``offsets[r]:offsets[r + 1]`` of ``mu``, ``lo``, ``hi``, ``n_prev``.

    The same kernels as one round at a time, so the same numbers, bit for bit.

    Returns
    -------
    counts : (3, R) int64
        Experienced, returning and top players.
    counted : (3, R) bool
        Whether the round counts for the experienced, all and top subsets.
    sums : (6, R) float64
        Pair-inversion and rank-deviation sums of the three subsets, in that order.
    corr : (2, R) float64
        Kendall's tau-b and Spearman's rho over the returning players.
    e : float64, one per row
        [Batty2026]'s ``e`` (Eq. 5; with ``extended``).
    """
    n_rounds = offsets.size - 1
    counts = np.zeros((3, n_rounds), dtype=np.int64)
    counted = np.zeros((3, n_rounds), dtype=np.bool_)
    sums = np.full((6, n_rounds), np.nan)
    corr = np.full((2, n_rounds), np.nan)
    e_all = np.full(mu.size, np.nan)
    for r in range(n_rounds):
        a = offsets[r]
        b = offsets[r + 1]
        m = mu[a:b].copy()
        lo_r = lo[a:b].copy()
        hi_r = hi[a:b].copy()
        prev = n_prev[a:b]
        mu_e, lo_e, hi_e = _subset(m, lo_r, hi_r, prev >= min_history)
        counts[0, r] = mu_e.size
        counted[0, r], sums[0, r], sums[1, r] = _table2_sums(mu_e, lo_e, hi_e,
                                                             equal_mu_correct)
        ret = prev >= 1
        if not extended:
            counts[1, r] = _count_true(ret)
            continue
        mu_a, lo_a, hi_a = _subset(m, lo_r, hi_r, ret)
        counts[1, r] = mu_a.size
        counted[1, r], sums[2, r], sums[3, r] = _table2_sums(mu_a, lo_a, hi_a,
                                                             equal_mu_correct)
        n_top = _below(lo_a, top_k)
        counts[2, r] = n_top
        counted[2, r], sums[4, r], sums[5, r] = _table2_sums(
            mu_a[:n_top].copy(), lo_a[:n_top].copy(), hi_a[:n_top].copy(), equal_mu_correct)
        if b > a:
            e_all[a:b] = rank_log_errors_kernel(m, lo_r, c, METHOD_SERIAL)
        neg_lo = -lo_a
        corr[0, r] = kendall_tau_b(mu_a, neg_lo)
        corr[1, r] = spearman(mu_a, neg_lo)
    return counts, counted, sums, corr, e_all
