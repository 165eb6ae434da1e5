"""Numba kernels of TrueSkill Through Time's bounded incremental update (see
:func:`podium.history.ttt.ttt_update`) and of the slot layout it shares with the full
run.

The update goes on from the messages of an earlier fit ([Dangauthier2007], Sec. 3) and
visits only the batches where a message moved by more than the update's tolerance, so
that its work is proportional to what the new games change, not to the history: the
layout is built in one pass over the rows (no sort of the whole history), and the
posteriors are recomputed only for the slots of the batches visited.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.history._ttt_kernels import INF, WORK_ROWS, g_mul, game_sweep, posterior

#: A slot's messages still to take in an update (bits of ``need``).
NEED_FWD = 1
NEED_BWD = 2


@nb.njit(cache=True)
def slot_layout(batch_contests: np.ndarray, contest_rows: np.ndarray, player: np.ndarray,
                n_players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The slots (batch, player) of a history, by batch then player: returns
    ``(row_slot, slot_batch, slot_player)``.  One pass over the rows; each batch's
    players are sorted among themselves only."""
    n_b = batch_contests.size - 1
    n_r = player.size
    row_slot = np.empty(n_r, dtype=np.int64)
    slot_batch = np.empty(n_r, dtype=np.int64)
    slot_player = np.empty(n_r, dtype=np.int64)
    pos = np.full(max(n_players, 1), -1, dtype=np.int64)
    n_s = 0
    for b in range(n_b):
        r0, r1 = contest_rows[batch_contests[b]], contest_rows[batch_contests[b + 1]]
        # the batch's distinct players, in order of appearance, then sorted
        k = 0
        for r in range(r0, r1):
            a = player[r]
            if pos[a] == -1:
                pos[a] = -2
                slot_player[n_s + k] = a
                k += 1
        members = slot_player[n_s:n_s + k]
        if k > 32:
            members[:] = np.sort(members)
        else:
            for i in range(1, k):
                x = members[i]
                m = i - 1
                while m >= 0 and members[m] > x:
                    members[m + 1] = members[m]
                    m -= 1
                members[m + 1] = x
        for i in range(k):
            pos[members[i]] = n_s + i
            slot_batch[n_s + i] = b
        for r in range(r0, r1):
            row_slot[r] = pos[player[r]]
        for i in range(k):
            pos[members[i]] = -1
        n_s += k
    return row_slot, slot_batch[:n_s].copy(), slot_player[:n_s].copy()


@nb.njit(cache=True)
def time_links(slot_player: np.ndarray, slot_time: np.ndarray, n_players: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each slot's neighbours on its player's time-line (``prev_slot``, ``next_slot``;
    -1 for none) and the days since the previous one (``elapsed``, 0 for a first
    slot), for slots in time order."""
    n_s = slot_player.size
    prev_slot = np.full(n_s, -1, dtype=np.int64)
    next_slot = np.full(n_s, -1, dtype=np.int64)
    elapsed = np.zeros(n_s)
    last = np.full(max(n_players, 1), -1, dtype=np.int64)
    for s in range(n_s):
        a = slot_player[s]
        p = last[a]
        if p >= 0:
            prev_slot[s] = p
            next_slot[p] = s
            elapsed[s] = slot_time[s] - slot_time[p]
        last[a] = s
    return prev_slot, next_slot, elapsed


@nb.njit(cache=True)
def _outgoing(m1: float, s1: float, m2: float, s2: float, flag: np.ndarray
              ) -> tuple[float, float]:
    """The message a slot sends along its player's time-line: its within-batch likelihood
    times its message from the other side (``fwd * lik`` forward, ``lik * bwd``
    backward), before the drift widens it."""
    return g_mul(m1, s1, m2, s2, flag)


@nb.njit(cache=True)
def _moved(m0: float, s0: float, m1: float, s1: float, tol: float) -> bool:
    """Whether a message moved by more than ``tol`` in its mean or deviation (a
    uniform message that turned proper has moved)."""
    if s0 == INF or s1 == INF:
        return s0 != s1
    return abs(m1 - m0) > tol or abs(s1 - s0) > tol


@nb.njit(cache=True)
def _visit(j: int, batch_contests: np.ndarray, batch_slots: np.ndarray,
           slot_batch: np.ndarray, slot_agent: np.ndarray, prev_slot: np.ndarray,
           next_slot: np.ndarray, elapsed: np.ndarray, contest_teams: np.ndarray,
           team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
           slot: np.ndarray, fwd_m: np.ndarray, fwd_s: np.ndarray, bwd_m: np.ndarray,
           bwd_s: np.ndarray, lik_m: np.ndarray, lik_s: np.ndarray, item_m: np.ndarray,
           item_s: np.ndarray, need: np.ndarray, dirty: np.ndarray, fresh: np.ndarray,
           visited: np.ndarray, touched: np.ndarray, mu: float, sigma: float, beta: float,
           gamma: float, p_draw: float, tol: float, rows: np.ndarray, work: np.ndarray,
           old: np.ndarray, chg: np.ndarray, seen: np.ndarray, lik0: np.ndarray,
           flag: np.ndarray) -> int:
    """Visit batch ``j`` (:func:`ttt_update`): take the messages its slots are flagged
    for, recompute its games that need it, flag the neighbours whose messages moved.
    Returns the change of the count of flagged batches."""
    dpend = -1
    dirty[j] = 0
    b0, b1 = batch_slots[j], batch_slots[j + 1]
    for s in range(b0, b1):
        i = s - b0
        visited[s] = True
        old[0, i], old[1, i] = _outgoing(fwd_m[s], fwd_s[s], lik_m[s], lik_s[s], flag)
        old[2, i], old[3, i] = _outgoing(lik_m[s], lik_s[s], bwd_m[s], bwd_s[s], flag)
        f0, f1, k0, k1 = fwd_m[s], fwd_s[s], bwd_m[s], bwd_s[s]
        p = prev_slot[s]
        if need[s] & NEED_FWD == 0:
            pass
        elif p < 0:
            fwd_m[s], fwd_s[s] = mu, sigma
        else:
            m, sd = _outgoing(fwd_m[p], fwd_s[p], lik_m[p], lik_s[p], flag)
            fwd_m[s], fwd_s[s] = m, math.sqrt(sd ** 2 + elapsed[s] * gamma ** 2)
        n = next_slot[s]
        if need[s] & NEED_BWD == 0:
            pass
        elif n < 0:
            bwd_m[s], bwd_s[s] = 0.0, INF
        else:
            m, sd = _outgoing(lik_m[n], lik_s[n], bwd_m[n], bwd_s[n], flag)
            bwd_m[s], bwd_s[s] = m, math.sqrt(sd ** 2 + elapsed[n] * gamma ** 2)
        need[s] = 0
        chg[i] = (_moved(f0, f1, fwd_m[s], fwd_s[s], tol)
                  or _moved(k0, k1, bwd_m[s], bwd_s[s], tol))
        seen[i] = False
    again = False
    for c in range(batch_contests[j], batch_contests[j + 1]):
        r0, r1 = team_rows[contest_teams[c]], team_rows[contest_teams[c + 1]]
        run = fresh[c] != 0
        for r in range(r0, r1):
            run = run or chg[slot[r] - b0]
        if run:
            fresh[c] = 0
            for r in range(r0, r1):
                i = slot[r] - b0
                lik0[0, i], lik0[1, i] = lik_m[slot[r]], lik_s[slot[r]]
            game_sweep(c, contest_teams, team_rows, team_place, weight, slot, beta, p_draw,
                       fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m, item_s, rows, work,
                       flag)
        for r in range(r0, r1):
            s = slot[r]
            i = s - b0
            if run:
                touched[slot_agent[s]] = True
                if _moved(lik0[0, i], lik0[1, i], lik_m[s], lik_s[s], tol):
                    chg[i] = True
                    again = again or seen[i]
            seen[i] = True
    if again:
        dirty[j] = 1
        dpend += 1
    for s in range(b0, b1):
        i = s - b0
        if chg[i]:
            touched[slot_agent[s]] = True
        n = next_slot[s]
        if n >= 0:
            m, sd = _outgoing(fwd_m[s], fwd_s[s], lik_m[s], lik_s[s], flag)
            if _moved(old[0, i], old[1, i], m, sd, tol):
                need[n] |= NEED_FWD
                if dirty[slot_batch[n]] == 0:
                    dirty[slot_batch[n]] = 1
                    dpend += 1
        p = prev_slot[s]
        if p >= 0:
            m, sd = _outgoing(lik_m[s], lik_s[s], bwd_m[s], bwd_s[s], flag)
            if _moved(old[2, i], old[3, i], m, sd, tol):
                need[p] |= NEED_BWD
                if dirty[slot_batch[p]] == 0:
                    dirty[slot_batch[p]] = 1
                    dpend += 1
    return dpend


@nb.njit(cache=True)
def ttt_update(batch_contests: np.ndarray, batch_slots: np.ndarray, slot_batch: np.ndarray,
               slot_agent: np.ndarray, prev_slot: np.ndarray, next_slot: np.ndarray,
               elapsed: np.ndarray, contest_teams: np.ndarray, team_rows: np.ndarray,
               team_place: np.ndarray, weight: np.ndarray, slot: np.ndarray,
               n_agents: int, fwd_m: np.ndarray, fwd_s: np.ndarray, bwd_m: np.ndarray,
               bwd_s: np.ndarray, lik_m: np.ndarray, lik_s: np.ndarray, item_m: np.ndarray,
               item_s: np.ndarray, need: np.ndarray, dirty: np.ndarray,
               fresh: np.ndarray, post_m: np.ndarray, post_s: np.ndarray, mu: float,
               sigma: float, beta: float, gamma: float, p_draw: float, tol: float,
               max_sweeps: int):
    """A bounded incremental update of TrueSkill Through Time ([Dangauthier2007], Sec. 3)
    from the messages of an earlier fit, in place.

    First the batches of the new games (``fresh``) but the last are filtered forward in
    time order, as the full run's first pass does (a new game's members take their
    forward messages before it is played; the last batch is the first that the first
    backward pass visits).  Then only the batches flagged in ``dirty`` (those of the new
    games, and of the slots with a message still to take) are visited, with the full
    run's schedule restricted to them: each sweep is a backward pass (last batch to
    first) then a forward pass over the flagged batches.  A visit (:func:`_visit`) takes
    the messages each slot is flagged for in ``need`` (``NEED_FWD``: the forward message
    from its player's previous slot, ``fwd * lik`` widened by ``elapsed * gamma^2``,
    Eq. 5, or the prior ``N(mu, sigma^2)`` for a first slot; ``NEED_BWD``: the backward
    message from the next one), so that only the change a new game causes spreads (not
    what an unconverged earlier fit left), and updates the batch's games in order
    (``game_sweep``) -- only the games flagged in ``fresh`` (the new ones) or with a
    member whose messages moved by more than ``tol`` (from its neighbours, or from an
    earlier game of the batch); a game that moves the likelihood of a slot with an
    earlier game in the batch by more than ``tol`` flags the batch again.  Then it
    flags the player's previous (next) slot and its batch when the slot's backward
    (forward) message moved by more than ``tol``: a change spreads along a player's
    time-line, and through the games to the opponents, only where it exceeds ``tol``.
    At most ``max_sweeps`` sweeps; the fixed point is the full run's.  What is left
    when they run out stays in ``need`` for the next update.

    ``prev_slot``, ``next_slot``: each slot's neighbours on its player's time-line (-1
    for none); ``elapsed``: days since the previous slot.  ``post_m, post_s``: the
    earlier fit's posteriors (anything for the new slots); those of the slots of the
    visited batches are recomputed in place, the others kept (their messages did not
    change).

    Returns ``(sweeps, settled, touched, visits, flag)``: the sweeps done, whether no
    batch is left flagged, how many players had a game recomputed or a message
    changed, and the batch visits made.
    """
    n_b = batch_slots.size - 1
    n_s = slot_agent.size
    flag = np.zeros(1, dtype=np.int64)
    max_rows, max_teams, max_slots = 1, 2, 1
    for b in range(n_b):
        max_slots = max(max_slots, batch_slots[b + 1] - batch_slots[b])
    for c in range(contest_teams.size - 1):
        max_teams = max(max_teams, contest_teams[c + 1] - contest_teams[c])
        max_rows = max(max_rows, team_rows[contest_teams[c + 1]] - team_rows[contest_teams[c]])
    rows = np.empty((4, max_rows))
    work = np.empty((WORK_ROWS, max_teams))
    old = np.empty((4, max_slots))
    chg = np.zeros(max_slots, dtype=np.bool_)
    seen = np.zeros(max_slots, dtype=np.bool_)
    lik0 = np.empty((2, max_slots))
    touched = np.zeros(n_agents, dtype=np.bool_)
    visited = np.zeros(n_s, dtype=np.bool_)
    pending = 0
    for b in range(n_b):
        pending += dirty[b] != 0
    visits = 0
    # the new games' forward filter, in time order, up to the last batch
    for j in range(n_b - 1):
        is_new = False
        for c in range(batch_contests[j], batch_contests[j + 1]):
            is_new = is_new or fresh[c] != 0
        if is_new and dirty[j] != 0:
            pending += _visit(j, batch_contests, batch_slots, slot_batch, slot_agent,
                              prev_slot, next_slot, elapsed, contest_teams, team_rows,
                              team_place, weight, slot, fwd_m, fwd_s, bwd_m, bwd_s, lik_m,
                              lik_s, item_m, item_s, need, dirty, fresh, visited, touched,
                              mu, sigma, beta, gamma, p_draw, tol, rows, work, old, chg,
                              seen, lik0, flag)
            visits += 1
    sweeps = 0
    while pending > 0 and sweeps < max_sweeps:
        for direction in range(2):
            for k in range(n_b):
                j = n_b - 1 - k if direction == 0 else k
                if dirty[j] == 0:
                    continue
                pending += _visit(j, batch_contests, batch_slots, slot_batch, slot_agent,
                                  prev_slot, next_slot, elapsed, contest_teams, team_rows,
                                  team_place, weight, slot, fwd_m, fwd_s, bwd_m, bwd_s, lik_m,
                                  lik_s, item_m, item_s, need, dirty, fresh, visited,
                                  touched, mu, sigma, beta, gamma, p_draw, tol, rows, work,
                                  old, chg, seen, lik0, flag)
                visits += 1
        sweeps += 1
    for s in range(n_s):
        if visited[s]:
            post_m[s], post_s[s] = posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s,
                                             flag)
    n_touched = 0
    for a in range(n_agents):
        n_touched += touched[a]
    return sweeps, pending == 0, n_touched, visits, flag[0]
