"""Compiled loops over many small rounds (see :meth:`RatingSystem.rate_rounds`).

Rating a lobby of eight players costs a few microseconds of arithmetic, but one
round through :meth:`~podium.systems.base.RatingSystem.round_update` costs tens
of microseconds of Python and of starting parallel loops.  The kernels here take
a whole batch of rounds in CSR form and loop over them in compiled code, each
round doing exactly what ``round_update`` does, with the same kernels and the
same floating-point operations in the same order, so that every rating is
bit-identical:

* :func:`elo_mmr_rounds`: Elo-MMR and its variants ([EbtekarLiu2021], Algorithm 1:
  round weights, pseudodiffusion (Algorithm 2), performances (Theorem 3.2), the
  posterior update (Eq. 6-8)), for rounds small enough that the exact system
  solves every tie group directly;
* :func:`elo_mmr_add`: ``Rater.add`` of one small round (``rate_small_round``): the
  loop above on a batch of that one round (the same compiled code), plus the
  newcomers' rows and the round's events (:mod:`podium.systems.base.rounds_kernels`).

TrueSkill's loops are :mod:`podium.systems.trueskill.rounds_kernels`.

The parallel kernels of :mod:`podium.systems.elo_mmr.kernels` (``update_logistic``,
``subsampled_performance``) have serial twins there (``*_serial``): a round of
eight players is far too small for a parallel loop, whose start-up alone costs
more than the round.  Each pair loops over the same per-participant function, so
the twins give the same numbers.

This module is imported, and its kernels compiled, only when a system rates a
batch of rounds this way.  Unlike the per-round kernels, these take the state's arrays one by
one rather than in NamedTuple groups: they are called once per ``Rater.add``, and
building and unboxing the groups there measurably slowed an ``add`` loop of
eight-player rounds (about 5 us of 30 per call).  For the same reason the ``*_add``
kernels return no array (boxing one back costs ~0.3 us) and take their outputs
preallocated.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
import podium.systems.elo_mmr.kernels as K
from podium.core.intrinsics import prefetch as _prefetch
from podium.core.numerics.performance import solve_direct
from podium.core.numerics.special import TANH_MULTIPLIER
from podium.core.numerics.terms import GAUSSIAN, LOGISTIC, OpponentTerms, TieGroups
from podium.systems.base.factor_pool_kernels import Blocks, Factors, Normal, reserve
from podium.systems.base.rounds_kernels import (
    check_room,
    float_maximum,
    log_events,
    new_table_rows,
    tie_group_bounds,
)

__all__ = ["elo_mmr_rounds", "elo_mmr_add", "F_WEIGHT_LIMIT", "F_SIG_LIMIT", "F_DRIFT", "F_RHO",
           "F_WIDTH", "F_HIST_TOL", "F_DISPLAY_SIGMAS", "F_CEILING", "I_COLLAPSE", "I_KIND",
           "I_SPLIT_TIES", "I_SUBSAMPLE", "I_MAX_HISTORY", "I_DIRECT_GROUPS"]


@nb.njit(cache=True)
def _exact_performance(kind, mu, delta, lo, split_ties, direct_groups):
    """Every participant's performance over all opponents, group by group.

    ``EloMMR.exact_performance`` for a round with at most ``direct_groups`` tie
    groups: :func:`~podium.core.numerics.performance_zeros` then solves each
    group's ``Q_g`` (Theorem 3.2) directly from the group's mean rating, which is
    what this does.  Returns each participant's performance and solver status.
    """
    n = mu.size
    starts, ends = tie_group_bounds(lo)
    n_groups = starts.size
    if n_groups > direct_groups:
        raise ValueError("too many tie groups for the direct performance solve")
    pa = np.empty(n)
    pb = np.empty(n)
    for k in range(n):
        if kind == LOGISTIC:
            w = TANH_MULTIPLIER / delta[k]
            pa[k] = 0.5 * w
            pb[k] = w
        else:
            pa[k] = delta[k]
            pb[k] = delta[k]
    perf = np.empty(n)
    status = np.empty(n, dtype=np.int8)
    terms = OpponentTerms(mu, pa, pb)
    groups = TieGroups(starts, ends)
    for g in range(n_groups):
        # the model is a compile-time choice of the solver (a literal kind)
        if kind == LOGISTIC:
            p, st = solve_direct(LOGISTIC, terms, groups, g, split_ties)
        else:
            p, st = solve_direct(GAUSSIAN, terms, groups, g, split_ties)
        for k in range(starts[g], ends[g]):
            perf[k] = p
            status[k] = st
    return perf, status


@nb.njit(cache=True, inline="always")
def _round_half_away(x):
    """``EloMMR``'s ``_round_half_away`` on one number: ``sign(x) floor(|x| + 1/2)``."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


@nb.njit(cache=True, inline="always")
def _before(bmu, bsig, lo, i, j):
    """True when term ``i`` sorts before term ``j`` by ``(bmu, bsig, lo)``."""
    if bmu[i] != bmu[j]:
        return bmu[i] < bmu[j]
    if bsig[i] != bsig[j]:
        return bsig[i] < bsig[j]
    return lo[i] < lo[j]


@nb.njit(cache=True)
def _subsampled_performance(kind, mu, delta, lo, num_samples, width, split_ties):
    """``EloMMR.subsampled_performance`` (Sec. 5.3) of one round.

    Terms are bucketed by ``(mu, delta) / width``, put in the order of
    ``np.lexsort((lo, bsig, bmu))`` (a stable insertion sort: the same
    permutation), merged (:func:`~podium.systems.elo_mmr.kernels.merge_terms`)
    and solved over a window of ``num_samples`` merged terms, each solve starting
    from the rating at the participant's place in the field sorted by rating.
    """
    n = mu.size
    bmu = np.empty(n)
    bsig = np.empty(n)
    for k in range(n):
        bmu[k] = _round_half_away(mu[k] / width)
        bsig[k] = _round_half_away(delta[k] / width)
    order = np.empty(n, dtype=np.int64)
    for k in range(n):
        q = k
        while q > 0 and _before(bmu, bsig, lo, k, order[q - 1]):
            order[q] = order[q - 1]
            q -= 1
        order[q] = k
    merged = K.merge_terms(order, mu, delta, lo, width)
    ranked = np.sort(mu)
    guess = np.empty(n)
    for k in range(n):
        guess[k] = ranked[n - 1 - lo[k]]
    return K.subsampled_performance_serial(kind, merged, mu, lo, num_samples, width,
                                           split_ties, guess)


#: Layout of :func:`elo_mmr_rounds`' parameter arrays (see ``EloMMR._rounds_params``).
(F_WEIGHT_LIMIT, F_SIG_LIMIT, F_DRIFT, F_RHO, F_WIDTH, F_HIST_TOL, F_DISPLAY_SIGMAS,
 F_CEILING) = range(8)
I_COLLAPSE, I_KIND, I_SPLIT_TIES, I_SUBSAMPLE, I_MAX_HISTORY, I_DIRECT_GROUPS = range(6)


@nb.njit(cache=True)
def _prefetch_players(players, a, b, tab_mu, tab_sig, tab_played, tab_last, tab_max_display,
                      tab_change, nf_mu, nf_w, scale, sum_aw, sum_w, fb_base, fb_cap, fb_start,
                      fb_len, f_mu, f_warg, f_wout):
    """Prefetch what the round of ``players[a:b]`` reads: the players' rows and their
    logistic factors.  With thousands of players these are spread over megabytes,
    and fetching them while the previous round computes saves ~10% of the time."""
    for q in range(a, b):
        i = players[q]
        _prefetch(tab_mu, i)
        _prefetch(tab_sig, i)
        _prefetch(tab_played, i)
        _prefetch(tab_last, i)
        _prefetch(tab_max_display, i)
        _prefetch(tab_change, i)
        _prefetch(nf_mu, i)
        _prefetch(nf_w, i)
        _prefetch(scale, i)
        _prefetch(sum_aw, i)
        _prefetch(sum_w, i)
        _prefetch(fb_cap, i)
        first = fb_base[i] + fb_start[i]
        for k in range(first, first + fb_len[i], 8):  # 8 doubles per cache line
            _prefetch(f_mu, k)
            _prefetch(f_warg, k)
            _prefetch(f_wout, k)


@nb.njit(cache=True)
def elo_mmr_rounds(r0, r1, offsets, players, lo, times, weights, ceilings,
                   tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change,
                   fparams, iparams, noob_delay,
                   nf_mu, nf_w, scale, sum_aw, sum_w, fb_base, fb_cap, fb_start, fb_len,
                   f_mu, f_warg, f_wout, used, out, out_status):
    """Rate rounds ``r0..r1-1`` of a batch with Elo-MMR, one after another.

    Each round is ``EloMMR.round_update``: round weights (beta, gamma), the
    pseudodiffusion of Algorithm 2, opponent terms ``delta = hypot(sigma, beta)``,
    performances (Theorem 3.2; exact when the subsample size is 0, else
    subsampled, Sec. 5.3), the round's performance ceiling (logistic model; NaN
    means none), and the posterior update (Eq. 6-8; the Gaussian variant
    multiplies normals).  The player table (``tab_*``) is read before and written
    after every round, as the Rater does between rounds, display ratings
    ``mu - display_sigmas * (sigma - sig_limit)`` included.

    Parameters
    ----------
    offsets, players, lo:
        The batch in CSR form: round ``r``'s participants are
        ``players[offsets[r]:offsets[r + 1]]``, best first.
    times, weights, ceilings:
        Per round: ``time_seconds``, weight and performance ceiling (NaN: the
        system's, ``fparams[F_CEILING]``, NaN for none).
    tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change:
        The Rater's per-player arrays (updated in place).
    fparams, iparams, noob_delay:
        The system's parameters (layout: ``F_*`` and ``I_*``).
    nf_mu ... used:
        The :class:`~podium.systems.elo_mmr.EloMMRState` arrays (updated in place;
        the pool arrays may be reallocated and are returned).
    out, out_status:
        Per event: new ``mu``, ``sigma`` and the performance (rows of ``out``);
        the solver statuses of the performance and of the new rating (rows of
        ``out_status``).

    Returns
    -------
    f_mu, f_warg, f_wout, used, flagged
        The factor pool after the last round and the number of events with a
        non-zero solver status.
    """
    weight_limit = fparams[F_WEIGHT_LIMIT]
    sig_limit = fparams[F_SIG_LIMIT]
    drift_per_day = fparams[F_DRIFT]
    rho = fparams[F_RHO]
    width = fparams[F_WIDTH]
    history_tol = fparams[F_HIST_TOL]
    display_sigmas = fparams[F_DISPLAY_SIGMAS]
    default_ceiling = fparams[F_CEILING]
    collapse = iparams[I_COLLAPSE] != 0
    kind = iparams[I_KIND]
    split_ties = iparams[I_SPLIT_TIES] != 0
    subsample_size = iparams[I_SUBSAMPLE]
    max_history = iparams[I_MAX_HISTORY]
    direct_groups = iparams[I_DIRECT_GROUPS]
    flagged = 0
    for r in range(r0, r1):
        a = offsets[r]
        b = offsets[r + 1]
        n = b - a
        idx = players[a:b]
        rlo = lo[a:b]
        t = times[r]
        if r + 1 < r1:
            _prefetch_players(players, b, offsets[r + 2], tab_mu, tab_sig, tab_played, tab_last,
                              tab_max_display, tab_change, nf_mu, nf_w, scale, sum_aw, sum_w,
                              fb_base, fb_cap, fb_start, fb_len, f_mu, f_warg, f_wout)
        played = np.empty(n, dtype=np.int64)
        delta_secs = np.empty(n)
        mu = np.empty(n)
        sig0 = np.empty(n)
        for k in range(n):
            i = idx[k]
            played[k] = tab_played[i]
            d = t - tab_last[i]
            delta_secs[k] = float(d if d > 0 else 0) if played[k] != 0 else 0.0
            mu[k] = tab_mu[i]
            sig0[k] = tab_sig[i]
        beta, gamma = K.round_weights(played, weights[r], weight_limit, noob_delay,
                                      sig_limit, drift_per_day, delta_secs)
        # 1. pseudodiffusion (Algorithm 2)
        normal = Normal(nf_mu, nf_w)
        lazy = K.LazyWeights(scale, sum_aw, sum_w)
        blocks = Blocks(fb_base, fb_cap, fb_start, fb_len)
        sig = K.diffuse(idx, mu, sig0, gamma, rho, collapse, normal, lazy, blocks,
                        Factors(f_mu, f_warg, f_wout))
        # 2. opponent terms
        delta = np.empty(n)
        for k in range(n):
            delta[k] = math.hypot(sig[k], beta[k])
        # 3. performances (Theorem 3.2)
        if subsample_size == 0:
            perf, st = _exact_performance(kind, mu, delta, rlo, split_ties, direct_groups)
        else:
            perf, st = _subsampled_performance(kind, mu, delta, rlo, subsample_size, width,
                                               split_ties)
        if kind == LOGISTIC:
            ceiling = ceilings[r]
            if math.isnan(ceiling):
                ceiling = default_ceiling
            if not math.isnan(ceiling):
                for k in range(n):
                    if perf[k] > ceiling:
                        perf[k] = ceiling
        # 4. posterior update (Eq. 6-8)
        if kind == GAUSSIAN:
            new_mu, new_sig = K.update_gaussian(idx, perf, beta, normal)
            st2 = np.zeros(n, dtype=np.int8)
        else:
            pool, used = reserve(idx, blocks, Factors(f_mu, f_warg, f_wout), used)
            f_mu, f_warg, f_wout = pool
            new_mu, new_sig, st2 = K.update_logistic_serial(
                idx, perf, beta, mu, sig, max_history, history_tol, normal, lazy, blocks, pool,
            )
        for k in range(n):
            i = idx[k]
            out[0, a + k] = new_mu[k]
            out[1, a + k] = new_sig[k]
            out[2, a + k] = perf[k]
            out_status[0, a + k] = st[k]
            out_status[1, a + k] = st2[k]
            if st[k] != 0 or st2[k] != 0:
                flagged += 1
            shown_old = mu[k] - display_sigmas * (sig0[k] - sig_limit)
            shown_new = new_mu[k] - display_sigmas * (new_sig[k] - sig_limit)
            tab_mu[i] = new_mu[k]
            tab_sig[i] = new_sig[k]
            tab_played[i] += 1
            if t > tab_last[i]:
                tab_last[i] = t
            tab_max_display[i] = float_maximum(tab_max_display[i], shown_new)
            tab_change[i] = shown_new - shown_old
    return f_mu, f_warg, f_wout, used, flagged


# ---------------------------------------------------------------------- Rater.add
# One small round with everything around it that can be compiled: the newcomers'
# rows, the event log's entries (written straight into its open chunk,
# :meth:`~podium.core.state.EventLog.reserve_tail`) and, for Elo-MMR, room in the
# factor pool checked before anything changes.  The pool arrays are not returned
# (boxing three arrays back into Python costs about a microsecond, a tenth of a
# round): when the pool must grow, the kernel changes nothing but the newcomers'
# rows and says so, and the caller grows it as ``reserve`` would and calls again.


@nb.njit(cache=True)
def elo_mmr_add(players, lo, t, weight, ceiling, index, n_before, n_after, s_n,
                mu0, sig0, nf_mu0, nf_w0,
                tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change,
                fparams, iparams, noob_delay,
                nf_mu, nf_w, scale, sum_aw, sum_w, fb_base, fb_cap, fb_start, fb_len,
                f_mu, f_warg, f_wout, used, ev_f, ev_i, at, out_status):
    """``Rater.add`` of one small round with Elo-MMR (:func:`elo_mmr_rounds` on a batch
    of that round).

    Players ``n_before..n_after-1`` of the table are the round's newcomers (their
    rows get the prior ``(mu0, sig0)``), the system state's rows ``s_n..n_after-1``
    a newcomer's normal factor ``(nf_mu0, nf_w0)`` and no logistic factor (what
    ``FactorPoolState.ensure_players`` writes).  The events go to ``ev_f[:, at:]``
    (mu, sigma, performance) and ``ev_i[:, at:]`` (contest ``index``, player,
    place); the solver statuses to ``out_status``.

    Returns
    -------
    grow_to, used, flagged
        ``grow_to > 0``: the factor pool must first grow to at least this many
        slots (as :func:`~podium.systems.elo_mmr.kernels.reserve` grows it); only
        the newcomers' rows were written.  Else the round is rated: the pool's used
        size and the number of events with a non-zero solver status.
    """
    rows = min(tab_mu.size, tab_sig.size, tab_played.size, tab_last.size,
               tab_max_display.size, tab_change.size, nf_mu.size, nf_w.size, scale.size,
               sum_aw.size, sum_w.size, fb_base.size, fb_cap.size, fb_start.size,
               fb_len.size)
    check_room(players, n_after, rows, ev_f, ev_i, at)
    if out_status.shape[0] != 2 or out_status.shape[1] < players.size:
        raise ValueError("internal error: status buffer too small for the round")
    # the players' rows are scattered over megabytes: ask for all of them at once (the
    # bounds here and below as int64, the type elo_mmr_rounds passes: literals would
    # compile the kernels a second time)
    _prefetch_players(players, np.int64(0), players.size, tab_mu, tab_sig, tab_played, tab_last,
                      tab_max_display, tab_change, nf_mu, nf_w, scale, sum_aw, sum_w,
                      fb_base, fb_cap, fb_start, fb_len, f_mu, f_warg, f_wout)
    new_table_rows(n_before, n_after, t, mu0, sig0, tab_mu, tab_sig, tab_played, tab_last,
                    tab_max_display, tab_change)
    for i in range(s_n, n_after):
        nf_mu[i] = nf_mu0
        nf_w[i] = nf_w0
        scale[i] = 1.0
        sum_aw[i] = 0.0
        sum_w[i] = 0.0
        fb_base[i] = 0
        fb_cap[i] = 0
        fb_start[i] = 0
        fb_len[i] = 0
    if iparams[I_KIND] == LOGISTIC:
        # what reserve will need once the diffusion ran (which, collapsing, empties
        # every participant's list of factors)
        collapse = iparams[I_COLLAPSE] != 0
        need = used
        for k in range(players.size):
            i = players[k]
            start = 0 if collapse else fb_start[i]
            length = 0 if collapse else fb_len[i]
            if start + length >= fb_cap[i] and start == 0:
                need += max(4, 2 * fb_cap[i])
        if need > f_mu.size:
            return max(need, int(f_mu.size * 1.5) + 1024), used, 0
    # the batch loop itself, on a batch of this one round (the same compiled code)
    n = players.size
    offsets = np.zeros(2, dtype=np.int64)
    offsets[1] = n
    times = np.full(1, t, dtype=np.int64)
    weights = np.full(1, weight)
    ceilings = np.full(1, ceiling)
    out = np.empty((3, n))
    f_mu2, _, _, used, flagged = elo_mmr_rounds(
        np.int64(0), np.int64(1), offsets, players, lo, times, weights, ceilings,
        tab_mu, tab_sig, tab_played, tab_last, tab_max_display, tab_change,
        fparams, iparams, noob_delay,
        nf_mu, nf_w, scale, sum_aw, sum_w, fb_base, fb_cap, fb_start, fb_len,
        f_mu, f_warg, f_wout, used, out, out_status,
    )
    if f_mu2.size != f_mu.size:
        raise ValueError("internal error: the factor pool moved during the round")
    for k in range(n):
        ev_f[0, at + k] = out[0, k]
        ev_f[1, at + k] = out[1, k]
        ev_f[2, at + k] = out[2, k]
    log_events(players, lo, index, ev_i, at)
    return 0, used, flagged
