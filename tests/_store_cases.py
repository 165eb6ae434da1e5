"""Helpers of the store tests: data, a dump of every table (and the comparable part
of one: :func:`comparable_dump`), comparison with a Rater, and the cases that run real
processes (shared by ``test_store_crash.py`` on both databases).

Each ``case_*`` function takes a database URL (a fresh, empty database) and checks
one property of :class:`podium.store.Store` against independently known answers: a
plain :class:`podium.Rater` run over the same contests, the state before a killed
transaction, or a clean store written in the same transactions without interruption.

The processes the crash cases kill are driver scripts: :data:`INGEST_SCRIPT` (the
Store API, one contest per transaction) and :data:`CLI_SCRIPT` (a real ``podium
ingest``); both give the Store ``hooks`` that stop or mark the process at a stage of a
write transaction (``src/podium/store/writes.py``, ``rows.py``).
"""

from __future__ import annotations

import json
import os
import random
import select as _select
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from podium import Contest, Rater
from podium.io import synthetic_contests
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine

# ---------------------------------------------------------------------- data

def tied_history(n_players: int = 40, rounds: int = 7, seed: int = 5, *,
                 draw: bool = False) -> list[Contest]:
    """A synthetic history with ties, plus one contest of one player, ``zz_new``, who
    appears only there (a round of one side: it rates nobody) as the fourth; with
    ``draw``, also a contest in which everybody tied (a draw of three, rated) last."""
    cs = synthetic_contests(n_players, rounds, seed=seed, participation=0.7,
                            tie_resolution=40.0)
    alone = Contest([("zz_new", 0, 0)], name="alone", time_seconds=cs[2].time_seconds + 10)
    out = cs[:3] + [alone] + cs[3:]
    if draw:
        width = len(str(n_players - 1))
        out.append(Contest([(f"p{k:0{width}d}", 0, 2) for k in range(3)], name="all tied",
                           time_seconds=cs[-1].time_seconds + 10))
    return out


# ---------------------------------------------------------------------- helpers

def dump(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every store table, in a canonical order."""
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            out = {}
            for t in S.metadata.sorted_tables:
                rows = conn.execute(select(t).order_by(*t.primary_key.columns)).all()
                out[t.name] = [tuple(r) for r in rows]
            return out
    finally:
        eng.dispose()


def assert_store_equals_rater(store: Store, rater: Rater, *, every: int = 1) -> None:
    """Ratings, every player's history (or every ``every``-th player's) and every
    contest's changes equal the Rater's, to the last bit."""
    ref = rater.ratings().reset_index(drop=True)
    got = store.ratings_frame()
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    for h in rater.players.handles[::every]:
        rh = rater.history(h)
        view = store.player(h)
        assert view is not None, h
        hist = view.history
        assert [r.index for r in hist] == rh["contest_index"].tolist()
        assert [r.contest_name for r in hist] == rh["contest_name"].tolist()
        assert [r.time_seconds for r in hist] == rh["time_seconds"].tolist()
        for col, attr in (("mu", "mu"), ("sigma", "sigma"), ("display_rating", "display_rating"),
                          ("perf", "perf"), ("place", "place")):
            np.testing.assert_array_equal(np.array([getattr(r, attr) for r in hist]),
                                          rh[col].to_numpy(), err_msg=f"{h} {col}")
    ev = rater.events_frame()
    for k, rec in enumerate(rater.contests):
        cid = rec.url or rec.name
        view = store.contest(cid)
        assert view is not None and view.index == k and view.players == rec.players
        assert view.rated == (not rec.skipped)
        sub = ev[ev["contest_index"] == k]
        assert [c.handle for c in view.changes] == sub["handle"].tolist()
        np.testing.assert_array_equal([c.mu for c in view.changes], sub["mu"].to_numpy())
        np.testing.assert_array_equal([c.perf for c in view.changes], sub["perf"].to_numpy())
        for c in view.changes:
            if c.old_display is not None:
                assert c.change == c.new_display - c.old_display


def _reference(contests: Sequence[Contest], system: str) -> Rater:
    r = Rater(system)
    r.extend(contests)
    return r


# ---------------------------------------------------------------------- cases

INGEST_SCRIPT = """
import json, os, random, sys, time
from podium.io import load_contests
from podium.store import Store
url, path, recompute = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
go = os.environ.get("PODIUM_TEST_GO")
# The crash tests' hook: with PODIUM_STORE_TEST_HOOK=stage:FILE, reaching that stage of
# a write transaction writes FILE (this pid and the stages this transaction has reached,
# JSON) and sleeps, so that the test can kill the process there.
spec = os.environ.get("PODIUM_STORE_TEST_HOOK")
hooks = None
if spec:
    want, _, marker = spec.partition(":")
    seen = []
    def hooks(stage):
        if stage == "locked":
            seen.clear()
        seen.append(stage)
        if stage == want:
            with open(marker + ".tmp", "w") as fh:
                json.dump({"pid": os.getpid(), "stages": seen}, fh)
            os.replace(marker + ".tmp", marker)
            time.sleep(float(os.environ.get("PODIUM_STORE_TEST_SLEEP", "60")))
contests = load_contests(path).contests
with Store.open(url, snapshot_every=int(sys.argv[4]), hooks=hooks) as store:
    if go:  # start together with the other writer
        open(go + "." + str(os.getpid()), "w").close()
        while not os.path.exists(go):
            time.sleep(0.01)
    for c in contests:
        r = store.ingest(c, recompute_from=recompute)
        print(r.status, r.contest_id, flush=True)
        if go:  # vary the interleaving
            time.sleep(random.Random(os.getpid() * 7919 + len(r.contest_id)).uniform(0, 0.08))
"""

#: A real ``podium ingest`` (``podium.cli.main`` with this script's arguments) whose
#: Store gets ``hooks`` and ``snapshot_every`` from ``$PODIUM_STORE_TEST_KILL`` (JSON):
#: at hook call number ``call`` (1-based, over the whole run) it writes ``marker`` (this
#: pid, the call, the transaction and the stages it has reached), then a byte to the
#: pipe ``fd`` (the test waits on it, without polling) and, when ``block``, sleeps;
#: either way it sleeps at the ``locked`` stage of transaction ``backstop`` (1-based;
#: after writing ``backstop_marker``), so that the run never ends before the test
#: kills it.
CLI_SCRIPT = """
import json, os, sys, time
from podium.store.store import Store
spec = json.loads(os.environ["PODIUM_STORE_TEST_KILL"])
state = {"calls": 0, "txn": 0, "seen": []}
trace = open(spec["trace"], "w")  # every hook call, "transaction stage"
def mark(path):
    with open(path + ".tmp", "w") as fh:
        json.dump({"pid": os.getpid(), "call": state["calls"], "txn": state["txn"],
                   "stages": state["seen"]}, fh)
    os.replace(path + ".tmp", path)
def hooks(stage):
    if stage == "locked":
        state["txn"] += 1
        state["seen"] = []
    state["seen"].append(stage)
    state["calls"] += 1
    trace.write(f"{state['txn']} {stage}\\n")
    trace.flush()
    if state["calls"] == spec["call"]:
        mark(spec["marker"])
        os.write(spec["fd"], b"!")
        if spec["block"]:
            time.sleep(120)
    if stage == "locked" and state["txn"] == spec["backstop"]:
        mark(spec["backstop_marker"])
        time.sleep(120)
init = Store.__init__
def patched(self, *args, **kwargs):
    init(self, *args, **kwargs)
    self.hooks = hooks
    self.snapshot_every = spec["snapshot_every"]
Store.__init__ = patched
from podium.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def case_concurrent_writers(url: str, tmp: Path) -> None:
    """Two processes ingest interleaved contests at once: nothing is lost, and the result
    equals rating the time-sorted history from scratch."""
    from podium.io import write_contest_json

    contests = synthetic_contests(60, 10, seed=21, participation=0.8, tie_resolution=20.0)
    Store.create(url, "mmr", snapshot_every=3).close()
    dirs = []
    for part in (0, 1):
        d = tmp / f"part{part}"
        d.mkdir()
        for k, c in enumerate(contests[part::2]):
            write_contest_json(c, d / f"{k}.json")
        dirs.append(d)
    go = tmp / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", INGEST_SCRIPT, url, str(d), "1", "3"],
                         env=_env(PODIUM_TEST_GO=str(go)), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for d in dirs
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp.glob("go.*"))) < 2 and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.02)
    go.touch()
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    lines = [ln for out, _ in outs for ln in out.splitlines()]
    assert len(lines) == len(contests)
    assert all(ln.split()[0] in ("applied", "recomputed") for ln in lines)
    with Store.open(url) as store:
        assert store.contest_ids() == [c.name for c in contests]
        assert_store_equals_rater(store, _reference(contests, "mmr"))


def run_killed(url: str, path: Path, stage: str, tmp: Path, *, recompute: bool = False,
               timeout: float = 120.0) -> list[str]:
    """Start a process ingesting ``path``, kill -9 it when it reaches ``stage`` of its
    first transaction (the ``hooks`` the driver script gives the Store), and wait for
    it to die.  Returns the stages that transaction had reached."""
    return kill_at_stage(
        [INGEST_SCRIPT, url, str(path), "1" if recompute else "0", "2"], stage, tmp,
        what="ingest", timeout=timeout, PODIUM_STORE_TEST_SLEEP="120")


def kill_at_stage(script_args: list[str], stage: str, tmp: Path, *, what: str,
                  timeout: float = 120.0, **env: str) -> list[str]:
    """Run ``python -c SCRIPT ARGS...`` (``script_args``) with the store's test hook set
    to ``stage``, kill -9 it once it reports reaching that stage of its transaction,
    and wait for it to die.  Returns the stages the transaction had reached (read from
    the hook's marker file; ``what`` names the job in failures)."""
    marker = tmp / f"reached-{stage}-{random.random()}"
    proc = subprocess.Popen(
        [sys.executable, "-c", *script_args],
        env=_env(PODIUM_STORE_TEST_HOOK=f"{stage}:{marker}", **env),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while not marker.exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"{what} ended before stage {stage!r}: {out}\n{err}")
            if time.monotonic() > deadline:
                raise AssertionError(f"stage {stage!r} not reached in {timeout} s")
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.communicate()
    reached = json.loads(marker.read_text())
    assert reached["pid"] == proc.pid
    return list(reached["stages"])


def check_integrity(url: str) -> None:
    """A SQLite file passes ``PRAGMA integrity_check`` (PostgreSQL: nothing to check)."""
    if url.startswith("sqlite"):
        con = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        finally:
            con.close()


#: The hook stages of the transaction of one contest's ingestion that writes a snapshot,
#: in order (``src/podium/store/writes.py`` and ``rows.py``).
INGEST_STAGES = ("locked", "rated", "standings", "events", "players", "snapshot", "commit")


def recompute_stages(later: int) -> tuple[str, ...]:
    """The hook stages of a recomputation that re-rates ``later`` contests and writes a
    snapshot, in order."""
    return ("locked", "recompute-cleared", "rated", "standings", "events",
            *["recompute-contest"] * later, "players", "snapshot", "commit")


def case_kill_mid_ingest(url: str, tmp: Path, stages: Sequence[str],
                         contests: Sequence[Contest] | None = None) -> None:
    """kill -9 at each of ``stages`` inside the transaction of a contest leaves the
    previous state exactly (every row of every table), and the store goes on correctly
    afterwards.  ``contests``: 8 contests, the 6th being the one killed (default
    :func:`tied_history`)."""
    from podium.io import write_contest_json

    contests = tied_history() if contests is None else list(contests)
    assert len(contests) == 8
    with Store.create(url, "mmr", snapshot_every=2) as store:
        for c in contests[:5]:
            store.ingest(c)
    # snapshots after 2 and 4 contests: the 6th contest's transaction writes one
    before = dump(url)
    nxt = tmp / "next.json"
    write_contest_json(contests[5], nxt)
    for stage in stages:
        seen = run_killed(url, nxt, stage, tmp)
        assert seen == list(INGEST_STAGES[:INGEST_STAGES.index(stage) + 1]), (stage, seen)
        assert dump(url) == before, stage
        check_integrity(url)
    with Store.open(url, snapshot_every=2) as store:
        for c in contests[5:]:
            assert store.ingest(c).status == "applied"
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [6, 8]
        assert_store_equals_rater(store, _reference(contests, "mmr"))


def case_kill_mid_recompute(url: str, tmp: Path, stages: Sequence[str]) -> None:
    """kill -9 at each of ``stages`` inside the transaction of a recomputation (a contest
    inserted before two stored ones, which are re-rated) leaves the previous state
    exactly, and the store goes on correctly afterwards."""
    from podium.io import write_contest_json

    contests = tied_history()
    with Store.create(url, "mmr", snapshot_every=2) as store:
        for c in contests[:4] + contests[5:7]:  # contests[4] is left out
            store.ingest(c)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [4, 6]
    # inserting contests[4] at position 4 drops the snapshot at 6, re-rates the 5th and
    # 6th contests and writes a snapshot at 7 (3 contests after the one at 4)
    before = dump(url)
    expected = recompute_stages(2)
    old = tmp / "old.json"
    write_contest_json(contests[4], old)
    for stage in stages:
        seen = run_killed(url, old, stage, tmp, recompute=True)
        assert seen == list(expected[:expected.index(stage) + 1]), (stage, seen)
        assert dump(url) == before, stage
        check_integrity(url)
    with Store.open(url, cache=False, snapshot_every=2) as store:
        assert store.ingest(contests[4], recompute_from=True).status == "recomputed"
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [4, 7]
        assert store.ingest(contests[7]).status == "applied"
        assert_store_equals_rater(store, _reference(contests, "mmr"))


# ---------------------------------------------------------------------- kill at random

def comparable_dump(url: str, *, revision: bool = True) -> dict[str, list[tuple[Any, ...]]]:
    """:func:`dump` without the values that differ between two runs of the same writes:
    wall-clock times (``contests.ingested_at``, ``snapshots.created_at``, the ``meta``
    row ``created_at``), the store's random id (``meta`` ``store_id``) and the bytes of
    the snapshots -- a snapshot is compared by its other columns and by what the Rater
    it restores holds: its number of contests and its ratings --, the time and actor of
    each audit row.  ``revision=False`` also drops ``meta`` ``revision`` (one per transaction) and
    the audit rows' revision, for stores written in different transactions."""
    from podium.store.snapshot import rater_from_bytes

    out = dump(url)
    cols = [c.name for c in S.contests.columns]
    at = cols.index("ingested_at")
    out["contests"] = [r[:at] + r[at + 1:] for r in out["contests"]]
    drop = {"store_id", "created_at"} | (set() if revision else {"revision"})
    out["meta"] = [r for r in out["meta"] if r[0] not in drop]
    assert [c.name for c in S.snapshots.columns] == ["pk", "head_count", "epoch", "created_at",
                                                     "size", "data"]
    snaps = []
    for pk, head, epoch, _created, size, data in out["snapshots"]:
        rater = rater_from_bytes(bytes(data))
        snaps.append((pk, head, epoch, size, len(rater.contests),
                      [tuple(r) for r in rater.ratings().itertuples()]))
    out["snapshots"] = snaps
    # the audit log: its rows without the wall-clock time and the actor (the clean run
    # is made by another process: python:USER, not cli:USER), and the revision with
    # revision=False
    acols = [c.name for c in S.audit.columns]
    skip = {acols.index("time"), acols.index("actor")} | (
        set() if revision else {acols.index("revision")})
    out["audit"] = [tuple(v for k, v in enumerate(r) if k not in skip) for r in out["audit"]]
    return out


def assert_same_rows(got: dict[str, list[tuple[Any, ...]]],
                     want: dict[str, list[tuple[Any, ...]]], what: str = "") -> None:
    """Two dumps are equal table by table; a difference names the table and the first
    row that differs."""
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


@contextmanager
def fresh_database(like: str, tmp: Path) -> Iterator[str]:
    """A new, empty database of the same kind as ``like`` (a SQLite file in ``tmp``, or
    a new PostgreSQL database, dropped afterwards)."""
    if like.startswith("sqlite"):
        yield f"sqlite:///{tmp / f'fresh-{uuid.uuid4().hex[:8]}.db'}"
        return
    import _require

    with _require.postgres_database() as url:
        yield url


@dataclass(frozen=True)
class RandomKill:
    """One kill of the random crash test.

    ``seed`` draws the history, the batch size, ``snapshot_every``, what the store
    already holds and the kill point.  ``recompute``: kill a ``podium ingest
    --recompute-from`` run of contests left out of the stored history (one transaction
    each), else a run appending the rest of the history in batches.  ``stage``: stop
    the process at a random occurrence of this hook stage (``"*"``: of any stage) and
    kill it there; ``None``: at a random hook call let it go on and kill it after a
    random delay, wherever it then is -- a random fraction of the time an uninterrupted
    run (in memory, so faster) took from that call to its last transaction, which the
    process never starts (its hook sleeps there), so that the kill always lands in the
    run, mostly inside a transaction.
    """

    seed: int
    recompute: bool
    stage: str | None

    def __str__(self) -> str:
        return (f"seed{self.seed}-{'recompute' if self.recompute else 'append'}-"
                f"{self.stage or 'delay'}")


def _apply(store: Store, txn: Sequence[Contest], recompute: bool) -> None:
    """One transaction of ``podium ingest`` (as :mod:`podium.store.cli` writes it)."""
    if len(txn) == 1:
        res = [store.ingest(txn[0], recompute_from=recompute)]
    else:
        res = store.ingest_many(txn)
    assert [r.status for r in res] == ["recomputed" if recompute else "applied"] * len(txn)


def _transactions(contests: Sequence[Contest], batch: int) -> list[list[Contest]]:
    from podium.store.cli import batches

    return [list(contests[a:b]) for a, b in batches([len(c) for c in contests], batch)]


def case_kill_at_random_point(url: str, tmp: Path, kill: RandomKill) -> str:
    """kill -9 of a real ``podium ingest`` at the point ``kill`` draws leaves the store
    equal, row by row, to a clean store into which the same contests (as many as the
    killed store holds) were written without interruption in the same transactions; the
    killed store then takes the rest and ends equal to a Rater over the whole history.
    Returns a description of where the process was killed."""
    from podium.io import load_contests, write_contest_dir
    from podium.store.common import content_hash

    rng = random.Random(kill.seed)
    batch = rng.choice((2, 3, 4))
    every = rng.choice((3, 4, 5))
    history = synthetic_contests(160, 24, seed=1000 + kill.seed, participation=0.5,
                                 tie_resolution=20.0)
    if kill.recompute:  # four contests left out, ingested later with --recompute-from
        out = rng.sample(range(1, len(history) - 2), 4)
        todo = [history[k] for k in out]
        stored = [c for k, c in enumerate(history) if k not in out]
    else:  # the store holds the first few; the run appends the rest in batches
        start = rng.randint(1, 3)
        todo, stored = history[start:], history[:start]
    data = tmp / f"input-{kill.seed}"
    write_contest_dir(todo, data)
    loaded = load_contests(str(data)).contests
    assert [content_hash(c) for c in loaded] == [content_hash(c) for c in todo]
    txns = _transactions(todo, 1 if kill.recompute else batch)
    assert len(txns) >= 3

    def with_base(where: str) -> Store:
        store = Store.create(where, "mmr", snapshot_every=every)
        for part in _transactions(stored, batch):
            _apply(store, part, False)
        return store

    # the hook calls of the run, (transaction, stage, time), from an uninterrupted run in
    # memory (the same calls in the same order on any database)
    calls: list[tuple[int, str, float]] = []
    txn_no = [0]

    def record(stage: str) -> None:
        txn_no[0] += stage == "locked"
        calls.append((txn_no[0], stage, time.perf_counter()))

    with with_base("sqlite://") as store:
        store.hooks = record
        for part in txns:
            _apply(store, part, kill.recompute)
    assert [t for t, s, _ in calls if s == "locked"] == list(range(1, len(txns) + 1))
    eligible = [n for n, (t, s, _) in enumerate(calls, 1)
                if t < len(txns) and (kill.stage in (None, "*") or s == kill.stage)]
    assert eligible, f"no {kill.stage!r} stage before the last transaction"
    call = rng.choice(eligible)
    txn, stage, at = calls[call - 1]
    delay = None
    if kill.stage is None:  # a random moment of what the recorded run did after the call
        last = next(t for n, s, t in calls if n == len(txns) and s == "locked")
        delay = rng.random() * (last - at)

    with_base(url).close()
    marker, backstop, trace = tmp / "reached.json", tmp / "backstop.json", tmp / "trace"
    args = [sys.executable, "-c", CLI_SCRIPT, "ingest", str(data), "--db", url,
            "--no-progress", "--batch", str(batch)]
    if kill.recompute:
        args.append("--recompute-from")
    log = tmp / "ingest.log"
    r, w = os.pipe()
    try:
        spec = {"call": call, "block": delay is None, "marker": str(marker), "fd": w,
                "backstop": len(txns), "backstop_marker": str(backstop), "trace": str(trace),
                "snapshot_every": every}
        with open(log, "w") as fh:
            proc = subprocess.Popen(args, env=_env(PODIUM_STORE_TEST_KILL=json.dumps(spec)),
                                    stdout=fh, stderr=subprocess.STDOUT, pass_fds=(w,))
        os.close(w)
        w = -1
        try:
            ready, _, _ = _select.select([r], [], [], 120)
            if not ready:
                raise AssertionError(f"hook call {call} not reached in 120 s")
            if not os.read(r, 1):  # no writer left: the process ended
                proc.wait(timeout=30)
                raise AssertionError(f"podium ingest ended before hook call {call}:\n"
                                     f"{log.read_text()}")
            if delay is not None:
                time.sleep(delay)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.returncode == -signal.SIGKILL, log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    reached = json.loads(marker.read_text())
    assert (reached["pid"], reached["call"], reached["txn"], reached["stages"][-1]) == \
        (proc.pid, call, txn, stage), reached  # the run is the one recorded
    number, last_stage = trace.read_text().splitlines()[-1].split(" ", 1)
    last_txn = int(number)

    # the killed store holds whole transactions: the first `done` of the run
    check_integrity(url)
    with Store.open(url) as store:
        held = store.stats()["contests"]
    ends = [len(stored) + sum(len(t) for t in txns[:j]) for j in range(len(txns) + 1)]
    assert held in ends, (held, ends)
    done = ends.index(held)
    where = (f"{kill}: batch {batch}, snapshot_every {every}, hook call {call} ({stage!r} of "
             f"transaction {txn} of {len(txns)})")
    if delay is not None:
        where += (f", then {delay * 1000:.1f} ms: killed after {last_stage!r} of transaction "
                  f"{last_txn}{' (held back)' if backstop.exists() else ''}")
    if delay is None:  # stopped at the call: its transaction did not commit
        assert (last_txn, last_stage, done) == (txn, stage, txn - 1), (where, done)
    else:  # every transaction before the one of the last stage reached committed; that
        # one too at most when that stage was "commit" (the hook comes just before it)
        assert txn <= last_txn <= len(txns), where
        assert done == last_txn - 1 or (last_stage == "commit" and done == last_txn), \
            (where, done)
    where += f"; {done} transaction(s) committed"

    with fresh_database(url, tmp) as clean:
        with with_base(clean) as store:
            for t in txns[:done]:
                _apply(store, t, kill.recompute)
        assert_same_rows(comparable_dump(url), comparable_dump(clean), f"{where}: ")

    with Store.open(url, snapshot_every=every) as store:
        for t in txns[done:]:
            _apply(store, t, kill.recompute)
        assert store.contest_ids() == [c.name for c in history]
        assert_store_equals_rater(store, _reference(history, "mmr"), every=7)
    return where
