"""Helpers of the store tests: data, a dump of every table, comparison with a Rater,
and the cases that run real processes (shared by ``test_store_crash.py`` on both
databases).

Each ``case_*`` function takes a database URL (a fresh, empty database) and checks
one property of :class:`podium.store.Store` against independently known answers: a
plain :class:`podium.Rater` run over the same contests.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
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

def tied_history(n_players: int = 40, rounds: int = 7, seed: int = 5) -> list[Contest]:
    """A synthetic history with ties, plus one contest in which everybody tied
    (it rates nobody; ``zz_new`` appears only there)."""
    cs = synthetic_contests(n_players, rounds, seed=seed, participation=0.7,
                            tie_resolution=40.0)
    width = len(str(n_players - 1))
    a, b = f"p{0:0{width}d}", f"p{1:0{width}d}"
    tied = Contest([(a, 0, 2), (b, 0, 2), ("zz_new", 0, 2)], name="all tied",
                   time_seconds=cs[2].time_seconds + 10)
    return cs[:3] + [tied] + cs[3:]


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
import os, random, sys, time
from podium.io import load_contests
from podium.store import Store
url, path, recompute = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
go = os.environ.get("PODIUM_TEST_GO")
# The crash tests' hook: with PODIUM_STORE_TEST_HOOK=stage:FILE, reaching that stage of
# a write transaction creates FILE and sleeps, so that the test can kill the process there.
spec = os.environ.get("PODIUM_STORE_TEST_HOOK")
hooks = None
if spec:
    want, _, marker = spec.partition(":")
    def hooks(stage):
        if stage == want:
            with open(marker, "w") as fh:
                fh.write(str(os.getpid()))
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
               timeout: float = 120.0) -> None:
    """Start a process ingesting ``path``, kill -9 it when it reaches ``stage`` of its
    first transaction (the ``hooks`` the driver script gives the Store), and wait for
    it to die."""
    marker = tmp / f"reached-{stage}-{random.random()}"
    proc = subprocess.Popen(
        [sys.executable, "-c", INGEST_SCRIPT, url, str(path), "1" if recompute else "0", "2"],
        env=_env(PODIUM_STORE_TEST_HOOK=f"{stage}:{marker}", PODIUM_STORE_TEST_SLEEP="120"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while not marker.exists():
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"ingest ended before stage {stage!r}: {out}\n{err}")
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


def case_kill_mid_ingest(url: str, tmp: Path, stages: Sequence[str]) -> None:
    """kill -9 inside the transaction of a contest leaves the previous state exactly,
    and the store goes on correctly afterwards."""
    from podium.io import write_contest_json

    contests = tied_history()
    with Store.create(url, "mmr", snapshot_every=2) as store:
        for c in contests[:5]:
            store.ingest(c)
    before = dump(url)
    nxt = tmp / "next.json"
    write_contest_json(contests[6], nxt)  # contests[5] is left out: [6] then re-rates [5]
    for stage in stages:
        run_killed(url, nxt, stage, tmp)
        assert dump(url) == before, stage
    with Store.open(url) as store:
        store.ingest(contests[6])
    before = dump(url)
    old = tmp / "old.json"
    write_contest_json(contests[5], old)
    for stage in ("recompute-contest", "players", "commit"):
        run_killed(url, old, stage, tmp, recompute=True)
        assert dump(url) == before, stage
    with Store.open(url, cache=False) as store:
        assert store.ingest(contests[5], recompute_from=True).status == "recomputed"
        for c in contests[7:]:
            store.ingest(c)
        assert_store_equals_rater(store, _reference(contests, "mmr"))


