"""Numba kernel of the TopCoder system (:mod:`podium.systems.topcoder`): expected ranks.

The expected rank of player ``i`` sums, over every participant ``j`` (``i``
included, which contributes 1/2), the probability that ``j`` beats ``i``::

    E_i = sum_j Phi(r (mu_j - mu_i) / sqrt(v_i + v_j)),   v = volatility^2

The probability is symmetric -- ``P(i beats j) = 1 - P(j beats i)`` because the
spread ``sqrt(v_i + v_j)`` is shared -- so each unordered pair costs one ``erfc``
(half of what a loop over ordered pairs costs).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

__all__ = ["expected_ranks"]

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
#: Rows are dealt to this many accumulators (round-robin), each with its own column
#: accumulator; a fixed number keeps the summation order -- and so the result --
#: independent of the number of threads.
_CHUNKS = 8


@nb.njit(cache=True, parallel=True)
def expected_ranks(mu: np.ndarray, var: np.ndarray, r: float) -> np.ndarray:
    """``E_i = 1/2 + sum_{j != i} Phi(r (mu_j - mu_i) / sqrt(var_i + var_j))`` for all ``i``.

    Parameters
    ----------
    mu, var:
        Ratings and squared volatilities of the round's participants.
    r:
        ``sqrt(contest weight)``: multiplies every rating difference.
    """
    n = mu.size
    acc = np.zeros((_CHUNKS, n))
    scale = r * _INV_SQRT2
    for k in nb.prange(_CHUNKS):
        for i in range(k, n, _CHUNKS):
            mi = mu[i]
            vi = var[i]
            row = 0.0
            for j in range(i + 1, n):
                # Phi(z) = erfc(-z / sqrt 2) / 2 with z = r (mu_j - mu_i) / sqrt(v_i + v_j)
                p = 0.5 * math.erfc(scale * (mi - mu[j]) / math.sqrt(vi + var[j]))
                row += p  # P(j beats i)
                acc[k, j] += 1.0 - p  # P(i beats j), seen from j
            acc[k, i] += row
    out = np.full(n, 0.5)
    for k in range(_CHUNKS):
        for i in range(n):
            out[i] += acc[k, i]
    return out
