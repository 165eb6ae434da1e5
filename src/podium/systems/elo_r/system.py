"""Elo-R ([Ebtekar2015], Ebtekar, "Elo-R Competition Rating System"), with its four noising methods.

One round (Algorithm 2; Algorithm 4 for the methods that keep a history):

1. **Noise** (Sec. 5): the prior of the round is the last posterior widened so that
   ``sigma^2 -> sigma^2 + eta^2``, by one of the methods of Sec. 5.1-5.2 / 6.2
   (``noise=`` below);
2. every participant becomes an opponent term ``(r'_j, delta_j = sqrt(sigma_j^2 + gamma^2))``;
3. **performance estimation** (Sec. 3): ``p_i`` is the zero of
   ``sum_{j <= i} (tanh((p - r'_j)/delta_j) - 1)/delta_j
   + sum_{j >= i} (tanh((p - r'_j)/delta_j) + 1)/delta_j``, where ``j <= i`` are the
   players ``i`` beat *and i itself*, ``j >= i`` those who beat ``i`` *and i itself*; a tie
   counts as half a win and half a loss (so a tied opponent contributes its tanh alone);
4. **belief update as a robust average** (Sec. 4): the factor ``(p_i, gamma)`` joins the
   belief and the rating is the zero of
   ``(r - mu_0)/tau_0^2 + sum_k tanh((r - mu_k)/tau_k)/tau_k``;
   ``1/sigma^2 = 1/tau_0^2 + sum_k 1/tau_k^2``.

A team round goes through :meth:`EloR.team_update` (one term per team in step 3, each
member conditioned on the team sum in step 4; docs/teams.md).

Units: the seed's *upper-bar* convention (Sec. 3) -- every spread the algorithms use
(``sigma* = 100``, ``gamma = 250``, ``eta ~ 43.64``, ``delta``, ``tau``) is the barred value,
``sqrt(12)/pi`` times a standard deviation, and enters a logistic term as
``tanh(x/d)/d``; the newcomer prior ``N(1500, 350^2)`` is a normal factor with
``tau_0 = 350`` (Algorithm 1).  ``sigma`` as returned is that same barred uncertainty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.errors import ConfigError
from podium.systems.base import (
    RATING_RANGE,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)
from podium.systems.base.factor_pool import FactorPoolState
from podium.systems.base.two_phase_teams import (
    check_teams,
    member_measurements,
    solve_center,
    team_places,
    team_terms,
)

__all__ = ["EloR", "EloRState", "NOISE_METHODS"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The noising methods of Sec. 6.2 (see :class:`EloR`).
NOISE_METHODS: tuple[str, ...] = ("normal", "leading", "all", "fancy")
#: Rounds with at most this many players solve every performance directly.
_DIRECT_N = 128


class EloRState(FactorPoolState):
    """Every player's belief: a normal factor and a queue of logistic factors.

    Per player: the normal factor ``(nf_mu, nf_w = 1/tau_0^2)`` and the location of its
    logistic factors in a shared pool (``f_mu`` = past performance ``mu_k = p_k``,
    ``f_warg = 1/tau_k`` inside the tanh, ``f_wout = 1/tau_k`` in front of it; the
    ``"leading"`` method lets the two differ).  The pool is Elo-MMR's
    (:class:`~podium.systems.base.factor_pool.FactorPoolState`).  With ``noise="normal"``
    there are no logistic factors and the normal factor is the posterior
    ``(r, 1/sigma^2)``.

    Parameters
    ----------
    mu_noob, sig_noob:
        Newcomer prior.
    """

    def factors(self, i: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Player ``i``'s logistic factors ``(mu_k, tau_in_k, tau_out_k)``, oldest first."""
        b, e = self.block(i)
        return self.f_mu[b:e].copy(), 1.0 / self.f_warg[b:e], 1.0 / self.f_wout[b:e]

    def normal_factor(self, i: int) -> tuple[float, float]:
        """Player ``i``'s normal factor ``(mu_0, tau_0)``."""
        return float(self.nf_mu[i]), float(1.0 / math.sqrt(self.nf_w[i]))


@dataclass(frozen=True)
class EloR(RatingSystem):
    """Elo-R ([Ebtekar2015]) with the noising methods of its Sec. 5.1-5.2 and 6.2.

    Parameters
    ----------
    noise:
        How the prior of a round is made from the last posterior (Sec. 6.2), so that
        the uncertainty formula gives ``sigma^2 + eta^2``:

        ``"normal"``
            Normal approximation (Sec. 5.1, Algorithms 1-2, Sec. 6.2.1): after each
            update the posterior is replaced by the normal ``(r, sigma^2)`` and noise
            is added to it.  Memoryless; no history is stored.
        ``"leading"``
            Constant multiple on only the leading tau (Sec. 5.2, 6.2.2): each factor's
            weight ``1/tau_out`` in front of the tanh is divided by
            ``kappa^2 = 1 + eta^2/sigma^2``; the tau inside the tanh is kept.
        ``"all"``
            Constant multiple on all tau (Sec. 5.2, 6.2.3): every ``tau`` (normal
            factor included) is multiplied by ``kappa``.  The mode moves; the round's
            ``r'`` is the mode of the widened prior.
        ``"fancy"``
            The fancy method (Sec. 5.2, Algorithms 3-4, Sec. 6.2.4): one ``kappa`` such
            that every factor's pull at the current rating is divided by ``kappa^2``
            (``tau'_k`` solved per factor) and the uncertainty is ``sigma^2 + eta^2``.
    sig_star:
        ``sigma*``: the uncertainty a regular player converges to (100).
    gamma:
        Performance spread ``gamma`` of a round (250).  A contest's ``weight`` divides
        its variance: ``gamma / sqrt(weight)``.
    mu_noob, sig_noob:
        Newcomer prior (1500, 350; Algorithm 1).
    max_history:
        ``M`` of Algorithm 4: the most factors a belief holds, normal factor included
        (so at most ``M - 1`` past performances).  When a round would exceed it, the
        oldest performance is folded into the normal factor with its robust weight at
        the current rating (which keeps the mode).  ``None``: no bound.  Ignored by
        ``noise="normal"``.
    robust:
        ``False`` treats each performance as a *normal* measurement in the belief
        update (Sec. 6.3's "removing outlier reduction", the orange curve): the new
        rating is the precision-weighted mean of ``r'`` and ``p``.  Only with
        ``noise="normal"`` (with normal measurements every method is that same
        memoryless update).
    perf_ceiling:
        Default upper bound on performances (a contest's own ceiling wins); ``None``.
    display_sigmas:
        Display rating ``r - display_sigmas * (sigma - sig_star)`` (Sec. 5: 2).
    """

    name: ClassVar[str] = "elo-r"
    team_rule: ClassVar[str | None] = (
        "two-phase: team performance from the team terms (weighted sums), then each member "
        "conditioned on the team sum (docs/teams.md)"
    )

    noise: Literal["normal", "leading", "all", "fancy"] = "normal"
    sig_star: float = param(100.0, "positive")
    gamma: float = param(250.0, "positive")
    mu_noob: float = param(1500.0, "finite", **RATING_RANGE)
    sig_noob: float = param(350.0, "positive")
    max_history: int | None = None
    robust: bool = param(True, "bool")
    perf_ceiling: float | None = param(None, "number_or_none")
    display_sigmas: float = param(2.0, "finite")

    #: Display rating ``r - 2 (sigma - sigma*)`` (Sec. 5: "I like to report ...").
    display_center: ClassVar[str | None] = "sig_star"

    def __post_init__(self) -> None:
        if self.noise not in NOISE_METHODS:
            raise ConfigError(
                f"noise must be one of {', '.join(map(repr, NOISE_METHODS))}, got {self.noise!r}"
            )
        super().__post_init__()
        if not self.sig_star < self.gamma:
            raise ConfigError(
                f"sig_star must be smaller than gamma (eta^2 = 1/(1/sig_star^2 - 1/gamma^2) "
                f"- sig_star^2 must be positive), got sig_star={self.sig_star!r}, "
                f"gamma={self.gamma!r}"
            )
        m = self.max_history
        if m is not None and (not isinstance(m, int) or isinstance(m, bool) or m < 2):
            raise ConfigError(
                f"max_history must be an integer >= 2 (the normal factor plus at least one "
                f"performance) or None, got {m!r}"
            )
        if not self.robust and self.noise != "normal":
            raise ConfigError(
                "robust=False (normal measurements) makes every noising method the same "
                "memoryless update; use it with noise='normal'"
            )

    # ------------------------------------------------------------------ constants
    @property
    def eta(self) -> float:
        """Per-round noise: ``eta^2 = 1/(1/sigma*^2 - 1/gamma^2) - sigma*^2`` (Sec. 5), ~43.64."""
        s2 = self.sig_star**2
        return math.sqrt(1.0 / (1.0 / s2 - 1.0 / self.gamma**2) - s2)

    # ------------------------------------------------------------------ interface
    def make_state(self) -> EloRState:
        return EloRState(self.mu_noob, self.sig_noob)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        from podium.core.numerics import status_warnings

        assert isinstance(state, EloRState)
        if rnd.team_offsets is not None:
            assert rnd.weight is not None
            return self.team_update(state, rnd, rnd.team_offsets, rnd.weight)
        c = rnd.contest
        r_prior, sig_prior, warnings = self._noise(state, rnd.players, rnd.mu, rnd.sigma, c)
        gamma = np.full(rnd.players.size, self.gamma / math.sqrt(c.weight))
        perf, status = self.performances(r_prior, sig_prior, rnd.lo, gamma)
        warnings += status_warnings(status, c.label, "Elo-R performance")
        ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
        if ceiling is not None:
            perf = np.minimum(perf, ceiling)
        mu, sigma, st2 = self._absorb(state, rnd.players, r_prior, sig_prior, perf, gamma)
        warnings += status_warnings(st2, c.label, "Elo-R rating")
        return RoundOutput(mu=mu, sigma=sigma, perf=perf, warnings=tuple(warnings))

    def team_update(self, state: EloRState, rnd: RoundInput, offsets: npt.ArrayLike,
                    weight: npt.ArrayLike) -> RoundOutput:
        """Rate a team round (docs/teams.md, "Elo-MMR and Elo-R").

        Every member is noised as in :meth:`round_update` (Sec. 5).  Phase 1 (Sec. 3)
        solves each team's performance ``P_T`` over one logistic term per team,
        ``r'_T = sum_i w_i r'_i`` and ``delta_T^2 = sum_i w_i^2 delta_i^2`` with
        ``delta_i^2 = sigma_i'^2 + gamma^2``.  Phase 2 (Sec. 4) absorbs, for each
        member, the measurement of conditioning on the team sum,
        ``p_i = r'_i + (P_T - r'_T) / w_i`` with spread
        ``b_i^2 = gamma^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2`` in place of
        ``(p_i, gamma)`` (capped by the performance ceiling).  All spreads are in
        Elo-R's barred units; the rule is homogeneous in them.

        Parameters
        ----------
        offsets:
            ``T + 1`` team offsets into the round's rows (teams best first).
        weight:
            Per row: the member's weight in ``(0, 1]``.
        """
        from podium.core.numerics import status_warnings

        c = rnd.contest
        offs, w = check_teams(offsets, weight, rnd.players.size)
        r_prior, sig_prior, warnings = self._noise(state, rnd.players, rnd.mu, rnd.sigma, c)
        gamma = np.full(rnd.players.size, self.gamma / math.sqrt(c.weight))
        delta = np.sqrt(sig_prior**2 + gamma**2)
        terms = team_terms(r_prior, delta, w, offs)
        center = solve_center(terms, rnd.players.size)
        perf_t, status = self._solve_performances(
            terms.mu - center, 1.0 / terms.delta, team_places(rnd.lo, offs)
        )
        perf_t = perf_t + center
        warnings += status_warnings(status, c.label, "Elo-R team performance")
        perf, noise = member_measurements(r_prior, delta, gamma, w, offs, terms, perf_t)
        ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
        if ceiling is not None:
            perf = np.minimum(perf, ceiling)
        mu, sigma, st2 = self._absorb(state, rnd.players, r_prior, sig_prior, perf, noise)
        warnings += status_warnings(st2, c.label, "Elo-R rating")
        return RoundOutput(mu=mu, sigma=sigma, perf=perf, warnings=tuple(warnings))

    # ------------------------------------------------------------------ the phases
    def performances(
        self, r_prior: FloatArray, sig_prior: FloatArray, lo: IntArray,
        gamma: FloatArray | float | None = None,
    ) -> tuple[FloatArray, np.ndarray]:
        """Phase 1 (Sec. 3): every participant's performance, from the noised priors.

        ``r_prior, sig_prior`` are the participants' prior modes and (noised)
        uncertainties in standings order, ``lo`` the first place of each tie range;
        ``delta = sqrt(sigma^2 + gamma^2)``.  Returns ``(perf, status)``.
        """
        r_prior = np.ascontiguousarray(r_prior, dtype=np.float64)
        lo = np.ascontiguousarray(lo, dtype=np.int64)
        g = self.gamma if gamma is None else gamma
        w = 1.0 / np.sqrt(np.asarray(sig_prior, dtype=np.float64) ** 2 + np.asarray(g) ** 2)
        return self._solve_performances(r_prior, np.broadcast_to(w, r_prior.shape), lo)

    def _solve_performances(
        self, r_prior: FloatArray, w: FloatArray, lo: IntArray
    ) -> tuple[FloatArray, np.ndarray]:
        """Phase 1's zeros over the terms ``(r'_j, 1/delta_j = w_j)`` with first places
        ``lo`` (a team round passes one term per team)."""
        import podium.systems.elo_r.kernels as K
        from podium.core.numerics import TieGroups

        r_prior = np.ascontiguousarray(r_prior, dtype=np.float64)
        lo = np.ascontiguousarray(lo, dtype=np.int64)
        w = np.ascontiguousarray(w, dtype=np.float64)
        n = lo.size
        starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]]).astype(np.int64)
        ends = np.r_[starts[1:], n].astype(np.int64)
        perf, status, _ = K.performances(r_prior, w, lo, TieGroups(starts, ends), _DIRECT_N)
        return perf, status

    def noise_round(
        self, state: EloRState, players: IntArray, mu: FloatArray, sigma: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """Apply the noise of Sec. 5 to the players' beliefs in place.

        ``mu, sigma`` are the players' current ratings and uncertainties (as last
        returned).  Returns the prior's mode ``r'`` and uncertainty
        ``sqrt(sigma^2 + eta^2)``.
        """
        r, s, _ = self._noise(state, np.asarray(players, dtype=np.int64), mu, sigma, None)
        return r, s

    def absorb(
        self, state: EloRState, players: IntArray, r_prior: FloatArray,
        sig_prior: FloatArray, perf: FloatArray, weight: float = 1.0,
    ) -> tuple[FloatArray, FloatArray]:
        """Phase 2 (Sec. 4): add each known performance to its player's (noised) belief.

        Returns the new ``(mu, sigma)``.
        """
        gamma = np.full(np.asarray(players).size, self.gamma / math.sqrt(weight))
        mu, sigma, _ = self._absorb(
            state, np.asarray(players, dtype=np.int64), np.asarray(r_prior, dtype=np.float64),
            np.asarray(sig_prior, dtype=np.float64), np.asarray(perf, dtype=np.float64), gamma,
        )
        return mu, sigma

    def apply_performances(
        self, state: EloRState, players: IntArray, mu: FloatArray, sigma: FloatArray,
        perf: FloatArray, weight: float = 1.0,
    ) -> tuple[FloatArray, FloatArray]:
        """One round whose performances are known (noise, then phase 2 only).

        Sec. 6.3 states its example in performances (``p_i = 1000`` repeatedly, then
        ``p_i = 3000``); this feeds them without simulating a field of opponents.
        """
        players = np.asarray(players, dtype=np.int64)
        state.ensure_players(int(players.max()) + 1 if players.size else 0)
        r_prior, sig_prior = self.noise_round(state, players, mu, sigma)
        return self.absorb(state, players, r_prior, sig_prior, perf, weight)

    def trajectory(self, perfs: Sequence[float]) -> FloatArray:
        """``(mu, sigma)`` after each of a newcomer's rounds with the given performances.

        Returns an array of shape ``(len(perfs), 2)``.
        """
        state = self.make_state()
        state.ensure_players(1)
        players = np.zeros(1, dtype=np.int64)
        mu, sig = np.array([self.mu_noob]), np.array([self.sig_noob])
        out = np.empty((len(perfs), 2))
        for t, p in enumerate(perfs):
            mu, sig = self.apply_performances(state, players, mu, sig, np.array([float(p)]))
            out[t] = mu[0], sig[0]
        return out

    # ------------------------------------------------------------------ helpers
    def _noise(
        self, state: EloRState, players: IntArray, mu: FloatArray, sigma: FloatArray,
        contest: Contest | None,
    ) -> tuple[FloatArray, FloatArray, list[str]]:
        import podium.systems.elo_r.kernels as K
        from podium.core.numerics import status_warnings

        eta = self.eta
        mu = np.ascontiguousarray(mu, dtype=np.float64)
        sigma = np.ascontiguousarray(sigma, dtype=np.float64)
        warnings: list[str] = []
        if self.noise == "normal":
            return mu.copy(), np.sqrt(sigma**2 + eta**2), warnings
        if self.noise == "fancy":
            sig = K.noise_fancy(
                players, mu, sigma, eta, state.normal_view(), state.blocks_view(),
                state.pool_view(),
            )
            return mu.copy(), sig, warnings
        all_tau = self.noise == "all"
        sig = K.noise_constant(
            players, sigma, eta, all_tau, state.normal_view(), state.blocks_view(),
            state.pool_view(),
        )
        if not all_tau:
            return mu.copy(), sig, warnings
        # constant multiple on all tau moves the mode (Sec. 5.2): r' is the new mode
        r, status = K.prior_modes(
            players, mu, state.normal_view(), state.blocks_view(), state.pool_view()
        )
        label = contest.label if contest is not None else "?"
        warnings += status_warnings(status, label, "Elo-R prior mode")
        return r, sig, warnings

    def _absorb(
        self, state: EloRState, players: IntArray, r_prior: FloatArray, sig_prior: FloatArray,
        perf: FloatArray, gamma: FloatArray,
    ) -> tuple[FloatArray, FloatArray, np.ndarray]:
        import podium.systems.elo_r.kernels as K

        perf = np.ascontiguousarray(perf, dtype=np.float64)
        if self.noise == "normal":
            mu, sigma, status = K.absorb_normal(r_prior, sig_prior, perf, gamma, self.robust)
            state.nf_mu[players] = mu
            state.nf_w[players] = 1.0 / sigma**2
            return mu, sigma, status
        state.reserve(players)
        cap = self.max_history if self.max_history is not None else np.iinfo(np.int64).max
        mu, sigma, status = K.absorb_history(
            players, r_prior, perf, gamma, cap, state.normal_view(), state.blocks_view(),
            state.pool_view(),
        )
        state.maybe_compact()
        return mu, sigma, status
