"""How well ratings predict team contests.

A team contest (see :class:`~podium.core.contest.Contest` and docs/teams.md) ranks
teams, best first.  Its rows are the members, team ``t`` being rows
``offsets[t]:offsets[t + 1]``, each with a weight ``w_i`` in (0, 1] (partial play).
The metrics compare the ratings the members held *before* the contest with the
team result:

* **Team pair inversion and rank deviation**: [EbtekarLiu2021]'s metrics (Sec. 6;
  :func:`podium.evaluation.metrics.pair_inversion` and
  :func:`~podium.evaluation.metrics.rank_deviation`) applied to the teams of a round,
  each team predicted by its *strength*: ``sum_i w_i mu_i`` (:func:`team_strength`),
  the mean of the team performance under every team rule of Podium.  A system may
  give its own team prediction instead through a method
  ``team_strength(mu, sigma, played, offsets, weight)`` (none does today).
* **Win-probability log-loss and Brier score** of two-team contests: the
  probability :func:`team_win_probability` gives the first team against the second
  is scored against the result (1 if the first team won, 0 if it lost, 1/2 for a
  draw): log-loss ``-[y ln p + (1 - y) ln(1 - p)]`` (natural logarithm; ``ln 2 =
  0.6931`` for a coin flip) and Brier ``(p - y)^2`` (0.25 for a coin flip), both
  averaged over the scored contests.

As for the individual metrics, only *experienced* teams are scored: a team counts
when every member has at least ``min_history`` earlier rated contests, and a
two-team contest counts when both teams do (:class:`TeamMetricAccumulator`).

Examples
--------
>>> import numpy as np
>>> strength = team_strength(np.array([1500.0, 1400.0, 1600.0, 1200.0]),
...                          np.array([0, 2, 4]))
>>> strength.tolist()
[2900.0, 2800.0]
>>> log_loss([0.8], [1.0]), brier_score([0.8], [1.0])  # doctest: +ELLIPSIS
(0.2231..., 0.0399...)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.evaluation.metrics import is_outcome_free, pair_inversion, rank_deviation
from podium.evaluation.metrics import renumber_ties as _renumber
from podium.systems.base import RatingSystem

__all__ = [
    "TEAM_KEYS",
    "TeamMetricAccumulator",
    "brier_score",
    "log_loss",
    "team_pair_inversion",
    "team_rank_deviation",
    "team_strength",
    "team_win_probability",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Keys of :meth:`TeamMetricAccumulator.summary`.
TEAM_KEYS: tuple[str, ...] = ("team_pair_inv", "team_rank_dev", "log_loss", "brier",
                              "team_rounds", "matches")

#: Probabilities are clipped to ``[EPS, 1 - EPS]`` in the log-loss.
EPS = 1e-15


def _offsets(offsets: npt.ArrayLike, n: int) -> IntArray:
    off = np.ascontiguousarray(offsets, dtype=np.int64)
    if off.ndim != 1 or off.size < 2 or off[0] != 0 or off[-1] != n \
            or np.any(np.diff(off) <= 0):
        raise ValueError(f"team offsets must rise strictly from 0 to {n} (the rows), "
                         f"got {off.tolist()[:8]}")
    return off


def _weights(weight: npt.ArrayLike | None, n: int) -> FloatArray:
    if weight is None:
        return np.ones(n)
    w = np.ascontiguousarray(weight, dtype=np.float64)
    if w.shape != (n,) or not np.all((w > 0.0) & (w <= 1.0)):
        raise ValueError(f"member weights must be {n} numbers in (0, 1]")
    return w


def team_strength(mu: npt.ArrayLike, offsets: npt.ArrayLike,
                  weight: npt.ArrayLike | None = None) -> FloatArray:
    """Each team's predicted strength ``sum_i w_i mu_i`` (the mean team performance).

    Parameters
    ----------
    mu:
        Per row (member): the rating before the contest.
    offsets:
        ``T + 1`` offsets: team ``t`` is rows ``offsets[t]:offsets[t + 1]``.
    weight:
        Per row: the member weight in (0, 1] (``None``: all 1).

    Returns
    -------
    numpy.ndarray
        ``T`` strengths, in team order.

    Raises
    ------
    ValueError
        On offsets that do not cover the rows with non-empty teams, bad weights or a
        rating that is not finite.
    """
    m = np.ascontiguousarray(mu, dtype=np.float64)
    if m.ndim != 1 or not np.isfinite(m).all():
        raise ValueError("mu must be a one-dimensional array of finite ratings")
    off = _offsets(offsets, m.size)
    w = _weights(weight, m.size)
    return np.add.reduceat(w * m, off[:-1])


def team_pair_inversion(strength: npt.ArrayLike, team_lo: npt.ArrayLike,
                        team_hi: npt.ArrayLike) -> float:
    """[EbtekarLiu2021]'s pair inversion over the teams of one round.

    Parameters
    ----------
    strength:
        Each team's predicted strength, teams best first (in standings order).
    team_lo, team_hi:
        The teams' tie ranges in team places (renumbered among the scored teams).

    Returns
    -------
    float
        Percentage of pairs of teams whose order the strengths predict (a pair tied in
        the result counts as predicted); NaN when the round is outcome free.
    """
    return pair_inversion(strength, team_lo, team_hi)


def team_rank_deviation(strength: npt.ArrayLike, team_lo: npt.ArrayLike,
                        team_hi: npt.ArrayLike) -> float:
    """[EbtekarLiu2021]'s rank deviation over the teams of one round (arguments as
    :func:`team_pair_inversion`): the mean distance, in percent of ``T - 1``, from each
    team's position by strength to its tie range; NaN when outcome free."""
    return rank_deviation(strength, team_lo, team_hi)


def team_win_probability(
    system: RatingSystem,
    mu: npt.ArrayLike,
    sigma: npt.ArrayLike,
    played: npt.ArrayLike,
    team_a_rows: npt.ArrayLike,
    team_b_rows: npt.ArrayLike,
    *,
    weight: npt.ArrayLike | None = None,
    contest_weight: float = 1.0,
) -> float:
    """The probability, under ``system``'s performance model, that team A beats team B.

    Each member ``i`` performs around ``mu_i`` with variance ``v_i`` and shape ``F``
    given by ``system.performance_model`` (:mod:`podium.predict`); a team's
    performance is the weighted sum of its members', so it has mean
    ``M = sum_i w_i mu_i`` and variance ``V = sum_i w_i^2 v_i``, and

    .. math::

        P(A \\text{ beats } B) = F\\left(\\frac{M_A - M_B}{\\sqrt{V_A + V_B}}\\right).

    The formula and code of :func:`podium.predict.predict_teams` (the service's team
    predictions: :func:`podium.predict.team_performance` and
    :func:`~podium.predict.win_probabilities`), taking arrays of rows instead of
    handles and a ratings mapping (the evaluation calls it once per contest); the
    evaluation calls only this function.

    Parameters
    ----------
    system:
        The rating system (its parameters give ``v_i`` and ``F``).
    mu, sigma, played:
        Per row: rating, uncertainty and earlier rated rounds (newcomers: the prior and 0).
    team_a_rows, team_b_rows:
        The rows (indices into ``mu``) of each team.
    weight:
        Per row member weight in (0, 1] (``None``: all 1).
    contest_weight:
        The weight of the contest (Elo-MMR's performance model uses it).

    Returns
    -------
    float
        In ``[0, 1]``; ``P(A beats B) + P(B beats A) = 1``.

    Raises
    ------
    ValueError
        On an empty team, rows out of range or shared by both teams, or bad arrays.
    """
    from podium.predict import performance_model, team_performance, win_probabilities

    m = np.ascontiguousarray(mu, dtype=np.float64)
    s = np.ascontiguousarray(sigma, dtype=np.float64)
    n = m.size
    if m.ndim != 1 or s.shape != m.shape or not np.isfinite(m).all():
        raise ValueError("mu and sigma must be one-dimensional of equal length, mu finite")
    a = np.asarray(team_a_rows, dtype=np.int64).reshape(-1)
    b = np.asarray(team_b_rows, dtype=np.int64).reshape(-1)
    if a.size == 0 or b.size == 0:
        raise ValueError("each team needs at least one row")
    if np.any((a < 0) | (a >= n)) or np.any((b < 0) | (b >= n)):
        raise ValueError(f"team rows must be in [0, {n})")
    if np.intersect1d(a, b).size:
        raise ValueError("a row cannot be in both teams")
    w = _weights(weight, n)
    model = performance_model(system, s, np.asarray(played, dtype=np.int64),
                              weight=float(contest_weight))
    rows = np.concatenate([a, b])
    team_mu, team_var = team_performance(m[rows], model.variance[rows],
                                         np.array([0, a.size, rows.size]), w[rows])
    return float(win_probabilities(team_mu, team_var, model.kind)[0, 1])


def _outcomes(p: npt.ArrayLike, outcome: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    pa = np.ascontiguousarray(p, dtype=np.float64).reshape(-1)
    ya = np.ascontiguousarray(outcome, dtype=np.float64).reshape(-1)
    if pa.shape != ya.shape:
        raise ValueError(f"{pa.size} probabilities but {ya.size} outcomes")
    if not np.all((pa >= 0.0) & (pa <= 1.0)):
        raise ValueError("probabilities must be in [0, 1]")
    if not np.all((ya >= 0.0) & (ya <= 1.0)):
        raise ValueError("outcomes must be in [0, 1] (1: won, 0: lost, 0.5: draw)")
    return pa, ya


def log_loss(p: npt.ArrayLike, outcome: npt.ArrayLike) -> float:
    """Mean log-loss ``-[y ln p + (1 - y) ln(1 - p)]`` of win probabilities.

    Parameters
    ----------
    p:
        Predicted probabilities that the first team wins (clipped to
        ``[1e-15, 1 - 1e-15]``).
    outcome:
        1 where it won, 0 where it lost, 0.5 for a draw.

    Returns
    -------
    float
        Natural logarithm (``ln 2`` for always predicting 1/2); NaN for no contests.
    """
    pa, ya = _outcomes(p, outcome)
    if pa.size == 0:
        return math.nan
    pc = np.clip(pa, EPS, 1.0 - EPS)
    return float(-np.mean(ya * np.log(pc) + (1.0 - ya) * np.log1p(-pc)))


def brier_score(p: npt.ArrayLike, outcome: npt.ArrayLike) -> float:
    """Mean Brier score ``(p - y)^2`` (arguments as :func:`log_loss`; 0.25 for always
    predicting 1/2); NaN for no contests."""
    pa, ya = _outcomes(p, outcome)
    if pa.size == 0:
        return math.nan
    return float(np.mean((pa - ya) ** 2))


class TeamMetricAccumulator:
    """Team metrics of a sequence of team contests and their aggregates.

    Parameters
    ----------
    min_history:
        Earlier rated contests every member of a team needs for the team to be scored.

    Notes
    -----
    Aggregates: ``team_pair_inv`` and ``team_rank_dev`` as the individual metrics,
    ``sum_rounds T * value / sum_rounds T`` over rounds with two or more scored teams
    that are not outcome free (``T``: scored teams); ``log_loss`` and ``brier`` the
    mean over the scored two-team contests.  ``team_rounds`` counts the rounds behind
    ``team_pair_inv``, ``matches`` the contests behind ``log_loss``.
    """

    def __init__(self, *, min_history: int = 5) -> None:
        if min_history < 0:
            raise ValueError(f"min_history must be >= 0, got {min_history}")
        self.min_history = int(min_history)
        self._wt = 0.0
        self._pair = 0.0
        self._rank = 0.0
        self._rounds = 0
        self._p: list[float] = []
        self._y: list[float] = []
        self._records: list[dict[str, Any]] = []

    def scored_teams(self, n_prev: npt.ArrayLike, offsets: npt.ArrayLike) -> npt.NDArray[
            np.bool_]:
        """Per team: whether every member has ``min_history`` earlier contests."""
        prev = np.ascontiguousarray(n_prev, dtype=np.int64)
        off = _offsets(offsets, prev.size)
        return np.minimum.reduceat(prev, off[:-1]) >= self.min_history

    def add_round(self, strength: npt.ArrayLike, team_lo: npt.ArrayLike,
                  team_hi: npt.ArrayLike, scored: npt.ArrayLike | None = None, *,
                  p_first: float | None = None, index: int | None = None
                  ) -> dict[str, float]:
        """Score one team contest.

        Parameters
        ----------
        strength:
            Each team's predicted strength, teams best first.
        team_lo, team_hi:
            The teams' tie ranges (0-based team places).
        scored:
            Per team: whether it is scored (:meth:`scored_teams`; ``None``: all).
        p_first:
            For a two-team contest: the predicted probability that the first team
            (the winner, or tied) beats the second; scored when both teams are.
        index:
            Label of the round in :attr:`records`.

        Returns
        -------
        dict
            This round's ``team_pair_inv``, ``team_rank_dev``, ``log_loss`` and
            ``brier`` (NaN where not scored) and ``teams`` (the scored teams).
        """
        s = np.ascontiguousarray(strength, dtype=np.float64)
        lo = np.ascontiguousarray(team_lo, dtype=np.int64)
        hi = np.ascontiguousarray(team_hi, dtype=np.int64)
        keep = np.ones(s.size, dtype=bool) if scored is None else np.asarray(scored, bool)
        if lo.shape != s.shape or hi.shape != s.shape or keep.shape != s.shape:
            raise ValueError(f"{s.size} teams but {lo.size} lo, {hi.size} hi and "
                             f"{keep.size} scored flags")
        out: dict[str, Any] = {"index": len(self._records) if index is None else index,
                               "teams": int(keep.sum()), "team_pair_inv": math.nan,
                               "team_rank_dev": math.nan, "log_loss": math.nan,
                               "brier": math.nan}
        lo_k, hi_k = _renumber(lo[keep], hi[keep])
        s_k = s[keep]
        if s_k.size >= 2 and not is_outcome_free(lo_k, hi_k):
            pi = team_pair_inversion(s_k, lo_k, hi_k)
            rd = team_rank_deviation(s_k, lo_k, hi_k)
            t = float(s_k.size)
            self._wt += t
            self._pair += t * pi
            self._rank += t * rd
            self._rounds += 1
            out["team_pair_inv"], out["team_rank_dev"] = pi, rd
        if p_first is not None and not 0.0 <= p_first <= 1.0:
            raise ValueError(f"p_first must be a probability in [0, 1], got {p_first!r}")
        if p_first is not None and s.size == 2 and bool(keep.all()):
            y = 0.5 if lo[0] == lo[1] else 1.0
            self._p.append(float(p_first))
            self._y.append(y)
            pc = min(max(float(p_first), EPS), 1.0 - EPS)
            out["log_loss"] = -(y * math.log(pc) + (1.0 - y) * math.log1p(-pc))
            out["brier"] = (float(p_first) - y) ** 2
        self._records.append(out)
        return {k: v for k, v in out.items() if k != "index"}

    @property
    def records(self) -> list[dict[str, Any]]:
        """One dict per round added (``index``, ``teams`` and the round's values)."""
        return list(self._records)

    def summary(self) -> dict[str, float]:
        """Aggregates over every round added (keys :data:`TEAM_KEYS`; NaN when nothing
        counted)."""
        w = self._wt
        return {
            "team_pair_inv": self._pair / w if w > 0 else math.nan,
            "team_rank_dev": self._rank / w if w > 0 else math.nan,
            "log_loss": log_loss(self._p, self._y),
            "brier": brier_score(self._p, self._y),
            "team_rounds": self._rounds,
            "matches": len(self._p),
        }
