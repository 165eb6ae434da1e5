"""Helpers of the correction tests (``Store.delete`` / ``Store.replace``): a dump of a
store's rows keyed by contest id and handle instead of surrogate keys, the reference
(a fresh store that ingested the corrected history, and a plain Rater), the crash
driver and the reader check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _store_cases import kill_at_stage
from sqlalchemy import select

from podium import Contest, Rater
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine


def logical_dump(where: str | Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but the snapshots, with contest and player keys replaced
    by contest ids and handles, without ``ingested_at``, and without the ``meta`` rows
    that differ between two stores of the same history (store id, creation time,
    revision and epoch: one per transaction).  ``where``: a database URL, or an open
    store (an in-memory one included)."""
    eng = where.engine if isinstance(where, Store) else make_engine(where)
    try:
        with eng.connect() as conn:
            handle = dict(conn.execute(select(S.players.c.pk, S.players.c.handle)).all())
            cid = dict(conn.execute(select(S.contests.c.pk, S.contests.c.cid)).all())
            out: dict[str, list[tuple[Any, ...]]] = {}
            out["meta"] = sorted(tuple(r) for r in conn.execute(select(S.meta)).all()
                                 if r[0] not in ("store_id", "created_at", "revision",
                                                 "epoch", "podium_version"))
            pcols = [c.name for c in S.players.columns if c.name != "pk"]
            out["players"] = sorted(
                (tuple(r) for r in conn.execute(select(*(S.players.c[c] for c in pcols)))),
                key=lambda r: r[0])
            ccols = [c.name for c in S.contests.columns if c.name not in ("pk", "ingested_at")]
            out["contests"] = [tuple(r) for r in conn.execute(
                select(*(S.contests.c[c] for c in ccols)).order_by(S.contests.c.seq)).all()]
            out["standings"] = sorted(
                (cid[r[0]], r[1], handle[r[2]], *r[3:])
                for r in conn.execute(select(S.standings)).all())
            out["events"] = sorted(
                ((cid[r[0]], handle[r[1]], *r[2:])
                 for r in conn.execute(select(S.events)).all()), key=lambda r: r[:2])
            return out
    finally:
        if not isinstance(where, Store):
            eng.dispose()


def assert_same_logical(got: dict[str, list[tuple[Any, ...]]],
                        want: dict[str, list[tuple[Any, ...]]], what: str = "") -> None:
    """Two logical dumps are equal table by table (naming the first difference)."""
    assert list(got) == list(want)
    for table in want:
        a, b = got[table], want[table]
        if a == b:
            continue
        first = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                     min(len(a), len(b)))
        raise AssertionError(
            f"{what}table {table!r}: {len(a)} rows, expected {len(b)}; first difference at "
            f"row {first}: {a[first] if first < len(a) else None!r} vs "
            f"{b[first] if first < len(b) else None!r}")


def fresh_dump(history: Sequence[Contest], system: str = "mmr",
               ids: Sequence[str | None] | None = None, **options: Any) -> dict[str, Any]:
    """The logical dump of a fresh in-memory SQLite store that ingested ``history``
    contest by contest (``ids``: their contest ids, default url else name)."""
    with Store.create("sqlite://", system, **options) as fresh:
        for k, c in enumerate(history):
            fresh.ingest(c, contest_id=None if ids is None else ids[k])
        return logical_dump(fresh)


def rater_arrays(rater: Rater) -> dict[str, np.ndarray]:
    """A Rater's full state but its event log (``Rater.to_arrays(events=False)``)."""
    return dict(rater.to_arrays(events=False))


def assert_cached_rater_is_fresh(store: Store, history: Sequence[Contest],
                                 system: str = "mmr") -> None:
    """The Rater the store keeps after a correction equals ``Rater.extend`` of the
    corrected history, array by array (the system state included)."""
    cache = store.services.raters.cached()
    assert cache is not None and cache.count == len(history)
    want = Rater(system)
    want.extend(history)
    a, b = rater_arrays(cache.rater), rater_arrays(want)
    assert sorted(a) == sorted(b)
    for k in b:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# ---------------------------------------------------------------------- crash driver

#: Opens the store with the hook of the crash tests (``PODIUM_STORE_TEST_HOOK`` =
#: ``stage:FILE``: at that stage write FILE and sleep) and deletes ``argv[2]``, or
#: replaces it by the contest file ``argv[3]``.
CORRECT_SCRIPT = """
import json, os, sys, time
from podium.io import load_contests
from podium.store import Store
url, cid = sys.argv[1], sys.argv[2]
spec = os.environ.get("PODIUM_STORE_TEST_HOOK")
want, _, marker = spec.partition(":")
seen = []
def hooks(stage):
    seen.append(stage)
    if stage == want:
        with open(marker + ".tmp", "w") as fh:
            json.dump({"pid": os.getpid(), "stages": seen}, fh)
        os.replace(marker + ".tmp", marker)
        time.sleep(120)
with Store.open(url, snapshot_every=int(sys.argv[4]), hooks=hooks) as store:
    if sys.argv[3] == "-":
        print(store.delete(cid))
    else:
        print(store.replace(load_contests(sys.argv[3]).contests[0], contest_id=cid))
"""


def run_killed_correction(url: str, cid: str, replacement: Path | None, stage: str,
                          tmp: Path, *, snapshot_every: int = 2,
                          timeout: float = 120.0) -> list[str]:
    """Start a process correcting contest ``cid`` (a deletion, or a replacement by the
    contest file ``replacement``), kill -9 it when it reaches ``stage`` and wait for it
    to die.  Returns the stages the transaction had reached."""
    return kill_at_stage(
        [CORRECT_SCRIPT, url, cid, "-" if replacement is None else str(replacement),
         str(snapshot_every)], stage, tmp, what="correction", timeout=timeout)


# ---------------------------------------------------------------------- readers

def reads(store: Store, handles: Sequence[str], contest_ids: Sequence[str]) -> tuple[Any, ...]:
    """What a reader sees: the leaderboard, some players and some contests."""
    return (tuple(store.leaderboard(limit=1000)),
            tuple(store.player(h) for h in handles),
            tuple(store.contest(c) for c in contest_ids))


def read_during(url: str, correct: Callable[[], Any], handles: Sequence[str],
                contest_ids: Sequence[str]) -> tuple[list[tuple[Any, ...]], int]:
    """Run ``correct`` while a thread reads (its own :class:`Store` on ``url``) without
    pause, one read call after another; returns every answer of the reader's calls
    (grouped per :func:`reads` round, each item read in its own transaction) and how
    many rounds ended while ``correct`` ran; the reader goes on for two rounds after."""
    seen: list[tuple[Any, ...]] = []
    stop = threading.Event()
    started = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            with Store.open(url) as r:
                while not stop.is_set():
                    seen.append(reads(r, handles, contest_ids))
                    started.set()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
            started.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    started.wait(60)
    before = len(seen)
    correct()
    during = len(seen) - before
    after = len(seen)
    deadline = time.monotonic() + 60
    while len(seen) < after + 2 and not errors and time.monotonic() < deadline:
        time.sleep(0.01)  # a few rounds after the commit
    stop.set()
    t.join(60)
    assert not errors, errors
    return seen, during


#: The hook stages of a deletion that writes a snapshot, in order.
DELETE_STAGES = ("locked", "replayed", "correction-cleared", "rated", "events", "players",
                 "snapshot", "commit")
#: The hook stages of a replacement that writes a snapshot, in order.
REPLACE_STAGES = ("locked", "replayed", "correction-cleared", "rated", "standings", "events",
                  "players", "snapshot", "commit")


def case_kill_mid_correction(url: str, tmp: Path, replace: bool) -> None:
    """kill -9 at each stage of a correction (the 3rd of 8 contests deleted, or replaced
    by its standings with one player disqualified and one newcomer) leaves the database
    exactly as before (every row of every table, timestamps included); the correction
    then done without interruption equals the corrected history from scratch."""
    import _store_cases as cases

    from podium.io import write_contest_json

    history = cases.tied_history()
    with Store.create(url, "mmr", snapshot_every=2) as store:
        for c in history:
            store.ingest(c)
    before = cases.dump(url)
    k = 2
    old = history[k]
    cid = old.url or old.name
    path = None
    corrected = history[:k] + history[k + 1:]
    if replace:
        new = Contest.from_places([*old.handles[1:], "newcomer"],
                                  [*(old.lo[1:] + 1).tolist(), len(old) + 1], name=old.name,
                                  time_seconds=old.time_seconds)
        path = tmp / "replacement.json"
        write_contest_json(new, path)
        corrected = [*history[:k], new, *history[k + 1:]]
    stages = REPLACE_STAGES if replace else DELETE_STAGES
    for stage in stages:
        seen = run_killed_correction(url, cid, path, stage, tmp)
        assert seen == list(stages[:stages.index(stage) + 1]), (stage, seen)
        assert cases.dump(url) == before, stage
        cases.check_integrity(url)
    with Store.open(url, snapshot_every=2) as store:
        if replace:
            from podium.io import load_contests

            res = store.replace(load_contests(str(path)).contests[0])
        else:
            res = store.delete(cid)
        assert res.status == ("replaced" if replace else "deleted")
        # the snapshots after the point are gone, a new one holds the corrected state
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [len(corrected)]
        assert_same_logical(logical_dump(url), fresh_dump(corrected))
        cases.assert_store_equals_rater(store, cases._reference(corrected, "mmr"))
