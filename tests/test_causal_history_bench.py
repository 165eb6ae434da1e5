"""benchmarks/causal_history.py: the runs with the bounded update between refits solve
``whr``'s refits to ``--whr-refit-tol`` (a refit at the benchmark's 1e-3 leaves errors
above the update's ``update_tol``, and every update then chases them over the whole
history)."""

from __future__ import annotations

import argparse

from _bench_scripts import load_benchmark


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
