"""What a system is given to rate and what it gives back: one round
(:class:`RoundInput`, :class:`RoundOutput`) or a batch of rounds in CSR form
(:class:`RoundBatch`, :class:`RoundsOutput`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest

__all__ = ["RoundInput", "RoundOutput", "RoundBatch", "batch_teams", "RoundsOutput"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

@dataclass(frozen=True)
class RoundInput:
    """One round as the system sees it: participants in standings order."""

    contest: Contest
    players: npt.NDArray[np.int64]
    """Player indices, best first."""
    lo: npt.NDArray[np.int64]
    hi: npt.NDArray[np.int64]
    mu: npt.NDArray[np.float64]
    """Each participant's rating before the round."""
    sigma: npt.NDArray[np.float64]
    played: npt.NDArray[np.int64]
    """Number of earlier rated rounds of each participant."""
    delta_seconds: npt.NDArray[np.float64]
    """Seconds since each participant's previous round (0 for a debut)."""
    team_offsets: npt.NDArray[np.int64] | None = None
    """A team round (:attr:`Contest.team_round <podium.core.contest.Contest.team_round>`):
    ``T + 1`` offsets, team ``t`` being participants ``team_offsets[t]:team_offsets[t+1]``,
    and ``lo``/``hi`` each participant's *team's* range of team places.  ``None``: an
    individual round (every participant its own team)."""
    weight: npt.NDArray[np.float64] | None = None
    """A team round: each participant's member weight in (0, 1]; else ``None``."""

    @property
    def is_team_round(self) -> bool:
        """Whether the round ranks teams (see :attr:`team_offsets`)."""
        return self.team_offsets is not None


@dataclass(frozen=True)
class RoundOutput:
    mu: npt.NDArray[np.float64]
    sigma: npt.NDArray[np.float64]
    perf: npt.NDArray[np.float64]
    warnings: tuple[str, ...] = ()


@dataclass(slots=True)
class RoundBatch:
    """Consecutive rounds in CSR form, plus the player arrays they read and update.

    Round ``r`` is ``contests[r]``; its participants, in standings order, are
    ``players[offsets[r]:offsets[r + 1]]`` (indices into the player arrays), with
    the ``lo`` of their tie ranges at the same positions.  Every participant already has
    a row: a newcomer holds the system's prior, its first contest's time, 0
    rounds played, ``max_display = -inf`` and ``last_change = 0``.

    The player arrays are the Rater's (:class:`~podium.core.state.PlayerTable`'s
    ``mu``, ``sigma``, ``contests``, ``last_time``, ``max_display`` and
    ``last_change``).  A system rating the batch updates them in place after
    every round, because later rounds of the batch read them: each participant's
    rating becomes its posterior, ``played`` grows by one, ``last_time`` becomes
    ``max(last_time, time_seconds[r])``, ``max_display`` the larger of itself and
    the new display rating, and ``last_change`` the new display rating minus the
    one before the round.
    """

    contests: Sequence[Contest]
    offsets: npt.NDArray[np.int64]
    """``R + 1`` event offsets."""
    players: npt.NDArray[np.int64]
    lo: npt.NDArray[np.int64]
    time_seconds: npt.NDArray[np.int64]
    """Per round: the contest's ``time_seconds``."""
    weight: npt.NDArray[np.float64]
    """Per round: the contest's ``weight``."""
    perf_ceiling: npt.NDArray[np.float64]
    """Per round: the contest's ``perf_ceiling`` (NaN for none)."""
    team_round: npt.NDArray[np.bool_]
    """Per round: whether it is a team round (``Contest.team_round``); a system's
    compiled loop over small rounds must leave these to :meth:`RatingSystem.round_update`."""
    players_after: Sequence[int]
    """Per round: the number of players once the round's newcomers exist (what
    :meth:`SystemState.ensure_players` must make room for before the round)."""
    first_index: int
    """How many contests the Rater had processed before this batch."""
    mu: npt.NDArray[np.float64]
    sigma: npt.NDArray[np.float64]
    played: npt.NDArray[np.int64]
    last_time: npt.NDArray[np.int64]
    max_display: npt.NDArray[np.float64]
    last_change: npt.NDArray[np.float64]

    def __post_init__(self) -> None:
        # ``lo`` is read-only whichever way the batch was made (one contest's, which
        # Contest makes read-only, a concatenation, a loaded batch's copy): a compiled loop
        # over the batch and one over a single contest (``Rater.add``) then take the same
        # array type, so each of their kernels compiles (and is prebuilt) once
        if self.lo.flags.writeable:
            self.lo = self.lo.view()
            self.lo.flags.writeable = False

    @property
    def rounds(self) -> int:
        """Number of rounds in the batch."""
        return len(self.contests)


def batch_teams(batch: RoundBatch) -> tuple[IntArray, IntArray, FloatArray,
                                            npt.NDArray[np.bool_]]:
    """The teams of every round of ``batch`` in CSR form, for compiled loops over rounds.

    Returns ``(team_ptr, team_rows, member_weight, weighted)``: round ``r``'s teams are
    ``team_ptr[r]:team_ptr[r + 1]``, team ``t`` is batch rows
    ``team_rows[t]:team_rows[t + 1]`` (an individual round has one team per row),
    ``member_weight`` gives each row's weight (1 outside team rounds) and
    ``weighted[r]`` whether some weight of round ``r`` is not 1.
    """
    n_ev = batch.players.size
    if batch.rounds == 1:  # Rater.add
        teams = batch.contests[0].teams
        if not batch.team_round[0] or teams is None:
            return (np.array([0, n_ev], dtype=np.int64), np.arange(n_ev + 1, dtype=np.int64),
                    np.ones(n_ev), np.zeros(1, dtype=bool))
        return (np.array([0, len(teams)], dtype=np.int64), teams.offsets.copy(),
                teams.weight.copy(), np.array([bool((teams.weight != 1.0).any())]))
    starts = np.ones(n_ev + 1, dtype=bool)
    member_weight = np.ones(n_ev)
    weighted = np.zeros(batch.rounds, dtype=bool)
    for r in np.flatnonzero(batch.team_round).tolist():
        teams = batch.contests[r].teams
        assert teams is not None
        a = int(batch.offsets[r])
        b = int(batch.offsets[r + 1])
        starts[a:b] = False
        starts[a + teams.offsets[:-1]] = True
        member_weight[a:b] = teams.weight
        weighted[r] = bool((teams.weight != 1.0).any())
    team_rows = np.flatnonzero(starts).astype(np.int64)
    team_ptr = np.searchsorted(team_rows, batch.offsets).astype(np.int64)
    return team_ptr, team_rows, member_weight, weighted


@dataclass(slots=True)
class RoundsOutput:
    """What rating a :class:`RoundBatch` produced.

    ``events[0]``, ``events[1]`` and ``events[2]`` hold, at each event's CSR
    position, the participant's ``mu`` and ``sigma`` after its round and its
    performance (as :class:`RoundOutput`).  Rounds ``0..done-1`` were rated and
    each has its warnings in ``warnings``; when round ``done`` raised, ``error``
    holds the exception and nothing of that round (or later ones) was applied.
    """

    events: npt.NDArray[np.float64]
    warnings: list[tuple[str, ...]] = field(default_factory=list)
    done: int = 0
    error: BaseException | None = None

    @classmethod
    def allocate(cls, batch: RoundBatch) -> RoundsOutput:
        """Room for the events of ``batch``."""
        return cls(np.empty((3, batch.players.size)))
