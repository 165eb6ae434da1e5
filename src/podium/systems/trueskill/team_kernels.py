"""Numba kernels of TrueSkill's team rounds (see :mod:`podium.systems.trueskill`).

The factor graph is the standard one of [Herbrich2006, Fig. 1], with partial play
(member weights) in the team sum:

* skill ``s_i ~ N(mu_i, sigma_i^2)`` (``sigma_i`` already widened by the drift);
* performance ``p_i ~ N(s_i, b^2)``;
* team performance ``P_t = sum_{i in t} w_i p_i`` (the weighted-sum factor of
  [Herbrich2006, Table 1]);
* differences ``d_j = P_j - P_{j+1}`` of adjacent teams in standings order, with the
  truncation factor ``I(d_j > eps)`` (team ``j`` placed better) or ``I(|d_j| <= eps)``
  (tied teams: a draw).

A Gaussian message is stored by its natural parameters ``(pi, tau) = (1/v, m/v)``;
``pi = 0`` is the uniform message.  Edge names (team ``t``, difference ``j``):

* ``mt[t]``: team sum factor -> ``P_t`` (fixed during the iteration: ``N(sum w_i mu_i,
  sum w_i^2 (sigma_i^2 + b^2))``);
* ``lm[j]``: difference factor ``j`` -> ``P_j`` (its left team), ``rm[j]``: -> ``P_{j+1}``;
* ``qm[j]``: truncation factor -> ``d_j``.

The schedule is the one of [Herbrich2006, Fig. 1] as the ``trueskill`` package runs
it: the gray arrows down once; then sweeps (forward over ``j = 0..T-3``: difference
down, truncation up, message to the right team; backward over ``j = T-2..1``:
difference down, truncation up, message to the left team) until no difference
marginal moved by more than ``tol`` times the difference's cavity deviation in a sweep, or
``max_sweeps`` sweeps ran; then the remaining messages up to the skills.  With two
teams one truncation update is exact.

Truncated moments ([Herbrich2006, Table 1], the functions ``v`` and ``w``): a win is
``v = phi(y)/Phi(-y) = hazard(y)``, ``w = v (v - y)`` at ``y = (eps - m)/s`` while
``y < 8`` (within ~1e-11 relative); beyond, where ``v (v - y)`` loses digits to
cancellation (1e-9 at ``y = 20``, all of them by ``y = 1e5``), and for every draw,
the mean and variance come from Gauss-Legendre quadrature of the standard normal
density over the (clipped) interval, in coordinates centred on the interval
(:func:`trunc_moments`).  This keeps ~1e-13 relative precision for intervals of any
width and position, narrow draw intervals included (``eps`` much smaller than ``s``,
Podium's usual case), where the closed form ``1 + (a phi(a) - b phi(b))/Z - v^2``
cancels.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.special import normal_hazard

__all__ = ["win_vw", "trunc_moments", "team_round"]

#: Gauss-Legendre nodes and weights on [-1, 1] (16 points: exact to degree 31).
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
#: A quadrature panel spans at most this change of the log density.
_PANEL_LOG = 6.0
#: Density below exp(-_CLIP_LOG) of the interval's maximum is left out (< 1e-26).
_CLIP_LOG = 60.0
_MAX_PANELS = 64
#: From here on a win's moments come from quadrature (:func:`trunc_moments`).
_WIN_QUADRATURE_FROM = 8.0


@nb.njit(cache=True, error_model="numpy")
def win_vw(y: float) -> tuple[float, float]:
    """``(v, w)`` of the standard normal truncated to ``z > y``.

    ``v`` is its mean (the hazard ``phi(y) / Phi(-y)``) and ``w = 1 - variance``
    ([Herbrich2006, Table 1]: ``v_win``, ``w_win`` at ``t - eps = -y``).
    """
    if y < _WIN_QUADRATURE_FROM:
        v = normal_hazard(y)
        return v, v * (v - y)
    mean, var = trunc_moments(y, math.inf)
    return mean, 1.0 - var


@nb.njit(cache=True, error_model="numpy")
def trunc_moments(a: float, b: float) -> tuple[float, float]:
    """Mean and variance of the standard normal truncated to ``[a, b]`` (``a < b``,
    ``b`` may be ``inf``).

    Gauss-Legendre quadrature over panels (each spanning at most ``_PANEL_LOG`` of
    the log density), after clipping the interval where the density falls below
    ``exp(-_CLIP_LOG)`` of its maximum.  Nodes are written relative to the middle
    ``c`` of the clipped interval and the log density relative to its maximum, so
    the mean ``c + E[u]`` and the variance ``E[(u - E u)^2]`` (two passes) keep
    their relative precision for any width and position.
    """
    # the point of [a, b] nearest 0 carries the largest density
    z0 = 0.0 if a <= 0.0 <= b else (a if a > 0.0 else b)
    reach = math.sqrt(z0 * z0 + 2.0 * _CLIP_LOG)
    lo = max(a, -reach)
    hi = min(b, reach)
    c = 0.5 * (lo + hi)
    h = 0.5 * (hi - lo)
    # log density varies by at most (|lo| + |hi|) * (hi - lo) / 2 over the interval
    span = 0.5 * (abs(lo) + abs(hi)) * (hi - lo)
    panels = min(_MAX_PANELS, 1 + int(span / _PANEL_LOG))
    width = 2.0 * h / panels
    base = 0.5 * (z0 * z0 - c * c)
    m0 = 0.0
    m1 = 0.0
    for p in range(panels):
        mid = -h + (p + 0.5) * width
        for k in range(_GL_X.size):
            u = mid + 0.5 * width * _GL_X[k]
            g = _GL_W[k] * math.exp(base - u * (c + 0.5 * u))
            m0 += g
            m1 += g * u
    mean_u = m1 / m0
    m2 = 0.0
    for p in range(panels):
        mid = -h + (p + 0.5) * width
        for k in range(_GL_X.size):
            u = mid + 0.5 * width * _GL_X[k]
            g = _GL_W[k] * math.exp(base - u * (c + 0.5 * u))
            du = u - mean_u
            m2 += g * du * du
    return c + mean_u, m2 / m0


@nb.njit(cache=True, error_model="numpy")
def _truncate(j, draw, margin, cl_pi, cl_tau, cr_pi, cr_tau, qm, dm):
    """Truncation factor ``j``: from the difference's cavity (the difference factor's
    message ``P_j - P_{j+1}``) to the new message ``qm[j]``; returns how far the
    marginal of ``d_j`` (mean and standard deviation) moved, in units of the cavity's
    standard deviation ``s`` (the scale of the difference before the outcome; the
    marginal's own deviation can be as small as the draw margin)."""
    mean = cl_tau / cl_pi - cr_tau / cr_pi
    var = 1.0 / cl_pi + 1.0 / cr_pi
    s = math.sqrt(var)
    t = mean / s
    e = margin / s
    if draw:
        mz, vz = trunc_moments(-e - t, e - t)
        w = 1.0 - vz
    else:
        mz, w = win_vw(e - t)
    pi_c = 1.0 / var
    tau_c = mean / var
    # [Herbrich2006, Table 1]: marginal (pi_c, tau_c + sqrt(pi_c) v) / (1 - w)
    if w > 0.0 and w < 1.0:
        qm[j, 0] = pi_c * w / (1.0 - w)
        qm[j, 1] = (tau_c * w + mz / s) / (1.0 - w)
    elif w >= 1.0:  # no variance left (a degenerate margin): pin d_j, finitely
        qm[j, 0] = pi_c * 1e16
        qm[j, 1] = qm[j, 0] * (mean + s * mz)
    else:  # the outcome carries no information at this precision
        qm[j, 0] = 0.0
        qm[j, 1] = 0.0
    new_mean = mean + s * mz
    new_sd = s * math.sqrt(max(1.0 - w, 0.0))
    delta = max(abs(new_mean - dm[j, 0]), abs(new_sd - dm[j, 1])) / s
    dm[j, 0] = new_mean
    dm[j, 1] = new_sd
    return delta if delta == delta else math.inf


@nb.njit(cache=True, error_model="numpy")
def _cavities(j, n_teams, mt, lm, rm):
    """Natural parameters of ``P_j`` without ``lm[j]`` and of ``P_{j+1}`` without
    ``rm[j]`` (each team's sum message times the other difference's message)."""
    cl_pi = mt[j, 0]
    cl_tau = mt[j, 1]
    if j > 0:
        cl_pi += rm[j - 1, 0]
        cl_tau += rm[j - 1, 1]
    cr_pi = mt[j + 1, 0]
    cr_tau = mt[j + 1, 1]
    if j + 1 < n_teams - 1:
        cr_pi += lm[j + 1, 0]
        cr_tau += lm[j + 1, 1]
    return cl_pi, cl_tau, cr_pi, cr_tau


@nb.njit(cache=True, error_model="numpy")
def _set_sum(out, j, am, av, bm, bv):
    """``out[j]`` = natural parameters of ``N(am + bm, av + bv)`` (uniform if infinite)."""
    v = av + bv
    if not v < math.inf:
        out[j, 0] = 0.0
        out[j, 1] = 0.0
    else:
        out[j, 0] = 1.0 / v
        out[j, 1] = (am + bm) / v


@nb.njit(cache=True, error_model="numpy")
def _update(j, n_teams, draw, margin, mt, lm, rm, qm, dm, side):
    """Difference factor ``j`` down, its truncation up, then (``side`` 0) the message to
    ``P_j`` or (``side`` 1) the one to ``P_{j+1}`` (``side`` -1: neither).  Returns the
    truncation's move."""
    cl_pi, cl_tau, cr_pi, cr_tau = _cavities(j, n_teams, mt, lm, rm)
    delta = _truncate(j, draw[j], margin, cl_pi, cl_tau, cr_pi, cr_tau, qm, dm)
    _send(j, n_teams, mt, lm, rm, qm, side)
    return delta


@nb.njit(cache=True, error_model="numpy")
def _send(j, n_teams, mt, lm, rm, qm, side):
    """Difference factor ``j`` up: ``P_j = d_j + P_{j+1}`` (side 0) or
    ``P_{j+1} = P_j - d_j`` (side 1), from the current messages."""
    if side < 0:
        return
    cl_pi, cl_tau, cr_pi, cr_tau = _cavities(j, n_teams, mt, lm, rm)
    q_pi = qm[j, 0]
    if q_pi <= 0.0:
        if side == 0:
            lm[j, 0] = 0.0
            lm[j, 1] = 0.0
        else:
            rm[j, 0] = 0.0
            rm[j, 1] = 0.0
        return
    q_mean = qm[j, 1] / q_pi
    if side == 0:
        _set_sum(lm, j, q_mean, 1.0 / q_pi, cr_tau / cr_pi, 1.0 / cr_pi)
    else:
        _set_sum(rm, j, cl_tau / cl_pi, 1.0 / cl_pi, -q_mean, 1.0 / q_pi)


@nb.njit(cache=True, error_model="numpy")
def team_round(mu, sig, perf_sd, weight, offsets, rank, margin, tol, max_sweeps):
    """One team round of TrueSkill ([Herbrich2006]) by expectation propagation.

    Parameters
    ----------
    mu, sig:
        Each member's prior skill, ``sig`` already widened by the drift; rows in
        standings order, the members of a team adjacent.
    perf_sd:
        Standard deviation ``b`` of a member's performance around the skill.
    weight:
        Each member's weight ``w_i`` in (0, 1] in its team's performance
        ``P_t = sum w_i p_i``.
    offsets:
        ``T + 1`` row offsets: team ``t`` is rows ``offsets[t]:offsets[t + 1]``,
        teams best first.
    rank:
        Per team its place (non-decreasing); adjacent teams of equal rank drew.
    margin:
        Draw margin ``eps``: a win is ``d > eps``, a draw ``|d| <= eps``.
    tol, max_sweeps:
        Stop once no difference marginal moved (mean or deviation) by more than
        ``tol`` times the deviation of its cavity in a sweep, or after
        ``max_sweeps`` sweeps.

    Returns
    -------
    new_mu, new_sig, perf, sweeps, converged
        Each member's posterior skill, the posterior mean of its performance ``p_i``,
        the sweeps run and whether ``tol`` was met.
    """
    n = mu.size
    n_teams = offsets.size - 1
    new_mu = mu.copy()
    new_sig = sig.copy()
    perf = mu.copy()
    if n_teams < 2:
        return new_mu, new_sig, perf, 0, True
    b2 = perf_sd * perf_sd
    pv = np.empty(n)  # variance of the message likelihood -> p_i: sig^2 + b^2
    for i in range(n):
        pv[i] = sig[i] * sig[i] + b2
    mt = np.zeros((n_teams, 2))
    team_mean = np.zeros(n_teams)
    team_var = np.zeros(n_teams)
    for t in range(n_teams):
        for i in range(offsets[t], offsets[t + 1]):
            team_mean[t] += weight[i] * mu[i]
            team_var[t] += weight[i] * weight[i] * pv[i]
        mt[t, 0] = 1.0 / team_var[t]
        mt[t, 1] = team_mean[t] / team_var[t]
    nd = n_teams - 1
    draw = np.empty(nd, dtype=np.bool_)
    for j in range(nd):
        draw[j] = rank[j] == rank[j + 1]
    lm = np.zeros((nd, 2))
    rm = np.zeros((nd, 2))
    qm = np.zeros((nd, 2))
    dm = np.full((nd, 2), math.nan)
    sweeps = 0
    converged = False
    if nd == 1:
        _update(0, n_teams, draw, margin, mt, lm, rm, qm, dm, -1)
        sweeps = 1
        converged = True
    else:
        while sweeps < max_sweeps:
            sweeps += 1
            delta = 0.0
            for j in range(nd - 1):
                delta = max(delta, _update(j, n_teams, draw, margin, mt, lm, rm, qm, dm, 1))
            for j in range(nd - 1, 0, -1):
                delta = max(delta, _update(j, n_teams, draw, margin, mt, lm, rm, qm, dm, 0))
            if delta <= tol:
                converged = True
                break
    _send(0, n_teams, mt, lm, rm, qm, 0)
    _send(nd - 1, n_teams, mt, lm, rm, qm, 1)
    o_mean = np.empty(n)
    o_var = np.empty(n)
    # members: the team's message P_t (product of its difference messages) through
    # the weighted sum, p_i = (P_t - sum_{k != i} w_k p_k) / w_i, then the noise b
    for t in range(n_teams):
        c_pi = 0.0
        c_tau = 0.0
        if t > 0:
            c_pi += rm[t - 1, 0]
            c_tau += rm[t - 1, 1]
        if t < nd:
            c_pi += lm[t, 0]
            c_tau += lm[t, 1]
        if not c_pi > 0.0:
            continue
        c_mean = c_tau / c_pi
        c_var = 1.0 / c_pi
        a = offsets[t]
        e = offsets[t + 1]
        # the other members' terms as prefix + suffix sums (no cancellation)
        for i in range(a, e):
            o_mean[i] = 0.0
            o_var[i] = 0.0
        acc_m = 0.0
        acc_v = 0.0
        for i in range(a, e):
            o_mean[i] += acc_m
            o_var[i] += acc_v
            acc_m += weight[i] * mu[i]
            acc_v += weight[i] * weight[i] * pv[i]
        acc_m = 0.0
        acc_v = 0.0
        for i in range(e - 1, a - 1, -1):
            o_mean[i] += acc_m
            o_var[i] += acc_v
            acc_m += weight[i] * mu[i]
            acc_v += weight[i] * weight[i] * pv[i]
        for i in range(a, e):
            wi = weight[i]
            u_mean = (c_mean - o_mean[i]) / wi
            u_var = (c_var + o_var[i]) / (wi * wi)
            # skill: prior (mu, sig^2) times N(u_mean, u_var + b^2)
            s2 = sig[i] * sig[i]
            m_var = u_var + b2
            gain = s2 / (s2 + m_var)
            new_mu[i] = mu[i] + gain * (u_mean - mu[i])
            new_sig[i] = sig[i] / math.sqrt(1.0 + s2 / m_var)  # never above sig
            perf[i] = mu[i] + pv[i] / (pv[i] + u_var) * (u_mean - mu[i])
    return new_mu, new_sig, perf, sweeps, converged
