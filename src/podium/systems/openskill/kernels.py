"""Numba kernels of the openskill (Weng-Lin) systems (:mod:`podium.systems.openskill`).

One round is rated by :func:`rate`: every member's deviation is widened by
``tau``, the members of each team are summed into a team rating (optionally with
openskill's ``balance`` weights), the model gives each team its pair ``(Omega,
Delta)`` (:func:`team_terms`), and every member moves by its share of the team's
variance, scaled by its weight ([WengLin2011, Alg. 1-4]).

The normal density and CDF are computed as openskill computes them (Python's
``statistics.NormalDist``: ``Phi(x) = (1 + erf(x / sqrt 2)) / 2``), not through
``erfc``: the form loses relative precision in the lower tail, but it defines the
reference's numbers (and its cut-offs ``Phi < machine epsilon`` in ``v`` and ``w``),
which these kernels reproduce to ~1e-12.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.systems.openskill.models import BT, BTP, PL, TM, TMP

__all__ = [
    "PL", "TM", "BT", "TMP", "BTP",
    "phi_major", "phi_minor", "v", "w", "vt", "wt",
    "team_terms", "pairs_parallel", "normalize_weights", "team_ratings", "member_update",
    "rate_round", "rate", "PARALLEL_FROM",
]


#: A pairwise model's team terms run in parallel (``prange`` over teams) from this
#: many teams on; below it the thread start costs more than the loop.
PARALLEL_FROM = 256

_SQRT2 = math.sqrt(2.0)
_SQRT_TAU = math.sqrt(math.tau)
_EPS = np.finfo(np.float64).eps


# ====================================================================== special functions
@nb.njit(cache=True, inline="always")
def phi_major(x: float) -> float:
    """Standard normal CDF as ``statistics.NormalDist().cdf``: ``(1 + erf(x / sqrt 2)) / 2``."""
    return 0.5 * (1.0 + math.erf(x / _SQRT2))


@nb.njit(cache=True, inline="always")
def phi_minor(x: float) -> float:
    """Standard normal density as ``statistics.NormalDist().pdf``."""
    return math.exp(x * x / -2.0) / _SQRT_TAU


@nb.njit(cache=True)
def v(x: float, t: float) -> float:
    """``V(x, t) = phi(x - t) / Phi(x - t)`` ([WengLin2011, Alg. 3]); ``-(x - t)`` where
    ``Phi(x - t)`` is below machine epsilon (openskill's cut-off)."""
    xt = x - t
    d = phi_major(xt)
    if d < _EPS:
        return -xt
    return phi_minor(xt) / d


@nb.njit(cache=True)
def w(x: float, t: float) -> float:
    """``W(x, t) = V (V + x - t)``; 1 (for ``x < 0``) or 0 where ``Phi(x - t)`` is below
    machine epsilon."""
    xt = x - t
    d = phi_major(xt)
    if d < _EPS:
        return 1.0 if x < 0.0 else 0.0
    vv = v(x, t)
    return vv * (vv + xt)


@nb.njit(cache=True)
def vt(x: float, t: float) -> float:
    """``V~(x, t)``, the draw counterpart of :func:`v`; ``-x -/+ t`` where the draw
    probability ``Phi(t - |x|) - Phi(-t - |x|)`` is below 1e-5 (openskill's cut-off)."""
    xx = abs(x)
    b = phi_major(t - xx) - phi_major(-t - xx)
    if b < 1e-5:
        return -x - t if x < 0.0 else -x + t
    a = phi_minor(-t - xx) - phi_minor(t - xx)
    return (-a if x < 0.0 else a) / b


@nb.njit(cache=True)
def wt(x: float, t: float) -> float:
    """``W~(x, t)``, the draw counterpart of :func:`w`; 1 where the draw probability is
    below machine epsilon."""
    xx = abs(x)
    b = phi_major(t - xx) - phi_major(-t - xx)
    if b < _EPS:
        return 1.0
    vv = vt(x, t)
    return ((t - xx) * phi_minor(t - xx) + (t + xx) * phi_minor(-t - xx)) / b + vv * vv


# ====================================================================== team terms
@nb.njit(cache=True)
def _plackett_luce(mu: np.ndarray, var: np.ndarray, rank: np.ndarray, beta: float,
                   omega: np.ndarray, delta: np.ndarray) -> None:
    """[WengLin2011, Alg. 4] for teams sorted by rank (ties: equal ranks, adjacent).

    With ``c^2 = sum_q (sigma_q^2 + beta^2)``, ``e_i = exp(mu_i / c)``, ``S_q`` the sum of
    ``e_s`` over the teams ranked no better than ``q`` and ``A_q`` the size of ``q``'s tie
    group, team ``i`` sums over the teams ``q`` ranked no worse than itself:
    ``Omega_i = sigma_i^2 / c * sum_q (1[q = i] - e_i / S_q) / A_q`` and
    ``Delta_i = gamma_i sigma_i^2 / c^2 * sum_q (e_i / S_q)(1 - e_i / S_q) / A_q`` with
    ``gamma_i = sigma_i / c``.  Both sums are prefix sums over the groups, so the round
    costs ``O(T)``; the exponents are shifted by ``max mu / c`` (which cancels).
    """
    n = mu.size
    c2 = 0.0
    for i in range(n):
        c2 += var[i] + beta * beta
    c = math.sqrt(c2)
    top = -np.inf
    for i in range(n):
        top = max(top, mu[i] / c)
    e = np.empty(n)
    for i in range(n):
        e[i] = math.exp(mu[i] / c - top)
    # group boundaries: start[i], end[i] of the tie group of team i
    start = np.empty(n, dtype=np.int64)
    end = np.empty(n, dtype=np.int64)
    g = 0
    for i in range(n):
        if i > 0 and rank[i] != rank[i - 1]:
            g = i
        start[i] = g
    g = n
    for i in range(n - 1, -1, -1):
        if i < n - 1 and rank[i] != rank[i + 1]:
            g = i + 1
        end[i] = g
    suffix = np.empty(n + 1)
    suffix[n] = 0.0
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + e[i]
    # prefix sums over q of 1 / (S_q A_q) and 1 / (S_q^2 A_q)
    px = np.empty(n + 1)
    py = np.empty(n + 1)
    px[0] = 0.0
    py[0] = 0.0
    for q in range(n):
        s = suffix[start[q]]
        a = float(end[q] - start[q])
        px[q + 1] = px[q] + 1.0 / (s * a)
        py[q + 1] = py[q] + 1.0 / (s * s * a)
    for i in range(n):
        x = px[end[i]]
        y = py[end[i]]
        a = float(end[i] - start[i])
        om = 1.0 / a - e[i] * x
        de = e[i] * x - e[i] * e[i] * y
        omega[i] = om * var[i] / c
        delta[i] = de * var[i] / (c * c) * (math.sqrt(var[i]) / c)


@nb.njit(cache=True, inline="always")
def _pair_terms(model: int, i: int, mu: np.ndarray, var: np.ndarray, rank: np.ndarray,
                beta: float, epsilon: float, window: int) -> tuple[float, float]:
    """``(Omega_i, Delta_i)`` of team ``i`` in a pairwise model (teams sorted by rank).

    Full pair (Alg. 1 BT, Alg. 3 TM): sum over every other team ``q``; partial pair
    (Alg. 2 BT, openskill's TM-part): the mean over the teams within ``window``
    places in the sorted order.  ``c_iq = sqrt(sigma_i^2 + sigma_q^2 + 2 beta^2)``
    (twice that for TM-part), ``gamma = sigma_i / c_iq``.
    """
    n = mu.size
    lo = 0
    hi = n
    if model == TMP or model == BTP:
        lo = max(0, i - window)
        hi = min(n, i + window + 1)
    om = 0.0
    de = 0.0
    count = 0
    two_b2 = 2.0 * beta * beta
    for q in range(lo, hi):
        if q == i:
            continue
        c = math.sqrt(var[i] + var[q] + two_b2)
        if model == TMP:
            c = 2.0 * c
        s2c = var[i] / c
        gamma = math.sqrt(var[i]) / c
        if model == BT or model == BTP:
            p = 1.0 / (1.0 + math.exp((mu[q] - mu[i]) / c))
            s = 0.0
            if rank[q] > rank[i]:
                s = 1.0
            elif rank[q] == rank[i]:
                s = 0.5
            om += s2c * (s - p)
            de += gamma * s2c / c * p * (1.0 - p)
        else:
            x = (mu[i] - mu[q]) / c
            t = epsilon / c
            if rank[q] > rank[i]:
                om += s2c * v(x, t)
                de += gamma * s2c / c * w(x, t)
            elif rank[q] < rank[i]:
                om -= s2c * v(-x, t)
                de += gamma * s2c / c * w(-x, t)
            else:
                om += s2c * vt(x, t)
                de += gamma * s2c / c * wt(x, t)
        count += 1
    if model == TMP or model == BTP:
        if count > 0:
            return om / count, de / count
        return 0.0, 0.0
    return om, de


@nb.njit(cache=True)
def _pairs_serial(model: int, mu: np.ndarray, var: np.ndarray, rank: np.ndarray,
                  beta: float, epsilon: float, window: int, omega: np.ndarray,
                  delta: np.ndarray) -> None:
    for i in range(mu.size):
        omega[i], delta[i] = _pair_terms(model, i, mu, var, rank, beta, epsilon, window)


@nb.njit(cache=True, parallel=True)
def pairs_parallel(model: int, mu: np.ndarray, var: np.ndarray, rank: np.ndarray,
                   beta: float, epsilon: float, window: int, omega: np.ndarray,
                   delta: np.ndarray) -> None:
    """The pairwise models' team terms for teams sorted by rank, ``prange`` over teams.

    Called from Python only (:func:`rate`), which keeps the serial small-team path free
    of the threading layer.  (A cached kernel that calls a ``parallel=True`` one is
    safe: :func:`podium.core.kernel_cache.with_parallel_init`.)
    """
    for i in nb.prange(mu.size):
        omega[i], delta[i] = _pair_terms(model, i, mu, var, rank, beta, epsilon, window)


@nb.njit(cache=True)
def _rank_order(rank: np.ndarray) -> np.ndarray:
    """The teams in rank order, stably (as openskill sorts them); the identity when
    they already are."""
    for i in range(1, rank.size):
        if rank[i] < rank[i - 1]:
            return np.argsort(rank, kind="mergesort")
    return np.arange(rank.size)


@nb.njit(cache=True)
def team_terms(model: int, mu: np.ndarray, var: np.ndarray, rank: np.ndarray, beta: float,
               epsilon: float, window: int) -> tuple[np.ndarray, np.ndarray]:
    """``(Omega, Delta)`` of every team, given team means ``mu``, variances ``var`` and
    ranks (lower is better, ties equal) in any order, serially.

    The teams are put in rank order first (stably, as openskill sorts them), which
    only matters for the partial-pair models' windows.
    """
    n = mu.size
    order = _rank_order(rank)
    smu, svar, srank = mu[order], var[order], rank[order]
    so = np.empty(n)
    sd = np.empty(n)
    if model == PL:
        if n:
            _plackett_luce(smu, svar, srank, beta, so, sd)
    else:
        _pairs_serial(model, smu, svar, srank, beta, epsilon, window, so, sd)
    omega = np.empty(n)
    delta = np.empty(n)
    omega[order] = so
    delta[order] = sd
    return omega, delta


# ====================================================================== one round
@nb.njit(cache=True)
def normalize_weights(weight: np.ndarray, offsets: np.ndarray, lo: float,
                      hi: float) -> np.ndarray:
    """openskill's per-team rescaling of member weights to ``[lo, hi]``: a one-member
    team gets ``hi``; a team of equal weights gets ``lo``; otherwise
    ``lo + (w - min) / (max - min) (hi - lo)``."""
    out = np.empty(weight.size)
    for t in range(offsets.size - 1):
        a = offsets[t]
        b = offsets[t + 1]
        if b - a == 1:
            out[a] = hi
            continue
        wmin = np.inf
        wmax = -np.inf
        for k in range(a, b):
            wmin = min(wmin, weight[k])
            wmax = max(wmax, weight[k])
        span = wmax - wmin
        if span == 0.0:
            span = 0.0001
        for k in range(a, b):
            out[k] = ((weight[k] - wmin) / span) * (hi - lo) + lo
    return out


@nb.njit(cache=True)
def team_ratings(mu: np.ndarray, sigma: np.ndarray, offsets: np.ndarray, kappa: float,
                 tau: float, balance: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 1-2 of a round: every member's widened deviation ``s = sqrt(sigma^2 +
    tau^2)`` and every team's ``(mu_T, sigma_T^2)`` (sums over the members, with
    openskill's ``balance`` weights when asked)."""
    n = mu.size
    n_teams = offsets.size - 1
    s = np.empty(n)
    for k in range(n):
        s[k] = math.sqrt(sigma[k] * sigma[k] + tau * tau)
    team_mu = np.zeros(n_teams)
    team_var = np.zeros(n_teams)
    for t in range(n_teams):
        a = offsets[t]
        b = offsets[t + 1]
        if b - a == 1 and not balance:
            team_mu[t] = mu[a]
            team_var[t] = s[a] * s[a]
            continue
        # members summed best ordinal first, as openskill sums them (so that the team
        # sums, and the cancellations downstream, round alike)
        ordinal = np.empty(b - a)
        for k in range(a, b):
            ordinal[k - a] = mu[k] - 3.0 * s[k]
        order = np.argsort(-ordinal, kind="mergesort")
        top = ordinal[order[0]]
        for j in order:
            k = a + j
            bw = 1.0
            if balance:
                bw = 1.0 + (top - ordinal[j]) / (top + kappa)
            team_mu[t] += mu[k] * bw
            team_var[t] += (s[k] * bw) ** 2
    return s, team_mu, team_var


@nb.njit(cache=True)
def member_update(model: int, mu: np.ndarray, sigma: np.ndarray, s: np.ndarray,
                  offsets: np.ndarray, team_var: np.ndarray, omega: np.ndarray,
                  delta: np.ndarray, weight: np.ndarray, kappa: float,
                  limit_sigma: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps 4-5 of a round: each member's share of its team's ``(Omega, Delta)``."""
    n = mu.size
    new_mu = np.empty(n)
    new_sig = np.empty(n)
    perf = np.empty(n)
    for t in range(offsets.size - 1):
        om = omega[t]
        de = delta[t]
        up = om > 0.0 if model == TMP else om >= 0.0
        for k in range(offsets[t], offsets[t + 1]):
            r = s[k] * s[k] / team_var[t]
            if up:
                new_mu[k] = mu[k] + r * om * weight[k]
                sig = s[k] * math.sqrt(max(1.0 - r * de * weight[k], kappa))
            else:
                new_mu[k] = mu[k] + r * om / weight[k]
                sig = s[k] * math.sqrt(max(1.0 - r * de / weight[k], kappa))
            if limit_sigma:
                sig = min(sig, sigma[k])
            new_sig[k] = sig
            perf[k] = mu[k] + om / de if de > 0.0 else new_mu[k]
    return new_mu, new_sig, perf


@nb.njit(cache=True)
def rate_round(model: int, mu: np.ndarray, sigma: np.ndarray, offsets: np.ndarray,
               rank: np.ndarray, weight: np.ndarray, beta: float, kappa: float, tau: float,
               epsilon: float, window: int, limit_sigma: bool,
               balance: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round, serially, in one compiled call (see :func:`rate`)."""
    s, team_mu, team_var = team_ratings(mu, sigma, offsets, kappa, tau, balance)
    omega, delta = team_terms(model, team_mu, team_var, rank, beta, epsilon, window)
    return member_update(model, mu, sigma, s, offsets, team_var, omega, delta, weight, kappa,
                         limit_sigma)


def rate(model: int, mu: np.ndarray, sigma: np.ndarray, offsets: np.ndarray,
         rank: np.ndarray, weight: np.ndarray, beta: float, kappa: float, tau: float,
         epsilon: float, window: int, limit_sigma: bool,
         balance: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rate one round of teams; return every member's new ``mu``, ``sigma`` and
    performance.

    Parameters
    ----------
    model:
        :data:`PL`, :data:`TM`, :data:`BT`, :data:`TMP` or :data:`BTP`.
    mu, sigma:
        Members' ratings before the round, team after team (``float64``, C order,
        writable, as every array here: one compiled signature).
    offsets:
        ``T + 1`` offsets: team ``t`` is members ``offsets[t]:offsets[t + 1]``.
    rank:
        Per team: its place, lower is better, equal for tied teams.
    weight:
        Per member: the weight that scales its update (already rescaled as the
        model wants; all ones for an unweighted round).
    beta, kappa, tau, epsilon, window, limit_sigma, balance:
        The model's parameters (``epsilon``: TM draw margin; ``window``: partial-pair
        window).

    Returns
    -------
    new_mu, new_sigma, perf:
        Per member.  With ``s^2 = sigma^2 + tau^2`` and ``r = s^2 / sigma_T^2``:
        ``mu' = mu + r Omega w`` and ``sigma' = s sqrt(max(1 - r Delta w, kappa))``
        when ``Omega >= 0`` (``> 0`` for TM-part), ``w`` replaced by ``1 / w``
        otherwise; ``sigma'`` capped at ``sigma`` under ``limit_sigma``.  ``perf``
        is ``mu + Omega / Delta``: the member's rating moved by its team's Newton
        step, the performance whose Gaussian observation gives the same update
        (``mu'`` where ``Delta = 0``).

    A pairwise model's round of :data:`PARALLEL_FROM` teams or more computes its team
    terms in parallel (:func:`pairs_parallel`); every other round is one compiled
    call (:func:`rate_round`).
    """
    n_teams = offsets.size - 1
    if model == PL or n_teams < PARALLEL_FROM:
        out: tuple[np.ndarray, np.ndarray, np.ndarray] = rate_round(
            model, mu, sigma, offsets, rank, weight, beta, kappa, tau, epsilon, window,
            limit_sigma, balance)
        return out
    s, team_mu, team_var = team_ratings(mu, sigma, offsets, kappa, tau, balance)
    order = _rank_order(rank)
    so = np.empty(n_teams)
    sd = np.empty(n_teams)
    pairs_parallel(model, team_mu[order], team_var[order], rank[order], beta, epsilon,
                   window, so, sd)
    omega = np.empty(n_teams)
    delta = np.empty(n_teams)
    omega[order] = so
    delta[order] = sd
    out = member_update(model, mu, sigma, s, offsets, team_var, omega, delta, weight, kappa,
                        limit_sigma)
    return out


# ====================================================================== many rounds
@nb.njit(cache=True)
def rate_rounds(model: int, r0: int, r1: int, offsets: np.ndarray, players: np.ndarray,
                lo: np.ndarray, times: np.ndarray, team_ptr: np.ndarray,
                team_rows: np.ndarray, member_weight: np.ndarray, weighted: np.ndarray,
                w_lo: float, w_hi: float, rescale: bool, beta: float, kappa: float,
                tau: float, epsilon: float, window: int, limit_sigma: bool, balance: bool,
                display_sigmas: float, tab_mu: np.ndarray, tab_sig: np.ndarray,
                tab_played: np.ndarray, tab_last: np.ndarray, tab_max_display: np.ndarray,
                tab_change: np.ndarray, out: np.ndarray, bad: np.ndarray) -> bool:
    """Rate rounds ``r0..r1-1`` of a batch (see
    :class:`~podium.systems.base.RoundBatch`) one after another, each exactly as
    :func:`rate_round` via ``OpenSkillModel.round_update`` and
    ``RatingSystem.rate_round`` would (the same operations in the same order).

    Round ``r`` is batch rows ``offsets[r]:offsets[r+1]``; its teams are
    ``team_ptr[r]:team_ptr[r+1]``, team ``t`` being rows
    ``team_rows[t]:team_rows[t+1]`` (one row per team in an individual round);
    ``member_weight`` holds each row's weight and ``weighted[r]`` whether some weight
    of round ``r`` is not 1 (else the round is rated unweighted, as openskill is
    without ``weights``); ``rescale``: rescale them to ``[w_lo, w_hi]``.  The player
    arrays ``tab_*`` are updated after every round (later rounds read them) and the
    events written to ``out``; ``bad[r]`` is set when round ``r`` produced a
    non-finite rating.  Returns whether any round is flagged.
    """
    flagged = False
    for r in range(r0, r1):
        a = offsets[r]
        b = offsets[r + 1]
        n = b - a
        ta = team_ptr[r]
        tb = team_ptr[r + 1]
        n_teams = tb - ta
        mu = np.empty(n)
        sig = np.empty(n)
        for k in range(n):
            p = players[a + k]
            mu[k] = tab_mu[p]
            sig[k] = tab_sig[p]
        toff = np.empty(n_teams + 1, dtype=np.int64)
        rank = np.empty(n_teams, dtype=np.int64)
        for t in range(n_teams):
            toff[t] = team_rows[ta + t] - a
            rank[t] = lo[team_rows[ta + t]]
        toff[n_teams] = n
        if weighted[r]:
            w = np.empty(n)
            for k in range(n):
                w[k] = member_weight[a + k]
            if rescale:
                w = normalize_weights(w, toff, w_lo, w_hi)
        else:
            w = np.ones(n)
        new_mu, new_sig, perf = rate_round(model, mu, sig, toff, rank, w, beta, kappa, tau,
                                           epsilon, window, limit_sigma, balance)
        t_now = times[r]
        for k in range(n):
            p = players[a + k]
            m = new_mu[k]
            s = new_sig[k]
            if not (math.isfinite(m) and math.isfinite(s)):
                bad[r] = True
                flagged = True
            shown_old = mu[k] - display_sigmas * sig[k]
            shown_new = m - display_sigmas * s
            tab_mu[p] = m
            tab_sig[p] = s
            tab_played[p] += 1
            if t_now > tab_last[p]:
                tab_last[p] = t_now
            if shown_new > tab_max_display[p] or math.isnan(shown_new):
                tab_max_display[p] = shown_new
            tab_change[p] = shown_new - shown_old
            out[0, a + k] = m
            out[1, a + k] = s
            out[2, a + k] = perf[k]
    return flagged
