"""``evaluate`` rates with the batch path of ``podium rate`` (``Rater.extend``) and scores
all rounds at once; every value must be the one of rating and scoring contest by
contest (``Rater.add``, ``MetricAccumulator.add_round``,
``CalibrationAccumulator.add_contest``), bit for bit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from podium import Contest, Rater
from podium.evaluation import evaluate
from podium.evaluation.calibration import CalibrationAccumulator
from podium.evaluation.metrics import MetricAccumulator
from podium.evaluation.runner import ratings_before, train_size
from podium.io.synthetic_teams import lobby_contests


def mixed_history(n: int = 240, players: int = 40, seed: int = 0) -> list[Contest]:
    """Rounds of 1 to 60 players (small and large for the compiled loop), ties, draws."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        k = int(rng.choice([1, 2, 2, 2, 2, 3, 5, 9, 20, 60]))
        k = min(k, players)
        names = [f"p{i}" for i in rng.choice(players, size=k, replace=False)]
        places = (np.ones(k, dtype=int) if rng.random() < 0.08
                  else rng.integers(1, max(3, k + 1), size=k))
        out.append(Contest.from_places(names, places, name=f"c{t}", time_seconds=3600 * t))
    return out


def one_by_one(contests: list[Contest], system: str, min_history: int = 5
               ) -> tuple[dict[str, float], pd.DataFrame]:
    """The evaluation contest by contest (the protocol, written out)."""
    rater = Rater(system)
    n_train = train_size(len(contests), 0.1)
    acc = MetricAccumulator(min_history=min_history)
    cal = CalibrationAccumulator()
    table = rater.players
    for t, c in enumerate(contests):
        if t >= n_train:
            idx, _ = table.lookup(c.handles)
            known = idx >= 0
            mu0, sig0 = rater.system.newcomer(c)
            mu = np.full(len(c), mu0)
            sig = np.full(len(c), sig0)
            n_prev = np.zeros(len(c), dtype=np.int64)
            mu[known] = table.mu[idx[known]]
            sig[known] = table.sigma[idx[known]]
            n_prev[known] = table.contests[idx[known]]
            if not c.is_outcome_free:
                acc.add_round(mu, c.lo, c.hi, n_prev, index=t)
            cal.add_contest(rater.system, c, mu, sig, n_prev, min_history=min_history,
                            index=t)
        rater.add(c)
    metrics = {**acc.summary(), **cal.summary()}
    per_round = acc.per_round().merge(pd.DataFrame.from_records(cal.records), on="index",
                                      how="left")
    return metrics, per_round


def same(a: Any, b: Any) -> bool:
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return both_nan or a == b


@pytest.mark.parametrize("system", ["glicko", "trueskill", "tcsys", "openskill-pl"])
def test_batch_evaluation_is_contest_by_contest_bit_for_bit(system: str) -> None:
    cs = mixed_history()
    metrics, per_round = one_by_one(cs, system)
    res = evaluate(cs, system, warmup=False)
    assert res.metrics.keys() == metrics.keys()
    differ = {k: (res.metrics[k], v) for k, v in metrics.items() if not same(res.metrics[k], v)}
    assert not differ
    pd.testing.assert_frame_equal(res.per_round, per_round, check_exact=True)
    assert res.metrics["calibrated_contests"] > 50  # two-player contests were batched


def test_ratings_before_are_the_tables_before_each_contest() -> None:
    cs = mixed_history(120)
    r = Rater("glicko")
    r.extend(cs)
    which = list(range(0, 120, 7))
    got = ratings_before(r, cs, which)
    step = Rater("glicko")
    k = 0
    for t, c in enumerate(cs):
        if t in which:
            a, b = int(got.offsets[k]), int(got.offsets[k + 1])
            idx, _ = step.players.lookup(c.handles)
            known = idx >= 0
            assert np.array_equal(got.n_prev[a:b][known], step.players.contests[idx[known]])
            assert np.array_equal(got.mu[a:b][known], step.players.mu[idx[known]])
            assert np.array_equal(got.sigma[a:b][known], step.players.sigma[idx[known]])
            assert not got.n_prev[a:b][~known].any()
            assert np.array_equal(got.lo[a:b], c.lo)
            k += 1
        step.add(c)
    assert k == len(which)


def test_metric_rounds_at_once_equal_one_by_one() -> None:
    rng = np.random.default_rng(4)
    one = MetricAccumulator(min_history=2, top_k=3)
    many = MetricAccumulator(min_history=2, top_k=3)
    mus, los, his, prevs, sizes = [], [], [], [], []
    for n in [2, 1, 0, 7, 8, 30, 49, 60, 3, 2]:  # around SMALL_ROUND and the sum blocks
        places = np.sort(rng.integers(1, max(2, n // 2 + 1), size=n))
        c = Contest.from_places([f"x{i}" for i in range(n)], places) if n else None
        lo = c.lo if c is not None else np.zeros(0, dtype=np.int64)
        hi = c.hi if c is not None else np.zeros(0, dtype=np.int64)
        mu = rng.normal(1500, 300, n)
        prev = rng.integers(0, 4, n)
        one.add_round(mu, lo, hi, prev)
        mus.append(mu), los.append(lo), his.append(hi), prevs.append(prev), sizes.append(n)
    off = np.concatenate([[0], np.cumsum(sizes)])
    many.add_rounds(np.concatenate(mus), np.concatenate(los), np.concatenate(his),
                    np.concatenate(prevs), off, np.arange(len(sizes)))
    a, b = one.summary(), many.summary()
    assert all(same(a[k], b[k]) for k in a), (a, b)
    pd.testing.assert_frame_equal(one.per_round(), many.per_round(), check_exact=True)
    with pytest.raises(ValueError, match="offsets"):
        many.add_rounds(np.zeros(2), [0, 1], [0, 1], [1, 1], [0, 1], [0, 1])


def test_team_lobbies_score_as_before() -> None:
    cs = lobby_contests(60, 80, team_size=2, seed=2).contests
    res = evaluate(cs, "trueskill", warmup=False)
    assert res.metrics["matches"] > 0 and res.metrics["calibrated_contests"] > 0
    assert res.per_round["team_pair_inv"].notna().any()

