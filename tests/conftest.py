"""Shared pytest configuration of Podium's tests.

* The ``slow`` marker: longer tests on real data.  They run by default (and in CI);
  ``python -m pytest -m "not slow"`` deselects them.
* ``$PODIUM_CI`` (``.ci/run`` sets it): every test that needs PostgreSQL, Chromium,
  the shared data sets or the test oracle fails instead of skipping when that is
  missing (see ``tests/_require.py``), and the run stops at once when a module of the
  test extra is not installed.
* At the end of a run: the largest deviations from the reference seen by
  ``tests/_agreement.py``, the official Codeforces contests replayed, and the run's
  time against the suite's budget (10 minutes on 2 cores, slow tests included).
* Skips raised by a ``tests/_require.py`` helper are reported at the test that needed
  it (``-ra`` lists every skip with its reason).
"""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Iterator
from pathlib import Path

import _agreement
import _require
import pytest

from podium import Contest

#: Modules of the ``test`` extra that some tests import (and would skip without).
TEST_EXTRA_MODULES = ("elo_mmr_py", "hypothesis", "fastapi", "httpx", "sqlalchemy",
                      "psycopg", "optuna", "matplotlib", "playwright", "PIL", "mypy",
                      "ruff", "uvicorn", "jinja2")


def _importable(module: str) -> bool:
    if module == "elo_mmr_py":  # the oracle: really import it (its compiled extension)
        try:
            import elo_mmr_py  # noqa: F401
        except ImportError:
            return False
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "slow: longer tests on real data (run by default and in CI; "
        "deselect with -m 'not slow')",
    )
    if _require.in_ci():
        missing = [m for m in TEST_EXTRA_MODULES if not _importable(m)]
        if missing:
            raise pytest.UsageError(
                f"{_require.CI_ENV} is set but the test extra is incomplete: "
                f"{', '.join(missing)} cannot be imported; run {_require.ENABLE_TEST_EXTRA}"
            )


def pytest_report_header(config: pytest.Config) -> list[str]:
    mode = ("missing services/data FAIL" if _require.in_ci()
            else f"missing services/data skip (set {_require.CI_ENV}=1 to fail instead)")
    return [f"podium: {mode}; shared data: {_require.data_dir()}"]


#: The whole suite's time budget on a 2-core machine, slow tests included (seconds).
TIME_BUDGET_S = 600.0
_SESSION: dict[str, float] = {}


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION["start"] = time.monotonic()


def pytest_collection_finish(session: pytest.Session) -> None:
    _SESSION["slow"] = sum(1 for item in session.items if item.get_closest_marker("slow"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = _agreement.summary_lines()
    if lines:
        terminalreporter.section("largest deviations from elo-mmr-py observed")
        for line in lines:
            terminalreporter.write_line(line)
    replayed = _agreement.REPLAYED
    if replayed:
        terminalreporter.section("official Codeforces contests replayed")
        for name, matched, total in replayed:
            terminalreporter.write_line(f"{name}: {matched} of {total} new ratings match")
        terminalreporter.write_line(
            f"{len(replayed)} contest file(s): {sum(m for _, m, _ in replayed)} of "
            f"{sum(t for _, _, t in replayed)} match")
    if "start" in _SESSION:
        elapsed = time.monotonic() - _SESSION["start"]
        terminalreporter.write_line(
            f"podium: {elapsed:.0f} s (the whole suite's budget: {TIME_BUDGET_S:.0f} s on 2 "
            f"cores); {int(_SESSION.get('slow', 0))} slow test(s) selected "
            f"(deselect them with -m 'not slow')")


#: Under ``$PODIUM_CI`` a skip whose reason names one of these fails instead: the net
#: under tests that skip on their own rather than through ``tests/_require.py``.
CI_REQUIRED = re.compile(r"PODIUM_TEST_POSTGRES_URL|PostgreSQL|chromium|playwright|"
                         r"elo.mmr.py|shared data|datasets|PODIUM_DATA_DIR", re.IGNORECASE)


def _relocate_or_fail(rep: pytest.CollectReport | pytest.TestReport, where: str,
                      line: int) -> None:
    """Report a skip raised inside ``tests/_require.py`` at the test (or module) that
    needed it, so that ``-ra`` says which test did not run; under ``$PODIUM_CI`` turn
    a skip for a required service, data set or oracle into a failure."""
    longrepr = rep.longrepr
    if not (rep.skipped and isinstance(longrepr, tuple)):
        return
    path, lineno, reason = longrepr
    if path.endswith("_require.py"):
        path, lineno = where, line
    rep.longrepr = (path, lineno, reason)
    if _require.in_ci() and CI_REQUIRED.search(reason):
        rep.outcome = "failed"
        rep.longrepr = (f"{path}:{lineno + 1}: skipped, but {_require.CI_ENV} is set and "
                        f"this is required: {reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    path, line, _ = item.reportinfo()
    _relocate_or_fail(outcome.get_result(), str(path), (line or 0) + 1)  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    _relocate_or_fail(outcome.get_result(), str(collector.path), 0)  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def codeforces_first_100() -> Iterator[list[Contest]]:
    """The first 100 contests of the shared Codeforces history, by start time."""
    from podium.io import load_contests

    loaded = load_contests(str(_require.require_codeforces()), limit=100, sort_by_time=True)
    assert len(loaded.contests) == 100
    yield loaded.contests


@pytest.fixture(scope="session")
def elo_mmr_py():  # type: ignore[no-untyped-def]
    """The Rust reference's Python bindings (``elo-mmr-py``, a test-only oracle).

    A test that compares with the reference takes this fixture, so only that test is
    skipped when the bindings are not installed (the hand-worked tests still run).
    """
    return _require.require_reference()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database for a store: a SQLite file, or a fresh PostgreSQL database
    (skipped with the reason when ``PODIUM_TEST_POSTGRES_URL`` is unset or the server
    cannot be reached; failed instead under ``PODIUM_CI``; see ``tests/_require.py``)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with _require.postgres_database() as url:
        yield url
