"""The compiled CSV writer: rows of numbers and unquoted text, in Numba.

:mod:`podium.io.results` writes large tables with :func:`write_rows` (the body of
``histories.csv`` straight from the rater's event arrays in handle order, without
gathering the columns first; any other large table through
:func:`arrow_columns`).  The text is byte for byte that of the Arrow path of
:mod:`podium.io.results`: numbers as Arrow casts them to text (shortest round-trip
floats, :mod:`podium.io._csv_kernels`), NaN and nulls as empty fields, ``True``/``False``,
text fields as they are -- the caller makes sure that none needs quotes.

Rows are written in blocks of :data:`BLOCK` rows: each block's text is built in a
NumPy buffer by the kernels of :mod:`podium.io._csv_kernels` (``prange`` over chunks
of its rows) and written by a second thread while the next block is built (the
kernels release the GIL), so that at most two blocks' text is held in memory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any, TextIO

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from podium.io import _csv_kernels as kern

__all__ = ["BLOCK", "FloatColumn", "IntColumn", "TextColumn", "Column", "arrow_columns",
           "text_column", "int_column", "announce_compile", "write_rows"]

#: Rows per block.
BLOCK = 1 << 17
#: Rough compile time (seconds) of the kernels when Numba's cache is cold (5.9-6.1 s
#: measured on the 2-core development machine, fresh ``NUMBA_CACHE_DIR``).
COMPILE_SECONDS = 6.0


@dataclass(frozen=True)
class FloatColumn:
    """float64 values, read at the rows' indices (NaN: an empty field)."""

    values: npt.NDArray[np.float64]


@dataclass(frozen=True)
class IntColumn:
    """int64 or int32 values, read at the rows' indices."""

    values: npt.NDArray[np.int64] | npt.NDArray[np.int32]


@dataclass(frozen=True)
class TextColumn:
    """Strings ``data[offsets[k]:offsets[k + 1]]`` (UTF-8), where ``k = keys[row]``
    (int64 or int32); a negative key is an empty field."""

    offsets: npt.NDArray[np.int64]
    data: npt.NDArray[np.uint8]
    keys: npt.NDArray[np.int64] | npt.NDArray[np.int32]


Column = FloatColumn | IntColumn | TextColumn


def text_column(strings: pa.Array,
                keys: npt.NDArray[np.int64] | npt.NDArray[np.int32]) -> TextColumn:
    """The strings of an Arrow (large) string array, picked by ``keys`` (int32 keys are
    kept as they are, any other integers become int64); a null string is an empty
    field, as a negative key is."""
    n = len(strings)
    kind = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    bufs = strings.buffers()
    offsets = np.frombuffer(bufs[1], dtype=kind, count=strings.offset + n + 1)[
        strings.offset:].astype(np.int64)
    data = (np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None
            else np.zeros(0, dtype=np.uint8))
    if strings.null_count:
        valid = _valid(strings)
        keys = np.where((keys >= 0) & valid[np.maximum(keys, 0)], keys, -1)
    return TextColumn(offsets, data, _ints(keys))


def _ints(values: npt.NDArray[Any]) -> npt.NDArray[np.int64] | npt.NDArray[np.int32]:
    """``values`` as contiguous int32 (kept, no copy) or int64 (the kernels' two key and
    integer types)."""
    if values.dtype == np.int32:
        return np.ascontiguousarray(values)
    return np.ascontiguousarray(values, dtype=np.int64)


def int_column(values: npt.NDArray[Any]) -> IntColumn:
    """Integers (any NumPy integer type that fits in int64) as an :class:`IntColumn`."""
    return IntColumn(_ints(values))


def _valid(arr: pa.Array) -> npt.NDArray[np.bool_]:
    """Arrow's validity of ``arr`` as a NumPy bool array (all True without a bitmap)."""
    bitmap = arr.buffers()[0]
    if bitmap is None:
        return np.ones(len(arr), dtype=np.bool_)
    bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(np.bool_)


_INTS = (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32())


def arrow_columns(table: pa.Table) -> list[Column] | None:
    """The columns of ``table`` for :func:`write_rows`, or ``None`` when one has a type
    the compiled writer does not write as Arrow does (it then falls back to Arrow).

    float64 (nulls and NaN: empty), signed integers and unsigned ones up to 32 bits
    (no nulls), booleans (``True``/``False``; a null is ``False``, as
    :mod:`podium.io.results` writes it) and (large) strings (nulls: empty).  Text
    fields are written as they are: the caller checks that none needs quotes.
    """
    out: list[Column] = []
    for chunked in table.columns:
        arr = chunked.combine_chunks() if chunked.num_chunks != 1 else chunked.chunk(0)
        n = len(arr)
        typ = arr.type
        if typ == pa.float64():
            values = np.frombuffer(arr.buffers()[1], dtype="<f8", count=arr.offset + n)[
                arr.offset:]
            if arr.null_count:
                values = np.where(_valid(arr), values, np.nan)
            out.append(FloatColumn(np.ascontiguousarray(values)))
        elif typ in _INTS:
            if arr.null_count:
                return None
            raw = np.frombuffer(arr.buffers()[1], dtype=typ.to_pandas_dtype(),
                                count=arr.offset + n)[arr.offset:]
            out.append(IntColumn(_ints(raw)))
        elif pa.types.is_boolean(typ):
            bits = np.unpackbits(np.frombuffer(arr.buffers()[1], dtype=np.uint8),
                                 bitorder="little")[arr.offset:arr.offset + n]
            keys = (bits.astype(np.int64) & _valid(arr).astype(np.int64))
            words = np.frombuffer(b"FalseTrue", dtype=np.uint8)
            out.append(TextColumn(np.array([0, 5, 9], dtype=np.int64), words, keys))
        elif pa.types.is_string(typ) or pa.types.is_large_string(typ):
            out.append(text_column(arr, np.arange(n, dtype=np.int64)))
        else:
            return None
    return out


def announce_compile(stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for the CSV writer, once: ~N s`` when none of the
    kernels is in Numba's cache yet (see :mod:`podium._jit`)."""
    from podium._jit import announce_module_compile

    return announce_module_compile("the CSV writer", kern, COMPILE_SECONDS,
                                   sys.stderr if stream is None else stream)


class _Plan:
    """The columns as :func:`podium.io._csv_kernels.write_chunks` reads them: the kind
    and slot of each, and every text column's strings in one dictionary (a column's
    keys are shifted by the number of strings before its own)."""

    def __init__(self, columns: Sequence[Column]) -> None:
        self.columns = list(columns)
        kinds = []
        slots = []
        count = {kern.FLOAT: 0, kern.INT: 0, kern.TEXT: 0}
        offsets: list[npt.NDArray[np.int64]] = []
        data: list[npt.NDArray[np.uint8]] = []
        self.bases: list[int] = []
        strings = 0
        size = 0
        for col in self.columns:
            kind = (kern.FLOAT if isinstance(col, FloatColumn)
                    else kern.INT if isinstance(col, IntColumn) else kern.TEXT)
            kinds.append(kind)
            slots.append(count[kind])
            count[kind] += 1
            if isinstance(col, TextColumn):
                first = int(col.offsets[0])
                offsets.append(col.offsets[:-1] - first + size)
                data.append(col.data[first:int(col.offsets[-1])])
                self.bases.append(strings)
                strings += col.offsets.size - 1
                size += int(col.offsets[-1]) - first
        offsets.append(np.array([size], dtype=np.int64))
        self.offsets = np.concatenate(offsets)
        self.data = np.concatenate(data) if data else np.zeros(0, dtype=np.uint8)
        self.kinds = np.array(kinds, dtype=np.int64)
        self.slot = np.array(slots, dtype=np.int64)
        self.count = count
        self.fixed = len(kinds) + sum(kern.FIXED_WIDTH[k] for k in kinds)

    def block(self, rows: npt.NDArray[np.int64]) -> list[memoryview]:
        """The CSV text of the rows ``rows`` (indices into the columns' arrays), as the
        pieces that, back to back, make it."""
        m = rows.size
        floats = np.empty((self.count[kern.FLOAT], m), dtype=np.float64)
        ints = np.empty((self.count[kern.INT], m), dtype=np.int64)
        keys = np.empty((self.count[kern.TEXT], m), dtype=np.int64)
        t = 0
        for col, s in zip(self.columns, self.slot.tolist(), strict=True):
            if isinstance(col, FloatColumn):
                kern.gather_floats(col.values, rows, floats[s])
            elif isinstance(col, IntColumn):
                kern.gather_ints(col.values, rows, ints[s])
            else:
                kern.gather_keys(col.keys, rows, self.bases[t], keys[s])
                t += 1
        chunks = -(-m // kern.CHUNK)
        cap = np.empty(chunks, dtype=np.int64)
        kern.chunk_capacity(keys, self.offsets, m, self.fixed, cap)
        starts = np.zeros(chunks, dtype=np.int64)
        np.cumsum(cap[:-1], out=starts[1:])
        out = np.empty(int(starts[-1] + cap[-1]), dtype=np.uint8)
        used = np.empty(chunks, dtype=np.int64)
        kern.write_chunks(floats, ints, keys, self.offsets, self.data, self.kinds, self.slot,
                          m, starts, out, used)
        view = memoryview(out)  # type: ignore[arg-type]  # NumPy arrays are buffers
        return [view[a:a + u] for a, u in zip(starts.tolist(), used.tolist(), strict=True)]


def _check_bounds(columns: Sequence[Column], n: int,
                  order: npt.NDArray[np.int64] | None) -> None:
    """Raise :class:`ValueError` unless every index the kernels will follow is inside its
    array (they do not check: a bad index would read outside memory)."""
    if n == 0:
        return
    top = n - 1
    if order is not None:
        lo, top = int(order.min()), int(order.max())
        if lo < 0:
            raise ValueError(f"order has a negative row index {lo}")
    for j, col in enumerate(columns):
        size = col.keys.size if isinstance(col, TextColumn) else col.values.size
        if top >= size:
            raise ValueError(f"column {j} has {size} values; row index {top} is outside it")
        if isinstance(col, TextColumn):
            off = col.offsets
            if (off.size == 0 or off[0] < 0 or col.data.size < off[-1]
                    or np.any(off[1:] < off[:-1])):
                raise ValueError(f"column {j}: the string offsets do not fit the data")
            if col.keys.size and int(col.keys.max()) >= off.size - 1:
                raise ValueError(f"column {j}: key {int(col.keys.max())} is outside its "
                                 f"{off.size - 1} strings")


def write_rows(fh: IO[bytes], columns: Sequence[Column], n: int,
               order: npt.NDArray[np.int64] | None = None, block: int | None = None) -> None:
    """Write ``n`` CSV rows of ``columns`` (no header) to ``fh``.

    Parameters
    ----------
    fh : binary file
    columns : sequence of FloatColumn, IntColumn or TextColumn
        At least one.  Row ``i`` is read at index ``order[i]`` of each column's
        values (of its keys, for text).
    n : int
        The number of rows.
    order : int64 array of length ``n``, optional
        The source index of each row (default: ``0 .. n - 1``).
    block : int, optional
        Rows per block (default :data:`BLOCK`).
    """
    block = BLOCK if block is None else block
    if block < 1:
        raise ValueError(f"block must be positive, got {block}")
    if not columns:
        raise ValueError("a CSV row needs at least one column")
    if order is not None:
        order = np.ascontiguousarray(order, dtype=np.int64)
        if order.size != n:
            raise ValueError(f"order has {order.size} rows, expected {n}")
    _check_bounds(columns, n, order)
    starts = range(0, n, block)
    if not starts:
        return
    from concurrent.futures import ThreadPoolExecutor

    def rows_of(a: int) -> npt.NDArray[np.int64]:
        b = min(n, a + block)
        return order[a:b] if order is not None else np.arange(a, b, dtype=np.int64)

    plan = _Plan(columns)
    # one thread writes a block while this one builds the next (both release the GIL)
    with ThreadPoolExecutor(1, thread_name_prefix="podium-csv-write") as pool:
        pending = None
        for a in starts:
            text = plan.block(rows_of(a))
            if pending is not None:
                pending.result()
            pending = pool.submit(fh.writelines, text)
        if pending is not None:
            pending.result()
