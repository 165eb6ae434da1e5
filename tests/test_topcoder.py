"""TopCoder's algorithm rating system ("tcsys", :mod:`podium.systems.topcoder`).

* hand-worked rounds (the arithmetic is written out below): two newcomers; a round in
  which both caps bind, with the >= 2500 damping; the >= 2000 damping and a tie;
  the contest weight and the performance ceiling;
* the expected-rank kernel against a plain double loop over ordered pairs;
* agreement with elo-mmr-py 2.0.0's "tcsys" (the same players and contest counts,
  every final mu and volatility within 1e-7: the largest deviations measured are
  2.9e-8 in mu and 1.1e-8 in the volatility, see docs/systems.md) on random histories
  with ties, weights and ceilings, and on the first 100 Codeforces contests;
* properties: translation invariance below 2000, tied players with equal states get
  equal results, an everybody-tied contest changes nothing, checkpoints resume exactly;
* parameter validation.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from _agreement import assert_agrees
from _histories import (
    RawContest,
    histories,
    hyp,
    rate_as_reference,
    rounds_to,
    to_podium,
    to_reference,
)
from hypothesis import assume, given
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems import RoundInput, get_system
from podium.systems.topcoder import TopCoder
from podium.systems.topcoder import kernels as K

PHI = NormalDist()  # the standard normal, from the standard library (independent of scipy)


def _round(mu: list[float], sigma: list[float], played: list[int], lo: list[int],
           hi: list[int], *, weight: float = 1.0, ceiling: float | None = None) -> RoundInput:
    n = len(mu)
    contest = Contest([(f"p{k}", lo[k], hi[k]) for k in range(n)], name="hand", weight=weight,
                      perf_ceiling=ceiling)
    return RoundInput(
        contest=contest, players=np.arange(n, dtype=np.int64),
        lo=np.array(lo, dtype=np.int64), hi=np.array(hi, dtype=np.int64),
        mu=np.array(mu, dtype=np.float64), sigma=np.array(sigma, dtype=np.float64),
        played=np.array(played, dtype=np.int64), delta_seconds=np.zeros(n),
    )


def _update(rnd: RoundInput, **params: Any) -> Any:
    system = TopCoder(**params)
    state = system.make_state()
    state.ensure_players(rnd.players.size)
    return system.round_update(state, rnd)


# ---------------------------------------------------------------------- hand-worked
def test_two_newcomers_by_hand() -> None:
    r = Rater("tcsys")
    r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="c1"))
    # CF = sqrt(mean(350^2) + 0) = 350; expected rank 1/2 + Phi(0) = 1 for both, so the
    # expected performance is -Phi^-1(1/2) = 0; actual ranks 0.5 and 1.5 (of N = 2):
    # performances -Phi^-1(0.25) = +0.67449 and -0.67449.
    z = -PHI.inv_cdf(0.25)
    assert z == pytest.approx(0.6744897501960817, abs=1e-15)
    perf_ann = 1500 + 350 * z  # 1736.0714
    perf_bob = 1500 - 350 * z  # 1263.9286
    # first round: f = 0.18 + 0.42/1 = 0.6, W = 0.6 / 0.4 = 1.5, cap (150 + 1500/2) = 900
    mu_ann = (1500 + 1.5 * perf_ann) / 2.5  # 1641.6428 (change 141.64 < 900)
    mu_bob = (1500 + 1.5 * perf_bob) / 2.5  # 1358.3572
    vol = math.sqrt((mu_ann - 1500) ** 2 / 1.5 + 350**2 / 2.5)  # sqrt(13375.2 + 49000)
    assert mu_ann == pytest.approx(1641.642847541177, abs=1e-9)
    assert vol == pytest.approx(249.75013681620956, abs=1e-9)
    assert r.rating("ann") == pytest.approx((mu_ann, vol), abs=1e-9)
    assert r.rating("bob") == pytest.approx((mu_bob, vol), abs=1e-9)
    ev = r.events_frame().set_index("handle")
    assert ev.at["ann", "perf"] == pytest.approx(perf_ann, abs=1e-9)
    assert ev.at["bob", "perf"] == pytest.approx(perf_bob, abs=1e-9)


def test_both_caps_and_top_damping_by_hand() -> None:
    # A (2600, vol 100, 9 earlier rounds) loses to B (600, vol 100, first round).
    out = _update(_round([600.0, 2600.0], [100.0, 100.0], [0, 9], [0, 1], [0, 1]))
    b, a = 0, 1
    # CF^2 = mean(100^2) + ((-1000)^2 + 1000^2) / (2 - 1) = 10_000 + 2_000_000
    cf = math.sqrt(2_010_000.0)  # 1417.7447
    # expected ranks: A 1/2 + Phi(-2000/141.42) = 1/2 (+1e-45), B 1/2 + Phi(+14.14) = 3/2
    perf_a = 2600 + cf * (-PHI.inv_cdf(1.5 / 2) + PHI.inv_cdf(0.5 / 2))  # 2600 - 1.349 CF
    perf_b = 600 + cf * (-PHI.inv_cdf(0.5 / 2) + PHI.inv_cdf(1.5 / 2))
    assert perf_a == pytest.approx(687.4914792656832, abs=1e-8)
    assert out.perf[a] == pytest.approx(perf_a, abs=1e-8)
    assert out.perf[b] == pytest.approx(perf_b, abs=1e-8)
    # A: n = 10, f = 0.18 + 0.042 = 0.222, W = 0.222/0.778 * 0.8 (rating >= 2500)
    w_a = 0.222 / 0.778 * 0.8  # 0.228278
    cap_a = 150 + 1500 / 11  # 286.36 (times f / (0.18 + 0.42/n) = 1)
    try_a = (2600 + w_a * perf_a) / (1 + w_a)  # 2244.56: a drop of 355 > cap
    assert out.mu[a] == pytest.approx(2600 - cap_a, abs=1e-8)  # 2313.6364
    assert out.sigma[a] == pytest.approx(
        math.sqrt((try_a - 2600) ** 2 / w_a + 100**2 / (1 + w_a)), abs=1e-8)  # from the
    assert out.sigma[a] == pytest.approx(749.392921731329, abs=1e-8)  # uncapped change
    # B: n = 1, f = 0.6, W = 1.5, cap 900; (600 + 1.5 * 2512.5) / 2.5 = 1747.5 > 600 + 900
    try_b = (600 + 1.5 * perf_b) / 2.5
    assert try_b == pytest.approx(1747.5051124405902, abs=1e-8)
    assert out.mu[b] == pytest.approx(1500.0, abs=1e-9)
    assert out.sigma[b] == pytest.approx(math.sqrt((try_b - 600) ** 2 / 1.5 + 100**2 / 2.5),
                                         abs=1e-8)


def test_cap_scales_with_sqrt_weight_by_hand() -> None:
    # the round above with contest weight 4: same performances (the expected ranks were
    # already saturated), W four times larger, caps twice as large
    out = _update(_round([600.0, 2600.0], [100.0, 100.0], [0, 9], [0, 1], [0, 1], weight=4.0))
    b, a = 0, 1
    perf_a, perf_b = 687.4914792656832, 2512.508520734317
    assert out.perf == pytest.approx([perf_b, perf_a], abs=1e-8)
    w_a = 0.222 / 0.778 * 0.8 * 4  # 0.913111
    try_a = (2600 + w_a * perf_a) / (1 + w_a)  # 1687.3: a drop of 913
    cap_a = (150 + 1500 / 11) * math.sqrt(4)  # 572.73
    assert out.mu[a] == pytest.approx(2600 - cap_a, abs=1e-8)  # 2027.27
    assert out.sigma[a] == pytest.approx(
        math.sqrt((try_a - 2600) ** 2 / w_a + 100**2 / (1 + w_a)), abs=1e-8)
    try_b = (600 + 6 * perf_b) / 7  # W = 1.5 * 4 = 6: 2239.29, a rise of 1639 < 900 * 2
    assert out.mu[b] == pytest.approx(try_b, abs=1e-8)
    assert out.mu[b] == pytest.approx(2239.2930175, abs=1e-6)


def test_tie_and_2000_damping_by_hand() -> None:
    # three players, vol 200, 4 earlier rounds each; C (2100) wins, A and B (1900) tie
    out = _update(_round([2100.0, 1900.0, 1900.0], [200.0] * 3, [4] * 3, [0, 1, 1], [0, 2, 2]))
    mean = 5900 / 3
    cf = math.sqrt(200**2 + ((2100 - mean) ** 2 + 2 * (1900 - mean) ** 2) / 2)
    d = 200 * math.sqrt(2)  # spread of every pair
    ex_c = 0.5 + 2 * PHI.cdf(-200 / d)  # both 1900s beating C
    ex_a = 0.5 + PHI.cdf(200 / d) + PHI.cdf(0.0)  # C, and the other 1900
    # actual ranks: C (0 + 0)/2 + 1/2 = 0.5; A and B (1 + 2)/2 + 1/2 = 2 (out of 3)
    perf_c = 2100 + cf * (-PHI.inv_cdf(0.5 / 3) + PHI.inv_cdf(ex_c / 3))
    perf_a = 1900 + cf * (-PHI.inv_cdf(2.0 / 3) + PHI.inv_cdf(ex_a / 3))
    f = 0.18 + 0.42 / 5  # n = 5 rounds including this one
    w_c = f / (1 - f) * 0.9  # 2000 <= 2100 < 2500
    w_a = f / (1 - f)
    cap = 150 + 1500 / 6
    expect_c = (2100 + w_c * perf_c) / (1 + w_c)
    expect_a = (1900 + w_a * perf_a) / (1 + w_a)
    assert abs(expect_c - 2100) < cap and abs(expect_a - 1900) < cap
    assert out.perf == pytest.approx([perf_c, perf_a, perf_a], abs=1e-8)
    assert out.mu == pytest.approx([expect_c, expect_a, expect_a], abs=1e-8)
    assert out.sigma[0] == pytest.approx(
        math.sqrt((expect_c - 2100) ** 2 / w_c + 200**2 / (1 + w_c)), abs=1e-8)


def test_weight_and_ceiling_by_hand() -> None:
    # the two-newcomer round with contest weight 4 and a ceiling of 1700
    out = _update(_round([1500.0, 1500.0], [350.0, 350.0], [0, 0], [0, 1], [0, 1],
                         weight=4.0, ceiling=1700.0))
    z = -PHI.inv_cdf(0.25)
    perf = [min(1500 + 350 * z, 1700.0), 1500 - 350 * z]  # the winner's 1736.07 -> 1700
    w = 0.6 / 0.4 * 4  # W scales with the weight: 6
    cap = 900 * math.sqrt(4)  # the cap with sqrt(weight): 1800
    tried = [(1500 + w * p) / (1 + w) for p in perf]
    assert all(abs(t - 1500) < cap for t in tried)
    assert out.perf == pytest.approx(perf, abs=1e-9)
    assert out.mu == pytest.approx(tried, abs=1e-9)
    vols = [math.sqrt((t - 1500) ** 2 / w + 350**2 / (1 + w)) for t in tried]
    assert out.sigma == pytest.approx(vols, abs=1e-9)


# ---------------------------------------------------------------------- kernel
@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_expected_ranks_match_double_loop(n: int) -> None:
    rng = np.random.default_rng(n)
    mu = rng.normal(1500, 500, n)
    mu[: n // 3] = 1500.0  # some equal ratings
    var = rng.uniform(20, 700, n) ** 2
    r = 1.3
    want = np.array([
        sum(PHI.cdf(r * (mu[j] - mu[i]) / math.sqrt(var[i] + var[j])) for j in range(n))
        for i in range(n)
    ])
    got = K.expected_ranks(mu, var, r)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got.sum() == pytest.approx(n * n / 2, abs=1e-9)  # each pair adds exactly 1


# ---------------------------------------------------------------------- reference


def assert_matches_reference(r: Rater, ref: dict[str, Any], case: str = "random") -> None:
    assert_agrees(r, ref, "tcsys", case=case)
    df = r.ratings(sort=False)
    handles = list(df["handle"])
    played = dict(zip(handles, df["contests"], strict=True))
    assert all(played[h] == ref[h].contests_played for h in handles)


@hyp(60)
@given(histories(max_players=40))
def test_matches_reference_on_random_histories(elo_mmr_py: Any, history: list[RawContest]) -> None:
    ref = elo_mmr_py.rate_latest(to_reference(history), "tcsys")
    assert_matches_reference(rate_as_reference(history, "tcsys"), ref)


@hyp(30)
@given(histories(max_players=40, weights=True, ceilings=True))
def test_matches_reference_with_weights_and_ceilings(
    elo_mmr_py: Any, history: list[RawContest]
) -> None:
    ref = elo_mmr_py.rate_latest(to_reference(history), "tcsys")
    assert_matches_reference(rate_as_reference(history, "tcsys"), ref)


@hyp(15)
@given(histories(max_players=40), st.sampled_from([(1200.0, 535.0), (2300.0, 120.0)]))
def test_matches_reference_with_other_priors(elo_mmr_py: Any, history: list[RawContest],
                                             prior: tuple[float, float]) -> None:
    ref = elo_mmr_py.rate_latest(to_reference(history), "tcsys", mu_noob=prior[0],
                                 sig_noob=prior[1])
    r = rate_as_reference(history, "tcsys", mu_noob=prior[0], sig_noob=prior[1])
    assert_matches_reference(r, ref)


@hyp(15)
@given(histories(max_players=40, ceilings=True))
def test_rounded_events_match_reference(elo_mmr_py: Any, history: list[RawContest]) -> None:
    # every event: rating, volatility and performed-as rating (after the ceiling),
    # which the reference stores rounded to integers
    players = elo_mmr_py.rate(to_reference(history), "tcsys")
    ev = rate_as_reference(history, "tcsys").events_frame()
    got = {(h, c): (m, s, p, pl) for h, c, m, s, p, pl in zip(
        ev["handle"], ev["contest_index"], ev["mu"], ev["sigma"], ev["perf"], ev["place"],
        strict=True)}
    count = 0
    for h, player in players.items():
        for x in player.events:
            m, s, p, pl = got[(h, x.contest_index)]
            assert rounds_to(m, x.rating_mu) and rounds_to(s, x.rating_sig)
            assert rounds_to(p, x.perf_score) and pl == x.place
            count += 1
    assert count == len(ev)


def test_long_career_matches_reference(elo_mmr_py: Any) -> None:
    # 40 rounds of the same 25 players: experience, the cap and the damping at work
    rng = np.random.default_rng(7)
    skill = np.linspace(3400, 600, 25)
    history = []
    for c in range(40):
        order = np.argsort(-(skill + rng.normal(0, 250, skill.size)))
        history.append(RawContest(tuple((f"p{k}", i, i) for i, k in enumerate(order)), f"c{c}",
                                  1000 * c))
    r = rate_as_reference(history, "tcsys", mu_noob=2000.0)
    df = r.ratings()
    assert df["max_display_rating"].max() > 2500  # both damping branches were exercised
    assert ((df["mu"] >= 2000) & (df["mu"] < 2500)).any()
    ref = elo_mmr_py.rate_latest(to_reference(history), "tcsys", mu_noob=2000.0)
    assert_matches_reference(r, ref)


@pytest.mark.slow
def test_matches_reference_on_first_100_codeforces_contests(
    elo_mmr_py: Any, codeforces_first_100: list[Contest],
) -> None:
    contests = codeforces_first_100
    ref = elo_mmr_py.rate_latest(
        [elo_mmr_py.Contest(c.standings, name=c.name, time_seconds=c.time_seconds)
         for c in contests],
        "tcsys",
    )
    r = Rater("tcsys")
    r.extend(contests)
    assert_matches_reference(r, ref, "codeforces first 100")


# ---------------------------------------------------------------------- properties
@hyp(30)
@given(histories(max_players=40), st.sampled_from([-700.0, -300.0, 250.0]))
def test_translation_invariance_below_2000(history: list[RawContest], shift: float) -> None:
    # Nothing but the damping (>= 2000, >= 2500) and the ceiling sees absolute ratings.
    base = rate_as_reference(history, "tcsys", mu_noob=700.0).ratings(sort=False)
    moved = rate_as_reference(history, "tcsys", mu_noob=700.0 + shift).ratings(sort=False)
    assume(max(base["mu"].max(), moved["mu"].max()) < 1900)  # below 2000 all along
    np.testing.assert_allclose(moved["mu"], base["mu"] + shift, rtol=0, atol=1e-8)
    np.testing.assert_allclose(moved["sigma"], base["sigma"], rtol=0, atol=1e-8)


@hyp(40)
@given(st.integers(2, 30), st.integers(0, 2**32 - 1))
def test_tied_players_with_equal_states_get_equal_results(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    mu = rng.normal(1800, 500, n)
    sigma = rng.uniform(50, 600, n)
    played = rng.integers(0, 30, n)
    a = int(rng.integers(0, n - 1))
    mu[a + 1], sigma[a + 1], played[a + 1] = mu[a], sigma[a], played[a]  # twins a, a+1
    lo = np.arange(n)
    hi = np.arange(n)
    lo[a + 1] = a
    hi[a] = a + 1
    out = _update(_round(list(mu), list(sigma), list(played), list(lo), list(hi)))
    # equal up to rounding: each unordered pair is summed once, so the twins' expected
    # ranks add the same terms in different orders
    assert out.mu[a] == pytest.approx(out.mu[a + 1], rel=1e-13)
    assert out.sigma[a] == pytest.approx(out.sigma[a + 1], rel=1e-13)
    assert out.perf[a] == pytest.approx(out.perf[a + 1], rel=1e-13)


@hyp(30)
@given(histories(max_players=40, all_ties=False), st.integers(0, 8))
def test_everybody_tied_contest_changes_nothing_with_the_reference_skip(
    elo_mmr_py: Any, history: list[RawContest], where: int
) -> None:
    k = min(where, len(history))
    handles = sorted({h for c in history for h, _, _ in c.standings})[:12]
    tied = RawContest(tuple((h, 0, len(handles) - 1) for h in handles), "all tied",
                      history[k - 1].time_seconds if k else history[0].time_seconds)
    with_tie = history[:k] + [tied] + history[k:]
    a = rate_as_reference(history, "tcsys").ratings(sort=False).set_index("handle")
    b = rate_as_reference(with_tie, "tcsys").ratings(sort=False).set_index("handle")
    assert sorted(a.index) == sorted(b.index)  # nobody was created by the tied round
    b = b.loc[a.index]
    np.testing.assert_array_equal(a["mu"].to_numpy(), b["mu"].to_numpy())
    np.testing.assert_array_equal(a["sigma"].to_numpy(), b["sigma"].to_numpy())
    np.testing.assert_array_equal(a["contests"].to_numpy(), b["contests"].to_numpy())
    ref = elo_mmr_py.rate_latest(to_reference(with_tie), "tcsys")  # the reference skips it too
    assert_matches_reference(rate_as_reference(with_tie, "tcsys"), ref)


# ---------------------------------------------------------------------- config
def test_registered_with_reference_defaults() -> None:
    system = get_system("tcsys")
    assert isinstance(system, TopCoder)
    assert system.params() == {"all_tied": "rate", "weight_noob": 0.6, "weight_limit": 0.18,
                               "perf_ceiling": None, "mu_noob": 1500.0, "sig_noob": 350.0}
    assert system.newcomer() == (1500.0, 350.0)


@pytest.mark.parametrize("params", [
    {"weight_noob": 1.0}, {"weight_noob": 0.0}, {"weight_limit": -0.1}, {"weight_limit": 1.5},
    {"sig_noob": 0.0}, {"sig_noob": math.inf}, {"mu_noob": math.nan},
    {"perf_ceiling": math.nan}, {"weight_noob": "0.6"},
])
def test_bad_parameters_are_rejected(params: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        Rater("tcsys", **params)


def test_unknown_parameter_is_rejected() -> None:
    with pytest.raises(ConfigError, match="weight_multiplier"):
        Rater("tcsys", weight_multiplier=1.0)


def test_non_participants_are_untouched() -> None:
    r = Rater("tcsys")
    r.extend(to_podium([RawContest((("a", 0, 0), ("b", 1, 1), ("c", 2, 2)), "c0", 0)]))
    before = r.rating("c")
    r.add(Contest([("a", 0, 0), ("b", 1, 1)], name="c1", time_seconds=5))
    assert r.rating("c") == before
