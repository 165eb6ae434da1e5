"""Tests of podium.io: contest JSON files, directories, tar archives and CSV tables."""

from __future__ import annotations

import io
import json
import math
import os
import random
import re
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _require import require_codeforces

import podium.io.json_contests as json_contests_module
from podium.core.contest import Contest
from podium.errors import ContestError, DataFormatError
from podium.io import (
    LoadedHistory,
    check_history,
    contest_from_json_dict,
    iter_contests,
    load_contests,
    read_contest_json,
    read_contests_csv,
    write_contest_dir,
    write_contest_json,
    write_contests_csv,
)


# ---------------------------------------------------------------------- helpers
def make_contest(k: int, *, time: int | None = None, url: str | None = "auto", n: int = 4,
                 **meta: Any) -> Contest:
    """Contest number k: players p0..p{n-1} rotated by k, first two tied."""
    handles = [f"p{(i + k) % (n + 2)}" for i in range(n)]
    lo = [0, 0] + list(range(2, n))
    hi = [1, 1] + list(range(2, n))
    return Contest.from_arrays(
        handles, np.array(lo), np.array(hi), name=f"Round {k}",
        time_seconds=1_000_000 + 100 * k if time is None else time,
        url=f"https://example.org/{k}" if url == "auto" else url, **meta,
    )


def history(n: int = 4) -> list[Contest]:
    return [make_contest(k) for k in range(n)]


def contest_json(k: int, **over: object) -> dict[str, object]:
    d = make_contest(k).to_json_dict()
    d.update(over)
    return d


def write_tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def json_member(prefix: str, k: int, d: object | None = None) -> tuple[str, bytes]:
    return f"{prefix}{k}.json", json.dumps(contest_json(k) if d is None else d).encode()


def write_csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- JSON file
def test_json_file_round_trip(tmp_path: Path) -> None:
    c = Contest(
        [("ünï", 0, 1), ("b", 0, 1), ("c,\"q\"", 2, 2)], name="Ünicode round", time_seconds=7,
        weight=0.5, perf_ceiling=math.inf, url=None,
    )
    path = tmp_path / "c.json"
    write_contest_json(c, path)
    assert read_contest_json(path) == c
    loaded = load_contests(path)
    assert isinstance(loaded, LoadedHistory)
    assert loaded.contests == [c] and loaded.indices == [0] and loaded.changes == []
    assert loaded.source == str(path)
    assert list(iter_contests(path)) == [c]
    assert list(iter_contests(path, limit=0)) == []
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary file left


@pytest.mark.parametrize(
    "doc",
    [
        {"name": "R", "time_seconds": 5, "standings": [["a", 0, 1], ["b", 0, 1], ["c", 2, 2]]},
        {"name": "", "time_seconds": 7_258_118_400, "url": "u", "weight": 2,
         "perf_ceiling": 3000.5,
         "standings": [["ü", 0, 0], ["b", 1, 1]], "extra": [1, {"k": None}]},
        {"name": "R", "time_seconds": 1e3, "standings": [["a", 0, 0], ["b", 1, 1]]},
        {"name": "R", "time_seconds": 5, "weight": 1.5, "perf_ceiling": None, "url": None,
         "standings": [["a", 0, 0], ["b", 1, 1]]},
    ],
)
def test_typed_fast_path_equals_checking_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              doc: dict[str, Any]) -> None:
    """The typed (msgspec) decoding gives exactly what the checking path gives."""
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc))
    fast = read_contest_json(path, allow_future=True)
    interner: dict[str, str] = {}
    shared = read_contest_json(path, interner=interner, allow_future=True)
    assert all(interner[h] is h for h in shared.handles)
    monkeypatch.setattr(json_contests_module, "_decode_fast", lambda *a, **k: None)
    slow = read_contest_json(path, allow_future=True)
    assert fast == slow
    assert (fast.time_seconds, fast.weight, fast.perf_ceiling, fast.url) == (
        slow.time_seconds, slow.weight, slow.perf_ceiling, slow.url)
    assert type(fast.time_seconds) is int and fast.lo.dtype == slow.lo.dtype == np.int64


def test_fast_path_falls_back_for_what_it_cannot_type(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"name": "R", "time_seconds": 1, "perf_ceiling": Infinity, '
                    '"standings": [["a", 0, 0], ["b", 1, 1]]}')
    assert read_contest_json(path).perf_ceiling == math.inf
    path.write_text('{"name": "R", "time_seconds": 1, '
                    '"standings": [["a", 0, 0], ["b", 1, 18446744073709551615]]}')
    with pytest.raises(DataFormatError, match=r"player 'b'\): hi = 18446744073709551615 is out"):
        read_contest_json(path)


def test_json_optional_fields_default(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"name": "R", "time_seconds": 5, "standings": [["a", 0, 0], ["b", 1, 1]]}')
    c = read_contest_json(path)
    assert (c.weight, c.perf_ceiling, c.url, c.time_seconds) == (1.0, None, None, 5)
    assert c.standings == [("a", 0, 0), ("b", 1, 1)]


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    path = tmp_path / "c.json"
    write_contest_json(make_contest(0), path)
    before = path.read_bytes()

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_contest_json(make_contest(1), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


# ---------------------------------------------------------------------- directories
def test_dir_round_trip_numeric_order(tmp_path: Path) -> None:
    contests = history(12)  # 10.json and 11.json must come after 9.json
    write_contest_dir(contests, tmp_path / "d")
    (tmp_path / "d" / "README.txt").write_text("not a contest")
    (tmp_path / "d" / ".hidden.json").write_text("ignored")
    loaded = load_contests(tmp_path / "d")
    assert loaded.contests == contests
    assert loaded.indices == list(range(12))
    assert loaded.changes == []
    assert list(iter_contests(tmp_path / "d", limit=3)) == contests[:3]


def test_dir_interns_handles(tmp_path: Path) -> None:
    write_contest_dir(history(3), tmp_path)
    a, b, _ = load_contests(tmp_path).contests
    shared = set(a.handles) & set(b.handles)
    assert shared
    for h in shared:
        assert a.handles[a.handles.index(h)] is b.handles[b.handles.index(h)]


def test_dir_gaps_are_reported(tmp_path: Path) -> None:
    contests = history(6)
    for k in (0, 3, 5):
        write_contest_json(contests[k], tmp_path / f"{k}.json")
    loaded = load_contests(tmp_path)
    assert loaded.indices == [0, 3, 5]
    assert loaded.contests == [contests[0], contests[3], contests[5]]
    assert loaded.changes == ["file numbering has gaps: no contest file for index 1-2, 4 "
                              "(3 missing)"]
    limited = load_contests(tmp_path, limit=2)  # the first two files by index
    assert limited.indices == [0, 3]


def test_dir_non_numeric_name_is_an_error(tmp_path: Path) -> None:
    write_contest_dir(history(2), tmp_path)
    (tmp_path / "extra.json").write_text("{}")
    with pytest.raises(DataFormatError, match=r"extra\.json.*index"):
        load_contests(tmp_path)


def test_dir_empty_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="no contest files"):
        load_contests(tmp_path)


def test_write_dir_refuses_stale_files(tmp_path: Path) -> None:
    write_contest_dir(history(4), tmp_path)
    with pytest.raises(FileExistsError, match=r"2\.json, 3\.json"):
        write_contest_dir(history(2), tmp_path)
    write_contest_dir(history(5), tmp_path)  # overwriting 0..3 and adding 4 is fine
    assert load_contests(tmp_path).contests == history(5)


def test_bad_json_in_dir_names_file(tmp_path: Path) -> None:
    write_contest_dir(history(3), tmp_path)
    (tmp_path / "1.json").write_text('{"name": "R",\n  "time_seconds": 1,\n  "standings": [}')
    with pytest.raises(DataFormatError, match=r"1\.json: invalid JSON at line 3, column 17: "
                                              "Expecting value"):
        load_contests(tmp_path)


# ---------------------------------------------------------------------- tar archives
@pytest.mark.parametrize("suffix", [".tar.gz", ".tgz"])
def test_tar_round_trip_shuffled_members(tmp_path: Path, suffix: str) -> None:
    contests = history(13)
    members = [json_member("cache/example/", k) for k in range(13)]
    random.Random(3).shuffle(members)
    members.insert(4, ("cache/example/README.md", b"# not a contest"))
    members.insert(0, ("cache/example/._0.json", b"\x00\x01 mac metadata"))
    tar = write_tar(tmp_path / f"hist{suffix}", members)
    loaded = load_contests(tar)
    assert loaded.contests == contests
    assert loaded.indices == list(range(13))
    assert loaded.changes == []
    assert list(iter_contests(tar)) == contests


def test_tar_written_from_dir(tmp_path: Path) -> None:
    write_contest_dir(history(3), tmp_path / "d")
    tar = tmp_path / "d.tgz"
    with tarfile.open(tar, "w:gz") as tf:
        tf.add(tmp_path / "d", arcname="./data")
    assert load_contests(tar).contests == history(3)


def test_tar_limit_does_not_parse_later_members(tmp_path: Path) -> None:
    members = [json_member("x/", k) for k in range(6)]
    members[4] = ("x/4.json", b"{ this is not json")
    random.Random(1).shuffle(members)
    tar = write_tar(tmp_path / "h.tar.gz", members)
    loaded = load_contests(tar, limit=3)
    assert loaded.indices == [0, 1, 2]
    assert loaded.contests == history(3)
    assert list(iter_contests(tar, limit=4)) == history(4)
    with pytest.raises(DataFormatError, match=r"h\.tar\.gz, member x/4\.json: invalid JSON at "
                                              r"line 1, column 3"):
        load_contests(tar)


def test_tar_limit_with_gaps(tmp_path: Path) -> None:
    members = [json_member("x/", k) for k in (7, 0, 4, 1, 9)]
    tar = write_tar(tmp_path / "h.tar.gz", members)
    loaded = load_contests(tar, limit=3)  # indices 0, 1 and the next one, 4
    assert loaded.indices == [0, 1, 4]
    assert loaded.contests == [make_contest(k) for k in (0, 1, 4)]
    assert loaded.changes == ["file numbering has gaps: no contest file for index 2-3 "
                              "(2 missing)"]
    assert load_contests(tar).indices == [0, 1, 4, 7, 9]


def test_tar_errors_name_archive_and_member(tmp_path: Path) -> None:
    dup = contest_json(2, standings=[["a", 0, 0], ["bob", 1, 1], ["bob", 2, 2]])
    tar = write_tar(tmp_path / "h.tgz", [json_member("c/", 0), json_member("c/", 2, dup)])
    with pytest.raises(ContestError) as info:
        load_contests(tar)
    msg = str(info.value)
    assert "h.tgz, member c/2.json" in msg and "'Round 2'" in msg and "'bob'" in msg
    assert "duplicate handle" in msg
    assert info.value.player == "bob" and info.value.contest == "Round 2"

    tar = write_tar(tmp_path / "n.tgz", [json_member("c/", 0), ("c/latest.json", b"{}")])
    with pytest.raises(DataFormatError, match=r"n\.tgz, member c/latest\.json.*index"):
        load_contests(tar)

    tar = write_tar(tmp_path / "two.tgz", [json_member("a/", 0), json_member("b/", 1)])
    with pytest.raises(DataFormatError, match=r"more than one directory \('a/0\.json' and "
                                              r"'b/1\.json'\)"):
        load_contests(tar)

    tar = write_tar(tmp_path / "empty.tgz", [("a/readme.txt", b"hi")])
    with pytest.raises(DataFormatError, match=r"empty\.tgz: no contest files"):
        load_contests(tar)


def test_tar_corrupt_archive(tmp_path: Path) -> None:
    good = write_tar(tmp_path / "g.tar.gz", [json_member("c/", k) for k in range(30)])
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DataFormatError, match=r"bad\.tar\.gz"):
        load_contests(bad)
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"definitely not an archive" * 10)
    with pytest.raises(DataFormatError, match=r"junk\.tgz: not a readable tar archive"):
        load_contests(junk)


def test_tar_gz_inflated_ahead_reads_like_tarfile(tmp_path: Path) -> None:
    """A .tar.gz is inflated by a background thread (podium.io.sources._GzipPrefetch):
    large members across many chunks, a file of two concatenated gzip members (as
    ``cat a.gz b.gz`` makes), and an archive given a .tar name all read as tarfile
    reads them; stopping early (``limit``) stops the thread."""
    import gzip
    import threading

    from podium.io import sources

    big = [json_member("c/", k, contest_json(k, name="x" * 200_000)) for k in range(6)]
    tar = write_tar(tmp_path / "big.tar.gz", big)
    assert [c.name for c in load_contests(tar).contests] == ["x" * 200_000] * 6
    raw = tmp_path / "raw.tar"
    with tarfile.open(raw, "w") as tf:
        for name, data in [json_member("c/", k) for k in range(4)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    body = raw.read_bytes()
    two = tmp_path / "two.tar.gz"
    two.write_bytes(gzip.compress(body[:3000]) + gzip.compress(body[3000:]))
    assert load_contests(two).contests == load_contests(raw).contests == history(4)
    before = threading.active_count()
    assert len(load_contests(tar, limit=2).contests) == 2
    assert threading.active_count() == before
    # the reader on its own: chunks smaller than the reads, then end of file
    reader = sources._GzipPrefetch(two)
    assert reader.read() == body
    reader.close()


def test_tar_gz_truncated_or_corrupt_inside(tmp_path: Path) -> None:
    import gzip

    good = write_tar(tmp_path / "g.tar.gz", [json_member("c/", k) for k in range(30)])
    body = gzip.decompress(good.read_bytes())
    for name, data in [
        ("cut.tar.gz", gzip.compress(body)[:-12]),  # no end-of-stream marker
        ("flip.tar.gz", _flip(gzip.compress(body), 200)),  # bad deflate data
        ("notar.tar.gz", gzip.compress(b"not a tar archive" * 100)),
    ]:
        bad = tmp_path / name
        bad.write_bytes(data)
        with pytest.raises(DataFormatError, match=re.escape(name)):
            load_contests(bad)


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


# ---------------------------------------------------------------------- dedupe / sort / check
def quirky_history(tmp_path: Path) -> Path:
    """Like the real Codeforces data: a repeated url and a contest out of time order."""
    contests = [
        make_contest(0, time=100),
        make_contest(1, time=200, url="https://example.org/same"),
        make_contest(2, time=300, url="https://example.org/same"),
        make_contest(3, time=250, url=None),
        make_contest(4, time=400, url=None),
        make_contest(5, time=400, url=None),
    ]
    write_contest_dir(contests, tmp_path / "q")
    return tmp_path / "q"


def test_no_flags_change_nothing_but_check_warns(tmp_path: Path) -> None:
    loaded = load_contests(quirky_history(tmp_path))
    assert loaded.indices == list(range(6)) and loaded.changes == []
    warnings = check_history(loaded.contests, loaded.indices)
    assert len(warnings) == 2
    assert "#2 'Round 2' has the same url as contest #1 'Round 1'" in warnings[0]
    assert "dedupe_urls=True" in warnings[0]
    assert "#3 'Round 3' (t=250," in warnings[1]
    assert "earlier than contest #2 'Round 2' (t=300," in warnings[1]
    assert "sort_by_time=True" in warnings[1]
    assert check_history(history(5)) == []


def test_check_history_caps_warnings() -> None:
    contests = [make_contest(k, time=1000 - k, url="https://same") for k in range(15)]
    warnings = check_history(contests)
    assert len(warnings) == 22
    assert warnings[10] == "... 14 contests in all repeat an earlier url"
    assert warnings[-1] == "... 14 contests in all are out of time order"


def test_dedupe_urls(tmp_path: Path) -> None:
    loaded = load_contests(quirky_history(tmp_path), dedupe_urls=True)
    assert loaded.indices == [0, 1, 3, 4, 5]
    assert [c.name for c in loaded.contests] == ["Round 0", "Round 1", "Round 3", "Round 4",
                                                 "Round 5"]
    assert loaded.changes == [
        "removed contest #2 'Round 2': same url as #1 'Round 1' (https://example.org/same)"
    ]


def test_sort_by_time_is_stable(tmp_path: Path) -> None:
    loaded = load_contests(quirky_history(tmp_path), sort_by_time=True)
    assert loaded.indices == [0, 1, 3, 2, 4, 5]
    assert [c.time_seconds for c in loaded.contests] == [100, 200, 250, 300, 400, 400]
    assert len(loaded.changes) == 1
    assert loaded.changes[0].startswith(
        "sorted by time: contest #3 'Round 3' (t=250, 1970-01-01 00:04 UTC) moved before "
        "#2 'Round 2' (t=300,"
    )
    both = load_contests(quirky_history(tmp_path), dedupe_urls=True, sort_by_time=True)
    assert both.indices == [0, 1, 3, 4, 5]
    assert len(both.changes) == 1 and both.changes[0].startswith("removed contest #2")
    assert check_history(both.contests, both.indices) == []


def test_limit_validation(tmp_path: Path) -> None:
    write_contest_dir(history(2), tmp_path)
    with pytest.raises(ValueError, match="limit"):
        load_contests(tmp_path, limit=-1)
    assert load_contests(tmp_path, limit=0).contests == []


# ---------------------------------------------------------------------- CSV
def test_csv_round_trip(tmp_path: Path) -> None:
    contests = history(5) + [make_contest(5, weight=2.5, perf_ceiling=3000.0, url=None)]
    path = tmp_path / "h.csv"
    write_contests_csv(contests, path)
    header = path.read_text().splitlines()[0]
    assert header == "contest,time_seconds,player,place,name,weight,url,perf_ceiling"
    loaded = load_contests(path)
    assert loaded.contests == contests
    assert loaded.indices == list(range(6))

    plain = tmp_path / "plain.csv"
    write_contests_csv([make_contest(0, url=None)], plain)
    assert plain.read_text().splitlines()[:3] == [
        "contest,time_seconds,player,place,name",
        "0,1000000,p0,1,Round 0",
        "0,1000000,p1,1,Round 0",
    ]


def test_csv_places_scores_aliases_and_order(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "s.csv", (
        "\ufeffContest_ID , Handle,Score, TIME, note\n"
        "late, x, 5, 20, whatever\n"
        "early, a, 1.5, 10,\n"
        "\n"
        "early, b, 3, 10,\n"
        "late, y, 5, 20,\n"
        "early, c, 1.5, 10,\n"
        "late, z, 9, 20,\n"
    ))
    late_first_seen = read_contests_csv(path)
    early, late = late_first_seen
    assert early.name == "early" and early.time_seconds == 10
    assert early.standings == [("b", 0, 0), ("a", 1, 2), ("c", 1, 2)]
    assert late.standings == [("z", 0, 0), ("x", 1, 2), ("y", 1, 2)]
    assert read_contests_csv(path, limit=1) == [early]

    path = write_csv(tmp_path / "p.csv", (
        "player,place,contest,name,weight,url\n"
        "a,2,c1,First,,\n"
        "b,1,c1,,2,http://u\n"
        "c,2,c1,First,2,\n"
        "a,1,c2,,,\n"
    ))
    with pytest.raises(DataFormatError, match=r"p\.csv, line 1: no 'time_seconds' .*--no-times"):
        load_contests(path)
    # no time column: order of first appearance, at time 0, said once
    loaded = load_contests(path, require_times=False)
    c1, c2 = loaded.contests
    assert loaded.changes == [f"{path} has no time column: its 2 contest(s) are rated in file "
                              "order, all at time 0 (--no-times)"]
    assert (c1.name, c1.weight, c1.url, c1.time_seconds) == ("First", 2.0, "http://u", 0)
    assert c1.standings == [("b", 0, 0), ("a", 1, 2), ("c", 1, 2)]
    assert (c2.name, c2.weight, c2.url) == ("c2", 1.0, None)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("", r"b\.csv: empty file; expected a header row"),
        ("contest,player,place\n", r"b\.csv: no data rows"),
        ("contest,place\nc,1\n", r"b\.csv, line 1: missing column 'player' or 'handle'"),
        ("id,player,place\nc,a,1\n", r"line 1: missing column 'contest' or 'contest_id'"),
        ("contest,player\nc,a\n", r"line 1: need exactly one of the columns 'place' or 'score', "
                                  "found neither"),
        ("contest,player,place,score\nc,a,1,2\n", r"line 1: need exactly one .* found both"),
        ("contest,time,time_seconds,player,place\n", r"columns 'time' and 'time_seconds' both"),
        ("contest,player,place\nc,a,1\nc,b,first\n",
         r"b\.csv, line 3: contest 'c', player 'b': non-numeric place 'first'"),
        ("contest,player,place\nc,a,1.5\n", r"line 2: contest 'c', player 'a': place must be "
                                            "a whole number, got '1.5'"),
        ("contest,player,place\nc,a,0\n", r"line 2: .*player 'a': places are 1-based"),
        ("contest,player,score\nc,a,nan\n", r"line 2: .*player 'a': score must be finite"),
        ("contest,player,place\nc,a,1\nc,b\n", r"line 3: expected 3 fields like the header, got 2"),
        ("contest,player,place\n,a,1\n", r"line 2: empty contest id"),
        ("contest,player,place\nc,,1\n", r"line 2: contest 'c': empty player"),
        ("contest,time,player,place\nc,5,a,1\nd,6,a,1\nc,7,b,2\n",
         r"b\.csv, line 4: inconsistent time within contest 'c': 7 here but 5 on line 2"),
        ("contest,time,player,place\nc,soon,a,1\n", r"line 2: contest 'c': non-numeric time"),
        ("contest,time,player,place\nc,,a,1\n", r"line 2: contest 'c': empty time"),
        ("contest,player,place,name\nc,a,1,X\nc,b,2,Y\n",
         r"line 3: inconsistent name within contest 'c': 'Y' here but 'X' on line 2"),
        ("contest,player,place,weight\nc,a,1,heavy\n", r"line 2: contest 'c': non-numeric weight"),
        ('contest,player,place\nc,"a,1\n', r"b\.csv, line 2: unexpected end of data"),
    ],
)
def test_csv_errors(tmp_path: Path, text: str, pattern: str) -> None:
    path = write_csv(tmp_path / "b.csv", text)
    with pytest.raises(DataFormatError, match=pattern):
        load_contests(path)


def test_csv_contest_errors_name_lines(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "d.csv", "contest,player,place\nc,a,1\nc,b,2\nc,a,3\n")
    with pytest.raises(ContestError) as info:
        load_contests(path)
    assert str(info.value) == f"{path}, lines 2 and 4: contest 'c', player 'a': duplicate handle"
    assert info.value.contest == "c" and info.value.player == "a"

    path = write_csv(tmp_path / "w.csv", "contest,player,place,weight\nc,a,1,\nc,b,2,-1\n")
    with pytest.raises(ContestError, match=r"w\.csv, line 2: contest 'c': weight must be finite "
                                           "and positive"):
        load_contests(path)


def test_csv_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_bytes(b"contest,player,place\nc,a,1\nc,\xe9t\xe9,2\n")
    with pytest.raises(DataFormatError, match=r"l\.csv, line \d+: not UTF-8 text"):
        load_contests(path)


# ---------------------------------------------------------------------- JSON errors
@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ('{"name": "R",\n "standings": [["a", 0, 0]],\n}',
         r"x\.json: invalid JSON at line 3, column 1"),
        ("[]", r"x\.json: expected a JSON object .* got array"),
        ('{"name": "R", "time_seconds": 1}', r"x\.json: missing required key 'standings'"),
        ('{"time_seconds": 1, "standings": []}', r"missing required key 'name'"),
        ('{"name": 3, "time_seconds": 1, "standings": []}', r"'name' must be a string, got number"),
        ('{"name": "R", "time_seconds": "1", "standings": []}',
         r"x\.json: contest 'R': 'time_seconds' must be a number, got string"),
        ('{"name": "R", "time_seconds": 1, "weight": true, "standings": []}',
         r"'weight' must be a number, got boolean"),
        ('{"name": "R", "time_seconds": 1, "url": 5, "standings": []}',
         r"'url' must be a string or null"),
        ('{"name": "R", "time_seconds": 1, "standings": {"a": 1}}',
         r"contest 'R': 'standings' must be an array of \[handle, lo, hi\], got object"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 0], ["b", 1]]}',
         r"contest 'R': standings\[1\] must be a \[handle, lo, hi\] array, got \['b', 1\]"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 0], "abc"]}',
         r"standings\[1\] must be a \[handle, lo, hi\] array"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 0], [7, 1, 1]]}',
         r"standings\[1\]: handle must be a string, got number 7"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 0], ["b", 1.5, 1]]}',
         r"standings\[1\] \(player 'b'\): lo must be an integer, got number 1\.5"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 0], ["b", 1, null]]}',
         r"standings\[1\] \(player 'b'\): hi must be an integer, got null"),
        ('{"name": "R", "time_seconds": 1, "standings": [["a", 0, 99999999999999999999]]}',
         r"player 'a'\): hi (must be an integer|= 99999999999999999999 is out of range)"),
    ],
)
@pytest.mark.parametrize("parser", ["default", "stdlib"])
def test_json_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, pattern: str,
                     parser: str) -> None:
    if parser == "stdlib":  # the optional orjson fast path must not change the outcome
        monkeypatch.setattr(json_contests_module, "_orjson", None)
    path = tmp_path / "x.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=pattern):
        read_contest_json(path)


@pytest.mark.parametrize(
    ("standings", "pattern"),
    [
        ([], r"x\.json: contest 'R': standings are empty"),
        ([["a", 0, 0], ["b", 0, 1]], r"x\.json: contest 'R', player 'b': tie range \(0, 1\)"),
        ([["a", 0, 0], ["", 1, 1]], r"x\.json: contest 'R', player '': empty or only whitespace"),
    ],
)
def test_json_contest_errors_name_file(tmp_path: Path, standings: list[object],
                                       pattern: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"name": "R", "time_seconds": 1, "standings": standings}))
    with pytest.raises(ContestError, match=pattern):
        read_contest_json(path)


def test_contest_from_json_dict_interns() -> None:
    table: dict[str, str] = {}
    d = {"name": "R", "time_seconds": 1, "standings": [["".join(["a", "b"]), 0, 0]]}
    first = contest_from_json_dict(d, source="mem", interner=table)
    d2 = {"name": "S", "time_seconds": 2, "standings": [["".join(["a", "b"]), 0, 0]]}
    second = contest_from_json_dict(d2, source="mem", interner=table)
    assert first.handles[0] is second.handles[0]
    with pytest.raises(DataFormatError, match="^mem: missing required key 'standings'"):
        contest_from_json_dict({"name": "R", "time_seconds": 1}, source="mem")


def test_unsupported_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "h.parquet").write_bytes(b"")
    with pytest.raises(DataFormatError, match=r"h\.parquet: unsupported input"):
        load_contests(tmp_path / "h.parquet")
    with pytest.raises(DataFormatError, match=r"nope: no such file or directory"):
        load_contests(tmp_path / "nope")
    with pytest.raises(DataFormatError, match=r"nope\.json: no such file"):
        load_contests(tmp_path / "nope.json")
    with pytest.raises(DataFormatError, match=r"nope\.tar\.gz: no such file"):
        load_contests(tmp_path / "nope.tar.gz")


# ---------------------------------------------------------------------- real data
def test_codeforces_first_five() -> None:
    loaded = load_contests(require_codeforces(), limit=5)
    assert loaded.indices == [0, 1, 2, 3, 4]
    assert loaded.changes == []
    first = loaded.contests[0]
    assert first.name == "Codeforces Beta Round #1"
    assert first.url == "https://codeforces.com/contest/1/standings"
    assert first.time_seconds == 1266588000
    assert len(first) == 66
    times = [c.time_seconds for c in loaded.contests]
    assert times == sorted(times)
