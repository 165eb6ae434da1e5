"""The causal protocol for the whole-history systems (``podium eval --protocol causal``).

A whole-history system revises every past rating with later results, so its smoothed
ratings have seen the contest they would predict.  The causal protocol scores, at each
contest *t*, the ratings its participants have from smoothing **only the contests before
t** (issue 29, item 5), with the metrics of :mod:`podium.evaluation.metrics`:

* ``mmr-smooth``: :func:`~podium.history.mmr_smooth.smooth_forecast` -- the contests
  added one at a time, each participant's belief recorded before its contest is added,
  then what the contest touches re-smoothed with at most ``update_sweeps`` sweeps (what
  an online service does; docs/history.md);
* ``ttt`` and ``whr``: the history before *t* smoothed from scratch every
  ``refit_every`` contests (1: before every scored contest).  Between two refits
  either a player's rating is its last smoothed one (a newcomer's is the prior), so
  ``refit_every > 1`` leaves out the results since the last refit; or, with
  ``update_between``, every contest is added to the fit by the engine's bounded
  incremental update (:func:`~podium.history.whr.whr_update`,
  :func:`~podium.history.ttt.ttt_update`: at most ``update_sweeps`` sweeps over what
  the contest touches), so each contest is predicted from all the earlier ones and the
  refits only bound the drift of the bounded updates from the full solve.

The first ``train_frac`` of the contests is not scored, as in
:func:`~podium.evaluation.runner.evaluate`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.errors import ConfigError
from podium.evaluation.metrics import MetricAccumulator
from podium.evaluation.runner import EvalResult, train_size
from podium.history import history_from_contests, smooth_forecast
from podium.history.engines import HistoryFit, SmoothSystem, get_history_system

__all__ = ["causal_ratings", "evaluate_causal"]

FloatArray = npt.NDArray[np.float64]


def causal_ratings(contests: Sequence[Contest], system: str, params: dict[str, Any],
                   *, first: int = 0, refit_every: int = 1, update_between: bool = False,
                   progress: Callable[[int, int], None] | None = None
                   ) -> list[FloatArray | None]:
    """Per contest from ``first`` on: its participants' ratings (in the contest's order)
    from smoothing the contests before it; ``None`` for a contest the system leaves out
    (one side only; ``mmr-smooth``: everybody tied).

    Parameters
    ----------
    contests:
        The history, in time order.
    system, params:
        The whole-history system and its parameters.
    first:
        The first contest whose ratings are wanted (the earlier ones are neither
        smoothed nor predicted).
    refit_every:
        ``ttt``, ``whr``: smooth the contests before *t* from scratch every this many
        contests (module docstring).
    update_between:
        ``ttt``, ``whr``: between two refits, add every contest to the fit with the
        engine's bounded update (``update_sweeps``, ``update_tol``) instead of keeping
        the last refit's ratings.  ``mmr-smooth`` always adds the contests one at a
        time (:func:`~podium.history.mmr_smooth.smooth_forecast`).
    progress:
        Called as ``progress(done, total)`` after each contest (``ttt``, ``whr``).

    Returns
    -------
    list of ndarray or None
        One entry per contest of ``contests``.

    Raises
    ------
    ConfigError
        For ``refit_every < 1`` or a parameter the system refuses.
    """
    if refit_every < 1:
        raise ConfigError(f"refit_every must be >= 1, got {refit_every!r}")
    sysobj = get_history_system(system, **params)
    lh = history_from_contests(contests)
    h = lh.history
    rows = h.contest_rows
    out: list[FloatArray | None] = [None] * len(contests)
    if isinstance(sysobj, SmoothSystem):
        p = sysobj.params()
        weight = np.array([contests[k].weight for k in lh.contest_index], dtype=np.float64)
        ceiling = np.array([np.inf if contests[k].perf_ceiling is None
                            else contests[k].perf_ceiling for k in lh.contest_index])
        mu, _, _ = smooth_forecast(h, sysobj.mmr_params(), contest_weight=weight,
                                   perf_ceiling=ceiling, tol=float(p["tol"]),
                                   max_sweeps=int(p["update_sweeps"]),
                                   window_tol=float(p["window_tol"]),
                                   spread=float(p["update_spread"]))
        for c, k in enumerate(lh.contest_index.tolist()):
            seg = mu[rows[c]:rows[c + 1]]
            if k >= first and np.all(np.isfinite(seg)):
                out[k] = seg
        return out
    current = np.full(h.n_players, sysobj.newcomer_mu())
    kept = lh.contest_index.tolist()
    ones, free = np.ones(len(kept)), np.full(len(kept), np.inf)
    since = refit_every
    fit: HistoryFit | None = None
    for c, k in enumerate(kept):
        if k < first:
            continue
        refit = since >= refit_every
        if c > 0 and (refit or update_between):
            # the contests before c; the update goes on from the fit of those before c - 1
            prefix = h.prefix(c)
            fit = sysobj.fit(prefix, contest_weight=ones[:c], perf_ceiling=free[:c],
                             previous=None if refit else fit)
            # rows in contest order: each player's last row wins (the players not in
            # the prefix have not played yet: they keep the newcomer's rating)
            current[prefix.player] = fit.mu
            if refit:
                since = 0
        since += 1
        out[k] = current[h.player[rows[c]:rows[c + 1]]].copy()
        if progress is not None:
            progress(c + 1, len(kept))
    return out


def evaluate_causal(contests: Sequence[Contest], system: str, *,
                    params: dict[str, Any] | None = None, train_frac: float = 0.1,
                    train_contests: int | None = None, min_history: int = 5,
                    top_k: int = 100, extended: bool = True, refit_every: int = 1,
                    update_between: bool = False,
                    progress: Callable[[int, int], None] | None = None) -> EvalResult:
    """Score a whole-history system by the causal protocol (module docstring).

    Parameters are those of :func:`~podium.evaluation.runner.evaluate` (the ranking
    metrics only: the calibration scores need a filter's performance model), and
    ``refit_every`` and ``update_between`` (``ttt``, ``whr``; :func:`causal_ratings`).
    ``seconds`` is the time of the smoothing.

    Raises
    ------
    ConfigError
        For a bad ``train_contests`` or ``refit_every``, or a parameter the system
        refuses.
    """
    n = len(contests)
    n_train = train_size(n, train_frac) if train_contests is None else int(train_contests)
    if not 0 <= n_train <= n:
        raise ConfigError(f"train_contests must be in [0, {n}], got {n_train}")
    t0 = time.perf_counter()
    ratings = causal_ratings(contests, system, params or {}, first=n_train,
                             refit_every=refit_every, update_between=update_between,
                             progress=progress)
    rate_s = time.perf_counter() - t0
    m0 = time.perf_counter()
    acc = MetricAccumulator(min_history=min_history, top_k=top_k, extended=extended)
    played: dict[str, int] = {}
    rows = 0
    for t, contest in enumerate(contests):
        mu = ratings[t]
        if t >= n_train and mu is not None and not contest.is_outcome_free:
            n_prev = np.fromiter((played.get(hd, 0) for hd in contest.handles),
                                 dtype=np.int64, count=len(contest))
            acc.add_round(mu, contest.lo, contest.hi, n_prev, index=t)
        if contest.n_teams > 1:
            for hd in contest.handles:
                played[hd] = played.get(hd, 0) + 1
        rows += len(contest)
    sysobj = get_history_system(system, **(params or {}))
    return EvalResult(
        system=system,
        params={**sysobj.params(), "protocol": "causal", "refit_every": refit_every,
                "update_between": update_between},
        metrics=acc.summary(), seconds=rate_s, metric_seconds=time.perf_counter() - m0,
        contests=n, train_contests=n_train, scored_contests=n - n_train,
        player_rounds=rows, per_round=acc.per_round())
