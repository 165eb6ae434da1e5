"""Explanation of TrueSkill-SPb (:meth:`TrueSkillSPb.explain
<podium.systems.trueskill.TrueSkillSPb.explain>`).

TrueSkill ends a round with one pass of messages back up to the skills, so a player's
new rating is the product of two Gaussians: the prior ``N(mu_d, sigma_d^2)`` (the old
rating widened by the drift) and the message ``N(m, 1/pi_g)`` that the contest sends
to the skill.  The explanation recovers that message from the posterior
(``pi_g = 1/sigma'^2 - 1/sigma_d^2``, ``m pi_g = mu'/sigma'^2 - mu_d/sigma_d^2``) and
writes the new rating as the precision-weighted mean of the two: ``m`` is the skill
the contest alone points to, and its share of the weight is how much the contest
counted against the history.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from podium.core.explain import Explanation, Term
from podium.systems.base.explain import (
    check_position,
    explanation,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.trueskill import TrueSkillSPb

__all__ = ["explain_trueskill"]


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
    if rnd.contest.is_outcome_free:
        notes.append("everybody tied: rated with the TrueSkill factor graph of "
                     "[Herbrich2006] (adjacent players' performances within 2 eps), the "
                     "trueskill package's draw")
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
