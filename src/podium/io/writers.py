"""Writing contest histories: Elo-MMR JSON files, directories and the CSV long table.

Every file is written atomically (a temporary file renamed over the target, see
:func:`podium._files.atomic_write`).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from podium._files import atomic_write
from podium.core.contest import Contest
from podium.io._paths import INDEX_RE, PathArg

__all__ = ["write_contest_dir", "write_contest_json", "write_contests_csv"]


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
        if INDEX_RE.fullmatch(stem) and int(stem) >= len(items):
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
    value.  When any contest is a team contest: ``team`` (an individual contest's
    players are one-member teams named after them), ``member_weight`` when some
    weight is not 1, and the contest weight as ``contest_weight``.
    :func:`read_contests_csv` reads it back (ordering contests by time).

    Parameters
    ----------
    contests : iterable of Contest
    path : str or os.PathLike
        Destination file; replaced if it exists.  Its directory must exist.
    """
    items = list(contests)
    team_file = any(c.teams is not None for c in items)
    extra: list[tuple[str, Callable[[Contest], str]]] = []
    if any(c.weight != 1.0 for c in items):
        extra.append(("contest_weight" if team_file else "weight", lambda c: repr(c.weight)))
    if any(c.url is not None for c in items):
        extra.append(("url", lambda c: c.url or ""))
    if any(c.perf_ceiling is not None for c in items):
        extra.append(
            ("perf_ceiling", lambda c: "" if c.perf_ceiling is None else repr(c.perf_ceiling))
        )
    member_weights = team_file and any(
        c.teams is not None and bool((c.teams.weight != 1.0).any()) for c in items)

    def write(fh: IO[str]) -> None:
        out = csv.writer(fh, lineterminator="\n")
        head = ["contest", "time_seconds", "player", "place", "name"] + [col for col, _ in extra]
        if team_file:
            head += ["team", "member_weight"] if member_weights else ["team"]
        out.writerow(head)
        for k, contest in enumerate(items):
            tail = [contest.name] + [get(contest) for _, get in extra]
            key, t = str(k), str(contest.time_seconds)
            places = (contest.lo + 1).tolist()
            if not team_file:
                out.writerows([key, t, h, p, *tail]
                              for h, p in zip(contest.handles, places, strict=True))
                continue
            teams = contest.team_names or contest.handles
            cols: list[list[Any]] = [list(teams)]
            if member_weights:
                w = (contest.teams.weight.tolist() if contest.teams is not None
                     else [1.0] * len(contest))
                cols.append([repr(x) for x in w])
            out.writerows([key, t, h, p, *tail, *more]
                          for h, p, *more in zip(contest.handles, places, *cols, strict=True))

    _atomic_write(path, write)
