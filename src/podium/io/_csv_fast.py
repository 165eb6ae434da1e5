"""The columnar reader of a CSV long table: a whole file of many small contests checked
and built at once.

:func:`podium.io.csv_long.csv_contests` reads a file of at least
:data:`~podium.io.csv_long.COLUMNAR_FROM_BYTES` bytes here first. Arrow splits the file
into columns: the time and value columns as integers when Arrow reads every cell as
one (and no cell can be hex: no ``0x`` in the file), else every cell as text, a number
column of plain decimal integers then converted by Arrow at once; contest ids written
as ``str(int)`` writes them are grouped as numbers (in one pass when they are in
order) and kept as numbers, each contest's name spelled when it is read, and otherwise
each column's distinct cells are stripped, parsed and checked once, in Python, with
the rules of the row reader (:mod:`podium.io.csv_long`):
the same ``float`` parse, finiteness, whole places and times, places from 1, a time on
every row, metadata that agrees within a contest, handles interned by the load's
:class:`~podium.io._handles.HandleTable`. The rows are then grouped, ordered and ranked
with NumPy (contests by time, then first appearance; a contest's rows by place or score,
ties by row order, as :meth:`~podium.core.contest.Contest.from_scores` ranks them), the
contest-level rules (distinct handles, contest weights and times,
:class:`~podium.io._times.TimeCheck`) are checked over all the contests in one pass, and
the contests are a :class:`~podium.core.contest_batch.ContestBatch` of the file's
columns (each contest reads its rows of the file's arrays).

Whatever this reader cannot take as it is -- a quote or a NUL byte in the file, a
team column, no time column, blank lines before the header, a row Arrow cannot split
-- and every problem it finds makes it return ``None``: the row reader then reads the
file and raises its error, naming the file, the line, the contest and the player.
The result is the row reader's, contest for contest (tests compare the two).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from podium.core.contest import Contest, HandlePool
from podium.core.contest_batch import ContestBatch
from podium.core.guards import HandleError
from podium.io._handles import HandleTable
from podium.io._times import TimeCheck

__all__ = ["fast_contests"]

IntArray = npt.NDArray[np.int64]
#: A cell that Arrow's integer cast reads as ``float`` does (blanks ``str.strip``
#: removes alike, at most 15 digits: exact in a double).
_INTEGER = r"^[ \t]*-?[0-9]{1,15}[ \t]*$"
_POWERS_OF_10 = 10 ** np.arange(1, 19, dtype=np.int64)
#: A cell that ``str.strip`` leaves as it is and that is not empty: printable ASCII,
#: no space at either end.
_PLAIN = r"^[!-~]([ -~]*[!-~])?$"


class _Bail(Exception):
    """Something the columnar reader leaves to the row reader."""


class _Retry(Exception):
    """A number column read as integers that must be read as text."""


def _encoded(table: pa.Table, name: str) -> tuple[IntArray, pa.Array]:
    """The row indices into the distinct cells of a text column, and those cells (an
    Arrow array, in order of first appearance)."""
    enc = table.column(name).combine_chunks().dictionary_encode()
    return np.asarray(enc.indices, dtype=np.int64), enc.dictionary


class _DecimalNames(Sequence[str]):
    """Contest names that are integers written as ``str(int)`` writes them, kept as the
    numbers and spelled on use (a file of 200,000 matches would otherwise make 200,000
    strings that only a contest's ``name`` reads)."""

    __slots__ = ("numbers",)

    def __init__(self, numbers: IntArray) -> None:
        self.numbers = numbers

    def __len__(self) -> int:
        return len(self.numbers)

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> _DecimalNames: ...

    def __getitem__(self, k: int | slice) -> str | _DecimalNames:
        if isinstance(k, slice):
            return _DecimalNames(self.numbers[k])
        return str(int(self.numbers[k]))


def _keys(table: pa.Table, name: str) -> tuple[IntArray, Sequence[str], bool]:
    """Each row's contest, numbered in order of first appearance of its key cell, the
    distinct key cells (in that order) and whether each is its own stripped form and not
    empty (:data:`_PLAIN`).  Keys that are all integers written as ``str(int)`` writes
    them are grouped as numbers (no string hashing) and kept as numbers
    (:class:`_DecimalNames`); other cells are Python strings."""
    col = table.column(name)
    try:
        ints = np.asarray(pc.cast(col, pa.int64()), dtype=np.int64)
    except pa.ArrowInvalid:
        ints = None
    if ints is not None and ints.size and int(ints.min()) > -(2**63):
        # str(int)'s text is the shortest one Arrow reads as that number: equal lengths
        # mean that form (no sign, zero or hex prefix, no "-0")
        width = 1 + np.searchsorted(_POWERS_OF_10, np.abs(ints), side="right") + (ints < 0)
        if bool((np.asarray(pc.binary_length(col)) == width).all()):
            if bool((ints[1:] >= ints[:-1]).all()):  # ids in order: groups are runs
                new = np.empty(ints.size, dtype=bool)
                new[0] = True
                np.not_equal(ints[1:], ints[:-1], out=new[1:])
                group = np.cumsum(new, dtype=np.int64) - 1
                return group, _DecimalNames(ints[new]), True
            _, first, inverse = np.unique(ints, return_index=True, return_inverse=True)
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            return (rank[inverse.reshape(-1)].astype(np.int64),
                    _DecimalNames(ints[first[order]]), True)
    group, cells = _encoded(table, name)
    return (group, cells.to_pylist(),
            bool(pc.all(pc.match_substring_regex(cells, _PLAIN)).as_py()))


def _column(table: pa.Table, name: str) -> tuple[IntArray, list[str]]:
    """:func:`_encoded` with the cells as Python strings."""
    idx, cells = _encoded(table, name)
    return idx, cells.to_pylist()


def _numbers(table: pa.Table, name: str, whole: bool) -> npt.NDArray[np.float64]:
    """Each row's value of a number column by the row reader's rule (:func:`_number`;
    a blank cell bails).  A column of plain decimal integers below 2**53 (exact in a
    double, as ``float`` reads them) is converted by Arrow at once; else each distinct
    cell is converted once: by Arrow when all are plain integers of at most 15 digits,
    else by the row reader's rule."""
    col = table.column(name)
    if pa.types.is_int64(col.type):  # read as integers by Arrow (no hex in the file)
        ints = np.asarray(col.combine_chunks(), dtype=np.int64)
        if ints.size and not bool((np.abs(ints) < 2**53).all()):
            raise _Retry  # beyond a double's integers: ``float`` of the text
        return ints.astype(np.float64)
    if not _has_x(col):  # no hex (which Arrow's cast reads and ``float`` refuses)
        try:
            ints = np.asarray(pc.cast(col, pa.int64()), dtype=np.int64)
        except pa.ArrowInvalid:  # blanks, signs, decimals...: cell by cell
            pass
        else:
            if not ints.size or bool((np.abs(ints) < 2**53).all()):
                return ints.astype(np.float64)
    idx, cells = _encoded(table, name)
    if len(cells) and pc.all(pc.match_substring_regex(cells, _INTEGER)).as_py():
        ints = pc.cast(pc.utf8_trim(cells, " \t"), pa.int64())
        return np.asarray(ints, dtype=np.int64).astype(np.float64)[idx]
    parse = _number(whole)
    try:
        values = np.array([parse(c.strip()) for c in cells.to_pylist()], dtype=np.float64)
    except (ValueError, OverflowError):
        raise _Bail from None
    return values[idx]


def _has_x(col: pa.ChunkedArray) -> bool:
    """Whether some cell of a text column holds an ``x`` or an ``X`` (one scan of the
    column's character data)."""
    for chunk in col.chunks:
        data = chunk.buffers()[2]
        if data is not None:
            text = data.to_pybytes()
            if b"x" in text or b"X" in text:
                return True
    return False


def _hex_prefix(data: bytes) -> bool:
    """Whether ``0x`` or ``0X`` occurs in ``data``: a search for the letter (``memchr``,
    where a search for the two bytes walks every ``0`` of the file), and only when it
    occurs, the byte before each one compared at once."""
    if b"x" not in data and b"X" not in data:
        return False
    text = np.frombuffer(data, dtype=np.uint8)
    at = np.flatnonzero((text[1:] | 0x20) == ord("x"))  # an x or an X after byte 0
    return bool((text[at] == ord("0")).any())


def _parsed(table: pa.Table, name: str, parse: Callable[[str], Any]
            ) -> tuple[IntArray, list[Any]]:
    """Each row's index into the parsed distinct cells of ``name`` (stripped; a blank
    cell parses to ``None``)."""
    idx, cells = _column(table, name)
    try:
        return idx, [parse(c) if (c := cell.strip()) else None for cell in cells]
    except (ValueError, OverflowError):
        raise _Bail from None


def _number(whole: bool) -> Callable[[str], float]:
    """The row reader's number rule: a ``float`` that is finite (and whole)."""
    def parse(cell: str) -> float:
        v = float(cell)
        if not math.isfinite(v) or (whole and v != int(v)):
            raise ValueError(cell)
        return v
    return parse


def _agreeing(group: IntArray, ids: IntArray, given: npt.NDArray[np.bool_],
              n_groups: int) -> IntArray:
    """The first row of each group that gives a value (``given``; -1: none); bails when
    two such rows of one group differ (their ``ids``)."""
    if group.size and bool(given.all()) and bool((group[1:] >= group[:-1]).all()):
        # every row gives one and the groups are runs (numbered in order): compare
        # neighbours
        same = group[1:] == group[:-1]
        differ = ids[1:] != ids[:-1]
        differ &= same
        if bool(differ.any()):
            raise _Bail
        new = np.empty(group.size, dtype=bool)
        new[0] = True
        np.logical_not(same, out=new[1:])
        return np.flatnonzero(new)
    at = np.flatnonzero(given)
    g = group[at]
    first = np.full(n_groups, -1, dtype=np.int64)
    first[g[::-1]] = at[::-1]  # the last write of a group is its first row
    if at.size and bool((ids[at] != ids[first[g]]).any()):
        raise _Bail
    return first


def _meta(table: pa.Table, name: str, parse: Callable[[str], Any], group: IntArray,
          n_groups: int) -> list[Any]:
    """Each group's value of a metadata column (``None``: not given), the rows that
    give one agreeing (compared as parsed values, as the row reader compares them)."""
    idx, values = _parsed(table, name, parse)
    same: dict[Any, int] = {}
    canon = np.array([-1 if v is None else same.setdefault(v, len(same)) for v in values],
                     dtype=np.int64)
    if any(v is not None and v != v for v in values):  # NaN never agrees with itself
        raise _Bail
    ids = canon[idx]
    first = _agreeing(group, ids, ids >= 0, n_groups)
    return [None if r < 0 else values[int(idx[r])] for r in first.tolist()]


def _by_contest_and_key(row_rank: IntArray, key: npt.NDArray[np.float64]) -> IntArray:
    """The rows ordered by contest (``row_rank``), then ``key``, then file order.  Whole
    keys of a small range are sorted as one ``int64`` (nearly in order when the file
    lists its contests in order: a stable sort's runs), others by two stable sorts."""
    if key.size:
        k_min, k_max = float(key.min()), float(key.max())
        span = k_max - k_min + 1
        if (span <= 2**20 and int(row_rank.max()) < 2**40
                and bool((key == np.floor(key)).all())):
            whole = row_rank * np.int64(span) + (key - k_min).astype(np.int64)
            return np.argsort(whole, kind="stable")
    by_key = np.argsort(key, kind="stable")
    return by_key[np.argsort(row_rank[by_key], kind="stable")]


def _repeated_handle(codes: IntArray, starts: IntArray, sizes: IntArray,
                     n_handles: int) -> bool:
    """Whether a contest (rows ``starts[k]:starts[k] + sizes[k]`` of ``codes``) lists a
    handle twice: a contest of two rows compares its two, larger ones are sorted by
    (contest, handle) and neighbours compared."""
    pairs = starts[sizes == 2]
    if bool((codes[pairs] == codes[pairs + 1]).any()):
        return True
    big = sizes > 2
    if not bool(big.any()):
        return False
    in_big = np.repeat(big, sizes)
    contest = np.repeat(np.arange(int(big.sum()), dtype=np.int64), sizes[big])
    pair = np.sort(contest * np.int64(n_handles) + codes[in_big], kind="stable")
    return bool((pair[1:] == pair[:-1]).any())


def _tie_ranges(key: npt.NDArray[np.float64], contest: IntArray, starts: IntArray
                ) -> tuple[IntArray, IntArray]:
    """Each row's tie range (``lo``, ``hi``: the first and last row of its tie, 0-based
    within its contest) of rows ordered by contest (``contest``, each starting at
    ``starts``), then by ``key``: a tie starts at a contest's first row or where the key
    changes.  Each row reads its tie's first and last row (gathers, not repeats)."""
    m = key.size
    new = np.empty(m, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=new[1:])
    new[starts] = True
    tie = np.cumsum(new)
    tie -= 1
    tie_first = np.flatnonzero(new)
    tie_last = np.empty_like(tie_first)
    tie_last[:-1] = tie_first[1:]
    tie_last[-1:] = m
    tie_last -= 1
    offset = starts[contest]
    lo = tie_first[tie]
    lo -= offset
    hi = tie_last[tie]
    hi -= offset
    return lo, hi


def _header(data: bytes, ncols: int, header_line: int) -> list[str] | None:
    """Names for the Arrow columns, or ``None`` when Arrow's split of the file might
    not be the row reader's."""
    if header_line != 1 or b'"' in data or b"\x00" in data:
        return None
    # the row reader refuses a field longer than the csv module's limit: every line
    # must be at most that long (jumping from line break to the last one in reach)
    limit = csv.field_size_limit()
    at = -1
    while at + limit < len(data):
        at = data.rfind(b"\n", at + 1, at + limit + 1)
        if at < 0:
            return None
    return [f"c{i}" for i in range(ncols)]


def fast_contests(data: bytes, cols: dict[str, int], ncols: int, header_line: int,
                  kind: str, intern: HandleTable, times: TimeCheck | None,
                  limit: int | None) -> list[Contest] | None:
    """The contests of a CSV long table, or ``None`` when the row reader must read it.

    Parameters
    ----------
    data : bytes
        The file.
    cols : dict of str to int
        The column of each role (:mod:`podium.io.csv_long`'s header check).
    ncols : int
        Fields in the header.
    header_line : int
        The header's line (1 unless blank lines come first).
    kind : {"place", "score"}
        The value column.
    intern : HandleTable
        The load's handle table.
    times : TimeCheck, optional
        The load's time and weight check.
    limit : int, optional
        Keep the first ``limit`` contests (after ordering).

    Returns
    -------
    list of Contest or None
    """
    names = _header(data, ncols, header_line)
    if names is None or "team" in cols or "time" not in cols:
        return None
    role = {r: names[c] for r, c in cols.items()}
    # the time and value columns read as integers by Arrow (when no cell can be hex,
    # which Arrow reads and ``float`` refuses); else, or when that fails, as text
    text_roles = [c for r, c in role.items() if r not in ("time", kind)]
    numeric = {role["time"], role[kind]}.difference(text_roles)
    tries = [numeric, set()] if numeric and not _hex_prefix(data) else [set()]
    for as_int in tries:
        try:
            table = pacsv.read_csv(
                pa.BufferReader(data),
                read_options=pacsv.ReadOptions(column_names=names, skip_rows=1),
                convert_options=pacsv.ConvertOptions(
                    column_types={c: pa.int64() if c in as_int else pa.string()
                                  for c in role.values()},
                    include_columns=list(dict.fromkeys(role.values())),
                    strings_can_be_null=False, null_values=[]))
            return _contests(table, role, kind, intern, times, limit)
        except _Retry:
            continue
        except pa.ArrowInvalid:
            if as_int:
                continue
            return None
        except (_Bail, pa.ArrowException, HandleError):
            return None
    return None


def _contests(table: pa.Table, role: dict[str, str], kind: str, intern: HandleTable,
              times: TimeCheck | None, limit: int | None) -> list[Contest]:
    """:func:`fast_contests` of the columns Arrow read; :class:`_Bail` for the row
    reader."""
    n = table.num_rows
    if n == 0:
        raise _Bail
    # ---- contests: ids in order of first appearance of their stripped key
    group, key_names, plain = _keys(table, role["contest"])
    if not plain:
        key_names = [c.strip() for c in key_names]  # keys that strip alike: one contest
        keys: dict[str, int] = {}
        of_cell = np.array([keys.setdefault(k, len(keys)) for k in key_names], dtype=np.int64)
        group = of_cell[group]
        key_names = list(keys)
        if not all(key_names):
            raise _Bail
    n_groups = len(key_names)
    # ---- handles, numbered in a pool (the load's, else one for this file)
    idx, cells = _column(table, role["player"])
    raw = [c.strip() for c in cells]
    if not all(raw):
        raise _Bail
    norms = intern.all(raw)
    pool = intern.pool
    if pool is not None:
        code_of = intern.numbered(norms)
    else:
        pool = HandlePool()
        known: dict[str, int] = {}
        code_of = np.array([known.setdefault(h, len(known)) for h in norms], dtype=np.int64)
        pool.names.extend(known)
    codes = code_of[idx]
    # ---- values: the sort key, lower is better (as Contest.from_places / from_scores)
    values = _numbers(table, role[kind], kind == "place")
    if kind == "place" and bool((values < 1).any()):
        raise _Bail
    key = values if kind == "place" else -values
    # ---- contest time (on every row, agreeing) and metadata
    t_values = _numbers(table, role["time"], True)
    if not bool(((t_values >= -(2.0**63)) & (t_values < 2.0**63)).all()):
        raise _Bail
    t_row = t_values.astype(np.int64)
    first = _agreeing(group, t_row, np.ones(n, dtype=bool), n_groups)
    t_group = t_row[first]
    meta: dict[str, Callable[[str], Any]] = {
        "name": str, "weight": _number(False), "url": str, "perf_ceiling": float}
    given = {r: _meta(table, role[r], parse, group, n_groups)
             for r, parse in meta.items() if r in role}
    contest_names = key_names
    if "name" in given:
        contest_names = [k if m is None else m
                         for k, m in zip(key_names, given["name"], strict=True)]
    weight = np.ones(n_groups, dtype=np.float64)
    if "weight" in given:
        weight = np.array([1.0 if w is None else w for w in given["weight"]], dtype=np.float64)
    ceilings = given.get("perf_ceiling")
    urls = given.get("url")
    if bool((weight <= 0).any()) or any(c is not None and (c != c or c == -math.inf)
                                        for c in ceilings or ()):
        raise _Bail
    # ---- order: contests by time, then first appearance; rows by key, then file order
    ordered = np.argsort(t_group, kind="stable")
    if limit is not None:
        ordered = ordered[:limit]
    in_order = ordered.size == n_groups and bool((ordered[1:] > ordered[:-1]).all())
    if in_order:  # the contests' order is the file's (``ordered`` is 0, 1, ...)
        row_rank = group
        t_o, w_o = t_group, weight
    else:
        rank = np.full(n_groups, -1, dtype=np.int64)
        rank[ordered] = np.arange(ordered.size)
        row_rank = rank[group]
        t_o, w_o = t_group[ordered], weight[ordered]
    # ---- the contests' times and weights, checked at once
    if times is not None and not times.accepts(t_o, w_o):
        raise _Bail
    rows = _by_contest_and_key(row_rank, key)
    if ordered.size < n_groups:
        rows = rows[row_rank[rows] >= 0]  # contests past the limit dropped
    r_rank, r_key, r_codes = row_rank[rows], key[rows], codes[rows]
    sizes = np.bincount(r_rank, minlength=ordered.size)
    starts = np.cumsum(sizes)
    starts -= sizes
    if _repeated_handle(r_codes, starts, sizes, len(pool)):
        raise _Bail
    lo, hi = _tie_ranges(r_key, r_rank, starts)
    for a in (lo, hi, r_codes):
        a.flags.writeable = False

    def by_order(values: Sequence[Any]) -> Sequence[Any]:
        if in_order:
            return values
        if isinstance(values, _DecimalNames):
            return _DecimalNames(values.numbers[ordered])
        return list(map(values.__getitem__, ordered.tolist()))

    return ContestBatch(
        pool, r_codes, lo, hi, starts, sizes, by_order(contest_names), t_o,
        w_o if "weight" in given else None,
        None if ceilings is None else by_order(ceilings),
        None if urls is None else by_order(urls)).contests()
