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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    "expected_places",
    "performance_model",
    "predict",
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
    """

    handles: tuple[str, ...]
    mu: FloatArray
    sigma: FloatArray
    known: npt.NDArray[np.bool_]
    win_probability: FloatArray
    expected_place: FloatArray
    model: PerformanceModel


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
    if not (isinstance(weight, int | float) and math.isfinite(weight) and weight > 0):
        raise PodiumError(f"weight must be finite and positive, got {weight!r}")
    mu0, sig0 = system.newcomer()
    n = len(hs)
    mu = np.empty(n)
    sigma = np.empty(n)
    played = np.zeros(n, dtype=np.int64)
    known = np.zeros(n, dtype=bool)
    for k, h in enumerate(hs):
        r = ratings.get(h)
        if r is None:
            mu[k], sigma[k] = mu0, sig0
        else:
            mu[k], sigma[k], played[k] = float(r[0]), float(r[1]), int(r[2])
            known[k] = True
    model = performance_model(system, sigma, played, weight=float(weight))
    p = win_probabilities(mu, model.variance, model.kind)
    return Prediction(hs, mu, sigma, known, p, expected_places(p), model)
