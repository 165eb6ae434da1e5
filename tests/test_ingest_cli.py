"""`podium ingest`, `podium db-info` and `podium db-upgrade`, run in-process."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import _store_cases as cases
import numpy as np
import pandas as pd
import pytest

from podium import Rater
from podium.cli import main
from podium.io import synthetic_contests, write_contest_dir, write_contest_json, write_contests_csv
from podium.store import Store


@pytest.fixture(scope="module")
def contests():
    return cases.tied_history()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, contests):
    d = tmp_path_factory.mktemp("hist") / "contests"
    write_contest_dir(contests, d)
    return d


def _out_lines(capsys):
    out, err = capsys.readouterr()
    return out.splitlines(), err


@pytest.mark.parametrize(("system", "batch"), [("mmr", "200"), ("mmr", "3"), ("mmr", "1"),
                                               ("tcsys", "200")])
def test_ingest_equals_podium_rate(tmp_path, data_dir, capsys, system, batch):
    """In one batch (the default), in batches of 3 or one contest at a time: the
    numbers of ``podium rate``, bit for bit."""
    db = tmp_path / "p.db"
    assert main(["ingest", str(data_dir), "--db", str(db), "--system", system,
                 "--batch", batch]) == 0
    lines, _ = _out_lines(capsys)
    assert [ln.split()[0] for ln in lines[:-1]] == ["applied"] * 8
    assert lines[-1].startswith("ingested 8 contest(s)") and "8 applied" in lines[-1]
    out = tmp_path / "rated"
    assert main(["rate", str(data_dir), "--system", system, "--out", str(out),
                 "--no-progress"]) == 0
    ratings = pd.read_csv(out / "ratings.csv", keep_default_na=False)
    with Store.open(str(db)) as store:
        got = store.ratings_frame()
        assert got["handle"].tolist() == ratings["handle"].astype(str).tolist()
        for col in ("mu", "sigma", "display_rating", "contests", "last_contest_time",
                    "max_display_rating", "last_change"):
            np.testing.assert_array_equal(got[col].to_numpy(), ratings[col].to_numpy(),
                                          err_msg=col)
        hist = pd.read_csv(out / "histories.csv", keep_default_na=False)
        for handle, rows in hist.groupby("handle", sort=False):
            view = store.player(str(handle))
            assert view is not None
            assert [h.index for h in view.history] == rows["contest_index"].tolist()
            for col in ("mu", "sigma", "display_rating", "perf", "place"):
                np.testing.assert_array_equal([getattr(h, col) for h in view.history],
                                              rows[col].to_numpy(), err_msg=f"{handle} {col}")


def test_rerun_is_duplicate_and_changes_nothing(tmp_path, data_dir, capsys):
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(data_dir), "--db", db, "-q"]) == 0
    capsys.readouterr()
    before = cases.dump(db)
    assert main(["ingest", str(data_dir), "--db", db]) == 0
    lines, _ = _out_lines(capsys)
    assert all(ln.startswith("duplicate") and "unchanged" in ln for ln in lines[:-1])
    assert "0 applied, 8 duplicate (unchanged)" in lines[-1]
    assert cases.dump(db) == before


def test_older_contest_refused_then_recomputed(tmp_path, contests, capsys):
    first, late = tmp_path / "first", tmp_path / "late"
    write_contest_dir([c for k, c in enumerate(contests) if k != 4], first)
    late.mkdir()
    write_contest_json(contests[4], late / "0.json")
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(first), "--db", db, "-q"]) == 0
    capsys.readouterr()
    before = cases.dump(db)
    assert main(["ingest", str(late), "--db", db]) == 1
    _, err = capsys.readouterr()
    assert err.startswith("podium: error: contest #0 ") and repr(contests[4].name) in err
    assert repr(contests[-1].name) in err and "--recompute-from" in err
    assert cases.dump(db) == before
    assert main(["ingest", str(late), "--db", db, "--recompute-from"]) == 0
    lines, _ = _out_lines(capsys)
    assert lines[0].startswith(f"recomputed  #4 {contests[4].name!r}")
    assert lines[0].endswith("re-rated 3 later contest(s)")
    with Store.open(db) as store:
        cases.assert_store_equals_rater(store, cases._reference(contests, "mmr"))


def test_bad_input_changes_nothing(tmp_path, data_dir, contests, capsys):
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(data_dir), "--db", db, "-n", "3", "-q"]) == 0
    capsys.readouterr()
    before = cases.dump(db)
    # a broken contest file in the middle of the directory
    bad = tmp_path / "bad"
    write_contest_dir(contests, bad)
    doc = json.loads((bad / "5.json").read_text())
    doc["standings"][1][0] = doc["standings"][0][0]  # duplicate handle
    (bad / "5.json").write_text(json.dumps(doc))
    assert main(["ingest", str(bad), "--db", db]) == 1
    _, err = capsys.readouterr()
    assert err.startswith("podium: error:") and "5.json" in err and "duplicate handle" in err
    assert cases.dump(db) == before
    # an unknown parameter, a wrong system, a missing file
    assert main(["ingest", str(data_dir), "--db", db, "--set", "bogus=1"]) == 2
    assert "unknown parameter(s) bogus" in capsys.readouterr().err
    assert main(["ingest", str(data_dir), "--db", db, "--system", "tcsys"]) == 1
    assert "rates with 'mmr', not 'tcsys'" in capsys.readouterr().err
    assert main(["ingest", str(tmp_path / "nothing"), "--db", db]) == 1
    assert "nothing" in capsys.readouterr().err
    # the same id with other content, within the input and against the store
    clash = tmp_path / "clash"
    other = synthetic_contests(30, 1, seed=99)[0]
    from podium import Contest

    write_contest_dir([contests[3], Contest(other.standings, name=contests[3].name,
                                            time_seconds=contests[3].time_seconds + 5)], clash)
    assert main(["ingest", str(clash), "--db", db]) == 1
    err = capsys.readouterr().err
    assert "same id" in err and "different content" in err
    clash2 = tmp_path / "clash2"
    write_contest_dir([Contest(other.standings, name=contests[1].name,
                               time_seconds=contests[1].time_seconds)], clash2)
    assert main(["ingest", str(clash2), "--db", db]) == 1
    err = capsys.readouterr().err
    assert "already stored" in err and "different content" in err
    # out of time order within the input
    shuffled = tmp_path / "shuffled"
    write_contest_dir([contests[6], contests[5]], shuffled)
    assert main(["ingest", str(shuffled), "--db", db]) == 1
    assert "--sort-by-time" in capsys.readouterr().err
    assert cases.dump(db) == before
    # a missing database is not created by a failing run
    fresh = tmp_path / "fresh.db"
    assert main(["ingest", str(bad), "--db", str(fresh)]) == 1
    assert not fresh.exists()


@pytest.mark.parametrize("fmt", ["tar", "csv"])
def test_other_inputs_and_sort(tmp_path, data_dir, contests, fmt, capsys):
    if fmt == "tar":
        path = tmp_path / "h.tar.gz"
        with tarfile.open(path, "w:gz") as tf:
            tf.add(data_dir, arcname="cache/x")
    else:
        path = tmp_path / "h.csv"
        write_contests_csv(list(reversed(contests)), path)
    db = tmp_path / "p.db"
    args = ["ingest", str(path), "--db", f"sqlite:///{db}", "-q", "--no-progress"]
    if fmt == "csv":
        args.append("--sort-by-time")
    assert main(args) == 0
    with Store.open(str(db)) as store:
        ref = cases._reference(contests if fmt == "tar" else sorted(
            contests, key=lambda c: c.time_seconds), "mmr")
        pd.testing.assert_frame_equal(store.ratings_frame(), ref.ratings().reset_index(drop=True),
                                      check_exact=True)


def test_db_info_and_upgrade(tmp_path, data_dir, capsys):
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(data_dir), "--db", db, "-q", "--system", "trueskill"]) == 0
    capsys.readouterr()
    assert main(["db-info", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "system:         trueskill" in out and "contests:       8 (7 rated)" in out
    assert main(["db-info", "--db", db, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["contests"] == 8 and info["system"] == "trueskill"
    assert main(["db-upgrade", "--db", db]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert main(["db-info", "--db", str(tmp_path / "none.db")]) == 1
    assert "no Podium store" in capsys.readouterr().err
    assert main(["db-upgrade", "--db", str(tmp_path / "none.db")]) == 1
    assert "no Podium store" in capsys.readouterr().err


def test_params_file_and_set(tmp_path, data_dir, contests, capsys):
    cfg = tmp_path / "p.json"
    cfg.write_text(json.dumps({"system": "tcsys", "params": {"weight_limit": 0.3}}))
    db = str(tmp_path / "p.db")
    assert main(["ingest", str(data_dir), "--db", db, "--params", str(cfg), "-n", "4", "-q"]) == 0
    with Store.open(db) as store:
        assert store.system_name == "tcsys" and store.params["weight_limit"] == 0.3
    capsys.readouterr()
    # the same parameters again (file or --set) are accepted; others are refused
    assert main(["ingest", str(data_dir), "--db", db, "--params", str(cfg), "-q"]) == 0
    assert main(["ingest", str(data_dir), "--db", db, "--set", "weight_limit=0.3", "-q"]) == 0
    capsys.readouterr()
    before = cases.dump(db)
    assert main(["ingest", str(data_dir), "--db", db, "--set", "weight_limit=0.25"]) == 1
    assert "weight_limit: stored 0.3, given 0.25" in capsys.readouterr().err
    assert cases.dump(db) == before
    r = Rater("tcsys", weight_limit=0.3)
    r.extend(contests)
    with Store.open(db) as store:
        pd.testing.assert_frame_equal(store.ratings_frame(), r.ratings().reset_index(drop=True),
                                      check_exact=True)


def test_default_database_is_podium_db(tmp_path, data_dir, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["ingest", str(data_dir), "-n", "2", "-q"]) == 0
    assert "sqlite:///podium.db now holds 2 contests" in capsys.readouterr().out
    assert (tmp_path / "podium.db").exists()
    assert main(["db-info"]) == 0
    assert "contests:       2 (2 rated)" in capsys.readouterr().out


def test_help_lists_options(capsys):
    with pytest.raises(SystemExit):
        main(["ingest", "--help"])
    out = capsys.readouterr().out
    for opt in ("--db", "--system", "--params", "--set", "--recompute-from", "--dedupe",
                "--sort-by-time"):
        assert opt in out


def test_batches_split_by_contests_and_player_rounds():
    from podium.store.cli import batches

    assert batches([5, 5, 5, 5, 5], 2) == [(0, 2), (2, 4), (4, 5)]
    assert batches([5, 5, 5], 10, rounds=10) == [(0, 2), (2, 3)]
    assert batches([50, 1, 1], 10, rounds=10) == [(0, 1), (1, 3)]
    assert batches([], 3) == [] and batches([1, 1], 1) == [(0, 1), (1, 2)]


def test_ingest_csv_without_times_needs_no_times(tmp_path: Path) -> None:
    """A CSV without times is refused (nothing created) unless --no-times is given."""
    src = tmp_path / "n.csv"
    src.write_text("contest,player,place\nc1,a,1\nc1,b,2\n")
    db = tmp_path / "n.db"
    assert main(["ingest", str(src), "--db", f"sqlite:///{db}"]) != 0
    assert not db.exists()
    assert main(["ingest", str(src), "--db", f"sqlite:///{db}", "--no-times"]) == 0
    assert db.exists()
