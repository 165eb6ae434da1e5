"""The store's main cases against a real PostgreSQL server.

Set ``PODIUM_TEST_POSTGRES_URL`` (e.g. ``postgresql://postgres@127.0.0.1:54329/podium_test``;
``.ci/postgres.sh`` starts such a server and prints the URL).  Each test gets a
database of its own (created next to the given one and dropped afterwards; when
the role may not create databases, the given database is emptied instead).
Without the variable, or when the server cannot be reached, every test here is
skipped with a message saying so.
"""

from __future__ import annotations

import os
import uuid

import _store_cases as cases
import pytest

ENV = "PODIUM_TEST_POSTGRES_URL"
BASE_URL = os.environ.get(ENV, "")


def _admin_engine():
    from podium.store.engine import make_engine

    return make_engine(BASE_URL)


def _reachable() -> str | None:
    if not BASE_URL:
        return (f"{ENV} is not set: no PostgreSQL server to test against "
                "(start one with .ci/postgres.sh and export the URL it prints)")
    try:
        from sqlalchemy import text

        eng = _admin_engine()
        try:
            with eng.connect() as conn:
                conn.execute(text("SELECT 1"))
        finally:
            eng.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        return f"PostgreSQL at {ENV}={BASE_URL!r} is not reachable: {exc}"
    return None


_why_not = _reachable()
pytestmark = pytest.mark.skipif(_why_not is not None, reason=_why_not or "")


@pytest.fixture
def url():
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from podium.store import schema as S
    from podium.store.engine import make_engine, normalize_url

    base = make_url(normalize_url(BASE_URL))
    name = f"podium_t_{uuid.uuid4().hex[:12]}"
    admin = _admin_engine().execution_options(isolation_level="AUTOCOMMIT")
    created = False
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        created = True
        target = base.set(database=name).render_as_string(hide_password=False)
    except Exception:  # noqa: BLE001 - no CREATEDB privilege: use the given database
        target = BASE_URL
        eng = make_engine(target)
        with eng.begin() as conn:
            for t in reversed(S.metadata.sorted_tables):
                conn.execute(text(f'DROP TABLE IF EXISTS "{t.name}" CASCADE'))
        eng.dispose()
    try:
        yield target
    finally:
        if created:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_schema_created(url):
    cases.case_schema(url)


@pytest.mark.parametrize("system", ["mmr", "tcsys", "codeforces", "trueskill"])
def test_ingest_equals_rater(url, system):
    cases.case_ingest_equals_rater(url, system, "warm")


def test_ingest_cold_equals_rater(url):
    cases.case_ingest_equals_rater(url, "mmr", "cold")


def test_idempotent_by_id(url):
    cases.case_idempotence(url)


def test_older_contest_refused(url):
    cases.case_older_refused(url)


def test_recompute_from_equals_sorted_history(url):
    cases.case_recompute(url)


def test_two_stores_see_each_others_writes(url):
    cases.case_two_stores_interleaved(url)


def test_failure_mid_transaction_rolls_back(url, monkeypatch):
    cases.case_failure_rolls_back(url, monkeypatch)


def test_queries(url):
    cases.case_queries(url)


def test_values_round_trip(url):
    cases.case_values_round_trip(url)


def test_two_processes_lose_nothing(url, tmp_path):
    cases.case_concurrent_writers(url, tmp_path)


def test_kill_mid_ingest_keeps_previous_state(url, tmp_path):
    cases.case_kill_mid_ingest(url, tmp_path, ("standings", "events", "snapshot", "commit"))


def test_schema_version_mismatch(url):
    from podium.store import SCHEMA_VERSION, Store, StoreError
    from podium.store.engine import make_engine
    from podium.store.migrations import set_meta

    Store.create(url, "mmr").close()
    eng = make_engine(url)
    with eng.begin() as conn:
        set_meta(conn, "schema_version", "1")
    eng.dispose()
    with pytest.raises(StoreError, match=rf"older than this Podium's {SCHEMA_VERSION}; run "
                       "`podium db-upgrade"):
        Store.open(url)


def test_cli_ingest(url, tmp_path, capsys):
    from podium.cli import main
    from podium.io import write_contest_dir

    contests = cases.tied_history()
    write_contest_dir(contests, tmp_path / "h")
    assert main(["ingest", str(tmp_path / "h"), "--db", url, "-q"]) == 0
    assert "8 applied" in capsys.readouterr().out
    assert main(["ingest", str(tmp_path / "h"), "--db", url, "-q"]) == 0
    assert "8 duplicate (unchanged)" in capsys.readouterr().out
    assert main(["db-info", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "contests:       8 (7 rated)" in out and "postgresql+psycopg://" in out
