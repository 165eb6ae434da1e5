"""What a test needs from outside the repository, found the same way everywhere.

* The shared data sets: ``$PODIUM_DATA_DIR`` when set, else ``../shared/datasets``
  relative to the repository root (never an absolute path of one machine).
* A PostgreSQL server: ``$PODIUM_TEST_POSTGRES_URL`` (``.ci/postgres.sh`` starts one
  and prints the URL).
* A Chromium for the browser test: ``$PODIUM_CHROMIUM``, else ``/usr/bin/chromium``
  (Debian's package), driven by the ``playwright`` package.
* The test oracle ``elo_mmr_py`` (the Rust reference's bindings, in the test extra).

When one of them is missing, ``require_*`` skips the test with a message naming the
command that enables it -- or, when ``$PODIUM_CI`` is set (``.ci/run`` sets it),
fails it with the same message, so that a green CI run has run every test.
"""

from __future__ import annotations

import functools
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_ENV = "PODIUM_DATA_DIR"
CI_ENV = "PODIUM_CI"
POSTGRES_ENV = "PODIUM_TEST_POSTGRES_URL"
CHROMIUM_ENV = "PODIUM_CHROMIUM"

ENABLE_DATA = (f"export {DATA_ENV}=/path/to/datasets (the folder of codeforces/ and "
               f"codeforces-official/; default ../shared/datasets next to the checkout)")
ENABLE_POSTGRES = f'export {POSTGRES_ENV}="$(.ci/postgres.sh)"'
ENABLE_CHROMIUM = "apt-get install -y chromium"
ENABLE_TEST_EXTRA = "pip install -e '.[test]'"


def in_ci() -> bool:
    """``$PODIUM_CI`` is set to something other than empty or ``0``."""
    return os.environ.get(CI_ENV, "").strip() not in ("", "0")


def unavailable(what: str, enable: str) -> NoReturn:
    """Skip (locally) or fail (under ``$PODIUM_CI``): ``what`` is missing; ``enable``
    is the one command that makes it available."""
    if in_ci():
        pytest.fail(f"{what} ({CI_ENV} is set, so this is required; to fix: {enable})",
                    pytrace=False)
    pytest.skip(f"{what}; to run this test: {enable}", allow_module_level=True)


# ---------------------------------------------------------------------- shared data
def data_dir() -> Path:
    """The shared data sets' root: ``$PODIUM_DATA_DIR`` or ``../shared/datasets``."""
    env = os.environ.get(DATA_ENV, "").strip()
    return Path(env) if env else REPO_ROOT.parent / "shared" / "datasets"


def data_path(*parts: str) -> Path:
    """A path under :func:`data_dir` (which need not exist)."""
    return data_dir().joinpath(*parts)


def require_data(*parts: str) -> Path:
    """The path of a shared data file or folder; skip or fail when it is absent."""
    path = data_path(*parts)
    if not path.exists():
        unavailable(f"shared data {path} is absent", ENABLE_DATA)
    return path


CODEFORCES_TAR = ("codeforces", "cache_codeforces.tar.gz")
CODEFORCES_OFFICIAL = ("codeforces-official",)


def require_codeforces() -> Path:
    """The Codeforces history (1194 contests in the Elo-MMR JSON format)."""
    return require_data(*CODEFORCES_TAR)


# ---------------------------------------------------------------------- the oracle
def require_reference() -> ModuleType:
    """``elo_mmr_py``, the Rust reference's bindings (test-only oracle)."""
    try:
        import elo_mmr_py
    except ImportError as exc:
        unavailable(f"elo-mmr-py (the test oracle) cannot be imported: {exc}",
                    ENABLE_TEST_EXTRA)
    return elo_mmr_py


# ---------------------------------------------------------------------- PostgreSQL
@functools.cache
def _postgres_problem(url: str) -> str | None:
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
        return f"PostgreSQL at {POSTGRES_ENV}={url!r} is not reachable: {exc}"
    return None


def require_postgres() -> str:
    """The URL of a reachable PostgreSQL server (``$PODIUM_TEST_POSTGRES_URL``); skip or
    fail when it is not set or the server does not answer (checked once a session)."""
    url = os.environ.get(POSTGRES_ENV, "").strip()
    if not url:
        unavailable(f"{POSTGRES_ENV} is not set: no PostgreSQL server to test against",
                    ENABLE_POSTGRES)
    problem = _postgres_problem(url)
    if problem is not None:
        unavailable(problem, ENABLE_POSTGRES)
    return url


@contextmanager
def postgres_database(prefix: str = "podium_t", options: str = "") -> Iterator[str]:
    """A new, empty database (``CREATE DATABASE name options``) on the server of
    :func:`require_postgres`, yielded as a URL and dropped afterwards.  When it cannot
    be created (no CREATEDB privilege, an unknown option): skip or fail."""
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from podium.store.engine import make_engine, normalize_url

    base = require_postgres()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = make_engine(base).execution_options(isolation_level="AUTOCOMMIT")
    try:
        try:
            with admin.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}" {options}'))
        except Exception as exc:  # noqa: BLE001 - reported as the reason
            unavailable(f"cannot create a database {options} on {POSTGRES_ENV}: {exc}",
                        ENABLE_POSTGRES)
        try:
            yield make_url(normalize_url(base)).set(database=name).render_as_string(
                hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


# ---------------------------------------------------------------------- Chromium
def chromium_path() -> Path:
    return Path(os.environ.get(CHROMIUM_ENV, "").strip() or "/usr/bin/chromium")


def require_chromium() -> Path:
    """The Chromium executable, with the ``playwright`` package that drives it."""
    path = chromium_path()
    if not (path.is_file() and os.access(path, os.X_OK)) and shutil.which(str(path)) is None:
        unavailable(f"Chromium {path} is absent", ENABLE_CHROMIUM)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        unavailable(f"the playwright package cannot be imported: {exc}", ENABLE_TEST_EXTRA)
    return path
