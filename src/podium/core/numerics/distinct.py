"""Identical rows of a round's term arrays, found in one pass.

A round's opponent terms (Theorem 3.2 of [EbtekarLiu2021]) repeat whenever players
share a rating: every newcomer enters as ``(mu_noob, delta_noob)``, so a first round
is one term ``N`` times over.  A term's value at a point depends only on its
parameters, so an identical term has an identical value, bit for bit: a kernel that
evaluates each distinct term once and reads the value back for every copy sums the
very same numbers in the very same order as one that evaluates every copy.

:func:`distinct_rows` finds the distinct rows of three float arrays (by their bits,
so ``-0.0`` and ``0.0`` stay apart and nothing is merged that might evaluate
differently) with an open-addressing hash table: ``O(N)``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

__all__ = ["distinct_rows"]

# Multipliers of the hash (odd 64-bit constants of the golden-ratio and xxHash families).
_H1 = np.uint64(0x9E3779B97F4A7C15)
_H2 = np.uint64(0xC2B2AE3D27D4EB4F)
_H3 = np.uint64(0x165667B19E3779F9)


@nb.njit(cache=True)
def distinct_rows(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows ``(a[j], b[j], c[j])``, compared by their bits.

    Parameters
    ----------
    a, b, c:
        Float64 arrays of one length ``N`` (copied when not contiguous).

    Returns
    -------
    of : ndarray of int32
        ``of[j]``: which distinct row row ``j`` is.
    first : ndarray of int64
        Where each distinct row first occurs (ascending): distinct row ``u`` is row
        ``first[u]``.
    """
    n = a.size
    ba = np.ascontiguousarray(a).view(np.uint64)
    bb = np.ascontiguousarray(b).view(np.uint64)
    bc = np.ascontiguousarray(c).view(np.uint64)
    cap = 16
    while cap < 2 * n:
        cap *= 2
    mask = np.uint64(cap - 1)
    slot = np.full(cap, -1, dtype=np.int64)  # a distinct row's number, or -1
    of = np.empty(n, dtype=np.int32)
    first = np.empty(n, dtype=np.int64)
    u = 0
    for j in range(n):
        h = ba[j] * _H1 ^ bb[j] * _H2 ^ bc[j] * _H3
        h ^= h >> np.uint64(29)
        s = h & mask
        while True:
            k = slot[s]
            if k < 0:
                slot[s] = u
                first[u] = j
                of[j] = u
                u += 1
                break
            f = first[k]
            if ba[f] == ba[j] and bb[f] == bb[j] and bc[f] == bc[j]:
                of[j] = k
                break
            s = (s + np.uint64(1)) & mask
    return of, first[:u].copy()
