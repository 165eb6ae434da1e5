"""``cfsys``: the continuous Codeforces-like system of the Elo-MMR experiments.

* a hand-worked 2-player round (closed form written below);
* every participant's performance equals a brute-force solve (vectorised bisection over
  all N^2 pairs) on rounds of 1,500 players with ties and outliers -- the Chebyshev
  interpolation is exact to rounding;
* agreement with elo-mmr-py's "cfsys" (the same players, every mu and sigma within
  1e-8) on random histories with ties, contest weights and performance ceilings, on
  big random rounds with many ties, and on the first 100 Codeforces contests;
* the performance ceiling (hand-worked), parameters (weight, beta) and configuration
  errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _agreement import assert_agrees
from _histories import RawContest, histories, hyp, rate_as_reference, to_reference
from _require import require_reference
from hypothesis import given

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems.cfsys import DEFAULT_BETA, CFSys, cfsys_round

e = require_reference()

LN10 = math.log(10.0)


def test_two_players_by_hand() -> None:
    # A and B both 1500, A wins.  P(j beats x) = 1 / (1 + 10^((x - mu_j)/400)).
    # Expected ranks at 1500: E = 1/2 + 1/2 + 1/2 = 1.5 for both.
    # A: actual 1, g = sqrt(1.5); B: actual 2, g = sqrt(3).
    # Performance: 1/2 + 2 / (1 + 10^((x - 1500)/400)) = g
    #   -> x = 1500 + 400 log10(2 / (g - 1/2) - 1).
    # A: g - 1/2 = 0.724745, 2/0.724745 - 1 = 1.759591, x = 1500 + 400*0.245412 = 1598.165
    # B: g - 1/2 = 1.232051, 2/1.232051 - 1 = 0.623310, x = 1500 - 400*0.205296 = 1417.882
    # New mu = (1500 + x) / 2: 1549.082 and 1458.941.
    def perf(g: float) -> float:
        return 1500.0 + 400.0 * math.log10(2.0 / (g - 0.5) - 1.0)

    pa, pb = perf(math.sqrt(1.5)), perf(math.sqrt(3.0))
    assert pa == pytest.approx(1598.165, abs=1e-3)
    assert pb == pytest.approx(1417.882, abs=1e-3)
    mu, p = cfsys_round([1500.0, 1500.0], [0, 1], [0, 1])
    np.testing.assert_allclose(p, [pa, pb], atol=1e-9)
    np.testing.assert_allclose(mu, [(1500 + pa) / 2, (1500 + pb) / 2], atol=1e-9)
    r = Rater("cfsys")
    r.add(Contest.from_places(["A", "B"], [1, 2], name="duel"))
    assert r.rating("A") == pytest.approx(((1500 + pa) / 2, 350.0), abs=1e-9)
    assert r.events_frame()["perf"].tolist() == pytest.approx([pa, pb], abs=1e-9)


def brute_perf(mu: np.ndarray, lo: np.ndarray, hi: np.ndarray, beta: float) -> np.ndarray:
    """Every performance by bisection over all N^2 pairs (no shared numerics)."""
    c = math.pi / math.sqrt(3.0) / beta
    expected = 0.5 + (1.0 / (1.0 + np.exp(-c * (mu[None, :] - mu[:, None])))).sum(axis=1)
    g = np.sqrt(expected * (lo + hi + 2) / 2.0)
    a = np.full(mu.size, -6000.0)
    b = np.full(mu.size, 9000.0)
    for _ in range(64):
        x = 0.5 * (a + b)
        ex = 0.5 + (1.0 / (1.0 + np.exp(-c * (mu[None, :] - x[:, None])))).sum(axis=1)
        above = ex > g  # expected rank too large: x too small
        a = np.where(above, x, a)
        b = np.where(above, b, x)
    return 0.5 * (a + b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_large_round_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 1500
    mu = rng.normal(1500, 350, n)
    mu[: n // 3] = 1500.0  # newcomers share one rating
    mu[0], mu[1], mu[2] = 3900.0, -250.0, 1500.0 + 1e-7  # outliers, a near-duplicate
    order = rng.permutation(n)
    mu = mu[order]
    # random tie groups
    cuts = np.flatnonzero(rng.random(n) < 0.6)
    starts = np.unique(np.r_[0, cuts])
    ends = np.r_[starts[1:], n]
    lo = np.repeat(starts, ends - starts)
    hi = np.repeat(ends - 1, ends - starts)
    weight = [1.0, 0.5, 2.0][seed]
    _, perf = cfsys_round(mu, lo, hi, contest_weight=weight)
    expect = brute_perf(mu, lo, hi, DEFAULT_BETA / math.sqrt(weight))
    assert np.max(np.abs(perf - expect)) < 1e-7


@given(histories(max_contests=6, max_players=30, weights=True, ceilings=True))
@hyp(60)
def test_matches_reference_on_random_histories(history: list[RawContest]) -> None:
    r = rate_as_reference(history, "cfsys")
    ref = e.rate_latest(to_reference(history), "cfsys")
    assert_agrees(r, ref, "cfsys")


def test_matches_reference_on_big_random_rounds() -> None:
    rng = np.random.default_rng(5)
    hist = []
    pool = [f"p{k}" for k in range(900)]
    for c in range(4):
        players = list(rng.choice(pool, 600, replace=False))
        places = rng.integers(1, 200, len(players))  # many ties
        con = Contest.from_places(players, places, name=f"big{c}", time_seconds=c)
        hist.append(RawContest(tuple(con.standings), con.name, c))
    r = rate_as_reference(hist, "cfsys")
    assert_agrees(r, e.rate_latest(to_reference(hist), "cfsys"), "cfsys", case="large rounds")


@pytest.mark.slow
def test_matches_reference_on_first_100_codeforces_contests(
    codeforces_first_100: list[Contest],
) -> None:
    contests = codeforces_first_100
    r = Rater("cfsys")
    r.extend(contests)
    ref = e.rate_latest(
        [e.Contest(c.standings, name=c.name, time_seconds=c.time_seconds) for c in contests],
        "cfsys",
    )
    assert_agrees(r, ref, "cfsys", case="codeforces first 100")


def test_perf_ceiling_by_hand() -> None:
    # The duel above with a ceiling of 1550: A's performance 1598.165 is capped at 1550,
    # so A's mu = (1500 + 1550) / 2 = 1525; B's 1417.882 is below the cap: unchanged.
    # With contest weight 2 as well: w = 2, A = (1500 + 2 * 1550) / 3 = 1533.333.
    duel = [("A", 0, 0), ("B", 1, 1)]
    r = Rater("cfsys")
    r.add(Contest(duel, name="capped", perf_ceiling=1550.0))
    assert r.rating("A")[0] == pytest.approx(1525.0, abs=1e-9)
    assert r.rating("B")[0] == pytest.approx(1458.941, abs=1e-3)
    assert r.events_frame()["perf"].tolist()[0] == 1550.0
    r = Rater("cfsys", perf_ceiling=1550.0)  # the system's default ceiling
    r.add(Contest(duel, name="capped", weight=2.0))
    assert r.rating("A")[0] == pytest.approx(4600.0 / 3.0, abs=1e-9)
    r = Rater("cfsys", perf_ceiling=1500.0)  # the contest's own ceiling wins
    r.add(Contest(duel, name="capped", perf_ceiling=1550.0))
    assert r.rating("A")[0] == pytest.approx(1525.0, abs=1e-9)


def test_parameters() -> None:
    # weight w: mu' = (mu + w p) / (1 + w); the performance does not depend on w.
    c = Contest.from_places(["a", "b", "c"], [1, 2, 2], name="w")
    _, p = cfsys_round([1500.0] * 3, c.lo, c.hi)
    r = Rater("cfsys", weight=0.25)
    r.add(c)
    assert r.rating("a")[0] == pytest.approx((1500 + 0.25 * p[0]) / 1.25, abs=1e-9)
    # a contest of weight 4 with beta 2*B is the same performance as weight 1 with beta B
    # (sigma_perf = beta / sqrt(weight)), and uses wt = 4 * weight.
    _, p4 = cfsys_round([1400.0, 1500.0, 1700.0], [0, 1, 2], [0, 1, 2], beta=2 * DEFAULT_BETA,
                        contest_weight=4.0)
    _, p1 = cfsys_round([1400.0, 1500.0, 1700.0], [0, 1, 2], [0, 1, 2])
    np.testing.assert_allclose(p4, p1, atol=1e-9)
    assert DEFAULT_BETA == pytest.approx(400 * math.pi / (math.sqrt(3) * LN10))
    assert DEFAULT_BETA == pytest.approx(315.09, abs=0.01)
    assert Rater("cfsys", mu_noob=1200.0).system.newcomer() == (1200.0, 350.0)
    for bad in ({"beta": 0}, {"weight": -1}, {"weight": math.nan}, {"mu_noob": math.inf},
                {"sig_noob": -1}, {"perf_ceiling": math.nan}):
        with pytest.raises(ConfigError):
            CFSys(**bad)
