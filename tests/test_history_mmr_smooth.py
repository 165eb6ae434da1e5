"""``mmr-smooth`` (podium.history.mmr_smooth): its first pass is Podium's ``mmr``, its
beliefs are the two-filter products written out plainly, its fixed point solves
Theorem 3.2 with the cavity terms, it estimates the skills of data drawn from its own
model better than the filter does, and its causal forecast uses only the past."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _history_cases import mmr_rows
from scipy.optimize import brentq

from podium import Contest
from podium.history import (
    ContestHistory,
    MMRParams,
    SmoothState,
    history_from_arrays,
    history_from_contests,
    mmr_smooth,
    smooth_extend,
    smooth_forecast,
)
from podium.history.smooth_update import phase1_moved
from podium.io.synthetic import synthetic_contests

TANH = math.pi / math.sqrt(3.0)


def model_history(seed: int, n_players: int = 120, n_rounds: int = 30
                  ) -> tuple[ContestHistory, np.ndarray]:
    """Rounds drawn from Elo-MMR's own model: skills N(1500, 350^2) at entry, drift
    N(0, 35.78^2) per round, logistic performances of spread 195.96; players enter and
    leave; returns the history and each row's true skill."""
    rng = np.random.default_rng(seed)
    beta, gamma = 80 * math.sqrt(6), 80 * math.sqrt(0.2)
    skill = rng.normal(1500, 350, n_players)
    start = rng.integers(0, n_rounds - 3, n_players)
    stop = np.minimum(n_rounds, start + rng.integers(2, n_rounds, n_players))
    ct, tr, place, player, days, truth = [0], [0], [], [], [], []
    for r in range(n_rounds):
        on = np.flatnonzero((start <= r) & (r < stop) & (rng.random(n_players) < 0.7))
        if on.size >= 3:
            perf = skill[on] + rng.logistic(0, beta * math.sqrt(3) / math.pi, on.size)
            order = on[np.argsort(-perf)]
            player += order.tolist()
            place += list(range(order.size))
            truth += skill[order].tolist()
            tr += (tr[-1] + np.arange(1, order.size + 1)).tolist()
            ct.append(ct[-1] + order.size)
            days.append(float(r))
        skill = skill + rng.normal(0, gamma, n_players) * (start <= r)
    h = history_from_arrays(ct, tr, place, player, days, n_players=n_players)
    return h, np.array(truth)


@pytest.mark.parametrize("n_players,n_rounds", [(30, 20), (60, 6)])
def test_first_pass_is_podium_mmr(n_players: int, n_rounds: int) -> None:
    """Every filtered rating, uncertainty and performance equals Podium's ``mmr`` (to
    1e-6: the solvers stop at steps of 1e-8)
    (60 players: more tie groups than the direct solve, the panels' path)."""
    contests = synthetic_contests(n_players, n_rounds, seed=3)
    h, rows, ev = mmr_rows(contests)
    st = SmoothState.start(h, window_tol=0.0)
    st.rate_forward(h.n_contests)
    assert np.abs(st.entry_view(st.filtered_mu)[rows] - ev.mu.to_numpy()).max() < 1e-6
    assert np.abs(st.entry_view(st.filtered_sigma)[rows] - ev.sigma.to_numpy()).max() < 1e-9
    assert np.abs(st.entry_view(st.entries.perf)[rows] - ev.perf.to_numpy()).max() < 1e-6


def test_entry_views_put_each_entry_on_its_input_row() -> None:
    """The per-row arrays of a result: entry ``e_of_row[r]``'s value on input row
    ``source_rows[r]`` for every rated row, NaN elsewhere (a contest where everybody
    tied is left out, and rows not rated yet), several arrays in one pass."""
    h, _ = model_history(5, n_players=40, n_rounds=8)
    st = SmoothState.start(h)
    st.rate_forward(h.n_contests - 2)
    arrays = (st.entries.perf, st.filtered_mu, st.entries.cav_sig)
    got = st.entry_views(arrays)
    r_end = st.rated_rows
    assert 0 < r_end < h.n_rows
    for k, values in enumerate(arrays):
        expect = np.full(st.n_source_rows, np.nan)
        expect[st.source_rows[:r_end]] = values[st.e_of_row[:r_end]]
        assert np.array_equal(got[k], expect, equal_nan=True)
        assert np.array_equal(st.entry_view(values), expect, equal_nan=True)
    assert np.isnan(got[:, st.source_rows[r_end:]]).all()


def test_one_round_is_rated_as_the_filter_rates_it() -> None:
    contests = synthetic_contests(12, 1, seed=1)
    h, rows, ev = mmr_rows(contests)
    res = mmr_smooth(h, window_tol=0.0)
    assert res.converged
    np.testing.assert_allclose(res.mu[rows], ev.mu.to_numpy(), atol=1e-6)
    np.testing.assert_allclose(res.sigma[rows], ev.sigma.to_numpy(), atol=1e-9)


# ---- the beliefs written out: factor lists, Algorithm 2, Eq. 6 and 8 by brentq
def _zero(normals: list[tuple[float, float]], factors: list[tuple[float, float, float]]
          ) -> float:
    def f(x: float) -> float:
        s = sum(w * (x - m) for w, m in normals)
        for p, b, om in factors:
            a = TANH / b
            s += om * a * math.tanh((x - p) * a / 2)
        return s
    return brentq(f, -6000, 9000, xtol=1e-12)


def _diffuse(w0: float, m0: float, factors: list, sig: float, gamma: float, mu: float
             ) -> tuple[float, float, list, float]:
    s_new = math.hypot(sig, gamma)
    kappa = (sig / s_new) ** 2  # rho = 1: transfer = kappa
    lw = sum(om / b**2 for _, b, om in factors)
    keep, moved = kappa * w0, (1 - kappa) * (w0 + lw)
    m0 = (keep * m0 + moved * mu) / (keep + moved) if keep + moved > 0 else m0
    return kappa * (keep + moved), m0, [(p, b, om * kappa * kappa) for p, b, om in factors], \
        s_new


def _two_filter(p: list[float], beta: list[float], gamma: list[float]) -> dict[str, list]:
    """Forward (prior N(1500, 350^2)), backward (no prior) and their products."""
    n = len(p)
    out: dict[str, list] = {"fwd": [], "cav": [], "sm": []}
    w0, m0, fac, mu, sig = 350.0**-2, 1500.0, [], 1500.0, 350.0
    priors = []
    for k in range(n):
        w0, m0, fac, s_new = _diffuse(w0, m0, fac, sig, gamma[k], mu)
        priors.append((w0, m0, list(fac), s_new))
        fac = fac + [(p[k], beta[k], 1.0)]
        mu = _zero([(w0, m0)], fac)
        sig = (s_new**-2 + beta[k] ** -2) ** -0.5
        out["fwd"].append((w0, m0, list(fac), mu, sig))
    back: list = [None] * n
    w0, m0, fac = 0.0, 0.0, []
    for k in range(n - 1, -1, -1):
        back[k] = (w0, m0, list(fac))
        fac = fac + [(p[k], beta[k], 1.0)]
        mub = _zero([(w0, m0)], fac)
        if k > 0:
            sb = (w0 + sum(om / b**2 for _, b, om in fac)) ** -0.5
            w0, m0, fac, _ = _diffuse(w0, m0, fac, sb, gamma[k], mub)
    for k in range(n):
        bw, bm, bf = back[k]
        wb = bw + sum(om / b**2 for _, b, om in bf)
        pw, pm, pf, s_new = priors[k]
        out["cav"].append((_zero([(pw, pm), (bw, bm)], pf + bf), (s_new**-2 + wb) ** -0.5))
        fw, fm, ff, _, fsig = out["fwd"][k]
        out["sm"].append((_zero([(fw, fm), (bw, bm)], ff + bf), (fsig**-2 + wb) ** -0.5))
    return out


def test_beliefs_are_the_two_filter_products() -> None:
    """At the returned fixed point, every player's filtered, cavity and smoothed beliefs
    equal the plainly written two-filter definitions applied to its performances."""
    h, _ = model_history(4, n_players=40, n_rounds=12)
    res = mmr_smooth(h, window_tol=0.0, tol=1e-3)
    st = res.state
    en = st.entries
    worst = 0.0
    for i in range(h.n_players):
        e = np.arange(en.off[i], en.off[i] + en.n_rated[i])
        if e.size == 0:
            continue
        ref = _two_filter(en.perf[e].tolist(), en.beta[e].tolist(), en.gamma[e].tolist())
        for k, q in enumerate(e):
            worst = max(worst, abs(ref["fwd"][k][3] - en.fwd_mu[q]),
                        abs(ref["fwd"][k][4] - en.fwd_sig[q]),
                        abs(ref["cav"][k][0] - en.cav_mu[q]),
                        abs(ref["cav"][k][1] - en.cav_sig[q]),
                        abs(ref["sm"][k][0] - en.sm_mu[q]), abs(ref["sm"][k][1] - en.sm_sig[q]))
    assert worst < 1e-6


def _q(x: float, mu: np.ndarray, w: np.ndarray, place: np.ndarray, own: int) -> float:
    """Q_i(x) of Theorem 3.2 with logistic terms ``-w tanh((x - mu) w / 2)``: a loss to
    each better-placed term, a win over each worse one, twice the term if tied."""
    v = -w * np.tanh((x - mu) * w / 2)
    return float(np.sum(np.where(place < own, v - w, np.where(place > own, v + w, 2 * v))))


def test_performances_solve_theorem_3_2_with_the_cavity_terms() -> None:
    """At convergence each performance is the zero of Q_i over the participants' final
    cavity terms (loss to the better, win over the worse, tie term doubled)."""
    h, _ = model_history(5, n_players=40, n_rounds=10)
    tol = 1e-4
    res = mmr_smooth(h, tol=tol, window_tol=0.0)
    assert res.converged
    worst = 0.0
    for c in range(h.n_contests):
        r = np.arange(h.contest_rows[c], h.contest_rows[c + 1])
        mu, sig = res.prior_mu[r], res.prior_sigma[r]
        beta = res.state.entries.beta[res.state.e_of_row[r]]
        w = TANH / np.hypot(sig, beta)
        place = h.team_place[h.contest_teams[c]:h.contest_teams[c + 1]]
        for k in range(r.size):
            zero = brentq(_q, -6000, 9000, args=(mu, w, place, place[k]), xtol=1e-10)
            worst = max(worst, abs(zero - res.perf[r[k]]))
    assert worst < 20 * tol


def test_sweeps_wide_panels_solve_theorem_3_2() -> None:
    """Phase 1 of the sweeps (Chebyshev panels ``SWEEP_PANELS`` times the first pass's
    width, rounds of more than 24 tie groups) still gives every performance as the zero
    of Q_i over the cavity terms, to 1e-6 rating points."""
    from podium.history.smooth_state import SWEEP_PANELS

    assert SWEEP_PANELS > 1.0
    h, _ = model_history(6, n_players=120, n_rounds=4)
    st = SmoothState.start(h, window_tol=0.0)
    st.rate_forward(h.n_contests)
    st.solve(0.01, 50)
    assert st.large.all()  # every round goes through the panels
    st.phase1(np.arange(h.n_contests))
    rd = st.rounds
    worst = 0.0
    for c in range(h.n_contests):
        r = np.arange(h.contest_rows[c], h.contest_rows[c + 1])
        w = TANH / np.hypot(rd.cav_sig[r], rd.beta[r])
        place = h.team_place[h.contest_teams[c]:h.contest_teams[c + 1]]
        for k in range(r.size):
            zero = brentq(_q, -6000, 9000, args=(rd.cav_mu[r], w, place, place[k]),
                          xtol=1e-10)
            worst = max(worst, abs(zero - rd.perf[r[k]]))
    assert worst < 1e-6


def _tied_state(seed: int, rng_seed: int, n_players: int, split_ties: bool, tol: float,
                sweeps: int) -> tuple[ContestHistory, SmoothState, np.random.Generator]:
    """A model history of 8 rounds with some neighbours tied (a row at an odd place
    shares the place before it), smoothed to ``tol``; and the generator that tied them."""
    h, _ = model_history(seed, n_players=n_players, n_rounds=8)
    rng = np.random.default_rng(rng_seed)
    tie = rng.random(h.team_place.size) < 0.3
    h = h._replace(team_place=h.team_place - (h.team_place % 2) * tie)
    st = SmoothState.start(h, MMRParams(split_ties=split_ties), window_tol=0.0)
    st.rate_forward(h.n_contests)
    st.solve(tol, sweeps)
    return h, st, rng



def _resolved_and_threshold(st: SmoothState, contests: np.ndarray
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Every group of ``contests`` re-solved from scratch (``phase1``), then the
    performances put back: the performances before, the full re-solve's, their change
    and a threshold halfway between two changes near the median (none close to it)."""
    rd = st.rounds
    perf0 = rd.perf.copy()
    st.phase1(contests)
    full = rd.perf.copy()
    change = np.abs(full - perf0)
    n = change.size
    ordered = np.sort(change)
    k = n // 2 + int(np.argmax(np.diff(ordered[n // 2:]) > 1e-6))
    rd.perf[:] = perf0
    st.entries.perf[st.e_of_row] = perf0
    return perf0, full, change, 0.5 * float(ordered[k] + ordered[k + 1])

@pytest.mark.parametrize("n_players,split_ties", [(150, False), (150, True), (30, False)])
def test_sweeps_newton_phase1_equals_the_exact_solve(n_players: int, split_ties: bool) -> None:
    """The sweeps' phase 1 (``phase1_newton``: Newton per tie group from its current
    performance on one interpolant of the round's summed terms) gives the zeros of the
    exact solve (``phase1``: ``performance_zeros`` from scratch) to 1e-6 rating points,
    from cavities moved as a sweep moves them (a common shift, and some rows by tens of
    points), on rounds above and below 24 tie groups, ties counted or split.  A round
    whose performances all sit at one point (its panels span 1e-6) needs the fallback,
    the direct sums outside the panels, and takes it; a round already at its zeros
    keeps its performances bit for bit and solves no row."""
    from podium.history.smooth_state import SWEEP_STEP

    h, st, rng = _tied_state(11, 5, n_players, split_ties, 0.01, 50)
    assert st.large.any() == (n_players > 100)
    rd = st.rounds
    contests = np.arange(h.n_contests)
    rd.cav_mu[:] += 150.0
    moved = rng.random(h.n_rows) < 0.2
    rd.cav_mu[moved] += rng.normal(0.0, 40.0, int(moved.sum()))
    rd.cav_sig[moved] *= rng.uniform(0.9, 1.1, int(moved.sum()))
    # the largest contest from a single point (every zero off its panels), the last
    # contest from its own zeros
    c_pt = int(np.argmax(np.diff(h.contest_rows)[:-1]))
    r0, r1 = h.contest_rows[c_pt], h.contest_rows[c_pt + 1]
    assert st.large[c_pt] == (n_players > 100)
    last = slice(h.contest_rows[-2], h.contest_rows[-1])
    st.phase1(contests[-1:])
    perf0 = rd.perf.copy()
    perf0[r0:r1] = perf0[r0:r1].mean()
    rd.perf[:] = perf0
    st.phase1(contests)
    exact = rd.perf.copy()
    rd.perf[:] = perf0
    threshold = SWEEP_STEP * 0.01
    change, rows, _, _ = st.phase1_newton(contests, threshold)
    np.testing.assert_allclose(rd.perf, exact, rtol=0, atol=1e-6)
    assert change == pytest.approx(np.abs(exact - perf0).max(), abs=1e-6)
    np.testing.assert_array_equal(rd.perf[last], perf0[last])
    assert rows == h.contest_rows[-2]  # every row but the last contest's
    assert np.abs(exact[r0:r1] - perf0[r0:r1]).min() > 1.0  # off the 1e-6 panels


def test_smoothing_estimates_skills_better_than_the_filter() -> None:
    """On rounds drawn from the model, the smoothed ratings are closer to the true
    skills than Elo-MMR's (the filter sees only the past)."""
    h, truth = model_history(1)
    res = mmr_smooth(h)
    assert res.converged
    rmse_s = float(np.sqrt(np.mean((res.mu - truth) ** 2)))
    rmse_f = float(np.sqrt(np.mean((res.filtered_mu - truth) ** 2)))
    assert rmse_s < 0.85 * rmse_f


def test_later_rounds_revise_earlier_ratings() -> None:
    """ann beats bob once; then ann beats ten others one by one: her first rating rises
    above the filter's, and so does bob's (he lost to a strong player)."""
    ct = list(range(0, 24, 2))
    tr = list(range(23))
    place = [0, 1] * 11
    player = [0, 1] + [x for k in range(10) for x in (0, 2 + k)]
    h = history_from_arrays(ct, tr, place, player, [float(d) for d in range(11)])
    res = mmr_smooth(h)
    assert res.mu[0] > res.filtered_mu[0] + 50
    assert res.mu[1] > res.filtered_mu[1] + 20


def test_forecast_sees_only_the_past() -> None:
    """Changing the last round's result changes no forecast of an earlier round."""
    h, _ = model_history(2, n_players=40, n_rounds=12)
    mu, sigma, reports = smooth_forecast(h, max_sweeps=2)
    last = np.arange(h.contest_rows[-2], h.contest_rows[-1])
    flipped = h._replace(player=h.player.copy())
    flipped.player[last] = flipped.player[last][::-1]
    mu2, sigma2, _ = smooth_forecast(flipped, max_sweeps=2)
    early = slice(0, int(h.contest_rows[-2]))
    np.testing.assert_array_equal(mu[early], mu2[early])
    np.testing.assert_array_equal(sigma[early], sigma2[early])
    assert len(reports) == h.n_contests
    assert all(len(r.sweeps) <= 2 for r in reports)
    # the first contest's forecast is the newcomers' prior
    first = np.arange(h.contest_rows[0], h.contest_rows[1])
    assert np.all(mu[first] == 1500.0)


def test_extending_converges_to_the_batch_smoothing() -> None:
    """Smoothing a prefix, then adding the rest with unbounded sweeps, reaches the
    batch fixed point of the whole history."""
    h, _ = model_history(3, n_players=60, n_rounds=16)
    full = mmr_smooth(h, tol=1e-5)
    st = SmoothState.start(h)
    st.rate_forward(12)
    st.solve(1e-5, 200)
    from podium.history.mmr_smooth import smooth_result

    part = smooth_result(st, True, [])
    ext, report = smooth_extend(part, 4, tol=1e-6, max_sweeps=500)
    assert report.contests == 4 and report.settled
    assert report.max_past_change > 0.0
    assert np.nanmax(np.abs(ext.mu - full.mu)) < 0.05


def test_bounded_update_reports_its_sweeps() -> None:
    h, _ = model_history(6, n_players=40, n_rounds=10)
    st = SmoothState.start(h)
    st.rate_forward(9)
    st.solve(1e-3, 100)
    from podium.history.mmr_smooth import smooth_result

    _, report = smooth_extend(smooth_result(st, True, []), 1, max_sweeps=1)
    assert len(report.sweeps) == 1 and not report.settled
    assert report.players >= report.sweeps[0].players


def test_all_tied_contests_are_skipped() -> None:
    """(Team rounds: tests/test_history_mmr_smooth_teams.py.)"""
    tied = Contest([("a", 0, 1), ("b", 0, 1)], time_seconds=0)
    won = Contest([("a", 0, 0), ("b", 1, 1)], time_seconds=86400)
    res = mmr_smooth(history_from_contests([tied, won]).history)
    assert np.isnan(res.mu[:2]).all() and np.isfinite(res.mu[2:]).all()


def test_collapsing_variant_runs() -> None:
    """rho = inf (Elo-MMR(inf)): every belief a normal; still a smoother."""
    h, truth = model_history(7, n_players=60, n_rounds=15)
    res = mmr_smooth(h, MMRParams(rho=math.inf))
    assert res.converged
    assert np.sqrt(np.mean((res.mu - truth) ** 2)) < np.sqrt(np.mean((res.filtered_mu
                                                                      - truth) ** 2))


def test_anderson_removes_a_slow_direction() -> None:
    """x = A x + b with one eigenvalue 0.999: plain iteration still far after 50
    steps, Anderson (5 differences) at the fixed point."""
    from podium.history.anderson import Anderson

    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    a = q @ np.diag(np.r_[0.999, rng.uniform(0, 0.5, 29)]) @ q.T
    b = rng.normal(size=30)
    fixed = np.linalg.solve(np.eye(30) - a, b)
    plain = np.zeros(30)
    accel = Anderson(5)
    x = np.zeros(30)
    for _ in range(50):
        plain = a @ plain + b
        x = accel.step(x, a @ x + b)
    assert np.abs(plain - fixed).max() > 1.0
    assert np.abs(x - fixed).max() < 1e-8


def test_local_restarts_agree_with_a_full_recompute() -> None:
    """After adding contests with filters restarted locally and stopped early, a full
    recompute of every player's beliefs moves no cavity or smoothed rating by more
    than the tolerance."""
    h, _ = model_history(8, n_players=50, n_rounds=20)
    st = SmoothState.start(h)
    st.rate_forward(14)
    st.solve(1e-3, 200)
    from podium.history.mmr_smooth import smooth_result

    res = smooth_result(st, True, [])
    for _ in range(6):
        res, _ = smooth_extend(res, 1, tol=0.01, max_sweeps=2)
    en = st.entries
    cav, sm = en.cav_mu.copy(), en.sm_mu.copy()
    st.phase2(np.flatnonzero(en.n_rated >= 1), smoothed=True)
    assert np.abs(en.cav_mu - cav).max() < 0.01
    assert np.abs(en.sm_mu - sm).max() < 0.01


@pytest.mark.parametrize("n_players,split_ties", [(150, False), (150, True), (30, False)])
def test_moved_groups_leave_out_no_group_that_moves(n_players: int, split_ties: bool) -> None:
    """The bounded update's phase 1 (``phase1_moved``) against re-solving every group
    of the same rounds from the same cavities: every performance that the full
    re-solve moves by more than the threshold is replaced, by the same zero; every
    other one is kept.  Rounds of more than 24 tie groups (the interpolant) and fewer
    (direct sums), ties counted as ties or split."""
    h, st, rng = _tied_state(9, 4, n_players, split_ties, 1e-6, 200)
    assert st.large.any() == (n_players > 100)
    rd = st.rounds
    moved = rng.random(h.n_rows) < 0.1
    rd.cav_mu[moved] += rng.normal(0.0, 40.0, int(moved.sum()))
    rd.cav_sig[moved] *= rng.uniform(0.9, 1.1, int(moved.sum()))
    contests = np.arange(h.n_contests)
    perf0, full, change, spread = _resolved_and_threshold(st, contests)
    _, solved, _, _ = phase1_moved(st, contests, spread)
    kept = rd.perf == perf0
    assert 0 < kept.sum() < h.n_rows and solved >= (~kept).sum()
    # no group that moves by more than the threshold is left out ...
    assert change[kept].max() <= spread
    # ... and those replaced take the full re-solve's zero (to 1e-4: the update's
    # interpolants take MOVED_NODES nodes, 8.2e-5 on the whole Codeforces history)
    np.testing.assert_allclose(rd.perf[~kept], full[~kept], rtol=0, atol=1e-4)
    assert np.all(change[~kept] > spread)
    # the players' entries carry the performances phase 2 reads
    np.testing.assert_array_equal(st.entries.perf[st.e_of_row], rd.perf)


@pytest.mark.parametrize("n_players,split_ties", [(150, False), (150, True), (30, False)])
def test_gate_leaves_out_no_group_that_moves(n_players: int, split_ties: bool) -> None:
    """The update's gate (rounds left as they are when their stored residuals, advanced
    by the changed terms only, show no group moving by more than the threshold) over
    five successive updates of the same state: every performance that re-solving
    every group from the same cavities moves by more than the threshold is replaced by
    that zero, every other one is kept; the gate leaves rounds out, and the stored
    residuals stay those of the current cavities."""
    h, st, rng = _tied_state(9, 5, n_players, split_ties, 1e-6, 200)
    # the solve ended with every round's residuals stored
    rd, en = st.rounds, st.entries
    contests = np.arange(h.n_contests)
    gated = replaced = 0
    for _ in range(5):
        # a few cavities move: most by a little, some rounds' by tens of points
        moved = rng.random(h.n_rows) < 0.06
        big = moved & (rng.random(h.n_contests) < 0.4)[st.row_contest]
        rd.cav_mu[moved] += np.where(big, rng.normal(0.0, 40.0, h.n_rows),
                                     rng.normal(0.0, 0.5, h.n_rows))[moved]
        rd.cav_sig[moved] *= np.where(big, rng.uniform(0.9, 1.1, h.n_rows),
                                      rng.uniform(0.999, 1.001, h.n_rows))[moved]
        # every group re-solved from scratch (the stored residuals untouched)
        perf0, full, change, spread = _resolved_and_threshold(st, contests)
        _, _, n_gated, moved = phase1_moved(st, contests, spread)
        kept = rd.perf == perf0
        np.testing.assert_array_equal(np.sort(moved), np.flatnonzero(~kept))
        np.testing.assert_array_equal(en.perf[st.e_of_row], rd.perf)
        assert change[kept].max() <= spread
        np.testing.assert_allclose(rd.perf[~kept], full[~kept], rtol=0, atol=1e-4)
        gated += n_gated
        replaced += int((~kept).sum())
    assert gated > 0 and replaced > 0
    # the stored residuals are those of the current cavities and performances
    q, qp = st.stored.q.copy(), st.stored.qp.copy()
    np.testing.assert_array_equal(st.stored.mu, rd.cav_mu)
    st.refresh_residuals()
    assert np.abs((q - st.stored.q) / st.stored.qp).max() < 1e-5
    np.testing.assert_allclose(qp, st.stored.qp, rtol=1e-6)


def test_update_spread_is_checked_and_passed_on() -> None:
    """The propagation threshold (units of ``tol``) is refused below 1, and a larger one
    passes fewer changes on (fewer groups solved again) from the same state."""
    from podium.errors import ConfigError
    from podium.history.mmr_smooth import smooth_result
    from podium.history_rater import HistoryRater

    with pytest.raises(ConfigError, match="update_spread"):
        HistoryRater("mmr-smooth", update_spread=0.5)
    h, _ = model_history(10, n_players=80, n_rounds=10)
    touched = []
    for spread in (1.0, 100.0):
        st = SmoothState.start(h)
        st.rate_forward(9)
        st.solve(1e-3, 100)
        with pytest.raises(ConfigError, match="spread"):
            smooth_extend(smooth_result(st, True, []), 1, spread=0.5)
        _, report = smooth_extend(smooth_result(st, True, []), 1, spread=spread)
        assert report.max_past_change > 0.0
        touched.append(sum(r.rows_solved for r in report.sweeps))
    assert 0 < touched[1] < touched[0]
