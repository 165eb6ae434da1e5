"""Prediction-accuracy metrics (podium.evaluation.metrics) against brute-force O(n^2) transcriptions
of their definitions, cases worked by hand, and SciPy's Kendall/Spearman."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.evaluation import _metrics_kernels as K
from podium.evaluation.metrics import (
    COUNT_KEYS,
    ROUND_KEYS,
    SUMMARY_KEYS,
    MetricAccumulator,
    is_outcome_free,
    kendall_tau,
    pair_inversion,
    rank_deviation,
    rank_log_errors,
    renumber_ties,
    spearman_rho,
)

# --------------------------------------------------------------------------------------
# Brute force, written from the definitions (multi-skill's semantics, [Batty2026] Eq. 3-8)


def bf_renumber(lo: list[int], hi: list[int]) -> tuple[list[int], list[int]]:
    """new lo = first position with the same original lo; new hi = last with the same hi."""
    n = len(lo)
    new_lo = [min(k for k in range(n) if lo[k] == lo[i]) for i in range(n)]
    new_hi = [max(k for k in range(n) if hi[k] == hi[i]) for i in range(n)]
    return new_lo, new_hi


def bf_outcome_free(hi: list[int]) -> bool:
    return len(hi) == 0 or hi[0] + 1 >= len(hi)


def bf_pair_inv(mu: Sequence[float], lo: Sequence[int], hi: Sequence[int],
                equal_correct: bool = False) -> float:
    n = len(mu)
    if bf_outcome_free(list(hi)):
        return math.nan
    good = 0
    for i in range(n):
        for j in range(i + 1, n):
            if lo[i] == lo[j]:
                good += 1  # tied in the results: correct
                continue
            w, l_ = (i, j) if lo[i] < lo[j] else (j, i)
            if mu[w] > mu[l_] or (equal_correct and mu[w] == mu[l_]):
                good += 1
    return 100.0 * good / (n * (n - 1) / 2)


def bf_rank_dev(mu: Sequence[float], lo: Sequence[int], hi: Sequence[int]) -> float:
    n = len(mu)
    if bf_outcome_free(list(hi)):
        return math.nan
    by_rating = sorted(range(n), key=lambda k: -mu[k])  # Python's sort is stable
    err = 0
    for i, k in enumerate(by_rating):
        err += abs(i - min(max(i, lo[k]), hi[k]))
    return 100.0 * err / ((n - 1) * n)


def bf_log_errors(mu: Sequence[float], lo: Sequence[int], scale: float = 400.0) -> list[float]:
    n = len(mu)
    out = []
    for i in range(n):
        tied = sum(1 for j in range(n) if j != i and lo[j] == lo[i])
        better = sum(1 for j in range(n) if lo[j] < lo[i])
        r_ties = 0.5 * tied
        r = 1 + better + r_ties
        r_hat = 1 + r_ties + sum(1.0 / (1.0 + 10.0 ** ((mu[i] - mu[j]) / scale))
                                 for j in range(n) if lo[j] != lo[i])
        out.append(math.log2(r_hat) - math.log2(r))
    return out


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def bf_kendall(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    s = 0
    ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            s += _sign(x[i] - x[j]) * _sign(y[i] - y[j])
            ties_x += x[i] == x[j]
            ties_y += y[i] == y[j]
    n0 = n * (n - 1) // 2
    if n < 2 or n0 == ties_x or n0 == ties_y:
        return math.nan
    return s / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def bf_spearman(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    if n < 2:
        return math.nan

    def ranks(v: Sequence[float]) -> list[float]:
        return [1 + sum(1 for b in v if b < a) + 0.5 * (sum(1 for b in v if b == a) - 1)
                for a in v]

    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def same(a: float, b: float, tol: float = 1e-9) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol * max(1.0, abs(b))


# --------------------------------------------------------------------------------------
# Random rounds: tie blocks in the results, ties in the ratings


@st.composite
def rounds(draw: Any, max_groups: int = 12, max_size: int = 4
           ) -> tuple[list[float], list[int], list[int], list[int]]:
    sizes = draw(st.lists(st.integers(1, max_size), min_size=0, max_size=max_groups))
    lo: list[int] = []
    hi: list[int] = []
    pos = 0
    for s in sizes:
        lo += [pos] * s
        hi += [pos + s - 1] * s
        pos += s
    n = pos
    mu = draw(st.lists(st.sampled_from([1200.0, 1350.0, 1400.0, 1400.5, 1500.0, 1725.25,
                                        2000.0]), min_size=n, max_size=n))
    n_prev = draw(st.lists(st.integers(0, 7), min_size=n, max_size=n))
    return mu, lo, hi, n_prev


def _subset(mu: Sequence[float], lo: Sequence[int], hi: Sequence[int], keep: Sequence[bool]
            ) -> tuple[list[float], list[int], list[int]]:
    idx = [i for i in range(len(mu)) if keep[i]]
    new_lo, new_hi = bf_renumber([lo[i] for i in idx], [hi[i] for i in idx])
    return [mu[i] for i in idx], new_lo, new_hi


# --------------------------------------------------------------------------------------
# Renumbering and outcome-free rounds


def test_renumber_hand_example() -> None:
    # original [0,1],[0,1],[2,2],[3,5],[3,5],[3,5]; keep players 0, 2, 3, 5
    lo = np.array([0, 0, 2, 3, 3, 3])
    hi = np.array([1, 1, 2, 5, 5, 5])
    keep = [0, 2, 3, 5]
    new_lo, new_hi = renumber_ties(lo[keep], hi[keep])
    assert list(zip(new_lo.tolist(), new_hi.tolist(), strict=True)) == [
        (0, 0), (1, 1), (2, 3), (2, 3)]


@settings(max_examples=150, deadline=None)
@given(rounds(), st.data())
def test_renumber_matches_definition(rnd: Any, data: Any) -> None:
    _mu, lo, hi, _ = rnd
    keep = data.draw(st.lists(st.booleans(), min_size=len(lo), max_size=len(lo)))
    sub_lo = [lo[i] for i in range(len(lo)) if keep[i]]
    sub_hi = [hi[i] for i in range(len(lo)) if keep[i]]
    new_lo, new_hi = renumber_ties(np.array(sub_lo, dtype=np.int64),
                                   np.array(sub_hi, dtype=np.int64))
    assert (new_lo.tolist(), new_hi.tolist()) == bf_renumber(sub_lo, sub_hi)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12))
def test_renumber_runs_of_lo_and_hi_separately(pairs: list[tuple[int, int]]) -> None:
    # lo and hi sorted independently, so their runs differ: the new lo follows the runs
    # of lo only, the new hi those of hi only
    lo = sorted(a for a, _ in pairs)
    hi = sorted(b for _, b in pairs)
    new_lo, new_hi = renumber_ties(lo, hi)
    assert (new_lo.tolist(), new_hi.tolist()) == bf_renumber(lo, hi)


@pytest.mark.parametrize("lo, hi, free", [
    ([], [], True),
    ([0], [0], True),                   # one player
    ([0, 0, 0], [2, 2, 2], True),       # everybody tied
    ([0, 0], [1, 1], True),
    ([0, 1], [0, 1], False),
    ([0, 0, 2], [1, 1, 2], False),
])
def test_outcome_free(lo: list[int], hi: list[int], free: bool) -> None:
    assert is_outcome_free(lo, hi) is free
    mu = np.linspace(1000.0, 2000.0, len(lo))[::-1]
    assert math.isnan(pair_inversion(mu, lo, hi)) is free
    assert math.isnan(rank_deviation(mu, lo, hi)) is free


# --------------------------------------------------------------------------------------
# Pair inversion and rank deviation


def test_pair_and_rank_hand() -> None:
    # Places: P0 [0,0], P1 and P2 tied [1,2], P3 [3,3]; ratings 1500, 1600, 1400, 1400.
    # 6 pairs. (P1,P2) tied -> correct. (P0,P1): 1500 > 1600? no. (P0,P2): yes.
    # (P0,P3): yes. (P1,P3): 1600 > 1400 yes. (P2,P3): 1400 > 1400? no (equal is wrong).
    # correct = 3 + 1 tied = 4 -> 100 * 4 / 6 = 66.67%.
    mu = [1500.0, 1600.0, 1400.0, 1400.0]
    lo, hi = [0, 1, 1, 3], [0, 2, 2, 3]
    assert pair_inversion(mu, lo, hi) == pytest.approx(400.0 / 6.0, rel=1e-15)
    # equal ratings counted as correct: (P2,P3) too -> 5/6
    assert pair_inversion(mu, lo, hi, equal_mu_correct=True) == pytest.approx(500.0 / 6.0)
    # Stable sort by rating, best first: P1 (0), P0 (1), P2 (2), P3 (3; after P2, whose
    # rating is equal, as in the standings).  Errors: P1 at 0, range [1,2] -> 1;
    # P0 at 1, range [0,0] -> 1; P2 at 2 in [1,2] -> 0; P3 at 3 in [3,3] -> 0.
    # 100 * 2 / ((n - 1) n) = 200 / 12 = 16.67%.
    assert rank_deviation(mu, lo, hi) == pytest.approx(200.0 / 12.0, rel=1e-15)
    # P3 rated above P2 now: order P1, P0, P3 (pos 2, range [3,3] -> 1), P2 (pos 3,
    # range [1,2] -> 1): errors 1 + 1 + 1 + 1 = 4 -> 400 / 12
    assert rank_deviation([1500.0, 1600.0, 1400.0, 1401.0], lo, hi) == pytest.approx(
        400.0 / 12.0)


def test_pair_and_rank_perfect_and_reversed() -> None:
    n = 7
    lo = hi = np.arange(n)
    mu = 2000.0 - 100.0 * np.arange(n)
    assert pair_inversion(mu, lo, hi) == 100.0
    assert rank_deviation(mu, lo, hi) == 0.0
    assert pair_inversion(mu[::-1].copy(), lo, hi) == 0.0
    # reversed: errors |i - (n-1-i)| summed = 24 for n = 7 -> 100 * 24 / 42
    assert rank_deviation(mu[::-1].copy(), lo, hi) == pytest.approx(2400.0 / 42.0)
    # all ratings equal: no pair predicted, positions are standings order
    assert pair_inversion(np.full(n, 1500.0), lo, hi) == 0.0
    assert rank_deviation(np.full(n, 1500.0), lo, hi) == 0.0


@settings(max_examples=300, deadline=None)
@given(rounds(), st.booleans())
def test_pair_inversion_matches_bruteforce(rnd: Any, equal_correct: bool) -> None:
    mu, lo, hi, _ = rnd
    got = pair_inversion(mu, lo, hi, equal_mu_correct=equal_correct)
    assert same(got, bf_pair_inv(mu, lo, hi, equal_correct), 1e-12)


@settings(max_examples=300, deadline=None)
@given(rounds())
def test_rank_deviation_matches_bruteforce(rnd: Any) -> None:
    mu, lo, hi, _ = rnd
    assert same(rank_deviation(mu, lo, hi), bf_rank_dev(mu, lo, hi), 1e-12)


def test_pair_and_rank_larger_random() -> None:
    rng = np.random.default_rng(3)
    n = 400
    lo = np.sort(rng.integers(0, 300, n))
    lo, hi = renumber_ties(lo, lo)  # runs of equal places -> ranges [first, last]
    mu = rng.integers(1000, 1100, n).astype(float)  # many equal ratings
    assert same(pair_inversion(mu, lo, hi), bf_pair_inv(mu, lo, hi), 1e-12)
    assert same(pair_inversion(mu, lo, hi, equal_mu_correct=True),
                bf_pair_inv(mu, lo, hi, True), 1e-12)
    assert same(rank_deviation(mu, lo, hi), bf_rank_dev(mu, lo, hi), 1e-12)


# --------------------------------------------------------------------------------------
# [Batty2026]: rank log errors, L1 and L2


def test_rank_log_errors_hand() -> None:
    # A (2000) first; B and C (1600 each) tied for places 2-3.  Scale 400.
    # A: r = 1; w_B = w_C = 1 / (1 + 10^(400/400)) = 1/11; r_hat = 1 + 2/11 = 13/11.
    # B: r_ties = 1/2, r = 1 + 1 + 1/2 = 5/2; w_A = 1 / (1 + 10^-1) = 10/11, C is tied
    #    (left out); r_hat = 1 + 10/11 + 1/2 = 53/22; e = log2((53/22) / (5/2)) = log2(53/55).
    e = rank_log_errors([2000.0, 1600.0, 1600.0], [0, 1, 1], [0, 2, 2])
    assert e[0] == pytest.approx(math.log2(13 / 11), rel=1e-13)
    assert e[1] == pytest.approx(math.log2(53 / 55), rel=1e-13)
    assert e[2] == pytest.approx(math.log2(53 / 55), rel=1e-13)
    # scale 200: A beats B with odds 100:1 -> w_B = 1/101; r_hat_A = 1 + 2/101 = 103/101
    e = rank_log_errors([2000.0, 1600.0, 1600.0], [0, 1, 1], [0, 2, 2], scale=200.0)
    assert e[0] == pytest.approx(math.log2(103 / 101), rel=1e-13)


def test_rank_log_errors_hand_tied_with_different_ratings() -> None:
    # X (1800) and Y (1400) tied first, Z (1400) last.
    # X: r_ties = 1/2, r = 3/2; only Z is not tied: w_Z = 1/(1 + 10^(400/400)) = 1/11;
    #    r_hat = 1 + 1/11 + 1/2 = 35/22; e = log2(35/33).
    # Y: r = 3/2; w_Z = 1/2 (equal ratings); r_hat = 1 + 1/2 + 1/2 = 2; e = log2(4/3).
    # Z: r = 1 + 2 = 3; w_X = 10/11, w_Y = 1/2; r_hat = 1 + 10/11 + 1/2 = 53/22;
    #    e = log2(53/66).
    e = rank_log_errors([1800.0, 1400.0, 1400.0], [0, 0, 2], [1, 1, 2])
    np.testing.assert_allclose(e, [math.log2(35 / 33), math.log2(4 / 3), math.log2(53 / 66)],
                               rtol=1e-13)


def test_rank_log_errors_no_information() -> None:
    assert rank_log_errors([1500.0], [0], [0]).tolist() == [0.0]
    assert rank_log_errors([], [], []).size == 0
    # everybody tied: r = r_hat = 1 + (n-1)/2 whatever the ratings
    e = rank_log_errors([1000.0, 1500.0, 3000.0, 1200.0], [0] * 4, [3] * 4)
    assert np.all(e == 0.0)


@settings(max_examples=200, deadline=None)
@given(rounds(), st.sampled_from([400.0, 173.7, 1000.0]))
def test_rank_log_errors_matches_bruteforce(rnd: Any, scale: float) -> None:
    mu, lo, hi, _ = rnd
    got = rank_log_errors(mu, lo, hi, scale=scale)
    np.testing.assert_allclose(got, bf_log_errors(mu, lo, scale), rtol=1e-12, atol=1e-13)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-3000.0, 6000.0), min_size=1, max_size=40),
       st.lists(st.floats(-3000.0, 6000.0), min_size=1, max_size=25))
def test_logistic_sums_panels_match_direct(src: list[float], x: list[float]) -> None:
    # the panel interpolation forced on small inputs (points spread over many panels,
    # including one-point panels), against the term-by-term sum
    src_a, x_a = np.array(src), np.array(x)
    c = math.log(10.0) / 400.0
    exact = [sum(1.0 / (1.0 + math.exp((xk - s) * c)) for s in src) for xk in x]
    panels = K.logistic_sums(src_a, x_a, c, K.METHOD_CHEB)
    direct = K.logistic_sums(src_a, x_a, c, K.METHOD_DIRECT)
    np.testing.assert_allclose(direct, exact, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(panels, exact, rtol=1e-11, atol=1e-13)


def test_rank_log_errors_large_round_against_exact_sum() -> None:
    # a Codeforces-like round with a 700-player tie at the bottom (its own sum is then
    # interpolated too): the fast path against the exact O(n^2) sums, < 1e-9 relative
    rng = np.random.default_rng(7)
    n = 3000
    mu = np.sort(np.round(rng.normal(1500.0, 400.0, n)))[::-1].copy()
    rng.shuffle(mu[:2300])
    lo = np.arange(n)
    lo[2300:] = 2300
    lo[100:140] = 100
    c = math.log(10.0) / 400.0
    exact_sums = K.logistic_sums_direct(mu, mu, c)
    fast_sums = K.logistic_sums(mu, mu, c, K.METHOD_AUTO)
    assert np.max(np.abs(fast_sums / exact_sums - 1.0)) < 1e-9
    fast = K.rank_log_errors_kernel(mu, lo, c, K.METHOD_AUTO)
    exact = K.rank_log_errors_kernel(mu, lo, c, K.METHOD_DIRECT)
    assert np.max(np.abs(fast - exact)) < 1e-9
    # and the exact path against the transcription of Eq. 4 on a sample of players
    ref = bf_log_errors(mu[::10].tolist(), lo[::10].tolist())
    sub = rank_log_errors(mu[::10], lo[::10], lo[::10])
    np.testing.assert_allclose(sub, ref, rtol=1e-11, atol=1e-12)


# --------------------------------------------------------------------------------------
# Kendall's tau and Spearman's rho


def test_kendall_spearman_hand() -> None:
    # places lo = [0, 1, 1, 3] (y = -lo), ratings [10, 30, 20, 20].
    # Pairs: (0,1), (0,2), (0,3) discordant (lower rating, better place); (1,2) tied in y;
    # (1,3) concordant; (2,3) tied in x.  C = 1, D = 3, n0 = 6, one tie in each:
    # tau_b = (1 - 3) / sqrt((6 - 1)(6 - 1)) = -0.4.
    mu, lo = [10.0, 30.0, 20.0, 20.0], [0, 1, 1, 3]
    assert kendall_tau(mu, lo) == pytest.approx(-0.4, abs=1e-15)
    # average ranks: x -> [1, 4, 2.5, 2.5], y = -lo -> [4, 2.5, 2.5, 1]; deviations from
    # 2.5: [-1.5, 1.5, 0, 0] and [1.5, 0, 0, -1.5]: rho = -2.25 / sqrt(4.5 * 4.5) = -0.5.
    assert spearman_rho(mu, lo) == pytest.approx(-0.5, abs=1e-15)
    # perfect prediction is +1, ties or not
    assert kendall_tau([3.0, 2.0, 1.0], [0, 1, 2]) == pytest.approx(1.0)
    assert spearman_rho([3.0, 2.0, 1.0], [0, 1, 2]) == pytest.approx(1.0)
    assert kendall_tau([2.0, 1.0, 1.0], [0, 1, 1]) == pytest.approx(1.0)
    # undefined: constant ratings, constant places, fewer than 2 players
    for m, l_ in (([5.0, 5.0], [0, 1]), ([1.0, 2.0], [0, 0]), ([1.0], [0]), ([], [])):
        assert math.isnan(kendall_tau(m, l_))
        assert math.isnan(spearman_rho(m, l_))


@settings(max_examples=200, deadline=None)
@given(rounds(max_groups=15))
def test_kendall_spearman_match_scipy_and_bruteforce(rnd: Any) -> None:
    mu, lo, _hi, _ = rnd
    neg = [-v for v in lo]
    kt, sr = kendall_tau(mu, lo), spearman_rho(mu, lo)
    assert same(kt, bf_kendall(mu, neg), 1e-12)
    assert same(sr, bf_spearman(mu, neg), 1e-12)
    if not math.isnan(kt):
        assert kt == pytest.approx(scipy.stats.kendalltau(mu, neg).statistic, abs=1e-12)
        assert sr == pytest.approx(scipy.stats.spearmanr(mu, neg).statistic, abs=1e-12)


def test_kendall_spearman_large_vs_scipy() -> None:
    rng = np.random.default_rng(11)
    n = 5000
    lo = np.sort(rng.integers(0, 3000, n))
    mu = np.round(-lo + rng.normal(0.0, 600.0, n), -1)  # correlated, with ties
    neg = -lo
    assert kendall_tau(mu, lo) == pytest.approx(scipy.stats.kendalltau(mu, neg).statistic,
                                                abs=1e-12)
    assert spearman_rho(mu, lo) == pytest.approx(scipy.stats.spearmanr(mu, neg).statistic,
                                                 abs=1e-12)


# --------------------------------------------------------------------------------------
# The accumulator


def test_accumulator_weighting_hand() -> None:
    acc = MetricAccumulator()
    # round 1: the 4-player case above, everybody experienced: 200/3 % and 50/3 %
    r1 = acc.add_round([1500.0, 1600.0, 1400.0, 1400.0], [0, 1, 1, 3], [0, 2, 2, 3],
                       [5, 9, 5, 6])
    assert r1["pair_inv"] == pytest.approx(200.0 / 3.0)
    assert r1["rank_dev"] == pytest.approx(50.0 / 3.0)
    # round 2: two experienced players, predicted: 100 % and 0 %
    r2 = acc.add_round([1700.0, 1500.0], [0, 1], [0, 1], [5, 5])
    assert (r2["pair_inv"], r2["rank_dev"]) == (100.0, 0.0)
    # round 3: everybody tied: outcome free, counts for nothing
    r3 = acc.add_round([1500.0, 1200.0, 1800.0], [0, 0, 0], [2, 2, 2], [5, 5, 5])
    assert math.isnan(r3["pair_inv"]) and math.isnan(r3["rank_dev"])
    s = acc.summary()
    # weighted by players: (4 * 200/3 + 2 * 100) / 6 = 700/9, not the plain mean 83.3
    assert s["pair_inv"] == pytest.approx(700.0 / 9.0, rel=1e-14)
    assert s["rank_dev"] == pytest.approx((4 * 50.0 / 3.0 + 0.0) / 6.0, rel=1e-14)
    assert (s["rounds"], s["player_rounds"]) == (2, 6)
    assert set(s) == set(SUMMARY_KEYS)
    # Kendall: weighted by returning players vs the plain mean over defined rounds
    taus = [r["kendall_tau"] for r in (r1, r2, r3)]
    assert math.isnan(taus[2])
    assert s["kendall_tau"] == pytest.approx((4 * taus[0] + 2 * taus[1]) / 6)
    assert s["kendall_tau_mean"] == pytest.approx((taus[0] + taus[1]) / 2)
    # L1/L2 over all 9 player-rounds (round 3 contributes zeros)
    e = np.concatenate([bf_log_errors([1500.0, 1600.0, 1400.0, 1400.0], [0, 1, 1, 3]),
                        bf_log_errors([1700.0, 1500.0], [0, 1]), [0.0, 0.0, 0.0]])
    assert s["l1"] == pytest.approx(np.mean(np.abs(e)), rel=1e-12)
    assert s["l2"] == pytest.approx(math.sqrt(np.mean(e * e)), rel=1e-12)


def test_accumulator_filters_debutants_and_inexperienced() -> None:
    acc = MetricAccumulator(min_history=2)
    mu = [1500.0, 1900.0, 1600.0, 1400.0, 1300.0]
    lo = hi = [0, 1, 2, 3, 4]
    r = acc.add_round(mu, lo, hi, [0, 1, 2, 3, 0])  # a debutant first and last
    assert (r["n"], r["n_returning"], r["n_experienced"]) == (5, 3, 2)
    # experienced: players 2, 3 (1600 above 1400): predicted
    assert r["pair_inv"] == 100.0 and r["rank_dev"] == 0.0
    # returning: 1900, 1600, 1400 in places 0, 1, 2: predicted
    assert r["pair_inv_all"] == 100.0 and r["kendall_tau"] == pytest.approx(1.0)
    # L1 includes the debutants (the 1500 debutant won above a 1900 player)
    assert r["l1"] == pytest.approx(np.mean(np.abs(bf_log_errors(mu, lo))), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(rounds(max_groups=10), min_size=1, max_size=5), st.integers(1, 3),
       st.integers(1, 6))
def test_accumulator_matches_bruteforce(rlist: Any, min_history: int, top_k: int) -> None:
    acc = MetricAccumulator(min_history=min_history, top_k=top_k)
    sums: dict[str, list[float]] = {k: [0.0, 0.0] for k in ROUND_KEYS[:6]}
    errs: list[float] = []
    corr: dict[str, list[tuple[int, float]]] = {"kendall_tau": [], "spearman_rho": []}
    for t, (mu, lo, hi, n_prev) in enumerate(rlist):
        got = acc.add_round(mu, lo, hi, n_prev, index=100 + t)
        exp_set = _subset(mu, lo, hi, [p >= min_history for p in n_prev])
        ret = _subset(mu, lo, hi, [p >= 1 for p in n_prev])
        n_top = sum(1 for v in ret[1] if v < top_k)
        top = (ret[0][:n_top], ret[1][:n_top], ret[2][:n_top])
        for suffix, sub in (("", exp_set), ("_all", ret), ("_top", top)):
            for name, fn in (("pair_inv", bf_pair_inv), ("rank_dev", bf_rank_dev)):
                v = fn(*sub)
                assert same(got[name + suffix], v, 1e-12)
                if not math.isnan(v):
                    sums[name + suffix][0] += len(sub[0])
                    sums[name + suffix][1] += len(sub[0]) * v
        assert got["n_top"] == n_top
        errs += bf_log_errors(mu, lo)
        neg = [-v for v in ret[1]]
        for name, fn in (("kendall_tau", bf_kendall), ("spearman_rho", bf_spearman)):
            v = fn(ret[0], neg)
            assert same(got[name], v, 1e-12)
            if not math.isnan(v):
                corr[name].append((len(neg), v))
    s = acc.summary()
    for k, (w, wv) in sums.items():
        assert same(s[k], wv / w if w else math.nan, 1e-12)
    assert s["player_rounds"] == sums["pair_inv"][0]
    if errs:
        assert same(s["l1"], float(np.mean(np.abs(errs))), 1e-11)
        assert same(s["l2"], math.sqrt(float(np.mean(np.square(errs)))), 1e-11)
    for k, vals in corr.items():
        w = sum(n for n, _ in vals)
        assert same(s[k], sum(n * v for n, v in vals) / w if w else math.nan, 1e-12)
        assert same(s[k + "_mean"], sum(v for _, v in vals) / len(vals) if vals else math.nan,
                    1e-12)
    df = acc.per_round()
    assert df["index"].tolist() == [100 + t for t in range(len(rlist))]


def test_top_k_tie_spanning_position_100() -> None:
    # 150 returning players; among them places are distinct except a 5-way tie (returning
    # players 98..102), so "renumbered lo < 100" keeps 98 + 5 = 103 players.  Debutants
    # (every 5th place, one inside the tie) shift the original places and are dropped.
    rng = np.random.default_rng(5)
    groups: list[list[int]] = []  # tie blocks in standings order, as n_prev values
    k = 0
    while k < 150:
        if k % 5 == 0:
            groups.append([0])  # a debutant alone
        if k == 98:
            groups.append([int(v) for v in rng.integers(1, 9, 5)] + [0])
            k += 5
        else:
            groups.append([int(rng.integers(1, 9))])
            k += 1
    lo, hi, prev = [], [], []
    for g in groups:
        lo += [len(prev)] * len(g)
        hi += [len(prev) + len(g) - 1] * len(g)
        prev += g
    mu = rng.normal(1500.0, 300.0, len(prev))
    r = MetricAccumulator(top_k=100).add_round(mu, lo, hi, prev)
    sub_mu, sub_lo, sub_hi = _subset(mu.tolist(), lo, hi, [p >= 1 for p in prev])
    assert len(sub_mu) == 150
    assert sub_lo[96:104] == [96, 97, 98, 98, 98, 98, 98, 103]
    assert sub_hi[96:104] == [96, 97, 102, 102, 102, 102, 102, 103]
    assert r["n_top"] == 103
    top = (sub_mu[:103], sub_lo[:103], sub_hi[:103])
    assert r["pair_inv_top"] == pytest.approx(bf_pair_inv(*top), rel=1e-13)
    assert r["rank_dev_top"] == pytest.approx(bf_rank_dev(*top), rel=1e-13)
    # a top_k falling inside the tie keeps the whole tie too
    assert MetricAccumulator(top_k=99).add_round(mu, lo, hi, prev)["n_top"] == 103
    assert MetricAccumulator(top_k=98).add_round(mu, lo, hi, prev)["n_top"] == 98


def test_extended_false_is_the_same_subset_of_values() -> None:
    rng = np.random.default_rng(2)
    full, fast = MetricAccumulator(), MetricAccumulator(extended=False)
    for _ in range(4):
        n = 300
        lo = np.sort(rng.integers(0, 250, n))
        lo, hi = renumber_ties(lo, lo)
        mu = rng.normal(1500.0, 300.0, n)
        prev = rng.integers(0, 12, n)
        a = full.add_round(mu, lo, hi, prev)
        b = fast.add_round(mu, lo, hi, prev)
        assert (a["pair_inv"], a["rank_dev"]) == (b["pair_inv"], b["rank_dev"])
        assert all(math.isnan(b[k]) for k in ROUND_KEYS[2:])
    sf, sq = full.summary(), fast.summary()
    for k in ("pair_inv", "rank_dev", "rounds", "player_rounds"):
        assert sf[k] == sq[k]
    assert all(math.isnan(sq[k]) for k in SUMMARY_KEYS[2:12])


def test_merge_equals_one_accumulator_and_per_round() -> None:
    rng = np.random.default_rng(4)
    data = []
    for _ in range(6):
        n = int(rng.integers(2, 60))
        lo = np.sort(rng.integers(0, n, n))
        lo, hi = renumber_ties(lo, lo)
        data.append((rng.normal(1500.0, 300.0, n), lo, hi, rng.integers(0, 9, n)))
    whole, a, b = MetricAccumulator(), MetricAccumulator(), MetricAccumulator()
    for t, rnd in enumerate(data):
        whole.add_round(*rnd, index=t)
        (a if t < 4 else b).add_round(*rnd, index=t)
    assert a.merge(b) is a
    sw, sa = whole.summary(), a.summary()
    for k in SUMMARY_KEYS:
        assert same(sa[k], sw[k], 1e-13), k
    df = a.per_round()
    assert len(df) == len(a) == 6
    assert list(df.columns) == ["index", *COUNT_KEYS, *ROUND_KEYS]
    assert df["index"].tolist() == list(range(6))
    assert df["pair_inv"].tolist() == pytest.approx(whole.per_round()["pair_inv"].tolist(),
                                                    nan_ok=True)
    with pytest.raises(ValueError, match="different settings"):
        a.merge(MetricAccumulator(min_history=3))
    # default index: rounds added so far
    c = MetricAccumulator()
    c.add_round(*data[0])
    c.add_round(*data[1])
    assert c.per_round()["index"].tolist() == [0, 1]


def test_empty_accumulator_and_validation() -> None:
    s = MetricAccumulator().summary()
    assert s["rounds"] == 0 and s["player_rounds"] == 0
    assert all(math.isnan(s[k]) for k in SUMMARY_KEYS[:12])
    acc = MetricAccumulator()
    r = acc.add_round([], [], [], [])
    assert all(math.isnan(r[k]) for k in ROUND_KEYS) and r["n"] == 0
    with pytest.raises(ValueError, match="non-decreasing"):
        acc.add_round([1.0, 2.0], [1, 0], [1, 0], [5, 5])
    with pytest.raises(ValueError, match="hi"):
        acc.add_round([1.0, 2.0], [0, 1], [0, 0], [5, 5])
    with pytest.raises(ValueError, match="finite"):
        pair_inversion([1.0, math.nan], [0, 1], [0, 1])
    with pytest.raises(ValueError, match="n_prev"):
        acc.add_round([1.0, 2.0], [0, 1], [0, 1], [5])
    with pytest.raises(ValueError):
        MetricAccumulator(min_history=0)


def test_speed_codeforces_sized_round() -> None:
    # guards against an O(n^2) regression: the measured times are ~2 ms and ~20 ms
    rng = np.random.default_rng(0)
    n = 18_743
    lo = np.arange(n)
    lo[5000:5040] = 5000
    lo[12000:12300] = 12000
    lo, hi = renumber_ties(lo, lo)
    mu = np.round(rng.normal(1500.0, 350.0, n))
    prev = rng.integers(0, 30, n)
    fast, full = MetricAccumulator(extended=False), MetricAccumulator()
    fast.add_round(mu, lo, hi, prev)
    full.add_round(mu, lo, hi, prev)
    t0 = time.perf_counter()
    fast.add_round(mu, lo, hi, prev)
    t1 = time.perf_counter()
    full.add_round(mu, lo, hi, prev)
    t2 = time.perf_counter()
    assert t1 - t0 < 0.1
    assert t2 - t1 < 0.5


def test_a_cold_metrics_cache_is_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first ``podium eval`` whose metric kernels are neither cached nor prebuilt says
    that it compiles them (they are prebuilt only on request), and a warm one is silent."""
    import io

    import podium.core.kernel_cache as kc
    from podium.evaluation.metrics import announce_compile

    out = io.StringIO()
    monkeypatch.setattr(kc, "is_cached", lambda d, prebuilt=True: False)
    assert announce_compile(out)
    assert out.getvalue().startswith("compiling kernels for the evaluation's metrics, once: ~")
    monkeypatch.setattr(kc, "is_cached", lambda d, prebuilt=True: True)
    out = io.StringIO()
    assert not announce_compile(out)
    assert out.getvalue() == ""
