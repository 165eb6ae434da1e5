"""Draws: a round in which every side tied is a result (issue 27, part 1).

* every system rates such a round by default (``all_tied="rate"``) and skips it with
  ``all_tied="skip"`` (the reference's behaviour); a round of one side is never rated;
* the property every system is asked for: a draw moves a stronger and a weaker player
  toward each other and leaves two equal players' mu where it was -- with the
  exceptions each system's model makes, stated and tested below (docs/systems.md,
  "Draws");
* worked examples, computed by hand from the published formulas, of the systems that
  score a draw as half a win (``glicko``, ``bar``, ``glicko2p``, ``elo-single`` and
  the pairwise family);
* explanations of a draw.  The openskill and trueskill oracles on histories with
  draws are in tests/test_openskill.py and tests/test_trueskill_teams.py; saved
  ratings from before the parameter in tests/test_draws_saved.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems import SYSTEMS, get_system
from podium.systems.base import RoundInput

DAY = 86_400

#: Systems whose model does not give "equal players keep their mu" or "the two move
#: toward each other" exactly, and what they give instead (docs/systems.md, "Draws").
EQUAL_MOVES = {
    # the "all" noising moves the mode of every prior a little whatever the result; the
    # draw's own factor sits on that mode (performance = new rating)
    "elo-r-all",
    # Codeforces' correction takes 1 point from every participant of every round
    "codeforces",
    # EloSRM: P = 0 for every tied player (Eq. 4); the participation bonus remains
    "elosrm",
    # PageRank: a share of the whole graph, recomputed; equal players stay equal
    "pagerank",
}


def _rater(name: str, **params: Any) -> tuple[Rater, int]:
    """``s`` beats ``w`` (and a fresh ``x_k``) six times; ``e1`` and ``e2`` each beat a
    fresh player at the same time, so that they are equal in every per-player state."""
    r = Rater(name, **params)
    t = 10 * DAY
    for k in range(6):
        t += DAY
        r.add(Contest([("s", 0, 0), (f"x{k}", 1, 1), ("w", 2, 2)], name=f"r{k}",
                      time_seconds=t))
    t += DAY
    r.add(Contest([("e1", 0, 0), ("a1", 1, 1)], name="e1 wins", time_seconds=t))
    r.add(Contest([("e2", 0, 0), ("a2", 1, 1)], name="e2 wins", time_seconds=t))
    return r, t


def _draw(r: Rater, a: str, b: str, t: int) -> tuple[dict[str, tuple[float, float]],
                                                     dict[str, tuple[float, float]]]:
    """Rate a draw of ``a`` and ``b``; their ratings (the newcomer prior for a newcomer)
    before and after."""
    prior = r.system.newcomer(None)
    before = {h: r.rating(h) if h in r.players.index else prior for h in (a, b)}
    report = r.add(Contest([(a, 0, 1), (b, 0, 1)], name=f"{a}-{b}", time_seconds=t))
    assert not report.skipped
    return before, {h: r.rating(h) for h in (a, b)}


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_draw_moves_the_stronger_and_the_weaker_toward_each_other(name: str) -> None:
    r, t = _rater(name)
    before, after = _draw(r, "s", "w", t + DAY)
    ds = after["s"][0] - before["s"][0]
    dw = after["w"][0] - before["w"][0]
    gap0 = before["s"][0] - before["w"][0]
    gap1 = after["s"][0] - after["w"][0]
    assert gap0 > 0, "the history makes s the stronger"
    if name == "srmfix":  # P = 0 and no participation bonus: nothing moves
        assert ds == dw == 0.0
        return
    if name == "elosrm":  # P = 0; each gets its participation bonus K (B/K0) P' / (W V F)
        ev = r.events_frame()
        assert (ev.loc[ev.contest_index == ev.contest_index.max(), "perf"] == 0.0).all()
        assert ds > 0 and dw > 0
        return
    assert 0 <= gap1 < gap0, f"{name}: gap {gap0} -> {gap1}"
    if name == "pagerank":  # shares of the whole graph: both may rise, the weaker more
        assert dw > abs(ds)
        return
    # the stronger goes down, the weaker up (elo-lsq: the anchor of the component, s,
    # cannot move; w rises)
    assert ds <= 0 <= dw and (ds < 0 or dw > 0)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_draw_between_equal_players_leaves_their_mu(name: str) -> None:
    r, t = _rater(name)
    for a, b in (("e1", "e2"), ("n1", "n2")):  # experienced, then two newcomers
        before, after = _draw(r, a, b, t + DAY)
        ev = r.events_frame()
        perf = ev.loc[ev.contest_index == ev.contest_index.max(), "perf"].to_numpy()
        d = [after[h][0] - before[h][0] for h in (a, b)]
        scale = max(1.0, abs(before[a][0]))
        if name != "pagerank":
            assert before[a] == before[b], "equal players"
            assert d[0] == pytest.approx(d[1], abs=1e-12 * scale)
        if name not in EQUAL_MOVES:
            assert abs(d[0]) <= 1e-12 * scale and abs(d[1]) <= 1e-12 * scale, (name, d)
        elif name == "elo-r-all":  # the draw's factor sits on the noised prior's mode
            assert perf == pytest.approx([after[a][0], after[b][0]], abs=1e-9)
        elif name == "codeforces":
            assert d == [-1.0, -1.0]
        elif name == "elosrm":
            assert (perf == 0.0).all() and d[0] > 0
        else:  # pagerank: the two stay equal to each other
            values = r.system.solve(r.state)
            ia, ib = r.players.index[a], r.players.index[b]
            assert values[ia] == pytest.approx(values[ib], rel=1e-12)


@pytest.mark.parametrize("name", ["mmr", "mmr-fast", "mmx", "mmr-inf", "mmr-simple",
                                  "mmr-plus", "elo-r", "elo-r-leading", "elo-r-fancy",
                                  "elo-r-nonrobust", "cfsys", "tcsys", "trueskill",
                                  "openskill-pl", "openskill-tm", "glicko", "bar"])
def test_a_draw_of_equal_players_performs_at_their_rating(name: str) -> None:
    """The tie terms of a draw between equal players cancel: each performs at its own
    rating (Elo-MMR's and Elo-R's performance equations, TopCoder's and Codeforces'
    expected = actual rank, TrueSkill's and openskill's symmetric messages)."""
    r, t = _rater(name)
    before, after = _draw(r, "e1", "e2", t + DAY)
    ev = r.events_frame()
    perf = ev.loc[ev.contest_index == ev.contest_index.max(), "perf"].to_numpy()
    if name in ("openskill-pl", "openskill-tm", "trueskill", "glicko", "bar"):
        assert perf[0] == pytest.approx(perf[1], rel=1e-12)  # performance scale of its own
    else:
        assert perf == pytest.approx([before["e1"][0]] * 2, rel=1e-12)


# ---------------------------------------------------------------------- the option
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_skip_leaves_a_draw_unrated_and_rate_counts_it(name: str) -> None:
    draw = Contest([("a", 0, 1), ("b", 0, 1)], name="draw", time_seconds=5)
    skip = Rater(name, all_tied="skip")
    rep = skip.add(draw)
    assert rep.skipped and skip.num_players == 0
    assert rep.warnings == ("contest 'draw' (#0): everybody tied; nothing changed",)
    rate = Rater(name)
    rep = rate.add(draw)
    assert not rep.skipped and rate.num_players == 2
    assert rate.ratings()["contests"].tolist() == [1, 1]
    ev = rate.events_frame()
    assert ev["place"].tolist() == [0, 0] and ev["contest_index"].tolist() == [0, 0]
    assert get_system(name).all_tied == "rate"


def test_one_side_is_never_rated() -> None:
    for params in ({}, {"all_tied": "skip"}):
        r = Rater("mmr", **params)
        rep = r.add(Contest([("a", 0, 0)], name="alone"))
        assert rep.skipped and r.num_players == 0
        assert rep.warnings == ("contest 'alone' (#0): one side only; nothing changed",)
        team = Contest.from_teams([("red", 0, 0, ["x", "y"])], name="one team")
        assert r.add(team).skipped and r.num_players == 0


def test_all_tied_is_checked() -> None:
    for bad in ("draw", "Skip", True, None, 1):
        with pytest.raises(ConfigError, match="all_tied must be 'rate' or 'skip'"):
            get_system("glicko", all_tied=bad)


def test_team_draw_is_rated_by_each_team_rule() -> None:
    draw = Contest.from_teams([("red", 0, 1, ["a", "b"]), ("blue", 0, 1, ["c", ("d", 0.5)])],
                              name="team draw", time_seconds=3)
    for name in SYSTEMS:
        r = Rater(name)
        if r.system.team_rule is None:
            continue
        rep = r.add(draw)
        assert not rep.skipped and r.num_players == 4, name
        assert r.events_frame()["team"].tolist() == ["red", "red", "blue", "blue"]


# ---------------------------------------------------------------------- explanations
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_draw_is_explained(name: str) -> None:
    r, t = _rater(name)
    draw = Contest([("w", 0, 1), ("s", 0, 1)], name="draw", time_seconds=t + DAY)
    why = {h: r.explain(draw, h) for h in ("s", "w")}
    r.add(draw)
    for h in ("s", "w"):
        assert (why[h].mu_after, why[h].sigma_after) == r.rating(h)
    skip, _ = _rater(name, all_tied="skip")
    with pytest.raises(Exception, match="not rated \\(everybody tied\\)"):
        skip.explain(draw, "s")


# ---------------------------------------------------------------------- half a win
def _one_round(name: str, mu: list[float], sigma: list[float], lo: list[int],
               hi: list[int], **params: Any) -> tuple[np.ndarray, np.ndarray]:
    """``round_update`` of one round of players ``p0, p1, ...`` from a fresh state."""
    system = get_system(name, **params)
    n = len(mu)
    c = Contest([(f"p{k}", lo[k], hi[k]) for k in range(n)], name="hand")
    rnd = RoundInput(contest=c, players=np.arange(n, dtype=np.int64), lo=c.lo, hi=c.hi,
                     mu=np.array(mu), sigma=np.array(sigma), played=np.ones(n, dtype=np.int64),
                     delta_seconds=np.zeros(n))
    state = system.make_state()
    state.ensure_players(n)
    out = system.round_update(state, rnd)
    return out.mu, out.sigma


WIN, DRAW = ([0, 1], [0, 1]), ([0, 0], [1, 1])


def _results(name: str, mu: list[float], sigma: list[float],
             **params: Any) -> dict[str, np.ndarray]:
    """p0's and p1's new mu after p0 wins, draws and loses (p0 listed first)."""
    out = {}
    for what, first in (("win", 0), ("draw", 0), ("loss", 1)):
        order = [first, 1 - first]  # standings order: the loser of a loss comes second
        lo, hi = DRAW if what == "draw" else WIN
        m, _ = _one_round(name, [mu[k] for k in order], [sigma[k] for k in order], lo, hi,
                          **params)
        out[what] = m[np.argsort(order)]
    return out


@pytest.mark.parametrize("name", ["glicko", "bar", "glicko2p", "elo-single", "elo-average",
                                  "elo-sample"])
def test_a_draw_is_half_a_win_and_half_a_loss(name: str) -> None:
    """These updates are linear in the score o (1, 1/2, 0): the draw's change is the
    mean of the win's and the loss's."""
    res = _results(name, [1600.0, 1400.0], [80.0, 120.0], **(
        {"k": 32.0} if name.startswith("elo-") else {}))
    want = (res["win"] + res["loss"]) / 2.0
    np.testing.assert_allclose(res["draw"], want, rtol=0, atol=1e-9)
    assert res["draw"][0] < 1600.0 < res["win"][0] and res["draw"][1] > 1400.0


def _logistic(x: float) -> float:
    """The logistic CDF of unit variance."""
    return 1.0 / (1.0 + math.exp(-math.pi * x / math.sqrt(3.0)))


def test_worked_example_glicko_and_bar() -> None:
    # A (1600, 80) draws B (1400, 120); beta = 400 pi / (sqrt 3 ln 10), drift 35
    beta = 400.0 * math.pi / (math.sqrt(3.0) * math.log(10.0))  # 315.089
    s_a, s_b = math.hypot(80.0, 35.0), math.hypot(120.0, 35.0)  # 87.321, 125.0
    assert s_b == 125.0
    # Glicko: U_A = (1/2) g_B (1/2 - p_AB), the own term 0; q = ln 10 / 400
    q = math.log(10.0) / 400.0
    g_b = 1.0 / math.hypot(1.0, s_b / beta)  # 0.92953
    p_ab = _logistic(200.0 / math.hypot(s_b, beta))  # 0.74463
    sig_a = (s_a**-2 + q * q / 4.0) ** -0.5  # 84.687
    mu_a = 1600.0 + q * sig_a**2 * 0.5 * g_b * (0.5 - p_ab)
    g_a = 1.0 / math.hypot(1.0, s_a / beta)
    sig_b = (s_b**-2 + q * q / 4.0) ** -0.5
    mu_b = 1400.0 + q * sig_b**2 * 0.5 * g_a * (0.5 - _logistic(-200.0 / math.hypot(s_a, beta)))
    assert (mu_a, mu_b) == pytest.approx((1595.3061, 1409.6709), abs=1e-4)
    mu, sigma = _one_round("glicko", [1600.0, 1400.0], [80.0, 120.0], *DRAW)
    np.testing.assert_allclose(mu, [mu_a, mu_b], rtol=1e-13)
    np.testing.assert_allclose(sigma, [sig_a, sig_b], rtol=1e-13)
    # BAR: c^2 = s_A^2 + s_B^2 + 2 beta^2, U_A = (1/2)(1/2 - p)/c, mu' = mu + s^2 U
    c = math.sqrt(s_a**2 + s_b**2 + 2.0 * beta**2)  # 470.97
    p = _logistic(200.0 / c)  # 0.68357
    mu_a = 1600.0 + s_a**2 * 0.5 * (0.5 - p) / c
    mu_b = 1400.0 + s_b**2 * 0.5 * (p - 0.5) / c
    assert (mu_a, mu_b) == pytest.approx((1598.5140, 1403.0451), abs=1e-4)
    mu, _ = _one_round("bar", [1600.0, 1400.0], [80.0, 120.0], *DRAW)
    np.testing.assert_allclose(mu, [mu_a, mu_b], rtol=1e-13)


def test_worked_example_glicko2p() -> None:
    # Glickman (1999): r = 1500, RD = 200 draws r_j = 1400, RD_j = 30 in one period
    q = math.log(10.0) / 400.0
    g = 1.0 / math.sqrt(1.0 + 3.0 * q * q * 30.0**2 / math.pi**2)  # 0.99549
    e = 1.0 / (1.0 + 10.0 ** (-g * 100.0 / 400.0))  # 0.63902
    d2 = 1.0 / (q * q * g * g * e * (1.0 - e))
    r_new = 1500.0 + q / (1.0 / 200.0**2 + 1.0 / d2) * g * (0.5 - e)
    rd_new = (1.0 / 200.0**2 + 1.0 / d2) ** -0.5
    assert (r_new, rd_new) == pytest.approx((1475.4620, 175.2202), abs=1e-4)
    mu, sigma = _one_round("glicko2p", [1500.0, 1400.0], [200.0, 30.0], *DRAW)
    assert (mu[0], sigma[0]) == pytest.approx((r_new, rd_new), rel=1e-13)


def test_worked_example_elo_single() -> None:
    # k = 32: E_A = 1 / (1 + 10^(-200/400)) = 0.75975; a draw scores 1/2
    e_a = 1.0 / (1.0 + 10.0 ** (-200.0 / 400.0))
    mu, _ = _one_round("elo-single", [1600.0, 1400.0], [0.0, 0.0], *DRAW, k=32.0)
    assert mu == pytest.approx([1600.0 + 32.0 * (0.5 - e_a), 1400.0 - 32.0 * (0.5 - e_a)],
                               rel=1e-14)
    assert mu[0] == pytest.approx(1591.6880, abs=1e-4)


def test_worked_example_elo_lsq_and_pagerank() -> None:
    # elo-lsq: A beats B, then they draw.  Win counts with the pseudo-count 1/2 on each
    # side: w_AB = 1 + 1/2 + 1/2, w_BA = 0 + 1/2 + 1/2: R_A - R_B = 400 log10 2; A (the
    # first player) is the anchor, 1200.  After the win alone: 400 log10 3.
    r = Rater("elo-lsq")
    r.add(Contest([("A", 0, 0), ("B", 1, 1)], name="win", time_seconds=1))
    assert r.rating("B")[0] == pytest.approx(1200.0 - 400.0 * math.log10(3.0), rel=1e-12)
    r.add(Contest([("A", 0, 1), ("B", 0, 1)], name="draw", time_seconds=2))
    assert r.rating("A")[0] == 1200.0
    assert r.rating("B")[0] == pytest.approx(1200.0 - 400.0 * math.log10(2.0), rel=1e-12)
    # pagerank: A beats B, then draws C (an edge of 1/2 each way).  Out-weights
    # normalised: B -> A, C -> A, A -> C; with d = 0.85 and 3 players
    # p_B = 0.05, p_A = 0.05 + 0.85 (p_B + p_C), p_C = 0.05 + 0.85 p_A, so
    # p_A = 0.135 / 0.2775 = 0.486486, p_C = 0.463514; mu = 3 p (players known).
    # Had A beaten C, C would hold 1/4.7 = 0.212766 (A, who never lost, spreads its weight).
    r = Rater("pagerank")
    r.add(Contest([("A", 0, 0), ("B", 1, 1)], name="win", time_seconds=1))
    r.add(Contest([("A", 0, 1), ("C", 0, 1)], name="draw", time_seconds=2))
    p_a = 0.135 / 0.2775
    assert r.rating("A")[0] == pytest.approx(3.0 * p_a, rel=1e-9)
    assert r.rating("C")[0] == pytest.approx(3.0 * (0.05 + 0.85 * p_a), rel=1e-9)


# ---------------------------------------------------------------------- podium rate
def test_podium_rate_counts_the_draws(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import main
    from podium.io import write_contest_dir

    history = [Contest([("a", 0, 0), ("b", 1, 1)], name="r1", time_seconds=1),
               Contest([("a", 0, 1), ("b", 0, 1)], name="draw", time_seconds=2),
               Contest([("c", 0, 0)], name="alone", time_seconds=3)]
    write_contest_dir(history, tmp_path / "h")
    assert main(["rate", str(tmp_path / "h"), "--system", "glicko", "--out",
                 str(tmp_path / "o"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "rated 3 contests (5 player-rounds, 1 draw rated, 1 skipped: one side only)" in err
    contests = (tmp_path / "o" / "contests.csv").read_text().splitlines()
    assert contests[2:] == ["1,draw,2,,2,False", "2,alone,3,,1,True"]
    assert main(["rate", str(tmp_path / "h"), "--system", "glicko", "--set", "all_tied=skip",
                 "--out", str(tmp_path / "s"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "2 skipped: one side only, or everybody tied with all_tied='skip'" in err
    assert (tmp_path / "s" / "contests.csv").read_text().splitlines()[2] == "1,draw,2,,2,True"
