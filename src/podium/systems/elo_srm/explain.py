"""Explanation of EloSRM and SRMFix (:meth:`EloSRM.explain
<podium.systems.elo_srm.EloSRM.explain>`): ``Delta R = K P_A / (W V F)`` (seed 003,
Table 1) as the rank performance's and the participation bonus's parts, every factor
named, re-run from the state just before the round (bit for bit the round's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from podium.core.explain import Explanation, Term
from podium.systems.base.explain import (
    check_position,
    explanation,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.elo_srm import EloSRM

__all__ = ["explain_elo_srm"]


def explain_elo_srm(system: EloSRM, state: SystemState, rnd: RoundInput,
                    k: int) -> Explanation:
    """:meth:`EloSRM.explain`: ``Delta R = K P_A / (W V F)`` (seed 003, Table 1) as the
    rank performance's and the participation bonus's parts, with every factor named."""
    import podium.systems.elo_srm.kernels as SK
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
    fx = system.rating_factors(perf[sl], pprime[sl], played[sl], recent_prev,
                               rnd.delta_seconds[sl])
    p, pp = float(perf[k]), float(pprime[k])
    p_m, w, v = float(fx.p_m[0]), float(fx.w[0]), float(fx.v[0])
    # F = N_r^gamma of the same N_r, as a scalar power: the explanation has always shown
    # C's pow, which NumPy's vectorised power can miss by one ulp
    f = float(fx.recent[0]) ** system.gamma
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
