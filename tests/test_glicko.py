"""All-pairs Glicko ("glicko") and Bradley-Terry ("bar"), :mod:`podium.systems.glicko`.

* hand-worked rounds (arithmetic written out below): two newcomers for each system,
  and a three-player round with a tie for Glicko;
* the kernels: the interpolated sum of tanh terms against the term-by-term sum on
  rounds of up to 3000 players, and BAR's pair sums against a plain double loop;
* agreement with elo-mmr-py 2.0.0's "glicko" and "bar" (the same players, every final
  mu and sigma within 1e-8) on random histories with ties (and with contest weights),
  and on the first 100 Codeforces contests (tests/_require.py finds the data set);
* properties: translation invariance, tied players with equal states get equal
  results, an everybody-tied contest changes nothing, checkpoints resume exactly;
* parameter validation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _agreement import assert_agrees
from _histories import RawContest, histories, hyp, rate_as_reference, to_reference
from hypothesis import given
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems import RoundInput, get_system
from podium.systems.glicko import BAR, DEFAULT_BETA, Glicko
from podium.systems.glicko import kernels as K

SYSTEMS = ["glicko", "bar"]


def _round(mu: list[float], sigma: list[float], lo: list[int], hi: list[int],
           weight: float = 1.0) -> RoundInput:
    n = len(mu)
    contest = Contest([(f"p{k}", lo[k], hi[k]) for k in range(n)], name="hand", weight=weight)
    return RoundInput(
        contest=contest, players=np.arange(n, dtype=np.int64),
        lo=np.array(lo, dtype=np.int64), hi=np.array(hi, dtype=np.int64),
        mu=np.array(mu, dtype=np.float64), sigma=np.array(sigma, dtype=np.float64),
        played=np.zeros(n, dtype=np.int64), delta_seconds=np.zeros(n),
    )


def _update(system: Glicko | BAR, rnd: RoundInput) -> Any:
    state = system.make_state()
    state.ensure_players(rnd.players.size)
    return system.round_update(state, rnd)


# ---------------------------------------------------------------------- hand-worked
def test_beta_default() -> None:
    assert DEFAULT_BETA == pytest.approx(400 * math.pi / (math.sqrt(3) * math.log(10)), rel=1e-15)
    assert DEFAULT_BETA == pytest.approx(315.0892220666189, abs=1e-12)


def test_glicko_two_newcomers_by_hand() -> None:
    r = Rater("glicko")
    r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="c1"))
    s2 = 350**2 + 35**2  # drift first: s = sqrt(123725) = 351.7456
    g = 1 / math.hypot(1, math.sqrt(s2) / 315.0892220666189)  # 0.667229
    assert g == pytest.approx(0.6672292272629902, abs=1e-13)
    # equal ratings: p = 1/2 against each other (and oneself).  Ann's score averaged
    # over the N = 2 players: (g (1 - 1/2) + 0) / 2 = g/4; Bob's -g/4.
    q = math.log(10) / 400  # Glicko's q = pi / (sqrt(3) beta)
    sig = (1 / s2 + 0.25 * q * q) ** -0.5  # information fixed at 1/4
    assert sig == pytest.approx(247.18380521579127, abs=1e-10)
    mu_ann = 1500 + q * sig**2 * g / 4  # 1558.669
    assert mu_ann == pytest.approx(1558.6692849430697, abs=1e-9)
    assert r.rating("ann") == pytest.approx((mu_ann, sig), abs=1e-9)
    assert r.rating("bob") == pytest.approx((3000 - mu_ann, sig), abs=1e-9)
    # perf: the rating whose observation (precision q^2/4) moves 1500 to mu_ann
    ev = r.events_frame().set_index("handle")
    assert ev.at["ann", "perf"] == pytest.approx(1500 + 4 * (g / 4) / q, abs=1e-9)


def test_glicko_three_players_with_a_tie_by_hand() -> None:
    # sigma 0 drift 35 -> s = 35 for all; beta 300; ratings 1600, 1500, 1500 (the latter
    # two tied for second)
    out = _update(Glicko(beta=300.0), _round([1600.0, 1500.0, 1500.0], [0.0] * 3,
                                              [0, 1, 1], [0, 2, 2]))
    c = math.hypot(35, 300)  # every opponent's spread
    g = 300 / c
    f = 1 / (1 + math.exp(-math.pi / math.sqrt(3) * 100 / c))  # P(1600 beats 1500)
    score_top = g * ((1 - f) + (1 - f)) / 3  # two wins, each expected with probability f
    score_tied = g * ((0 - (1 - f)) + (0.5 - 0.5)) / 3  # a loss to the top, a tie
    q = math.pi / (math.sqrt(3) * 300)
    sig = (35**-2 + 0.25 * q * q) ** -0.5
    assert out.sigma == pytest.approx([sig] * 3, abs=1e-12)
    assert out.mu == pytest.approx([1600 + q * sig**2 * score_top,
                                    1500 + q * sig**2 * score_tied,
                                    1500 + q * sig**2 * score_tied], abs=1e-10)


def test_bar_two_newcomers_by_hand() -> None:
    r = Rater("bar")
    r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="c1"))
    s2 = 350**2 + 35**2
    c = math.sqrt(2 * s2 + 2 * 315.0892220666189**2)  # c^2 = s_i^2 + s_j^2 + 2 beta^2
    assert c == pytest.approx(667.841624732312, abs=1e-9)
    # p = 1/2; Ann's averaged score ((1 - 1/2)/c + 0) / 2 = 1/(4c); mu += s^2 / (4c)
    mu_ann = 1500 + s2 / (4 * c)
    assert mu_ann == pytest.approx(1546.3152472899515, abs=1e-9)
    info = 0.25 * s2 / (s2 + 2 * 315.0892220666189**2)  # 0.0959741
    sig = math.sqrt(s2 * (1 - info))
    assert sig == pytest.approx(334.4407319189796, abs=1e-9)
    assert r.rating("ann") == pytest.approx((mu_ann, sig), abs=1e-9)
    assert r.rating("bob") == pytest.approx((3000 - mu_ann, sig), abs=1e-9)
    ev = r.events_frame().set_index("handle")
    assert ev.at["ann", "perf"] == pytest.approx(1500 + (mu_ann - 1500) / info, abs=1e-9)


def test_bar_kappa_floor() -> None:
    # a huge deviation against a tiny beta: 1 - info would be 0.75; kappa 0.9 wins
    out = _update(BAR(beta=1.0, kappa=0.9), _round([1500.0, 1400.0], [1000.0, 1000.0],
                                                   [0, 1], [0, 1]))
    s = math.hypot(1000, 35)
    assert out.sigma == pytest.approx([s * math.sqrt(0.9)] * 2, rel=1e-14)


def test_contest_weight_scales_beta() -> None:
    rnd = _round([1700.0, 1500.0, 1400.0], [300.0, 80.0, 200.0], [0, 1, 2], [0, 1, 2],
                 weight=4.0)
    plain = _round([1700.0, 1500.0, 1400.0], [300.0, 80.0, 200.0], [0, 1, 2], [0, 1, 2])
    for cls in (Glicko, BAR):
        a = _update(cls(), rnd)
        b = _update(cls(beta=DEFAULT_BETA / 2), plain)  # beta / sqrt(4)
        np.testing.assert_allclose(a.mu, b.mu, rtol=0, atol=1e-10)
        np.testing.assert_allclose(a.sigma, b.sigma, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------- kernels
@pytest.mark.parametrize("n", [3, 300, 3000])
def test_interpolated_tanh_sums_match_term_by_term(n: int) -> None:
    rng = np.random.default_rng(n)
    mu = np.concatenate([rng.normal(1500, 600, n - 2), [-2500.0, 5200.0]])  # a wide range
    s = rng.uniform(36, 360, n)
    c = np.hypot(s, DEFAULT_BETA)
    k = K.HALF_TANH_MULTIPLIER / c
    w = 0.5 * DEFAULT_BETA / c
    direct = K.tanh_sums(mu, mu, k, w, 1)
    interp = K.tanh_sums(mu, mu, k, w, 2)
    scale = float(np.abs(w).sum())
    assert np.abs(interp - direct).max() <= 1e-13 * scale
    auto = K.tanh_sums(mu, mu, k, w, 0)  # the cheaper of the two
    assert np.array_equal(auto, interp if n == 3000 else auto)
    assert np.array_equal(auto, direct if n == 3 else auto)
    assert np.array_equal(auto, direct) or np.array_equal(auto, interp)
    # a single point (all ratings equal): one short panel
    same = np.full(n, 1500.0)
    np.testing.assert_allclose(K.tanh_sums(same, same, k, w, 2), 0.0, atol=1e-13 * scale)


@pytest.mark.parametrize("n", [2, 9, 50])
def test_bar_sums_match_double_loop(n: int) -> None:
    rng = np.random.default_rng(n)
    mu = rng.normal(1500, 400, n)
    var = rng.uniform(40, 400, n) ** 2
    lo = np.sort(rng.integers(0, n, n))
    lo = np.array([np.flatnonzero(lo == x)[0] for x in lo])  # valid tie ranges
    two = 2 * 300.0**2
    want = np.zeros(n)
    for i in range(n):
        for j in range(n):
            c = math.sqrt(var[i] + var[j] + two)
            o = 1.0 if lo[i] < lo[j] else 0.5 if lo[i] == lo[j] else 0.0
            p = 1 / (1 + math.exp(-math.pi / math.sqrt(3) * (mu[i] - mu[j]) / c))
            want[i] += (o - p) / c
    np.testing.assert_allclose(K.bar_sums(mu, var, lo, two), want, rtol=0, atol=1e-13)


# ---------------------------------------------------------------------- reference


def assert_matches_reference(r: Rater, ref: dict[str, Any], case: str = "random") -> None:
    assert_agrees(r, ref, r.system.name, case=case)


@pytest.mark.parametrize("system", SYSTEMS)
@hyp(50)
@given(history=histories(max_players=40))
def test_matches_reference_on_random_histories(
    elo_mmr_py: Any, system: str, history: list[RawContest]
) -> None:
    ref = elo_mmr_py.rate_latest(to_reference(history), system)
    assert_matches_reference(rate_as_reference(history, system), ref)


@pytest.mark.parametrize("system", SYSTEMS)
@hyp(20)
@given(history=histories(max_players=40, weights=True, ceilings=True),
       prior=st.sampled_from([(1500.0, 350.0), (1200.0, 100.0)]))
def test_matches_reference_with_weights_ceilings_priors(elo_mmr_py: Any,
    system: str, history: list[RawContest], prior: tuple[float, float]
) -> None:
    ref = elo_mmr_py.rate_latest(to_reference(history), system, mu_noob=prior[0], sig_noob=prior[1])
    r = rate_as_reference(history, system, mu_noob=prior[0], sig_noob=prior[1])
    assert_matches_reference(r, ref)


@pytest.mark.parametrize("system", SYSTEMS)
def test_large_rounds_match_reference(elo_mmr_py: Any, system: str) -> None:
    # rounds of 400-1200 players: Glicko takes the interpolated path here
    rng = np.random.default_rng(11)
    skill = rng.normal(1500, 400, 1500)
    history = []
    for c in range(3):
        players = rng.choice(skill.size, size=int(rng.integers(400, 1200)), replace=False)
        score = np.round((skill[players] + rng.normal(0, 300, players.size)) / 50)
        order = np.argsort(-score, kind="stable")
        groups: list[list[str]] = []
        last = None
        for k in order:
            if score[k] != last:
                groups.append([])
                last = score[k]
            groups[-1].append(f"p{players[k]}")
        standings = []
        pos = 0
        for grp in groups:
            standings += [(h, pos, pos + len(grp) - 1) for h in grp]
            pos += len(grp)
        history.append(RawContest(tuple(standings), f"c{c}", 86_400 * c))
    assert_matches_reference(rate_as_reference(history, system),
                             elo_mmr_py.rate_latest(to_reference(history), system), "large rounds")


@pytest.mark.slow
@pytest.mark.parametrize("system", SYSTEMS)
def test_matches_reference_on_first_100_codeforces_contests(
    elo_mmr_py: Any, system: str, codeforces_first_100: list[Contest]
) -> None:
    contests = codeforces_first_100
    ref = elo_mmr_py.rate_latest(
        [elo_mmr_py.Contest(c.standings, name=c.name, time_seconds=c.time_seconds)
         for c in contests],
        system,
    )
    r = Rater(system)
    r.extend(contests)
    assert_matches_reference(r, ref, "codeforces first 100")


# ---------------------------------------------------------------------- properties
@pytest.mark.parametrize("system", SYSTEMS)
@hyp(25)
@given(history=histories(max_players=40), shift=st.sampled_from([-1234.5, 0.25, 800.0]))
def test_translation_invariance(system: str, history: list[RawContest], shift: float) -> None:
    base = rate_as_reference(history, system).ratings(sort=False)
    moved = rate_as_reference(history, system, mu_noob=1500.0 + shift).ratings(sort=False)
    np.testing.assert_allclose(moved["mu"], base["mu"] + shift, rtol=0, atol=1e-9)
    np.testing.assert_allclose(moved["sigma"], base["sigma"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("system", SYSTEMS)
@hyp(30)
@given(n=st.integers(2, 600), seed=st.integers(0, 2**32 - 1))
def test_tied_players_with_equal_states_get_equal_results(system: str, n: int,
                                                          seed: int) -> None:
    rng = np.random.default_rng(seed)
    mu = rng.normal(1500, 500, n)
    sigma = rng.uniform(0, 400, n)
    a = int(rng.integers(0, n - 1))
    mu[a + 1], sigma[a + 1] = mu[a], sigma[a]  # twins a and a + 1 ...
    lo = np.arange(n)
    hi = np.arange(n)
    lo[a + 1] = a  # ... tied with each other
    hi[a] = a + 1
    out = _update(get_system(system), _round(list(mu), list(sigma), list(lo), list(hi)))
    # Glicko: one shared function of the rating (exactly equal); BAR sums each unordered
    # pair once, so the twins add the same terms in different orders (equal to rounding)
    assert out.mu[a] == pytest.approx(out.mu[a + 1], rel=1e-14, abs=0)
    assert out.sigma[a] == out.sigma[a + 1]
    assert out.perf[a] == pytest.approx(out.perf[a + 1], rel=1e-12, abs=1e-9)
    if system == "glicko":
        assert out.mu[a] == out.mu[a + 1]


@pytest.mark.parametrize("system", SYSTEMS)
@hyp(20)
@given(history=histories(max_players=40, all_ties=False), where=st.integers(0, 8))
def test_everybody_tied_contest_changes_nothing_with_the_reference_skip(
    elo_mmr_py: Any, system: str, history: list[RawContest],
                                                where: int) -> None:
    k = min(where, len(history))
    handles = sorted({h for c in history for h, _, _ in c.standings})[:15]
    tied = RawContest(tuple((h, 0, len(handles) - 1) for h in handles), "all tied",
                      history[k - 1].time_seconds if k else history[0].time_seconds)
    with_tie = history[:k] + [tied] + history[k:]
    a = rate_as_reference(history, system).ratings(sort=False).set_index("handle")
    b = rate_as_reference(with_tie, system).ratings(sort=False).set_index("handle")
    assert sorted(a.index) == sorted(b.index)
    b = b.loc[a.index]
    np.testing.assert_array_equal(a["mu"].to_numpy(), b["mu"].to_numpy())
    np.testing.assert_array_equal(a["sigma"].to_numpy(), b["sigma"].to_numpy())
    assert_matches_reference(rate_as_reference(with_tie, system),
                             elo_mmr_py.rate_latest(to_reference(with_tie), system))


def test_all_equal_and_all_tied_round_only_widens_nothing_moves() -> None:
    # equal ratings, everybody tied (a draw, rated by default) -> the
    # scores are 0, so no rating moves; only the deviations change
    rnd = _round([1500.0] * 4, [200.0] * 4, [0] * 4, [3] * 4)
    for cls in (Glicko, BAR):
        out = _update(cls(), rnd)
        np.testing.assert_array_equal(out.mu, rnd.mu)
        np.testing.assert_array_equal(out.perf, rnd.mu)


# ---------------------------------------------------------------------- config
def test_registered_with_reference_defaults() -> None:
    g = get_system("glicko")
    b = get_system("bar")
    assert isinstance(g, Glicko) and isinstance(b, BAR)
    assert g.params() == {"all_tied": "rate", "beta": DEFAULT_BETA, "sig_drift": 35.0,
                          "mu_noob": 1500.0, "sig_noob": 350.0}
    assert b.params() == {"all_tied": "rate", "beta": DEFAULT_BETA, "sig_drift": 35.0,
                          "kappa": 1e-4, "mu_noob": 1500.0, "sig_noob": 350.0}


@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("params", [
    {"beta": 0.0}, {"beta": -1.0}, {"beta": math.inf}, {"sig_drift": -1.0},
    {"sig_drift": math.nan}, {"sig_noob": 0.0}, {"mu_noob": math.inf}, {"beta": "300"},
])
def test_bad_parameters_are_rejected(system: str, params: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        Rater(system, **params)


@pytest.mark.parametrize("kappa", [0.0, -1e-4, 1.5, math.nan])
def test_bad_kappa_is_rejected(kappa: float) -> None:
    with pytest.raises(ConfigError, match="kappa"):
        Rater("bar", kappa=kappa)


def test_glicko_has_no_kappa() -> None:
    with pytest.raises(ConfigError, match="kappa"):
        Rater("glicko", kappa=1e-4)
