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

    The differences are kept in two ``(m, n)`` ring buffers and their Gram matrix
    ``dF^T dF`` is updated by one row per step (``m`` dot products), so that a step
    costs ``O(m n)`` and no copy of the history: ``gamma`` solves the normal equations
    ``(dF^T dF) gamma = dF^T f`` (the least squares above; Pulay's DIIS form), with the
    directions whose eigenvalue is below ``rcond`` times the largest left out (a
    difference nearly parallel to the others carries no new direction).

    Parameters
    ----------
    m:
        How many past differences are kept.
    rcond:
        Relative cutoff of the Gram matrix's eigenvalues.
    """

    def __init__(self, m: int = 5, rcond: float = 1e-13) -> None:
        self.m = m
        self.rcond = rcond
        self.d_f: FloatArray | None = None  # (m, n) ring buffers
        self.d_g: FloatArray | None = None
        self.gram = np.zeros((m, m))
        self.count = 0  # differences stored so far (the live slots: min(count, m))
        self.f_prev: FloatArray | None = None
        self.g_prev: FloatArray | None = None

    def step(self, x: FloatArray, g: FloatArray) -> FloatArray:
        """The next iterate from ``x_k`` and ``g = G(x_k)``."""
        f = g - x
        if self.m == 0:
            return g
        if self.f_prev is not None and self.g_prev is not None:
            if self.d_f is None or self.d_g is None:
                self.d_f = np.empty((self.m, f.size))
                self.d_g = np.empty((self.m, f.size))
            slot = self.count % self.m
            np.subtract(f, self.f_prev, out=self.d_f[slot])
            np.subtract(g, self.g_prev, out=self.d_g[slot])
            self.count += 1
            live = min(self.count, self.m)
            row = self.d_f[:live] @ self.d_f[slot]
            self.gram[slot, :live] = row
            self.gram[:live, slot] = row
            self.f_prev = f
            np.copyto(self.g_prev, g)
        else:
            self.f_prev, self.g_prev = f, g.copy()
        if self.count == 0 or self.d_f is None or self.d_g is None:
            return g
        live = min(self.count, self.m)
        gamma = self._gamma(self.gram[:live, :live], self.d_f[:live] @ f)
        return g - gamma @ self.d_g[:live]

    def _gamma(self, gram: FloatArray, rhs: FloatArray) -> FloatArray:
        """The least squares coefficients from the normal equations, the directions of
        relative eigenvalue below ``rcond`` left out (a pseudo-inverse)."""
        scale = np.sqrt(np.maximum(np.diag(gram), np.finfo(np.float64).tiny))
        lam, vec = np.linalg.eigh(gram / np.outer(scale, scale))
        keep = lam > self.rcond * max(float(lam[-1]), 0.0)
        if not np.any(keep):
            return np.zeros(rhs.size)
        v = vec[:, keep]
        return (v @ ((v.T @ (rhs / scale)) / lam[keep])) / scale
