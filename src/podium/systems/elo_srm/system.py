"""EloSRM and SRMFix ([Batty2026]: Batty, "An Elo-based Rating System for Topcoder
Single Round Matches").

One round (one division; Table 1 in the order the factors are applied):

1. every debutant enters at ``R_init(t) = r0 + g * (t - t0)`` (Eq. 19, ``t`` and
   ``t0`` in years; ``t0`` = the first round this rater has rated, kept in the
   state, unless the parameter ``t0_seconds`` fixes it);
2. with ``w_j = 1/(1 + 10**((R_i - R_j)/400))`` (Eq. 3) every participant gets its
   actual and expected rank with ties split 1/2 (Eq. 4), the performance
   ``P = log2(r_hat / r)`` (Eq. 5) and the sensitivity
   ``P' = (1 + sum w_j (1 - w_j)) / (1 + sum w_j)`` (Eq. 12);
3. ``P_A = P / (1 + |P|/M) + (B/K0) P'`` (maximum factor Eq. 15, participation
   bonus Eq. 18; ``K0 = 400/log2(10)``, Eq. 13);
4. ``Delta R = K P_A / (W V F)`` with ``W = sqrt(1 + W1 (N - 1))`` (Eq. 22, ``N``
   the player's round number), ``V = 1 + C P'`` (Eq. 16) and ``F = N_r**gamma``
   (Eq. 21), where ``N_r = 1 + N_r,prev * 2**(-days/D)`` (Eq. 20; 1 at a debut).

All participants use the ratings from before the round.  The fitted parameters
are the exact constants of the seed's Appendix A (VERSION 7).

Divisions
---------
The seed rates each division of a round separately (Sec. 2.4), and so does the
reference code (one ``rateRound`` call per division).  In Podium each division
is its own :class:`~podium.core.contest.Contest` (usually with the same
``time_seconds``); :func:`division_contests` builds them from one table of
handles, scores and division labels.  Nothing else is shared between the
divisions of a round: a player plays in one division, and ``R_init`` depends
only on the time.

SRMFix
------
SRMFix (Sec. 3.5) is this system with ``K = 247, W = sqrt(N), M = 8.2`` and every
later factor switched off: ``c = 0`` (V = 1), ``b = 0`` (no participation bonus),
``g = 0`` (R_init = 1200 always), ``gamma = 0`` (F = 1, so ``d`` is unused) and
``w1 = 1`` (``W = sqrt(1 + (N - 1)) = sqrt(N)``).

Draws
-----
Ties are split 1/2 in the actual *and* the expected rank (Eq. 4, Sec. 2.3: "we want
ties to not adversely affect the ratings"), so a tie is no evidence about skill,
whoever it is against: in a round in which everybody tied every ``P`` is exactly 0.
Such a round is rated as Appendix A rates it (``all_tied="rate"``, the default):
every player gets the participation bonus ``K (B/K0) P' / (W V F)`` and the round
counts in ``N`` and ``N_r``.  So a draw does not move a favourite and an underdog
toward each other; each gains its bonus (larger for the favourite, whose ``P'`` is
larger), and two equal players gain the same.  SRMFix (``B = 0``) moves nobody.
``all_tied="skip"`` leaves the round unrated.

Differences from the reference code
-----------------------------------
* The :class:`~podium.rater.Rater` skips a one-player division (a round of one
  side); Appendix A would still give the player the participation bonus
  ``K (B/K0) P' / (W V F)`` and count the round.
* The sums over opponents are interpolated for large rounds (see
  :mod:`podium.systems.elo_srm.kernels`); they agree with the literal double
  loop to about 1e-12 relative.
* A contest earlier than a player's previous one decays nothing (the Rater
  passes a time difference of 0); the reference would let ``N_r`` grow.

Eq. 9 and ties
--------------
Eq. 9 (``sum P >= 0``) holds for rounds without ties: the expected ranks of
Eq. 4 are the rank vector of a generalised tournament, hence majorised by the
actual ranks ``(1, ..., n)`` (Landau/Moon), and ``sum log`` is Schur-concave.
With ties it can fail, contrary to the seed's Sec. 2.6: two players rated 1200
tied for first and one rated 2000 last give ``P = 0.7312, 0.7312, -1.5567``,
``sum P = -0.094`` (worked out in ``tests/test_elo_srm.py``).  What always holds
is ``sum log2 r_hat >= log2 n!``, which each round checks (with
``sum r_hat = n (n + 1) / 2``) and reports as a warning if broken.  Eq. 10
(``mean P < log2 e - 1``) holds with ties too (``sum log r_hat <= n log mean r_hat``
and ``sum log r >= log n!``); Eq. 11 (``mean |P| < 2``, approached by a fully
reversed round) held on every random round tested, with and without ties.

Newcomers and ``t0``
--------------------
``R_init`` needs ``t0``, which (by default) lives in the rater's state, while
:meth:`EloSRM.newcomer` sees only the contest.  So without ``t0_seconds``,
``newcomer`` returns ``r0`` and :meth:`EloSRM.round_update` enters each debutant
at ``R_init(t)`` (exactly as Appendix A overwrites a new player's rating); the
ratings are right, but the Rater's ``last_change`` of a debut is measured from
``r0``.  Give ``t0_seconds`` to make ``newcomer`` exact.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.contest import Contest
from podium.core.explain import Explanation
from podium.errors import ConfigError, ContestError
from podium.systems.base import (
    ArrayState,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    int_scalar,
    param,
    player_array,
)

__all__ = ["EloSRM", "EloSRMState", "SRMFactors", "division_contests", "K0", "SRMFIX"]

FloatArray = npt.NDArray[np.float64]

#: Eq. 13: rating points per unit of performance, ``400 / log2(10) ~ 120.41``.
K0 = 400.0 * math.log(2.0) / math.log(10.0)
_SECS_PER_DAY = 86400.0
_SECS_PER_YEAR = 365.25 * _SECS_PER_DAY
#: Relative tolerance of the expected-rank invariants checked after every round.
_SUM_TOL = 1e-9


class EloSRMState(ArrayState):
    """Per player: ``recent`` = N_r (Eq. 20) after the player's last round (0: none yet).

    Also the time ``t0`` of the first round (Eq. 19), set by the first round
    rated (``None`` until then).  The round number ``N`` and the time since the
    previous round come from the Rater (``played``, ``delta_seconds``).
    """

    FIELDS = (player_array("recent", fill=0.0), int_scalar("t0", optional=True))
    recent: FloatArray
    t0: int | None


@dataclass(frozen=True)
class EloSRM(RatingSystem):
    """EloSRM ([Batty2026], Table 1); defaults are the fitted constants of Appendix A.

    Parameters
    ----------
    k:
        Base rate of rating change ``K`` (648.31...; SRMFix 247).
    c:
        Competition factor ``C``: ``V = 1 + C P'`` (Eq. 16; 3.888...; 0 turns it off).
    m:
        Maximum factor ``M``: ``P_M = P / (1 + |P|/M)`` (Eq. 15; 4.440...;
        ``math.inf`` turns it off).
    b:
        Participation bonus ``B`` in rating points: ``P_B = (B/K0) P'`` (Eq. 18;
        41.84...; 0 turns it off).
    w1:
        Experience weight ``W1``: ``W = sqrt(1 + W1 (N - 1))`` (Eq. 22; 0.2005...;
        1 gives ``W = sqrt(N)``, 0 turns it off).
    d:
        Half-life ``D`` in days of a round's contribution to ``N_r`` (Eq. 20;
        112.18...; ``math.inf``: ``N_r`` counts every round).
    gamma:
        Frequency exponent: ``F = N_r**gamma`` (Eq. 21; 0.4599...; 0 turns it off).
    g:
        Growth ``G`` of the newcomer rating per year (Eq. 19; 50.67...; 0 turns it off).
    r0:
        Newcomer rating at the first round (1200).
    t0_seconds:
        Time of "the first round" of Eq. 19 (Unix seconds).  ``None`` (default):
        the first contest this rater rates, recorded in the state.

    Notes
    -----
    The Rater's ``mu`` is the rating ``R``.  ``sigma`` is not an uncertainty (the
    seed has none): it is the player's volatility ``K / (W F)`` for the next
    round, i.e. the rating points per unit of adjusted performance ``P_A`` that a
    round played at the time of the last one would move the rating by before
    the competition factor ``V`` (a newcomer: ``K``).  ``perf`` is the rank
    performance ``P = log2(r_hat / r)`` of Eq. 5, in "wins above expectation".
    """

    name: ClassVar[str] = "elosrm"

    k: float = param(648.3147599935407, "positive")
    c: float = param(3.8884120557511483, "nonnegative")
    m: float = param(4.44015774770823, "positive_or_inf")
    b: float = param(41.84027892146161, "finite")
    w1: float = param(0.20058285315948782, "nonnegative")
    d: float = param(112.17636272246507, "positive_or_inf")
    gamma: float = param(0.4599945496035186, "nonnegative")
    g: float = param(50.67198262989024, "finite")
    r0: float = param(1200.0, "finite")
    t0_seconds: int | None = None

    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("r0", "k")
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean rating) gives P and P' (Eqs. 5, 12); each member "
        "moves by its weight times K P_A / (W V F) with its own W and N_r (docs/teams.md)")

    def __post_init__(self) -> None:
        super().__post_init__()
        t0: Any = self.t0_seconds
        if t0 is not None:
            if isinstance(t0, float) and t0.is_integer():
                object.__setattr__(self, "t0_seconds", int(t0))
            elif isinstance(t0, bool) or not isinstance(t0, int):
                raise ConfigError(f"t0_seconds must be an integer (Unix seconds) or None, "
                                  f"got {t0!r}")

    # ------------------------------------------------------------------ interface
    def r_init(self, time_seconds: int, t0: int) -> float:
        """Eq. 19: the entry rating of a round at ``time_seconds`` when the first was at ``t0``."""
        return self.r0 + self.g * ((time_seconds - t0) / _SECS_PER_YEAR)

    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        """``(R_init, K)``.

        ``R_init`` is exact when ``t0_seconds`` is given.  Otherwise ``t0`` lives
        in the rater's state, which this method cannot see: it returns ``r0``
        and :meth:`round_update` enters every debutant at ``R_init(t)`` from the
        state's ``t0`` (the same thing Appendix A does).
        """
        if contest is not None and self.t0_seconds is not None:
            return self.r_init(contest.time_seconds, self.t0_seconds), self.k
        return super().newcomer(contest)

    def make_state(self) -> EloSRMState:
        return EloSRMState()

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """``Delta R = K P_A / (W V F)`` split into the rank performance's and the
        participation bonus's parts (:mod:`podium.systems.elo_srm.explain`)."""
        from podium.systems.elo_srm.explain import explain_elo_srm

        return explain_elo_srm(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round (Table 1).

        A team round: each team is one entity with the weighted mean of its members'
        ratings (a debutant's at ``R_init(t)``), and the round of entities gives every
        team its ``P`` and ``P'`` (Eqs. 3-5, 12; the expected-rank checks run on it).
        Each member then moves by ``w_i K P_A / (W V F)`` with the entity's ``P_A`` and
        ``V`` but its own experience ``W`` and frequency ``F``; its ``N_r`` (Eq. 20)
        and volatility are updated as for a round of its own (the round counts in
        full, as the Rater counts it in ``played``), and its ``perf`` is the entity's.
        """
        import podium.systems.elo_srm.kernels as K

        assert isinstance(state, EloSRMState)
        c = rnd.contest
        t = c.time_seconds
        if self.t0_seconds is not None:
            t0 = self.t0_seconds
        elif state.t0 is not None:
            t0 = state.t0
        else:
            t0 = t
        played = np.asarray(rnd.played, dtype=np.int64)
        debut = played == 0
        # Eq. 19: debutants enter at R_init(t)
        x = np.where(debut, self.r_init(t, t0), np.asarray(rnd.mu, dtype=np.float64))
        # Eqs. 3-5 and 12 (of the round's entities in a team round)
        if rnd.is_team_round:
            ent = TM.entity_round(rnd, mu=x)
            erank, _, perf_t, pprime_t = K.rank_performance(ent.mu, ent.lo, ent.hi, 0)
            tof = TM.team_of(np.asarray(rnd.team_offsets))
            perf, pprime = perf_t[tof], pprime_t[tof]
        else:
            erank, _, perf, pprime = K.rank_performance(
                np.ascontiguousarray(x), np.ascontiguousarray(rnd.lo),
                np.ascontiguousarray(rnd.hi), 0,
            )
        delta_r, recent, volatility = self.rating_change(
            perf, pprime, played, state.recent[rnd.players], rnd.delta_seconds
        )
        if rnd.is_team_round and rnd.weight is not None:
            delta_r = np.asarray(rnd.weight, dtype=np.float64) * delta_r
        warnings = _check_expected_ranks(erank, c.label)
        state.recent[rnd.players] = recent
        state.t0 = t0
        return RoundOutput(mu=x + delta_r, sigma=volatility, perf=perf,
                           warnings=tuple(warnings))

    def rating_change(
        self,
        perf: FloatArray,
        pprime: FloatArray,
        played: npt.NDArray[np.int64],
        recent_prev: FloatArray,
        delta_seconds: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Table 1 from ``P`` and ``P'`` on: ``(Delta R, N_r, volatility K/(W_next F))``.

        ``played`` is the number of earlier rated rounds (``N - 1``),
        ``recent_prev`` the ``N_r`` after the previous round and ``delta_seconds``
        the time since it (both ignored for a debut, where ``N_r = 1``).
        """
        played = np.asarray(played)
        x = self.rating_factors(perf, pprime, played, recent_prev, delta_seconds)
        delta_r = self.k * x.p_a / (x.w * x.v * x.f)
        volatility = self.k / (np.sqrt(1.0 + self.w1 * (played + 1)) * x.f)
        return delta_r, x.recent, volatility

    def rating_factors(
        self,
        perf: FloatArray,
        pprime: FloatArray,
        played: npt.NDArray[np.int64],
        recent_prev: FloatArray,
        delta_seconds: FloatArray,
    ) -> SRMFactors:
        """The factors of ``Delta R = K P_A / (W V F)`` (Table 1) from ``P`` and ``P'``,
        as :meth:`rating_change` (and :meth:`explain`) use them; the arguments are
        :meth:`rating_change`'s."""
        perf = np.asarray(perf, dtype=np.float64)
        pprime = np.asarray(pprime, dtype=np.float64)
        played = np.asarray(played)
        # Eq. 15 (maximum factor) + Eq. 18 (participation bonus)
        p_m = perf if math.isinf(self.m) else perf * self.m / (self.m + np.abs(perf))
        p_a = p_m + (self.b / K0) * pprime
        # Eq. 22 (experience), Eq. 16 (competition)
        w = np.sqrt(1.0 + self.w1 * played)
        v = 1.0 + self.c * pprime
        # Eq. 20-21 (frequency); 2**(-days/D) = lambda**days
        days = np.asarray(delta_seconds, dtype=np.float64) / _SECS_PER_DAY
        decay = np.exp2(-days / self.d)
        recent = np.where(played == 0, 1.0, 1.0 + np.asarray(recent_prev) * decay)
        f = recent**self.gamma
        return SRMFactors(p_m, p_a, w, v, recent, f)


class SRMFactors(NamedTuple):
    """The factors of one round's rating changes (Table 1), per participant."""

    p_m: FloatArray
    """``P_M = P / (1 + |P| / M)``, the rank performance after the maximum factor (Eq. 15)."""
    p_a: FloatArray
    """``P_A = P_M + (B / K0) P'``, with the participation bonus (Eq. 18)."""
    w: FloatArray
    """Experience ``W = sqrt(1 + W1 (N - 1))`` (Eq. 22)."""
    v: FloatArray
    """Competition ``V = 1 + C P'`` (Eq. 16)."""
    recent: FloatArray
    """``N_r``, the recent-participation count after this round (Eq. 20)."""
    f: FloatArray
    """Frequency ``F = N_r^gamma`` (Eq. 21)."""


def _check_expected_ranks(erank: FloatArray, label: str) -> list[str]:
    """Invariants of the expected ranks of one round (a breach means a numerical fault).

    Each pair of players contributes exactly 1 to ``sum r_hat``, so it equals
    ``n (n + 1) / 2``; and ``r_hat`` is the rank vector of a generalised
    tournament, hence majorised by ``(1, ..., n)`` (Landau/Moon), so
    ``sum log2 r_hat >= log2 n!``.  Without ties that is Eq. 9 (``sum P >= 0``).
    """
    n = erank.size
    out = []
    total = float(erank.sum())
    if abs(total - n * (n + 1) / 2) > _SUM_TOL * n * (n + 1):
        out.append(f"contest {label!r}: expected ranks sum to {total!r}, not n(n+1)/2")
    slack = float(np.log2(erank).sum()) - math.lgamma(n + 1) / math.log(2.0)
    if slack < -_SUM_TOL * n:
        out.append(f"contest {label!r}: sum log2(expected rank) < log2(n!) by {-slack:.3g} "
                   "(Eq. 9 without ties)")
    return out


def division_contests(
    handles: Sequence[str],
    scores: Sequence[float] | npt.ArrayLike,
    divisions: Sequence[Hashable],
    *,
    name: str = "",
    time_seconds: int = 0,
    **meta: Any,
) -> list[Contest]:
    """One :class:`Contest` per division of a round (Sec. 2.4), ranked by score.

    Parameters
    ----------
    handles, scores, divisions:
        Parallel sequences: each player's handle, raw score (higher is better;
        equal scores tie, Eq. 4) and division label.
    name, time_seconds, **meta:
        Passed to every contest; each is named ``"{name} [div {label}]"``.

    Returns
    -------
    list of Contest
        In the order of the sorted division labels, all at ``time_seconds``:
        rate them one after another (``Rater.extend``).
    """
    labels = list(divisions)
    if len(labels) != len(handles):
        raise ContestError(f"{len(handles)} handles but {len(labels)} division labels",
                           contest=name or "<unnamed>")
    s = np.asarray(scores, dtype=np.float64)
    out = []
    for lab in sorted(set(labels), key=str):
        sel = [i for i, x in enumerate(labels) if x == lab]
        out.append(Contest.from_scores(
            [handles[i] for i in sel], s[sel],
            name=f"{name} [div {lab}]", time_seconds=time_seconds, **meta,
        ))
    return out


#: SRMFix (Sec. 3.5): K = 247, W = sqrt(N), M = 8.2, every other factor off.
SRMFIX: dict[str, Any] = {"k": 247.0, "m": 8.2, "w1": 1.0, "c": 0.0, "b": 0.0, "g": 0.0,
                          "gamma": 0.0}
