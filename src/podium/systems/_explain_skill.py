"""Explanations of openskill's models (:mod:`podium.systems.openskill`).

An individual round of a pairwise model (Weng & Lin's Bradley-Terry and
Thurstone-Mosteller, full or partial pairs) moves a player by its ``Omega``: a sum over
its opponents (the mean over a window of them for the partial-pair models) of
``sigma_i^2 / c_iq`` times the surprise of the pair's outcome (``s - p`` for
Bradley-Terry, ``v`` or ``-v`` or the draw's ``vt`` for Thurstone-Mosteller).  The
explanation lists those terms, which add up to the change of ``mu``; Plackett-Luce's
``Omega`` and ``Delta`` are given as quantities.

TrueSkill (:mod:`podium.systems.trueskill`) ends a round with one pass of messages
back up to the skills, so a player's new rating is the product of two Gaussians: the
prior ``N(mu_d, sigma_d^2)`` (the old rating widened by the drift) and the message
``N(m, 1/pi_g)`` that the contest sends to the skill.  The explanation recovers that
message from the posterior (``pi_g = 1/sigma'^2 - 1/sigma_d^2``,
``m pi_g = mu'/sigma'^2 - mu_d/sigma_d^2``) and writes the new rating as the
precision-weighted mean of the two: ``m`` is the skill the contest alone points to,
and its share of the weight is how much the contest counted against the history.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

import podium.systems._openskill_kernels as K
from podium.core.explain import Explanation, Term
from podium.systems._explain import (
    check_position,
    explanation,
    opponent_kind,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.openskill import OpenSkillModel
    from podium.systems.trueskill import TrueSkillSPb

__all__ = ["explain_openskill", "explain_trueskill"]

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
    """The terms of ``Omega_i`` (:func:`~podium.systems._openskill_kernels._pair_terms`
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


def explain_trueskill(system: TrueSkillSPb, state: SystemState, rnd: RoundInput,
                      k: int) -> Explanation:
    """:meth:`TrueSkillSPb.explain`: the new rating as the precision-weighted mean of the
    drift-widened prior and the contest's message to the skill (module docstring).  A
    team round gives the rating before and after only."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    mu_d = float(rnd.mu[k])
    sig_d = math.hypot(float(rnd.sigma[k]), float(system.sig_drift))
    mu1 = float(out.mu[k])
    sig1 = float(out.sigma[k])
    pi_d = 1.0 / (sig_d * sig_d)
    pi1 = 1.0 / (sig1 * sig1)
    pi_g = pi1 - pi_d
    tau_g = mu1 * pi1 - mu_d * pi_d
    share = pi_g / pi1
    q: dict[str, float] = {"sigma_drifted": sig_d, "sig_perf": system.beta
                           / math.sqrt(rnd.contest.weight), "message_precision": pi_g,
                           "evidence_share": share}
    game_detail: dict[str, float] = {"weight": share}
    notes = [f"the contest's message to the skill carries {100 * share:.2f}% of the new "
             "rating's precision; the drift-widened prior carries the rest"]
    if pi_g > 0.0:
        q["message_mean"] = tau_g / pi_g
        q["message_sigma"] = 1.0 / math.sqrt(pi_g)
        game_detail["mu"] = tau_g / pi_g
        notes.append(f"on its own the contest points to a skill of {tau_g / pi_g:.4f} "
                     f"(+/- {1.0 / math.sqrt(pi_g):.4f})")
    else:  # pragma: no cover - expectation propagation sends a proper message here
        notes.append("the contest's message has no positive precision (an improper "
                     "Gaussian): only its weighted mean is shown")
    terms = [
        Term("prior", "prior", pi_d / pi1 * mu_d, "rating",
             {"mu": mu_d, "sigma": sig_d, "weight": pi_d / pi1}),
        Term("this contest", "new", tau_g / pi1, "rating", game_detail),
        Term("1/sigma_drifted^2", "prior", pi_d, "precision", {"sigma": sig_d}),
        Term("contest message", "new", pi_g, "precision", {}),
    ]
    eqs = [
        sum_equation("rating", "mu' = (mu_d / sigma_d^2 + m pi_g) / (1/sigma'^2): the "
                     "precision-weighted mean of prior and contest message",
                     "TrueSkill [Herbrich2006], the skill posterior of expectation propagation",
                     terms[:2], target=mu1, magnitude=abs(mu_d)),
        sum_equation("precision", "1/sigma'^2 = 1/sigma_d^2 + pi_g",
                     "TrueSkill [Herbrich2006], product of Gaussians", terms[2:], target=pi1),
    ]
    return explanation(system, rnd, k, out, equations=eqs, terms=terms, quantities=q,
                       notes=notes)
