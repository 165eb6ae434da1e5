"""Numba kernels of Whole-History Rating's bounded incremental update (see
:func:`podium.history.whr.whr_update`) and of the slot layout it shares with the full
solve.

The update steps days, not careers: a Newton step ([Coulom2008], Sec. 3.3) on a window
of a player's days around the days that need it, the player's other days held fixed,
the window widened only while its edge days move by more than the update's tolerance.
Its work is therefore proportional to the days a new contest changes, not to the
careers of the players it touches.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.history._whr_kernels import (
    MAX_LOG_STEP,
    chain_variances,
    newton_days,
    refresh_snapshot,
    sweep_scratch,
    team_strength,
    window_terms,
)

#: The days on each side of the days that need a step which the first window takes.
PAD = 4
#: Two days that need a step at most this many days apart share a window.
GAP = 2 * PAD
#: A window's variances are taken over the window padded by this many days on each
#: side at first, the padding doubled until they agree with the previous padding's
#: to this relative accuracy (or the padding reaches the career's ends); stepped days
#: at most ``2 * VAR_PAD`` apart share one window.
VAR_PAD = 8
VAR_RTOL = 1e-8


@nb.njit(cache=True)
def player_layout(row_contest: np.ndarray, contest_time: np.ndarray, player: np.ndarray,
                  n_players: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                           np.ndarray, np.ndarray]:
    """The slots (player, day) of a history, by player then time, in one pass over the
    rows (a counting sort by player; a player's rows are in time order already).

    ``contest_time``: per contest, the index of its distinct time.  Returns
    ``(slot_player, slot_time_index, player_slots, row_slot, rows, slot_rows)``:
    ``rows`` the rows by slot (stable), slot ``s`` holding
    ``rows[slot_rows[s]:slot_rows[s + 1]]``."""
    n_r = player.size
    n_p = max(n_players, 1)
    offsets = np.zeros(n_p + 1, dtype=np.int64)
    for i in range(n_r):
        offsets[player[i] + 1] += 1
    for p in range(n_p):
        offsets[p + 1] += offsets[p]
    fill = offsets[:-1].copy()
    rows = np.empty(n_r, dtype=np.int64)
    for i in range(n_r):
        rows[fill[player[i]]] = i
        fill[player[i]] += 1
    row_slot = np.empty(n_r, dtype=np.int64)
    slot_player = np.empty(n_r, dtype=np.int64)
    slot_time = np.empty(n_r, dtype=np.int64)
    slot_rows = np.empty(n_r + 1, dtype=np.int64)
    player_slots = np.zeros(n_players + 1, dtype=np.int64)
    n_s = 0
    for p in range(n_players):
        last = -1
        for j in range(offsets[p], offsets[p + 1]):
            t = contest_time[row_contest[rows[j]]]
            if t != last:
                slot_player[n_s] = p
                slot_time[n_s] = t
                slot_rows[n_s] = j
                n_s += 1
                last = t
            row_slot[rows[j]] = n_s - 1
        player_slots[p + 1] = n_s
    slot_rows[n_s] = n_r
    return (slot_player[:n_s].copy(), slot_time[:n_s].copy(), player_slots, row_slot, rows,
            slot_rows[:n_s + 1].copy())


@nb.njit(cache=True)
def _refresh_rounds(lo: int, hi: int, slot_rows: np.ndarray, rows: np.ndarray,
                    row_contest: np.ndarray, contest_teams: np.ndarray, team_rows: np.ndarray,
                    team_place: np.ndarray, weight: np.ndarray, row_slot: np.ndarray,
                    r: np.ndarray, snap_q: np.ndarray, snap_s1: np.ndarray,
                    snap_s2: np.ndarray, stamp: np.ndarray, mark: int) -> None:
    """The stage sums of the rounds of more than ``SNAPSHOT_TEAMS`` teams of the days
    ``lo .. hi - 1`` at ``r``, each round once per ``mark`` (``stamp``: per contest,
    the last mark)."""
    for k in range(slot_rows[lo], slot_rows[hi]):
        c = row_contest[rows[k]]
        if stamp[c] != mark:
            stamp[c] = mark
            refresh_snapshot(c, contest_teams, team_rows, team_place, weight, row_slot, r,
                             snap_q, snap_s1, snap_s2)


@nb.njit(cache=True)
def _round_u(c: int, contest_teams: np.ndarray, team_rows: np.ndarray, weight: np.ndarray,
             row_slot: np.ndarray, r: np.ndarray, q: np.ndarray) -> float:
    """``u = sqrt(S O) / (S + O)`` of contest ``c`` when it is a round of two teams of
    strengths ``S, O`` (0 otherwise): its draw probability is ``T / Z = nu u / (1 + nu
    u)`` in Davidson's model."""
    if contest_teams[c + 1] - contest_teams[c] != 2:
        return 0.0
    team_strength(c, contest_teams, team_rows, weight, row_slot, r, q)
    top = max(q[0], q[1])
    s = math.exp(q[0] - top)
    o = math.exp(q[1] - top)
    return math.sqrt(s * o) / (s + o)


@nb.njit(cache=True)
def _nu_step(u: np.ndarray, contest_teams: np.ndarray, team_place: np.ndarray, nu: float,
             damping: float) -> float:
    """One Newton step on ``log nu`` (``_whr_kernels.nu_terms``' gradient
    ``sum (draw - T/Z)`` and Hessian ``-sum (T/Z)(1 - T/Z)`` over the two-team rounds,
    ``-damping``), from each round's ``u`` (:func:`_round_u`); returns the new ``nu``."""
    g, h = 0.0, 0.0
    for c in range(u.size):
        t0 = contest_teams[c]
        if contest_teams[c + 1] - t0 != 2:
            continue
        x = nu * u[c]
        ratio = x / (1.0 + x)
        g += (1.0 if team_place[t0] == team_place[t0 + 1] else 0.0) - ratio
        h -= ratio * (1.0 - ratio)
    h -= damping
    if h != 0.0:
        step = -g / h
        if math.isfinite(step):
            nu = math.exp(math.log(nu) + max(-MAX_LOG_STEP, min(MAX_LOG_STEP, step)))
    return nu


@nb.njit(cache=True, error_model="numpy")
def _window_variances(a: int, b: int, lo: int, hi: int, slot_time: np.ndarray,
                      slot_rows: np.ndarray, rows: np.ndarray, row_contest: np.ndarray,
                      row_team: np.ndarray, contest_teams: np.ndarray,
                      team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
                      row_slot: np.ndarray, r: np.ndarray, nu: float, w2: float, k: float,
                      damping: float, snap_q: np.ndarray, snap_s1: np.ndarray,
                      snap_s2: np.ndarray, stamp: np.ndarray, mark: int, q: np.ndarray,
                      s1: np.ndarray, s2: np.ndarray, g: np.ndarray, h: np.ndarray,
                      work: np.ndarray, tmp: np.ndarray, keep: np.ndarray,
                      variance: np.ndarray) -> None:
    """The variances of the days ``lo .. hi - 1`` of the player of slots ``a .. b - 1``
    (the damped Hessian's, as ``_whr_kernels.variances``), into ``variance``: the
    chain of the days padded by ``VAR_PAD`` on each side, the padding doubled until
    two paddings agree to ``VAR_RTOL`` or it reaches the career's ends (the whole
    career once fewer of its days are left outside than inside).  ``tmp``,
    ``keep``: scratch (``tmp`` per slot)."""
    pad = VAR_PAD
    first = True
    while True:
        lo2, hi2 = max(a, lo - pad), min(b, hi + pad)
        if (lo2 - a) + (b - hi2) < hi2 - lo2:
            lo2, hi2 = a, b  # less is left outside than inside: the whole career
        _refresh_rounds(lo2, hi2, slot_rows, rows, row_contest, contest_teams, team_rows,
                        team_place, weight, row_slot, r, snap_q, snap_s1, snap_s2, stamp,
                        mark)
        window_terms(lo2, hi2, slot_rows, rows, row_contest, row_team, contest_teams,
                     team_rows, team_place, weight, row_slot, r, nu, snap_q, snap_s1,
                     snap_s2, q, s1, s2, g, h)
        chain_variances(a, b, lo2, hi2, slot_time, r, h, w2, k, damping, work, tmp)
        if lo2 == a and hi2 == b:
            break
        if not first:
            worst = 0.0
            for t in range(lo, hi):
                worst = max(worst, abs(tmp[t] - keep[t - lo]) / abs(tmp[t]))
            if worst <= VAR_RTOL:
                break
        first = False
        for t in range(lo, hi):
            keep[t - lo] = tmp[t]
        pad *= 2
    for t in range(lo, hi):
        variance[t] = tmp[t]


@nb.njit(cache=True)
def whr_update(player_slots: np.ndarray, slot_player: np.ndarray, slot_time: np.ndarray,
               slot_rows: np.ndarray, rows: np.ndarray, row_contest: np.ndarray,
               row_team: np.ndarray, contest_teams: np.ndarray, team_rows: np.ndarray,
               team_place: np.ndarray, weight: np.ndarray, row_slot: np.ndarray,
               contest_rows: np.ndarray, r: np.ndarray, variance: np.ndarray, nu: float,
               nu_swept: float, fit_nu: bool, w2: float, k: float, damping: float,
               tol: float, nu_tol: float, max_sweeps: int, mark: np.ndarray):
    """A bounded incremental update of the maximum a posteriori ([Coulom2008], Sec. 3.3)
    from an earlier fit's ratings ``r``, in place.

    ``mark``: per slot, the days that need a step (at first the new contest's).  Each
    sweep takes, for every player with marked days (in player order), one Newton step
    on a *window* of its days around each group of marked days (days at most ``GAP``
    apart share one; the window pads them by ``PAD`` days), its other days held fixed
    (``newton_days``).  When a window's first (last) day moves by more than ``tol``
    (natural units) and the career goes on before (after) it, the step is taken again
    on the window widened by its own length on that side: the window grows until the
    change at its edges is below ``tol``.  Then one Newton step on ``log nu`` when
    ``fit_nu``.  A day that moved by more than ``tol`` is marked for the next sweep with
    the days of every participant of its rounds: a change spreads along a career and to
    the opponents only where it exceeds ``tol``.  ``nu_swept`` is the draw tendency at
    which every day last took a step: when ``log nu`` has moved from it by more than
    ``nu_tol`` (over any number of updates), every day is marked and ``nu_swept`` becomes
    ``nu``.  At most ``max_sweeps`` sweeps; the fixed point is ``whr_run``'s.  The
    variances of the days stepped are recomputed into ``variance`` (with ``damping``,
    :func:`_window_variances`); the other days keep theirs.

    Returns ``(nu, nu_swept, sweeps, settled, touched, days, flag)``: whether no day is
    left marked, how many players took a step, and the days stepped (the sum of the
    windows' lengths, the widened ones counted again).
    """
    n_p = player_slots.size - 1
    n_s = slot_player.size
    g, h, work, q, s1, s2, snap_q, snap_s1, snap_s2 = sweep_scratch(
        player_slots, contest_teams, team_place.size)
    before = np.zeros(g.size)
    stamp = np.zeros(contest_teams.size - 1, dtype=np.int64)
    touched = np.zeros(n_p, dtype=np.bool_)
    pmark = np.zeros(n_p, dtype=np.bool_)
    nxt = np.zeros(n_s, dtype=np.bool_)
    stepped = np.zeros(n_s, dtype=np.bool_)
    flag = np.zeros(1, dtype=np.int64)
    pending = 0
    for s in range(n_s):
        if mark[s]:
            pmark[slot_player[s]] = True
            pending += 1
    n_c = contest_teams.size - 1
    u = np.zeros(n_c)
    if fit_nu:
        for c in range(n_c):
            u[c] = _round_u(c, contest_teams, team_rows, weight, row_slot, r, q)
    sweeps = 0
    days = 0
    while pending > 0 and sweeps < max_sweeps and flag[0] == 0:
        sweeps += 1
        nxt[:] = False
        for p in range(n_p):
            if not pmark[p]:
                continue
            a, b = player_slots[p], player_slots[p + 1]
            d = a
            while d < b:
                if not mark[d]:
                    d += 1
                    continue
                # a group of marked days, and the window around it
                end = d + 1
                e = d + 1
                while e < b and e - end < GAP:
                    if mark[e]:
                        end = e + 1
                    e += 1
                lo, hi = max(a, d - PAD), min(b, end + PAD)
                while True:
                    _refresh_rounds(lo, hi, slot_rows, rows, row_contest, contest_teams,
                                    team_rows, team_place, weight, row_slot, r, snap_q,
                                    snap_s1, snap_s2, stamp, sweeps)
                    for t in range(lo, hi):
                        before[t - lo] = r[t]
                    window_terms(lo, hi, slot_rows, rows, row_contest, row_team,
                                 contest_teams, team_rows, team_place, weight, row_slot, r,
                                 nu, snap_q, snap_s1, snap_s2, q, s1, s2, g, h)
                    newton_days(a, b, lo, hi, slot_time, r, g, h, w2, k, 0.0, work, flag)
                    days += hi - lo
                    n = hi - lo
                    lo2 = max(a, lo - n) if lo > a and abs(r[lo] - before[0]) > tol else lo
                    hi2 = (min(b, hi + n) if hi < b and abs(r[hi - 1] - before[n - 1]) > tol
                           else hi)
                    if (lo2 == lo and hi2 == hi) or flag[0] != 0:
                        break
                    for t in range(lo, hi):
                        r[t] = before[t - lo]
                    lo, hi = lo2, hi2
                touched[p] = True
                for t in range(lo, hi):
                    stepped[t] = True
                    if fit_nu:
                        for kk in range(slot_rows[t], slot_rows[t + 1]):
                            c = row_contest[rows[kk]]
                            u[c] = _round_u(c, contest_teams, team_rows, weight, row_slot,
                                            r, q)
                    if not abs(r[t] - before[t - lo]) > tol:
                        continue
                    nxt[t] = True
                    for kk in range(slot_rows[t], slot_rows[t + 1]):
                        c = row_contest[rows[kk]]
                        for q_row in range(contest_rows[c], contest_rows[c + 1]):
                            nxt[row_slot[q_row]] = True
                d = max(e, hi)
        if fit_nu:
            nu = _nu_step(u, contest_teams, team_place, nu, damping)
            if abs(math.log(nu) - math.log(nu_swept)) > nu_tol:
                nxt[:] = True
                nu_swept = nu
        pending = 0
        pmark[:] = False
        for s in range(n_s):
            mark[s] = nxt[s]
            if nxt[s]:
                pmark[slot_player[s]] = True
                pending += 1
    # the variances of the days stepped, their rounds' stage sums at the final r
    tmp = np.zeros(n_s)
    keep = np.zeros(g.size)
    var_work = np.zeros((6, g.size))
    n_touched = 0
    for p in range(n_p):
        if not touched[p]:
            continue
        n_touched += 1
        a, b = player_slots[p], player_slots[p + 1]
        d = a
        while d < b:
            if not stepped[d]:
                d += 1
                continue
            end = d + 1
            e = d + 1
            while e < b and e - end < 2 * VAR_PAD:
                if stepped[e]:
                    end = e + 1
                e += 1
            _window_variances(a, b, d, end, slot_time, slot_rows, rows, row_contest,
                              row_team, contest_teams, team_rows, team_place, weight,
                              row_slot, r, nu, w2, k, damping, snap_q, snap_s1, snap_s2,
                              stamp, max_sweeps + 1, q, s1, s2, g, h, var_work, tmp, keep,
                              variance)
            d = end
    return nu, nu_swept, sweeps, pending == 0, n_touched, days, flag[0]
