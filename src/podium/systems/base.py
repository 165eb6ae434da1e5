"""The one interface every rating system implements.

A system is a frozen dataclass of named hyper-parameters (defaults equal the
reference implementation's).  It owns everything about itself:

* its **parameters** and their validation (:func:`param` declares a field with a
  check; :meth:`RatingSystem.__post_init__` runs every check);
* its **per-player state** (a :class:`SystemState`; most are an
  :class:`ArrayState` declared field by field, see :class:`StateField`);
* its **newcomer prior** (:attr:`RatingSystem.newcomer_prior` names the parameters);
* its **display rating** (:meth:`RatingSystem.display_rating`);
* its **performance model** for predictions (:meth:`RatingSystem.performance_model`);
* its update rule, one round at a time (:meth:`RatingSystem.round_update`).

The :class:`~podium.rater.Rater` does the bookkeeping common to all systems
(handles, newcomers, event log, checkpoints).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self, TypeVar

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.explain import Explanation
from podium.core.state import grow
from podium.errors import ConfigError, ContestError

__all__ = [
    "RatingSystem",
    "SystemState",
    "ArrayState",
    "StateField",
    "player_array",
    "whole_array",
    "int_scalar",
    "NoPlayerState",
    "RoundInput",
    "RoundOutput",
    "PerformanceModel",
    "PerformanceKind",
    "ELO_BETA",
    "Check",
    "param",
    "check_param",
    "Preset",
    "RoundBatch",
    "RoundsOutput",
    "batch_teams",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
T = TypeVar("T")

#: Spread of the rating *difference* in Elo's 400-point logistic formula:
#: ``400 (pi / sqrt 3) / ln 10`` (about 315.09).  With it the logistic win
#: probability of unit variance is ``1 / (1 + 10^((r_j - r_i) / 400))``.
ELO_BETA: float = 400.0 * (math.pi / math.sqrt(3.0)) / math.log(10.0)


# ====================================================================== parameters
#: The checks :func:`param` knows (see :func:`check_param` for what each accepts).
Check = Literal[
    "finite", "positive", "nonnegative", "positive_or_inf", "nonnegative_or_inf",
    "open_unit", "positive_int", "positive_int_or_none", "bool", "number_or_none",
]


def _real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _integer(v: object) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


#: check -> (test, what the value must be); the error reads ``"{name} must be {what}"``.
_CHECKS: dict[str, tuple[Any, str]] = {
    "finite": (lambda v: _real(v) and math.isfinite(v), "finite"),
    "positive": (lambda v: _real(v) and math.isfinite(v) and v > 0,
                 "a finite positive number"),
    "nonnegative": (lambda v: _real(v) and math.isfinite(v) and v >= 0,
                    "a finite number >= 0"),
    "positive_or_inf": (lambda v: _real(v) and v > 0, "positive (math.inf allowed)"),
    "nonnegative_or_inf": (lambda v: _real(v) and v >= 0, ">= 0 (math.inf allowed)"),
    "open_unit": (lambda v: _real(v) and 0.0 < v < 1.0, "a number in (0, 1)"),
    "positive_int": (lambda v: _integer(v) and v >= 1, "a positive integer"),
    "positive_int_or_none": (lambda v: v is None or (_integer(v) and v >= 1),
                             "a positive integer or None"),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "number_or_none": (lambda v: v is None or (_real(v) and not math.isnan(v)),
                       "a number or None"),
}


def check_param(name: str, value: Any, check: Check) -> None:
    """Raise :class:`~podium.errors.ConfigError` unless ``value`` passes ``check``.

    Checks: ``"finite"``; ``"positive"`` (finite, > 0); ``"nonnegative"`` (finite,
    >= 0); ``"positive_or_inf"`` / ``"nonnegative_or_inf"`` (``math.inf`` allowed,
    NaN not); ``"open_unit"`` (in (0, 1)); ``"positive_int"`` and
    ``"positive_int_or_none"``; ``"bool"``; ``"number_or_none"`` (not NaN).  Numbers
    are real numbers other than ``bool`` (NumPy scalars included).

    Raises
    ------
    ConfigError
        ``"{name} must be {what}, got {value!r}"``.
    """
    test, what = _CHECKS[check]
    if not test(value):
        raise ConfigError(f"{name} must be {what}, got {value!r}")


def param(default: T, check: Check | None = None) -> T:
    """A system parameter with a default and a validity check (run by
    :meth:`RatingSystem.__post_init__`), for use in a system's dataclass body::

        sig_noob: float = param(350.0, "positive")
    """
    meta = {} if check is None else {"check": check}
    out: T = dataclasses.field(default=default, metadata=meta)
    return out


# ====================================================================== state
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

    def truncate_players(self, n: int) -> None:
        """Forget players ``n..`` that a failed round made room for (the Rater calls it
        when a round raises): their rows are refilled with the newcomer prior when
        :meth:`ensure_players` grows the state again.  The default lowers the count
        ``n`` kept by :class:`ArrayState` and the factor pool."""
        if getattr(self, "n", 0) > n:
            self.n = n


@dataclass(frozen=True)
class StateField:
    """One named entry of an :class:`ArrayState` (and of its checkpoint image).

    Attributes
    ----------
    name:
        Attribute name, also the array's name in :meth:`ArrayState.to_arrays`.
    kind:
        ``"player"``: one row per player (grown geometrically, the first ``n`` rows
        valid and saved); ``"array"``: a whole array saved as it is (e.g. a table of
        pairs); ``"int"``: an integer saved as a one-element ``int64`` array.
    dtype:
        The array's dtype (``"player"`` and ``"array"``).
    fill:
        ``"player"``: a newcomer's value, a number or the name of an attribute of the
        state (e.g. a constructor parameter) holding it.
    optional:
        ``"int"``: the value may be ``None`` (saved as an empty array).
    required:
        ``"int"``: loading fails without it; ``False`` keeps the default (0).
    """

    name: str
    kind: Literal["player", "array", "int"]
    dtype: type[np.generic] = np.float64
    fill: float | str = 0.0
    optional: bool = False
    required: bool = True


def player_array(name: str, dtype: type[np.generic] = np.float64,
                 fill: float | str = 0.0) -> StateField:
    """A per-player array whose newcomer rows hold ``fill``."""
    return StateField(name, "player", dtype, fill)


def whole_array(name: str, dtype: type[np.generic] = np.float64) -> StateField:
    """An array saved and copied whole (not indexed by player)."""
    return StateField(name, "array", dtype)


def int_scalar(name: str, *, optional: bool = False, required: bool = True) -> StateField:
    """An integer (a counter, a time); ``optional`` allows ``None``."""
    return StateField(name, "int", np.int64, optional=optional, required=required)


class ArrayState(SystemState):
    """A :class:`SystemState` declared field by field.

    A subclass lists its entries in :attr:`FIELDS` (in checkpoint order) and the
    names of its constructor arguments in :attr:`PARAMS`; :meth:`ensure_players`,
    :meth:`to_arrays`, :meth:`from_arrays` and :meth:`copy` follow from them:

    * ``"player"`` fields grow with the players (new rows: the field's ``fill``) and
      are saved as their first ``n`` rows;
    * ``"array"`` fields are saved whole; ``"int"`` fields as one-element ``int64``
      arrays (an ``optional`` one that is ``None`` as an empty array);
    * the constructor arguments, when there are any, are saved last as one array
      named :attr:`PARAMS_KEY` (``"prior"``).

    ``n`` (the number of players) is an attribute of every state; it is saved only
    when a field named ``"n"`` is declared, and otherwise restored as the length of
    the player arrays.  A state with more structure (ragged lists, a pool) extends
    the derived methods and calls ``super()``.
    """

    FIELDS: ClassVar[tuple[StateField, ...]] = ()
    PARAMS: ClassVar[tuple[str, ...]] = ()
    PARAMS_KEY: ClassVar[str] = "prior"

    def __init__(self, *params: float) -> None:
        if len(params) != len(self.PARAMS):
            raise TypeError(
                f"{type(self).__name__} takes {len(self.PARAMS)} argument(s) "
                f"({', '.join(self.PARAMS)}), got {len(params)}"
            )
        for name, value in zip(self.PARAMS, params, strict=True):
            setattr(self, name, value)
        self.n = 0
        for f in self.FIELDS:
            if f.kind == "int":
                setattr(self, f.name, None if f.optional else 0)
            else:
                setattr(self, f.name, np.zeros(0, dtype=f.dtype))

    def _fill(self, f: StateField) -> float:
        return float(getattr(self, f.fill)) if isinstance(f.fill, str) else f.fill

    def ensure_players(self, n: int) -> None:
        """Make room for players ``0..n-1``; new rows of every ``"player"`` field hold
        its ``fill``."""
        if n <= self.n:
            return
        for f in self.FIELDS:
            if f.kind == "player":
                arr = grow(getattr(self, f.name), n)
                arr[self.n:n] = self._fill(f)
                setattr(self, f.name, arr)
        self.n = n

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The declared fields in order (player fields: first ``n`` rows), then the
        constructor arguments as ``"prior"`` (when there are any)."""
        out: dict[str, np.ndarray] = {}
        for f in self.FIELDS:
            v = getattr(self, f.name)
            if f.kind == "int":
                out[f.name] = (np.zeros(0, dtype=np.int64) if v is None
                               else np.array([v], dtype=np.int64))
            elif f.kind == "player":
                out[f.name] = v[: self.n].copy()
            else:
                out[f.name] = v.copy()
        if self.PARAMS:
            out[self.PARAMS_KEY] = np.array([getattr(self, p) for p in self.PARAMS])
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> Self:
        """Inverse of :meth:`to_arrays`.

        Raises
        ------
        KeyError, ValueError
            When an entry is missing or the player arrays disagree in length (the
            checkpoint readers turn these into :class:`~podium.errors.CheckpointError`).
        """
        params = [float(x) for x in np.asarray(d[cls.PARAMS_KEY]).reshape(-1)] \
            if cls.PARAMS else []
        st = cls(*params)
        rows: int | None = None
        for f in cls.FIELDS:
            if f.kind == "int":
                if f.name not in d and not f.required:
                    continue
                a = np.asarray(d[f.name]).reshape(-1)
                if a.size == 0 and not f.optional:
                    raise ValueError(f"state entry {f.name!r} is empty")
                setattr(st, f.name, int(a[0]) if a.size else None)
                continue
            arr = np.array(d[f.name], dtype=f.dtype)
            if f.kind == "player":
                if rows is not None and arr.shape[0] != rows:
                    raise ValueError(
                        f"state entry {f.name!r} has {arr.shape[0]} rows, not {rows}"
                    )
                rows = arr.shape[0]
            setattr(st, f.name, arr)
        if not any(f.name == "n" for f in cls.FIELDS):
            st.n = rows or 0
        return st

    def copy(self) -> Self:
        """A deep copy: every array copied, every integer and parameter kept."""
        st = type(self)(*[getattr(self, p) for p in self.PARAMS])
        for f in self.FIELDS:
            v = getattr(self, f.name)
            setattr(st, f.name, v if f.kind == "int" else v.copy())
        st.n = self.n
        return st


class NoPlayerState(ArrayState):
    """The state of a system that keeps nothing per player beyond ``(mu, sigma)``
    (which the :class:`~podium.rater.Rater` holds): it only counts the players."""

    FIELDS = (int_scalar("n", required=False),)


# ====================================================================== rounds
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


# ====================================================================== predictions
PerformanceKind = Literal["logistic", "gaussian"]


@dataclass(frozen=True)
class PerformanceModel:
    """How one system's players perform in a round, for
    :func:`podium.predict.win_probabilities`.

    Attributes
    ----------
    kind:
        ``"logistic"`` or ``"gaussian"``: the shape ``F`` of the performance difference.
    variance:
        Per-player performance variance ``v_i`` (same order as the players given).
    description:
        One line saying where the model comes from (shown by the API).
    """

    kind: PerformanceKind
    variance: FloatArray
    description: str


# ====================================================================== systems
#: The parameter that scales the uncertainty in a lower-confidence-bound display rating.
_DISPLAY_SIGMAS = "display_sigmas"


@dataclass(frozen=True)
class RatingSystem(ABC):
    """Base class: a frozen dataclass of hyper-parameters plus the update rule."""

    name: ClassVar[str] = "abstract"

    #: ``(mu, sigma)`` of the newcomer prior: each the name of a parameter or a number.
    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("mu_noob", "sig_noob")
    #: ``None``: the display rating is ``mu``; else the parameter ``c`` of the lower
    #: confidence bound ``mu - display_sigmas * (sigma - c)`` (``mu`` when ``sigma = c``).
    display_center: ClassVar[str | None] = None
    #: How the system rates a team round (docs/teams.md); ``None``: it refuses them.
    team_rule: ClassVar[str | None] = None
    #: Parameters added later -> the value saved ratings had (see ``systems.saved_params``).
    params_added_later: ClassVar[dict[str, Any]] = {}

    def __post_init__(self) -> None:
        """Run the check of every parameter declared with :func:`param`.

        Raises
        ------
        ConfigError
            For the first parameter that fails its check.
        """
        for f in dataclasses.fields(self):
            check = f.metadata.get("check")
            if check is not None:
                check_param(f.name, getattr(self, f.name), check)

    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        """``(mu, sigma)`` of a player's prior before the first round.

        ``contest`` is the player's first contest (some systems' initial rating
        depends on its time); ``None`` asks for the system's default prior.  The
        default reads :attr:`newcomer_prior`.
        """
        mu, sigma = self.newcomer_prior
        return (float(getattr(self, mu)) if isinstance(mu, str) else float(mu),
                float(getattr(self, sigma)) if isinstance(sigma, str) else float(sigma))

    @abstractmethod
    def make_state(self) -> SystemState:
        ...

    @abstractmethod
    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """Rate one round in place; return each participant's new rating and performance."""

    def display_rating(
        self, mu: npt.NDArray[np.float64], sigma: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """The number shown to players: ``mu``, or with :attr:`display_center` set,
        ``mu - display_sigmas * (sigma - center)``."""
        if self.display_center is None:
            return np.asarray(mu, dtype=np.float64)
        center = getattr(self, self.display_center)
        k = getattr(self, _DISPLAY_SIGMAS)
        out: FloatArray = np.asarray(mu) - k * (np.asarray(sigma) - center)
        return out

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
        teams = contest.teams if batch.team_round[r] else None
        if teams is not None and self.team_rule is None:
            raise ContestError(
                f"system {self.name!r} does not rate team rounds (a team has more than one "
                "member or a member weight is not 1)", contest=contest.label)
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
            team_offsets=None if teams is None else teams.offsets,
            weight=None if teams is None else teams.weight,
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

    def performance_model(
        self, sigma: FloatArray, played: IntArray, weight: float
    ) -> PerformanceModel:
        """The performance model of a proposed contest of weight ``weight`` for players
        with uncertainty ``sigma`` who played ``played`` rounds before.

        The default (systems without a model of their own, e.g. Elo-R, EloSRM, the
        pairwise Elo family): the logistic with ``v = sigma^2 + beta_0^2 / w``,
        ``beta_0^2 = ELO_BETA^2 / 2`` -- Elo's 400-point formula for two certain
        players, widened by the players' uncertainties.
        """
        beta0_2 = ELO_BETA**2 / 2.0
        return PerformanceModel(
            "logistic", sigma**2 + beta0_2 / weight,
            f"{type(self).__name__}: generic fallback (logistic): v = sigma^2 + 315.09^2 / "
            "(2 w), Elo's 400-point formula widened by the uncertainties",
        )

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """Why participant ``position`` of ``rnd`` got its new rating, from ``state`` as it
        was just before the round (left unchanged).  This default re-runs
        :meth:`round_update` on a copy and reports the rating before and after; systems
        override it with their equations and terms (:mod:`podium.core.explain`)."""
        from podium.systems._explain import check_position, explanation, rerun

        k = check_position(rnd, position)
        return explanation(self, rnd, k, rerun(self, state, rnd), notes=(
            f"{type(self).__name__} does not break its update into terms",))

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
