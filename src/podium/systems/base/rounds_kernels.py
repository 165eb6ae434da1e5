"""Numba kernels that every compiled loop over small rounds shares
(:mod:`podium.systems.elo_mmr.rounds_kernels`, :mod:`podium.systems.trueskill.rounds_kernels`):
a round's tie groups, and ``Rater.add``'s bookkeeping of the player table and the
event log.

``Rater.add`` of one small round runs, in one compiled call, everything around the
update that can be compiled: the newcomers' rows (:func:`new_table_rows`), the event
log's entries (:func:`log_events`, written straight into its open chunk,
:meth:`~podium.core.state.EventLog.reserve_tail`) and a check that every array it
writes has room (:func:`check_room`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

__all__ = ["tie_group_bounds", "float_maximum", "check_room", "new_table_rows", "log_events"]


@nb.njit(cache=True)
def tie_group_bounds(lo):
    """Tie groups of a round as half-open position ranges ``(starts, ends)``."""
    n = lo.size
    g = 1
    for k in range(1, n):
        if lo[k] != lo[k - 1]:
            g += 1
    starts = np.empty(g, dtype=np.int64)
    ends = np.empty(g, dtype=np.int64)
    starts[0] = 0
    q = 0
    for k in range(1, n):
        if lo[k] != lo[k - 1]:
            ends[q] = k
            q += 1
            starts[q] = k
    ends[g - 1] = n
    return starts, ends


@nb.njit(cache=True, inline="always")
def float_maximum(a, b):
    """``np.maximum(a, b)`` on two numbers (NaN wins, ``a`` on a tie)."""
    return a if (a >= b or a != a) else b


@nb.njit(cache=True)
def check_room(players, n_after, rows, ev_f, ev_i, at):
    """Raise unless every array written has room: player rows ``< n_after <= rows``
    and the events' columns ``at .. at + len(players)``."""
    if n_after > rows:
        raise ValueError("internal error: player arrays too small for the round")
    for k in range(players.size):
        if players[k] < 0 or players[k] >= n_after:
            raise ValueError("internal error: player index outside the table")
    if ev_f.shape[0] != 3 or ev_i.shape[0] != 3 or at < 0 \
            or at + players.size > min(ev_f.shape[1], ev_i.shape[1]):
        raise ValueError("internal error: event buffer too small for the round")


@nb.njit(cache=True)
def new_table_rows(a, b, t, mu0, sig0, tab_mu, tab_sig, tab_played, tab_last,
                    tab_max_display, tab_change):
    """Rows ``a..b-1`` of the player table become newcomers debuting at ``t``: the
    prior ``(mu0, sig0)``, no round played, ``max_display = -inf``, ``last_change = 0``
    (what :meth:`~podium.core.state.PlayerTable.add_players` writes)."""
    for i in range(a, b):
        tab_mu[i] = mu0
        tab_sig[i] = sig0
        tab_played[i] = 0
        tab_last[i] = t
        tab_max_display[i] = -np.inf
        tab_change[i] = 0.0


@nb.njit(cache=True)
def log_events(players, lo, index, ev_i, at):
    """The integer columns of the round's events: contest index, player, place."""
    for k in range(players.size):
        ev_i[0, at + k] = index
        ev_i[1, at + k] = players[k]
        ev_i[2, at + k] = lo[k]
