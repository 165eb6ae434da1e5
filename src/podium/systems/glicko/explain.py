"""Explanations of all-pairs Glicko and BAR (:meth:`Glicko.explain
<podium.systems.glicko.Glicko.explain>`, :meth:`BAR.explain <podium.systems.glicko.BAR.explain>`).

Each re-runs the round's own update from the state just before it (the rating after is
the round's, bit for bit) and writes the change as one term per opponent,
``g_j (o_ij - p_ij)`` (Glicko) or ``(o_ij - p_ij) / c_ij`` (BAR), scaled by the
update's factor.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import podium.systems.glicko.kernels as GK
from podium.core.explain import Explanation
from podium.core.numerics import TANH_MULTIPLIER
from podium.systems.base.explain import (
    change_terms,
    check_position,
    explanation,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.glicko import BAR, Glicko

__all__ = ["explain_glicko", "explain_bar"]


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
