"""Outcome probabilities (:mod:`podium.outcomes`): places, P(first) and draws of sides
whose performances are normal, logistic or sums of logistics, checked against closed
forms, against independent numerical integration (``scipy.integrate.quad``, nested for
a team's sum), against openskill 6.2.0's ``predict_win`` / ``predict_draw``, and
against seeded simulations of every system's own performance model."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats  # type: ignore[import-untyped]
from scipy.special import roots_legendre  # type: ignore[import-untyped]

from podium.errors import PodiumError
from podium.outcomes import (
    MAX_GRID,
    draw_probability,
    first_probabilities,
    margin_probabilities,
    openskill_draw,
    openskill_three_way,
    openskill_win,
    pair_places,
    place_probabilities,
    side_model,
    three_way,
)
from podium.predict import draw_margin, predict, predict_teams
from podium.systems import SYSTEMS, get_system
from podium.systems.base import PerformanceKind


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def test_two_normal_sides_closed_form() -> None:
    sides = side_model([3.0, 1.0], [2.0, 3.0])
    p = phi(2.0 / math.sqrt(5.0))
    place = place_probabilities(sides)
    np.testing.assert_allclose(place, [[p, 1 - p], [1 - p, p]], atol=1e-13)
    np.testing.assert_allclose(first_probabilities(sides), [p, 1 - p], atol=1e-13)
    # a draw margin m: P(|d| <= m) for d ~ N(2, 5)
    m = 0.75
    draw = phi((m - 2.0) / math.sqrt(5.0)) - phi((-m - 2.0) / math.sqrt(5.0))
    assert draw_probability(sides, m) == pytest.approx(draw, abs=1e-14)
    np.testing.assert_allclose(three_way(sides, m), [phi((2.0 - m) / math.sqrt(5.0)), draw,
                                                     phi((-2.0 - m) / math.sqrt(5.0))],
                               atol=1e-14)


@pytest.mark.parametrize("kind", ["gaussian", "logistic"])
def test_pair_places_are_place_probabilities_bit_for_bit(kind: PerformanceKind) -> None:
    """The batch of two-player matches (the calibration of a history of 1v1 games) has
    its own compiled kernel: every value is the general quadrature's, bit for bit,
    for equal sides, far-apart sides, a very narrow side against a wide one, and a
    match whose grid would be too large (NaN there, a ValueError one by one)."""
    rng = np.random.default_rng(7)
    n = 400
    mu = rng.normal(1500.0, 300.0, (n, 2))
    var = np.exp(rng.uniform(math.log(1e-2), math.log(1e6), (n, 2)))
    mu[:40, 1], var[:40, 1] = mu[:40, 0], var[:40, 0]  # equal sides
    mu[40:80, 1] = mu[40:80, 0] + rng.normal(0.0, 1e4, 40)  # far apart
    var[80:120, 0] = 1e-6  # narrow against wide
    mu[120], var[120] = [0.0, 1e6], [1e-4, 1e-4]  # more grid points than MAX_GRID
    got = pair_places(mu, var, kind)
    assert got.shape == (n, 2, 2)
    for r in range(n):
        try:
            want = place_probabilities(side_model(mu[r], var[r], kind=kind))
        except ValueError:
            assert np.isnan(got[r]).all()
            continue
        assert np.array_equal(got[r], want), (r, got[r], want)
    assert np.isnan(got[120]).all()


def test_equal_sides_are_uniform_over_places() -> None:
    for kind in ("gaussian", "logistic"):
        place = place_probabilities(side_model(np.zeros(5), np.ones(5), kind=kind))
        np.testing.assert_allclose(place, 0.2, atol=1e-12)


def test_three_normal_sides_against_quad() -> None:
    mu, var = [0.0, 0.5, -0.3], [1.0, 2.0, 0.5]
    sd = np.sqrt(var)
    place = place_probabilities(side_model(mu, var))

    def first(t: int) -> float:
        def f(x: float) -> float:
            others = np.prod([stats.norm.cdf(x, mu[j], sd[j]) for j in range(3) if j != t])
            return float(stats.norm.pdf(x, mu[t], sd[t]) * others)
        return float(integrate.quad(f, -30, 30, epsabs=1e-14, limit=200)[0])

    def last(t: int) -> float:
        def f(x: float) -> float:
            others = np.prod([stats.norm.sf(x, mu[j], sd[j]) for j in range(3) if j != t])
            return float(stats.norm.pdf(x, mu[t], sd[t]) * others)
        return float(integrate.quad(f, -30, 30, epsabs=1e-14, limit=200)[0])

    for t in range(3):
        assert place[t, 0] == pytest.approx(first(t), abs=1e-12)
        assert place[t, 2] == pytest.approx(last(t), abs=1e-12)
    np.testing.assert_allclose(place.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(place.sum(axis=1), 1.0, atol=1e-12)


def test_logistic_players_against_quad() -> None:
    mu, var = np.array([0.0, 0.5, -0.3]), np.array([1.0, 2.0, 0.5])
    s = np.sqrt(3.0 * var) / np.pi
    place = place_probabilities(side_model(mu, var, kind="logistic"))
    for t in range(3):
        def f(x: float, t: int = t) -> float:
            others = np.prod([stats.logistic.cdf(x, mu[j], s[j]) for j in range(3) if j != t])
            return float(stats.logistic.pdf(x, mu[t], s[t]) * others)
        want = integrate.quad(f, -80, 80, epsabs=1e-14, limit=400)[0]
        assert place[t, 0] == pytest.approx(want, abs=1e-10)
    # two players: the difference of two logistics is not logistic
    w = margin_probabilities(side_model([1.0, 0.0], [1.0, 1.0], kind="logistic"))[0, 1]
    want = integrate.quad(lambda x: stats.logistic.pdf(x, 0.0, math.sqrt(3) / math.pi)
                          * stats.logistic.sf(x, 1.0, math.sqrt(3) / math.pi), -60, 60,
                          epsabs=1e-14)[0]
    assert w == pytest.approx(want, abs=1e-11)
    logistic_of_difference = 1.0 / (1.0 + math.exp(-math.pi / math.sqrt(3.0) / math.sqrt(2)))
    assert abs(w - logistic_of_difference) > 1e-3  # the pairwise formula's approximation


def test_logistic_team_sum_against_nested_quadrature() -> None:
    # team A = L1 + 0.5 L2 (two members, the second playing half), team B = L3; the
    # independent reference: P(A > B) = int f_3(x) int f_1(y) S_2((x - y) / 0.5) dy dx
    # by Gauss-Legendre quadrature on [-30, 30] in both variables (2000 nodes each)
    mu = np.array([0.3, 0.2, 0.0])
    var = np.array([1.0, 0.25, 2.0])
    s = np.sqrt(3.0 * var) / np.pi
    sides = side_model(mu, var, [0, 2, 3], [1.0, 0.5, 1.0], "logistic")
    nodes, weights = roots_legendre(2000)
    x, wx = 30.0 * nodes, 30.0 * weights

    def pdf(y: np.ndarray, m: float, sc: float) -> np.ndarray:
        e = np.exp(-np.abs(y - m) / sc)
        return np.asarray(e / (sc * (1.0 + e) ** 2))

    def sf(y: np.ndarray, m: float, sc: float) -> np.ndarray:
        return np.asarray(0.5 - 0.5 * np.tanh(0.5 * (y - m) / sc))

    surv_a = (pdf(x[None, :], mu[0], s[0]) * wx[None, :]
              * sf((x[:, None] - x[None, :]) / 0.5, mu[1], s[1])).sum(axis=1)
    want = float((pdf(x, mu[2], s[2]) * wx * surv_a).sum())
    assert place_probabilities(sides)[0, 0] == pytest.approx(want, abs=1e-10)
    assert margin_probabilities(sides)[0, 1] == pytest.approx(want, abs=1e-10)


def test_first_probabilities_equal_the_first_place_column() -> None:
    rng = np.random.default_rng(4)
    for kind in ("gaussian", "logistic"):
        mu = rng.normal(0, 2, 12)
        var = rng.uniform(0.5, 3, 12)
        off = [0, 3, 4, 8, 9, 12]
        sides = side_model(mu, var, off, rng.uniform(0.3, 1, 12), kind)  # type: ignore[arg-type]
        place = place_probabilities(sides)
        np.testing.assert_allclose(first_probabilities(sides), place[:, 0], atol=1e-12)
        np.testing.assert_allclose(place.sum(axis=0), 1.0, atol=1e-11)
        np.testing.assert_allclose(place.sum(axis=1), 1.0, atol=1e-11)
        w = margin_probabilities(sides)
        np.testing.assert_allclose(w + w.T, 1.0, atol=1e-11)
        # a stronger side (higher mean, same spread) is more often first
        same = side_model(np.arange(5.0), np.ones(5), kind=kind)  # type: ignore[arg-type]
        assert np.all(np.diff(first_probabilities(same)) > 0)


def test_openskill_formulas_against_openskill() -> None:
    models = pytest.importorskip("openskill.models")
    rng = np.random.default_rng(11)
    for cls in (models.PlackettLuce, models.ThurstoneMostellerFull, models.BradleyTerryPart):
        model = cls()
        for _ in range(20):
            sizes = rng.integers(1, 4, rng.integers(2, 6))
            teams = [[model.rating(mu=rng.normal(25, 5), sigma=rng.uniform(1, 9))
                      for _ in range(k)] for k in sizes]
            t_mu = [sum(r.mu for r in t) for t in teams]
            t_s2 = [sum(r.sigma**2 for r in t) for t in teams]
            np.testing.assert_allclose(openskill_win(t_mu, t_s2, model.beta),
                                       model.predict_win(teams), atol=1e-12)
            assert openskill_draw(t_mu, t_s2, model.beta, int(sizes.sum())) == pytest.approx(
                model.predict_draw(teams), abs=1e-12)
            if len(teams) == 2:
                three = openskill_three_way(t_mu, t_s2, model.beta, int(sizes.sum()))
                assert three.sum() == pytest.approx(1.0, abs=1e-14)
                assert three[1] == pytest.approx(model.predict_draw(teams), abs=1e-12)


@pytest.mark.parametrize("name", ["openskill-pl", "openskill-tm", "openskill-bt",
                                  "openskill-tmp", "openskill-btp"])
def test_openskill_systems_answer_openskill(name: str) -> None:
    models = pytest.importorskip("openskill.models")
    cls = {"openskill-pl": models.PlackettLuce, "openskill-tm": models.ThurstoneMostellerFull,
           "openskill-bt": models.BradleyTerryFull, "openskill-tmp":
           models.ThurstoneMostellerPart, "openskill-btp": models.BradleyTerryPart}[name]
    rng = np.random.default_rng(5)
    for balance in (False, True):
        system = get_system(name, balance=balance)
        model = cls(balance=balance)
        for _ in range(15):
            sizes = rng.integers(1, 4, rng.integers(2, 6))
            ratings: dict[str, tuple[float, float, int]] = {}
            teams = []
            os_teams = []
            for t, k in enumerate(sizes):
                names = [f"t{t}m{j}" for j in range(k)]
                for h in names:
                    ratings[h] = (float(rng.normal(25, 5)), float(rng.uniform(1, 9)), 3)
                teams.append((f"t{t}", names))
                os_teams.append([model.rating(mu=ratings[h][0], sigma=ratings[h][1])
                                 for h in names])
            pred = predict_teams(system, teams, ratings)
            np.testing.assert_allclose(pred.p_first, model.predict_win(os_teams), atol=1e-9)
            assert pred.p_draw == pytest.approx(model.predict_draw(os_teams), abs=1e-9)
        players = [f"t{t}m0" for t in range(3)]
        solo = predict(system, players, ratings)
        one = [[model.rating(mu=ratings[h][0], sigma=ratings[h][1])] for h in players]
        np.testing.assert_allclose(solo.p_first, model.predict_win(one), atol=1e-9)
        assert solo.p_draw == pytest.approx(model.predict_draw(one), abs=1e-9)


def _simulate(pred: object, n: int, rng: np.random.Generator,
              margin: float | None) -> tuple[np.ndarray, np.ndarray, float | None]:
    """P(first), P(place) and the pairwise draw share from ``n`` draws of the members'
    performances (normal or logistic with the model's variances), summed per side."""
    model = pred.model  # type: ignore[attr-defined]
    mu = pred.mu  # type: ignore[attr-defined]
    off = getattr(pred, "offsets", np.arange(mu.size + 1))
    w = getattr(pred, "member_weight", np.ones(mu.size))
    sd = np.sqrt(model.variance)
    n_sides = off.size - 1
    first = np.zeros(n_sides)
    place = np.zeros((n_sides, n_sides))
    draws = 0.0
    pairs = np.triu_indices(n_sides, 1)
    chunk = 100_000
    for _ in range(n // chunk):
        if model.kind == "gaussian":
            z = rng.standard_normal((chunk, mu.size))
        else:
            z = rng.logistic(size=(chunk, mu.size)) * (math.sqrt(3.0) / math.pi)
        perf = np.add.reduceat(w * (mu + sd * z), off[:-1], axis=1)
        rank = (perf[:, None, :] > perf[:, :, None]).sum(axis=2)  # sides above each
        first += np.bincount(np.argmax(perf, axis=1), minlength=n_sides)
        for t in range(n_sides):
            place[t] += np.bincount(rank[:, t], minlength=n_sides)
        if margin is not None:
            gap = np.abs(perf[:, pairs[0]] - perf[:, pairs[1]])
            draws += float((gap <= margin).mean(axis=1).sum())
    return first / n, place / n, None if margin is None else draws / n


@pytest.mark.slow
@pytest.mark.parametrize("name", [s for s in SYSTEMS if not s.startswith("openskill")])
def test_every_system_agrees_with_a_simulation_of_its_model(name: str) -> None:
    """10^6 seeded draws of the system's own performance model (members normal or
    logistic with the model's variances, a team the weighted sum): every P(first), every
    P(place) and P(draw) within 0.002 (the simulation's standard error is below 5e-4)."""
    system = get_system(name)
    mu0, sig0 = system.newcomer()
    rng = np.random.default_rng(sum(map(ord, name)))
    sd0 = float(np.sqrt(system.performance_model(np.array([sig0]), np.zeros(1, np.int64),
                                                 1.0).variance[0]))
    ratings = {f"p{i}": (float(mu0 + 0.6 * sd0 * rng.standard_normal()),
                         float(sig0 * rng.uniform(0.3, 1.0)), int(rng.integers(0, 20)))
               for i in range(8)}
    teams = [("a", ["p0", ("p1", 0.5), "p2"]), ("b", ["p3"]), ("c", ["p4", "p5"])]
    margin = draw_margin(system, 6)
    for pred in (predict_teams(system, teams, ratings),
                 predict(system, ["p5", "p6", "p7"], ratings)):
        first, place, draw = _simulate(pred, 1_000_000, rng, margin)
        np.testing.assert_allclose(pred.p_first, first, atol=0.002)
        np.testing.assert_allclose(pred.place_probability, place, atol=0.002)
        np.testing.assert_allclose(pred.place_probability[:, 0], pred.p_first, atol=1e-12)
        if margin is None:
            assert pred.p_draw is None
        else:
            assert pred.p_draw == pytest.approx(draw, abs=0.002)


def test_draw_models() -> None:
    ts = get_system("trueskill")
    assert draw_margin(ts, 2) == 2.0 * ts.eps
    for name in ("mmr", "glicko", "codeforces", "tcsys", "elo-single"):
        assert draw_margin(get_system(name), 2) is None
    ratings = {"a": (1550.0, 100.0, 5), "b": (1500.0, 80.0, 5)}
    pred = predict(ts, ["a", "b"], ratings)
    var = pred.model.variance.sum()
    want = phi((2.0 * ts.eps - 50.0) / math.sqrt(var)) - phi((-2.0 * ts.eps - 50.0)
                                                              / math.sqrt(var))
    assert pred.p_draw == pytest.approx(want, abs=1e-14)
    assert predict(get_system("mmr"), ["a", "b"], ratings).p_draw is None

    class Declared:
        """A system declaring its draw model through ``draw_margin(n_players)``."""

        def draw_margin(self, n_players: int) -> float:
            return 10.0 * n_players

    assert draw_margin(Declared(), 3) == 30.0  # type: ignore[arg-type]


def test_one_player_and_more_draws() -> None:
    ts = get_system("trueskill")
    pred = predict(ts, ["solo"], {})
    assert pred.p_first.tolist() == [1.0] and pred.place_probability.tolist() == [[1.0]]
    assert pred.p_draw is None
    # three equal sides: each pair draws as a two-side match would
    pred = predict(ts, ["x", "y", "z"], {})
    two = predict(ts, ["x", "y"], {})
    assert pred.p_draw == pytest.approx(two.p_draw, abs=1e-14)
    np.testing.assert_allclose(pred.place_probability, 1 / 3, atol=1e-12)


def test_bad_sides() -> None:
    with pytest.raises(ValueError, match="variance 0"):
        side_model([0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="offsets"):
        side_model([0.0, 1.0], [1.0, 1.0], [0, 2, 2])
    with pytest.raises(ValueError, match="kind"):
        side_model([0.0, 1.0], [1.0, 1.0], kind="cauchy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="too far apart"):
        place_probabilities(side_model([0.0, 1e9], [1.0, 1.0]))
    assert MAX_GRID > 1000
    with pytest.raises(ValueError, match="margin"):
        draw_probability(side_model([0.0, 1.0], [1.0, 1.0]), -1.0)
    with pytest.raises(ValueError, match="two sides"):
        three_way(side_model([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]), 0.5)
    with pytest.raises(ValueError, match="n_players"):
        openskill_draw([1.0, 2.0], [1.0, 1.0], 1.0, 1)
    # a player whose performance is certain has no place distribution: named
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tc = get_system("tcsys")
    with pytest.raises(PodiumError, match="'b'"):
        predict(tc, ["a", "b"], {"a": (1500.0, 200.0, 3), "b": (1500.0, 0.0, 3)})
