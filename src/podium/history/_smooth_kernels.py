"""Numba kernels of the smoothed Elo-MMR (see :mod:`podium.history.mmr_smooth` and
docs/history.md for the equations).

Layout.  Phase 1 (performances) works on the history's rows in contest order
(:class:`Rounds`), phase 2 (beliefs) on the same rows in player order
(:class:`Entries`: player ``i``'s ``k``-th round is entry ``off[i] + k``, its row
``rows[off[i] + k]``, :func:`~podium.history.data.player_rounds`); only the first
``n_rated[i]`` entries of a player are rated so far.  A player's belief is
Elo-MMR's: a normal factor ``(m0, w0)`` and one logistic factor per performance
``p_j`` of spread ``beta_j`` whose multiplicity ``omega_j`` decays with each
pseudodiffusion (Algorithm 2 of [EbtekarLiu2021]).  Multiplicities are kept as logs:
``omega_j = exp(ln S - ins_j)``, ``ln S`` the running log of the product of the
decays ``transfer * kappa`` and ``ins_j`` its value when factor ``j`` was added.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import TANH_MULTIPLIER
from podium.core.numerics.terms import logistic_terms
from podium.history._smooth_beliefs import diffuse, gather, log_window, robust_zero

#: Rounds of at most this many tie groups solve every group directly (as Elo-MMR).
DIRECT_GROUPS = 24
#: The parallel loops over contests or rows take them in this many stripes, every
#: ``STRIPES``-th one per iteration: Numba's ``prange`` gives each thread one
#: contiguous range of its iterations, and the work is not spread evenly along a
#: history (its later rounds are larger: on the first 600 Codeforces contests the last
#: 300 took 3.3 times the first 300's phase 1) nor along a round (its leaders have
#: the longest histories), so contiguous ranges would leave one thread most of it.
STRIPES = 64


@nb.njit(cache=True)
def smooth_player(e0: int, n: int, k_lo: int, k_hi: int, eps: float, en: Entries,
                  mu_noob: float, sig_noob: float, rho: float, collapse: bool, wtol: float,
                  smoothed: bool, work: np.ndarray, last: np.ndarray) -> float:
    """Phase 2 for one player's entries ``e0 .. e0 + n - 1`` whose performances changed
    in rounds ``k_lo .. k_hi`` since the stored beliefs were computed (``0, n - 1``:
    everything).

    The forward filter (Elo-MMR's own belief, round by round) is rerun from ``k_lo``
    (from its stored prior there), the backward filter (the same algorithm from the last
    round back, without prior) from ``k_hi`` (from its stored message there); each stops
    past the changed rounds once a belief moves by less than ``eps`` (negative: never;
    a change decays geometrically with the rounds).  Then the products where either
    moved: the cavity belief (forward prior x backward message: the skill given every
    other round, for the opponents' terms) and, with ``smoothed``, the smoothed belief
    (forward posterior x backward message).  Ratings are argmaxes (Eq. 6),
    uncertainties from the total weights (Eq. 8); each solve starts from its previous
    value plus the change the neighbouring round's solve just made.  ``work``: scratch of
    3 rows of at least ``2 n + 2``; ``last`` receives the forward belief after the last
    round (``m0, w0, lw, ln``, the player's :class:`FilterState`).  Returns the largest
    change of a cavity rating."""
    tp, ta, tb = work[0], work[1], work[2]
    perf, beta, gamma, a = en.perf, en.beta, en.gamma, en.a
    ln_wtol = log_window(wtol)
    fwd_mu, fwd_sig, ins_f, ins_b = en.fwd_mu, en.fwd_sig, en.ins_f, en.ins_b
    p_m0, p_w0, p_sig = en.p_m0, en.p_w0, en.p_sig
    b_m0, b_w0, b_tot = en.b_m0, en.b_w0, en.b_tot
    # forward filter from k_lo
    if k_lo == 0:
        m0, w0, lw, ln_s = mu_noob, 1.0 / (sig_noob * sig_noob), 0.0, 0.0
        mu, sig = mu_noob, sig_noob
    else:
        q = e0 + k_lo - 1
        m0, w0, ln_s = p_m0[q], p_w0[q], ins_f[q]
        lw = max(1.0 / (p_sig[q] * p_sig[q]) - w0, 0.0) + 1.0 / (beta[q] * beta[q])
        mu, sig = fwd_mu[q], fwd_sig[q]
    f_end = n - 1
    # each solve starts from its previous value plus the change its neighbour just
    # took (consecutive ratings move together), so that a sweep's common move costs
    # no Newton steps
    shift = 0.0
    for k in range(k_lo, n):
        e = e0 + k
        m0, w0, lw, dl, s_new = diffuse(sig, gamma[e], rho, collapse, m0, w0, lw, mu)
        ln_s = 0.0 if collapse else ln_s + dl
        moved = abs(m0 - p_m0[e])
        p_m0[e], p_w0[e], p_sig[e] = m0, w0, s_new
        ins_f[e] = ln_s
        lw += 1.0 / (beta[e] * beta[e])
        stop = e - 1 if collapse else e0 - 1
        cnt = gather(e, stop, -1, perf, a, ins_f, ln_s, ln_wtol, tp, ta, tb, 0)
        mu = robust_zero(w0, m0, 0.0, 0.0, tp, ta, tb, cnt, fwd_mu[e] + shift)
        sig = 1.0 / math.sqrt(1.0 / (s_new * s_new) + 1.0 / (beta[e] * beta[e]))
        shift = mu - fwd_mu[e]
        moved = max(moved, abs(shift))
        fwd_mu[e] = mu
        fwd_sig[e] = sig
        if k > k_hi and moved < eps:
            f_end = k
            break
    q = e0 + n - 1
    last[0], last[1], last[3] = p_m0[q], p_w0[q], ins_f[q]
    last[2] = max(1.0 / (p_sig[q] * p_sig[q]) - p_w0[q], 0.0) + 1.0 / (beta[q] * beta[q])
    # backward filter from k_hi: b_* [k] is the message from rounds k+1.. at round k
    if k_hi == n - 1:
        m0, w0, lw, ln_s = 0.0, 0.0, 0.0, 0.0
    else:
        q = e0 + k_hi
        m0, w0, ln_s = b_m0[q], b_w0[q], ins_b[q]
        lw = b_tot[q] - w0
    b_end = 0
    shift = 0.0
    for k in range(k_hi, -1, -1):
        e = e0 + k
        b_m0[e], b_w0[e], b_tot[e] = m0, w0, w0 + lw
        ins_b[e] = ln_s
        lw += 1.0 / (beta[e] * beta[e])
        stop = e + 1 if collapse else e0 + n
        cnt = gather(e, stop, 1, perf, a, ins_b, ln_s, ln_wtol, tp, ta, tb, 0)
        mub = robust_zero(w0, m0, 0.0, 0.0, tp, ta, tb, cnt, en.bwd_mu[e] + shift)
        shift = mub - en.bwd_mu[e]
        en.bwd_mu[e] = mub
        if k > 0:
            sb = 1.0 / math.sqrt(w0 + lw)
            m0, w0, lw, dl, _ = diffuse(sb, gamma[e], rho, collapse, m0, w0, lw, mub)
            ln_s = 0.0 if collapse else ln_s + dl
            if k <= k_lo and abs(m0 - b_m0[e - 1]) < eps:
                b_end = k
                break
    # cavity and smoothed beliefs where the forward or backward belief moved
    change = 0.0
    shift = 0.0
    sm_shift = 0.0
    for k in range(min(b_end, k_lo), max(f_end, k_hi) + 1):
        e = e0 + k
        if k == n - 1:
            # no later round: the forward prior, whose rating is the previous one
            new = fwd_mu[e - 1] if k > 0 else mu_noob
            en.cav_sig[e] = p_sig[e]
            if smoothed:
                en.sm_mu[e] = fwd_mu[e]
                en.sm_sig[e] = fwd_sig[e]
        else:
            back_stop = e + 1 if collapse else e0 + n
            fwd_stop = e - 1 if collapse else e0 - 1
            # the backward factors, then the forward prior's (before k)
            nb_ = gather(e + 1, back_stop, 1, perf, a, ins_b, ins_b[e], ln_wtol, tp, ta, tb, 0)
            cnt = gather(e - 1, fwd_stop, -1, perf, a, ins_f, ins_f[e], ln_wtol, tp, ta, tb, nb_)
            new = robust_zero(p_w0[e], p_m0[e], b_w0[e], b_m0[e], tp, ta, tb, cnt,
                              en.cav_mu[e] + shift)
            en.cav_sig[e] = 1.0 / math.sqrt(1.0 / (p_sig[e] * p_sig[e]) + b_tot[e])
            if smoothed:
                # and the round's own factor
                tp[cnt] = perf[e]
                ta[cnt] = a[e]
                tb[cnt] = 0.5 * a[e]
                sm = robust_zero(p_w0[e], p_m0[e], b_w0[e], b_m0[e], tp, ta, tb, cnt + 1,
                                 en.sm_mu[e] + sm_shift)
                sm_shift = sm - en.sm_mu[e]
                en.sm_mu[e] = sm
                en.sm_sig[e] = 1.0 / math.sqrt(1.0 / (fwd_sig[e] * fwd_sig[e]) + b_tot[e])
        shift = new - en.cav_mu[e]
        change = max(change, abs(shift))
        en.cav_mu[e] = new
    return change


@nb.njit(cache=True)
def round_terms(c: int, contest_rows: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Contest ``c``'s opponent terms from the participants' beliefs: centre ``mu``,
    ``w_arg = w_out / 2`` and ``w_out = pi / (sqrt 3 delta)`` with ``delta =
    hypot(sigma, beta)`` (Sec. 3.1), and the smallest ``delta``."""
    r0, r1 = contest_rows[c], contest_rows[c + 1]
    n = r1 - r0
    mu = np.empty(n)
    w_arg = np.empty(n)
    w_out = np.empty(n)
    dmin = math.inf
    for k in range(n):
        d = math.hypot(cav_sig[r0 + k], beta[r0 + k])
        dmin = min(dmin, d)
        mu[k] = cav_mu[r0 + k]
        w_out[k] = TANH_MULTIPLIER / d
        w_arg[k] = 0.5 * w_out[k]
    return mu, w_arg, w_out, dmin


@nb.njit(cache=True)
def tie_groups(place: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie groups as position ranges ``[start, end)`` of a best-first list of places."""
    n = place.size
    n_g = 1
    for k in range(1, n):
        if place[k] != place[k - 1]:
            n_g += 1
    start = np.empty(n_g, dtype=np.int64)
    end = np.empty(n_g, dtype=np.int64)
    g = 0
    start[0] = 0
    for k in range(1, n):
        if place[k] != place[k - 1]:
            end[g] = k
            g += 1
            start[g] = k
    end[n_g - 1] = n
    return start, end


@nb.njit(cache=True)
def group_zero(mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, a: int, b: int,
               split_ties: bool) -> tuple[float, int]:
    """The zero of ``Q_g`` (Theorem 3.2) for the tie group of positions ``a..b-1``:
    losses to every term before it, wins against every term after, ties inside,
    solved by the safeguarded Newton of the Elo-MMR solvers from the group's mean
    centre (the direct solve of :func:`~podium.core.numerics.performance_zeros`)."""
    s = 0.0
    for j in range(a, b):
        s += mu[j]
    state = newton_begin(LO_BOUND, HI_BOUND, s / (b - a))
    while state.running:
        x = state.x
        q = 0.0
        qp = 0.0
        for j in range(mu.size):
            lv, lp, wv, wp, dv, dp = logistic_terms(x, mu[j], w_arg[j], w_out[j], split_ties)
            if j < a:
                q += lv
                qp += lp
            elif j >= b:
                q += wv
                qp += wp
            else:
                q += dv
                qp += dp
        state = newton_next(state, q, qp)
    return state.x, state.status


@nb.njit(cache=True)
def n_groups(c: int, team_place: np.ndarray, contest_teams: np.ndarray) -> int:
    """The number of tie groups of contest ``c``."""
    g = 1
    for t in range(contest_teams[c] + 1, contest_teams[c + 1]):
        if team_place[t] != team_place[t - 1]:
            g += 1
    return g


@nb.njit(cache=True)
def store_perf(c: int, contest_rows: np.ndarray, start: np.ndarray, end: np.ndarray,
               gperf: np.ndarray, status: np.ndarray, ceiling: np.ndarray,
               perf: np.ndarray) -> tuple[float, int]:
    """Write each group's performance (capped at the contest's ceiling) to its rows;
    returns the largest change and how many solves did not converge."""
    r0 = contest_rows[c]
    change = 0.0
    bad = 0
    cap = ceiling[c]
    for g in range(start.size):
        if status[g] != 0:
            bad += 1
        pg = min(gperf[g], cap)
        for k in range(start[g], end[g]):
            change = max(change, abs(pg - perf[r0 + k]))
            perf[r0 + k] = pg
    return change, bad


@nb.njit(cache=True)
def solve_small_round(c: int, contest_rows: np.ndarray, team_place: np.ndarray,
                      contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                      beta: np.ndarray, split_ties: bool, ceiling: np.ndarray,
                      perf: np.ndarray) -> tuple[float, int]:
    """Phase 1 for contest ``c`` of at most ``DIRECT_GROUPS`` tie groups: each
    performance the zero of ``Q_i`` (Theorem 3.2) over the participants' terms,
    solved group by group.  Larger rounds go through
    :func:`~podium.core.numerics.performance_zeros` (called from Python: its panels
    run in parallel).  Returns the largest change and the unconverged solves."""
    mu, w_arg, w_out, _ = round_terms(c, contest_rows, cav_mu, cav_sig, beta)
    start, end = tie_groups(team_place[contest_teams[c]:contest_teams[c + 1]])
    gperf = np.empty(start.size)
    status = np.empty(start.size, dtype=np.int64)
    for g in range(start.size):
        gperf[g], status[g] = group_zero(mu, w_arg, w_out, start[g], end[g], split_ties)
    return store_perf(c, contest_rows, start, end, gperf, status, ceiling, perf)


class Rounds(NamedTuple):
    """The history's rows in contest order (the side phase 1 reads and writes)."""

    contest_rows: np.ndarray
    team_place: np.ndarray
    contest_teams: np.ndarray
    player: np.ndarray
    #: per row, Elo-MMR's performance spread of the player's round
    beta: np.ndarray
    #: per contest, the cap on its performances
    ceiling: np.ndarray
    perf: np.ndarray
    cav_mu: np.ndarray
    cav_sig: np.ndarray


class Entries(NamedTuple):
    """The same rows in player order (entry ``off[i] + k`` is player ``i``'s ``k``-th
    round; ``rows`` maps an entry to its row): the side phase 2 reads and writes."""

    off: np.ndarray
    rows: np.ndarray
    #: per player, how many of its entries are rated
    n_rated: np.ndarray
    perf: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    #: ``pi / (sqrt 3 beta)``: a logistic factor's outer weight at multiplicity 1
    a: np.ndarray
    #: per entry, ``ln S`` of the forward filter after the round's diffusion (the log
    #: scale its factor was added at) and of the backward filter's message
    ins_f: np.ndarray
    ins_b: np.ndarray
    #: per entry, the forward prior's normal factor and uncertainty, and the backward
    #: message's normal factor and total weight (to restart either filter there)
    p_m0: np.ndarray
    p_w0: np.ndarray
    p_sig: np.ndarray
    b_m0: np.ndarray
    b_w0: np.ndarray
    b_tot: np.ndarray
    fwd_mu: np.ndarray
    fwd_sig: np.ndarray
    bwd_mu: np.ndarray
    cav_mu: np.ndarray
    cav_sig: np.ndarray
    sm_mu: np.ndarray
    sm_sig: np.ndarray


class FilterState(NamedTuple):
    """Per player, the forward belief after its last rated round: the normal factor
    ``(m0, w0)``, the logistic factors' total weight ``lw``, the log scale ``ln`` and
    the first live factor (``live``, a round index)."""

    m0: np.ndarray
    w0: np.ndarray
    lw: np.ndarray
    ln: np.ndarray
    live: np.ndarray


@nb.njit(cache=True)
def filter_priors(c: int, rd: Rounds, en: Entries, fs: FilterState, mu_noob: float,
                  sig_noob: float, rho: float, collapse: bool) -> None:
    """Step 1 of Elo-MMR's round (Algorithm 1): every participant of contest ``c``
    diffused (Algorithm 2); its prior ``(mu, sigma)`` written to the cavity arrays (a
    cavity with nothing after it is the prior)."""
    for r in range(rd.contest_rows[c], rd.contest_rows[c + 1]):
        i = rd.player[r]
        k = en.n_rated[i]
        e = en.off[i] + k
        if k == 0:
            mu, sig = mu_noob, sig_noob
            fs.m0[i], fs.w0[i], fs.lw[i], fs.ln[i] = mu_noob, 1.0 / sig_noob ** 2, 0.0, 0.0
        else:
            mu, sig = en.fwd_mu[e - 1], en.fwd_sig[e - 1]
        m0, w0, lw, dl, s_new = diffuse(sig, en.gamma[e], rho, collapse, fs.m0[i], fs.w0[i],
                                        fs.lw[i], mu)
        if collapse:
            fs.live[i] = k
            fs.ln[i] = 0.0
        else:
            fs.ln[i] += dl
        fs.m0[i], fs.w0[i], fs.lw[i] = m0, w0, lw
        en.p_m0[e], en.p_w0[e], en.p_sig[e] = m0, w0, s_new
        rd.cav_mu[r] = en.cav_mu[e] = mu
        rd.cav_sig[r] = en.cav_sig[e] = s_new


@nb.njit(cache=True)
def absorb_size(r0: int, r1: int, step: int, rd: Rounds, en: Entries,
                fs: FilterState) -> int:
    """The scratch :func:`absorb_row` needs for rows ``r0, r0 + step, ..`` (before
    ``r1``): the most logistic factors one of their players can hold after the round."""
    size = 1
    for r in range(r0, r1, step):
        i = rd.player[r]
        size = max(size, en.n_rated[i] - fs.live[i] + 1)
    return size


@nb.njit(cache=True)
def absorb_row(r: int, rd: Rounds, en: Entries, fs: FilterState, ln_wtol: float,
               work: np.ndarray) -> None:
    """Step 4 of Elo-MMR's round for row ``r``: its performance added to its player's
    belief as a logistic factor, the rating solved (Eq. 6) and the uncertainty (Eq. 8).
    Touches only that player's entries and filter state (``ln_wtol``: the window's
    :func:`~podium.history._smooth_beliefs.log_window`; ``work``: scratch of 3 rows of
    at least :func:`absorb_size`)."""
    i = rd.player[r]
    k = en.n_rated[i]
    e = en.off[i] + k
    en.perf[e] = rd.perf[r]
    en.ins_f[e] = fs.ln[i]
    b = en.beta[e]
    fs.lw[i] += 1.0 / (b * b)
    first = en.off[i] + fs.live[i]
    tp, ta, tb = work[0], work[1], work[2]
    cnt = gather(e, first - 1, -1, en.perf, en.a, en.ins_f, fs.ln[i], ln_wtol, tp, ta, tb, 0)
    en.fwd_mu[e] = robust_zero(fs.w0[i], fs.m0[i], 0.0, 0.0, tp, ta, tb, cnt, en.cav_mu[e])
    s = en.cav_sig[e]
    en.fwd_sig[e] = 1.0 / math.sqrt(1.0 / (s * s) + 1.0 / (b * b))
    en.n_rated[i] = k + 1


@nb.njit(cache=True)
def filter_absorb(c: int, rd: Rounds, en: Entries, fs: FilterState, wtol: float) -> None:
    """Step 4 of Elo-MMR's round (:func:`absorb_row`) for every participant of contest
    ``c``, one after the other (small rounds)."""
    r0, r1 = rd.contest_rows[c], rd.contest_rows[c + 1]
    work = np.empty((3, absorb_size(r0, r1, 1, rd, en, fs)))
    ln_wtol = log_window(wtol)
    for r in range(r0, r1):
        absorb_row(r, rd, en, fs, ln_wtol, work)


@nb.njit(cache=True, parallel=True)
def filter_absorb_parallel(c: int, rd: Rounds, en: Entries, fs: FilterState,
                           wtol: float) -> None:
    """:func:`filter_absorb` for a large round, its participants in parallel (each
    row writes only its own player's state, so the result is the same bit for bit)."""
    r0, r1 = rd.contest_rows[c], rd.contest_rows[c + 1]
    stripes = max(1, min(r1 - r0, STRIPES))
    ln_wtol = log_window(wtol)
    for s in nb.prange(stripes):
        work = np.empty((3, absorb_size(r0 + s, r1, stripes, rd, en, fs)))
        for r in range(r0 + s, r1, stripes):
            absorb_row(r, rd, en, fs, ln_wtol, work)


@nb.njit(cache=True)
def filter_run(c0: int, c1: int, rd: Rounds, en: Entries, fs: FilterState, mu_noob: float,
               sig_noob: float, rho: float, collapse: bool, wtol: float, split_ties: bool,
               bad: np.ndarray) -> int:
    """Elo-MMR itself (Algorithm 1 of [EbtekarLiu2021]) over contests ``c0..c1-1`` of at
    most ``DIRECT_GROUPS`` tie groups: priors (:func:`filter_priors`), performances
    (:func:`solve_small_round`), posteriors (:func:`filter_absorb`).  At a larger
    contest it stops after writing its priors and returns its index (the caller
    solves it and absorbs it); else returns ``c1``.  ``bad[0]`` counts unconverged
    solves."""
    for c in range(c0, c1):
        filter_priors(c, rd, en, fs, mu_noob, sig_noob, rho, collapse)
        if n_groups(c, rd.team_place, rd.contest_teams) > DIRECT_GROUPS:
            return c
        _, nb_bad = solve_small_round(c, rd.contest_rows, rd.team_place, rd.contest_teams,
                                      rd.cav_mu, rd.cav_sig, rd.beta, split_ties, rd.ceiling,
                                      rd.perf)
        bad[0] += nb_bad
        filter_absorb(c, rd, en, fs, wtol)
    return c1


#: :func:`smooth_players` hands the players to the threads in this many chunks of
#: consecutive players, in a scrambled order (:data:`SCRAMBLE`): Numba's ``prange``
#: gives each thread one contiguous range of its iterations, and players are numbered
#: by first appearance, so the early ones have the long histories (on the first 600
#: Codeforces contests the first half of the players took 3.1 to 3.5 times the second
#: half's phase 2); contiguous ranges of chunks would leave one thread most of the
#: work.  (Chunks of consecutive players keep the memory reads in order: taking every
#: 256th player instead cost 2.67 s of CPU where contiguous chunks cost 1.91 s.)
CHUNKS = 256
#: The parallel loop's iteration ``j`` takes chunk ``j * SCRAMBLE mod chunks`` (odd,
#: and the chunks a power of two: a permutation).
SCRAMBLE = 97


@nb.njit(cache=True, parallel=True)
def smooth_players(todo: np.ndarray, k_lo: np.ndarray, k_hi: np.ndarray, eps: float,
                   en: Entries, fs: FilterState, mu_noob: float, sig_noob: float, rho: float,
                   collapse: bool, wtol: float, smoothed: bool) -> np.ndarray:
    """:func:`smooth_player` for every player in ``todo`` (its changed rounds
    ``k_lo[q] .. k_hi[q]``; in parallel, by ranges of players sharing one scratch
    array, :data:`CHUNKS`); returns each one's largest change of a cavity rating."""
    out = np.zeros(todo.size)
    n_chunks = 1
    while 2 * n_chunks <= min(todo.size, CHUNKS):
        n_chunks *= 2
    for j in nb.prange(n_chunks):
        ch = (j * SCRAMBLE) % n_chunks
        q0 = ch * todo.size // n_chunks
        q1 = (ch + 1) * todo.size // n_chunks
        longest = 1
        for q in range(q0, q1):
            longest = max(longest, en.n_rated[todo[q]])
        work = np.empty((3, 2 * longest + 2))
        last = np.empty(4)
        for q in range(q0, q1):
            i = todo[q]
            n = en.n_rated[i]
            if n > 0:
                lo = min(max(k_lo[q], 0), n - 1)
                hi = min(max(k_hi[q], lo), n - 1)
                out[q] = smooth_player(en.off[i], n, lo, hi, eps, en, mu_noob, sig_noob, rho,
                                       collapse, wtol, smoothed, work, last)
                fs.m0[i], fs.w0[i], fs.lw[i], fs.ln[i] = last[0], last[1], last[2], last[3]
                fs.live[i] = n - 1 if collapse else 0
    return out


@nb.njit(cache=True)
def player_entries(todo: np.ndarray, off: np.ndarray, count: np.ndarray) -> np.ndarray:
    """The rated entries of the players in ``todo``."""
    n = 0
    for i in todo:
        n += count[i]
    out = np.empty(n, dtype=np.int64)
    q = 0
    for i in todo:
        for k in range(count[i]):
            out[q] = off[i] + k
            q += 1
    return out


@nb.njit(cache=True)
def contest_entries(todo: np.ndarray, contest_rows: np.ndarray,
                    e_of_row: np.ndarray) -> np.ndarray:
    """The entries of the rows of the contests in ``todo``."""
    n = 0
    for c in todo:
        n += contest_rows[c + 1] - contest_rows[c]
    out = np.empty(n, dtype=np.int64)
    q = 0
    for c in todo:
        for r in range(contest_rows[c], contest_rows[c + 1]):
            out[q] = e_of_row[r]
            q += 1
    return out


@nb.njit(cache=True)
def solve_small_rounds(todo: np.ndarray, contest_rows: np.ndarray, team_place: np.ndarray,
                       contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                       beta: np.ndarray, split_ties: bool, ceiling: np.ndarray,
                       perf: np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`solve_small_round` for every contest in ``todo`` (each of at most
    ``DIRECT_GROUPS`` tie groups); returns each one's largest change of a performance
    and the count of unconverged solves."""
    out = np.zeros(todo.size)
    bad = 0
    for q in range(todo.size):
        ch, b = solve_small_round(todo[q], contest_rows, team_place, contest_teams, cav_mu,
                                  cav_sig, beta, split_ties, ceiling, perf)
        out[q] = ch
        bad += b
    return out, bad


@nb.njit(cache=True)
def round_weights(off: np.ndarray, rows: np.ndarray, row_contest: np.ndarray,
                  time: np.ndarray, contest_weight: np.ndarray, weight_limit: float,
                  noob_delay: np.ndarray, sig_limit: float,
                  drift_per_day: float) -> tuple[np.ndarray, np.ndarray]:
    """Per entry (player order): Elo-MMR's ``beta`` and ``gamma`` for the player's
    ``k``-th round (multi-skill's rule): ``w = weight * weight_limit * noob_delay[k]``,
    ``beta = sqrt((1 + 1/w) sig_limit^2 + drift_per_day / w)``,
    ``gamma = sqrt(w sig_limit^2 + drift_per_day * days since the previous round)``."""
    n_e = rows.size
    beta = np.empty(n_e)
    gamma = np.empty(n_e)
    for i in range(off.size - 1):
        prev = 0.0
        for k in range(off[i + 1] - off[i]):
            e = off[i] + k
            c = row_contest[rows[e]]
            w = contest_weight[c] * weight_limit
            if k < noob_delay.size:
                w *= noob_delay[k]
            days = max(time[c] - prev, 0.0) if k > 0 else 0.0
            beta[e] = math.sqrt((1.0 + 1.0 / w) * sig_limit * sig_limit + drift_per_day / w)
            gamma[e] = math.sqrt(w * sig_limit * sig_limit + drift_per_day * days)
            prev = time[c]
    return beta, gamma


@nb.njit(cache=True, parallel=True)
def entries_to_rows(values: tuple[np.ndarray, ...], e_of_row: np.ndarray,
                    source_rows: np.ndarray, r_end: int, out: np.ndarray) -> None:
    """``out[k, source_rows[r]] = values[k][e_of_row[r]]`` for the rated rows
    ``r < r_end``: per-entry arrays (player order) on the rows of the input history,
    every array in one pass over the rows' indices (``out`` filled beforehand where no
    rated row lands)."""
    for r in nb.prange(r_end):
        e = e_of_row[r]
        s = source_rows[r]
        for k in range(len(values)):
            out[k, s] = values[k][e]
