"""Explaining an Elo-MMR update (:meth:`podium.systems.elo_mmr.EloMMR.explain`).

The round is re-run from the state just before it (so the rating after is the round's
own, bit for bit), and its four steps (seed 002, Algorithm 1) are read back:

1. diffusion: ``sigma_d^2 = sigma^2 + gamma^2`` (Algorithm 2, transfer ``kappa^rho``);
2. the opponent terms ``(mu_j, delta_j = sqrt(sigma_j^2 + beta_j^2))``;
3. the performance ``p``, the zero of ``Q_i`` (Theorem 3.2): one term per opponent
   (or, subsampled, per merged term of the window the solver saw), evaluated at ``p``;
4. the new rating, the zero of ``L'`` (Eq. 6): the prior (normal factor) and one tanh
   term per stored performance, evaluated at the new rating, with each factor's weight
   in the robust average (Eq. 7) and the uncertainty from Eq. 8.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import podium.systems.elo_mmr.kernels as K
from podium.core.explain import Equation, Explanation, Term
from podium.core.numerics import GAUSSIAN, LOGISTIC, TANH_MULTIPLIER
from podium.core.numerics.performance import gaussian_terms
from podium.systems.base.explain import (
    check_position,
    explanation,
    opponent_kind,
    prepared_copy,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput
    from podium.systems.elo_mmr import EloMMR, EloMMRState

__all__ = ["explain_elo_mmr", "PERF_TOLERANCE", "RATING_TOLERANCE"]

#: How far (in rating points) the performance may lie from the zero of the directly
#: summed terms of ``Q_i``: the solver stops when its bracket collapses to adjacent
#: floats, or interpolates ``Q`` on Chebyshev panels to rounding level (large rounds).
PERF_TOLERANCE = 1e-6
#: The same for the rating, the zero of Eq. 6 (a safeguarded Newton to adjacent floats).
RATING_TOLERANCE = 1e-7

_Q = "performance"
_L = "rating"


def explain_elo_mmr(system: EloMMR, state: EloMMRState, rnd: RoundInput,
                    k: int) -> Explanation:
    """:meth:`EloMMR.explain` (see the module docstring)."""
    k = check_position(rnd, k)
    after = prepared_copy(state, rnd)
    out = system.round_update(after, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    kind = GAUSSIAN if system.variant == "gaussian" else LOGISTIC
    # 1. the diffusion, on a copy of the state before the round
    diffused = prepared_copy(state, rnd)
    beta, sig = system.diffuse(diffused, rnd)
    _, gamma = K.round_weights(
        rnd.played, rnd.contest.weight, system.weight_limit,
        np.asarray(system.noob_delay, dtype=np.float64), system.sig_limit,
        system.drift_per_day, rnd.delta_seconds)
    delta = np.hypot(sig, beta)
    i = int(rnd.players[k])
    s0 = float(rnd.sigma[k])
    sd = float(sig[k])
    q: dict[str, float] = {
        "beta": float(beta[k]), "gamma": float(gamma[k]), "sigma_diffused": sd,
        "days_since_last": float(rnd.delta_seconds[k]) / K.SECS_PER_DAY,
        "delta": float(delta[k]), "rounds_before": float(rnd.played[k]),
    }
    kappa = (s0 / sd) ** 2
    q["kappa"] = kappa
    notes = [
        f"diffusion (Algorithm 2): sigma {s0:.4f} -> {sd:.4f} (gamma {gamma[k]:.4f} added in "
        f"quadrature{'' if rnd.played[k] else '; a debut: no drift'})",
    ]
    if system.collapses:
        notes.append("memoryless variant: the posterior collapsed to one normal "
                     f"N(mu, sigma_diffused^2) before the round ({system.variant}, "
                     f"rho={system.rho})")
    else:
        transfer = kappa ** system.rho if system.rho > 0 else 1.0
        q["transfer"] = transfer
        q["prior_weight_before"] = float(state.nf_w[i]) if i < state.n else 0.0
        q["prior_weight_diffused"] = float(diffused.nf_w[i])
        notes.append(
            f"transfer kappa^rho = {transfer:.6f} (rho={system.rho}): that share of the "
            "normal factor's weight stays, the rest of the logistic weight moves into it, "
            f"and every weight is scaled by kappa = {kappa:.6f}")
    terms: list[Term] = []
    equations: list[Equation] = []
    dterms = [Term("sigma_before^2", "prior", s0 * s0, "diffusion"),
              Term("gamma^2", "drift", float(gamma[k]) ** 2, "diffusion")]
    equations.append(sum_equation("diffusion", "sigma_diffused^2 = sigma_before^2 + gamma^2",
                                  "seed 002, Sec. 4 (Algorithm 2)", dterms, target=sd * sd))
    terms.extend(dterms)
    # 3. the performance, solved as the round solved it
    if system.subsample_size is None:
        solved, _ = system.exact_performance(kind, rnd.mu, delta, rnd.lo)
        p = float(solved[k])
        qterms, slope = _exact_q_terms(system, rnd, k, kind, delta, p)
        seen = "every participant's term (exact)"
    else:
        solved, _ = system.subsampled_performance(kind, rnd.mu, delta, rnd.lo)
        p = float(solved[k])
        qterms, slope, window = _window_q_terms(system, rnd, k, kind, delta, p)
        seen = (f"a window of {window} merged terms (subsample_size {system.subsample_size}; "
                f"opponents merged in (mu, delta) buckets of {system.subsample_bucket}) "
                "nearest the player's rating, as the subsampled solver did (Sec. 5.3)")
    q["performance_solved"] = p
    p_used = float(out.perf[k])
    if p_used != p:
        notes.append(f"the performance {p:.4f} was capped at the ceiling {p_used:.4f}")
    qeq = sum_equation(
        _Q, ("Q_i(p) = sum_j [l_j(p) if j placed above, v_j(p) if below, d_j(p) if tied "
             "(the player's own term included)] = 0; logistic: l = -w tanh((p-mu_j) w/2) - w,"
             " v = ... + w, d = 2(-w tanh(...)), w = pi / (sqrt 3 delta_j)"
             if kind == LOGISTIC else
             "Q_i(p) = sum_j [l_j(p), v_j(p) or d_j(p)] = 0 (Gaussian terms)"),
        "seed 002, Theorem 3.2 and Sec. 3.1", qterms, target=0.0, at=p, slope=slope,
        tolerance=PERF_TOLERANCE * abs(slope))
    equations.append(qeq)
    terms.extend(qterms)
    notes.append(f"performance: the zero of Q_i over {seen}; a positive term pushes it up "
                 "(an opponent the player beat), a negative one down")
    # 4. the new rating (Eq. 6-7) and uncertainty (Eq. 8)
    mu1 = float(out.mu[k])
    lterms, lslope, share, nominal = _rating_terms(system, after, diffused, i, kind, mu1,
                                                  p_used, float(beta[k]),
                                                  int(rnd.played[k]))
    equations.append(sum_equation(
        _L, "L'(mu) = w0 (mu - mu0) + sum_k w_out_k tanh((mu - p_k) w_arg_k) = 0",
        "seed 002, Eq. 6 (weights: Eq. 7)", lterms, target=0.0, at=mu1, slope=lslope,
        tolerance=RATING_TOLERANCE * abs(lslope)))
    terms.extend(lterms)
    q["evidence_share"] = share
    q["evidence_share_nominal"] = nominal
    notes.append(
        f"the new performance carries {100 * share:.2f}% of the weight of the robust "
        f"average (Eq. 7) at the new rating ({100 * nominal:.2f}% of the weight 1/beta_k^2 "
        "of Eq. 8); the prior and the older performances carry the rest")
    s1 = float(out.sigma[k])
    sig_terms = [Term("1/sigma_diffused^2", "prior", 1.0 / (sd * sd), "uncertainty"),
                 Term("1/beta^2", "new", 1.0 / float(beta[k]) ** 2, "uncertainty")]
    equations.append(sum_equation("uncertainty", "1/sigma_after^2 = 1/sigma_diffused^2 + "
                                  "1/beta^2", "seed 002, Eq. 8", sig_terms,
                                  target=1.0 / (s1 * s1)))
    terms.extend(sig_terms)
    if system.history_tolerance > 0 and system.max_history is None:
        notes.append(f"history_tolerance={system.history_tolerance}: the solver skipped the "
                     "oldest factors whose weights sum to at most that share of the total")
    return explanation(system, rnd, k, out, equations=equations, terms=terms,
                       quantities=q, notes=notes)


def _exact_q_terms(system: EloMMR, rnd: RoundInput, k: int, kind: int, delta: np.ndarray,
                   p: float) -> tuple[list[Term], float]:
    """One term of ``Q_i(p)`` per participant (the player's own included)."""
    lo = rnd.lo
    n = lo.size
    split = system.split_ties
    if kind == LOGISTIC:
        w = TANH_MULTIPLIER / delta
        t = np.tanh((p - rnd.mu) * 0.5 * w)
        val = -w * t
        dval = -(1.0 - t * t) * 0.5 * w * w
        tie = 1.0 if split else 2.0
        better = lo < lo[k]
        worse = lo > lo[k]
        values = np.where(better, val - w, np.where(worse, val + w, tie * val))
        slopes = np.where(better | worse, dval, tie * dval)
    else:
        values = np.empty(n)
        slopes = np.empty(n)
        for j in range(n):
            lv, lp, wv, wp, dv, dp = gaussian_terms(p, float(rnd.mu[j]), float(delta[j]), split)
            if lo[j] < lo[k]:
                values[j], slopes[j] = lv, lp
            elif lo[j] > lo[k]:
                values[j], slopes[j] = wv, wp
            else:
                values[j], slopes[j] = dv, dp
    handles = rnd.contest.handles
    terms = [Term(handles[j], opponent_kind(lo, k, j), float(values[j]), _Q,
                  {"mu": float(rnd.mu[j]), "delta": float(delta[j]), "place": float(lo[j])})
             for j in range(n)]
    return terms, float(slopes.sum())


def _window_q_terms(system: EloMMR, rnd: RoundInput, k: int, kind: int, delta: np.ndarray,
                    p: float) -> tuple[list[Term], float, int]:
    """The terms of ``Q_i(p)`` the subsampled solver saw: its window of merged terms
    (:func:`~podium.systems.elo_mmr.kernels.subsampled_performance`), each merged term
    counted once per rank it holds."""
    width = system.subsample_bucket
    mu = np.ascontiguousarray(rnd.mu, dtype=np.float64)
    lo = rnd.lo
    bmu = _round_half_away(mu / width)
    bsig = _round_half_away(delta / width)
    order = np.lexsort((lo, bsig, bmu))
    m_mu, m_sig, offs, ranks = K.merge_terms(order, mu, delta, lo, width)
    m_bkt = np.array([K.bucket(x, width) for x in m_mu.tolist()])
    big_m = m_mu.size
    beg = int(np.searchsorted(m_bkt, K.bucket(float(mu[k]), width), side="left"))
    end = beg + 1
    assert system.subsample_size is not None
    size = system.subsample_size
    expand = (max(size - (end - beg), 0) + 1) // 2
    beg, end = max(beg - expand, 0), min(big_m, end + expand)
    expand = max(size - (end - beg), 0)
    beg, end = max(beg - expand, 0), min(big_m, end + expand)
    handles = rnd.contest.handles
    split = system.split_ties
    my = int(lo[k])
    terms: list[Term] = []
    slope = 0.0
    for qq in range(beg, end):
        members = order[offs[qq]:offs[qq + 1]]
        rk = ranks[offs[qq]:offs[qq + 1]]
        n_less = int(np.count_nonzero(rk < my))
        n_eq = int(np.count_nonzero(rk == my))
        n_gre = int(rk.size) - n_less - n_eq
        if kind == LOGISTIC:
            w = TANH_MULTIPLIER / float(m_sig[qq])
            t = math.tanh((p - float(m_mu[qq])) * 0.5 * w)
            val, dval = -w * t, -(1.0 - t * t) * 0.5 * w * w
            tie = 1.0 if split else 2.0
            value = n_less * (val - w) + n_gre * (val + w) + n_eq * tie * val
            slope += (n_less + n_gre + tie * n_eq) * dval
        else:
            lv, lp, wv, wp, dv, dp = gaussian_terms(p, float(m_mu[qq]), float(m_sig[qq]), split)
            value = n_less * lv + n_gre * wv + n_eq * dv
            slope += n_less * lp + n_gre * wp + n_eq * dp
        names = [handles[int(j)] for j in members]
        source = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"
        kind_name = ("self" if len(names) == 1 and int(members[0]) == k else
                     "beat" if n_gre == rk.size else "lost" if n_less == rk.size else
                     "tied" if n_eq == rk.size else "merged")
        terms.append(Term(source, kind_name, float(value), _Q, {
            "mu": float(m_mu[qq]), "delta": float(m_sig[qq]), "members": float(len(names)),
            "above": float(n_less), "tied": float(n_eq), "below": float(n_gre)}))
    return terms, slope, end - beg


def _rating_terms(system: EloMMR, after: EloMMRState, diffused: EloMMRState, i: int,
                  kind: int, x: float, p: float, beta: float,
                  played: int) -> tuple[list[Term], float, float, float]:
    """The terms of ``L'(x)`` (Eq. 6) at the new rating ``x``, its slope, and the new
    performance's share of the robust-average weights (Eq. 7) and of the nominal
    weights ``1/beta_k^2`` (Eq. 8)."""
    terms: list[Term] = []
    if kind == GAUSSIAN:
        # Elo-MMchi: the collapsed normal prior times the normal performance factor
        w0, mu0 = float(diffused.nf_w[i]), float(diffused.nf_mu[i])
        wp = 1.0 / (beta * beta)
        terms.append(Term("prior", "prior", w0 * (x - mu0), _L, {"mu": mu0, "weight": w0}))
        terms.append(Term("this contest", "new", wp * (x - p), _L, {"mu": p, "weight": wp}))
        return terms, w0 + wp, wp / (w0 + wp), wp / (w0 + wp)
    w0, mu0 = float(after.nf_w[i]), float(after.nf_mu[i])
    pk, warg, wout = after.factors(i)
    terms.append(Term("prior", "prior", w0 * (x - mu0), _L, {"mu": mu0, "weight": w0}))
    slope = w0
    eq7 = [w0]
    nominal = [w0]
    nf = pk.size
    numbered = nf == played + 1  # every performance kept: factor k is round k + 1
    for idx in range(nf):
        t = math.tanh((x - float(pk[idx])) * float(warg[idx]))
        value = float(wout[idx]) * t
        slope += float(wout[idx]) * float(warg[idx]) * (1.0 - t * t)
        dx = x - float(pk[idx])
        wk = value / dx if dx != 0.0 else float(wout[idx] * warg[idx])
        eq7.append(wk)
        nominal.append(K.WEIGHT_OF_TANH * float(warg[idx]) * float(wout[idx]))
        new = idx == nf - 1
        detail = {"mu": float(pk[idx]), "weight": wk, "nominal_weight": nominal[-1]}
        if numbered:
            detail["round"] = float(idx + 1)
        name = "this contest" if new else (f"round {idx + 1}" if numbered
                                           else f"performance {idx + 1} of {nf}")
        terms.append(Term(name, "new" if new else "history", value, _L, detail))
    return terms, slope, eq7[-1] / math.fsum(eq7), nominal[-1] / math.fsum(nominal)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.sign(x) * np.floor(np.abs(x) + 0.5)
    return out
