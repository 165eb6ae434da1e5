"""The team structure of a team contest (see :class:`~podium.core.contest.Contest`
and docs/teams.md): team names, the rows of each team, the member weights."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.errors import ContestError

__all__ = ["Teams", "group_team_rows"]


@dataclass(frozen=True, eq=False)
class Teams:
    """The team structure of a team contest (see :class:`~podium.core.contest.Contest`).

    Attributes
    ----------
    names:
        ``T`` team names, best team first (unique within the contest).
    offsets:
        ``T + 1`` row offsets: team ``t`` is rows ``offsets[t]:offsets[t + 1]`` of
        the contest (``int64``, read-only).
    weight:
        Per row: the member's weight in (0, 1] (partial play; 1 = the whole round).
    """

    names: tuple[str, ...]
    offsets: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.names)

    @property
    def sizes(self) -> npt.NDArray[np.int64]:
        """Members per team."""
        return np.diff(self.offsets)

    @property
    def team_of(self) -> npt.NDArray[np.int64]:
        """Per row: the index of the row's team."""
        return np.repeat(np.arange(len(self.names), dtype=np.int64), self.sizes)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Teams):
            return NotImplemented
        return (self.names == other.names and np.array_equal(self.offsets, other.offsets)
                and np.array_equal(self.weight, other.weight))

    __hash__ = None  # type: ignore[assignment]


def group_team_rows(
    handles: Sequence[str], teams: Sequence[str], key: npt.NDArray[np.float64], weight: Any,
    what: str, label: str,
) -> tuple[list[str], npt.NDArray[np.int64], list[str], npt.NDArray[np.int64],
           npt.NDArray[np.int64], npt.NDArray[np.float64] | None]:
    """Group one row per member into teams: the positional arguments of
    :meth:`~podium.core.contest.Contest.from_team_arrays`.

    The rows are grouped by team name (in order of first appearance), the rows of a
    team must share their ``key`` (a place, or a negated score: lower is better),
    teams are sorted by key (best first, stable) and equal keys tie.  ``what`` names
    the key in messages and ``label`` the contest.

    Raises
    ------
    ContestError
        On a team name that is not a non-empty string, rows of one team with
        different keys, or lengths that disagree.
    """
    if len(teams) != len(handles):
        raise ContestError(f"{len(handles)} handles but {len(teams)} team names", contest=label)
    index: dict[str, int] = {}
    team_of = np.empty(len(handles), dtype=np.int64)
    for i, name in enumerate(teams):
        if not isinstance(name, str) or not name:
            raise ContestError(f"every team name must be a non-empty string, got {name!r}",
                               contest=label, player=str(handles[i]))
        team_of[i] = index.setdefault(name, len(index))
    names = list(index)
    t = len(names)
    first_row = np.full(t, -1, dtype=np.int64)
    for i in range(len(handles) - 1, -1, -1):
        first_row[team_of[i]] = i
    team_key = key[first_row] if t else key[:0]
    differ = key != team_key[team_of]
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        j = int(first_row[team_of[i]])
        raise ContestError(
            f"the rows of one team must share its {what}: {handles[j]!r} has "
            f"{abs(key[j]):g}, {handles[i]!r} has {abs(key[i]):g}", contest=label,
            team=names[int(team_of[i])], player=str(handles[i]))
    order_t = np.argsort(team_key, kind="stable")
    rank_of = np.empty(t, dtype=np.int64)
    rank_of[order_t] = np.arange(t)
    rows = np.argsort(rank_of[team_of], kind="stable")
    k = team_key[order_t]
    t_lo = np.arange(t, dtype=np.int64)
    t_hi = np.arange(t, dtype=np.int64)
    if t:
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        sizes_g = np.diff(np.append(starts, t))
        t_lo = np.repeat(starts, sizes_g).astype(np.int64)
        t_hi = np.repeat(starts + sizes_g - 1, sizes_g).astype(np.int64)
    sizes = np.bincount(team_of, minlength=t)[order_t]
    offsets = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    w = None
    if weight is not None:
        w_all = np.asarray(weight, dtype=np.float64)
        if w_all.shape != (len(handles),):
            raise ContestError(f"{len(handles)} handles but {w_all.size} weights", contest=label)
        w = w_all[rows]
    return ([handles[i] for i in rows], offsets, [names[i] for i in order_t], t_lo, t_hi, w)
