"""The compiled CSV writer (podium.io._csv_kernels, _csv_rows): every number is
spelled exactly as Arrow casts it to text, and every table is written byte for byte as
the Arrow path of podium.io.results writes it."""

from __future__ import annotations

import io
import math
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.io import _csv_kernels, _csv_rows, results
from podium.io.synthetic import synthetic_contests
from podium.io.synthetic_teams import synthetic_team_contests

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- helpers
def compiled_text(values: np.ndarray) -> bytes:
    """One float64 or int64 column written by the compiled writer (no header)."""
    col: _csv_rows.Column
    if values.dtype == np.float64:
        col = _csv_rows.FloatColumn(np.ascontiguousarray(values))
    else:
        col = _csv_rows.IntColumn(np.ascontiguousarray(values, dtype=np.int64))
    out = io.BytesIO()
    _csv_rows.write_rows(out, [col], values.size)
    return out.getvalue()


def arrow_text(values: np.ndarray) -> bytes:
    """The same column as Arrow's cast to text writes it (NaN: empty)."""
    text = pc.cast(pa.array(values), pa.string()).to_pylist()
    nan = np.isnan(values) if values.dtype == np.float64 else np.zeros(values.size, bool)
    return b"".join(b"\n" if bad else t.encode() + b"\n"
                    for t, bad in zip(text, nan, strict=True))


def assert_same_numbers(values: np.ndarray) -> None:
    got = compiled_text(values).split(b"\n")
    want = arrow_text(values).split(b"\n")
    bad = [(v, g, w) for v, g, w in zip(values.tolist(), got, want, strict=False) if g != w]
    assert not bad, bad[:10]
    assert len(got) == len(want)


def doubles_from_bits(bits: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(bits, dtype=np.uint64).view(np.float64)


def with_neighbours(x: np.ndarray) -> np.ndarray:
    x = x[np.isfinite(x)]
    with np.errstate(over="ignore"):  # max's neighbour up is inf
        return np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf)])


def both_signs(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x, -x])


# ---------------------------------------------------------------------- float text
def test_spelling_examples() -> None:
    cases = [
        (1500.0, "1500"), (100.0, "100"), (1e-6, "0.000001"), (1e9, "1000000000"),
        (0.1 + 0.2, "0.30000000000000004"), (2.5, "2.5"), (1e10, "1e+10"),
        (1.23e15, "1.23e+15"), (1e-7, "1e-7"), (1.2345e-7, "1.2345e-7"), (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"), (-0.0, "-0"), (0.0, "0"),
        (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, ""), (1e16, "1e+16"),
        (123456789.0, "123456789"), (1637.2345000000001, "1637.2345"),
    ]
    values = np.array([x for x, _ in cases], dtype=np.float64)
    lines = compiled_text(values).decode().split("\n")[:-1]
    assert lines == [t for _, t in cases]
    assert_same_numbers(values)


def test_powers_of_two_and_ten_across_the_range() -> None:
    twos = np.ldexp(1.0, np.arange(-1074, 1024))
    tens = np.array([float(f"1e{k}") for k in range(-323, 309)])
    fives = np.array([float(f"5e{k}") for k in range(-324, 308)])
    assert_same_numbers(both_signs(with_neighbours(np.concatenate([twos, tens, fives]))))


def test_subnormals_extremes_and_notation_thresholds() -> None:
    rng = np.random.default_rng(11)
    sub = doubles_from_bits(rng.integers(1, 1 << 52, 20_000, dtype=np.uint64))
    sub = np.concatenate([sub, doubles_from_bits(np.arange(1, 2_000, dtype=np.uint64)),
                          doubles_from_bits(np.array([(1 << 52) - 1, 1 << 52], np.uint64))])
    extremes = np.array([np.finfo(float).max, np.finfo(float).tiny, np.finfo(float).eps,
                         5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308])
    thresholds = np.array([1e-7, 9.999999999999999e-7, 1e-6, 1.0000000000000002e-6, 0.00001,
                           999999999.9999999, 1e9, 9999999999.999998, 1e10, 9999999999.0,
                           1234567890.123, 12345678901.0, 0.0000012345678901234567,
                           1.2345678901234567e-7, 0.1, 0.5, 1.0, 9.5, 10.0])
    assert_same_numbers(both_signs(with_neighbours(np.concatenate([sub, extremes,
                                                                   thresholds]))))


def test_integers_as_floats() -> None:
    rng = np.random.default_rng(5)
    small = np.arange(0, 200_000, dtype=np.float64)
    big = rng.integers(0, 10**17, 200_000).astype(np.float64)
    pow10 = np.array([10.0**k for k in range(18)])
    edges = np.array([2.0**53 - 1, 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, 1e17 - 16, 1e17,
                      9007199254740993.0, 123456789012345678.0])
    assert_same_numbers(both_signs(np.concatenate([small, big, pow10, pow10 - 1, pow10 + 1,
                                                   with_neighbours(edges)])))


def test_millions_of_random_doubles() -> None:
    rng = np.random.default_rng(2024)
    bits = doubles_from_bits(rng.integers(0, 2**64 - 1, 2_000_000, dtype=np.uint64,
                                          endpoint=True))
    values = np.concatenate([bits[~np.isnan(bits)], rng.normal(1500, 350, 1_000_000),
                             rng.standard_exponential(500_000) * 100,
                             np.round(rng.normal(0, 1e4, 500_000), 3)])
    want = io.BytesIO()
    pacsv.write_csv(pa.table({"x": values}), want,
                    pacsv.WriteOptions(include_header=False, quoting_style="none"))
    got = compiled_text(values)
    if got != want.getvalue():
        g = got.split(b"\n")
        w = want.getvalue().split(b"\n")
        bad = [(values[i], g[i], w[i]) for i in range(min(len(g), len(w))) if g[i] != w[i]]
        pytest.fail(f"{len(bad)} values differ, e.g. {bad[:5]}")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=60))
def test_any_float_is_spelled_as_arrow(xs: list[float]) -> None:
    assert_same_numbers(np.array(xs, dtype=np.float64))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=60))
def test_any_bit_pattern_is_spelled_as_arrow(patterns: list[int]) -> None:
    xs = np.array([struct.unpack("<d", struct.pack("<Q", b))[0] for b in patterns])
    assert_same_numbers(xs)  # NaN patterns included: an empty field


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60))
def test_any_int64_is_spelled_as_arrow(xs: list[int]) -> None:
    assert_same_numbers(np.array(xs, dtype=np.int64))


def test_int64_extremes() -> None:
    edges = [0, 1, -1, 9, 10, 99, 100, -(2**63), 2**63 - 1, -(2**63) + 1, 10**18, -(10**18)]
    powers = [s * (10**k + d) for k in range(19) for d in (-1, 0, 1) for s in (1, -1)]
    assert_same_numbers(np.array(edges + [p for p in powers if abs(p) < 2**63], np.int64))


def test_pow5_tables_and_division_by_powers_of_ten() -> None:
    inv, pw = _csv_kernels._pow5_tables()
    for q in (0, 1, 2, 27, 100, 341):
        v = int(inv[q, 0]) | int(inv[q, 1]) << 64
        assert v == (1 << ((5**q).bit_length() - 1 + 125)) // 5**q + 1
    for i in (0, 1, 2, 55, 325):
        v = int(pw[i, 0]) | int(pw[i, 1]) << 64
        assert v.bit_length() == 125 and v == (5**i << 125) >> (5**i).bit_length()
    # Ryu's published first entries
    assert (int(inv[1, 0]), int(inv[1, 1])) == (11068046444225730970, 1844674407370955161)
    assert (int(pw[1, 0]), int(pw[1, 1])) == (0, 1441151880758558720)
    magic, shift = _csv_kernels._div_tables()
    rng = np.random.default_rng(3)
    for k in range(1, 20):
        m, s = int(magic[k]), int(shift[k])
        for v in [0, 1, 10**k - 1, 10**k, 2**57 - 1, *rng.integers(0, 2**57, 200).tolist()]:
            assert (v * m) >> (64 + s) == v // 10**k


# ---------------------------------------------------------------------- tables
def random_table(rng: np.random.Generator, n: int) -> pa.Table:
    pool = np.array([1500.5, -0.0, 0.0, math.inf, -math.inf, math.nan, 1e300, 5e-324,
                     1e-7, 0.1 + 0.2, 2.0**53 + 2, -1e22, 123456.789])
    x = rng.normal(1500, 300, n)
    pick = rng.random(n) < 0.2
    x[pick] = rng.choice(pool, int(pick.sum()))
    y = doubles_from_bits(rng.integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True))
    handles = [["", "é ü 東京", f"p{i}", "x" * (i % 40), "a;b|c\t'"][i % 5] for i in range(n)]
    teams = [None if i % 3 else f"team {i % 7}" for i in range(n)]
    ints = rng.integers(-(2**63), 2**63 - 1, n, endpoint=True)
    return pa.table({
        "handle": pa.array(handles, pa.string()),
        "x": pa.array(x), "k": pa.array(ints), "y": pa.array(y),
        "small": pa.array(rng.integers(0, 300, n).astype(np.int32)),
        "team": pa.array(teams, pa.string()),
        "ok": pa.array(rng.random(n) < 0.5),
        "big": pa.array(handles, pa.large_string()),
    })


def write_both(table: pa.Table, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    """(compiled, Arrow) text of ``table`` by results._write_csv."""
    monkeypatch.setattr(results, "_COMPILED_MIN_ROWS", 0)
    fast = io.BytesIO()
    results._write_csv(table, fast)
    monkeypatch.setattr(results, "_COMPILED_MIN_ROWS", 1 << 62)
    slow = io.BytesIO()
    results._write_csv(table, slow)
    return fast.getvalue(), slow.getvalue()


@pytest.mark.parametrize("n", [0, 1, 2, 4095, 4096, 4097, 9000])
def test_tables_byte_for_byte(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_csv_rows, "BLOCK", 3000)  # blocks across chunks of 4096 rows
    table = random_table(np.random.default_rng(n), n)
    assert _csv_rows.arrow_columns(table) is not None
    fast, slow = write_both(table, monkeypatch)
    assert fast == slow
    assert fast.count(b"\n") == n + 1


def test_sliced_and_chunked_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    table = random_table(np.random.default_rng(9), 5000)
    parts = pa.concat_tables([table.slice(0, 1700), table.slice(1700)]).slice(33, 4000)
    fast, slow = write_both(parts, monkeypatch)
    assert fast == slow


def test_nulls_in_numbers_and_booleans(monkeypatch: pytest.MonkeyPatch) -> None:
    table = pa.table({"x": pa.array([1.5, None, math.nan, -0.0]),
                      "ok": pa.array([True, None, False, True]),
                      "s": pa.array(["a", None, "", "d"])})
    fast, slow = write_both(table, monkeypatch)
    assert fast == slow == b"x,ok,s\n1.5,True,a\n,False,\n,False,\n-0,True,d\n"
    with_null_int = table.append_column("k", pa.array([1, None, 3, 4]))
    assert _csv_rows.arrow_columns(with_null_int) is None  # Arrow's path
    fast, slow = write_both(with_null_int, monkeypatch)
    assert fast == slow


def test_text_that_needs_quotes_takes_the_arrow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    table = random_table(np.random.default_rng(1), 50).set_column(
        0, "handle", pa.array([f"p,{i}" if i == 7 else f"p{i}" for i in range(50)]))
    fast, slow = write_both(table, monkeypatch)
    assert fast == slow and b'"p,7"' in fast
    for bad in ('a"b', "a\nb", "a\rb"):
        t = table.set_column(5, "team", pa.array([bad] * 50, pa.large_string()))
        fast, slow = write_both(t, monkeypatch)
        assert fast == slow


def test_unsupported_types_take_the_arrow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    table = pa.table({"f": pa.array([0.1, 2.5], pa.float32()),
                      "u": pa.array([2**64 - 1, 0], pa.uint64())})
    assert _csv_rows.arrow_columns(table) is None
    fast, slow = write_both(table, monkeypatch)
    assert fast == slow


def test_write_rows_in_an_order() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=1000)
    names = pa.array([f"n{i}" for i in range(10)])
    keys = rng.integers(-1, 10, 1000)
    order = rng.permutation(1000)
    out = io.BytesIO()
    _csv_rows.write_rows(out, [_csv_rows.text_column(names, keys),
                               _csv_rows.FloatColumn(x)], 1000, order, block=77)
    want = "".join(f"{'' if keys[i] < 0 else f'n{keys[i]}'},{float(x[i])!r}\n" for i in order)
    assert out.getvalue().decode() == want
    with pytest.raises(ValueError, match="order has 3 rows, expected 1000"):
        _csv_rows.write_rows(out, [_csv_rows.FloatColumn(x)], 1000, order[:3])
    with pytest.raises(ValueError, match="at least one column"):
        _csv_rows.write_rows(out, [], 0)
    # the kernels do not check indices: write_rows does
    with pytest.raises(ValueError, match="negative row index"):
        _csv_rows.write_rows(out, [_csv_rows.FloatColumn(x)], 1000, order - 1)
    with pytest.raises(ValueError, match="row index 1000 is outside"):
        _csv_rows.write_rows(out, [_csv_rows.FloatColumn(x)], 1000, order + 1)
    with pytest.raises(ValueError, match="column 0 has 999 values"):
        _csv_rows.write_rows(out, [_csv_rows.FloatColumn(x[:999])], 1000)
    with pytest.raises(ValueError, match="key 10 is outside its 10 strings"):
        _csv_rows.write_rows(out, [_csv_rows.text_column(names, keys + 1)], 1000)
    bad = _csv_rows.TextColumn(np.array([0, 5], np.int64), np.zeros(3, np.uint8), keys * 0)
    with pytest.raises(ValueError, match="offsets do not fit"):
        _csv_rows.write_rows(out, [bad], 1000)


# ---------------------------------------------------------------------- a rater's results
def _rater(system: str) -> Rater:
    if system == "teams":
        r = Rater("mmr")
        r.extend(synthetic_team_contests(n_players=300, n_rounds=40, seed=2).contests)
        assert r.events.team_names
    else:
        r = Rater(system)
        r.extend(synthetic_contests(n_players=400, n_rounds=12, seed=3, participation=0.6))
    # non-ASCII handles, a NaN rating and a NaN perf
    r.add(Contest([("Émile", 0, 0), ("東京", 1, 1), ("a b", 2, 2)], name="solo",
                   time_seconds=2_000_000_000))
    r.players.mu[r.players.index["東京"]] = math.nan
    r.events.arrays()["perf"][-1] = math.nan
    return r


@pytest.mark.parametrize("system", ["mmr", "mmr-plus", "trueskill", "codeforces", "teams"])
def test_results_byte_for_byte(system: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    rater = _rater(system)
    monkeypatch.setattr(_csv_rows, "BLOCK", 1000)
    monkeypatch.setattr(results, "_COMPILED_MIN_ROWS", 1 << 62)
    results.write_results(rater, tmp_path / "arrow")
    monkeypatch.setattr(results, "_COMPILED_MIN_ROWS", 0)
    results.write_results(rater, tmp_path / "compiled")
    for name in ("ratings", "contests", "histories"):
        a = (tmp_path / "arrow" / f"{name}.csv").read_bytes()
        b = (tmp_path / "compiled" / f"{name}.csv").read_bytes()
        assert a == b, name
    hist = results.histories_table(rater)
    floats = ("mu", "sigma", "display_rating", "perf")
    back = pacsv.read_csv(tmp_path / "compiled" / "histories.csv",
                          convert_options=pacsv.ConvertOptions(
                              column_types={"team": pa.string(), "handle": pa.string(),
                                            **dict.fromkeys(floats, pa.float64())},
                              strings_can_be_null=True))
    assert back["handle"].to_pylist() == hist["handle"].to_pylist()
    for col in floats:
        got = back[col].to_numpy(zero_copy_only=False)
        want = hist[col].to_numpy()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(got[~nan].view(np.int64), want[~nan].view(np.int64)), col


def test_round_trip_is_bit_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's float() reads every value back bit for bit."""
    rng = np.random.default_rng(8)
    bits = doubles_from_bits(rng.integers(0, 2**64 - 1, 100_000, dtype=np.uint64,
                                          endpoint=True))
    values = np.concatenate([bits[~np.isnan(bits)], rng.normal(1500, 300, 50_000)])
    lines = compiled_text(values).decode().split("\n")[:-1]
    back = np.array([float(t) for t in lines])
    assert np.array_equal(back.view(np.int64), values.view(np.int64))


def test_small_jobs_do_not_load_the_compiled_writer(tmp_path: Path) -> None:
    """A small table must not import (or compile) the CSV kernels: a cold cache costs
    seconds of a 3-contest ``podium rate``."""
    code = textwrap.dedent(f"""
        import sys
        from podium import Contest, Rater
        from podium.io.results import write_results
        r = Rater("mmr")
        r.add(Contest([("a", 0, 0), ("b", 1, 1)], name="one"))
        write_results(r, {str(tmp_path)!r})
        assert "podium.io._csv_kernels" not in sys.modules
        assert "podium.io._csv_rows" not in sys.modules
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_compile_is_announced_when_the_cache_is_cold(monkeypatch: pytest.MonkeyPatch) -> None:
    import podium.core.kernel_cache as kc

    out = io.StringIO()
    monkeypatch.setattr(kc, "is_cached", lambda d, prebuilt=True: False)
    assert _csv_rows.announce_compile(out)
    assert out.getvalue().startswith("compiling kernels for the CSV writer, once: ~")
    monkeypatch.setattr(kc, "is_cached", lambda d, prebuilt=True: True)
    out = io.StringIO()
    assert not _csv_rows.announce_compile(out)
    assert out.getvalue() == ""
