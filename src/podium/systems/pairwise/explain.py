"""Explanations of the pairwise Elo family's SingleElo and of classic Glicko
(:meth:`~podium.systems.RatingSystem.explain` of
:class:`~podium.systems.pairwise.systems.SingleElo` and
:class:`~podium.systems.pairwise.systems.Glicko2p`).

* SingleElo plays the round's pair games in a fixed order (seed 004): the player's
  change is the sum of one ``K (o - E)`` per game it played, ``E`` from the two
  ratings *at that game* (earlier games of the round have moved them);
* Glicko2p (one round = one rating period, Glickman 1999): ``r' - r = q / (1/RD^2 +
  1/d^2) * sum_j g(RD_j) (s_j - E_j)``, one term per opponent.
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
    opponent_kind,
    rerun,
    sum_equation,
)

if TYPE_CHECKING:
    from podium.systems.base import RoundInput, SystemState
    from podium.systems.pairwise.systems import Glicko2p, SingleElo

__all__ = ["explain_single_elo", "explain_glicko2p", "MAX_SINGLE_ELO_GAMES"]

#: SingleElo's games are replayed in Python up to the player's last one: rounds needing
#: more games than this are explained by their rating before and after only.
MAX_SINGLE_ELO_GAMES = 2_000_000


def explain_single_elo(system: SingleElo, state: SystemState, rnd: RoundInput,
                       k: int) -> Explanation:
    """:meth:`SingleElo.explain`: the player's games in the order they were played."""
    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    n = int(rnd.players.size)
    if rnd.is_team_round or (k + 1) * n > MAX_SINGLE_ELO_GAMES:
        notes = () if rnd.is_team_round else (
            f"{(k + 1) * n} games to replay: too many to list the games one by one",)
        return explanation(system, rnd, k, out, notes=notes)
    r = [float(x) for x in rnd.mu]
    lo = rnd.lo
    c = system._c
    kk = float(system.k)
    draw = system.ties == "draw"
    handles = rnd.contest.handles
    terms: list[Term] = []
    for a in range(k + 1):  # rows after k's own hold none of its games
        ra = r[a]
        for b in range(a + 1, n):
            if lo[b] == lo[a]:
                if not draw:
                    continue
                o = 0.5
            else:
                o = 1.0
            rb = r[b]
            e = 1.0 / (1.0 + math.exp((rb - ra) * c))
            d = kk * (o - e)
            if a == k or b == k:
                j, mine, theirs, score = (b, ra, rb, o) if a == k else (a, rb, ra, 1.0 - o)
                terms.append(Term(handles[j], opponent_kind(lo, k, j),
                                  d if a == k else -d, "change",
                                  {"rating": mine, "opponent_rating": theirs,
                                   "expected": e if a == k else 1.0 - e, "outcome": score,
                                   "game": float(len(terms) + 1)}))
            ra += d
            r[b] = rb - d
        r[a] = ra
    eq = sum_equation("change", "r' - r = sum over the player's games of K (o - E), "
                      "E = 1 / (1 + 10^((r_opp - r) / scale)) at the time of the game",
                      "seed 004 (SingleElo), games in the order of round_games",
                      terms, target=float(out.mu[k]) - float(rnd.mu[k]),
                      # the round adds each game's change to the rating itself: one
                      # rounding of the rating's size per game
                      tolerance=4.0 * (len(terms) + 1) * np.finfo(np.float64).eps
                      * (abs(float(rnd.mu[k])) + sum(abs(t.value) for t in terms)))
    return explanation(system, rnd, k, out, equations=[eq], terms=terms,
                       quantities={"k": kk, "games": float(len(terms))},
                       notes=["the games are played row by row in standings order; each "
                              "term is one game's K (o - E) from the ratings at that game"])


def explain_glicko2p(system: Glicko2p, state: SystemState, rnd: RoundInput,
                     k: int) -> Explanation:
    """:meth:`Glicko2p.explain`: one ``g_j (s_j - E_j)`` term per opponent, scaled."""
    from podium.systems.pairwise.functional import GLICKO_Q, glicko_g

    k = check_position(rnd, k)
    out = rerun(system, state, rnd)
    if rnd.is_team_round:
        return explanation(system, rnd, k, out)
    players = rnd.players
    rd = system.grown_rd(state, players, rnd.sigma)
    r = np.asarray(rnd.mu, dtype=np.float64)
    g = np.asarray(glicko_g(rd), dtype=np.float64)
    lo = rnd.lo
    e = 1.0 / (1.0 + np.exp(-GLICKO_Q * g * (r[k] - r)))
    s = np.where(lo > lo[k], 1.0, np.where(lo < lo[k], 0.0, 0.5))
    play = np.ones(r.size, dtype=bool)
    play[k] = False
    if system.ties != "draw":
        play &= lo != lo[k]
    v = float(np.sum(np.where(play, g * g * e * (1.0 - e), 0.0)))
    inv_var = 1.0 / rd[k] ** 2 + GLICKO_Q**2 * v
    factor = GLICKO_Q / inv_var
    values = np.where(play, factor * g * (s - e), 0.0)
    terms = [t for t in change_terms(rnd, k, values, "change",
                                     {"g": g, "expected": e, "outcome": s, "rd": rd})
             if t.kind != "self"]
    eq = sum_equation("change", "r' - r = q / (1/RD^2 + 1/d^2) * sum_j g(RD_j) (s_j - E_j)",
                      "Glickman (1999), one round = one rating period", terms,
                      target=float(out.mu[k]) - float(r[k]),
                      magnitude=abs(float(r[k])))
    return explanation(system, rnd, k, out, equations=[eq], terms=terms, quantities={
        "rd_grown": float(rd[k]), "d2_inverse": GLICKO_Q**2 * v, "factor": factor},
        notes=[f"RD {rnd.sigma[k]:.4f} grew to {rd[k]:.4f} with the rounds since the "
               "player's last one; RD' = (1/RD^2 + 1/d^2)^(-1/2)"])
