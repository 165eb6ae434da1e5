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
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr  # type: ignore[import-untyped]

from podium.core.numerics import TANH_MULTIPLIER
from podium.errors import PodiumError
from podium.systems.base import ELO_BETA, PerformanceKind, PerformanceModel, RatingSystem

__all__ = [
    "ELO_BETA",
    "PerformanceModel",
    "Prediction",
    "TeamPrediction",
    "expected_places",
    "expected_team_places",
    "match_quality",
    "performance_model",
    "predict",
    "predict_teams",
    "team_performance",
    "team_win_probability",
    "win_probabilities",
]

FloatArray = npt.NDArray[np.float64]
Kind = PerformanceKind

_LOGISTIC_SCALE = TANH_MULTIPLIER


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
    match_quality: float | None = None


def _check_vectors(mu: npt.ArrayLike, variance: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    m = np.asarray(mu, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    if m.ndim != 1:
        raise ValueError(f"mu must be one-dimensional, got shape {m.shape}")
    v = np.broadcast_to(v, m.shape).astype(np.float64)
    if not np.all(np.isfinite(m)):
        bad_mu = int(np.flatnonzero(~np.isfinite(m))[0])
        raise ValueError(f"mu must be finite; bad entry at index {bad_mu}")
    bad = ~(np.isfinite(v) & (v >= 0))
    if bad.any():
        raise ValueError(
            f"variance must be finite and >= 0; bad entry at index {int(np.flatnonzero(bad)[0])}"
        )
    return m, v


def _cdf(x: FloatArray, kind: Kind) -> FloatArray:
    if kind == "gaussian":
        return np.asarray(ndtr(x), dtype=np.float64)
    if kind == "logistic":
        # 1 / (1 + exp(-s x)) written with tanh: no overflow, exact symmetry
        return 0.5 + 0.5 * np.tanh(0.5 * _LOGISTIC_SCALE * x)
    raise ValueError(f"kind must be 'logistic' or 'gaussian', got {kind!r}")


def win_probabilities(
    mu: npt.ArrayLike, variance: npt.ArrayLike, kind: Kind = "gaussian"
) -> FloatArray:
    """Pairwise win probabilities ``P[i, j] = F((mu_i - mu_j) / sqrt(v_i + v_j))``.

    Parameters
    ----------
    mu:
        Ratings, shape ``(n,)``.
    variance:
        Performance variances ``v_i`` (shape ``(n,)`` or a scalar), >= 0.
    kind:
        ``"gaussian"`` (standard normal ``F``) or ``"logistic"`` (unit-variance logistic).

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` matrix with ``P + P.T == 1`` and ``1/2`` on the diagonal.  Two players
        with zero variance each get 1, 0 or 1/2 (the sign of the rating difference).
    """
    m, v = _check_vectors(mu, variance)
    diff = m[:, None] - m[None, :]
    spread = np.sqrt(v[:, None] + v[None, :])
    z = np.zeros_like(diff)
    pos = spread > 0
    z[pos] = diff[pos] / spread[pos]
    certain = ~pos & (diff != 0)
    z[certain] = np.sign(diff[certain]) * np.inf
    p = _cdf(z, kind)
    # exact antisymmetry whatever the rounding: keep the upper triangle, mirror it
    iu = np.triu_indices(m.size, 1)
    p[(iu[1], iu[0])] = 1.0 - p[iu]
    np.fill_diagonal(p, 0.5)
    return p


def expected_places(win_probability: npt.ArrayLike) -> FloatArray:
    """1-based expected places ``1 + sum_{j != i} P[j, i]`` from a win-probability matrix.

    Parameters
    ----------
    win_probability:
        ``(n, n)`` matrix as returned by :func:`win_probabilities`.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; sums to ``n (n + 1) / 2`` when ``P + P.T == 1``.
    """
    p = np.asarray(win_probability, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"win_probability must be a square matrix, got shape {p.shape}")
    beaten_by = p.sum(axis=0) - np.diag(p)
    return 1.0 + beaten_by


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
    mu, sigma, played, known = _ratings_of(system, hs, ratings)
    model = performance_model(system, sigma, played, weight=float(weight))
    p = win_probabilities(mu, model.variance, model.kind)
    return Prediction(hs, mu, sigma, known, p, expected_places(p), model,
                      match_quality(p) if n >= 2 else None)


def _check_weight(weight: object) -> None:
    if isinstance(weight, bool) or not (
        isinstance(weight, int | float) and math.isfinite(weight) and weight > 0
    ):
        raise PodiumError(f"weight must be finite and positive, got {weight!r}")


def _ratings_of(
    system: RatingSystem, handles: Sequence[str], ratings: dict[str, tuple[float, float, int]]
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """``mu, sigma, played, known`` of ``handles``: the stored rating, else the
    system's newcomer prior."""
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


def team_performance(
    mu: npt.ArrayLike, variance: npt.ArrayLike, offsets: npt.ArrayLike,
    member_weight: npt.ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Team performance means ``sum w_i mu_i`` and variances ``sum w_i^2 v_i``.

    Parameters
    ----------
    mu, variance:
        Per member: rating and performance variance ``v_i`` (>= 0), team by team.
    offsets:
        ``T + 1`` non-decreasing offsets from 0 to the number of members: team ``t`` is
        members ``offsets[t]:offsets[t + 1]`` (each team has at least one member).
    member_weight:
        Per member weight in (0, 1] (``None``: all 1).

    Returns
    -------
    tuple of numpy.ndarray
        ``(team_mu, team_variance)``, shape ``(T,)`` each.  The members of a team are
        summed in the order given.
    """
    m, v = _check_vectors(mu, variance)
    off = np.asarray(offsets, dtype=np.int64)
    n = m.size
    if off.ndim != 1 or off.size < 2 or off[0] != 0 or off[-1] != n:
        raise ValueError(f"offsets must run from 0 to {n} (the number of members), "
                         f"got {off.tolist()}")
    if np.any(np.diff(off) <= 0):
        t = int(np.flatnonzero(np.diff(off) <= 0)[0])
        raise ValueError(f"every team needs at least one member; team #{t} has none")
    w = np.ones(n) if member_weight is None else np.asarray(member_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{n} members but {w.size} weights")
    bad = ~((w > 0.0) & (w <= 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"member weights must be in (0, 1]; bad entry at index {i}")
    starts = off[:-1]
    return np.add.reduceat(w * m, starts), np.add.reduceat(w * w * v, starts)


def match_quality(win_probability: npt.ArrayLike) -> float:
    """How balanced a lobby is: ``1 - mean over pairs of |2 P[a, b] - 1|``.

    Parameters
    ----------
    win_probability:
        ``(T, T)`` matrix with ``T >= 2`` (teams or players) as returned by
        :func:`win_probabilities` or in :class:`TeamPrediction`.

    Returns
    -------
    float
        In [0, 1]: 1 when every pair is an even match, tending to 0 as every pair
        becomes a foregone conclusion (see the module docstring).
    """
    p = np.asarray(win_probability, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"win_probability must be a square matrix, got shape {p.shape}")
    t = p.shape[0]
    if t < 2:
        raise ValueError("match quality needs at least two teams (or players)")
    iu = np.triu_indices(t, 1)
    return float(1.0 - np.mean(np.abs(2.0 * p[iu] - 1.0)))


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
    mu, sigma, played, known = _ratings_of(system, handles, ratings)
    model = performance_model(system, sigma, played, weight=float(weight))
    w = np.asarray(weights, dtype=np.float64)
    off = np.asarray(offsets, dtype=np.int64)
    t_mu, t_var = team_performance(mu, model.variance, off, w)
    p = win_probabilities(t_mu, t_var, model.kind)
    return TeamPrediction(tuple(names), off, tuple(handles), w, mu, sigma, known, t_mu, t_var,
                          p, expected_places(p), match_quality(p), model)


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
