"""The one interface every rating system implements.

A system is a frozen dataclass of named hyper-parameters (defaults equal the
reference implementation's).  It creates its own per-player state and updates
it one round at a time; the :class:`~podium.rater.Rater` does the bookkeeping
common to all systems (handles, newcomers, event log, checkpoints).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.errors import ConfigError

__all__ = [
    "RatingSystem", "SystemState", "NoPlayerState", "RoundInput", "RoundOutput", "Preset",
    "RoundBatch", "RoundsOutput",
]


class SystemState(ABC):
    """Per-player arrays a system keeps beyond (mu, sigma)."""

    @abstractmethod
    def ensure_players(self, n: int) -> None:
        """Make room for players ``0..n-1`` (new rows hold the newcomer prior)."""

    @abstractmethod
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to resume, as named arrays (for checkpoints)."""

    @classmethod
    @abstractmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> SystemState:
        """Inverse of :meth:`to_arrays`."""

    @abstractmethod
    def copy(self) -> SystemState:
        """A deep copy (used to roll back a round that failed)."""


class NoPlayerState(SystemState):
    """The state of a system that keeps nothing per player beyond ``(mu, sigma)``
    (which the :class:`~podium.rater.Rater` holds): it only counts the players."""

    def __init__(self) -> None:
        self.n = 0

    def ensure_players(self, n: int) -> None:
        self.n = max(self.n, n)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"n": np.array([self.n], dtype=np.int64)}

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> NoPlayerState:
        st = cls()
        st.n = int(np.asarray(d["n"]).reshape(-1)[0]) if "n" in d else 0
        return st

    def copy(self) -> NoPlayerState:
        st = type(self)()
        st.n = self.n
        return st


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

    @property
    def rounds(self) -> int:
        """Number of rounds in the batch."""
        return len(self.contests)


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


@dataclass(frozen=True)
class RatingSystem(ABC):
    """Base class: a frozen dataclass of hyper-parameters plus the update rule."""

    name: ClassVar[str] = "abstract"

    @abstractmethod
    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        """``(mu, sigma)`` of a player's prior before the first round.

        ``contest`` is the player's first contest (some systems' initial rating
        depends on its time); ``None`` asks for the system's default prior.
        """

    @abstractmethod
    def make_state(self) -> SystemState:
        ...

    @abstractmethod
    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """Rate one round in place; return each participant's new rating and performance."""

    def display_rating(
        self, mu: npt.NDArray[np.float64], sigma: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """The number shown to players (default: ``mu``)."""
        return np.asarray(mu, dtype=np.float64)

    # ------------------------------------------------------------------ many rounds
    def rate_rounds(self, state: SystemState, batch: RoundBatch) -> RoundsOutput:
        """Rate the rounds of ``batch`` in order, updating ``state`` and the batch's
        player arrays in place.

        The default calls :meth:`round_update` once per round (see
        :meth:`rate_round`); a system may override it with a compiled loop over
        the rounds, provided the numbers are the same, bit for bit.

        A round that raises stops the batch: the output's ``done`` counts the
        rounds rated before it and ``error`` holds the exception (it is not
        raised here, so that the caller can keep the rounds that were rated).
        """
        out = RoundsOutput.allocate(batch)
        for r in range(batch.rounds):
            try:
                self.rate_round(state, batch, r, out)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                out.error = exc
                return out
        return out

    def rate_round(
        self, state: SystemState, batch: RoundBatch, r: int, out: RoundsOutput
    ) -> None:
        """Rate round ``r`` of ``batch`` with :meth:`round_update`, as a lone round.

        Makes room for the round's players in ``state``, builds the
        :class:`RoundInput` (each participant's rounds played and seconds since
        its last round, 0 for a debut or a round dated before the last one),
        updates the batch's player arrays, writes the round's events into
        ``out``, appends its warnings and counts it in ``out.done``.  Nothing is
        written when :meth:`round_update` raises.
        """
        a = int(batch.offsets[r])
        b = int(batch.offsets[r + 1])
        contest = batch.contests[r]
        idx = batch.players[a:b]
        state.ensure_players(batch.players_after[r])
        played = batch.played[idx]
        last = batch.last_time[idx]
        t = contest.time_seconds
        delta = np.maximum(t - last, 0).astype(np.float64)
        delta[played == 0] = 0.0
        prior_mu = batch.mu[idx]
        prior_sig = batch.sigma[idx]
        rnd = RoundInput(
            contest=contest, players=idx, lo=contest.lo, hi=contest.hi,
            mu=prior_mu, sigma=prior_sig, played=played, delta_seconds=delta,
        )
        res = self.round_update(state, rnd)
        shown_old = self.display_rating(prior_mu, prior_sig)
        shown_new = self.display_rating(res.mu, res.sigma)
        batch.mu[idx] = res.mu
        batch.sigma[idx] = res.sigma
        batch.played[idx] = played + 1
        batch.last_time[idx] = np.maximum(last, t)
        batch.max_display[idx] = np.maximum(batch.max_display[idx], shown_new)
        batch.last_change[idx] = shown_new - shown_old
        ev = out.events
        ev[0, a:b] = res.mu
        ev[1, a:b] = res.sigma
        ev[2, a:b] = res.perf
        out.warnings.append(res.warnings)
        out.done = r + 1

    # ------------------------------------------------------------------ config
    def params(self) -> dict[str, Any]:
        """Named hyper-parameters (JSON-serialisable)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> RatingSystem:
        """Build from named parameters, rejecting unknown names with a clear message."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(params) - names)
        if unknown:
            raise ConfigError(
                f"unknown parameter(s) {', '.join(unknown)} for system {cls.name!r}; "
                f"known: {', '.join(sorted(names))}"
            )
        return cls(**params)


#: A named system: (class, preset parameters, one-line description).  Each system
#: module exposes ``PRESETS: dict[str, Preset]``; :mod:`podium.systems` gathers them.
Preset = tuple[type[RatingSystem], dict[str, Any], str]
