"""Shared pytest configuration of Podium's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: longer tests on real data (run by default; deselect with -m 'not slow')",
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database for a store: a SQLite file, or a fresh PostgreSQL database
    (skipped with the reason when ``PODIUM_TEST_POSTGRES_URL`` is unset or the server
    cannot be reached; see ``tests/_store_db.py``)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    from _store_db import postgres_database

    with postgres_database() as url:
        yield url
