"""Calibration scores (:mod:`podium.evaluation.calibration`): log-loss, Brier score and
expected calibration error on hand-computed cases, the whole evaluation on a history
whose predictions are known in closed form, and true probabilities scoring as
calibrated."""

from __future__ import annotations

import math

import numpy as np
import pytest

from podium import Contest
from podium.evaluation import evaluate
from podium.evaluation.calibration import (
    CalibrationAccumulator,
    expected_calibration_error,
    multiclass_brier,
    multiclass_log_loss,
    reliability,
    round_outcomes,
)
from podium.evaluation.cli import markdown_table
from podium.systems import get_system


def phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def test_scores_by_hand() -> None:
    assert multiclass_log_loss([0.5, 0.3, 0.2], [0, 1, 0]) == pytest.approx(-math.log(0.3))
    # a tie for first between sides 0 and 1: y = (1/2, 1/2, 0)
    assert multiclass_log_loss([0.5, 0.3, 0.2], [0.5, 0.5, 0]) == pytest.approx(
        -0.5 * math.log(0.5) - 0.5 * math.log(0.3))
    assert multiclass_brier([0.5, 0.3, 0.2], [0, 1, 0]) == pytest.approx(
        0.25 + 0.49 + 0.04)
    assert multiclass_log_loss([1.0, 0.0], [0.0, 1.0]) == pytest.approx(-math.log(1e-15))
    with pytest.raises(ValueError, match="outcomes"):
        multiclass_brier([0.5, 0.5], [1.0])


def test_ece_and_reliability_by_hand() -> None:
    p = [0.05, 0.15, 0.15, 0.95]
    y = [0.0, 1.0, 0.0, 1.0]
    # bins: [0, .1): p .05, y 0 -> .05; [.1, .2): p .15, y .5 -> .35 (two); [.9, 1]: .05
    assert expected_calibration_error(p, y) == pytest.approx((0.05 + 2 * 0.35 + 0.05) / 4)
    mean_p, mean_y, count = reliability(p, y)
    assert count.tolist() == [1, 2, 0, 0, 0, 0, 0, 0, 0, 1]
    assert mean_p[1] == pytest.approx(0.15) and mean_y[1] == 0.5 and math.isnan(mean_y[5])
    assert reliability([1.0], [1.0])[2][-1] == 1  # p = 1 falls in the last bin
    assert expected_calibration_error([0.3, 0.3, 0.3], [1, 0, 0]) == pytest.approx(
        abs(0.3 - 1 / 3))
    assert math.isnan(expected_calibration_error([], []))


def test_round_outcomes() -> None:
    first, pair = round_outcomes([1, 0, 0, 3])
    assert first.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert pair[1, 0] == 1.0 and pair[0, 1] == 0.0 and pair[1, 2] == 0.5
    assert np.all(np.diag(pair) == 0.5)


def test_accumulator_by_hand() -> None:
    acc = CalibrationAccumulator()
    # round 1: two sides, A (p .7) wins; three outcomes (.6, .2, .2): A won
    r1 = acc.add_round([0.7, 0.3], [[0.5, 0.7], [0.3, 0.5]], [0, 1], [0.6, 0.2, 0.2])
    assert r1["first_log_loss"] == pytest.approx(-math.log(0.7))
    assert r1["first_brier"] == pytest.approx(2 * 0.09)
    assert r1["pair_log_loss"] == pytest.approx(-math.log(0.7))
    assert r1["three_log_loss"] == pytest.approx(-math.log(0.6))
    assert r1["three_brier"] == pytest.approx(0.16 + 0.04 + 0.04)
    # round 2: the same prediction, a draw
    r2 = acc.add_round([0.7, 0.3], [[0.5, 0.7], [0.3, 0.5]], [0, 0], [0.6, 0.2, 0.2])
    assert r2["first_log_loss"] == pytest.approx(-0.5 * math.log(0.7) - 0.5 * math.log(0.3))
    assert r2["three_log_loss"] == pytest.approx(-math.log(0.2))
    # round 3: three sides, the third wins; no three outcomes
    pair = np.array([[0.5, 0.6, 0.8], [0.4, 0.5, 0.7], [0.2, 0.3, 0.5]])
    r3 = acc.add_round([0.5, 0.3, 0.2], pair, [1, 2, 0])
    assert r3["first_log_loss"] == pytest.approx(-math.log(0.2))
    # pairs: (0, 1) p .6, side 0 ahead: y 1; (0, 2) p .8, y 0; (1, 2) p .7, y 0
    assert r3["pair_log_loss"] == pytest.approx(
        (-math.log(0.6) - math.log(0.2) - math.log(0.3)) / 3)
    assert r3["pair_brier"] == pytest.approx(2 * (0.16 + 0.64 + 0.49) / 3)
    assert math.isnan(r3["three_log_loss"])
    s = acc.summary()
    assert s["calibrated_contests"] == 3 and s["calibrated_pairs"] == 5
    assert s["three_way_contests"] == 2
    assert s["first_log_loss"] == pytest.approx(
        (r1["first_log_loss"] + r2["first_log_loss"] + r3["first_log_loss"]) / 3)
    assert s["three_brier"] == pytest.approx((r1["three_brier"] + r2["three_brier"]) / 2)
    # pairs, favourite's side: (.7, 1), (.7, .5), (.6, 1), (.8, 0), (.7, 0)
    fp, fy = acc.predictions("pair")
    assert sorted(zip(fp.tolist(), fy.tolist(), strict=True)) == sorted(
        [(0.7, 1.0), (0.7, 0.5), (0.6, 1.0), (0.8, 0.0), (0.7, 0.0)])
    want = (abs(0.6 - 1.0) + 3 * abs(0.7 - 0.5) + abs(0.8 - 0.0)) / 5
    assert s["pair_ece"] == pytest.approx(want)


def test_evaluate_scores_equal_players_by_hand() -> None:
    """Seven players each win one warm-up match against a newcomer, so that they hold
    equal ratings with one earlier contest; then three of them play a three-way
    contest, two a match and two a drawn match: P(first) is 1/n each, and under
    TrueSkill's draw margin 2 eps the draw probability is 2 Phi(2 eps / c) - 1 with
    ``c`` the spread of the performance gap of two such players."""
    t0 = 1_700_000_000
    warm = [Contest.from_places([w, f"loser-{w}"], [1, 2], name=f"warm {w}",
                                time_seconds=t0 + k) for k, w in enumerate("abcdefg")]
    history = [
        *warm,
        Contest.from_places(["a", "b", "c"], [1, 2, 3], name="three", time_seconds=t0 + 60),
        Contest.from_places(["d", "e"], [1, 2], name="win", time_seconds=t0 + 120),
        Contest.from_places(["f", "g"], [1, 1], name="draw", time_seconds=t0 + 180),
    ]
    ts = get_system("trueskill")
    res = evaluate(history, ts, train_contests=len(warm), min_history=1, warmup=False,
                   keep_rater=True)
    assert res.rater is not None
    sigma = float(res.rater.history("f")["sigma"].iloc[0])  # after its one warm-up win
    m = res.metrics
    assert m["calibrated_contests"] == 3 and m["calibrated_pairs"] == 5
    # P(first): ln 3, then ln 2, then (a tie) ln 2
    assert m["first_log_loss"] == pytest.approx((math.log(3) + 2 * math.log(2)) / 3, abs=1e-9)
    assert m["first_brier"] == pytest.approx((6 / 9 + 0.5 + 0.0) / 3, abs=1e-9)
    # 1/3 three times (outcomes 1, 0, 0) and 1/2 four times (1, 0, 1/2, 1/2): calibrated
    assert m["first_ece"] == pytest.approx(0.0, abs=1e-9)
    assert m["pair_log_loss"] == pytest.approx(math.log(2), abs=1e-12)
    assert m["pair_brier"] == pytest.approx((4 * 0.5 + 0.0) / 5, abs=1e-12)
    c = math.sqrt(2 * (sigma**2 + 35.0**2 + 175.0**2))  # two such players' performance gap
    draw = 2 * phi(2 * ts.eps / c) - 1
    assert m["three_way_contests"] == 2
    assert m["three_log_loss"] == pytest.approx(
        (-math.log((1 - draw) / 2) - math.log(draw)) / 2, abs=1e-9)
    assert m["three_brier"] == pytest.approx(
        (((1 - draw) / 2 - 1) ** 2 + draw**2 + ((1 - draw) / 2) ** 2
         + 2 * ((1 - draw) / 2) ** 2 + (draw - 1) ** 2) / 2, abs=1e-9)
    # a system without a draw model scores no three outcomes; the table shows the scores
    mmr = evaluate(history, "mmr", train_contests=len(warm), min_history=1, warmup=False)
    assert mmr.metrics["three_way_contests"] == 0 and math.isnan(mmr.metrics["three_brier"])
    table = markdown_table([res.to_dict(), mmr.to_dict()])
    assert "| LL first | Brier first | ECE first | LL pairs |" in table
    assert "LL W/D/L" in table and table.splitlines()[-1].endswith("| – | – |")


def test_true_probabilities_are_calibrated() -> None:
    rng = np.random.default_rng(3)
    acc = CalibrationAccumulator()
    for _ in range(4000):
        p = float(rng.uniform(0.05, 0.95))
        won = rng.uniform() < p
        acc.add_round([p, 1 - p], [[0.5, p], [1 - p, 0.5]], [0, 1] if won else [1, 0])
    s = acc.summary()
    assert s["first_ece"] < 0.03 and s["pair_ece"] < 0.03
    # a constant 0.9 for the first side is miscalibrated and scores worse
    bad = CalibrationAccumulator()
    for row in acc.predictions("first")[1].reshape(-1, 2):
        bad.add_round([0.9, 0.1], [[0.5, 0.9], [0.1, 0.5]], [0, 1] if row[0] == 1 else [1, 0])
    assert bad.summary()["first_ece"] > 0.3
    assert bad.summary()["first_log_loss"] > s["first_log_loss"]
