"""Shared pytest configuration of Podium's tests."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: longer tests on real data (run by default; deselect with -m 'not slow')",
    )
