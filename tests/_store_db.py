"""Databases for the store and service tests: a SQLite file, or a fresh database on
the PostgreSQL server of ``$PODIUM_TEST_POSTGRES_URL``.

``.ci/postgres.sh`` starts a throwaway server and prints such a URL
(``export PODIUM_TEST_POSTGRES_URL="$(.ci/postgres.sh)"``).  Each PostgreSQL test
gets a database of its own, created next to the given one and dropped afterwards
(when the role may not create databases, the given database is emptied and used).
Without the variable, or when the server cannot be reached, the PostgreSQL cases
are skipped with a message that says so (:func:`postgres_unavailable`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

import pytest

PG_ENV = "PODIUM_TEST_POSTGRES_URL"


def base_url() -> str:
    return os.environ.get(PG_ENV, "")


@cache
def postgres_unavailable() -> str | None:
    """Why the PostgreSQL cases cannot run (``None`` when they can)."""
    url = base_url()
    if not url:
        return (f"{PG_ENV} is not set: no PostgreSQL server to test against "
                "(start one with .ci/postgres.sh and export the URL it prints)")
    try:
        from sqlalchemy import text

        from podium.store.engine import make_engine

        eng = make_engine(url)
        try:
            with eng.connect() as conn:
                conn.execute(text("SELECT 1"))
        finally:
            eng.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure means "not available"
        return f"PostgreSQL at {PG_ENV}={url!r} is not reachable: {exc}"
    return None


@contextmanager
def postgres_database(options: str = "", *, required: bool = False,
                      prefix: str = "podium_t") -> Iterator[str]:
    """A new database (``CREATE DATABASE name options``), dropped afterwards.

    Skips the test when PostgreSQL is unavailable.  When the database cannot be
    created: skip if ``required``, else empty the given database and use it.
    """
    why = postgres_unavailable()
    if why is not None:
        pytest.skip(why)
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from podium.store import schema as S
    from podium.store.engine import make_engine, normalize_url

    given = base_url()
    base = make_url(normalize_url(given))
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = make_engine(given).execution_options(isolation_level="AUTOCOMMIT")
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
        target = given
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
