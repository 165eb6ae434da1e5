"""A directory of many small JSON contest files read in batches (podium.io._json_batch):
the contests equal the file-by-file reader's, field for field and handle number for
handle number; whatever a batch cannot take is read file by file, and every bad file
raises the file-by-file reader's error, naming the file (the first bad file's, in
index order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import podium.io.sources as sources
from podium.core.contest import Contest
from podium.core.standings import check_ranges, ranges_hold, shared_ranges
from podium.errors import ContestError, PodiumError
from podium.io import load_contests
from podium.io._json_batch import batch_contests
from podium.io.history import LoadedHistory

T0 = 1_600_000_000


def _doc(k: int, rows: list[Any], **meta: Any) -> dict[str, Any]:
    return {"name": f"match {k}", "time_seconds": T0 + 60 * k, "standings": rows, **meta}


def _write(folder: Path, docs: list[Any]) -> Path:
    folder.mkdir(exist_ok=True)
    for k, d in enumerate(docs):
        text = d if isinstance(d, str) else json.dumps(d)
        (folder / f"{k}.json").write_text(text, encoding="utf-8")
    return folder


def _load(folder: Path, monkeypatch: pytest.MonkeyPatch, batched: bool, **kw: Any
          ) -> LoadedHistory:
    monkeypatch.setattr(sources, "BATCH_FILE_BYTES", 1 << 16 if batched else -1)
    return load_contests(folder, **kw)


def _fields(c: Contest) -> tuple[object, ...]:
    codes = c.handle_codes  # None: read by the checking decoder (Infinity...)
    return (c.handles, None if codes is None else codes[1].tolist(), c.lo.tolist(),
            c.hi.tolist(), c.name, c.time_seconds, type(c.time_seconds), c.weight,
            type(c.weight), c.perf_ceiling, c.url, c.teams, c.team_round)


def _same_both_ways(folder: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> LoadedHistory:
    got = [_load(folder, monkeypatch, b, **kw) for b in (True, False)]
    for h in got:
        assert all(not c.lo.flags.writeable and not c.hi.flags.writeable for c in h.contests)
    fields = [[_fields(c) for c in h.contests] for h in got]
    assert fields[0] == fields[1]
    assert [(h.indices, h.changes, h.refused_handles) for h in got[0:1]] == [
        (h.indices, h.changes, h.refused_handles) for h in got[1:2]]
    pools = [[c.handle_codes[0].names for c in h.contests if c.handle_codes][:1]
             for h in got]
    assert pools[0] == pools[1]
    return got[0]


def _history(n: int, seed: int) -> list[dict[str, Any]]:
    """1v1 matches (wins and draws), some three-way, handles that need normalising."""
    rng = np.random.default_rng(seed)
    names = ["ann", "bob", " cid ", "cafe\u0301", "café", "dee", "Émile", "x" * 128]
    docs = []
    for k in range(n):
        size = 3 if k % 7 == 0 else 2
        who = rng.choice(len(names) - 1, size=size, replace=False)
        hs = [names[i] for i in who]
        if "café" in hs and "cafe\u0301" in hs:  # one player under two spellings
            hs.remove("café")
            size -= 1
        draw = rng.random() < 0.2
        rows = [[h, 0 if draw else i, size - 1 if draw else i] for i, h in enumerate(hs)]
        docs.append(_doc(k, rows))
    return docs


def test_batches_equal_the_file_by_file_reader(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _history(60, 1)
    docs[3] = _doc(3, [])  # empty standings: skipped and reported
    docs[5] = _doc(5, [["ann", 0, 0], ["bob", 1, 1]], weight=2.5, url="http://x/5",
                   perf_ceiling=3000)
    docs[6] = _doc(6, [["ann", 0, 0], ["bob", 1, 1]], weight=1, perf_ceiling=1e999)
    folder = _write(tmp_path / "d", docs)
    taken = []

    def batch(*args: Any) -> Any:
        found = batch_contests(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(sources, "batch_contests", batch)
    h = _same_both_ways(folder, monkeypatch)
    assert taken[0] is False  # Infinity (file 6): the batch read file by file
    docs[6] = _doc(6, [["ann", 0, 0], ["bob", 1, 1]], weight=1, perf_ceiling=1e300)
    folder = _write(tmp_path / "d", docs)
    taken.clear()
    h = _same_both_ways(folder, monkeypatch)
    assert taken == [True]  # one batch, taken
    assert len(h.contests) == 59 and any("standings are empty" in c for c in h.changes)
    for limit in (1, 4, 30):
        _same_both_ways(folder, monkeypatch, limit=limit)


def test_what_a_batch_cannot_take_is_read_file_by_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A float time, a team contest, a number beyond 64 bits, text msgspec refuses (a
    byte-order mark) and a large file are read file by file, the batch around them
    alike."""
    big = _doc(9, [[f"p{i}", i, i] for i in range(6000)])
    docs = _history(12, 2) + [
        _doc(12, [["ann", 0, 0], ["bob", 1, 1]]) | {"time_seconds": T0 + 0.0},
        _doc(13, [["red", 0, 0, ["ann", ["bob", 0.5]]], ["blue", 1, 1, ["cid"]]]),
        _doc(14, [["ann", 0, 0], ["bob", 1, 1]], weight=2**64),
        '\ufeff{"name": "m15", "time_seconds": 1600000000, "standings": [["ann", 0, 0]]}',
        big, _doc(17, [["ann", 0, 1], ["dee", 0, 1]])]
    folder = _write(tmp_path / "d", docs)
    monkeypatch.setattr(sources, "BATCH_BYTES", 2000)  # several batches
    h = _same_both_ways(folder, monkeypatch, any_weight=True)
    assert h.contests[13].teams is not None and len(h.contests[16]) == 6000


BAD = {
    "duplicate handle": [["ann", 0, 0], ["ann", 1, 1]],
    "duplicate after normalising": [["café", 0, 0], ["cafe\u0301", 1, 1]],
    "tie range": [["ann", 0, 0], ["bob", 0, 1]],
    "not contiguous": [["ann", 0, 1], ["bob", 1, 1]],
    "control character": [["ann", 0, 0], ["b\x07b", 1, 1]],
    "lone surrogate": [["ann", 0, 0], ["\ud800", 1, 1]],
}


@pytest.mark.parametrize("what", list(BAD))
def test_bad_files_raise_the_file_by_file_error(tmp_path: Path, what: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _history(20, 3)
    docs[8] = _doc(8, BAD[what])
    docs[15] = _doc(15, [["zed", 0, 0], ["zed", 1, 1]])  # a later bad file
    folder = _write(tmp_path / "d", docs)
    errors = []
    for batched in (True, False):
        with pytest.raises(PodiumError) as info:
            _load(folder, monkeypatch, batched)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
    assert str(folder / "8.json") in errors[0][1]


@pytest.mark.parametrize("meta", [{"time_seconds": -7_000_000_000}, {"weight": 1000},
                                  {"weight": -1}, {"perf_ceiling": -1e999},
                                  {"name": "bad\ud800name"}, {"url": "http://\udc00"}])
def test_bad_fields_raise_the_file_by_file_error(tmp_path: Path, meta: dict[str, Any],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _history(10, 4)
    docs[6] = docs[6] | meta
    folder = _write(tmp_path / "d", docs)
    errors = []
    for batched in (True, False):
        with pytest.raises(PodiumError) as info:
            _load(folder, monkeypatch, batched)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1] and str(folder / "6.json") in errors[0][1]
    # what the options let through is loaded alike
    if "time_seconds" not in meta and "weight" in meta and meta["weight"] > 0:
        _same_both_ways(folder, monkeypatch, any_weight=True)


def test_an_unreadable_file_comes_after_an_earlier_bad_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _history(10, 5)
    docs[2] = _doc(2, [["ann", 0, 0], ["ann", 1, 1]])
    folder = _write(tmp_path / "d", docs)
    (folder / "7.json").unlink()
    (folder / "7.json").mkdir()  # a directory named like a file: skipped and reported
    (folder / "8.json").chmod(0)
    try:
        with pytest.raises(ContestError, match="2.json"):
            _load(folder, monkeypatch, True)
    finally:
        (folder / "8.json").chmod(0o644)
    (folder / "2.json").write_text(json.dumps(_history(3, 6)[2]))
    h = _same_both_ways(folder, monkeypatch)
    assert any("7.json" in w for w in h.warnings)


def test_refused_handles_are_kept_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _history(10, 7)
    docs[4] = _doc(4, [["ann", 0, 0], ["x\x07y", 1, 1]])
    folder = _write(tmp_path / "d", docs)
    h = _same_both_ways(folder, monkeypatch, keep_refused_handles=True)
    assert list(h.refused_handles) == ["x\x07y"]
    _same_both_ways(folder, monkeypatch, raw_handles=True)


def test_whole_file_range_check_and_shared_patterns() -> None:
    """ranges_hold accepts a file's contests exactly when check_ranges accepts each;
    shared_ranges gives each contest its own ranges, one array pair per pattern."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        sizes = rng.integers(1, 6, size=rng.integers(1, 6))
        lo_parts, hi_parts = [], []
        for n in sizes.tolist():
            starts = np.flatnonzero(np.r_[True, rng.random(n - 1) < 0.6])
            ends = np.r_[starts[1:], n] - 1
            lo_parts.append(np.repeat(starts, ends - starts + 1))
            hi_parts.append(np.repeat(ends, ends - starts + 1))
        lo, hi = np.concatenate(lo_parts), np.concatenate(hi_parts)
        if rng.random() < 0.5:  # break one row
            i = int(rng.integers(lo.size))
            (lo if rng.random() < 0.5 else hi)[i] += int(rng.choice([-1, 1]))
        first = np.cumsum(sizes) - sizes

        def each_ok(lo: np.ndarray, hi: np.ndarray, first: np.ndarray = first,
                    sizes: np.ndarray = sizes) -> bool:
            for a, n in zip(first.tolist(), sizes.tolist(), strict=True):
                try:
                    check_ranges(lo[a:a + n], hi[a:a + n], ["p"] * n, "c", "player")
                except ContestError:
                    return False
            return True

        ok = each_ok(lo, hi)
        assert ranges_hold(lo, hi, first, sizes) == ok
        if ok:
            got_lo, got_hi = shared_ranges(lo, hi, first, sizes)
            for k, (a, n) in enumerate(zip(first.tolist(), sizes.tolist(), strict=True)):
                assert got_lo[k].tolist() == lo[a:a + n].tolist()
                assert got_hi[k].tolist() == hi[a:a + n].tolist()
                assert not got_lo[k].flags.writeable
            assert len({id(x) for x in got_lo}) <= len({
                (tuple(x.tolist()), tuple(y.tolist())) for x, y in zip(got_lo, got_hi,
                                                                       strict=True)})


def test_loaded_contests_go_to_the_oldest_generation(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A large load moves what it made into the collector's oldest generation (no pass
    of the young generations over the history); a small one does not; neither touches a
    program's own frozen objects."""
    import gc

    import podium.io.history as history

    folder = _write(tmp_path / "d", _history(30, 8))
    assert gc.isenabled()
    freezes: list[int] = []
    real_freeze = gc.freeze

    def freeze() -> None:
        freezes.append(1)
        real_freeze()

    monkeypatch.setattr(gc, "freeze", freeze)
    load_contests(folder)  # small: what it made stays young
    assert freezes == []
    monkeypatch.setattr(history, "_PROMOTE_FROM", 0)  # as a large load
    contests = load_contests(folder).contests
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(c) in oldest for c in contests) and freezes == [1]
    mine = [[k] for k in range(5)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_contests(folder)
        assert gc.get_freeze_count() == frozen and gc.isenabled()
        assert freezes == [1, 1]  # the program's own freeze only
    finally:
        gc.unfreeze()
    del mine
