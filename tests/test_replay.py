"""``podium replay-codeforces``: recomputing official Codeforces rating changes.

* every official contest file (``contest.ratingChanges`` JSON) found under
  ``codeforces-official/`` of the shared data sets (tests/_require.py finds them; more
  files, more checks): every new rating reproduced, through the function and through
  the sub-command (last line, empty diff CSV with its header); contest 908 ("Good Bye
  2017") is 6691 of 6691.  The end of the run prints the numbers matched;
* a tiny hand-worked contest (the 3-player round of tests/test_codeforces.py, arithmetic
  repeated below) as an API envelope, with one deliberately wrong official value, and
  with ties given by equal ranks;
* unreadable input: a clear error naming the file and the row, exit status 1.

The sub-command is exercised through a throwaway argparse parser (the lead wires
``add_parsers`` into ``podium.cli``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
from pathlib import Path
from typing import Any

import pytest
from _agreement import REPLAYED
from _require import ENABLE_DATA, data_path, unavailable

from podium.errors import DataFormatError
from podium.replay import DIFF_COLUMNS, add_parsers, replay_codeforces

OFFICIAL_DIR = data_path("codeforces-official")
OFFICIAL_FILES = sorted(OFFICIAL_DIR.glob("*.json")) if OFFICIAL_DIR.is_dir() else []


def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="podium")
    sub = parser.add_subparsers(dest="command")
    add_parsers(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


def row(handle: str, rank: int, old: int, new: int) -> dict[str, Any]:
    return {"contestId": 1, "contestName": "Tiny", "handle": handle, "rank": rank,
            "ratingUpdateTimeSeconds": 0, "oldRating": old, "newRating": new}


# 3 players (see tests/test_codeforces.py::test_three_players_by_hand for the seeds):
# B 1500 -> needed 1750, d 125; A 1600 -> needed 1525, d -37 (-37.5 truncated);
# C 1400 -> needed 1254, d -73; sum 15, inc1 = -15/3 - 1 = -6, inc2 = 0:
# B 1619, A 1557, C 1321.
TINY = [row("B", 1, 1500, 1619), row("A", 2, 1600, 1557), row("C", 3, 1400, 1321)]


@pytest.mark.slow
@pytest.mark.parametrize("official", OFFICIAL_FILES or [None],
                         ids=[p.name for p in OFFICIAL_FILES] or ["none found"])
def test_official_contests(official: Path | None, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    if official is None:
        unavailable(f"no official contest file (*.json) under {OFFICIAL_DIR}", ENABLE_DATA)
    res = replay_codeforces(official)
    REPLAYED.append((official.name, res.matched, res.total))
    print(f"{official.name}: {res.matched} of {res.total} match")
    assert res.total > 0, f"{official}: no rated participant"
    assert (res.matched, res.diffs[:5]) == (res.total, []), f"{official}: {res.contest}"
    if official.name == "908.json":
        assert (res.total, res.contest) == (6691, "908 (Good Bye 2017)")
    out = tmp_path / "diff.csv"
    assert run_cli(["replay-codeforces", str(official), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1] == f"{res.total} of {res.total} match"
    assert len(lines) >= 2  # a header before it
    assert out.read_text().splitlines() == [",".join(DIFF_COLUMNS)]


def test_tiny_contest_envelope_with_a_wrong_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [dict(r) for r in TINY]
    rows[1]["newRating"] = 1558  # not what the formulas give (1557)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"status": "OK", "result": rows}))
    res = replay_codeforces(path)
    assert (res.matched, res.total) == (2, 3)
    assert res.computed.tolist() == [1619, 1557, 1321]
    assert [(d.handle, d.rank, d.old_rating, d.official, d.computed) for d in res.diffs] == [
        ("A", 2, 1600, 1558, 1557)
    ]
    monkeypatch.chdir(tmp_path)  # default --out: replay-diff.csv in the current directory
    assert run_cli(["replay-codeforces", str(path)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "2 of 3 match"
    with open(tmp_path / "replay-diff.csv", newline="") as fh:
        got = list(csv.reader(fh))
    assert got == [list(DIFF_COLUMNS), ["A", "2", "1600", "1558", "1557"]]


def test_bare_list_ties_and_order(tmp_path: Path) -> None:
    # The 4-player round with a tie of tests/test_codeforces.py: Y 1800 first, W and X
    # (1500) share rank 2 -> both take place 3, Z 1200 fourth: 1890, 1476, 1476, 1152.
    rows = [row("Z", 4, 1200, 1152), row("Y", 1, 1800, 1890), row("W", 2, 1500, 1476),
            row("X", 2, 1500, 1476)]  # file order need not be standings order
    path = tmp_path / "tie.json"
    path.write_text(json.dumps(rows))
    res = replay_codeforces(path)
    assert (res.matched, res.total) == (4, 4)
    assert res.computed.tolist() == [1152, 1890, 1476, 1476]
    # ranks with a gap (an unrated participant in between) renumber among the rows
    gap = [dict(r) for r in TINY]
    gap[2]["rank"] = 7
    path.write_text(json.dumps(gap))
    assert replay_codeforces(path).matched == 3
    # an empty list is 0 of 0
    path.write_text("[]")
    assert (replay_codeforces(path).matched, replay_codeforces(path).total) == (0, 0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"status": "FAILED", "comment": "contestId: Contest with id 1 not found"}',
         "not found"),
        ('{"status": "FAILED", "result": []}', "not 'OK'"),
        ('{"rows": 3}', "without 'result'"),
        ("42", "expected a list"),
        (json.dumps([row("B", 1, 1500, 1619), {"handle": "A", "rank": 2, "newRating": 1}]),
         "row 1 (handle 'A'): missing field 'oldRating'"),
        (json.dumps([row("B", 1, 1500, 1619), row("A", 2, 1600, 1557) | {"rank": "2"}]),
         "row 1 (handle 'A'): rank must be an integer"),
        (json.dumps([row("B", 1, 1500, 1619), row("A", 2, 1600, 1557) | {"handle": 5}]),
         "row 1: field 'handle' must be a string"),
        (json.dumps([row("B", 0, 1500, 1619)]), "row 0 (handle 'B'): rank must be >= 1"),
        (json.dumps([row("B", 1, 1500.5, 1619)]), "oldRating must be an integer"),
        (json.dumps([3]), "row 0: expected an object"),
    ],
)
def test_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str,
                          message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(DataFormatError, match="bad.json") as info:
        replay_codeforces(path)
    assert message in str(info.value)
    out = tmp_path / "diff.csv"
    assert run_cli(["replay-codeforces", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "bad.json" in err and message in err
    assert not out.exists()


def test_missing_file_and_unwritable_output(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert run_cli(["replay-codeforces", str(missing), "-o", os.devnull]) == 1
    assert "nope.json: cannot read file" in capsys.readouterr().err
    good = tmp_path / "tiny.json"
    good.write_text(json.dumps(TINY))
    bad_out = tmp_path / "no-such-dir" / "diff.csv"
    assert run_cli(["replay-codeforces", str(good), "--out", str(bad_out)]) == 1
    assert "cannot write the difference CSV" in capsys.readouterr().err
