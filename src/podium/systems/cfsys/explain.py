"""Explanation of cfsys (:meth:`CFSys.explain <podium.systems.cfsys.CFSys.explain>`):
the new rating as the weighted mean of the old one and the performance, re-run from
the state just before the round (bit for bit the round's own).
"""

from __future__ import annotations

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
    from podium.systems.cfsys import CFSys

__all__ = ["explain_cfsys"]


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
