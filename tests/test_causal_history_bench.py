"""benchmarks/causal_history.py: the runs with the bounded update between refits solve
``whr``'s refits to ``--whr-refit-tol`` (a refit at the benchmark's 1e-3 leaves errors
above the update's ``update_tol``, and every update then chases them over the whole
history); ``--clock monotone`` keeps the file's order of a data set whose times go
back once (Codeforces' fixed set)."""

from __future__ import annotations

import argparse

import pytest
from _bench_scripts import load_benchmark

from podium import Contest
from podium.errors import ContestError
from podium.evaluation.causal import evaluate_causal
from podium.evaluation.runner import evaluate
from podium.history import history_from_contests
from podium.io import synthetic_contests


def test_whr_refits_between_updates_are_solved_to_the_refit_tolerance() -> None:
    ch = load_benchmark("causal_history")
    args = argparse.Namespace(whr_tol=1e-3, whr_refit_tol=1e-4)
    base = ch.fixed_params("whr", args)
    assert base["tol"] == 1e-3
    assert ch.between_params("whr", base, {}, args) == {**base, "tol": 1e-4}
    # a tolerance given with --set whr:tol=... is kept, and a tighter --whr-tol too
    assert ch.between_params("whr", {**base, "tol": 5e-3}, {"tol": 5e-3}, args)["tol"] == 5e-3
    tight = argparse.Namespace(whr_tol=1e-6, whr_refit_tol=1e-4)
    assert ch.between_params("whr", ch.fixed_params("whr", tight), {}, tight)["tol"] == 1e-6
    # ttt's runs are unchanged
    ttt = ch.fixed_params("ttt", args)
    assert ch.between_params("ttt", ttt, {}, args) == ttt


def test_monotone_clock_keeps_the_order_and_lifts_a_time_that_goes_back() -> None:
    ch = load_benchmark("causal_history")
    day = 86400
    contests = [Contest([(f"a{k}", 0, 0), (f"b{k}", 1, 1)], name=f"c{k}", time_seconds=t)
                for k, t in enumerate([0, 5 * day, 3 * day, 4 * day, 9 * day])]
    with pytest.raises(ContestError, match="the time goes back"):
        history_from_contests(contests)
    mono = ch.clocked(contests, "monotone")
    assert [c.name for c in mono] == [c.name for c in contests]
    assert [c.time_seconds for c in mono] == [0, 5 * day, 5 * day, 5 * day, 9 * day]
    assert mono[0] is contests[0] and mono[1] is contests[1] and mono[4] is contests[4]
    assert contests[2].time_seconds == 3 * day  # copies, the input is left as it was
    assert history_from_contests(mono).history.n_contests == 5
    assert ch.clocked(contests, "data") == contests
    assert [c.time_seconds for c in ch.clocked(contests, "contests")] == [
        k * day for k in range(5)]


def test_fixed_point_check_scores_the_forecasts_the_evaluations_score() -> None:
    ch = load_benchmark("causal_history")
    contests = synthetic_contests(40, 12, seed=3)
    text, scores = ch.fixed_point_check(contests, 8, 3, 1, 0.01)
    assert "| mmr |" in text
    head = contests[:11]
    mmr = evaluate(head, "mmr", train_contests=8, extended=False).metrics["pair_inv"]
    causal = evaluate_causal(head, "mmr-smooth", params={"update_sweeps": 1, "tol": 0.01},
                             train_contests=8, extended=False).metrics["pair_inv"]
    assert scores["mmr"] == pytest.approx(mmr, abs=1e-9)
    assert scores["causal, 1 sweep(s) per contest"] == pytest.approx(causal, abs=1e-9)
    assert 50 < scores["fixed point"] <= 100
