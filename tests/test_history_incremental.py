"""The bounded incremental update of ``ttt`` and ``whr`` (``ttt_update``,
``whr_update``; ``HistoryRater.add``): one new contest re-solves only what it
touches, at most ``update_sweeps`` sweeps, from the previous fit's messages or
ratings.  With enough sweeps it reaches the full solve's fixed point; with the default
three it stays within a stated distance of it; a checkpoint resumes it bit for bit
(``tests/test_history_cli.py``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from _history_cases import random_case

from podium import Contest
from podium.history import ContestHistory, history_from_arrays
from podium.history.engines import TTT_UPDATE_CONTESTS, get_history_system
from podium.history.ttt import ttt, ttt_update
from podium.history.whr import ELO_PER_NAT, whr, whr_update
from podium.history_rater import HistoryRater

DAY = 86400
# the modules (``podium.history`` exports the functions under the same names)
ttt_module = importlib.import_module("podium.history.ttt")
whr_module = importlib.import_module("podium.history.whr")


CASES = {
    "1v1": dict(seed=11, n_games=60, n_players=8, span=40),
    "teams, draws, weights": dict(seed=12, n_games=50, n_players=10, max_teams=3,
                                  max_size=2, draws=True, weights=True, span=30),
}


@pytest.mark.parametrize("case", CASES)
def test_ttt_update_with_enough_sweeps_is_the_full_solve(case):
    """From the converged fit of all but the last 4 games, adding those one at a time
    with unbounded sweeps reaches the fixed point of the full run, to 1e-6."""
    h = random_case(**CASES[case]).history
    p_draw = 0.2 if "draws" in case else 0.0
    start = h.n_contests - 4
    cur = ttt(h.prefix(start), p_draw=p_draw, epsilon=1e-13, iterations=20000)
    for n in range(start + 1, h.n_contests + 1):
        cur, touched = ttt_update(cur, h.prefix(n), p_draw=p_draw, tol=1e-14,
                                  max_sweeps=20000)
        assert cur.converged and 2 <= touched <= h.n_players
    full = ttt(h, p_draw=p_draw, epsilon=1e-13, iterations=20000)
    assert full.converged
    np.testing.assert_allclose(cur.mu[cur.row_slot], full.mu[full.row_slot], rtol=0,
                               atol=1e-6)
    np.testing.assert_allclose(cur.sigma[cur.row_slot], full.sigma[full.row_slot], rtol=0,
                               atol=1e-6)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [6, 10])
def test_ttt_update_of_several_contests_at_once(case, k):
    """Several new contests at once, over several batches (a new game's members take
    their forward messages from the earlier new batches first: before, a later new
    batch was visited first, its draws truncated a uniform prior and the kernel
    divided by zero): with unbounded sweeps the full run's fixed point, to 1e-6."""
    h = random_case(**CASES[case]).history
    p_draw = 0.2 if "draws" in case else 0.0
    start = h.n_contests - k
    assert np.unique(h.time[start:]).size >= 2  # the new contests span several batches
    cur = ttt(h.prefix(start), p_draw=p_draw, epsilon=1e-13, iterations=20000)
    cur, touched = ttt_update(cur, h, p_draw=p_draw, tol=1e-14, max_sweeps=20000)
    assert cur.converged and 2 <= touched <= h.n_players
    full = ttt(h, p_draw=p_draw, epsilon=1e-13, iterations=20000)
    np.testing.assert_allclose(cur.mu[cur.row_slot], full.mu[full.row_slot], rtol=0,
                               atol=1e-6)
    np.testing.assert_allclose(cur.sigma[cur.row_slot], full.sigma[full.row_slot], rtol=0,
                               atol=1e-6)


def test_ttt_update_of_several_draws_at_once_does_not_divide_by_zero():
    """The case that raised ZeroDivisionError: two new contests with draws, three-team
    games, the later one's draw truncated against the uniform prior of a slot whose
    forward message was not taken yet.  With the default bounded sweeps now it is
    near the full run."""
    h = random_case(seed=3, n_games=40, n_players=8, span=20, max_teams=3, max_size=2,
                    draws=True, weights=True).history
    cur = ttt(h.prefix(h.n_contests - 2), p_draw=0.2)
    res, _ = ttt_update(cur, h, p_draw=0.2)
    assert np.all(np.isfinite(res.mu)) and np.all(np.isfinite(res.sigma))
    full = ttt(h, p_draw=0.2)
    assert np.abs(res.mu[res.row_slot] - full.mu[full.row_slot]).max() < 0.05


@pytest.mark.parametrize("case", CASES)
def test_whr_update_with_enough_sweeps_is_the_full_solve(case):
    """The same for WHR (Elo; the draw tendency is refitted at each sweep)."""
    h = random_case(**CASES[case]).history
    cur = whr(h.prefix(40), tol=1e-12)
    for n in range(41, h.n_contests + 1):
        out = whr_update(cur, h.prefix(n), tol=1e-14, nu_tol=1e-14, max_sweeps=20000)
        assert out is not None
        cur, touched = out
        assert cur.converged and 2 <= touched <= h.n_players
    full = whr(h, tol=1e-12)
    assert full.converged
    np.testing.assert_allclose(cur.r[cur.row_slot] * ELO_PER_NAT,
                               full.r[full.row_slot] * ELO_PER_NAT, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.sqrt(cur.variance[cur.row_slot]) * ELO_PER_NAT,
                               np.sqrt(full.variance[full.row_slot]) * ELO_PER_NAT, rtol=0,
                               atol=1e-6)
    assert cur.nu == pytest.approx(full.nu, abs=1e-9)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [2, 10])
def test_whr_update_of_several_contests_at_once_is_the_full_solve(case, k):
    """``whr_update`` given several new contests at once (every new row's day marked),
    with unbounded sweeps: the full solve's maximum, to 1e-6 Elo (measured: 4e-11).
    ``fit`` does not use it for several (its three sweeps leave them far from the
    maximum: docs/history.md, "Several contests at once")."""
    h = random_case(**CASES[case]).history
    prev = whr(h.prefix(h.n_contests - k), tol=1e-12)
    out = whr_update(prev, h, tol=1e-14, nu_tol=1e-14, max_sweeps=20000)
    assert out is not None
    cur, touched = out
    assert cur.converged and 2 <= touched <= h.n_players
    full = whr(h, tol=1e-12)
    np.testing.assert_allclose(cur.r[cur.row_slot] * ELO_PER_NAT,
                               full.r[full.row_slot] * ELO_PER_NAT, rtol=0, atol=1e-6)
    assert cur.nu == pytest.approx(full.nu, abs=1e-9)


def _games(n: int, n_players: int, seed: int, *, groups: int = 1) -> list[Contest]:
    """1v1 games, a few a day; with ``groups`` the players fall into that many groups
    that never meet."""
    rng = np.random.default_rng(seed)
    size = n_players // groups
    out = []
    for g in range(n):
        base = size * int(rng.integers(groups))
        a, b = base + rng.choice(size, size=2, replace=False)
        out.append(Contest([(f"p{a}", 0, 0), (f"p{b}", 1, 1)], name=f"g{g}",
                           time_seconds=1_600_000_000 + (g // 3) * DAY))
    return out


#: Each system with the parameters of a converged full solve (the defaults' for
#: ``whr``; ``ttt``'s 30 sweeps leave these histories unconverged) and the largest
#: distance, on the display scale, that 30 additions with the default 3 sweeps each
#: leave to the full solve of the whole history (measured: 0.0033 and 1.31 Elo).
BOUNDED = {"ttt": ({"iterations": 20000, "epsilon": 1e-12}, 0.01),
           "whr": ({}, 2.0)}


@pytest.mark.parametrize("system", BOUNDED)
def test_bounded_adds_stay_near_the_full_solve(system):
    params, bound = BOUNDED[system]
    games = _games(120, 12, 4)
    inc = HistoryRater(system, **params)
    inc.extend(games[:90])
    for g in games[90:]:
        before = inc.fit.mu.copy()
        rep = inc.add(g)
        assert 1 <= rep.sweeps <= 3 and 2 <= rep.touched <= 12
        # the reported change of the past is the largest change of an earlier row
        assert rep.max_past_change == pytest.approx(
            np.abs(inc.fit.mu[:before.size] - before).max(), abs=1e-12)
    full = HistoryRater(system, **params)
    full.extend(games)
    d = np.abs(inc.fit.mu - full.fit.mu).max()
    assert 0 < d < bound


@pytest.mark.parametrize("system", ["ttt", "whr"])
def test_a_new_contest_touches_only_its_part_of_the_history(system):
    """Four groups of players that never meet (their games share days, so ``ttt``'s
    batches mix them): from a converged fit, a game of one group recomputes its
    players only, and the others' ratings do not move at all."""
    games = _games(200, 40, 9, groups=4)
    r = HistoryRater(system, **BOUNDED[system][0])
    r.extend(games[:-1])
    before = r.ratings(sort=False).set_index("handle")["mu"]
    rep = r.add(games[-1])
    group = int(games[-1].handles[0][1:]) // 10
    assert 2 <= rep.touched <= 10 and rep.max_past_change > 0
    after = r.ratings(sort=False).set_index("handle")["mu"]
    others = [h for h in before.index if int(h[1:]) // 10 != group]
    assert len(others) == 30
    assert (after[others] == before[others]).all()


def test_a_draw_model_change_solves_in_full():
    """The first draw after decisive games starts WHR's draw tendency afresh: the
    update declines (``None``) and ``HistoryRater.add`` solves the whole history."""
    games = _games(30, 6, 2)
    r = HistoryRater("whr")
    r.extend(games)
    draw = Contest([("p0", 0, 1), ("p1", 0, 1)], name="draw",
                   time_seconds=games[-1].time_seconds + DAY)
    rep = r.add(draw)
    full = HistoryRater("whr")
    full.extend([*games, draw])
    np.testing.assert_array_equal(r.fit.mu, full.fit.mu)
    assert rep.touched == full.fit.players and rep.sweeps == full.fit.sweeps


def test_extend_of_many_contests_solves_in_full():
    """``ttt``: more than ``TTT_UPDATE_CONTESTS`` contests at once are solved from
    scratch, the same bit for bit as extending by all of them."""
    games = _games(40, 6, 3)
    assert 20 > TTT_UPDATE_CONTESTS
    a = HistoryRater("ttt")
    a.extend(games[:20])
    rep = a.extend(games[20:])
    b = HistoryRater("ttt")
    b.extend(games)
    np.testing.assert_array_equal(a.fit.mu, b.fit.mu)
    assert rep[-1].sweeps == b.fit.sweeps


def _games_then(n_past: int, n_recent: int, seed: int, *, teams: bool = False,
                draws: bool = False, n_players: int = 12, gap: float = 3000.0
                ) -> ContestHistory:
    """``n_past`` games, then ``gap`` days later the same ``n_recent`` games whatever
    ``n_past`` (one every 3 days, among ``n_players`` players of fixed skills; 1v1 or
    teams of 2; with ``draws`` close games are draws): the past lengthens the careers,
    not what a new game at the end changes."""
    def games(n: int, rng: np.random.Generator, skill: np.ndarray) -> tuple[list, list]:
        size = 2 if teams else 1
        player: list[int] = []
        place: list[int] = []
        for _ in range(n):
            who = rng.choice(n_players, 2 * size, replace=False)
            d = skill[who[:size]].sum() - skill[who[size:]].sum() + 1.5 * rng.normal()
            first, second = (who[:size], who[size:]) if d > 0 else (who[size:], who[:size])
            player += [*first.tolist(), *second.tolist()]
            place += [0, 0 if draws and abs(d) < 0.3 else 1]
        return player, place

    skill = np.random.default_rng(seed).normal(size=n_players)
    p1, q1 = games(n_past, np.random.default_rng(seed + 1), skill)
    p2, q2 = games(n_recent, np.random.default_rng(seed + 2), skill)
    n = n_past + n_recent
    size = 2 if teams else 1
    time = np.r_[np.arange(n_past) * 3.0, 3.0 * n_past + gap + np.arange(n_recent) * 3.0]
    return history_from_arrays(np.arange(0, 2 * n + 1, 2),
                               np.arange(0, 2 * n * size + 1, size), q1 + q2, p1 + p2,
                               time, n_players=n_players)


LONG = {"1v1": {}, "teams, draws": {"teams": True, "draws": True}}


@pytest.mark.parametrize("case", LONG)
def test_whr_update_steps_days_not_careers(case):
    """The work of adding one game (``days``: the days its windows of Newton steps
    covered) does not grow with the careers: 600 games in the far past make the
    careers 4 times longer, and the update steps at most twice the days (measured:
    1.75 times on 1v1 games, fewer days with teams and draws; stepping each touched
    player's whole career, as the update did before, is 4 times the work: a window
    that reaches the gap is widened into the past by its own length once).  Its
    ratings of the recent games stay as near the full solve as without the past."""
    days, dist = [], []
    for n_past in (0, 600):
        h = _games_then(n_past, 200, 3, **LONG[case])
        prev = whr(h.prefix(h.n_contests - 1))
        up, touched = whr_update(prev, h)
        assert 2 <= touched <= h.n_players
        days.append(up.days)
        full = whr(h)
        recent = slice(h.contest_rows[n_past], None)
        dist.append(np.abs(up.r[up.row_slot[recent]]
                           - full.r[full.row_slot[recent]]).max() * ELO_PER_NAT)
    assert 0 < days[1] <= 2.0 * days[0]
    assert dist[1] < dist[0] + 0.5


@pytest.mark.parametrize("case", LONG)
def test_ttt_update_visits_do_not_grow_with_careers(case):
    """The same for ``ttt``: the batches visited (``visits``) to add one game after
    600 games in the far past, at most 1.6 times those without them (measured: 1.45
    on 1v1 games, 1.13 with teams and draws; 4 times the batches are there)."""
    visits, dist = [], []
    p_draw = 0.2 if "draws" in case else 0.0
    for n_past in (0, 600):
        h = _games_then(n_past, 200, 3, **LONG[case])
        prev = ttt(h.prefix(h.n_contests - 1), p_draw=p_draw, iterations=300,
                   epsilon=1e-8)
        up, _ = ttt_update(prev, h, p_draw=p_draw)
        visits.append(up.visits)
        full = ttt(h, p_draw=p_draw, iterations=300, epsilon=1e-8)
        recent = slice(h.contest_rows[n_past], None)
        dist.append(np.abs(up.mu[up.row_slot[recent]] - full.mu[full.row_slot[recent]]).max())
    assert 0 < visits[1] <= 1.6 * visits[0]
    assert dist[1] < dist[0] + 0.01


#: ``ttt`` and ``whr`` solved to convergence, and ``ttt``'s bounded update run until
#: settled (unbounded sweeps, tolerance 1e-14): the fixed point.
CONVERGED = {"ttt": {"iterations": 20000, "epsilon": 1e-13, "update_sweeps": 20000,
                     "update_tol": 1e-14},
             "whr": {"tol": 1e-12}}


def _fit_system(system, h: ContestHistory, previous=None):
    n = h.n_contests
    return system.fit(h, contest_weight=np.ones(n), perf_ceiling=np.full(n, np.inf),
                      previous=previous)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [2, TTT_UPDATE_CONTESTS])
def test_ttt_fit_of_several_new_contests_goes_on_from_the_previous_fit(case, k,
                                                                       monkeypatch):
    """Up to ``TTT_UPDATE_CONTESTS`` new contests (``extend``, a store batch) are added
    by the bounded update from the previous fit's messages (a spy on ``ttt_update``;
    before, two or more were solved from scratch), and with the update run until
    settled the ratings are the full solve's, to 1e-6."""
    h = random_case(**CASES[case]).history
    p_draw = 0.2 if "draws" in case else 0.0
    system = get_history_system("ttt", p_draw=p_draw, **CONVERGED["ttt"])
    prev = _fit_system(system, h.prefix(h.n_contests - k))
    calls = []
    real = ttt_module.ttt_update

    def spy(*args, **kwargs):
        calls.append(args[1].n_contests)
        return real(*args, **kwargs)

    monkeypatch.setattr(ttt_module, "ttt_update", spy)
    new = _fit_system(system, h, prev)
    assert calls == [h.n_contests]
    assert new.converged and 1 <= new.sweeps < 20000
    full = _fit_system(system, h)
    assert full.converged
    np.testing.assert_allclose(new.mu, full.mu, rtol=0, atol=1e-6)
    np.testing.assert_allclose(new.sigma, full.sigma, rtol=0, atol=1e-6)
    assert new.max_past_change == pytest.approx(
        np.abs(new.mu[:prev.mu.size] - prev.mu).max(), abs=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("k", [2, 6, 20])
def test_whr_fit_of_several_new_contests_starts_from_the_previous_fit(case, k,
                                                                      monkeypatch):
    """Two or more new contests are solved in full, started from the previous fit's
    ratings (a spy on ``whr``'s ``start``; before, from scratch): the same maximum as
    from scratch, to 1e-6 Elo, in no more sweeps."""
    h = random_case(**CASES[case]).history
    system = get_history_system("whr", **CONVERGED["whr"])
    prev = _fit_system(system, h.prefix(h.n_contests - k))
    starts = []
    real = whr_module.whr

    def spy(*args, **kwargs):
        starts.append(kwargs.get("start"))
        return real(*args, **kwargs)

    monkeypatch.setattr(whr_module, "whr", spy)
    new = _fit_system(system, h, prev)
    assert len(starts) == 1 and starts[0] is not None
    np.testing.assert_array_equal(starts[0].r, prev.warm["r"])
    full = _fit_system(system, h)
    assert new.converged and full.converged and new.sweeps <= full.sweeps
    np.testing.assert_allclose(new.mu, full.mu, rtol=0, atol=1e-6)
    np.testing.assert_allclose(new.sigma, full.sigma, rtol=0, atol=1e-6)
    assert new.players == h.n_playing


@pytest.mark.parametrize("system", ["ttt", "whr"])
def test_extend_of_a_few_contests_reaches_the_full_solve(system):
    """Through ``HistoryRater.extend``: 20 games, then 5 at once, equal the 25 games
    extended at once (converged solves; ``ttt``'s update until settled), to 1e-6."""
    games = _games(25, 6, 5)
    a = HistoryRater(system, **CONVERGED[system])
    a.extend(games[:20])
    reps = a.extend(games[20:])
    b = HistoryRater(system, **CONVERGED[system])
    b.extend(games)
    np.testing.assert_allclose(a.fit.mu, b.fit.mu, rtol=0, atol=1e-6)
    assert reps[-1].settled and reps[-1].sweeps == a.fit.sweeps
    if system == "ttt":  # the update: its own sweeps, not the full solve's
        assert reps[-1].sweeps != b.fit.sweeps


def test_whr_start_must_be_a_fit_of_the_first_contests():
    h = random_case(**CASES["1v1"]).history
    other = whr(random_case(seed=5, n_games=30, n_players=8, span=40).history)
    with pytest.raises(ValueError, match="not a fit of this history's first contests"):
        whr(h, start=other)


@pytest.mark.parametrize("name", ["ttt", "whr", "mmr-smooth"])
def test_a_full_fit_reports_the_players_that_play(name: str) -> None:
    """A history cut short keeps the whole data set's player indices; a full solve
    recomputes (and reports) only the players with a row."""
    h = history_from_arrays([0, 2, 4, 6], [0, 1, 2, 3, 4, 5, 6], [0, 1, 0, 1, 0, 1],
                            [0, 1, 1, 2, 0, 2], [0.0, 1.0, 2.0], n_players=9)
    assert h.n_players == 9 and h.n_playing == 3
    assert history_from_arrays([0], [0], [], [], [], n_players=4).n_playing == 0
    fit = _fit_system(get_history_system(name), h)
    assert fit.players == 3

