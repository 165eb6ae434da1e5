"""Explanations of openskill's models (:mod:`podium.systems.openskill`).

An individual round of a pairwise model (Weng & Lin's Bradley-Terry and
Thurstone-Mosteller, full or partial pairs) moves a player by its ``Omega``: a sum over
its opponents (the mean over a window of them for the partial-pair models) of
``sigma_i^2 / c_iq`` times the surprise of the pair's outcome (``s - p`` for
Bradley-Terry, ``v`` or ``-v`` or the draw's ``vt`` for Thurstone-Mosteller).  The
explanation lists those terms, which add up to the change of ``mu``; Plackett-Luce's
``Omega`` and ``Delta`` are given as quantities.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import podium.systems.openskill.kernels as K
from podium.core.explain import Explanation, Term
from podium.systems.base.explain import (
    check_position,
    explanation,
    opponent_kind,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.openskill import OpenSkillModel

__all__ = ["explain_openskill"]

_NAMES = {K.BT: "Bradley-Terry, full pairs (Weng & Lin Alg. 1)",
          K.BTP: "Bradley-Terry, partial pairs (Weng & Lin Alg. 2)",
          K.TM: "Thurstone-Mosteller, full pairs (Weng & Lin Alg. 3)",
          K.TMP: "Thurstone-Mosteller, partial pairs (openskill)",
          K.PL: "Plackett-Luce (Weng & Lin Alg. 4)"}


def explain_openskill(system: OpenSkillModel, state: SystemState, rnd: RoundInput,
                      k: int) -> Explanation:
    """:meth:`OpenSkillModel.explain` (see the module docstring)."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    model = system.MODEL
    sigma = np.asarray(rnd.sigma, dtype=np.float64)
    s = np.sqrt(sigma * sigma + system.tau * system.tau)
    var = s * s
    mu = np.asarray(rnd.mu, dtype=np.float64)
    rank = np.asarray(rnd.lo, dtype=np.int64)
    omega, delta = K.team_terms(model, mu.copy(), var, rank.copy(), float(system.beta),
                                float(system._epsilon()), int(system._window()))
    q = {"tau_widened_sigma": float(s[k]), "Omega": float(omega[k]), "Delta": float(delta[k])}
    if model == K.PL:
        return explanation(system, rnd, k, out, quantities=q, notes=[
            f"{_NAMES[model]}: mu' = mu + Omega = {mu[k]:.4f} {omega[k]:+.6f}; "
            "Omega is not a sum of one term per opponent"])
    terms = _pair_terms(system, model, mu, var, rank, k, rnd)
    eq = sum_equation(
        "change", "mu' - mu = Omega = sum_q sigma_i^2 / c_iq * (outcome surprise of i vs q)"
        + (" / count (mean over the window)" if model in (K.BTP, K.TMP) else ""),
        f"openskill, {_NAMES[model]}", terms, target=float(out.mu[k]) - float(mu[k]),
                      magnitude=abs(float(mu[k])))
    return explanation(system, rnd, k, out, equations=[eq], terms=terms, quantities=q,
                       notes=[f"{_NAMES[model]}: each opponent adds sigma_i^2 / c_iq times "
                              "how much the result beat (or missed) the expectation"])


def _pair_terms(system: OpenSkillModel, model: int, mu: np.ndarray, var: np.ndarray,
                rank: np.ndarray, i: int, rnd: RoundInput) -> list[Term]:
    """The terms of ``Omega_i`` (:func:`~podium.systems.openskill.kernels._pair_terms`
    term by term); the standings are in rank order, as the kernel sorts them."""
    n = mu.size
    lo, hi = 0, n
    if model in (K.TMP, K.BTP):
        window = int(system._window())
        lo, hi = max(0, i - window), min(n, i + window + 1)
    two_b2 = 2.0 * float(system.beta) ** 2
    eps = float(system._epsilon())
    raw: list[tuple[int, float, float, float]] = []
    for q in range(lo, hi):
        if q == i:
            continue
        c = math.sqrt(var[i] + var[q] + two_b2)
        if model == K.TMP:
            c = 2.0 * c
        s2c = var[i] / c
        if model in (K.BT, K.BTP):
            p = 1.0 / (1.0 + math.exp((mu[q] - mu[i]) / c))
            o = 1.0 if rank[q] > rank[i] else 0.5 if rank[q] == rank[i] else 0.0
            raw.append((q, s2c * (o - p), p, c))
        else:
            x = (mu[i] - mu[q]) / c
            t = eps / c
            if rank[q] > rank[i]:
                val = s2c * K.v(x, t)
            elif rank[q] < rank[i]:
                val = -s2c * K.v(-x, t)
            else:
                val = s2c * K.vt(x, t)
            raw.append((q, val, math.nan, c))
    count = len(raw) if model in (K.TMP, K.BTP) else 1
    handles = rnd.contest.handles
    out = []
    for q, val, p, c in raw:
        detail = {"mu": float(mu[q]), "c": c, "place": float(rank[q])}
        if not math.isnan(p):
            detail["expected"] = p
        out.append(Term(handles[q], opponent_kind(rank, i, q), val / count if count > 1 else val,
                        "change", detail))
    return out
