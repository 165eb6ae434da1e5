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
from podium.history import _ttt_update as U
from podium.history.data import ContestHistory, check_history

__all__ = ["TTTMessages", "TTTResult", "ttt", "ttt_update", "learning_curves",
           "result_arrays", "result_from_arrays"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


#: The error of a message whose precision turned negative.
NEGATIVE_PRECISION = ("a message's precision turned negative (the model cannot fit these "
                      "games); try a larger beta or sigma")


class TTTMessages(NamedTuple):
    """The messages of a run ([Dangauthier2007], Fig. 1), from which
    :func:`ttt_update` goes on: per slot the forward (``fwd_*``: prior or previous
    batch, drift included), backward (``bwd_*``: next batch) and within-batch
    likelihood (``lik_*``: the product of its games' messages) Gaussians; per row its
    game's message (``item_*``).  ``sigma = inf`` is the uniform message.  ``need``:
    per slot, the messages a bounded update left to take (bits ``NEED_FWD``,
    ``NEED_BWD`` of ``_ttt_update``; 0 after a full run)."""

    fwd_mu: FloatArray
    fwd_sigma: FloatArray
    bwd_mu: FloatArray
    bwd_sigma: FloatArray
    lik_mu: FloatArray
    lik_sigma: FloatArray
    item_mu: FloatArray
    item_sigma: FloatArray
    need: IntArray


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
    messages:
        The messages at the end (:class:`TTTMessages`), for :func:`ttt_update`.
    visits:
        :func:`ttt_update`: the batch visits it made (its work: each visit takes a
        batch's messages and recomputes the games that need it); 0 for :func:`ttt`.
    """

    slot_player: IntArray
    slot_time: FloatArray
    mu: FloatArray
    sigma: FloatArray
    row_slot: IntArray
    converged: bool
    sweeps: int
    step: tuple[float, float]
    messages: TTTMessages | None = None
    visits: int = 0


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
    h = history
    st = _structure(h, p_draw)
    pm, ps, s0, s1, sweeps, flag, (fm, fs, bm, bs, lm, ls, im, is_) = K.ttt_run(
        st.batch_contests, st.batch_slots, st.batch_time, st.slot_player, h.contest_teams,
        h.team_rows, h.team_place, h.weight, st.row_slot, h.n_players, float(mu),
        float(sigma), float(beta), float(gamma), float(p_draw), float(epsilon),
        int(iterations))
    if flag & K.FLAG_NEGATIVE_PRECISION:
        raise ConvergenceError(NEGATIVE_PRECISION)
    converged = not (s0 > epsilon or s1 > epsilon)
    if strict and not converged:
        raise ConvergenceError(f"TrueSkill Through Time did not converge in {sweeps} sweeps "
                               f"(last step {s0:.3g} in mu, {s1:.3g} in sigma); raise "
                               "iterations or epsilon")
    return TTTResult(st.slot_player, st.slot_time, pm, ps, st.row_slot, bool(converged),
                     int(sweeps), (float(s0), float(s1)),
                     TTTMessages(fm, fs, bm, bs, lm, ls, im, is_,
                                 np.zeros(st.slot_player.size, dtype=np.int64)))


class _Structure(NamedTuple):
    """The batches (runs of contests at one time) and slots (batch, player) of a
    history: slots by batch, then player."""

    batch_contests: IntArray
    batch_slots: IntArray
    batch_time: FloatArray
    slot_batch: IntArray
    slot_player: IntArray
    slot_time: FloatArray
    row_slot: IntArray


def _structure(h: ContestHistory, p_draw: float, first: int = 0) -> _Structure:
    """Check the games of ``h`` (two teams at least; no tie when ``p_draw`` is 0; the
    rows of the contests before ``first`` were checked before) and lay out its batches
    and slots (one pass over the rows: ``_ttt_update.slot_layout``)."""
    check_history(h, first=first)
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
    row_slot, slot_batch, slot_player = U.slot_layout(batch_contests, h.contest_rows,
                                                      h.player, h.n_players)
    batch_slots = np.searchsorted(slot_batch, np.arange(n_b + 1)).astype(np.int64)
    batch_time = np.ascontiguousarray(h.time[starts] if n_b else np.zeros(0))
    return _Structure(batch_contests, batch_slots, batch_time, slot_batch, slot_player,
                      np.ascontiguousarray(batch_time[slot_batch]), row_slot)


def ttt_update(previous: TTTResult, history: ContestHistory, *, mu: float = 0.0,
               sigma: float = 6.0, beta: float = 1.0, gamma: float = 0.03,
               p_draw: float = 0.0, tol: float = 1e-3, max_sweeps: int = 3
               ) -> tuple[TTTResult, int]:
    """TrueSkill Through Time of a history that grew at its end, from the messages of
    the previous fit, re-solving only what the new contests touch.

    The new games are added with uniform messages, and the batches are visited as in
    :func:`ttt`'s sweeps (backward, then forward), but only where something moved: first
    the batch of the new games, then a player's previous (next) batch when the backward
    (forward) message its slot sends along its time-line moved by more than ``tol``
    (which spreads a change to the opponents of that batch's games), at most
    ``max_sweeps`` sweeps (``_ttt_update.ttt_update``); what they leave is kept in the
    messages' ``need`` and taken up by the next update.  The earlier messages are kept,
    so the result is the full run's fixed point up to what the bounded sweeps leave
    (and what the earlier fit left: only the new games' change spreads).

    Parameters
    ----------
    previous:
        The result of :func:`ttt` (or of this function) on the first contests of
        ``history``, with its messages.
    history:
        ``previous``'s history followed by new contests (none earlier than its last).
    mu, sigma, beta, gamma, p_draw:
        The model, as :func:`ttt` (the previous fit's values).
    tol:
        The change of a message (mean or deviation) that spreads.
    max_sweeps:
        At most this many backward-forward sweeps.

    Returns
    -------
    (TTTResult, int)
        The result (``sweeps`` the update's, ``converged``: whether nothing moved by
        more than ``tol`` was left to spread) and the number of players touched (with a
        slot in a visited batch).

    Raises
    ------
    ValueError
        When ``previous`` has no messages or is not a fit of the history's first
        contests.
    ConfigError, ContestError, ConvergenceError
        As :func:`ttt`.
    """
    _check_params(mu, sigma, beta, gamma, p_draw, 0.0, 0)
    if not (math.isfinite(tol) and tol >= 0) or max_sweeps < 1:
        raise ConfigError(f"tol must be finite and >= 0 and max_sweeps >= 1, got {tol!r} "
                          f"and {max_sweeps!r}")
    msg = previous.messages
    if msg is None:
        raise ValueError("the previous TTT result has no messages to go on from")
    h = history
    n_old_rows = previous.row_slot.size
    n_old_contests = int(np.searchsorted(h.contest_rows, n_old_rows, side="left"))
    st = _structure(h, p_draw, first=n_old_contests)
    # the old slots keep their places up to the old last batch, which the new contests
    # may join (its slots are by player): only its slots are looked up
    n_old_slots = previous.slot_player.size
    j = int(np.searchsorted(st.batch_time, previous.slot_time[-1])) if n_old_slots else 0
    k = int(st.batch_slots[j]) if n_old_slots else 0
    tail = st.slot_player[k:st.batch_slots[min(j + 1, st.batch_time.size)]]
    where = np.r_[np.arange(min(k, n_old_slots), dtype=np.int64),
                  k + np.searchsorted(tail, previous.slot_player[k:])]
    if (n_old_rows > h.n_rows or k > n_old_slots or np.any(where >= st.slot_player.size)
            or not np.array_equal(st.slot_player[np.minimum(where, st.slot_player.size - 1)],
                                  previous.slot_player)
            or not np.array_equal(st.slot_time[np.minimum(where, st.slot_time.size - 1)],
                                  previous.slot_time)):
        raise ValueError("the previous TTT result is not a fit of this history's first "
                         "contests")
    n_s = st.slot_player.size

    def spread(arr: FloatArray, fill: float) -> FloatArray:
        out = np.full(n_s, fill)
        out[:k] = arr[:k]
        out[where[k:]] = arr[k:]
        return out

    # the new slots and rows start uniform (sigma inf); the new games send nothing yet
    m = TTTMessages(spread(msg.fwd_mu, 0.0), spread(msg.fwd_sigma, math.inf),
                    spread(msg.bwd_mu, 0.0), spread(msg.bwd_sigma, math.inf),
                    spread(msg.lik_mu, 0.0), spread(msg.lik_sigma, math.inf),
                    np.r_[msg.item_mu, np.zeros(h.n_rows - n_old_rows)],
                    np.r_[msg.item_sigma, np.full(h.n_rows - n_old_rows, math.inf)],
                    np.full(n_s, U.NEED_FWD, dtype=np.int64))
    m.need[:k] = msg.need[:k]  # a new slot takes its forward message first
    m.need[where[k:]] = msg.need[k:]
    # each slot's neighbours on its player's time-line (slots are by batch)
    prev_slot, next_slot, elapsed = U.time_links(st.slot_player, st.slot_time, h.n_players)
    dirty = np.zeros(st.batch_time.size, dtype=np.int64)
    new_batches = np.searchsorted(st.batch_contests, np.arange(n_old_contests, h.n_contests),
                                  side="right") - 1
    dirty[new_batches] = 1
    dirty[st.slot_batch[m.need != 0]] = 1  # and what earlier updates left
    fresh = np.zeros(h.n_contests, dtype=np.int64)
    fresh[n_old_contests:] = 1
    pm, ps = spread(previous.mu, math.nan), spread(previous.sigma, math.nan)
    sweeps, settled, touched, visits, flag = U.ttt_update(
        st.batch_contests, st.batch_slots, st.slot_batch, st.slot_player, prev_slot,
        next_slot, elapsed, h.contest_teams, h.team_rows, h.team_place, h.weight,
        st.row_slot, h.n_players, m.fwd_mu, m.fwd_sigma, m.bwd_mu, m.bwd_sigma, m.lik_mu,
        m.lik_sigma, m.item_mu, m.item_sigma, m.need, dirty, fresh, pm, ps, float(mu),
        float(sigma), float(beta), float(gamma), float(p_draw), float(tol), int(max_sweeps))
    if flag & K.FLAG_NEGATIVE_PRECISION:
        raise ConvergenceError(NEGATIVE_PRECISION)
    res = TTTResult(st.slot_player, st.slot_time, pm, ps, st.row_slot, bool(settled),
                    int(sweeps), (math.nan, math.nan), m, int(visits))
    return res, int(touched)


def result_arrays(result: TTTResult) -> dict[str, npt.NDArray[np.generic]]:
    """The arrays of ``result`` that :func:`ttt_update` goes on from (a checkpoint's),
    by name; :func:`result_from_arrays` reads them back."""
    out: dict[str, npt.NDArray[np.generic]] = {
        "slot_player": result.slot_player, "slot_time": result.slot_time,
        "mu": result.mu, "sigma": result.sigma, "row_slot": result.row_slot}
    if result.messages is not None:
        out.update(result.messages._asdict())
    return out


def result_from_arrays(arrays: dict[str, npt.NDArray[np.generic]]) -> TTTResult:
    """The :class:`TTTResult` of :func:`result_arrays`' output (``sweeps`` 0).

    Raises
    ------
    KeyError
        For a missing array.
    """
    a = {k: np.asarray(v) for k, v in arrays.items()}
    msg = (TTTMessages(*(a[f] for f in TTTMessages._fields))
           if all(f in a for f in TTTMessages._fields) else None)
    return TTTResult(a["slot_player"].astype(np.int64), a["slot_time"], a["mu"], a["sigma"],
                     a["row_slot"].astype(np.int64), True, 0, (math.nan, math.nan), msg)


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
