"""Team rounds of the two-phase systems (Elo-MMR, all variants, and Elo-R).

The array-level steps of the team rule derived in ``docs/teams.md`` ("Elo-MMR and
Elo-R").  Equation numbers refer to [EbtekarLiu2021]; ``(T1)``-``(T6)`` to
docs/teams.md.  A round's rows are the members, teams adjacent and best first; team
``t`` is rows ``offsets[t]:offsets[t + 1]`` and member ``i`` has weight ``w_i`` in
``(0, 1]``.

* :func:`team_terms` -- phase 1's opponent terms, one per team (T1): the team
  performance is the weighted sum of its members' performances, so
  ``mu_T = sum_i w_i mu_i`` and ``delta_T^2 = sum_i w_i^2 delta_i^2``;
* the system then solves each team performance ``P_T`` from Theorem 3.2 over the
  team terms, with the teams' tie ranges (:func:`team_places`);
* :func:`member_measurements` -- phase 2's per-member measurement (T4): conditioning
  the member's skill on the team sum equals an individual measurement
  ``p_i = mu_i + (P_T - mu_T) / w_i`` with noise
  ``b_i^2 = beta_i^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2``, which the system adds
  to the member's history as usual (Eq. 6-8).

A one-member team of weight 1 gets ``mu_T = mu_i``, ``delta_T = delta_i``,
``p_i = P_T`` and ``b_i = beta_i`` exactly (no floating-point round trip), so such a
team is rated as the individual it is, bit for bit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "TeamTerms",
    "MemberMeasurements",
    "check_teams",
    "team_places",
    "team_terms",
    "member_measurements",
    "uncertain_measurements",
    "standings_variance",
    "solve_center",
    "EVEN_MATCH_VARIANCE",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: ``Var[P_T | won] / delta_T^2`` for an even match of two Gaussian teams: ``1 - 1/pi``
#: (the truncated normal's variance; TrueSkill's ``1 - w(0)``), docs/teams.md T7.
EVEN_MATCH_VARIANCE = 1.0 - 1.0 / math.pi


class TeamTerms(NamedTuple):
    """Phase 1's terms, one per team (docs/teams.md, T1).

    Attributes
    ----------
    mu:
        ``mu_T = sum_i w_i mu_i``: the mean of the team performance.
    delta:
        ``delta_T = sqrt(sum_i w_i^2 delta_i^2)``: its spread.
    var_sum:
        ``sum_i w_i^2 delta_i^2`` (kept for :func:`member_measurements`).
    """

    mu: FloatArray
    delta: FloatArray
    var_sum: FloatArray


class MemberMeasurements(NamedTuple):
    """Phase 2's measurement of each member (docs/teams.md, T4).

    Attributes
    ----------
    perf:
        ``p_i = mu_i + (P_T - mu_T) / w_i`` (``P_T / w_i`` for a one-member team).
    noise:
        ``b_i = sqrt(beta_i^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2)``
        (``beta_i`` for a one-member team).
    """

    perf: FloatArray
    noise: FloatArray


def check_teams(offsets: npt.ArrayLike, weight: npt.ArrayLike, n: int) -> tuple[IntArray,
                                                                               FloatArray]:
    """Validated ``(offsets, weight)`` of a team round of ``n`` rows.

    Raises
    ------
    ValueError
        When ``offsets`` does not start at 0, end at ``n`` and increase strictly (every
        team has a member), or a weight is not in ``(0, 1]``.
    """
    offs = np.ascontiguousarray(offsets, dtype=np.int64)
    w = np.ascontiguousarray(weight, dtype=np.float64)
    if offs.ndim != 1 or offs.size < 2 or offs[0] != 0 or offs[-1] != n \
            or np.any(np.diff(offs) <= 0):
        raise ValueError(
            f"team offsets must rise strictly from 0 to the {n} rows of the round "
            f"(every team has a member), got {offs.tolist()[:8]}"
        )
    if w.shape != (n,) or not np.all((w > 0.0) & (w <= 1.0)):
        raise ValueError(f"member weights must be {n} numbers in (0, 1]")
    return offs, w


def team_places(lo: IntArray, offsets: IntArray) -> IntArray:
    """Each team's first place: the row ``lo`` of its first member (the rows of a team
    share the team's place range)."""
    return np.ascontiguousarray(lo[offsets[:-1]], dtype=np.int64)


def team_terms(mu: FloatArray, delta: FloatArray, weight: FloatArray,
               offsets: IntArray) -> TeamTerms:
    """The team terms of phase 1 (docs/teams.md, T1).

    With member performances ``P_i ~ (mu_i, delta_i^2)`` independent, the team
    performance ``P_T = sum_i w_i P_i`` has mean ``mu_T = sum_i w_i mu_i`` and variance
    ``delta_T^2 = sum_i w_i^2 delta_i^2``; it takes the place of the individual's
    ``(mu_j^pi, delta_j)`` of Sec. 3.1 in the performance equation (Theorem 3.2).

    Parameters
    ----------
    mu, delta:
        Per member: the prior rating and ``delta_i = sqrt(sigma_i^2 + beta_i^2)``
        after the pseudodiffusion (Algorithm 2).
    weight:
        Per member weight ``w_i`` in ``(0, 1]``.
    offsets:
        ``T + 1`` team offsets.

    Returns
    -------
    TeamTerms
        A one-member team has ``mu_T = w mu_i`` and ``delta_T = w delta_i`` exactly.
    """
    starts = offsets[:-1]
    sizes = np.diff(offsets)
    wmu = weight * mu
    wd = weight * delta
    var = wd * wd
    mu_t = np.add.reduceat(wmu, starts)
    var_t = np.add.reduceat(var, starts)
    single = sizes == 1
    delta_t = np.where(single, wd[starts], np.sqrt(var_t))
    return TeamTerms(np.ascontiguousarray(mu_t), np.ascontiguousarray(delta_t), var_t)


def member_measurements(mu: FloatArray, delta: FloatArray, beta: FloatArray,
                        weight: FloatArray, offsets: IntArray, terms: TeamTerms,
                        team_perf: FloatArray) -> MemberMeasurements:
    """Each member's performance and its noise from the team performance
    (docs/teams.md, T4).

    With the skill ``s_i ~ N(mu_i, sigma_i^2)`` and ``P_T = w_i s_i + R_i`` where
    ``R_i = w_i (P_i - s_i) + sum_{j != i} w_j P_j`` is independent of ``s_i``, the
    likelihood of ``s_i`` given ``P_T`` is that of an individual measurement

    ``p_i = mu_i + (P_T - mu_T) / w_i``,
    ``b_i^2 = beta_i^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2``,

    which then enters the member's history in place of ``(p, beta)`` (Eq. 6-8).

    Parameters
    ----------
    mu, delta, beta, weight:
        Per member: prior rating, ``delta_i``, the round's ``beta_i`` and ``w_i``.
    offsets:
        ``T + 1`` team offsets.
    terms:
        :func:`team_terms` of the round.
    team_perf:
        Per team: ``P_T`` (Theorem 3.2 over the team terms).

    Returns
    -------
    MemberMeasurements
        A one-member team gets ``p_i = P_T / w_i`` and ``b_i = beta_i`` (so with
        ``w_i = 1`` exactly ``P_T`` and ``beta_i``).
    """
    sizes = np.diff(offsets)
    team = np.repeat(np.arange(sizes.size), sizes)
    single = (sizes == 1)[team]
    excess = (team_perf - terms.mu)[team]
    perf = np.where(single, team_perf[team] / weight, mu + excess / weight)
    wd = weight * delta
    # sum over the other members; >= 0 up to rounding, exactly 0 for one member
    others = np.maximum(terms.var_sum[team] - wd * wd, 0.0)
    noise = np.where(single | (others == 0.0), beta,
                     np.sqrt(beta * beta + others / (weight * weight)))
    return MemberMeasurements(np.ascontiguousarray(perf), np.ascontiguousarray(noise))


def uncertain_measurements(mu: FloatArray, sigma: FloatArray, offsets: IntArray,
                           terms: TeamTerms, measured: MemberMeasurements,
                           team_var: FloatArray) -> MemberMeasurements:
    """Phase 2 with the uncertainty of ``P_T`` (docs/teams.md, T7).

    :func:`member_measurements` conditions each member on ``P_T`` as if the team had
    performed exactly ``P_T``.  With few teams the standings pin ``P_T`` down only
    loosely: its posterior is ``N(P_T, V_T)`` (``V_T`` from the Laplace approximation
    at the mode, :func:`podium.core.numerics.performance_curvature`).  Averaging the
    conditional posterior of each skill over it keeps the mean step and shrinks the
    variance by the factor ``1 - V_T / delta_T^2`` less, which is the measurement

    ``p_i' = mu_i + (p_i - mu_i) d``,
    ``sigma_i^2 + b_i'^2 = (sigma_i^2 + b_i^2) d``,  ``d = delta_T^2 / (delta_T^2 - V_T)``.

    ``V_T -> 0`` (many teams) gives back :func:`member_measurements`; ``V_T`` is capped
    just below ``delta_T^2`` (a result that tells nothing).

    Parameters
    ----------
    mu, sigma:
        Per member: the prior rating and the uncertainty after the pseudodiffusion.
    offsets:
        ``T + 1`` team offsets.
    terms:
        :func:`team_terms` of the round.
    measured:
        :func:`member_measurements` of the round.
    team_var:
        Per team: ``V_T``.
    """
    sizes = np.diff(offsets)
    d2 = (terms.delta * terms.delta)
    v = np.minimum(np.maximum(team_var, 0.0), d2 * (1.0 - 1e-9))
    stretch = np.repeat(d2 / (d2 - v), sizes)
    perf = mu + (measured.perf - mu) * stretch
    s2 = sigma * sigma
    total = (s2 + measured.noise * measured.noise) * stretch
    noise = np.sqrt(np.maximum(total - s2, 0.0))
    return MemberMeasurements(np.ascontiguousarray(perf), np.ascontiguousarray(noise))


def standings_variance(uncertainty: float, delta: FloatArray,
                       n_teams: int | IntArray) -> FloatArray:
    """``V_T = u (1 - 1/pi) delta_T^2 / (T - 1)`` (docs/teams.md, T7): the variance of
    the team performance given the standings of ``T`` teams, for
    :func:`uncertain_measurements`.

    Parameters
    ----------
    uncertainty:
        ``u`` (Elo-MMR's ``team_perf_uncertainty``; 1 is exact for an even match of two
        Gaussian teams).
    delta:
        Per team: ``delta_T`` (:func:`team_terms`).
    n_teams:
        ``T`` of the round (at least 2), or per team the ``T`` of its round.
    """
    frac = uncertainty * EVEN_MATCH_VARIANCE / (n_teams - 1)
    return np.asarray(frac * delta * delta, dtype=np.float64)


def solve_center(terms: TeamTerms, n_rows: int) -> float:
    """Where phase 1 solves the team performance equation: team ratings are sums (five
    players of 1800 make 9000), beyond the solver's absolute bracket, and the equation
    is translation invariant, so it is solved around the teams' mean ``mu_T``.  A round
    of one-member teams (``T == n_rows``) keeps 0, so it solves exactly as the
    individual round does."""
    return float(np.mean(terms.mu)) if terms.mu.size < n_rows else 0.0
