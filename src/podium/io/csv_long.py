"""The CSV "long" contest table: one row per player and contest.

See :func:`read_contests_csv` for the columns.  Every problem raises
:class:`~podium.errors.DataFormatError` (or :class:`~podium.errors.ContestError`
when the contest model rejects a contest) whose message names the file, the
1-based line, the contest and the player.
"""

from __future__ import annotations

import csv
import math
import re
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from podium.core.contest import Contest
from podium.core.guards import HandleError
from podium.errors import ContestError, DataFormatError
from podium.io._handles import HandleTable, handle_table
from podium.io._messages import contest_error_at, duplicate_note, handle_error, short
from podium.io._paths import PathArg, check_limit
from podium.io._times import TimeCheck

__all__ = ["COLUMNAR_FROM_BYTES", "csv_contests", "read_contests_csv"]

#: A CSV file of at least this many bytes is read by the columnar reader first
#: (:mod:`podium.io._csv_fast`); a smaller one by the row reader alone, which costs less
#: there and loads no Arrow (a small ``podium rate`` imports no pyarrow).
COLUMNAR_FROM_BYTES = 1 << 16


_CSV_COLUMNS: dict[str, tuple[str, ...]] = {
    "contest": ("contest", "contest_id"),
    "time": ("time", "time_seconds"),
    "player": ("player", "handle"),
    "place": ("place",),
    "score": ("score",),
    "name": ("name",),
    "weight": ("weight",),
    "contest_weight": ("contest_weight",),
    "url": ("url",),
    "perf_ceiling": ("perf_ceiling",),
    "team": ("team", "team_name"),
    "member_weight": ("member_weight",),
}
_CSV_ALIAS = {alias: role for role, aliases in _CSV_COLUMNS.items() for alias in aliases}


class _CsvContest:
    """Rows of one contest while a CSV file is read."""

    __slots__ = ("key", "first_line", "handles", "values", "lines", "meta", "meta_lines",
                 "teams", "member_weights", "raw")

    def __init__(self, key: str, line: int) -> None:
        self.key = key
        self.first_line = line
        self.handles: list[str] = []
        self.values = array("d")
        self.lines = array("q")
        self.teams: list[str] = []
        self.member_weights = array("d")
        self.meta: dict[str, Any] = {}
        self.meta_lines: dict[str, int] = {}
        self.raw: dict[int, str] = {}  # row -> the handle as given, where normalised


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
    # In a file with a team column, ``weight`` is the member weight (partial play) and
    # the contest weight is ``contest_weight``; elsewhere ``weight`` is the contest's.
    if "team" in cols and "weight" in cols and "member_weight" not in cols:
        cols["member_weight"] = cols.pop("weight")
    if "contest_weight" in cols:
        if "weight" in cols:
            raise DataFormatError(
                f"{where}: columns {header[cols['weight']].strip()!r} and "
                f"{header[cols['contest_weight']].strip()!r} both give the contest weight")
        cols["weight"] = cols.pop("contest_weight")
    if "member_weight" in cols and "team" not in cols:
        raise DataFormatError(
            f"{where}: a 'member_weight' column needs a 'team' column (header is {shown})")
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
        raise DataFormatError(f"{where}: non-numeric {what} {short(cell)}") from None
    if not math.isfinite(value):
        raise DataFormatError(f"{where}: {what} must be finite, got {short(cell)}")
    if whole and value != int(value):
        raise DataFormatError(f"{where}: {what} must be a whole number, got {short(cell)}")
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


def _read_csv_groups(
    path: Path, intern: HandleTable
) -> tuple[list[_CsvContest], str, int | None]:
    """The contests' rows by contest (ordered by time, then first appearance), the
    value column (``place`` or ``score``) and the header line when there is no time
    column (else ``None``)."""
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
        c_team = cols.get("team")
        c_mweight = cols.get("member_weight")
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
            raw = row[c_player].strip()
            if not raw:
                raise DataFormatError(f"{where}: contest {key!r}: empty player")
            try:
                handle = intern(raw)
            except HandleError as exc:
                raise handle_error(exc, where, key) from None
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
                if role == "weight":
                    mval: Any = _csv_number(mcell, role, f"{where}: contest {key!r}",
                                            whole=False)
                elif role == "perf_ceiling":
                    try:
                        mval = float(mcell)
                    except ValueError:
                        raise DataFormatError(
                            f"{where}: contest {key!r}: non-numeric {role} {short(mcell)}"
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
                        f"{where}: inconsistent {what} within contest {key!r}: {short(val)} "
                        f"here but {short(old)} on line {group.meta_lines[what]}"
                    )
            if c_team is not None:
                team = row[c_team].strip()
                if not team:
                    raise DataFormatError(
                        f"{pw}: empty team (a file with a team column needs the team on every "
                        "row; name a one-player team after its player)")
                try:
                    team = intern(team)
                except HandleError as exc:
                    raise handle_error(exc, where, key, team=True) from None
                group.teams.append(team)
                mw = 1.0
                if c_mweight is not None:
                    wcell = row[c_mweight].strip()
                    if wcell:
                        mw = _csv_number(wcell, "member weight", pw, whole=False)
                        if not 0.0 < mw <= 1.0:
                            raise DataFormatError(
                                f"{pw}, team {team!r}: member weight must be in (0, 1], "
                                f"got {wcell!r}")
                group.member_weights.append(mw)
            if handle is not raw:
                group.raw[len(group.handles)] = raw
            group.handles.append(handle)
            group.values.append(value)
            group.lines.append(line)
    if not groups:
        raise DataFormatError(f"{path}: no data rows after the header")
    ordered = sorted(groups.values(), key=lambda g: g.meta.get("time", 0))  # stable
    return ordered, kind, None if c_time is not None else header_line


def _csv_group_contest(
    group: _CsvContest, kind: str, path: Path, intern: HandleTable
) -> Contest:
    meta: dict[str, Any] = {
        "name": group.meta.get("name", group.key),
        "time_seconds": group.meta.get("time", 0),
        "weight": group.meta.get("weight", 1.0),
        "perf_ceiling": group.meta.get("perf_ceiling"),
        "url": group.meta.get("url"),
    }
    values = np.frombuffer(group.values, dtype=np.float64)
    try:
        if group.teams:
            weights = np.frombuffer(group.member_weights, dtype=np.float64)
            if kind == "place":
                return Contest.from_team_places(group.handles, group.teams, values, weights,
                                                **meta)
            return Contest.from_team_scores(group.handles, group.teams, values, weights, **meta)
        if kind == "place":
            return Contest.from_places(group.handles, values, **meta)
        return Contest.from_scores(group.handles, values, **meta)
    except ContestError as exc:
        if group.raw:
            exc = duplicate_note(exc, [group.raw.get(i, h) for i, h in enumerate(group.handles)],
                                 intern)
        lines = [group.lines[i] for i, h in enumerate(group.handles) if h == exc.player]
        if not lines and exc.team is not None and group.teams:
            lines = [group.lines[i] for i, t in enumerate(group.teams) if t == exc.team]
        if not lines:
            lines = [group.first_line]
        label = "line" if len(lines) == 1 else "lines"
        numbers = ", ".join(map(str, lines[:-1])) + (" and " if len(lines) > 1 else "")
        raise contest_error_at(exc, f"{path}, {label} {numbers}{lines[-1]}") from exc


def read_contests_csv(
    path: PathArg,
    *,
    limit: int | None = None,
    interner: dict[str, str] | None = None,
    raw_handles: bool = False,
    allow_future: bool = False,
    require_times: bool = True,
    any_weight: bool = False,
) -> list[Contest]:
    """Read a CSV long table (one row per player and contest).

    The first non-blank row is a header; column names are case-insensitive:

    ==========================  ==================================================
    ``contest`` / ``contest_id``  contest identifier (required)
    ``player`` / ``handle``       player handle (required)
    ``place``                     1-based place; equal places tie
    ``score``                     score, higher is better; equal scores tie
    ``time`` / ``time_seconds``   Unix time in seconds (required unless
                                  ``require_times=False``); must be the same on
                                  every row of a contest
    ``name``, ``weight``, ``url``, contest metadata (optional; empty cells mean
    ``perf_ceiling``              "not given", given values must agree)
    ``team`` / ``team_name``      the player's team (optional; makes the file a team
                                  file: the rows of a team in a contest share its
                                  place or score, see docs/teams.md)
    ``member_weight``             the member's weight in (0, 1] (partial play;
                                  default 1); in a team file ``weight`` means this
    ``contest_weight``            the contest weight (the name to use in a team file)
    ==========================  ==================================================

    Exactly one of ``place`` and ``score`` must be present.  Other columns are
    ignored, cells are stripped of surrounding blanks and blank lines are skipped.
    The rows of a contest need not be adjacent or sorted.  Contests are ordered by
    (time, first appearance in the file); a contest without a ``name`` is named by
    its id.  Handles and team names are normalised (:mod:`podium.io.json_contests`
    gives the rules) unless ``raw_handles``.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (UTF-8, optionally with a byte-order mark).
    limit : int, optional
        Keep only the first ``limit`` contests (after ordering).
    interner : dict of str to str, optional
        Handle interning table shared across contests.
    raw_handles : bool, default False
        Keep handles and team names as given (after the cell is stripped).
    allow_future : bool, default False
        Accept contests dated more than a day after this machine's clock.
    require_times : bool, default True
        Refuse a file without a time column.  With ``False`` such a file is read
        with every contest at time 0, in the order of first appearance.
    any_weight : bool, default False
        Accept any positive contest weight (else outside [0.001, 100] is refused).

    Returns
    -------
    list of Contest

    Raises
    ------
    DataFormatError
        On a missing column (the time column too, unless ``require_times=False``), a
        non-numeric place, score or time, a time or other metadata that differs
        between rows of one contest, an empty cell, a row of the wrong length...;
        the message names the file and the 1-based line.
    ContestError
        When a handle breaks the handle rules, a contest time is outside 1970..2200
        or in the future, or the contest model rejects a contest (a player listed
        twice, a non-positive weight); the message names the file and line(s).
    """
    return csv_contests(Path(path), limit, handle_table(interner, raw_handles),
                        TimeCheck(allow_future, any_weight=any_weight), require_times)


def csv_contests(path: Path, limit: int | None, intern: HandleTable, times: TimeCheck | None,
                 require_times: bool, note: Callable[[str], None] | None = None
                 ) -> list[Contest]:
    """The contests of the CSV file ``path``, as :func:`read_contests_csv` reads them,
    with a load's handle table and time check.

    Parameters
    ----------
    path : Path
        The CSV file.
    limit : int, optional
        Keep only the first ``limit`` contests (after ordering).
    intern : HandleTable
        The load's handle table (:mod:`podium.io._handles`).
    times : TimeCheck, optional
        The load's time check (:mod:`podium.io._times`); ``None``: times unchecked.
    require_times : bool
        Refuse a file without a time column.
    note : callable, optional
        Told once (one line) when a file without a time column is read.

    Returns
    -------
    list of Contest

    Raises
    ------
    DataFormatError, ContestError
        As :func:`read_contests_csv`.
    """
    check_limit(limit)
    fast = _columnar(path, limit, intern, times)
    if fast is not None:
        return fast
    groups, kind, no_times_line = _read_csv_groups(path, intern)
    if limit is not None:
        groups = groups[:limit]
    contests = [_csv_group_contest(g, kind, path, intern) for g in groups]
    if no_times_line is not None:
        if require_times:
            raise DataFormatError(
                f"{path}, line {no_times_line}: no 'time_seconds' (or 'time') column, so the "
                "contests cannot be put in time order; add one (seconds since 1970-01-01 "
                "UTC), or pass --no-times (require_times=False) to rate them in file order, "
                "all at time 0")
        if note is not None:
            note(f"{path} has no time column: its {len(contests)} contest(s) are rated in "
                 "file order, all at time 0 (--no-times)")
    elif times is not None:
        for g, c in zip(groups, contests, strict=True):
            times.check(c, f"{path}, line {g.meta_lines.get('time', g.first_line)}")
    return contests


def _columnar(path: Path, limit: int | None, intern: HandleTable, times: TimeCheck | None
              ) -> list[Contest] | None:
    """The contests of a file of at least :data:`COLUMNAR_FROM_BYTES` bytes, read by the
    columnar reader (:mod:`podium.io._csv_fast`), or ``None`` when the row reader must
    read it (it alone raises, with its messages)."""
    try:
        if path.stat().st_size < COLUMNAR_FROM_BYTES:
            return None
    except OSError:
        return None
    from podium.io import _csv_fast  # Arrow's CSV reader, loaded by a large CSV only

    try:
        data = path.read_bytes()
        end = data.find(b"\n")
        line = data[:end if end >= 0 else len(data)].decode("utf-8-sig").rstrip("\r")
        header = next(csv.reader([line], strict=True), [])
        cols = _csv_columns(header, str(path))
    except (OSError, UnicodeDecodeError, csv.Error, DataFormatError):
        return None
    kind = "place" if "place" in cols else "score"
    return _csv_fast.fast_contests(data, cols, len(header), 1 if any(h.strip() for h in header)
                                   else 0, kind, intern, times, limit)
