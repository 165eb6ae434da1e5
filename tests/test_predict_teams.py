"""Team predictions and match quality (:mod:`podium.predict`): hand-computed cases,
symmetry, sums of expected places, the reduction to the players' formulas, and the
errors naming team and player.  The HTTP round trip is in ``test_api_teams.py``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.errors import PodiumError
from podium.predict import (
    expected_team_places,
    match_quality,
    predict,
    predict_teams,
    team_performance,
    team_win_probability,
    win_probabilities,
)
from podium.systems import get_system

TS = get_system("trueskill")  # gaussian: v = sigma^2 + 35^2 + 175^2 = sigma^2 + 31850
CF = get_system("codeforces")  # logistic, v = beta^2 / 2, beta = 400 (pi / sqrt 3) / ln 10

RATINGS = {"a": (1700.0, 100.0, 4), "b": (1500.0, 50.0, 9), "c": (1600.0, 100.0, 2)}


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def test_two_teams_gaussian_hand_computed() -> None:
    # A = a + b: M = 3200, V = (100^2 + 31850) + (50^2 + 31850) = 76200
    # B = c + d (d a newcomer: 1500, 350): M = 3100, V = 41850 + 154350 = 196200
    p = team_win_probability(TS, ["a", "b"], ["c", "d"], RATINGS)
    assert p == pytest.approx(phi(100.0 / math.sqrt(76200.0 + 196200.0)), abs=1e-14)
    assert p == pytest.approx(0.5759723918, abs=1e-9)
    pred = predict_teams(TS, [("A", ["a", "b"]), ("B", ["c", "d"])], RATINGS)
    assert pred.team_mu.tolist() == [3200.0, 3100.0]
    assert pred.team_variance.tolist() == [76200.0, 196200.0]
    assert pred.known.tolist() == [True, True, True, False]
    assert pred.expected_place.tolist() == pytest.approx([2.0 - p, 1.0 + p], abs=1e-14)
    assert pred.match_quality == pytest.approx(1.0 - abs(2.0 * p - 1.0), abs=1e-14)


def test_partial_play_weights_hand_computed() -> None:
    # b plays half the round: M_A = 1700 + 0.5 * 1500 = 2450,
    # V_A = 41850 + 0.25 * (2500 + 31850) = 50437.5; B = c alone: 1600, 41850
    p = team_win_probability(TS, ["a", ("b", 0.5)], ["c"], RATINGS)
    assert p == pytest.approx(phi(850.0 / math.sqrt(50437.5 + 41850.0)), abs=1e-14)


def test_logistic_two_teams_hand_computed() -> None:
    # Codeforces: each member v = beta^2 / 2, so two certain pairs differ by
    # z = d / sqrt(2 beta^2) and P = 1 / (1 + exp(-pi z / sqrt 3))
    beta = 400.0 * (math.pi / math.sqrt(3.0)) / math.log(10.0)
    ratings = {"w": (2000.0, 0.0, 1), "x": (1800.0, 0.0, 1), "y": (1900.0, 0.0, 1),
               "z": (1700.0, 0.0, 1)}
    p = team_win_probability(CF, ["w", "x"], ["y", "z"], ratings)
    z = 200.0 / math.sqrt(2.0 * beta**2)
    assert p == pytest.approx(1.0 / (1.0 + math.exp(-math.pi * z / math.sqrt(3.0))), abs=1e-14)
    # one-member teams of weight 1 give the players' numbers exactly (Elo's formula)
    one = team_win_probability(CF, ["w"], ["x"], ratings)
    assert one == predict(CF, ["w", "x"], ratings).win_probability[0, 1]
    assert one == pytest.approx(1.0 / (1.0 + 10.0 ** (-200.0 / 400.0)), abs=1e-14)


def test_one_member_teams_equal_players() -> None:
    ratings = {**RATINGS, "e": (1450.0, 80.0, 30)}
    handles = ["a", "b", "c", "d", "e"]
    for name in ("mmr", "trueskill", "glicko", "tcsys"):
        system = get_system(name)
        solo = predict(system, handles, ratings, weight=0.7)
        teams = predict_teams(system, [(h, [h]) for h in handles], ratings, weight=0.7)
        np.testing.assert_array_equal(teams.win_probability, solo.win_probability)
        np.testing.assert_array_equal(teams.expected_place, solo.expected_place)
        assert teams.match_quality == solo.match_quality


def test_mirrored_teams_are_perfectly_balanced() -> None:
    ratings = {"a1": (1900.0, 60.0, 5), "a2": (1300.0, 200.0, 1),
               "b1": (1900.0, 60.0, 5), "b2": (1300.0, 200.0, 1),
               "c1": (1900.0, 60.0, 5), "c2": (1300.0, 200.0, 1)}
    pred = predict_teams(get_system("mmr"), {"A": ["a1", ("a2", 0.3)], "B": ["b1", ("b2", 0.3)],
                                             "C": ["c1", ("c2", 0.3)]}, ratings)
    assert pred.names == ("A", "B", "C")
    assert np.all(pred.win_probability == 0.5)
    assert pred.match_quality == 1.0
    assert pred.expected_place.tolist() == [2.0, 2.0, 2.0]


def test_foregone_conclusion_tends_to_zero() -> None:
    qs = []
    for gap in (0.0, 200.0, 800.0, 1600.0, 3000.0):
        ratings = {"s": (1500.0 + gap, 50.0, 9), "t": (1500.0, 50.0, 9)}
        qs.append(predict_teams(TS, [("S", ["s"]), ("T", ["t"])], ratings).match_quality)
    assert qs[0] == 1.0
    assert all(x > y for x, y in zip(qs[:4], qs[1:4], strict=False))
    assert qs[-1] < 1e-12 and qs[-1] <= qs[-2]


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 4), min_size=2, max_size=6),
       seed=st.integers(0, 2**31 - 1))
def test_symmetry_and_place_sums(sizes: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    teams = []
    ratings: dict[str, tuple[float, float, int]] = {}
    k = 0
    for t, s in enumerate(sizes):
        members: list[str | tuple[str, float]] = []
        for _ in range(s):
            h = f"p{k}"
            k += 1
            if rng.random() < 0.8:
                ratings[h] = (float(rng.normal(1500, 300)), float(rng.uniform(0, 300)),
                              int(rng.integers(0, 50)))
            members.append(h if rng.random() < 0.5 else (h, float(rng.uniform(0.05, 1.0))))
        teams.append((f"team {t}", members))
    for name in ("mmr", "trueskill"):
        pred = predict_teams(get_system(name), teams, ratings)
        p = pred.win_probability
        np.testing.assert_array_equal(p + p.T, np.ones_like(p))
        t = len(sizes)
        assert pred.expected_place.sum() == pytest.approx(t * (t + 1) / 2, abs=1e-9)
        assert 0.0 <= pred.match_quality <= 1.0
        # the order of the teams does not matter
        rev = predict_teams(get_system(name), teams[::-1], ratings)
        np.testing.assert_allclose(rev.win_probability, p[::-1, ::-1], atol=1e-15)
        np.testing.assert_allclose(
            expected_team_places(get_system(name), teams[::-1], ratings),
            pred.expected_place[::-1], atol=1e-12)


def test_team_performance_and_match_quality_arrays() -> None:
    m, v = team_performance([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0, 2, 3], [0.5, 1.0, 1.0])
    assert m.tolist() == [2.5, 3.0] and v.tolist() == [6.0, 6.0]
    p = win_probabilities([0.0, 1.0, 2.0], 1.0, "gaussian")
    pairs = [p[0, 1], p[0, 2], p[1, 2]]
    assert match_quality(p) == pytest.approx(1 - sum(abs(2 * x - 1) for x in pairs) / 3,
                                             abs=1e-15)
    with pytest.raises(ValueError, match="at least two"):
        match_quality([[0.5]])
    with pytest.raises(ValueError, match="square"):
        match_quality([0.5, 0.5])
    with pytest.raises(ValueError, match="at least one member; team #1"):
        team_performance([1.0, 2.0], 1.0, [0, 2, 2])
    with pytest.raises(ValueError, match="offsets must run from 0 to 2"):
        team_performance([1.0, 2.0], 1.0, [0, 1])
    with pytest.raises(ValueError, match=r"weights must be in \(0, 1\]; bad entry at index 1"):
        team_performance([1.0, 2.0], 1.0, [0, 2], [1.0, 1.5])


@pytest.mark.parametrize(("teams", "message"), [
    ([("A", ["a"])], "at least two teams, got 1"),
    ([("A", ["a"]), ("A", ["b"])], "two teams are named 'A'"),
    ([("A", ["a"]), ("", ["b"])], "team #1: the name must be a non-empty string"),
    ([("A", ["a"]), ("B", [])], "team 'B': members must be a non-empty list"),
    ([("A", ["a"]), ("B", "b")], "team 'B': members must be a non-empty list"),
    ([("A", ["a", "b"]), ("B", ["c", "a"])], r"player 'a' is in two teams \('A' and 'B'\)"),
    ([("A", ["a", "a"]), ("B", ["c"])], "player 'a' is twice in team 'A'"),
    ([("A", ["a"]), ("B", [("c", 0.0)])], r"team 'B', player 'c': the member weight must be "
                                          r"a number in \(0, 1\], got 0.0"),
    ([("A", ["a"]), ("B", [("c", 1.5)])], "got 1.5"),
    ([("A", ["a"]), ("B", [("c", True)])], "got True"),
    ([("A", ["a"]), ("B", [""])], "team 'B': every handle must be a non-empty string"),
    ([("A", ["a"]), ("B", [("c", 1, 2)])], "a member must be a handle or a"),
    (["A", "B"], "team #0 must be a"),
])
def test_bad_teams_are_named(teams: object, message: str) -> None:
    with pytest.raises(PodiumError, match=message):
        predict_teams(TS, teams, RATINGS)  # type: ignore[arg-type]


def test_bad_contest_weight() -> None:
    for w in (0, -1.0, math.inf, math.nan, True):
        with pytest.raises(PodiumError, match="weight must be finite and positive"):
            predict_teams(TS, [("A", ["a"]), ("B", ["b"])], RATINGS, weight=w)  # type: ignore[arg-type]
