"""Numba kernels of the all-pairs Glicko and BAR systems (:mod:`podium.systems.glicko`).

Both systems sum, for every participant ``i``, a term over every opponent ``j``.

* Glicko: the win probability ``p_ij = 1/2 + 1/2 tanh(k_j (mu_i - mu_j))`` depends on
  ``i`` only through ``mu_i``, so ``sum_j g_j p_ij`` is one function of ``x = mu_i``
  for the whole round, ``1/2 sum_j g_j + T(x)`` with ``T(x) = sum_j w_j tanh(k_j
  (x - mu_j))``.  :func:`tanh_sums` evaluates ``T`` at every participant's rating by
  Chebyshev interpolation on panels (as :func:`podium.core.numerics.performance_zeros`
  does for the performance equation), ``O(N * nodes)`` instead of ``O(N^2)``.
* BAR: the spread ``c_ij = sqrt(s_i^2 + s_j^2 + 2 beta^2)`` depends on both players,
  but the term ``(o_ij - p_ij) / c_ij`` is antisymmetric in ``(i, j)``, so
  :func:`bar_sums` visits each unordered pair once.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    PanelGrid,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    clenshaw,
    panel_coordinate,
    panel_grid,
    panel_mid,
)
from podium.core.numerics.special import fast_tanh

__all__ = ["tanh_sums", "tanh_sums_direct", "bar_sums", "HALF_TANH_MULTIPLIER"]

#: ``pi / (2 sqrt(3))``: the logistic CDF of unit variance is ``1/2 + 1/2 tanh(this * z)``.
HALF_TANH_MULTIPLIER = 0.5 * math.pi / math.sqrt(3.0)
_TANH_MULTIPLIER = 2.0 * HALF_TANH_MULTIPLIER
#: See :func:`podium.systems.topcoder.kernels.expected_ranks`: a fixed number of
#: accumulators keeps the summation order independent of the number of threads.
_CHUNKS = 8


@nb.njit(cache=True, parallel=True)
def tanh_sums_direct(x: np.ndarray, mu: np.ndarray, k: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``T(x_i) = sum_j w_j tanh(k_j (x_i - mu_j))`` for every ``i``, term by term."""
    out = np.empty(x.size)
    for i in nb.prange(x.size):
        xi = x[i]
        s = 0.0
        for j in range(mu.size):
            s += w[j] * fast_tanh(k[j] * (xi - mu[j]))
        out[i] = s
    return out


@nb.njit(cache=True, parallel=True)
def _panel_values(grid: PanelGrid, tnodes: np.ndarray, mu: np.ndarray, k: np.ndarray,
                  w: np.ndarray) -> np.ndarray:
    m = tnodes.size
    vals = np.empty((grid.n, m))
    for q in nb.prange(grid.n * m):
        p = q // m
        jj = q - p * m
        xq = panel_mid(grid, p) + 0.5 * grid.width * tnodes[jj]
        s = 0.0
        for j in range(mu.size):
            s += w[j] * fast_tanh(k[j] * (xq - mu[j]))
        vals[p, jj] = s
    return vals


@nb.njit(cache=True)
def _panel_eval(x: np.ndarray, grid: PanelGrid, coef: np.ndarray) -> np.ndarray:
    out = np.empty(x.size)
    for i in range(x.size):
        p, t = panel_coordinate(grid, x[i])
        v, _ = clenshaw(coef[p], t)
        out[i] = v
    return out


@nb.njit(cache=True)
def tanh_sums(x: np.ndarray, mu: np.ndarray, k: np.ndarray, w: np.ndarray,
              method: int = 0) -> np.ndarray:
    """``T(x_i) = sum_j w_j tanh(k_j (x_i - mu_j))`` for every ``i``.

    ``method``: 0 chooses the cheaper of the two below, 1 sums term by term
    (``O(len(x) * len(mu))``), 2 interpolates.

    Interpolation: ``T`` is analytic in the strip ``|Im x| < pi / (2 max k)`` (the
    poles of tanh nearest to the real axis), so on panels of half-width half that
    strip its Chebyshev interpolant at ``CHEB_NODES`` = 32 Lobatto points converges
    to rounding level (Bernstein ellipse rho ~ 4: the argument of
    :func:`~podium.core.numerics.performance_zeros`).  The panels cover
    ``[min x, max x]``; every node costs one pass over the terms and every
    evaluation one Clenshaw sum, ``O(len(mu) * panels * 32 + len(x) * 32)`` in all.
    """
    n_x = x.size
    n = mu.size
    if n_x == 0 or n == 0:
        return np.zeros(n_x)
    kmax = 0.0
    for j in range(n):
        if k[j] > kmax:
            kmax = k[j]
    a = x.min()
    b = x.max()
    m = CHEB_NODES
    half = 0.5 * (0.5 * math.pi / kmax) if kmax > 0.0 else 1.0
    if b - a < 1e-9 * half:
        b = a + half  # one short panel around a single point
    grid = panel_grid(a, b, half)
    direct_cost = float(n_x) * n
    cheb_cost = float(grid.n) * m * n + 2.0 * n_x * m
    if method == 1 or (method == 0 and direct_cost <= cheb_cost):
        return tanh_sums_direct(x, mu, k, w)
    vals = _panel_values(grid, cheb_nodes(m), mu, k, w)
    cmat = cheb_matrix(m)
    coef = np.zeros((grid.n, m))
    for p in range(grid.n):
        cheb_fit(cmat, vals[p], coef[p])
    return _panel_eval(x, grid, coef)


@nb.njit(cache=True, parallel=True)
def bar_sums(mu: np.ndarray, var: np.ndarray, lo: np.ndarray, two_perf_var: float) -> np.ndarray:
    """``U_i = sum_j (o_ij - p_ij) / c_ij`` for every ``i`` (BAR, Weng & Lin's BT-full).

    ``c_ij = sqrt(var_i + var_j + two_perf_var)``; ``o_ij`` is 1, 1/2 or 0 as ``i``
    placed better than, level with or worse than ``j`` (by ``lo``); ``p_ij = 1/2 +
    1/2 tanh(HALF_TANH_MULTIPLIER (mu_i - mu_j) / c_ij)``, computed as ``1 / (1 +
    exp(-2 HALF_TANH_MULTIPLIER (mu_i - mu_j) / c_ij))`` (one ``exp``, one division).
    The term of ``(j, i)`` is
    minus that of ``(i, j)`` and ``i``'s own is 0, so each unordered pair is visited once.
    """
    n = mu.size
    acc = np.zeros((_CHUNKS, n))
    for ch in nb.prange(_CHUNKS):
        for i in range(ch, n, _CHUNKS):
            mi = mu[i]
            vi = var[i] + two_perf_var
            li = lo[i]
            row = 0.0
            for j in range(i + 1, n):
                inv_c = 1.0 / math.sqrt(vi + var[j])
                # p_ij = 1/2 + 1/2 tanh(u) = 1 / (1 + exp(-2u)); exp overflow gives p = 0
                p = 1.0 / (1.0 + math.exp(_TANH_MULTIPLIER * (mu[j] - mi) * inv_c))
                if li < lo[j]:
                    o = 1.0
                elif li > lo[j]:
                    o = 0.0
                else:
                    o = 0.5
                val = (o - p) * inv_c
                row += val
                acc[ch, j] -= val
            acc[ch, i] += row
    out = np.zeros(n)
    for ch in range(_CHUNKS):
        for i in range(n):
            out[i] += acc[ch, i]
    return out
