"""Numbered handles: a loader's :class:`HandlePool` and the Rater's lookup by code.

``load_contests`` of a directory or archive numbers every handle in one pool per load
(:attr:`Contest.handle_codes`); the Rater then finds the players of a batch with one
gather instead of a dictionary lookup per row.  These tests check that the codes are
right (spellings that normalise alike share one) and that rating numbered contests
gives, bit for bit, what rating the same contests without codes gives: alone, mixed
with contests of another load or built by hand, after players first seen without a
code, and after a contest fails in the middle of a batch.
"""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_rounds import (  # noqa: F401 - batch_from_start is a fixture
    ExplodingMMR,
    PickyMMR,
    assert_same,
    batch_from_start,
)

from podium import Contest, Rater
from podium.core.contest import HandlePool
from podium.core.guards import HandleError
from podium.errors import ContestError
from podium.io import load_contests, write_contest_dir
from podium.io._handles import HandleTable


def _history(seed: int, n_contests: int, pool: int, big_every: int = 7) -> list[Contest]:
    """Small and larger rounds over ``pool`` handles, ties, newcomers and regulars."""
    rng = np.random.default_rng(seed)
    out = []
    for m in range(n_contests):
        size = 40 if m % big_every == 3 else int(rng.integers(2, 9))
        who = rng.choice(pool, size, replace=False)
        scores = rng.integers(0, 5, size).astype(float)
        out.append(Contest.from_scores([f"p{i}" for i in who], scores, name=f"c{m}",
                                       time_seconds=1_600_000_000 + 3600 * m))
    return out


def _coded(contests: list[Contest], where: Path) -> list[Contest]:
    write_contest_dir(contests, where)
    loaded = load_contests(where).contests
    assert all(c.handle_codes is not None for c in loaded)
    return loaded


def _plain(contests: list[Contest]) -> list[Contest]:
    out = [copy.copy(c) for c in contests]
    assert all(c.handle_codes is None for c in out)
    assert out == contests
    return out


# ---------------------------------------------------------------------- the codes
def test_loaded_contests_are_numbered_in_one_pool(tmp_path: Path) -> None:
    history = _history(0, 30, 50)
    loaded = _coded(history, tmp_path / "h")
    pool = loaded[0].handle_codes[0]
    assert isinstance(pool, HandlePool)
    seen: dict[str, int] = {}
    for c in loaded:
        p, codes = c.handle_codes
        assert p is pool and codes.dtype == np.int64 and not codes.flags.writeable
        assert [pool.names[k] for k in codes.tolist()] == list(c.handles)
        for h, k in zip(c.handles, codes.tolist(), strict=True):
            assert seen.setdefault(h, k) == k
    assert sorted(seen.values()) == list(range(len(pool)))  # dense, one per handle
    # numbered in order of first appearance
    first = list(dict.fromkeys(h for c in loaded for h in c.handles))
    assert pool.names == first


def test_spellings_that_normalise_alike_share_a_code(tmp_path: Path) -> None:
    d = tmp_path / "sp"
    d.mkdir()
    docs = [
        {"name": "a", "time_seconds": 1_600_000_000,
         "standings": [["alice", 0, 0], ["bob", 1, 1]]},
        {"name": "b", "time_seconds": 1_600_003_600,
         "standings": [[" alice ", 0, 0], ["cafe\u0301", 1, 1], ["bob", 2, 2]]},
        {"name": "c", "time_seconds": 1_600_007_200,
         "standings": [["caf\u00e9", 0, 0], ["alice", 1, 1]]},
    ]
    for k, doc in enumerate(docs):
        (d / f"{k}.json").write_text(json.dumps(doc))
    loaded = load_contests(d).contests
    codes = [c.handle_codes[1].tolist() for c in loaded]
    assert loaded[1].handles == ("alice", "caf\u00e9", "bob")
    assert codes == [[0, 1], [0, 2, 1], [2, 0]]
    assert loaded[0].handle_codes[0].names == ["alice", "bob", "caf\u00e9"]


def test_a_bad_handle_leaves_the_numbering_as_it_was() -> None:
    intern = HandleTable(coded=True)
    assert intern.coded(["a", "b"]).tolist() == [0, 1]
    table = dict(intern.codes)
    with pytest.raises(HandleError):
        intern.coded(["c", "b", "bad\x00handle", "d"])
    assert intern.codes == table and intern.pool is not None and intern.pool.names == ["a", "b"]
    assert intern.coded(["d", "a", "d2"]).tolist() == [2, 0, 3]


def test_copies_and_pickles_drop_the_codes(tmp_path: Path) -> None:
    c = _coded(_history(1, 2, 10), tmp_path / "h")[0]
    for other in (copy.copy(c), copy.deepcopy(c), pickle.loads(pickle.dumps(c))):
        assert other == c and other.handle_codes is None


def test_numbered_contests_check_their_codes_and_spell_handles_on_demand() -> None:
    pool = HandlePool()
    pool.names.extend(["a", "b", "c"])
    lo = np.array([0, 1, 2])
    c = Contest.from_codes(pool, np.array([2, 0, 1]), lo, lo, name="r")
    assert c._handles is None and len(c) == 3  # not spelled out yet
    assert c.handles == ("c", "a", "b") and c == Contest.from_arrays(["c", "a", "b"], lo, lo,
                                                                        name="r")
    with pytest.raises(ContestError, match="duplicate handle") as err:
        Contest.from_codes(pool, np.array([1, 2, 1]), lo, lo, name="r")
    assert err.value.player == "b"
    with pytest.raises(ContestError, match="standings are empty"):
        Contest.from_codes(pool, np.zeros(0, dtype=np.int64), lo[:0], lo[:0])
    with pytest.raises(ValueError, match="outside the pool"):
        Contest.from_codes(pool, np.array([0, 3, 1]), lo, lo)


# ---------------------------------------------------------------------- the Rater
@pytest.mark.usefixtures("batch_from_start")
@pytest.mark.parametrize("system", ["mmr", "mmr-fast", "trueskill", "codeforces", "glicko"])
def test_rating_numbered_contests_is_bit_identical(tmp_path: Path, system: str) -> None:
    history = _history(2, 120, 60)
    coded = _coded(history, tmp_path / "h")
    a, b = Rater(system), Rater(system)
    assert a.extend(coded) == b.extend(_plain(history))
    assert_same(a, b)


@pytest.mark.usefixtures("batch_from_start")
def test_mixed_pools_and_players_first_seen_without_a_code(tmp_path: Path) -> None:
    """Contests of two loads and hand-built ones in one batch; players the Rater
    knows by handle before it sees their code."""
    history = _history(3, 90, 40)
    load1 = _coded(history, tmp_path / "one")
    load2 = _coded(history, tmp_path / "two")
    assert load1[0].handle_codes[0] is not load2[0].handle_codes[0]
    mixed: list[Contest] = []
    for k in range(len(history)):
        mixed.append((load1, load2, _plain(history))[k % 3][k])
    a, b = Rater("mmr"), Rater("mmr")
    a.extend(_plain(history[:10]))  # known by handle only
    b.extend(_plain(history[:10]))
    a.extend(mixed[10:])
    b.extend(_plain(history[10:]))
    assert_same(a, b)
    # one at a time, then in a batch again
    for c in load2[:5]:
        a.add(c)
        b.add(_plain([c])[0])
    a.extend(load1[5:40])
    b.extend(_plain(history[5:40]))
    assert_same(a, b)


@pytest.mark.usefixtures("batch_from_start")
@pytest.mark.parametrize("system", [PickyMMR(), ExplodingMMR()])
def test_failure_mid_batch_forgets_the_codes_of_its_newcomers(
    tmp_path: Path, system: Any
) -> None:
    """``boom`` fails (its newcomer prior, or the rating itself after its newcomers
    were added): the Rater forgets them, their codes included."""
    history = _history(4, 40, 50)
    boom = Contest.from_scores([f"new{k}" for k in range(30)] + ["p1", "p2"],
                               np.arange(32, dtype=float), name="boom",
                               time_seconds=history[-1].time_seconds + 60)
    after = _history(5, 20, 40)
    after = [Contest.from_arrays(c.handles + ("new3",), np.r_[c.lo, len(c)],
                                 np.r_[c.hi, len(c)], name=c.name,
                                 time_seconds=boom.time_seconds + 60 * (k + 1))
             for k, c in enumerate(after)]
    coded = _coded([*history, boom, *after], tmp_path / "h")
    r, ref = Rater(system), Rater(system)
    with pytest.raises((ValueError, RuntimeError), match="no newcomers|boom"):
        r.extend(coded)
    ref.extend(_plain(history))
    assert "new3" not in r.players.index
    assert_same(r, ref)
    # new3 must come back as a newcomer, with a fresh index
    r.extend(coded[len(history) + 1:])
    ref.extend(_plain(after))
    assert_same(r, ref)


def test_rate_command_output_is_the_same_with_codes(tmp_path: Path) -> None:
    """The Rater's public tables are unchanged by the numbering."""
    history = _history(6, 60, 80)
    coded = _coded(history, tmp_path / "h")
    a, b = Rater("mmr"), Rater("mmr")
    a.extend(coded)
    b.extend(_plain(history))
    fa: Any = a.ratings()
    fb: Any = b.ratings()
    assert fa.equals(fb)
    assert a.players.handles == b.players.handles


@pytest.mark.parametrize("system", ["mmr", "trueskill"])
def test_add_of_loaded_contests_uses_their_numbers(tmp_path: Path, system: str) -> None:
    """``Rater.add`` of loaded contests (one at a time, past the small-round path's
    start) equals ``extend`` of the same contests without numbers, and leaves the
    handles unspelled (they are found by number)."""
    history = _history(7, 60, 50)
    coded = _coded(history, tmp_path / "h")
    a, b = Rater(system), Rater(system)
    for c in coded:
        a.add(c)
    b.extend(_plain(history))
    assert_same(a, b)
    assert all(c._handles is None for c in coded)
