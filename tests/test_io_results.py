"""Writing a rater's results (podium.io.results): bit-equal round trips through CSV
and Parquet, the CSV text (quoting, NaN, booleans), row order and atomicity."""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from podium import Contest, Rater
from podium.errors import PodiumError
from podium.io import results
from podium.io.results import (
    CONTESTS_COLUMNS,
    HISTORIES_COLUMNS,
    RATINGS_COLUMNS,
    write_results,
    write_table,
)

#: Awkward doubles: not exactly decimal, extremes, subnormals, signed zero, integers
#: stored as floats (some beyond 2**53), non-finite values.
AWKWARD = [
    0.1 + 0.2, 1 / 3, 2 / 3, 1e-300, 5e-324, 2.2250738585072014e-308, -2.225073858507201e-308,
    -0.0, 0.0, 1e17, 1e16, 1e15, 123456789.0, 123456789012345678.0, float(2**53 + 2),
    -float(2**63), 1.7976931348623157e308, -1.7976931348623157e308, 1e22, 1e21, 1e-7,
    1500.0, 1637.2345000000001, 0.1, 100.0, math.pi, -math.e, math.inf, -math.inf, math.nan,
]
BIG_INTS = [0, 1, -1, 2**62, -(2**63), 2**63 - 1, 1_600_000_000, 42, 7, -5]


def bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


def same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-equal, except that any NaN matches any NaN (CSV has no NaN payload)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    nan = np.isnan(want)
    return bool(np.array_equal(np.isnan(got), nan)
                and np.array_equal(bits(got[~nan]), bits(want[~nan])))


def read_csv_pandas(path: Path) -> pd.DataFrame:
    with warnings.catch_warnings():  # deprecated (and the default) from pandas 3 on
        warnings.simplefilter("ignore")
        return pd.read_csv(path, float_precision="round_trip", keep_default_na=False,
                           na_values=[""])


def awkward_table() -> pa.Table:
    n = len(AWKWARD)
    ints = np.resize(np.array(BIG_INTS, dtype=np.int64), n)
    return pa.table({
        "handle": [f"p{i}" for i in range(n)],
        "x": np.array(AWKWARD),
        "y": np.array(AWKWARD[::-1]),
        "k": ints,
    })


# ---------------------------------------------------------------------- round trips
def test_csv_round_trip_is_bit_equal(tmp_path: Path) -> None:
    table = awkward_table()
    path = tmp_path / "t.csv"
    write_table(table, path, "csv")
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    assert lines[0] == "handle,x,y,k"  # the header is unquoted
    assert text.endswith("\n") and len(lines) == table.num_rows + 2
    rows = list(csv.reader(io.StringIO(text)))[1:]
    # Python's float(): every finite and infinite value is bit-equal; NaN is an empty field
    for row, want in zip(rows, AWKWARD, strict=True):
        if math.isnan(want):
            assert row[1] == ""
        else:
            assert bits(np.array([float(row[1])]))[0] == bits(np.array([want]))[0], row
    # shortest round-trip text, not 17 digits
    assert "0.30000000000000004" in text and "1637.2345" in text.split("\n")[23]
    assert rows[7][1] == "-0" and rows[4][1] == "5e-324" and rows[27][1] == "inf"
    # integers stay integers, exactly
    assert [int(r[3]) for r in rows] == table["k"].to_pylist()
    df = read_csv_pandas(path)
    assert list(df.columns) == ["handle", "x", "y", "k"]
    assert df["k"].dtype == np.int64
    assert same_floats(df["x"].to_numpy(), np.array(AWKWARD))
    assert same_floats(df["y"].to_numpy(), np.array(AWKWARD[::-1]))


def test_parquet_round_trip_is_bit_equal(tmp_path: Path) -> None:
    table = awkward_table()
    path = tmp_path / "t.parquet"
    write_table(table, path, "parquet")
    back = pq.read_table(path)
    assert back.column_names == table.column_names
    for name in ("x", "y"):
        np.testing.assert_array_equal(bits(back[name].to_numpy()), bits(table[name].to_numpy()))
    assert back["k"].to_pylist() == table["k"].to_pylist()
    assert back["handle"].to_pylist() == table["handle"].to_pylist()


def test_text_quoting_matches_python_csv(tmp_path: Path) -> None:
    names = ["plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", " spaced ", "é ü 東京",
             "semi;colon", "tab\tx", "back\\slash", "", None]
    table = pa.table({"name": names, "v": np.arange(len(names), dtype=np.float64) / 4,
                      "ok": [True, False] * (len(names) // 2)})
    path = tmp_path / "q.csv"
    write_table(table, path, "csv")
    raw = path.read_bytes().decode("utf-8")
    expected = io.StringIO()
    w = csv.writer(expected, lineterminator="\n")
    w.writerow(["name", "v", "ok"])
    for name, v, ok in zip(names, table["v"].to_pylist(), table["ok"].to_pylist(), strict=True):
        w.writerow(["" if name is None else name, format(v, "g"), ok])
    # '\r' is quoted too (Python's csv leaves it bare, which readers take for a line end)
    assert raw == expected.getvalue().replace("cr\rhere", '"cr\rhere"')
    back = list(csv.reader(io.StringIO(raw, newline="")))[1:]
    assert [r[0] for r in back] == ["" if n is None else n for n in names]


def test_quoted_path_formats_numbers_like_arrow_csv() -> None:
    """The minimal-quoting path (any text field with a comma) writes numbers exactly
    as Arrow's CSV writer does."""
    table = awkward_table()
    table = pa.table([results._csv_column(c) for c in table.columns], names=table.column_names)
    fast, quoted = io.BytesIO(), io.BytesIO()
    results._write_csv(table, fast)
    fast_body = fast.getvalue().split(b"\n", 1)[1]
    quoted.write(results._csv_quoted(table))
    assert quoted.getvalue() == fast_body
    with_comma = table.set_column(0, "handle", pa.array(["x,y"] * table.num_rows))
    both = io.BytesIO()
    results._write_csv(with_comma, both)
    expected = b"".join(b'"x,y"' + line[line.index(b","):] + b"\n"
                        for line in fast_body.split(b"\n")[:-1])
    assert both.getvalue().split(b"\n", 1)[1] == expected


def test_csv_in_slices_equals_one_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """Formatted by a pool of threads in small slices (some of which need quotes, some
    not), the text is the same as in one piece, in order."""
    n = 1000
    rng = np.random.default_rng(7)
    names = [f"p{i}" if i % 97 else f"p,{i}" for i in range(n)]
    table = pa.table({"handle": pa.array(names), "x": pa.array(rng.normal(size=n)),
                      "k": pa.array(np.arange(n))})
    whole = io.BytesIO()
    results._write_csv(table, whole)
    monkeypatch.setattr(results, "_CSV_BATCH", 37)
    monkeypatch.setattr(results, "_workers", lambda: 3)
    sliced = io.BytesIO()
    results._write_csv(table, sliced)
    assert sliced.getvalue() == whole.getvalue()
    back = list(csv.reader(io.StringIO(sliced.getvalue().decode(), newline="")))
    assert [r[0] for r in back[1:]] == names
    assert [float(r[1]) for r in back[1:]] == table["x"].to_pylist()


def test_empty_table_writes_header_only(tmp_path: Path) -> None:
    table = pa.table({"a": pa.array([], pa.float64()), "b": pa.array([], pa.string())})
    write_table(table, tmp_path / "e.csv", "csv")
    assert (tmp_path / "e.csv").read_text() == "a,b\n"
    write_table(table, tmp_path / "e.parquet", "parquet")
    assert pq.read_table(tmp_path / "e.parquet").num_rows == 0
    with pytest.raises(ValueError, match="unknown format 'xlsx'"):
        write_table(table, tmp_path / "e.xlsx", "xlsx")


def test_write_table_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.csv"
    write_table(awkward_table(), path, "csv")
    before = path.read_bytes()

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_table(awkward_table().slice(0, 3), path, "csv")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_stable_argsort_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    for top in (10, 70_000, 3_000_000_000, 2**40):
        key = rng.integers(0, top, 50_000)
        np.testing.assert_array_equal(results._stable_argsort(key),
                                      np.argsort(key, kind="stable"))
    assert results._stable_argsort(np.zeros(0, dtype=np.int64)).size == 0


# ---------------------------------------------------------------------- a rater's results
def _rater(comma: bool = True) -> Rater:
    """Four contests (one where everybody tied, skipped: ``all_tied="skip"``); with
    ``comma`` a handle needs quotes."""
    r = Rater("mmr", all_tied="skip")
    names = ["zed", "amy", "bo", "Émile", "a,b" if comma else "ab", "Zoe", "amy2", "c"]
    r.add(Contest([(h, i, i) for i, h in enumerate(names)], name="R1", time_seconds=100,
                  url="https://x/1"))
    r.add(Contest([("amy", 0, 1), ("zed", 0, 1), ("new", 2, 2)], name="R, 2", time_seconds=200))
    r.add(Contest([("bo", 0, 1), ("c", 0, 1)], name="all tied", time_seconds=300))
    r.add(Contest([("c", 0, 0), ("amy", 1, 1)], name="R4", time_seconds=400))
    return r


def test_tables_equal_the_raters_frames() -> None:
    r = _rater()
    # equal display ratings (ties by handle) and a NaN rating (last), as Rater.ratings
    t = r.players
    t.mu[t.index["bo"]] = t.mu[t.index["amy2"]]
    t.sigma[t.index["bo"]] = t.sigma[t.index["amy2"]]
    t.mu[t.index["Zoe"]] = math.nan
    t.mu[t.index["a,b"]] = -0.0
    ref = r.ratings()
    got = results.ratings_table(r)
    assert got.column_names == list(RATINGS_COLUMNS) == list(ref.columns)
    assert got["handle"].to_pylist() == ref["handle"].tolist()
    for col in RATINGS_COLUMNS[1:]:
        want = ref[col].to_numpy()
        if want.dtype.kind == "f":
            assert same_floats(got[col].to_numpy(), want), col
        else:
            np.testing.assert_array_equal(got[col].to_numpy(), want)
    unsorted = results.ratings_table(r, sort=False)
    assert unsorted["handle"].to_pylist() == r.players.handles

    ev = r.events_frame()
    ev["display_rating"] = r.system.display_rating(ev["mu"].to_numpy(), ev["sigma"].to_numpy())
    ev = ev.sort_values(["handle", "contest_index"], kind="stable")
    hist = results.histories_table(r)
    assert hist.column_names == list(HISTORIES_COLUMNS)
    assert hist["handle"].to_pylist() == ev["handle"].tolist()
    for col in HISTORIES_COLUMNS[1:]:
        assert same_floats(hist[col].to_numpy(), ev[col].to_numpy()), col

    cont = results.contests_table(r)
    assert cont.column_names == list(CONTESTS_COLUMNS)
    assert cont.to_pylist() == [
        {"contest_index": 0, "name": "R1", "time_seconds": 100, "url": "https://x/1",
         "players": 8, "skipped": False},
        {"contest_index": 1, "name": "R, 2", "time_seconds": 200, "url": None, "players": 3,
         "skipped": False},
        {"contest_index": 2, "name": "all tied", "time_seconds": 300, "url": None,
         "players": 2, "skipped": True},
        {"contest_index": 3, "name": "R4", "time_seconds": 400, "url": None, "players": 2,
         "skipped": False},
    ]


@pytest.mark.parametrize("comma", [True, False])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_write_results_round_trip(tmp_path: Path, fmt: str, comma: bool) -> None:
    r = _rater(comma)
    out = tmp_path / "deep" / "out"
    written = write_results(r, out, fmt=fmt)
    assert [p.name for p in written] == [f"ratings.{fmt}", f"contests.{fmt}",
                                         f"histories.{fmt}"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)
    for name, build in (("ratings", results.ratings_table), ("contests", results.contests_table),
                        ("histories", results.histories_table)):
        want = build(r)
        if fmt == "csv":
            back = read_csv_pandas(out / f"{name}.csv")
        else:
            back = pq.read_table(out / f"{name}.parquet").to_pandas()
        assert list(back.columns) == want.column_names, name
        for col in want.column_names:
            w = want[col]
            if pa.types.is_floating(w.type):
                assert same_floats(back[col].to_numpy(), w.to_numpy()), (name, col)
            elif pa.types.is_integer(w.type):
                assert back[col].dtype == np.int64
                assert back[col].tolist() == w.to_pylist(), (name, col)
            else:
                got = [None if isinstance(v, float) and math.isnan(v) else v
                       for v in back[col].tolist()]
                assert got == w.to_pylist(), (name, col)
    if fmt == "csv":
        text = (out / "contests.csv").read_text()
        assert text.splitlines()[0] == ",".join(CONTESTS_COLUMNS)
        assert '1,"R, 2",200,,3,False' in text and "2,all tied,300,,2,True" in text


def test_write_results_without_histories_and_bad_out(tmp_path: Path) -> None:
    r = _rater()
    write_results(r, tmp_path / "o", histories=False)
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["contests.csv", "ratings.csv"]
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(PodiumError, match=r"--out .*file exists and is not a directory"):
        write_results(r, afile)
    with pytest.raises(PodiumError, match=r"its parent .*file exists and is not a directory"):
        write_results(r, afile / "sub")
    with pytest.raises(ValueError, match="unknown format"):
        write_results(r, tmp_path / "o", fmt="json")


def test_huge_contest_time_is_written_exactly(tmp_path: Path) -> None:
    r = Rater("mmr")  # an unrated contest (one side) may lie outside 64 bits
    r.add(Contest([("a", 0, 0)], name="alone", time_seconds=10**30))
    write_results(r, tmp_path, histories=False)
    assert (tmp_path / "contests.csv").read_text().splitlines()[1] == (
        f"0,alone,{10**30},,1,True")


def test_empty_rater_writes_headers(tmp_path: Path) -> None:
    write_results(Rater("mmr"), tmp_path)
    assert (tmp_path / "ratings.csv").read_text() == ",".join(RATINGS_COLUMNS) + "\n"
    assert (tmp_path / "histories.csv").read_text() == ",".join(HISTORIES_COLUMNS) + "\n"
    assert (tmp_path / "contests.csv").read_text() == ",".join(CONTESTS_COLUMNS) + "\n"
