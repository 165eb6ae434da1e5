"""Numba kernels of Elo-R ([Ebtekar2015]; see :mod:`podium.systems.elo_r`).

Every quantity here is in the seed's *upper-bar* units (Sec. 3: a standard
deviation drawn with a bar is multiplied by ``sqrt(12)/pi``; Algorithms 1-4 use the
barred values directly): a spread ``d`` enters a logistic term as
``tanh((x - mu) / d) / d``.  Logistic factors are stored as ``(mu, w_arg, w_out)``
with term ``w_out * tanh((x - mu) * w_arg)`` -- ``w_arg = 1/tau_in`` and
``w_out = 1/tau_out`` -- so that the history pool of
:mod:`podium.systems.elo_mmr.kernels` (``reserve``/``compact_pool``) can be reused.
The weight of a factor in the uncertainty (end of Sec. 4) is ``w_arg * w_out``
(``1/tau^2`` when both are equal).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    panel_grid,
    panel_span,
    panel_zero,
)
from podium.core.numerics.constants import HI_BOUND, LO_BOUND, LOGISTIC
from podium.core.numerics.newton import (
    MAX_ITER,
    newton_begin,
    newton_next,
    newton_rtol_begin,
    newton_rtol_next,
)
from podium.core.numerics.performance import OpponentTerms, TieGroups, n_unsolved, panel_values
from podium.core.numerics.robust import robust_average_zero
from podium.core.numerics.special import own_logistic_term, tanh_sech2
from podium.systems.elo_mmr.kernels import Blocks, Factors, Normal

#: Below this ``|r - mu| / tau`` the fancy noising uses a series instead of Newton.
_SERIES_BELOW = 0.05
#: A Newton step of x tanh x = c below this relative size is the last one needed.
_NEWTON_LAST = 1e-9
#: Relative tolerance of the fancy noising's outer (kappa) solve.
_OUTER_RTOL = 1e-12


# ------------------------------------------------------------------------------------
# Phase 1: performance estimation (Sec. 3, Algorithm 2's first SOLVE)
#
# Q_i(x) = - [ sum_{j <= i} (tanh((x - r_j)/d_j) - 1)/d_j + sum_{j >= i} (tanh + 1)/d_j ]
# where "j <= i" are the players i beat and i itself, "j >= i" those who beat i and i
# itself; a tie counts half a win and half a loss.  With v_j(x) = -tanh((x - r_j)/d_j)/d_j
# and w_j = 1/d_j: a better j contributes v_j - w_j, a worse j v_j + w_j, a tied j v_j
# and i itself 2 v_i.  Writing R_g for the sum with i's own term counted once (as a tie),
# Q_i = R_g + v_i: R_g is shared by the whole tie group g, v_i is i's own.


_term = own_logistic_term


@nb.njit(cache=True)
def _q_player(x, mu, w, lo, i):
    """``Q_i(x)`` and its derivative, directly over every term (O(N))."""
    s = 0.0
    sp = 0.0
    li = lo[i]
    for j in range(mu.size):
        v, vp = _term(x, mu[j], w[j])
        if lo[j] < li:
            s += v - w[j]
        elif lo[j] > li:
            s += v + w[j]
        else:
            s += v
        sp += vp
    v, vp = _term(x, mu[i], w[i])
    return s + v, sp + vp


@nb.njit(cache=True)
def _r_group(x, mu, w, g_start, g_end, g):
    """``R_g(x)`` (the tie group's shared part) and its derivative (O(N))."""
    s = 0.0
    sp = 0.0
    a = g_start[g]
    b = g_end[g]
    for j in range(mu.size):
        v, vp = _term(x, mu[j], w[j])
        if j < a:
            s += v - w[j]
        elif j >= b:
            s += v + w[j]
        else:
            s += v
        sp += vp
    return s, sp


@nb.njit(cache=True)
def _solve_player(mu, w, lo, i):
    """Zero of ``Q_i`` by Newton on the direct sum, from the player's own rating."""
    state = newton_begin(LO_BOUND, HI_BOUND, mu[i])
    while state.running:
        s, sp = _q_player(state.x, mu, w, lo, i)
        state = newton_next(state, s, sp)
    return state.x, state.status


@nb.njit(cache=True)
def _solve_group_extreme(mu, w, groups, g, top):
    """The largest (``top``) or smallest zero of ``Q_i`` over the members ``i`` of group
    ``g``: the zero of ``R_g + max_i v_i`` (or ``min_i v_i``), a decreasing function."""
    a = groups.start[g]
    b = groups.end[g]
    state = newton_begin(LO_BOUND, HI_BOUND, mu[a] if top else mu[b - 1])
    while state.running:
        guess = state.x
        s, sp = _r_group(guess, mu, w, groups.start, groups.end, g)
        ev, evp = _term(guess, mu[a], w[a])
        for j in range(a + 1, b):
            v, vp = _term(guess, mu[j], w[j])
            if (v > ev) if top else (v < ev):
                ev = v
                evp = vp
        state = newton_next(state, s + ev, sp + evp)
    return state.x


@nb.njit(cache=True, parallel=True)
def _place_players(a: float, b: float, mu: np.ndarray, w: np.ndarray, groups: TieGroups,
                   gwmax: np.ndarray, Qv: np.ndarray, cmat: np.ndarray, perf: np.ndarray,
                   solved: np.ndarray) -> None:
    """Place every player whose zero lies in the panel ``[a, b]``: Newton on the
    interpolant of its group's ``R_g`` (values at the nodes in ``Qv``) plus its own
    term; the groups in parallel."""
    m = Qv.shape[1]
    c = 0.5 * (a + b)
    r = 0.5 * (b - a)
    for g in nb.prange(groups.start.size):
        ra = Qv[g, m - 1]
        rb = Qv[g, 0]
        if not (ra + gwmax[g] >= 0.0 and rb - gwmax[g] <= 0.0):
            continue
        coef = np.empty(m)
        have_coef = False
        for i in range(groups.start[g], groups.end[g]):
            if solved[i]:
                continue
            qa = ra + _term(a, mu[i], w[i])[0]
            qb = rb + _term(b, mu[i], w[i])[0]
            if not (qa >= 0.0 and qb <= 0.0):
                continue
            if not have_coef:
                cheb_fit(cmat, Qv[g], coef)
                have_coef = True
            t = panel_zero(coef, qa, qb, c, r, mu[i], w[i], True)
            perf[i] = c + r * t
            solved[i] = True


# Serial: the direct solves it does itself are small (rounds of at most ``direct_n``
# players, and the odd player the panels do not place); the heavy loops run in
# parallel in panel_values and _place_players.
@nb.njit(cache=True)
def performances(mu: np.ndarray, w: np.ndarray, lo: np.ndarray, groups: TieGroups,
                 direct_n: int):
    """Every participant's performance ``p_i``: the zero of ``Q_i`` (Sec. 3), exactly.

    Parameters
    ----------
    mu, w:
        Pre-round ratings ``r'_j`` and ``1/delta_j`` in standings order (best first).
    lo:
        0-based first place of each player's tie range.
    groups:
        The tie groups, best first.
    direct_n:
        Rounds with at most this many players are solved directly, O(N) per
        Newton step per player.

    Notes
    -----
    ``Q_i = R_g + v_i`` (see above).  ``R_g`` is what
    :func:`podium.core.numerics.performance_zeros` evaluates with ``split_ties``:
    every ``R_g`` is interpolated at once on panels of half-width ``pi*d_min/4``
    (the poles of the tanh terms lie ``pi*d/2`` off the real axis, so the
    Chebyshev interpolant is exact to rounding) and each player's zero is found by
    Newton on the interpolant plus its own exact term ``v_i``.  Since
    ``R_{g+1} = R_g - W_g - W_{g+1}`` (``W_g``: the group's total ``w``) and
    ``|v_i| < w_i``, every member of a better group has a larger ``Q`` everywhere,
    hence a larger performance (Sec. 6, third property): all zeros lie between the
    smallest zero of the last group and the largest of the first, found directly as
    the zeros of ``R_{G-1} + min_i v_i`` and ``R_0 + max_i v_i``.  A player the panels do not
    place (rounding at an edge) is solved directly.

    Returns
    -------
    perf, status : ndarray
        Each participant's performance and solver status.
    n_direct : int
        How many were solved directly (all of them below ``direct_n``).
    """
    n = mu.size
    perf = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    if n == 0:
        return perf, status, 0
    if n <= direct_n:
        for i in range(n):
            p, st = _solve_player(mu, w, lo, i)
            perf[i] = p
            status[i] = st
        return perf, status, n

    g_start, g_end = groups
    G = g_start.size
    wmax = 0.0
    for j in range(n):
        if w[j] > wmax:
            wmax = w[j]
    gwmax = np.zeros(G)
    wsum = np.zeros(G)
    for g in range(G):
        for j in range(g_start[g], g_end[g]):
            wsum[g] += w[j]
            if w[j] > gwmax[g]:
                gwmax[g] = w[j]
    # typed arguments, not literals: one compiled _solve_group_extreme for both calls
    top = _solve_group_extreme(mu, w, groups, np.int64(0), np.bool_(True))
    bot = _solve_group_extreme(mu, w, groups, G - 1, np.bool_(False))
    a_all = bot
    b_all = top
    if b_all - a_all < 1e-6:
        b_all = a_all + 1e-6
    grid = panel_grid(a_all, b_all, 0.25 * math.pi / wmax)
    m = CHEB_NODES
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    Vs = np.empty((m, G))
    Qv = np.empty((G, m))
    solved = np.zeros(n, dtype=np.bool_)
    terms = OpponentTerms(mu, w, w)
    for p in range(grid.n):
        a, b, c, r = panel_span(grid, p)
        panel_values(LOGISTIC, c, r, tnodes, terms, groups, True, wsum, Qv, Vs)
        _place_players(a, b, mu, w, groups, gwmax, Qv, cmat, perf, solved)
    nfb = n_unsolved(solved)
    for i in range(n):
        if not solved[i]:
            pv, st = _solve_player(mu, w, lo, i)
            perf[i] = pv
            status[i] = st
    return perf, status, nfb


# ------------------------------------------------------------------------------------
# Noising (Sec. 5, 5.1-5.2): the prior of the new round from the last posterior.


@nb.njit(cache=True)
def noise_constant(players: np.ndarray, sig: np.ndarray, eta: float, all_tau: bool,
                   normal: Normal, blocks: Blocks, pool: Factors) -> np.ndarray:
    """Constant-multiple noising (Sec. 5.2, Sec. 6.2.2-6.2.3).

    Every factor's variance is multiplied by ``kappa^2 = 1 + eta^2/sigma^2``, which
    multiplies the uncertainty formula's variance by the same amount
    (``sigma^2 -> sigma^2 + eta^2``): the normal factor's ``tau_0 -> kappa tau_0``;
    with ``all_tau`` every logistic ``tau -> kappa tau`` (inside and outside the
    tanh), otherwise only the leading ``1/tau`` is divided by ``kappa^2`` and the
    ``tau`` inside the tanh is kept.
    """
    n = players.size
    new_sig = np.empty(n)
    nf_w = normal.w
    fb_base, _, fb_start, fb_len = blocks
    f_warg, f_wout = pool.warg, pool.wout
    for k in range(n):
        i = players[k]
        k2 = 1.0 + (eta * eta) / (sig[k] * sig[k])
        kap = math.sqrt(k2)
        nf_w[i] /= k2
        b = fb_base[i] + fb_start[i]
        for q in range(b, b + fb_len[i]):
            if all_tau:
                f_warg[q] /= kap
                f_wout[q] /= kap
            else:
                f_wout[q] /= k2
        new_sig[k] = math.sqrt(sig[k] * sig[k] + eta * eta)
    return new_sig


@nb.njit(cache=True)
def _xtanhx(x):
    t, d2 = tanh_sech2(x)
    return x * t, t + x * d2


@nb.njit(cache=True)
def _shrink(x0, g0, u, guess):
    """Solve ``x' tanh x' = u * x0 tanh x0`` (``g0 = x0 tanh x0``) for ``x'``.

    Returns ``(rho, d(rho^2)/du, x', dx'/du)`` with ``rho = x'/x0``, which lies in
    ``[u, sqrt(u)]`` (``tau' = tau / rho`` is between ``kappa tau`` and
    ``kappa^2 tau``).  Newton from ``guess`` (clamped into that bracket), safeguarded
    by bisection; a series for tiny ``x0``.
    """
    if x0 < _SERIES_BELOW:
        # x tanh x = H(x^2), H(a) = a - a^2/3 + 2a^3/15 - ...; invert y = Y(v), v = u H(a):
        # rho^2 = Y(v)/a.  Both series to 7th order: relative error ~1e-20 for x0 < 0.05.
        a = x0 * x0
        ha = 1.0 + a * (-1.0 / 3.0 + a * (2.0 / 15.0 + a * (-17.0 / 315.0 + a * (
            62.0 / 2835.0 + a * (-1382.0 / 155925.0 + a * (21844.0 / 6081075.0))))))
        v = u * a * ha
        yv = 1.0 + v * (1.0 / 3.0 + v * (4.0 / 45.0 + v * (16.0 / 945.0 + v * (
            16.0 / 14175.0 + v * (-64.0 / 93555.0 + v * (-69248.0 / 212837625.0))))))
        dy = 1.0 + v * (2.0 / 3.0 + v * (12.0 / 45.0 + v * (64.0 / 945.0 + v * (
            80.0 / 14175.0 + v * (-384.0 / 93555.0 + v * (-484736.0 / 212837625.0))))))
        return math.sqrt(u * ha * yv), dy * ha, 0.0, 0.0
    target = u * g0
    lo = u * x0
    hi = math.sqrt(u) * x0
    x = guess
    if not (lo <= x <= hi):
        x = math.sqrt(target) if target < 1.0 else target
        if not (lo <= x <= hi):
            x = hi
    # quadratic convergence: the error after a step below _NEWTON_LAST is ~ (step/x)^2
    # < 1e-18, so that step is the last one
    state = newton_rtol_begin(lo, hi, x, _NEWTON_LAST, 0.0, True, MAX_ITER)
    hp = 1.0
    while state.running:
        h, hp = _xtanhx(state.x)
        state = newton_rtol_next(state, target - h, -hp)  # x tanh x - target increases
    x = state.x
    dxdu = g0 / hp
    return x / x0, 2.0 * x * dxdu / (x0 * x0), x, dxdu


@nb.njit(cache=True)
def _fancy_one(r, sig, eta, w0, f_mu, f_warg, b, e, scr, s0):
    """Solve Algorithm 4's first line for one player: ``u = 1/kappa^2``.

    ``F(u) = w0 u + sum_k w_k^2 rho_k(u)^2 - 1/(sigma^2 + eta^2)`` is increasing in
    ``u``; its zero lies in ``[u_c, sqrt(u_c)]`` with ``u_c = sigma^2/(sigma^2 + eta^2)``
    (every ``rho_k`` lies in ``[u, sqrt(u)]``).  Safeguarded Newton on that bracket from
    ``u_c`` (the answer when every factor sits at the rating).  ``scr[:, s0:]`` is this
    player's scratch (rows: x0, x0 tanh x0, x', dx'/du, rho); on return row 4 holds each
    factor's ``rho`` at the returned ``u``.
    """
    target = 1.0 / (sig * sig + eta * eta)
    uc = sig * sig / (sig * sig + eta * eta)
    m = e - b
    for j in range(m):
        x0 = abs(r - f_mu[b + j]) * f_warg[b + j]
        scr[0, s0 + j] = x0
        scr[1, s0 + j] = x0 * math.tanh(x0) if x0 >= _SERIES_BELOW else 0.0
        scr[2, s0 + j] = -1.0
        scr[3, s0 + j] = 0.0
    state = newton_rtol_begin(uc, math.sqrt(uc), uc, _OUTER_RTOL, _OUTER_RTOL, False, MAX_ITER)
    du = 0.0
    while state.running:
        u = state.x
        f = w0 * u - target
        fp = w0
        for j in range(m):
            q = s0 + j
            # warm start: last x' moved along dx'/du (a joint Newton step), then polished
            rho, dr2, xn, dxdu = _shrink(scr[0, q], scr[1, q], u, scr[2, q] + scr[3, q] * du)
            scr[2, q] = xn
            scr[3, q] = dxdu
            scr[4, q] = rho
            w2 = f_warg[b + j] * f_warg[b + j]
            f += w2 * rho * rho
            fp += w2 * dr2
        state = newton_rtol_next(state, -f, -fp)  # F increases in u
        du = state.x - u
    return state.x


@nb.njit(cache=True, parallel=True)
def noise_fancy(players: np.ndarray, r: np.ndarray, sig: np.ndarray, eta: float,
                normal: Normal, blocks: Blocks, pool: Factors) -> np.ndarray:
    """The fancy noising of Sec. 5.2 / Algorithm 4 (first line).

    Finds ``kappa`` such that ``tau'_0 = kappa tau_0`` and every ``tau'_k`` solving
    ``tanh((r - mu_k)/tau'_k)/tau'_k = tanh((r - mu_k)/tau_k)/(kappa^2 tau_k)`` give
    ``1/(sigma^2 + eta^2) = 1/tau'_0^2 + sum_k 1/tau'_k^2``.  Every factor's pull at
    the current rating ``r`` is divided by ``kappa^2``, so the mode does not move.
    Factors keep ``tau_in = tau_out``.
    """
    n = players.size
    new_sig = np.empty(n)
    nf_w = normal.w
    fb_base, _, fb_start, fb_len = blocks
    f_mu, f_warg, f_wout = pool
    offs = np.empty(n + 1, dtype=np.int64)
    offs[0] = 0
    for k in range(n):
        offs[k + 1] = offs[k] + fb_len[players[k]]
    scr = np.empty((5, offs[n]))
    for k in nb.prange(n):
        i = players[k]
        b = fb_base[i] + fb_start[i]
        e = b + fb_len[i]
        u = _fancy_one(r[k], sig[k], eta, nf_w[i], f_mu, f_warg, b, e, scr, offs[k])
        nf_w[i] *= u
        for j in range(e - b):
            f_warg[b + j] *= scr[4, offs[k] + j]
            f_wout[b + j] = f_warg[b + j]
        new_sig[k] = math.sqrt(sig[k] * sig[k] + eta * eta)
    return new_sig


@nb.njit(cache=True, parallel=True)
def prior_modes(players: np.ndarray, start: np.ndarray, normal: Normal, blocks: Blocks,
                pool: Factors) -> tuple[np.ndarray, np.ndarray]:
    """Mode of each participant's belief (the zero of Sec. 4's equation)."""
    nf_mu, nf_w = normal
    fb_base, _, fb_start, fb_len = blocks
    f_mu, f_warg, f_wout = pool
    n = players.size
    out = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    for k in nb.prange(n):
        i = players[k]
        b = fb_base[i] + fb_start[i]
        w0 = nf_w[i]
        x, st = robust_average_zero(f_mu, f_warg, f_wout, b, b + fb_len[i], 1.0,
                                    -nf_mu[i] * w0, w0, start[k])
        out[k] = x
        status[k] = st
    return out, status


# ------------------------------------------------------------------------------------
# Phase 2: belief update (Sec. 4; Algorithm 2's and Algorithm 4's last lines)


@nb.njit(cache=True)
def _solve_one(r0, w0, p, wg):
    """Zero of ``w0 (x - r0) + wg tanh((x - p) wg)`` (increasing)."""
    state = newton_begin(LO_BOUND, HI_BOUND, r0)
    while state.running:
        guess = state.x
        t, d2 = tanh_sech2((guess - p) * wg)
        s = w0 * (guess - r0) + wg * t
        sp = w0 + wg * wg * d2
        state = newton_next(state, -s, -sp)
    return state.x, state.status


@nb.njit(cache=True)
def absorb_normal(r_prior, sig_prior, perf, gamma, robust):
    """Algorithm 2: ``r`` solves ``(r - r')/sigma'^2 + tanh((r - p)/gamma)/gamma = 0``
    and ``sigma = (sigma'^-2 + gamma^-2)^-1/2``; the posterior is then approximated by
    the normal ``(r, sigma^2)`` (Sec. 5.1).  Without ``robust`` the performance is a
    normal measurement: ``r`` is the precision-weighted mean (Sec. 6.3's orange curve).
    """
    n = perf.size
    out_mu = np.empty(n)
    out_sig = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    for k in range(n):
        w0 = 1.0 / (sig_prior[k] * sig_prior[k])
        wg = 1.0 / gamma[k]
        if robust:
            x, st = _solve_one(r_prior[k], w0, perf[k], wg)
            out_mu[k] = x
            status[k] = st
        else:
            out_mu[k] = (w0 * r_prior[k] + wg * wg * perf[k]) / (w0 + wg * wg)
        out_sig[k] = 1.0 / math.sqrt(w0 + wg * wg)
    return out_mu, out_sig, status


@nb.njit(cache=True, parallel=True)
def absorb_history(players: np.ndarray, r_prior: np.ndarray, perf: np.ndarray,
                   gamma: np.ndarray, max_history: int, normal: Normal, blocks: Blocks,
                   pool: Factors):
    """Algorithm 4's second loop: fold the oldest factor when the belief holds
    ``max_history`` factors (normal one included), push ``(p, gamma)``, solve the rating.

    The folded factor enters the normal factor with its robust weight at the prior
    mode ``r'`` (Sec. 4: ``w_k = tanh((r - mu_k)/tau_in)/(tau_out (r - mu_k))``), so
    folding does not move the mode.  ``sigma = (w_0 + sum_k w_arg,k w_out,k)^-1/2``.

    Returns (mu, sigma, status) per participant.
    """
    # plain local names: Numba's parallel loops drop a store through `tuple.field[i]`
    nf_mu, nf_w = normal
    fb_base, _, fb_start, fb_len = blocks
    f_mu, f_warg, f_wout = pool
    n = players.size
    out_mu = np.empty(n)
    out_sig = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    for k in nb.prange(n):
        i = players[k]
        if fb_len[i] > 0 and fb_len[i] + 1 >= max_history:
            q = fb_base[i] + fb_start[i]
            d = r_prior[k] - f_mu[q]
            z = d * f_warg[q]
            if abs(z) < 1e-8:
                w1 = f_warg[q] * f_wout[q]
            else:
                w1 = f_wout[q] * math.tanh(z) / d
            w0 = nf_w[i]
            nf_mu[i] = (w0 * nf_mu[i] + w1 * f_mu[q]) / (w0 + w1)
            nf_w[i] = w0 + w1
            fb_start[i] += 1
            fb_len[i] -= 1
        wg = 1.0 / gamma[k]
        q = fb_base[i] + fb_start[i] + fb_len[i]
        f_mu[q] = perf[k]
        f_warg[q] = wg
        f_wout[q] = wg
        fb_len[i] += 1
        b = fb_base[i] + fb_start[i]
        e = b + fb_len[i]
        w0 = nf_w[i]
        x, st = robust_average_zero(f_mu, f_warg, f_wout, b, e, 1.0, -nf_mu[i] * w0, w0,
                                    r_prior[k])
        out_mu[k] = x
        status[k] = st
        tot = w0
        for qq in range(b, e):
            tot += f_warg[qq] * f_wout[qq]
        out_sig[k] = 1.0 / math.sqrt(tot)
    return out_mu, out_sig, status
