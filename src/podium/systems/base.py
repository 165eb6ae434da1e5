"""The one interface every rating system implements.

A system is a frozen dataclass of named hyper-parameters (defaults equal the
reference implementation's).  It creates its own per-player state and updates
it one round at a time; the :class:`~podium.rater.Rater` does the bookkeeping
common to all systems (handles, newcomers, event log, checkpoints).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.errors import ConfigError

__all__ = ["RatingSystem", "SystemState", "NoPlayerState", "RoundInput", "RoundOutput", "Preset"]


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
