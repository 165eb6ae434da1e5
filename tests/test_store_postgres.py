"""The store's main cases against a real PostgreSQL server.

Set ``PODIUM_TEST_POSTGRES_URL`` (e.g. ``postgresql://postgres@127.0.0.1:54329/podium_test``;
``.ci/postgres.sh`` starts such a server and prints the URL).  Each test gets a
database of its own (created next to the given one and dropped afterwards; when
the role may not create databases, the given database is emptied instead).
Without the variable, or when the server cannot be reached, every test here is
skipped with a message saying so.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import _search_cases as search_cases
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


@contextmanager
def _database(options: str = "", *, required: bool = False) -> Iterator[str]:
    """A new database (``CREATE DATABASE name options``), dropped afterwards.

    When it cannot be created: skip if ``required``, else empty and use the given one.
    """
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
            conn.execute(text(f'CREATE DATABASE "{name}" {options}'))
        created = True
        target = base.set(database=name).render_as_string(hide_password=False)
    except Exception as exc:  # noqa: BLE001 - no CREATEDB privilege: use the given database
        if required:
            admin.dispose()
            pytest.skip(f"cannot create a database {options}: {exc}")
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


@pytest.fixture
def url():
    with _database() as target:
        yield target


@pytest.fixture
def icu_url():
    """A database whose default collation is ICU's en-US (not code point order)."""
    with _database("TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu "
                   "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'", required=True) as target:
        yield target


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


@pytest.mark.parametrize("through", ["range", "rating-walk"])
def test_search_handles_equals_reference(url, monkeypatch, through):
    search_cases.case_search(url, monkeypatch, through)


@pytest.mark.parametrize("through", ["range", "rating-walk"])
def test_search_and_queries_in_a_non_c_locale(icu_url, monkeypatch, through):
    """In a database that sorts text by a language's rules (ICU en-US: '_' sorts before
    '%', 'a-b' near 'ab'), prefixes are still exact and ties still go by code point."""
    from sqlalchemy import text

    from podium.store.engine import make_engine

    eng = make_engine(icu_url)
    with eng.connect() as conn:
        assert conn.execute(text("SELECT 'a_' < 'a%'")).scalar_one()  # not code point order
    eng.dispose()
    search_cases.case_search(icu_url, monkeypatch, through)


def test_queries_in_a_non_c_locale(icu_url):
    cases.case_queries(icu_url)


def _collation(url: str) -> str | None:
    from sqlalchemy import text

    from podium.store.engine import make_engine

    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            return conn.execute(text(
                "SELECT collation_name FROM information_schema.columns "
                "WHERE table_name = 'players' AND column_name = 'handle_key'")).scalar_one()
    finally:
        eng.dispose()


def test_upgrade_from_version_2(icu_url):
    """Version 3 gives handle_key code point order (COLLATE "C") and rebuilds its index."""
    from sqlalchemy import inspect, text

    from podium.store import SCHEMA_VERSION, Store, StoreError
    from podium.store.engine import make_engine
    from podium.store.migrations import set_meta, upgrade
    from podium.systems import get_system

    eng = make_engine(icu_url)
    with eng.begin() as conn:
        assert upgrade(conn, target=2) == [1, 2]
        for k, v in (("system", "mmr"), ("params", json.dumps(get_system("mmr").params())),
                     ("store_id", "v2store"), ("epoch", "0"), ("revision", "0")):
            set_meta(conn, k, v)
        conn.execute(text(
            "INSERT INTO players (pk, handle, handle_key, mu, sigma, display_rating, contests, "
            "last_contest_time, max_display_rating, last_change) VALUES "
            "(0, 'a_b', 'a_b', 1600, 100, 1540, 1, 5, 1540, 850), "
            "(1, 'a%c', 'a%c', 1400, 100, 1340, 1, 5, 1340, 650), "
            "(2, 'A-b', 'a-b', 1500, 100, 1440, 1, 5, 1440, 750)"
        ))
    eng.dispose()
    assert _collation(icu_url) is None  # the database's default (ICU en-US)
    with pytest.raises(StoreError, match=r"schema version 2, older than this Podium's"):
        Store.open(icu_url)
    assert Store.upgrade(icu_url) == (2, SCHEMA_VERSION)
    assert _collation(icu_url) == "C"
    eng = make_engine(icu_url)
    indexes = {ix["name"]: ix["column_names"] for ix in inspect(eng).get_indexes("players")}
    eng.dispose()
    assert indexes["ix_players_handle_key"] == ["handle_key"]
    with Store.open(icu_url) as store:
        assert store.search_handles("a_") == ["a_b"]
        assert store.search_handles("A%") == ["a%c"]
        assert store.search_handles("a-") == ["A-b"]
        assert store.search_handles("a") == ["a_b", "A-b", "a%c"]
    # a store created now has the same column
    with _database() as fresh:
        Store.create(fresh, "mmr").close()
        assert _collation(fresh) == "C"


def test_pool_settings(url):
    from podium.store import Store

    Store.create(url, "mmr").close()
    with Store.open(url, pool_size=3, max_overflow=0) as store:
        assert store.engine.pool.size() == 3 and store.engine.pool._max_overflow == 0
        assert store.count_players() == 0
