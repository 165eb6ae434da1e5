"""Contests backed by a loader's columns (podium.core.contest_batch): each is the
contest built one by one from the same rows, attribute for attribute, pickles and
copies as that plain contest, and rates, evaluates and explains bit for bit alike."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest
from test_rounds import assert_same

import podium.io.csv_long as csv_long
from podium import Rater
from podium.core.contest import Contest, HandlePool
from podium.core.contest_batch import ContestBatch, LoadedContest, batch_run
from podium.evaluation.runner import evaluate
from podium.io import load_contests, write_contest_dir

T0 = 1_600_000_000


def _batch(weights: bool = True, extras: bool = True) -> tuple[ContestBatch, list[Contest]]:
    """A batch of five contests (sizes 2, 3, 1, 4, 2; ties; optional columns) and the
    same contests built by ``Contest.from_codes``."""
    pool = HandlePool()
    pool.names.extend(["ann", "bob", "cid", "dee", "eve"])
    rows = [([0, 1], [0, 1], [0, 1]), ([2, 0, 4], [0, 0, 2], [1, 1, 2]), ([3], [0], [0]),
            ([1, 2, 3, 4], [0, 1, 1, 3], [0, 2, 2, 3]), ([4, 3], [0, 0], [1, 1])]
    codes = np.array([c for r in rows for c in r[0]], dtype=np.int64)
    lo = np.array([c for r in rows for c in r[1]], dtype=np.int64)
    hi = np.array([c for r in rows for c in r[2]], dtype=np.int64)
    sizes = np.array([len(r[0]) for r in rows], dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    names = [f"round {k}" for k in range(5)]
    times = np.array([T0, T0 + 60, T0 - 3_000_000_000, T0 + 120, T0 + 120], dtype=np.int64)
    w = np.array([1.0, 2.5, 1.0, 0.5, 1.0]) if weights else None
    ceilings = [None, 3000.0, float("inf"), None, None] if extras else None
    urls = [None, "http://x/1", None, None, "http://x/4"] if extras else None
    batch = ContestBatch(pool, codes, lo, hi, starts, sizes, names, times, w, ceilings, urls)
    slow = [Contest.from_codes(pool, codes[a:a + n].copy(), lo[a:a + n], hi[a:a + n],
                               name=names[k], time_seconds=int(times[k]),
                               weight=1.0 if w is None else float(w[k]),
                               perf_ceiling=None if ceilings is None else ceilings[k],
                               url=None if urls is None else urls[k])
            for k, (a, n) in enumerate(zip(starts.tolist(), sizes.tolist(), strict=True))]
    return batch, slow


def _attributes(c: Contest) -> tuple[object, ...]:
    hc = c.handle_codes
    return (c.handles, c.lo.tolist(), c.hi.tolist(), c.name, c.time_seconds,
            type(c.time_seconds), c.weight, type(c.weight), c.perf_ceiling, c.url, c.teams,
            c.team_round, c.team_names, len(c), c.n_teams, c.is_outcome_free, c.label,
            c.standings, c.places.tolist(), c.to_json_dict(), repr(c),
            None if hc is None else (hc[0], hc[1].tolist()))


@pytest.mark.parametrize("weights,extras", [(True, True), (False, False)])
def test_batch_contests_equal_those_built_one_by_one(weights: bool, extras: bool) -> None:
    batch, slow = _batch(weights, extras)
    fast = batch.contests()
    assert len(batch) == len(fast) == 5
    assert all(isinstance(c, LoadedContest) and isinstance(c, Contest) for c in fast)
    assert [_attributes(c) for c in fast] == [_attributes(c) for c in slow]
    assert fast == slow and slow == fast
    assert fast[0] != fast[4]
    assert all(not c.lo.flags.writeable and not c.hi.flags.writeable for c in fast)
    assert all(np.shares_memory(c.lo, batch.lo) for c in fast)  # views, no copies


def test_handles_are_spelled_on_first_read_only() -> None:
    batch, _ = _batch()
    fast = batch.contests()
    assert fast[1]._handles is None
    hs = fast[1].handles
    assert hs == ("cid", "ann", "eve") and fast[1].handles is hs
    assert fast[0]._handles is None


def test_pickles_and_copies_are_plain_contests() -> None:
    batch, slow = _batch()
    fast = batch.contests()
    for made in (pickle.loads(pickle.dumps(fast)), [copy.copy(c) for c in fast],
                 copy.deepcopy(fast)):
        assert all(type(c) is Contest for c in made)
        assert made == slow
        assert [_attributes(c)[:-1] for c in made] == [_attributes(c)[:-1] for c in slow]
        assert all(c.handle_codes is None for c in made)


def test_batch_run_reads_the_columns_of_any_run() -> None:
    batch, slow = _batch()
    fast = batch.contests()
    for pick in ([0, 1, 2, 3, 4], [1, 2], [3], [4, 0, 3]):
        run = batch_run([fast[k] for k in pick])
        assert run is not None and run.pool is batch.pool
        chosen = [slow[k] for k in pick]
        assert run.codes.tolist() == [x for c in chosen for x in c.handle_codes[1].tolist()]
        assert run.lo.tolist() == [x for c in chosen for x in c.lo.tolist()]
        assert run.hi.tolist() == [x for c in chosen for x in c.hi.tolist()]
        assert run.offsets.tolist() == np.cumsum([0] + [len(c) for c in chosen]).tolist()
        assert run.time_seconds.tolist() == [c.time_seconds for c in chosen]
        assert run.weight.tolist() == [c.weight for c in chosen]
        assert [None if np.isnan(x) else x for x in run.perf_ceiling.tolist()] == \
            [c.perf_ceiling for c in chosen]
        assert run.codes.flags.writeable and run.lo.flags.writeable  # fresh arrays
    other, _ = _batch()
    assert batch_run([fast[0], other.contests()[1]]) is None  # two batches
    assert batch_run([fast[0], slow[1]]) is None  # a contest of no batch
    assert batch_run(slow) is None and batch_run([]) is None


def _history_csv(path: Path, n: int, seed: int) -> None:
    """Many small contests (1v1 with draws, a few of 3-5 players, some with every
    player tied, times not always increasing)."""
    rng = np.random.default_rng(seed)
    lines = ["contest,time,player,score"]
    for k in range(n):
        size = 2 if k % 7 else int(rng.integers(1, 6))
        players = rng.choice(40, size=size, replace=False)
        scores = rng.integers(0, 3, size) if k % 11 else np.zeros(size, dtype=np.int64)
        t = T0 + 600 * k - (86_400 if k % 13 == 5 else 0)
        lines += [f"{k},{t},p{p},{s}" for p, s in zip(players.tolist(), scores.tolist(),
                                                     strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _loaded(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> list[Contest]:
    monkeypatch.setattr(csv_long, "COLUMNAR_FROM_BYTES", 0 if fast else 1 << 62)
    return load_contests(path).contests


@pytest.mark.parametrize("system", ["mmr", "glicko", "trueskill", "elo-single"])
def test_rating_batch_contests_is_bit_identical(tmp_path: Path, system: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``extend`` and ``add`` of batch contests equal ``extend`` of the row reader's
    contests (plain ones), with skipped and out-of-order contests in the batches."""
    path = tmp_path / "h.csv"
    _history_csv(path, 300, 1)
    fast = _loaded(path, monkeypatch, True)
    slow = _loaded(path, monkeypatch, False)
    assert all(isinstance(c, LoadedContest) for c in fast)
    assert not any(isinstance(c, LoadedContest) for c in slow)
    a, b, c = Rater(system), Rater(system), Rater(system)
    a.extend(fast)
    b.extend(slow)
    for contest in fast:
        c.add(contest)
    assert_same(a, b)
    assert_same(c, b)
    k = 57
    assert a.explain(fast[k], fast[k].handles[0]).to_dict() == \
        b.explain(slow[k], slow[k].handles[0]).to_dict()


def test_evaluating_batch_contests_is_bit_identical(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "h.csv"
    _history_csv(path, 400, 2)
    fast = _loaded(path, monkeypatch, True)
    slow = _loaded(path, monkeypatch, False)
    ra = evaluate(fast, "glicko", train_frac=0.2, min_history=2)
    rb = evaluate(slow, "glicko", train_frac=0.2, min_history=2)
    assert ra.metrics.keys() == rb.metrics.keys()
    for key, value in ra.metrics.items():
        assert np.array_equal(np.asarray(value), np.asarray(rb.metrics[key]),
                              equal_nan=True), key


def test_json_directory_batches_rate_bit_identically(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A directory of small JSON files is read in batches (one ContestBatch each); a
    Rater's chunk across two batches reads them contest by contest, same bits."""
    import podium.io.sources as sources

    path = tmp_path / "h.csv"
    _history_csv(path, 200, 3)
    slow = _loaded(path, monkeypatch, False)
    write_contest_dir(slow, tmp_path / "dir")
    monkeypatch.setattr(sources, "BATCH_BYTES", 4096)  # many batches
    fast = load_contests(tmp_path / "dir").contests
    assert all(isinstance(c, LoadedContest) for c in fast)
    assert len({type(c) for c in fast}) > 2  # one class per batch
    assert fast == slow
    a, b = Rater("mmr"), Rater("mmr")
    a.extend(fast)
    b.extend(slow)
    assert_same(a, b)
