"""Crash safety and concurrency of the store with real processes, on SQLite and (when
``PODIUM_TEST_POSTGRES_URL`` is set, see ``tests/_require.py``) on PostgreSQL.

* kill -9 of a process in the middle of a contest's transaction -- at every stage,
  found reliably through the Store's ``hooks`` (injected by the test's driver script) -- leaves the
  database exactly at the previous contest (every table compared row by row);
* kill -9 at an arbitrary moment of a long ``podium ingest`` (in batches of 3
  contests, one transaction each) leaves a prefix of the history, equal to rating
  that prefix with a Rater;
* two processes ingesting distinct contests at once lose nothing.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import _store_cases as cases
import pytest

from podium.io import synthetic_contests, write_contest_dir
from podium.store import Store

STAGES = ("locked", "standings", "events", "players", "snapshot", "commit")


def test_kill_at_every_stage_keeps_previous_state(store_url, tmp_path):
    cases.case_kill_mid_ingest(store_url, tmp_path, STAGES)
    if store_url.startswith("sqlite"):
        con = sqlite3.connect(store_url.removeprefix("sqlite:///"))
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        con.close()


def test_kill_at_random_moment_of_long_ingest(tmp_path):
    contests = synthetic_contests(2000, 150, seed=8, participation=0.5, tie_resolution=5.0)
    data = tmp_path / "hist"
    write_contest_dir(contests, data)
    db = tmp_path / "long.db"
    Store.create(str(db), "mmr", snapshot_every=7).close()
    env = cases._env()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from podium.cli import main; raise SystemExit(main())",
         "ingest", str(data), "--db", str(db), "--no-progress", "--batch", "3"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # wait until a few contests are in, then kill at once
    deadline = time.monotonic() + 120
    applied = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        applied += line.startswith("applied")
        if applied >= 5 or time.monotonic() > deadline:
            break
    time.sleep(0.37)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()
    with Store.open(str(db)) as store:
        k = store.stats()["contests"]
        assert 5 <= k < len(contests), k
        assert store.contest_ids() == [c.name for c in contests[:k]]
        cases.assert_store_equals_rater(store, cases._reference(contests[:k], "mmr"), every=50)
        assert store.stats()["events"] == sum(len(c) for c in contests[:k])


def test_two_processes_lose_nothing(store_url, tmp_path):
    cases.case_concurrent_writers(store_url, tmp_path)


@pytest.mark.parametrize("stage", ["locked", "events"])
def test_waiting_writer_proceeds_after_a_killed_one(tmp_path, stage):
    """A writer killed while holding the lock does not block the next one."""
    contests = cases.tied_history()
    url = f"sqlite:///{tmp_path / 'w.db'}"
    with Store.create(url, "mmr") as store:
        store.ingest(contests[0])
    one = tmp_path / "one.json"
    from podium.io import write_contest_json

    write_contest_json(contests[1], one)
    cases.run_killed(url, one, stage, tmp_path)
    with Store.open(url, busy_timeout=10) as store:
        assert store.ingest(contests[1]).status == "applied"
