"""Reading and writing contest histories.

Supported inputs
----------------
* one Elo-MMR contest JSON file (``*.json``);
* a directory of ``0.json, 1.json, ...`` (the file number is the contest's
  chronological index; gaps in the numbering are allowed and reported);
* a tar archive (``.tar.gz``, ``.tgz``, ``.tar``, ``.tar.bz2``, ``.tar.xz``) that
  holds such a directory under any prefix (``cache/codeforces/0.json``).  The
  archive is read as a stream: nothing is extracted to disk and only one member's
  JSON text is in memory at a time;
* a CSV "long" table with one row per player and contest (see
  :func:`read_contests_csv`).

The Elo-MMR JSON format is::

    {"name": str, "url": str, "time_seconds": int, "weight": float,
     "perf_ceiling": float, "standings": [[handle, lo, hi], ...]}

with ``url``, ``weight`` (default 1) and ``perf_ceiling`` optional, standings best
first and ``lo``/``hi`` the 0-based inclusive range of places shared by a tie.

Every problem with the data raises :class:`~podium.errors.DataFormatError` (or
:class:`~podium.errors.ContestError` when the contest model rejects a contest)
whose message names the file, the archive member or CSV line, the contest and
the player.

Handle strings are interned across all contests of one load, so that a history
of millions of player-rounds stores each distinct handle once.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import importlib
import json
import math
import os
import re
import tarfile
import zlib
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from podium._files import atomic_write
from podium.core.contest import Contest
from podium.errors import ContestError, DataFormatError

_orjson: Any
try:  # optional, faster JSON parser
    _orjson = importlib.import_module("orjson")
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

__all__ = [
    "LoadedHistory",
    "check_history",
    "contest_from_json_dict",
    "iter_contests",
    "load_contests",
    "read_contest_json",
    "read_contests_csv",
    "write_contest_dir",
    "write_contest_json",
    "write_contests_csv",
]

PathArg = str | os.PathLike[str]

_TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_TAR_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error)
_INDEX_RE = re.compile(r"[0-9]+")
#: At most this many warnings of one kind are listed by :func:`check_history`.
_MAX_WARNINGS_PER_KIND = 10


# ====================================================================== results
@dataclass
class LoadedHistory:
    """A contest history as loaded by :func:`load_contests`.

    Attributes
    ----------
    contests : list of Contest
        The kept contests, in rating order.
    source : str
        The path they were read from.
    changes : list of str
        Human-readable lines saying what the loader changed or noticed about the
        file numbering (gaps, removed duplicates, reordering).  Empty when the
        history was used as stored.
    indices : list of int
        The original file index of each kept contest (``indices[k]`` is the
        number of the file ``contests[k]`` came from).
    """

    contests: list[Contest]
    source: str
    changes: list[str] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.contests)

    @property
    def num_rows(self) -> int:
        """Total number of player-rounds."""
        return sum(len(c) for c in self.contests)


# ====================================================================== helpers
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


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _contest_error_at(err: ContestError, where: str) -> ContestError:
    """The same :class:`ContestError` (contest, player, reason) with ``where`` in front."""
    new = ContestError(err.reason, contest=err.contest, player=err.player)
    new.args = (f"{where}: {err}",)
    return new


def _format_time(t: int) -> str:
    try:
        stamp = datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return f"t={t}"
    return f"t={t}, {stamp}"


def _check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be None or a non-negative integer, got {limit!r}")


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
    except RecursionError:
        raise DataFormatError(f"{source}: invalid JSON: nested too deeply") from None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read file: {exc.strerror or exc}") from exc


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while loading.

    Parsing allocates millions of short-lived lists while the contests already
    loaded hold millions of references; every full collection would walk them all
    (measured on the Codeforces history: 8.0 s with the collector, 5.0 s without).
    Nothing parsed here forms reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# ====================================================================== JSON contests
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
                    f"{_short(row)}"
                )
    if set(map(type, handles)) != {str}:
        pos = next(i for i, h in enumerate(handles) if not isinstance(h, str))
        raise DataFormatError(
            f"{where}: standings[{pos}]: handle must be a string, got {_json_type(handles[pos])} "
            f"{_short(handles[pos])}"
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
                        f"an integer, got {_json_type(v)} {_short(v)}"
                    )
                if abs(v) >= 2**63:
                    raise DataFormatError(
                        f"{where}: standings[{pos}] (player {handles[pos]!r}): {what} = {v} is "
                        "out of range"
                    )
            arr = arr.astype(np.int64)
        arrays.append(arr)
    return handles, arrays[0], arrays[1]


def contest_from_json_dict(
    d: Any, *, source: str, interner: dict[str, str] | None = None
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
        as one string object.

    Returns
    -------
    Contest

    Raises
    ------
    DataFormatError
        When a key is missing or has the wrong JSON type.
    ContestError
        When the contest model rejects the contest (duplicate handle, bad tie
        range, non-positive weight...); the message starts with ``source``.
    """
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
                f"got {_json_type(value)} {_short(value)}"
            )
        return value

    time_seconds = number("time_seconds", d["time_seconds"], nullable=False)
    weight = number("weight", d.get("weight", 1.0), nullable=False)
    perf_ceiling = number("perf_ceiling", d.get("perf_ceiling"), nullable=True)
    url = d.get("url")
    if url is not None and not isinstance(url, str):
        raise DataFormatError(f"{where}: 'url' must be a string or null, got {_json_type(url)}")
    standings = d["standings"]
    if not isinstance(standings, list):
        raise DataFormatError(
            f"{where}: 'standings' must be an array of [handle, lo, hi], "
            f"got {_json_type(standings)}"
        )
    handles, lo, hi = _split_standings(standings, where)
    if interner is not None:
        handles = list(map(interner.setdefault, handles, handles))
    try:
        return Contest.from_arrays(
            handles, lo, hi, name=name, time_seconds=time_seconds, weight=weight,
            perf_ceiling=perf_ceiling, url=url,
        )
    except ContestError as exc:
        raise _contest_error_at(exc, source) from exc


def read_contest_json(path: PathArg, *, interner: dict[str, str] | None = None) -> Contest:
    """Read one Elo-MMR contest JSON file.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.json`` file.
    interner : dict of str to str, optional
        Handle interning table shared across contests (see
        :func:`contest_from_json_dict`).

    Returns
    -------
    Contest

    Raises
    ------
    DataFormatError
        When the file is missing, unreadable, not valid JSON (the message gives
        line and column) or not a contest object.
    ContestError
        When the contest model rejects the contest; the message names the file.
    """
    p = Path(path)
    return contest_from_json_dict(
        _parse_json_bytes(_read_bytes(p), str(p)), source=str(p), interner=interner
    )


@dataclass(frozen=True)
class _EmptyContest:
    """A contest file of a history with no standings (Reddit's dataset has one):
    skipped and reported by :func:`load_contests`, like the reference skips it."""

    name: str
    source: str


def _history_member(
    d: Any, source: str, interner: dict[str, str]
) -> Contest | _EmptyContest:
    if isinstance(d, dict) and d.get("standings") == [] and isinstance(d.get("name"), str):
        return _EmptyContest(d["name"], source)
    return contest_from_json_dict(d, source=source, interner=interner)


# ====================================================================== directories
def _json_index(name: str, where: str) -> int | None:
    """The index of a ``<n>.json`` name; ``None`` for names to skip; error otherwise."""
    if name.startswith(".") or not name.lower().endswith(".json"):
        return None
    stem = name[: -len(".json")]
    if not _INDEX_RE.fullmatch(stem):
        raise DataFormatError(
            f"{where}: contest files must be named by their index (0.json, 1.json, ...); "
            f"cannot read an index from {name!r}"
        )
    return int(stem)


def _dir_entries(directory: Path) -> list[tuple[int, Path]]:
    """The ``(index, path)`` of every contest file of a directory, by index."""
    found: dict[int, Path] = {}
    try:
        entries = list(os.scandir(directory))
    except OSError as exc:
        raise DataFormatError(f"{directory}: cannot list directory: {exc.strerror or exc}") from exc
    for entry in entries:
        idx = _json_index(entry.name, str(Path(directory, entry.name)))
        if idx is None or not entry.is_file():
            continue
        if idx in found:
            raise DataFormatError(
                f"{directory}: two files have index {idx}: {found[idx].name!r} and {entry.name!r}"
            )
        found[idx] = Path(directory, entry.name)
    if not found:
        raise DataFormatError(f"{directory}: no contest files (0.json, 1.json, ...) in directory")
    return sorted(found.items())


def _iter_dir(
    directory: Path, limit: int | None, interner: dict[str, str]
) -> Iterator[tuple[int, Contest | _EmptyContest]]:
    entries = _dir_entries(directory)
    if limit is not None:
        entries = entries[:limit]
    for idx, p in entries:
        yield idx, _history_member(_parse_json_bytes(_read_bytes(p), str(p)), str(p), interner)


# ====================================================================== tar archives
def _scan_tar(
    path: Path, want: Callable[[int], bool]
) -> Generator[tuple[int, str, bytes], None, None]:
    """Stream a tar archive; yield ``(index, member name, bytes)`` for wanted contest files.

    Also checks that every contest file sits in one directory and that no index
    appears twice.  Members that are not ``.json`` files are skipped.
    """
    try:
        tf = tarfile.open(path, mode="r|*")
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except _TAR_ERRORS as exc:
        raise DataFormatError(f"{path}: not a readable tar archive ({exc})") from exc
    seen: dict[int, str] = {}
    folder: PurePosixPath | None = None
    folder_member = ""
    with tf:
        members = iter(tf)
        while True:
            try:
                member = next(members, None)
            except _TAR_ERRORS as exc:
                raise DataFormatError(f"{path}: corrupt or truncated archive ({exc})") from exc
            if member is None:
                break
            if not member.isfile():
                continue
            mpath = PurePosixPath(member.name)
            where = f"{path}, member {member.name}"
            idx = _json_index(mpath.name, where)
            if idx is None:
                continue
            if folder is None:
                folder, folder_member = mpath.parent, member.name
            elif mpath.parent != folder:
                raise DataFormatError(
                    f"{path}: contest files in more than one directory ({folder_member!r} and "
                    f"{member.name!r}); expected one directory of 0.json, 1.json, ..."
                )
            if idx in seen:
                raise DataFormatError(
                    f"{path}: index {idx} appears twice (members {seen[idx]!r} and "
                    f"{member.name!r})"
                )
            seen[idx] = member.name
            if not want(idx):
                continue
            try:
                fobj = tf.extractfile(member)
                data = fobj.read() if fobj is not None else b""
            except _TAR_ERRORS as exc:
                raise DataFormatError(f"{where}: corrupt or truncated archive ({exc})") from exc
            yield idx, member.name, data
    if not seen:
        raise DataFormatError(f"{path}: no contest files (0.json, 1.json, ...) in archive")


def _iter_tar(
    path: Path, limit: int | None, interner: dict[str, str]
) -> Iterator[tuple[int, Contest | _EmptyContest]]:
    """Contests of an archive in index order, parsing one member at a time.

    With ``limit=N`` only members with index < N are parsed; when the numbering
    has gaps so that fewer than N such members exist, a second streaming pass
    parses the next smallest indices.
    """

    def parse(member: str, data: bytes) -> Contest | _EmptyContest:
        where = f"{path}, member {member}"
        return _history_member(_parse_json_bytes(data, where), where, interner)

    pending: dict[int, Contest | _EmptyContest] = {}
    all_indices: list[int] = []
    next_idx = 0
    emitted = 0

    def want_first(idx: int) -> bool:
        all_indices.append(idx)
        return limit is None or idx < limit

    with contextlib.closing(_scan_tar(path, want_first)) as scan:
        for idx, member, data in scan:
            pending[idx] = parse(member, data)
            del data
            while next_idx in pending:  # yield the contiguous prefix as soon as it is complete
                yield next_idx, pending.pop(next_idx)
                next_idx += 1
                emitted += 1
            if limit is not None and next_idx >= limit:
                return  # indices 0..limit-1 all read: the rest of the archive is not needed
    for idx in sorted(pending):
        yield idx, pending.pop(idx)
        emitted += 1
    if limit is None or emitted >= limit:
        return
    extra = set(sorted(i for i in all_indices if i >= limit)[: limit - emitted])
    if not extra:
        return
    for idx, member, data in _scan_tar(path, extra.__contains__):
        pending[idx] = parse(member, data)
    for idx in sorted(pending):
        yield idx, pending.pop(idx)


# ====================================================================== CSV
_CSV_COLUMNS: dict[str, tuple[str, ...]] = {
    "contest": ("contest", "contest_id"),
    "time": ("time", "time_seconds"),
    "player": ("player", "handle"),
    "place": ("place",),
    "score": ("score",),
    "name": ("name",),
    "weight": ("weight",),
    "url": ("url",),
    "perf_ceiling": ("perf_ceiling",),
}
_CSV_ALIAS = {alias: role for role, aliases in _CSV_COLUMNS.items() for alias in aliases}


class _CsvContest:
    """Rows of one contest while a CSV file is read."""

    __slots__ = ("key", "first_line", "handles", "values", "lines", "meta", "meta_lines")

    def __init__(self, key: str, line: int) -> None:
        self.key = key
        self.first_line = line
        self.handles: list[str] = []
        self.values = array("d")
        self.lines = array("q")
        self.meta: dict[str, Any] = {}
        self.meta_lines: dict[str, int] = {}


def _csv_columns(header: list[str], where: str) -> dict[str, int]:
    cols: dict[str, int] = {}
    for pos, raw in enumerate(header):
        key = re.sub(r"[\s\-]+", "_", raw.strip().lower())
        role = _CSV_ALIAS.get(key)
        if role is None:
            continue  # extra columns are allowed and ignored
        if role in cols:
            raise DataFormatError(
                f"{where}: columns {header[cols[role]].strip()!r} and {raw.strip()!r} both "
                f"give the {role}"
            )
        cols[role] = pos
    shown = ", ".join(repr(h) for h in header)
    for role in ("contest", "player"):
        if role not in cols:
            names = " or ".join(repr(a) for a in _CSV_COLUMNS[role])
            raise DataFormatError(f"{where}: missing column {names} (header is {shown})")
    if ("place" in cols) == ("score" in cols):
        what = "both" if "place" in cols else "neither"
        raise DataFormatError(
            f"{where}: need exactly one of the columns 'place' or 'score', found {what} "
            f"(header is {shown})"
        )
    return cols


def _csv_number(cell: str, what: str, where: str, *, whole: bool) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise DataFormatError(f"{where}: non-numeric {what} {cell!r}") from None
    if not math.isfinite(value):
        raise DataFormatError(f"{where}: {what} must be finite, got {cell!r}")
    if whole and value != int(value):
        raise DataFormatError(f"{where}: {what} must be a whole number, got {cell!r}")
    return value


def _csv_rows(reader: Any, path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of each non-blank row, with parse errors located."""
    while True:
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise DataFormatError(f"{path}, line {reader.line_num}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise DataFormatError(
                f"{path}, line {reader.line_num + 1}: not UTF-8 text ({exc.reason})"
            ) from None
        if row is None:
            return
        if any(cell.strip() for cell in row):
            yield reader.line_num, row


def _read_csv_groups(path: Path, interner: dict[str, str]) -> tuple[list[_CsvContest], str]:
    try:
        fh = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
    with fh:
        rows = _csv_rows(csv.reader(fh, strict=True), path)
        first = next(rows, None)
        if first is None:
            raise DataFormatError(f"{path}: empty file; expected a header row")
        header_line, header = first
        cols = _csv_columns(header, f"{path}, line {header_line}")
        kind = "place" if "place" in cols else "score"
        c_contest, c_player, c_value = cols["contest"], cols["player"], cols[kind]
        c_time = cols.get("time")
        meta_cols = [(role, cols[role]) for role in ("name", "weight", "url", "perf_ceiling")
                     if role in cols]
        ncols = len(header)
        groups: dict[str, _CsvContest] = {}
        for line, row in rows:
            where = f"{path}, line {line}"
            if len(row) != ncols:
                raise DataFormatError(
                    f"{where}: expected {ncols} fields like the header, got {len(row)}"
                )
            key = row[c_contest].strip()
            if not key:
                raise DataFormatError(f"{where}: empty contest id")
            handle = row[c_player].strip()
            if not handle:
                raise DataFormatError(f"{where}: contest {key!r}: empty player")
            cell = row[c_value].strip()
            pw = f"{where}: contest {key!r}, player {handle!r}"
            value = _csv_number(cell, kind, pw, whole=kind == "place")
            if kind == "place" and value < 1:
                raise DataFormatError(f"{pw}: places are 1-based, got {cell!r}")
            group = groups.get(key)
            if group is None:
                group = groups[key] = _CsvContest(key, line)
            given: list[tuple[str, Any]] = []
            if c_time is not None:
                tcell = row[c_time].strip()
                if not tcell:
                    raise DataFormatError(f"{where}: contest {key!r}: empty time")
                given.append(("time", int(_csv_number(tcell, "time", f"{where}: contest {key!r}",
                                                      whole=True))))
            for role, col in meta_cols:
                mcell = row[col].strip()
                if not mcell:
                    continue
                if role in ("weight", "perf_ceiling"):
                    try:
                        mval: Any = float(mcell)
                    except ValueError:
                        raise DataFormatError(
                            f"{where}: contest {key!r}: non-numeric {role} {mcell!r}"
                        ) from None
                else:
                    mval = mcell
                given.append((role, mval))
            for what, val in given:
                old = group.meta.get(what)
                if old is None:
                    group.meta[what] = val
                    group.meta_lines[what] = line
                elif old != val:
                    raise DataFormatError(
                        f"{where}: inconsistent {what} within contest {key!r}: {val!r} here but "
                        f"{old!r} on line {group.meta_lines[what]}"
                    )
            group.handles.append(interner.setdefault(handle, handle))
            group.values.append(value)
            group.lines.append(line)
    if not groups:
        raise DataFormatError(f"{path}: no data rows after the header")
    ordered = sorted(groups.values(), key=lambda g: g.meta.get("time", 0))  # stable
    return ordered, kind


def _csv_group_contest(group: _CsvContest, kind: str, path: Path) -> Contest:
    meta: dict[str, Any] = {
        "name": group.meta.get("name", group.key),
        "time_seconds": group.meta.get("time", 0),
        "weight": group.meta.get("weight", 1.0),
        "perf_ceiling": group.meta.get("perf_ceiling"),
        "url": group.meta.get("url"),
    }
    values = np.frombuffer(group.values, dtype=np.float64)
    try:
        if kind == "place":
            return Contest.from_places(group.handles, values, **meta)
        return Contest.from_scores(group.handles, values, **meta)
    except ContestError as exc:
        lines = [group.lines[i] for i, h in enumerate(group.handles) if h == exc.player]
        if not lines:
            lines = [group.first_line]
        label = "line" if len(lines) == 1 else "lines"
        numbers = ", ".join(map(str, lines[:-1])) + (" and " if len(lines) > 1 else "")
        raise _contest_error_at(exc, f"{path}, {label} {numbers}{lines[-1]}") from exc


def read_contests_csv(
    path: PathArg,
    *,
    limit: int | None = None,
    interner: dict[str, str] | None = None,
) -> list[Contest]:
    """Read a CSV long table (one row per player and contest).

    The first non-blank row is a header; column names are case-insensitive:

    ==========================  ==================================================
    ``contest`` / ``contest_id``  contest identifier (required)
    ``player`` / ``handle``       player handle (required)
    ``place``                     1-based place; equal places tie
    ``score``                     score, higher is better; equal scores tie
    ``time`` / ``time_seconds``   Unix time (optional, default 0); must be the same
                                  on every row of a contest
    ``name``, ``weight``, ``url``, contest metadata (optional; empty cells mean
    ``perf_ceiling``              "not given", given values must agree)
    ==========================  ==================================================

    Exactly one of ``place`` and ``score`` must be present.  Other columns are
    ignored, cells are stripped of surrounding blanks and blank lines are skipped.
    The rows of a contest need not be adjacent or sorted.  Contests are ordered by
    (time, first appearance in the file); a contest without a ``name`` is named by
    its id.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (UTF-8, optionally with a byte-order mark).
    limit : int, optional
        Keep only the first ``limit`` contests (after ordering).
    interner : dict of str to str, optional
        Handle interning table shared across contests.

    Returns
    -------
    list of Contest

    Raises
    ------
    DataFormatError
        On a missing column, a non-numeric place, score or time, a time or other
        metadata that differs between rows of one contest, an empty cell, a row of
        the wrong length...; the message names the file and the 1-based line.
    ContestError
        When the contest model rejects a contest (a player listed twice, a
        non-positive weight); the message names the file and line(s).
    """
    _check_limit(limit)
    p = Path(path)
    groups, kind = _read_csv_groups(p, {} if interner is None else interner)
    if limit is not None:
        groups = groups[:limit]
    return [_csv_group_contest(g, kind, p) for g in groups]


# ====================================================================== dispatch
def _kind(path: Path) -> str:
    if path.is_dir():
        return "dir"
    lower = path.name.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(_TAR_SUFFIXES):
        return "tar"
    if not path.exists():
        raise DataFormatError(f"{path}: no such file or directory")
    raise DataFormatError(
        f"{path}: unsupported input; expected a .json file, a directory of 0.json, 1.json, ..., "
        f"a .tar.gz/.tgz archive of such a directory or a .csv file"
    )


def _iter_indexed(
    path: PathArg, limit: int | None, interner: dict[str, str]
) -> Iterator[tuple[int, Contest | _EmptyContest]]:
    """``(file index, contest)`` in index order."""
    _check_limit(limit)
    p = Path(path)
    kind = _kind(p)
    if limit == 0:
        return
    if kind == "dir":
        yield from _iter_dir(p, limit, interner)
    elif kind == "tar":
        yield from _iter_tar(p, limit, interner)
    elif kind == "json":
        yield 0, read_contest_json(p, interner=interner)
    else:
        yield from enumerate(read_contests_csv(p, limit=limit, interner=interner))


def iter_contests(path: PathArg, *, limit: int | None = None) -> Iterator[Contest]:
    """Iterate over the contests stored at ``path`` in index order.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.json`` file (one contest), a directory of ``0.json, 1.json, ...``, a
        tar archive (``.tar.gz``, ``.tgz``, ...) of such a directory under any
        prefix, or a ``.csv`` long table (see :func:`read_contests_csv`).
    limit : int, optional
        Yield only the first ``limit`` contests by index.  Directory and archive
        members with an index ``>= limit`` are not parsed (unless gaps in the
        numbering leave fewer than ``limit`` below it).

    Yields
    ------
    Contest
        In file-index order (for CSV: by time, then first appearance).  Archives
        are streamed; contests are yielded as soon as all smaller indices are.

    Raises
    ------
    DataFormatError
        On an unsupported or unreadable path, a ``.json`` name in a contest
        directory that is not a number (the message names the file), a JSON
        syntax error (with line and column) or a malformed contest object.
    ContestError
        When the contest model rejects a contest; the message names the file.
    """
    for _, contest in _iter_indexed(path, limit, {}):
        if isinstance(contest, Contest):
            yield contest


def _ranges(indices: Iterable[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"``."""
    parts: list[str] = []
    start = prev = None
    for i in indices:
        if prev is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def _describe(idx: int, contest: Contest) -> str:
    return f"#{idx} {contest.label!r}"


def load_contests(
    path: PathArg,
    *,
    limit: int | None = None,
    dedupe_urls: bool = False,
    sort_by_time: bool = False,
) -> LoadedHistory:
    """Load a contest history into memory.

    Parameters
    ----------
    path : str or os.PathLike
        Any input accepted by :func:`iter_contests`.
    limit : int, optional
        Keep only the first ``limit`` contests by file index (applied before
        de-duplication and sorting).
    dedupe_urls : bool, default False
        Remove every contest whose ``url`` equals that of an earlier contest
        (the first occurrence is kept; contests without url are never duplicates).
    sort_by_time : bool, default False
        Stable-sort the contests by ``time_seconds``.

    Returns
    -------
    LoadedHistory
        The contests, their original file indices, and in ``changes`` one line per
        removed or moved contest and one line about gaps in the file numbering.
        Without the flags nothing is changed; use :func:`check_history` to find out
        whether they are needed.

    Raises
    ------
    DataFormatError, ContestError
        As :func:`iter_contests`.
    """
    interner: dict[str, str] = {}
    indices: list[int] = []
    contests: list[Contest] = []
    with _gc_paused():
        loaded = list(_iter_indexed(path, limit, interner))
    changes: list[str] = []
    for idx, contest in loaded:
        if isinstance(contest, _EmptyContest):
            changes.append(f"skipped contest #{idx} {contest.name!r} ({contest.source}): "
                           "its standings are empty")
            continue
        indices.append(idx)
        contests.append(contest)
    del interner
    file_indices = [idx for idx, _ in loaded]
    del loaded
    if file_indices and file_indices[-1] + 1 != len(file_indices):
        present = set(file_indices)
        missing = [i for i in range(file_indices[-1]) if i not in present]
        changes.append(
            f"file numbering has gaps: no contest file for index {_ranges(missing)} "
            f"({len(missing)} missing)"
        )
    if dedupe_urls:
        first: dict[str, tuple[int, Contest]] = {}
        keep: list[int] = []
        for k, (idx, contest) in enumerate(zip(indices, contests, strict=True)):
            url = contest.url
            if url is not None and url in first:
                fidx, fcontest = first[url]
                changes.append(
                    f"removed contest {_describe(idx, contest)}: same url as "
                    f"{_describe(fidx, fcontest)} ({url})"
                )
                continue
            if url is not None:
                first[url] = (idx, contest)
            keep.append(k)
        if len(keep) != len(contests):
            indices = [indices[k] for k in keep]
            contests = [contests[k] for k in keep]
    if sort_by_time:
        order = sorted(range(len(contests)), key=lambda k: contests[k].time_seconds)
        if order != list(range(len(contests))):
            latest = -math.inf
            # Report each contest that is earlier than some contest before it: it moves
            # in front of the contest that follows it in the new order.
            new_pos = {k: pos for pos, k in enumerate(order)}
            for k, contest in enumerate(contests):
                if contest.time_seconds < latest:
                    after = order[new_pos[k] + 1]
                    changes.append(
                        f"sorted by time: contest {_describe(indices[k], contest)} "
                        f"({_format_time(contest.time_seconds)}) moved before "
                        f"{_describe(indices[after], contests[after])} "
                        f"({_format_time(contests[after].time_seconds)})"
                    )
                latest = max(latest, contest.time_seconds)
            indices = [indices[k] for k in order]
            contests = [contests[k] for k in order]
    return LoadedHistory(contests=contests, source=str(path), changes=changes, indices=indices)


def check_history(
    contests: Sequence[Contest], indices: Sequence[int] | None = None
) -> list[str]:
    """Warnings about a history that :func:`load_contests` could fix.

    Parameters
    ----------
    contests : sequence of Contest
        The history, in rating order.
    indices : sequence of int, optional
        The file index of each contest, used to number them in the messages
        (default: their position).

    Returns
    -------
    list of str
        One line per contest whose url repeats an earlier contest's url
        (fix: ``dedupe_urls=True``) and per contest that is earlier in time than a
        contest before it (fix: ``sort_by_time=True``); at most
        10 lines of each kind plus a summary line.  Empty when all is well.
    """
    if indices is None:
        indices = range(len(contests))
    if len(indices) != len(contests):
        raise ValueError(f"{len(contests)} contests but {len(indices)} indices")
    dupes: list[str] = []
    order: list[str] = []
    n_dupes = n_order = 0
    first: dict[str, int] = {}
    latest = -1
    for k, contest in enumerate(contests):
        url = contest.url
        if url is not None:
            if url in first:
                n_dupes += 1
                if n_dupes <= _MAX_WARNINGS_PER_KIND:
                    f = first[url]
                    dupes.append(
                        f"contest {_describe(indices[k], contest)} has the same url as contest "
                        f"{_describe(indices[f], contests[f])} ({url}); load with "
                        "dedupe_urls=True to drop repeats"
                    )
            else:
                first[url] = k
        if latest >= 0 and contest.time_seconds < contests[latest].time_seconds:
            n_order += 1
            if n_order <= _MAX_WARNINGS_PER_KIND:
                prev = contests[latest]
                order.append(
                    f"contest {_describe(indices[k], contest)} "
                    f"({_format_time(contest.time_seconds)}) is earlier than contest "
                    f"{_describe(indices[latest], prev)} ({_format_time(prev.time_seconds)}) "
                    "before it; load with sort_by_time=True to reorder"
                )
        if latest < 0 or contest.time_seconds >= contests[latest].time_seconds:
            latest = k
    if n_dupes > _MAX_WARNINGS_PER_KIND:
        dupes.append(f"... {n_dupes} contests in all repeat an earlier url")
    if n_order > _MAX_WARNINGS_PER_KIND:
        order.append(f"... {n_order} contests in all are out of time order")
    return dupes + order


# ====================================================================== writers
def _atomic_write(path: PathArg, write: Callable[[IO[str]], None]) -> None:
    """Write a text file atomically (see :func:`podium._files.atomic_write`)."""
    atomic_write(path, write)


def write_contest_json(contest: Contest, path: PathArg) -> None:
    """Write one contest as an Elo-MMR JSON file (atomically).

    Parameters
    ----------
    contest : Contest
    path : str or os.PathLike
        Destination file; replaced if it exists.  Its directory must exist.

    Notes
    -----
    A ``perf_ceiling`` of ``+inf`` is written as the JavaScript literal
    ``Infinity``, which :func:`read_contest_json` accepts.
    """
    text = json.dumps(contest.to_json_dict(), ensure_ascii=False, separators=(",", ":"))

    def write(fh: IO[str]) -> None:
        fh.write(text)

    _atomic_write(path, write)


def write_contest_dir(contests: Iterable[Contest], directory: PathArg) -> None:
    """Write contests as ``0.json, 1.json, ...`` in a directory (each file atomically).

    Parameters
    ----------
    contests : iterable of Contest
        In rating order; the k-th is written to ``k.json``.
    directory : str or os.PathLike
        Created (with parents) if missing.  Existing ``k.json`` files are replaced.

    Raises
    ------
    FileExistsError
        When the directory already holds numbered contest files beyond the ones
        being written (they would silently join the history); nothing is written.
    """
    items = list(contests)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    stale = []
    for entry in os.scandir(d):
        stem = entry.name[: -len(".json")] if entry.name.lower().endswith(".json") else ""
        if _INDEX_RE.fullmatch(stem) and int(stem) >= len(items):
            stale.append(entry.name)
    if stale:
        raise FileExistsError(
            f"{d}: already holds contest files beyond the {len(items)} being written "
            f"({', '.join(sorted(stale, key=lambda s: int(s[:-5]))[:5])}"
            f"{', ...' if len(stale) > 5 else ''}); remove them or write to an empty directory"
        )
    for k, contest in enumerate(items):
        write_contest_json(contest, d / f"{k}.json")


def write_contests_csv(contests: Iterable[Contest], path: PathArg) -> None:
    """Write contests as a CSV long table (atomically).

    Columns: ``contest`` (0-based position), ``time_seconds``, ``player``,
    ``place`` (``lo + 1``: tied players share a place) and ``name``; plus
    ``weight``, ``url`` and ``perf_ceiling`` when any contest has a non-default
    value.  :func:`read_contests_csv` reads it back (ordering contests by time).

    Parameters
    ----------
    contests : iterable of Contest
    path : str or os.PathLike
        Destination file; replaced if it exists.  Its directory must exist.
    """
    items = list(contests)
    extra: list[tuple[str, Callable[[Contest], str]]] = []
    if any(c.weight != 1.0 for c in items):
        extra.append(("weight", lambda c: repr(c.weight)))
    if any(c.url is not None for c in items):
        extra.append(("url", lambda c: c.url or ""))
    if any(c.perf_ceiling is not None for c in items):
        extra.append(
            ("perf_ceiling", lambda c: "" if c.perf_ceiling is None else repr(c.perf_ceiling))
        )

    def write(fh: IO[str]) -> None:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["contest", "time_seconds", "player", "place", "name"]
                     + [col for col, _ in extra])
        for k, contest in enumerate(items):
            tail = [contest.name] + [get(contest) for _, get in extra]
            key, t = str(k), str(contest.time_seconds)
            places = (contest.lo + 1).tolist()
            out.writerows([key, t, h, p, *tail]
                          for h, p in zip(contest.handles, places, strict=True))

    _atomic_write(path, write)
