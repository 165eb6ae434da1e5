"""Loading a contest history from any supported source, and checking it.

:func:`iter_contests` and :func:`load_contests` dispatch on the path (a ``.json``
file, a directory of them, a tar archive, a ``.csv`` long table); ``load_contests``
also reports gaps in the file numbering and can drop repeated contests
(``dedupe_urls``) and sort by time (``sort_by_time``); :func:`check_history` says
when either is needed.

Handle strings are interned across all contests of one load, so that a history
of millions of player-rounds stores each distinct handle once; each distinct handle
is checked and normalised once (:mod:`podium.core.guards`; ``raw_handles=True``
keeps them as given).  Every contest's time is checked
(:func:`podium.core.guards.check_contest_time`: 1800..2200 and not in the future
unless ``allow_future=True``).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from podium.core.contest import Contest
from podium.errors import DataFormatError
from podium.io._handles import SCAN_AFTER_ROWS, HandleTable
from podium.io._paths import PathArg, check_limit, read_bytes
from podium.io._times import TimeCheck
from podium.io.csv_long import csv_contests
from podium.io.json_contests import EmptyContest, decode_contest
from podium.io.sources import TAR_SUFFIXES, iter_dir, iter_tar

__all__ = ["LoadedHistory", "check_history", "iter_contests", "load_contests",
           "refused_report"]

#: At most this many warnings of one kind are listed by :func:`check_history`.
_MAX_WARNINGS_PER_KIND = 10
#: A lone JSON file of at least this many bytes (rows of at least 16 bytes, as many as
#: :data:`~podium.io._handles.SCAN_AFTER_ROWS`) is read by the compiled standings reader
#: (:mod:`podium.io._scan`) from its first row on; a smaller one never loads it.
SCAN_FILE_BYTES = 16 * SCAN_AFTER_ROWS

log = logging.getLogger("podium.io")


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
    warnings : list of str
        What the loader skipped and the user may not expect: archive members that
        are not regular files (links, devices), ``N.json`` directory entries that are
        not files; at most 10 lines and a count.
    refused_handles : dict of str to str
        With ``keep_refused_handles``: each handle (or team name) the handle rules
        refused and that was kept as written, with the reason.
    """

    contests: list[Contest]
    source: str
    changes: list[str] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)
    refused_handles: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.contests)

    @property
    def num_rows(self) -> int:
        """Total number of player-rounds."""
        return sum(len(c) for c in self.contests)


def _format_time(t: int) -> str:
    try:
        stamp = datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return f"t={t}"
    return f"t={t}, {stamp}"


#: Young objects (the collector's count) from which a load moves what it made into the
#: oldest generation (:func:`_gc_paused`).
_PROMOTE_FROM = 20_000


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
            if gc.get_count()[0] >= _PROMOTE_FROM and gc.get_freeze_count() == 0:
                # What a large load made is long-lived: ``freeze`` then ``unfreeze``
                # moves every tracked object into the oldest generation without a pass
                # over them, where the collector would otherwise walk the whole history
                # once per young generation (a fifth of loading 49,520 matches).  Not
                # done for a small load (a service's young garbage stays young) nor
                # when the program froze objects of its own.
                gc.freeze()
                gc.unfreeze()
            gc.enable()


# ====================================================================== dispatch
def _kind(path: Path) -> str:
    if path.is_dir():
        return "dir"
    lower = path.name.lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(TAR_SUFFIXES):
        return "tar"
    if not path.exists():
        raise DataFormatError(f"{path}: no such file or directory")
    raise DataFormatError(
        f"{path}: unsupported input; expected a .json file, a directory of 0.json, 1.json, ..., "
        f"a .tar.gz/.tgz archive of such a directory or a .csv file"
    )


class _Options:
    """What one load checks and where it reports (shared by the sources)."""

    __slots__ = ("raw_handles", "times", "require_times", "warn", "note", "keep_refused",
                 "refused")

    def __init__(self, raw_handles: bool, allow_future: bool, require_times: bool,
                 warn: Callable[[str], None], note: Callable[[str], None],
                 any_weight: bool = False, keep_refused: bool = False) -> None:
        self.raw_handles = raw_handles
        self.keep_refused = keep_refused
        #: what the handle table kept as written (``keep_refused``): handle -> reason
        self.refused: dict[str, str] = {}
        self.times = TimeCheck(allow_future, any_weight=any_weight)
        self.require_times = require_times
        self.warn = warn
        self.note = note


def _handle_table(kind: str, opts: _Options) -> HandleTable:
    """The handle table of a load of ``kind`` (the options' ``refused`` is its record)."""
    # numbered handles: a Rater finds the players of a batch with one gather
    intern = HandleTable(raw=opts.raw_handles, coded=kind in ("dir", "tar", "json", "csv"),
                         keep_refused=opts.keep_refused)
    opts.refused = intern.refused
    return intern


def _iter_indexed(
    path: PathArg, limit: int | None, opts: _Options
) -> Iterator[tuple[int, Contest | EmptyContest]]:
    """``(file index, contest)`` in index order."""
    check_limit(limit)
    p = Path(path)
    kind = _kind(p)
    if limit == 0:
        return
    intern = _handle_table(kind, opts)
    if kind == "dir":
        yield from iter_dir(p, limit, intern, opts.times, opts.warn)
    elif kind == "tar":
        yield from iter_tar(p, limit, intern, opts.times, opts.warn)
    elif kind == "json":
        data = read_bytes(p)
        if len(data) >= SCAN_FILE_BYTES:  # one huge round: the compiled standings reader
            intern.switch()
        yield 0, decode_contest(data, str(p), intern, allow_empty=False, times=opts.times)
    else:
        yield from enumerate(csv_contests(p, limit, intern, opts.times, opts.require_times,
                                          opts.note))


def _load_indexed(path: PathArg, limit: int | None, opts: _Options
                  ) -> tuple[list[int], list[Contest], list[Contest | EmptyContest] | None]:
    """The file indices and the contests of :func:`_iter_indexed`, as two lists: the
    contests in the second when none is an :class:`EmptyContest`, else in the third (a
    CSV file's contests, never empty, are numbered from 0 without a pair per contest)."""
    p = Path(path)
    if _kind(p) == "csv" and limit != 0:
        check_limit(limit)
        intern = _handle_table("csv", opts)
        found = csv_contests(p, limit, intern, opts.times, opts.require_times, opts.note)
        return list(range(len(found))), found, None
    pairs = list(_iter_indexed(path, limit, opts))
    loaded = [c for _, c in pairs]
    indices = [idx for idx, _ in pairs]
    if EmptyContest in set(map(type, loaded)):
        return indices, [], loaded
    return indices, cast(list[Contest], loaded), None


def iter_contests(
    path: PathArg,
    *,
    limit: int | None = None,
    raw_handles: bool = False,
    allow_future: bool = False,
    require_times: bool = True,
    any_weight: bool = False,
) -> Iterator[Contest]:
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
    raw_handles : bool, default False
        Keep handles and team names as given instead of normalising them (NFC,
        trimmed; refused: control, format and bidi characters, empty, longer than
        128 characters: :func:`podium.core.guards.normalize_handle`).  Text that is
        not Unicode (a lone surrogate) is refused either way.
    allow_future : bool, default False
        Accept contests dated more than a day after this machine's clock (simulated
        or scheduled contests).  Times before 1800 (negative before 1970) or after
        2200 are refused either way (a time in milliseconds is recognised and named).
    require_times : bool, default True
        Refuse a CSV file without a time column; with ``False`` its contests are
        read in file order at time 0.
    any_weight : bool, default False
        Accept any positive contest weight; by default a weight outside
        [0.001, 100] is refused (:func:`podium.core.guards.contest_weight_problem`:
        the range every rating system was checked in, the store's).

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
        When a handle breaks the rules, a contest time is out of range or the
        contest model rejects a contest; the message names the file (line or
        member), the contest and the player.

    Notes
    -----
    What :func:`load_contests` reports in ``warnings`` and ``changes`` is logged
    here (logger ``podium.io``, levels WARNING and INFO).
    """
    opts = _Options(raw_handles, allow_future, require_times, log.warning, log.info,
                    any_weight)
    for _, contest in _iter_indexed(path, limit, opts):
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
    raw_handles: bool = False,
    allow_future: bool = False,
    require_times: bool = True,
    any_weight: bool = False,
    keep_refused_handles: bool = False,
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
    raw_handles, allow_future, require_times, any_weight : bool
        As :func:`iter_contests`.
    keep_refused_handles : bool, default False
        Keep a handle or team name that breaks the handle rules as written (as
        ``raw_handles`` would) instead of refusing the file, and list it in
        ``refused_handles`` (what ``podium eval`` and ``compare`` do: an evaluation
        needs each player told apart, not a displayable handle).

    Returns
    -------
    LoadedHistory
        The contests, their original file indices, in ``changes`` one line per
        removed or moved contest, one line about gaps in the file numbering and one
        when a CSV file without times was read (``require_times=False``), and in
        ``warnings`` what was skipped (archive members that are not regular files).
        Without the flags nothing is changed; use :func:`check_history` to find out
        whether they are needed.

    Raises
    ------
    DataFormatError, ContestError
        As :func:`iter_contests`.
    """
    indices: list[int] = []
    warnings: list[str] = []
    changes: list[str] = []
    skipped = 0

    def warn(line: str) -> None:
        nonlocal skipped
        skipped += 1
        if skipped <= _MAX_WARNINGS_PER_KIND:
            warnings.append(line)

    opts = _Options(raw_handles, allow_future, require_times, warn, changes.append,
                    any_weight, keep_refused_handles)
    with _gc_paused():
        file_indices, contests, loaded = _load_indexed(path, limit, opts)
    if skipped > _MAX_WARNINGS_PER_KIND:
        warnings.append(f"... {skipped} entries of {path} skipped in all")
    if loaded is None:  # nothing skipped
        indices = file_indices
    else:
        for idx, contest in zip(file_indices, loaded, strict=True):
            if isinstance(contest, EmptyContest):
                changes.append(f"skipped contest #{idx} {contest.name!r} "
                               f"({contest.source}): its standings are empty")
                continue
            indices.append(idx)
            contests.append(contest)
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
    return LoadedHistory(contests=contests, source=str(path), changes=changes, indices=indices,
                         warnings=warnings, refused_handles=dict(opts.refused))


def refused_report(history: LoadedHistory, *, limit: int = 10) -> list[str]:
    """Lines saying which handles of ``history`` the handle rules refused and the load
    kept as written (``keep_refused_handles``): how many, then for each (at most
    ``limit``) why and the first contest (and file) it appears in.  Empty when none."""
    refused = history.refused_handles
    if not refused:
        return []
    first: dict[str, str] = {}
    for idx, contest in zip(history.indices, history.contests, strict=True):
        names = set(contest.handles)
        if contest.teams is not None:
            names.update(contest.teams.names)
        for h in names.intersection(refused).difference(first):
            first[h] = f"contest {contest.label!r} (file {idx})"
        if len(first) == len(refused):
            break
    n = len(refused)
    lines = [f"{n} handle{'s' if n != 1 else ''} broke the handle rules and "
             f"{'were' if n != 1 else 'was'} kept as written (an evaluation only needs players "
             "told apart; --raw-handles keeps every handle as written):"]
    for h, why in list(refused.items())[:limit]:
        lines.append(f"  {ascii(h) if not h.isprintable() else repr(h)}: {why}; first in "
                     f"{first.get(h, 'a contest left out')}")
    if n > limit:
        lines.append(f"  ... and {n - limit} more")
    return lines


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
