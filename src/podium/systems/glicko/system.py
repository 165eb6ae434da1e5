"""All-pairs Glicko and Bradley-Terry (BAR): baselines of the Elo-MMR paper's experiments.

The Elo-MMR paper ([EbtekarLiu2021]) presents itself as a generalisation of two-player Glicko
(§1, §7) and models skill drift as Glicko does (§4).  These two systems apply a
two-player Bayesian update to a round of ``N`` players by letting every player meet
every other one (ties count half a win and half a loss); multi-skill's ``Glicko`` and
``BAR`` (the Rust reference; ``elo-mmr-py``'s ``"glicko"`` and ``"bar"``), whose
formulas, constants and defaults these follow, treat the round as *one highly
informative match*: the information term is fixed at 1/4 (the largest value of
``p (1 - p)``) and the score ``sum_j (o_ij - p_ij)`` is averaged over the ``N``
participants (``i`` included, whose own term is 0).

Per round, with contest weight ``w`` and ``sig_perf = beta / sqrt(w)``:

1. every participant's deviation grows by the drift: ``s = hypot(sigma, sig_drift)``;
2. **Glicko** (Glickman's ``g`` and ``q``): ``g_j = 1 / hypot(1, s_j / sig_perf)``,
   ``p_ij = F((mu_i - mu_j) / hypot(s_j, sig_perf))`` with ``F`` the logistic CDF of
   unit variance, ``q = pi / (sqrt(3) sig_perf)``;
   ``sigma' = (s_i^-2 + q^2 / 4)^-1/2`` and
   ``mu' = mu + q sigma'^2 (1/N) sum_j g_j (o_ij - p_ij)``.
   **BAR** (Weng & Lin's Bradley-Terry full-pair update): ``c_ij^2 = s_i^2 + s_j^2 +
   2 sig_perf^2``, ``p_ij = F((mu_i - mu_j) / c_ij)``;
   ``mu' = mu + s_i^2 (1/N) sum_j (o_ij - p_ij) / c_ij`` and
   ``sigma' = s_i sqrt(max(kappa, 1 - s_i^2 / (4 (s_i^2 + 2 sig_perf^2))))``.

``sigma`` is the posterior deviation after the round.  ``perf`` (the reference
reports 0) is the performance implied by the update: the rating ``p`` whose
Gaussian observation, with the round's information, moves ``mu`` to ``mu'`` --
``mu + 4 U / q`` for Glicko and ``mu + 4 (s_i^2 + 2 sig_perf^2) U`` for BAR, with
``U`` the averaged score above.  Contest ceilings are ignored, as by the reference.

Cost: Glicko's sum is one function of ``mu_i`` for the whole round, evaluated for
every player at once by Chebyshev interpolation (:func:`~podium.systems.
_glicko_kernels.tanh_sums`, ``O(N)`` per round); BAR's spread depends on both players,
so it visits the ``N (N - 1) / 2`` unordered pairs once each
(:func:`~podium.systems.glicko.kernels.bar_sums`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.explain import Explanation
from podium.core.numerics import TANH_MULTIPLIER
from podium.errors import ConfigError
from podium.systems.base import (
    ELO_BETA,
    NoPlayerState,
    PerformanceKind,
    PerformanceModel,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)

__all__ = ["Glicko", "BAR", "AllPairsState", "DEFAULT_BETA", "drift_performance_model"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The team rule of both systems (see :mod:`podium.systems.base.entity_teams`).
_TEAM_RULE = ("a team as one entity (weighted mean rating, rms deviation), each member moved by "
              "its weight's share of the entity's change of mu and log sigma^2 (docs/teams.md)")

#: ``400 pi / (sqrt(3) ln 10)`` ~ 315.09: the logistic spread of Elo's 400-point scale.
DEFAULT_BETA = ELO_BETA


def drift_performance_model(
    system: Any, sigma: FloatArray, weight: float, kind: PerformanceKind
) -> PerformanceModel:
    """``v = sigma^2 + sig_drift^2 + beta^2 / w`` of a system that widens every
    participant by ``sig_drift`` and draws performances with spread ``beta / sqrt(w)``
    (Glicko, BAR: logistic; TrueSkill: normal)."""
    v = sigma**2 + system.sig_drift**2 + system.beta**2 / weight
    return PerformanceModel(
        kind, v, f"{type(system).__name__} ({kind}): v = sigma^2 + sig_drift^2 + beta^2 / w"
    )


class AllPairsState(NoPlayerState):
    """Glicko and BAR keep nothing beyond (mu, sigma), which the
    :class:`~podium.rater.Rater` already holds; this only counts players."""


def _better_worse(lo: IntArray, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """For each participant (standings order, tie groups contiguous): the total weight
    of those placed strictly better and of those placed strictly worse."""
    n = lo.size
    starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]])
    group_sum = np.add.reduceat(weights, starts)
    before = np.concatenate(([0.0], np.cumsum(group_sum)[:-1]))
    sizes = np.diff(np.r_[starts, n])
    better = np.repeat(before, sizes)
    worse = np.repeat(float(weights.sum()) - before - group_sum, sizes)
    return better, worse


@dataclass(frozen=True)
class Glicko(RatingSystem):
    """All-pairs Glicko with the round treated as one highly informative match (``glicko``).

    Parameters
    ----------
    beta:
        Performance spread ``sig_perf`` of a weight-1 round (default ``400 pi /
        (sqrt(3) ln 10)`` ~ 315.09); a round of weight ``w`` uses ``beta / sqrt(w)``.
    sig_drift:
        Deviation added (in quadrature) to every participant before each round (35).
    mu_noob, sig_noob:
        Newcomer prior (1500, 350).
    """

    name: ClassVar[str] = "glicko"
    team_rule: ClassVar[str | None] = _TEAM_RULE

    beta: float = param(DEFAULT_BETA, "positive")
    sig_drift: float = param(35.0, "nonnegative")
    mu_noob: float = param(1500.0, "finite")
    sig_noob: float = param(350.0, "positive")

    def make_state(self) -> AllPairsState:
        return AllPairsState()

    def performance_model(
        self, sigma: FloatArray, played: IntArray, weight: float
    ) -> PerformanceModel:
        """Logistic with ``v = sigma^2 + sig_drift^2 + beta^2 / w``."""
        return drift_performance_model(self, sigma, weight, "logistic")

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The change as one term ``g_j (o_ij - p_ij)`` per opponent, scaled.
        (:mod:`podium.systems.glicko.explain`)."""
        from podium.systems.glicko.explain import explain_glicko

        return explain_glicko(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round; a team round is rated as a round of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`)."""
        import podium.systems.glicko.kernels as K

        if rnd.is_team_round:
            return TM.rate_as_entities(rnd, lambda ent: self.round_update(state, ent))
        mu = np.ascontiguousarray(rnd.mu, dtype=np.float64)
        n = mu.size
        sig_perf = self.beta / math.sqrt(rnd.contest.weight)
        s = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), self.sig_drift)
        c = np.hypot(s, sig_perf)  # spread of p_ij, set by the opponent j
        g = sig_perf / c  # = 1 / hypot(1, s / sig_perf)
        # sum_j g_j (o_ij - p_ij) = (worse - better) / 2 - sum_j g_j/2 tanh(k_j (mu_i - mu_j))
        better, worse = _better_worse(rnd.lo, g)
        t = K.tanh_sums(mu, mu, K.HALF_TANH_MULTIPLIER / c, 0.5 * g, 0)
        score = (0.5 * (worse - better) - t) / n
        q = TANH_MULTIPLIER / sig_perf
        new_sig = 1.0 / np.sqrt(s**-2 + 0.25 * q * q)
        new_mu = mu + q * new_sig**2 * score
        perf = mu + 4.0 * score / q
        return RoundOutput(mu=new_mu, sigma=new_sig, perf=perf)


@dataclass(frozen=True)
class BAR(RatingSystem):
    """All-pairs Bradley-Terry (Weng & Lin's BT-full) with the round treated as one
    highly informative match (``bar``).

    Parameters
    ----------
    beta:
        Performance spread of a weight-1 round (default ~315.09, as :class:`Glicko`);
        a round of weight ``w`` uses ``beta / sqrt(w)``.
    sig_drift:
        Deviation added (in quadrature) to every participant before each round (35).
    kappa:
        Lower bound on the factor ``sigma'^2 / s^2`` (default 1e-4).
    mu_noob, sig_noob:
        Newcomer prior (1500, 350).
    """

    name: ClassVar[str] = "bar"
    team_rule: ClassVar[str | None] = _TEAM_RULE

    beta: float = param(DEFAULT_BETA, "positive")
    sig_drift: float = param(35.0, "nonnegative")
    kappa: float = 1e-4
    mu_noob: float = param(1500.0, "finite")
    sig_noob: float = param(350.0, "positive")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.kappa, int | float) and 0.0 < self.kappa <= 1.0):
            raise ConfigError(f"kappa must be a number in (0, 1], got {self.kappa!r}")

    def make_state(self) -> AllPairsState:
        return AllPairsState()

    def performance_model(
        self, sigma: FloatArray, played: IntArray, weight: float
    ) -> PerformanceModel:
        """Logistic with ``v = sigma^2 + sig_drift^2 + beta^2 / w``."""
        return drift_performance_model(self, sigma, weight, "logistic")

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The change as one term ``(o_ij - p_ij) / c_ij`` per opponent, scaled.
        (:mod:`podium.systems.glicko.explain`)."""
        from podium.systems.glicko.explain import explain_bar

        return explain_bar(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round; a team round is rated as a round of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`)."""
        import podium.systems.glicko.kernels as K

        if rnd.is_team_round:
            return TM.rate_as_entities(rnd, lambda ent: self.round_update(state, ent))
        mu = np.ascontiguousarray(rnd.mu, dtype=np.float64)
        n = mu.size
        perf_var = self.beta**2 / rnd.contest.weight
        s = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), self.sig_drift)
        var = s * s
        score = K.bar_sums(mu, var, np.ascontiguousarray(rnd.lo), 2.0 * perf_var) / n
        info = 0.25 * var / (var + 2.0 * perf_var)
        new_sig = s * np.sqrt(np.maximum(self.kappa, 1.0 - info))
        new_mu = mu + var * score
        perf = mu + var * score / info
        return RoundOutput(mu=new_mu, sigma=new_sig, perf=perf)
