"""Explanations of the Codeforces system, cfsys, all-pairs Glicko and BAR
(:meth:`RatingSystem.explain` of :mod:`~podium.systems.codeforces`,
:mod:`~podium.systems.cfsys` and :mod:`~podium.systems.glicko`).

Each re-runs the round's own update from the state just before it (the rating after is
the round's, bit for bit) and lays out what its formula is made of:

* Codeforces ([Mirzayanov2015], seed 001): the seed as ``1 +`` one win probability per
  opponent, the geometric mean with the place, the needed rating, and the change as
  the raw ``(R - r) / 2`` plus the two anti-inflation corrections (exactly, in integers);
* cfsys: the new rating as the weighted mean of the old one and the performance;
* Glicko / BAR (all pairs): the change as one term per opponent, ``g_j (o_ij - p_ij)``
  scaled by the update's factor;
* TopCoder: the expected rank as one probability per opponent, the performed-as rating
  and the new rating as the weighted mean of the old one and the performance;
* EloSRM / SRMFix: ``Delta R = K P_A / (W V F)`` as the rank performance's and the
  participation bonus's parts, every factor named.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import podium.systems._glicko_kernels as GK
from podium.core.explain import Explanation, Term
from podium.core.numerics import TANH_MULTIPLIER
from podium.systems._explain import (
    change_terms,
    check_position,
    explanation,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.cfsys import CFSys
    from podium.systems.codeforces import Codeforces
    from podium.systems.elo_srm import EloSRM
    from podium.systems.glicko import BAR, Glicko
    from podium.systems.topcoder import TopCoder

__all__ = ["explain_codeforces", "explain_cfsys", "explain_glicko", "explain_bar",
           "explain_topcoder", "explain_elo_srm", "SEED_TOLERANCE"]

#: The seeds of a Codeforces round come from an FFT convolution (exact to below 1e-9
#: places, :mod:`podium.systems.codeforces`); the per-opponent probabilities summed
#: directly agree with them within this many places.
SEED_TOLERANCE = 1e-8


def explain_codeforces(system: Codeforces, state: SystemState, rnd: RoundInput,
                       k: int) -> Explanation:
    """:meth:`Codeforces.explain`: the seed, its per-opponent terms, the expected and
    needed rating, and the change as raw delta + corrections (+ the 2020 display bonus)."""
    from podium.systems.codeforces import codeforces_round

    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    played = np.asarray(rnd.played, dtype=np.int64)
    r = np.rint(np.asarray(rnd.mu, dtype=np.float64)).astype(np.int64) \
        + system.display_offset(played)
    places = np.asarray(rnd.hi, dtype=np.int64) + 1
    res = codeforces_round(r, places)
    ri = int(r[k])
    # P(j beats i) = 1 / (1 + 10^((r_i - r_j) / 400)), j != i
    prob = 1.0 / (1.0 + np.power(10.0, (ri - r.astype(np.float64)) / 400.0))
    seed_terms = change_terms(rnd, k, prob, "seed", {"rating": r.astype(np.float64)},
                              skip_self=True)
    seed = float(res.seed[k])
    raw = int(math.trunc((int(res.need[k]) - ri) / 2))
    delta = int(res.delta[k])
    bonus = int(system.display_offset(played[k])) - int(system.display_offset(played[k] + 1))
    parts = [Term("raw change (R - r) / 2", "raw", float(raw), "change",
                  {"needed_rating": float(res.need[k]), "rating": float(ri)}),
             Term("correction 1: -sum(d) / n - 1", "correction", float(res.inc1), "change"),
             Term(f"correction 2: top {res.top_size} by rating", "correction",
                  float(res.inc2), "change", {"top_size": float(res.top_size)})]
    if bonus:
        parts.append(Term("display bonus (2020 rules)", "bonus", float(bonus), "change"))
    if raw + int(res.inc1) + int(res.inc2) != delta:  # pragma: no cover - kernel contract
        raise AssertionError("Codeforces change does not add up")
    q = {"rating_computed": float(ri), "place": float(places[k]), "seed": seed,
         "expected_place": seed, "geometric_mean": float(res.m[k]),
         "needed_rating": float(res.need[k]), "raw_change": float(raw),
         "correction_1": float(res.inc1), "correction_2": float(res.inc2),
         "top_size": float(res.top_size), "rating_change": float(delta)}
    notes = [
        f"seed (expected place) {seed:.4f} = 1 + the win probabilities of the "
        f"{len(seed_terms)} opponents; place {int(places[k])} (the worst of a tie)",
        f"m = sqrt(place * seed) = {res.m[k]:.4f}; the needed rating R = {int(res.need[k])} "
        "is the largest integer whose seed is still >= m",
        f"change = trunc((R - r) / 2) = {raw:+d}, then {int(res.inc1):+d} (all ratings "
        f"sum to about 0) and {int(res.inc2):+d} (the top {res.top_size} sum to about 0, "
        "at most -10)",
    ]
    equations = [
        sum_equation("seed", "seed_i = 1 + sum_{j != i} 1 / (1 + 10^((r_i - r_j) / 400))",
                     "seed 001 (the seed)", seed_terms, target=seed - 1.0,
                     tolerance=SEED_TOLERANCE),
        sum_equation("change", "d_i = trunc((R_i - r_i) / 2) + inc_1 + inc_2",
                     "seed 001 (the corrections after round 327)", parts,
                     target=float(out.mu[k]) - float(rnd.mu[k]), tolerance=0.0),
    ]
    return explanation(system, rnd, k, out, equations=equations,
                       terms=[*seed_terms, *parts], quantities=q, notes=notes)


def explain_cfsys(system: CFSys, state: SystemState, rnd: RoundInput, k: int) -> Explanation:
    """:meth:`CFSys.explain`: ``mu' = (mu + w p) / (1 + w)`` as the old rating's and the
    performance's shares."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    wt = rnd.contest.weight * system.weight
    mu0 = float(rnd.mu[k])
    p = float(out.perf[k])
    parts = [Term("old rating", "prior", mu0 / (1.0 + wt), "rating", {"weight": 1.0 / (1 + wt)}),
             Term("performance", "new", wt * p / (1.0 + wt), "rating",
                  {"weight": wt / (1 + wt), "performance": p})]
    eq = sum_equation("rating", "mu' = (mu + w p) / (1 + w), w = contest weight * weight",
                      "reference-notes (cfsys)", parts, target=float(out.mu[k]))
    return explanation(system, rnd, k, out, equations=[eq], terms=parts,
                       quantities={"w": wt}, notes=[
                           "performance p: the rating whose expected rank equals the "
                           "geometric mean of the expected and the actual rank"])


def explain_glicko(system: Glicko, state: SystemState, rnd: RoundInput,
                   k: int) -> Explanation:
    """:meth:`Glicko.explain`: the change as ``q sigma'^2 / n`` times one term
    ``g_j (o_ij - p_ij)`` per opponent."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    mu = np.asarray(rnd.mu, dtype=np.float64)
    n = mu.size
    sig_perf = system.beta / math.sqrt(rnd.contest.weight)
    s = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), system.sig_drift)
    c = np.hypot(s, sig_perf)
    g = sig_perf / c
    o = _outcomes(rnd.lo, k)
    p = 0.5 + 0.5 * np.tanh(GK.HALF_TANH_MULTIPLIER / c * (mu[k] - mu))
    q = TANH_MULTIPLIER / sig_perf
    factor = q * float(out.sigma[k]) ** 2 / n
    values = factor * g * (o - p)
    terms = change_terms(rnd, k, values, "change", {"g": g, "expected": p, "outcome": o})
    eq = sum_equation("change", "mu' - mu = q sigma'^2 / n * sum_j g_j (o_ij - p_ij)",
                      "Glicko (all pairs; docs/systems.md)", terms,
                      target=float(out.mu[k]) - float(mu[k]),
                      tolerance=1e-9 * (abs(factor) * float(g.sum()) + 1e-12))
    return explanation(system, rnd, k, out, equations=[eq], terms=terms,
                       quantities={"q": q, "sigma_drifted": float(s[k]), "factor": factor},
                       notes=["each opponent j adds g_j (o_ij - p_ij): the outcome (1 beat, "
                              "1/2 tied, 0 lost) minus the expected score, weighted by "
                              "g_j = sig_perf / sqrt(s_j^2 + sig_perf^2)"])


def explain_bar(system: BAR, state: SystemState, rnd: RoundInput, k: int) -> Explanation:
    """:meth:`BAR.explain`: the change as ``s_i^2 / n`` times one term
    ``(o_ij - p_ij) / c_ij`` per opponent."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    mu = np.asarray(rnd.mu, dtype=np.float64)
    n = mu.size
    s = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), system.sig_drift)
    var = s * s
    cij = np.sqrt(var[k] + var + 2.0 * system.beta**2 / rnd.contest.weight)
    p = 1.0 / (1.0 + np.exp(TANH_MULTIPLIER * (mu - mu[k]) / cij))
    o = _outcomes(rnd.lo, k)
    values = var[k] * (o - p) / cij / n
    values[k] = 0.0
    terms = change_terms(rnd, k, values, "change", {"expected": p, "outcome": o, "c": cij})
    eq = sum_equation("change", "mu' - mu = s_i^2 / n * sum_j (o_ij - p_ij) / c_ij",
                      "Bradley-Terry full pairs (Weng & Lin), docs/systems.md", terms,
                      target=float(out.mu[k]) - float(mu[k]),
                      magnitude=abs(float(mu[k])))
    return explanation(system, rnd, k, out, equations=[eq], terms=terms,
                       quantities={"sigma_drifted": float(s[k])})


def _outcomes(lo: np.ndarray, k: int) -> np.ndarray:
    """``o_kj``: 1 where ``k`` placed above ``j``, 0 below, 1/2 level (itself included)."""
    out: np.ndarray = np.where(lo > lo[k], 1.0, np.where(lo < lo[k], 0.0, 0.5))
    return out


def explain_topcoder(system: TopCoder, state: SystemState, rnd: RoundInput,
                     k: int) -> Explanation:
    """:meth:`TopCoder.explain`: the expected rank as ``1/2 +`` one probability per
    opponent, the performed-as rating, and the new rating as the weighted mean of the
    old one and the performance (then capped)."""
    from scipy.special import ndtri  # type: ignore[import-untyped]

    from podium.systems.topcoder import (
        _CAP_BASE,
        _CAP_EXTRA,
        _DAMPING,
        _TC_EXTRA,
        _TC_LIMIT,
        competition_factor,
    )

    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    c = rnd.contest
    mu = np.asarray(rnd.mu, dtype=np.float64)
    vol = np.asarray(rnd.sigma, dtype=np.float64)
    n = mu.size
    var = vol * vol
    cf = competition_factor(mu, var)
    sqrt_w = math.sqrt(c.weight)
    # P(j beats i) = Phi(sqrt(w) (mu_j - mu_i) / sqrt(v_i + v_j))
    prob = 0.5 * np.array([math.erfc(sqrt_w / math.sqrt(2.0) * (mu[k] - mu[j])
                                     / math.sqrt(var[k] + var[j])) for j in range(n)])
    ex_terms = change_terms(rnd, k, prob, "expected rank", skip_self=True)
    ac_rank = 0.5 * (1.0 + float(rnd.lo[k]) + float(rnd.hi[k]))
    ex_rank = 0.5 + math.fsum(t.value for t in ex_terms)
    perf = float(out.perf[k])
    rounds = float(rnd.played[k]) + 1.0
    f = system.weight_limit + (system.weight_noob - system.weight_limit) / rounds
    cap = (_CAP_BASE + _CAP_EXTRA / (rounds + 1.0)) * sqrt_w * f / (_TC_LIMIT + _TC_EXTRA / rounds)
    weight = f * c.weight / (1.0 - f)
    for threshold, factor in _DAMPING:  # highest first: the higher threshold wins
        if mu[k] >= threshold:
            weight *= factor
            break
    tried = (mu[k] + weight * perf) / (1.0 + weight)
    parts = [Term("old rating", "prior", float(mu[k]) / (1.0 + weight), "rating",
                  {"weight": 1.0 / (1.0 + weight)}),
             Term("performed-as rating", "new", weight * perf / (1.0 + weight), "rating",
                  {"weight": weight / (1.0 + weight), "performance": perf})]
    capped = float(out.mu[k]) != tried
    equations = [
        sum_equation("expected rank", "E_i = 1/2 + sum_{j != i} Phi(sqrt(w) (mu_j - mu_i) / "
                     "sqrt(V_i^2 + V_j^2))", "reference-notes (tcsys)", ex_terms,
                     target=ex_rank - 0.5),
        sum_equation("rating", "tried = (mu + W P) / (1 + W); mu' = tried clipped to mu +- cap",
                     "reference-notes (tcsys)", parts, target=tried),
    ]
    notes = [f"performed-as rating P = mu + CF (Phi^-1(E/n) - Phi^-1(A/n)) = {perf:.4f} with "
             f"expected rank E = {ex_rank:.4f}, actual rank A = {ac_rank:.1f}, CF = {cf:.4f}"]
    if capped:
        notes.append(f"the change {tried - mu[k]:+.4f} was capped at +-{cap:.4f}")
    q = {"competition_factor": cf, "expected_rank": ex_rank, "actual_rank": ac_rank,
         "performance_uncapped": float(mu[k] + cf * (ndtri(ex_rank / n) - ndtri(ac_rank / n))),
         "f": f, "weight": weight, "cap": cap, "tried": tried}
    return explanation(system, rnd, k, out, equations=equations, terms=[*ex_terms, *parts],
                       quantities=q, notes=notes)


def explain_elo_srm(system: EloSRM, state: SystemState, rnd: RoundInput,
                    k: int) -> Explanation:
    """:meth:`EloSRM.explain`: ``Delta R = K P_A / (W V F)`` (seed 003, Table 1) as the
    rank performance's and the participation bonus's parts, with every factor named."""
    import podium.systems._elo_srm_kernels as SK
    from podium.systems.elo_srm import K0, EloSRMState

    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    assert isinstance(state, EloSRMState)
    t = rnd.contest.time_seconds
    t0 = system.t0_seconds if system.t0_seconds is not None else (
        state.t0 if state.t0 is not None else t)
    played = np.asarray(rnd.played, dtype=np.int64)
    x = np.where(played == 0, system.r_init(t, t0), np.asarray(rnd.mu, dtype=np.float64))
    erank, arank, perf, pprime = SK.rank_performance(
        np.ascontiguousarray(x), np.ascontiguousarray(rnd.lo), np.ascontiguousarray(rnd.hi), 0)
    i = int(rnd.players[k])
    recent_prev = state.recent[i:i + 1] if i < state.n else np.zeros(1)
    sl = slice(k, k + 1)
    delta_r, recent, _ = system.rating_change(perf[sl], pprime[sl], played[sl], recent_prev,
                                              rnd.delta_seconds[sl])
    p, pp = float(perf[k]), float(pprime[k])
    p_m = p if math.isinf(system.m) else p * system.m / (system.m + abs(p))
    w = math.sqrt(1.0 + system.w1 * float(played[k]))
    v = 1.0 + system.c * pp
    f = float(recent[0]) ** system.gamma
    denom = w * v * f
    parts = []
    if played[k] == 0:
        parts.append(Term("debut rating R_init(t) - prior", "debut",
                          float(x[k]) - float(rnd.mu[k]), "change"))
    parts += [Term("rank performance K P_M / (W V F)", "performance",
                   system.k * p_m / denom, "change", {"P": p, "P_M": p_m}),
              Term("participation bonus K (B/K0) P' / (W V F)", "bonus",
                   system.k * (system.b / K0) * pp / denom, "change", {"P_prime": pp})]
    eq = sum_equation("change", "Delta R = K (P_M + (B/K0) P') / (W V F)",
                      "seed 003, Table 1 (Eqs. 5, 12-22)", parts,
                      target=float(out.mu[k]) - float(rnd.mu[k]),
                      magnitude=abs(float(rnd.mu[k])))
    q = {"expected_rank": float(erank[k]), "actual_rank": float(arank[k]), "P": p,
         "P_prime": pp, "P_M": p_m, "K": float(system.k), "W": w, "V": v, "F": f,
         "N_r": float(recent[0]), "delta_R": float(delta_r[0])}
    return explanation(system, rnd, k, out, equations=[eq], terms=parts, quantities=q,
                       notes=[f"P = log2(expected rank {erank[k]:.4f} / actual rank "
                              f"{arank[k]:.1f}) = {p:.6f}"])
