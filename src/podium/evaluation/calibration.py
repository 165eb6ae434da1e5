"""Calibration of outcome probabilities: how well the ratings' probabilities match what
happened.

Before each scored contest, every *side* (a team, or a player in an individual
contest) whose members all have ``min_history`` earlier contests is given, from the
ratings at that moment and the system's performance model (:mod:`podium.predict`):

* ``P(first)``: each scored side's probability of finishing first among the scored
  sides (:func:`podium.predict.outcome_probabilities`), scored against the result
  ``y_t = 1 / k`` for the ``k`` sides tied for first, 0 for the others;
* the pairwise outcomes: for each pair, ``P(a ahead of b)`` (the system's pairwise
  formula, :func:`podium.predict.win_probabilities`, as ``POST /api/predict``'s
  ``win_probability``) scored against 1 (a ahead), 0 (b ahead) or 1/2 (tied);
* for two sides under a system with a draw model (TrueSkill, openskill): the three
  outcomes ``[P(A wins), P(draw), P(B wins)]``
  (:func:`podium.predict.three_way_probabilities`) against the one that happened.

Scores, each averaged over its events (a contest for ``P(first)`` and the three
outcomes, a pair for the pairwise outcomes):

* **log-loss** ``-sum_c y_c ln p_c`` (natural logarithm; probabilities clipped to
  ``[1e-15, 1]``): ``ln 2 = 0.693`` for a coin toss of two sides, ``ln 3 = 1.099`` for
  three equally likely outcomes;
* **Brier score** ``sum_c (p_c - y_c)^2`` over the outcomes ``c`` of the event (Brier's
  multi-class score; for a pair, its two outcomes: twice ``(p - y)^2``, 0.5 for a coin
  toss);
* **expected calibration error** (ECE) over ``M = 10`` equal-width bins of the
  predicted probability: ``sum_b (n_b / N) |mean(p) - mean(y)|_b``, where for
  ``P(first)`` every side of every contest is one prediction ``(p_t, y_t)`` and for
  pairs every pair one prediction of the favourite's result (``p >= 1/2``).  The
  per-bin means are the points of the reliability diagram
  (:func:`podium.evaluation.plots.plot_reliability`).

A contest tied all through (a draw) is scored too: the ratings did predict it.  Contests
with more than ``max_sides`` scored sides (64 by default) are left out of these scores
(their place integrals cost ``O(T^2)``; lobbies and matches are far smaller).

Examples
--------
>>> round(multiclass_log_loss([0.8, 0.2], [1.0, 0.0]), 6)
0.223144
>>> round(multiclass_brier([0.8, 0.2], [1.0, 0.0]), 6)
0.08
>>> expected_calibration_error([0.9, 0.9, 0.3], [1.0, 0.0, 0.0], bins=10)  # doctest: +ELLIPSIS
0.366...
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.outcomes import team_performance, win_probabilities
from podium.systems.base import RatingSystem

__all__ = [
    "BINS",
    "CALIBRATION_KEYS",
    "MAX_SIDES",
    "CalibrationAccumulator",
    "expected_calibration_error",
    "multiclass_brier",
    "multiclass_log_loss",
    "reliability",
    "round_outcomes",
]

FloatArray = npt.NDArray[np.float64]

#: Bins of the expected calibration error and the reliability diagram.
BINS = 10
#: Contests with more scored sides than this are left out of the calibration scores.
MAX_SIDES = 64
#: Keys of :meth:`CalibrationAccumulator.summary`.
CALIBRATION_KEYS: tuple[str, ...] = (
    "first_log_loss", "first_brier", "first_ece", "pair_log_loss", "pair_brier", "pair_ece",
    "three_log_loss", "three_brier", "calibrated_contests", "calibrated_pairs",
    "three_way_contests")
#: Probabilities are clipped to ``[EPS, 1]`` in the log-loss.
EPS = 1e-15


def _vectors(p: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    pa = np.asarray(p, dtype=np.float64).reshape(-1)
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    if pa.shape != ya.shape:
        raise ValueError(f"{pa.size} probabilities but {ya.size} outcomes")
    if not (np.all((pa >= 0) & (pa <= 1)) and np.all((ya >= 0) & (ya <= 1))):
        raise ValueError("probabilities and outcomes must lie in [0, 1]")
    return pa, ya


def multiclass_log_loss(p: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """``-sum_c y_c ln p_c`` of one event (``p`` the predicted probabilities of its
    outcomes, ``y`` what happened: 1 for the outcome, or shares summing to 1 for a tie)."""
    pa, ya = _vectors(p, y)
    return float(-np.sum(ya * np.log(np.clip(pa, EPS, 1.0))))


def multiclass_brier(p: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """``sum_c (p_c - y_c)^2`` of one event (Brier's score over its outcomes)."""
    pa, ya = _vectors(p, y)
    return float(np.sum((pa - ya) ** 2))


def reliability(p: npt.ArrayLike, y: npt.ArrayLike, bins: int = BINS
                ) -> tuple[FloatArray, FloatArray, npt.NDArray[np.int64]]:
    """Per equal-width bin of ``p`` over [0, 1] (``p = 1`` in the last): the mean
    prediction, the mean outcome (NaN for an empty bin) and the count."""
    pa, ya = _vectors(p, y)
    k = np.minimum((pa * bins).astype(np.int64), bins - 1)
    count = np.bincount(k, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(k, pa, minlength=bins) / count
        mean_y = np.bincount(k, ya, minlength=bins) / count
    return mean_p, mean_y, count


def expected_calibration_error(p: npt.ArrayLike, y: npt.ArrayLike, bins: int = BINS) -> float:
    """``sum_b (n_b / N) |mean(p)_b - mean(y)_b|`` over equal-width bins (NaN for no
    predictions)."""
    mean_p, mean_y, count = reliability(p, y, bins)
    n = int(count.sum())
    if n == 0:
        return math.nan
    full = count > 0
    return float(np.sum(count[full] * np.abs(mean_p[full] - mean_y[full])) / n)


def round_outcomes(side_lo: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """What happened to the sides of a contest, from their places (``lo``, lower is
    better, equal for a tie): ``first[t]`` (``1 / k`` for the ``k`` sides tied for
    first, else 0) and ``pair[a, b]`` (1 if ``a`` finished ahead of ``b``, 1/2 tied, 0
    behind)."""
    lo = np.asarray(side_lo, dtype=np.int64).reshape(-1)
    top = lo == lo.min()
    first = top / top.sum()
    pair = np.where(lo[:, None] < lo[None, :], 1.0,
                    np.where(lo[:, None] == lo[None, :], 0.5, 0.0))
    return first.astype(np.float64), pair


class CalibrationAccumulator:
    """Calibration scores of a sequence of contests (see the module docstring).

    Parameters
    ----------
    max_sides:
        Contests with more scored sides are left out (:data:`MAX_SIDES`).
    bins:
        Bins of the expected calibration error.
    """

    def __init__(self, *, max_sides: int = MAX_SIDES, bins: int = BINS) -> None:
        if max_sides < 2 or bins < 1:
            raise ValueError("max_sides must be >= 2 and bins >= 1")
        self.max_sides = int(max_sides)
        self.bins = int(bins)
        self._first: list[tuple[float, float]] = []  # per contest: log-loss, Brier
        self._first_p: list[FloatArray] = []
        self._first_y: list[FloatArray] = []
        self._pair_p: list[FloatArray] = []  # favourite's probability
        self._pair_y: list[FloatArray] = []  # favourite's result
        self._three: list[tuple[float, float]] = []
        self._records: list[dict[str, Any]] = []

    def add_round(self, p_first: npt.ArrayLike, pair_p: npt.ArrayLike, side_lo: npt.ArrayLike,
                  three: npt.ArrayLike | None = None, *, index: int | None = None
                  ) -> dict[str, float]:
        """Score one contest.

        Parameters
        ----------
        p_first:
            Each scored side's probability of finishing first (sums to 1).
        pair_p:
            ``(T, T)``: ``P(a ahead of b)``.
        side_lo:
            Each scored side's place (lower is better, equal when tied).
        three:
            Two sides under a draw model: ``[P(A wins), P(draw), P(B wins)]``.
        index:
            Label of the contest in :attr:`records`.

        Returns
        -------
        dict
            This contest's ``first_log_loss``, ``first_brier``, ``pair_log_loss``,
            ``pair_brier``, ``three_log_loss``, ``three_brier`` (NaN where not scored).
        """
        pf = np.asarray(p_first, dtype=np.float64).reshape(-1)
        pp = np.asarray(pair_p, dtype=np.float64)
        first_y, pair_y = round_outcomes(side_lo)
        if pf.shape != first_y.shape or pp.shape != pair_y.shape:
            raise ValueError(f"{first_y.size} sides but {pf.size} P(first) and a "
                             f"{pp.shape} pair matrix")
        out = {"first_log_loss": multiclass_log_loss(pf, first_y),
               "first_brier": multiclass_brier(pf, first_y)}
        self._first.append((out["first_log_loss"], out["first_brier"]))
        self._first_p.append(pf)
        self._first_y.append(first_y)
        a, b = np.triu_indices(pf.size, 1)
        p, y = pp[a, b], pair_y[a, b]
        out["pair_log_loss"] = float(np.mean(-(y * np.log(np.clip(p, EPS, 1.0))
                                               + (1 - y) * np.log(np.clip(1 - p, EPS, 1.0)))))
        out["pair_brier"] = float(np.mean(2.0 * (p - y) ** 2))
        flip = p < 0.5
        self._pair_p.append(np.where(flip, 1.0 - p, p))
        self._pair_y.append(np.where(flip, 1.0 - y, y))
        out["three_log_loss"] = out["three_brier"] = math.nan
        if three is not None:
            pt = np.asarray(three, dtype=np.float64).reshape(-1)
            if pt.size != 3 or pf.size != 2:
                raise ValueError("three outcomes need two sides and three probabilities")
            yt = np.zeros(3)
            yt[1 if first_y[0] == first_y[1] else (0 if first_y[0] > 0 else 2)] = 1.0
            out["three_log_loss"] = multiclass_log_loss(pt, yt)
            out["three_brier"] = multiclass_brier(pt, yt)
            self._three.append((out["three_log_loss"], out["three_brier"]))
        self._records.append({"index": len(self._records) if index is None else index,
                              **out})
        return out

    @property
    def records(self) -> list[dict[str, Any]]:
        """One dict per contest added (``index`` and its scores)."""
        return list(self._records)

    def add_contest(self, system: RatingSystem, contest: Contest, mu: FloatArray,
                    sigma: FloatArray, n_prev: npt.NDArray[np.int64], *, min_history: int,
                    index: int | None = None) -> dict[str, float] | None:
        """Score ``contest`` from its participants' ratings before it (per row: ``mu``,
        ``sigma``, earlier contests ``n_prev``; newcomers at the prior): its sides (teams,
        else players) whose members all have ``min_history`` earlier contests, if there
        are 2 to ``max_sides`` of them; ``None`` when it is left out (also when a side's
        performance variance is 0: no place distribution)."""
        from podium.predict import (
            outcome_probabilities,
            performance_model,
            three_way_probabilities,
        )

        n = len(contest)
        teams = contest.teams
        off = np.arange(n + 1, dtype=np.int64) if teams is None else teams.offsets
        weight = None if teams is None else teams.weight
        side_lo = np.asarray(contest.lo)[off[:-1]]
        keep = np.minimum.reduceat(n_prev, off[:-1]) >= min_history
        if not 2 <= int(keep.sum()) <= self.max_sides:
            return None
        sizes = np.diff(off)[keep]
        rows = np.concatenate([np.arange(a, b) for a, b in
                               zip(off[:-1][keep].tolist(), off[1:][keep].tolist(),
                                   strict=True)])
        sub_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        w = None if weight is None else weight[rows]
        model = performance_model(system, sigma[rows], n_prev[rows],
                                  weight=float(contest.weight))
        try:
            p_first, _, _ = outcome_probabilities(system, mu[rows], sigma[rows], model,
                                                  sub_off, w)
            t_mu, t_var = team_performance(mu[rows], model.variance, sub_off, w)
            three = (three_way_probabilities(system, mu[rows], sigma[rows], model, sub_off, w)
                     if sizes.size == 2 else None)
        except ValueError:
            return None
        return self.add_round(p_first, win_probabilities(t_mu, t_var, model.kind),
                              side_lo[keep], three, index=index)

    def add_pairs(self, system: RatingSystem, mu: FloatArray, sigma: FloatArray,
                  n_prev: npt.NDArray[np.int64], lo: npt.NDArray[np.int64],
                  weight: FloatArray, index: npt.NDArray[np.int64], *, min_history: int
                  ) -> bool:
        """:meth:`add_contest` for many contests of two players (no teams) at once, in
        order, with the same numbers bit for bit.

        Parameters
        ----------
        system:
            The rating system.
        mu, sigma, n_prev, lo:
            ``(R, 2)``: each contest's two rows (standings order) as for
            :meth:`add_contest`.
        weight, index:
            ``(R,)``: each contest's weight and its label in :attr:`records`.
        min_history:
            As for :meth:`add_contest`.

        Returns
        -------
        bool
            ``False``, having added nothing, where the batch does not apply: openskill's
            systems (their own formulas) and a draw margin under a logistic model (whose
            three outcomes need the sides' quadrature); call :meth:`add_contest` then.
        """
        from podium.outcomes import pair_places, pair_win_probability
        from podium.predict import draw_margin, performance_model
        from podium.systems.openskill import OpenSkillModel

        if isinstance(system, OpenSkillModel):
            return False
        keep = np.flatnonzero((n_prev >= min_history).all(axis=1))
        variance = np.full(mu.shape, np.nan)
        kinds = set()
        for w in np.unique(weight[keep]).tolist():  # the model, contests of one weight
            g = keep[weight[keep] == w]
            model = performance_model(system, sigma[g].reshape(-1), n_prev[g].reshape(-1),
                                      weight=float(w))
            variance[g] = np.broadcast_to(np.asarray(model.variance, dtype=np.float64),
                                          (2 * g.size,)).reshape(-1, 2)
            kinds.add(model.kind)
        if len(kinds) > 1:
            return False
        kind = kinds.pop() if kinds else "gaussian"
        margin = draw_margin(system, 2)
        if margin is not None and kind != "gaussian":
            return False
        # add_contest leaves out a contest whose performances are not uncertain or
        # whose quadrature grid is too large (the ValueError of side_model / grid)
        ok = keep[np.isfinite(variance[keep]).all(axis=1) & (variance[keep] > 0).all(axis=1)]
        place = pair_places(mu[ok], variance[ok], kind)
        fits = ~np.isnan(place).any(axis=(1, 2))
        ok, place = ok[fits], place[fits]
        m, v = mu[ok], variance[ok]
        p_first = np.minimum(place[:, :, 0] / place[:, :, 0].sum(axis=1)[:, None], 1.0)
        top = lo[ok] == lo[ok].min(axis=1)[:, None]
        first_y = top / top.sum(axis=1)[:, None]
        _vectors(p_first, first_y)  # the ValueError of add_round, where it would raise
        ll_first = -np.sum(first_y * np.log(np.clip(p_first, EPS, 1.0)), axis=1)
        br_first = np.sum((p_first - first_y) ** 2, axis=1)
        p = pair_win_probability(m[:, 0], m[:, 1], v[:, 0], v[:, 1], kind)
        y = np.where(lo[ok, 0] < lo[ok, 1], 1.0, np.where(lo[ok, 0] == lo[ok, 1], 0.5, 0.0))
        ll_pair = -(y * np.log(np.clip(p, EPS, 1.0)) + (1 - y) * np.log(np.clip(1 - p, EPS, 1.0)))
        br_pair = 2.0 * (p - y) ** 2
        flip = p < 0.5
        three_ll = three_br = np.full(ok.size, math.nan)
        if margin is not None:
            from scipy.special import ndtr  # type: ignore[import-untyped]

            mg = float(margin)
            w01 = ndtr((m[:, 0] - m[:, 1] - mg) / np.sqrt(v[:, 0] + v[:, 1]))
            w10 = ndtr((m[:, 1] - m[:, 0] - mg) / np.sqrt(v[:, 1] + v[:, 0]))
            three = np.column_stack([w01, np.maximum(0.0, 1.0 - w01 - w10), w10])
            yt = np.zeros((ok.size, 3))
            tied = first_y[:, 0] == first_y[:, 1]
            yt[np.arange(ok.size), np.where(tied, 1, np.where(first_y[:, 0] > 0, 0, 2))] = 1.0
            _vectors(three, yt)
            three_ll = -np.sum(yt * np.log(np.clip(three, EPS, 1.0)), axis=1)
            three_br = np.sum((three - yt) ** 2, axis=1)
            self._three.extend(zip(three_ll.tolist(), three_br.tolist(), strict=True))
        self._first.extend(zip(ll_first.tolist(), br_first.tolist(), strict=True))
        self._first_p.append(p_first.reshape(-1))
        self._first_y.append(first_y.reshape(-1))
        self._pair_p.append(np.where(flip, 1.0 - p, p))
        self._pair_y.append(np.where(flip, 1.0 - y, y))
        cols = (index[ok].tolist(), ll_first.tolist(), br_first.tolist(), ll_pair.tolist(),
                br_pair.tolist(), three_ll.tolist(), three_br.tolist())
        self._records.extend(
            {"index": i, "first_log_loss": a, "first_brier": b, "pair_log_loss": c,
             "pair_brier": d, "three_log_loss": e, "three_brier": f}
            for i, a, b, c, d, e, f in zip(*cols, strict=True))
        return True

    def predictions(self, what: str) -> tuple[FloatArray, FloatArray]:
        """All predictions and outcomes of ``what``: ``"first"`` (every side of every
        contest) or ``"pair"`` (every pair, the favourite's side)."""
        if what == "first":
            ps, ys = self._first_p, self._first_y
        elif what == "pair":
            ps, ys = self._pair_p, self._pair_y
        else:
            raise ValueError(f"what must be 'first' or 'pair', got {what!r}")
        if not ps:
            return np.zeros(0), np.zeros(0)
        return np.concatenate(ps), np.concatenate(ys)

    def summary(self) -> dict[str, float]:
        """The means over the contests added (keys :data:`CALIBRATION_KEYS`; NaN when
        nothing was scored)."""
        def mean(rows: list[tuple[float, float]], k: int) -> float:
            return float(np.mean([r[k] for r in rows])) if rows else math.nan

        pair_p, pair_y = self.predictions("pair")
        first_p, first_y = self.predictions("first")
        n_pairs = pair_p.size
        pair_ll = pair_br = math.nan
        if n_pairs:
            pair_ll = float(np.mean(-(pair_y * np.log(np.clip(pair_p, EPS, 1.0))
                                      + (1 - pair_y) * np.log(np.clip(1 - pair_p, EPS, 1.0)))))
            pair_br = float(np.mean(2.0 * (pair_p - pair_y) ** 2))
        return {
            "first_log_loss": mean(self._first, 0),
            "first_brier": mean(self._first, 1),
            "first_ece": expected_calibration_error(first_p, first_y, self.bins),
            "pair_log_loss": pair_ll,
            "pair_brier": pair_br,
            "pair_ece": expected_calibration_error(pair_p, pair_y, self.bins),
            "three_log_loss": mean(self._three, 0),
            "three_brier": mean(self._three, 1),
            "calibrated_contests": len(self._first),
            "calibrated_pairs": n_pairs,
            "three_way_contests": len(self._three),
        }
