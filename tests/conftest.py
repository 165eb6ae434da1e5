"""Shared pytest configuration of Podium's tests.

* The ``slow`` marker: longer tests on real data.  They run by default (and in CI);
  ``python -m pytest -m "not slow"`` deselects them.
* ``$PODIUM_CI`` (``.ci/run`` sets it): every test that needs PostgreSQL, Chromium,
  the shared data sets or the test oracle fails instead of skipping when that is
  missing (see ``tests/_require.py``), and the run stops at once when a module of the
  test extra is not installed.
* At the end of a run: the largest deviations from the reference seen by
  ``tests/_agreement.py``, and the official Codeforces contests replayed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skip raised by a ``tests/_require.py`` helper is reported at the test that
    needed it (not at the helper), so that ``-ra`` says which test did not run."""
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    longrepr = rep.longrepr
    if rep.skipped and isinstance(longrepr, tuple) and longrepr[0].endswith("_require.py"):
        path, line, _ = item.reportinfo()
        rep.longrepr = (str(path), (line or 0) + 1, longrepr[2])


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """The same for a module skipped at import by a ``tests/_require.py`` helper."""
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    longrepr = rep.longrepr
    if rep.skipped and isinstance(longrepr, tuple) and longrepr[0].endswith("_require.py"):
        rep.longrepr = (str(collector.path), 0, longrepr[2])


@pytest.fixture(scope="session")
def codeforces_first_100() -> Iterator[list[Contest]]:
    """The first 100 contests of the shared Codeforces history, by start time."""
    from podium.io import load_contests

    loaded = load_contests(str(_require.require_codeforces()), limit=100, sort_by_time=True)
    assert len(loaded.contests) == 100
    yield loaded.contests
