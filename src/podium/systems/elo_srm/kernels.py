"""Numba kernels of EloSRM ([Batty2026], see :mod:`podium.systems.elo_srm`).

Every participant ``i`` of a round needs three sums over the other participants
``j`` of the Bradley-Terry win probability of Eq. 3,
``w_j = 1 / (1 + 10**((R_i - R_j)/400)) = sigmoid(a (R_j - R_i))`` with
``a = ln(10)/400``:

* ``sum_{j != i} w_j`` (the ``1 + sum w_j`` of P', Eq. 12),
* ``sum_{j != i} w_j (1 - w_j)`` (the numerator of P'),
* the same first sum restricted to ``i``'s tie group (Eq. 4 counts a tied
  opponent as 1/2 instead of ``w_j``).

Done literally (as the seed's Appendix A does) that is ``O(N^2)`` exponentials
per round.  Here the sums ``U(x) = sum_j sigmoid(a (R_j - x))`` and
``V(x) = sum_j (sigmoid (1 - sigmoid))(a (R_j - x))`` are computed for
everybody at once: every term is analytic in the strip ``|Im| < pi/a`` (the
poles of the logistic function) in both ``R_j`` and ``x``, so on panels of
half-width ``pi/(3a)`` Chebyshev interpolation in either variable converges
like ``rho**-m`` with ``rho`` about 6 (``m`` nodes; with ``m = 24`` the
interpolation error is far below the rounding error of the sums).  Each
panel's players become ``m`` weighted pseudo-players at its nodes, the sums are
evaluated exactly at every node, and interpolated at the players (see
:func:`self_sums`): ``O(N m + (panels m)^2)`` instead of ``O(N^2)``.  Rounds
(and tie groups) for which the direct double loop is cheaper are summed
directly.  ``U`` and ``V`` include the player's own term (``1/2`` and
``1/4``), which the caller subtracts.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    PanelGrid,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    clenshaw,
    lobatto_weights,
    panel_coordinate,
    panel_mid,
)

#: ``a`` of Eq. 3 in natural-log form: ``10**(d/400) = exp(ELO_SCALE * d)``.
ELO_SCALE = math.log(10.0) / 400.0
#: Chebyshev-Lobatto nodes per panel.
NODES = 24
#: Panel half-width: a third of the distance of the logistic poles from the real axis.
PANEL_HALF_WIDTH = math.pi / (3.0 * ELO_SCALE)


@nb.njit(cache=True)
def win_terms(z: float):
    """``(sigmoid(z), sigmoid(z) (1 - sigmoid(z)))`` from one ``exp``, accurate in both tails."""
    e = math.exp(-abs(z))
    d = 1.0 + e
    w = 1.0 / d if z >= 0.0 else e / d
    return w, e / (d * d)


@nb.njit(cache=True)
def _point_sums(src: np.ndarray, a: int, b: int, x: float):
    """``(U(x), V(x))`` over ``src[a:b]``."""
    su = 0.0
    sv = 0.0
    for j in range(a, b):
        w, v = win_terms((src[j] - x) * ELO_SCALE)
        su += w
        sv += v
    return su, sv


@nb.njit(cache=True)
def _layout(x: np.ndarray, a: int, b: int):
    """Panels covering ``x[a:b]``: ``(grid, panel and coordinate of each point, used)``."""
    lo = x[a]
    hi = x[a]
    for i in range(a, b):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
    n_panels = max(1, int(math.ceil((hi - lo) / (2.0 * PANEL_HALF_WIDTH))))
    width = (hi - lo) / n_panels
    if not 0.5 * width > 0.0:  # all equal, or a spread so small that half of it underflows
        width = 1.0
    grid = PanelGrid(lo, hi, n_panels, width)
    panel = np.empty(b - a, dtype=np.int64)
    coord = np.empty(b - a)
    used = np.zeros(n_panels, dtype=np.bool_)
    for i in range(a, b):
        p, t = panel_coordinate(grid, x[i])
        panel[i - a] = p
        coord[i - a] = t
        used[p] = True
    return grid, panel, coord, used


@nb.njit(cache=True)
def self_sums(x: np.ndarray, a: int, b: int, out_u: np.ndarray, out_v: np.ndarray,
              want_v: bool, force: int) -> None:
    """``U(x_i)`` (and ``V(x_i)`` if ``want_v``) over the sources ``x[a:b]`` at the same points.

    The player's own term is included.  ``force``: 0 picks the cheaper method,
    1 forces the direct double loop, 2 forces interpolation.

    Interpolation (both sides use the same panels of half-width at most
    ``PANEL_HALF_WIDTH``):

    1. *sources*: on a panel, ``sigmoid(a (y - x))`` is interpolated in ``y``
       at the panel's Chebyshev nodes ``y_k``, uniformly for every real ``x``
       (the poles are ``pi/a`` away whatever ``x`` is); so the panel's sources
       act as ``m`` pseudo-sources at ``y_k`` with charges
       ``q_k = sum_j L_k(y_j)`` (Lagrange basis, barycentric form);
    2. *targets*: ``U`` and ``V`` are evaluated exactly from the pseudo-sources
       at every panel's nodes and interpolated at the points (Clenshaw).

    Cost ``O(n m + (panels m)^2)`` instead of ``O(n^2)``.
    """
    n = b - a
    if n == 1:
        out_u[a] = 0.5
        out_v[a] = 0.25
        return
    grid, panel, coord, used = _layout(x, a, b)
    n_panels = grid.n
    n_used = 0
    for p in range(n_panels):
        if used[p]:
            n_used += 1
    m = NODES
    fast_cost = 3 * n * m + (n_used * m) ** 2 + n_used * m * m
    direct = n * n <= fast_cost if force == 0 else force == 1
    if direct:
        for i in range(a, b):
            su, sv = _point_sums(x, a, b, x[i])
            out_u[i] = su
            out_v[i] = sv
        return
    tn = cheb_nodes(m)
    bw = lobatto_weights(m)
    half = 0.5 * grid.width
    ids = np.flatnonzero(used)
    slot = np.full(n_panels, -1, dtype=np.int64)
    for q in range(n_used):
        slot[ids[q]] = q
    # 1. charges of the pseudo-sources
    charge = np.zeros((n_used, m))
    tmp = np.empty(m)
    for i in range(a, b):
        p = panel[i - a]
        t = coord[i - a]
        row = slot[p]
        exact = -1
        s = 0.0
        for k in range(m):
            d = t - tn[k]
            if d == 0.0:
                exact = k
                break
            tmp[k] = bw[k] / d
            s += tmp[k]
        if exact >= 0:
            charge[row, exact] += 1.0
        else:
            for k in range(m):
                charge[row, k] += tmp[k] / s
    # 2. exact sums at every node of every used panel, then Chebyshev coefficients
    cmat = cheb_matrix(m)
    coef_u = np.empty((n_used, m))
    coef_v = np.empty((n_used, m))
    vals_u = np.empty(m)
    vals_v = np.empty(m)
    for qt in range(n_used):
        ct = panel_mid(grid, ids[qt])
        for kt in range(m):
            xt = ct + half * tn[kt]
            su = 0.0
            sv = 0.0
            for qs in range(n_used):
                cs = panel_mid(grid, ids[qs])
                for ks in range(m):
                    w, v = win_terms((cs + half * tn[ks] - xt) * ELO_SCALE)
                    su += charge[qs, ks] * w
                    sv += charge[qs, ks] * v
            vals_u[kt] = su
            vals_v[kt] = sv
        cheb_fit(cmat, vals_u, coef_u[qt])
        cheb_fit(cmat, vals_v, coef_v[qt])
    for i in range(a, b):
        p = panel[i - a]
        out_u[i] = clenshaw(coef_u[slot[p]], coord[i - a])[0]
        if want_v:
            out_v[i] = clenshaw(coef_v[slot[p]], coord[i - a])[0]


@nb.njit(cache=True)
def rank_performance(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, force: int):
    """Expected rank, actual rank, performance P and sensitivity P' of every participant.

    ``x`` are the ratings before the round and ``lo``/``hi`` the 0-based tie
    ranges, both in standings order.  Eq. 4 with ties split 1/2:
    ``r = 1 + #better + (t-1)/2 = 1 + (lo + hi)/2`` and
    ``r_hat = 1 + sum_{j not tied} w_j + (t-1)/2`` (``t`` = size of the tie group);
    ``P = log2(r_hat / r)`` (Eq. 5) and
    ``P' = (1 + sum_{j != i} w_j (1 - w_j)) / (1 + sum_{j != i} w_j)`` (Eq. 12).
    """
    n = x.size
    u = np.empty(n)
    v = np.empty(n)
    self_sums(x, 0, n, u, v, True, force)
    ug = np.empty(n)
    vg = np.empty(n)
    a = 0
    while a < n:
        b = a + 1
        while b < n and lo[b] == lo[a]:
            b += 1
        self_sums(x, a, b, ug, vg, False, force)
        a = b
    erank = np.empty(n)
    arank = np.empty(n)
    perf = np.empty(n)
    pprime = np.empty(n)
    inv_ln2 = 1.0 / math.log(2.0)
    for i in range(n):
        half_ties = 0.5 * (hi[i] - lo[i])
        erank[i] = 1.0 + (u[i] - ug[i]) + half_ties
        arank[i] = 1.0 + lo[i] + half_ties
        perf[i] = math.log(erank[i] / arank[i]) * inv_ln2
        pprime[i] = (1.0 + (v[i] - 0.25)) / (1.0 + (u[i] - 0.5))
    return erank, arank, perf, pprime
