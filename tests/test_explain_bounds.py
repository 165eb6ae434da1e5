"""Issue 31, item 2: an explanation costs what it should.

* its replay is bounded: a store that keeps its snapshots replays at most one snapshot
  interval for any contest, and an explanation that would replay more than
  ``max_explain_replay`` player-rounds is refused (before: a contest older than the
  oldest kept snapshot was replayed from the first contest, 40 s on Codeforces);
* memory returns to its baseline after a burst: the Raters built for explanations are
  dropped ``explain_cache_s`` after their last use (before: the two cached Raters stayed
  for the life of the process, 300 MB more on the Codeforces store).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from pathlib import Path

import pytest

import podium.store.raters as raters_module
from podium.io import synthetic_contests
from podium.store import Store
from podium.store.explain import ExplainTooCostly


@pytest.fixture(scope="module")
def history() -> list:
    return synthetic_contests(1000, 60, seed=3, participation=0.3)


def _store(tmp: Path, contests: list, **options: object) -> str:
    url = f"sqlite:///{tmp / 's.db'}"
    with Store.create(url, "mmr", **options) as store:  # type: ignore[arg-type]
        store.ingest_many(contests)
    return url


def _replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of contests each Rater built from the store replayed."""
    seen: list[int] = []
    real = raters_module.replay

    def counted(rater: object, contests: list) -> None:
        seen.append(len(contests))
        real(rater, contests)  # type: ignore[arg-type]

    monkeypatch.setattr(raters_module, "replay", counted)
    return seen


def test_kept_snapshots_bound_every_replay(tmp_path: Path, history: list,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    url = _store(tmp_path, history, snapshot_every=10, keep_snapshots=1000)
    seen = _replays(monkeypatch)
    with Store.open(url) as store:
        for c in history[::7]:
            store.explain(c.name, c.handles[0])
    assert seen and max(seen) < 10, seen


def test_a_replay_over_the_limit_is_refused(tmp_path: Path, history: list,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # the default retention: the two newest snapshots (at 50 and 60 contests here)
    url = _store(tmp_path, history, snapshot_every=10)
    seen = _replays(monkeypatch)
    events = sum(len(c.handles) for c in history[:40])
    with Store.open(url, max_explain_replay=events - 1) as store:
        with pytest.raises(ExplainTooCostly, match=r"explaining contest #40 would replay "
                           rf"{events:,} player-rounds \(40 contests after the nearest "
                           r"snapshot, at 0\).*--keep-snapshots"):
            store.explain(history[40].name, history[40].handles[0])
        assert seen == []  # refused before any work
        store.explain(history[55].name, history[55].handles[0])  # 5 after the one at 50
        assert seen == [5]
    with Store.open(url, max_explain_replay=events) as store:
        store.explain(history[40].name, history[40].handles[0])
        assert seen[-1] == 40


def test_memory_returns_to_its_baseline_after_a_burst(tmp_path: Path, history: list) -> None:
    url = _store(tmp_path, history, snapshot_every=20)
    with Store.open(url, explain_cache_s=1.0) as store:
        explainer = store.services.explain
        store.explain(history[1].name, history[1].handles[0])  # warm: imports, kernels
        explainer.expire(now=time.monotonic() + 10)
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            for c in history[::3]:  # a burst cycling past the cache
                store.explain(c.name, c.handles[0])
            held = tracemalloc.get_traced_memory()[0] - base
            assert explainer.cache_size() >= 1
            deadline = time.monotonic() + 10
            while explainer.cache_size() and time.monotonic() < deadline:
                time.sleep(0.05)  # the timer drops them after 1 s unused
            gc.collect()
            after = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert explainer.cache_size() == 0
    assert held > 2_000_000, held  # two Raters of 1000 players were held ...
    assert after < held / 5, (after, held)  # ... and are given back
