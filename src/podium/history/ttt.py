"""TrueSkill Through Time ([Dangauthier2007]): every skill of a history estimated
from every game, past and future.

The model of the ``trueskillthroughtime`` package (version 1.1.0, G. Landfried), with
its defaults:

* skill of a newcomer ``s ~ N(mu, sigma^2)`` (``mu = 0``, ``sigma = 6``);
* between two of a player's batches ``t_1 < t_2`` (days) the skill drifts:
  ``s_2 ~ N(s_1, (t_2 - t_1) gamma^2)`` (``gamma = 0.03`` per day), Eq. 5 of the paper;
* in a game a member's performance is ``p ~ N(s, beta^2)`` (``beta = 1``), a team's
  performance is the weighted sum of its members' ``sum_i w_i p_i``, and the teams'
  order is the order of their performances; adjacent teams whose performances differ by
  less than the margin ``epsilon`` draw, with ``epsilon`` set so that two such teams
  draw with probability ``p_draw`` (default 0: no draws, a tie is then an error);
* games at the same time form one batch: a player has one skill per batch.

Inference is the paper's message passing (Sec. 3): the forward pass is TrueSkill
([Herbrich2006]); then sweeps of a backward pass (each batch receives the players'
messages from their next batch) and a forward pass, each batch updating its games
once with the new messages, until no posterior moves by more than ``epsilon``
(default ``1e-6``) or ``iterations`` (30) sweeps are done.  The schedule is the
package's, so that its learning curves and these agree to rounding.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from podium.errors import ConfigError, ContestError, ConvergenceError
from podium.history import _ttt_kernels as K
from podium.history.data import ContestHistory, check_history

__all__ = ["TTTResult", "ttt", "learning_curves"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class TTTResult(NamedTuple):
    """The posteriors of a TrueSkill Through Time run.

    Attributes
    ----------
    slot_player, slot_time:
        One slot per (batch, player): the player and the batch's time (days), by batch
        then player.
    mu, sigma:
        Each slot's posterior skill ``N(mu, sigma^2)`` given every game.
    row_slot:
        Per row of the history: its slot (``mu[row_slot]`` is the row's rating).
    converged:
        Whether the last sweep moved no posterior by more than ``epsilon``.
    sweeps:
        Backward-forward sweeps done.
    step:
        The last sweep's largest change of a posterior mean and of a deviation.
    """

    slot_player: IntArray
    slot_time: FloatArray
    mu: FloatArray
    sigma: FloatArray
    row_slot: IntArray
    converged: bool
    sweeps: int
    step: tuple[float, float]


def _check_params(mu: float, sigma: float, beta: float, gamma: float, p_draw: float,
                  epsilon: float, iterations: int) -> None:
    for name, v in (("mu", mu), ("sigma", sigma), ("beta", beta), ("gamma", gamma),
                    ("epsilon", epsilon)):
        if not math.isfinite(v):
            raise ConfigError(f"{name} must be finite, got {v!r}")
    for name, v in (("sigma", sigma), ("beta", beta)):
        if v <= 0:
            raise ConfigError(f"{name} must be positive, got {v!r}")
    if gamma < 0 or epsilon < 0:
        raise ConfigError(f"gamma and epsilon must be >= 0, got {gamma!r} and {epsilon!r}")
    if not 0.0 <= p_draw < 1.0:
        raise ConfigError(f"p_draw must be in [0, 1), got {p_draw!r}")
    if iterations < 0:
        raise ConfigError(f"iterations must be >= 0, got {iterations!r}")


def ttt(history: ContestHistory, *, mu: float = 0.0, sigma: float = 6.0, beta: float = 1.0,
        gamma: float = 0.03, p_draw: float = 0.0, epsilon: float = 1e-6,
        iterations: int = 30, strict: bool = False) -> TTTResult:
    """TrueSkill Through Time of a whole history ([Dangauthier2007]).

    Parameters
    ----------
    history:
        The contests (games) in time order, times in days; teams, member weights and
        ties (draws) are allowed.
    mu, sigma:
        Newcomers' prior skill ``N(mu, sigma^2)``.
    beta:
        Performance noise: ``p ~ N(s, beta^2)``.
    gamma:
        Skill drift per day: ``s_t ~ N(s_{t'}, (t - t') gamma^2)``.
    p_draw:
        Probability that two adjacent teams of equal skill draw; sets the draw margin
        ``epsilon`` with ``P(|d| < epsilon) = p_draw`` for their performance difference
        ``d ~ N(0, (n_a + n_b) beta^2)``.  0 (the default) allows no draws.
    epsilon, iterations:
        Stop when a sweep moves no posterior mean or deviation by more than
        ``epsilon``, or after ``iterations`` sweeps.
    strict:
        Raise :class:`~podium.errors.ConvergenceError` when the sweeps stop before
        converging (by default the result says so in ``converged``).

    Returns
    -------
    TTTResult

    Raises
    ------
    ConfigError
        On a parameter out of range.
    ContestError
        On a contest of one team, or a tie while ``p_draw`` is 0 (naming the contest).
    ConvergenceError
        When a message's precision turns negative (the package raises then too), or
        with ``strict`` when the sweeps do not converge.
    """
    _check_params(mu, sigma, beta, gamma, p_draw, epsilon, iterations)
    check_history(history)
    h = history
    n_teams = np.diff(h.contest_teams)
    if np.any(n_teams < 2):
        c = int(np.flatnonzero(n_teams < 2)[0])
        raise ContestError("a game needs at least two teams", contest=f"#{c}")
    if p_draw == 0.0:
        team_contest = np.repeat(np.arange(h.n_contests), n_teams)
        tied = np.flatnonzero((team_contest[1:] == team_contest[:-1])
                              & (h.team_place[1:] == h.team_place[:-1]))
        if tied.size:
            raise ContestError("a tie, but p_draw is 0 (no draws); give p_draw > 0",
                               contest=f"#{int(team_contest[tied[0]])}")
    # batches: runs of contests at the same time
    starts = np.flatnonzero(np.r_[True, h.time[1:] != h.time[:-1]]) if h.n_contests else \
        np.zeros(0, dtype=np.int64)
    batch_contests = np.r_[starts, h.n_contests].astype(np.int64)
    n_b = starts.size
    contest_batch = np.repeat(np.arange(n_b, dtype=np.int64), np.diff(batch_contests))
    row_batch = contest_batch[h.row_contest]
    key = row_batch * max(h.n_players, 1) + h.player
    uniq, row_slot = np.unique(key, return_inverse=True)
    row_slot = row_slot.astype(np.int64).ravel()
    slot_batch = uniq // max(h.n_players, 1)
    slot_player = (uniq % max(h.n_players, 1)).astype(np.int64)
    batch_slots = np.searchsorted(slot_batch, np.arange(n_b + 1)).astype(np.int64)
    batch_time = h.time[starts] if n_b else np.zeros(0)
    pm, ps, s0, s1, sweeps, flag = K.ttt_run(
        batch_contests, batch_slots, np.ascontiguousarray(batch_time), slot_player,
        h.contest_teams, h.team_rows, h.team_place, h.weight, row_slot, h.n_players,
        float(mu), float(sigma), float(beta), float(gamma), float(p_draw), float(epsilon),
        int(iterations))
    if flag & K.FLAG_NEGATIVE_PRECISION:
        raise ConvergenceError("a message's precision turned negative (the model cannot "
                               "fit these games); try a larger beta or sigma")
    converged = not (s0 > epsilon or s1 > epsilon)
    if strict and not converged:
        raise ConvergenceError(f"TrueSkill Through Time did not converge in {sweeps} sweeps "
                               f"(last step {s0:.3g} in mu, {s1:.3g} in sigma); raise "
                               "iterations or epsilon")
    return TTTResult(slot_player, np.ascontiguousarray(batch_time[slot_batch]), pm, ps,
                     row_slot, bool(converged), int(sweeps), (float(s0), float(s1)))


def learning_curves(result: TTTResult) -> dict[int, tuple[FloatArray, FloatArray, FloatArray]]:
    """Each player's learning curve: ``player -> (times, mu, sigma)``, in time order.

    Parameters
    ----------
    result:
        A :func:`ttt` result.

    Returns
    -------
    dict
    """
    order = np.argsort(result.slot_player, kind="stable")
    players = result.slot_player[order]
    cuts = np.flatnonzero(np.r_[True, players[1:] != players[:-1], True])
    out = {}
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        idx = order[a:b]
        out[int(players[a])] = (result.slot_time[idx], result.mu[idx], result.sigma[idx])
    return out
