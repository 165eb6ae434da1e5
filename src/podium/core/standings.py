"""Checks of a contest's standings, for one contest and for a whole file of contests.

For one contest (:class:`~podium.core.contest.Contest` calls them): handles that are
non-empty strings, places and scores turned into sort keys (lower is better), and tie
ranges ``(lo, hi)`` that are contiguous 0-based ranges containing each position.

For a whole file of small contests at once (the loaders of :mod:`podium.io`):
:func:`ranges_hold` is :func:`check_ranges` of every contest in one vectorised pass,
and :func:`shared_ranges` gives each contest its ``lo``/``hi`` arrays with one
read-only array pair per distinct tie pattern (a history of 1v1 matches has two: a
win and a draw), so that the contests cost no array of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.handles import Spelled
from podium.errors import ContestError

__all__ = ["check_handles", "check_ranges", "first_bad", "place_keys", "ranges_hold",
           "score_keys", "shared_ranges"]

IntArray = npt.NDArray[np.int64]
#: Contests of at most this many rows share their tie pattern (one bit a row).
PATTERN_ROWS = 48


def check_handles(hs: tuple[str, ...], label: str) -> None:
    """Refuse empty standings and a handle that is not a non-empty string."""
    if not hs:
        raise ContestError("standings are empty", contest=label)
    if set(map(type, hs)) != {str} or not all(hs):
        for h in hs:
            if not isinstance(h, str) or not h:
                raise ContestError(f"every handle must be a non-empty string, got {h!r}",
                                   contest=label)


def place_keys(handles: Sequence[str], places: Any, meta: Any) -> npt.NDArray[np.float64]:
    """1-based places as sort keys (lower is better), checked: one per handle, finite,
    at least 1; the error names the contest and the first offending player."""
    label = meta.get("name") or "<unnamed>"
    p = np.asarray(places)
    if p.shape != (len(handles),):
        raise ContestError(f"{len(handles)} handles but {p.size} places", contest=label)
    if p.size and (not np.issubdtype(p.dtype, np.number) or not np.all(np.isfinite(p))):
        bad = first_bad(handles, ~np.isfinite(p.astype(float, copy=False)))
        raise ContestError("place must be a finite number", contest=label, player=bad)
    if p.size and np.any(p < 1):
        raise ContestError("places are 1-based and must be >= 1", contest=label,
                           player=first_bad(handles, p < 1))
    return p.astype(np.float64)


def score_keys(handles: Sequence[str], scores: Any, higher_is_better: bool,
                meta: Any) -> npt.NDArray[np.float64]:
    """Scores as sort keys (lower is better: negated when higher scores win), checked:
    one per handle, finite."""
    label = meta.get("name") or "<unnamed>"
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (len(handles),):
        raise ContestError(f"{len(handles)} handles but {s.size} scores", contest=label)
    if s.size and not np.all(np.isfinite(s)):
        raise ContestError("score must be a finite number", contest=label,
                           player=first_bad(handles, ~np.isfinite(s)))
    return -s if higher_is_better else s


def first_bad(handles: Sequence[str], mask: npt.NDArray[np.bool_]) -> str | None:
    idx = np.flatnonzero(mask)
    return handles[int(idx[0])] if idx.size else None


def check_ranges(lo: npt.NDArray[np.int64], hi: npt.NDArray[np.int64],
                  labels: Sequence[str] | Spelled, contest: str, what: str) -> None:
    """Check that ``(lo, hi)`` are contiguous 0-based tie ranges over ``len(labels)``
    positions (players, or teams of a team contest); the error names the entry."""
    n = len(labels)
    pos = np.arange(n, dtype=np.int64)

    def fail(msg: str, i: int) -> None:
        if what == "team":
            raise ContestError(msg, contest=contest, team=labels[i])
        raise ContestError(msg, contest=contest, player=labels[i])

    bad = (lo > pos) | (hi < pos)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        fail(f"tie range ({lo[i]}, {hi[i]}) does not contain the {what}'s position {i}", i)
    # Contiguity: each position either continues the previous tie group
    # (same lo and hi) or starts a new one right after it ends.
    same = np.zeros(n, dtype=bool)
    same[1:] = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    starts = np.zeros(n, dtype=bool)
    starts[0] = lo[0] == 0
    starts[1:] = (lo[1:] == pos[1:]) & (hi[:-1] == pos[:-1])
    bad = ~(same | starts)
    if bad.any() or hi[-1] != n - 1:
        i = int(np.flatnonzero(bad)[0]) if bad.any() else n - 1
        fail(f"tie range ({lo[i]}, {hi[i]}) at position {i} is not contiguous with its "
             f"neighbours: tied {what}s must be adjacent and share the same (lo, hi)", i)


def ranges_hold(lo: IntArray, hi: IntArray, starts: IntArray, sizes: IntArray) -> bool:
    """Whether :func:`check_ranges` accepts every contest of a file: contest ``k`` is rows
    ``starts[k]:starts[k] + sizes[k]`` of ``lo``/``hi`` (its positions from 0; the
    contests adjacent, in order, none empty).  One vectorised pass; a loader that finds
    a contest refused checks contest by contest for the message.

    Parameters
    ----------
    lo, hi : ndarray of int64
        Each row's tie range, 0-based within its contest.
    starts, sizes : ndarray of int64
        Each contest's first row and number of rows.

    Returns
    -------
    bool
    """
    m = lo.size
    if m == 0:
        return True
    first = np.zeros(m, dtype=bool)
    first[starts] = True
    pos = np.arange(m, dtype=np.int64) - np.repeat(starts, sizes)
    if bool(((lo > pos) | (hi < pos)).any()):
        return False
    same = np.zeros(m, dtype=bool)
    same[1:] = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    begins = lo == pos
    begins[1:] &= first[1:] | (hi[:-1] == pos[1:] - 1)
    ok = (same & ~first) | begins
    ok[starts] = lo[starts] == 0
    last = starts + sizes - 1
    return bool(ok.all()) and bool((hi[last] == sizes - 1).all())


def shared_ranges(lo: IntArray, hi: IntArray, starts: IntArray, sizes: IntArray
                  ) -> tuple[list[IntArray], list[IntArray]]:
    """Each contest's ``lo`` and ``hi`` (as :func:`ranges_hold` lays them out, already
    checked), read-only views of ``lo`` and ``hi``; contests of at most
    :data:`PATTERN_ROWS` rows with the same tie pattern share one array pair.

    A checked contest's ranges follow from its size and which rows begin a tie group
    (``lo`` equal to the position), so ``size`` and that bit mask name the pattern.

    Returns
    -------
    lo, hi : list of ndarray of int64
        One read-only array each per contest.
    """
    n = starts.size
    if n == 0:
        return [], []
    pos = np.arange(lo.size, dtype=np.int64) - np.repeat(starts, sizes)
    small = sizes <= PATTERN_ROWS
    bits = np.where((lo == pos) & (pos < PATTERN_ROWS),
                    np.left_shift(1, np.minimum(pos, PATTERN_ROWS)), 0)
    mask = np.add.reduceat(bits, starts)
    # a pattern's key: its size and mask; a larger contest is a pattern of its own
    key = np.where(small, (sizes << PATTERN_ROWS) | mask, -1 - np.arange(n))
    _, first, which = np.unique(key, return_index=True, return_inverse=True)
    pat_lo: list[IntArray] = []
    pat_hi: list[IntArray] = []
    for k in first.tolist():
        a, b = int(starts[k]), int(starts[k] + sizes[k])
        for arr, out in ((lo, pat_lo), (hi, pat_hi)):
            view = arr[a:b]
            view.flags.writeable = False
            out.append(view)
    at = which.reshape(-1).tolist()
    return list(map(pat_lo.__getitem__, at)), list(map(pat_hi.__getitem__, at))
