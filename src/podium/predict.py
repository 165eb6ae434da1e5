"""Predictions for a proposed contest: pairwise win probabilities and expected places.

Every player ``i`` entering the contest is summarised by a rating ``mu_i`` and a
*performance variance* ``v_i``: the variance of the player's performance in the
round around ``mu_i`` (skill uncertainty, the skill drift the round would add and
the round's own performance noise).  Two players' performances are independent,
so their difference has mean ``mu_i - mu_j`` and variance ``v_i + v_j``, and

.. math::

    P(i \\text{ beats } j) = F\\left(\\frac{\\mu_i - \\mu_j}{\\sqrt{v_i + v_j}}\\right)

with ``F`` the CDF of a zero-mean, unit-variance distribution: the standard normal
(``kind="gaussian"``) or the logistic of unit variance
``F(x) = 1 / (1 + exp(-pi x / sqrt(3)))`` (``kind="logistic"``).  For Gaussian
performances this is exact; for logistic ones the difference of two logistic
variables is not logistic, and the formula is the logistic with the difference's
variance (right mean and variance; within 0.011 of the exact probability for two
equal variances).
``P(i beats j) + P(j beats i) = 1``; a player against itself gets ``1/2``.

The expected place (1-based) of ``i`` is ``1 + sum_{j != i} P(j beats i)``, so the
expected places of ``n`` players sum to ``n (n + 1) / 2``.

Which ``F`` and ``v_i``: each system says, through its
:meth:`~podium.systems.base.RatingSystem.performance_model` (:func:`performance_model`
validates the inputs and asks it):

* **Elo-MMR** (``mmr``, ``mmr-fast``, ``mmr-inf``, ``mmx``, ``mmx-fast``,
  ``mmr-simple``): the system's own round (see :mod:`podium.systems.elo_mmr`): with
  ``w = contest weight * weight_limit`` (times ``noob_delay[n]`` after ``n`` earlier
  rounds), the performance spread ``beta = sqrt((1 + 1/w) sig_limit^2 +
  drift_per_day / w)`` and the drift ``gamma = sqrt(w) sig_limit``, the player's
  opponent term is ``delta^2 = sigma^2 + gamma^2 + beta^2`` = ``v_i``; ``F`` is the
  logistic for Elo-MMR and the normal for Elo-MMchi (``variant="gaussian"``).  The
  drift for days between rounds (``drift_per_day``) is left out: a proposed contest
  has no date.
* **Glicko, BAR** (logistic) and **TrueSkill** (normal): ``v_i = sigma^2 +
  sig_drift^2 + beta^2 / w``.
* **cfsys** and **Codeforces** (logistic, no uncertainty): ``v_i = beta^2 / 2`` with
  ``beta`` the system's (``400 (pi / sqrt 3) / ln 10``, about 315.09, for
  Codeforces), so that ``P(i beats j) = 1 / (1 + 10^((mu_j - mu_i) / 400))``, the
  Codeforces/Elo formula.
* **TopCoder** (normal): ``v_i = sigma_i^2 / w`` (its expected-rank term
  ``Phi(sqrt(w) (R_j - R_i) / sqrt(V_i^2 + V_j^2))``).
* **Any other system** (the generic fallback, e.g. Elo-R, EloSRM, the pairwise Elo
  family): the logistic with ``v_i = sigma_i^2 + beta_0^2``, ``beta_0 = 315.09 /
  sqrt 2`` -- Elo's 400-point formula for two certain players, widened by the
  players' uncertainties.

**Teams** (:func:`predict_teams`, :func:`team_win_probability`,
:func:`expected_team_places`; docs/teams.md).  A team's performance is the sum of
its members' weighted performances, each member's from the system's own model
above (mean ``mu_i``, variance ``v_i``) and independent, with member weights
``w_i`` in (0, 1] (partial play; 1 = the whole round):

.. math::

    M_A = \\sum_{i \\in A} w_i \\mu_i, \\qquad V_A = \\sum_{i \\in A} w_i^2 v_i, \\qquad
    P(A \\text{ beats } B) = F\\left(\\frac{M_A - M_B}{\\sqrt{V_A + V_B}}\\right)

-- the players' formula with teams for players, so a round of one-member teams of
weight 1 gets exactly the players' numbers.  Expected team places are
``1 + sum_{B != A} P(B beats A)`` (they sum to ``T (T + 1) / 2``).

**Match quality** (:func:`match_quality`, for matchmaking): how balanced a proposed
lobby of ``T >= 2`` teams (or players) is, one minus the mean distance of the
pairwise win probabilities from a coin toss:

.. math::

    q = 1 - \\frac{2}{T (T - 1)} \\sum_{A < B} \\left| 2 P(A \\text{ beats } B) - 1 \\right|

``q = 1`` when every pair is an even match (mirrored teams), ``q -> 0`` when every
pair is a foregone conclusion; for two teams ``q = 1 - |2 P - 1|``, twice the
underdog's chance.  It uses the system's own ``F`` and variances, so it is the same
measure for every system (TrueSkill's draw-probability quality, by contrast, needs a
Gaussian model and the system's draw margin).

**Outcome probabilities** (:func:`outcome_probabilities`; the fields ``p_first``,
``p_draw`` and ``place_probability`` of :class:`Prediction` and :class:`TeamPrediction`):
each side's probability of finishing first and at each place, from the exact
distributions of the sides' performances under the same model (a logistic team is a
sum of logistics; :mod:`podium.outcomes`), and the probability of a draw where the
system has a draw model (:func:`draw_margin`; openskill's systems answer openskill's
``predict_win`` and ``predict_draw``).  For logistic models the pairwise formula above
and ``P(first)`` of two sides differ by at most 0.011 (the formula's approximation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.errors import PodiumError
from podium.outcomes import (
    draw_probability,
    expected_places,
    match_quality,
    openskill_draw,
    openskill_three_way,
    openskill_win,
    place_probabilities,
    side_model,
    team_performance,
    three_way,
    win_probabilities,
)
from podium.systems.base import ELO_BETA, PerformanceKind, PerformanceModel, RatingSystem

__all__ = [
    "ELO_BETA",
    "PerformanceModel",
    "Prediction",
    "TeamPrediction",
    "draw_margin",
    "expected_places",
    "expected_team_places",
    "match_quality",
    "outcome_probabilities",
    "performance_model",
    "predict",
    "predict_teams",
    "ratings_of",
    "team_performance",
    "team_win_probability",
    "three_way_probabilities",
    "win_probabilities",
]

FloatArray = npt.NDArray[np.float64]
Kind = PerformanceKind


@dataclass(frozen=True)
class Prediction:
    """Predictions for one proposed contest.

    Attributes
    ----------
    handles:
        The players, in the order given.
    mu, sigma:
        Each player's rating and uncertainty used (newcomers: the system's prior).
    known:
        False for a handle the store does not know (rated as a newcomer).
    win_probability:
        ``win_probability[i, j]`` = P(player i finishes ahead of player j); 1/2 on the
        diagonal.
    expected_place:
        1-based expected place of each player.
    model:
        The performance model used.
    p_first:
        Each player's probability of finishing first (sums to 1); see
        :func:`outcome_probabilities`.
    p_draw:
        The probability of a draw where the system has a draw model (for more than
        two players the mean over pairs, as openskill defines it), else ``None``.
    place_probability:
        ``place_probability[i, r]`` = P(player i finishes at place r), places 0-based
        (rows and columns sum to 1).
    match_quality:
        :func:`match_quality` of the lobby (``None`` for a single player).
    """

    handles: tuple[str, ...]
    mu: FloatArray
    sigma: FloatArray
    known: npt.NDArray[np.bool_]
    win_probability: FloatArray
    expected_place: FloatArray
    model: PerformanceModel
    p_first: FloatArray
    p_draw: float | None
    place_probability: FloatArray
    match_quality: float | None = None


def performance_model(
    system: RatingSystem,
    sigma: npt.ArrayLike,
    played: npt.ArrayLike | None = None,
    *,
    weight: float = 1.0,
) -> PerformanceModel:
    """The performance model of ``system`` for players with uncertainty ``sigma``.

    Parameters
    ----------
    system:
        The rating system (its parameters set beta, drift, ...).
    sigma:
        Each player's current uncertainty, shape ``(n,)``.
    played:
        Rounds each player has played before (Elo-MMR's ``noob_delay``); default 0.
    weight:
        Weight of the proposed contest (default 1).

    Returns
    -------
    PerformanceModel
        ``system.performance_model(sigma, played, weight)``: each system owns its model
        (see the module docstring for the formulas of each system).
    """
    s = np.asarray(sigma, dtype=np.float64)
    if not (math.isfinite(weight) and weight > 0):
        raise ValueError(f"weight must be finite and positive, got {weight!r}")
    n_played = (
        np.zeros(s.shape, dtype=np.int64) if played is None
        else np.asarray(played, dtype=np.int64)
    )
    return system.performance_model(s, n_played, float(weight))


def predict(
    system: RatingSystem,
    handles: Sequence[str],
    ratings: dict[str, tuple[float, float, int]],
    *,
    weight: float = 1.0,
) -> Prediction:
    """Win probabilities and expected places of ``handles`` in a proposed contest.

    Parameters
    ----------
    system:
        The rating system whose performance model is used.
    handles:
        The players (distinct, non-empty strings).
    ratings:
        ``handle -> (mu, sigma, contests played)`` of the known players (as returned
        by ``Store.current_ratings``); any other handle is a newcomer with the
        system's prior ``system.newcomer()``.
    weight:
        Weight of the proposed contest (default 1).

    Returns
    -------
    Prediction

    Raises
    ------
    PodiumError
        On an empty list, an empty or repeated handle, or a bad weight.
    """
    hs = tuple(handles)
    if not hs:
        raise PodiumError("handles: give at least one player")
    seen: set[str] = set()
    for h in hs:
        if not isinstance(h, str) or not h:
            raise PodiumError(f"handles: every handle must be a non-empty string, got {h!r}")
        if h in seen:
            raise PodiumError(f"handles: player {h!r} is listed twice")
        seen.add(h)
    _check_weight(weight)
    n = len(hs)
    mu, sigma, played, known = ratings_of(system, hs, ratings)
    model = performance_model(system, sigma, played, weight=float(weight))
    p = win_probabilities(mu, model.variance, model.kind)
    _check_uncertain(system, model.variance, hs, "player")
    first, draw, place = outcome_probabilities(system, mu, sigma, model)
    return Prediction(hs, mu, sigma, known, p, expected_places(p), model, first, draw, place,
                      match_quality(p) if n >= 2 else None)


def draw_margin(system: RatingSystem, n_players: int) -> float | None:
    """The draw margin of ``system``'s model for a match of ``n_players`` players.

    Two sides draw when their performances lie within the margin of each other
    (:func:`podium.outcomes.draw_probability`).  Each system declares it:
    :meth:`podium.systems.base.RatingSystem.draw_margin` (``None``: no draw
    probability in the model; TrueSkill: ``2 eps``).  openskill's systems are answered
    by their own formula in :func:`outcome_probabilities`, not by a margin.

    Parameters
    ----------
    system:
        The rating system.
    n_players:
        Players in the match (a margin may depend on it, as openskill's does).
    """
    margin = system.draw_margin(n_players)
    return None if margin is None else float(margin)


def outcome_probabilities(
    system: RatingSystem, mu: FloatArray, sigma: FloatArray, model: PerformanceModel,
    offsets: npt.NDArray[np.int64] | None = None, member_weight: FloatArray | None = None,
) -> tuple[FloatArray, float | None, FloatArray]:
    """``p_first``, ``p_draw`` and ``place_probability`` of a proposed match.

    The sides' performances are the model's (:mod:`podium.outcomes`: a side performs the
    weighted sum of its members' performances, normal or logistic with the variances of
    ``model``); ``place_probability`` and, except for openskill, ``p_first`` are exact
    under it (trapezoid quadrature to ~1e-12; a team of a logistic model is a sum of
    logistics, not a logistic).  ``p_draw`` is ``None`` unless :func:`draw_margin`
    gives a margin.  The ``openskill-*`` systems answer openskill 6.2.0's
    ``predict_win`` and ``predict_draw`` (:func:`podium.outcomes.openskill_win`,
    :func:`~podium.outcomes.openskill_draw`: pairwise averages for more than two
    teams, team rating ``sum w_i mu_i``, ``sum w_i^2 sigma_i^2`` with openskill's
    ``balance`` weights when set), which users switching from openskill expect; their
    ``place_probability`` is still the model's.

    Parameters
    ----------
    system:
        The rating system.
    mu, sigma:
        Per member: rating and uncertainty.
    model:
        The members' performance model (:func:`performance_model`).
    offsets:
        ``T + 1`` offsets of the sides (``None``: every member alone).
    member_weight:
        Per member weight in (0, 1] (``None``: all 1).

    Returns
    -------
    tuple
        ``(p_first, p_draw, place_probability)``: shape ``(T,)``, float or ``None``,
        shape ``(T, T)``.
    """
    from podium.systems.openskill import OpenSkillModel

    sides = side_model(mu, model.variance, offsets, member_weight, model.kind)
    place = place_probabilities(sides)
    n = int(np.asarray(mu).size)
    if sides.sides < 2:
        return np.ones(1), None, place
    if isinstance(system, OpenSkillModel):
        t_mu, t_s2 = _openskill_teams(system, mu, sigma, sides.offsets, member_weight)
        return (openskill_win(t_mu, t_s2, float(system.beta)),
                openskill_draw(t_mu, t_s2, float(system.beta), n), place)
    first = np.minimum(place[:, 0] / place[:, 0].sum(), 1.0)
    margin = draw_margin(system, n)
    return first, None if margin is None else draw_probability(sides, margin), place


def three_way_probabilities(
    system: RatingSystem, mu: FloatArray, sigma: FloatArray, model: PerformanceModel,
    offsets: npt.NDArray[np.int64] | None = None, member_weight: FloatArray | None = None,
) -> FloatArray | None:
    """``[P(side 0 wins), P(draw), P(side 1 wins)]`` of a two-side match, where the
    system has a draw model (``None`` where it has none); arguments as for
    :func:`outcome_probabilities`.

    A win is a performance ahead by more than the draw margin
    (:func:`podium.outcomes.three_way`); the ``openskill-*`` systems use openskill's
    pairwise model and draw margin (:func:`podium.outcomes.openskill_three_way`, whose
    draw is ``predict_draw``).
    """
    from podium.systems.openskill import OpenSkillModel

    sides = side_model(mu, model.variance, offsets, member_weight, model.kind)
    if sides.sides != 2:
        raise ValueError(f"three outcomes need exactly two sides, got {sides.sides}")
    n = int(np.asarray(mu).size)
    if isinstance(system, OpenSkillModel):
        t_mu, t_s2 = _openskill_teams(system, mu, sigma, sides.offsets, member_weight)
        return openskill_three_way(t_mu, t_s2, float(system.beta), n)
    margin = draw_margin(system, n)
    return None if margin is None else three_way(sides, margin)


def _openskill_teams(system: Any, mu: FloatArray, sigma: FloatArray,
                     offsets: npt.NDArray[np.int64], member_weight: FloatArray | None
                     ) -> tuple[FloatArray, FloatArray]:
    """openskill's team ratings (its ``_calculate_team_ratings``): ``sum b_i w_i mu_i``
    and ``sum (b_i w_i sigma_i)^2``, with ``b_i = 1 + (o_max - o_i) / (o_max + kappa)``
    (``o = mu - 3 sigma``, the team's best ``o_max``) when ``balance`` is set, else 1."""
    m = np.asarray(mu, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    w = np.ones(m.size) if member_weight is None else np.asarray(member_weight, np.float64)
    starts = offsets[:-1]
    if bool(system.balance):
        ordinal = m - 3.0 * s
        best = np.repeat(np.maximum.reduceat(ordinal, starts), np.diff(offsets))
        w = w * (1.0 + (best - ordinal) / (best + float(system.kappa)))
    return np.add.reduceat(w * m, starts), np.add.reduceat((w * s) ** 2, starts)


def _check_uncertain(system: RatingSystem, variance: FloatArray, names: Sequence[str],
                     what: str) -> None:
    """:class:`PodiumError` naming the first side whose performance variance is 0 (its
    place would be certain, which the outcome probabilities do not model)."""
    zero = np.flatnonzero(~(variance > 0))
    if zero.size:
        raise PodiumError(
            f"{what} {names[int(zero[0])]!r}: its performance variance under "
            f"{type(system).__name__}'s model is 0 (a rating with sigma 0?); place and "
            "first-place probabilities need every performance to be uncertain")


def _check_weight(weight: object) -> None:
    if isinstance(weight, bool) or not (
        isinstance(weight, int | float) and math.isfinite(weight) and weight > 0
    ):
        raise PodiumError(f"weight must be finite and positive, got {weight!r}")


def ratings_of(
    system: RatingSystem, handles: Sequence[str], ratings: dict[str, tuple[float, float, int]]
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``mu, sigma, played, known`` of ``handles``: the stored rating (``ratings``:
    ``handle -> (mu, sigma, contests played)``), else the system's newcomer prior
    (``played`` 0, ``known`` False)."""
    mu0, sig0 = system.newcomer()
    n = len(handles)
    mu = np.empty(n)
    sigma = np.empty(n)
    played = np.zeros(n, dtype=np.int64)
    known = np.zeros(n, dtype=bool)
    for k, h in enumerate(handles):
        r = ratings.get(h)
        if r is None:
            mu[k], sigma[k] = mu0, sig0
        else:
            mu[k], sigma[k], played[k] = float(r[0]), float(r[1]), int(r[2])
            known[k] = True
    return mu, sigma, played, known


# ---------------------------------------------------------------------- teams
#: A team member: a handle, or a ``(handle, weight)`` pair with ``weight`` in (0, 1].
Member = str | tuple[str, float]
#: Teams of a proposed contest: ``(name, members)`` pairs, or a mapping name -> members.
TeamsSpec = Sequence[tuple[str, Sequence[Member]]] | Mapping[str, Sequence[Member]]


@dataclass(frozen=True)
class TeamPrediction:
    """Predictions for one proposed team contest.

    Attributes
    ----------
    names:
        The ``T`` team names, in the order given.
    offsets:
        ``T + 1`` offsets: team ``t`` is members ``offsets[t]:offsets[t + 1]``.
    handles, member_weight:
        The members, team by team, and their weights in (0, 1].
    mu, sigma, known:
        Each member's rating and uncertainty used, and False for a newcomer (a handle
        without a stored rating, rated with the system's prior).
    team_mu, team_variance:
        Each team's performance mean ``sum w_i mu_i`` and variance ``sum w_i^2 v_i``.
    win_probability:
        ``(T, T)``: ``win_probability[a, b]`` = P(team a finishes ahead of team b); 1/2
        on the diagonal.
    expected_place:
        1-based expected place of each team.
    match_quality:
        :func:`match_quality` of the lobby, in (0, 1].
    model:
        The members' performance model (``variance``: each member's ``v_i``).
    p_first, p_draw, place_probability:
        Each team's probability of finishing first, the probability of a draw
        (``None`` without a draw model) and ``P(team t at place r)``, as in
        :class:`Prediction` (:func:`outcome_probabilities`).
    """

    names: tuple[str, ...]
    offsets: npt.NDArray[np.int64]
    handles: tuple[str, ...]
    member_weight: FloatArray
    mu: FloatArray
    sigma: FloatArray
    known: npt.NDArray[np.bool_]
    team_mu: FloatArray
    team_variance: FloatArray
    win_probability: FloatArray
    expected_place: FloatArray
    match_quality: float
    model: PerformanceModel
    p_first: FloatArray
    p_draw: float | None
    place_probability: FloatArray


def _team_rows(teams: TeamsSpec) -> tuple[list[str], list[str], list[float], list[int]]:
    """Names, member handles and weights (team by team) and offsets of ``teams``;
    :class:`PodiumError` naming the team and player at fault."""
    items = list(teams.items()) if isinstance(teams, Mapping) else list(teams)
    if len(items) < 2:
        raise PodiumError(f"teams: give at least two teams, got {len(items)}")
    names: list[str] = []
    handles: list[str] = []
    weights: list[float] = []
    offsets = [0]
    team_of: dict[str, str] = {}
    for k, item in enumerate(items):
        if isinstance(item, str) or not isinstance(item, Sequence) or len(item) != 2:
            raise PodiumError(f"teams: team #{k} must be a (name, members) pair, got {item!r}")
        name, members = item
        if not isinstance(name, str) or not name:
            raise PodiumError(f"teams: team #{k}: the name must be a non-empty string, "
                              f"got {name!r}")
        if name in names:
            raise PodiumError(f"teams: two teams are named {name!r}")
        if isinstance(members, str) or not isinstance(members, Sequence) or not members:
            raise PodiumError(f"team {name!r}: members must be a non-empty list of handles, "
                              f"got {members!r}")
        for m in members:
            w: object
            if isinstance(m, str):
                h, w = m, 1.0
            elif isinstance(m, Sequence) and len(m) == 2:
                h, w = m[0], m[1]
            else:
                raise PodiumError(f"team {name!r}: a member must be a handle or a (handle, "
                                  f"weight) pair, got {m!r}")
            if not isinstance(h, str) or not h:
                raise PodiumError(f"team {name!r}: every handle must be a non-empty string, "
                                  f"got {h!r}")
            if isinstance(w, bool) or not isinstance(w, int | float) or not 0.0 < w <= 1.0:
                raise PodiumError(f"team {name!r}, player {h!r}: the member weight must be a "
                                  f"number in (0, 1], got {w!r}")
            other = team_of.get(h)
            if other is not None:
                where = (f"twice in team {name!r}" if other == name
                         else f"in two teams ({other!r} and {name!r})")
                raise PodiumError(f"teams: player {h!r} is {where}")
            team_of[h] = name
            handles.append(h)
            weights.append(float(w))
        names.append(name)
        offsets.append(len(handles))
    return names, handles, weights, offsets


def predict_teams(
    system: RatingSystem,
    teams: TeamsSpec,
    ratings: dict[str, tuple[float, float, int]],
    *,
    weight: float = 1.0,
) -> TeamPrediction:
    """Team win probabilities, expected places and match quality of a proposed contest.

    Parameters
    ----------
    system:
        The rating system whose performance model is used for the members.
    teams:
        At least two teams: ``(name, members)`` pairs (or a mapping ``name ->
        members``), a member being a handle or a ``(handle, weight)`` pair with
        ``weight`` in (0, 1] (partial play; default 1).
    ratings:
        ``handle -> (mu, sigma, contests played)`` of the known players; any other
        handle is a newcomer with the system's prior (as in :func:`predict`).
    weight:
        Weight of the proposed contest (default 1).

    Returns
    -------
    TeamPrediction

    Raises
    ------
    PodiumError
        On fewer than two teams, an empty or repeated team name, an empty team, an
        empty handle, a player listed twice (in one team or two), a member weight
        outside (0, 1] or a bad contest weight; the message names the team and player.
    """
    names, handles, weights, offsets = _team_rows(teams)
    _check_weight(weight)
    mu, sigma, played, known = ratings_of(system, handles, ratings)
    model = performance_model(system, sigma, played, weight=float(weight))
    w = np.asarray(weights, dtype=np.float64)
    off = np.asarray(offsets, dtype=np.int64)
    t_mu, t_var = team_performance(mu, model.variance, off, w)
    p = win_probabilities(t_mu, t_var, model.kind)
    _check_uncertain(system, t_var, names, "team")
    first, draw, place = outcome_probabilities(system, mu, sigma, model, off, w)
    return TeamPrediction(tuple(names), off, tuple(handles), w, mu, sigma, known, t_mu, t_var,
                          p, expected_places(p), match_quality(p), model, first, draw, place)


def team_win_probability(
    system: RatingSystem,
    team_a: Sequence[Member],
    team_b: Sequence[Member],
    ratings: dict[str, tuple[float, float, int]],
    *,
    weight: float = 1.0,
) -> float:
    """P(team A finishes ahead of team B): ``F((M_A - M_B) / sqrt(V_A + V_B))``.

    ``team_a`` and ``team_b`` list their members (handles or ``(handle, weight)``
    pairs); ``ratings`` and ``weight`` as for :func:`predict_teams` (whose errors it
    raises, the teams being named ``"A"`` and ``"B"``).
    """
    pred = predict_teams(system, [("A", team_a), ("B", team_b)], ratings, weight=weight)
    return float(pred.win_probability[0, 1])


def expected_team_places(
    system: RatingSystem,
    teams: TeamsSpec,
    ratings: dict[str, tuple[float, float, int]],
    *,
    weight: float = 1.0,
) -> FloatArray:
    """1-based expected places of ``teams`` (in the order given; they sum to
    ``T (T + 1) / 2``); arguments and errors as for :func:`predict_teams`."""
    return predict_teams(system, teams, ratings, weight=weight).expected_place
