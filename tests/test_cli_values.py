"""Issue 31, item 5: every command with bad values ends in one ``podium: error:`` line
and exit status 2, naming the option or parameter and its range -- never a traceback.

Before: ``--set weight_limit=1e308``, ``sig_limit=1e-320``, ``sig_limit=1e300`` and
``mu_noob=1e308`` died in a ZeroDivisionError, ``--set noob_delay=abc`` in a ValueError,
``-n -5`` in a ValueError; a contest weight of 1e300 divided by zero and 1e5 was rated
silently (the store refused both).  Now every system parameter has a range
(:mod:`podium.systems.base.params`) and a test rates a small history at both ends of
every range of every system; contest weights have one range everywhere
(:func:`podium.core.guards.contest_weight_problem`, ``--any-weight`` for research).
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from podium import Contest, Rater
from podium.cli import main
from podium.errors import ConfigError
from podium.systems import SYSTEMS, get_system
from podium.systems.base.params import MAX_MAGNITUDE, MIN_POSITIVE

T0 = 1_600_000_000


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("values") / "hist"
    d.mkdir()
    for k in range(3):
        doc = {"name": f"c{k}", "time_seconds": T0 + 86_400 * k,
               "standings": [["a", 0, 0], ["b", 1, 1], ["c", 2, 2]]}
        (d / f"{k}.json").write_text(json.dumps(doc))
    return d


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, data: Path) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('values-db') / 's.db'}"
    assert main(["ingest", str(data), "--db", url, "-q", "--no-progress"]) == 0
    return url


# (the command line with {data}, {store}, {out} filled in, what the one line names)
BAD_VALUES: list[tuple[list[str], str]] = [
    (["rate", "{data}", "-o", "{out}", "--set", "weight_limit=1e308"], "weight_limit must be"),
    (["rate", "{data}", "-o", "{out}", "--set", "sig_limit=1e-320"], "sig_limit must be"),
    (["rate", "{data}", "-o", "{out}", "--set", "sig_limit=1e300"], "[1e-12, 1e+06]"),
    (["rate", "{data}", "-o", "{out}", "--set", "mu_noob=1e308"], "within [-6000, 9000]"),
    (["rate", "{data}", "-o", "{out}", "--set", "noob_delay=abc"], "noob_delay must be a list"),
    (["rate", "{data}", "-o", "{out}", "--set", "rho=nan"], "rho must be"),
    (["rate", "{data}", "-o", "{out}", "--set", "split_ties=3"], "split_ties must be True"),
    (["rate", "{data}", "-o", "{out}", "--set", "novalue"], "--set expects NAME=VALUE"),
    (["rate", "{data}", "-o", "{out}", "--set", "bogus=1"], "unknown parameter"),
    (["rate", "{data}", "-o", "{out}", "-s", "glicko", "--set", "beta=0"], "beta must be"),
    (["rate", "{data}", "-o", "{out}", "-s", "nope"], "nope"),
    (["rate", "{data}", "-o", "{out}", "-n", "-5"], "argument -n: -5 is not an integer >= 0"),
    (["rate", "{data}", "-o", "{out}", "--format", "xls"], "argument --format: invalid choice"),
    (["rate", "{data}"], "the following arguments are required: --out/-o"),
    (["systems", "--bogus"], "unrecognized arguments: --bogus"),
    (["example", "{out}", "--players", "-3"], "argument --players: -3 is not an integer >= 2"),
    (["example", "{out}", "--participation", "1.5"], "--participation: 1.5 is not a number"),
    (["ingest", "{data}", "--db", "{store}", "--batch", "0"], "--batch"),
    (["ingest", "{data}", "--db", "{store}", "--set", "sig_limit=1e-320"], "sig_limit must be"),
    (["ingest", "{data}", "--db", "{store}", "-n", "-1"], "-n"),
    (["explain", "--db", "{store}", "--contest", "c0", "--player", "a", "--top", "-1"], "--top"),
    (["token", "create", "x", "--db", "{store}", "--role", "god"], "invalid choice: 'god'"),
    (["audit", "--db", "{store}", "-n", "5000"], "-n must be in 0..1000"),
    (["export", "ratings", "--db", "{store}", "-o", "{out}", "--format", "xls"], "--format"),
    (["serve", "--db", "{store}", "--port", "70000"], "--port must be in 0..65535"),
    (["serve", "--db", "{store}", "--max-exports", "0"], "--max-exports"),
    (["fetch", "codeforces", "{out}", "--since", "2018-13-01"], "--since"),
    (["eval", "{data}", "-s", "mmr", "--train-frac", "2"], "--train-frac: 2 is not a number"),
    (["eval", "{data}", "-s", "mmr", "--set", "mu_noob=1e308"], "mu_noob must be"),
    (["compare", "{data}", "--systems", "mmr,glicko", "-n", "-1"], "-n: -1 is not an integer"),
    (["tune", "{data}", "-s", "mmr", "--trials", "0"], "--trials: 0 is not an integer >= 1"),
    (["incentive", "{data}", "-n", "-4"], "-n: -4 is not an integer"),
    (["teams-sim", "{out}", "--players", "0"], "--players: 0 is not an integer"),
    (["replay-codeforces", "{out}", "--bogus"], "unrecognized arguments"),
    (["db-info", "--db", "{store}", "--bogus"], "unrecognized arguments"),
]


@pytest.mark.parametrize("argv, needle", BAD_VALUES, ids=lambda x: " ".join(x)
                         if isinstance(x, list) else None)
def test_every_command_refuses_bad_values_in_one_line(
        argv: list[str], needle: str, data: Path, store: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    filled = [a.format(data=data, store=store, out=tmp_path / "out") for a in argv]
    try:
        rc = main(filled)
    except SystemExit as exc:  # the parser's refusal
        rc = int(exc.code or 0)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, (rc, err)
    assert len(err) == 1 and err[0].startswith("podium: error: "), err
    assert needle in err[0], err
    assert "Traceback" not in err[0]


def test_contest_weights_have_one_range(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.json"
    for w in (1e300, 1e5, 1e-5):
        path.write_text(json.dumps({"name": "w", "time_seconds": T0, "weight": w,
                                    "standings": [["a", 0, 0], ["b", 1, 1]]}))
        assert main(["rate", str(path), "-o", str(tmp_path / "o")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is outside [0.001, 100]" in err[0], err
        assert "--any-weight" in err[0]
    # research data: any weight, at the user's risk; never a traceback
    path.write_text(json.dumps({"name": "w", "time_seconds": T0, "weight": 1e5,
                                "standings": [["a", 0, 0], ["b", 1, 1]]}))
    assert main(["rate", str(path), "-o", str(tmp_path / "o"), "--any-weight"]) == 0
    capsys.readouterr()
    path.write_text(json.dumps({"name": "w", "time_seconds": T0, "weight": 1e300,
                                "standings": [["a", 0, 0], ["b", 1, 1]]}))
    rc = main(["rate", str(path), "-o", str(tmp_path / "o"), "--any-weight"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc in (0, 1) and not any("Traceback" in x for x in err), err
    assert rc == 0 or (len(err) == 1 and err[0].startswith("podium: error: ")), err


def test_no_traceback_in_a_real_process(tmp_path: Path, data: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "podium", "rate", str(data), "-o",
                          str(tmp_path / "o"), "--set", "weight_limit=1e308"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "podium: error: weight_limit must be a number in [1e-12, 1e+06], got 1e+308"]


# ------------------------------------------------------------------ every range holds
_ENDS = {
    "finite": (-MAX_MAGNITUDE, MAX_MAGNITUDE), "positive": (MIN_POSITIVE, MAX_MAGNITUDE),
    "nonnegative": (0.0, MIN_POSITIVE, MAX_MAGNITUDE),
    "positive_or_inf": (MIN_POSITIVE, MAX_MAGNITUDE, math.inf),
    "nonnegative_or_inf": (0.0, MIN_POSITIVE, MAX_MAGNITUDE, math.inf),
    "open_unit": (MIN_POSITIVE, 1 - MIN_POSITIVE),
    "number_or_none": (-MAX_MAGNITUDE, MAX_MAGNITUDE, math.inf),
}


def _history() -> list[Contest]:
    """Ties, a newcomer, the extreme contest weights, days and a year apart."""
    return [Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 3), ("d", 2, 3)], name="c1",
                    time_seconds=T0, weight=1e-3),
            Contest([("b", 0, 0), ("a", 1, 1), ("c", 2, 2), ("e", 3, 3)], name="c2",
                    time_seconds=T0 + 86_400 * 30, weight=100.0),
            Contest([("c", 0, 0), ("d", 1, 1), ("a", 2, 2), ("b", 3, 3), ("e", 4, 4)],
                    name="c3", time_seconds=T0 + 86_400 * 400)]


def _ends(field: dataclasses.Field[object]) -> list[float]:
    check = field.metadata.get("check") or {"float": "finite",
                                            "float | None": "number_or_none"}.get(str(field.type))
    if check not in _ENDS:
        return []
    lo, hi = field.metadata.get("lo"), field.metadata.get("hi")
    out = [v for v in _ENDS[check] if not math.isfinite(v)
           or ((lo is None or v >= lo) and (hi is None or v <= hi))]
    return out + [v for v in (lo, hi) if v is not None]


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_every_parameter_range_is_safe_at_both_ends(name: str) -> None:
    """At each end of each parameter's range (and with the extreme contest weights),
    every system rates without an exception and with finite ratings."""
    for field in dataclasses.fields(get_system(name)):
        for value in _ends(field):
            try:
                system = get_system(name, **{field.name: value})
            except ConfigError:  # the system's own rule narrows the range further
                continue
            rater = Rater(system)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rater.extend(_history())
            table = rater.ratings()
            for col in ("mu", "sigma"):
                assert np.isfinite(np.asarray(table[col])).all(), (name, field.name, value)
