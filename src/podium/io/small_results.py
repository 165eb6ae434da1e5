"""A small rater's results as CSV text, written without Arrow.

``podium rate`` of a few contests spends more time importing ``pyarrow`` (and
``pyarrow.compute``, whose import wraps hundreds of functions: about 0.14 s of a warm
run's 0.6 s of CPU) than rating.  A rater with at most :data:`SMALL_MAX_ROWS` events
and players has its three CSV tables written here, in Python, to the same bytes as
:func:`podium.io.results.write_results` writes (``tests/test_small_results.py``
compares the two on every kind of field); larger raters, Parquet and ``--csv-safe``
go to :mod:`podium.io.results`.

This module also holds what both writers share and what ``podium rate`` checks before
any work: the tables' column names and :func:`check_output_dir`.

CSV text (see :mod:`podium.io.results`)
---------------------------------------
* A float64 is spelled as Arrow's cast to text spells it (double-conversion's
  ``ToShortest``): the shortest decimal digits that read back as the same double
  (those of Python's ``repr``), in decimal notation when the scientific exponent
  ``e`` has ``-6 <= e < 10`` and as ``d[.ddd]e+X`` / ``d[.ddd]e-X`` otherwise;
  ``-0``, ``inf``, ``-inf``; NaN is an empty field (:func:`format_double`).
* An integer in decimal; ``skipped`` as ``True``/``False``; a missing text as an
  empty field.
* A text field is quoted (``"a,b"``, ``""`` for a quote) only when it holds a comma, a
  quote or a line break, as Python's :mod:`csv` module does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from podium._files import atomic_write
from podium.errors import PodiumError

if TYPE_CHECKING:
    from podium.rater import Rater

__all__ = [
    "CONTESTS_COLUMNS",
    "HISTORIES_COLUMNS",
    "RATINGS_COLUMNS",
    "SMALL_MAX_ROWS",
    "check_output_dir",
    "csv_field",
    "format_double",
    "small_csv_tables",
    "write_small_results",
]

RATINGS_COLUMNS = ("handle", "mu", "sigma", "display_rating", "contests", "last_contest_time",
                   "max_display_rating", "last_change")
HISTORIES_COLUMNS = ("handle", "contest_index", "mu", "sigma", "display_rating", "perf", "place",
                     "team")
CONTESTS_COLUMNS = ("contest_index", "name", "time_seconds", "url", "players", "skipped")

#: The most rating events (rows of ``histories.csv``) and players a rater may have for
#: :func:`write_small_results`: formatting in Python costs about 1 µs a field, so up to
#: here it takes less time than importing Arrow (about 0.14 s of CPU).
SMALL_MAX_ROWS = 2048

#: Characters that make a CSV text field need quotes.
_CSV_SPECIAL = frozenset(',"\r\n')


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


def format_double(x: float) -> str:
    """The text of the double ``x`` as Arrow's cast to string writes it ('' for NaN).

    Parameters
    ----------
    x : float

    Returns
    -------
    str
        The shortest round-trip digits of ``x`` (Python's ``repr``), in decimal
        notation for a scientific exponent in ``[-6, 10)`` (``1500``, ``0.000001``,
        ``0.30000000000000004``), else ``1e+10`` / ``1.2345e-7``; ``-0``, ``inf``,
        ``-inf``; NaN gives the empty string (an empty CSV field).
    """
    if 1e-4 <= abs(x) < 1e10:  # where repr and Arrow both write decimal notation
        text = repr(x)
        return text[:-2] if text.endswith(".0") else text
    if x != x:
        return ""
    text = repr(x)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    if text == "inf":
        return sign + text
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits:
        return sign + "0"
    # the value is 0.digits x 10^(e + 1): e is the exponent of the first digit
    e = int(exp_text or 0) + len(whole) - 1 - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0")
    if -6 <= e < 10:
        if e < 0:
            return f"{sign}0.{'0' * (-e - 1)}{digits}"
        if e + 1 >= len(digits):
            return sign + digits + "0" * (e + 1 - len(digits))
        return f"{sign}{digits[:e + 1]}.{digits[e + 1:]}"
    tail = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'+' if e >= 0 else '-'}{abs(e)}"


def csv_field(text: str | None) -> str:
    """A text field of a CSV row: empty for ``None``, quoted (``""`` for a quote) when it
    holds a comma, a quote or a line break, else as it is."""
    if text is None:
        return ""
    if _CSV_SPECIAL.isdisjoint(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def _column(values: npt.NDArray[Any]) -> list[str]:
    """The fields of a numeric column: floats by :func:`format_double`, integers in
    decimal."""
    if values.dtype.kind == "f":
        return [format_double(v) for v in values.astype(np.float64).tolist()]
    return [str(v) for v in values.tolist()]


def _table(columns: Sequence[str], fields: Iterable[list[str]]) -> bytes:
    """The CSV text (header, one row per line) of the columns' fields."""
    rows = [",".join(columns), *map(",".join, zip(*fields, strict=True))]
    return ("\n".join(rows) + "\n").encode("utf-8")


def _ratings(rater: Rater, handles: list[str], rank: npt.NDArray[np.int64]) -> bytes:
    """``ratings.csv``: best display rating first, ties by handle (NaN last)."""
    t = rater.players
    n = t.n
    mu, sigma = t.mu[:n], t.sigma[:n]
    display = np.asarray(rater.system.display_rating(mu, sigma), dtype=np.float64)
    order = np.lexsort((rank, -display))
    values = [mu, sigma, display, t.contests[:n], t.last_time[:n], t.max_display[:n],
              t.last_change[:n]]
    return _table(RATINGS_COLUMNS, [[csv_field(handles[i]) for i in order.tolist()],
                                    *(_column(v[order]) for v in values)])


def _histories(rater: Rater, handles: list[str], rank: npt.NDArray[np.int64]) -> bytes:
    """``histories.csv``: every rating event, by handle then contest (stable)."""
    ev = rater.events.arrays()
    player, team = ev["player"], ev["team"]
    display = np.asarray(rater.system.display_rating(ev["mu"], ev["sigma"]), dtype=np.float64)
    order = np.lexsort((ev["contest"], rank[player]))
    names = rater.events.team_names
    return _table(HISTORIES_COLUMNS, [
        [csv_field(handles[i]) for i in player[order].tolist()],
        *(_column(v[order]) for v in (ev["contest"], ev["mu"], ev["sigma"], display,
                                      ev["perf"], ev["place"])),
        [csv_field(names[k]) if k >= 0 else "" for k in team[order].tolist()],
    ])


def _contests(rater: Rater) -> bytes:
    """``contests.csv``: the processed contests in rating order."""
    recs = rater.contests
    return _table(CONTESTS_COLUMNS, [
        [str(k) for k in range(len(recs))],
        [csv_field(r.name) for r in recs],
        [str(int(r.time_seconds)) for r in recs],
        [csv_field(r.url) for r in recs],
        [str(int(r.players)) for r in recs],
        [str(bool(r.skipped)) for r in recs],
    ])


def _write_bytes(text: bytes, fh: IO[bytes]) -> None:
    fh.write(text)


def small_csv_tables(rater: Rater, *, histories: bool = True) -> dict[str, bytes] | None:
    """The CSV text of ``ratings``, ``contests`` and (optionally) ``histories``, or
    ``None`` when the rater is too large for this writer (more than
    :data:`SMALL_MAX_ROWS` events or players) or holds a text that is not valid
    Unicode (which :mod:`podium.io.results` refuses with a message naming it).

    Parameters
    ----------
    rater : Rater
    histories : bool, default True
        Also the histories table.

    Returns
    -------
    dict of str to bytes, or None
        The tables' texts by name (``"ratings"``, ``"contests"``, ``"histories"``),
        the same bytes as :func:`podium.io.results.write_results` writes.
    """
    if rater.players.n > SMALL_MAX_ROWS or len(rater.events) > SMALL_MAX_ROWS:
        return None
    handles = list(rater.players.handles)
    # Python orders strings by code point, as Arrow's sort of their UTF-8 bytes does
    rank = np.empty(len(handles), dtype=np.int64)
    rank[sorted(range(len(handles)), key=handles.__getitem__)] = np.arange(len(handles))
    try:
        tables = {"ratings": _ratings(rater, handles, rank), "contests": _contests(rater)}
        if histories:
            tables["histories"] = _histories(rater, handles, rank)
    except UnicodeEncodeError:
        return None
    return tables


def write_small_results(rater: Rater, out: str | os.PathLike[str], *,
                        histories: bool = True) -> list[Path] | None:
    """:func:`podium.io.results.write_results` as CSV for a small rater, without Arrow.

    Parameters
    ----------
    rater : Rater
    out : str or os.PathLike
        The output directory; created (with parents) if missing.
    histories : bool, default True
        Also write ``histories.csv``.

    Returns
    -------
    list of Path or None
        The files written, ratings first; ``None`` (nothing written) when
        :func:`small_csv_tables` declines the rater.

    Raises
    ------
    PodiumError
        When ``out`` exists and is not a directory, or cannot be created or written.
    """
    directory = Path(out)
    check_output_dir(directory)
    tables = small_csv_tables(rater, histories=histories)
    if tables is None:
        return None
    written = [directory / f"{name}.csv" for name in tables]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for path, text in zip(written, tables.values(), strict=True):
            atomic_write(path, partial(_write_bytes, text), binary=True)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else directory
        raise PodiumError(f"{where}: cannot write output ({exc.strerror or exc})") from None
    return written
