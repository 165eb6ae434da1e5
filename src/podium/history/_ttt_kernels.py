"""Numba kernels of TrueSkill Through Time (see :mod:`podium.history.ttt`).

A Gaussian is a pair ``(mu, sigma)``; ``sigma = inf`` is the uniform message
``N_inf`` of [Dangauthier2007].  Products and quotients go through the natural
parameters ``tau = mu / sigma^2`` and ``pi = 1 / sigma^2`` (Eq. 3 of the paper's
message passing), in the order the ``trueskillthroughtime`` package uses, so that the
converged posteriors agree with it to rounding.  The error function is the package's
Chebyshev approximation (Numerical Recipes' ``erfcc``, relative error < 1.2e-7): the
fixed point depends on it at that level.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

INF = math.inf
SQRT2 = math.sqrt(2.0)
SQRT2PI = math.sqrt(2.0 * math.pi)
#: Inner expectation-propagation sweeps of one multi-team game and their tolerance.
GAME_ITERATIONS = 10
GAME_EPSILON = 1e-6
#: Sweeps and tolerance of a lone batch's own convergence (``Batch.convergence``).
BATCH_ITERATIONS = 20
BATCH_EPSILON = 1e-6
#: Status flags of a run.
FLAG_NEGATIVE_PRECISION = 1


@nb.njit(cache=True, inline="always")
def erfc(x: float) -> float:
    """Complementary error function, Chebyshev fit (Numerical Recipes' ``erfcc``)."""
    z = abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    a = -0.82215223 + t * 0.17087277
    b = 1.48851587 + t * a
    c = -1.13520398 + t * b
    d = 0.27886807 + t * c
    e = -0.18628806 + t * d
    f = 0.09678418 + t * e
    g = 0.37409196 + t * f
    h = 1.00002368 + t * g
    r = t * math.exp(-z * z - 1.26551223 + t * h)
    return r if not (x < 0) else 2.0 - r


@nb.njit(cache=True)
def erfcinv(y: float) -> float:
    """Inverse of :func:`erfc` (three Newton-Halley steps from a rational guess)."""
    if y >= 2:
        return -INF
    if y == 0:
        return INF
    if not (y < 1):
        y = 2 - y
    t = math.sqrt(-2 * math.log(y / 2.0))
    x = -0.70711 * ((2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t)
    for _ in range(3):
        err = erfc(x) - y
        x += err / (1.12837916709551257 * math.exp(-(x ** 2)) - x * err)
    return x if (y < 1) else -x


@nb.njit(cache=True, inline="always")
def cdf(x: float, mu: float, sigma: float) -> float:
    z = -(x - mu) / (sigma * SQRT2)
    return 0.5 * erfc(z)


@nb.njit(cache=True, inline="always")
def pdf(x: float, mu: float, sigma: float) -> float:
    return (SQRT2PI * sigma) ** -1 * math.exp(-((x - mu) ** 2) / (2 * sigma ** 2))


@nb.njit(cache=True)
def draw_margin(p_draw: float, sd: float) -> float:
    """The draw margin ``epsilon`` with ``P(|d| < epsilon) = p_draw`` for ``d ~ N(0, sd^2)``."""
    return abs(0.0 - sd * SQRT2 * erfcinv(2 * (0.5 - p_draw / 2)))


@nb.njit(cache=True)
def truncate(mu: float, sigma: float, margin: float, tie: bool) -> tuple[float, float]:
    """Moments of ``N(mu, sigma^2)`` truncated to ``d > margin`` (a win) or
    ``|d| < margin`` (a draw): ``v`` and ``w`` of [Herbrich2006], Eq. 2-4."""
    if not tie:
        alpha = (margin - mu) / sigma
        v = pdf(-alpha, 0.0, 1.0) / cdf(-alpha, 0.0, 1.0)
        w = v * (v + (-alpha))
    else:
        alpha = (-margin - mu) / sigma
        beta = (margin - mu) / sigma
        den = cdf(beta, 0.0, 1.0) - cdf(alpha, 0.0, 1.0)
        v = (pdf(alpha, 0.0, 1.0) - pdf(beta, 0.0, 1.0)) / den
        u = (alpha * pdf(alpha, 0.0, 1.0) - beta * pdf(beta, 0.0, 1.0)) / den
        w = -(u - v ** 2)
    return mu + sigma * v, sigma * math.sqrt(1 - w)


@nb.njit(cache=True, inline="always")
def g_tau(mu: float, s: float) -> float:
    return mu * (s ** -2.0) if s > 0.0 else INF


@nb.njit(cache=True, inline="always")
def g_pi(s: float) -> float:
    return s ** -2.0 if s > 0.0 else INF


@nb.njit(cache=True, inline="always")
def from_natural(tau: float, pi: float, flag: np.ndarray) -> tuple[float, float]:
    """``(mu, sigma)`` from ``(tau, pi)``; a negative precision is flagged."""
    if pi > 0.0:
        return tau / pi, math.sqrt(1 / pi)
    if pi + 1e-5 < 0.0:
        flag[0] |= FLAG_NEGATIVE_PRECISION
    return 0.0, INF


@nb.njit(cache=True, inline="always")
def g_mul(am: float, as_: float, bm: float, bs: float, flag: np.ndarray) -> tuple[float, float]:
    """Product of two Gaussian densities (normalised)."""
    if as_ == 0.0 or bs == 0.0:
        if as_ == 0.0:
            return am / ((as_ ** 2 / bs ** 2) + 1), 0.0
        return bm / ((bs ** 2 / as_ ** 2) + 1), 0.0
    return from_natural(g_tau(am, as_) + g_tau(bm, bs), g_pi(as_) + g_pi(bs), flag)


@nb.njit(cache=True, inline="always")
def g_div(am: float, as_: float, bm: float, bs: float, flag: np.ndarray) -> tuple[float, float]:
    """Quotient of two Gaussian densities (normalised)."""
    return from_natural(g_tau(am, as_) - g_tau(bm, bs), g_pi(as_) - g_pi(bs), flag)


@nb.njit(cache=True, inline="always")
def g_add(am: float, as_: float, bm: float, bs: float) -> tuple[float, float]:
    """Sum of two independent Gaussian variables."""
    return am + bm, math.sqrt(as_ ** 2 + bs ** 2)


@nb.njit(cache=True, inline="always")
def g_sub(am: float, as_: float, bm: float, bs: float) -> tuple[float, float]:
    """Difference of two independent Gaussian variables."""
    return am - bm, math.sqrt(as_ ** 2 + bs ** 2)


#: Rows of the work array of :func:`game_likelihoods` (one column per team).
W_PERF_MU, W_PERF_SIG, W_MARGIN, W_TIE, W_LOSE_M, W_LOSE_S, W_WIN_M, W_WIN_S, W_DL_M, \
    W_DL_S = range(10)
WORK_ROWS = 10


@nb.njit(cache=True)
def game_likelihoods(pr_mu: np.ndarray, pr_sig: np.ndarray, weight: np.ndarray,
                     team_rows: np.ndarray, place: np.ndarray, beta: float, p_draw: float,
                     out_mu: np.ndarray, out_sig: np.ndarray, work: np.ndarray,
                     flag: np.ndarray) -> None:
    """The likelihood message of one game to each member's skill ([Dangauthier2007], Fig. 1;
    the game's factor graph of [Herbrich2006]).

    ``pr_mu, pr_sig``: each row's within-batch prior (its posterior without this game's
    message); ``team_rows``: the teams' row offsets (from the game's first row), best
    team first; ``place``: each team's place (tied teams share it).  Two teams of unit
    weights use the closed form of the two-team game; otherwise expectation propagation
    along the chain of adjacent performance differences (at most ``GAME_ITERATIONS``
    sweeps).  ``work``: scratch of ``WORK_ROWS`` rows and a column per team.
    """
    n_t = place.size
    # teams in the order of their results, ties in the order given (the package's
    # stable sort): the history lists them best first, so in the given order
    unit = n_t == 2
    base = team_rows[0]
    for e in range(n_t):
        pm, ps = 0.0, 0.0
        for r in range(team_rows[e] - base, team_rows[e + 1] - base):
            w = weight[r]
            if w != 1.0:
                unit = False
            xm, xs = w * pr_mu[r], abs(w) * math.sqrt(pr_sig[r] ** 2 + beta ** 2)
            pm, ps = g_add(pm, ps, xm, xs)
        work[W_PERF_MU, e] = pm
        work[W_PERF_SIG, e] = ps
    for e in range(n_t - 1):
        work[W_TIE, e] = 1.0 if place[e] == place[e + 1] else 0.0
        if p_draw == 0.0:
            work[W_MARGIN, e] = 0.0
        else:
            sb = 0.0
            for _ in range(team_rows[e], team_rows[e + 1]):
                sb += beta ** 2
            for _ in range(team_rows[e + 1], team_rows[e + 2]):
                sb += beta ** 2
            work[W_MARGIN, e] = draw_margin(p_draw, math.sqrt(sb))
    if unit:
        _two_teams(pr_mu, pr_sig, team_rows, work, out_mu, out_sig)
    else:
        _many_teams(pr_mu, pr_sig, weight, team_rows, n_t, work, out_mu, out_sig, flag)


@nb.njit(cache=True)
def _two_teams(pr_mu: np.ndarray, pr_sig: np.ndarray, team_rows: np.ndarray,
               work: np.ndarray, out_mu: np.ndarray, out_sig: np.ndarray) -> None:
    """Closed form of a two-team game: the truncated difference ``d = p_0 - p_1``
    divided by its prior gives each member's message."""
    dm, ds = g_sub(work[W_PERF_MU, 0], work[W_PERF_SIG, 0], work[W_PERF_MU, 1],
                   work[W_PERF_SIG, 1])
    mt, st = truncate(dm, ds, work[W_MARGIN, 0], work[W_TIE, 0] != 0.0)
    if ds == st:
        delta_div = ds ** 2 * mt - st ** 2 * dm
        theta2 = INF
    else:
        delta_div = (ds ** 2 * mt - st ** 2 * dm) / (ds ** 2 - st ** 2)
        theta2 = (st ** 2 * ds ** 2) / (ds ** 2 - st ** 2)
    base = team_rows[0]
    for i in range(2):
        sign = -1.0 if i == 1 else 1.0
        for r in range(team_rows[i] - base, team_rows[i + 1] - base):
            out_mu[r] = 0.0 if ds == st else pr_mu[r] + (delta_div - dm) * sign
            out_sig[r] = math.sqrt(theta2 + ds ** 2 - pr_sig[r] ** 2)


@nb.njit(cache=True)
def _many_teams(pr_mu: np.ndarray, pr_sig: np.ndarray, weight: np.ndarray,
                team_rows: np.ndarray, n_t: int, work: np.ndarray, out_mu: np.ndarray,
                out_sig: np.ndarray, flag: np.ndarray) -> None:
    """Expectation propagation on the chain of the sorted teams' performance
    differences ([Dangauthier2007], Sec. 3; [Herbrich2006], Fig. 1), then each member's
    message from its team's likelihood by excluding the member's own performance."""
    n_d = n_t - 1
    perf_mu, perf_sig = work[W_PERF_MU], work[W_PERF_SIG]
    margin, tie = work[W_MARGIN], work[W_TIE]
    lose_m, lose_s, win_m, win_s = work[W_LOSE_M], work[W_LOSE_S], work[W_WIN_M], work[W_WIN_S]
    dl_m, dl_s = work[W_DL_M], work[W_DL_S]
    for e in range(n_t):
        lose_m[e], lose_s[e], win_m[e], win_s[e] = 0.0, INF, 0.0, INF
        dl_m[e], dl_s[e] = 0.0, INF

    def post_win(e):  # prior * likelihood_lose * likelihood_draw (N_inf)
        m, s = g_mul(perf_mu[e], perf_sig[e], lose_m[e], lose_s[e], flag)
        return g_mul(m, s, 0.0, INF, flag)

    def post_lose(e):  # prior * likelihood_win * likelihood_draw (N_inf)
        m, s = g_mul(perf_mu[e], perf_sig[e], win_m[e], win_s[e], flag)
        return g_mul(m, s, 0.0, INF, flag)

    def diff_lik(e):
        am, as_ = post_win(e)
        bm, bs = post_lose(e + 1)
        pm, ps = g_sub(am, as_, bm, bs)
        tm, ts = truncate(pm, ps, margin[e], tie[e] != 0.0)
        return g_div(tm, ts, pm, ps, flag)

    s0, s1 = INF, INF
    it = 0
    while (s0 > GAME_EPSILON or s1 > GAME_EPSILON) and it < GAME_ITERATIONS:
        s0, s1 = 0.0, 0.0
        for e in range(n_d - 1):
            dl_m[e], dl_s[e] = diff_lik(e)
            am, as_ = post_win(e)
            nm, ns = g_sub(am, as_, dl_m[e], dl_s[e])
            s0 = max(s0, abs(lose_m[e + 1] - nm))
            s1 = max(s1, abs(lose_s[e + 1] - ns))
            lose_m[e + 1], lose_s[e + 1] = nm, ns
        for e in range(n_d - 1, 0, -1):
            dl_m[e], dl_s[e] = diff_lik(e)
            bm, bs = post_lose(e + 1)
            nm, ns = g_add(bm, bs, dl_m[e], dl_s[e])
            s0 = max(s0, abs(win_m[e] - nm))
            s1 = max(s1, abs(win_s[e] - ns))
            win_m[e], win_s[e] = nm, ns
        it += 1
    if n_d == 1:
        dl_m[0], dl_s[0] = diff_lik(0)
    bm, bs = post_lose(1)
    win_m[0], win_s[0] = g_add(bm, bs, dl_m[0], dl_s[0])
    am, as_ = post_win(n_t - 2)
    lose_m[n_t - 1], lose_s[n_t - 1] = g_sub(am, as_, dl_m[n_d - 1], dl_s[n_d - 1])
    base = team_rows[0]
    for e in range(n_t):
        # the team's likelihood: win * lose * draw (N_inf)
        lm, ls = g_mul(win_m[e], win_s[e], lose_m[e], lose_s[e], flag)
        lm, ls = g_mul(lm, ls, 0.0, INF, flag)
        for r in range(team_rows[e] - base, team_rows[e + 1] - base):
            w = weight[r]
            # performance of the team without the member's skill (its noise stays)
            xm = perf_mu[e] - w * pr_mu[r]
            xs = math.sqrt(perf_sig[e] ** 2 - (abs(w) * pr_sig[r]) ** 2)
            m, s = g_sub(lm, ls, xm, xs)
            inv = 1.0 / w
            out_mu[r] = inv * m
            out_sig[r] = abs(inv) * s


@nb.njit(cache=True)
def posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s, flag):
    """Slot ``s``'s posterior: its within-batch likelihood times its backward and
    forward messages (the package's ``Batch.posterior``)."""
    m, sd = g_mul(lik_m[s], lik_s[s], bwd_m[s], bwd_s[s], flag)
    return g_mul(m, sd, fwd_m[s], fwd_s[s], flag)


@nb.njit(cache=True)
def batch_sweep(b: int, batch_contests: np.ndarray, contest_teams: np.ndarray,
                team_rows: np.ndarray, team_place: np.ndarray, weight: np.ndarray,
                slot: np.ndarray, beta: float, p_draw: float, fwd_m: np.ndarray,
                fwd_s: np.ndarray, bwd_m: np.ndarray, bwd_s: np.ndarray, lik_m: np.ndarray,
                lik_s: np.ndarray, item_m: np.ndarray, item_s: np.ndarray, rows: np.ndarray,
                work: np.ndarray, flag: np.ndarray) -> None:
    """One pass over the games of batch ``b`` (``Batch.iteration``): each game's
    messages from the members' within-batch priors, replacing the game's old ones.
    ``rows``: scratch of 4 rows and a column per row of the largest game; ``work``: the
    scratch of :func:`game_likelihoods`."""
    for c in range(batch_contests[b], batch_contests[b + 1]):
        game_sweep(c, contest_teams, team_rows, team_place, weight, slot, beta, p_draw,
                   fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m, item_s, rows, work, flag)


@nb.njit(cache=True)
def game_sweep(c: int, contest_teams: np.ndarray, team_rows: np.ndarray,
               team_place: np.ndarray, weight: np.ndarray, slot: np.ndarray, beta: float,
               p_draw: float, fwd_m: np.ndarray, fwd_s: np.ndarray, bwd_m: np.ndarray,
               bwd_s: np.ndarray, lik_m: np.ndarray, lik_s: np.ndarray, item_m: np.ndarray,
               item_s: np.ndarray, rows: np.ndarray, work: np.ndarray,
               flag: np.ndarray) -> None:
    """Game ``c``'s messages from its members' within-batch priors (their posteriors
    without its old messages), replacing its old ones in their slots' ``lik``."""
    pr_m, pr_s, out_m, out_s = rows[0], rows[1], rows[2], rows[3]
    t0, t1 = contest_teams[c], contest_teams[c + 1]
    r0, r1 = team_rows[t0], team_rows[t1]
    for r in range(r0, r1):
        s = slot[r]
        pm, ps = posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s, flag)
        pr_m[r - r0], pr_s[r - r0] = g_div(pm, ps, item_m[r], item_s[r], flag)
    game_likelihoods(pr_m, pr_s, weight[r0:r1], team_rows[t0:t1 + 1],
                     team_place[t0:t1], beta, p_draw, out_m, out_s, work, flag)
    for r in range(r0, r1):
        s = slot[r]
        m, sd = g_div(lik_m[s], lik_s[s], item_m[r], item_s[r], flag)
        lik_m[s], lik_s[s] = g_mul(m, sd, out_m[r - r0], out_s[r - r0], flag)
        item_m[r], item_s[r] = out_m[r - r0], out_s[r - r0]


@nb.njit(cache=True)
def _batch_step(b0: int, b1: int, old_m: np.ndarray, old_s: np.ndarray, lik_m, lik_s, bwd_m,
                bwd_s, fwd_m, fwd_s, flag) -> tuple[float, float]:
    """The largest change of a posterior of slots ``b0..b1-1`` since :func:`_snapshot`."""
    s0, s1 = 0.0, 0.0
    for s in range(b0, b1):
        m, sd = posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s, flag)
        s0 = max(s0, abs(old_m[s] - m))
        s1 = max(s1, abs(old_s[s] - sd))
    return s0, s1


@nb.njit(cache=True)
def _snapshot(b0: int, b1: int, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s,
              flag) -> None:
    """Keep the posteriors of slots ``b0..b1-1`` in ``old_m, old_s``."""
    for s in range(b0, b1):
        old_m[s], old_s[s] = posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s, flag)


@nb.njit(cache=True)
def ttt_run(batch_contests: np.ndarray, batch_slots: np.ndarray, batch_time: np.ndarray,
            slot_agent: np.ndarray, contest_teams: np.ndarray, team_rows: np.ndarray,
            team_place: np.ndarray, weight: np.ndarray, slot: np.ndarray, n_agents: int,
            mu: float, sigma: float, beta: float, gamma: float, p_draw: float,
            epsilon: float, iterations: int):
    """TrueSkill Through Time on a whole history ([Dangauthier2007], Sec. 3).

    First the forward pass (TrueSkill filtering, ``History.trueskill``), then up to
    ``iterations`` sweeps, each a backward pass from the last batch to the first
    (every batch receiving its players' next-batch messages, decayed by
    ``gamma^2`` per day, Eq. 5) and a forward pass (the previous-batch messages),
    until no posterior mean or deviation moves by more than ``epsilon``.

    Returns ``(post_mu, post_sigma, step_mu, step_sigma, sweeps, flag, messages)``:
    each slot's (batch, player) posterior, the last sweep's largest change, the sweeps
    done and the messages ``(fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m, item_s)``
    (per slot, then per row) from which :func:`ttt_update` goes on.
    """
    n_b = batch_time.size
    n_s = slot_agent.size
    n_r = slot.size
    flag = np.zeros(1, dtype=np.int64)
    fwd_m = np.zeros(n_s)
    fwd_s = np.full(n_s, INF)
    bwd_m = np.zeros(n_s)
    bwd_s = np.full(n_s, INF)
    lik_m = np.zeros(n_s)
    lik_s = np.full(n_s, INF)
    elapsed = np.zeros(n_s)
    item_m = np.zeros(n_r)
    item_s = np.full(n_r, INF)
    msg_m = np.zeros(n_agents)
    msg_s = np.full(n_agents, INF)
    msg_none = np.ones(n_agents, dtype=np.bool_)
    last = np.full(n_agents, -INF)
    old_m = np.empty(n_s)
    old_s = np.empty(n_s)
    max_rows, max_teams = 1, 2
    for c in range(contest_teams.size - 1):
        max_teams = max(max_teams, contest_teams[c + 1] - contest_teams[c])
        max_rows = max(max_rows, team_rows[contest_teams[c + 1]] - team_rows[contest_teams[c]])
    rows = np.empty((4, max_rows))
    work = np.empty((WORK_ROWS, max_teams))
    # forward pass: TrueSkill, batch by batch
    for b in range(n_b):
        t = batch_time[b]
        for s in range(batch_slots[b], batch_slots[b + 1]):
            a = slot_agent[s]
            el = 0.0 if last[a] == -INF else t - last[a]
            elapsed[s] = el
            if msg_none[a]:
                fwd_m[s], fwd_s[s] = mu, sigma
            else:
                fwd_m[s], fwd_s[s] = msg_m[a], math.sqrt(msg_s[a] ** 2 + el * gamma ** 2)
        batch_sweep(b, batch_contests, contest_teams, team_rows, team_place, weight, slot,
                    beta, p_draw, fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m, item_s,
                    rows, work, flag)
        for s in range(batch_slots[b], batch_slots[b + 1]):
            a = slot_agent[s]
            last[a] = t
            msg_m[a], msg_s[a] = g_mul(fwd_m[s], fwd_s[s], lik_m[s], lik_s[s], flag)
            msg_none[a] = False
    s0, s1 = INF, INF
    sweeps = 0
    while (s0 > epsilon or s1 > epsilon) and sweeps < iterations:
        s0, s1 = 0.0, 0.0
        msg_none[:] = True
        for j in range(n_b - 2, -1, -1):
            for s in range(batch_slots[j + 1], batch_slots[j + 2]):
                a = slot_agent[s]
                m, sd = g_mul(lik_m[s], lik_s[s], bwd_m[s], bwd_s[s], flag)
                msg_m[a], msg_s[a] = m, math.sqrt(sd ** 2 + elapsed[s] * gamma ** 2)
                msg_none[a] = False
            b0, b1 = batch_slots[j], batch_slots[j + 1]
            _snapshot(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, flag)
            for s in range(b0, b1):
                a = slot_agent[s]
                if msg_none[a]:
                    bwd_m[s], bwd_s[s] = 0.0, INF
                else:
                    bwd_m[s], bwd_s[s] = msg_m[a], msg_s[a]
            batch_sweep(j, batch_contests, contest_teams, team_rows, team_place, weight,
                        slot, beta, p_draw, fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m,
                        item_s, rows, work, flag)
            d0, d1 = _batch_step(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m,
                                 fwd_s, flag)
            s0, s1 = max(s0, d0), max(s1, d1)
        msg_none[:] = True
        for j in range(1, n_b):
            for s in range(batch_slots[j - 1], batch_slots[j]):
                a = slot_agent[s]
                msg_m[a], msg_s[a] = g_mul(fwd_m[s], fwd_s[s], lik_m[s], lik_s[s], flag)
                msg_none[a] = False
            b0, b1 = batch_slots[j], batch_slots[j + 1]
            _snapshot(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, flag)
            for s in range(b0, b1):
                a = slot_agent[s]
                if msg_none[a]:
                    fwd_m[s], fwd_s[s] = mu, sigma
                else:
                    fwd_m[s] = msg_m[a]
                    fwd_s[s] = math.sqrt(msg_s[a] ** 2 + elapsed[s] * gamma ** 2)
            batch_sweep(j, batch_contests, contest_teams, team_rows, team_place, weight,
                        slot, beta, p_draw, fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s, item_m,
                        item_s, rows, work, flag)
            d0, d1 = _batch_step(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m,
                                 fwd_s, flag)
            s0, s1 = max(s0, d0), max(s1, d1)
        if n_b == 1:
            b0, b1 = batch_slots[0], batch_slots[1]
            first_m = np.empty(n_s)
            first_s = np.empty(n_s)
            _snapshot(b0, b1, first_m, first_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, flag)
            i0, i1 = INF, INF
            k = 0
            while (i0 > BATCH_EPSILON or i1 > BATCH_EPSILON) and k < BATCH_ITERATIONS:
                _snapshot(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s,
                          flag)
                batch_sweep(0, batch_contests, contest_teams, team_rows, team_place, weight,
                            slot, beta, p_draw, fwd_m, fwd_s, bwd_m, bwd_s, lik_m, lik_s,
                            item_m, item_s, rows, work, flag)
                i0, i1 = _batch_step(b0, b1, old_m, old_s, lik_m, lik_s, bwd_m, bwd_s,
                                     fwd_m, fwd_s, flag)
                k += 1
            d0, d1 = _batch_step(b0, b1, first_m, first_s, lik_m, lik_s, bwd_m, bwd_s, fwd_m,
                                 fwd_s, flag)
            s0, s1 = max(s0, d0), max(s1, d1)
        sweeps += 1
    post_m = np.empty(n_s)
    post_s = np.empty(n_s)
    for s in range(n_s):
        post_m[s], post_s[s] = posterior(lik_m, lik_s, bwd_m, bwd_s, fwd_m, fwd_s, s, flag)
    return post_m, post_s, s0, s1, sweeps, flag[0], (fwd_m, fwd_s, bwd_m, bwd_s, lik_m,
                                                     lik_s, item_m, item_s)
