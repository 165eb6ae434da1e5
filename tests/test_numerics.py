"""Numerics: term functions, the safeguarded Newton solver, and the panel evaluation
of the performance equation checked against direct all-opponent solves and SciPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from podium.core.numerics import (
    GAUSSIAN,
    LOGISTIC,
    SOLVER_BOUNDS,
    STATUS_AT_BOUND,
    STATUS_OK,
    TANH_MULTIPLIER,
    OpponentTerms,
    TieGroups,
    fast_tanh,
    normal_cdf,
    performance_zeros,
    solve_robust_average,
    tanh_sech2,
)


@pytest.mark.parametrize(
    "z", [-400.0, -40.0, -19.5, -1.0, -1e-9, 0.0, 1e-12, 0.3, 5.0, 25.0, 400.0]
)
def test_tanh_sech2_matches_math(z: float) -> None:
    t, s2 = tanh_sech2(z)
    assert abs(t - math.tanh(z)) <= 2e-16
    assert abs(fast_tanh(z) - math.tanh(z)) <= 2e-16
    expected = 1.0 / math.cosh(z) ** 2 if abs(z) < 350 else 0.0
    assert s2 == pytest.approx(expected, rel=1e-12, abs=1e-300)
    # the derivative never rounds to zero where cosh^-2 does not
    if abs(z) < 300:
        assert s2 > 0.0


def test_normal_cdf_tails() -> None:
    for z in (-30.0, -8.0, -1.0, 0.0, 2.0, 8.0):
        assert normal_cdf(z) == pytest.approx(norm.cdf(z), rel=1e-13)


def _direct_q(x, mu, delta, lo, i, split=False):
    """Q_i(x) for the logistic model written out term by term (Theorem 3.2)."""
    w = TANH_MULTIPLIER / delta
    val = -w * np.tanh((x - mu) * w / 2)
    better = lo < lo[i]
    worse = lo > lo[i]
    tie = ~(better | worse)
    return float(np.sum(np.where(better, val - w, 0) + np.where(worse, val + w, 0)
                        + np.where(tie, val if split else 2 * val, 0)))


def _groups(lo):
    starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]])
    return starts, np.r_[starts[1:], lo.size]


def _random_round(rng, n, tie_frac):
    mu = np.sort(rng.normal(1500, 450, n))[::-1].copy()
    mu[: min(3, n)] += rng.uniform(0, 1500, min(3, n))  # a few far outliers
    delta = np.sqrt(rng.uniform(80, 350, n) ** 2 + 196.0**2)
    lo = np.arange(n)
    for i in range(1, n):
        if rng.random() < tie_frac:
            lo[i] = lo[i - 1]
    return mu, delta, lo


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 400), tie=st.sampled_from([0.0, 0.3, 0.8]),
       kind=st.sampled_from([LOGISTIC, GAUSSIAN]), split=st.booleans())
def test_panel_method_agrees_with_direct_solves(seed, n, tie, kind, split) -> None:
    rng = np.random.default_rng(seed)
    mu, delta, lo = _random_round(rng, n, tie)
    gs, ge = _groups(lo)
    if kind == LOGISTIC:
        w = TANH_MULTIPLIER / delta
        pa, pb = w / 2, w
    else:
        pa = pb = delta
    terms, groups = OpponentTerms(mu, pa, pb), TieGroups(gs, ge)
    direct, st_d, nd = performance_zeros(kind, terms, groups, split, delta.min(), 10**9)
    panel, st_p, nf = performance_zeros(kind, terms, groups, split, delta.min(), 2)
    assert nd == gs.size
    assert np.all(st_d == STATUS_OK) and np.all(st_p == STATUS_OK)
    np.testing.assert_allclose(panel, direct, rtol=0, atol=1e-8)
    # Theorem 5.2: strictly better place -> strictly higher performance
    assert np.all(np.diff(direct) < 0)
    if gs.size > 8:
        assert nf <= 2  # panels place (almost) every group


def test_performance_is_zero_of_written_out_q() -> None:
    rng = np.random.default_rng(7)
    mu, delta, lo = _random_round(rng, 300, 0.4)
    gs, ge = _groups(lo)
    w = TANH_MULTIPLIER / delta
    perf, _, _ = performance_zeros(
        LOGISTIC, OpponentTerms(mu, w / 2, w), TieGroups(gs, ge), False, delta.min(), 2
    )
    for g in range(0, gs.size, 17):
        i = gs[g]
        root = brentq(lambda x, i=i: _direct_q(x, mu, delta, lo, i), *SOLVER_BOUNDS, xtol=1e-12)
        assert perf[g] == pytest.approx(root, abs=1e-7)


def test_zero_outside_bracket_reports_bound() -> None:
    # Every term centred at 20000: the zeros lie near 20000, outside (-6000, 9000).
    # The reference returns the bound; so do we, and we say so.
    mu = np.array([20000.0, 20000.0, 20000.0])
    delta = np.array([200.0, 200.0, 200.0])
    gs, ge = np.array([0, 1, 2]), np.array([1, 2, 3])
    w = TANH_MULTIPLIER / delta
    perf, status, _ = performance_zeros(
        LOGISTIC, OpponentTerms(mu, w / 2, w), TieGroups(gs, ge), False, 200.0, 10**9
    )
    assert np.all(perf == pytest.approx(SOLVER_BOUNDS[1]))
    assert np.all(status == STATUS_AT_BOUND)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), k=st.integers(0, 60))
def test_robust_average_matches_brentq(seed, k) -> None:
    rng = np.random.default_rng(seed)
    p = rng.normal(1500, 300, k)
    beta = rng.uniform(150, 400, k)
    w_out = TANH_MULTIPLIER / beta * rng.uniform(0.01, 1.0, k)
    w_arg = TANH_MULTIPLIER / beta / 2
    mu0, w0 = rng.normal(1500, 200), 1 / rng.uniform(60, 400) ** 2

    def f(x):
        return w0 * (x - mu0) + np.sum(w_out * np.tanh((x - p) * w_arg))

    x, status = solve_robust_average(p, w_arg, w_out, -mu0 * w0, w0, 1500.0)
    assert status == STATUS_OK
    assert x == pytest.approx(brentq(f, -6000, 9000, xtol=1e-12), abs=1e-8)


def test_normal_hazard_against_scipy_and_far_tails() -> None:
    """phi(t)/(1 - Phi(t)) at every t: scipy where the quotient is representable, the
    asymptotic t + 1/t - 2/t^3 far out (where phi and 1 - Phi both underflow)."""
    from scipy.stats import norm

    from podium.core.numerics import normal_hazard

    for t in np.linspace(-30.0, 30.0, 241):
        exact = np.exp(norm.logpdf(t) - norm.logsf(t))
        assert normal_hazard(float(t)) == pytest.approx(exact, rel=1e-12, abs=1e-300)
    for t in (35.0, 36.0, 50.0, 1e3, 1e6):  # x = t/sqrt2 beyond 25: the series branch
        # asymptotic expansion of the hazard, terms up to 1/t^9 (all < 1e-13 here)
        asym = t + 1 / t - 2 / t**3 + 10 / t**5 - 74 / t**7 + 706 / t**9
        assert normal_hazard(t) == pytest.approx(asym, rel=1e-12)
    assert normal_hazard(-1e6) == 0.0
    # the two branches meet smoothly at x = 25
    t0 = 25.0 * np.sqrt(2.0)
    assert normal_hazard(np.nextafter(t0, 0)) == pytest.approx(normal_hazard(t0), rel=1e-13)


def test_gaussian_performance_far_outside_the_field() -> None:
    """Elo-MMchi with a tiny beta puts opponents hundreds of deviations apart; the
    win/loss terms must stay finite (they were 0/0 once the tails underflowed)."""
    from podium import Rater
    from podium.io.synthetic import synthetic_contests

    r = Rater("mmx", weight_limit=1.285737109540429, sig_limit=22.44766750337538)
    for c in synthetic_contests(1000, 3, seed=0):
        r.add(c)
    df = r.ratings()
    assert np.isfinite(df["mu"]).all() and np.isfinite(df["sigma"]).all()
    # better places still mean better performances (Thm 5.2) in the last round
    ev = r.events_frame()
    last = ev[ev.contest_index == 2].sort_values("place")
    assert np.all(np.diff(last["perf"].to_numpy()) <= 1e-9)


# --------------------------------------------------------------------------------------
# The building blocks of the numerics package


def _newton(f, lo, hi, start):
    """Drive the shared Newton solver from Python, as the kernels do."""
    from podium.core.numerics import newton_begin, newton_next

    state = newton_begin(lo, hi, start)
    steps = 0
    while state.running:
        state = newton_next(state, *f(state.x))
        steps += 1
    return state.x, state.status, steps


def test_newton_driver_finds_a_root_and_reports_bounds() -> None:
    from podium.core.numerics import MAX_ITER

    x, status, steps = _newton(lambda x: (2.0 - x**3, -3.0 * x * x), 0.0, 10.0, 7.0)
    assert status == STATUS_OK and x == pytest.approx(2.0 ** (1 / 3), rel=1e-15)
    assert steps < MAX_ITER
    # a start outside the bracket starts from the midpoint
    x2, _, _ = _newton(lambda x: (2.0 - x**3, -3.0 * x * x), 0.0, 10.0, 99.0)
    assert x2 == pytest.approx(x, rel=1e-15)
    # the zero (at 20) lies beyond the bracket: the bound, flagged
    x3, status3, _ = _newton(lambda x: (20.0 - x, -1.0), *SOLVER_BOUNDS, 0.0)
    assert status3 == STATUS_OK and x3 == 20.0
    x4, status4, _ = _newton(lambda x: (20000.0 - x, -1.0), *SOLVER_BOUNDS, 0.0)
    assert status4 == STATUS_AT_BOUND and x4 == SOLVER_BOUNDS[1]
    # a wrong-signed derivative falls back to bisection and still converges
    x5, status5, _ = _newton(lambda x: (1.0 - x, 5.0), -3.0, 4.0, 0.0)
    assert status5 == STATUS_OK and x5 == pytest.approx(1.0, abs=1e-12)


def test_panel_grid_covers_the_interval() -> None:
    from podium.core.numerics import panel_coordinate, panel_ends, panel_grid, panel_mid

    grid = panel_grid(-3.0, 10.0, 1.5)
    assert grid.n == 5 and grid.width <= 3.0
    ends = [panel_ends(grid, p) for p in range(grid.n)]
    assert ends[0][0] == -3.0 and ends[-1][1] == 10.0
    for (_, b), (a, _) in zip(ends, ends[1:], strict=False):
        assert a == pytest.approx(b)
    p, t = panel_coordinate(grid, 0.0)
    assert ends[p][0] <= 0.0 <= ends[p][1]
    assert panel_mid(grid, p) + 0.5 * grid.width * t == pytest.approx(0.0, abs=1e-15)
    assert panel_coordinate(grid, 1e9) == (grid.n - 1, 1.0)
    assert panel_grid(1.0, 1.0, 0.5).n == 1


def test_chebyshev_fit_and_clenshaw_reproduce_a_polynomial() -> None:
    from podium.core.numerics import cheb_fit, cheb_matrix, cheb_nodes, clenshaw

    m = 8
    t = cheb_nodes(m)
    assert t[0] == 1.0 and t[-1] == -1.0
    coef = np.empty(m)
    cheb_fit(cheb_matrix(m), 3 * t**5 - t**2 + 0.5, coef)
    for x in np.linspace(-1, 1, 9):
        v, d = clenshaw(coef, float(x))
        assert v == pytest.approx(3 * x**5 - x**2 + 0.5, abs=1e-13)
        assert d == pytest.approx(15 * x**4 - 2 * x, abs=1e-12)


def test_erfcx_matches_scipy() -> None:
    from scipy.special import erfcx as sp_erfcx

    from podium.core.numerics import erfcx

    for x in (0.0, 0.5, 3.0, 24.9, 25.0, 26.0, 100.0, 1e5):
        assert erfcx(x) == pytest.approx(float(sp_erfcx(x)), rel=1e-13)


def _newton_rtol(f, lo, hi, start, step_rtol, bracket_rtol, polish):
    """Drive the relative-tolerance Newton solver from Python, as Elo-R's noising does
    (``f`` increasing, negated for the driver); returns (x, status, evaluations)."""
    from podium.core.numerics import MAX_ITER, newton_rtol_begin, newton_rtol_next

    state = newton_rtol_begin(lo, hi, start, step_rtol, bracket_rtol, polish, MAX_ITER)
    evaluations = 0
    while state.running:
        value, deriv = f(state.x)
        state = newton_rtol_next(state, -value, -deriv)
        evaluations += 1
    return state.x, state.status, evaluations


def _newton_bisect_written_out(f, lo, hi, x, step_rtol, bracket_rtol, polish, max_iter):
    """Newton with bisection on ``[lo, hi]`` for an increasing ``f``, stopped by the
    relative step and bracket tests, as the loops of [Ebtekar2015]'s fancy noising
    were written before they moved to ``core.numerics``."""
    for evaluations in range(1, max_iter + 1):
        v, d = f(x)
        if v == 0.0:
            return x, evaluations
        if v > 0.0:
            hi = x
        else:
            lo = x
        xn = x - v / d
        if abs(xn - x) <= step_rtol * x:
            if polish and lo <= xn <= hi:
                x = xn
            return x, evaluations
        if hi - lo <= bracket_rtol * x:
            return x, evaluations
        if not (lo < xn < hi):
            xn = 0.5 * (lo + hi)
        x = xn
    return x, max_iter


@settings(max_examples=60, deadline=None)
@given(x0=st.floats(0.05, 60.0), u=st.floats(1e-6, 1.0), frac=st.floats(-0.5, 1.5),
       polish=st.booleans(), bracket=st.sampled_from([0.0, 1e-12]))
def test_newton_rtol_solves_x_tanh_x_as_written_and_as_brentq(x0, u, frac, polish,
                                                              bracket) -> None:
    """Elo-R's noising solves ``x tanh x = u x0 tanh x0`` on ``[u x0, sqrt(u) x0]``: the
    shared driver repeats the written-out iteration bit for bit (same answer, same
    evaluations) and lands on SciPy's root."""
    from podium.core.numerics import STATUS_OK

    target = u * x0 * math.tanh(x0)
    lo, hi = u * x0, math.sqrt(u) * x0

    def f(x):
        t = math.tanh(x)
        return x * t - target, t + x * (1.0 - t * t)

    start = lo + frac * (hi - lo)
    x, status, n = _newton_rtol(f, lo, hi, start, 1e-9, bracket, polish)
    ref_start = start if lo <= start <= hi else 0.5 * (lo + hi)
    x_ref, n_ref = _newton_bisect_written_out(f, lo, hi, ref_start, 1e-9, bracket, polish,
                                              200)
    assert status == STATUS_OK
    assert (x, n) == (x_ref, n_ref)
    if hi > lo:
        root = brentq(lambda y: f(y)[0], lo, hi, xtol=1e-300, rtol=1e-15)
        assert x == pytest.approx(root, rel=1e-9 if polish else 1e-8)


def test_newton_rtol_stops_and_reports() -> None:
    from podium.core.numerics import (
        MAX_ITER,
        STATUS_MAX_ITER,
        STATUS_OK,
        newton_rtol_begin,
        newton_rtol_next,
    )

    # cube root of 2 from outside the bracket: the midpoint, then Newton
    x, status, n = _newton_rtol(lambda x: (x**3 - 2.0, 3.0 * x * x), 0.0, 10.0, 99.0,
                                1e-12, 0.0, True)
    assert status == STATUS_OK and x == pytest.approx(2.0 ** (1 / 3), rel=1e-15) and n < 20
    # an exact zero at the start ends the solve there
    assert _newton_rtol(lambda x: (x - 1.0, 1.0), 0.0, 2.0, 1.0, 1e-12, 0.0, True)[:2] == (
        1.0, STATUS_OK)
    # a wide bracket test ends the solve at once, where it stands
    x2, _, n2 = _newton_rtol(lambda x: (x**3 - 2.0, 3.0 * x * x), 1.0, 1.5, 1.0, 0.0, 1.0,
                             False)
    assert (x2, n2) == (1.0, 1)
    # a derivative that never lets Newton in: bisection only, to the iteration cap
    state = newton_rtol_begin(0.0, 1.0, 0.5, 0.0, 0.0, False, MAX_ITER)
    steps = 0
    while state.running:
        state = newton_rtol_next(state, 0.25 - state.x, 1e-300)
        steps += 1
    assert state.status == STATUS_OK and state.x == pytest.approx(0.25, abs=1e-15)
    state = newton_rtol_begin(0.0, 1.0, 0.5, 0.0, 0.0, False, 3)
    while state.running:
        state = newton_rtol_next(state, 0.3 - state.x, 1e-300)
    assert state.status == STATUS_MAX_ITER and state.steps == 3 and state.x == 0.3125


def test_cover_points_and_cheb_eval() -> None:
    """The greedy cover starts a panel at the first point beyond ``width`` of the last
    panel's start; an interpolant evaluates through Clenshaw, clamped to its panel."""
    from podium.core.numerics import (
        cheb_eval,
        cheb_fit,
        cheb_matrix,
        cheb_nodes,
        clenshaw,
        cover_points,
    )

    xs = np.array([0.0, 0.5, 1.0, 1.01, 5.0, 5.0, 9.0, 9.5, 10.0])
    starts = cover_points(xs, 1.0)
    assert starts.tolist() == [0, 3, 4, 6, 9]
    for p in range(starts.size - 1):
        pts = xs[starts[p]:starts[p + 1]]
        assert pts.size and pts.max() - pts[0] <= 1.0
        if p:
            assert pts[0] - xs[starts[p - 1]] > 1.0
    assert cover_points(np.array([3.0]), 1.0).tolist() == [0, 1]
    m = 12
    coef = np.empty(m)
    c, r = 4.0, 0.5
    cheb_fit(cheb_matrix(m), np.exp(c + r * cheb_nodes(m)), coef)
    for x in (3.5, 3.9, 4.2, 4.5):
        assert cheb_eval(coef, c, r, x) == clenshaw(coef, (x - c) / r)[0]
        assert cheb_eval(coef, c, r, x) == pytest.approx(math.exp(x), rel=1e-13)
    assert cheb_eval(coef, c, r, 7.0) == clenshaw(coef, 1.0)[0]
    assert cheb_eval(coef, c, r, -7.0) == clenshaw(coef, -1.0)[0]
