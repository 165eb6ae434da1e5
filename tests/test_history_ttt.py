"""TrueSkill Through Time (podium.history.ttt): the oracle (the trueskillthroughtime
package 1.1.0) on random histories, closed forms, invariances and errors."""

from __future__ import annotations

import importlib
import math
from types import ModuleType

import _require
import numpy as np
import pytest
from _history_cases import random_case
from scipy.stats import norm

from podium import Contest
from podium.errors import ContestError, ConvergenceError
from podium.history import history_from_arrays, history_from_contests, learning_curves, ttt


def _oracle() -> ModuleType:
    try:
        return importlib.import_module("trueskillthroughtime")
    except ImportError:
        _require.unavailable("the oracle trueskillthroughtime is not installed",
                             "pip install trueskillthroughtime==1.1.0")


CASES = {
    "1v1": dict(max_teams=2, max_size=1),
    "1v1-draws": dict(max_teams=2, max_size=1, draws=True),
    "teams": dict(max_teams=2, max_size=3),
    "multi-team-draws": dict(max_teams=4, max_size=2, draws=True),
    "multi-team-weights-draws": dict(max_teams=4, max_size=3, draws=True, weights=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [1, 2])
def test_learning_curves_equal_the_package(name: str, seed: int) -> None:
    """Converged learning curves equal the package's (History(...).convergence(),
    default parameters) to 1e-6, with the same number of sweeps."""
    pk = _oracle()
    kw = CASES[name]
    case = random_case(seed, 40, 14, span=60, **kw)  # type: ignore[arg-type]
    p_draw = 0.2 if kw.get("draws") else 0.0
    ref = pk.History(case.composition, case.results, case.times, p_draw=p_draw,
                     weights=case.weights if kw.get("weights") else [])
    _, sweeps = ref.convergence(verbose=False)
    got = ttt(case.history, p_draw=p_draw)
    assert got.sweeps == sweeps
    mine = learning_curves(got)
    worst = 0.0
    for name_a, curve in ref.learning_curves().items():
        times, mu, sigma = mine[int(name_a)]
        assert [t for t, _ in curve] == times.tolist()
        for (_, g), m, s in zip(curve, mu, sigma, strict=True):
            worst = max(worst, abs(g.mu - m), abs(g.sigma - s))
    assert set(mine) == {int(a) for a in ref.learning_curves()}
    assert worst < 1e-6


def test_one_game_is_the_truncated_normal() -> None:
    """Two newcomers, one game: the winner's posterior is N(mu + sigma^2/c v, ...) with
    c^2 = 2 (sigma^2 + beta^2), v = phi(0)/Phi(0), w = v^2 (exact normal functions)."""
    h = history_from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1], [0.0])
    r = ttt(h)
    s2, b2 = 36.0, 1.0
    c = math.sqrt(2 * s2 + 2 * b2)
    v = norm.pdf(0) / norm.cdf(0)
    mu = s2 / c * v
    sd = math.sqrt(s2 * (1 - s2 / c**2 * v * v))
    assert r.mu[r.row_slot].tolist() == pytest.approx([mu, -mu], abs=1e-6)
    assert r.sigma[r.row_slot].tolist() == pytest.approx([sd, sd], abs=1e-6)


def test_relabelling_players_changes_nothing() -> None:
    case = random_case(5, 30, 8, max_teams=3, max_size=2, draws=True, span=40)
    h = case.history
    perm = np.random.default_rng(0).permutation(h.n_players)
    h2 = h._replace(player=perm[h.player])
    a = ttt(h, p_draw=0.1)
    b = ttt(h2, p_draw=0.1)
    np.testing.assert_allclose(a.mu[a.row_slot], b.mu[b.row_slot], atol=1e-12)
    np.testing.assert_allclose(a.sigma[a.row_slot], b.sigma[b.row_slot], atol=1e-12)


def test_later_games_revise_earlier_skills() -> None:
    """a beats b on day 0; b then beats c ten times: b's day-0 skill goes up (the
    filter could not know), and a's with it."""
    ct = list(range(0, 24, 2))
    tr = list(range(0, 23))
    place = [0, 1] * 11
    player = [0, 1] + [1, 2] * 10
    days = [0.0] + [float(d) for d in range(1, 11)]
    alone = ttt(history_from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 1], [0.0], n_players=3))
    full = ttt(history_from_arrays(ct, tr, place, player, days, n_players=3))
    assert full.converged
    first = full.row_slot[:2]
    assert full.mu[first[1]] > alone.mu[alone.row_slot[1]] + 1.0
    assert full.mu[first[0]] > alone.mu[alone.row_slot[0]] + 0.5


def test_ties_need_a_draw_probability() -> None:
    h = history_from_arrays([0, 2], [0, 1, 2], [0, 0], [0, 1], [0.0])
    with pytest.raises(ContestError, match="p_draw"):
        ttt(h)
    r = ttt(h, p_draw=0.3)
    assert r.mu[0] == pytest.approx(r.mu[1])


def test_a_game_of_one_team_is_refused() -> None:
    h = history_from_arrays([0, 1], [0, 2], [0], [0, 1], [0.0])
    with pytest.raises(ContestError, match="two teams"):
        ttt(h)


def test_strict_reports_non_convergence() -> None:
    case = random_case(3, 40, 6, span=30)
    r = ttt(case.history, iterations=2)
    assert not r.converged and r.sweeps == 2
    with pytest.raises(ConvergenceError, match="did not converge"):
        ttt(case.history, iterations=2, strict=True)


def test_history_from_contests() -> None:
    """Individual and team contests, ties, weights, days and the kept contests."""
    c1 = Contest([("ann", 0, 1), ("bob", 0, 1), ("cid", 2, 2)], time_seconds=86400)
    c2 = Contest.from_teams([("red", 0, 0, ["bob", ("dee", 0.5)]), ("blue", 1, 1, ["ann"])],
                            time_seconds=2 * 86400)
    c3 = Contest([("ann", 0, 0)], time_seconds=3 * 86400)  # one team: left out
    lab = history_from_contests([c1, c2, c3])
    h = lab.history
    assert lab.handles == ["ann", "bob", "cid", "dee"]
    assert lab.contest_index.tolist() == [0, 1]
    assert h.contest_teams.tolist() == [0, 3, 5]
    assert h.team_rows.tolist() == [0, 1, 2, 3, 5, 6]
    assert h.team_place.tolist() == [0, 0, 2, 0, 1]
    assert h.player.tolist() == [0, 1, 2, 1, 3, 0]
    assert h.weight.tolist() == [1, 1, 1, 1, 0.5, 1]
    assert h.time.tolist() == [1.0, 2.0]
    r = ttt(h, p_draw=0.1)
    assert r.converged



def test_history_from_loaded_contests_numbers_players_as_from_handles() -> None:
    """Contests whose handles a loader numbered in one pool (``Contest.from_codes``, as
    ``podium.io.load_contests`` builds them: one gather for the whole history) give the
    history that the same contests built from handles give: players numbered in order
    of first appearance (not by the pool's codes), also after a base built from plain
    contests and for a run that mixes both."""
    import pickle

    from podium.core.handles import HandlePool
    from podium.history.data import append_contests

    rng = np.random.default_rng(3)
    pool = HandlePool()
    pool.names.extend(f"p{i}" for i in range(40))
    coded = []
    for k in range(30):
        codes = rng.choice(40, size=int(rng.integers(2, 9)), replace=False).astype(np.int64)
        place = np.arange(codes.size)
        place[-2:] = codes.size - 2  # a tie at the bottom
        coded.append(Contest.from_codes(pool, codes, place, np.where(
            place == codes.size - 2, codes.size - 1, place), time_seconds=k * 86400))
    assert all(c.handle_codes is not None for c in coded)
    plain = [pickle.loads(pickle.dumps(c)) for c in coded]
    assert all(c.handle_codes is None for c in plain)

    def same(a, b) -> None:
        for f in ("contest_teams", "team_rows", "team_place", "player", "weight", "time"):
            assert np.array_equal(getattr(a.history, f), getattr(b.history, f)), f
        assert a.handles == b.handles
        assert np.array_equal(a.contest_index, b.contest_index)

    whole = history_from_contests(plain)
    assert whole.history.player[:2].tolist() == [0, 1]
    assert whole.handles[:2] == list(plain[0].handles[:2])
    same(history_from_contests(coded), whole)
    same(append_contests(history_from_contests(plain[:12]), coded[12:], 12), whole)
    same(history_from_contests(plain[:5] + coded[5:]), whole)

def test_history_checks_name_the_contest() -> None:
    with pytest.raises(ContestError, match="twice"):
        history_from_arrays([0, 2], [0, 1, 2], [0, 1], [0, 0], [0.0])
    with pytest.raises(ContestError, match="time goes back"):
        history_from_arrays([0, 2, 4], [0, 1, 2, 3, 4], [0, 1, 0, 1], [0, 1, 0, 1],
                            [2.0, 1.0])
    with pytest.raises(ContestError, match="best first"):
        history_from_arrays([0, 2], [0, 1, 2], [1, 0], [0, 1], [0.0])
