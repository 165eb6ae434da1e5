"""``mmr-smooth``: Elo-MMR smoothed over the whole history (docs/history.md).

Elo-MMR ([EbtekarLiu2021]) is a filter: a round is rated from the players' beliefs
*before* it, and never again.  ``mmr-smooth`` keeps Elo-MMR's model and its two
phases, and lets every round see the whole history:

* the belief about a player's skill at round ``k`` given its *other* rounds (the
  *cavity*) is the product of the forward belief -- Elo-MMR's own prior at ``k``, from
  rounds ``< k`` -- and a backward message from rounds ``> k``: Elo-MMR's belief run
  backwards in time from the player's last round (logistic factors of the later
  performances, pseudodiffused by the same Algorithm 2 from each round to the one
  before, no prior).  This is the two-filter form of a smoother;
* phase 1 (Theorem 3.2): each round's performances are solved from the participants'
  cavity beliefs, the terms ``(mu_c, hypot(sigma_c, beta))``;
* phase 2 (Eq. 6-8): each player's forward and backward beliefs are rebuilt from its
  performances; the smoothed rating at round ``k`` is the argmax of the forward
  posterior times the backward message, its uncertainty from their total weights.

A team round follows ``mmr``'s team rule: phase 1 builds each team's term from its
members' cavities, solves the team performances and turns them into member
measurements (:mod:`podium.history._smooth_teams`); phase 2 is unchanged.

The first pass is Elo-MMR itself (nothing later is known yet); then the two phases
alternate over the whole history until no performance moves by more than ``tol``
(:meth:`~podium.history.smooth_state.SmoothState.solve`).  With no later round a
cavity is Elo-MMR's prior, so a one-round history is rated exactly as the filter
rates it, and so is every player's last round given the performances.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from podium.errors import ConfigError, ConvergenceError
from podium.history.data import ContestHistory
from podium.history.params import UPDATE_SPREAD, check_coarse
from podium.history.smooth_state import MMRParams, SmoothState
from podium.history.smooth_update import bounded_update
from podium.history.sweeps import SweepReport

__all__ = ["MMRParams", "SmoothResult", "UpdateReport", "SweepReport", "UPDATE_SPREAD",
           "mmr_smooth", "smooth_extend", "smooth_forecast", "smooth_result"]

FloatArray = npt.NDArray[np.float64]


class SmoothResult(NamedTuple):
    """Smoothed Elo-MMR ratings, per row of the history (``NaN`` on the rows of
    contests left out: everybody tied).

    Attributes
    ----------
    mu, sigma:
        The smoothed rating after each round and its uncertainty.
    prior_mu, prior_sigma:
        The cavity belief each round's performances were solved from (the player's
        skill given its every other round).
    perf:
        The performances.
    filtered_mu, filtered_sigma:
        Elo-MMR's own (filtered) rating after each round (the first pass).
    converged:
        Whether the last sweep moved no performance by more than ``tol``.
    sweeps:
        One :class:`~podium.history.sweeps.SweepReport` per sweep.
    unsolved:
        Performance solves that did not converge (reported by the solver).
    state:
        The working state, for :func:`smooth_extend`.
    """

    mu: FloatArray
    sigma: FloatArray
    prior_mu: FloatArray
    prior_sigma: FloatArray
    perf: FloatArray
    filtered_mu: FloatArray
    filtered_sigma: FloatArray
    converged: bool
    sweeps: list[SweepReport]
    unsolved: int
    state: SmoothState


def _check_tol(tol: float, max_sweeps: int) -> None:
    if not (tol > 0 and math.isfinite(tol)):
        raise ConfigError(f"tol must be finite and positive, got {tol!r}")
    if max_sweeps < 1:
        raise ConfigError(f"max_sweeps must be >= 1, got {max_sweeps!r}")


def _check_spread(spread: float) -> None:
    if not (spread >= 1.0 and math.isfinite(spread)):
        raise ConfigError(f"spread (the update's propagation threshold in units of tol) "
                          f"must be finite and at least 1, got {spread!r}")


def smooth_result(state: SmoothState, converged: bool,
                  reports: list[SweepReport]) -> SmoothResult:
    """The per-row outputs of a state, on the rows of the input history."""
    en = state.entries
    mu, sigma, prior_mu, prior_sigma, perf, f_mu, f_sigma = state.entry_views(
        (en.sm_mu, en.sm_sig, en.cav_mu, en.cav_sig, en.perf, state.filtered_mu,
         state.filtered_sigma))
    return SmoothResult(mu, sigma, prior_mu, prior_sigma, perf, f_mu, f_sigma, converged,
                        reports, state.unsolved, state)


def mmr_smooth(history: ContestHistory, params: MMRParams | None = None, *,
               contest_weight: npt.ArrayLike | float | None = None,
               perf_ceiling: npt.ArrayLike | float | None = None, tol: float = 0.01,
               max_sweeps: int = 100, window_tol: float = 1e-9, memory: int = 10,
               coarse: bool = True, strict: bool = False) -> SmoothResult:
    """Smoothed Elo-MMR of a whole history (``mmr-smooth``; docs/history.md).

    Parameters
    ----------
    history:
        Contests in time order (a tie shares a place; team rounds by Elo-MMR's team
        rule, :mod:`podium.history._smooth_teams`); contests in which
        everybody tied are left out, as Elo-MMR skips them.
    params:
        Elo-MMR's parameters (default: Podium's ``mmr``).
    contest_weight, perf_ceiling:
        Per contest (or one value): its weight (default 1) and the cap on its
        performances (default none).
    tol:
        Stop when a sweep moves no performance by more than ``tol`` rating points.
    max_sweeps:
        The most sweeps (each: phase 2 for every player, phase 1 for every contest).
    window_tol:
        A logistic factor whose multiplicity has decayed below this is left out of
        the sums (0 keeps every one, as Podium's exact ``mmr``).
    memory:
        Differences kept by the Anderson acceleration (0: plain iteration; 10 takes
        16 sweeps where 5 takes 22 on the first 300 Codeforces contests).
    coarse:
        Correct the sweeps' slow per-contest shifts by the coarse model
        (:class:`~podium.history.coarse.CoarseModel`; the same fixed point: 12 sweeps
        instead of 16 on the first 300 Codeforces contests, 14 instead of 21 on the
        first 600); ``False``: the plain map.
    strict:
        Raise :class:`~podium.errors.ConvergenceError` when ``max_sweeps`` is reached
        first (by default the result says so in ``converged``).

    Returns
    -------
    SmoothResult

    Raises
    ------
    ConfigError, ContestError, ConvergenceError
    """
    _check_tol(tol, max_sweeps)
    use_coarse = check_coarse(coarse)
    state = SmoothState.start(history, params, contest_weight, perf_ceiling, window_tol)
    state.rate_forward(state.history.n_contests)
    reports, converged = state.solve(tol, max_sweeps, memory, coarse=use_coarse)
    if strict and not converged:
        raise ConvergenceError(f"mmr-smooth did not converge in {max_sweeps} sweeps (last "
                               f"residual {reports[-1].max_perf_change:.3g}); raise "
                               "max_sweeps or tol")
    return smooth_result(state, converged, reports)


class UpdateReport(NamedTuple):
    """What adding contests to a smoothed history did.

    Attributes
    ----------
    contests:
        Contests added.
    sweeps:
        The sweeps of the bounded update
        (:func:`~podium.history.smooth_update.bounded_update`).
    settled:
        Whether the update stopped because nothing moved by more than ``tol``.
    players:
        Players whose beliefs were recomputed.
    max_past_change:
        The largest change of a smoothed rating of an earlier round.
    """

    contests: int
    sweeps: list[SweepReport]
    settled: bool
    players: int
    max_past_change: float


def _add_contests(state: SmoothState, n: int, tol: float, max_sweeps: int,
                  spread: float) -> UpdateReport:
    """Rate the next ``n`` contests from the forward priors, then re-smooth what they
    touch with at most ``max_sweeps`` sweeps, passing on changes above
    ``spread * tol``."""
    r_old = state.rated_rows
    c_old = state.rated
    state.rate_forward(n)
    new_rows = np.arange(r_old, state.rated_rows, dtype=np.int64)
    reports, settled, players, change = bounded_update(state, new_rows, tol, max_sweeps,
                                                       r_old, spread * tol)
    return UpdateReport(state.rated - c_old, reports, settled, int(players.size), change)


def smooth_extend(result: SmoothResult, n: int, *, tol: float = 0.01, max_sweeps: int = 3,
                  spread: float = UPDATE_SPREAD) -> tuple[SmoothResult, UpdateReport]:
    """Add the next ``n`` contests of the history ``result`` was built on (its state
    holds the whole history; :func:`mmr_smooth` rates it all, :func:`smooth_forecast`
    one contest at a time): each is rated from its players' current beliefs, then
    only what it touches is re-smoothed, with at most ``max_sweeps`` sweeps.

    Parameters
    ----------
    result:
        A smoothing whose state has contests left to rate.
    n:
        How many contests to add.
    tol, max_sweeps:
        As :func:`~podium.history.smooth_update.bounded_update`.
    spread:
        The propagation threshold in units of ``tol`` (:data:`UPDATE_SPREAD`).

    Returns
    -------
    result, report
        The updated ratings (the state is updated in place) and what changed.
    """
    _check_tol(tol, max_sweeps)
    _check_spread(spread)
    state = result.state
    report = _add_contests(state, n, tol, max_sweeps, spread)
    return smooth_result(state, report.settled, report.sweeps), report


def smooth_forecast(history: ContestHistory, params: MMRParams | None = None, *,
                    contest_weight: npt.ArrayLike | float | None = None,
                    perf_ceiling: npt.ArrayLike | float | None = None, tol: float = 0.01,
                    max_sweeps: int = 3, window_tol: float = 1e-9,
                    spread: float = UPDATE_SPREAD,
                    ) -> tuple[FloatArray, FloatArray, list[UpdateReport]]:
    """The causal protocol: the rating of every player at contest ``t`` from smoothing
    only the contests before ``t`` (for evaluation).

    Contests are added one at a time; before each is rated, its participants' beliefs
    -- the smoothed history so far, carried forward by Elo-MMR's diffusion -- are
    recorded; then the contest is added and what it touches is re-smoothed (at most
    ``max_sweeps`` sweeps, changes below ``spread * tol`` not passed on).

    Returns
    -------
    mu, sigma : ndarray
        Per row of the history: the forecast belief (``NaN`` on contests left out).
    reports : list of UpdateReport
        One per contest.
    """
    _check_tol(tol, max_sweeps)
    _check_spread(spread)
    state = SmoothState.start(history, params, contest_weight, perf_ceiling, window_tol)
    rd = state.rounds
    mu = np.full(rd.cav_mu.size, np.nan)
    sigma = np.full(rd.cav_mu.size, np.nan)
    reports = []
    for c in range(state.history.n_contests):
        r0, r1 = rd.contest_rows[c], rd.contest_rows[c + 1]
        reports.append(_add_contests(state, 1, tol, max_sweeps, spread))
        # rate_forward wrote the priors of contest c (nothing later was known) to the
        # cavities; the update may move them since, so they were kept by rate_forward:
        mu[r0:r1] = state.forecast_mu[r0:r1]
        sigma[r0:r1] = state.forecast_sigma[r0:r1]
    return state.row_view(mu), state.row_view(sigma), reports
