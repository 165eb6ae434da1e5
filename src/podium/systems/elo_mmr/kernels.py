"""Numba kernels of the Elo-MMR family (see :mod:`podium.systems.elo_mmr`).

Kept apart from the user-facing dataclass so that the algorithm reads top-down
there and the loops live here.  Equation numbers refer to [EbtekarLiu2021].
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.intrinsics import PREFETCH_AHEAD, prefetch
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.robust import robust_average_zero
from podium.core.numerics.special import (
    TANH_MULTIPLIER,
    normal_cdf,
    normal_hazard,
    normal_pdf,
    tanh_sech2,
)
from podium.core.numerics.terms import LOGISTIC
from podium.systems.base.factor_pool_kernels import (
    Blocks,
    Factors,
    Normal,
)

SECS_PER_DAY = 86400.0
#: weight of a tanh term = WEIGHT_OF_TANH * w_arg * w_out  (= 1/delta^2 when fresh)
WEIGHT_OF_TANH = 2.0 / (TANH_MULTIPLIER * TANH_MULTIPLIER)
#: below this lazy scale, fold it into the stored factor weights (avoids underflow)
_RESCALE_BELOW = 1e-150


class LazyWeights(NamedTuple):
    """Elo-MMR's per-player lazy scale of the logistic weights and the sums
    ``sum w_arg w_out`` and ``sum w_out`` of its live factors (before scaling)."""

    scale: np.ndarray
    sum_aw: np.ndarray
    sum_w: np.ndarray


class MergedTerms(NamedTuple):
    """Opponent terms merged by (mu, sigma) bucket, with each one's ranks in CSR form
    (``ranks[offs[q]:offs[q + 1]]``), as :func:`merge_terms` returns them."""

    mu: np.ndarray
    sig: np.ndarray
    offs: np.ndarray
    ranks: np.ndarray


@nb.njit(cache=True, inline="always")
def drift_variance(drift_per_day: float, delta_secs: float) -> float:
    """The variance a player's skill gains in ``delta_secs`` seconds without a round:
    ``drift_per_day * days``, the time part of the diffusion's ``gamma^2`` (Sec. 4 of
    [EbtekarLiu2021]; :func:`round_weights` adds it, :func:`drifted_sigmas` applies it
    alone for ratings read as of a time)."""
    return drift_per_day * delta_secs / SECS_PER_DAY


@nb.njit(cache=True)
def drifted_sigmas(sigma, drift_per_day, delta_secs):
    """``sqrt(sigma^2 + drift_variance(drift_per_day, delta_secs))`` per player: the
    uncertainty after ``delta_secs`` seconds of drift (``sigma`` itself when no time
    passed or ``drift_per_day`` is 0)."""
    n = sigma.size
    out = np.empty(n)
    for i in range(n):
        v = drift_variance(drift_per_day, delta_secs[i])
        out[i] = sigma[i] if v == 0.0 else math.sqrt(sigma[i] * sigma[i] + v)
    return out


@nb.njit(cache=True)
def round_weights(played, contest_weight, weight_limit, noob_delay, sig_limit, drift_per_day,
                  delta_secs):
    """Per participant: weight w, performance spread beta and drift gamma.

    ``w = contest_weight * weight_limit * noob_delay[n]`` (``n`` = earlier rounds),
    ``beta = sqrt((1 + 1/w) sig_limit^2 + drift_per_day / w)`` and
    ``gamma = sqrt(w sig_limit^2 + drift_per_day * days)``.  With the defaults
    beta = 80 sqrt(6) ~ 195.96 and gamma = 80 sqrt(0.2) ~ 35.78, so that the
    uncertainty of a regular player tends to ``sig_limit`` (Eq. 8 with Alg. 2).
    """
    n = played.size
    beta = np.empty(n)
    gamma = np.empty(n)
    for i in range(n):
        w = contest_weight * weight_limit
        if played[i] < noob_delay.size:
            w *= noob_delay[played[i]]
        beta[i] = math.sqrt((1.0 + 1.0 / w) * sig_limit * sig_limit + drift_per_day / w)
        gamma[i] = math.sqrt(w * sig_limit * sig_limit
                             + drift_variance(drift_per_day, delta_secs[i]))
    return beta, gamma


#: Rounds of fewer participants than this take the serial twins of the parallel
#: kernels (``*_serial``, the same numbers): calling a ``parallel=True`` kernel costs
#: ~55 us on the project's 2-core machine even for eight players, several times the
#: round's arithmetic.
PARALLEL_FROM = 64


#: The parallel kernels hand their participants to the threads in this many ranges,
#: one call each (:func:`_update_range`): enough for a balanced share on any machine
#: (the threads take equal numbers of ranges), few enough that a call costs nothing.
#: (Not ``4 * nb.get_num_threads()``: a kernel that reads it cannot be cached.)
PARALLEL_RANGES = 256


@nb.njit(cache=True, inline="always")
def _chunks(n: int) -> int:
    """How many ranges a parallel kernel splits ``n`` participants into."""
    return max(1, min(n, PARALLEL_RANGES))


@nb.njit(cache=True)
def diffuse(players: np.ndarray, post_mu: np.ndarray, post_sig: np.ndarray, gamma: np.ndarray,
            rho: float, collapse: bool, normal: Normal, lazy: LazyWeights, blocks: Blocks,
            pool: Factors) -> np.ndarray:
    """Skill drift before a round: Algorithm 2 (pseudodiffusion with transfer speed rho).

    ``kappa = (sigma_old / sigma_new)^2`` with ``sigma_new = hypot(sigma_old, gamma)``;
    transfer = ``kappa^rho``.  The normal factor keeps ``transfer * w0`` and
    receives ``(1 - transfer) * (w0 + sum of logistic weights)`` centred at the
    current rating; everything is then scaled by kappa, and every logistic
    factor's weight by ``transfer * kappa`` (kept as one lazy per-player scale).
    The rating mu does not move (Theorem 4.1, rating preservation).

    With ``collapse`` (rho = infinity, or the Gaussian variant) the posterior is
    replaced by the normal ``N(mu, sigma_new^2)`` and the logistic factors are
    dropped: Elo-MMR(inf) / Elo-MMchi.

    Returns the new sigma of each participant.
    """
    n = players.size
    new_sig = np.empty(n)
    nf_mu, nf_w = normal
    scale, sum_aw, sum_w = lazy
    fb_base, _, fb_start, fb_len = blocks
    f_wout = pool.wout
    for k in range(n):
        if k + PREFETCH_AHEAD < n:  # the rows of a later participant, fetched meanwhile
            j = players[k + PREFETCH_AHEAD]
            prefetch(nf_w, j)
            prefetch(nf_mu, j)
            prefetch(scale, j)
            prefetch(sum_aw, j)
        i = players[k]
        s_old = post_sig[k]
        s_new = math.hypot(s_old, gamma[k])
        new_sig[k] = s_new
        if collapse:
            nf_mu[i] = post_mu[k]
            nf_w[i] = 1.0 / (s_new * s_new)
            fb_start[i] = 0
            fb_len[i] = 0
            scale[i] = 1.0
            sum_aw[i] = 0.0
            sum_w[i] = 0.0
            continue
        kappa = (s_old / s_new) ** 2
        transfer = kappa ** rho if rho > 0.0 else 1.0
        w0 = nf_w[i]
        logistic_w = WEIGHT_OF_TANH * scale[i] * sum_aw[i]
        from_norm = transfer * w0
        from_transfer = (1.0 - transfer) * (w0 + logistic_w)
        total = from_norm + from_transfer
        nf_mu[i] = (from_norm * nf_mu[i] + from_transfer * post_mu[k]) / total
        nf_w[i] = kappa * total
        scale[i] *= transfer * kappa
        if scale[i] < _RESCALE_BELOW and fb_len[i] > 0:
            b = fb_base[i] + fb_start[i]
            for q in range(b, b + fb_len[i]):
                f_wout[q] *= scale[i]
            sum_aw[i] *= scale[i]
            sum_w[i] *= scale[i]
            scale[i] = 1.0
    return new_sig


@nb.njit(cache=True)
def _update_range(k0: int | np.int64, k1: int, players: np.ndarray, perf: np.ndarray,
                  beta: np.ndarray, post_mu: np.ndarray, post_sig: np.ndarray, max_history: int,
                  history_tol: float, normal: Normal, lazy: LazyWeights, blocks: Blocks,
                  pool: Factors, out_mu: np.ndarray, out_sig: np.ndarray,
                  status: np.ndarray) -> None:
    """:func:`update_logistic` of participants ``k0..k1-1``.

    One call per range rather than per participant: passing an array to a compiled
    function counts a reference to it (an atomic operation), and a dozen of those per
    participant cost more than its update."""
    n = players.size
    nf_mu, nf_w = normal
    scale, sum_aw, sum_w = lazy
    fb_base, _, fb_start, fb_len = blocks
    f_mu, f_warg, f_wout = pool
    for k in range(k0, k1):
        if k + PREFETCH_AHEAD < n:  # a later participant's rows, and a nearer one's factors
            j = players[k + PREFETCH_AHEAD]
            prefetch(fb_base, j)
            prefetch(fb_start, j)
            prefetch(fb_len, j)
            prefetch(scale, j)
            prefetch(nf_w, j)
            prefetch(nf_mu, j)
            prefetch(sum_aw, j)
            prefetch(sum_w, j)
            j = players[k + 2]
            q = fb_base[j] + fb_start[j]
            prefetch(f_mu, q)
            prefetch(f_warg, q)
            prefetch(f_wout, q)
        i = players[k]
        if fb_len[i] >= max_history:
            q = fb_base[i] + fb_start[i]
            wl = WEIGHT_OF_TANH * f_warg[q] * f_wout[q] * scale[i]
            w0 = nf_w[i]
            nf_mu[i] = (w0 * nf_mu[i] + wl * f_mu[q]) / (w0 + wl)
            nf_w[i] = w0 + wl
            sum_aw[i] -= f_warg[q] * f_wout[q]
            sum_w[i] -= f_wout[q]
            fb_start[i] += 1
            fb_len[i] -= 1
        w = TANH_MULTIPLIER / beta[k]
        q = fb_base[i] + fb_start[i] + fb_len[i]
        f_mu[q] = perf[k]
        f_warg[q] = 0.5 * w
        f_wout[q] = w / scale[i]
        sum_aw[i] += f_warg[q] * f_wout[q]
        sum_w[i] += f_wout[q]
        fb_len[i] += 1
        b = fb_base[i] + fb_start[i]
        cnt = fb_len[i]
        stop_at = 0
        if history_tol > 0.0 and cnt > 1:
            bound = history_tol * sum_w[i]
            acc = 0.0
            # skip the oldest factors while their total stays within the bound
            while stop_at < cnt - 1 and acc + f_wout[b + stop_at] <= bound:
                acc += f_wout[b + stop_at]
                stop_at += 1
        w0 = nf_w[i]
        x, st = robust_average_zero(f_mu, f_warg, f_wout, b + stop_at, b + cnt, scale[i],
                                    -nf_mu[i] * w0, w0, post_mu[k])
        out_mu[k] = x
        status[k] = st
        out_sig[k] = 1.0 / math.sqrt(1.0 / (post_sig[k] ** 2) + 1.0 / (beta[k] ** 2))


@nb.njit(cache=True, parallel=True)
def update_logistic(players: np.ndarray, perf: np.ndarray, beta: np.ndarray,
                    post_mu: np.ndarray, post_sig: np.ndarray, max_history: int,
                    history_tol: float, normal: Normal, lazy: LazyWeights, blocks: Blocks,
                    pool: Factors):
    """Add each participant's performance as a logistic factor, then solve Eq. 6.

    When the player already holds ``max_history`` factors, the oldest is folded
    into the normal factor as a Gaussian of the same weight (history
    compression, Sec. 5.3).  The new rating is the zero of
    ``w0 (x - mu0) + sum_k w_out_k tanh((x - p_k) w_arg_k)``; the new sigma is
    ``(sigma^-2 + beta^-2)^(-1/2)`` (Eq. 8).

    ``history_tol`` > 0 lets the solver skip the oldest factors whose weights
    sum to at most ``history_tol`` times the total: they are still stored, and
    skipping them moves the zero by at most ``history_tol * sum(w_out) / w0``.

    Returns (mu, sigma, status) per participant.
    """
    n = players.size
    out_mu = np.empty(n)
    out_sig = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    chunks = _chunks(n)
    for c in nb.prange(chunks):
        _update_range(c * n // chunks, (c + 1) * n // chunks, players, perf, beta, post_mu,
                      post_sig, max_history, history_tol, normal, lazy, blocks, pool, out_mu,
                      out_sig, status)
    return out_mu, out_sig, status


@nb.njit(cache=True)
def update_logistic_serial(players: np.ndarray, perf: np.ndarray, beta: np.ndarray,
                           post_mu: np.ndarray, post_sig: np.ndarray, max_history: int,
                           history_tol: float, normal: Normal, lazy: LazyWeights,
                           blocks: Blocks, pool: Factors):
    """:func:`update_logistic` in one thread, for a round of fewer than
    :data:`PARALLEL_FROM` participants (the same numbers)."""
    n = players.size
    out_mu = np.empty(n)
    out_sig = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    # np.int64(0), not 0: a literal would compile _update_range a second time (the
    # parallel twin passes an int64), here and in every call below that passes a 0
    _update_range(np.int64(0), n, players, perf, beta, post_mu, post_sig, max_history,
                  history_tol, normal, lazy, blocks, pool, out_mu, out_sig, status)
    return out_mu, out_sig, status


@nb.njit(cache=True)
def update_gaussian(players: np.ndarray, perf: np.ndarray, beta: np.ndarray,
                    normal: Normal) -> tuple[np.ndarray, np.ndarray]:
    """Elo-MMchi: multiply the (collapsed) normal prior by the normal performance factor."""
    nf_mu, nf_w = normal
    n = players.size
    out_mu = np.empty(n)
    out_sig = np.empty(n)
    for k in range(n):
        i = players[k]
        wn = nf_w[i]
        wp = 1.0 / (beta[k] * beta[k])
        nf_mu[i] = (wn * nf_mu[i] + wp * perf[k]) / (wn + wp)
        nf_w[i] = wn + wp
        out_mu[k] = nf_mu[i]
        out_sig[k] = 1.0 / math.sqrt(nf_w[i])
    return out_mu, out_sig


# ----------------------------------------------------------------------------------------
# Subsampled ("fast") performance estimation, as in multi-skill: opponents sorted by
# rating bucket, equal buckets merged, each player using a window of nearby terms.


@nb.njit(cache=True)
def bucket(a, width):
    """round(a / width) with halves away from zero (Rust's f64::round)."""
    v = a / width
    if v >= 0.0:
        return math.floor(v + 0.5)
    return -math.floor(-v + 0.5)


@nb.njit(cache=True)
def merge_terms(order: np.ndarray, mu: np.ndarray, sig: np.ndarray, lo: np.ndarray,
                width: float) -> MergedTerms:
    """Merge consecutive terms (in ``order``) that share the (mu, sigma) bucket.

    Returns the merged (mu, sigma) and the ranks (lo) of each merged term in CSR form.
    """
    n = order.size
    m_mu = np.empty(n)
    m_sig = np.empty(n)
    ranks = np.empty(n, dtype=np.int64)
    # a merged term is a run of consecutive terms: offs[q] is where term q's run starts
    offs = np.empty(n + 1, dtype=np.int64)
    m = -1
    for r in range(n):
        j = order[r]
        if m >= 0 and bucket(m_mu[m], width) == bucket(mu[j], width) and \
                bucket(m_sig[m], width) == bucket(sig[j], width):
            c = float(r - offs[m])  # terms merged into term m so far
            m_mu[m] = (c * m_mu[m] + mu[j]) / (c + 1.0)
            m_sig[m] = (c * m_sig[m] + sig[j]) / (c + 1.0)
        else:
            m += 1
            m_mu[m] = mu[j]
            m_sig[m] = sig[j]
            offs[m] = r
        ranks[r] = lo[j]
    m += 1
    offs[m] = n
    return MergedTerms(m_mu[:m], m_sig[:m], offs[:m + 1], ranks)


@nb.njit(cache=True)
def _lower_bound(arr, a, b, x, strict):
    """First index in the sorted slice ``arr[a:b]`` whose value is ``>= x``
    (``> x`` when ``strict``)."""
    while a < b:
        mid = (a + b) // 2
        if arr[mid] < x or (strict and arr[mid] == x):
            a = mid + 1
        else:
            b = mid
    return a


@nb.njit(cache=True)
def _equal_range(ranks, a, b, x):
    """``[start, end)`` of value ``x`` in the sorted slice ``ranks[a:b]``, relative to ``a``."""
    start = _lower_bound(ranks, a, b, x, False)
    end = _lower_bound(ranks, start, b, x, True)
    return start - a, end - a


@nb.njit(cache=True)
def _window_counts(offs, ranks, beg, end, my_rank, n_less, n_eq, n_gre):
    """How many of each window term's ranks are better than, equal to and worse than mine."""
    for q in range(beg, end):
        a = offs[q]
        b = offs[q + 1]
        if b - a == 1:
            r = ranks[a]
            lt = 1 if r < my_rank else 0
            eq = 1 if r == my_rank else 0
        else:
            st, en = _equal_range(ranks, a, b, my_rank)
            lt = st
            eq = en - st
        n_less[q - beg] = lt
        n_eq[q - beg] = eq
        n_gre[q - beg] = (b - a) - lt - eq


@nb.njit(cache=True)
def _eval_gaussian_window(x, m_sig, m_mu, n_less, n_eq, n_gre, beg, end, split_ties):
    """Q(x), Q'(x) over the window, Gaussian terms (the logistic sum is computed in
    :func:`_solve_range`'s loop)."""
    s = 0.0
    sp = 0.0
    for q in range(beg, end):
        k = q - beg
        sg = m_sig[q]
        z = (x - m_mu[q]) / sg
        pdf = normal_pdf(z) / sg
        pdf_p = -z * pdf / sg
        # a tail probability that underflows to 0 (|z| past ~38: a team term of tiny
        # spread) takes the hazard form of gaussian_terms; elsewhere the quotients as
        # they always were (the same numbers)
        if n_less[k] > 0:
            cdf_m1 = -normal_cdf(-z)
            if cdf_m1 == 0.0:
                v = -normal_hazard(z) / sg
                s += n_less[k] * v
                sp += n_less[k] * (-z / sg * v - v * v)
            else:
                v = pdf / cdf_m1
                s += n_less[k] * v
                sp += n_less[k] * (pdf_p / cdf_m1 - v * v)
        if n_gre[k] > 0:
            cdf = normal_cdf(z)
            if cdf == 0.0:
                v = normal_hazard(-z) / sg
                s += n_gre[k] * v
                sp += n_gre[k] * (-z / sg * v - v * v)
            else:
                v = pdf / cdf
                s += n_gre[k] * v
                sp += n_gre[k] * (pdf_p / cdf - v * v)
        if n_eq[k] > 0:
            if split_ties:
                cdf = normal_cdf(z)
                cdf_m1 = -normal_cdf(-z)
                if cdf == 0.0 or cdf_m1 == 0.0:
                    v0 = normal_hazard(-z) / sg
                    v1 = -normal_hazard(z) / sg
                    s += n_eq[k] * 0.5 * (v0 + v1)
                    sp += n_eq[k] * 0.5 * (-z / sg * (v0 + v1) - v0 * v0 - v1 * v1)
                else:
                    v0 = pdf / cdf
                    v1 = pdf / cdf_m1
                    s += n_eq[k] * 0.5 * (v0 + v1)
                    sp += n_eq[k] * 0.5 * (pdf_p * (1.0 / cdf + 1.0 / cdf_m1)
                                           - v0 * v0 - v1 * v1)
            else:
                s += n_eq[k] * (-z / sg)
                sp += n_eq[k] * (-1.0 / (sg * sg))
    return s, sp


@nb.njit(cache=True)
def _solve_range(k0, k1, kind, m_mu, m_sig, m_warg, m_wout, m_bkt, offs, ranks, player_mu,
                 player_lo, num_samples, width, split_ties, start, perf, status):
    """:func:`subsampled_performance` of participants ``k0..k1-1`` (one call per range,
    as :func:`_update_range`)."""
    M = m_mu.size
    # a window holds at most num_samples + 1 merged terms (the two expansions below),
    # and one when num_samples is 0
    work = np.empty((4, min(M, max(num_samples, 0) + 1)))
    for k in range(k0, k1):
        # first merged term whose bucket is >= the player's
        beg = _lower_bound(m_bkt, 0, M, bucket(player_mu[k], width), False)
        end = beg + 1
        expand = (max(num_samples - (end - beg), 0) + 1) // 2
        beg = max(beg - expand, 0)
        end = min(M, end + expand)
        expand = max(num_samples - (end - beg), 0)
        beg = max(beg - expand, 0)
        end = min(M, end + expand)
        w = end - beg
        # the window's counts (whole numbers, exact as floats) and coefficients
        n_less = work[0, :w]
        n_eq = work[1, :w]
        n_gre = work[2, :w]
        coef = work[3, :w]
        _window_counts(offs, ranks, beg, end, player_lo[k], n_less, n_eq, n_gre)
        const = 0.0
        if kind == LOGISTIC:
            for q in range(w):
                tot = n_less[q] + n_eq[q] + n_gre[q]
                if not split_ties:
                    tot += n_eq[q]
                coef[q] = m_wout[beg + q] * tot
                const += m_wout[beg + q] * (n_gre[q] - n_less[q])
        state = newton_begin(LO_BOUND, HI_BOUND, start[k])
        while state.running:
            x = state.x
            if kind == LOGISTIC:
                # Q(x), Q'(x) over the window: every term of a merged group with
                # ``cnt`` ranks contributes ``val * (cnt + ties) + w_out * (wins -
                # losses)``, so with ``coef = w_out * (cnt + ties)``, ``Q = const + sum
                # coef * (-tanh)``.  In this loop rather than in a function of the
                # window's arrays, whose every call would count references to them.
                s = const
                sp = 0.0
                for q in range(beg, end):
                    t, d2 = tanh_sech2((x - m_mu[q]) * m_warg[q])
                    c = coef[q - beg]
                    s -= t * c
                    sp -= d2 * m_warg[q] * c
            else:
                s, sp = _eval_gaussian_window(x, m_sig, m_mu, n_less, n_eq, n_gre, beg, end,
                                              split_ties)
            state = newton_next(state, s, sp)
        perf[k] = state.x
        status[k] = state.status


@nb.njit(cache=True)
def _window_terms(merged: MergedTerms, width: float):
    """Per merged term: the tanh's inner and outer weights and the rating bucket."""
    m_mu, m_sig, _, _ = merged
    M = m_mu.size
    per_term = np.empty((3, M))  # one allocation: a round of eight players is ~10 us
    for q in range(M):
        w = TANH_MULTIPLIER / m_sig[q]
        per_term[0, q] = 0.5 * w
        per_term[1, q] = w
        per_term[2, q] = bucket(m_mu[q], width)
    return per_term


@nb.njit(cache=True, parallel=True)
def subsampled_performance(kind: int, merged: MergedTerms, player_mu: np.ndarray,
                           player_lo: np.ndarray, num_samples: int, width: float,
                           split_ties: bool, start: np.ndarray):
    """Performance of each participant from a window of at most ``num_samples``
    merged opponent terms centred on its own rating (Sec. 5.3, adaptive subsampling).

    ``start`` is each solve's first guess (any value gives the same zero: the
    function is monotone and the solver bracketed); a guess near the answer
    saves Newton steps.  ``kind`` is ``LOGISTIC`` or ``GAUSSIAN``
    (:mod:`podium.core.numerics.performance`)."""
    m_mu, m_sig, offs, ranks = merged
    n = player_mu.size
    per_term = _window_terms(merged, width)
    perf = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    chunks = _chunks(n)
    for c in nb.prange(chunks):
        _solve_range(c * n // chunks, (c + 1) * n // chunks, kind, m_mu, m_sig, per_term[0],
                     per_term[1], per_term[2], offs, ranks, player_mu, player_lo, num_samples,
                     width, split_ties, start, perf, status)
    return perf, status


@nb.njit(cache=True)
def subsampled_performance_serial(kind: int, merged: MergedTerms, player_mu: np.ndarray,
                                  player_lo: np.ndarray, num_samples: int, width: float,
                                  split_ties: bool, start: np.ndarray):
    """:func:`subsampled_performance` in one thread, for a round of fewer than
    :data:`PARALLEL_FROM` participants (the same numbers)."""
    m_mu, m_sig, offs, ranks = merged
    n = player_mu.size
    per_term = _window_terms(merged, width)
    perf = np.empty(n)
    status = np.zeros(n, dtype=np.int8)
    _solve_range(np.int64(0), n, kind, m_mu, m_sig, per_term[0], per_term[1], per_term[2],
                 offs, ranks, player_mu, player_lo, num_samples, width, split_ties, start, perf,
                 status)
    return perf, status


def update_logistic_for(n: int) -> Any:
    """The :func:`update_logistic` kernel for a round of ``n`` participants."""
    return update_logistic if n >= PARALLEL_FROM else update_logistic_serial


def subsampled_performance_for(n: int) -> Any:
    """The :func:`subsampled_performance` kernel for a round of ``n`` participants."""
    return subsampled_performance if n >= PARALLEL_FROM else subsampled_performance_serial
