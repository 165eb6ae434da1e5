"""Evaluation runner, tuning, plots, the incentive experiment and their commands.

The metric values of the hand-made history below are worked out on paper:

* contests 0..4 and 5: A > B > C > D, every time;
* contest 6: D > C > B > A (the reverse), plus a debutant E on top.

Before contest 5 every one of A-D has 5 earlier contests and the ratings order
them A > B > C > D: every pair is right (pair inversion 100) and every player
sits at their own place (rank deviation 0).  Before contest 6 the order is the
same but the result is reversed: no pair right (0); sorted by rating, A is at
position 0 but placed in [3, 3] (error 3), B at 1 in [2, 2] (error 1), C error
1, D error 3: 100 · 8 / (n − 1 = 3) / n = 66.67.  E is a debutant and does not
count.  Both rounds have weight 4, so the averages are 50 and 33.33.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from podium import Contest, Rater
from podium.cli import main
from podium.errors import ConfigError
from podium.evaluation import evaluate, train_size, tune, volatility_farming
from podium.evaluation.incentive import move_to_last
from podium.evaluation.metrics import pair_inversion, renumber_ties
from podium.evaluation.tuning import search_spaces
from podium.io import load_contests, write_contest_dir
from podium.io.synthetic import synthetic_contests
from podium.systems import SYSTEMS, get_system


def _hand_history() -> list[Contest]:
    order = ["A", "B", "C", "D"]
    cs = [Contest.from_places(order, [1, 2, 3, 4], name=f"c{t}", time_seconds=86_400 * t)
          for t in range(6)]
    cs.append(Contest.from_places(["E", "D", "C", "B", "A"], [1, 2, 3, 4, 5], name="c6",
                                  time_seconds=86_400 * 6))
    return cs


@pytest.mark.parametrize("system", ["mmr", "codeforces", "tcsys", "trueskill", "glicko"])
def test_hand_worked_metrics(system: str) -> None:
    res = evaluate(_hand_history(), system, train_contests=5)
    assert res.scored_contests == 2 and res.train_contests == 5
    assert res.metrics["pair_inv"] == pytest.approx(50.0)
    assert res.metrics["rank_dev"] == pytest.approx((0.0 + 100 * 8 / 3 / 4) / 2)
    pr = res.per_round
    assert pr["index"].tolist() == [5, 6]
    assert pr["pair_inv"].tolist() == pytest.approx([100.0, 0.0])
    assert res.player_rounds == 6 * 4 + 5
    assert res.seconds > 0


def test_unscored_before_five_contests() -> None:
    # before contest 4 nobody has 5 earlier contests: that round counts for nothing
    res = evaluate(_hand_history()[:5], "mmr", train_contests=4)
    assert math.isnan(res.metrics["pair_inv"])


def test_train_size() -> None:
    assert train_size(1087, 0.1) == 108  # the paper code's len / 10
    assert train_size(1090, 0.1) == 109
    assert train_size(50, 0.1) == 5
    assert train_size(7, 0.0) == 0
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ConfigError, match="train_frac"):
            train_size(10, bad)


def test_evaluate_matches_manual_replay() -> None:
    """The runner scores each contest with the ratings just before it."""
    cs = synthetic_contests(60, 12, seed=3, participation=0.7, tie_resolution=40.0)
    res = evaluate(cs, "mmr", train_frac=0.25)
    r = Rater("mmr")
    values = []
    for t, c in enumerate(cs):
        if t >= 3:
            keep = [k for k, h in enumerate(c.handles)
                    if h in r.players.index and r.players.contests[r.players.index[h]] >= 5]
            mu = np.array([r.players.mu[r.players.index[c.handles[k]]] for k in keep])
            lo, hi = renumber_ties(c.lo[keep], c.hi[keep])
            values.append((len(keep), pair_inversion(mu, lo, hi)))
        r.add(c)
    w = sum(n for n, v in values if not math.isnan(v))
    expect = sum(n * v for n, v in values if not math.isnan(v)) / w
    assert res.metrics["pair_inv"] == pytest.approx(expect, rel=1e-12)


def test_tune_in_memory_and_sqlite(tmp_path) -> None:
    cs = synthetic_contests(80, 40, seed=5, participation=0.8)
    res = tune(cs, "mmr", trials=4, train_frac=0.5, seed=1)
    assert res.trials == 4 and res.train_contests == 20
    assert set(res.best_params) == {"weight_limit", "sig_limit", "rho"}
    assert 0 < res.best_value <= 100
    # the first trial is the defaults, so tuning never loses to them on the training part
    default = evaluate(cs[:20], "mmr", train_contests=0, extended=False).metrics["pair_inv"]
    assert res.best_value >= default - 1e-12
    url = f"sqlite:///{tmp_path / 'study.db'}"
    a = tune(cs, "tcsys", trials=2, train_frac=0.5, storage=url, study_name="s")
    b = tune(cs, "tcsys", trials=2, train_frac=0.5, storage=url, study_name="s")
    assert (a.trials, b.trials) == (2, 4)  # the second call continues the stored study
    assert b.best_value >= a.best_value
    with pytest.raises(ConfigError, match="no search space"):
        tune(cs, "codeforces", trials=1)
    with pytest.raises(ConfigError, match="objective"):
        tune(cs, "mmr", trials=1, objective="accuracy")


@pytest.mark.parametrize("system", sorted(search_spaces()))
def test_every_corner_of_each_search_space_is_a_valid_config(system: str) -> None:
    space = search_spaces()[system]
    assert system in SYSTEMS
    for corner in itertools.product(*[(p.low, p.high) for p in space.values()]):
        get_system(system, **dict(zip(space, corner, strict=True)))


def test_diverging_system_is_reported_and_tuning_goes_on(monkeypatch) -> None:
    from podium.errors import ConvergenceError
    from podium.systems.base import RoundOutput
    from podium.systems.cfsys import CFSys

    real = CFSys.round_update

    def nan_when_beta_small(self, state, rnd):  # type: ignore[no-untyped-def]
        out = real(self, state, rnd)
        if self.beta < 300:
            return RoundOutput(mu=np.full_like(out.mu, np.nan), sigma=out.sigma,
                               perf=out.perf, warnings=out.warnings)
        return out

    monkeypatch.setattr(CFSys, "round_update", nan_when_beta_small)
    cs = synthetic_contests(30, 20, seed=1)
    with pytest.raises(ConvergenceError, match="before contest #1 .* not finite"):
        evaluate(cs, "cfsys", params={"beta": 200.0}, train_contests=1, warmup=False)
    res = tune(cs, "cfsys", trials=6, train_frac=0.5, seed=3)
    assert res.best_params["beta"] >= 300  # the diverging trials failed, the others count


def test_tune_needs_scorable_training_contests() -> None:
    cs = synthetic_contests(30, 50, seed=0)  # training part: 5 rounds, nobody has 5 before
    with pytest.raises(ConfigError, match="smaller --min-history"):
        tune(cs, "mmr", trials=1)
    assert tune(cs, "mmr", trials=1, min_history=1).best_value > 50
    # a whole separate history (an independent draw) can be the training part
    res = tune(cs[:20], "mmr", trials=1, train_contests=20)
    assert res.train_contests == 20 and res.best_value > 50
    with pytest.raises(ConfigError, match="train_contests=21 but the history has 20"):
        tune(cs[:20], "mmr", trials=1, train_contests=21)


def _tune_procs(history: str, storage: str, out_dir) -> list:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    return [subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "tune", history, "--system", "cfsys",
         "--trials", "3", "--train-frac", "0.5", "--storage", storage, "--study", "shared",
         "--seed", str(k), "--out", str(out_dir / f"best{k}.json"), "--no-progress"],
        stderr=subprocess.PIPE, text=True) for k in range(2)]


def _shared_study_check(history_dir, storage: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import optuna

    from podium.evaluation.tuning import storage_url

    procs = _tune_procs(str(history_dir), storage, tmp_path)
    errs = [p.communicate(timeout=240)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    study = optuna.load_study(study_name="shared", storage=storage_url(storage))
    assert len(study.trials) == 6  # both processes' trials landed in the one study
    # each process reports the best of the shared study when it ends; the later one
    # has seen all six trials
    docs = [json.loads((tmp_path / f"best{k}.json").read_text()) for k in range(2)]
    assert max(d["tuning"]["train_value"] for d in docs) == pytest.approx(study.best_value)


@pytest.mark.slow
def test_two_processes_share_one_study_sqlite(history_dir, tmp_path) -> None:
    _shared_study_check(history_dir, str(tmp_path / "shared.db"), tmp_path)


@pytest.mark.slow
def test_two_processes_share_one_study_postgres(history_dir, tmp_path) -> None:
    import uuid

    from _require import require_postgres

    url = require_postgres()
    import sqlalchemy as sa

    from podium.evaluation.tuning import storage_url

    schema_db = f"tune_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(storage_url(url), isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(sa.text(f"CREATE DATABASE {schema_db}"))
    try:
        _shared_study_check(history_dir, url.rsplit("/", 1)[0] + "/" + schema_db, tmp_path)
    finally:
        admin.dispose()
        with sa.create_engine(storage_url(url), isolation_level="AUTOCOMMIT").connect() as c:
            c.execute(sa.text(f"DROP DATABASE IF EXISTS {schema_db} WITH (FORCE)"))


def test_tune_rank_dev_minimises() -> None:
    cs = synthetic_contests(60, 30, seed=2)
    res = tune(cs, "cfsys", trials=3, train_frac=0.5, objective="rank_dev")
    assert 0 <= res.best_value < 50


def test_move_to_last() -> None:
    c = Contest([("a", 0, 1), ("b", 0, 1), ("c", 2, 2), ("d", 3, 3)], name="x",
                time_seconds=5, url="u")
    m = move_to_last(c, "a")
    assert m.standings == [("b", 0, 0), ("c", 1, 1), ("d", 2, 2), ("a", 3, 3)]
    assert (m.name, m.time_seconds, m.url) == ("x", 5, "u")
    m = move_to_last(c, "c")
    assert m.standings == [("a", 0, 1), ("b", 0, 1), ("d", 2, 2), ("c", 3, 3)]
    with pytest.raises(ConfigError, match="'zz' is not in contest"):
        move_to_last(c, "zz")


def test_volatility_farming_mechanics() -> None:
    cs = synthetic_contests(40, 40, seed=11)
    star = cs[0].handles[0]  # won the first round: rated high by every system
    res = volatility_farming(cs, star, systems=("tcsys", "mmr"), threshold=1500.0,
                             window=(5, 30))
    assert res.manipulated and all(5 < t < 30 for t in res.manipulated)
    # honest and farming histories agree up to the first manipulation
    first = res.manipulated[0]
    tr = res.trajectories
    for name in ("tcsys", "mmr"):
        h = tr[(tr.system == name) & (tr.history == "honest") & (tr.contest_index < first)]
        f = tr[(tr.system == name) & (tr.history == "farming") & (tr.contest_index < first)]
        assert h["mu"].tolist() == f["mu"].tolist()
    assert set(res.summary["system"]) == {"tcsys", "mmr"}
    # Thm 5.5 (aligned incentives): losing on purpose never leaves Elo-MMR's mu higher
    mmr = res.summary.set_index("system").loc["mmr"]
    assert mmr["gain_final"] <= 1e-6
    # an unreachable threshold manipulates nothing
    none = volatility_farming(cs, star, systems=("mmr",), threshold=1e9, window=(5, 30))
    assert none.manipulated == ()
    assert none.summary["gain_final"].tolist() == [0.0]
    with pytest.raises(ConfigError, match="takes part in none"):
        volatility_farming(cs, "nobody", systems=("mmr",))


# ---------------------------------------------------------------------------- commands
@pytest.fixture(scope="module")
def history_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hist")
    write_contest_dir(synthetic_contests(70, 24, seed=4, participation=0.8,
                                         tie_resolution=30.0), d)
    return d


def test_cli_eval_markdown_and_json(history_dir, capsys) -> None:
    assert main(["eval", str(history_dir), "--system", "mmr", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "| system | pair inv. (%) | rank dev. (%) | seconds |" in out
    assert "| mmr |" in out and "24 contests" in out and "first 2 rated but not scored" in out
    assert main(["compare", str(history_dir), "--systems", "mmr,cfsys,tcsys", "--json",
                 "--train-frac", "0.25", "-n", "20"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    recs = [json.loads(x) for x in lines]
    assert [r["system"] for r in recs] == ["mmr", "cfsys", "tcsys"]
    for r in recs:
        assert {"system", "pair_inv", "rank_dev", "seconds"} <= set(r)
        assert r["contests"] == 20 and r["train_contests"] == 5
        assert 0 <= r["pair_inv"] <= 100


def test_cli_tune_then_eval(history_dir, tmp_path, capsys) -> None:
    out = tmp_path / "best.json"
    db = tmp_path / "t.db"
    assert main(["tune", str(history_dir), "--system", "cfsys", "--trials", "3",
                 "--train-frac", "0.5", "--storage", str(db), "--out", str(out),
                 "--no-progress"]) == 0
    doc = json.loads(out.read_text())
    assert doc["system"] == "cfsys" and set(doc["params"]) == {"beta", "weight"}
    assert doc["tuning"]["trials"] == 3 and db.exists()
    assert main(["eval", str(history_dir), "--params", str(out), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out.strip())
    assert rec["params"]["beta"] == pytest.approx(doc["params"]["beta"])
    # the same file is accepted by `podium rate`
    assert main(["rate", str(history_dir), "--params", str(out), "--out",
                 str(tmp_path / "r"), "--no-progress"]) == 0
    # compare picks it up from a directory of <system>.json files
    pdir = tmp_path / "pdir"
    pdir.mkdir()
    (pdir / "cfsys.json").write_text(out.read_text())
    assert main(["compare", str(history_dir), "--systems", "cfsys", "--params-dir",
                 str(pdir), "--json"]) == 0
    rec2 = json.loads(capsys.readouterr().out.strip())
    assert rec2["pair_inv"] == pytest.approx(rec["pair_inv"])


def test_cli_plots(history_dir, tmp_path) -> None:
    d = tmp_path / "plots"
    assert main(["compare", str(history_dir), "--systems", "mmr,tcsys", "--plot", str(d),
                 "--no-progress"]) == 0
    names = sorted(p.name for p in d.iterdir())
    assert names == ["metric_pair_inv.png", "metric_rank_dev.png",
                     "rating_distribution.png", "reliability.png", "trajectories.png"]
    for p in d.iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_cli_incentive(history_dir, tmp_path, capsys) -> None:
    star = load_contests(history_dir).contests[0].handles[0]
    assert main(["incentive", str(history_dir), "--handle", star, "--threshold", "1500",
                 "--window", "3:20", "--plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{star}: placed last in" in out and "| tcsys |" in out and "| mmr |" in out
    assert (tmp_path / "incentive.png").exists()


@pytest.mark.parametrize(
    "argv, message, status",
    [
        (["eval", "{d}", "--system", "nope"], "unknown rating system 'nope'", 2),
        (["eval", "{d}"], "--system is required", 2),
        (["compare", "{d}", "--systems", "mmr", "--params", "cfsys=x.json"],
         "--params given for cfsys", 2),
        (["compare", "{d}", "--systems", "mmr", "--params", "mmr"], "SYSTEM=FILE", 2),
        (["eval", "{d}", "--system", "mmr", "--train-frac", "1.5"], "--train-frac", 2),
        (["tune", "{d}", "--system", "codeforces", "--trials", "2"], "no search space", 2),
        (["eval", "{d}", "--system", "mmr", "--set", "sig_limit=-1"], "sig_limit", 2),
        (["incentive", "{d}", "--handle", "nobody"], "takes part in none", 2),
        (["incentive", "{d}", "--window", "5"], "START:END", 2),
        (["tune", "{d}", "--system", "mmr", "--trials", "1", "--storage",
          "postgresql://nobody@127.0.0.1:1/none"], "cannot open the tuning storage", 2),
    ],
)
def test_cli_errors(history_dir, capsys, argv, message, status) -> None:
    """One ``podium: error:`` line: status 2 for a bad command line, 1 for a run that
    failed."""
    argv = [a.replace("{d}", str(history_dir)) for a in argv]
    try:
        rc = main(argv)
    except SystemExit as exc:  # the parser's refusal
        rc = exc.code
    assert rc == status
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and err[-1].startswith("podium: error: "), err


def test_empty_contest_in_history_is_skipped_and_reported(tmp_path) -> None:
    cs = synthetic_contests(10, 3, seed=0)
    write_contest_dir(cs, tmp_path)
    (tmp_path / "1.json").write_text('{"name": "To be filled.", "time_seconds": 0, '
                                     '"standings": []}')
    h = load_contests(tmp_path)
    assert [c.name for c in h.contests] == [cs[0].name, cs[2].name]
    assert h.indices == [0, 2]
    assert len(h.changes) == 1 and "#1 'To be filled.'" in h.changes[0]
    assert "standings are empty" in h.changes[0]
