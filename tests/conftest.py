"""Shared pytest configuration of Podium's tests."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: longer tests on real data (run by default; deselect with -m 'not slow')",
    )


@pytest.fixture(scope="session")
def elo_mmr_py():  # type: ignore[no-untyped-def]
    """The Rust reference's Python bindings (``elo-mmr-py``, a test-only oracle).

    A test that compares with the reference takes this fixture, so only that test is
    skipped when the bindings are not installed (the hand-worked tests still run).
    """
    return pytest.importorskip(
        "elo_mmr_py",
        reason="elo-mmr-py (the Rust reference's bindings, test-only oracle) is not "
        "installed; run pip install -e '.[test]'",
    )
