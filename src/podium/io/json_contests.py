"""The Elo-MMR JSON contest format.

One contest per file::

    {"name": str, "url": str, "time_seconds": int, "weight": float,
     "perf_ceiling": float, "standings": [[handle, lo, hi], ...]}

with ``url``, ``weight`` (default 1) and ``perf_ceiling`` optional, standings best
first and ``lo``/``hi`` the 0-based inclusive range of places shared by a tie.

A team contest (docs/teams.md) lists teams instead, best first::

    "standings": [[team, lo, hi, [member, ...]], ...]
    "standings": [[team, lo, hi, [[member, weight], ...]], ...]

with ``lo``/``hi`` the team's range of team places and ``weight`` in (0, 1]
(partial play; a bare handle has weight 1).  A ``[handle, lo, hi]`` row in a team
contest is a one-member team named after its player.

Handles and team names are normalised by default (NFC, surrounding whitespace
removed; control, format and bidi characters, empty and over-long handles refused:
:mod:`podium.core.guards`); ``raw_handles=True`` keeps them as given.  A string that
is not Unicode text (a lone surrogate such as ``"\\ud800"``) is refused in a handle,
a team name, the contest name and the url either way.

Every problem raises :class:`~podium.errors.DataFormatError` (or
:class:`~podium.errors.ContestError` when the contest model rejects a contest)
whose message names the source (file or archive member), the contest and the
player.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.guards import HandleError
from podium.errors import ContestError, DataFormatError
from podium.io._handles import HandleTable, handle_table
from podium.io._messages import (
    contest_error_at,
    duplicate_note,
    handle_error,
    short,
    short_int,
    show,
)
from podium.io._paths import PathArg, read_bytes
from podium.io._times import TimeCheck

_orjson: Any
try:  # optional, faster JSON parser
    _orjson = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

__all__ = ["Decoders", "EmptyContest", "contest_from_json_dict", "decode_contest", "decoders",
           "plain_fields", "read_contest_json"]


class Decoders:
    """msgspec's typed decoders of the contest object, built on first use (reading a CSV
    never imports msgspec): ``full`` decodes every field, standings included, checking
    every type in C; ``raw`` keeps the standings as JSON text (for the compiled reader
    of :mod:`podium.io._scan`); ``error`` is msgspec's ``DecodeError`` (also raised for a
    wrong type)."""

    def __init__(self) -> None:
        import msgspec

        # typed fields (not annotations: this module's are strings, which msgspec
        # would resolve in the module's namespace, where msgspec is not)
        def fields(standings: Any) -> list[Any]:
            return [("name", str), ("time_seconds", int | float), ("standings", standings),
                    ("url", str | None, None), ("weight", int | float, 1.0),
                    ("perf_ceiling", int | float | None, None)]

        ContestDoc = msgspec.defstruct("ContestDoc", fields(list[tuple[str, int, int]]))
        ContestRawDoc = msgspec.defstruct("ContestRawDoc", fields(msgspec.Raw))
        self.full: Any = msgspec.json.Decoder(ContestDoc)
        self.raw: Any = msgspec.json.Decoder(ContestRawDoc)
        self.error: type[Exception] = msgspec.DecodeError


@functools.cache
def decoders() -> Decoders:
    """The load's msgspec decoders (:class:`Decoders`), built once."""
    return Decoders()


def plain_fields(doc: Any) -> bool:
    """Whether the fast paths take the top-level fields: an integer time, numbers
    within 64 bits (else the checking path reads the text again and names them)."""
    if isinstance(doc.time_seconds, float):
        return False  # keep the checking path's exact handling of float times
    return all(not (type(v) is int and not -(2**63) <= v < 2**63)
               for v in (doc.time_seconds, doc.weight, doc.perf_ceiling))


def _decode_scanned(data: bytes, source: str, intern: HandleTable) -> Contest | None:
    """The contest of well-formed JSON text through the compiled standings reader
    (:mod:`podium.io._scan`); ``None`` when the reader does not take it (the handle
    table is then as it was and :func:`_decode_fast` reads it)."""
    fast, pool = intern.fast, intern.pool
    assert fast is not None and pool is not None
    dec = decoders()
    try:
        doc = dec.raw.decode(data)
    except dec.error:
        return None
    if not plain_fields(doc):
        return None
    scan = fast.scan(np.frombuffer(doc.standings, dtype=np.uint8), len(pool))
    if scan is None:
        return None
    intern.scanned(scan)
    try:
        _check_texts(doc.name, doc.url, source)
        return Contest.from_codes(
            pool, scan.codes, scan.lo, scan.hi, name=doc.name, time_seconds=doc.time_seconds,
            weight=doc.weight, perf_ceiling=doc.perf_ceiling, url=doc.url)
    except (ContestError, DataFormatError):  # the general path names the problem
        intern.unscanned(scan)
        return None


def _decode_fast(
    data: bytes, source: str, intern: HandleTable, *, allow_empty: bool
) -> Contest | EmptyContest | None:
    """The contest of well-formed JSON text, decoded straight into typed values.

    Returns ``None`` when the text is not a well-typed contest object (bad syntax, a
    wrong type, a missing key, ``Infinity``, a time given as a float, an index beyond
    64 bits): the checking path (:func:`_parse_json_bytes` then
    :func:`contest_from_json_dict`) then reads it again and names the problem.
    """
    if intern.fast is not None:
        scanned = _decode_scanned(data, source, intern)
        if scanned is not None:
            return scanned
    dec = decoders()
    try:
        doc = dec.full.decode(data)
    except dec.error:  # also ValidationError
        return None
    standings = doc.standings
    n = len(standings)
    if n == 0:
        return EmptyContest(doc.name, source) if allow_empty else None
    if not plain_fields(doc):
        return None
    raw, los, his = zip(*standings, strict=True)
    try:
        lo = np.fromiter(los, dtype=np.int64, count=n)
        hi = np.fromiter(his, dtype=np.int64, count=n)
    except OverflowError:
        return None
    _check_texts(doc.name, doc.url, source)
    pool = intern.pool
    try:
        if pool is None:
            handles = intern.all(raw)
        else:  # numbered: the Contest spells its handles out only if they are read
            codes = intern.coded(raw)
    except HandleError as exc:
        raise handle_error(exc, source, doc.name or "<unnamed>") from None
    try:
        if pool is None:
            return Contest.from_arrays(
                handles, lo, hi, name=doc.name, time_seconds=doc.time_seconds,
                weight=doc.weight, perf_ceiling=doc.perf_ceiling, url=doc.url)
        return Contest.from_codes(
            pool, codes, lo, hi, name=doc.name, time_seconds=doc.time_seconds,
            weight=doc.weight, perf_ceiling=doc.perf_ceiling, url=doc.url)
    except ContestError as exc:
        raise contest_error_at(duplicate_note(exc, raw, intern), source) from exc


def decode_contest(
    data: bytes, source: str, intern: HandleTable, *, allow_empty: bool,
    times: TimeCheck | None,
) -> Contest | EmptyContest:
    """A contest from JSON text: the typed fast path, else the checking path; then the
    time check (``times``, when given).

    Parameters
    ----------
    data : bytes
        The JSON text of one contest object.
    source : str
        Where it came from (file, archive member); starts every message.
    intern : HandleTable
        The load's handle table (:mod:`podium.io._handles`).
    allow_empty : bool
        Return an :class:`EmptyContest` for a contest with empty standings (a history
        member) instead of refusing it.
    times : TimeCheck, optional
        The load's time check (:mod:`podium.io._times`); ``None``: the time is not
        checked.

    Returns
    -------
    Contest or EmptyContest

    Raises
    ------
    DataFormatError, ContestError
        As :func:`read_contest_json`.
    """
    found = _decode_fast(data, source, intern, allow_empty=allow_empty)
    if found is None:
        d = _parse_json_bytes(data, source)
        if allow_empty:
            found = _history_member(d, source, intern)
        else:
            found = _contest_of_doc(d, source, intern)
    if times is not None and isinstance(found, Contest):
        times.check(found, source)
    return found


def _parse_json_bytes(data: bytes, source: str) -> Any:
    """Parse JSON text; syntax errors become :class:`DataFormatError` with line and column."""
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # the standard parser accepts Infinity and gives the exact position
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise DataFormatError(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(
            f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    except ValueError as exc:  # an integer beyond Python's int-string conversion limit
        raise DataFormatError(f"{source}: invalid JSON{_long_number_at(data)}: "
                              f"{_long_number_reason(exc)}") from None
    except RecursionError:
        raise DataFormatError(f"{source}: invalid JSON: nested too deeply") from None


def _int_digits_limit() -> int:
    """Python's limit on the digits of an integer read from text (0: none)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 0


def _long_number_reason(exc: ValueError) -> str:
    limit = _int_digits_limit()
    if limit and "integer string conversion" in str(exc):
        return f"an integer of more than {limit} digits (out of range)"
    return str(exc)[:200]


def _long_number_at(data: bytes) -> str:
    """`` at line L, column C`` of the first number too long for Python's int-string
    conversion (empty when none is found)."""
    limit = _int_digits_limit()
    m = re.search(rb"[0-9]{%d,}" % (limit + 1), data) if limit else None
    if m is None:
        return ""
    line = data.count(b"\n", 0, m.start()) + 1
    column = m.start() - (data.rfind(b"\n", 0, m.start()) + 1) + 1
    return f" at line {line}, column {column}"


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _check_texts(name: str, url: str | None, source: str) -> None:
    """Refuse a contest name or url holding a lone surrogate (not Unicode text)."""
    for key, value in (("name", name), ("url", url)):
        if value is None or value.isascii():
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            where = source if key == "name" else f"{source}: contest {show(name)}"
            raise DataFormatError(
                f"{where}: {key!r} {show(value)} is not Unicode text: character "
                f"{exc.start + 1} (U+{ord(value[exc.start]):04X}) is a lone surrogate") from None


def _split_standings(
    standings: list[Any], where: str
) -> tuple[Sequence[Any], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Split ``[[handle, lo, hi], ...]`` into handles and two int64 arrays, checking types."""
    n = len(standings)
    if n == 0:
        return (), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    if set(map(type, standings)) == {list}:
        try:
            handles, los, his = zip(*standings, strict=True)
        except ValueError:
            handles = los = his = ()  # some row is not a triple: found below
    else:
        handles = los = his = ()
    if len(handles) != n:
        for pos, row in enumerate(standings):
            if not isinstance(row, list) or len(row) != 3:
                raise DataFormatError(
                    f"{where}: standings[{pos}] must be a [handle, lo, hi] array, got "
                    f"{short(row)}"
                )
    if set(map(type, handles)) != {str}:
        pos = next(i for i, h in enumerate(handles) if not isinstance(h, str))
        raise DataFormatError(
            f"{where}: standings[{pos}]: handle must be a string, got {_json_type(handles[pos])} "
            f"{short(handles[pos])}"
        )
    arrays = []
    for what, values in (("lo", los), ("hi", his)):
        try:
            arr = np.array(values)
        except OverflowError:
            arr = np.array(values, dtype=object)
        if arr.dtype.kind != "i" or arr.dtype.itemsize != 8:
            # slow path: name the first offending entry (bool, float, string, huge int, ...)
            for pos, v in enumerate(values):
                if type(v) is not int:
                    raise DataFormatError(
                        f"{where}: standings[{pos}] (player {handles[pos]!r}): {what} must be "
                        f"an integer, got {_json_type(v)} {short(v)}"
                    )
                if abs(v) >= 2**63:
                    raise DataFormatError(
                        f"{where}: standings[{pos}] (player {handles[pos]!r}): {what} = "
                        f"{short_int(v)} is out of range"
                    )
            arr = arr.astype(np.int64)
        arrays.append(arr)
    return handles, arrays[0], arrays[1]


def _team_rows(
    standings: list[Any], where: str, intern: HandleTable, source: str, label: str
) -> list[tuple[str, int, int, list[Any]]]:
    """The rows of a team contest (``[team, lo, hi, members]`` or ``[handle, lo, hi]``),
    with every JSON type checked and every name through ``intern``; the message names
    the row, team and member."""
    out: list[tuple[str, int, int, list[Any]]] = []
    for pos, row in enumerate(standings):
        if type(row) is not list or len(row) not in (3, 4):
            raise DataFormatError(
                f"{where}: standings[{pos}] must be a [team, lo, hi, [member, ...]] array "
                f"(or [handle, lo, hi]), got {short(row)}")
        name = row[0]
        if not isinstance(name, str):
            raise DataFormatError(
                f"{where}: standings[{pos}]: the team name must be a string, got "
                f"{_json_type(name)} {short(name)}")
        for what, v in (("lo", row[1]), ("hi", row[2])):
            if type(v) is not int or abs(v) >= 2**63:
                shown = short_int(v) if type(v) is int else short(v)
                raise DataFormatError(
                    f"{where}: standings[{pos}] (team {name!r}): {what} must be an "
                    f"integer, got {_json_type(v)} {shown}")
        try:
            name = intern(name)
        except HandleError as exc:
            raise handle_error(exc, source, label, team=len(row) == 4) from None
        if len(row) == 3:
            out.append((name, row[1], row[2], [name]))
            continue
        members_in = row[3]
        if type(members_in) is not list:
            raise DataFormatError(
                f"{where}: standings[{pos}] (team {name!r}): members must be an array of "
                f"handles or [handle, weight] pairs, got {_json_type(members_in)} "
                f"{short(members_in)}")
        members: list[Any] = []
        for k, m in enumerate(members_in):
            try:
                if isinstance(m, str):
                    members.append(intern(m))
                elif (type(m) is list and len(m) == 2 and isinstance(m[0], str)
                      and isinstance(m[1], int | float) and not isinstance(m[1], bool)):
                    members.append((intern(m[0]), m[1]))
                else:
                    raise DataFormatError(
                        f"{where}: standings[{pos}] (team {name!r}): member #{k} must be a "
                        f"handle or a [handle, weight] pair, got {short(m)}")
            except HandleError as exc:
                raise handle_error(exc, source, label) from None
        out.append((name, row[1], row[2], members))
    return out


def contest_from_json_dict(
    d: Any, *, source: str, interner: dict[str, str] | None = None, raw_handles: bool = False
) -> Contest:
    """Build a :class:`Contest` from a parsed Elo-MMR JSON object.

    Parameters
    ----------
    d : Any
        The parsed JSON value; must be an object with ``name``, ``time_seconds``
        and ``standings`` and optionally ``url``, ``weight`` and ``perf_ceiling``.
        Other keys are ignored.
    source : str
        Where ``d`` came from (file name, archive member); starts every message.
    interner : dict of str to str, optional
        Shared by a loader across contests so that each distinct handle is stored
        as one string object (and checked once): it maps each handle as given to
        the handle used.  Do not share one table between calls with different
        ``raw_handles``.
    raw_handles : bool, default False
        Keep handles and team names as given instead of normalising them (see the
        module notes); only text that is not Unicode is refused.

    Returns
    -------
    Contest

    Raises
    ------
    DataFormatError
        When a key is missing or has the wrong JSON type, or the name or url is
        not Unicode text.
    ContestError
        When a handle breaks the handle rules, or the contest model rejects the
        contest (duplicate handle, also after normalisation; bad tie range,
        non-positive weight...); the message starts with ``source`` and names the
        contest and the player.

    Notes
    -----
    The contest time is not checked here (the file loaders do, see
    :func:`read_contest_json`).
    """
    return _contest_of_doc(d, source, handle_table(interner, raw_handles))


def _contest_of_doc(d: Any, source: str, intern: HandleTable) -> Contest:
    """:func:`contest_from_json_dict` with the handle table as a function."""
    if not isinstance(d, dict):
        raise DataFormatError(
            f"{source}: expected a JSON object with 'name', 'time_seconds' and 'standings', "
            f"got {_json_type(d)}"
        )
    for key in ("name", "time_seconds", "standings"):
        if key not in d:
            raise DataFormatError(f"{source}: missing required key {key!r}")
    name = d["name"]
    if not isinstance(name, str):
        raise DataFormatError(f"{source}: 'name' must be a string, got {_json_type(name)}")
    where = f"{source}: contest {name!r}" if name else source

    def number(key: str, value: Any, nullable: bool) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataFormatError(
                f"{where}: {key!r} must be a number{' or null' if nullable else ''}, "
                f"got {_json_type(value)} {short(value)}"
            )
        if type(value) is int and not -(2**63) <= value < 2**63:
            raise DataFormatError(
                f"{where}: {key!r} = {short_int(value)} is out of range (beyond 64 bits)")
        return value

    time_seconds = number("time_seconds", d["time_seconds"], nullable=False)
    weight = number("weight", d.get("weight", 1.0), nullable=False)
    perf_ceiling = number("perf_ceiling", d.get("perf_ceiling"), nullable=True)
    url = d.get("url")
    if url is not None and not isinstance(url, str):
        raise DataFormatError(f"{where}: 'url' must be a string or null, got {_json_type(url)}")
    _check_texts(name, url, source)
    label = name or "<unnamed>"
    standings = d["standings"]
    if not isinstance(standings, list):
        raise DataFormatError(
            f"{where}: 'standings' must be an array of [handle, lo, hi], "
            f"got {_json_type(standings)}"
        )
    if any(type(row) is list and len(row) == 4 for row in standings):
        teams = _team_rows(standings, where, intern, source, label)
        try:
            return Contest.from_teams(
                teams, name=name, time_seconds=time_seconds, weight=weight,
                perf_ceiling=perf_ceiling, url=url,
            )
        except ContestError as exc:
            raise contest_error_at(exc, source) from exc
    raw, lo, hi = _split_standings(standings, where)
    try:
        handles = intern.all(raw)
    except HandleError as exc:
        raise handle_error(exc, source, label) from None
    try:
        return Contest.from_arrays(
            handles, lo, hi, name=name, time_seconds=time_seconds, weight=weight,
            perf_ceiling=perf_ceiling, url=url,
        )
    except ContestError as exc:
        raise contest_error_at(duplicate_note(exc, raw, intern), source) from exc


def read_contest_json(
    path: PathArg, *, interner: dict[str, str] | None = None, raw_handles: bool = False,
    allow_future: bool = False, any_weight: bool = False,
) -> Contest:
    """Read one Elo-MMR contest JSON file.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.json`` file.
    interner : dict of str to str, optional
        Handle interning table shared across contests (see
        :func:`contest_from_json_dict`).
    raw_handles : bool, default False
        Keep handles as given instead of normalising them (see the module notes).
    allow_future : bool, default False
        Accept a contest dated more than a day after this machine's clock (simulated
        or scheduled contests); times outside 1800..2200 are refused either way.
    any_weight : bool, default False
        Accept any positive weight (else outside [0.001, 100] is refused).

    Returns
    -------
    Contest

    Raises
    ------
    DataFormatError
        When the file is missing, unreadable, not valid JSON (the message gives
        line and column) or not a contest object.
    ContestError
        When a handle breaks the handle rules, the contest time is out of range
        (:func:`podium.core.guards.check_contest_time`) or the contest model rejects
        the contest; the message names the file, the contest and the player.
    """
    p = Path(path)
    found = decode_contest(read_bytes(p), str(p), handle_table(interner, raw_handles),
                           allow_empty=False,
                           times=TimeCheck(allow_future, any_weight=any_weight))
    if not isinstance(found, Contest):  # pragma: no cover - allow_empty=False never skips
        raise DataFormatError(f"{p}: standings are empty")
    return found


@dataclass(frozen=True)
class EmptyContest:
    """A contest file of a history with no standings (Reddit's dataset has one):
    skipped and reported by :func:`load_contests`, like the reference skips it."""

    name: str
    source: str


def _history_member(
    d: Any, source: str, intern: HandleTable
) -> Contest | EmptyContest:
    if isinstance(d, dict) and d.get("standings") == [] and isinstance(d.get("name"), str):
        return EmptyContest(d["name"], source)
    return _contest_of_doc(d, source, intern)
