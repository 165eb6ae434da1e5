"""Static checks: ``mypy src`` and ``ruff check`` with the configuration in pyproject.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_src_type_checks_clean() -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (pip install mypy)")
    out, err, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--no-incremental", str(ROOT / "src")]
    )
    assert status == 0, out + err


def test_ruff_clean() -> None:
    import shutil
    import subprocess
    import sys

    if shutil.which("ruff") is None and not _has_module("ruff"):
        pytest.skip("ruff is not installed (pip install ruff)")
    res = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
