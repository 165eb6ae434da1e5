"""The whole-history systems through every layer built so far: ``podium rate --system
ttt|whr|mmr-smooth``, ``podium systems``, the HistoryRater (incremental ``add``,
checkpoints) and ``podium eval --protocol causal``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from podium import Contest, Rater
from podium.cli import main
from podium.errors import ContestError
from podium.history import history_from_contests, mmr_smooth, whr
from podium.history.whr import ELO_PER_NAT
from podium.history_rater import HistoryRater, load_rater
from podium.io import synthetic_contests, write_contest_dir

DAY = 86400


@pytest.fixture(scope="module")
def contests():
    # distinct performances (no ties): ttt's default p_draw 0 refuses a tie
    return synthetic_contests(40, 8, seed=5, participation=0.5, tie_resolution=0.0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, contests):
    d = tmp_path_factory.mktemp("whole") / "contests"
    write_contest_dir(contests, d)
    return d


def _games() -> list[Contest]:
    """Small 1v1 games over a few days (a history every engine rates)."""
    rng = np.random.default_rng(3)
    names = [f"p{i}" for i in range(6)]
    out = []
    for g in range(30):
        a, b = rng.choice(6, size=2, replace=False)
        out.append(Contest([(names[a], 0, 0), (names[b], 1, 1)], name=f"g{g}",
                           time_seconds=1_600_000_000 + (g // 3) * DAY))
    return out


def test_systems_lists_the_whole_history_engines(capsys):
    assert main(["systems"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in ("ttt", "whr", "mmr-smooth"):
        line = next(ln for ln in lines if ln.startswith(f"{name}: "))
        assert "whole-history" in line


@pytest.mark.parametrize("system", ["ttt", "whr", "mmr-smooth"])
def test_rate_writes_the_smoothed_curve_and_final_estimates(tmp_path, data_dir, contests,
                                                            system):
    out = tmp_path / "out"
    assert main(["rate", str(data_dir), "--system", system, "--out", str(out),
                 "--no-progress"]) == 0
    ratings = pd.read_csv(out / "ratings.csv").set_index("handle").sort_index()
    hist = pd.read_csv(out / "histories.csv")
    assert len(hist) == sum(len(c) for c in contests)
    # ratings.csv holds each player's last smoothed rating, the last row of its curve
    last = hist.sort_values("contest_index", kind="stable").groupby("handle").last()
    np.testing.assert_array_equal(ratings["mu"].to_numpy(), last.sort_index()["mu"].to_numpy())
    np.testing.assert_array_equal(ratings["contests"].to_numpy(),
                                  hist.groupby("handle").size().sort_index().to_numpy())
    # the curve is the engine's smoothing of the whole history
    lh = history_from_contests(contests)
    if system == "mmr-smooth":
        ref = mmr_smooth(lh.history).mu
    elif system == "whr":
        res = whr(lh.history)
        ref = res.r[res.row_slot] * ELO_PER_NAT
    else:
        from podium.history import ttt

        res = ttt(lh.history)
        ref = res.mu[res.row_slot]
    order = np.argsort(np.asarray(lh.handles)[lh.history.player], kind="stable")
    h = hist.sort_values(["handle", "contest_index"], kind="stable")
    np.testing.assert_allclose(h["mu"].to_numpy(), ref[order], rtol=0, atol=1e-9)


def test_smoothing_revises_the_past_where_the_filter_does_not(tmp_path, data_dir, contests):
    """mmr-smooth's first contest agrees with mmr's when alone, and later contests
    revise it: the smoothed curve of contest 0 differs from the filter's."""
    one = HistoryRater("mmr-smooth")
    one.extend(contests[:1])
    filt = Rater("mmr")
    filt.extend(contests[:1])
    a = one.ratings().set_index("handle").sort_index()["mu"].to_numpy()
    b = filt.ratings().set_index("handle").sort_index()["mu"].to_numpy()
    np.testing.assert_allclose(a, b, atol=1e-6)
    whole = HistoryRater("mmr-smooth")
    whole.extend(contests)
    first = whole.history(contests[0].handles[0])
    assert abs(first["mu"].iloc[0] - filt.rating(contests[0].handles[0])[0]) > 1.0


def test_add_is_incremental_and_reports_the_past_change(contests):
    r = HistoryRater("mmr-smooth", update_sweeps=2)
    r.extend(contests[:-1])
    before = r.history(contests[-1].handles[0])["mu"].to_numpy()
    rep = r.add(contests[-1])
    assert rep.index == len(contests) - 1 and not rep.skipped
    assert 1 <= rep.sweeps <= 2
    after = r.history(contests[-1].handles[0])["mu"].to_numpy()[:-1]
    assert rep.max_past_change >= np.abs(after - before).max() - 1e-9
    assert rep.max_past_change > 0
    # a full smoothing of the same history is near the incremental one
    full = HistoryRater("mmr-smooth")
    full.extend(contests)
    d = np.abs(full.ratings().set_index("handle")["mu"]
               - r.ratings().set_index("handle")["mu"])
    assert d.max() < 50.0


@pytest.mark.parametrize("system", ["ttt", "whr", "mmr-smooth"])
def test_checkpoint_resume_equals_going_on(tmp_path, system):
    games = _games()
    ck = tmp_path / "ck.npz"
    r = HistoryRater(system)
    r.extend(games[:20])
    r.save(ck)
    back = load_rater(ck)
    assert isinstance(back, HistoryRater) and back.system_name == system
    pd.testing.assert_frame_equal(back.ratings(), r.ratings())
    for g in games[20:]:
        assert back.add(g) == r.add(g)
    pd.testing.assert_frame_equal(back.ratings(), r.ratings())


def test_cli_resume_of_a_whole_history_checkpoint(tmp_path, contests):
    d1, d2 = tmp_path / "a", tmp_path / "b"
    write_contest_dir(contests[:5], d1)
    write_contest_dir(contests, d2)
    ck = tmp_path / "ck.npz"
    assert main(["rate", str(d1), "-s", "mmr-smooth", "--out", str(tmp_path / "o1"),
                 "--checkpoint", str(ck), "--no-progress"]) == 0
    assert main(["rate", str(d2), "--resume", str(ck), "--out", str(tmp_path / "o2"),
                 "--no-progress"]) == 0
    hist = pd.read_csv(tmp_path / "o2" / "histories.csv")
    assert len(hist) == sum(len(c) for c in contests)
    direct = HistoryRater("mmr-smooth")
    direct.extend(contests[:5])
    direct.extend(contests[5:])
    got = pd.read_csv(tmp_path / "o2" / "ratings.csv").set_index("handle").sort_index()
    ref = direct.ratings().set_index("handle").sort_index()
    np.testing.assert_array_equal(got["mu"].to_numpy(), ref["mu"].to_numpy())


def test_errors_name_the_contest_and_the_way_past(tmp_path, capsys):
    tied = [Contest([("a", 0, 1), ("b", 0, 1)], name="drawn game", time_seconds=DAY),
            Contest([("a", 0, 0), ("b", 1, 1)], name="g2", time_seconds=2 * DAY)]
    d = tmp_path / "tied"
    write_contest_dir(tied, d)
    assert main(["rate", str(d), "-s", "ttt", "--out", str(tmp_path / "o")]) != 0
    err = capsys.readouterr().err
    assert "drawn game" in err and "--set p_draw=" in err
    assert main(["rate", str(d), "-s", "ttt", "--set", "p_draw=0.2",
                 "--out", str(tmp_path / "o")]) == 0
    drawn = [Contest([("a", 0, 1), ("b", 0, 1)], name="drawn game",
                     time_seconds=1_700_000_000)]
    r = HistoryRater("ttt")
    r.extend(_games()[:3])
    before = r.ratings()
    with pytest.raises(ContestError, match="drawn game.*p_draw=0.1"):
        r.extend(drawn)
    assert r.contests_processed == 3  # nothing of a refused extend is kept
    pd.testing.assert_frame_equal(r.ratings(), before)
    assert main(["rate", str(d), "-s", "whr", "--set", "nope=1",
                 "--out", str(tmp_path / "o")]) != 0
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("system", ["mmr-smooth", "whr", "ttt"])
def test_causal_ratings_see_only_earlier_contests(system):
    """The ratings a contest is scored with do not change when a later result does;
    they are the smoothing of the contests before it (whr: refitted on the prefix)."""
    from podium.evaluation.causal import causal_ratings

    games = _games()
    flipped = list(games)
    g = games[20]
    flipped[20] = Contest([(g.handles[1], 0, 0), (g.handles[0], 1, 1)], name=g.name,
                          time_seconds=g.time_seconds)
    a = causal_ratings(games, system, {})
    b = causal_ratings(flipped, system, {})
    for t in range(20):
        np.testing.assert_array_equal(a[t], b[t])
    np.testing.assert_array_equal(a[20], b[20][::-1])  # the same players, listed flipped
    assert any(not np.array_equal(a[t], b[t]) for t in range(21, len(games)))
    if system == "whr":  # contest 10's ratings: whr of contests 0..9, each player's last
        lh = history_from_contests(games[:10])
        res = whr(lh.history)
        last = {}
        for row, p in enumerate(lh.history.player):
            last[lh.handles[p]] = res.r[res.row_slot[row]] * ELO_PER_NAT
        ref = [last.get(h, 0.0) for h in games[10].handles]
        np.testing.assert_allclose(a[10], ref, atol=1e-9)


def test_eval_protocol_causal_through_the_cli(tmp_path, data_dir, capsys):
    assert main(["eval", str(data_dir), "-s", "mmr-smooth", "--no-progress"]) != 0
    assert "--protocol causal" in capsys.readouterr().err
    assert main(["compare", str(data_dir), "--systems", "mmr,mmr-smooth", "--protocol",
                 "causal", "--min-history", "1", "--json", "--no-progress"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("{")]
    import json

    recs = {r["system"]: r for r in map(json.loads, lines)}
    assert set(recs) == {"mmr", "mmr-smooth"}
    assert recs["mmr-smooth"]["params"]["protocol"] == "causal"
    assert recs["mmr"]["scored_contests"] == recs["mmr-smooth"]["scored_contests"]
    assert 0 < recs["mmr-smooth"]["pair_inv"] <= 100
