"""The one interface every rating system implements: :class:`RatingSystem`.

A system is a frozen dataclass of named hyper-parameters (defaults equal the
reference implementation's).  It owns everything about itself:

* its **parameters** and their validation (:func:`~podium.systems.base.params.param`
  declares a field with a check; :meth:`RatingSystem.__post_init__` runs every check);
* its **per-player state** (a :class:`~podium.systems.base.state.SystemState`; most are
  an :class:`~podium.systems.base.state.ArrayState` declared field by field);
* its **newcomer prior** (:attr:`RatingSystem.newcomer_prior` names the parameters);
* its **display rating** (:meth:`RatingSystem.display_rating`);
* its **performance model** for predictions (:meth:`RatingSystem.performance_model`);
* its update rule, one round at a time (:meth:`RatingSystem.round_update`), and the
  **hooks** through which a subclass changes it (:attr:`RatingSystem.hooks`);
* whether it rates a round in which every side tied (the parameter every system has,
  :attr:`RatingSystem.all_tied`; :meth:`RatingSystem.skips_round`).

The :class:`~podium.rater.Rater` does the bookkeeping common to all systems
(handles, newcomers, event log, checkpoints).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.explain import Explanation
from podium.errors import ConfigError, ContestError
from podium.systems.base.params import check_by_annotation, check_param
from podium.systems.base.performance import ELO_BETA, PerformanceModel
from podium.systems.base.rounds import RoundBatch, RoundInput, RoundOutput, RoundsOutput
from podium.systems.base.state import SystemState

__all__ = ["RatingSystem"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

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
    #: Parameters added later -> the value saved ratings had (see ``systems.saved_params``):
    #: a checkpoint or store saved before ``all_tied`` existed skipped every all-tied round.
    params_added_later: ClassVar[dict[str, Any]] = {"all_tied": "skip"}
    #: The declared hooks: the methods (and class attributes) through which a subclass
    #: changes this system's update.  A system with a compiled path (a loop over many
    #: rounds that repeats the update in compiled code) takes it only while none of
    #: them is overridden (:meth:`overridden_hooks`); a subclass that changes the update
    #: any other way must override one of them or :meth:`rate_rounds` itself.
    hooks: ClassVar[tuple[str, ...]] = ()

    #: What a round in which every side tied (a draw) does: ``"rate"`` (default) rates
    #: it as the system's model reads a tie; ``"skip"`` changes nothing, as the
    #: reference implementations (multi-skill, elo-mmr-py) do.  Every system has this
    #: parameter (keyword-only, listed first); docs/systems.md, "Draws", says what a
    #: draw does in each.
    all_tied: str = dataclasses.field(
        default="rate", kw_only=True, metadata={"check": "rate_or_skip"})

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
                check_param(f.name, getattr(self, f.name), check, f.metadata.get("lo"),
                            f.metadata.get("hi"))
            else:  # a plain field: the check its type names (a float is finite, ...)
                check_by_annotation(f.name, getattr(self, f.name), f.type)

    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        """``(mu, sigma)`` of a player's prior before the first round.

        ``contest`` is the player's first contest (some systems' initial rating
        depends on its time); ``None`` asks for the system's default prior.  The
        default reads :attr:`newcomer_prior`.
        """
        mu, sigma = self.newcomer_prior
        return (float(getattr(self, mu)) if isinstance(mu, str) else float(mu),
                float(getattr(self, sigma)) if isinstance(sigma, str) else float(sigma))

    def skip_reason(self, contest: Contest) -> str | None:
        """Why the Rater leaves ``contest`` unrated (nothing changes, nobody is created),
        or ``None`` when it rates it.

        A round of one side (one player or one team) has no result: ``"one side
        only"``, always.  A round of two or more sides in which every side tied
        (:attr:`Contest.is_outcome_free <podium.core.contest.Contest.is_outcome_free>`:
        a draw) is left unrated only with ``all_tied="skip"``: ``"everybody tied"``.
        Every other round is rated.
        """
        if not contest.is_outcome_free:
            return None
        if contest.n_teams < 2:
            return "one side only"
        return "everybody tied" if self.all_tied == "skip" else None

    def skips_round(self, contest: Contest) -> bool:
        """Whether the Rater leaves ``contest`` unrated (:meth:`skip_reason` says why)."""
        return contest.is_outcome_free and self.skip_reason(contest) is not None

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

    # ------------------------------------------------------------------ between rounds
    @property
    def has_time_drift(self) -> bool:
        """Whether :meth:`drift` changes a rating with time (default ``False``)."""
        return False

    def drift(self, mu: npt.ArrayLike, sigma: npt.ArrayLike,
              elapsed_seconds: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """The belief ``(mu, sigma)`` of players rated ``(mu, sigma)`` after their last
        round, ``elapsed_seconds`` later: the system's *time drift*.

        This is the prior the system's round update starts from for a player who plays
        ``elapsed_seconds`` after the last round, before the round's own per-round noise
        (which every participant of a round gets, however recently it played:
        Elo-MMR's ``w sig_limit^2``, Glicko's and TrueSkill's ``sig_drift``, openskill's
        ``tau``).  A system whose update widens ``sigma`` with the time since a player's
        last round overrides it, and its update uses the same computation, so that a
        rating read "as of" a time is exactly the prior the update would take then.
        The default: no time drift, the belief is unchanged.
        """
        return (np.asarray(mu, dtype=np.float64).copy(),
                np.asarray(sigma, dtype=np.float64).copy())

    def as_of_bound(self, mu: npt.ArrayLike, sigma_min: float,
                    elapsed_min: float) -> FloatArray | None:
        """An upper bound of the display rating *as of a time* (:meth:`drift`, then
        :meth:`display_rating`) of every player whose stored rating has a mean at most
        ``mu`` (per entry) and an uncertainty at least ``sigma_min``, and whose last
        round is at least ``elapsed_min`` seconds before that time; ``None`` when the
        system gives none (the default).

        A leaderboard in as-of order (:func:`podium.store.asof.ranked_page`) walks the
        players by ``mu``, best first, and stops once this bound of the next one falls
        below the page; without a bound it reads every player.  A system that
        overrides it must make it hold for the floating-point values it computes, and
        so says that drift never raises a display rating (the bound of a player's own
        ``mu`` and ``sigma`` with no time elapsed is its stored display rating).
        """
        return None

    def season_reset(self, mu: FloatArray, sigma: FloatArray, played: IntArray, keep: float,
                     widen: float) -> tuple[FloatArray, FloatArray]:
        """The soft reset at the start of a season: each player's new ``(mu, sigma)``.

        ``mu`` is shrunk toward the newcomer prior's mean ``mu_0`` by the factor ``keep``
        and the variance is widened toward the newcomer prior's ``sigma_0^2`` by the
        share ``widen`` (never narrowed)::

            mu' = mu_0 + keep (mu - mu_0)
            sigma'^2 = sigma^2 + widen (sigma_0^2 - sigma^2)   when sigma < sigma_0

        ``keep = 1, widen = 0`` changes nothing; ``keep = 0, widen = 1`` makes everybody
        a newcomer.  ``played`` is each player's number of rated rounds (a system whose
        displayed rating depends on it uses it).  A system whose ``mu`` or ``sigma`` means
        something else overrides this (Codeforces' integer ratings).  The system's
        per-player state takes the new belief through
        :meth:`~podium.systems.base.state.SystemState.reset_belief`.
        """
        m, s0 = self.newcomer(None)
        mu = np.asarray(mu, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        new_mu = m + keep * (mu - m)
        var = sigma * sigma
        widened = np.sqrt(var + widen * (s0 * s0 - var))
        new_sigma = np.where(sigma < s0, widened, sigma)
        return new_mu, new_sigma

    def overridden_hooks(self, owner: type[RatingSystem]) -> tuple[str, ...]:
        """The hooks declared by ``owner`` (:attr:`hooks`) that this system's class
        overrides: a method or class attribute that is not ``owner``'s own.

        ``owner`` is the class whose compiled path reproduces its update; the path is
        taken only when this returns ``()``.
        """
        cls = type(self)
        return tuple(h for h in owner.hooks if getattr(cls, h) != getattr(owner, h))

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

    def draw_margin(self, n_players: int) -> float | None:
        """The draw margin of this system's performance model for a match of
        ``n_players`` players: two sides draw when their performances lie within it of
        each other (:func:`podium.outcomes.draw_probability`); ``None`` when the model
        gives a draw no probability of its own.

        The default is ``None``: the Elo-MMR family, Elo-R, Glicko, BAR, Codeforces,
        TopCoder, EloSRM and the pairwise family *rate* a draw (a tie term, half a
        win), but their performances are continuous and a tie has probability 0.
        TrueSkill overrides it (its factor graph's ``2 eps``); openskill's systems
        answer openskill's own formula (:func:`podium.predict.outcome_probabilities`).
        """
        return None

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """Why participant ``position`` of ``rnd`` got its new rating, from ``state`` as it
        was just before the round (left unchanged).  This default re-runs
        :meth:`round_update` on a copy and reports the rating before and after; systems
        override it with their equations and terms (:mod:`podium.core.explain`)."""
        from podium.systems.base.explain import check_position, explanation, rerun

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
