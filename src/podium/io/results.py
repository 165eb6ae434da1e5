"""Writing a rater's results: ratings, histories and contests, as CSV or Parquet.

``podium rate --out DIR`` writes three tables (see :func:`write_results`):

``ratings``
    One row per player, best display rating first (ties by handle):
    ``handle, mu, sigma, display_rating, contests, last_contest_time,
    max_display_rating, last_change``.
``histories``
    One row per player and rated contest, by handle then contest:
    ``handle, contest_index, mu, sigma, display_rating, perf, place`` (``place`` is
    the 0-based ``lo`` of the player's tie range, Sec. 2 of Ebtekar & Liu).
``contests``
    One row per contest in rating order:
    ``contest_index, name, time_seconds, url, players, skipped``.

The tables are built as Arrow tables straight from the rater's NumPy arrays
(no pandas) and written by Arrow's columnar writers (``pyarrow.csv``,
``pyarrow.parquet``), each file atomically (a temporary file renamed over the
target, :func:`podium._files.atomic_write`).

A CSV table of :data:`_COMPILED_MIN_ROWS` rows or more whose text needs no quotes is
written by the compiled writer (:mod:`podium.io._csv_rows`, Numba: shortest
round-trip floats by Ryu, rows in parallel) to the same bytes; ``histories.csv``
then straight from the event arrays in row order, without gathering its columns
first.  Smaller tables never load it (its kernels take seconds to compile into
Numba's cache, once; the first time, a line on stderr says so).

CSV text
--------
* Floats are written as their shortest round-trip decimal text (``0.1 + 0.2`` is
  ``0.30000000000000004``, ``-0.0`` is ``-0``, ``1e+17``), so that every value
  reads back bit-equal with Python's ``float`` or pandas'
  ``read_csv(..., float_precision="round_trip")``.  ``+inf``/``-inf`` are written
  ``inf``/``-inf``; NaN (a performance that carries no information, e.g. in
  ``glicko-pairwise``) is an empty field, which pandas reads back as NaN.
* Integers are written as integers; ``skipped`` as ``True``/``False``; a missing
  ``url`` as an empty field.
* The header is unquoted; a text field is quoted (``"a,b"``, with ``""`` for a
  quote) only when it holds a comma, a quote or a line break, as Python's
  :mod:`csv` module does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from podium._files import atomic_write
from podium.errors import PodiumError

if TYPE_CHECKING:
    from podium.rater import Rater

__all__ = [
    "CONTESTS_COLUMNS",
    "FORMATS",
    "HISTORIES_COLUMNS",
    "RATINGS_COLUMNS",
    "contests_table",
    "histories_table",
    "ratings_table",
    "write_results",
    "write_table",
]

RATINGS_COLUMNS = ("handle", "mu", "sigma", "display_rating", "contests", "last_contest_time",
                   "max_display_rating", "last_change")
HISTORIES_COLUMNS = ("handle", "contest_index", "mu", "sigma", "display_rating", "perf", "place",
                     "team")
CONTESTS_COLUMNS = ("contest_index", "name", "time_seconds", "url", "players", "skipped")
#: The output formats of :func:`write_results` (also the file suffixes).
FORMATS = ("csv", "parquet")

#: Rows per batch when writing CSV text.
_CSV_BATCH = 1 << 18
#: Tables of at least this many rows are written by the compiled writer
#: (:mod:`podium.io._csv_rows`) unless a text field needs quotes; smaller ones by
#: Arrow (no compilation for them: a cold cache costs seconds).
_COMPILED_MIN_ROWS = 100_000
#: Characters that make a CSV text field need quotes.
_CSV_SPECIAL = '[,"\r\n]'


# ====================================================================== arrays
# NumPy <-> Arrow through buffers.  ``pa.array`` and ``Array.to_numpy`` look for
# pandas objects, which imports pandas (about 0.1 s, a seventh of a warm
# ``podium rate`` of a small file); building the arrays from their buffers does not.
_ARROW_TYPES = {np.dtype(np.float64): pa.float64(), np.dtype(np.int64): pa.int64()}


def _validity(valid: npt.NDArray[np.bool_]) -> pa.Buffer | None:
    """Arrow's validity bitmap of ``valid`` (``None`` when every value is valid)."""
    if valid.all():
        return None
    return pa.py_buffer(np.packbits(valid, bitorder="little"))


def _from_numpy(values: npt.NDArray[Any], valid: npt.NDArray[np.bool_] | None = None
                ) -> pa.Array:
    """A float64 or int64 NumPy array as an Arrow array (``valid``: False for null)."""
    data = np.ascontiguousarray(values)
    typ = _ARROW_TYPES[data.dtype]
    bitmap = None if valid is None else _validity(valid)
    return pa.Array.from_buffers(typ, len(data), [bitmap, pa.py_buffer(data)])


def _from_bools(values: Sequence[bool]) -> pa.Array:
    bits = np.packbits(np.fromiter(values, dtype=np.bool_, count=len(values)),
                       bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])


def _from_strings(values: Sequence[str | None]) -> pa.Array:
    """Python strings (``None`` for null) as an Arrow string array; a string that is not
    valid Unicode raises :class:`UnicodeEncodeError`."""
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    ends = np.cumsum(sizes)
    total = int(ends[-1]) if len(ends) else 0
    typ = pa.string() if total < 2**31 else pa.large_string()
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32 if typ == pa.string() else np.int64)
    offsets[1:] = ends
    valid = np.fromiter((v is not None for v in values), dtype=np.bool_, count=len(values))
    return pa.Array.from_buffers(
        typ, len(encoded),
        [_validity(valid), pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def _indices(arr: pa.Array) -> npt.NDArray[np.int64]:
    """The values of an Arrow array of indices (uint64 or int64, no nulls) in NumPy."""
    kind = "u" if pa.types.is_unsigned_integer(arr.type) else "i"
    raw = np.frombuffer(arr.buffers()[1], dtype=f"<{kind}{arr.type.bit_width // 8}",
                        count=arr.offset + len(arr))
    return raw[arr.offset:].astype(np.int64)


# ====================================================================== tables
def _handle_array(handles: Sequence[str]) -> pa.Array:
    """The handles as an Arrow string array (they must be valid Unicode)."""
    try:
        return _from_strings(handles)
    except (pa.ArrowException, UnicodeEncodeError):
        for h in handles:
            try:
                h.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise PodiumError(
                    f"player {h!r}: the handle is not valid Unicode text ({exc.reason}); "
                    "it cannot be written"
                ) from None
        raise


def _handle_ranks(handles: pa.Array) -> npt.NDArray[np.int64]:
    """``rank[i]`` = position of player ``i`` when handles are sorted.

    Arrow compares UTF-8 bytes, which orders strings by code point, as Python does.
    """
    order = _indices(pc.sort_indices(handles))
    rank = np.empty(len(handles), dtype=np.int64)
    rank[order] = np.arange(len(handles), dtype=np.int64)
    return rank


def _stable_argsort(key: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """``np.argsort(key, kind="stable")`` for non-negative integer keys, as one or two
    16-bit radix passes (NumPy radix-sorts 16-bit keys: about 4x faster than its
    stable sort of 64-bit keys on millions of rows)."""
    top = int(key.max()) if key.size else 0
    if top < 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    if top >= 1 << 32:
        return np.argsort(key, kind="stable")
    first = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    high = (key >> 16).astype(np.uint16)[first]
    return first[np.argsort(high, kind="stable")]


class _Handles:
    """The players' handles as Arrow text, and their sort ranks (computed once:
    sorting a million handles takes about half a second)."""

    def __init__(self, handles: Sequence[str]) -> None:
        self.array = _handle_array(handles)
        self._ranks: npt.NDArray[np.int64] | None = None

    @property
    def ranks(self) -> npt.NDArray[np.int64]:
        if self._ranks is None:
            self._ranks = _handle_ranks(self.array)
        return self._ranks


def ratings_table(rater: Rater, *, sort: bool = True) -> pa.Table:
    """The current ratings, one row per player (the columns of :data:`RATINGS_COLUMNS`).

    Parameters
    ----------
    rater : Rater
    sort : bool, default True
        Best display rating first, ties by handle (NaN ratings last), as
        :meth:`podium.Rater.ratings`; otherwise in order of first appearance.

    Returns
    -------
    pyarrow.Table
        ``display_rating`` is the system's public rating of ``(mu, sigma)`` (for
        Elo-MMR, ``mu - 2 sigma``: Sec. 3.3 of Ebtekar & Liu).
    """
    return _ratings_table(rater, sort, _Handles(rater.players.handles))


def _ratings_table(rater: Rater, sort: bool, names: _Handles) -> pa.Table:
    t = rater.players
    n = t.n
    mu = t.mu[:n]
    sigma = t.sigma[:n]
    display = np.asarray(rater.system.display_rating(mu, sigma), dtype=np.float64)
    handles = names.array
    values: list[npt.NDArray[Any]] = [mu, sigma, display, t.contests[:n], t.last_time[:n],
                                      t.max_display[:n], t.last_change[:n]]
    if sort and n:
        order = np.lexsort((names.ranks, -display))
        handles = handles.take(_from_numpy(order.astype(np.int64)))
        values = [v[order] for v in values]
    return pa.table([handles, *map(_from_numpy, values)], names=list(RATINGS_COLUMNS))


def histories_table(rater: Rater) -> pa.Table:
    """Every rating event, by handle then contest (the columns of :data:`HISTORIES_COLUMNS`).

    Parameters
    ----------
    rater : Rater

    Returns
    -------
    pyarrow.Table
        ``mu``/``sigma`` are the player's posterior after the contest,
        ``display_rating`` their public rating, ``perf`` the round performance
        (Eq. 5 of Ebtekar & Liu for Elo-MMR), ``place`` the 0-based ``lo`` of the
        player's tie range (of its team's, in a team contest) and ``team`` the name
        of the player's team (null outside team contests).
    """
    return _histories_table(rater, _Handles(rater.players.handles))


def _histories_parts(rater: Rater, names: _Handles
                     ) -> tuple[dict[str, npt.NDArray[Any]], npt.NDArray[np.float64],
                                npt.NDArray[Any]]:
    """The event arrays, their display ratings (in event order, as the rater's own
    frames compute them) and the order of the rows (by handle, then contest)."""
    ev = rater.events.arrays()
    player = ev["player"]
    contest = ev["contest"]
    display = np.asarray(rater.system.display_rating(ev["mu"], ev["sigma"]), dtype=np.float64)
    if player.size:
        key = names.ranks[player]
        if np.all(contest[1:] >= contest[:-1]):
            order = _stable_argsort(key)  # events are stored contest by contest
        else:
            order = np.lexsort((contest, key))
    else:
        order = np.zeros(0, dtype=np.int64)
    return ev, display, order


def _histories_table(rater: Rater, names: _Handles) -> pa.Table:
    ev, display, order = _histories_parts(rater, names)
    player = ev["player"]
    handles = names.array
    team_names = rater.events.team_names

    def gather(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
        out = values[order]
        return out if out.dtype in _ARROW_TYPES else out.astype(np.int64)

    def gather_handles() -> pa.Array:
        return handles.take(_from_numpy(gather(player)))

    def gather_teams() -> pa.Array:
        if not team_names:
            return pa.nulls(len(order), pa.string())
        team = gather(ev["team"])
        return _from_strings(team_names).take(_from_numpy(team, valid=team >= 0))

    # each column is a gather of millions of values (NumPy and Arrow release the GIL)
    jobs: list[Callable[[], Any]] = [
        gather_handles,
        *(partial(gather, v) for v in (ev["contest"], ev["mu"], ev["sigma"], display,
                                       ev["perf"], ev["place"])),
        gather_teams,
    ]
    columns = _run_all(jobs)
    return pa.table([columns[0], *map(_from_numpy, columns[1:-1]), columns[-1]],
                    names=list(HISTORIES_COLUMNS))


def _run_all(jobs: Sequence[Callable[[], Any]]) -> list[Any]:
    """``[job() for job in jobs]``, on a pool of threads when there are several CPUs."""
    workers = min(_workers(), len(jobs))
    if workers <= 1:
        return [job() for job in jobs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers, thread_name_prefix="podium-gather") as pool:
        return list(pool.map(lambda job: job(), jobs))


def _int_column(values: list[int]) -> pa.Array:
    """Python integers as int64, or as decimal text if one does not fit in 64 bits."""
    try:
        return _from_numpy(np.array(values, dtype=np.int64))
    except OverflowError:
        return _from_strings([str(v) for v in values])


def contests_table(rater: Rater) -> pa.Table:
    """The processed contests in rating order (the columns of :data:`CONTESTS_COLUMNS`).

    Parameters
    ----------
    rater : Rater

    Returns
    -------
    pyarrow.Table
        ``players`` counts the contest's standings; ``skipped`` is true for a
        contest the system left unrated (it changed nothing): one side only, or
        everybody tied with ``all_tied="skip"``
        (:meth:`~podium.systems.RatingSystem.skips_round`).
    """
    recs = rater.contests
    return pa.table(
        [
            _from_numpy(np.arange(len(recs), dtype=np.int64)),
            _from_strings([r.name for r in recs]),
            _int_column([r.time_seconds for r in recs]),
            _from_strings([r.url for r in recs]),
            _from_numpy(np.array([r.players for r in recs], dtype=np.int64)),
            _from_bools([r.skipped for r in recs]),
        ],
        names=list(CONTESTS_COLUMNS),
    )


# ====================================================================== CSV
def _csv_column(col: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    """A column as the CSV writer should see it: NaN -> null (an empty field),
    booleans -> ``True``/``False`` (the text Python and pandas write)."""
    if pa.types.is_floating(col.type):
        if col.null_count == 0 and not pc.any(pc.is_nan(col)).as_py():
            return col
        values = _float_values(col)
        if values is None:  # nulls already (not from Podium's tables): Arrow's own way
            return pc.if_else(pc.is_nan(col), pa.scalar(None, col.type), col)
        return _from_numpy(values, valid=~np.isnan(values))
    if pa.types.is_boolean(col.type):
        return _from_strings(["True" if v else "False" for v in col.to_pylist()])
    return col


def _float_values(col: pa.ChunkedArray) -> npt.NDArray[np.float64] | None:
    """A float64 column without nulls as a NumPy array (read from its buffers)."""
    arr = col.combine_chunks()
    if arr.null_count or arr.type != pa.float64():
        return None
    return np.frombuffer(arr.buffers()[1], dtype="<f8", count=arr.offset + len(arr))[
        arr.offset:]


def _needs_quotes(table: pa.Table) -> bool:
    """Whether some text field of ``table`` holds a comma, a quote or a line break."""
    for col in table.columns:
        if pa.types.is_string(col.type) and len(col):
            if pc.any(pc.match_substring_regex(col, _CSV_SPECIAL)).as_py():
                return True
    return False


def _any_special(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether some (large) string of ``texts`` holds a comma, a quote or a line break."""
    return bool(len(texts)) and bool(pc.any(pc.match_substring_regex(texts, _CSV_SPECIAL)).as_py())


def _text(value: str) -> pa.Scalar:
    """A string scalar taken from an array: ``pa.scalar`` (which Arrow's compute
    functions call on a Python argument) imports pandas, about 0.3 s."""
    return _from_strings([value])[0]


def _quoted_text(col: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Every field of a column as CSV text: numbers in the CSV writer's (shortest
    round-trip) form, text quoted where needed, nulls empty."""
    if pa.types.is_string(col.type):
        quote = _text('"')
        quoted = pc.binary_join_element_wise(quote, pc.replace_substring(col, '"', '""'), quote,
                                             _text(""))
        text = pc.if_else(pc.match_substring_regex(col, _CSV_SPECIAL), quoted, col)
    else:
        text = pc.cast(col, pa.string())
    return pc.fill_null(text, _text(""))


def _csv_quoted(table: pa.Table) -> memoryview:
    """The CSV text of ``table`` (no header) with minimal quoting, built with Arrow's
    string kernels.

    Arrow's CSV writer either quotes every text field or refuses the ones that
    need quotes; this path writes exactly the text Python's :mod:`csv` writes.
    """
    texts = [_quoted_text(c) for c in table.columns]
    texts[-1] = pc.binary_join_element_wise(texts[-1], _text("\n"), _text(""))
    rows = pc.binary_join_element_wise(*texts, _text(","))
    if isinstance(rows, pa.ChunkedArray):
        rows = rows.combine_chunks()
    # the rows' character data, back to back, is the CSV text of the table
    _, offsets, data = rows.buffers()
    kind = np.int64 if pa.types.is_large_string(rows.type) else np.int32
    bounds = np.frombuffer(offsets, dtype=kind)[[rows.offset, rows.offset + len(rows)]]
    return memoryview(data)[int(bounds[0]):int(bounds[1])]


def _csv_text(table: pa.Table) -> memoryview | pa.Buffer:
    """The CSV text of ``table`` (no header): Arrow's writer, or the minimally quoted
    text when a text field needs quotes (the two agree on every other field)."""
    if _needs_quotes(table):
        return _csv_quoted(table)
    sink = pa.BufferOutputStream()
    pacsv.write_csv(table, sink, pacsv.WriteOptions(include_header=False, quoting_style="none",
                                                    batch_size=_CSV_BATCH))
    return sink.getvalue()


def _workers() -> int:
    """Threads for formatting: the CPUs this process may use (at most 8)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def _write_csv(table: pa.Table, fh: IO[bytes]) -> None:
    """Header, then the rows: a table of :data:`_COMPILED_MIN_ROWS` rows or more whose
    text needs no quotes by the compiled writer (:mod:`podium.io._csv_rows`), any
    other in slices of :data:`_CSV_BATCH`, formatted by a pool of threads (Arrow's
    kernels release the GIL) and written in order; at most two slices per thread are
    held in memory."""
    fh.write((",".join(table.column_names) + "\n").encode("utf-8"))
    if table.num_rows >= _COMPILED_MIN_ROWS and not any(
        _any_special(c) for c in table.columns
        if pa.types.is_string(c.type) or pa.types.is_large_string(c.type)
    ):
        from podium.io import _csv_rows

        columns = _csv_rows.arrow_columns(table)
        if columns is not None:
            _csv_rows.announce_compile()
            _csv_rows.write_rows(fh, columns, table.num_rows)
            return
    table = pa.table([_csv_column(c) for c in table.columns], names=table.column_names)
    slices = [table.slice(a, _CSV_BATCH) for a in range(0, table.num_rows, _CSV_BATCH)]
    workers = min(_workers(), len(slices))
    if workers <= 1:
        for part in slices:
            fh.write(_csv_text(part))
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers, thread_name_prefix="podium-csv") as pool:
        pending: deque[Any] = deque()
        for part in slices:
            pending.append(pool.submit(_csv_text, part))
            if len(pending) >= 2 * workers:
                fh.write(pending.popleft().result())
        while pending:
            fh.write(pending.popleft().result())


def _write_histories_csv(rater: Rater, names: _Handles, fh: IO[bytes]) -> None:
    """``histories.csv``: with the compiled writer straight from the event arrays in
    row order (no gathered table) when it is large and no handle or team name needs
    quotes, else as :func:`histories_table` through :func:`_write_csv`."""
    team_names = rater.events.team_names
    n = len(rater.events)
    if n < _COMPILED_MIN_ROWS or _any_special(names.array):
        _write_csv(_histories_table(rater, names), fh)
        return
    teams = _from_strings(team_names)
    if _any_special(teams):
        _write_csv(_histories_table(rater, names), fh)
        return
    from podium.io import _csv_rows

    ev, display, order = _histories_parts(rater, names)
    _csv_rows.announce_compile()

    columns: list[_csv_rows.Column] = [
        _csv_rows.text_column(names.array, ev["player"]),
        _csv_rows.int_column(ev["contest"]),
        *(_csv_rows.FloatColumn(np.ascontiguousarray(v, dtype=np.float64))
          for v in (ev["mu"], ev["sigma"], display, ev["perf"])),
        _csv_rows.int_column(ev["place"]),
        _csv_rows.text_column(teams, ev["team"]),
    ]
    fh.write((",".join(HISTORIES_COLUMNS) + "\n").encode("utf-8"))
    _csv_rows.write_rows(fh, columns, len(order), order)


def _write_parquet(table: pa.Table, fh: IO[bytes]) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, fh)


_WRITERS: dict[str, Callable[[pa.Table, IO[bytes]], None]] = {
    "csv": _write_csv,
    "parquet": _write_parquet,
}


def write_table(table: pa.Table, path: str | os.PathLike[str], fmt: str = "csv") -> None:
    """Write one Arrow table as CSV or Parquet, atomically.

    Parameters
    ----------
    table : pyarrow.Table
    path : str or os.PathLike
        Destination file; replaced if it exists.  Its directory must exist.
    fmt : {"csv", "parquet"}
        CSV as described in the module notes (shortest round-trip floats,
        minimal quoting) or Parquet (the column types as in ``table``).
    """
    try:
        writer = _WRITERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    atomic_write(path, lambda fh: writer(table, fh), binary=True)


def write_results(
    rater: Rater, out: str | os.PathLike[str], *, fmt: str = "csv", histories: bool = True,
    csv_safe: bool = False,
) -> list[Path]:
    """Write ``ratings``, ``contests`` and (optionally) ``histories`` into a directory.

    Parameters
    ----------
    rater : Rater
        The rater whose state is written.
    out : str or os.PathLike
        The output directory; created (with parents) if missing.
    fmt : {"csv", "parquet"}, default "csv"
        ``ratings.csv`` etc., or ``ratings.parquet`` etc.
    histories : bool, default True
        Also write the histories table (one row per player and contest; the
        largest of the three).
    csv_safe : bool, default False
        Neutralise the CSV text cells that a spreadsheet would run as formulas
        (:func:`podium.io.spreadsheet.neutralize`: ``=1+1`` is written ``'=1+1``).  By
        default every cell is the value as it is (research output, read by programs).

    Returns
    -------
    list of Path
        The files written, ratings first.

    Raises
    ------
    PodiumError
        When ``out`` exists and is not a directory, or cannot be created or
        written (the message names the path and the reason).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    directory = Path(out)
    check_output_dir(directory)
    names = _Handles(rater.players.handles)
    tables: list[tuple[str, Callable[[], pa.Table]]] = [
        ("ratings", lambda: _ratings_table(rater, True, names)),
        ("contests", lambda: contests_table(rater)),
    ]
    if histories:
        tables.append(("histories", lambda: _histories_table(rater, names)))
    written = [directory / f"{name}.{fmt}" for name, _ in tables]

    if csv_safe and fmt == "csv":
        from podium.io.spreadsheet import neutralize_table

        def safe(build: Callable[[], pa.Table]) -> Callable[[], pa.Table]:
            return lambda: neutralize_table(build())

        tables = [(name, safe(build)) for name, build in tables]

    def write(k: int) -> None:
        name, build = tables[k]
        if name == "histories" and fmt == "csv" and not csv_safe:
            atomic_write(written[k], lambda fh: _write_histories_csv(rater, names, fh),
                         binary=True)
        else:
            write_table(build(), written[k], fmt)

    try:
        directory.mkdir(parents=True, exist_ok=True)
        if histories and rater.events and _workers() > 1:
            # the small tables are written beside the large one (each file on its own;
            # the handles' sort order, which both use, is computed first)
            names.ranks  # noqa: B018 - computed once, before the threads share it
            from concurrent.futures import ThreadPoolExecutor

            def write_small() -> None:
                for k in range(len(tables) - 1):
                    write(k)

            with ThreadPoolExecutor(1, thread_name_prefix="podium-write") as pool:
                small = pool.submit(write_small)
                try:
                    write(len(tables) - 1)
                finally:
                    small.result()
        else:
            for k in range(len(tables)):
                write(k)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else directory
        raise PodiumError(f"{where}: cannot write output ({exc.strerror or exc})") from None
    return written


def check_output_dir(out: str | os.PathLike[str], option: str = "--out") -> None:
    """Fail early, before any work, when ``out`` cannot be an output directory.

    Parameters
    ----------
    out : str or os.PathLike
        The directory (it need not exist).
    option : str, default "--out"
        How the messages name it (the command-line option or argument).

    Raises
    ------
    PodiumError
        When ``out`` or one of its parents exists and is not a directory.
    """
    p = Path(out)
    for q in (p, *p.parents):
        if q.exists():
            if not q.is_dir():
                what = option if q == p else f"{option} {p}: its parent"
                raise PodiumError(f"{what} {q} exists and is not a directory")
            return
