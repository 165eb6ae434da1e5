"""The `podium` command line, run in-process through `podium.cli.main`."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile

import numpy as np
import pandas as pd
import pytest

from podium import Rater
from podium.cli import main
from podium.io import synthetic_contests, write_contest_dir, write_contests_csv

REQUIRED = ["handle", "mu", "sigma", "display_rating", "contests"]


@pytest.fixture(scope="module")
def contests():
    return synthetic_contests(120, 8, seed=11, participation=0.8, tie_resolution=20.0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, contests):
    d = tmp_path_factory.mktemp("hist") / "contests"
    write_contest_dir(contests, d)
    return d


def _ratings(out):
    df = pd.read_csv(out / "ratings.csv")
    return df.set_index("handle").sort_index()


def test_rate_directory_writes_ratings_and_histories(tmp_path, data_dir, contests):
    out = tmp_path / "out"
    assert main(["rate", str(data_dir), "--system", "mmr", "--out", str(out)]) == 0
    df = pd.read_csv(out / "ratings.csv")
    assert list(df.columns[: len(REQUIRED)]) == REQUIRED
    direct = Rater("mmr")
    direct.extend(contests)
    ref = direct.ratings().set_index("handle").sort_index()
    got = df.set_index("handle").sort_index()
    assert len(got) == len(ref) == df["handle"].nunique()
    np.testing.assert_array_equal(got["mu"].to_numpy(), ref["mu"].to_numpy())  # unrounded
    hist = pd.read_csv(out / "histories.csv")
    assert len(hist) == sum(len(c) for c in contests)
    assert set(hist.columns) >= {"handle", "contest_index", "mu", "sigma", "perf", "place"}
    assert len(pd.read_csv(out / "contests.csv")) == len(contests)


@pytest.mark.parametrize("fmt", ["tar", "csv", "json"])
def test_other_input_formats(tmp_path, data_dir, contests, fmt):
    if fmt == "tar":
        path = tmp_path / "h.tar.gz"
        with tarfile.open(path, "w:gz") as tf:
            tf.add(data_dir, arcname="cache/x")
        expect = contests
    elif fmt == "csv":
        path = tmp_path / "h.csv"
        write_contests_csv(contests, path)
        expect = contests
    else:
        path = data_dir / "0.json"
        expect = contests[:1]
    out = tmp_path / "out"
    assert main(["rate", str(path), "--system", "mmr-fast", "--out", str(out)]) == 0
    r = Rater("mmr-fast")
    r.extend(expect)
    np.testing.assert_allclose(
        _ratings(out)["mu"].to_numpy(), r.ratings().set_index("handle").sort_index()["mu"],
        rtol=0, atol=1e-9,
    )


def test_first_n_checkpoint_and_resume(tmp_path, data_dir):
    full, part, resumed = tmp_path / "full", tmp_path / "part", tmp_path / "resumed"
    ck = tmp_path / "ck.npz"
    assert main(["rate", str(data_dir), "--out", str(full)]) == 0
    assert main(["rate", str(data_dir), "-n", "3", "--out", str(part),
                 "--checkpoint", str(ck)]) == 0
    assert _ratings(part)["contests"].max() <= 3
    assert main(["rate", str(data_dir), "--resume", str(ck), "--out", str(resumed)]) == 0
    pd.testing.assert_frame_equal(_ratings(full), _ratings(resumed))


def test_params_file_and_set(tmp_path, data_dir):
    cfg = tmp_path / "p.json"
    cfg.write_text(json.dumps({"system": "mmr", "params": {"weight_limit": 0.5}}))
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert main(["rate", str(data_dir), "--params", str(cfg), "--out", str(a)]) == 0
    assert main(["rate", str(data_dir), "--set", "weight_limit=0.5", "--out", str(b)]) == 0
    assert main(["rate", str(data_dir), "--out", str(c)]) == 0
    pd.testing.assert_frame_equal(_ratings(a), _ratings(b))
    assert not np.allclose(_ratings(a)["mu"], _ratings(c)["mu"])


def test_errors_are_clear_and_write_nothing(tmp_path, data_dir, capsys):
    out = tmp_path / "out"
    assert main(["rate", str(data_dir), "--system", "nope", "--out", str(out)]) == 2
    assert "unknown rating system 'nope'" in capsys.readouterr().err
    assert main(["rate", str(data_dir), "--set", "bogus=1", "--out", str(out)]) == 2
    assert "bogus" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "0.json").write_text(json.dumps(
        {"name": "R1", "time_seconds": 0, "standings": [["a", 0, 0], ["a", 1, 1]]}))
    assert main(["rate", str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "0.json" in err and "'R1'" in err and "'a'" in err and "duplicate" in err
    assert not out.exists()
    assert main(["rate", str(tmp_path / "missing"), "--out", str(out)]) == 1
    assert "missing" in capsys.readouterr().err


def test_help_lists_every_option():
    proc = subprocess.run([sys.executable, "-m", "podium.cli", "rate", "--help"],
                          capture_output=True, text=True, check=True)
    for opt in ("--system", "--out", "-n", "--checkpoint", "--resume", "--dedupe",
                "--sort-by-time", "--params", "--set"):
        assert opt in proc.stdout
    top = subprocess.run([sys.executable, "-m", "podium.cli", "--help"],
                         capture_output=True, text=True, check=True)
    assert "rate" in top.stdout and "systems" in top.stdout


def test_systems_and_example(tmp_path, capsys):
    assert main(["systems"]) == 0
    listed = capsys.readouterr().out
    for name in ("mmr", "mmr-fast", "mmx", "mmx-fast", "mmr-simple", "mmr-inf"):
        assert f"{name}:" in listed
    assert main(["systems", "-v"]) == 0
    verbose = capsys.readouterr().out
    from podium.systems import SYSTEMS

    assert verbose.count("\n    teams: ") == len(SYSTEMS)  # every system has a team rule
    assert "team rounds refused" not in verbose
    assert main(["example", str(tmp_path / "ex"), "--players", "50", "--rounds", "3"]) == 0
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == ["0.json", "1.json", "2.json"]


HISTORY_COLUMNS = ["handle", "contest_index", "mu", "sigma", "display_rating", "perf", "place",
                   "team"]
RATING_COLUMNS = ["handle", "mu", "sigma", "display_rating", "contests", "last_contest_time",
                  "max_display_rating", "last_change"]
CONTEST_COLUMNS = ["contest_index", "name", "time_seconds", "url", "players", "skipped"]


def test_output_files_contract(tmp_path, data_dir, contests, capsys):
    """`podium rate PATH --system S --out DIR` writes the three documented CSVs whose
    floats read back bit-equal to the rater's own values."""
    out = tmp_path / "out"
    assert main(["rate", str(data_dir), "--system", "mmr", "--out", str(out),
                 "--no-progress"]) == 0
    assert "writing" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["contests.csv", "histories.csv",
                                                     "ratings.csv"]
    for name, cols in (("ratings", RATING_COLUMNS), ("histories", HISTORY_COLUMNS),
                       ("contests", CONTEST_COLUMNS)):
        assert (out / f"{name}.csv").read_text().split("\n", 1)[0] == ",".join(cols)
    direct = Rater("mmr")
    direct.extend(contests)
    ref = direct.ratings()
    got = pd.read_csv(out / "ratings.csv")
    assert got["handle"].tolist() == ref["handle"].tolist()  # same order: best first
    for col in RATING_COLUMNS[1:]:
        np.testing.assert_array_equal(got[col].to_numpy(), ref[col].to_numpy())
    # Python's float() of the raw text is bit-equal too (shortest round-trip text)
    lines = (out / "ratings.csv").read_text().splitlines()[1:]
    mu = np.array([float(line.split(",")[1]) for line in lines])
    np.testing.assert_array_equal(mu.view(np.int64), ref["mu"].to_numpy().view(np.int64))
    cont = pd.read_csv(out / "contests.csv", keep_default_na=False)
    assert cont["skipped"].tolist() == [False] * len(contests)
    assert cont["players"].tolist() == [len(c) for c in contests]


def _nulls_as_none(values: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in values.tolist()]


def test_format_parquet(tmp_path, data_dir):
    pq = pytest.importorskip("pyarrow.parquet")
    csv_out, pq_out = tmp_path / "csv", tmp_path / "pq"
    assert main(["rate", str(data_dir), "--out", str(csv_out), "--no-progress"]) == 0
    assert main(["rate", str(data_dir), "--out", str(pq_out), "--format", "parquet",
                 "--no-progress"]) == 0
    assert sorted(p.name for p in pq_out.iterdir()) == ["contests.parquet",
                                                        "histories.parquet", "ratings.parquet"]
    for name in ("ratings", "histories", "contests"):
        a = pd.read_csv(csv_out / f"{name}.csv", keep_default_na=False, na_values=[""])
        b = pq.read_table(pq_out / f"{name}.parquet").to_pandas()
        assert list(b.columns) == list(a.columns)
        for col in a.columns:
            if b[col].dtype.kind == "f":
                np.testing.assert_array_equal(a[col].to_numpy().view(np.int64),
                                              b[col].to_numpy().view(np.int64))
            else:  # an empty CSV field (a contest without url) is null in Parquet
                assert _nulls_as_none(a[col]) == _nulls_as_none(b[col]), (name, col)
    nohist = tmp_path / "nohist"
    assert main(["rate", str(data_dir), "--out", str(nohist), "--format", "parquet",
                 "--no-histories", "--no-progress"]) == 0
    assert sorted(p.name for p in nohist.iterdir()) == ["contests.parquet", "ratings.parquet"]


def test_out_that_is_a_file_is_one_clear_error(tmp_path, data_dir):
    afile = tmp_path / "taken"
    afile.write_text("keep me")
    for out in (afile, afile / "sub"):
        proc = subprocess.run(
            [sys.executable, "-m", "podium.cli", "rate", str(data_dir), "--out", str(out),
             "--no-progress"], capture_output=True, text=True)
        assert proc.returncode == 1
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("podium: error: ")
        assert "exists and is not a directory" in lines[0] and str(afile) in lines[0]
        assert "Traceback" not in proc.stderr
    assert afile.read_text() == "keep me"
