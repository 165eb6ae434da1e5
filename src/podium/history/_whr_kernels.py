"""Numba kernels of Whole-History Rating (see :mod:`podium.history.whr`).

Ratings are natural ``r = ln(gamma)`` per (player, day) *slot*; a player's slots are
contiguous and in time order.  Each sweep is Coulom's ([Coulom2008], Sec. 3.3): every
player in turn takes one Newton step on all its days at once (the Hessian is
tridiagonal), the others held fixed; then one Newton step on the draw tendency
``log nu``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

#: A round of more teams than this takes its stage sums (Plackett-Luce) from the
#: start of the sweep instead of recomputing them at every member's step.
SNAPSHOT_TEAMS = 16
#: Trust region of a Newton step on ``log nu`` (the package's
#: ``_MAX_ADVANTAGE_LOG_STEP``).
MAX_LOG_STEP = 10.0
#: The largest change of one rating in one Newton step (natural units, ~174 Elo): a
#: step beyond it is shortened (its direction kept), so that a player far from its
#: optimum, where the likelihood is flat, does not overshoot.
MAX_STEP = 1.0
#: Kernel status flags.
FLAG_SINGULAR = 1
FLAG_NONFINITE = 2


@nb.njit(cache=True)
def team_strength(c: int, contest_teams: np.ndarray, team_rows: np.ndarray,
                  weight: np.ndarray, row_slot: np.ndarray, r: np.ndarray,
                  out: np.ndarray) -> None:
    """``out[k] = sum_i w_i r_i`` over the members of contest ``c``'s team ``k``: a
    team's log-strength (the generalised Bradley-Terry model of teams, [Hunter2004])."""
    t0 = contest_teams[c]
    for t in range(t0, contest_teams[c + 1]):
        s = 0.0
        for q in range(team_rows[t], team_rows[t + 1]):
            s += weight[q] * r[row_slot[q]]
        out[t - t0] = s


@nb.njit(cache=True)
def stage_sums(place: np.ndarray, q: np.ndarray, n: int, inv_s: np.ndarray,
               inv_s2: np.ndarray) -> None:
    """Prefix sums over the Plackett-Luce stages of a ranking of ``n`` teams with
    log-strengths ``q`` (best first; tied teams, same ``place``, form one stage).

    Stage ``g`` chooses its teams from the teams not yet placed, ``S_g = sum of their
    gamma``; with Breslow's treatment of a tie of ``m_g`` teams its factor is
    ``prod_{t in g} gamma_t / S_g^{m_g}``.  ``inv_s[k]`` / ``inv_s2[k]`` hold
    ``sum_{g <= stage of k} m_g / S_g`` and ``m_g / S_g^2`` for team ``k``.  Strengths
    are taken relative to the largest (``exp(q - max q)``), which cancels in every
    derivative.
    """
    top = q[0]
    for k in range(n):
        top = max(top, q[k])
    acc = 0.0
    for k in range(n - 1, -1, -1):
        acc += math.exp(q[k] - top)
        inv_s[k] = acc  # suffix sum, read below at each stage's first team
    a1, a2 = 0.0, 0.0
    k = 0
    while k < n:
        e = k
        while e + 1 < n and place[e + 1] == place[k]:
            e += 1
        m = e - k + 1
        s_g = inv_s[k]
        a1 += m / s_g
        a2 += m / (s_g * s_g)
        for j in range(k, e + 1):
            inv_s[j] = a1
            inv_s2[j] = a2
        k = e + 1
    # back to absolute units: the terms are gamma_t * inv_s, gamma_t^2 * inv_s2
    scale = math.exp(-top)
    for k in range(n):
        inv_s[k] *= scale
        inv_s2[k] *= scale * scale


@nb.njit(cache=True, inline="always")
def davidson(s_q: float, o_q: float, outcome: float, nu: float) -> tuple[float, float]:
    """Gradient and Hessian in ``r`` of ``log P(outcome)`` for strengths ``S = e^s_q``,
    ``O = e^o_q``: Bradley-Terry for ``nu = 0``, else Davidson's model with ``T = nu
    sqrt(S O)``: ``P(win) = S/Z``, ``P(draw) = T/Z``, ``Z = S + O + T``.  ``outcome``: 1
    win, 0 loss, 0.5 draw."""
    # divide through by max(S, O) (cancels in every ratio)
    top = max(s_q, o_q)
    s = math.exp(s_q - top)
    o = math.exp(o_q - top)
    t = nu * math.sqrt(s * o) if nu > 0.0 else 0.0
    z = s + o + t
    n1 = s + t / 2.0
    n2 = s + t / 4.0
    ratio = n1 / z
    return outcome - ratio, ratio * ratio - n2 / z


@nb.njit(cache=True)
def row_derivatives(row: int, c: int, t_row: int, contest_teams: np.ndarray,
                    team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
                    row_slot: np.ndarray, r: np.ndarray, nu: float, snap_q: np.ndarray,
                    snap_s1: np.ndarray, snap_s2: np.ndarray, q: np.ndarray,
                    s1: np.ndarray, s2: np.ndarray) -> tuple[float, float]:
    """Gradient and Hessian of contest ``c``'s log-likelihood in the rating of ``row``
    (a member of team ``t_row``), at the current ratings ``r``.  Nothing here divides
    by zero: every strength is relative to the round's strongest team.

    Two teams: Bradley-Terry / Davidson on the teams' log-strengths (the package's
    model of a game).  More teams: Plackett-Luce with Breslow ties ([Hunter2004]); a
    round of more than ``SNAPSHOT_TEAMS`` teams reads its stage sums from the snapshot
    of the sweep's start (``snap_*``, indexed by team), its own team at the current
    ratings.
    """
    t0, t1 = contest_teams[c], contest_teams[c + 1]
    n = t1 - t0
    w = weight[row]
    k = t_row - t0
    if n == 2:
        team_strength(c, contest_teams, team_rows, weight, row_slot, r, q)
        place0, place1 = team_place[t0], team_place[t0 + 1]
        if place0 == place1:
            if nu <= 0.0:
                return 0.0, 0.0  # a draw carries nothing when draws are impossible
            outcome = 0.5
        else:
            outcome = 1.0 if k == 0 else 0.0
        g, h = davidson(q[k], q[1 - k], outcome, nu)
        return w * g, w * w * h
    if n > SNAPSHOT_TEAMS:
        own = 0.0
        for qq in range(team_rows[t_row], team_rows[t_row + 1]):
            own += weight[qq] * r[row_slot[qq]]
        # gradient at the team's current strength, curvature at the snapshot's (so
        # that it stays negative: gamma <= S_g holds within the snapshot)
        g = 1.0 - math.exp(own) * snap_s1[t_row]
        gam = math.exp(snap_q[t_row])
        h = -gam * snap_s1[t_row] + gam * gam * snap_s2[t_row]
        return w * g, w * w * h
    team_strength(c, contest_teams, team_rows, weight, row_slot, r, q)
    stage_sums(team_place[t0:t1], q, n, s1, s2)
    gam = math.exp(q[k])
    g = 1.0 - gam * s1[k]
    h = -gam * s1[k] + gam * gam * s2[k]
    return w * g, w * w * h


@nb.njit(cache=True)
def refresh_snapshots(contest_teams: np.ndarray, team_rows: np.ndarray,
                      team_place: np.ndarray, weight: np.ndarray, row_slot: np.ndarray,
                      r: np.ndarray, snap_q: np.ndarray, snap_s1: np.ndarray,
                      snap_s2: np.ndarray) -> None:
    """Stage sums of every round of more than ``SNAPSHOT_TEAMS`` teams, at ``r``."""
    for c in range(contest_teams.size - 1):
        refresh_snapshot(c, contest_teams, team_rows, team_place, weight, row_slot, r,
                         snap_q, snap_s1, snap_s2)


@nb.njit(cache=True)
def refresh_snapshot(c: int, contest_teams: np.ndarray, team_rows: np.ndarray,
                     team_place: np.ndarray, weight: np.ndarray, row_slot: np.ndarray,
                     r: np.ndarray, snap_q: np.ndarray, snap_s1: np.ndarray,
                     snap_s2: np.ndarray) -> None:
    """Stage sums of contest ``c`` at ``r`` when it has more than ``SNAPSHOT_TEAMS``
    teams (else nothing)."""
    t0, t1 = contest_teams[c], contest_teams[c + 1]
    if t1 - t0 <= SNAPSHOT_TEAMS:
        return
    team_strength(c, contest_teams, team_rows, weight, row_slot, r, snap_q[t0:t1])
    stage_sums(team_place[t0:t1], snap_q[t0:t1], t1 - t0, snap_s1[t0:t1], snap_s2[t0:t1])


@nb.njit(cache=True)
def day_terms(p: int, player_slots: np.ndarray, slot_rows: np.ndarray, rows: np.ndarray,
              row_contest: np.ndarray, row_team: np.ndarray, contest_teams: np.ndarray,
              team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
              row_slot: np.ndarray, r: np.ndarray, nu: float, snap_q: np.ndarray,
              snap_s1: np.ndarray, snap_s2: np.ndarray, q: np.ndarray, s1: np.ndarray,
              s2: np.ndarray, g: np.ndarray, h: np.ndarray) -> None:
    """The games' gradient and Hessian for each of player ``p``'s days (``g, h``
    indexed from the player's first slot)."""
    window_terms(player_slots[p], player_slots[p + 1], slot_rows, rows, row_contest,
                 row_team, contest_teams, team_rows, team_place, weight, row_slot, r, nu,
                 snap_q, snap_s1, snap_s2, q, s1, s2, g, h)


@nb.njit(cache=True)
def window_terms(lo: int, hi: int, slot_rows: np.ndarray, rows: np.ndarray,
                 row_contest: np.ndarray, row_team: np.ndarray, contest_teams: np.ndarray,
                 team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
                 row_slot: np.ndarray, r: np.ndarray, nu: float, snap_q: np.ndarray,
                 snap_s1: np.ndarray, snap_s2: np.ndarray, q: np.ndarray, s1: np.ndarray,
                 s2: np.ndarray, g: np.ndarray, h: np.ndarray) -> None:
    """The games' gradient and Hessian for each of the days (slots) ``lo .. hi - 1``
    (``g, h`` indexed from ``lo``)."""
    for d in range(lo, hi):
        gs, hs = 0.0, 0.0
        for k in range(slot_rows[d], slot_rows[d + 1]):
            row = rows[k]
            gr, hr = row_derivatives(row, row_contest[row], row_team[row], contest_teams,
                                     team_rows, team_place, weight, row_slot, r, nu, snap_q,
                                     snap_s1, snap_s2, q, s1, s2)
            gs += gr
            hs += hr
        g[d - lo] = gs
        h[d - lo] = hs


@nb.njit(cache=True, inline="always")
def anchor(r0: float, k: float) -> tuple[float, float]:
    """The first day's prior ([Coulom2008], Sec. 3.2: ``k`` virtual wins and ``k``
    virtual losses against a player of rating 0): gradient and Hessian."""
    gam = math.exp(r0)
    return k * (1.0 - 2.0 * gam / (1.0 + gam)), -2.0 * k * gam / ((1.0 + gam) ** 2)


@nb.njit(cache=True)
def newton_player(p: int, player_slots: np.ndarray, slot_time: np.ndarray, r: np.ndarray,
                  g: np.ndarray, h: np.ndarray, w2: float, k: float, damping: float,
                  work: np.ndarray, flag: np.ndarray) -> float:
    """One Newton step on all of player ``p``'s days (:func:`newton_days` on the
    player's whole slot range).  Returns the largest ``|grad|`` before the step."""
    a, b = player_slots[p], player_slots[p + 1]
    return newton_days(a, b, a, b, slot_time, r, g, h, w2, k, damping, work, flag)


@nb.njit(cache=True)
def newton_days(a: int, b: int, lo: int, hi: int, slot_time: np.ndarray, r: np.ndarray,
                g: np.ndarray, h: np.ndarray, w2: float, k: float, damping: float,
                work: np.ndarray, flag: np.ndarray) -> float:
    """One Newton step on the days ``lo .. hi - 1`` of the player whose slots are
    ``a .. b - 1`` ([Coulom2008], Sec. 3.3 and Appendix A), its other days held fixed:
    the log-posterior's gradient ``grad`` and Hessian ``H`` (games ``g, h`` indexed
    from ``lo``; the Wiener prior ``-(r_{d+1} - r_d)^2 / (2 |t_{d+1} - t_d| w2)`` of
    every link of these days, to a fixed day too; the first day's anchor when ``lo ==
    a``; ``-damping`` on the diagonal), then ``r -= H^{-1} grad`` by the tridiagonal
    LU of the Appendix, shortened to at most ``MAX_STEP`` per day.  Returns the largest
    ``|grad|`` before the step."""
    n = hi - lo
    if n <= 0:
        return 0.0
    diag, sub, grad = work[0], work[1], work[2]
    for d in range(n):
        t = lo + d
        prior_g, prior_h = 0.0, 0.0
        if t + 1 < b:
            s2 = abs(slot_time[t + 1] - slot_time[t]) * w2
            prior_g += -(r[t] - r[t + 1]) / s2
            prior_h += -1.0 / s2
            if d < n - 1:
                sub[d] = 1.0 / s2
        if t > a:
            s2 = abs(slot_time[t] - slot_time[t - 1]) * w2
            prior_g += -(r[t] - r[t - 1]) / s2
            prior_h += -1.0 / s2
        grad[d] = g[d] + prior_g
        diag[d] = h[d] + prior_h - damping
    if lo == a:
        ag, ah = anchor(r[a], k)
        grad[0] += ag
        diag[0] += ah
    norm = 0.0
    for d in range(n):
        norm = max(norm, abs(grad[d]))
    if n == 1:
        if diag[0] >= 0.0:
            flag[0] |= FLAG_SINGULAR
            return norm
        x = grad[0] / diag[0]
        if math.isfinite(x):
            r[lo] -= max(-MAX_STEP, min(MAX_STEP, x))
        else:
            flag[0] |= FLAG_NONFINITE
        return norm
    # LU of the tridiagonal Hessian (Coulom's Appendix A), then the two solves
    lu_a, lu_d, lu_b = work[3], work[4], work[5]
    lu_d[0] = diag[0]
    lu_b[0] = sub[0]
    for i in range(1, n):
        if lu_d[i - 1] == 0.0 or not math.isfinite(lu_d[i - 1]):
            flag[0] |= FLAG_SINGULAR
            return norm
        lu_a[i] = sub[i - 1] / lu_d[i - 1]
        lu_d[i] = diag[i] - lu_a[i] * lu_b[i - 1]
        if i < n - 1:
            lu_b[i] = sub[i]
    if lu_d[n - 1] == 0.0 or not math.isfinite(lu_d[n - 1]):
        flag[0] |= FLAG_SINGULAR
        return norm
    y = work[6]
    y[0] = grad[0]
    for i in range(1, n):
        y[i] = grad[i] - lu_a[i] * y[i - 1]
    x = work[7]
    x[n - 1] = y[n - 1] / lu_d[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = (y[i] - lu_b[i] * x[i + 1]) / lu_d[i]
    big = 0.0
    for i in range(n):
        if not math.isfinite(x[i]):
            flag[0] |= FLAG_NONFINITE
            return norm
        big = max(big, abs(x[i]))
    shrink = MAX_STEP / big if big > MAX_STEP else 1.0
    for i in range(n):
        r[lo + i] -= shrink * x[i]
    return norm


@nb.njit(cache=True)
def nu_terms(contest_teams: np.ndarray, team_rows: np.ndarray, team_place: np.ndarray,
             weight: np.ndarray, row_slot: np.ndarray, r: np.ndarray, nu: float,
             q: np.ndarray) -> tuple[float, float]:
    """Gradient and Hessian of the log-likelihood of the two-team rounds in ``log nu``:
    ``sum (draw - T/Z)`` and ``-sum (T/Z)(1 - T/Z)``."""
    g, h = 0.0, 0.0
    for c in range(contest_teams.size - 1):
        t0 = contest_teams[c]
        if contest_teams[c + 1] - t0 != 2:
            continue
        team_strength(c, contest_teams, team_rows, weight, row_slot, r, q)
        top = max(q[0], q[1])
        s = math.exp(q[0] - top)
        o = math.exp(q[1] - top)
        t = nu * math.sqrt(s * o)
        ratio = t / (s + o + t)
        g += (1.0 if team_place[t0] == team_place[t0 + 1] else 0.0) - ratio
        h -= ratio * (1.0 - ratio)
    return g, h


@nb.njit(cache=True)
def sweep_scratch(player_slots: np.ndarray, contest_teams: np.ndarray, n_t: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                             np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays of a sweep of Newton steps (:func:`whr_run`, :func:`whr_update`):
    ``g, h`` (one entry per day of the player with the most days), ``work`` (8 rows of
    them), ``q, s1, s2`` (one entry per team of the largest round) and the ``n_t`` teams'
    snapshots ``snap_q, snap_s1, snap_s2``."""
    max_days, max_teams = 1, 2
    for p in range(player_slots.size - 1):
        max_days = max(max_days, player_slots[p + 1] - player_slots[p])
    for c in range(contest_teams.size - 1):
        max_teams = max(max_teams, contest_teams[c + 1] - contest_teams[c])
    return (np.zeros(max_days), np.zeros(max_days), np.zeros((8, max_days)),
            np.zeros(max_teams), np.zeros(max_teams), np.zeros(max_teams),
            np.zeros(n_t), np.zeros(n_t), np.zeros(n_t))


@nb.njit(cache=True)
def whr_run(player_slots: np.ndarray, slot_time: np.ndarray, slot_rows: np.ndarray,
            rows: np.ndarray, row_contest: np.ndarray, row_team: np.ndarray,
            contest_teams: np.ndarray, team_rows: np.ndarray, team_place: np.ndarray,
            weight: np.ndarray, row_slot: np.ndarray, r: np.ndarray, nu: float,
            fit_nu: bool, w2: float, k: float, damping: float, tol: float, max_iter: int):
    """Sweeps of Newton steps (every player, then ``log nu`` when ``fit_nu``) until the
    largest gradient component (ratings and ``log nu``) is below ``tol`` or
    ``max_iter`` sweeps are done.  ``r`` is updated in place.

    Returns ``(nu, sweeps, grad_norm, flag)``.
    """
    n_p = player_slots.size - 1
    g, h, work, q, s1, s2, snap_q, snap_s1, snap_s2 = sweep_scratch(
        player_slots, contest_teams, team_place.size)
    flag = np.zeros(1, dtype=np.int64)
    sweeps = 0
    norm = math.inf
    while sweeps < max_iter:
        refresh_snapshots(contest_teams, team_rows, team_place, weight, row_slot, r, snap_q,
                          snap_s1, snap_s2)
        norm = 0.0
        for p in range(n_p):
            day_terms(p, player_slots, slot_rows, rows, row_contest, row_team, contest_teams,
                      team_rows, team_place, weight, row_slot, r, nu, snap_q, snap_s1,
                      snap_s2, q, s1, s2, g, h)
            norm = max(norm, newton_player(p, player_slots, slot_time, r, g, h, w2, k,
                                           damping, work, flag))
        if fit_nu:
            gn, hn = nu_terms(contest_teams, team_rows, team_place, weight, row_slot, r, nu,
                              q)
            norm = max(norm, abs(gn))
            hn -= damping
            if hn != 0.0:
                step = -gn / hn
                if math.isfinite(step):
                    nu = math.exp(math.log(nu) + max(-MAX_LOG_STEP, min(MAX_LOG_STEP, step)))
        sweeps += 1
        if flag[0] != 0 or norm < tol:
            break
    # the gradient at the final ratings (the sweep's norm was taken before its steps)
    refresh_snapshots(contest_teams, team_rows, team_place, weight, row_slot, r, snap_q,
                      snap_s1, snap_s2)
    final = 0.0
    for p in range(n_p):
        day_terms(p, player_slots, slot_rows, rows, row_contest, row_team, contest_teams,
                  team_rows, team_place, weight, row_slot, r, nu, snap_q, snap_s1, snap_s2,
                  q, s1, s2, g, h)
        a, b = player_slots[p], player_slots[p + 1]
        n = b - a
        for d in range(n):
            gd = g[d]
            if d < n - 1:
                gd += -(r[a + d] - r[a + d + 1]) / (abs(slot_time[a + d + 1]
                                                        - slot_time[a + d]) * w2)
            if d > 0:
                gd += -(r[a + d] - r[a + d - 1]) / (abs(slot_time[a + d]
                                                        - slot_time[a + d - 1]) * w2)
            if d == 0:
                gd += anchor(r[a], k)[0]
            final = max(final, abs(gd))
    if fit_nu:
        gn, _ = nu_terms(contest_teams, team_rows, team_place, weight, row_slot, r, nu, q)
        final = max(final, abs(gn))
    return nu, sweeps, final, flag[0]


@nb.njit(cache=True, error_model="numpy")
def variances(player_slots: np.ndarray, slot_time: np.ndarray, slot_rows: np.ndarray,
              rows: np.ndarray, row_contest: np.ndarray, row_team: np.ndarray,
              contest_teams: np.ndarray, team_rows: np.ndarray, team_place: np.ndarray,
              weight: np.ndarray, row_slot: np.ndarray, r: np.ndarray, nu: float, w2: float,
              k: float, damping: float) -> np.ndarray:
    """Each day's variance: the diagonal of ``(-H)^{-1}`` for the player's (damped)
    tridiagonal Hessian at ``r``, by the forward-backward recursion of [Coulom2008],
    Appendix B (as the package computes its ``uncertainty``); NaN or infinite where
    a pivot vanishes."""
    n_p = player_slots.size - 1
    n_t = team_place.size
    out = np.empty(r.size)
    snap_q = np.zeros(n_t)
    snap_s1 = np.zeros(n_t)
    snap_s2 = np.zeros(n_t)
    refresh_snapshots(contest_teams, team_rows, team_place, weight, row_slot, r, snap_q,
                      snap_s1, snap_s2)
    variances_of(np.arange(n_p), player_slots, slot_time, slot_rows, rows, row_contest,
                 row_team, contest_teams, team_rows, team_place, weight, row_slot, r, nu, w2,
                 k, damping, snap_q, snap_s1, snap_s2, out)
    return out


@nb.njit(cache=True, error_model="numpy")
def variances_of(players: np.ndarray, player_slots: np.ndarray, slot_time: np.ndarray,
                 slot_rows: np.ndarray, rows: np.ndarray, row_contest: np.ndarray,
                 row_team: np.ndarray, contest_teams: np.ndarray, team_rows: np.ndarray,
                 team_place: np.ndarray, weight: np.ndarray, row_slot: np.ndarray,
                 r: np.ndarray, nu: float, w2: float, k: float, damping: float,
                 snap_q: np.ndarray, snap_s1: np.ndarray, snap_s2: np.ndarray,
                 out: np.ndarray) -> None:
    """:func:`variances` of the days of ``players`` only, into ``out`` (the stage sums
    of their rounds of more than ``SNAPSHOT_TEAMS`` teams in ``snap_*``, at ``r``)."""
    max_days, max_teams = 1, 2
    for p in players:
        max_days = max(max_days, player_slots[p + 1] - player_slots[p])
    for c in range(contest_teams.size - 1):
        max_teams = max(max_teams, contest_teams[c + 1] - contest_teams[c])
    g = np.zeros(max_days)
    h = np.zeros(max_days)
    q = np.zeros(max_teams)
    s1 = np.zeros(max_teams)
    s2 = np.zeros(max_teams)
    work = np.zeros((6, max_days))
    for p in players:
        day_terms(p, player_slots, slot_rows, rows, row_contest, row_team, contest_teams,
                  team_rows, team_place, weight, row_slot, r, nu, snap_q, snap_s1, snap_s2,
                  q, s1, s2, g, h)
        a, b = player_slots[p], player_slots[p + 1]
        chain_variances(a, b, a, b, slot_time, r, h, w2, k, damping, work, out)


@nb.njit(cache=True, error_model="numpy")
def chain_variances(a: int, b: int, lo: int, hi: int, slot_time: np.ndarray, r: np.ndarray,
                    h: np.ndarray, w2: float, k: float, damping: float, work: np.ndarray,
                    out: np.ndarray) -> None:
    """The variances of the days ``lo .. hi - 1`` of the player whose slots are
    ``a .. b - 1``, into ``out[lo:hi]``: the diagonal of ``(-H)^{-1}`` for the (damped)
    tridiagonal Hessian of these days, the others held fixed (their links to these
    days stay on the diagonal; all of them when ``lo, hi`` are ``a, b``), by the
    forward-backward recursion of [Coulom2008], Appendix B.  ``h``: the games' Hessian
    indexed from ``lo``; ``work``: 6 rows of scratch."""
    n = hi - lo
    if n <= 0:
        return
    diag, sub, d_, b_, dp, bp = work[0], work[1], work[2], work[3], work[4], work[5]
    for i in range(n):
        t = lo + i
        prior = 0.0
        if t + 1 < b:
            s2v = abs(slot_time[t + 1] - slot_time[t]) * w2
            prior -= 1.0 / s2v
            if i < n - 1:
                sub[i] = 1.0 / s2v
        if t > a:
            prior -= 1.0 / (abs(slot_time[t] - slot_time[t - 1]) * w2)
        diag[i] = h[i] + prior - damping
    if lo == a:
        diag[0] += anchor(r[a], k)[1]
    if n == 1:
        out[lo] = -1.0 / diag[0]
        return
    d_[0] = diag[0]
    b_[0] = sub[0]
    for i in range(1, n):
        ai = sub[i - 1] / d_[i - 1]
        d_[i] = diag[i] - ai * b_[i - 1]
        if i < n - 1:
            b_[i] = sub[i]
    dp[n - 1] = diag[n - 1]
    bp[n - 1] = sub[n - 2]
    for i in range(n - 2, -1, -1):
        api = sub[i] / dp[i + 1]
        dp[i] = diag[i] - api * bp[i + 1]
        if i > 0:
            bp[i] = sub[i - 1]
    for i in range(n - 1):
        out[lo + i] = dp[i + 1] / (b_[i] * bp[i + 1] - d_[i] * dp[i + 1])
    out[lo + n - 1] = -1.0 / d_[n - 1]
