"""TopCoder's published algorithm rating system, the baseline ``tcsys`` of the Elo-MMR paper.

The Elo-MMR paper ([EbtekarLiu2021]) compares against TopCoder's system (§6, Tables 2-3;
published at its reference [7]) and discusses its volatility (§5.1, the exploit
that breaks aligned incentives) and its cap on rating changes (§5.2, robustness).
Formulas, constants and defaults follow multi-skill's ``TopcoderSys`` (the Rust
reference), so that the numbers equal ``elo-mmr-py``'s ``"tcsys"``.

One round of ``N`` participants with ratings ``R``, volatilities ``V`` and contest
weight ``w``:

1. competition factor ``CF = sqrt(mean(V^2) + sum((R - mean(R))^2) / (N - 1))``;
2. expected rank ``E_i = sum_j Phi(sqrt(w) (R_j - R_i) / sqrt(V_i^2 + V_j^2))`` over
   every participant ``j``, ``i`` included (that term is 1/2, so ``E_i`` is 1/2 plus
   the expected number of players beating ``i``); actual rank ``A_i = (lo + hi)/2 +
   1/2`` -- the mean 1-based place of ``i``'s tie group minus 1/2;
3. expected and actual performance ``-Phi^-1(E_i / N)`` and ``-Phi^-1(A_i / N)``;
   performed-as rating ``P_i = R_i + CF (actual - expected)`` (capped at the
   contest's ``perf_ceiling``, as the reference does);
4. with ``n`` = rounds played *including this one*: ``f = weight_limit +
   (weight_noob - weight_limit) / n`` (TopCoder's ``0.18 + 0.42/n``), weight
   ``W = w f / (1 - f)``, times 0.9 for ``R >= 2000`` or 0.8 for ``R >= 2500``;
   cap ``(150 + 1500 / (n + 1)) sqrt(w) f / (0.18 + 0.42/n)``;
5. ``R' = clamp((R + W P) / (1 + W), R - cap, R + cap)`` and
   ``V' = sqrt((uncapped change)^2 / W + V^2 / (1 + W))``.

Newcomers start at ``(1500, 350)`` like every multi-skill system (TopCoder's own
site uses 1200 and 535).

A round in which everybody ties (a draw) is rated (``all_tied="rate"``, the
default): every actual rank is the mean ``N/2``, so a player expected to place
better than that (the favourite) performs below its rating and loses, the underdog
gains, two equal players keep their rating (only the volatility shrinks), and the
round counts in ``n``.  The reference skips such a round and counts it for nothing;
``all_tied="skip"`` does the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.explain import Explanation
from podium.systems.base import (
    NoPlayerState,
    PerformanceModel,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)

__all__ = ["TopCoder", "TopCoderState"]

FloatArray = npt.NDArray[np.float64]

#: TopCoder's published weight ``0.18 + 0.42 / n``: the cap scales with ``f`` relative to it.
_TC_LIMIT, _TC_EXTRA = 0.18, 0.42
#: Base cap ``150 + 1500 / (n + 1)``.
_CAP_BASE, _CAP_EXTRA = 150.0, 1500.0
#: Extra damping of the weight of high-rated players: (threshold, multiplier), highest first.
_DAMPING = ((2500.0, 0.8), (2000.0, 0.9))


class TopCoderState(NoPlayerState):
    """TopCoder keeps nothing beyond rating, volatility and the number of rounds played,
    which the :class:`~podium.rater.Rater` already holds; this only counts players."""


@dataclass(frozen=True)
class TopCoder(RatingSystem):
    """TopCoder's algorithm rating system as multi-skill implements it (``tcsys``).

    ``sigma`` is the player's *volatility* (the reference stores it there);
    ``perf`` is the performed-as rating ``P_i`` that enters the update (after the
    ceiling).  The display rating is the rating itself.

    Parameters
    ----------
    weight_noob:
        ``f`` of a player's first round (default 0.6 = TopCoder's 0.18 + 0.42).
    weight_limit:
        The limit of ``f`` for experienced players (default 0.18).  ``f`` falls
        from ``weight_noob`` to ``weight_limit`` as ``1/n``; both must lie in (0, 1).
    perf_ceiling:
        Default upper bound on performed-as ratings (a contest's own ceiling wins);
        ``None``: none.
    mu_noob, sig_noob:
        Newcomer rating and volatility (1500, 350: the reference's defaults).
    """

    name: ClassVar[str] = "tcsys"
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean rating and rounds played, rms volatility), each "
        "member moved by its weight's share of the entity's change (docs/teams.md)")

    weight_noob: float = param(0.6, "open_unit")
    weight_limit: float = param(0.18, "open_unit")
    perf_ceiling: float | None = param(None, "number_or_none")
    mu_noob: float = param(1500.0, "finite")
    sig_noob: float = param(350.0, "positive")

    # ------------------------------------------------------------------ interface
    def make_state(self) -> TopCoderState:
        return TopCoderState()

    def performance_model(
        self, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float
    ) -> PerformanceModel:
        """Normal with ``v = volatility^2 / w``: the expected-rank term
        ``Phi(sqrt(w) (R_j - R_i) / sqrt(V_i^2 + V_j^2))``."""
        return PerformanceModel(
            "gaussian", sigma**2 / weight, "TopCoder (normal): v = volatility^2 / w"
        )

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The expected rank's per-opponent terms, the performed-as rating and the new
        rating's shares (:mod:`podium.systems.topcoder.explain`)."""
        from podium.systems.topcoder.explain import explain_topcoder

        return explain_topcoder(self, state, rnd, position)

    @staticmethod
    def competition_factor(mu: FloatArray, var: FloatArray) -> float:
        """Step 1: the competition factor ``CF = sqrt(mean(v) + var(mu))`` of a round, the
        mean squared volatility plus the sample variance of the ratings (one player: no
        variance term).  Used by :meth:`round_update` and :meth:`explain`."""
        n = mu.size
        mean_vol_sq = float(var.sum()) / n
        if n > 1:
            mean_vol_sq += float(((mu - mu.sum() / n) ** 2).sum()) / (n - 1)
        return math.sqrt(mean_vol_sq)

    def weight_and_cap(
        self, mu: FloatArray, played: npt.NDArray[np.int64], contest_weight: float
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Step 4 for players of ratings ``mu`` who played ``played`` earlier rounds:
        ``(f, W, cap)``.

        With ``n = played + 1`` (this round included), ``f = weight_limit +
        (weight_noob - weight_limit) / n``, the weight ``W = w f / (1 - f)`` damped by
        0.9 for ``R >= 2000`` and 0.8 for ``R >= 2500``, and the cap
        ``(150 + 1500 / (n + 1)) sqrt(w) f / (0.18 + 0.42 / n)`` (TopCoder's published
        weight scaled by ``f``).  :meth:`round_update` and :meth:`explain` both use it.
        """
        rounds = np.asarray(played).astype(np.float64) + 1.0
        f = self.weight_limit + (self.weight_noob - self.weight_limit) / rounds
        cap = (_CAP_BASE + _CAP_EXTRA / (rounds + 1.0)) * math.sqrt(contest_weight) * f / (
            _TC_LIMIT + _TC_EXTRA / rounds
        )
        weight = f * contest_weight / (1.0 - f)
        damp = np.ones(rounds.size)
        for threshold, factor in reversed(_DAMPING):  # the higher threshold wins
            damp[np.asarray(mu) >= threshold] = factor
        weight *= damp
        return f, weight, cap

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round; a team round is rated as a round of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`)."""
        import podium.systems.topcoder.kernels as K

        if rnd.is_team_round:
            return TM.rate_as_entities(rnd, lambda ent: self.round_update(state, ent))
        c = rnd.contest
        mu = np.asarray(rnd.mu, dtype=np.float64)
        vol = np.asarray(rnd.sigma, dtype=np.float64)
        n = mu.size
        # 1. competition factor
        var = vol * vol
        cf = self.competition_factor(mu, var)
        # 2.-3. expected and actual rank -> performance
        sqrt_w = math.sqrt(c.weight)
        ex_rank = K.expected_ranks(np.ascontiguousarray(mu), var, sqrt_w)
        ac_rank = 0.5 * (1.0 + rnd.lo + rnd.hi)
        from scipy.special import ndtri  # type: ignore[import-untyped]

        perf = mu + cf * (ndtri(ex_rank / n) - ndtri(ac_rank / n))
        ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
        if ceiling is not None:
            perf = np.minimum(perf, ceiling)
        # 4. weight and cap from experience (rounds played, this one included)
        _, weight, cap = self.weight_and_cap(mu, rnd.played, c.weight)
        # 5. capped rating, volatility from the uncapped change
        tried = (mu + weight * perf) / (1.0 + weight)
        new_mu = np.clip(tried, mu - cap, mu + cap)
        new_vol = np.sqrt((tried - mu) ** 2 / weight + var / (1.0 + weight))
        return RoundOutput(mu=new_mu, sigma=new_vol, perf=perf)
