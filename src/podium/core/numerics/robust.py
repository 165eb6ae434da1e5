"""The rating as a robust average of past performances (Eq. 6-7 of [EbtekarLiu2021])."""

from __future__ import annotations

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import tanh_sech2

__all__ = ["robust_average_zero", "solve_robust_average"]


@nb.njit(cache=True)
def robust_average_zero(mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, first: int,
                        stop: int, scale: float, offset: float, slope: float,
                        start: float) -> tuple[float, int]:
    """Zero of ``offset + slope*x + scale * sum_k w_out[k] tanh((x - mu[k]) w_arg[k])``
    over ``k in [first, stop)``.

    This is ``L'(s)`` of Eq. 6 -- the rating as a robust average of past
    performances (Eq. 7) -- with the Gaussian factor ``(mu0, w0)`` passed as
    ``offset = -mu0 * w0`` and ``slope = w0``, and ``scale`` a common factor of
    the logistic weights.  Strictly increasing, so the zero is unique; solved on
    ``SOLVER_BOUNDS`` from ``start``.

    Returns ``(x, status)``.
    """
    state = newton_begin(LO_BOUND, HI_BOUND, start)
    while state.running:
        guess = state.x
        s = offset + slope * guess
        sp = slope
        for k in range(first, stop):
            t, d2 = tanh_sech2((guess - mu[k]) * w_arg[k])
            wo = w_out[k] * scale
            s += t * wo
            sp += d2 * w_arg[k] * wo
        # increasing function: negate to solve a decreasing one
        state = newton_next(state, -s, -sp)
    return state.x, state.status


@nb.njit(cache=True)
def solve_robust_average(mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, offset: float,
                         slope: float, start: float) -> tuple[float, int]:
    """:func:`robust_average_zero` over whole arrays (scale 1)."""
    return robust_average_zero(mu, w_arg, w_out, 0, mu.size, 1.0, offset, slope, start)
