"""The causal protocol of the whole-history systems beyond its basics
(tests/test_history_cli.py): a history's prefix, the bounded update between refits
(``update_between``) and tuning a whole-history system the paper's way
(:func:`podium.evaluation.tune`, trials scored causally)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from podium import Contest
from podium.cli import main
from podium.errors import ConfigError
from podium.evaluation import tune
from podium.evaluation.causal import causal_ratings, evaluate_causal
from podium.evaluation.tuning import search_space
from podium.history import history_from_contests
from podium.history.engines import HISTORY_SYSTEMS, get_history_system
from podium.io import synthetic_contests, write_contest_dir

DAY = 86400


def _games(n: int = 40, seed: int = 3) -> list[Contest]:
    """1v1 games among 5 players, three a day; games 25 and 26 are the same pair."""
    rng = np.random.default_rng(seed)
    names = [f"p{i}" for i in range(5)]
    out = []
    for g in range(n):
        a, b = (names[int(i)] for i in rng.choice(5, size=2, replace=False))
        if g == 26:  # the pair of game 25 again (the same day), its loser listed first
            b, a = out[25].handles
        out.append(Contest([(a, 0, 0), (b, 1, 1)], name=f"g{g}",
                           time_seconds=1_600_000_000 + (g // 3) * DAY))
    return out


def _flip(games: list[Contest], g: int) -> list[Contest]:
    c = games[g]
    out = list(games)
    out[g] = Contest([(c.handles[1], 0, 0), (c.handles[0], 1, 1)], name=c.name,
                     time_seconds=c.time_seconds)
    return out


def test_a_prefix_is_the_history_of_the_first_contests() -> None:
    games = _games()
    whole = history_from_contests(games).history
    for n in (0, 1, 7, len(games)):
        got = whole.prefix(n)
        want = history_from_contests(games[:n]).history
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="0 .. 40"):
        whole.prefix(41)


@pytest.mark.parametrize("system", ["whr", "ttt"])
def test_update_between_predicts_from_the_previous_contest(system: str) -> None:
    """With one refit (at the first scored contest) the ratings of game 26 are stale
    without the update: flipping game 25's result does not change them.  With
    ``update_between`` they follow it, the winner of game 25 rated higher; and what
    comes before game 25 does not see it."""
    games = _games()
    flipped = _flip(games, 25)
    winner, loser = games[25].handles  # game 26: the same pair, listed loser first
    assert games[26].handles == (loser, winner)
    kw = {"first": 10, "refit_every": 1000}
    scale = 400.0 if system == "whr" else 6.0
    stale = causal_ratings(games, system, {}, **kw)
    stale_f = causal_ratings(flipped, system, {}, **kw)
    np.testing.assert_array_equal(stale[26], stale_f[26])
    new = causal_ratings(games, system, {}, update_between=True, **kw)
    new_f = causal_ratings(flipped, system, {}, update_between=True, **kw)
    for t in range(10, 26):
        np.testing.assert_array_equal(new[t], new_f[t] if t < 25 else new_f[t][::-1])
    np.testing.assert_array_equal(new[10], stale[10])  # the refit itself
    assert new[26] is not None and new_f[26] is not None
    # game 26 lists game 25's winner second: its edge is larger when it won game 25
    assert new[26][1] - new[26][0] > new_f[26][1] - new_f[26][0] + 0.01 * scale
    # and the updated forecast is close to refitting before every contest, far closer
    # than the stale one (whr: within 5 Elo against 300; ttt: 0.9 against 6.3)
    full = causal_ratings(games, system, {}, first=10)
    off_new = [np.max(np.abs(new[t] - full[t])) for t in range(11, len(games))]
    off_stale = [np.max(np.abs(stale[t] - full[t])) for t in range(11, len(games))]
    assert max(off_new) < 0.2 * scale
    assert np.mean(off_new) < 0.25 * np.mean(off_stale)


def test_evaluate_causal_records_the_protocol() -> None:
    games = _games()
    res = evaluate_causal(games, "whr", refit_every=5, update_between=True, min_history=1)
    assert res.params["update_between"] is True and res.params["refit_every"] == 5
    assert 0 <= res.metrics["pair_inv"] <= 100


@pytest.mark.parametrize("system", [n for n, cls in HISTORY_SYSTEMS.items()
                                    if cls.search_space])
def test_every_corner_of_a_history_search_space_fits(system: str) -> None:
    space = search_space(system)
    h = history_from_contests(_games(12)).history
    n = h.n_contests
    for corner in itertools.product(*[(p.low, p.high) for p in space.values()]):
        params = dict(zip(space, corner, strict=True))
        fit = get_history_system(system, **params).fit(
            h, contest_weight=np.ones(n), perf_ceiling=np.full(n, np.inf))
        assert np.all(np.isfinite(fit.mu)), params


def test_tune_a_whole_history_system_by_the_causal_protocol() -> None:
    games = _games(60)
    fixed = {"tol": 1e-6}
    res = tune(games, "whr", trials=4, train_frac=0.5, fixed=fixed, min_history=1)
    assert res.trials == 4 and res.train_contests == 30
    space = search_space("whr")
    for k, rng in space.items():
        assert rng.low <= res.best_params[k] <= rng.high
    assert res.best_params["tol"] == 1e-6
    # the first trial is the defaults, scored causally on the training part
    default = evaluate_causal(games[:30], "whr", params=fixed, train_contests=0,
                              min_history=1, extended=False).metrics["pair_inv"]
    assert res.best_value >= default - 1e-12
    best = evaluate_causal(games[:30], "whr", params=res.best_params, train_contests=0,
                           min_history=1, extended=False).metrics["pair_inv"]
    assert best == pytest.approx(res.best_value, abs=1e-12)
    with pytest.raises(ConfigError, match="no search space for the whole-history system "
                       "'mmr-smooth'; tunable ones: ttt, whr"):
        tune(games, "mmr-smooth", trials=1)
    with pytest.raises(ConfigError, match="pair_inv or rank_dev"):
        tune(games, "whr", trials=1, objective="log_loss")
    with pytest.raises(ConfigError, match="refit_every"):
        tune(games, "whr", trials=1, refit_every=0)


def test_tune_and_eval_a_whole_history_system_through_the_cli(tmp_path, capsys) -> None:
    d = tmp_path / "contests"
    write_contest_dir(synthetic_contests(30, 16, seed=2, participation=0.6,
                                         tie_resolution=0.0), d)
    base = ["tune", str(d), "-s", "whr", "--trials", "2", "--train-frac", "0.5",
            "--min-history", "1", "--storage", f"sqlite:///{tmp_path / 't.db'}",
            "--no-progress", "--out", str(tmp_path / "whr.json")]
    assert main(base) != 0
    assert "--protocol causal" in capsys.readouterr().err
    assert main([*base, "--protocol", "causal", "--set", "tol=1e-6"]) == 0
    doc = json.loads((tmp_path / "whr.json").read_text())
    assert doc["system"] == "whr" and set(doc["params"]) == {"w2", "prior_wins", "tol"}
    assert main(["eval", str(d), "--protocol", "causal", "--params",
                 str(tmp_path / "whr.json"), "--refit-every", "4", "--update-between",
                 "--min-history", "1", "--json", "--no-progress"]) == 0
    rec = json.loads(next(ln for ln in capsys.readouterr().out.splitlines()
                          if ln.startswith("{")))
    assert rec["params"]["update_between"] is True and rec["params"]["refit_every"] == 4
    assert rec["params"]["w2"] == doc["params"]["w2"]
