"""The loaders under the input guards (issue 14): handles normalised or refused, contest
times checked, text that is not Unicode and numbers beyond Python's digit limit refused
with the file, line or member, contest and player named."""

from __future__ import annotations

import csv
import io
import json
import re
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podium.core.guards import MAX_HANDLE_LENGTH, normalize_handle
from podium.errors import ContestError, DataFormatError
from podium.io import (
    contest_from_json_dict,
    iter_contests,
    load_contests,
    read_contest_json,
    read_contests_csv,
    synthetic_contests,
)
from podium.io.synthetic import LATEST_DEFAULT_TIME, default_start_time
from podium.io.synthetic_teams import lobby_contests, synthetic_team_contests

T = 1_600_000_000
BIG = "9" * 5000


def doc(standings: list[Any], **meta: Any) -> dict[str, Any]:
    return {"name": "R", "time_seconds": T, "standings": standings, **meta}


def write_json(path: Path, d: Any) -> Path:
    path.write_text(json.dumps(d), encoding="utf-8")
    return path


def write_dir(directory: Path, docs: list[dict[str, Any]]) -> Path:
    directory.mkdir()
    for k, d in enumerate(docs):
        write_json(directory / f"{k}.json", d)
    return directory


def csv_text(rows: list[tuple[str, str, str, str]],
             header: str = "contest,time_seconds,player,place") -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header.split(","))
    w.writerows(rows)
    return buf.getvalue()


# ---------------------------------------------------------------------- handles
@pytest.mark.parametrize(("raw", "norm"), [
    ("  tourist ", "tourist"),
    ("e\u0301", "\u00e9"),
    ("\u3000Petr\u3000", "Petr"),
    ("Lewis Hamilton", "Lewis Hamilton"),
])
def test_handles_are_normalised_in_every_format(tmp_path: Path, raw: str, norm: str) -> None:
    d = doc([[raw, 0, 0], ["b", 1, 1]])
    assert read_contest_json(write_json(tmp_path / "c.json", d)).handles == (norm, "b")
    assert contest_from_json_dict(d, source="mem").handles == (norm, "b")
    assert load_contests(write_dir(tmp_path / "d", [d])).contests[0].handles == (norm, "b")
    tar = tmp_path / "h.tar.gz"
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(tmp_path / "d", arcname="x")
    assert load_contests(tar).contests[0].handles == (norm, "b")
    path = tmp_path / "c.csv"
    path.write_text(csv_text([("c", str(T), raw, "1"), ("c", str(T), "b", "2")]),
                    encoding="utf-8")
    assert read_contests_csv(path)[0].handles == (norm, "b")
    # raw_handles keeps them (the CSV reader strips cells either way)
    assert read_contest_json(tmp_path / "c.json", raw_handles=True).handles == (raw, "b")
    assert load_contests(tar, raw_handles=True).contests[0].handles == (raw, "b")
    assert read_contests_csv(path, raw_handles=True)[0].handles == (raw.strip(), "b")


def test_spellings_of_one_handle_are_one_player_across_contests(tmp_path: Path) -> None:
    d = write_dir(tmp_path / "d", [doc([["e\u0301", 0, 0], ["b", 1, 1]]),
                                   doc([[" \u00e9", 0, 0], ["b", 1, 1]], name="S")])
    first, second = load_contests(d).contests
    assert first.handles[0] is second.handles[0]  # one string object
    raw = load_contests(d, raw_handles=True).contests
    assert raw[0].handles[0] != raw[1].handles[0]


@pytest.mark.parametrize(("handle", "reason"), [
    ("a\x00b", "U+0000"),
    ("evil\u202egnp", "U+202E"),
    ("zero\u200bwidth", "U+200B"),
    ("tab\there", "U+0009"),
    ("   ", "empty or only whitespace"),
    ("x" * 10_000, f"at most {MAX_HANDLE_LENGTH}"),
])
def test_bad_handles_name_file_contest_and_player(tmp_path: Path, handle: str,
                                                  reason: str) -> None:
    d = doc([["ok", 0, 0], [handle, 1, 1]])
    path = write_json(tmp_path / "c.json", d)
    with pytest.raises(ContestError, match=re.escape(reason)) as info:
        read_contest_json(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: contest 'R', player ")
    assert len(msg) < 300 and "\n" not in msg
    with pytest.raises(ContestError, match=re.escape(reason)):
        load_contests(write_dir(tmp_path / "d", [doc([["ok", 0, 0]]), d]))
    # the slow (checking) path says the same
    with pytest.raises(ContestError, match=re.escape(reason)):
        contest_from_json_dict(json.loads(json.dumps(d)), source="mem")


@pytest.mark.parametrize(("handle", "reason"), [
    ("a\x07b", "U+0007"),
    ("evil\u202egnp", "U+202E"),
    ("x" * 10_000, "at most"),
])
def test_bad_handles_in_csv_name_the_line(tmp_path: Path, handle: str, reason: str) -> None:
    path = tmp_path / "c.csv"
    path.write_text(csv_text([("c", str(T), "ok", "1"), ("c", str(T), handle, "2")]),
                    encoding="utf-8")
    with pytest.raises(ContestError, match=re.escape(reason)) as info:
        read_contests_csv(path)
    assert str(info.value).startswith(f"{path}, line 3: contest 'c', player ")


def test_nul_in_csv_is_a_located_format_error(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(f"contest,time_seconds,player,place\nc,{T},a\x00b,1\n", encoding="utf-8")
    with pytest.raises((DataFormatError, ContestError), match=r"c\.csv, line 2"):
        read_contests_csv(path)


def test_team_names_are_normalised_and_checked(tmp_path: Path) -> None:
    d = doc([[" red ", 0, 0, ["a ", ["b", 0.5]]], ["blue", 1, 1, ["c"]]])
    c = read_contest_json(write_json(tmp_path / "t.json", d))
    assert c.teams is not None and c.teams.names == ("red", "blue")
    assert c.handles == ("a", "b", "c")
    bad = doc([["red\u202e", 0, 0, ["a"]], ["blue", 1, 1, ["c"]]])
    with pytest.raises(ContestError, match=r"contest 'R', team 'red\\u202e'.*U\+202E"):
        read_contest_json(write_json(tmp_path / "b.json", bad))
    path = tmp_path / "t.csv"
    path.write_text(f"contest,time_seconds,player,team,place\nc,{T},a,red\u200b,1\n"
                    f"c,{T},b,blue,2\n", encoding="utf-8")
    with pytest.raises(ContestError, match=r"t\.csv, line 2: contest 'c', team .*U\+200B"):
        read_contests_csv(path)


def test_normalisation_that_merges_two_handles_is_a_duplicate(tmp_path: Path) -> None:
    d = doc([["e\u0301", 0, 0], ["\u00e9", 1, 1]])
    with pytest.raises(ContestError, match=r"player '\u00e9': duplicate handle: "
                                           r"'e\\u0301' and '\\xe9' are one handle"):
        read_contest_json(write_json(tmp_path / "c.json", d))
    read_contest_json(tmp_path / "c.json", raw_handles=True)  # two players as given
    path = tmp_path / "c.csv"
    path.write_text(csv_text([("c", str(T), "ann", "1"), ("c", str(T), "ann ", "2"),
                              ("c", str(T), " ann", "3")]), encoding="utf-8")
    # the CSV reader strips cells: "ann " is "ann" even raw; the lines are named
    with pytest.raises(ContestError, match=r"lines 2, 3 and 4: contest 'c', player 'ann'"):
        read_contests_csv(path)


def test_caller_interner_holds_normal_forms(tmp_path: Path) -> None:
    table: dict[str, str] = {}
    d = {"name": "R", "time_seconds": T, "standings": [[" x", 0, 0], ["y", 1, 1]]}
    c = contest_from_json_dict(d, source="mem", interner=table)
    assert c.handles == ("x", "y") and table[" x"] == "x" and table["x"] == "x"
    with pytest.raises(ContestError, match="U\\+202E"):
        contest_from_json_dict(doc([["z\u202e", 0, 0]]), source="mem", interner=table)
    assert "z\u202e" not in table  # a refused handle does not stay in the table


# ---------------------------------------------------------------------- not Unicode
@pytest.mark.parametrize(("text", "pattern"), [
    ('{"name":"R","time_seconds":1600000000,"standings":[["\\ud800x",0,0],["b",1,1]]}',
     r"c\.json: contest 'R', player '\\ud800x': character 1 \(U\+D800\) is a lone surrogate"),
    ('{"name":"R\\ud800","time_seconds":1600000000,"standings":[["a",0,0],["b",1,1]]}',
     r"c\.json: 'name' 'R\\ud800' is not Unicode text"),
    ('{"name":"R","url":"u\\udc00","time_seconds":1600000000,"standings":[["a",0,0]]}',
     r"c\.json: contest 'R': 'url' 'u\\udc00' is not Unicode text"),
    ('{"name":"R","time_seconds":1600000000,"standings":[["a",0,0,["\\udc00"]]]}',
     r"c\.json: contest 'R', player '\\udc00'"),
])
def test_lone_surrogates_are_refused_at_load_time(tmp_path: Path, text: str,
                                                  pattern: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    for raw in (False, True):
        with pytest.raises((ContestError, DataFormatError), match=pattern):
            read_contest_json(path, raw_handles=raw)


# ---------------------------------------------------------------------- long numbers
@pytest.mark.parametrize("template", [
    '{"name":"R","time_seconds":1,"standings":[["a",0,0],["b",1,%s]]}',
    '{"name":"R","time_seconds":%s,"standings":[["a",0,0],["b",1,1]]}',
    '{"name":"R","time_seconds":1,"weight":%s,"standings":[["a",0,0],["b",1,1]]}',
    '{"name":"R","time_seconds":1,"perf_ceiling":%s,"standings":[["a",0,0],["b",1,1]]}',
])
def test_integers_beyond_the_digit_limit_in_json(tmp_path: Path, template: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(template % BIG)
    column = template.index("%s") + 1
    with pytest.raises(DataFormatError, match=rf"c\.json: invalid JSON at line 1, column "
                                              rf"{column}: an integer of more than \d+ digits"):
        read_contest_json(path)


@pytest.mark.parametrize(("key", "value"), [("weight", 10**400), ("perf_ceiling", -(10**400)),
                                            ("time_seconds", 10**400)])
def test_long_integers_within_the_digit_limit(tmp_path: Path, key: str, value: int) -> None:
    d = doc([["a", 0, 0], ["b", 1, 1]])
    d[key] = value
    with pytest.raises((DataFormatError, ContestError), match="out of range") as info:
        read_contest_json(write_json(tmp_path / "c.json", d))
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(("header", "row", "pattern"), [
    ("contest,time_seconds,player,place", f"c,{T},b,{BIG}", r"line 3: .*place must be finite"),
    ("contest,time_seconds,player,score", f"c,{T},b,{BIG}", r"line 3: .*score must be finite"),
    ("contest,time_seconds,player,place", f"c,{BIG},b,2",
     r"line 3: contest 'c': time must be finite, got '9999.*\.\.\.$"),
    ("contest,time_seconds,player,place,weight", f"c,{T},b,2,{BIG}",
     r"line 3: contest 'c': weight must be finite, got '9999"),
])
def test_long_numbers_in_csv(tmp_path: Path, header: str, row: str, pattern: str) -> None:
    path = tmp_path / "c.csv"
    extra = ",1" if header.endswith("weight") else ""
    first = f"c,{T},a,1{extra}" if "time" in header else "c,a,1"
    path.write_text(f"{header}\n{first}\n{row}\n")
    with pytest.raises((DataFormatError, ContestError), match=pattern) as info:
        read_contests_csv(path)
    assert len(str(info.value)) < 300


# ---------------------------------------------------------------------- times
@pytest.mark.parametrize(("t", "pattern"), [
    (1_602_505_600_000, r"time_seconds=1602505600000 is after 2200-01-01; it looks like "
                        r"milliseconds: in seconds it is 1602505600 \(2020-10-12"),
    (2**63 - 1 - 10**6, r"time_seconds=9223372036853775807 is after 2200-01-01"),
    (-5_364_662_401, r"time_seconds=-5364662401 is before 1800-01-01"),
    (1e300, r"time_seconds=a number of about 300 digits is outside 1800-01-01 \.\. 2200"),
])
def test_times_out_of_range(tmp_path: Path, t: float, pattern: str) -> None:
    path = write_json(tmp_path / "c.json", doc([["a", 0, 0], ["b", 1, 1]], time_seconds=t))
    with pytest.raises(ContestError, match=rf"^{path}: contest 'R': {pattern}"):
        read_contest_json(path)
    with pytest.raises(ContestError, match=pattern):
        read_contest_json(path, allow_future=True)  # out of range whatever the flag
    contest_from_json_dict(json.loads(path.read_text()), source="mem")  # not checked there


def test_future_times_need_allow_future(tmp_path: Path) -> None:
    soon = int(time.time()) + 3_600
    later = int(time.time()) + 10 * 86_400
    ok = write_json(tmp_path / "ok.json", doc([["a", 0, 0]], time_seconds=soon))
    assert read_contest_json(ok).time_seconds == soon  # within the one-day margin
    d = write_dir(tmp_path / "d", [doc([["a", 0, 0]]),
                                   doc([["a", 0, 0]], name="Later", time_seconds=later)])
    with pytest.raises(ContestError, match=r"1\.json: contest 'Later': time_seconds=\d+ "
                                           r"\(.*\) is more than 1 day in the future"):
        load_contests(d)
    assert len(load_contests(d, allow_future=True)) == 2
    assert len(list(iter_contests(d, allow_future=True))) == 2
    path = tmp_path / "c.csv"
    path.write_text(csv_text([("c", str(T), "a", "1"), ("late", str(later), "a", "1"),
                              ("late", str(later), "b", "2")]))
    with pytest.raises(ContestError, match=r"c\.csv, line 3: contest 'late': .*future"):
        read_contests_csv(path)
    assert len(read_contests_csv(path, allow_future=True)) == 2


def test_csv_without_times(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("contest,player,place\nb,x,1\nb,y,2\na,x,2\na,y,1\n")
    with pytest.raises(DataFormatError, match=r"c\.csv, line 1: no 'time_seconds' \(or 'time'\) "
                                              r"column.*--no-times \(require_times=False\)"):
        read_contests_csv(path)
    with pytest.raises(DataFormatError, match="no 'time_seconds'"):
        list(iter_contests(path))
    contests = read_contests_csv(path, require_times=False)
    assert [c.name for c in contests] == ["b", "a"] and {c.time_seconds for c in contests} == {0}


# ---------------------------------------------------------------------- archives
def _tar_with_links(path: Path) -> Path:
    good = json.dumps(doc([["a", 0, 0], ["b", 1, 1]])).encode()
    with tarfile.open(path, "w:gz") as tf:
        d = tarfile.TarInfo("h")
        d.type = tarfile.DIRTYPE
        tf.addfile(d)
        info = tarfile.TarInfo("h/0.json")
        info.size = len(good)
        tf.addfile(info, io.BytesIO(good))
        for name, kind in (("h/1.json", tarfile.SYMTYPE), ("h/2.json", tarfile.LNKTYPE),
                           ("h/dev", tarfile.CHRTYPE)):
            m = tarfile.TarInfo(name)
            m.type = kind
            m.linkname = "h/0.json" if kind != tarfile.CHRTYPE else ""
            tf.addfile(m)
        readme = tarfile.TarInfo("h/README.md")
        readme.size = 2
        tf.addfile(readme, io.BytesIO(b"hi"))
    return path


def test_archive_members_that_are_not_files_are_reported(tmp_path: Path) -> None:
    loaded = load_contests(_tar_with_links(tmp_path / "h.tar.gz"))
    assert len(loaded.contests) == 1
    assert len(loaded.warnings) == 3  # the directory and README.md are skipped silently
    assert "member h/1.json: a symbolic link (to 'h/0.json')" in loaded.warnings[0]
    assert "member h/2.json: a hard link (to 'h/0.json')" in loaded.warnings[1]
    assert "member h/dev: a device" in loaded.warnings[2]
    assert all(w.startswith(f"skipped {tmp_path / 'h.tar.gz'}, member ") for w in loaded.warnings)


def test_many_skipped_members_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "h.tar.gz"
    good = json.dumps(doc([["a", 0, 0]])).encode()
    with tarfile.open(path, "w:gz") as tf:
        info = tarfile.TarInfo("h/0.json")
        info.size = len(good)
        tf.addfile(info, io.BytesIO(good))
        for k in range(1, 15):
            m = tarfile.TarInfo(f"h/{k}.json")
            m.type = tarfile.SYMTYPE
            m.linkname = "0.json"
            tf.addfile(m)
    loaded = load_contests(path)
    assert len(loaded.warnings) == 11 and loaded.warnings[-1].startswith("... 14 entries")


# ---------------------------------------------------------------------- synthetic data
def test_synthetic_histories_lie_in_the_past() -> None:
    assert default_start_time(30, 86_400) == 1_600_000_000  # unchanged for short ones
    assert default_start_time(3000, 86_400) + 2999 * 86_400 == LATEST_DEFAULT_TIME
    now = time.time()
    long = synthetic_contests(20, 1500, seed=1)
    assert long[0].time_seconds < 1_600_000_000 and long[-1].time_seconds <= now
    league = synthetic_team_contests(40, 1300, teams_per_round=4, seed=1).contests
    assert league[-1].time_seconds == LATEST_DEFAULT_TIME
    assert lobby_contests(40, 50, seed=1).contests[0].time_seconds == 1_600_000_000


# ---------------------------------------------------------------------- random handles
handle_text = st.text(max_size=12) | st.lists(
    st.sampled_from([" ", "a", "\u00e9", "e\u0301", "\u202e", "\u200b", "\x00", "\n", "\t",
                     "\u3000", '"', ",", "\ud800", "x" * 130]), max_size=6).map("".join)


def _expected(handles: list[str]) -> tuple[str, ...] | None:
    """The normalised handles, or None when the loaders must refuse them."""
    try:
        out = tuple(normalize_handle(h) for h in handles)
    except ValueError:
        return None
    return out if len(set(out)) == len(out) else None


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(handle_text, min_size=1, max_size=4))
def test_random_handles_through_json(tmp_path: Path, handles: list[str]) -> None:
    d = doc([[h, k, k] for k, h in enumerate(handles)])
    path = tmp_path / "r.json"
    path.write_text(json.dumps(d), encoding="utf-8")  # \ud800 escaped by json.dumps
    expect = _expected(handles)
    try:
        got = read_contest_json(path).handles
    except (DataFormatError, ContestError) as exc:
        assert expect is None, exc
        assert str(exc).startswith(str(path))
        return
    assert got == expect


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(handle_text, min_size=1, max_size=4))
def test_random_handles_through_csv(tmp_path: Path, handles: list[str]) -> None:
    path = tmp_path / "r.csv"
    text = csv_text([("c", str(T), h, str(k + 1)) for k, h in enumerate(handles)])
    path.write_bytes(text.encode("utf-8", "surrogatepass"))  # a surrogate: not UTF-8
    try:
        got = read_contests_csv(path)[0].handles
    except (DataFormatError, ContestError) as exc:
        assert str(exc).startswith(str(path))
        return
    stripped = [h.strip() for h in handles]  # the CSV reader strips every cell
    assert got == _expected(stripped)
