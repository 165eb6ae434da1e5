"""Explanation of the Codeforces system (:meth:`Codeforces.explain
<podium.systems.codeforces.Codeforces.explain>`).

It re-runs the round's own update from the state just before it (the rating after is
the round's, bit for bit) and lays out ([Mirzayanov2015], seed 001) the seed as ``1 +``
one win probability per opponent, the geometric mean with the place, the needed
rating, and the change as the raw ``(R - r) / 2`` plus the two anti-inflation
corrections (exactly, in integers).
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
    from podium.systems.codeforces import Codeforces

__all__ = ["explain_codeforces", "SEED_TOLERANCE"]

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
