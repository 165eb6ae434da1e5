"""The lobby benchmarks (benchmarks/calibration_table.py, bench_matchmaking.py,
bench_outcomes.py) on tiny inputs: the football reader, the base-rate row, the random
splits' scoring and the queue simulation."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest
from _bench_scripts import load_benchmark

from podium.predict import predict_teams
from podium.systems import get_system


def test_football_reader_and_base_rates(tmp_path: Path) -> None:
    ct = load_benchmark("calibration_table")
    (tmp_path / "football").mkdir()
    (tmp_path / "football" / "results.csv").write_text(
        "date,home_team,away_team,home_score,away_score,tournament,city,country,neutral\n"
        "1872-11-30,Scotland,England,0,0,Friendly,Glasgow,Scotland,FALSE\n"
        "1873-03-08,England,Scotland,4,2,Friendly,London,England,FALSE\n"
        "1874-03-07,Scotland,England,1,2,Friendly,Glasgow,Scotland,FALSE\n"
        "2030-01-01,Wales,England,NA,NA,Friendly,Cardiff,Wales,FALSE\n", encoding="utf-8")
    ct.HOME_OUTCOME.clear()
    contests = ct.football(tmp_path)
    assert len(contests) == 3 and ct.HOME_OUTCOME == [1, 0, 2]  # the unplayed match left out
    midnight = dt.datetime(1872, 11, 30, tzinfo=dt.UTC).timestamp()
    assert contests[0].is_outcome_free and contests[0].time_seconds == midnight
    assert contests[2].handles[0] == "England"  # the winner first
    row = ct._base_rates([0, 1, 2])
    # frequencies 1/3 each: log-loss ln 3, Brier (2/3)^2 + 2 (1/3)^2 = 2/3
    assert f"{math.log(3):.4f} | {2 / 3:.4f}" in row


def test_random_splits_are_scored_as_predict_teams() -> None:
    bm = load_benchmark("bench_matchmaking")
    system = get_system("mmr")
    handles, ratings = bm._pool(12, 3)
    q, split = bm._random_best(system, handles, ratings, 200, 3, seed=1)
    assert sorted(len(t) for t in split) == [4, 4, 4]
    want = predict_teams(system, [(f"t{k}", s) for k, s in enumerate(split)], ratings)
    assert q == pytest.approx(want.match_quality, abs=1e-12)


def test_queue_simulation_small() -> None:
    bm = load_benchmark("bench_matchmaking")
    r = bm.simulate(200, 2.0, 2, 2, seed=1, spread=50.0, widen=5.0, max_spread=1000.0,
                    replays=10)
    assert r["matches"] * 4 + r["left"] == 200
    assert 0.0 <= r["won"] <= 1.0 and 0.4 < r["true"] < 0.7
    assert r["quality_mean"] > 0.9


def test_outcome_lobbies() -> None:
    bo = load_benchmark("bench_outcomes")
    teams, ratings = bo.lobby(get_system("trueskill"), 3, 2, seed=0)
    assert [len(m) for _, m in teams] == [2, 2, 2] and len(ratings) == 6
    row = bo.measure("openskill-pl", "3 teams of 2", 3, 2, repeat=1, with_openskill=True)
    assert row["max_diff"] < 1e-9 and row["p_first_sum"] == pytest.approx(1.0)
    assert "| 3 teams of 2 | openskill-pl |" in bo.table([row])
