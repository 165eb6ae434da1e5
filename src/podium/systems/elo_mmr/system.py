"""Elo-MMR ([EbtekarLiu2021]): Elo-MMR(rho), Elo-MMchi, Elo-MMR(inf), subsampled variants.

One round (Algorithm 1):

1. every participant is diffused by ``gamma`` (Algorithm 2, pseudodiffusion with
   transfer speed ``rho``; ``rho = inf`` or the Gaussian variant collapse the
   posterior to one normal);
2. each participant becomes an opponent term ``(mu, delta = sqrt(sigma^2 + beta^2))``;
3. every performance is solved as the zero of ``Q_i`` (Theorem 3.2) over *all*
   terms (exact systems; see :func:`podium.core.numerics.performance_zeros` for how
   that avoids N^2 work) or over a window of nearby merged terms (``-fast``);
4. each performance ``(p, beta)`` is added to its player's posterior and the new
   rating solved from Eq. 6; the uncertainty follows Eq. 8.

A team round (``rnd.team_offsets`` set) goes through :meth:`EloMMR.team_update`: the
same steps with one term per team in step 3 and, in step 4, each member's
measurement from conditioning on the team sum (docs/teams.md).

Names, parameters and defaults follow multi-skill (the Rust reference), so the
numbers agree with ``elo-mmr-py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from podium.core.explain import Explanation
from podium.core.numerics import GAUSSIAN, LOGISTIC, TANH_MULTIPLIER
from podium.errors import ConfigError
from podium.systems.base import (
    RATING_RANGE,
    PerformanceKind,
    PerformanceModel,
    RatingSystem,
    RoundBatch,
    RoundInput,
    RoundOutput,
    RoundsOutput,
    SystemState,
    param,
)
from podium.systems.base.factor_pool import FactorPoolState
from podium.systems.base.two_phase_teams import (
    check_teams,
    member_measurements,
    solve_center,
    standings_variance,
    team_places,
    team_terms,
    uncertain_measurements,
)
from podium.systems.elo_mmr.small_rounds import (
    BATCH_AFTER,
    BATCH_MAX_PLAYERS,
    DIRECT_GROUPS,
    RoundsParams,
    add_kernel_ready,
    add_small_round,
    rate_small_rounds,
    rounds_params,
)

if TYPE_CHECKING:
    from podium.core.contest import Contest
    from podium.core.state import PlayerTable

__all__ = ["EloMMR", "EloMMRState", "round_performance_model"]

FloatArray = npt.NDArray[np.float64]



class EloMMRState(FactorPoolState):
    """Struct-of-arrays posterior of every player.

    Per player: the normal factor ``(nf_mu, nf_w)`` (mean and weight ``1/var``),
    a lazy multiplier ``scale`` of its logistic factors' output weights, running
    sums of ``w_arg * w_out`` and ``w_out`` (stored units), and the location of its
    logistic factors in a shared pool (``f_mu`` = past performance ``p_k``,
    ``f_warg``, ``f_wout``; see :func:`~podium.systems.elo_mmr.kernels.reserve`).
    The pool bookkeeping (growth, compaction, checkpoints, copies) is
    :class:`~podium.systems.base.factor_pool.FactorPoolState`'s.

    Parameters
    ----------
    mu_noob, sig_noob:
        Newcomer prior.
    """

    EXTRA_FIELDS: ClassVar[tuple[tuple[str, float], ...]] = (
        ("scale", 1.0), ("sum_aw", 0.0), ("sum_w", 0.0),
    )
    scale: FloatArray
    sum_aw: FloatArray
    sum_w: FloatArray

    @cached_property
    def add_status(self) -> npt.NDArray[np.int8]:
        """Scratch for the solver statuses of a ``Rater.add`` round
        (:meth:`EloMMR.rate_small_round`), kept rather than allocated per round."""
        return np.zeros((2, BATCH_MAX_PLAYERS), dtype=np.int8)

    def factors(self, i: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Player ``i``'s logistic factors (p_k, w_arg, actual w_out), oldest first."""
        b, e = self.block(i)
        return (self.f_mu[b:e].copy(), self.f_warg[b:e].copy(),
                self.f_wout[b:e] * self.scale[i])


@dataclass(frozen=True)
class EloMMR(RatingSystem):
    """Elo-MMR and its variants ([EbtekarLiu2021]), with multi-skill's parameters and defaults.

    Parameters
    ----------
    weight_limit:
        Weight of a round for an experienced player (default 0.2).  With
        ``sig_limit`` it sets beta = ``sig_limit * sqrt(1 + 1/w)`` and the drift
        gamma = ``sig_limit * sqrt(w)`` per round.
    noob_delay:
        Extra weight multipliers for a player's first rounds (``noob_delay[n]``
        applies to the round after ``n`` earlier ones; empty: none).
    sig_limit:
        The uncertainty a regular player's sigma converges to (default 80).
    drift_per_day:
        Extra variance per day between a player's rounds (default 0).
    split_ties:
        Count a tie as half a win plus half a loss instead of a win plus a loss.
    rho:
        Transfer speed of the pseudodiffusion (Algorithm 2; multi-skill's
        ``transfer_speed``; default 1).  ``math.inf`` gives the memoryless
        Elo-MMR(inf); ignored by the Gaussian variant.
    variant:
        ``"logistic"`` (Elo-MMR) or ``"gaussian"`` (Elo-MMchi).
    subsample_size:
        ``None``: every opponent is used (exact).  Else each player's
        performance uses at most this many merged opponent terms nearest its
        rating (Sec. 5.3; multi-skill's fast systems use 100).
    subsample_bucket:
        Width of the (mu, sigma) buckets in which opponents are merged when
        subsampling (2.0 in multi-skill's fast systems).
    max_history:
        ``None``: keep every logistic factor (exact).  Else fold the oldest
        into the normal factor beyond this many (history compression, Sec. 5.3;
        100 in the fast systems).
    history_tolerance:
        Exact systems keep and, by default (0), evaluate every logistic factor.
        A positive value lets the rating solver skip the oldest factors whose
        total output weight is at most this fraction of the player's total,
        which moves a rating by at most ``history_tolerance * sum(w_out) / w0``
        (1e-13 saves 8% of the time on the Codeforces history and moves no
        rating by more than 1e-10).
    perf_ceiling:
        Default upper bound on performances (a contest's own ceiling wins);
        ``None``: none.  The Gaussian variant ignores ceilings, as the reference.
    mu_noob, sig_noob:
        Newcomer prior (1500, 350).
    display_sigmas:
        Display rating = ``mu - display_sigmas * (sigma - sig_limit)`` (3).
    team_perf_uncertainty:
        Team rounds only (docs/teams.md, T7): ``u`` in ``Var[P_T | standings] = u (1 -
        1/pi) delta_T^2 / (T - 1)``, the uncertainty of the team performance that each
        member's measurement carries (1: the exact value for an even match of two
        Gaussian teams, shrinking as more teams pin ``P_T`` down); 0 conditions on
        ``P_T`` as if it were exact (T4-T5).  Individual rounds are unaffected.
    """

    name: ClassVar[str] = "mmr"
    team_rule: ClassVar[str | None] = (
        "two-phase: team performance from the team terms (weighted sums), then each member "
        "conditioned on the team sum (docs/teams.md)"
    )

    weight_limit: float = param(0.2, "positive")
    noob_delay: tuple[float, ...] = ()
    sig_limit: float = param(80.0, "positive", lo=1.0)
    drift_per_day: float = param(0.0, "nonnegative")
    split_ties: bool = False
    rho: float = param(1.0, "nonnegative_or_inf", hi=1000.0)
    variant: Literal["logistic", "gaussian"] = "logistic"
    subsample_size: int | None = param(None, "positive_int_or_none")
    subsample_bucket: float = param(2.0, "positive")
    max_history: int | None = param(None, "positive_int_or_none")
    history_tolerance: float = 0.0
    perf_ceiling: float | None = param(None, "number_or_none")
    mu_noob: float = param(1500.0, "finite", **RATING_RANGE)
    sig_noob: float = param(350.0, "positive")
    display_sigmas: float = param(3.0, "finite")
    team_perf_uncertainty: float = param(1.0, "nonnegative")

    display_center: ClassVar[str | None] = "sig_limit"
    #: A round is :meth:`diffuse` -> :meth:`exact_performance` or
    #: :meth:`subsampled_performance` -> :meth:`absorb` (:meth:`round_update`; a team
    #: round :meth:`team_update`), shown with :meth:`display_rating`.  The compiled
    #: loops over small rounds repeat exactly these steps, so they are taken only while
    #: no subclass overrides one of them (:meth:`~RatingSystem.overridden_hooks`).
    hooks: ClassVar[tuple[str, ...]] = (
        "round_update", "team_update", "diffuse", "exact_performance",
        "subsampled_performance", "absorb", "display_rating", "display_center", "make_state",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant not in ("logistic", "gaussian"):
            raise ConfigError(f"variant must be 'logistic' or 'gaussian', got {self.variant!r}")
        delay = tuple(float(x) for x in self.noob_delay)
        for x in delay:
            if not (math.isfinite(x) and x > 0):
                raise ConfigError(f"noob_delay entries must be finite and positive, got {x!r}")
        object.__setattr__(self, "noob_delay", delay)
        if not (0.0 <= self.history_tolerance <= 1e-6):
            raise ConfigError(
                f"history_tolerance must be in [0, 1e-6], got {self.history_tolerance!r}"
            )

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> EloMMR:
        """As :meth:`RatingSystem.from_params`; also accepts multi-skill's name
        ``transfer_speed`` for ``rho``."""
        params = dict(params)
        if "transfer_speed" in params:
            if "rho" in params:
                raise ConfigError("give rho or transfer_speed (the same parameter), not both")
            params["rho"] = params.pop("transfer_speed")
        system = super().from_params(params)
        assert isinstance(system, EloMMR)
        return system

    # ------------------------------------------------------------------ interface
    def make_state(self) -> EloMMRState:
        return EloMMRState(self.mu_noob, self.sig_noob)

    @property
    def has_time_drift(self) -> bool:
        """Whether ``drift_per_day`` is positive."""
        return self.drift_per_day > 0.0

    def drift(self, mu: npt.ArrayLike, sigma: npt.ArrayLike,
              elapsed_seconds: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``sigma^2 + drift_per_day * days`` (:func:`K.drift_variance`, the time part of
        the diffusion's ``gamma^2`` that :func:`K.round_weights` adds before a round);
        ``mu`` does not move (Theorem 4.1, rating preservation)."""
        import podium.systems.elo_mmr.kernels as K

        sg = np.ascontiguousarray(sigma, dtype=np.float64)
        dt = np.maximum(np.asarray(elapsed_seconds, dtype=np.float64), 0.0)
        dt = np.ascontiguousarray(np.broadcast_to(dt, sg.shape), dtype=np.float64)
        return (np.asarray(mu, dtype=np.float64).copy(),
                K.drifted_sigmas(sg.ravel(), float(self.drift_per_day),
                                 dt.ravel()).reshape(sg.shape))

    def as_of_bound(self, mu: npt.ArrayLike, sigma_min: float,
                    elapsed_min: float) -> FloatArray | None:
        """The display rating of ``mu`` drifted from ``(sigma_min, elapsed_min)``.

        :meth:`drift` keeps ``mu`` and widens ``sigma^2`` by ``drift_per_day * days``:
        the drifted ``sigma`` grows with ``sigma`` and with the time (so does each
        rounded operation of :func:`K.drifted_sigmas`), and the display rating ``mu -
        display_sigmas (sigma - sig_limit)`` (3) grows with ``mu`` and, for
        ``display_sigmas >= 0``, falls as ``sigma`` grows.  So this bounds the as-of
        display rating of every player rated at most ``mu`` with ``sigma >= sigma_min``
        and ``elapsed_min`` seconds or more since the last round.  ``None`` (no bound)
        when ``display_sigmas < 0`` (drift then raises the display rating) or for a
        subclass that changes :meth:`drift` or :meth:`display_rating`.
        """
        cls = type(self)
        if (self.display_sigmas < 0 or cls.drift is not EloMMR.drift
                or cls.display_rating is not EloMMR.display_rating
                or cls.display_center != EloMMR.display_center):
            return None
        m = np.asarray(mu, dtype=np.float64)
        _, sg = self.drift(m, np.full(m.shape, float(sigma_min)),
                           np.full(m.shape, max(float(elapsed_min), 0.0)))
        return np.asarray(self.display_rating(m, sg), dtype=np.float64)

    def performance_model(
        self, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float
    ) -> PerformanceModel:
        """The system's own round: with ``w = weight * weight_limit`` (times
        ``noob_delay[n]`` after ``n`` earlier rounds), ``beta = sqrt((1 + 1/w) sig_limit^2 +
        drift_per_day / w)`` and ``gamma = sqrt(w) sig_limit``, ``v = sigma^2 + gamma^2 +
        beta^2``; logistic for Elo-MMR, normal for Elo-MMchi.  No days of drift elapse
        before a proposed contest."""
        kind: PerformanceKind = "gaussian" if self.variant == "gaussian" else "logistic"
        return round_performance_model(
            self, sigma, played, weight, np.asarray(self.noob_delay, dtype=np.float64),
            self.drift_per_day, kind,
        )

    @property
    def collapses(self) -> bool:
        """True for the memoryless variants (Elo-MMR(inf), Elo-MMchi)."""
        return self.variant == "gaussian" or math.isinf(self.rho)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        from podium.core.numerics import status_warnings

        assert isinstance(state, EloMMRState)
        if rnd.team_offsets is not None:
            assert rnd.weight is not None
            return self.team_update(state, rnd, rnd.team_offsets, rnd.weight)
        c = rnd.contest
        # 1. pseudodiffusion (Algorithm 2)
        beta, sig = self.diffuse(state, rnd)
        # 2. opponent terms (mu, delta)
        delta = np.hypot(sig, beta)
        kind = GAUSSIAN if self.variant == "gaussian" else LOGISTIC
        # 3. performances (Theorem 3.2)
        if self.subsample_size is None:
            perf, status = self.exact_performance(kind, rnd.mu, delta, rnd.lo)
        else:
            perf, status = self.subsampled_performance(kind, rnd.mu, delta, rnd.lo)
        warnings = status_warnings(status, c.label, "performance")
        # 4. posterior update (Eq. 6-8)
        return self.absorb(state, rnd, kind, perf, beta, sig, warnings)

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """Participant ``position``'s update, step by step: the diffusion, the performance
        with its terms of ``Q_i`` (Theorem 3.2; for a subsampled system the window the
        solver saw), the rating with its terms of Eq. 6 and weights of Eq. 7, and the
        uncertainty (Eq. 8).  See :mod:`podium.systems.elo_mmr.explain`; a team round is
        explained by its rating before and after only."""
        from podium.systems.elo_mmr.explain import explain_elo_mmr

        assert isinstance(state, EloMMRState)
        return explain_elo_mmr(self, state, rnd, position)

    def team_update(self, state: EloMMRState, rnd: RoundInput, offsets: npt.ArrayLike,
                    weight: npt.ArrayLike) -> RoundOutput:
        """Rate a team round (docs/teams.md, "Elo-MMR and Elo-R").

        Phase 0 diffuses every member as :meth:`round_update` does (Algorithm 2, each
        member's ``beta_i, gamma_i``).  Phase 1 solves each team's performance ``P_T``
        from Theorem 3.2 over one term per team, ``mu_T = sum_i w_i mu_i`` and
        ``delta_T^2 = sum_i w_i^2 delta_i^2`` (exact or subsampled as the variant).
        Phase 2 conditions each member on the team sum: the measurement
        ``p_i = mu_i + (P_T - mu_T) / w_i`` with noise
        ``b_i^2 = beta_i^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2`` (capped by the
        performance ceiling, logistic model) enters the member's posterior as
        ``(p, beta)`` does for an individual (Eq. 6-8).

        Parameters
        ----------
        offsets:
            ``T + 1`` team offsets into the round's rows (teams best first).
        weight:
            Per row: the member's weight in ``(0, 1]``.

        Returns
        -------
        RoundOutput
            Per member: new rating, uncertainty and the performance ``p_i``.
        """
        from podium.core.numerics import status_warnings

        offs, w = check_teams(offsets, weight, rnd.players.size)
        # phase 0: pseudodiffusion of every member (Algorithm 2)
        beta, sig = self.diffuse(state, rnd)
        delta = np.hypot(sig, beta)
        kind = GAUSSIAN if self.variant == "gaussian" else LOGISTIC
        # phase 1: team performances (Theorem 3.2 over the team terms)
        terms = team_terms(rnd.mu, delta, w, offs)
        lo_t = team_places(rnd.lo, offs)
        center = solve_center(terms, rnd.players.size)
        if self.subsample_size is None:
            perf_t, status = self.exact_performance(kind, terms.mu - center, terms.delta,
                                                     lo_t)
        else:
            perf_t, status = self.subsampled_performance(kind, terms.mu - center,
                                                          terms.delta, lo_t)
        perf_t = perf_t + center
        warnings = status_warnings(status, rnd.contest.label, "team performance")
        # phase 2: each member's measurement (p_i, b_i), then Eq. 6-8 with b_i for beta_i
        measured = member_measurements(rnd.mu, delta, beta, w, offs, terms, perf_t)
        if self.team_perf_uncertainty > 0.0 and terms.mu.size > 1:
            # T7: Var[P_T | standings] ~ u (1 - 1/pi) delta_T^2 / (T - 1)
            measured = uncertain_measurements(
                rnd.mu, sig, offs, terms, measured,
                standings_variance(self.team_perf_uncertainty, terms.delta, terms.mu.size))
        perf, noise = measured
        return self.absorb(state, rnd, kind, perf, noise, sig, warnings)

    def rate_rounds(self, state: SystemState, batch: RoundBatch) -> RoundsOutput:
        """Rate a batch of rounds; small ones in one compiled loop.

        Runs of consecutive rounds of at most ``BATCH_MAX_PLAYERS`` players go
        through :func:`podium.systems.elo_mmr.rounds_kernels.elo_mmr_rounds`, which
        repeats :meth:`round_update` round by round in compiled code (the same
        operations, so the same numbers bit for bit); other rounds, and every
        round until the Rater has seen ``BATCH_AFTER`` contests, go through
        :meth:`round_update`.
        """
        assert isinstance(state, EloMMRState)
        n_rounds = len(batch.contests)
        if batch.first_index + n_rounds < BATCH_AFTER or not self._compiled_rounds:
            return super().rate_rounds(state, batch)
        out = RoundsOutput(np.empty((3, batch.players.size)))
        if n_rounds == 1 and batch.players.size <= BATCH_MAX_PLAYERS \
                and not batch.team_round[0]:  # Rater.add
            try:
                rate_small_rounds(state, batch, 0, 1, out, self._rounds_params)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                out.error = exc
            return out
        small = ((np.diff(batch.offsets) <= BATCH_MAX_PLAYERS) & ~batch.team_round).tolist()
        bounds = [0, *(r for r in range(1, n_rounds) if small[r] != small[r - 1]), n_rounds]
        for r0, r1 in zip(bounds[:-1], bounds[1:], strict=True):
            try:
                if small[r0]:
                    rate_small_rounds(state, batch, r0, r1, out, self._rounds_params)
                else:
                    for r in range(r0, r1):
                        self.rate_round(state, batch, r, out)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                out.error = exc
                return out
        return out

    @property
    def small_round_limits(self) -> tuple[int, int | None]:
        """``Rater.add`` asks :meth:`rate_small_round` only from this contest on and for
        rounds of at most this many players (it declines the others).  From the first
        contest on once this process has run the compiled round
        (:func:`~podium.systems.elo_mmr.rounds_kernels.elo_mmr_add`): the wait spares a
        Rater of a few contests loading it, which a later Rater has no need for."""
        return (1 if add_kernel_ready() else BATCH_AFTER, BATCH_MAX_PLAYERS)

    def rate_small_round(
        self, state: SystemState, table: PlayerTable, contest: Contest, index: int,
        players: npt.NDArray[np.int64], n_before: int, n_after: int,
        prior: tuple[float, float], events: tuple[FloatArray, np.ndarray, int],
    ) -> Any:
        """``Rater.add`` of one small individual round, in one compiled call
        (:func:`~podium.systems.elo_mmr.rounds_kernels.elo_mmr_add`; the same numbers as
        :meth:`rate_rounds`, bit for bit).

        ``players`` are the participants' rows of the Rater's ``table`` (standings
        order); rows ``n_before..n_after-1`` are the round's newcomers, whose rows the
        kernel writes (``prior``, the contest's time) within the table's capacity.
        ``events`` is ``(values, ids, at)`` as
        :meth:`~podium.core.state.EventLog.reserve_tail` gives it: the round's events
        are written to columns ``at..``; the contest is the Rater's ``index``-th.

        Returns the round's warnings, or ``None`` (nothing changed) when the round is
        not for this path: a team round, more than ``BATCH_MAX_PLAYERS`` players,
        before the Rater has seen ``BATCH_AFTER`` contests unless this process has
        run the kernel (:attr:`small_round_limits`); ``NotImplemented`` for a
        subclass that changes the update (no round is).  When the kernel raises, the
        caller rolls the state back to ``n_before`` players
        (:meth:`SystemState.truncate_players`).
        """
        if not self._compiled_rounds:
            return NotImplemented
        if ((index + 1 < BATCH_AFTER and not add_kernel_ready())
                or players.size > BATCH_MAX_PLAYERS or contest.team_round):
            return None
        assert isinstance(state, EloMMRState)
        return add_small_round(state, table, contest, index, players, n_before, n_after,
                               prior, events, self._rounds_params)

    @cached_property
    def _compiled_rounds(self) -> bool:
        """Whether the compiled loop is this system's update: only while no declared
        hook (:attr:`hooks`) is overridden."""
        return not self.overridden_hooks(EloMMR)

    @cached_property
    def _rounds_params(self) -> RoundsParams:
        """The parameters of the compiled loop (:func:`rounds_params`), once."""
        return rounds_params(self)

    # ------------------------------------------------------------------ hooks
    def diffuse(self, state: EloMMRState, rnd: RoundInput) -> tuple[FloatArray, FloatArray]:
        """Each participant's ``beta`` and ``gamma`` (:func:`K.round_weights`), then the
        pseudodiffusion by ``gamma`` (Algorithm 2).  Returns ``(beta, sigma)``, sigma
        after the diffusion."""
        import podium.systems.elo_mmr.kernels as K

        beta, gamma = K.round_weights(
            rnd.played, rnd.contest.weight, self.weight_limit,
            np.asarray(self.noob_delay, dtype=np.float64), self.sig_limit, self.drift_per_day,
            rnd.delta_seconds,
        )
        sig = K.diffuse(
            rnd.players, rnd.mu, rnd.sigma, gamma, float(self.rho), self.collapses,
            state.normal_view(), K.LazyWeights(state.scale, state.sum_aw, state.sum_w),
            state.blocks_view(), state.pool_view(),
        )
        return beta, sig

    def absorb(self, state: EloMMRState, rnd: RoundInput, kind: int, perf: FloatArray,
               noise: FloatArray, sig: FloatArray, warnings: list[str]) -> RoundOutput:
        """The posterior update (Eq. 6-8): cap the performances at the round's ceiling
        (logistic model), add each ``(perf_k, noise_k)`` to its player's posterior (a
        logistic factor, or a normal one for Elo-MMchi) and solve the new ratings.
        ``noise`` is the round's ``beta`` for an individual round, ``b_i`` for a team
        round; ``sig`` the uncertainties after the pseudodiffusion."""
        import podium.systems.elo_mmr.kernels as K
        from podium.core.numerics import status_warnings

        c = rnd.contest
        players = rnd.players
        if kind == LOGISTIC:
            ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
            if ceiling is not None:
                perf = np.minimum(perf, ceiling)
        if kind == GAUSSIAN:
            mu, sigma = K.update_gaussian(players, perf, noise, state.normal_view())
        else:
            state.reserve(players)
            max_hist = self.max_history if self.max_history is not None else np.iinfo(np.int64).max
            tol = self.history_tolerance if self.max_history is None else 0.0
            mu, sigma, st2 = K.update_logistic_for(players.size)(
                players, perf, noise, rnd.mu, sig, max_hist, tol, state.normal_view(),
                K.LazyWeights(state.scale, state.sum_aw, state.sum_w), state.blocks_view(),
                state.pool_view(),
            )
            warnings = warnings + status_warnings(st2, c.label, "rating")
            state.maybe_compact()
        return RoundOutput(mu=mu, sigma=sigma, perf=perf, warnings=tuple(warnings))

    def exact_performance(
        self, kind: int, mu: FloatArray, delta: FloatArray, lo: npt.NDArray[np.int64]
    ) -> tuple[FloatArray, np.ndarray]:
        """Every participant's performance over all opponents: the zero of ``Q_i``
        (Theorem 3.2) for each tie group (:func:`~podium.core.numerics.performance_zeros`).

        Parameters
        ----------
        kind:
            ``LOGISTIC`` or ``GAUSSIAN`` (:mod:`podium.core.numerics.performance`).
        mu, delta:
            The opponent terms ``(mu_j, delta_j)``, standings order.
        lo:
            Each participant's first place (tie groups are runs of equal ``lo``).

        Returns
        -------
        perf, status
            Per participant: the performance and the solver's status code.
        """
        from podium.core.numerics import OpponentTerms, TieGroups, performance_zeros

        n = lo.size
        starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]])
        ends = np.r_[starts[1:], n]
        if kind == LOGISTIC:
            w = TANH_MULTIPLIER / delta
            pa, pb = 0.5 * w, w
        else:
            pa, pb = delta, delta
        gperf, gstatus, _ = performance_zeros(
            kind, OpponentTerms(np.ascontiguousarray(mu, dtype=np.float64), pa, pb),
            TieGroups(starts.astype(np.int64), ends.astype(np.int64)), self.split_ties,
            float(delta.min()), DIRECT_GROUPS,
        )
        sizes = ends - starts
        return np.repeat(gperf, sizes), np.repeat(gstatus, sizes)

    def subsampled_performance(
        self, kind: int, mu: FloatArray, delta: FloatArray, lo: npt.NDArray[np.int64]
    ) -> tuple[FloatArray, np.ndarray]:
        """As :meth:`exact_performance`, over at most ``subsample_size`` opponent terms
        merged into ``(mu, delta)`` buckets of width ``subsample_bucket`` and nearest the
        participant's rating (Sec. 5.3, multi-skill's fast systems)."""
        import podium.systems.elo_mmr.kernels as K

        width = self.subsample_bucket
        bmu = _round_half_away(mu / width)
        bsig = _round_half_away(delta / width)
        order = np.lexsort((lo, bsig, bmu))
        merged = K.merge_terms(order, mu, delta, lo, width)
        assert self.subsample_size is not None
        return K.subsampled_performance_for(lo.size)(
            kind, merged, np.ascontiguousarray(mu), lo,
            self.subsample_size, width, self.split_ties, _rank_guess(mu, lo),
        )


def round_performance_model(
    system: Any, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float,
    noob_delay: FloatArray, drift_per_day: float, kind: PerformanceKind,
) -> PerformanceModel:
    """Elo-MMR's performance model of a round (shared by :class:`EloMMR` and
    :class:`~podium.systems.elo_mmr_simple.SimpleEloMMR`): ``v = sigma^2 + gamma^2 +
    beta^2`` with the round's own ``beta`` and ``gamma`` (:func:`K.round_weights`) for
    ``system``'s ``weight_limit`` and ``sig_limit``."""
    import podium.systems.elo_mmr.kernels as K

    flat_played = np.ascontiguousarray(np.asarray(played, dtype=np.int64).ravel())
    beta, gamma = K.round_weights(
        flat_played, float(weight), system.weight_limit, noob_delay, system.sig_limit,
        drift_per_day, np.zeros(flat_played.size),
    )
    return PerformanceModel(
        kind, sigma**2 + (gamma**2 + beta**2).reshape(sigma.shape),
        f"{type(system).__name__} ({kind}): v = sigma^2 + gamma^2 + beta^2, "
        f"beta = sqrt((1 + 1/w) sig_limit^2 + drift_per_day / w), gamma = sqrt(w) sig_limit",
    )


def _rank_guess(mu: FloatArray, lo: npt.NDArray[np.int64]) -> FloatArray:
    """A first guess for each performance: the rating found at the player's place
    when the field is sorted by rating (the zero of Q_i is where expected and actual
    rank agree).  Only the number of Newton steps depends on it, not the answer."""
    return np.sort(mu)[::-1][lo]


def _round_half_away(x: FloatArray) -> FloatArray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)
