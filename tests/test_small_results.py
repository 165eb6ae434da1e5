"""The CSV of a small rater written without Arrow (podium.io.small_results): the same
bytes as podium.io.results on every kind of field, the float spelling of Arrow's cast,
what it declines, and a small ``podium rate`` that imports neither Arrow nor the other
modules it does not need."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.errors import PodiumError
from podium.io import small_results
from podium.io.results import write_results
from podium.io.small_results import format_double, small_csv_tables, write_small_results

SRC = Path(__file__).resolve().parents[1] / "src"

AWKWARD = [
    0.1 + 0.2, 1 / 3, 1e-300, 5e-324, 2.2250738585072014e-308, -0.0, 0.0, 1e17, 1e16, 1e15,
    123456789012345678.0, -float(2**63), 1.7976931348623157e308, 1e22, 1e21, 1e-7, 1e-6,
    1e-4, math.nextafter(1e-4, 0), 1e10, math.nextafter(1e10, 0), 1e9, 1500.0, -1500.0,
    1637.2345000000001, math.pi, math.inf, -math.inf, math.nan,
]


def arrow_spelling(values: list[float]) -> list[str]:
    """Arrow's cast of the doubles to text ('' for NaN, as the CSV writer leaves it)."""
    text = pc.cast(pa.array(values, pa.float64()), pa.string()).to_pylist()
    return ["" if v != v else t for v, t in zip(values, text, strict=True)]


def test_float_spelling_examples() -> None:
    assert [format_double(x) for x in AWKWARD] == arrow_spelling(AWKWARD)
    assert format_double(1e10) == "1e+10" and format_double(1e-7) == "1e-7"
    assert format_double(1500.0) == "1500" and format_double(-0.0) == "-0"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50))
def test_any_float_is_spelled_as_arrow(xs: list[float]) -> None:
    assert [format_double(x) for x in xs] == arrow_spelling(xs)


def test_any_bit_pattern_is_spelled_as_arrow() -> None:
    bits = np.random.default_rng(7).integers(0, 2**64, size=20_000, dtype=np.uint64)
    xs = bits.view(np.float64).tolist()
    assert [format_double(x) for x in xs] == arrow_spelling(xs)


def arrow_files(rater: Rater, out: Path, histories: bool = True) -> dict[str, bytes]:
    """What podium.io.results writes (Arrow), by table name."""
    written = write_results(rater, out, histories=histories)
    return {p.stem: p.read_bytes() for p in written}


def individual_rater(system: str) -> Rater:
    """Ties, handles that need quotes, non-ASCII text, a missing url, times before 1970."""
    handles = ["alice", "bob", 'q"uote', "com,ma", "zoë", "Émile", "new\nline", "b", "a"]
    rater = Rater(system)
    for k in range(4):
        order = handles[k:] + handles[:k]
        places = [i // 2 + 1 for i in range(len(order))]  # pairs tie
        rater.add(Contest.from_places(
            order, places, name=f"round, {k}" if k % 2 else f"r{k}",
            time_seconds=-86_400 * (10 - k), url=None if k == 1 else f"https://x/{k}"))
    return rater


def team_rater() -> Rater:
    rater = Rater("mmr")
    for k in range(3):
        teams = ['red, "one"', 'red, "one"', "blue", "blue", f"green{k}", f"green{k}"]
        rater.add(Contest.from_team_places(
            ["a", "b", "c", "d", "e", "f"], teams, [1, 1, 2, 2, 3, 3], name=f"t{k}",
            time_seconds=k))
    return rater


@pytest.mark.parametrize("system", ["mmr", "glicko", "trueskill", "elo-single"])
def test_the_same_bytes_as_arrow(tmp_path: Path, system: str) -> None:
    rater = individual_rater(system)
    want = arrow_files(rater, tmp_path / "arrow")
    got = small_csv_tables(rater)
    assert got is not None and list(got) == ["ratings", "contests", "histories"]
    assert got == want
    written = write_small_results(rater, tmp_path / "small" / "deep", histories=False)
    assert written is not None and [p.name for p in written] == ["ratings.csv", "contests.csv"]
    assert written[0].read_bytes() == want["ratings"]


def test_teams_nan_and_empty_raters_the_same_bytes_as_arrow(tmp_path: Path) -> None:
    rater = team_rater()
    assert small_csv_tables(rater) == arrow_files(rater, tmp_path / "t")
    empty = Rater("mmr")
    assert small_csv_tables(empty) == arrow_files(empty, tmp_path / "e")
    nan = individual_rater("mmr")
    nan.players.mu[0] = math.nan  # NaN ratings sort last and are written empty
    nan.players.last_change[1] = math.inf
    got = small_csv_tables(nan)
    assert got == arrow_files(nan, tmp_path / "n")
    assert got is not None and b",inf\n" in got["ratings"]


def test_large_raters_and_texts_that_are_not_unicode_are_declined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rater = individual_rater("mmr")
    monkeypatch.setattr(small_results, "SMALL_MAX_ROWS", len(rater.events) - 1)
    assert small_csv_tables(rater) is None
    assert write_small_results(rater, tmp_path / "none") is None
    assert not (tmp_path / "none").exists()
    monkeypatch.undo()
    bad = Rater("mmr")
    bad.add(Contest.from_places(["ok", "\udc80"], [1, 2], name="r", time_seconds=0))
    assert small_csv_tables(bad) is None
    with pytest.raises(PodiumError, match="not valid Unicode"):
        write_results(bad, tmp_path / "bad")


def test_an_output_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(PodiumError, match="exists and is not a directory"):
        write_small_results(individual_rater("mmr"), tmp_path / "f")


#: Modules a ``podium rate`` of a small CSV needs none of (they are imported where used).
LAZY = ("pyarrow", "pyarrow.compute", "pandas", "regex", "tomllib", "msgspec", "sqlalchemy")

PROBE = """\
import sys
from podium.cli import main
rc = main(sys.argv[1:])
print(rc, *[m for m in {lazy!r} if m in sys.modules])
"""


def _rate(tmp_path: Path, *extra: str) -> list[str]:
    data = tmp_path / "three.csv"
    rows = ["contest,time_seconds,player,place"]
    rows += [f"c{c},{c},p{(i + c) % 9},{i + 1}" for c in range(3) for i in range(6)]
    data.write_text("\n".join(rows) + "\n")
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(lazy=LAZY), "rate", str(data), "--system",
         "elo-single", "--out", str(tmp_path / "out"), "--no-progress", *extra],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_a_small_rate_imports_none_of_the_lazy_modules(tmp_path: Path) -> None:
    rc, *loaded = _rate(tmp_path)
    assert rc == "0" and loaded == [], f"a small rate imported {loaded}"
    assert (tmp_path / "out" / "histories.csv").read_text().count("\n") == 19


def test_the_checker_sees_arrow(tmp_path: Path) -> None:
    """The control of the test above: a Parquet output imports Arrow."""
    rc, *loaded = _rate(tmp_path, "--format", "parquet")
    assert rc == "0" and "pyarrow" in loaded
