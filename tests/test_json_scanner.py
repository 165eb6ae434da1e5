"""The compiled standings reader of large loads (:mod:`podium.io._scan`).

Once a load has numbered ``SCAN_AFTER_ROWS`` rows, its contests' standings are read
by a Numba scanner that numbers handles through a hash table of their bytes.  It must
give exactly what the general path gives -- the same handles, numbers, places and
errors -- and give up, leaving everything as it was, on whatever it does not read
itself.  These tests decode the same texts both ways and compare.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podium.io._handles as handles_module
from podium import Contest, Rater
from podium.io import load_contests, write_contest_dir
from podium.io._handles import HandleTable
from podium.io._scan import ByteTable
from podium.io.json_contests import decode_contest

# Handles that exercise the scanner's edges: long keys (more than the 16 bytes kept in
# a slot, some sharing those 16), spellings that normalise to another handle (spaces,
# NFC), escapes (quote, backslash), non-ASCII, control characters, empty and too long.
TRICKY = [
    "alice", "bob", "carol", "Alice", " alice", "alice ", "a" * 16, "a" * 17, "a" * 17 + "b",
    "a" * 16 + "c", "a" * 128, "a" * 129, "x" * 40, "", " ", "Ω", "Ω ", "e\u0301", "\u00e9",
    'q"uote', "back\\slash", "tab\there", "new\nline", "~!@#$%^&*()_+-=[]{};:,./<>?", "0",
]


def _doc(rows: list[list[Any]], name: str = "c", t: int = 1_600_000_000) -> dict[str, Any]:
    return {"name": name, "time_seconds": t, "standings": rows}


def _ranked(handles: list[str], ties: list[int]) -> list[list[Any]]:
    """Rows ``[handle, lo, hi]`` placing the handles in order, in groups of ``ties``."""
    rows: list[list[Any]] = []
    k = 0
    for size in ties:
        group = handles[k:k + size]
        if not group:
            break
        rows.extend([h, k, k + len(group) - 1] for h in group)
        k += len(group)
    rows.extend([h, j, j] for j, h in enumerate(handles[k:], start=k))
    return rows


def _outcome(intern: HandleTable, text: bytes, where: str) -> tuple[Any, ...]:
    """What decoding ``text`` gives: the contest's content and numbers, or the error."""
    try:
        c = decode_contest(text, where, intern, allow_empty=True, times=None)
    except Exception as exc:  # noqa: BLE001 - compared between the two paths
        return ("error", type(exc).__name__, str(exc))
    if not isinstance(c, Contest):
        return ("empty", c.name)
    codes = c.handle_codes
    return ("contest", c.name, c.handles, c.lo.tolist(), c.hi.tolist(),
            None if codes is None else codes[1].tolist(), c.time_seconds, c.weight)


def _both_ways(texts: list[bytes], switch_at: int = 0, raw: bool = False
               ) -> tuple[list[tuple[Any, ...]], HandleTable]:
    """Decode ``texts`` in order with the general path only, and again with the
    compiled reader from text ``switch_at`` on; assert that they agree, text by text
    and in the final numbering.  Returns the outcomes and the scanning table."""
    general = HandleTable(raw=raw, coded=True)
    scanning = HandleTable(raw=raw, coded=True)
    expected, got = [], []
    for k, text in enumerate(texts):
        if k == switch_at:
            scanning.switch()
        expected.append(_outcome(general, text, f"{k}.json"))
        got.append(_outcome(scanning, text, f"{k}.json"))
    assert got == expected
    assert scanning.pool is not None and general.pool is not None
    assert scanning.pool.names == general.pool.names
    assert scanning.codes == general.codes
    return got, scanning


def test_plain_standings_are_scanned_and_agree() -> None:
    rows = _ranked(["alice", "bob", "carol", "a" * 17, "a" * 17 + "b", "0"], [2, 1, 3])
    texts = [json.dumps(_doc(rows, name=f"c{i}"), indent=indent).encode()
             for i, indent in enumerate([None, 2, "\t", 0])]
    outcomes, intern = _both_ways(texts)
    assert all(o[0] == "contest" for o in outcomes)
    assert intern.fast is not None and intern.fast.n_keys == 6
    assert outcomes[0][3:5] == ([0, 0, 2, 3, 3, 3], [1, 1, 2, 5, 5, 5])  # lo, hi
    # the scanner read them: numbers found through the byte table, no dict lookup
    fast = ByteTable()
    text = json.dumps([["alice", 0, 0], ["bob", 1, 1]]).encode()
    scan = fast.scan(np.frombuffer(text, dtype=np.uint8), 0)
    assert scan is not None and scan.new_names == ["alice", "bob"]
    assert scan.codes.tolist() == [0, 1] and scan.hi.tolist() == [0, 1]


@pytest.mark.parametrize("standings", [
    '[["alice", 0, 0], ["b\\u00e9", 1, 1]]',  # an escape
    '[["alice", 0, 0], ["bé", 1, 1]]',  # not ASCII
    '[["alice", 0.0, 0], ["bob", 1, 1]]',  # a float place
    '[["alice", 0, 0], ["bob", 1, 1e0]]',
    '[["alice", 0, 0], ["bob", 1, 10000000000000000000]]',  # 19 digits
    '[["alice", 0, 0, ["x", "y"]], ["bob", 1, 1]]',  # a team row
    '[["alice", 0, 0], ["bob", 1]]',  # two values
    '[["alice", 0, 0], ["", 1, 1]]',  # new handles not in normal form
    '[["alice", 0, 0], [" bob", 1, 1]]',
    '[["alice", 0, 0], ["bob ", 1, 1]]',
    '[["alice", 0, 0], ["' + "b" * 129 + '", 1, 1]]',
    '[["alice", 0, 0], [1, 1, 1]]',  # not a string
    '[]',
    '{"alice": 0}',
])
def test_the_scanner_gives_up_on_anything_else_and_changes_nothing(standings: str) -> None:
    fast = ByteTable()
    fast.add([("carol", 0)])
    before = (fast.n_keys, fast.used, fast.tab.copy())
    assert fast.scan(np.frombuffer(standings.encode(), dtype=np.uint8), 1) is None
    assert (fast.n_keys, fast.used) == before[:2]
    assert np.array_equal(fast.tab, before[2])
    # and decoding the contest gives what the general path gives (contest or error)
    text = ('{"name": "c", "time_seconds": 1600000000, "standings": ' + standings
            + "}").encode()
    _both_ways([text])


def test_errors_after_a_scan_leave_the_numbering_as_it_was() -> None:
    """A duplicate handle, a bad place, a name that is not Unicode: the scanned contest
    is refused, the scan undone, and the general path reads it again: its message,
    and its numbering (which keeps the handles of a contest refused by the contest
    model, not those of one refused for its name)."""
    texts = [
        json.dumps(_doc([["alice", 0, 0], ["bob", 1, 1]])).encode(),
        json.dumps(_doc([["dave", 0, 0], ["erin", 1, 1], ["dave", 2, 2]])).encode(),
        json.dumps(_doc([["frank", 0, 0], ["grace", 0, 1]])).encode(),  # lo/hi disagree
        json.dumps(_doc([["heidi", 0, 0], ["ivan", 1, 1]], name="\ud800")).encode(),
        json.dumps(_doc([["judy", 0, 0], ["alice", 1, 1]])).encode(),
    ]
    outcomes, intern = _both_ways(texts)
    assert [o[0] for o in outcomes] == ["contest", "error", "error", "error", "contest"]
    assert "duplicate handle" in outcomes[1][2]
    assert intern.pool is not None
    assert intern.pool.names == ["alice", "bob", "dave", "erin", "frank", "grace", "judy"]
    assert intern.fast is not None and intern.fast.n_keys == 7
    again = json.dumps(_doc([["heidi", 0, 0], ["erin", 1, 1]])).encode()
    assert _outcome(intern, again, "again.json")[5] == [7, 3]


def test_spellings_seen_before_the_switch_keep_their_numbers() -> None:
    """A spelling numbered by the general path (``" alice"`` -> ``alice``) is found by
    the scanner under the same number, and so is one numbered after the switch by a
    contest the scanner gave up on."""
    texts = [
        json.dumps(_doc([[" alice", 0, 0], ["bob", 1, 1], ["Ω", 2, 2]])).encode(),
        json.dumps(_doc([["alice", 0, 0], [" alice ", 1, 1]])).encode(),  # duplicate
        json.dumps(_doc([["carol ", 0, 0], ["bob", 1, 1]])).encode(),  # scanner gives up
        json.dumps(_doc([[" alice", 0, 0], ["carol ", 1, 1], ["carol", 2, 2]])).encode(),
        json.dumps(_doc([["carol ", 0, 0], [" alice", 1, 1], ["bob", 2, 2]])).encode(),
    ]
    outcomes, intern = _both_ways(texts, switch_at=1)
    assert outcomes[4][5] == [3, 0, 1]
    assert "duplicate handle" in outcomes[3][2]


def test_raw_handles_are_read_alike() -> None:
    texts = [json.dumps(_doc([[" alice", 0, 0], ["alice", 1, 1], ["Ω", 2, 2]])).encode(),
             json.dumps(_doc([["alice ", 0, 0], [" alice", 1, 1]])).encode()]
    outcomes, _ = _both_ways(texts, raw=True)
    assert outcomes[1][5] == [3, 0]


def test_the_table_grows_and_finds_every_key() -> None:
    """Many keys (several rehashes), long ones sharing their first 16 bytes."""
    fast = ByteTable()
    keys = [f"{'k' * 16}{i}" if i % 3 == 0 else f"p{i}" for i in range(150_000)]
    fast.add((k, i) for i, k in enumerate(keys[:1000]))
    text = json.dumps([[k, j, j] for j, k in enumerate(keys)]).encode()
    scan = fast.scan(np.frombuffer(text, dtype=np.uint8), 1000)
    assert scan is not None
    assert scan.codes.tolist() == list(range(150_000))
    assert scan.new_names == keys[1000:]
    assert fast.tab.shape[0] >= 2 * fast.n_keys
    again = fast.scan(np.frombuffer(text, dtype=np.uint8), 150_000)
    assert again is not None and again.new_names == []
    assert again.codes.tolist() == list(range(150_000))
    fast.forget(1000)
    third = fast.scan(np.frombuffer(text, dtype=np.uint8), 1000)
    assert third is not None and third.new_names == keys[1000:]


_rows = st.lists(st.sampled_from(TRICKY), min_size=1, max_size=8, unique=True)
_contest = st.tuples(_rows, st.lists(st.integers(1, 3), max_size=4),
                     st.sampled_from([None, 0, 2, "\t"]),
                     st.sampled_from(["ok", "ok", "ok", "float", "team", "short", "big"]))


def _text(handles: list[str], ties: list[int], indent: Any, twist: str, k: int) -> bytes:
    rows = _ranked(handles, ties)
    last = rows[-1]
    if twist == "float":
        last[2] = float(last[2])
    elif twist == "team":
        last.append(["m1", "m2"])
    elif twist == "short":
        del last[2]
    elif twist == "big":
        last[2] = 2**70
    return json.dumps(_doc(rows, name=f"c{k}"), indent=indent).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_contest, min_size=1, max_size=6), st.integers(0, 3), st.booleans())
def test_the_scanner_agrees_with_the_general_path(
    contests: list[tuple[list[str], list[int], Any, str]], switch_at: int, raw: bool
) -> None:
    texts = [_text(*c, k) for k, c in enumerate(contests)]
    _both_ways(texts, switch_at=switch_at, raw=raw)


def test_a_large_load_switches_and_rates_bit_for_bit(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    contests = []
    for m in range(40):
        who = rng.choice(300, int(rng.integers(2, 60)), replace=False)
        names = [f"p{i}" if i % 7 else f"{'q' * 16}{i}" for i in who]
        contests.append(Contest.from_scores(names, rng.integers(0, 6, who.size).astype(float),
                                            name=f"c{m}", time_seconds=1_600_000_000 + m))
    write_contest_dir(contests, tmp_path / "h")
    plain = load_contests(tmp_path / "h").contests
    monkeypatch.setattr(handles_module, "SCAN_AFTER_ROWS", 50)
    switched = load_contests(tmp_path / "h").contests
    for a, b in zip(plain, switched, strict=True):
        assert a == b
        assert a.handle_codes is not None and b.handle_codes is not None
        assert a.handle_codes[1].tolist() == b.handle_codes[1].tolist()
    r1, r2 = Rater("mmr"), Rater("mmr")
    r1.extend(plain)
    r2.extend(switched)
    assert r1.ratings().equals(r2.ratings())


@pytest.mark.parametrize("a, b", [
    ("abcdefghij", "abcdefghkl"),  # the same first word
    ("abcdefghijklmnop", "abcdefghijklmnoq"),  # the same length, the 16th byte differs
    ("x" * 16 + "ab", "x" * 16 + "ac"),  # the same 16 bytes kept in the slot
    ("x" * 16 + "ab", "x" * 16 + "abc"),
])
def test_a_hash_collision_is_told_apart_by_the_bytes(a: str, b: str) -> None:
    """Forge a collision: key ``a`` stored under ``b``'s hash in ``b``'s first slot.
    The scanner must compare the bytes and number ``b`` as a new handle."""
    from podium.io import _scan_kernels as kern

    fast = ByteTable()
    fast.add([(a, 0)])
    hb, _, _ = kern._key(np.frombuffer(b.encode(), dtype=np.uint8), 0, len(b))
    row = fast.tab[fast.key_slot[0]].copy()
    fast.tab[fast.key_slot[0]] = 0
    home = kern._home(hb, fast.tab.shape[0] - 1)
    row[0] = hb
    fast.tab[home] = row
    fast.key_slot[0], fast.key_hash[0] = home, hb
    text = json.dumps([[b, 0, 0]]).encode()
    scan = fast.scan(np.frombuffer(text, dtype=np.uint8), 1)
    assert scan is not None and scan.new_names == [b] and scan.codes.tolist() == [1]


def test_forgetting_a_scan_restores_the_table_exactly() -> None:
    intern = HandleTable(coded=True)
    _outcome(intern, json.dumps(_doc([["alice", 0, 0], ["bob", 1, 1]])).encode(), "0")
    intern.switch()
    fast = intern.fast
    assert fast is not None
    before = (fast.n_keys, fast.used, fast.tab.copy(), dict(intern.codes))
    text = json.dumps([["carol", 0, 0], ["alice", 1, 1], ["x" * 20, 2, 2]]).encode()
    scan = fast.scan(np.frombuffer(text, dtype=np.uint8), 2)
    assert scan is not None and scan.new_names == ["carol", "x" * 20]
    intern.scanned(scan)
    assert intern.codes["carol"] == 2 and fast.n_keys == 4
    intern.unscanned(scan)
    assert (fast.n_keys, fast.used) == before[:2]
    assert np.array_equal(fast.tab, before[2])
    assert intern.codes == before[3]
    assert intern.pool is not None and intern.pool.names == ["alice", "bob"]


def test_a_load_beyond_the_table_goes_on_with_the_general_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``MAX_KEYS`` handles (2**31 - 1: a slot keeps a number in 32 bits) the
    scanner declines and the general path numbers the rest, the same way."""
    import podium.io._scan as scan_module

    monkeypatch.setattr(scan_module, "MAX_KEYS", 60)
    texts = [json.dumps(_doc([[f"p{k}_{i}", i, i] for i in range(7)], name=f"c{k}")).encode()
             for k in range(12)]
    outcomes, intern = _both_ways(texts)
    assert all(o[0] == "contest" for o in outcomes)
    assert intern.fast is None  # given up once the general path had to number past it
    assert intern.pool is not None and len(intern.pool.names) == 84


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                                  max_size=20),
                          st.integers(-(10**19), 10**19), st.integers(0, 99)),
                max_size=6),
       st.binary(max_size=4), st.integers(0, 200))
def test_the_scanner_reads_only_what_json_says(rows: list[tuple[str, int, int]], junk: bytes,
                                               cut: int) -> None:
    """Any bytes (a valid standings text, cut short or with junk spliced in): the
    scanner either gives up or reads exactly the rows that ``json.loads`` reads."""
    text = json.dumps([list(r) for r in rows]).encode()
    text = text[:cut] + junk + text[cut:]
    fast = ByteTable()
    scan = fast.scan(np.frombuffer(text, dtype=np.uint8), 0)
    if scan is None:
        assert fast.n_keys == 0 and not fast.tab.any()
        return
    parsed = json.loads(text)  # what the scanner took is valid JSON ...
    names: dict[str, int] = {}
    codes = [names.setdefault(h, len(names)) for h, _, _ in parsed]
    assert scan.new_names == list(names)  # ... and means the same rows
    assert scan.codes.tolist() == codes
    assert scan.lo.tolist() == [lo for _, lo, _ in parsed]
    assert scan.hi.tolist() == [hi for _, _, hi in parsed]
