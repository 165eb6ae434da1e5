"""Store test cases shared by the SQLite tests and the PostgreSQL tests.

Each ``case_*`` function takes database URLs (a fresh, empty database each) and
checks one property of :class:`podium.store.Store` against independently known
answers: a plain :class:`podium.Rater` run over the same contests, or numbers
that follow from the contests by hand.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sqlalchemy import select

from podium import Contest, Rater
from podium.io import synthetic_contests
from podium.store import Store, StoreError
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

def case_schema(url: str) -> None:
    from sqlalchemy import inspect

    with Store.create(url, "mmr") as store:
        assert store.stats()["schema_version"] == S.SCHEMA_VERSION
        assert store.system_name == "mmr"
        assert store.params == store.system.params()
    eng = make_engine(url)
    try:
        insp = inspect(eng)
        assert set(insp.get_table_names()) >= set(S.metadata.tables)
        for name, table in S.metadata.tables.items():
            assert {c["name"] for c in insp.get_columns(name)} == {c.name for c in table.c}
            want = {ix.name for ix in table.indexes}
            got = {ix["name"] for ix in insp.get_indexes(name)}
            assert want <= got, (name, want, got)
    finally:
        eng.dispose()


def case_ingest_equals_rater(url: str, system: str, mode: str) -> None:
    contests = tied_history()
    ref = _reference(contests, system)
    opts: dict[str, Any] = {}
    if mode == "cold":
        opts = {"cache": False, "snapshot_every": 2}
    results = []
    if mode == "reopen":
        Store.create(url, system, snapshot_every=3).close()
        for c in contests:
            with Store.open(url, snapshot_every=3) as store:
                results.append(store.ingest(c))
    else:
        with Store.create(url, system, **opts) as store:
            for c in contests:
                results.append(store.ingest(c))
    assert [r.status for r in results] == ["applied"] * len(contests)
    assert [r.index for r in results] == list(range(len(contests)))
    assert results[3].new_players == 0 and results[3].warnings  # everybody tied
    assert sum(r.new_players for r in results) == ref.num_players
    with Store.open(url) as store:
        assert_store_equals_rater(store, ref)
        st = store.stats()
        assert st["contests"] == len(contests)
        assert st["players"] == ref.num_players
        assert st["handles"] == ref.num_players + 1  # zz_new: only in the all-tied contest
        assert st["events"] == len(ref.events_frame())
        assert store.player("zz_new") is None


def case_idempotence(url: str) -> None:
    contests = tied_history()
    with Store.create(url, "mmr") as store:
        for c in contests[:4]:
            store.ingest(c)
        before = dump(url)
        again = store.ingest(contests[1])
        assert again.status == "duplicate" and again.index == 1
        assert again.players == len(contests[1]) and again.new_players == 0
        assert dump(url) == before
        # the same id with other standings is refused and changes nothing
        st = contests[1].standings
        swapped = [(st[1][0], st[0][1], st[0][2]), (st[0][0], st[1][1], st[1][2]), *st[2:]]
        other = Contest(swapped, name=contests[1].name, time_seconds=contests[1].time_seconds)
        with pytest.raises(StoreError, match="different content") as info:
            store.ingest(other)
        assert "position 0" in str(info.value) and repr(contests[1].name) in str(info.value)
        # also when it is old: the duplicate check comes first
        assert dump(url) == before
        # a duplicate older than the latest contest is still just a duplicate
        assert store.ingest(contests[0]).status == "duplicate"
        assert dump(url) == before


def case_older_refused(url: str) -> None:
    contests = tied_history()
    with Store.create(url, "mmr") as store:
        for c in contests[:2] + contests[4:6]:
            store.ingest(c)
        before = dump(url)
        with pytest.raises(StoreError) as info:
            store.ingest(contests[2])
        msg = str(info.value)
        assert repr(contests[2].name) in msg and repr(contests[5].name) in msg
        assert "--recompute-from" in msg and "2 later contest" in msg
        assert dump(url) == before


def case_recompute(url: str) -> None:
    contests = tied_history()
    order = [0, 1, 2, 5, 6, 7, 3, 4]
    with Store.create(url, "mmr", snapshot_every=2) as store:
        res = {k: store.ingest(contests[k], recompute_from=True) for k in order}
        assert res[5].status == "applied" and res[5].recomputed == 0
        assert res[3].status == "recomputed" and res[3].recomputed == 3 and res[3].index == 3
        assert res[4].status == "recomputed" and res[4].recomputed == 3 and res[4].index == 4
        assert store.contest_ids() == [c.url or c.name for c in contests]
    ref = _reference(contests, "mmr")
    with Store.open(url) as store:
        assert_store_equals_rater(store, ref)
    # a cold process (snapshots + replay) continues exactly
    extra = synthetic_contests(40, 9, seed=5, participation=0.7, tie_resolution=40.0)[-1]
    extra = Contest(extra.standings, name="extra", time_seconds=contests[-1].time_seconds + 99)
    ref.add(extra)
    with Store.open(url, cache=False) as store:
        assert store.ingest(extra).status == "applied"
        assert_store_equals_rater(store, ref)
    # equal time: inserted after the stored contests of the same time
    same = Contest([("p00", 0, 0), ("new1", 1, 1)], name="same time",
                   time_seconds=contests[2].time_seconds)
    with Store.open(url) as store:
        r = store.ingest(same, recompute_from=True)
        assert r.status == "recomputed" and r.index == 3
    ref2 = _reference([*contests[:3], same, *contests[3:], extra], "mmr")
    with Store.open(url, cache=False) as store:
        assert_store_equals_rater(store, ref2)


def case_failure_rolls_back(url: str, monkeypatch: Any) -> None:
    contests = tied_history()
    with Store.create(url, "mmr") as store:
        for c in contests[:3]:
            store.ingest(c)
        before = dump(url)

        def boom(*args: Any, **kwargs: Any) -> None:
            raise RuntimeError("disk on fire")

        with monkeypatch.context() as m:
            m.setattr(Store, "_update_players", boom)
            with pytest.raises(RuntimeError, match="disk on fire"):
                store.ingest(contests[4])
        assert dump(url) == before
        # the Rater that rated the failed contest is not reused
        for c in contests[3:]:
            store.ingest(c)
        assert_store_equals_rater(store, _reference(contests, "mmr"))


def case_queries(url: str) -> None:
    c1 = Contest([("Ann", 0, 0), ("x1", 1, 2), ("x2", 1, 2), ("bob", 3, 3)], name="R1",
                 url="https://example.org/r1", time_seconds=1000)
    c2 = Contest([("anna", 0, 0), ("x1", 1, 2), ("x2", 1, 2), ("a_b", 3, 3), ("a%c", 4, 4)],
                 name="R2", time_seconds=2000)
    c3 = Contest([("Ann", 0, 1), ("ghost", 0, 1)], name="R3", time_seconds=3000)
    with Store.create(url, "mmr") as store:
        for c in (c1, c2, c3):
            store.ingest(c)
        # contests, newest first
        summ = store.contests()
        assert [(s.contest_id, s.name, s.index, s.players, s.time_seconds) for s in summ] == [
            ("R3", "R3", 2, 2, 3000), ("R2", "R2", 1, 5, 2000),
            ("https://example.org/r1", "R1", 0, 4, 1000)]
        assert [s.name for s in store.contests(offset=1, limit=1)] == ["R2"]
        # one contest: standings order, tie ranges, debuts measured from the newcomer (690)
        v1 = store.contest("https://example.org/r1")
        assert v1 is not None and v1.url == "https://example.org/r1" and v1.rated
        assert [(c.handle, c.lo, c.hi) for c in v1.changes] == c1.standings
        assert all(c.old_display is None for c in v1.changes)
        newcomer_display = 1500.0 - 3.0 * (350.0 - 80.0)
        assert newcomer_display == 690.0
        assert all(c.change == c.new_display - 690.0 for c in v1.changes)
        assert [c.new_display for c in v1.changes] == sorted(
            (c.new_display for c in v1.changes), reverse=True)
        by1 = {c.handle: c for c in v1.changes}
        assert by1["x1"].mu == by1["x2"].mu and by1["x1"].sigma == by1["x2"].sigma
        v2 = store.contest("R2")
        assert v2 is not None
        by2 = {c.handle: c for c in v2.changes}
        assert by2["x1"].old_display == by1["x1"].new_display
        assert by2["anna"].old_display is None
        v3 = store.contest("R3")
        assert v3 is not None and not v3.rated and v3.changes == [] and v3.players == 2
        assert store.contest("nope") is None
        # players
        assert store.player("ghost") is None and store.player("nobody") is None
        ann = store.player("Ann")
        assert ann is not None and ann.contests == 1 and ann.last_contest_time == 1000
        assert [(h.index, h.place, h.players, h.contest_id) for h in ann.history] == [
            (0, 0, 4, "https://example.org/r1")]
        x1 = store.player("x1")
        assert x1 is not None
        assert [(h.index, h.place, h.players) for h in x1.history] == [(0, 1, 4), (1, 1, 5)]
        assert x1.history[1].change == x1.history[1].display_rating - x1.history[0].display_rating
        assert x1.last_change == x1.history[1].change
        assert x1.max_display_rating == max(h.display_rating for h in x1.history)
        rated = ["Ann", "x1", "x2", "bob", "anna", "a_b", "a%c"]
        views = {h: store.player(h) for h in rated}
        expect = sorted(rated, key=lambda h: (-views[h].display_rating, h))  # type: ignore[union-attr]
        # leaderboard
        board = store.leaderboard()
        assert [r.handle for r in board] == expect
        assert [r.rank for r in board] == list(range(1, 8))
        assert expect.index("x1") + 1 == expect.index("x2")  # equal ratings: handle order
        assert [(r.rank, r.handle) for r in store.leaderboard(offset=2, limit=2)] == [
            (3, expect[2]), (4, expect[3])]
        assert store.leaderboard(offset=7) == []
        for h in rated:
            v = views[h]
            assert v is not None and v.rank == expect.index(h) + 1
        active = [h for h in expect if h not in ("Ann", "bob")]
        assert [(r.rank, r.handle) for r in store.leaderboard(active_since=2000)] == [
            (k + 1, h) for k, h in enumerate(active)]
        assert [(r.rank, r.handle) for r in store.leaderboard(min_contests=2)] == [
            (1, "x1"), (2, "x2")]
        top = board[0]
        assert (top.mu, top.sigma, top.contests) == (views[top.handle].mu,  # type: ignore[union-attr]
                                                     views[top.handle].sigma,  # type: ignore[union-attr]
                                                     views[top.handle].contests)  # type: ignore[union-attr]
        # counts: display rating in [min, max)
        d = {h: views[h].display_rating for h in rated}  # type: ignore[union-attr]
        assert store.count_players() == 7
        assert store.count_players(active_since=2000) == 5
        assert store.count_players(active_since=3001) == 0
        lo = d["x1"]
        assert store.count_players(min_rating=lo) == sum(v >= lo for v in d.values())
        assert store.count_players(max_rating=lo) == sum(v < lo for v in d.values())
        assert store.count_players(min_rating=lo, max_rating=lo) == 0
        # prefix search: case-insensitive, LIKE wildcards taken literally
        assert store.search_handles("a") == [h for h in expect if h.lower().startswith("a")]
        assert set(store.search_handles("ANN")) == {"Ann", "anna"}
        assert store.search_handles("a_") == ["a_b"]
        assert store.search_handles("a%") == ["a%c"]
        assert store.search_handles("a", limit=1) == store.search_handles("a")[:1]
        assert store.search_handles("gh") == []
        # current ratings of known, rated handles only
        cur = store.current_ratings(["x1", "ghost", "nobody", "Ann", "x1"])
        assert cur == {"x1": (x1.mu, x1.sigma, 2), "Ann": (ann.mu, ann.sigma, 1)}
        st = store.stats()
        assert (st["players"], st["contests"], st["events"], st["last_contest_time"],
                st["handles"], st["rated_contests"]) == (7, 3, 9, 3000, 8, 2)
        assert st["system"] == "mmr" and st["schema_version"] == S.SCHEMA_VERSION
        with pytest.raises(StoreError, match="offset"):
            store.leaderboard(offset=-1)


def case_values_round_trip(url: str) -> None:
    """Unicode handles, weights and infinite ceilings survive the database exactly."""
    c1 = Contest([("Łukasz", 0, 0), ("Σοφία", 1, 1), ("名前", 2, 2)], name="unicode",
                 time_seconds=10, weight=0.3, perf_ceiling=float("inf"))
    c2 = Contest([("名前", 0, 0), ("Łukasz", 1, 1)], name="second", time_seconds=20,
                 perf_ceiling=1800.0)
    ref = _reference([c1, c2], "mmr")
    with Store.create(url, "mmr", cache=False, snapshot_every=1) as store:
        store.ingest(c1)
        store.ingest(c2)
        v = store.contest("unicode")
        assert v is not None and v.weight == 0.3 and v.perf_ceiling == float("inf")
        assert store.search_handles("σο") == ["Σοφία"]
        assert_store_equals_rater(store, ref)


# ---------------------------------------------------------------------- processes

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


def case_two_stores_interleaved(url: str) -> None:
    """Two Store objects (two caches) on one database: each sees the other's writes,
    appended contests and re-rated ones alike."""
    contests = tied_history()
    a = Store.create(url, "mmr")
    b = Store.open(url)
    try:
        a.ingest(contests[0])
        a.ingest(contests[2])
        assert b.ingest(contests[1], recompute_from=True).status == "recomputed"
        a.ingest(contests[3])  # a's cache predates b's recompute
        b.ingest(contests[4])  # b's cache lacks a's contest 3
        a.ingest(contests[5])
        assert b.ingest(contests[6]).index == 6
        a.ingest(contests[7])
        ref = _reference(contests, "mmr")
        assert_store_equals_rater(a, ref)
        assert_store_equals_rater(b, ref)
    finally:
        a.close()
        b.close()


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


StoreCase = Callable[..., None]
