"""Replay official Codeforces rating changes with the ``codeforces`` system ([Mirzayanov2015]).

``replay_codeforces(path)`` reads the output of the Codeforces API method
``contest.ratingChanges`` -- the raw envelope ``{"status": "OK", "result": [...]}`` or
the bare list -- whose rows hold ``handle``, ``rank``, ``oldRating`` and ``newRating``,
recomputes every ``newRating`` from the ``(rank, oldRating)`` pairs alone with the very
round function of the ``codeforces`` system
(:func:`podium.systems.codeforces.codeforces_round`), and reports how many agree.

Ranks: participants with equal ``rank`` are tied; the places are renumbered among the
rows (rated participants only, as Codeforces does) and every tied participant takes
the worst place of its tie.  ``oldRating`` is taken as the computing rating, which is
what the API reports for contests rated under the 2015 rules (newcomers 1500); under
the 2020 rules the API reports displayed ratings, which this replay does not convert.

``add_parsers(subparsers)`` registers the ``replay-codeforces FILE [--out CSV]``
sub-command of the ``podium`` command line.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from podium._files import atomic_write
from podium.errors import DataFormatError
from podium.systems.codeforces import codeforces_round

__all__ = ["DiffRow", "ReplayResult", "replay_codeforces", "add_parsers",
           "DIFF_COLUMNS"]

#: Columns of the difference CSV written by ``podium replay-codeforces``.
DIFF_COLUMNS = ("handle", "rank", "oldRating", "newRating", "computedNewRating")


@dataclass(frozen=True)
class DiffRow:
    """One participant whose recomputed new rating differs from the official one."""

    handle: str
    rank: int
    old_rating: int
    official: int
    computed: int


@dataclass(frozen=True)
class ReplayResult:
    """Outcome of :func:`replay_codeforces`."""

    path: str
    contest: str
    """``"<contestId> (<contestName>)"`` when the rows say, else ``""``."""
    total: int
    matched: int
    diffs: list[DiffRow] = field(default_factory=list)
    computed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Recomputed new rating of every row, in file order."""

    @property
    def all_match(self) -> bool:
        return self.matched == self.total


def _int_field(row: dict[str, Any], key: str, path: str, k: int) -> int:
    who = f" (handle {row['handle']!r})" if isinstance(row.get("handle"), str) else ""
    if key not in row:
        raise DataFormatError(f"{path}: row {k}{who}: missing field {key!r}")
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v or (
        isinstance(v, float) and not v.is_integer()
    ):
        raise DataFormatError(f"{path}: row {k}{who}: {key} must be an integer, got {v!r}")
    return int(v)


def _rows(path: str) -> list[dict[str, Any]]:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read file ({exc.strerror or exc})") from None
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataFormatError(f"{path}: not valid JSON ({exc})") from None
    if isinstance(doc, dict):
        if "result" not in doc:
            status = doc.get("status")
            comment = doc.get("comment")
            raise DataFormatError(
                f"{path}: an API envelope without 'result'"
                + (f" (status {status!r}" + (f", comment {comment!r})" if comment else ")")
                   if status is not None else "")
            )
        if doc.get("status", "OK") != "OK":
            raise DataFormatError(f"{path}: API status is {doc.get('status')!r}, not 'OK'")
        doc = doc["result"]
    if not isinstance(doc, list):
        raise DataFormatError(
            f"{path}: expected a list of rating changes or an API envelope "
            f"{{\"status\": \"OK\", \"result\": [...]}}, got {type(doc).__name__}"
        )
    for k, row in enumerate(doc):
        if not isinstance(row, dict):
            raise DataFormatError(f"{path}: row {k}: expected an object, got {row!r:.60}")
    return doc


def replay_codeforces(path: str | Path) -> ReplayResult:
    """Recompute official Codeforces rating changes from ``(rank, oldRating)``.

    Parameters
    ----------
    path:
        A ``contest.ratingChanges`` JSON file (API envelope or bare list).

    Returns
    -------
    ReplayResult
        ``matched`` of ``total`` rows whose ``newRating`` is reproduced exactly, and the
        differing rows (file order).

    Raises
    ------
    DataFormatError
        When the file cannot be read or a row lacks an integer ``rank``, ``oldRating``
        or ``newRating`` or a string ``handle``; the message names the file and row
        (0-based index in the list).
    """
    p = str(path)
    rows = _rows(p)
    n = len(rows)
    handles: list[str] = []
    rank = np.empty(n, dtype=np.int64)
    old = np.empty(n, dtype=np.int64)
    official = np.empty(n, dtype=np.int64)
    for k, row in enumerate(rows):
        h = row.get("handle")
        if not isinstance(h, str):
            raise DataFormatError(f"{p}: row {k}: field 'handle' must be a string, got {h!r}")
        handles.append(h)
        rank[k] = _int_field(row, "rank", p, k)
        old[k] = _int_field(row, "oldRating", p, k)
        official[k] = _int_field(row, "newRating", p, k)
        if rank[k] < 1:
            raise DataFormatError(f"{p}: row {k} (handle {h!r}): rank must be >= 1, "
                                  f"got {rank[k]}")
    contest = ""
    if n:
        cid = rows[0].get("contestId")
        cname = rows[0].get("contestName")
        if cid is not None:
            contest = f"{cid}" + (f" ({cname})" if cname else "")
    computed = np.zeros(n, dtype=np.int64)
    if n:
        order = np.argsort(rank, kind="stable")  # standings order
        rs = rank[order]
        # worst place of each tie: 1 + index of the last row with the same rank
        last = np.searchsorted(rs, rs, side="right")
        res = codeforces_round(old[order], last)
        computed[order] = res.new
    diffs = [
        DiffRow(handles[k], int(rank[k]), int(old[k]), int(official[k]), int(computed[k]))
        for k in np.flatnonzero(computed != official).tolist()
    ]
    return ReplayResult(p, contest, n, n - len(diffs), diffs, computed)


def write_diff_csv(result: ReplayResult, out: str | Path) -> None:
    """Write the differing rows (header only when there are none), atomically."""

    def write(fh: IO[Any]) -> None:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(DIFF_COLUMNS)
        for d in result.diffs:
            w.writerow([d.handle, d.rank, d.old_rating, d.official, d.computed])

    atomic_write(out, write)


def _cmd_replay_codeforces(args: argparse.Namespace) -> int:
    try:
        result = replay_codeforces(args.file)
    except DataFormatError as exc:
        print(f"podium: error: {exc}", file=sys.stderr)
        return 1
    out = Path(args.out)
    try:
        write_diff_csv(result, out)
    except OSError as exc:
        print(f"podium: error: {out}: cannot write the difference CSV "
              f"({exc.strerror or exc})", file=sys.stderr)
        return 1
    what = f"contest {result.contest}" if result.contest else result.path
    print(f"Codeforces replay of {what}: {result.total} rated participant(s), new ratings "
          "recomputed from (rank, oldRating) with the 'codeforces' system ([Mirzayanov2015], "
          "round-327 correction)")
    print(f"{len(result.diffs)} differing row(s) written to {out}")
    print(f"{result.matched} of {result.total} match")
    return 0


def add_parsers(subparsers: Any) -> None:
    """Register ``replay-codeforces FILE [--out DIFF.csv]`` on an argparse subparsers
    object; the parsed namespace's ``func(args)`` runs it and returns the exit status
    (0, or 1 with a message on stderr when the file cannot be read)."""
    p = subparsers.add_parser(
        "replay-codeforces",
        help="recompute official Codeforces rating changes and count the matches",
        description="Read a Codeforces contest.ratingChanges JSON (API envelope or bare "
        "list), recompute every newRating from (rank, oldRating) with the 'codeforces' "
        "system and print, as the last line, 'MATCHED of TOTAL match'.  The rows that "
        "differ are written to a CSV (handle, rank, oldRating, newRating, "
        "computedNewRating).",
    )
    p.add_argument("file", metavar="FILE", help="contest.ratingChanges JSON file")
    p.add_argument("--out", "-o", default="replay-diff.csv", metavar="DIFF.csv",
                   help="CSV of the differing rows (default: replay-diff.csv in the current "
                   "directory; written even when empty)")
    p.set_defaults(func=_cmd_replay_codeforces)
