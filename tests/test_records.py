"""The Rater's contest records and ``extend``'s reports, kept as columns
(:mod:`podium.core.records`): list-like behaviour, and no Python object per contest
left for the garbage collector to scan."""

from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

from podium import Contest, Rater, RoundReport
from podium.core.records import ContestLog, ContestRecord, RoundReports


def _history(n: int, pool: int = 300, seed: int = 3) -> list[Contest]:
    rng = np.random.default_rng(seed)
    out = []
    for m in range(n):
        who = rng.choice(pool, 6, replace=False)
        out.append(Contest.from_scores([f"p{i}" for i in who], rng.normal(size=6),
                                       name=f"m{m}", time_seconds=1000 + 60 * m,
                                       url=None if m % 2 else f"https://x/{m}"))
    return out


def test_contest_log_acts_as_a_list_of_records() -> None:
    recs = [ContestRecord("a", 1, None, 3, False), ContestRecord("b", 2, "u", 4, True)]
    log = ContestLog(recs)
    assert len(log) == 2 and log[0] == recs[0] and log[-1] == recs[1]
    assert list(log) == recs and log == recs and log[1:] == recs[1:]
    assert log != recs[:1] and log != "ab" and recs[1] in log
    log.append(ContestRecord("c", 3, None, 2, False))
    log.add("d", 4, None, 5, False)
    assert [r.name for r in log] == ["a", "b", "c", "d"] and log.times == [1, 2, 3, 4]
    assert ContestLog([["a", 1, None, 3, False]]) == recs[:1]  # checkpoint rows
    assert "ContestLog([ContestRecord(name='a'" in repr(log) and "(4 in all)" in repr(log)
    with pytest.raises(IndexError):
        log[4]
    with pytest.raises(TypeError):
        hash(log)


def test_round_reports_act_as_a_list_of_reports() -> None:
    reps = [RoundReport(0, "a", 3, 3, False), RoundReport(1, "b", 2, 0, True, ("tied",))]
    out = RoundReports(reps)
    assert out == reps and list(out) == reps and out[1].warnings == ("tied",)
    out.append(RoundReport(2, "c", 4, 1, False, ("late", "x")))
    out += [RoundReport(3, "d", 2, 0, False)]
    more = RoundReports(reps)
    more.extend(out)
    assert len(more) == 6 and more[2:] == list(out)
    assert out.warnings() == [(1, "tied"), (2, "late"), (2, "x")]
    listed: list[RoundReport] = []
    listed += out  # a list extended by the reports, as callers did with a list
    assert listed == out


def test_extend_returns_reports_equal_to_the_add_loop_and_records_round_trip(
        tmp_path: object) -> None:
    history = _history(120)
    a, b = Rater("mmr"), Rater("mmr")
    reports = a.extend(history)
    assert isinstance(reports, RoundReports)
    assert reports == [b.add(c) for c in history]
    assert a.contests == b.contests and len(a.contests) == 120
    assert a.contests[5] == ContestRecord("m5", 1300, None, 6, False)
    assert a.contests[4].url == "https://x/4"
    back = Rater.from_arrays(a.to_arrays())
    assert isinstance(back.contests, ContestLog) and back.contests == a.contests
    assert pickle.loads(pickle.dumps(a.contests[3])) == a.contests[3]


def _tracked_after(fn: object) -> int:
    gc.collect()
    before = len(gc.get_objects())
    keep = fn()  # type: ignore[operator]
    gc.collect()
    after = len(gc.get_objects())
    del keep
    return after - before


def test_no_python_object_per_contest_is_left_to_the_collector() -> None:
    """Rating 4,000 contests (kept, with their reports) leaves a handful of new
    objects tracked by the garbage collector, not one or two per contest: the
    records and reports are columns of plain values."""
    history = _history(4000, pool=2000)
    Rater("mmr").extend(history)  # compiled code (and its objects) loaded first,
    warm = Rater("mmr")           # on both paths
    for c in history:
        warm.add(c)
    del warm

    def extend() -> tuple[Rater, RoundReports]:
        r = Rater("mmr")
        return r, r.extend(history)

    def add_loop() -> Rater:
        r = Rater("mmr")
        for c in history:
            r.add(c)
        return r

    # 23 and 15 when this was written (8,666 for extend when a record and a report
    # were objects)
    assert _tracked_after(extend) < 200
    assert _tracked_after(add_loop) < 200


def test_a_failure_after_the_last_round_is_raised_as_itself() -> None:
    """When the system fails after rating every round of a batch (here the pool's
    upkeep runs out of memory), ``extend`` raises that error -- not an IndexError of
    its own bookkeeping -- and keeps the rounds rated."""
    history = _history(300, pool=40)

    def no_memory(roomy: bool = False) -> None:
        raise MemoryError("no room to compact")

    r = Rater("mmr")
    r.extend(history[:100])
    r.state.compact = no_memory  # type: ignore[method-assign]
    with pytest.raises(MemoryError, match="no room"):
        r.extend(history[100:])
    assert 100 < r.contests_processed <= 300
    assert len(r.events.arrays()["mu"]) == 6 * r.contests_processed
