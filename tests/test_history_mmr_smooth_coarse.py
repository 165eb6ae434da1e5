"""The coarse correction of ``mmr-smooth``'s sweeps (podium.history.coarse): its model
``M`` is the Gaussian smoother's derivative, written out with dense matrices and finite
differences; the corrected map has the plain map's fixed points; the option is
checked."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _history_cases import team_contests
from test_history_mmr_smooth import model_history

from podium.errors import ConfigError
from podium.history import ContestHistory, SmoothState, history_from_contests, mmr_smooth
from podium.history.coarse import CoarseModel, shift_model


def _cavity_means(p: np.ndarray, w: np.ndarray, gamma: np.ndarray, m0: float,
                  sig0: float) -> np.ndarray:
    """Per round, the mean of the skill given every other round's measurement: the
    random walk ``x_0 ~ N(m0, sig0^2 + gamma_0^2)``, ``x_k - x_{k-1} ~ N(0, gamma_k^2)``,
    ``p_k ~ N(x_k, 1 / w_k)``, solved as one dense Gaussian."""
    n = p.size
    prec = np.zeros((n, n))
    prec[0, 0] = 1.0 / (sig0 ** 2 + gamma[0] ** 2)
    for k in range(1, n):
        a = 1.0 / gamma[k] ** 2
        prec[k - 1:k + 1, k - 1:k + 1] += a * np.array([[1.0, -1.0], [-1.0, 1.0]])
    out = np.empty(n)
    for k in range(n):
        wk = w.copy()
        wk[k] = 0.0
        rhs = wk * p
        rhs[0] += m0 / (sig0 ** 2 + gamma[0] ** 2)
        out[k] = np.linalg.solve(prec + np.diag(wk), rhs)[k]
    return out


def test_model_is_the_gaussian_smoothers_derivative() -> None:
    """Every entry of ``M`` (no pair left out) equals the finite-difference derivative
    of the dense Gaussian smoother's cavity means, averaged over each contest's rows
    with their shares."""
    h, _ = model_history(3, n_players=25, n_rounds=8)
    st = SmoothState.start(h)
    st.rate_forward(st.history.n_contests)
    en, r_end = st.entries, st.rated_rows
    rc = st.row_contest[:r_end]
    share = np.random.default_rng(0).uniform(0.5, 1.5, r_end)
    share /= np.bincount(rc, share)[rc]
    w = 1.0 / en.beta ** 2
    sig0 = st.params.sig_noob
    m = shift_model(en.off, en.rows, en.n_rated, w, en.gamma, rc, share, st.rated, sig0,
                    0.0)
    expect = np.zeros_like(m)
    step = 1e-3
    for i in range(en.n_rated.size):
        e = np.arange(en.off[i], en.off[i] + en.n_rated[i])
        if e.size < 2:
            continue
        p = en.perf[e].copy()
        base = _cavity_means(p, w[e], en.gamma[e], 1500.0, sig0)
        for j in range(e.size):
            q = p.copy()
            q[j] += step
            d = (_cavity_means(q, w[e], en.gamma[e], 1500.0, sig0) - base) / step
            for k in range(e.size):
                if k != j:
                    r = en.rows[e[k]]
                    expect[rc[r], rc[en.rows[e[j]]]] += share[r] * d[k]
    assert np.abs(expect).max() > 0.1
    np.testing.assert_allclose(m, expect, atol=1e-7)
    # the rows sum to below 1: only the newcomers' prior pins the level
    assert np.all(m.sum(axis=1) < 1.0)


def test_correction_is_the_per_contest_formula() -> None:
    """``correct(x, g) = g + P ((I - M)^{-1} - I) R (g - x)`` with ``R`` the
    per-group mean and ``P`` its spread; no residual, no change; contests grouped
    beyond ``max_groups``."""
    h, _ = model_history(4, n_players=40, n_rounds=12)
    st = SmoothState.start(h)
    st.rate_forward(st.history.n_contests)
    r_end = st.rated_rows
    model = CoarseModel.build(st.entries, st.rounds, r_end, st.row_contest, st.rated,
                              st.params.sig_noob, max_groups=4)
    per = math.ceil(st.rated / 4)
    np.testing.assert_array_equal(model.group_of_row, st.row_contest[:r_end] // per)
    n_g = model.m.shape[0]
    assert n_g == 4
    rng = np.random.default_rng(1)
    x = rng.normal(1500, 300, r_end)
    g = x + rng.normal(5, 10, r_end)
    gr = model.group_of_row
    mean = np.bincount(gr, g - x) / np.bincount(gr)
    expect = g + (np.linalg.solve(np.eye(n_g) - model.m, mean) - mean)[gr]
    np.testing.assert_allclose(model.correct(x, g), expect, atol=1e-9)
    np.testing.assert_array_equal(model.correct(x, x.copy()), x)


def _team_history() -> ContestHistory:
    return history_from_contests(team_contests(3, n_players=60, n_rounds=20)).history


@pytest.mark.parametrize("case", ["model-1", "model-5", "teams"])
def test_coarse_solve_reaches_the_plain_fixed_point(case: str) -> None:
    """With and without the coarse correction the sweeps reach the same fixed point
    (to about ``tol``), on individual rounds drawn from the model and on team rounds
    (the correction shifts every row, a team round's members too)."""
    h = _team_history() if case == "teams" else model_history(int(case[-1]))[0]
    tol = 1e-5
    plain = mmr_smooth(h, tol=tol, coarse=False)
    fast = mmr_smooth(h, tol=tol)
    assert plain.converged and fast.converged
    for a, b in ((plain.mu, fast.mu), (plain.perf, fast.perf),
                 (plain.prior_mu, fast.prior_mu)):
        assert np.nanmax(np.abs(a - b)) < 100 * tol
    np.testing.assert_array_equal(plain.filtered_mu, fast.filtered_mu)


def test_coarse_option_is_checked() -> None:
    h, _ = model_history(2, n_players=30, n_rounds=6)
    with pytest.raises(ConfigError, match="coarse"):
        mmr_smooth(h, coarse="yes")  # type: ignore[arg-type]


def test_engine_parameter_turns_the_correction_off() -> None:
    """``coarse`` is a parameter of the ``mmr-smooth`` engine (``podium rate --set
    coarse=false``): off, the sweeps are the plain ones (more of them), to the same
    ratings; a value that is not a bool is refused when the system is built."""
    from podium.history_rater import HistoryRater
    from podium.io.synthetic import synthetic_contests

    contests = synthetic_contests(60, 12, seed=3)
    on, off = HistoryRater("mmr-smooth"), HistoryRater("mmr-smooth", coarse=False)
    rep_on, rep_off = on.extend(contests)[-1], off.extend(contests)[-1]
    assert rep_on.settled and rep_off.settled
    assert rep_on.sweeps < rep_off.sweeps
    a, b = on.ratings(sort=False), off.ratings(sort=False)
    assert np.nanmax(np.abs(a["mu"].to_numpy() - b["mu"].to_numpy())) < 0.1
    with pytest.raises(ConfigError, match="coarse"):
        HistoryRater("mmr-smooth", coarse="yes")
