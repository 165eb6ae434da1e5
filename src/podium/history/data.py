"""A contest history as plain arrays (compressed sparse rows), the input of the
whole-history engines of :mod:`podium.history`.

A history of ``C`` contests, ``T`` teams and ``R`` rows (one row per player-round):

* ``contest_teams`` (``C + 1``): contest ``c`` holds teams
  ``contest_teams[c]:contest_teams[c + 1]``, best first;
* ``team_rows`` (``T + 1``): team ``t`` holds rows ``team_rows[t]:team_rows[t + 1]``;
* ``team_place`` (``T``): the team's 0-based place, the first place of its tie range
  (tied teams share it; non-decreasing within a contest);
* ``player`` (``R``): the player of each row, ``0 .. n_players - 1``;
* ``weight`` (``R``): each member's weight (partial play; 1 for a whole round);
* ``time`` (``C``): each contest's time in days (``time_seconds / 86400``),
  non-decreasing.

An individual contest is the special case of one-row teams of weight 1.
:func:`history_from_contests` builds one from Podium's
:class:`~podium.core.contest.Contest` objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from podium.errors import ContestError

if TYPE_CHECKING:
    from podium.core.contest import Contest

__all__ = ["SECONDS_PER_DAY", "ContestHistory", "LabelledHistory", "PlayerRounds",
           "history_from_contests",
           "history_from_arrays", "player_rounds", "check_history", "append_contests",
           "select_contests", "concat_ranges"]

#: The time unit of the engines is the day.
SECONDS_PER_DAY = 86400.0

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class ContestHistory(NamedTuple):
    """A contest history in compressed sparse rows (see the module docstring).

    Attributes
    ----------
    contest_teams, team_rows, team_place, player, weight, time:
        The arrays described in :mod:`podium.history.data`.
    n_players:
        The number of distinct players (indices ``0 .. n_players - 1``).
    """

    contest_teams: IntArray
    team_rows: IntArray
    team_place: IntArray
    player: IntArray
    weight: FloatArray
    time: FloatArray
    n_players: int

    @property
    def n_contests(self) -> int:
        """The number of contests ``C``."""
        return int(self.time.size)

    @property
    def n_rows(self) -> int:
        """The number of player-rounds ``R``."""
        return int(self.player.size)

    @property
    def n_playing(self) -> int:
        """The number of players with at least one row (``n_players`` also counts
        indices that no row uses, such as the players of a history's later contests
        when it is cut short)."""
        if self.player.size == 0:
            return 0
        return int(np.count_nonzero(np.bincount(self.player, minlength=self.n_players)))

    @property
    def row_contest(self) -> IntArray:
        """Per row: the index of its contest."""
        rows_per_contest = np.diff(self.team_rows[self.contest_teams])
        return np.repeat(np.arange(self.n_contests, dtype=np.int64), rows_per_contest)

    @property
    def row_team(self) -> IntArray:
        """Per row: the index of its team."""
        return np.repeat(np.arange(self.team_place.size, dtype=np.int64),
                         np.diff(self.team_rows))

    @property
    def contest_rows(self) -> IntArray:
        """``C + 1`` row offsets: contest ``c`` holds rows ``contest_rows[c]:contest_rows[c+1]``."""
        return self.team_rows[self.contest_teams]

    @property
    def is_individual(self) -> bool:
        """True when every team has one member of weight 1."""
        return bool(np.all(np.diff(self.team_rows) == 1) and np.all(self.weight == 1.0))

    def prefix(self, n: int) -> ContestHistory:
        """The history of the first ``n`` contests (views of these arrays).

        Parameters
        ----------
        n:
            How many leading contests, ``0 <= n <= C``.

        Returns
        -------
        ContestHistory
            ``n_players`` is one more than the largest player index of its rows (for a
            history of :func:`history_from_contests`, whose players are numbered in
            order of first appearance: the players of the first ``n`` contests, as
            :func:`history_from_contests` of those contests numbers them).

        Raises
        ------
        ValueError
            For ``n`` outside ``0 .. C``.
        """
        if not 0 <= n <= self.n_contests:
            raise ValueError(f"a prefix of 0 .. {self.n_contests} contests, got {n!r}")
        t = int(self.contest_teams[n])
        r = int(self.team_rows[t])
        player = self.player[:r]
        return ContestHistory(self.contest_teams[:n + 1], self.team_rows[:t + 1],
                              self.team_place[:t], player, self.weight[:r], self.time[:n],
                              int(player.max()) + 1 if r else 0)


def select_contests(h: ContestHistory, keep: BoolArray) -> tuple[ContestHistory, IntArray]:
    """The sub-history of the contests in ``keep`` and, per row of it, its row in ``h``.

    Parameters
    ----------
    h:
        A history.
    keep:
        Per contest, whether it stays.

    Returns
    -------
    sub, source_rows
    """
    cr = h.contest_rows
    ct = h.contest_teams
    idx = np.flatnonzero(keep)
    n_teams = ct[idx + 1] - ct[idx]
    src = concat_ranges(cr[idx], cr[idx + 1])
    teams = concat_ranges(ct[idx], ct[idx + 1])
    sizes = np.diff(h.team_rows)[teams]
    sub = ContestHistory(np.r_[0, np.cumsum(n_teams)].astype(np.int64),
                         np.r_[0, np.cumsum(sizes)].astype(np.int64),
                         h.team_place[teams], h.player[src], h.weight[src], h.time[idx],
                         h.n_players)
    return sub, src


def concat_ranges(lo: IntArray, hi: IntArray) -> IntArray:
    """The integer ranges ``lo[k] .. hi[k] - 1``, one after the other (the rows or
    teams of some contests, from their offsets)."""
    n = hi - lo
    start = np.cumsum(np.r_[0, n[:-1]]).astype(np.int64)
    return np.repeat(lo - start, n) + np.arange(int(n.sum()), dtype=np.int64)


class PlayerRounds(NamedTuple):
    """The rows of each player in time order (the transpose of the history).

    Attributes
    ----------
    offsets:
        ``n_players + 1``: player ``i``'s rows are ``rows[offsets[i]:offsets[i + 1]]``.
    rows:
        Row indices, grouped by player, each player's in contest order.
    """

    offsets: IntArray
    rows: IntArray


def player_rounds(history: ContestHistory) -> PlayerRounds:
    """Each player's rows in contest order (a stable sort of the rows by player).

    Parameters
    ----------
    history:
        The history.

    Returns
    -------
    PlayerRounds
    """
    order = np.argsort(history.player, kind="stable").astype(np.int64)
    counts = np.bincount(history.player, minlength=history.n_players)
    offsets = np.zeros(history.n_players + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return PlayerRounds(offsets, order)


def _label(names: Sequence[str] | None, c: int) -> str:
    return names[c] if names is not None and c < len(names) else f"#{c}"


def check_history(history: ContestHistory, contest_names: Sequence[str] | None = None,
                  player_names: Sequence[str] | None = None, *, first: int = 0) -> None:
    """Check the shape and the rules of a history.

    Parameters
    ----------
    history:
        The history to check.
    contest_names, player_names:
        Used in the messages (default: indices).
    first:
        The rows of the contests before this one were checked already (a history
        that grew at its end): their players, weights and repeats are not checked
        again (the offsets, places and times of every contest are).

    Raises
    ------
    ContestError
        Naming the contest (and player or team) on: offsets that do not chain, an
        empty contest or team, places that are negative or decrease within a contest,
        a player index outside ``0 .. n_players - 1``, a player twice in one contest, a
        member weight outside ``(0, 1]``, a time that is not finite or goes back.
    """
    h = history
    C = h.n_contests
    ct, tr = h.contest_teams, h.team_rows
    if ct.shape != (C + 1,) or (C and (ct[0] != 0 or np.any(np.diff(ct) < 1))):
        raise ContestError(f"contest_teams must be {C + 1} offsets from 0, each contest "
                           "holding at least one team")
    T = int(ct[-1]) if C else 0
    if tr.shape != (T + 1,) or tr[0] != 0 or np.any(np.diff(tr) < 1):
        raise ContestError(f"team_rows must be {T + 1} offsets from 0, each team holding "
                           "at least one row")
    R = int(tr[-1])
    if h.team_place.shape != (T,) or h.player.shape != (R,) or h.weight.shape != (R,):
        raise ContestError(f"{T} teams and {R} rows, but team_place has "
                           f"{h.team_place.size}, player {h.player.size} and weight "
                           f"{h.weight.size} values")
    if not np.all(np.isfinite(h.time)):
        c = int(np.flatnonzero(~np.isfinite(h.time))[0])
        raise ContestError("the time is not finite", contest=_label(contest_names, c))
    back = np.flatnonzero(np.diff(h.time) < 0)
    if back.size:
        c = int(back[0]) + 1
        raise ContestError(f"the time goes back ({h.time[c]} days after {h.time[c - 1]}); "
                           "sort the contests by time (load_contests(sort_by_time=True))",
                           contest=_label(contest_names, c))
    team_contest = np.repeat(np.arange(C, dtype=np.int64), np.diff(ct))
    bad = h.team_place < 0
    same = team_contest[1:] == team_contest[:-1]
    dec = np.flatnonzero(same & (np.diff(h.team_place) < 0))
    if bad.any() or dec.size:
        t = int(np.flatnonzero(bad)[0]) if bad.any() else int(dec[0]) + 1
        raise ContestError("team places must be >= 0 and listed best first",
                           contest=_label(contest_names, int(team_contest[t])))
    r0 = int(tr[ct[first]]) if 0 < first <= C else 0
    player, rc = h.player[r0:], h.row_contest[r0:]
    if player.size and (player.min() < 0 or player.max() >= h.n_players):
        r = r0 + int(np.flatnonzero((player < 0) | (player >= h.n_players))[0])
        raise ContestError(f"player index {int(h.player[r])} is outside 0..{h.n_players - 1}",
                           contest=_label(contest_names, int(h.row_contest[r])))
    wbad = ~((h.weight[r0:] > 0.0) & (h.weight[r0:] <= 1.0))
    if wbad.any():
        r = r0 + int(np.flatnonzero(wbad)[0])
        raise ContestError(f"member weight must be in (0, 1], got {float(h.weight[r])!r}",
                           contest=_label(contest_names, int(h.row_contest[r])),
                           player=_label(player_names, int(h.player[r])))
    key = rc * max(h.n_players, 1) + player
    s = np.sort(key)
    dup = np.flatnonzero(s[1:] == s[:-1])
    if dup.size:
        k = int(s[dup[0]])
        raise ContestError("the player is twice in the contest",
                           contest=_label(contest_names, k // max(h.n_players, 1)),
                           player=_label(player_names, k % max(h.n_players, 1)))


def _concat_int(parts: list[IntArray]) -> IntArray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def history_from_arrays(contest_teams: npt.ArrayLike, team_rows: npt.ArrayLike,
                        team_place: npt.ArrayLike, player: npt.ArrayLike,
                        time: npt.ArrayLike, weight: npt.ArrayLike | None = None,
                        n_players: int | None = None) -> ContestHistory:
    """A checked :class:`ContestHistory` from array-likes.

    Parameters
    ----------
    contest_teams, team_rows, team_place, player, time:
        As in :mod:`podium.history.data` (``time`` in days).
    weight:
        Member weights (default all 1).
    n_players:
        Default ``max(player) + 1``.

    Returns
    -------
    ContestHistory

    Raises
    ------
    ContestError
        As :func:`check_history`.
    """
    p = np.ascontiguousarray(player, dtype=np.int64)
    w = (np.ones(p.size) if weight is None
         else np.ascontiguousarray(weight, dtype=np.float64))
    n = int(p.max()) + 1 if n_players is None and p.size else int(n_players or 0)
    h = ContestHistory(np.ascontiguousarray(contest_teams, dtype=np.int64),
                       np.ascontiguousarray(team_rows, dtype=np.int64),
                       np.ascontiguousarray(team_place, dtype=np.int64), p, w,
                       np.ascontiguousarray(time, dtype=np.float64), n)
    check_history(h)
    return h


class LabelledHistory(NamedTuple):
    """A history built from Podium contests, with what names its rows.

    Attributes
    ----------
    history:
        The arrays.
    handles:
        ``handles[i]`` is player ``i``, numbered in order of first appearance.
    contest_index:
        ``contest_index[c]`` is the position of history contest ``c`` in the list of
        contests it was built from (some are left out).
    """

    history: ContestHistory
    handles: list[str]
    contest_index: IntArray


def history_from_contests(contests: Sequence[Contest],
                          skip_outcome_free: bool = False) -> LabelledHistory:
    """A :class:`ContestHistory` from Podium contests, with the players' handles.

    Parameters
    ----------
    contests:
        :class:`~podium.core.contest.Contest` objects in time order (individual or
        team contests; a tie range ``lo..hi`` becomes the shared place ``lo``).
    skip_outcome_free:
        Leave out the contests in which everybody tied.  Off by default: a drawn
        game is a result for TrueSkill Through Time and WHR (the filters, and
        :func:`~podium.history.mmr_smooth`, skip such contests themselves).  A
        contest of one team is always left out (it has no opponent).

    Returns
    -------
    LabelledHistory
        The history (times are ``time_seconds / 86400``, days), the handles and the
        positions of the contests kept.

    Raises
    ------
    ContestError
        When the contests are not in time order (naming the first one out of order).
    """
    return append_contests(None, contests, skip_outcome_free=skip_outcome_free)


def _player_numbers(contests: Sequence[Contest], index: dict[str, int]) -> list[IntArray]:
    """Per contest, its players' numbers: ``index[handle]``, a newcomer numbered
    ``len(index)`` in order of first appearance (``index`` grows).

    When a loader numbered every contest's handles in one pool
    (:attr:`~podium.core.contest.Contest.handle_codes`), the numbers come from one
    gather over those codes and one lookup per distinct handle, not one per
    player-round (4.2 million on the Codeforces history)."""
    coded = [c.handle_codes for c in contests]
    pools = {id(hc[0]) for hc in coded if hc is not None}
    if not contests or None in coded or len(pools) != 1:
        return [np.fromiter((index.setdefault(h, len(index)) for h in c.handles),
                            dtype=np.int64, count=len(c)) for c in contests]
    pool = coded[0][0]  # type: ignore[index]
    codes = np.concatenate([hc[1] for hc in coded])  # type: ignore[index]
    distinct, first = np.unique(codes, return_index=True)
    seen = distinct[np.argsort(first, kind="stable")]  # in order of first appearance
    numbers = np.zeros(int(distinct[-1]) + 1, dtype=np.int64)
    numbers[seen] = [index.setdefault(h, len(index)) for h in map(pool.names.__getitem__,
                                                                  seen.tolist())]
    ids = numbers[codes]
    return np.split(ids, np.cumsum([len(c) for c in contests])[:-1])


def append_contests(base: LabelledHistory | None, contests: Sequence[Contest],
                    first_index: int = 0, *,
                    skip_outcome_free: bool = False) -> LabelledHistory:
    """``base`` followed by ``contests`` (as :func:`history_from_contests` builds them;
    ``base=None``: the contests alone).

    The players of ``base`` keep their numbers and the newcomers follow in order of
    first appearance, so the result is the history :func:`history_from_contests` builds
    from all the contests at once.

    Parameters
    ----------
    base:
        A history built from earlier contests, or ``None``.
    contests:
        The next contests, in time order, none earlier than ``base``'s last.
    first_index:
        The position of ``contests[0]`` in the whole list (for
        :attr:`LabelledHistory.contest_index`).
    skip_outcome_free:
        As :func:`history_from_contests`.

    Raises
    ------
    ContestError
        When the contests are not in time order (naming the first one out of order).
    """
    index: dict[str, int] = {} if base is None else {h: i for i, h in enumerate(base.handles)}
    ct = [0]
    tr = [0]
    places: list[IntArray] = []
    players: list[IntArray] = []
    weights: list[FloatArray] = []
    times: list[float] = []
    keep = [k for k, c in enumerate(contests)
            if c.n_teams > 1 and not (skip_outcome_free and c.is_outcome_free)]
    kept = [contests[k] for k in keep]
    if base is not None:
        b = base.history
        ct, tr = b.contest_teams.tolist(), b.team_rows.tolist()
        places, players, weights = [b.team_place], [b.player], [b.weight]
        times = b.time.tolist()
    for c, ids in zip(kept, _player_numbers(kept, index), strict=True):
        if c.teams is None:
            sizes = np.ones(len(c), dtype=np.int64)
            t_place = c.lo
            w = np.ones(len(c))
        else:
            sizes = c.teams.sizes
            t_place = c.lo[c.teams.offsets[:-1]]
            w = np.asarray(c.teams.weight, dtype=np.float64)
        tr.extend((tr[-1] + np.cumsum(sizes)).tolist())
        ct.append(ct[-1] + sizes.size)
        places.append(np.asarray(t_place, dtype=np.int64))
        players.append(ids)
        weights.append(w)
        times.append(c.time_seconds / SECONDS_PER_DAY)
    h = ContestHistory(np.asarray(ct, dtype=np.int64), np.asarray(tr, dtype=np.int64),
                       _concat_int(places), _concat_int(players),
                       np.concatenate(weights) if weights else np.zeros(0),
                       np.asarray(times, dtype=np.float64), len(index))
    names = [f"#{c}" for c in range(len(ct) - 1 - len(kept))] + [c.label for c in kept]
    handles = list(index)
    check_history(h, names, handles)
    positions = np.asarray(keep, dtype=np.int64) + first_index
    if base is not None:
        positions = np.r_[base.contest_index, positions].astype(np.int64)
    return LabelledHistory(h, handles, positions)
