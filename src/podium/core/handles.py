"""Numbered handles: the distinct handles of one load and a contest's numbers in it.

A loader that interns handles (:func:`podium.io.load_contests` of a directory or an
archive) numbers them in a :class:`HandlePool`; each contest it builds keeps its
handles as numbers into the pool (:attr:`podium.core.contest.Contest.handle_codes`)
and spells them out only when they are read.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from podium.errors import ContestError

__all__ = ["HandlePool", "Spelled", "check_codes"]


class HandlePool:
    """The distinct handles of one load, numbered in order of first appearance.

    A loader that interns handles (:func:`podium.io.load_contests`) gives every
    contest it builds, besides its handles, their numbers in the load's pool
    (:attr:`Contest.handle_codes`).  A :class:`~podium.Rater` then finds the players
    of a batch of contests with one NumPy gather over those numbers instead of one
    dictionary lookup per player-round.  ``names[code]`` is the handle (in its
    normal form) numbered ``code``; names are only ever appended.
    """

    __slots__ = ("names",)

    def __init__(self) -> None:
        self.names: list[str] = []

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"HandlePool({len(self.names)} handles)"


class Spelled:
    """Numbered handles as a sequence of names (for messages), spelled one by one."""

    def __init__(self, codes: tuple[HandlePool, npt.NDArray[np.int64]] | None) -> None:
        assert codes is not None
        self.names, self.codes = codes[0].names, codes[1]

    def __len__(self) -> int:
        return int(self.codes.size)

    def __getitem__(self, i: int) -> str:
        return self.names[int(self.codes[i])]


def check_codes(codes: tuple[HandlePool, npt.NDArray[np.int64]], label: str) -> int:
    """The number of standings of numbered handles; refuses empty standings, codes
    outside the pool and a handle twice (named)."""
    pool, c = codes
    if c.ndim != 1 or c.dtype != np.int64:
        raise ValueError("handle codes must be a 1-d int64 array")
    n = int(c.size)
    if n == 0:
        raise ContestError("standings are empty", contest=label)
    if int(c.min()) < 0 or int(c.max()) >= len(pool):
        raise ValueError(f"handle codes outside the pool of {len(pool)} handles")
    s = np.sort(c)
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        # the first repeated handle in standings order, as the handle check names it
        seen: set[int] = set()
        for k in c.tolist():
            if k in seen:
                raise ContestError("duplicate handle", contest=label, player=pool.names[k])
            seen.add(k)
    return n
