"""Numba kernels of the compiled CSV writer (:mod:`podium.io._csv_rows`).

A block of rows is written in three steps:

1. the gathers (:func:`gather_floats`, :func:`gather_ints`, :func:`gather_keys`) copy
   each column's values of the block's rows into one row of a 2-D array per kind
   (``floats``, ``ints``, ``keys``).  Rows in handle order read the columns at random;
   a loop that does nothing but load waits far less on the cache misses than one that
   also formats (about 4x faster on millions of rows);
2. :func:`chunk_capacity` bounds the text of each chunk of :data:`CHUNK` rows (the
   exact length of its strings plus the longest text of each number);
3. :func:`write_chunks` writes each chunk's rows at its own offset (``prange`` over the
   chunks): fields in column order, separated by ``,``, each row ended by ``\\n``.
   The chunks' texts, back to back, are the block's CSV text.

Column ``j`` of a row is of kind ``kinds[j]`` (:data:`FLOAT`, :data:`INT`,
:data:`TEXT`) and is row ``slot[j]`` of the array of its kind.  A text field is the
string ``data[offsets[k]:offsets[k + 1]]`` of its key ``k`` (negative: an empty
field); NaN is an empty field.

The ``parallel=True`` kernels are called from Python only.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from podium.io._ryu import MAX_FLOAT_CHARS, MAX_INT_CHARS, format_double, format_int

__all__ = ["CHUNK", "FLOAT", "INT", "TEXT", "gather_floats", "gather_ints", "gather_keys",
           "chunk_capacity", "write_chunks"]

#: Rows per chunk (the unit of work of a thread).
CHUNK = 4096
#: Kinds of columns.
FLOAT = 0
INT = 1
TEXT = 2

_COMMA = 44
_NEWLINE = 10


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_floats(values: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = values[rows[i]]`` (float64)."""
    for i in nb.prange(rows.size):
        out[i] = values[rows[i]]


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_ints(values: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = values[rows[i]]`` (int64)."""
    for i in nb.prange(rows.size):
        out[i] = values[rows[i]]


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_keys(keys: np.ndarray, rows: np.ndarray, base: int, out: np.ndarray) -> None:
    """``out[i] = keys[rows[i]] + base``, or -1 where the key is negative (a null)."""
    for i in nb.prange(rows.size):
        k = keys[rows[i]]
        out[i] = k + base if k >= 0 else -1


@nb.njit(cache=True, nogil=True, parallel=True)
def chunk_capacity(keys: np.ndarray, offsets: np.ndarray, m: int, fixed: int,
                   cap: np.ndarray) -> None:
    """``cap[c]``: room for the text of the rows ``c * CHUNK ..`` of the block (``m``
    rows): their strings (``keys``, one row per text column) plus ``fixed`` bytes per
    row (the longest text of its numbers, and the separators)."""
    for c in nb.prange(cap.size):
        lo = c * CHUNK
        hi = min(m, lo + CHUNK)
        total = fixed * (hi - lo)
        for t in range(keys.shape[0]):
            for i in range(lo, hi):
                k = keys[t, i]
                if k >= 0:
                    total += offsets[k + 1] - offsets[k]
        cap[c] = total


@nb.njit(cache=True, nogil=True, parallel=True)
def write_chunks(floats: np.ndarray, ints: np.ndarray, keys: np.ndarray, offsets: np.ndarray,
                 data: np.ndarray, kinds: np.ndarray, slot: np.ndarray, m: int,
                 starts: np.ndarray, out: np.ndarray, used: np.ndarray) -> None:
    """Write the CSV rows of the block (``m`` rows) chunk by chunk: chunk ``c`` at
    ``out[starts[c]:]``, its length into ``used[c]``."""
    ncols = kinds.size
    for c in nb.prange(starts.size):
        p = starts[c]
        for i in range(c * CHUNK, min(m, (c + 1) * CHUNK)):
            for j in range(ncols):
                kind = kinds[j]
                s = slot[j]
                if kind == FLOAT:
                    p += format_double(floats[s, i], out, p)
                elif kind == INT:
                    p += format_int(ints[s, i], out, p)
                else:
                    k = keys[s, i]
                    if k >= 0:
                        a = offsets[k]
                        n = offsets[k + 1] - a
                        for t in range(n):
                            out[p + t] = data[a + t]
                        p += n
                out[p] = _COMMA if j < ncols - 1 else _NEWLINE
                p += 1
        used[c] = p - starts[c]


#: The most bytes a number's field takes, by kind (text: 0, its strings are counted).
FIXED_WIDTH = (MAX_FLOAT_CHARS, MAX_INT_CHARS, 0)
