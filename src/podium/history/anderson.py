"""Anderson acceleration of a fixed-point iteration ``x = G(x)`` ([WalkerNi2011]),
shared by the whole-history engines whose sweeps converge slowly along a few
directions (a common shift of every rating, which only the priors pin down)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["Anderson"]

FloatArray = npt.NDArray[np.float64]


class Anderson:
    """Anderson acceleration (type II, [WalkerNi2011]) of a fixed-point iteration
    ``x = G(x)``: the next iterate is ``G(x_k) - dG gamma`` with ``gamma`` the least
    squares fit of the residual ``f_k = G(x_k) - x_k`` by the last ``m`` residual
    differences ``dF``.  It removes the slow, nearly undamped directions of the plain
    iteration.

    Parameters
    ----------
    m:
        How many past differences are kept.
    """

    def __init__(self, m: int = 5) -> None:
        self.m = m
        self.d_f: list[FloatArray] = []
        self.d_g: list[FloatArray] = []
        self.f_prev: FloatArray | None = None
        self.g_prev: FloatArray | None = None

    def step(self, x: FloatArray, g: FloatArray) -> FloatArray:
        """The next iterate from ``x_k`` and ``g = G(x_k)``."""
        f = g - x
        if self.f_prev is not None and self.g_prev is not None:
            self.d_f.append(f - self.f_prev)
            self.d_g.append(g - self.g_prev)
            if len(self.d_f) > self.m:
                self.d_f.pop(0)
                self.d_g.pop(0)
        self.f_prev, self.g_prev = f, g.copy()
        if not self.d_f or self.m == 0:
            return g
        a = np.stack(self.d_f, axis=1)
        gamma, *_ = np.linalg.lstsq(a, f, rcond=None)
        return g - np.stack(self.d_g, axis=1) @ gamma
