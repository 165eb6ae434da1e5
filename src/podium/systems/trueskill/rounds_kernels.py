"""Compiled loops over many small TrueSkill-SPb rounds (see
:meth:`~podium.systems.trueskill.TrueSkillSPb.rate_rounds`): one call of the
message-passing kernel per round, each round doing exactly what ``round_update`` does,
so that every rating is bit-identical.

* :func:`trueskill_rounds`: a batch of rounds in CSR form;
* :func:`trueskill_add`: ``Rater.add`` of one small round (``rate_small_round``): the
  same loop on that one round, plus the newcomers' rows and the round's events
  (:mod:`podium.systems.base.rounds_kernels`).

This module is imported, and its kernels compiled, only when a batch of rounds is
rated this way.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.systems.base.rounds_kernels import (
    check_room,
    float_maximum,
    log_events,
    new_table_rows,
    tie_group_bounds,
)
from podium.systems.trueskill.kernels import trueskill_round

__all__ = ["TS_UNCONVERGED", "TS_NONFINITE", "trueskill_rounds", "trueskill_add"]

#: Per-round flags of :func:`trueskill_rounds`.
TS_UNCONVERGED = 1
TS_NONFINITE = 2


@nb.njit(cache=True)
def trueskill_rounds(r0, r1, offsets, players, lo, times, sig_perf,
                     tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change,
                     sig_drift, eps, conv_eps, max_rounds, out, out_rounds, out_flags):
    """Rate rounds ``r0..r1-1`` of a batch with TrueSkill-SPb, one after another.

    Each round is ``TrueSkillSPb.round_update``: every participant's sigma is
    widened by the drift (``hypot(sigma, sig_drift)``), the places are the tie
    groups, and :func:`~podium.systems.trueskill.kernels.trueskill_round` runs
    the message passing with the round's performance deviation ``sig_perf[r]``.
    The player table (``tab_*``) is read before and written after every round;
    the display rating is ``mu``.

    Per event it writes the new ``mu``, ``sigma`` and the performance (rows of
    ``out``); per round the number of message-passing rounds and the flags
    ``TS_UNCONVERGED`` (stopped at ``max_rounds``) and ``TS_NONFINITE`` (a
    non-finite rating came out).  Returns the number of rounds with a flag.
    """
    flagged = 0
    for r in range(r0, r1):
        a = offsets[r]
        b = offsets[r + 1]
        n = b - a
        idx = players[a:b]
        t = times[r]
        g_starts, _ = tie_group_bounds(lo[a:b])
        starts = np.empty(g_starts.size + 1, dtype=np.int64)
        starts[: g_starts.size] = g_starts
        starts[g_starts.size] = n
        mu = np.empty(n)
        sig = np.empty(n)
        for k in range(n):
            i = idx[k]
            mu[k] = tab_mu[i]
            sig[k] = math.hypot(tab_sig[i], sig_drift)
        new_mu, new_sig, perf, _, rounds, converged = trueskill_round(
            mu, sig, starts, sig_perf[r], eps, conv_eps, max_rounds
        )
        flags = 0 if converged else TS_UNCONVERGED
        for k in range(n):
            if not (np.isfinite(new_mu[k]) and np.isfinite(new_sig[k])):
                flags |= TS_NONFINITE
        out_rounds[r] = rounds
        out_flags[r] = flags
        if flags != 0:
            flagged += 1
        for k in range(n):
            i = idx[k]
            out[0, a + k] = new_mu[k]
            out[1, a + k] = new_sig[k]
            out[2, a + k] = perf[k]
            tab_mu[i] = new_mu[k]
            tab_sig[i] = new_sig[k]
            tab_played[i] += 1
            if t > tab_last[i]:
                tab_last[i] = t
            tab_max_display[i] = float_maximum(tab_max_display[i], new_mu[k])
            tab_change[i] = new_mu[k] - mu[k]
    return flagged


@nb.njit(cache=True)
def trueskill_add(players, lo, t, sig_perf, index, n_before, n_after, mu0, sig0,
                  tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change,
                  sig_drift, eps, conv_eps, max_rounds, ev_f, ev_i, at):
    """``Rater.add`` of one round with TrueSkill-SPb (:func:`trueskill_rounds` on a
    batch of that round).

    Players ``n_before..n_after-1`` of the table are the round's newcomers (their
    rows get the prior ``(mu0, sig0)``).  The events go to ``ev_f[:, at:]`` (mu,
    sigma, performance) and ``ev_i[:, at:]`` (contest ``index``, player, place).
    Returns the number of message-passing rounds and the round's flags.
    """
    rows = min(tab_mu.size, tab_sig.size, tab_played.size, tab_last.size,
               tab_max_display.size, tab_change.size)
    check_room(players, n_after, rows, ev_f, ev_i, at)
    new_table_rows(n_before, n_after, t, mu0, sig0, tab_mu, tab_sig, tab_played, tab_last,
                    tab_max_display, tab_change)
    n = players.size
    offsets = np.zeros(2, dtype=np.int64)
    offsets[1] = n
    times = np.full(1, t, dtype=np.int64)
    sig_perfs = np.full(1, sig_perf)
    out = np.empty((3, n))
    n_iter = np.zeros(1, dtype=np.int64)
    flags = np.zeros(1, dtype=np.int64)
    trueskill_rounds(0, 1, offsets, players, lo, times, sig_perfs, tab_mu, tab_sig,
                     tab_played, tab_last, tab_max_display, tab_change, sig_drift, eps,
                     conv_eps, max_rounds, out, n_iter, flags)
    for k in range(n):
        ev_f[0, at + k] = out[0, k]
        ev_f[1, at + k] = out[1, k]
        ev_f[2, at + k] = out[2, k]
    log_events(players, lo, index, ev_i, at)
    return n_iter[0], flags[0]
