"""Predictions for a proposed contest: pairwise win probabilities and expected places."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.errors import PodiumError
from podium.predict import (
    ELO_BETA,
    expected_places,
    performance_model,
    predict,
    win_probabilities,
)
from podium.systems import get_system


def phi(x: float) -> float:
    """Standard normal CDF, written out independently of the module (erf)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def logistic(x: float) -> float:
    """Unit-variance logistic CDF."""
    return 1.0 / (1.0 + math.exp(-math.pi * x / math.sqrt(3.0)))


def test_gaussian_two_players_hand_computed() -> None:
    # spread sqrt(5000 + 5000) = 100, difference 100: Phi(1) = 0.841344746...
    p = win_probabilities([1600.0, 1500.0], [5000.0, 5000.0], "gaussian")
    assert p[0, 1] == pytest.approx(0.8413447460685429, abs=1e-12)
    assert p[1, 0] == pytest.approx(0.15865525393145707, abs=1e-12)
    assert p[0, 0] == p[1, 1] == 0.5
    places = expected_places(p)
    assert places == pytest.approx([1.15865525393145707, 1.8413447460685429], abs=1e-12)


def test_logistic_two_players_hand_computed() -> None:
    # z = 1: 1 / (1 + exp(-pi / sqrt 3)) = 0.8598204351...
    p = win_probabilities([1500.0, 1400.0], [2500.0, 7500.0], "logistic")
    assert p[0, 1] == pytest.approx(0.8598204351462735, abs=1e-12)
    assert p[0, 1] == pytest.approx(logistic(1.0), abs=1e-14)


def test_three_players_gaussian_by_hand() -> None:
    mu = [1800.0, 1500.0, 1500.0]
    var = [0.0, 45000.0, 45000.0]  # 0 + 45000 = 212.13^2; 45000 + 45000 = 300^2
    p = win_probabilities(mu, var, "gaussian")
    p01 = phi(300.0 / math.sqrt(45000.0))
    assert p[0, 1] == pytest.approx(p01, abs=1e-12)
    assert p[0, 2] == pytest.approx(p01, abs=1e-12)
    assert p[1, 2] == pytest.approx(0.5, abs=1e-15)
    e = expected_places(p)
    assert e[0] == pytest.approx(1.0 + 2.0 * (1.0 - p01), abs=1e-12)
    assert e[1] == pytest.approx(1.0 + p01 + 0.5, abs=1e-12)
    assert e.sum() == pytest.approx(6.0, abs=1e-12)


def test_codeforces_formula_for_cfsys_and_codeforces() -> None:
    # 400 points apart: 1 / (1 + 10^-1) = 10/11 (the Elo / Codeforces formula)
    for name in ("cfsys", "codeforces"):
        system = get_system(name)
        pred = predict(system, ["a", "b"], {"a": (1900.0, 350.0, 3), "b": (1500.0, 350.0, 3)})
        assert pred.win_probability[0, 1] == pytest.approx(10.0 / 11.0, abs=1e-12), name
        assert pred.model.kind == "logistic"


def test_elo_mmr_uses_its_beta_and_drift() -> None:
    system = get_system("mmr")  # weight_limit 0.2, sig_limit 80
    # beta^2 = (1 + 1/0.2) 80^2 = 38400, gamma^2 = 0.2 * 80^2 = 1280
    model = performance_model(system, np.array([80.0, 100.0]), np.array([5, 5]))
    assert model.kind == "logistic"
    assert model.variance == pytest.approx([80**2 + 1280 + 38400, 100**2 + 1280 + 38400])
    pred = predict(system, ["x", "y"], {"x": (1600.0, 80.0, 5), "y": (1500.0, 80.0, 5)})
    z = 100.0 / math.sqrt(2 * (6400 + 1280 + 38400))
    assert pred.win_probability[0, 1] == pytest.approx(logistic(z), abs=1e-12)
    assert pred.win_probability[0, 1] == pytest.approx(0.6450778702530026, abs=1e-12)  # mpmath


def test_elo_mmchi_is_gaussian_and_noob_delay_widens_newcomers() -> None:
    mmx = get_system("mmx")
    pred = predict(mmx, ["x", "y"], {"x": (1600.0, 80.0, 5), "y": (1500.0, 80.0, 5)})
    assert pred.model.kind == "gaussian"
    z = 100.0 / math.sqrt(2 * (6400 + 1280 + 38400))
    assert pred.win_probability[0, 1] == pytest.approx(phi(z), abs=1e-12)
    delayed = get_system("mmr", noob_delay=(0.5,))
    m = performance_model(delayed, np.array([80.0, 80.0]), np.array([0, 1]))
    # the newcomer's round weight is 0.2 * 0.5 = 0.1: beta^2 = 11 * 6400, gamma^2 = 640
    assert m.variance[0] == pytest.approx(6400 + 640 + 11 * 6400)
    assert m.variance[1] == pytest.approx(6400 + 1280 + 6 * 6400)


def test_topcoder_and_trueskill_models() -> None:
    tc = predict(get_system("tcsys"), ["a", "b"],
                 {"a": (1700.0, 300.0, 2), "b": (1500.0, 400.0, 2)})
    assert tc.win_probability[0, 1] == pytest.approx(phi(200.0 / 500.0), abs=1e-12)
    ts = predict(get_system("trueskill"), ["a", "b"],
                 {"a": (1700.0, 100.0, 2), "b": (1500.0, 100.0, 2)})
    v = 100.0**2 + 35.0**2 + 175.0**2
    assert ts.win_probability[0, 1] == pytest.approx(phi(200.0 / math.sqrt(2 * v)), abs=1e-12)


def test_generic_fallback_reduces_to_elo_for_certain_players() -> None:
    system = get_system("elo-r")
    pred = predict(system, ["a", "b"], {"a": (1900.0, 0.0, 1), "b": (1500.0, 0.0, 1)})
    assert "fallback" in pred.model.description
    assert pred.win_probability[0, 1] == pytest.approx(10.0 / 11.0, abs=1e-12)
    assert ELO_BETA == pytest.approx(315.0892220666189, abs=1e-9)


def test_unknown_handles_are_newcomers() -> None:
    system = get_system("mmr")
    pred = predict(system, ["old", "new"], {"old": (1500.0, 350.0, 0)})
    assert pred.known.tolist() == [True, False]
    assert pred.mu.tolist() == [1500.0, 1500.0]
    assert pred.sigma.tolist() == [350.0, 350.0]
    assert pred.win_probability[0, 1] == pytest.approx(0.5, abs=1e-15)
    assert pred.expected_place == pytest.approx([1.5, 1.5])


def test_monte_carlo_agrees_for_gaussian_performances() -> None:
    rng = np.random.default_rng(7)
    mu = np.array([1700.0, 1550.0, 1500.0, 1200.0])
    var = np.array([150.0, 250.0, 200.0, 300.0]) ** 2
    n = 200_000
    perf = mu + rng.standard_normal((n, 4)) * np.sqrt(var)
    p = win_probabilities(mu, var, "gaussian")
    for i in range(4):
        for j in range(4):
            if i != j:
                assert np.mean(perf[:, i] > perf[:, j]) == pytest.approx(p[i, j], abs=0.005)
    rank = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)  # 1 + players ahead
    assert rank.mean(axis=0) == pytest.approx(expected_places(p), abs=0.01)


def test_zero_variance_is_deterministic() -> None:
    p = win_probabilities([1.0, 1.0, 2.0], [0.0, 0.0, 0.0])
    assert p.tolist() == [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [1.0, 1.0, 0.5]]
    assert expected_places(p).tolist() == [2.5, 2.5, 1.0]


@pytest.mark.parametrize(
    ("handles", "message"),
    [([], "at least one"), (["a", "a"], "listed twice"), (["a", ""], "non-empty")],
)
def test_bad_handle_lists(handles: list[str], message: str) -> None:
    with pytest.raises(PodiumError, match=message):
        predict(get_system("mmr"), handles, {})


def test_bad_weight_and_arrays() -> None:
    with pytest.raises(PodiumError, match="weight"):
        predict(get_system("mmr"), ["a"], {}, weight=0.0)
    with pytest.raises(ValueError, match="variance"):
        win_probabilities([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="mu must be finite"):
        win_probabilities([1.0, math.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="kind"):
        win_probabilities([1.0, 2.0], [1.0, 1.0], "cauchy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="square"):
        expected_places(np.zeros((2, 3)))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 4000), st.floats(0, 500)), min_size=1, max_size=25
    ),
    st.sampled_from(["gaussian", "logistic"]),
)
def test_probabilities_are_complementary_and_places_sum(
    players: list[tuple[float, float]], kind: str
) -> None:
    mu = np.array([m for m, _ in players])
    var = np.array([s for _, s in players]) ** 2 + 1.0
    p = win_probabilities(mu, var, kind)  # type: ignore[arg-type]
    n = mu.size
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p + p.T, 1.0, atol=0, rtol=0)
    e = expected_places(p)
    assert e.sum() == pytest.approx(n * (n + 1) / 2, abs=1e-9 * n * n)
    assert np.all(e >= 1.0 - 1e-12) and np.all(e <= n + 1e-12)
    # same uncertainty: a higher rating never gives a worse expected place
    q = win_probabilities(mu, np.full(n, 200.0**2), kind)  # type: ignore[arg-type]
    eq = expected_places(q)
    order = np.argsort(-mu, kind="stable")
    assert np.all(np.diff(eq[order]) >= -1e-12)
