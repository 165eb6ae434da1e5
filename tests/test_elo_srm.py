"""EloSRM and SRMFix ([Batty2026]): hand-worked rounds, the bounds of Eqs. 9-11, a
literal re-implementation of Appendix A, SRMFix as EloSRM minus documented
factors, divisions, checkpoints."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _require import require_codeforces
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.io import synthetic_contests
from podium.systems import get_system
from podium.systems.base import RoundInput
from podium.systems.elo_srm import K0, SRMFIX, EloSRM, division_contests
from podium.systems.elo_srm import kernels as KER

YEAR = 31_557_600  # 365.25 days in seconds
ELO = EloSRM()


def two(a: str, b: str, t: int = 0, name: str = "c") -> Contest:
    return Contest([(a, 0, 0), (b, 1, 1)], name=name, time_seconds=t)


# ---------------------------------------------------------------------- constants
def test_appendix_a_constants():
    # Appendix A, VERSION 7, and K0 = 400 ln2 / ln10 (Eq. 13)
    assert ELO.k == 648.3147599935407
    assert ELO.c == 3.8884120557511483
    assert ELO.m == 4.44015774770823
    assert ELO.b == 41.84027892146161
    assert ELO.w1 == 0.20058285315948782
    assert ELO.d == 112.17636272246507
    assert ELO.gamma == 0.4599945496035186
    assert ELO.g == 50.67198262989024
    assert ELO.r0 == 1200.0
    assert K0 == pytest.approx(120.41199826559247, rel=1e-15)
    srm = get_system("srmfix")
    assert (srm.k, srm.m, srm.w1, srm.c, srm.b, srm.g, srm.gamma) == (247, 8.2, 1, 0, 0, 0, 0)


# ---------------------------------------------------------------------- hand-worked rounds
def test_srmfix_two_players_by_hand():
    # Both debut at 1200: w = 1/(1 + 10^0) = 0.5.
    # winner: r_hat = 1 + 0.5 = 1.5, r = 1 -> P = log2(1.5) = 0.5849625007211562
    #   P_M = P / (1 + P/8.2) = 0.5849625007211562 / 1.0713368903318483 = 0.5460117223630404
    #   W = sqrt(N) = 1 -> dR = 247 * 0.5460117223630404 = 134.864895423671
    # loser: r_hat = 1.5, r = 2 -> P = log2(0.75) = -0.4150374992788438
    #   P_M = -0.4150374992788438 / 1.0506143291803468 = -0.3950426790796217
    #   dR = 247 * -0.3950426790796217 = -97.57554173266657
    r = Rater("srmfix")
    r.add(two("a", "b"))
    assert r.rating("a")[0] == pytest.approx(1334.864895423671, abs=1e-9)
    assert r.rating("b")[0] == pytest.approx(1102.4244582673334, abs=1e-9)
    ev = r.events_frame()
    np.testing.assert_allclose(ev["perf"], [0.5849625007211562, -0.4150374992788438], rtol=1e-14)
    # volatility K / (W_next F) = 247 / sqrt(2)
    assert r.rating("a")[1] == pytest.approx(247 / math.sqrt(2), rel=1e-14)


def test_srmfix_three_players_with_tie_by_hand():
    # a first, b and c tied for 2nd-3rd, all at 1200 (every w = 0.5).
    # a: r = 1, r_hat = 1 + 0.5 + 0.5 = 2 -> P = 1; P_M = 1/(1 + 1/8.2) = 0.8913043478260869
    #    dR = 247 * 0.8913043478260869 = 220.15217391304347
    # b, c: r = 1 + 1 + 1/2 = 2.5 (Eq. 4 splits the tie), r_hat = 1 + 0.5 + 1/2 = 2
    #    P = log2(2/2.5) = -0.3219280948873623; P_M = P/(1 + 0.3219280948873623/8.2)
    #      = -0.30976679792218575; dR = 247 * P_M = -76.51239908677988
    # sum P = 1 - 2 * 0.32193 = 0.356 >= 0 (Eq. 9)
    r = Rater("srmfix")
    r.add(Contest([("a", 0, 0), ("b", 1, 2), ("c", 1, 2)], name="t"))
    assert r.rating("a")[0] == pytest.approx(1420.1521739130435, abs=1e-9)
    assert r.rating("b")[0] == pytest.approx(1123.4876009132201, abs=1e-9)
    assert r.rating("c")[0] == pytest.approx(1123.4876009132201, abs=1e-9)


def test_elosrm_two_rounds_by_hand():
    # Round 1 (t0 = 0): a beats b, both debut at R_init = 1200.
    #   P as in SRMFix: 0.5849625007211562 and -0.4150374992788438
    #   P' = (1 + 0.5*0.5) / (1 + 0.5) = 0.8333333333333334               (Eq. 12)
    #   P_B = B/K0 * P' = 0.34747599511781707 * 0.8333333 = 0.28956332926484757 (Eq. 18)
    #   V = 1 + C P' = 1 + 3.8884120557511483 * 0.8333333 = 4.240343379792623   (Eq. 16)
    #   W = sqrt(1 + W1*0) = 1, N_r = 1, F = 1
    #   a: P_M = 0.5849625/(1 + 0.5849625/4.44015774770823) = 0.5168683834994046
    #      dR = 648.3147599935407 * (0.5168683834994046 + 0.28956332926484757) / 4.240343379792623
    #         = 123.29699165483741
    #   b: P_M = -0.379558776581846; dR = K (P_M + P_B) / V = -13.759587750811964
    r = Rater("elosrm")
    r.add(two("a", "b", t=0, name="r1"))
    ra, rb = r.rating("a")[0], r.rating("b")[0]
    assert ra == pytest.approx(1323.2969916548375, abs=1e-9)
    assert rb == pytest.approx(1186.240412249188, abs=1e-9)
    assert r.rating("a")[1] == pytest.approx(ELO.k / math.sqrt(1 + ELO.w1), rel=1e-14)

    # Round 2, one year (365.25 days) later: newcomer c first, a and b tied 2nd-3rd.
    #   R_init = 1200 + G * 1 = 1250.6719826298902                             (Eq. 19)
    #   w(j beats i) = 1/(1 + 10^((R_i - R_j)/400)):
    #     a beats c 0.6030196877939658, b beats c 0.408324066962121,
    #     c beats a 0.39698031220603425, c beats b 0.591675933037879,
    #     b beats a 0.31239178671735296, a beats b 0.6876082132826471
    #   c: r = 1, r_hat = 1 + 0.6030197 + 0.4083241 = 2.0113437547560866
    #      P = log2(2.0113437547560866) = 1.008159670852608
    #      P' = (1 + 0.60302*0.39698 + 0.40832*0.59168)/2.0113437547560866 = 0.7363149455315584
    #      W = 1, F = 1: dR = K (P/(1+P/M) + B/K0 P') / (1 + C P') = 180.82229794770458
    #   a: r = 1 + 1 + 1/2 = 2.5, r_hat = 1 + 0.3969803 + 1/2 (tie) = 1.8969803122060342
    #      P = log2(1.8969803122060342/2.5) = -0.3982233890584338
    #      P' = (1 + 0.39698*0.60302 + 0.31239*0.68761)/(1 + 0.39698 + 0.31239) = 0.8507159460199557
    #      W = sqrt(1 + W1) = 1.0957111175668008 (N = 2)                      (Eq. 22)
    #      N_r = 1 + 1 * 2^(-365.25/D) = 1.1046733770717874                   (Eq. 20)
    #      F = N_r^gamma = 1.0468569788764703                                  (Eq. 21)
    #      dR = K (P_M + P_B)/(W V F) = -9.163551577732814
    #   b: r = 2.5, r_hat = 1 + 0.5916759 + 1/2 = 2.091675933037879
    #      P = -0.25726874522167487, P' = 0.6389719701958212, dR = -3.4307318533270728
    r.add(Contest([("c", 0, 0), ("a", 1, 2), ("b", 1, 2)], name="r2", time_seconds=YEAR))
    assert r.rating("c")[0] == pytest.approx(1431.4942805775947, abs=1e-9)
    assert r.rating("a")[0] == pytest.approx(1314.1334400771048, abs=1e-9)
    assert r.rating("b")[0] == pytest.approx(1182.809680395861, abs=1e-9)
    h = r.history("c")
    assert h["perf"].iloc[0] == pytest.approx(1.008159670852608, rel=1e-13)
    # volatility K / (sqrt(1 + W1 N) F): c 591.684..., a and b 523.183...
    assert r.rating("c")[1] == pytest.approx(591.6840210887208, rel=1e-13)
    assert r.rating("a")[1] == pytest.approx(523.1832204937286, rel=1e-13)
    assert r.rating("b")[1] == pytest.approx(523.1832204937286, rel=1e-13)


def test_four_players_ranks_by_hand():
    # Ratings 1400 (1st), 1600 (2nd), 1200 and 1200 (tied 3rd-4th).
    # w for a gap of 200: 1/(1 + 10^0.5) = 0.2402530733520421 (its complement 0.7597469266479578);
    # gap of 400: 1/11 and 10/11.
    # 1400: r_hat = 1 + 0.7597469 + 2*0.2402531 = 2.240253073352042, r = 1
    #       P = log2(2.240253073352042) = 1.1636617175716042
    #       P' = (1 + 0.75975*0.24025 + 2*0.24025*0.75975)/2.240253 = 0.6908124000362108
    # 1600: r_hat = 1 + 0.2402531 + 2/11 = 1.422071255170224, r = 2
    #       P = log2(1.422071255170224/2) = -0.49200624467332577, P' = 0.9477870995528641
    # 1200: r_hat = 1 + 0.7597469 + 10/11 + 1/2 = 3.168837835738867, r = 3.5
    #       P = log2(3.168837835738867/3.5) = -0.14340108990498465
    #       P' = (1 + 0.75975*0.24025 + (10/11)(1/11) + 1/4)/(1 + 0.75975 + 10/11 + 1/2)
    #          = 0.47814884848559175
    x = np.array([1400.0, 1600.0, 1200.0, 1200.0])
    lo = np.array([0, 1, 2, 2])
    hi = np.array([0, 1, 3, 3])
    for force in (1, 2):  # direct sums and interpolated sums
        er, ar, p, pp = KER.rank_performance(x, lo, hi, force)
        np.testing.assert_allclose(er, [2.240253073352042, 1.422071255170224,
                                        3.168837835738867, 3.168837835738867], rtol=1e-13)
        np.testing.assert_array_equal(ar, [1.0, 2.0, 3.5, 3.5])
        np.testing.assert_allclose(p, [1.1636617175716042, -0.49200624467332577,
                                       -0.14340108990498465, -0.14340108990498465], rtol=1e-12)
        np.testing.assert_allclose(pp, [0.6908124000362108, 0.9477870995528641,
                                        0.47814884848559175, 0.47814884848559175], rtol=1e-13)


# ---------------------------------------------------------------------- Eqs. 9-11
@st.composite
def random_round(draw, ties: bool = True):
    n = draw(st.integers(2, 40))
    ratings = draw(st.lists(st.floats(-1000, 5000), min_size=n, max_size=n))
    if ties:
        scores = draw(st.lists(st.integers(0, draw(st.integers(0, n))), min_size=n, max_size=n))
    else:
        scores = draw(st.permutations(range(n)))
    c = Contest.from_scores([f"p{i}" for i in range(n)], scores)
    order = [int(h[1:]) for h in c.handles]
    return np.array(ratings)[order], c


@settings(max_examples=300, deadline=None)
@given(random_round(ties=False))
def test_eq9_sum_of_performances_without_ties(case):
    x, c = case
    _, _, p, _ = KER.rank_performance(x, c.lo, c.hi, 0)
    assert p.sum() >= -1e-12 * len(c)  # Eq. 9: sum P >= 0


def test_eq9_fails_with_ties():
    # The seed's Eq. 9 is claimed for tied rounds too (Sec. 2.6); it is false there.
    # a, b rated 1200 tie for 1st-2nd, c rated 2000 is 3rd.  w(c beats a) = 1/(1 + 10^-2) = 100/101
    # a, b: r = 1.5, r_hat = 1 + 100/101 + 1/2 = 2.49009900990099
    #       P = log2(2.49009900990099/1.5) = 0.7312406063325761
    # c:    r = 3, r_hat = 1 + 2/101 = 1.0198019801980198
    #       P = log2(1.0198019801980198/3) = -1.5566734562897324
    # sum P = 2 * 0.7312406063325761 - 1.5566734562897324 = -0.09419224362458012 < 0
    x = np.array([1200.0, 1200.0, 2000.0])
    er, _, p, _ = KER.rank_performance(x, np.array([0, 0, 2]), np.array([1, 1, 2]), 1)
    np.testing.assert_allclose(p, [0.7312406063325761, 0.7312406063325761,
                                   -1.5566734562897324], rtol=1e-14)
    assert p.sum() == pytest.approx(-0.09419224362458012, rel=1e-12)
    # what does hold: sum log2 r_hat = 2.66069... >= log2 3! = 2.58496...
    assert np.log2(er).sum() == pytest.approx(2.6606952585388886, rel=1e-14)
    # and the system rates such a round without a warning
    r = Rater("elosrm")
    r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="setup"))
    rep = r.add(Contest([("a", 0, 1), ("b", 0, 1), ("c", 2, 2)], name="tied"))
    assert rep.warnings == ()


def test_ratings_a_subnormal_apart_are_one_panel() -> None:
    """Two ratings 5e-324 apart (found by hypothesis): half the spread underflows to 0,
    so the panel layout treats them as equal instead of dividing by zero, by either
    method."""
    c = Contest([("a", 0, 0), ("b", 1, 1)])
    x = np.array([0.0, 5e-324])
    for force in (0, 1, 2):
        u = np.empty(2)
        v = np.empty(2)
        KER.self_sums(x, 0, 2, u, v, True, force)
        assert np.allclose(u, 1.0) and np.allclose(v, 0.5)
    er, ar, p, _ = KER.rank_performance(x, c.lo, c.hi, 0)
    assert np.allclose(er, 1.5) and np.array_equal(ar, [1.0, 2.0])


@settings(max_examples=300, deadline=None)
@given(random_round())
def test_performance_bounds_with_ties(case):
    x, c = case
    er, ar, p, _ = KER.rank_performance(x, c.lo, c.hi, 0)
    n = len(c)
    # both rank vectors sum to n(n+1)/2 (each pair contributes 1)
    assert er.sum() == pytest.approx(n * (n + 1) / 2, rel=1e-12)
    assert ar.sum() == n * (n + 1) / 2
    # r_hat is majorised by (1..n): the tie-proof form of Eq. 9
    assert np.log2(er).sum() >= math.lgamma(n + 1) / math.log(2) - 1e-12 * n
    assert p.mean() < math.log2(math.e) - 1  # Eq. 10
    assert np.abs(p).mean() < 2  # Eq. 11


@settings(max_examples=25, deadline=None)
@given(st.integers(200, 3000), st.integers(1, 50), st.booleans(), st.integers(0, 2**32 - 1))
def test_performance_bounds_large_interpolated(n, levels, ties, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(1500, 600, n)
    scores = rng.integers(0, levels + 1, n) if ties else rng.permutation(n)
    c = Contest.from_scores([f"p{i}" for i in range(n)], scores)
    order = [int(h[1:]) for h in c.handles]
    er, _, p, _ = KER.rank_performance(x[order], c.lo, c.hi, 2)
    if not ties:
        assert p.sum() >= -1e-9 * n  # Eq. 9
    assert np.log2(er).sum() >= math.lgamma(n + 1) / math.log(2) - 1e-9 * n
    assert p.mean() < math.log2(math.e) - 1  # Eq. 10
    assert np.abs(p).mean() < 2  # Eq. 11


def test_reversed_field_approaches_l1_bound():
    # Everybody finishes in the reverse of the expected order: mean |P| -> 2 from below
    # (Eq. 11 is tight); a flat field finishing in some order: mean P -> log2(e) - 1 (Eq. 10).
    n = 2000
    _, _, p, _ = KER.rank_performance(np.linspace(-30000, 0, n), np.arange(n), np.arange(n), 0)
    assert 1.9 < np.abs(p).mean() < 2
    _, _, p, _ = KER.rank_performance(np.zeros(n), np.arange(n), np.arange(n), 0)
    assert 0.43 < p.mean() < math.log2(math.e) - 1


def test_interpolated_sums_match_direct():
    rng = np.random.default_rng(5)
    n = 3000
    x = np.concatenate([rng.normal(1500, 500, n - 500), rng.uniform(-4000, 9000, 500)])
    c = Contest.from_scores([f"p{i}" for i in range(n)], rng.integers(0, 8, n))  # big tie groups
    order = [int(h[1:]) for h in c.handles]
    a = KER.rank_performance(x[order], c.lo, c.hi, 1)
    b = KER.rank_performance(x[order], c.lo, c.hi, 2)
    np.testing.assert_allclose(b[0], a[0], rtol=1e-12)
    np.testing.assert_allclose(b[2], a[2], rtol=0, atol=1e-11)
    np.testing.assert_allclose(b[3], a[3], rtol=1e-12)


# ---------------------------------------------------------------------- Appendix A, literally
def appendix_a(contests, p):
    """Appendix A's rateRound, one Python loop per pair (Rater semantics: a round of one
    player is not rated; a draw is, as Appendix A rates it)."""
    rating, recent, count, last = {}, {}, {}, {}
    t0 = None
    for c in contests:
        if len(c) < 2:
            continue
        t = c.time_seconds
        t0 = t if t0 is None else t0
        r_init = p.r0 + p.g / YEAR * (t - t0)
        for h in c.handles:
            if not count.get(h):
                rating[h], recent[h], count[h] = r_init, 1.0, 0
            else:
                recent[h] = 1 + recent[h] * math.exp(-math.log(2) / (p.d * 86400) * (t - last[h]))
        rate = {h: math.exp(rating[h] * math.log(10) / 400) for h in c.handles}
        score = dict(zip(c.handles, (-c.lo).tolist(), strict=True))
        delta = {}
        for i in c.handles:
            erank = arank = mu = var = 1.0
            for j in c.handles:
                if j == i:
                    continue
                wj = rate[j] / (rate[i] + rate[j])
                mu += wj
                var += wj * (1 - wj)
                if score[i] == score[j]:
                    erank += 0.5
                    arank += 0.5
                else:
                    erank += wj
                    arank += score[i] < score[j]
            perf = math.log(erank / arank) / math.log(2)
            perf1 = var / mu
            pa = perf * p.m / (p.m + abs(perf)) + p.b / K0 * perf1
            w = math.sqrt(1 + count[i] * p.w1) * (1 + p.c * perf1) * recent[i] ** p.gamma
            delta[i] = p.k * pa / w
        for h in c.handles:
            count[h] += 1
            rating[h] += delta[h]
            last[h] = t
    return rating


def srmfix_by_formula(contests):
    """SRMFix from its three factors only: R_init = 1200, dR = 247/sqrt(N) P/(1 + |P|/8.2)."""
    rating, count = {}, {}
    for c in contests:
        if len(c) < 2:
            continue
        for h in c.handles:
            rating.setdefault(h, 1200.0)
            count[h] = count.get(h, 0) + 1
        lo = dict(zip(c.handles, c.lo.tolist(), strict=True))
        hi = dict(zip(c.handles, c.hi.tolist(), strict=True))
        new = {}
        for i in c.handles:
            r_hat = 1 + sum(
                0.5 if lo[j] == lo[i] else 1 / (1 + 10 ** ((rating[i] - rating[j]) / 400))
                for j in c.handles if j != i
            )
            r = 1 + (lo[i] + hi[i]) / 2
            p = math.log2(r_hat / r)
            new[i] = rating[i] + 247 / math.sqrt(count[i]) * p / (1 + abs(p) / 8.2)
        rating.update(new)
    return rating


@pytest.fixture(scope="module")
def history():
    # 60 players, 14 rounds a month apart, 60% turnout, many ties; newcomers keep arriving;
    # round 6 a draw (everybody tied: P = 0, Appendix A still gives the participation bonus)
    cs = synthetic_contests(60, 14, seed=11, participation=0.6, tie_resolution=60.0,
                            round_seconds=30 * 86400)
    c = cs[6]
    cs[6] = Contest([(h, 0, len(c) - 1) for h in c.handles], name=c.name,
                    time_seconds=c.time_seconds)
    return cs


@pytest.mark.parametrize("system", ["elosrm", "srmfix"])
def test_matches_appendix_a(history, system):
    r = Rater(system)
    r.extend(history)
    ref = appendix_a(history, r.system)
    got = r.ratings(sort=False)
    for h, mu in zip(got["handle"], got["mu"], strict=True):
        assert mu == pytest.approx(ref[h], rel=1e-12, abs=1e-9), h


def test_srmfix_is_three_factors(history):
    r = Rater("srmfix")
    r.extend(history)
    ref = srmfix_by_formula(history)
    got = r.ratings(sort=False)
    for h, mu in zip(got["handle"], got["mu"], strict=True):
        assert mu == pytest.approx(ref[h], rel=1e-12, abs=1e-9), h


def _mus(system, contests, **params):
    r = Rater(system, **params)
    r.extend(contests)
    return r.ratings(sort=False)["mu"].to_numpy()


def test_srmfix_and_elosrm_differ_only_in_documented_factors(history):
    elo = {k: getattr(ELO, k) for k in SRMFIX}
    # srmfix with EloSRM's values of the documented factors *is* EloSRM ...
    np.testing.assert_array_equal(_mus("srmfix", history, **elo), _mus("elosrm", history))
    # ... and EloSRM with SRMFix's values is SRMFix
    np.testing.assert_array_equal(_mus("elosrm", history, **SRMFIX), _mus("srmfix", history))
    # every documented factor is live: switching any one of them on changes the ratings
    base = _mus("srmfix", history)
    for name in ("c", "b", "g", "gamma", "w1"):
        assert not np.allclose(_mus("srmfix", history, **{name: elo[name]}), base), name
    # the parameter srmfix does not list (the half-life d) has no effect while gamma = 0
    np.testing.assert_array_equal(_mus("srmfix", history, d=1.0), base)


# ---------------------------------------------------------------------- t0, divisions, checkpoints
def test_first_round_time_is_state_and_param():
    t1 = 1_000_000_000
    r = Rater("elosrm")
    r.add(Contest([("x", 0, 0)], name="alone", time_seconds=t1 - 5))  # one side: unrated
    r.add(two("a", "b", t=t1))  # the first *rated* round sets t0
    assert r.state.t0 == t1
    r.add(two("c", "d", t=t1 + 2 * YEAR))
    # debutants two years later enter at 1200 + 2G; c and d start level, so their changes
    # equal a's and b's from round 1
    assert r.history("c")["mu"].iloc[0] - (1200 + 2 * ELO.g) == pytest.approx(
        r.history("a")["mu"].iloc[0] - 1200, abs=1e-9)
    # giving t0 as a parameter: same numbers, and newcomer() knows R_init
    r2 = Rater("elosrm", t0_seconds=t1)
    r2.extend([two("a", "b", t=t1), two("c", "d", t=t1 + 2 * YEAR)])
    for h in "abcd":
        assert r2.rating(h) == r.rating(h)
    assert r2.system.newcomer(two("e", "f", t=t1 + YEAR)) == (1200 + ELO.g, ELO.k)


def test_divisions_are_rated_separately():
    handles = ["a", "b", "c", "d", "e", "f"]
    scores = [300, 120, 120, 500, 0, 250]
    divs = [1, 1, 1, 2, 2, 2]
    cs = division_contests(handles, scores, divs, name="SRM 1", time_seconds=100)
    assert [c.name for c in cs] == ["SRM 1 [div 1]", "SRM 1 [div 2]"]
    assert cs[0].standings == [("a", 0, 0), ("b", 1, 2), ("c", 1, 2)]
    assert cs[1].standings == [("d", 0, 0), ("f", 1, 1), ("e", 2, 2)]
    both = Rater("elosrm")
    both.extend(cs)
    for c in cs:
        alone = Rater("elosrm")
        alone.add(c)
        for h in c.handles:
            assert both.rating(h) == alone.rating(h)


def test_state_copy_and_arrays():
    s = Rater("elosrm")
    s.add(two("a", "b", t=7))
    st2 = s.state.copy()
    assert st2.t0 == 7 and np.array_equal(st2.recent, s.state.recent)
    st2.recent[0] = 99.0
    assert s.state.recent[0] == 1.0
    back = type(s.state).from_arrays(s.state.to_arrays())
    assert back.t0 == 7 and back.n == 2
    empty = type(s.state).from_arrays(Rater("elosrm").state.to_arrays())
    assert empty.t0 is None and empty.n == 0


def test_round_update_uses_given_ratings_and_reports_no_warnings():
    sys_ = EloSRM()
    state = sys_.make_state()
    state.ensure_players(3)
    state.recent[:3] = [2.0, 3.0, 1.5]
    state.t0 = 0
    c = Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="r", time_seconds=86400 * 10)
    rnd = RoundInput(contest=c, players=np.arange(3), lo=c.lo, hi=c.hi,
                     mu=np.array([1500.0, 1700.0, 1300.0]), sigma=np.full(3, 100.0),
                     played=np.array([4, 9, 1]), delta_seconds=np.array([86400.0, 0.0, 3e6]))
    out = sys_.round_update(state, rnd)
    _, _, p, pp = KER.rank_performance(rnd.mu, c.lo, c.hi, 1)
    dr, recent, _ = sys_.rating_change(p, pp, rnd.played, np.array([2.0, 3.0, 1.5]),
                                       rnd.delta_seconds)
    np.testing.assert_allclose(out.mu, rnd.mu + dr, rtol=1e-15)
    # Eq. 20 by hand for a: 1 + 2 * 2^(-1/D)
    assert recent[0] == pytest.approx(1 + 2 * 2 ** (-1 / ELO.d), rel=1e-15)
    assert recent[1] == 4.0  # no time passed: 1 + 3
    assert state.recent[:3].tolist() == recent.tolist()
    assert out.warnings == ()


def test_config_errors():
    with pytest.raises(ConfigError, match=r"k must be a number in \[1e-12, 1e\+06\], got 0"):
        EloSRM(k=0)
    with pytest.raises(ConfigError,
                       match=r"m must be a number in \[1e-12, 1e\+06\] or math.inf, got nan"):
        EloSRM(m=float("nan"))
    with pytest.raises(ConfigError,
                       match=r"gamma must be 0 or a number in \[1e-12, 1e\+06\], got -0.1"):
        EloSRM(gamma=-0.1)
    with pytest.raises(ConfigError, match="t0_seconds"):
        EloSRM(t0_seconds=1.5)
    with pytest.raises(ConfigError, match="unknown parameter"):
        Rater("elosrm", K=3)
    # infinite M and D switch those factors off
    inf = EloSRM(m=math.inf, d=math.inf)
    dr, recent, _ = inf.rating_change(np.array([2.0]), np.array([0.0]), np.array([3]),
                                      np.array([5.0]), np.array([1e9]))
    assert recent[0] == 6.0
    assert dr[0] == pytest.approx(inf.k * 2.0 / (math.sqrt(1 + 3 * inf.w1) * 6.0**inf.gamma))
    assert dataclasses.replace(ELO, t0_seconds=5).t0_seconds == 5
    with pytest.raises(ConfigError, match="t0_seconds must be a 64-bit integer or None, got 5.0"):
        dataclasses.replace(ELO, t0_seconds=5.0)


def test_codeforces_smoke():
    from podium.io import load_contests

    contests = load_contests(str(require_codeforces()), limit=40, sort_by_time=True).contests
    r = Rater("elosrm")
    reports = r.extend(contests)
    assert not [w for rep in reports for w in rep.warnings if "expected rank" in w]
    df = r.ratings()
    assert np.isfinite(df["mu"]).all() and np.isfinite(df["sigma"]).all()
    ev = r.events_frame()
    # Eqs. 10-11 round by round
    assert (ev.groupby("contest_index")["perf"].mean() < math.log2(math.e) - 1).all()
    assert (ev.groupby("contest_index")["perf"].apply(lambda p: p.abs().mean()) < 2).all()
