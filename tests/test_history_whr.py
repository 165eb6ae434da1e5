"""Whole-History Rating (podium.history.whr): the oracle (whole-history-rating 3.7.1)
on random 1v1 histories with and without draws, and an independent check of the
multiplayer and team model (the log-posterior's gradient, by finite differences of a
plain NumPy transcription, vanishes at the result)."""

from __future__ import annotations

import importlib
import math
import warnings
from types import ModuleType

import _require
import numpy as np
import pytest
from _history_cases import random_case

from podium.errors import ConvergenceError
from podium.history import ContestHistory
from podium.history.whr import ELO_PER_NAT, whr


def _oracle() -> ModuleType:
    try:
        return importlib.import_module("whr")
    except ImportError:
        _require.unavailable("the oracle whole-history-rating is not installed",
                             "pip install whole-history-rating==3.7.1")


@pytest.mark.parametrize("seed,draws", [(1, False), (2, True), (3, False), (4, True)])
def test_equals_the_package_on_1v1_histories(seed: int, draws: bool) -> None:
    """Elo ratings and variances equal the package's converged ones (default
    configuration, iterated until its gradient norm is below 1e-11) to 1e-6."""
    pk = _oracle()
    case = random_case(seed, 30 if draws else 60, 10, draws=draws, span=30)
    base = pk.WHR()
    for comp, res, t in zip(case.composition, case.results, case.times, strict=True):
        winner = "D" if res[0] == res[1] else "B"
        base.create_game(comp[0][0], comp[1][0], winner, int(t), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(100):
            base.iterate(50)
            if base.max_gradient_norm() < 1e-11:
                break
    got = whr(case.history, tol=1e-12)
    assert got.converged
    assert got.nu == pytest.approx(base.nu, abs=1e-8)
    worst_elo = worst_var = 0.0
    for name, player in base.players.items():
        idx = np.flatnonzero(got.slot_player == int(name))
        assert [d.day for d in player.days] == got.slot_time[idx].tolist()
        for day, s in zip(player.days, idx, strict=True):
            worst_elo = max(worst_elo, abs(day.elo - got.elo[s]))
            worst_var = max(worst_var, abs(day.uncertainty - got.variance[s]))
    assert worst_elo < 1e-6 and worst_var < 1e-9


def _log_posterior(h: ContestHistory, slot_of_row: np.ndarray, slot_player: np.ndarray,
                   slot_time: np.ndarray, r: np.ndarray, nu: float, w2: float,
                   k: float) -> float:
    """The model of podium.history.whr written out plainly (natural units)."""
    total = 0.0
    for p in np.unique(slot_player):
        idx = np.flatnonzero(slot_player == p)
        g0 = math.exp(r[idx[0]])
        total += k * (math.log(g0) - 2 * math.log(1 + g0))
        for a, b in zip(idx[:-1], idx[1:], strict=True):
            s2 = abs(slot_time[b] - slot_time[a]) * w2
            total += -((r[b] - r[a]) ** 2) / (2 * s2)
    for c in range(h.n_contests):
        teams = range(h.contest_teams[c], h.contest_teams[c + 1])
        q = np.array([sum(h.weight[x] * r[slot_of_row[x]]
                          for x in range(h.team_rows[t], h.team_rows[t + 1])) for t in teams])
        place = h.team_place[h.contest_teams[c]:h.contest_teams[c + 1]]
        if len(q) == 2:
            s, o = math.exp(q[0]), math.exp(q[1])
            t = nu * math.sqrt(s * o)
            num = t if place[0] == place[1] else s
            total += math.log(num) - math.log(s + o + t)
            continue
        for g in np.unique(place):
            members = np.flatnonzero(place == g)
            rest = np.flatnonzero(place >= g)
            total += q[members].sum() - members.size * math.log(np.exp(q[rest]).sum())
    return total


@pytest.mark.parametrize("seed,kw", [(5, dict(max_teams=5, draws=True)),
                                     (6, dict(max_teams=3, max_size=3, weights=True)),
                                     (7, dict(max_teams=30, max_size=1, draws=True))])
def test_multiplayer_and_teams_maximise_the_stated_posterior(seed: int, kw: dict) -> None:
    """Plackett-Luce with Breslow ties for three or more teams, products of member
    strengths for teams (and rounds of more teams than the snapshot threshold): the
    numerical gradient of the plainly written log-posterior vanishes at the result."""
    n_players = 40 if kw.get("max_teams", 2) > 10 else 14
    case = random_case(seed, 10 if n_players > 20 else 25, n_players, span=20, **kw)
    got = whr(case.history, tol=1e-10)
    assert got.converged
    w2 = (math.sqrt(300.0) / ELO_PER_NAT) ** 2
    r = got.r.copy()
    eps = 1e-6
    worst = 0.0
    for s in range(r.size):
        r[s] += eps
        up = _log_posterior(case.history, got.row_slot, got.slot_player, got.slot_time, r,
                            got.nu, w2, 0.5)
        r[s] -= 2 * eps
        down = _log_posterior(case.history, got.row_slot, got.slot_player, got.slot_time,
                              r, got.nu, w2, 0.5)
        r[s] += eps
        worst = max(worst, abs(up - down) / (2 * eps))
    assert worst < 1e-5


def test_an_unbeaten_player_is_rated_above_the_beaten() -> None:
    case = random_case(8, 30, 6, span=10)
    got = whr(case.history)
    wins = np.zeros(case.history.n_players)
    for c in range(case.history.n_contests):
        wins[case.history.player[2 * c]] += 1
        wins[case.history.player[2 * c + 1]] -= 1
    last = {int(p): got.r[np.flatnonzero(got.slot_player == p)].mean()
            for p in np.unique(got.slot_player)}
    best = int(np.argmax(wins))
    worst = int(np.argmin(wins))
    assert last[best] > last[worst]


def test_strict_reports_non_convergence() -> None:
    case = random_case(9, 40, 8, span=20)
    got = whr(case.history, max_iter=2)
    assert not got.converged and got.sweeps == 2
    with pytest.raises(ConvergenceError, match="did not converge"):
        whr(case.history, max_iter=2, strict=True)
