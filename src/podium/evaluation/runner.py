"""Evaluate a rating system by how well its ratings predict each contest.

The protocol of [EbtekarLiu2021], Sec. 6 (and of the paper's code): the contests are
rated in order; before contest *t* is rated, the ratings every participant has
*at that moment* are compared with the contest's result (:mod:`podium.evaluation.metrics`).
The first ``train_frac`` of the history is rated but not scored (it is the part
the hyper-parameters were tuned on); every later contest is scored.

>>> from podium.io.synthetic import synthetic_contests
>>> res = evaluate(synthetic_contests(200, 12, seed=1), "mmr", train_frac=0.25)
>>> res.scored_contests, res.train_contests
(9, 3)
>>> 50 < res.metrics["pair_inv"] < 100
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.contest_batch import batch_run
from podium.errors import ConfigError, ConvergenceError
from podium.evaluation.calibration import MAX_SIDES, CalibrationAccumulator
from podium.evaluation.metrics import MetricAccumulator
from podium.evaluation.team_metrics import (
    TeamMetricAccumulator,
    team_strength,
    team_win_probability,
)
from podium.rater import Rater
from podium.systems import RatingSystem

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalResult", "RatingsBefore", "Scores", "evaluate", "ratings_before", "score",
           "train_size"]


def train_size(n_contests: int, train_frac: float) -> int:
    """Number of leading contests left unscored: ``floor(n · train_frac)``.

    With ``train_frac = 0.1`` this is the paper code's ``len / 10`` (integer
    division): 108 of the 1087 Codeforces contests.
    """
    if not 0.0 <= train_frac < 1.0 or train_frac != train_frac:
        raise ConfigError(f"train_frac must be in [0, 1), got {train_frac!r}")
    # 1e-9 guards against 0.1 * 1090 = 108.99999999999999
    return int(n_contests * train_frac + 1e-9)


@dataclass(frozen=True)
class EvalResult:
    """The outcome of :func:`evaluate`.

    Attributes
    ----------
    system, params:
        The system's name and its full parameter set.
    metrics:
        :meth:`podium.evaluation.metrics.MetricAccumulator.summary` over the scored contests:
        ``pair_inv`` and ``rank_dev`` are the paper's Table 2 figures (players with
        at least ``min_history`` earlier contests), the other keys the variants.  On a
        history with team contests also :data:`~podium.evaluation.team_metrics.TEAM_KEYS`
        (:mod:`podium.evaluation.team_metrics`): ``team_pair_inv``, ``team_rank_dev``,
        ``log_loss`` and ``brier`` (two-team contests), ``team_rounds``, ``matches``.
        With ``extended``, the calibration scores
        :data:`~podium.evaluation.calibration.CALIBRATION_KEYS`
        (:mod:`podium.evaluation.calibration`: log-loss, Brier and ECE of P(first) and of
        the pairwise outcomes, and of the three outcomes win/draw/loss where the system
        has a draw model; all-tied contests included).
    seconds:
        Time spent inside the rating system's updates (the paper's Table 3 run time;
        loading and scoring excluded).
    metric_seconds:
        Time spent computing the metrics.
    contests, train_contests, scored_contests:
        Contests rated, left unscored at the start, scored.
    player_rounds:
        Participations rated.
    per_round:
        One row per scored contest: ``index`` and the round's metric values (and the
        team metrics on a history with team contests).
    rater:
        The :class:`~podium.rater.Rater` at the end (when ``keep_rater=True``).
    calibration:
        The calibration scores' predictions (for the reliability diagram; ``None`` when
        ``extended=False``).
    """

    system: str
    params: dict[str, Any]
    metrics: dict[str, float]
    seconds: float
    metric_seconds: float
    contests: int
    train_contests: int
    scored_contests: int
    player_rounds: int
    per_round: pd.DataFrame = field(repr=False)
    rater: Rater | None = field(default=None, repr=False)
    calibration: CalibrationAccumulator | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record: ``system``, every metric, ``seconds`` and the sizes."""
        out: dict[str, Any] = {"system": self.system}
        out.update({k: _json_float(v) for k, v in self.metrics.items()})
        out.update(
            seconds=round(self.seconds, 4),
            metric_seconds=round(self.metric_seconds, 4),
            contests=self.contests,
            train_contests=self.train_contests,
            scored_contests=self.scored_contests,
            player_rounds=self.player_rounds,
            params={k: _json_value(v) for k, v in self.params.items()},
        )
        return out


def _json_float(v: Any) -> Any:
    if isinstance(v, float | np.floating):
        f = float(v)
        return None if f != f else f
    if isinstance(v, np.integer):
        return int(v)
    return v


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and (v == float("inf") or v == float("-inf")):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, tuple):
        return list(v)
    return v


@dataclass(frozen=True)
class Scores:
    """What :func:`score` computed: a rated history's accumulated predictions, before
    any table is made of them (:func:`evaluate` makes the tables with pandas)."""

    #: the Rater at the end
    rater: Rater
    #: the ranking metrics of every scored contest
    metrics: MetricAccumulator
    #: the team metrics (a history with team contests), else ``None``
    teams: TeamMetricAccumulator | None
    #: the calibration scores (``extended``), else ``None``
    calibration: CalibrationAccumulator | None
    #: seconds inside the rating system's updates, and computing the metrics
    seconds: float
    metric_seconds: float
    #: contests rated, and left unscored at the start
    contests: int
    train_contests: int
    #: participations rated
    player_rounds: int


def score(
    contests: Sequence[Contest],
    system: str | RatingSystem,
    *,
    params: dict[str, Any] | None = None,
    train_frac: float = 0.1,
    train_contests: int | None = None,
    min_history: int = 5,
    top_k: int = 100,
    extended: bool = True,
    warmup: bool = True,
    progress: Callable[[int, int], None] | None = None,
    calibration_max_sides: int = MAX_SIDES,
) -> Scores:
    """Rate ``contests`` in order and score the ratings' predictions: the work of
    :func:`evaluate`, which needs NumPy and Numba only (the package's build runs it to
    compile the evaluation's kernels: :mod:`podium.prebuild`).

    Parameters
    ----------
    contests:
        The history, in the order to rate it.
    system:
        A system name (see ``podium systems``) or a configured system object.
    params:
        Hyper-parameters overriding the named system's preset.
    train_frac:
        Leading share of the contests that is rated but not scored (0.1: the paper).
    train_contests:
        The same as a count; overrides ``train_frac``.
    min_history:
        Earlier contests a player needs to count in ``pair_inv``/``rank_dev`` (paper: 5),
        and every member of a team to count in the team metrics.
    top_k:
        Size of the "top" subset of the ``*_top`` metrics (paper code: 100).
    extended:
        Also compute the variants (all players, top-k, [Batty2026]'s L1/L2, Kendall,
        Spearman); ``False`` computes only ``pair_inv``/``rank_dev`` (for tuning).
    warmup:
        Rate the history's first contests and its largest one first, with a
        throw-away Rater, so that compiling (or loading the cached) Numba kernels is
        not counted in ``seconds``.
    progress:
        Called as ``progress(done, total)`` after each contest.
    calibration_max_sides:
        Contests with more scored sides are left out of the calibration scores
        (:mod:`podium.evaluation.calibration`, computed when ``extended``).

    Returns
    -------
    Scores
    """
    rater = Rater(system, **(params or {})) if isinstance(system, str) else Rater(system)
    if warmup:
        _warm_up(rater.system, contests)
    n = len(contests)
    n_train = train_size(n, train_frac) if train_contests is None else int(train_contests)
    if not 0 <= n_train <= n:
        raise ConfigError(f"train_contests must be in [0, {n}], got {n_train}")
    acc = MetricAccumulator(min_history=min_history, top_k=top_k, extended=extended)
    cal = CalibrationAccumulator(max_sides=calibration_max_sides) if extended else None
    team_acc = (TeamMetricAccumulator(min_history=min_history)
                if any(c.teams is not None for c in contests[n_train:]) else None)
    sys_obj = rater.system
    r0 = time.perf_counter()
    # rated as `podium rate` rates them (Rater.extend: batches, compiled loops over
    # rounds); each scored contest's ratings before it are read back from the events
    if progress is None:
        failed = _extend(rater, contests)
    else:
        done = 0

        def each(_rep: object) -> None:
            nonlocal done
            done += 1
            progress(done, n)

        failed = _extend(rater, contests, each)
    rate_s = time.perf_counter() - r0
    m0 = time.perf_counter()
    # the contests before a failing one were rated
    last = n if failed is None else min(n, rater.contests_processed + 1)
    before = ratings_before(rater, contests, range(n_train, last))
    # an outcome-free round has no order to score, but calibration still scores its
    # draw probability
    ranked = before.select(~before.outcome_free)
    _check_finite(rater, contests, before if cal is not None else ranked)
    if failed is not None:
        raise failed
    rows = int(np.sum(rater.contests.players, dtype=np.int64))
    acc.add_rounds(ranked.mu, ranked.lo, ranked.hi, ranked.n_prev, ranked.offsets,
                   ranked.contests)
    if team_acc is not None:
        off = before.offsets
        for k, t in enumerate(before.contests.tolist()):
            contest = contests[t]
            if contest.teams is not None and not before.outcome_free[k]:
                a, b = int(off[k]), int(off[k + 1])
                _score_teams(team_acc, sys_obj, contest, before.mu[a:b], before.sigma[a:b],
                             before.n_prev[a:b], t)
    if cal is not None:
        _calibrate(cal, sys_obj, contests, before, min_history)
    return Scores(rater=rater, metrics=acc, teams=team_acc, calibration=cal, seconds=rate_s,
                  metric_seconds=time.perf_counter() - m0, contests=n, train_contests=n_train,
                  player_rounds=rows)


def evaluate(
    contests: Sequence[Contest],
    system: str | RatingSystem,
    *,
    params: dict[str, Any] | None = None,
    train_frac: float = 0.1,
    train_contests: int | None = None,
    min_history: int = 5,
    top_k: int = 100,
    extended: bool = True,
    keep_rater: bool = False,
    warmup: bool = True,
    progress: Callable[[int, int], None] | None = None,
    calibration_max_sides: int = MAX_SIDES,
) -> EvalResult:
    """Rate ``contests`` in order and score the ratings' predictions (:func:`score`),
    with the metrics summed up and one row per scored contest.

    Parameters
    ----------
    contests, system, params, train_frac, train_contests, min_history, top_k, extended,
    warmup, progress, calibration_max_sides:
        As :func:`score`.
    keep_rater:
        Keep the final :class:`~podium.rater.Rater` in the result (for plots).
    """
    import pandas as pd

    s = score(contests, system, params=params, train_frac=train_frac,
              train_contests=train_contests, min_history=min_history, top_k=top_k,
              extended=extended, warmup=warmup, progress=progress,
              calibration_max_sides=calibration_max_sides)
    metrics = s.metrics.summary()
    per_round = s.metrics.per_round()
    if s.teams is not None:
        metrics.update(s.teams.summary())
        per_round = per_round.merge(pd.DataFrame.from_records(s.teams.records),
                                    on="index", how="left")
    cal = s.calibration
    if cal is not None:
        metrics.update(cal.summary())
        if cal.records:
            per_round = per_round.merge(pd.DataFrame.from_records(cal.records), on="index",
                                        how="left")
    return EvalResult(
        system=s.rater.system_name,
        params=dict(s.rater.system.params()),
        metrics=metrics,
        seconds=s.seconds,
        metric_seconds=s.metric_seconds,
        contests=s.contests,
        train_contests=s.train_contests,
        scored_contests=s.contests - s.train_contests,
        player_rounds=s.player_rounds,
        per_round=per_round,
        rater=s.rater if keep_rater else None,
        calibration=cal,
    )


def _extend(rater: Rater, contests: Sequence[Contest],
            progress: Callable[[Any], None] | None = None) -> BaseException | None:
    """``rater.extend(contests)``; the exception of a contest that failed (the Rater is
    then just before it), else ``None``."""
    try:
        rater.extend(contests, progress=progress)
    except Exception as exc:  # noqa: BLE001 - the ratings before it are checked first
        return exc
    return None


@dataclass(frozen=True)
class RatingsBefore:
    """The ratings the participants of some contests held just before each of them,
    as flat arrays: contest ``k`` (of the contests asked for) is rows
    ``offsets[k]:offsets[k + 1]``, in its standings order.

    Attributes
    ----------
    contests:
        The positions of the contests in the history.
    offsets:
        Where each contest's rows start (one more than the contests).
    outcome_free:
        Per contest: :attr:`Contest.is_outcome_free <podium.core.contest.Contest.is_outcome_free>`.
    mu, sigma:
        The rating and uncertainty before the contest (a debutant's: the system's
        newcomer prior for the contest).
    n_prev:
        Contests rated earlier (0 for a debut).
    lo, hi:
        Each row's tie range in its contest.
    """

    contests: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    outcome_free: npt.NDArray[np.bool_]
    mu: npt.NDArray[np.float64]
    sigma: npt.NDArray[np.float64]
    n_prev: npt.NDArray[np.int64]
    lo: npt.NDArray[np.int64]
    hi: npt.NDArray[np.int64]

    def select(self, keep: npt.NDArray[np.bool_]) -> RatingsBefore:
        """The contests where ``keep`` is true."""
        sizes = np.diff(self.offsets)
        rows = np.repeat(keep, sizes)
        offsets = np.zeros(int(keep.sum()) + 1, dtype=np.int64)
        np.cumsum(sizes[keep], out=offsets[1:])
        return RatingsBefore(self.contests[keep], offsets, self.outcome_free[keep],
                             self.mu[rows], self.sigma[rows], self.n_prev[rows],
                             self.lo[rows], self.hi[rows])


def ratings_before(rater: Rater, contests: Sequence[Contest],
                   which: Sequence[int]) -> RatingsBefore:
    """Each participant's rating just before each contest of ``which`` (increasing),
    from a ``rater`` that has rated ``contests`` from the start with its full event log
    (up to the last of ``which`` at least, or up to the one before it, which then failed).

    The rating a player holds before contest ``t`` is the one its last rated contest
    before ``t`` left it with: that contest's event (``mu``, ``sigma``), and the
    contests played are its earlier events; a player with none is a newcomer at
    ``system.newcomer(contest)``.  These are the values ``rater.players`` holds just
    before ``t`` is rated (what :meth:`Rater.add` contest by contest would show), read
    in one pass over the events.
    """
    which_a = np.asarray(which, dtype=np.int64)
    chosen = [contests[t] for t in which_a.tolist()]
    log = rater.contests
    sizes = np.array([log.players[t] if t < len(log) else len(contests[t])
                      for t in which_a.tolist()], dtype=np.int64)
    offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n_rows = int(offsets[-1])
    ev = rater.events.arrays()
    ev_contest = ev["contest"].astype(np.int64)
    ev_player = ev["player"].astype(np.int64)
    # a rated contest's rows are its events, in order (the events run in contest order)
    ev_start = np.searchsorted(ev_contest, which_a, side="left")
    rated = np.searchsorted(ev_contest, which_a, side="right") - ev_start == sizes
    at = np.repeat(ev_start - offsets[:-1], sizes) + np.arange(n_rows)
    players = np.full(n_rows, -1, dtype=np.int64)
    row_rated = np.repeat(rated, sizes)
    players[row_rated] = ev_player[at[row_rated]]
    others = np.flatnonzero(~rated)
    if others.size:  # skipped (or failed) contests: their players by handle
        sub = [chosen[k] for k in others.tolist()]
        sub_off = np.zeros(len(sub) + 1, dtype=np.int64)
        np.cumsum(sizes[others], out=sub_off[1:])
        found, _, _ = rater.players.lookup_rounds(sub, sub_off.tolist())
        players[~row_rated] = found
    if (run := batch_run(chosen)) is not None:  # a loader's columns
        lo, hi = run.lo, run.hi
    elif chosen:
        lo = np.concatenate([c.lo for c in chosen]).astype(np.int64)
        hi = np.concatenate([c.hi for c in chosen]).astype(np.int64)
    else:
        lo = hi = np.zeros(0, dtype=np.int64)
    teams = np.array([c.teams is not None for c in chosen], dtype=bool)
    free = np.zeros(len(chosen), dtype=bool)
    nonempty = sizes > 0
    free[nonempty] = hi[offsets[:-1][nonempty]] + 1 >= sizes[nonempty]
    for k in np.flatnonzero(teams | ~nonempty).tolist():
        free[k] = chosen[k].is_outcome_free
    round_of = np.repeat(which_a, sizes)
    span = np.int64(len(contests) + 1)
    order = np.argsort(ev_player * span + ev_contest, kind="stable")
    keys = (ev_player * span + ev_contest)[order]
    # the last event of the row's player in a contest before the row's
    last = np.searchsorted(keys, players * span + round_of, side="left") - 1
    first = np.searchsorted(keys, players * span, side="left")
    known = (players >= 0) & (last >= first)
    src = order[last[known]]
    sys_obj = rater.system
    if type(sys_obj).newcomer is RatingSystem.newcomer:
        mu0, sig0 = sys_obj.newcomer(None)
        mu = np.full(n_rows, mu0, dtype=np.float64)
        sigma = np.full(n_rows, sig0, dtype=np.float64)
    else:  # a prior that depends on the contest
        priors = np.array([sys_obj.newcomer(c) for c in chosen], dtype=np.float64)
        mu = np.repeat(priors[:, 0], sizes) if chosen else np.zeros(0)
        sigma = np.repeat(priors[:, 1], sizes) if chosen else np.zeros(0)
    mu[known] = ev["mu"][src]
    sigma[known] = ev["sigma"][src]
    n_prev = np.zeros(n_rows, dtype=np.int64)
    n_prev[known] = last[known] - first[known] + 1
    return RatingsBefore(which_a, offsets, free, mu, sigma, n_prev, lo, hi)


def _calibrate(cal: CalibrationAccumulator, system: RatingSystem, contests: Sequence[Contest],
               before: RatingsBefore, min_history: int) -> None:
    """Add the contests of ``before`` to ``cal`` in order: runs of two-player contests
    at once (:meth:`CalibrationAccumulator.add_pairs`), the others one by one."""
    off = before.offsets
    pair = np.diff(off) == 2
    pair &= np.array([contests[t].teams is None for t in before.contests.tolist()], dtype=bool)
    # runs of equal `pair`: [start, end)
    edges = np.flatnonzero(np.diff(pair.astype(np.int8))) + 1
    bounds = [0, *edges.tolist(), pair.size]
    for start, end in zip(bounds[:-1], bounds[1:], strict=False):
        if start == end:
            continue
        if pair[start]:
            rows = slice(int(off[start]), int(off[end]))
            ts = before.contests[start:end]
            if cal.add_pairs(system, before.mu[rows].reshape(-1, 2),
                             before.sigma[rows].reshape(-1, 2),
                             before.n_prev[rows].reshape(-1, 2),
                             before.lo[rows].reshape(-1, 2),
                             np.array([contests[t].weight for t in ts.tolist()], np.float64),
                             ts, min_history=min_history):
                continue
        for k in range(start, end):
            a, b = int(off[k]), int(off[k + 1])
            t = int(before.contests[k])
            cal.add_contest(system, contests[t], before.mu[a:b], before.sigma[a:b],
                            before.n_prev[a:b], min_history=min_history, index=t)


def _check_finite(rater: Rater, contests: Sequence[Contest], before: RatingsBefore) -> None:
    """:class:`ConvergenceError` naming the first player whose rating before a scored
    contest is not finite."""
    bad = np.flatnonzero(~np.isfinite(before.mu))
    if not bad.size:
        return
    row = int(bad[0])
    k = int(np.searchsorted(before.offsets, row, side="right")) - 1
    t = int(before.contests[k])
    contest = contests[t]
    handle = contest.handles[row - int(before.offsets[k])]
    raise ConvergenceError(
        f"{rater.system_name}: the rating of player {handle!r} before contest #{t} "
        f"{contest.label!r} is not finite; these parameters make the system "
        f"diverge ({rater.system.params()})"
    )


def _score_teams(team_acc: TeamMetricAccumulator, system: RatingSystem, contest: Contest,
                 mu: npt.NDArray[np.float64], sigma: npt.NDArray[np.float64],
                 n_prev: npt.NDArray[np.int64], index: int) -> None:
    """Add one team contest to ``team_acc``: each team's strength (the system's own
    ``team_strength`` if it has one, else ``sum w_i mu_i``) and, for two teams, the
    first team's win probability (:func:`~podium.evaluation.team_metrics.team_win_probability`)."""
    teams = contest.teams
    assert teams is not None
    off = teams.offsets
    own = getattr(system, "team_strength", None)
    strength = (np.asarray(own(mu, sigma, n_prev, off, teams.weight), dtype=np.float64)
                if callable(own) else team_strength(mu, off, teams.weight))
    scored = team_acc.scored_teams(n_prev, off)
    p_first = None
    if len(teams) == 2 and bool(scored.all()):
        p_first = team_win_probability(
            system, mu, sigma, n_prev, np.arange(off[0], off[1]), np.arange(off[1], off[2]),
            weight=teams.weight, contest_weight=contest.weight)
    starts = off[:-1]
    team_acc.add_round(strength, contest.lo[starts], contest.hi[starts], scored,
                       p_first=p_first, index=index)


def _warm_up(system: RatingSystem, contests: Sequence[Contest], head: int = 32) -> None:
    """Rate, with a throw-away :class:`~podium.rater.Rater` and as :func:`evaluate`
    rates (``Rater.extend``), the first ``head`` contests of the history and its
    largest one, so that the kernels the history needs, and only those, are compiled
    or loaded before the timing starts; a contest the system refuses stops it (the
    history's own run reports it)."""
    if not contests:
        return
    largest = max(contests, key=len)
    sample = list(contests[:head])
    if not any(c is largest for c in sample):
        sample.append(largest)
    try:
        Rater(system).extend(sample)
    except Exception:  # noqa: BLE001, S110 - the history's own run reports it
        pass
