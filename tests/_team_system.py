"""A test-only rating system that rates team rounds (``team_rule`` set), so that the
store, the API and the pages can be tested on team contests whatever the shipped
systems do (register it for one test with :func:`register`, a ``monkeypatch``), and a
history of individual and team contests (:func:`team_history`).

The rule is a plain team Elo: team strength ``M_t = sum_i w_i mu_i``, each pair of
teams scored 1 / 1/2 / 0 by place against ``1 / (1 + 10^((M_b - M_a) / 400))``; a
member moves by ``k w_i`` times its team's mean surprise and ``sigma`` shrinks by 2 %.
Deterministic, so a store must reproduce a :class:`~podium.rater.Rater` bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from podium import Contest
from podium.systems import SYSTEMS
from podium.systems.base import (
    NoPlayerState,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)

NAME = "test-team-elo"
SOLO_NAME = "test-solo-elo"
T0 = 1_700_000_000


@dataclass(frozen=True)
class TeamElo(RatingSystem):
    """Team Elo (tests only)."""

    name: ClassVar[str] = NAME
    team_rule: ClassVar[str | None] = "test only: team Elo on the weighted sums of ratings"

    mu_noob: float = param(1500.0)
    sig_noob: float = param(350.0)
    k: float = param(32.0)

    def make_state(self) -> SystemState:
        return NoPlayerState()

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        n = rnd.mu.size
        off = np.arange(n + 1) if rnd.team_offsets is None else rnd.team_offsets
        w = np.ones(n) if rnd.weight is None else rnd.weight
        starts = off[:-1]
        strength = np.add.reduceat(w * rnd.mu, starts)
        place = (rnd.lo[starts] + rnd.hi[starts]) / 2.0
        t = strength.size
        expected = 1.0 / (1.0 + 10.0 ** ((strength[None, :] - strength[:, None]) / 400.0))
        actual = np.where(place[:, None] < place[None, :], 1.0,
                          np.where(place[:, None] == place[None, :], 0.5, 0.0))
        np.fill_diagonal(expected, 0.0)
        np.fill_diagonal(actual, 0.0)
        surprise = (actual - expected).sum(axis=1) / max(t - 1, 1)
        team_of = np.repeat(np.arange(t), np.diff(off))
        mu = rnd.mu + self.k * w * surprise[team_of]
        return RoundOutput(mu, rnd.sigma * 0.98, strength[team_of])


@dataclass(frozen=True)
class SoloElo(TeamElo):
    """The same rule, declared for individual rounds only (``team_rule`` None): the
    store must refuse its team rounds."""

    name: ClassVar[str] = SOLO_NAME
    team_rule: ClassVar[str | None] = None


def register(monkeypatch: Any) -> str:
    """Make :class:`TeamElo` available as ``get_system(NAME)`` (and :class:`SoloElo`
    as ``get_system(SOLO_NAME)``) for one test."""
    monkeypatch.setitem(SYSTEMS, NAME, (TeamElo, {}, "team Elo (tests only)"))
    monkeypatch.setitem(SYSTEMS, SOLO_NAME, (SoloElo, {}, "no team rounds (tests only)"))
    return NAME


def team_history(rounds: int = 8, seed: int = 3, n_players: int = 24) -> list[Contest]:
    """Individual and team contests mixed: teams of 1-3 members, some member weights
    below 1, tied teams, a round of one-member teams (rated as an individual round) and
    a round in which every team tied (it rates nobody)."""
    rng = np.random.default_rng(seed)
    names = [f"p{k:02d}" for k in range(n_players)]
    out: list[Contest] = []
    for r in range(rounds):
        t = T0 + 3600 * r
        players = [str(h) for h in rng.permutation(names)[: int(rng.integers(8, n_players + 1))]]
        if r % 4 == 1:  # individual
            out.append(Contest.from_places(players, rng.integers(1, 6, len(players)),
                                           name=f"solo {r}", time_seconds=t))
            continue
        if r == 2:  # one-member teams
            teams = [(f"solo team {h}", [h]) for h in players]
        else:
            teams, k = [], 0
            while k < len(players):
                size = int(rng.integers(1, 4))
                members: list[Any] = []
                for h in players[k:k + size]:
                    members.append((h, float(rng.choice([0.25, 0.5, 1.0]))) if rng.random() < 0.3
                                   else h)
                teams.append((f"team {r}.{len(teams)}", members))
                k += size
        places = rng.integers(1, 4, len(teams)) if r != 6 else np.ones(len(teams), int)
        order = np.argsort(places, kind="stable")
        rows = []
        for pos, i in enumerate(order):
            same = np.flatnonzero(places[order] == places[i])
            rows.append((teams[i][0], int(same[0]), int(same[-1]), teams[i][1]))
            assert same[0] <= pos <= same[-1]
        out.append(Contest.from_teams(rows, name=f"match {r}", time_seconds=t,
                                      url=f"https://example.org/match/{r}" if r == 3 else None))
    assert any(c.team_round for c in out) and any(c.teams is None for c in out)
    assert out[2].teams is not None and not out[2].team_round and out[6].is_outcome_free
    return out
