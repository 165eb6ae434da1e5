"""Numba kernels of :mod:`podium.outcomes`: side performance distributions on a grid.

A *side* (a player or a team) performs a random variable ``P_t`` of one of three kinds
(``KIND_*``): normal with standard deviation ``scale``; logistic with scale ``scale``
(standard deviation ``scale * pi / sqrt 3``); or a weighted sum of independent
logistics (a team of a logistic model), whose density and distribution function are
evaluated from the characteristic function ``phi(u) = prod_i pi a_i u / sinh(pi a_i u)``
([Gil-Pelaez], the trapezoid rule in ``u``, spectrally accurate):

.. math::

    f(y) = \\frac{1}{\\pi} \\int_0^\\infty \\phi(u) \\cos(u y)\\,du, \\qquad
    F(y) = \\Phi(y / \\sigma) + \\frac{1}{\\pi} \\int_0^\\infty
           \\frac{\\phi(u) - e^{-\\sigma^2 u^2 / 2}}{u} \\sin(u y)\\,du

with ``sigma`` the sum's standard deviation (the normal reference removes the pole of
``sin(u y) / u`` at 0 and leaves a decaying, odd difference to invert).  The nodes
``u_k = k du`` and their weights are precomputed per side by :mod:`podium.outcomes`
(``cf_phi[k] = du/pi * c_k * phi(u_k)``, ``cf_psi[k] = du/pi * (phi(u_k) - exp(-sigma^2
u_k^2 / 2)) / u_k``); the sums run ``cos(k theta)``, ``sin(k theta)`` by rotation, so
no trigonometric function is called per node.

Integrals over the performance ``x`` use the trapezoid rule on a uniform grid
``x_g = x0 + g h``: for analytic integrands decaying on both sides it converges
geometrically in ``1 / h``.  The step is ``sd_min / (c sqrt(max(T, 4)))`` with
``c = 1.5`` when a side is a lone logistic (its distribution function has poles nearest
the real axis, at ``sqrt 3`` standard deviations; a sum of ``m`` equal logistics has them
``sqrt m`` times farther, relative to its deviation), 1.25 for sums of logistics and 1
for normal sides, and 1 from 50 sides on: measured on ``T`` equal sides (the worst
case), the places are exact to 6e-12 (normal), 3e-11 (logistic) and 3e-11 (sums of two
to four logistics) for ``T`` from 2 to 200."""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

KIND_GAUSSIAN = 0
KIND_LOGISTIC = 1
KIND_LOGISTIC_SUM = 2

#: A side whose probability of being above (below) ``x`` is under this counts as
#: certainly below (above) it at ``x`` (errors of this size in a probability).
TINY = 1e-17
#: Coefficients of the place polynomial below this are dropped at its ends (it is a
#: distribution over counts: the mass dropped per grid point is below T * TRIM).
TRIM = 1e-20

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


@nb.njit(cache=True)
def side_point(x: float, mean: float, kind: int, scale: float, reach: float
               ) -> tuple[float, float, float]:
    """Density, survival ``P(P > x)`` and distribution ``P(P <= x)`` at ``x`` of a
    normal or lone logistic side of mean ``mean`` and scale ``scale`` (survival and
    distribution each computed directly, not as ``1 - other``); beyond the side's
    reach (tail mass below ``e^-32``) the side is certainly below or above ``x``."""
    y = x - mean
    if y > reach:
        return 0.0, 0.0, 1.0
    if y < -reach:
        return 0.0, 1.0, 0.0
    z = y / scale
    if kind == KIND_GAUSSIAN:
        return (math.exp(-0.5 * z * z) * _INV_SQRT2PI / scale,
                0.5 * math.erfc(z / _SQRT2), 0.5 * math.erfc(-z / _SQRT2))
    e = math.exp(-abs(z))
    inv = 1.0 / (1.0 + e)
    dens = e * inv * inv / scale
    if z >= 0.0:
        return dens, e * inv, inv
    return dens, inv, e * inv


@nb.njit(cache=True)
def side_at(t: int, x: float, mean: np.ndarray, kind: np.ndarray, scale: np.ndarray,
            reach: np.ndarray) -> tuple[float, float, float]:
    """:func:`side_point` of side ``t`` of the side arrays."""
    return side_point(x, mean[t], kind[t], scale[t], reach[t])


@nb.njit(cache=True)
def sum_values(xs: np.ndarray, t: int, mean: np.ndarray, scale: np.ndarray,
               reach: np.ndarray, cf_off: np.ndarray, cf_du: np.ndarray,
               cf_phi: np.ndarray, cf_psi: np.ndarray, dens: np.ndarray, surv: np.ndarray,
               cdf: np.ndarray) -> None:
    """Density, survival and distribution of the logistic sum ``t`` at every point of
    ``xs``, into ``dens``, ``surv``, ``cdf``: the sums of the module docstring, node by
    node over all points at once (``cos(k theta)``, ``sin(k theta)`` by rotation, each
    point's own chain, so the inner loop runs in parallel lanes)."""
    n = xs.size
    c1 = np.empty(n)
    s1 = np.empty(n)
    ck = np.ones(n)
    sk = np.zeros(n)
    acc_d = np.zeros(n)
    acc_f = np.zeros(n)
    du = cf_du[t]
    for g in range(n):
        theta = du * (xs[g] - mean[t])
        c1[g] = math.cos(theta)
        s1[g] = math.sin(theta)
    for j in range(cf_off[t], cf_off[t + 1]):
        a = cf_phi[j]
        b = cf_psi[j]
        for g in range(n):
            acc_d[g] += a * ck[g]
            acc_f[g] += b * sk[g]
            c = ck[g]
            ck[g] = c * c1[g] - sk[g] * s1[g]
            sk[g] = sk[g] * c1[g] + c * s1[g]
    s = scale[t]
    r = reach[t]
    for g in range(n):
        y = xs[g] - mean[t]
        if y > r:
            dens[g], surv[g], cdf[g] = 0.0, 0.0, 1.0
        elif y < -r:
            dens[g], surv[g], cdf[g] = 0.0, 1.0, 0.0
        else:
            z = y / s
            dens[g] = max(acc_d[g], 0.0)
            surv[g] = min(max(0.5 * math.erfc(z / _SQRT2) - acc_f[g], 0.0), 1.0)
            cdf[g] = min(max(0.5 * math.erfc(-z / _SQRT2) + acc_f[g], 0.0), 1.0)


@nb.njit(cache=True)
def side_values(xs: np.ndarray, mean: np.ndarray, kind: np.ndarray, scale: np.ndarray,
                reach: np.ndarray, cf_off: np.ndarray, cf_du: np.ndarray, cf_phi: np.ndarray,
                cf_psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Density, survival and distribution of every side at the points ``xs``: three
    ``(T, len(xs))`` arrays."""
    n_sides = mean.size
    dens = np.empty((n_sides, xs.size))
    surv = np.empty((n_sides, xs.size))
    cdf = np.empty((n_sides, xs.size))
    for t in range(n_sides):
        if kind[t] == KIND_LOGISTIC_SUM:
            sum_values(xs, t, mean, scale, reach, cf_off, cf_du, cf_phi, cf_psi, dens[t],
                       surv[t], cdf[t])
        else:
            for g in range(xs.size):
                dens[t, g], surv[t, g], cdf[t, g] = side_at(t, xs[g], mean, kind, scale,
                                                            reach)
    return dens, surv, cdf


@nb.njit(cache=True)
def _sum_tables(x0: float, h: float, n_grid: int, mean: np.ndarray, kind: np.ndarray,
                scale: np.ndarray, reach: np.ndarray, cf_off: np.ndarray, cf_du: np.ndarray,
                cf_phi: np.ndarray, cf_psi: np.ndarray) -> tuple[
                    np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Row of each side in the tables (-1: evaluated on the spot) and the density,
    survival and distribution of the logistic sums on the grid."""
    row = np.full(mean.size, -1, dtype=np.int64)
    n_sums = 0
    for t in range(mean.size):
        if kind[t] == KIND_LOGISTIC_SUM:
            row[t] = n_sums
            n_sums += 1
    xs = x0 + h * np.arange(n_grid)
    dens = np.empty((n_sums, n_grid))
    surv = np.empty((n_sums, n_grid))
    cdf = np.empty((n_sums, n_grid))
    for t in range(mean.size):
        if row[t] >= 0:
            sum_values(xs, t, mean, scale, reach, cf_off, cf_du, cf_phi, cf_psi,
                       dens[row[t]], surv[row[t]], cdf[row[t]])
    return row, dens, surv, cdf


@nb.njit(cache=True)
def place_kernel(x0: float, h: float, n_grid: int, mean: np.ndarray, kind: np.ndarray,
                 scale: np.ndarray, reach: np.ndarray, cf_off: np.ndarray,
                 cf_du: np.ndarray, cf_phi: np.ndarray, cf_psi: np.ndarray) -> np.ndarray:
    """``P[t, r]``: the probability that exactly ``r`` other sides perform above side
    ``t``, i.e. that ``t`` finishes at place ``r`` (0-based).

    At each grid point ``x`` the generating polynomial ``prod_s (F_s(x) + S_s(x) z)``
    of the number of sides above ``x`` is built once (``O(A^2)`` for the ``A`` sides
    not certainly above or below ``x``); each side's own factor is then divided out
    (synthetic division in the stable direction: by the larger of ``F`` and ``S``), and
    ``h f_t(x)`` times the quotient is added to row ``t``.  Each row is divided by its
    own quadrature of ``f_t`` (1 to ~1e-13).  ``O(T^2)`` per grid point where the sides
    overlap, ``O(T w)`` in the tails, where the polynomial's mass lies on ``w`` counts
    (its ends below :data:`TRIM` dropped); the divisions of all sides run together,
    one place at a time (independent recurrences side by side rather than one long
    chain).
    """
    n_sides = mean.size
    row, t_dens, t_surv, t_cdf = _sum_tables(x0, h, n_grid, mean, kind, scale, reach,
                                             cf_off, cf_du, cf_phi, cf_psi)
    acc = np.zeros((n_sides, n_sides))  # acc[place, side]
    norm = np.zeros(n_sides)
    poly = np.empty(n_sides + 1)
    work = np.empty(n_sides + 1)
    f_side = np.empty(n_sides, dtype=np.int64)
    f_mul = np.empty(n_sides)
    f_inv = np.empty(n_sides)
    f_w = np.empty(n_sides)
    f_val = np.empty(n_sides)
    b_side = np.empty(n_sides, dtype=np.int64)
    b_mul = np.empty(n_sides)
    b_inv = np.empty(n_sides)
    b_w = np.empty(n_sides)
    b_val = np.empty(n_sides)
    dens = np.empty(n_sides)
    surv = np.empty(n_sides)
    cdf = np.empty(n_sides)
    state = np.empty(n_sides, dtype=np.int64)
    for g in range(n_grid):
        x = x0 + g * h
        shift = 0
        deg = 0  # sides multiplied in (neither certainly above nor below x)
        lo = 0  # the polynomial's coefficients outside [lo, hi] are below TRIM
        hi = 0
        poly[0] = 1.0
        for s in range(n_sides):
            if row[s] >= 0:
                d, sv, cd = t_dens[row[s], g], t_surv[row[s], g], t_cdf[row[s], g]
            else:
                d, sv, cd = side_at(s, x, mean, kind, scale, reach)
            dens[s] = d
            surv[s] = sv
            cdf[s] = cd
            if sv < TINY:
                state[s] = 0  # certainly below x: factor 1
            elif cd < TINY:
                state[s] = 2  # certainly above x: factor z
                shift += 1
            else:
                state[s] = 1
                work[lo] = poly[lo] * cd
                for r in range(lo + 1, hi + 1):
                    work[r] = poly[r] * cd + poly[r - 1] * sv
                work[hi + 1] = poly[hi] * sv
                poly, work = work, poly
                deg += 1
                hi += 1
                while hi > lo and poly[hi] < TRIM:
                    hi -= 1
                while lo < hi and poly[lo] < TRIM:
                    lo += 1
        n_f = 0
        n_b = 0
        for t in range(n_sides):
            w = h * dens[t]
            if w <= 0.0:
                continue
            norm[t] += w
            st = state[t]
            if st == 1:
                if cdf[t] >= surv[t]:
                    f_side[n_f] = t
                    f_mul[n_f] = surv[t]
                    f_inv[n_f] = 1.0 / cdf[t]
                    f_w[n_f] = w
                    f_val[n_f] = 0.0
                    n_f += 1
                else:
                    b_side[n_b] = t
                    b_mul[n_b] = cdf[t]
                    b_inv[n_b] = 1.0 / surv[t]
                    b_w[n_b] = w
                    b_val[n_b] = 0.0
                    n_b += 1
            else:
                base = shift - 1 if st == 2 else shift
                for r in range(lo, hi + 1):
                    acc[base + r, t] += w * poly[r]
        # the quotient by (q + p z) has degree deg - 1: from the constant term up
        # (q >= p) or from the top term down (p > q); the coefficient beyond the window
        # a trimmed end leaves is below TRIM / max(p, q) <= 2 TRIM
        for r in range(lo, min(hi, deg - 1) + 1):
            c = poly[r]
            out = acc[shift + r]
            for i in range(n_f):
                v = (c - f_mul[i] * f_val[i]) * f_inv[i]
                f_val[i] = v
                out[f_side[i]] += f_w[i] * v
        for j in range(hi, max(lo, 1) - 1, -1):
            c = poly[j]
            out = acc[shift + j - 1]
            for i in range(n_b):
                v = (c - b_mul[i] * b_val[i]) * b_inv[i]
                b_val[i] = v
                out[b_side[i]] += b_w[i] * v
    res = np.empty((n_sides, n_sides))
    for t in range(n_sides):
        scale_t = 1.0 / norm[t] if norm[t] > 0.0 else 0.0
        for r in range(n_sides):
            res[t, r] = acc[r, t] * scale_t
    return res


@nb.njit(cache=True)
def first_kernel(x0: float, h: float, n_grid: int, mean: np.ndarray, kind: np.ndarray,
                 scale: np.ndarray, reach: np.ndarray, cf_off: np.ndarray,
                 cf_du: np.ndarray, cf_phi: np.ndarray, cf_psi: np.ndarray) -> np.ndarray:
    """``P(side t performs above every other side)``: ``int f_t prod_{s != t} F_s``,
    the product kept as a sum of logarithms; ``O(T)`` per grid point."""
    n_sides = mean.size
    row, t_dens, _, t_cdf = _sum_tables(x0, h, n_grid, mean, kind, scale, reach, cf_off,
                                        cf_du, cf_phi, cf_psi)
    acc = np.zeros(n_sides)
    norm = np.zeros(n_sides)
    dens = np.empty(n_sides)
    logc = np.empty(n_sides)
    for g in range(n_grid):
        x = x0 + g * h
        total = 0.0
        above = 0
        for s in range(n_sides):
            if row[s] >= 0:
                d, cd = t_dens[row[s], g], t_cdf[row[s], g]
            else:
                d, _, cd = side_at(s, x, mean, kind, scale, reach)
            dens[s] = d
            if cd < TINY:
                above += 1
                logc[s] = -np.inf
            else:
                logc[s] = math.log(cd)
                total += logc[s]
        for t in range(n_sides):
            w = h * dens[t]
            if w <= 0.0:
                continue
            norm[t] += w
            if logc[t] == -np.inf:
                if above == 1:
                    acc[t] += w * math.exp(total)
            elif above == 0:
                acc[t] += w * math.exp(total - logc[t])
    for t in range(n_sides):
        if norm[t] > 0.0:
            acc[t] /= norm[t]
    return acc


@nb.njit(cache=True)
def _chernoff_reach(pa: np.ndarray, thetas: np.ndarray, tail: float) -> float:
    """A ``y`` with ``P(|Y| > y) <= 2 e^-tail`` for ``Y = sum_i a_i L_i`` (``pa``: the
    ``pi a_i > 0``; ``L_i`` independent standard logistics): the best Chernoff bound
    ``P(Y > y) <= e^(-theta y) prod_i pi a_i theta / sin(pi a_i theta)`` over
    ``theta max(a) in thetas``."""
    pa_max = pa.max()
    best = np.inf
    for c in thetas:
        log_m = 0.0
        for i in range(pa.size):
            x = math.pi * c * pa[i] / pa_max
            log_m += math.log(x / math.sin(x))
        best = min(best, (tail + log_m) * pa_max / (math.pi * c))
    return best


@nb.njit(cache=True)
def sum_tables(pa: np.ndarray, size: np.ndarray, sd: np.ndarray, thetas: np.ndarray,
               tail: float, cut: float) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   np.ndarray, np.ndarray]:
    """Reach and characteristic-function nodes of the logistic sums.

    Sum ``s`` has members ``pi a_i`` (row ``s`` of ``pa``, its first ``size[s]``
    entries) and standard deviation ``sd[s]``.  Its reach is the Chernoff bound of
    :func:`_chernoff_reach` (tail mass below ``e^-tail`` beyond it); its
    characteristic function is sampled at ``u_k = k du`` with period ``2 pi / du``
    twice the reach (so that the aliased copies lie beyond the reach of every point
    evaluated) up to where both ``phi`` and ``exp(-sd^2 u^2 / 2)`` are below ``e^-cut``,
    with ``x / sinh x = 2 x e^-x / (1 - e^-2x)`` and ``e^-x`` of node ``k`` the power
    ``(e^(-du pi a_i))^k``.  Returns ``reach``, ``du``, the node count per sum and the
    concatenated weighted values ``cf_phi``, ``cf_psi`` (module docstring).
    """
    n_sums = pa.shape[0]
    reach = np.empty(n_sums)
    du_all = np.empty(n_sums)
    count = np.zeros(n_sums, dtype=np.int64)
    phi_w = np.empty(64)
    psi_w = np.empty(64)
    floor = math.exp(-cut)
    j = 0
    for s in range(n_sums):
        m = size[s]
        a = pa[s, :m]
        reach[s] = _chernoff_reach(a, thetas, tail)
        du = math.pi / reach[s]
        du_all[s] = du
        step = np.exp(-du * a)
        power = np.ones(m)
        w = du / math.pi
        k = 0
        while True:
            u = k * du
            phi = 1.0
            if k > 0:
                for i in range(m):
                    power[i] *= step[i]
                    x = u * a[i]
                    if x < 1e-3:
                        phi *= 1.0 - x * x / 6.0
                    else:
                        phi *= 2.0 * x * power[i] / ((1.0 - power[i]) * (1.0 + power[i]))
            gauss = math.exp(-0.5 * (sd[s] * u) ** 2)
            if j == phi_w.size:
                phi_w = np.concatenate((phi_w, np.empty(j)))
                psi_w = np.concatenate((psi_w, np.empty(j)))
            phi_w[j] = (0.5 if k == 0 else 1.0) * w * phi
            psi_w[j] = 0.0 if k == 0 else w * (phi - gauss) / u
            j += 1
            k += 1
            if phi <= floor and gauss <= floor:
                break
        count[s] = k
    return reach, du_all, count, phi_w[:j].copy(), psi_w[:j].copy()


@nb.njit(cache=True)
def _state(surv: float, cdf: float) -> int:
    """:func:`place_kernel`'s state of a side at a grid point: 0 certainly below it
    (factor 1), 2 certainly above it (factor ``z``), 1 neither."""
    if surv < TINY:
        return 0
    if cdf < TINY:
        return 2
    return 1


@nb.njit(cache=True)
def _pair_side(acc: np.ndarray, t: int, w: float, state: int, surv: float, cdf: float,
               poly: np.ndarray, lo: int, hi: int, deg: int, shift: int) -> None:
    """Add side ``t``'s share of one grid point to ``acc[place, t]``, as
    :func:`place_kernel` does: its own factor divided out of ``poly`` (forward when
    ``cdf >= surv``, else backward, by the same reciprocal), or, for a side certainly
    above or below the point, ``poly`` itself at the places it shifts to."""
    if state == 1:
        val = 0.0
        if cdf >= surv:
            mul = surv
            inv = 1.0 / cdf
            for r in range(lo, min(hi, deg - 1) + 1):
                v = (poly[r] - mul * val) * inv
                val = v
                acc[shift + r, t] += w * v
        else:
            mul = cdf
            inv = 1.0 / surv
            for j in range(hi, max(lo, 1) - 1, -1):
                v = (poly[j] - mul * val) * inv
                val = v
                acc[shift + j - 1, t] += w * v
    else:
        base = shift - 1 if state == 2 else shift
        for r in range(lo, hi + 1):
            acc[base + r, t] += w * poly[r]


@nb.njit(cache=True)
def pair_kernel(x0: float, h: float, n_grid: int, mean: np.ndarray, kind: np.ndarray,
                scale: np.ndarray, reach: np.ndarray, out: np.ndarray) -> None:
    """:func:`place_kernel` of two normal or lone logistic sides, bit for bit, into
    ``out`` (``(2, 2)``: ``P[t, r]``), with no array of the general kernel.

    The same floating-point operations in the same order: at each grid point the
    polynomial of the sides neither certainly above nor below it is ``1``, ``F_a +
    S_a z`` or ``(F_0 + S_0 z)(F_1 + S_1 z)`` (products of the general kernel's
    multiplication by 1 are exact), trimmed as there; each side's factor is divided
    out by its own recurrence (:func:`_pair_side`), and every ``acc[place, t]`` gets
    the same terms, grid point by grid point."""
    acc = np.zeros((2, 2))  # acc[place, side]
    poly = np.empty(3)
    norm0 = 0.0
    norm1 = 0.0
    for g in range(n_grid):
        x = x0 + g * h
        d0, sv0, cd0 = side_point(x, mean[0], kind[0], scale[0], reach[0])
        d1, sv1, cd1 = side_point(x, mean[1], kind[1], scale[1], reach[1])
        st0 = _state(sv0, cd0)
        st1 = _state(sv1, cd1)
        shift = int(st0 == 2) + int(st1 == 2)
        lo = 0
        if st0 == 1 and st1 == 1:
            poly[0] = cd0 * cd1
            poly[1] = sv0 * cd1 + cd0 * sv1
            poly[2] = sv0 * sv1
            deg = 2
            hi = 2
            while hi > lo and poly[hi] < TRIM:
                hi -= 1
            while lo < hi and poly[lo] < TRIM:
                lo += 1
        elif st0 == 1:  # one factor, at least TINY > TRIM at both ends: no trim
            poly[0] = cd0
            poly[1] = sv0
            deg = hi = 1
        elif st1 == 1:
            poly[0] = cd1
            poly[1] = sv1
            deg = hi = 1
        else:
            poly[0] = 1.0
            deg = hi = 0
        w = h * d0
        if not w <= 0.0:  # place_kernel's test (a NaN weight counts)
            norm0 += w
            _pair_side(acc, 0, w, st0, sv0, cd0, poly, lo, hi, deg, shift)
        w = h * d1
        if not w <= 0.0:
            norm1 += w
            _pair_side(acc, 1, w, st1, sv1, cd1, poly, lo, hi, deg, shift)
    scale0 = 1.0 / norm0 if norm0 > 0.0 else 0.0
    scale1 = 1.0 / norm1 if norm1 > 0.0 else 0.0
    for r in range(2):
        out[0, r] = acc[r, 0] * scale0
        out[1, r] = acc[r, 1] * scale1


@nb.njit(cache=True, parallel=True)
def place_pairs(x0: np.ndarray, h: np.ndarray, n_grid: np.ndarray, mean: np.ndarray,
                kind: np.ndarray, scale: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """:func:`place_kernel` of many matches of two lone sides (no sums of logistics),
    bit for bit (:func:`pair_kernel`): match ``r`` has grid ``x0[r] + g h[r]``, ``g <
    n_grid[r]`` (0: left out, NaN) and sides ``mean[r]``, ``kind[r]``, ``scale[r]``,
    ``reach[r]``; returns ``(R, 2, 2)``."""
    n_rounds = x0.size
    out = np.full((n_rounds, 2, 2), np.nan)
    for r in nb.prange(n_rounds):  # the matches are independent
        if n_grid[r] == 0:
            continue
        pair_kernel(x0[r], h[r], n_grid[r], mean[r], kind[r], scale[r], reach[r], out[r])
    return out
