"""benchmarks/mmr_plus_headroom.py: the look-ahead bound and the paired bootstrap
behind docs/mmr-plus.md, checked on small generated histories."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from podium.evaluation import evaluate
from podium.evaluation.runner import train_size
from podium.io.synthetic import synthetic_contests

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def headroom() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # the script imports its sibling _report
    try:
        spec = importlib.util.spec_from_file_location("mmr_plus_headroom",
                                                      BENCH / "mmr_plus_headroom.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(BENCH))
    return mod


@pytest.mark.parametrize("system", ["mmr", "mmr-plus"])
def test_rating_before_from_events_scores_as_evaluate(headroom: ModuleType, system: str) -> None:
    """The bound's first row (ratings rebuilt from the events) is what `podium eval`
    scores, to rounding."""
    contests = synthetic_contests(200, 30, seed=3)
    tab = headroom.event_table(contests, system)
    got = headroom.score(contests, tab, tab["before"], train_size(len(contests), 0.1))
    want = evaluate(contests, system, train_frac=0.1, extended=False).metrics
    assert got["pair_inv"] == pytest.approx(want["pair_inv"], abs=1e-9)
    assert got["rank_dev"] == pytest.approx(want["rank_dev"], abs=1e-9)


def test_window_means_by_hand(headroom: ModuleType) -> None:
    """One player with performances 1..6, then a second with 10, 20: the windows by hand."""
    perf = np.array([1.0, 10.0, 2.0, 20.0, 3.0, 4.0, 5.0, 6.0])
    player = np.array([0, 1, 0, 1, 0, 0, 0, 0])
    order = np.lexsort((np.arange(player.size), player))
    starts = np.array([0, 6])  # in sorted order: player 0's six rows, then player 1's two
    before = np.array([np.nan, np.nan, 1.0, 10.0, 2.0, 3.0, 4.0, 5.0])
    tab = {"perf": perf, "order": order, "starts": starts, "before": before}
    w = headroom.window_means(tab, 1)
    causal, sym, mixed = (w[k] for k in w)
    # player 0's rows are 0, 2, 4, 5, 6, 7 (performances 1..6); row 4 holds performance 3
    assert causal[4] == pytest.approx((1 + 2) / 2)     # the last two
    assert sym[4] == pytest.approx((2 + 4) / 2)        # one before, one after, not itself
    assert mixed[4] == pytest.approx(0.5 * 2.0 + 0.5 * 4.0)
    assert causal[0] == 0.0                             # a debut has no past: mean of none
    assert mixed[7] == pytest.approx(5.0)               # no future: the rating before
    assert sym[3] == pytest.approx(10.0)                # player 1's second row: only its first


def test_paired_bootstrap(headroom: ModuleType) -> None:
    rng = np.random.default_rng(1)
    a = pd.DataFrame({"n_experienced": rng.integers(1, 50, 40),
                      "pair_inv": rng.uniform(60, 90, 40)}, index=np.arange(40))
    assert headroom.paired_bootstrap(a, a) == (0.0, 0.0, 0.0, 0.0)
    b = a.assign(pair_inv=a["pair_inv"] - 1.5)
    v, se, lo, hi = headroom.paired_bootstrap(a, b)
    assert v == pytest.approx(1.5) and se == pytest.approx(0.0, abs=1e-12)
    assert lo == pytest.approx(1.5) and hi == pytest.approx(1.5)
    noisy = a.assign(pair_inv=a["pair_inv"] + rng.normal(0, 5, 40))
    v, se, lo, hi = headroom.paired_bootstrap(noisy, a)
    assert se > 0 and lo < v < hi
    with pytest.raises(SystemExit, match="different players"):
        headroom.paired_bootstrap(a, a.assign(n_experienced=a["n_experienced"] + 1))
