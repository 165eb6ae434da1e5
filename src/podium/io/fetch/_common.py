"""What the fetchers share: the output directory, the response cache, the report.

Layout of an output directory ``OUT``::

    OUT/0.json, 1.json, ...      contests in the Elo-MMR format, chronological
    OUT/all_contests.csv         name,url,weight,time_seconds,num_contestants
    OUT/.cache/podium-fetch.json which fetcher owns the directory
    OUT/.cache/...               raw API responses, one file per request

Every file is written atomically (temporary file + ``os.replace``), so an
interruption leaves whole files only; the contest files are written after every
contest has been fetched, so an interrupted fetch leaves the previous contest
files untouched and the cache ready for the next run.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, Any

from podium._files import atomic_write
from podium.core.contest import Contest
from podium.io.fetch._http import FetchError
from podium.io.writers import write_contest_json

__all__ = ["FetchReport", "SkippedContest"]

_MARKER = "podium-fetch.json"
_INDEX_JSON = re.compile(r"([0-9]+)\.json", re.IGNORECASE)

#: Called with one line of progress text.
Progress = Callable[[str], None]


@dataclass(frozen=True)
class SkippedContest:
    """A contest the fetcher left out, and why.

    Attributes
    ----------
    id : str
        The source's id of the contest (Codeforces contest id, CTFtime event id).
    name : str
        Its name, when known (else empty).
    reason : str
        Why it was left out ("unrated: no rating changes", "team contest", ...).
    """

    id: str
    name: str
    reason: str


@dataclass(frozen=True)
class FetchReport:
    """What a fetch did.

    Attributes
    ----------
    out_dir : Path
        The output directory.
    source : str
        ``"codeforces"``, ``"codeforces-gym"`` or ``"ctftime"``.
    contests : int
        Contest files written (``0.json`` .. ``contests - 1``.json).
    rows : int
        Player-rounds in them.
    requests : int
        HTTP requests sent (retries included).
    cached : int
        Responses taken from the cache instead of the network.
    skipped : tuple of SkippedContest
        Contests left out, in the order they were considered.
    warnings : tuple of str
        Data oddities that were repaired (duplicate handles, inconsistent times, ...).
    """

    out_dir: Path
    source: str
    contests: int
    rows: int
    requests: int
    cached: int
    skipped: tuple[SkippedContest, ...] = ()
    warnings: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for humans."""
        text = (
            f"{self.source}: wrote {self.contests} contests ({self.rows:,} player-rounds) to "
            f"{self.out_dir}; {self.requests} requests, {self.cached} cached responses, "
            f"{len(self.skipped)} skipped"
        )
        if self.warnings:
            text += f", {len(self.warnings)} warning(s)"
        return text


def say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


def to_unix(value: date | datetime | int | float | str | None, what: str) -> int | None:
    """Unix seconds of a bound: a date (midnight UTC), datetime (naive = UTC),
    ``YYYY-MM-DD`` string or number; ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a date, a datetime or Unix seconds, got {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"{what} must be a date YYYY-MM-DD, got {value!r}") from None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp())
    if isinstance(value, date):
        return int(datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp())
    raise ValueError(f"{what} must be a date, a datetime or Unix seconds, got {value!r}")


# ====================================================================== directory and cache
def _numbered_files(out: Path) -> dict[int, Path]:
    found: dict[int, Path] = {}
    try:
        entries = list(os.scandir(out))
    except FileNotFoundError:
        return found
    for entry in entries:
        m = _INDEX_JSON.fullmatch(entry.name)
        if m and entry.is_file():
            found[int(m.group(1))] = Path(out, entry.name)
    return found


def prepare_out_dir(out_dir: str | os.PathLike[str], source: str) -> tuple[Path, Path]:
    """Create ``out_dir`` and its cache; refuse a directory another source owns.

    Returns
    -------
    tuple of Path
        ``(out, cache)``.

    Raises
    ------
    FetchError
        When the directory holds contest files that no ``podium fetch`` wrote,
        or that a fetch from another source wrote.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FetchError(f"{out}: exists and is not a directory")
    cache = out / ".cache"
    marker = cache / _MARKER
    if marker.is_file():
        try:
            owner = json.loads(marker.read_text(encoding="utf-8")).get("source")
        except (OSError, ValueError, AttributeError):
            owner = None
        if owner != source:
            raise FetchError(
                f"{out}: this directory holds a {owner or 'unknown'} fetch ({marker}); "
                f"fetch {source} data into another directory"
            )
        return out, cache
    if _numbered_files(out):
        raise FetchError(
            f"{out}: already holds contest files (0.json, ...) that podium fetch did not "
            "write; fetch into an empty or new directory"
        )
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"{cache}: cannot create directory: {exc.strerror or exc}") from exc
    write_text(marker, json.dumps({"source": source, "format": 1}))
    return out, cache


def read_cache(path: Path) -> bytes | None:
    """The cached response at ``path``, or ``None`` if it is missing or not JSON."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FetchError(f"{path}: cannot read cached response: {exc.strerror or exc}") from exc
    try:
        json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None  # damaged by hand: fetch again
    return data


def write_text(path: Path, text: str) -> None:
    """Write a UTF-8 text file atomically."""

    def write(fh: IO[Any]) -> None:
        fh.write(text)

    atomic_write(path, write)


def write_cache(path: Path, data: bytes) -> None:
    """Store a raw response atomically."""

    def write(fh: IO[Any]) -> None:
        fh.write(data)

    atomic_write(path, write, binary=True)


# ====================================================================== output
def _summary_csv(contests: Sequence[Contest]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["name", "url", "weight", "time_seconds", "num_contestants"])
    for c in contests:
        w.writerow([c.name, c.url or "", repr(float(c.weight)), c.time_seconds, len(c)])
    return buf.getvalue()


def write_history(
    out: Path, contests: Sequence[Contest], progress: Progress | None = None
) -> None:
    """Write ``0.json .. (n-1).json`` and ``all_contests.csv``; remove older extra files.

    Each file is replaced atomically.  Numbered files beyond the new history (left
    by an earlier, longer fetch into the same directory) are removed so that they
    cannot join the history; :func:`prepare_out_dir` has already checked that the
    directory belongs to this fetcher.
    """
    out.mkdir(parents=True, exist_ok=True)
    n = len(contests)
    for k, contest in enumerate(contests):
        write_contest_json(contest, out / f"{k}.json")
        if progress is not None and (k + 1) % 200 == 0 and k + 1 < n:
            progress(f"written {k + 1}/{n} contest files")
    for idx, path in sorted(_numbered_files(out).items()):
        if idx >= n:
            path.unlink()
    write_text(out / "all_contests.csv", _summary_csv(contests))


def dedupe_handles(handles: list[str]) -> tuple[list[str], list[str]]:
    """Make handles unique the way the Elo-MMR datasets do.

    Scanning from the last place upwards, a handle already seen (lower in the
    standings) gets ``_clone`` appended (repeatedly, until unique): the worst
    entry keeps the plain handle.

    Returns
    -------
    tuple
        ``(unique_handles, renamed)`` where ``renamed`` lists the changed handles.
    """
    seen: set[str] = set()
    result = list(handles)
    renamed: list[str] = []
    for i in range(len(result) - 1, -1, -1):
        h = result[i]
        if h in seen:
            while h in seen:
                h += "_clone"
            renamed.append(result[i])
            result[i] = h
        seen.add(h)
    return result, renamed


def tie_ranges(keys: Sequence[Any]) -> tuple[list[int], list[int]]:
    """0-based inclusive tie ranges of rows in standings order: equal consecutive keys tie."""
    n = len(keys)
    lo = [0] * n
    hi = [0] * n
    start = 0
    for i in range(1, n + 1):
        if i == n or keys[i] != keys[start]:
            for j in range(start, i):
                lo[j] = start
                hi[j] = i - 1
            start = i
    return lo, hi
