"""Identical opponent terms (Theorem 3.2 sums over every opponent; a round of newcomers
is one term N times over).

* Merged evaluation -- each distinct term evaluated once, its value added for every
  copy -- gives the very numbers of evaluating every copy, bit for bit: the node
  sweep of the panels and the direct Newton solve, on random rounds with repeats.
* The counted solve of massive rounds (each distinct term times how many copies placed
  better, tied and worse) against independent computations: the closed form of a
  round of one term, and SciPy's ``brentq`` on the equation written out in NumPy.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from podium.core.numerics import (
    COUNTED_FROM,
    GAUSSIAN,
    LOGISTIC,
    SOLVER_BOUNDS,
    STATUS_OK,
    TANH_MULTIPLIER,
    OpponentTerms,
    TieGroups,
    counted_terms,
    distinct_rows,
    merge_identical,
    model_terms,
    node_sweep,
    performance_zeros,
    solve_direct,
    solve_merged,
    unmerged,
)


def _groups(lo: np.ndarray) -> TieGroups:
    starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]])
    return TieGroups(starts.astype(np.int64), np.r_[starts[1:], lo.size].astype(np.int64))


def _terms(kind: int, mu: np.ndarray, delta: np.ndarray) -> OpponentTerms:
    if kind == LOGISTIC:
        w = TANH_MULTIPLIER / delta
        return OpponentTerms(mu, 0.5 * w, w)
    return OpponentTerms(mu, delta, delta)


@nb.njit
def _sweep(kind, xs, terms, groups, split, wsum, g0, g1):  # type: ignore[no-untyped-def]
    q = np.empty((xs.size, g1 - g0))
    v = np.empty((xs.size, g1 - g0))
    if kind == LOGISTIC:  # the kernels take the kind as a literal
        node_sweep(LOGISTIC, xs, terms, groups, split, wsum, g0, g1, q, v)
    else:
        node_sweep(GAUSSIAN, xs, terms, groups, split, wsum, g0, g1, q, v)
    return q


@nb.njit
def _direct(kind, terms, groups, g, split):  # type: ignore[no-untyped-def]
    if kind == LOGISTIC:
        return solve_direct(LOGISTIC, terms, groups, g, split)
    return solve_direct(GAUSSIAN, terms, groups, g, split)


@nb.njit
def _merged(kind, terms, groups, g, split):  # type: ignore[no-untyped-def]
    if kind == LOGISTIC:
        return solve_merged(LOGISTIC, terms, groups, g, split)
    return solve_merged(GAUSSIAN, terms, groups, g, split)


@nb.njit
def _counted(kind, x, mu, pa, pb, n_less, n_tied, n_more, split):  # type: ignore[no-untyped-def]
    if kind == LOGISTIC:
        return counted_terms(LOGISTIC, x, mu, pa, pb, n_less, n_tied, n_more, split)
    return counted_terms(GAUSSIAN, x, mu, pa, pb, n_less, n_tied, n_more, split)


@nb.njit
def _model(kind, x, mu, pa, pb, split):  # type: ignore[no-untyped-def]
    if kind == LOGISTIC:
        return model_terms(LOGISTIC, x, mu, pa, pb, split)
    return model_terms(GAUSSIAN, x, mu, pa, pb, split)


def test_distinct_rows_compares_bits() -> None:
    nan = float("nan")
    a = np.array([1.0, 2.0, 1.0, -0.0, 0.0, nan, nan, 1.0, 1.0])
    b = np.array([3.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0, 3.0, 4.0])
    c = np.zeros(a.size)
    of, first = distinct_rows(a, b, c)
    keys = [a[j].tobytes() + b[j].tobytes() + c[j].tobytes() for j in range(a.size)]
    seen: dict[bytes, int] = {}
    for k in keys:
        seen.setdefault(k, len(seen))
    assert of.tolist() == [seen[k] for k in keys]
    assert first.tolist() == [keys.index(k) for k in seen]
    # -0.0 and 0.0 stay apart; the two NaNs of equal bits are one row
    assert of[3] != of[4] and of[5] == of[6]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(30, 300),
       kind=st.sampled_from([LOGISTIC, GAUSSIAN]),
       split=st.booleans(), tie=st.sampled_from([0.0, 0.5]))
def test_merged_terms_give_the_same_numbers_bit_for_bit(seed, n, kind, split, tie) -> None:
    rng = np.random.default_rng(seed)
    # most players share one of three ratings (newcomers, say); the rest are their own
    pool_mu = np.array([1500.0, 1500.0, 1720.5])
    pool_delta = np.array([402.7, 250.0, 402.7])
    pick = rng.integers(0, 3, n)
    mu = pool_mu[pick]
    delta = pool_delta[pick]
    own = rng.random(n) < 0.2
    mu[own] = rng.normal(1500, 300, own.sum())
    delta[own] = rng.uniform(200, 400, own.sum())
    lo = np.arange(n)
    for i in range(1, n):
        if rng.random() < tie:
            lo[i] = lo[i - 1]
    terms, groups = _terms(kind, mu, delta), _groups(lo)
    merged = merge_identical(terms)
    assert merged.of.size == n and merged.terms.mu.size < n  # merged
    G = groups.start.size
    wsum = np.array([terms.pb[a:b].sum() for a, b in zip(groups.start, groups.end, strict=True)])
    xs = np.sort(rng.uniform(0, 3000, 7))
    g0 = int(rng.integers(0, G))
    g1 = int(rng.integers(g0 + 1, G + 1))
    a = _sweep(kind, xs, merged, groups, split, wsum, g0, g1)
    b = _sweep(kind, xs, unmerged(terms), groups, split, wsum, g0, g1)
    assert np.array_equal(a.view(np.int64), b.view(np.int64))
    for g in {0, G // 2, G - 1}:
        assert _merged(kind, merged, groups, g, split) == _direct(kind, terms, groups, g, split)


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_counted_solve_of_a_round_of_newcomers_is_the_closed_form(split: bool, ties: bool) -> None:
    """All N terms alike: ``tanh((x - mu) w_arg) = (n_more - n_less) / (n_less + n_more +
    c n_tied)`` (c = 2, or 1 with split ties), so ``x = mu + atanh(.) / w_arg``."""
    n = COUNTED_FROM
    rng = np.random.default_rng(1)
    score = -np.sort(rng.normal(0, 1, n))  # minus the scores, best first
    if ties:
        score = np.round(score, 1)
    lo = np.searchsorted(score, score)  # a tied player's first place
    mu = np.full(n, 1500.0)
    delta = np.full(n, math.hypot(math.hypot(350.0, 35.78), 195.96))
    groups = _groups(lo)
    perf, status, n_direct = performance_zeros(LOGISTIC, _terms(LOGISTIC, mu, delta), groups,
                                               split, float(delta[0]), 24)
    assert n_direct == groups.start.size  # every group solved over the counted term
    assert np.all(status == STATUS_OK)
    below = groups.start.astype(float)
    size = (groups.end - groups.start).astype(float)
    above = n - below - size
    c = 1.0 if split else 2.0
    w_arg = 0.5 * TANH_MULTIPLIER / delta[0]
    exact = 1500.0 + np.arctanh((above - below) / (below + above + c * size)) / w_arg
    np.testing.assert_allclose(perf, exact, rtol=0, atol=1e-9)
    assert np.all(np.diff(perf) < 0)  # Theorem 5.2


def _written_out(x: float, kind: int, mu: np.ndarray, delta: np.ndarray, lo: np.ndarray,
                 g_lo: int, split: bool) -> float:
    """``Q_g(x)`` term by term in NumPy (Theorem 3.2): every opponent, no merging."""
    better, tied = lo < g_lo, lo == g_lo
    worse = ~(better | tied)
    if kind == LOGISTIC:
        w = TANH_MULTIPLIER / delta
        val = -w * np.tanh((x - mu) * w / 2)
        lv, wv, dv = val - w, val + w, (val if split else 2 * val)
    else:
        z = (x - mu) / delta
        pdf = norm.pdf(z) / delta
        lv = pdf / -norm.sf(z)
        wv = pdf / norm.cdf(z)
        dv = 0.5 * (wv + lv) if split else -z / delta
    return float(np.sum(np.where(better, lv, 0)) + np.sum(np.where(tied, dv, 0))
                 + np.sum(np.where(worse, wv, 0)))


@pytest.mark.parametrize("kind", [LOGISTIC, GAUSSIAN])
def test_counted_solve_of_three_ratings_matches_brentq(kind: int) -> None:
    n = COUNTED_FROM
    rng = np.random.default_rng(2)
    pick = rng.integers(0, 3, n)
    mu = np.array([1500.0, 1650.0, 1380.0])[pick]
    delta = np.array([402.7, 300.0, 350.0])[pick]
    lo = np.sort(rng.integers(0, 5000, n))
    groups = _groups(lo)
    perf, status, n_direct = performance_zeros(kind, _terms(kind, mu, delta), groups, False,
                                               float(delta.min()), 24)
    G = groups.start.size
    assert n_direct == G and np.all(status == STATUS_OK)
    for g in (0, 1, G // 3, G // 2, G - 2, G - 1):
        g_lo = lo[groups.start[g]]
        root = brentq(_written_out, *SOLVER_BOUNDS, args=(kind, mu, delta, lo, g_lo, False),
                      xtol=1e-12)
        assert perf[g] == pytest.approx(root, abs=1e-8)


def test_panels_below_the_counted_size() -> None:
    """One player fewer than COUNTED_FROM: the panels, as before (the counted solve
    is for massive rounds only); the two agree to rounding."""
    n = COUNTED_FROM - 1
    lo = np.arange(n) // 50
    mu = np.full(n, 1500.0)
    delta = np.full(n, 402.7)
    groups = _groups(lo)
    perf, _, n_direct = performance_zeros(LOGISTIC, _terms(LOGISTIC, mu, delta), groups,
                                          False, 402.7, 24)
    assert n_direct < 4  # placed by the panels
    below = groups.start.astype(float)
    size = (groups.end - groups.start).astype(float)
    above = n - below - size
    w_arg = 0.5 * TANH_MULTIPLIER / 402.7
    exact = 1500.0 + np.arctanh((above - below) / (below + above + 2 * size)) / w_arg
    np.testing.assert_allclose(perf, exact, rtol=0, atol=1e-6)


@pytest.mark.parametrize("kind", [LOGISTIC, GAUSSIAN])
@pytest.mark.parametrize("split", [False, True])
def test_counted_terms_are_the_model_terms_times_their_counts(kind: int, split: bool) -> None:
    mu, delta = 1500.0, 402.7
    pa, pb = (0.5 * TANH_MULTIPLIER / delta, TANH_MULTIPLIER / delta) if kind == LOGISTIC \
        else (delta, delta)
    for x in (-900.0, 1200.0, 1500.0, 1733.3, 3900.0):
        for n_less, n_tied, n_more in ((0.0, 1.0, 10.0), (7.0, 3.0, 5.0), (12.0, 1.0, 0.0)):
            lv, lp, wv, wp, dv, dp = _model(kind, x, mu, pa, pb, split)
            q, qp = _counted(kind, x, mu, pa, pb, n_less, n_tied, n_more, split)
            assert q == pytest.approx(n_less * lv + n_tied * dv + n_more * wv, rel=1e-12,
                                      abs=1e-15)
            assert qp == pytest.approx(n_less * lp + n_tied * dp + n_more * wp, rel=1e-12,
                                       abs=1e-300)


def test_counted_logistic_terms_keep_their_digits_in_a_tail() -> None:
    """Far above the field a million tiny wins balance one loss: the sum must still
    be exact to rounding (``v = w (1 - tanh z)`` would cancel to nothing)."""
    w = TANH_MULTIPLIER / 402.7
    x, n_more = 5200.0, 1e6
    q, _ = _counted(LOGISTIC, x, 1500.0, 0.5 * w, w, 1.0, 1.0, n_more, False)
    z = (x - 1500.0) * 0.5 * w
    e = math.exp(-2 * z)
    exact = w * (n_more * 2 * e / (1 + e) - 2 / (1 + e) - 2 * (1 - e) / (1 + e))
    assert q == pytest.approx(exact, rel=1e-12)


PROBE = """\
import json
import numpy as np
from podium.core.numerics import LOGISTIC, OpponentTerms, TieGroups, performance
n = {n}
lo = np.arange(n) // 50
starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]]).astype(np.int64)
terms = OpponentTerms(np.full(n, 1500.0), np.full(n, 0.0045), np.full(n, 0.009))
performance.performance_zeros(LOGISTIC, terms, TieGroups(starts, np.r_[starts[1:], n]),
                              False, 402.7, 24)
print(json.dumps({{name: len(getattr(performance, name).signatures)
                  for name in ("_logistic_counted", "_counted_zeros", "_logistic_zeros")}}))
"""


@pytest.mark.parametrize("n", [COUNTED_FROM - 1, COUNTED_FROM])
def test_only_a_massive_round_brings_the_counted_solve(n: int) -> None:
    """In a fresh process, a round of newcomers below :data:`COUNTED_FROM` players
    neither compiles nor loads the counted solve (the kernels of the README's job do not
    carry it: seconds of compilation saved at install); a round of ``COUNTED_FROM``
    takes it and not the panels' kernel."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", PROBE.format(n=n)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    massive = n >= COUNTED_FROM
    assert loaded["_logistic_counted"] == int(massive)
    assert loaded["_logistic_zeros"] == int(not massive)
    if not massive:  # (a kernel loaded from the cache does not load those it calls)
        assert loaded["_counted_zeros"] == 0
