"""The columnar reader of CSV long tables (podium.io._csv_fast): the contests it builds
equal the row reader's, field for field, and rate bit for bit alike; whatever it cannot
take, and every bad file, goes to the row reader, whose message (file, line, contest,
player) is the one raised."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_rounds import assert_same

import podium.io.csv_long as csv_long
from podium import Rater
from podium.core.contest import Contest
from podium.errors import PodiumError
from podium.io import load_contests, read_contests_csv

T0 = 1_600_000_000


def _load(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool, **kw: object
          ) -> list[Contest]:
    monkeypatch.setattr(csv_long, "COLUMNAR_FROM_BYTES", 0 if fast else 1 << 62)
    return load_contests(path, **kw).contests  # type: ignore[arg-type]


def _fields(c: Contest) -> tuple[object, ...]:
    return (c.handles, c.lo.tolist(), c.hi.tolist(), c.name, c.time_seconds,
            type(c.time_seconds), c.weight, type(c.weight), c.perf_ceiling, c.url, c.teams)


def _same_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch, **kw: object
                    ) -> list[Contest]:
    fast = _load(path, monkeypatch, True, **kw)
    slow = _load(path, monkeypatch, False, **kw)
    assert all(c.handle_codes is not None for c in fast), "the columnar reader was not used"
    assert all(c.handle_codes is None for c in slow)
    assert [_fields(c) for c in fast] == [_fields(c) for c in slow]
    assert all(not c.lo.flags.writeable and not c.hi.flags.writeable for c in fast)
    return fast


VALID = {
    "scores": "contest,time,player,score\n"
              "m1,100,a,3\nm1,100,b,1\nm2,50,b,2\nm2,50,c,2\nm3,100,a,0\nm3,100,c,7\n",
    "places and metadata": (
        "contest_id,time_seconds,handle,place,name,weight,url,perf_ceiling\n"
        "x,10,a,2,Round X,,http://x,\nx,10,b,1,,2.5,,inf\nx,10,c,2,Round X,2.5,http://x,\n"
        "y,5,c,1,,,,3000\ny,5,a,1,,,,3e3\ny,5,d,3,,,,\n"),
    "blanks, strip, CRLF, BOM, extra column": (
        "\ufeffContest , Time,Player ,Score,note\r\n"
        " k1 ,7, Émile ,1,z\r\nk1, 7 ,bo,2,\r\n\r\nk2,-3063744000,bo,5,\r\n"
        "k1,7.0,cafe\u0301,1.0,\r\nk2,-3063744000, caf\u00e9,4,\r\n"),
    "integers (Arrow's cast) and not": (
        "contest,time,player,score\n a ,\t1000000000 ,x, 007\na,1000000000,y,-0\n"
        "b,0999999999,x,-12\nb, 999999999,y,1\nc,999999999,x,1234567890123456\n"
        "c,999999999,y,1234567890123457\n"),
    "integer contest ids, grouped as numbers": (
        "contest,time,player,score\n7,5,a,1\n7,5,b,2\n-3,4,a,1\n-3,4,c,0\n0,3,a,1\n"
        "12,6,c,1\n0,3,b,2\n12,6,a,2\n9223372036854775807,6,a,1\n"
        "9223372036854775807,6,b,1\n"),
    "integer-like contest ids that differ as text": (
        "contest,time,player,score\n1,5,a,1\n01,5,b,1\n1,5,b,2\n10,4,a,1\n10,4,c,0\n"
        "-0,3,a,1\n0,3,a,2\n0x1,6,a,1\n-5,2,a,3\n-5,2,c,1\n0,3,c,1\n"),
    "scores beyond 2**53 (a double's ties)": (
        "contest,time,player,score\nc,1000000000,x,12345678901234567\n"
        "c,1000000000,y,12345678901234568\nc,1000000000,z,3\n"),
    "contest ids in order (runs), integer scores (one stable sort)": (
        "contest,time,player,score\n1,5,b,1\n1,5,a,2\n2,5,c,0\n2,5,a,0\n2,5,b,-4\n"
        "3,4,a,7\n3,4,c,9\n10,6,b,1\n10,6,c,1\n"),
    "contest ids in order, decimal scores (two stable sorts)": (
        "contest,time,player,score\n1,5,b,1.5\n1,5,a,2\n2,5,c,0.25\n2,5,a,0.25\n"
        "2,5,b,-4\n3,4,a,1e300\n3,4,c,-1e300\n"),
    "0x in the file: every column as text": (
        "contest,time,player,place\nm,100,0xdead,2\nm,100,b,1\nn,50,0xdead,1\n"
        "n,50,c,1\n"),
    "one contest of many": "contest,time,player,place\n" + "".join(
        f"c,{T0},p{i},{1 + i // 3}\n" for i in range(40)),
}


@pytest.mark.parametrize("name", list(VALID))
def test_columnar_contests_equal_the_row_readers(tmp_path: Path, name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.csv"
    path.write_text(VALID[name], encoding="utf-8")
    _same_both_ways(path, monkeypatch)
    for limit in (1, 2):
        _same_both_ways(path, monkeypatch, limit=limit)
    assert _load(path, monkeypatch, True, limit=0) == []


def test_columnar_history_rates_bit_for_bit(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated history of many small contests (pairs, ties, newcomers, contests out
    of time order) loads alike both ways, and rates alike."""
    rng = np.random.default_rng(7)
    lines = ["contest,time,player,score"]
    for m in range(400):
        size = int(rng.integers(2, 5))
        who = rng.choice(60, size, replace=False)
        t = T0 + 3600 * int(rng.integers(0, 300))
        lines += [f"g{m},{t},p{w},{int(rng.integers(0, 4))}" for w in who]
    path = tmp_path / "g.csv"
    path.write_text("\n".join(lines) + "\n")
    fast = _same_both_ways(path, monkeypatch)
    slow = _load(path, monkeypatch, False)
    for system in ("mmr", "glicko"):
        a, b = Rater(system), Rater(system)
        a.extend(fast)
        b.extend(slow)
        assert_same(a, b)
    # read_contests_csv (no load's pool): the file's own pool, the same contests
    monkeypatch.setattr(csv_long, "COLUMNAR_FROM_BYTES", 0)
    assert read_contests_csv(path) == slow


def test_small_files_and_what_it_cannot_take_go_to_the_row_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below FAST_FROM_BYTES, and with quotes, a team column, blank lines before the
    header or a row of blank cells (skipped), the row reader reads the file (contests
    without numbers)."""
    path = tmp_path / "s.csv"
    path.write_text(VALID["scores"])
    assert all(c.handle_codes is None for c in load_contests(path).contests)
    monkeypatch.setattr(csv_long, "COLUMNAR_FROM_BYTES", 0)
    for text in ('contest,time,player,score\n"m,1",1,a,1\n"m,1",1,b,2\n',
                 "contest,time,player,team,score\nm,1,a,A,1\nm,1,b,B,2\n",
                 "\ncontest,time,player,score\nm,1,a,1\nm,1,b,2\n",
                 "contest,time,player,score\n , , , \nm,1,a,1\nm,1,b,2\n"):
        path.write_text(text)
        assert all(c.handle_codes is None for c in load_contests(path).contests)


BAD = [
    "contest,time,player,score\nc,1e9,a,1\nc,1e9,b,first\n",
    "contest,time,player,place\nc,1e9,a,1.5\n",
    "contest,time,player,place\nc,1e9,a,0\n",
    "contest,time,player,score\nc,1e9,a,nan\n",
    "contest,time,player,score\nc,1e9,a,inf\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9,b\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9,b,2,9\n",
    "contest,time,player,place\n,1e9,a,1\n",
    "contest,time,player,place\nc,1e9,,1\n",
    "contest,time,player,place\nc,5e8,a,1\nd,6e8,a,1\nc,7e8,b,2\n",
    "contest,time,player,place\nc,soon,a,1\n",
    "contest,time,player,place\nc,,a,1\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9,b,2\nc,1e9,a,3\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9, a,2\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9,b\x07,2\n",
    "contest,time,player,place,name\nc,1e9,a,1,X\nc,1e9,b,2,Y\n",
    "contest,time,player,place,weight\nc,1e9,a,1,heavy\n",
    "contest,time,player,place,weight\nc,1e9,a,1,\nc,1e9,b,2,-1\n",
    "contest,time,player,place,weight\nc,1e9,a,1,1000\n",
    "contest,time,player,place,perf_ceiling\nc,1e9,a,1,nan\n",
    "contest,time,player,place,perf_ceiling\nc,1e9,a,1,-inf\n",
    "contest,time,player,place,perf_ceiling\nc,1e9,a,1,x\n",
    "contest,time,player,place\nc,-6e9,a,1\n",
    "contest,time,player,place\nc,1e12,a,1\n",
    "contest,time,player,place\nc,4e9,a,1\n",
    "contest,time,player,place\nc,1e30,a,1\n",
    "contest,time,player,place\nc,1e9,a,1\nc,1e9,b,2\nd,1.5e9,a,1\nd,1.5e9,a,2\n",
    "contest,time,player,score\nc,1000000000,a,0x10\nc,1000000000,b,1\n",
    "contest,time,player,score\nc,0x3B9ACA00,a,1\nc,0x3B9ACA00,b,2\n",
    "contest,time,player,score\nc,1000000000,xa,0X10\nc,1000000000,bX,1\n",
    "contest,time,player,place\n1,1000000000,a,1\n1,1000000000,b,2\n1,1000000000,a,3\n",
]


@pytest.mark.parametrize("text", BAD)
def test_bad_files_raise_the_row_readers_error(tmp_path: Path, text: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "b.csv"
    path.write_text(text, encoding="utf-8")
    errors = []
    for fast in (True, False):
        with pytest.raises(PodiumError) as info:
            _load(path, monkeypatch, fast)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    assert str(path) in errors[0][1]


def test_not_utf8_and_long_fields_go_to_the_row_reader(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l.csv"
    path.write_bytes(b"contest,time,player,place\nc,1e9,a,1\nc,1e9,\xe9t\xe9,2\n")
    errors = []
    for fast in (True, False):
        with pytest.raises(PodiumError) as info:
            _load(path, monkeypatch, fast)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "not UTF-8" in errors[0]
    path.write_text("contest,time,player,place,note\nc,1e9,a,1," + "x" * 200_000 + "\n")
    errors = []
    for fast in (True, False):
        with pytest.raises(PodiumError) as info:
            _load(path, monkeypatch, fast)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_refused_handles_are_kept_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With keep_refused_handles, a handle the rules refuse is kept as written and
    reported, whichever reader reads the file."""
    path = tmp_path / "r.csv"
    path.write_text("contest,time,player,place\nc,1e9,a,1\nc,1e9,x\x07y,2\nd,1.5e9,x\x07y,1\n"
                    "d,1.5e9,b,2\n")
    seen = []
    for fast in (True, False):
        monkeypatch.setattr(csv_long, "COLUMNAR_FROM_BYTES", 0 if fast else 1 << 62)
        loaded = load_contests(path, keep_refused_handles=True)
        seen.append(([_fields(c) for c in loaded.contests], loaded.refused_handles))
    assert seen[0] == seen[1] and seen[0][1]


def test_integer_columns_are_not_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Contest ids written as str(int) writes them, and integer times and scores, are
    converted without encoding their distinct cells: only the player column is; an id
    written otherwise ("07", "+7", "0x7") sends the contest column the general way."""
    from podium.io import _csv_fast

    encoded: list[int] = []
    real = _csv_fast._encoded

    def spy(table: object, name: str) -> object:
        encoded.append(1)
        return real(table, name)  # type: ignore[arg-type]

    monkeypatch.setattr(_csv_fast, "_encoded", spy)
    path = tmp_path / "i.csv"
    rows = "".join(f"{k},{T0 + k},p{k % 5},{k % 3}\n{k},{T0 + k},q{k % 7},1\n"
                   for k in range(-5, 20))
    path.write_text("contest,time,player,score\n" + rows)
    _same_both_ways(path, monkeypatch)
    assert len(encoded) == 1
    for other in ("07", "+7", "0x7", "-0"):
        encoded.clear()
        path.write_text("contest,time,player,score\n" + rows + f"{other},{T0},z,1\n")
        _same_both_ways(path, monkeypatch)
        assert len(encoded) == 2
