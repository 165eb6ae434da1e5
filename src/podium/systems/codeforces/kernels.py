"""Numba kernels of the Codeforces systems ([Mirzayanov2015]) and of the continuous ``cfsys``.

Both systems revolve around one function of a rating ``x``: the expected number of
participants who beat a player rated ``x``.  Every participant shares it, so it is
computed once per round for all ``x`` and then looked up, instead of being summed over
all ``N`` participants for every participant and every step of its search (``O(N^2)``):

* ``codeforces`` (integers): ratings are integers, so the sum is a convolution of the
  histogram of the ratings with the Elo kernel ``K(x) = 1 / (1 + 10^(x/400))`` at every
  integer ``x`` -- one FFT per round (:func:`win_sums`).  The binary search of each
  needed rating then costs 13 look-ups.  Where a comparison of the search is closer than
  the FFT's rounding could decide, both sides are recomputed by direct summation.
* ``cfsys`` (floats): the sum of logistic terms is analytic in a strip of half-width
  ``sqrt(3) * sigma_perf`` around the real axis, so a piecewise Chebyshev interpolant
  on panels of that half-width is exact to rounding (:func:`cfsys_performances`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    clenshaw,
    panel_ends,
    panel_grid,
)
from podium.core.numerics.newton import newton_begin, newton_next
from podium.core.numerics.robust import robust_average_zero
from podium.core.numerics.special import fast_tanh

__all__ = [
    "CF_SEARCH_LO",
    "CF_SEARCH_HI",
    "needed_ratings",
    "corrected_deltas",
    "invariant_breaches",
    "cfsys_performances",
]

#: The binary search of the needed rating keeps ``left`` in ``[CF_SEARCH_LO, CF_SEARCH_HI)``.
CF_SEARCH_LO = 1
CF_SEARCH_HI = 8000

#: Chebyshev-Lobatto nodes per panel of the cfsys interpolant (panel half-width
#: ``sqrt(3) * sigma_perf`` = the distance of the nearest pole: Bernstein ellipse
#: rho = 1 + sqrt(2), error ~ rho**-44 ~ 1e-17 of the number of terms).
CFSYS_NODES = 44


# ======================================================================================
# codeforces: integer ratings
# ======================================================================================
@nb.njit(cache=True)
def _direct_sum(v: int, dvals: np.ndarray, dcounts: np.ndarray, ktab: np.ndarray,
                k0: int) -> float:
    """``sum_j K(v - r_j)`` by direct summation over the distinct ratings."""
    s = 0.0
    for u in range(dvals.size):
        s += dcounts[u] * ktab[v - dvals[u] - k0]
    return s


@nb.njit(cache=True)
def needed_ratings(r, place, sums, v0, ktab, k0, dvals, dcounts, tol):
    """Seed, geometric-mean place and needed rating of every participant ([Mirzayanov2015]).

    Parameters
    ----------
    r, place:
        Integer old rating and place (1-based, the worst place of the tie) of every
        participant.
    sums:
        ``sums[v - v0] ~ sum_j K(v - r_j)`` over *all* participants ``j`` for every
        integer ``v`` in the range that covers ``1..8000`` and every ``r_j`` (FFT).
    ktab:
        ``ktab[x - k0] = K(x) = 1 / (1 + 10^(x/400))``, the probability that a player
        rated ``r`` beats one rated ``r + x``.
    dvals, dcounts:
        Distinct ratings and their multiplicities (for the direct re-summation).
    tol:
        A comparison ``seed(mid) < m`` whose two sides differ by less than ``tol``
        is decided again with directly summed values.

    Returns
    -------
    seed, m : float arrays
        ``seed_i = 1 + sum_{j != i} K(r_i - r_j)`` and ``m_i = sqrt(place_i * seed_i)``.
    need : int array
        The largest rating ``R`` found by Codeforces' binary search on ``[1, 8000)``
        with ``1 + sum_{j != i} K(R - r_j) >= m_i`` (1 when there is none).
    n_direct : int
        How many comparisons needed the direct re-summation.
    """
    n = r.size
    seed = np.empty(n)
    mm = np.empty(n)
    need = np.empty(n, dtype=np.int64)
    n_direct = 0
    for i in range(n):
        ri = r[i]
        s_i = 0.5 + sums[ri - v0]  # 1 + S(r_i) - K(0), K(0) = 1/2
        m = math.sqrt(place[i] * s_i)
        exact_m = -1.0
        left = CF_SEARCH_LO
        right = CF_SEARCH_HI
        while right - left > 1:
            mid = (left + right) // 2
            sv = 1.0 + sums[mid - v0] - ktab[mid - ri - k0]
            target = m
            if abs(sv - m) < tol:
                n_direct += 1
                if exact_m < 0.0:
                    exact_s = 0.5 + _direct_sum(ri, dvals, dcounts, ktab, k0)
                    exact_m = math.sqrt(place[i] * exact_s)
                sv = 1.0 + _direct_sum(mid, dvals, dcounts, ktab, k0) - ktab[mid - ri - k0]
                target = exact_m
            if sv < target:
                right = mid
            else:
                left = mid
        seed[i] = s_i
        mm[i] = m
        need[i] = left
    return seed, mm, need, n_direct


@nb.njit(cache=True)
def _trunc_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Java's ``/`` on ints), ``b > 0``."""
    q = abs(a) // b
    return q if a >= 0 else -q


@nb.njit(cache=True)
def corrected_deltas(r, need):
    """Rating changes with the post-round-327 anti-inflation corrections ([Mirzayanov2015]).

    ``d_i = (R_i - r_i) / 2``; then ``d_i += -sum(d) / n - 1``; then, over the
    ``s = min(n, 4 * round(sqrt(n)))`` participants with the highest old ratings
    (ties in standings order), ``d_i += min(max(-sum_s(d) / s, -10), 0)``.  Every
    division truncates toward zero.  Returns ``(d, inc1, inc2, s)``.
    """
    n = r.size
    d = np.empty(n, dtype=np.int64)
    total = 0
    for i in range(n):
        d[i] = _trunc_div(need[i] - r[i], 2)
        total += d[i]
    inc1 = _trunc_div(-total, n) - 1
    for i in range(n):
        d[i] += inc1
    s = int(4 * math.floor(math.sqrt(n) + 0.5))  # Java's Math.round: half up
    if s > n:
        s = n
    order = np.argsort(-r, kind="mergesort")  # stable: equal ratings keep standings order
    top = 0
    for k in range(s):
        top += d[order[k]]
    inc2 = _trunc_div(-top, s)
    if inc2 < -10:
        inc2 = -10
    if inc2 > 0:
        inc2 = 0
    for i in range(n):
        d[i] += inc2
    return d, inc1, inc2, s


@nb.njit(cache=True)
def _bit_update(tree, pos, val):
    n = tree.size
    while pos < n:
        if val < tree[pos]:
            tree[pos] = val
        pos += pos & (-pos)


@nb.njit(cache=True)
def _bit_query(tree, pos):
    """Minimum over Fenwick positions 1..pos."""
    out = np.iinfo(np.int64).max
    while pos > 0:
        if tree[pos] < out:
            out = tree[pos]
        pos -= pos & (-pos)
    return out


@nb.njit(cache=True)
def invariant_breaches(r, place, d):
    """Pairs breaking the two invariants of [Mirzayanov2015], in ``O(N log N)``.

    1. ``A`` had a lower old rating than ``B`` and a strictly worse place: the new
       rating of ``A`` must not exceed that of ``B`` (``r_A + d_A <= r_B + d_B``).
    2. ``A`` had a strictly better place than ``B`` but a lower old rating: the change
       of ``A`` must be at least that of ``B`` (``d_A >= d_B``).

    Returns ``(count1, a1, b1, count2, a2, b2)``: for each invariant the number of
    participants ``A`` (invariant 1) or ``B`` (invariant 2) involved in a breach and one
    example pair of positions (``-1`` when none).
    """
    n = r.size
    vals = np.unique(r)
    nv = vals.size
    rank = np.searchsorted(vals, r) + 1  # 1..nv, increasing with the rating
    new = r + d
    inf = np.iinfo(np.int64).max
    # invariant 1: min new rating among better-placed players with a higher old rating;
    # Fenwick over reversed rating ranks gives "old rating > r_A" as a prefix.
    t1 = np.full(nv + 1, inf, dtype=np.int64)
    # invariant 2: min change among better-placed players with a lower old rating.
    t2 = np.full(nv + 1, inf, dtype=np.int64)
    c1 = 0
    c2 = 0
    a1 = -1
    b1 = -1
    a2 = -1
    b2 = -1
    i = 0
    while i < n:
        j = i
        while j < n and place[j] == place[i]:
            j += 1
        for k in range(i, j):
            q1 = _bit_query(t1, nv - rank[k])  # ranks > rank[k]
            if q1 < new[k]:
                c1 += 1
                if a1 < 0:
                    a1 = k
                    for b in range(i):
                        if r[b] > r[k] and new[b] < new[k]:
                            b1 = b
                            break
            q2 = _bit_query(t2, rank[k] - 1)  # ranks < rank[k]
            if q2 < d[k]:
                c2 += 1
                if b2 < 0:
                    b2 = k
                    for a in range(i):
                        if r[a] < r[k] and d[a] < d[k]:
                            a2 = a
                            break
        for k in range(i, j):
            _bit_update(t1, nv - rank[k] + 1, new[k])
            _bit_update(t2, rank[k], d[k])
        i = j
    return c1, a1, b1, c2, a2, b2


# ======================================================================================
# cfsys: floating-point ratings
# ======================================================================================
@nb.njit(cache=True, parallel=True)
def _panel_coefs(a, b, uval, ucnt, w_arg, m, cmat, tnodes, coef, edge_lo, edge_hi, p0, n_p):
    """Chebyshev coefficients of ``T(x) = sum_u cnt_u tanh((x - u) w_arg)`` on the
    panels ``[a[p], b[p]]`` for ``p0 <= p < n_p`` (written into ``coef[p]``)."""
    vals = np.empty((n_p - p0, m))
    for q in nb.prange((n_p - p0) * m):
        p = p0 + q // m
        jj = q % m
        x = 0.5 * (a[p] + b[p]) + 0.5 * (b[p] - a[p]) * tnodes[jj]
        s = 0.0
        for u in range(uval.size):
            s += ucnt[u] * fast_tanh((x - uval[u]) * w_arg)
        vals[p - p0, jj] = s
    for p in range(p0, n_p):
        cheb_fit(cmat, vals[p - p0], coef[p])
        edge_hi[p] = vals[p - p0, 0]  # node j = 0 is the right end
        edge_lo[p] = vals[p - p0, m - 1]


@nb.njit(cache=True)
def _split(lo_x, hi_x, half):
    """Panel edges covering ``[lo_x, hi_x]`` with half-width at most ``half``."""
    grid = panel_grid(lo_x, hi_x, half)
    a = np.empty(grid.n)
    b = np.empty(grid.n)
    for p in range(grid.n):
        a[p], b[p] = panel_ends(grid, p)
    return a, b


@nb.njit(cache=True)
def _joined(x, y, z):
    """``concatenate((x, y, z))`` of three 1-d arrays."""
    out = np.empty(x.size + y.size + z.size)
    for i in range(x.size):
        out[i] = x[i]
    for i in range(y.size):
        out[x.size + i] = y[i]
    for i in range(z.size):
        out[x.size + y.size + i] = z[i]
    return out


@nb.njit(cache=True)
def _find_panel(a, x):
    """Index of the panel ``p`` with ``a[p] <= x`` (largest such; 0 if none)."""
    p = np.searchsorted(a, x, side="right") - 1
    if p < 0:
        p = 0
    return p


@nb.njit(cache=True)
def _eval_T(a, b, coef, x):
    p = _find_panel(a, x)
    c = 0.5 * (a[p] + b[p])
    r = 0.5 * (b[p] - a[p])
    t = (x - c) / r
    if t > 1.0:
        t = 1.0
    elif t < -1.0:
        t = -1.0
    v, _ = clenshaw(coef[p], t)
    return v


# Serial: its per-participant loops are cheap (a Clenshaw sum, a few Newton steps on
# the interpolant); the heavy one, the node values, runs in parallel in _panel_coefs.
@nb.njit(cache=True)
def cfsys_performances(mu, lo, hi, w_arg, uval, ucnt, half):
    """Expected rank, geometric-mean rank and performance of every participant (cfsys).

    With ``T(x) = sum_j tanh((x - mu_j) w_arg)`` over all ``n`` participants (``j``
    itself included; ``w_arg = pi / (2 sqrt(3) sigma_perf)``), the expected rank of a
    player rated ``x`` is ``E(x) = 1/2 + sum_j P(j beats x) = (n + 1 - T(x)) / 2`` and
    the actual (mean) rank is ``(lo + hi + 2) / 2``.  Participant ``i`` gets
    ``g_i = sqrt(E(mu_i) * (lo_i + hi_i + 2) / 2)`` and its performance is the zero of
    ``E(x) = g_i``, i.e. ``T(x) = n + 1 - 2 g_i`` on ``(-6000, 9000)``.

    ``T`` is interpolated on panels of half-width ``half`` (Chebyshev, see the module);
    the two extreme targets are solved directly and bound the panels; a target the
    panels do not bracket (rounding at the extremes) is solved directly.

    Returns ``(perf, expected, geo, n_direct)``.
    """
    n = mu.size
    m = CFSYS_NODES
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    mu_min = uval[0]
    mu_max = uval[-1]
    if mu_max - mu_min < 1e-6:
        mu_max = mu_min + 1e-6
    # phase 1: panels over the ratings -> expected ranks and targets
    a1, b1 = _split(mu_min, mu_max, half)
    coef1 = np.empty((a1.size, m))
    elo1 = np.empty(a1.size)
    ehi1 = np.empty(a1.size)
    _panel_coefs(a1, b1, uval, ucnt, w_arg, m, cmat, tnodes, coef1, elo1, ehi1,
                 np.int64(0), a1.size)  # int64, not a literal: one specialisation
    expected = np.empty(n)
    geo = np.empty(n)
    target = np.empty(n)
    for i in range(n):
        ex = 0.5 * (n + 1.0 - _eval_T(a1, b1, coef1, mu[i]))
        g = math.sqrt(ex * 0.5 * (lo[i] + hi[i] + 2.0))
        expected[i] = ex
        geo[i] = g
        target[i] = n + 1.0 - 2.0 * g
    # phase 2: the extreme targets directly; they bound every other performance
    i_lo = np.argmin(target)
    i_hi = np.argmax(target)
    perf = np.empty(n)
    direct = np.zeros(n, dtype=np.bool_)
    x_lo, _ = robust_average_zero(uval, np.full(uval.size, w_arg), ucnt, 0, uval.size, 1.0,
                                  -target[i_lo], 0.0, mu[i_lo])
    x_hi, _ = robust_average_zero(uval, np.full(uval.size, w_arg), ucnt, 0, uval.size, 1.0,
                                  -target[i_hi], 0.0, mu[i_hi])
    perf[i_lo] = x_lo
    perf[i_hi] = x_hi
    direct[i_lo] = True
    direct[i_hi] = True
    # panels: left extension, the phase-1 panels, right extension
    al = np.empty(0)
    bl = np.empty(0)
    ar = np.empty(0)
    br = np.empty(0)
    if x_lo < mu_min:
        al, bl = _split(x_lo, mu_min, half)
    if x_hi > mu_max:
        ar, br = _split(mu_max, x_hi, half)
    n1 = a1.size
    nl = al.size
    na = nl + n1 + ar.size
    a = _joined(al, a1, ar)
    b = _joined(bl, b1, br)
    coef = np.empty((na, m))
    elo = np.empty(na)
    ehi = np.empty(na)
    for p in range(n1):
        elo[nl + p] = elo1[p]
        ehi[nl + p] = ehi1[p]
        for k in range(m):
            coef[nl + p, k] = coef1[p, k]
    # the extensions: panels [0, nl) and [nl + n1, na) (coefficients by index, in place)
    if nl > 0:
        _panel_coefs(a, b, uval, ucnt, w_arg, m, cmat, tnodes, coef, elo, ehi, np.int64(0), nl)
    if ar.size > 0:
        _panel_coefs(a, b, uval, ucnt, w_arg, m, cmat, tnodes, coef, elo, ehi, nl + n1, na)
    # phase 3: every other performance by safeguarded Newton on the interpolant
    for i in range(n):
        if direct[i]:
            continue
        tv = target[i]
        if not (elo[0] <= tv <= ehi[na - 1]):
            direct[i] = True
            continue
        p = np.searchsorted(elo, tv, side="right") - 1
        if p < 0:
            p = 0
        if tv > ehi[p]:
            # between panels only by rounding: use the next panel's left end
            if p + 1 < na:
                p += 1
        ql = elo[p]
        qh = ehi[p]
        c = 0.5 * (a[p] + b[p])
        rr = 0.5 * (b[p] - a[p])
        state = newton_begin(-1.0, 1.0, -1.0 + 2.0 * (tv - ql) / (qh - ql) if qh > ql else 0.0)
        while state.running:
            val, der = clenshaw(coef[p], state.x)
            state = newton_next(state, tv - val, -der)  # decreasing in t
        perf[i] = c + rr * state.x
    n_direct = 0
    for i in range(n):
        if direct[i] and i != i_lo and i != i_hi:
            n_direct += 1
    if n_direct:
        warg = np.full(uval.size, w_arg)
        for i in range(n):
            if direct[i] and i != i_lo and i != i_hi:
                x, _ = robust_average_zero(uval, warg, ucnt, 0, uval.size, 1.0, -target[i],
                                           0.0, mu[i])
                perf[i] = x
    return perf, expected, geo, n_direct
