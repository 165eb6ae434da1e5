"""Crash safety and concurrency of the store with real processes, on SQLite and on
PostgreSQL (the ``store_url`` fixture; under ``PODIUM_CI`` a missing
``PODIUM_TEST_POSTGRES_URL`` fails, see ``tests/_require.py``).

The kills are found reliably through the Store's ``hooks``, injected by a driver script
(``tests/_store_cases.py``): a hook stops the process at a named stage of a write
transaction, or marks a point after which the test lets it run a random while.

* Every stage: kill -9 at each stage of the transaction of one contest -- ``locked``,
  ``rated``, ``standings``, ``events``, ``players``, ``snapshot`` (a snapshot is being
  written in that transaction: the stages it reached are checked), ``commit`` (and, for
  a team contest, ``standings``, ``events`` and ``commit``) -- and of
  a ``recompute_from`` insertion that re-rates two later contests -- ``locked``,
  ``recompute-cleared``, ``rated``, ``standings``, ``events``, ``recompute-contest``,
  ``players``, ``snapshot``, ``commit`` -- leaves the database exactly as before (every
  table compared row by row, timestamps included); the store then goes on and ends
  equal to a Rater.
* Random kill points (6 seeds, both databases): a real ``podium ingest`` appending a
  history in batches, or inserting left-out contests with ``--recompute-from``, is
  killed at a random occurrence of a stage (``rated``, ``recompute-cleared``,
  ``snapshot``, any) or at a random moment (a random hook call plus a random delay of
  up to 200 ms, wherever the process then is; it never ends before the kill, its last
  transaction is held back).  The killed store holds whole transactions, and equals
  row by row a clean store into which the same contests were written without
  interruption in the same transactions (all but timestamps, the random store id and
  snapshot bytes; snapshots compared by the ratings they restore).  It then takes the
  rest of the history and ends equal to a Rater over all of it.
* Every stage of a correction: kill -9 at each stage of ``Store.delete`` and
  ``Store.replace`` -- ``locked``, ``replayed``, ``correction-cleared``, ``rated``,
  ``standings`` (a replacement), ``events``, ``players``, ``snapshot``, ``commit`` --
  leaves the database exactly as before; the correction then equals the corrected
  history from scratch.
* A writer killed while holding the lock does not block the next one (SQLite).
* Two processes ingesting distinct contests at once lose nothing.
"""

from __future__ import annotations

import _corrections as corr
import _store_cases as cases
import _team_system
import pytest

from podium.store import Store

INGEST_STAGES = cases.INGEST_STAGES
RECOMPUTE_STAGES = tuple(dict.fromkeys(cases.recompute_stages(2)))

#: The random kills: the seed draws the history, batching and the point; see RandomKill.
RANDOM_KILLS = [
    cases.RandomKill(0, recompute=False, stage="rated"),
    cases.RandomKill(1, recompute=False, stage=None),
    cases.RandomKill(2, recompute=True, stage="recompute-cleared"),
    cases.RandomKill(3, recompute=False, stage="snapshot"),
    cases.RandomKill(4, recompute=True, stage=None),
    cases.RandomKill(5, recompute=True, stage="*"),
    cases.RandomKill(6, recompute=False, stage=None),
    cases.RandomKill(7, recompute=False, stage="*"),
]


def test_kill_at_every_stage_of_an_ingestion_keeps_previous_state(store_url, tmp_path):
    cases.case_kill_mid_ingest(store_url, tmp_path, INGEST_STAGES)


def test_kill_while_writing_a_team_contest_keeps_previous_state(store_url, tmp_path):
    """The same for a team contest (Elo-MMR rates team rounds): killed while its
    standings (teams, member weights) and events (teams) are being written."""
    contests = _team_system.team_history(rounds=10)[2:]
    assert contests[5].team_round and any(c.teams is None for c in contests)
    cases.case_kill_mid_ingest(store_url, tmp_path, ("standings", "events", "commit"),
                               contests)


def test_kill_at_every_stage_of_a_recomputation_keeps_previous_state(store_url, tmp_path):
    cases.case_kill_mid_recompute(store_url, tmp_path, RECOMPUTE_STAGES)


@pytest.mark.slow
@pytest.mark.parametrize("kill", RANDOM_KILLS, ids=str)
def test_kill_at_random_point_equals_clean_run(store_url, tmp_path, kill):
    print(cases.case_kill_at_random_point(store_url, tmp_path, kill))


@pytest.mark.parametrize("kind", ["delete", "replace"])
def test_kill_at_every_stage_of_a_correction_keeps_previous_state(store_url, tmp_path, kind):
    """Store.delete / Store.replace re-rate every later contest in one transaction:
    kill -9 at each of its stages leaves the old state (tests/_corrections.py)."""
    corr.case_kill_mid_correction(store_url, tmp_path, kind == "replace")


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
