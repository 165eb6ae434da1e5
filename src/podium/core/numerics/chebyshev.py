"""Piecewise Chebyshev interpolation on a grid of panels: nodes, fit, evaluation.

Every fast kernel of the systems interpolates a sum of analytic terms on panels
whose half-width is a fixed fraction of the distance of the terms' nearest complex
singularity from the real axis, so that the interpolant at Chebyshev-Lobatto nodes
converges geometrically (a Bernstein ellipse of ``rho`` about 3.5 or more) and is exact
to rounding.  This module holds that machinery once:

* :class:`PanelGrid` and :func:`panel_grid` -- equal panels covering ``[left, right]``;
  :func:`cover_points` -- panels starting at sorted points, covering only those points;
* :func:`cheb_nodes`, :func:`lobatto_weights` -- the nodes ``cos(pi j / (m - 1))``
  and their barycentric weights;
* :func:`cheb_matrix`, :func:`cheb_fit` -- values at the nodes to coefficients (DCT-I);
* :func:`clenshaw` -- value and derivative of a Chebyshev series; :func:`cheb_eval` --
  an interpolant's value at a point of its panel;
* :func:`panel_zero` -- the zero of a decreasing interpolant on one panel.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.newton import newton_begin, newton_next
from podium.core.numerics.special import own_logistic_term

__all__ = [
    "CHEB_NODES",
    "PanelGrid",
    "panel_grid",
    "panel_ends",
    "panel_span",
    "panel_mid",
    "panel_coordinate",
    "cover_points",
    "cheb_nodes",
    "lobatto_weights",
    "cheb_matrix",
    "cheb_fit",
    "clenshaw",
    "cheb_eval",
    "panel_zero",
]

# Chebyshev-Lobatto nodes per panel of the fast performance evaluation, see
# ``performance_zeros``: with panels of half-width sqrt(3)*delta_min/2 the
# interpolation error is below 1e-16 of the sum of the terms' magnitudes.
CHEB_NODES = 32


class PanelGrid(NamedTuple):
    """``n`` equal panels of width ``width`` covering ``[left, right]``."""

    left: float
    right: float
    n: int
    width: float


@nb.njit(cache=True)
def panel_grid(left: float, right: float, half: float) -> PanelGrid:
    """The fewest equal panels of half-width at most ``half`` covering ``[left, right]``.

    Parameters
    ----------
    left, right:
        The interval (``right >= left``).
    half:
        The largest half-width allowed.

    Returns
    -------
    PanelGrid
        At least one panel.
    """
    n = int(math.ceil((right - left) / (2.0 * half)))
    if n < 1:
        n = 1
    return PanelGrid(left, right, n, (right - left) / n)


@nb.njit(cache=True)
def panel_ends(grid: PanelGrid, p: int) -> tuple[float, float]:
    """Ends ``(a, b)`` of panel ``p`` (the last one ends exactly at ``grid.right``)."""
    a = grid.left + p * grid.width
    b = grid.left + (p + 1) * grid.width if p < grid.n - 1 else grid.right
    return a, b


@nb.njit(cache=True)
def panel_span(grid: PanelGrid, p: int) -> tuple[float, float, float, float]:
    """Ends, centre and half-width ``(a, b, c, r)`` of panel ``p``: ``x = c + r t``."""
    a, b = panel_ends(grid, p)
    return a, b, 0.5 * (a + b), 0.5 * (b - a)


@nb.njit(cache=True)
def panel_mid(grid: PanelGrid, p: int) -> float:
    """Centre of panel ``p``, ``left + (p + 1/2) width``."""
    return grid.left + (p + 0.5) * grid.width


@nb.njit(cache=True)
def panel_coordinate(grid: PanelGrid, x: float) -> tuple[int, float]:
    """The panel ``p`` holding ``x`` (clamped to the grid) and ``x``'s coordinate ``t``
    in it, clamped to ``[-1, 1]``."""
    p = int((x - grid.left) / grid.width)
    if p < 0:
        p = 0
    elif p >= grid.n:
        p = grid.n - 1
    t = (x - panel_mid(grid, p)) / (0.5 * grid.width)
    if t < -1.0:
        t = -1.0
    elif t > 1.0:
        t = 1.0
    return p, t


@nb.njit(cache=True)
def cover_points(xs: np.ndarray, width: float) -> np.ndarray:
    """Cover sorted points greedily with panels ``[xs[start], xs[start] + width]``.

    Each panel starts at the first point the previous ones leave out, so only the
    stretches that hold points are covered: at most ``min(xs.size, span / width + 1)``
    panels, fewer than :func:`panel_grid` needs when the points cluster.

    Parameters
    ----------
    xs:
        The points, sorted ascending (at least one).
    width:
        The largest width of a panel (a panel's points are ``xs[i0:i1]``, within
        ``width`` of ``xs[i0]``).

    Returns
    -------
    ndarray of int64
        ``starts`` with ``starts[0] = 0`` and ``starts[-1] = xs.size``: panel ``p``
        holds ``xs[starts[p]:starts[p + 1]]``.
    """
    n = xs.size
    starts = np.empty(n + 1, dtype=np.int64)
    p = 0
    starts[0] = 0
    a = xs[0]
    for k in range(1, n):
        if xs[k] - a > width:
            p += 1
            starts[p] = k
            a = xs[k]
    p += 1
    starts[p] = n
    return starts[: p + 1]


@nb.njit(cache=True)
def cheb_nodes(m: int) -> np.ndarray:
    """The ``m`` Chebyshev-Lobatto points ``t_j = cos(pi j / (m - 1))``, from ``+1`` down
    to ``-1`` (``j = 0`` is a panel's right end, ``j = m - 1`` its left end)."""
    t = np.empty(m)
    for j in range(m):
        t[j] = math.cos(math.pi * j / (m - 1))
    return t


@nb.njit(cache=True)
def lobatto_weights(m: int) -> np.ndarray:
    """Barycentric interpolation weights of the ``m`` Chebyshev-Lobatto points:
    ``(-1)^j``, halved at both ends."""
    bw = np.empty(m)
    for k in range(m):
        bw[k] = (1.0 if k % 2 == 0 else -1.0) * (0.5 if k == 0 or k == m - 1 else 1.0)
    return bw


@nb.njit(cache=True)
def cheb_matrix(n: int) -> np.ndarray:
    """Matrix turning values at the ``n`` Chebyshev-Lobatto points into coefficients (DCT-I).

    Parameters
    ----------
    n:
        Number of points ``t_j = cos(pi j / (n - 1))``, ``j = 0..n-1``.

    Returns
    -------
    ndarray, shape (n, n)
        ``C`` with ``coef = C @ values`` the coefficients of ``sum_k coef[k] T_k``.
    """
    m = n - 1
    c = np.empty((n, n))
    for k in range(n):
        for j in range(n):
            w = 0.5 if (j == 0 or j == m) else 1.0
            c[k, j] = w * math.cos(math.pi * k * j / m) * 2.0 / m
        if k == 0 or k == m:
            for j in range(n):
                c[k, j] *= 0.5
    return c


@nb.njit(cache=True, inline="always")
def cheb_fit(cmat: np.ndarray, values: np.ndarray, coef: np.ndarray) -> None:
    """Fill ``coef`` with the Chebyshev coefficients ``cmat @ values``.

    Parameters
    ----------
    cmat:
        :func:`cheb_matrix` of the node count.
    values:
        Values at the Chebyshev-Lobatto nodes (:func:`cheb_nodes` order).
    coef:
        Output, ``values.size`` coefficients.
    """
    m = coef.size
    for k in range(m):
        s = 0.0
        for j in range(m):
            s += cmat[k, j] * values[j]
        coef[k] = s


@nb.njit(cache=True, inline="always")
def clenshaw(coef: np.ndarray, t: float) -> tuple[float, float]:
    """Value and d/dt of ``sum_k coef[k] T_k(t)`` (Clenshaw's recurrence).

    Parameters
    ----------
    coef:
        Chebyshev coefficients.
    t:
        Point in ``[-1, 1]``.

    Returns
    -------
    value, deriv : float
    """
    n = coef.size
    # value
    b1 = 0.0
    b2 = 0.0
    # derivative via the U recurrence: d/dt T_k = k U_{k-1}
    d1 = 0.0
    d2 = 0.0
    for k in range(n - 1, 0, -1):
        b0 = coef[k] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = b0
        # sum_k k coef[k] U_{k-1}(t) with Clenshaw for U (shifted index)
        e0 = k * coef[k] + 2.0 * t * d1 - d2
        d2 = d1
        d1 = e0
    value = coef[0] + t * b1 - b2
    # for the U-series sum_{k>=1} a_k U_{k-1}, Clenshaw leaves the sum in e_1
    return value, d1


@nb.njit(cache=True, inline="always")
def cheb_eval(coef: np.ndarray, c: float, r: float, x: float) -> float:
    """Value at ``x`` of the interpolant with coefficients ``coef`` on the panel
    ``[c - r, c + r]`` (``x`` clamped to the panel).

    Parameters
    ----------
    coef:
        Chebyshev coefficients (:func:`cheb_fit`).
    c, r:
        Panel centre and half-width (``r > 0``): ``x = c + r t``.
    x:
        The point.

    Returns
    -------
    float
        ``sum_k coef[k] T_k(t)`` at ``t = (x - c) / r`` clamped to ``[-1, 1]``.
    """
    t = (x - c) / r
    if t > 1.0:
        t = 1.0
    elif t < -1.0:
        t = -1.0
    return clenshaw(coef, t)[0]


@nb.njit(cache=True)
def panel_zero(coef: np.ndarray, qa: float, qb: float, c: float, r: float, own_mu: float,
               own_w: float, with_own: bool) -> float:
    """Zero on one panel of a decreasing Chebyshev interpolant, plus an optional own term.

    Solves ``sum_k coef[k] T_k(t) [+ own_logistic_term(c + r t, own_mu, own_w)] = 0``
    for ``t`` in ``[-1, 1]`` by safeguarded Newton
    (:func:`~podium.core.numerics.newton.newton_next`), starting from the secant
    between the panel's end values.  This is the panel step shared by
    :func:`~podium.core.numerics.performance.performance_zeros` (no own term) and
    Elo-R's per-player performances (with the player's own term).

    Parameters
    ----------
    coef:
        Chebyshev coefficients of the shared part on the panel ``[c - r, c + r]``.
    qa, qb:
        The whole function's values at the panel's left and right ends
        (``qa >= 0 >= qb``).
    c, r:
        Panel centre and half-width: ``x = c + r t``.
    own_mu, own_w:
        The own term's centre and weight (ignored unless ``with_own``).
    with_own:
        Whether to add the own term.

    Returns
    -------
    float
        The zero's ``t``; the zero is at ``x = c + r t``.
    """
    state = newton_begin(-1.0, 1.0, -1.0 + 2.0 * qa / (qa - qb) if qa > qb else 0.0)
    while state.running:
        val, der = clenshaw(coef, state.x)
        if with_own:
            v, vp = own_logistic_term(c + r * state.x, own_mu, own_w)
            val += v
            der += r * vp
        state = newton_next(state, val, der)
    return state.x
