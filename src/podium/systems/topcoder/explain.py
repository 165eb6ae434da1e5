"""Explanation of TopCoder's system (:meth:`TopCoder.explain
<podium.systems.topcoder.TopCoder.explain>`): the expected rank as one probability per
opponent, the performed-as rating and the new rating as the weighted mean of the old
one and the performance (then capped), re-run from the state just before the round
(bit for bit the round's own).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from podium.core.explain import Explanation, Term
from podium.systems.base.explain import (
    change_terms,
    check_position,
    explanation,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.topcoder import TopCoder

__all__ = ["explain_topcoder"]


def explain_topcoder(system: TopCoder, state: SystemState, rnd: RoundInput,
                     k: int) -> Explanation:
    """:meth:`TopCoder.explain`: the expected rank as ``1/2 +`` one probability per
    opponent, the performed-as rating, and the new rating as the weighted mean of the
    old one and the performance (then capped)."""
    from scipy.special import ndtri  # type: ignore[import-untyped]

    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    c = rnd.contest
    mu = np.asarray(rnd.mu, dtype=np.float64)
    vol = np.asarray(rnd.sigma, dtype=np.float64)
    n = mu.size
    var = vol * vol
    cf = system.competition_factor(mu, var)
    sqrt_w = math.sqrt(c.weight)
    # P(j beats i) = Phi(sqrt(w) (mu_j - mu_i) / sqrt(v_i + v_j))
    prob = 0.5 * np.array([math.erfc(sqrt_w / math.sqrt(2.0) * (mu[k] - mu[j])
                                     / math.sqrt(var[k] + var[j])) for j in range(n)])
    ex_terms = change_terms(rnd, k, prob, "expected rank", skip_self=True)
    ac_rank = 0.5 * (1.0 + float(rnd.lo[k]) + float(rnd.hi[k]))
    ex_rank = 0.5 + math.fsum(t.value for t in ex_terms)
    perf = float(out.perf[k])
    f_k, weight_k, cap_k = system.weight_and_cap(mu[k:k + 1], rnd.played[k:k + 1], c.weight)
    f, weight, cap = float(f_k[0]), float(weight_k[0]), float(cap_k[0])
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
