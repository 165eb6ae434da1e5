"""``cfsys``: the continuous Codeforces-like system of the Elo-MMR paper's experiments.

This is multi-skill's ``CodeforcesSys`` (elo-mmr-py's ``"cfsys"``), the floating-point
reading of the Codeforces system of [Mirzayanov2015] that the Elo-MMR paper
([EbtekarLiu2021]) compares against.  Per round, with
``sigma_perf = beta / sqrt(contest weight)`` and every participant's term ``(mu_j, sigma_perf)``:

* ``P(j beats x) = 1 / (1 + exp(-pi (mu_j - x) / (sqrt(3) sigma_perf)))``, which is
  [Mirzayanov2015]'s ``1 / (1 + 10^((x - mu_j) / 400))`` for the default
  ``beta = 400 (pi / sqrt(3)) / ln 10 ~ 315.09`` at weight 1;
* expected rank ``E(x) = 1/2 + sum_j P(j beats x)`` over *all* participants, the player
  itself included (``E(mu_i) = 1 + sum_{j != i} P(j beats i)``, [Mirzayanov2015]'s seed);
* actual rank: the mean place of the tie, ``(lo + hi + 2) / 2`` (1-based);
* ``g_i = sqrt(E(mu_i) * actual_i)`` (geometric mean, as [Mirzayanov2015]'s ``m_i``);
* performance ``p_i``: the exact zero of ``E(x) = g_i`` on ``(-6000, 9000)`` (no
  integer binary search);
* the performance is capped at the round's ``perf_ceiling`` when there is one (as
  elo-mmr-py does for every system);
* ``mu_i' = (mu_i + w p_i) / (1 + w)``, ``w = contest weight * weight``;
* no anti-inflation correction, no rounding, sigma unchanged.

Speed: all participants share ``E``, which is interpolated once per round by piecewise
Chebyshev polynomials exact to rounding (:func:`~podium.systems.codeforces.kernels.\
cfsys_performances`), so a round costs ``O(N * panels * nodes)`` rather than the
reference's ``O(N^2 * Newton steps)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.explain import Explanation
from podium.core.numerics import TANH_MULTIPLIER
from podium.systems.base import (
    ELO_BETA,
    RATING_RANGE,
    NoPlayerState,
    PerformanceModel,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)

__all__ = ["CFSys", "CFSysState", "cfsys_round", "DEFAULT_BETA"]

FloatArray = npt.NDArray[np.float64]

#: multi-skill's default: ``400 * (pi / sqrt(3)) / ln(10)`` ~ 315.09, which makes the
#: logistic win probability equal to the Elo formula ``1 / (1 + 10^(-diff / 400))``.
DEFAULT_BETA = ELO_BETA


def cfsys_round(
    mu: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike, *, beta: float = DEFAULT_BETA,
    contest_weight: float = 1.0, weight: float = 1.0, perf_ceiling: float | None = None,
) -> tuple[FloatArray, FloatArray]:
    """One cfsys round: ``(new_mu, perf)`` for participants in standings order.

    ``lo``/``hi`` are the 0-based inclusive tie ranges; ``perf`` is capped at
    ``perf_ceiling`` (``None``: no cap) before the update.  See the module docstring.
    """
    import podium.systems.codeforces.kernels as K

    mu_a = np.ascontiguousarray(mu, dtype=np.float64)
    lo_a = np.ascontiguousarray(lo, dtype=np.int64)
    hi_a = np.ascontiguousarray(hi, dtype=np.int64)
    if mu_a.size == 0:
        return np.zeros(0), np.zeros(0)
    sig_perf = beta / math.sqrt(contest_weight)
    w_arg = 0.5 * TANH_MULTIPLIER / sig_perf
    uval, ucnt = np.unique(mu_a, return_counts=True)
    half = math.sqrt(3.0) * sig_perf
    perf, _, _, _ = K.cfsys_performances(
        mu_a, lo_a, hi_a, w_arg, uval, ucnt.astype(np.float64), half
    )
    if perf_ceiling is not None:
        perf = np.minimum(perf, perf_ceiling)
    wt = contest_weight * weight
    return (mu_a + wt * perf) / (1.0 + wt), perf


class CFSysState(NoPlayerState):
    """cfsys keeps nothing per player beyond ``(mu, sigma)``."""


@dataclass(frozen=True)
class CFSys(RatingSystem):
    """The Codeforces-like system of the Elo-MMR experiments (multi-skill's ``cfsys``).

    Parameters
    ----------
    beta:
        Logistic scale of a performance at contest weight 1 (default
        ``400 * (pi / sqrt(3)) / ln 10 ~ 315.09``, i.e. the Elo ``400`` of [Mirzayanov2015]);
        a round of weight ``c`` uses ``beta / sqrt(c)``.
    weight:
        Weight of the performance against the old rating: ``mu' = (mu + w p) / (1 + w)``
        with ``w = contest weight * weight`` (default 1, Codeforces' halving).
    perf_ceiling:
        Default cap on performances (a contest's own ``perf_ceiling`` wins); ``None``:
        none.  elo-mmr-py caps cfsys performances at the contest's ceiling too.
    mu_noob, sig_noob:
        Newcomer rating and the (constant) sigma every player reports (1500, 350, as
        elo-mmr-py).  Sigma is never changed and plays no part in the update.

    Notes
    -----
    ``perf`` is the performance ``p_i`` (the rating whose expected rank equals the
    geometric mean of expected and actual rank), after the ceiling.  ``display_rating``
    is ``mu``.
    """

    name: ClassVar[str] = "cfsys"
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean rating), each member moved by its weight's "
        "share of the entity's change (docs/teams.md)")

    beta: float = param(DEFAULT_BETA, "positive")
    weight: float = param(1.0, "positive")
    perf_ceiling: float | None = param(None, "number_or_none")
    mu_noob: float = param(1500.0, "finite", **RATING_RANGE)
    sig_noob: float = param(350.0, "nonnegative")

    def make_state(self) -> CFSysState:
        return CFSysState()

    def performance_model(
        self, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float
    ) -> PerformanceModel:
        """Logistic with ``v = beta^2 / (2 w)`` for everybody (no uncertainty), so that
        ``P(i beats j)`` is the logistic of the rating difference over ``beta / sqrt(w)``."""
        v = np.full(sigma.shape, self.beta**2 / weight / 2.0)
        return PerformanceModel(
            "logistic", v, f"{type(self).__name__} (logistic): v = beta^2 / (2 w)"
        )

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The new rating as the old rating's and the performance's shares.
        (:mod:`podium.systems.cfsys.explain`)."""
        from podium.systems.cfsys.explain import explain_cfsys

        return explain_cfsys(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round; a team round is rated as a round of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`; sigma stays unchanged)."""
        if rnd.is_team_round:
            return TM.rate_as_entities(rnd, lambda ent: self.round_update(state, ent))
        c = rnd.contest
        ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
        mu, perf = cfsys_round(rnd.mu, rnd.lo, rnd.hi, beta=self.beta,
                               contest_weight=c.weight, weight=self.weight,
                               perf_ceiling=ceiling)
        return RoundOutput(mu=mu, sigma=np.asarray(rnd.sigma, dtype=np.float64).copy(),
                           perf=perf)
