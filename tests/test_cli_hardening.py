"""`podium` against careless and hostile input (issue 14): every failure is one
``podium: error: ...`` line naming the file, line or member; warnings are printed by
default and counted; the handle, time and CSV-time guards have their flags."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from podium.cli import MAX_SHOWN_WARNINGS, main

T = 1_600_000_000
BIG = "9" * 5000


def contest(name: str = "R", t: Any = T, standings: Any = None, **meta: Any) -> dict[str, Any]:
    return {"name": name, "time_seconds": t,
            "standings": [["a", 0, 0], ["b", 1, 1]] if standings is None else standings, **meta}


def json_file(d: Any) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        p = tmp / "c.json"
        p.write_text(d if isinstance(d, str) else json.dumps(d), encoding="utf-8")
        return p
    return make


def csv_file(text: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        p = tmp / "c.csv"
        p.write_text(text, encoding="utf-8")
        return p
    return make


def history_dir(times: list[int]) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        d = tmp / "hist"
        d.mkdir()
        for k, t in enumerate(times):
            (d / f"{k}.json").write_text(json.dumps(contest(f"c{k}", t)))
        return d
    return make


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    rc = main(argv)
    return rc, capsys.readouterr().err.splitlines()


def one_error(rc: int, lines: list[str]) -> str:
    assert rc == 1, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("podium: error: ")
    assert len(lines[0]) < 400, lines[0]
    return lines[0]


CSV_HEAD = "contest,time_seconds,player,place\n"

# (id, make the input, extra options, substrings of the one error line)
BAD_INPUTS: list[tuple[str, Callable[[Path], Path], list[str], list[str]]] = [
    ("json-5000-digit-place",
     json_file('{"name":"R","time_seconds":1,"standings":[["a",0,0],["b",1,' + BIG + ']]}'), [],
     ["c.json: invalid JSON at line 1, column 60", "more than 4300 digits"]),
    ("json-5000-digit-time",
     json_file('{"name":"R","time_seconds":' + BIG + ',"standings":[["a",0,0]]}'), [],
     ["c.json: invalid JSON at line 1, column 28", "digits"]),
    ("json-5000-digit-weight",
     json_file('{"name":"R","time_seconds":1,"weight":' + BIG + ',"standings":[["a",0,0]]}'), [],
     ["c.json: invalid JSON at line 1, column 39", "digits"]),
    ("csv-5000-digit-place", csv_file(f"{CSV_HEAD}c,{T},a,1\nc,{T},b,{BIG}\n"), [],
     ["c.csv, line 3: contest 'c', player 'b': place must be finite"]),
    ("csv-5000-digit-score",
     csv_file(f"contest,time_seconds,player,score\nc,{T},a,1\nc,{T},b,{BIG}\n"), [],
     ["c.csv, line 3: contest 'c', player 'b': score must be finite"]),
    ("csv-5000-digit-time", csv_file(f"{CSV_HEAD}c,{BIG},a,1\n"), [],
     ["c.csv, line 2: contest 'c': time must be finite"]),
    ("csv-5000-digit-weight",
     csv_file(f"contest,time_seconds,player,place,weight\nc,{T},a,1,{BIG}\n"), [],
     ["c.csv, line 2: contest 'c': weight must be finite"]),
    ("json-surrogate-handle",
     json_file('{"name":"R","time_seconds":1600000000,"standings":[["\\ud800x",0,0]]}'), [],
     ["c.json: contest 'R', player '\\ud800x'", "lone surrogate"]),
    ("json-surrogate-handle-raw",
     json_file('{"name":"R","time_seconds":1600000000,"standings":[["\\ud800x",0,0]]}'),
     ["--raw-handles"], ["c.json: contest 'R', player '\\ud800x'", "lone surrogate"]),
    ("json-surrogate-name",
     json_file('{"name":"R\\ud800","time_seconds":1600000000,"standings":[["a",0,0]]}'), [],
     ["c.json: 'name' 'R\\ud800' is not Unicode text"]),
    ("json-surrogate-url",
     json_file('{"name":"R","url":"\\udfff","time_seconds":1600000000,"standings":[["a",0,0]]}'),
     [], ["c.json: contest 'R': 'url' '\\udfff' is not Unicode text"]),
    ("milliseconds", json_file(contest(t=1_602_505_600_000)), [],
     ["c.json: contest 'R': time_seconds=1602505600000 is after 2200-01-01",
      "looks like milliseconds: in seconds it is 1602505600"]),
    ("int64-time", json_file(contest(t=2**63 - 1 - 10**6)), ["--allow-future"],
     ["c.json: contest 'R': time_seconds=9223372036853775807 is after 2200-01-01"]),
    ("before-1800", csv_file(f"{CSV_HEAD}c,-5364662401,a,1\nc,-5364662401,b,2\n"), [],
     ["c.csv, line 2: contest 'c': time_seconds=-5364662401 is before 1800-01-01"]),
    ("future", history_dir([T, int(time.time()) + 30 * 86_400]), [],
     ["1.json: contest 'c1': time_seconds=", "in the future", "--allow-future"]),
    ("csv-without-times", csv_file("contest,player,place\nc,a,1\nc,b,2\n"), [],
     ["c.csv, line 1: no 'time_seconds' (or 'time') column", "--no-times"]),
    ("nfd-nfc-duplicate", json_file(contest(standings=[["e\u0301", 0, 0], ["\u00e9", 1, 1]])),
     [], ["c.json: contest 'R', player 'é': duplicate handle: 'e\\u0301' and '\\xe9'"]),
    ("spaces-duplicate", json_file(contest(standings=[["ann", 0, 0], [" ann ", 1, 1]])), [],
     ["c.json: contest 'R', player 'ann': duplicate handle: 'ann' and ' ann '"]),
    ("bidi-override", json_file(contest(standings=[["a", 0, 0], ["evil\u202egnp", 1, 1]])), [],
     ["c.json: contest 'R', player 'evil\\u202egnp'", "U+202E"]),
    ("zero-width", json_file(contest(standings=[["a\u200b", 0, 0]])), [],
     ["player 'a\\u200b'", "U+200B", "invisible format character"]),
    ("control", csv_file(f"{CSV_HEAD}c,{T},a\x1bb,1\n"), [],
     ["c.csv, line 2: contest 'c', player 'a\\x1bb'", "U+001B", "control character"]),
    ("nul", json_file(contest(standings=[["a\x00", 0, 0]])), [],
     ["player 'a\\x00'", "U+0000"]),
    ("whitespace-only", json_file(contest(standings=[["\u3000 ", 0, 0]])), [],
     ["c.json: contest 'R', player", "empty or only whitespace"]),
    ("10000-characters", json_file(contest(standings=[["x" * 10_000, 0, 0]])), [],
     ["c.json: contest 'R', player 'xxxxxxxx", "...': 10000 characters; at most 128"]),
    ("team-name", json_file(contest(standings=[["red\u2066", 0, 0, ["a"]]])), [],
     ["c.json: contest 'R', team 'red\\u2066'", "U+2066"]),
]


@pytest.mark.parametrize(("make", "options", "needles"),
                         [pytest.param(m, o, n, id=i) for i, m, o, n in BAD_INPUTS])
def test_bad_input_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     make: Callable[[Path], Path], options: list[str],
                                     needles: list[str]) -> None:
    path = make(tmp_path)
    out = tmp_path / "out"
    line = one_error(*run(["rate", str(path), "-o", str(out), "--no-progress", *options],
                          capsys))
    for needle in needles:
        assert needle in line, line
    assert str(tmp_path) in line  # the file is named
    assert not out.exists()


def test_raw_handles_keeps_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = json_file(contest(standings=[["e\u0301", 0, 0], ["\u00e9", 1, 1],
                                        ["evil\u202egnp", 2, 2]]))(tmp_path)
    out = tmp_path / "out"
    rc, _ = run(["rate", str(path), "-o", str(out), "--no-progress", "--raw-handles"], capsys)
    assert rc == 0
    handles = set(pd.read_csv(out / "ratings.csv", keep_default_na=False)["handle"])
    assert handles == {"e\u0301", "\u00e9", "evil\u202egnp"}


def test_handles_are_trimmed_and_merged(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = csv_file(f"{CSV_HEAD}c1,{T},\" e\u0301 \",1\nc1,{T},b,2\n"
                    f"c2,{T + 60},\u00e9,2\nc2,{T + 60},b,1\n")(tmp_path)
    out = tmp_path / "out"
    assert run(["rate", str(path), "-o", str(out), "--no-progress"], capsys)[0] == 0
    ratings = pd.read_csv(out / "ratings.csv", keep_default_na=False)
    assert sorted(ratings["handle"]) == ["b", "\u00e9"]
    assert ratings["contests"].tolist() == [2, 2]


@pytest.mark.parametrize("where", ["out-file", "out-under-file", "example-file",
                                   "checkpoint-dir", "checkpoint-missing-dir"])
def test_output_paths_are_checked_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        where: str) -> None:
    data = history_dir([T, T + 60])(tmp_path)
    afile = tmp_path / "taken"
    afile.write_text("keep me")
    base = ["rate", str(data), "--no-progress"]
    argv = {
        "out-file": [*base, "-o", str(afile)],
        "out-under-file": [*base, "-o", str(afile / "sub")],
        "example-file": ["example", str(afile), "--players", "10", "--rounds", "2"],
        "checkpoint-dir": [*base, "-o", str(tmp_path / "o"), "--checkpoint", str(tmp_path)],
        "checkpoint-missing-dir": [*base, "-o", str(tmp_path / "o"), "--checkpoint",
                                   str(tmp_path / "nope" / "ck.npz")],
    }[where]
    line = one_error(*run(argv, capsys))
    assert ("is not a directory" in line or "is a directory" in line
            or "does not exist" in line), line
    assert afile.read_text() == "keep me"
    assert not (tmp_path / "o").exists()


def test_resume_from_a_contest_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = csv_file(f"{CSV_HEAD}c,{T},a,1\nc,{T},b,2\n")(tmp_path)
    line = one_error(*run(["rate", str(path), "-o", str(tmp_path / "o"), "--resume", str(path)],
                          capsys))
    assert f"{path}: not a Podium checkpoint" in line and "pickle" not in line


def test_huge_parameter_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = history_dir([T])(tmp_path)
    for value in (BIG, "9" * 400):
        rc, lines = run(["rate", str(data), "-o", str(tmp_path / "o"), "--set",
                         f"weight_limit={value}"], capsys)
        line = one_error(1, lines)  # one line ...
        assert rc == 2 and "out of range" in line  # ... and the status of a bad option


# ---------------------------------------------------------------------- warnings
def _warnings(lines: list[str]) -> list[str]:
    return [x for x in lines if x.startswith("warning: ")]


def test_warnings_are_printed_by_default_and_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = history_dir([T, T - 3600])(tmp_path)  # time-reversed
    out = str(tmp_path / "out")
    rc, lines = run(["rate", data.as_posix(), "-o", out, "--no-progress"], capsys)
    assert rc == 0
    shown = _warnings(lines)
    assert len(shown) == 2  # the history check's and the rater's
    assert "contest #1 'c1'" in shown[0] and "earlier than contest #0 'c0'" in shown[0]
    assert "contest 'c1' (#1)" in shown[1]
    assert lines[-1] == "2 warning(s), shown above"
    rc, lines = run(["rate", data.as_posix(), "-o", out, "--no-progress", "-q"], capsys)
    assert rc == 0 and not _warnings(lines) and not any(x.startswith("hint") for x in lines)
    assert lines[-1] == "2 warning(s), not shown (--quiet)"
    rc, lines = run(["-q", "rate", data.as_posix(), "-o", out, "--no-progress"], capsys)
    assert not _warnings(lines)
    ok = tmp_path / "ok"
    ok.mkdir()
    rc, lines = run(["rate", str(history_dir([T, T + 1])(ok)), "-o", out, "--no-progress"],
                    capsys)
    assert rc == 0 and not _warnings(lines) and "warning(s)" not in lines[-1]


def test_many_warnings_are_capped_unless_verbose(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = 30
    data = history_dir([T + 86_400 * (n - k) for k in range(n)])(tmp_path)  # all reversed
    out = str(tmp_path / "out")
    rc, lines = run(["rate", str(data), "-o", out, "--no-progress"], capsys)
    assert rc == 0
    total = 11 + (n - 1)  # the history check: 10 and a count; the rater: one each
    assert len(_warnings(lines)) == MAX_SHOWN_WARNINGS
    assert lines[-1] == (f"{total} warning(s); the first {MAX_SHOWN_WARNINGS} are shown above, "
                         "-v shows all")
    for argv in (["-v", "rate"], ["rate", "-v"]):
        rc, lines = run([*argv, str(data), "-o", out, "--no-progress"], capsys)
        assert len(_warnings(lines)) == total and lines[-1] == f"{total} warning(s), shown above"


def test_skipped_archive_members_are_warnings(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = history_dir([T])(tmp_path)
    (src / "1.json").symlink_to("0.json")
    path = tmp_path / "h.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        tf.add(src, arcname="cache/x")
    rc, lines = run(["rate", str(path), "-o", str(tmp_path / "o"), "--no-progress"], capsys)
    assert rc == 0
    assert _warnings(lines) == [f"warning: skipped {path}, member cache/x/1.json: a symbolic "
                                "link (to '0.json'); only regular files are read from an archive"]
    assert lines[-1] == "1 warning(s), shown above"


# ---------------------------------------------------------------------- flags
def test_no_times_rates_in_file_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = csv_file("contest,player,place\nz,a,1\nz,b,2\ny,a,2\ny,b,1\n")(tmp_path)
    out = tmp_path / "out"
    rc, lines = run(["rate", str(path), "-o", str(out), "--no-progress", "--no-times"], capsys)
    assert rc == 0
    notes = [x for x in lines if "no time column" in x]
    assert notes == [f"changed: {path} has no time column: its 2 contest(s) are rated in file "
                     "order, all at time 0 (--no-times)"]
    contests = pd.read_csv(out / "contests.csv")
    assert contests["name"].tolist() == ["z", "y"] and set(contests["time_seconds"]) == {0}


def test_allow_future(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = history_dir([T, int(time.time()) + 30 * 86_400])(tmp_path)
    rc, _ = run(["rate", str(data), "-o", str(tmp_path / "o"), "--no-progress",
                 "--allow-future"], capsys)
    assert rc == 0


def test_other_commands_take_the_input_flags(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rows = "".join(f"c{k},{p},{(k + i) % 3 + 1}\n" for k in range(4)
                   for i, p in enumerate("abc"))
    path = csv_file("contest,player,place\n" + rows)(tmp_path)
    line = one_error(*run(["eval", str(path), "-s", "mmr", "--no-progress"], capsys))
    assert "no 'time_seconds'" in line
    rc, _ = run(["eval", str(path), "-s", "mmr", "--no-progress", "--no-times", "--json",
                 "--train-frac", "0.5", "--min-history", "1"], capsys)
    assert rc == 0
    for cmd in ("rate", "eval", "compare", "tune", "incentive"):
        text = subprocess.run([sys.executable, "-m", "podium", cmd, "--help"],
                              capture_output=True, text=True, check=True).stdout
        for opt in ("--raw-handles", "--allow-future", "--no-times"):
            assert opt in text, (cmd, opt)


def test_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    """The same errors from ``python -m podium`` (stderr as a user sees it)."""
    bad = tmp_path / "s.json"
    bad.write_text('{"name":"R","time_seconds":1600000000,"standings":[["\\ud800x",0,0]]}')
    big = tmp_path / "b.json"
    big.write_text('{"name":"R","time_seconds":' + BIG + ',"standings":[["a",0,0]]}')
    for path in (bad, big):
        proc = subprocess.run([sys.executable, "-m", "podium", "rate", str(path), "-o",
                               str(tmp_path / "o"), "--no-progress"],
                              capture_output=True, text=True)
        assert proc.returncode == 1
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"podium: error: {path}"), proc.stderr


def test_log_handler_keeps_tracebacks_and_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """What `podium serve` logs through the handler: errors with their traceback, every
    warning (no cap outside `podium rate`)."""
    import logging

    from podium.cli import _StderrLog

    handler = _StderrLog(logging.WARNING)
    log = logging.getLogger("podium.test-hardening")
    log.addHandler(handler)
    log.propagate = False
    try:
        for k in range(MAX_SHOWN_WARNINGS + 5):
            log.warning("w%d", k)
        log.info("not shown")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("internal error")
    finally:
        log.removeHandler(handler)
    err = capsys.readouterr().err
    assert err.count("warning: w") == MAX_SHOWN_WARNINGS + 5 == handler.warnings == handler.shown
    assert "not shown" not in err
    assert "error: internal error\nTraceback" in err and "RuntimeError: boom" in err
