"""Elo-MMR's belief of one player as Numba kernels, the primitives of the smoothed
Elo-MMR's phase 2 and first pass (:mod:`podium.history._smooth_kernels`; the
equations in docs/history.md).

A belief is a normal factor ``(m0, w0)`` and one logistic factor per performance
``p_j`` of spread ``beta_j`` whose multiplicity ``omega_j`` decays with each
pseudodiffusion (Algorithm 2 of [EbtekarLiu2021]): :func:`diffuse` applies one,
:func:`gather` collects the live factors of a run of a player's entries, and
:func:`robust_zero` finds the rating, the zero of the summed ``L'`` (Eq. 6), its sums
in SIMD lanes (:mod:`podium.core.numerics.lanes`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.lanes import EXP_FLOOR, SIMD_MATH, exp_neg, logistic_sums
from podium.core.numerics.newton import HI_BOUND, LO_BOUND

__all__ = ["LO", "HI", "STEP_TOL", "QUADRATIC_STEP", "MAX_STEPS", "diffuse", "log_window",
           "gather", "robust_zero"]

#: The bracket of every solve (the Elo-MMR solvers' own).
LO, HI = LO_BOUND, HI_BOUND
#: A Newton solve stops when its step is below this (rating points) ...
STEP_TOL = 1e-8
#: ... or when a Newton step (not a bisection) is below this: quadratic convergence
#: then leaves an error below 1e-9 ...
QUADRATIC_STEP = 1e-4
#: ... or after this many steps.
MAX_STEPS = 100


@nb.njit(cache=True, inline="always")
def diffuse(sig: float, gamma: float, rho: float, collapse: bool, m0: float, w0: float,
            lw: float, mu: float) -> tuple[float, float, float, float, float]:
    """Algorithm 2 (pseudodiffusion): ``kappa = (sig / hypot(sig, gamma))^2``,
    ``transfer = kappa^rho``.  The normal factor keeps ``transfer w0``, receives
    ``(1 - transfer)(w0 + lw)`` centred at the rating ``mu`` and is scaled by ``kappa``;
    every logistic multiplicity is multiplied by ``transfer kappa``.

    ``lw`` is the logistic factors' total weight ``sum_j omega_j / beta_j^2``.  Returns
    ``(m0, w0, lw, ln(transfer kappa), sig_new)``; ``collapse`` (``rho = inf``) turns the
    whole belief into the normal ``N(mu, sig_new^2)``.
    """
    s_new = math.hypot(sig, gamma)
    if collapse:
        return mu, 1.0 / (s_new * s_new), 0.0, -math.inf, s_new
    if s_new == sig:
        return m0, w0, lw, 0.0, s_new
    kappa = (sig / s_new) ** 2
    transfer = kappa ** rho if rho > 0.0 else 1.0
    from_norm = transfer * w0
    from_transfer = (1.0 - transfer) * (w0 + lw)
    total = from_norm + from_transfer
    if total > 0.0:
        m0 = (from_norm * m0 + from_transfer * mu) / total
    return m0, kappa * total, lw * transfer * kappa, math.log(transfer * kappa), s_new


@nb.njit(cache=True)
def log_window(wtol: float) -> float:
    """``ln wtol``, the threshold :func:`gather` compares the factors' log multiplicities
    with (``-inf`` for ``wtol = 0``: every factor is live until its multiplicity
    underflows)."""
    return math.log(wtol) if wtol > 0.0 else -math.inf


@nb.njit(cache=True, fastmath=SIMD_MATH, error_model="numpy")
def gather(e_lo: int, e_hi: int, step: int, perf: np.ndarray, a: np.ndarray,
           ins: np.ndarray, ln_s: float, ln_wtol: float, tp: np.ndarray, ta: np.ndarray,
           tb: np.ndarray, n: int) -> int:
    """Append the live logistic factors of entries ``e_lo, e_lo + step, ..`` (up to
    ``e_hi``, exclusive; newest first going back in time, ``step = -1``, or oldest
    first going forward, ``+1``) to the term arrays ``tp`` (centre), ``ta`` (outer
    weight ``omega_j pi / (sqrt 3 beta_j)``), ``tb`` (inner weight
    ``pi / (2 sqrt 3 beta_j)``).  Entry arrays are in player order.  Stops at the first
    factor whose multiplicity ``omega_j = exp(ln_s - ins_j)`` is below ``exp(ln_wtol)``
    (the rest only decay further; found on the logs, without an ``exp``), then fills
    the arrays in lanes (:func:`~podium.core.numerics.lanes.exp_neg`) where
    ``ln_wtol >= EXP_FLOOR``, through libm's ``exp`` below (stopping where it
    underflows).  Returns the new count."""
    m = 0
    e = e_lo
    while e != e_hi and ln_s - ins[e] >= ln_wtol:
        m += 1
        e += step
    if ln_wtol < EXP_FLOOR:
        for j in range(m):
            e = e_lo + j * step
            om = math.exp(ln_s - ins[e])
            if om == 0.0:
                return n + j
            tp[n + j] = perf[e]
            ta[n + j] = om * a[e]
            tb[n + j] = 0.5 * a[e]
        return n + m
    if step > 0:
        for j in range(m):
            tp[n + j] = perf[e_lo + j]
            ta[n + j] = exp_neg(ln_s - ins[e_lo + j]) * a[e_lo + j]
            tb[n + j] = 0.5 * a[e_lo + j]
    else:
        for j in range(m):
            tp[n + j] = perf[e_lo - j]
            ta[n + j] = exp_neg(ln_s - ins[e_lo - j]) * a[e_lo - j]
            tb[n + j] = 0.5 * a[e_lo - j]
    return n + m


@nb.njit(cache=True, fastmath=SIMD_MATH, error_model="numpy")
def robust_zero(w0a: float, m0a: float, w0b: float, m0b: float, tp: np.ndarray,
                ta: np.ndarray, tb: np.ndarray, n: int, start: float) -> float:
    """The zero of ``L'(x) = w0a (x - m0a) + w0b (x - m0b) + sum_k ta_k tanh((x - tp_k)
    tb_k)`` (Eq. 6 of [EbtekarLiu2021] with one or two normal factors): strictly
    increasing, so a bracketed Newton iteration from ``start`` finds it."""
    lo, hi = LO, HI
    x = start if LO < start < HI else 0.5 * (LO + HI)
    last = math.inf
    for _ in range(MAX_STEPS):
        f, fp = logistic_sums(x, tp, ta, tb, 0, n)
        f += w0a * (x - m0a) + w0b * (x - m0b)
        fp += w0a + w0b
        if f == 0.0:
            return x
        if f > 0.0:
            hi = x
        else:
            lo = x
        nx = x - f / fp if fp > 0.0 else 0.5 * (lo + hi)
        # bisect when Newton leaves the bracket or does not halve |f| (it can
        # bounce between the flat ends of the tanh terms)
        newton = lo < nx < hi and abs(f) <= 0.5 * last
        if not newton:
            nx = 0.5 * (lo + hi)
        last = abs(f)
        step = abs(nx - x)
        # a Newton step this small leaves an error of about (L''/2L') step^2, below
        # 1e-9 for these terms (|L''/L'| < 1/beta): no second evaluation needed
        if step < STEP_TOL or hi - lo < STEP_TOL or (newton and step < QUADRATIC_STEP):
            return nx
        x = nx
    return x
