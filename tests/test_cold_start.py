"""Cold start: the CLI imports only what a command needs and says when it compiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=600)


def test_import_podium_is_light() -> None:
    code = ("import sys, podium; "
            "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'scipy') if m in sys.modules))")
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_rate_does_not_import_other_commands() -> None:
    code = (
        "import sys; from podium.cli import build_parser; "
        "build_parser(['rate', 'x', '--out', 'y']); "
        "print('podium.store.cli' in sys.modules, 'podium.evaluation.cli' in sys.modules); "
        "p = build_parser(['--help']); print('podium.store.cli' in sys.modules)"
    )
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False", "True"]


def test_command_owners_are_the_commands_the_modules_register() -> None:
    """``COMMAND_OWNERS`` (which module a command line imports) names every command of
    every module of ``COMMAND_MODULES``, and only those."""
    import argparse
    import importlib

    from podium.cli import COMMAND_MODULES, COMMAND_OWNERS

    registered: dict[str, str] = {}
    for module in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).add_parsers(sub)
        registered.update(dict.fromkeys(sub.choices, module))
    assert registered == COMMAND_OWNERS


def test_eval_imports_its_own_command_module_only(tmp_path: Path) -> None:
    """``podium eval`` of 1v1 matches with ``mmr`` imports the evaluation commands alone:
    no store, service, fetchers, matchmaking or history smoothers, and neither SciPy's
    special functions nor its linear algebra (Numba imports SciPy's base package; a
    cached kernel that calls NumPy's reductions would bring in its BLAS on loading): a
    warm run, after one that compiled what was not cached yet."""
    rows = ["contest,time_seconds,player,place"] + [  # every third match a draw
        f"{t},{86_400 * t},p{(t + k) % 7},{1 + k * (t % 3 > 0)}"
        for t in range(40) for k in (0, 1)]
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    code = (
        "import sys; from podium.cli import main; "
        f"rc = main(['eval', {str(tmp_path / 'm.csv')!r}, '--system', 'mmr', "
        "'--no-progress']); "
        "print(rc, sorted(m for m in ('podium.store', 'podium.service', "
        "'podium.io.fetch', 'podium.matchmaking', 'podium.history.smooth_state', "
        "'scipy.special', 'scipy.linalg') if m in sys.modules))"
    )
    # once to compile whatever kernel this checkout has not cached yet (compiling one
    # imports SciPy's linear algebra, which a warm run must not), then the warm run
    assert _run(["-c", code], dict(os.environ)).returncode == 0
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["0", "[]"], out.stdout


def test_rate_writes_csv_without_pandas(tmp_path: Path) -> None:
    """``podium rate`` builds its outputs from the Rater's arrays with Arrow: it imports
    no pandas (about 0.1 s of a warm run), not even through pyarrow's conversions."""
    from podium import Contest
    from podium.io import write_contest_dir

    write_contest_dir([Contest([("a", 0, 0), ("b", 1, 2), ("c", 1, 2)], name="r1"),
                       Contest([("c", 0, 0), ("a", 1, 1)], name="r2")], tmp_path / "h")
    code = (
        "import sys; from podium.cli import main; "
        f"rc = main(['rate', {str(tmp_path / 'h')!r}, '--system', 'mmr', '--out', "
        f"{str(tmp_path / 'o')!r}, '--no-progress']); "
        "print(rc, 'pandas' in sys.modules)"
    )
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["0", "False"]
    assert (tmp_path / "o" / "histories.csv").read_text().count("\n") == 6


@pytest.mark.parametrize("system", ["bar"])
def test_cold_cache_is_announced_once(tmp_path: Path, system: str) -> None:
    data = tmp_path / "c"
    data.mkdir()
    standings = [[f"p{i}", i, i] for i in range(6)]
    (data / "0.json").write_text(json.dumps(
        {"name": "r0", "time_seconds": 0, "standings": standings}))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    cmd = ["-m", "podium.cli", "rate", str(data), "--system", system,
           "--out", str(tmp_path / "o"), "--no-progress"]
    first = _run(cmd, env)
    assert first.returncode == 0, first.stderr
    assert f"compiling kernels for {system}, once:" in first.stderr
    assert list((tmp_path / "cache").rglob("*.nbi")), "Numba ignored NUMBA_CACHE_DIR"
    second = _run(cmd, env)
    assert second.returncode == 0, second.stderr
    assert "compiling kernels" not in second.stderr


def _tiny_history(path: Path) -> None:
    path.mkdir()
    standings = [[f"p{i}", i, i] for i in range(5)]
    (path / "0.json").write_text(json.dumps({"name": "r0", "time_seconds": 0,
                                             "standings": standings}))


def _rate_and_print(tmp_path: Path, system: str, probe: str
                    ) -> subprocess.CompletedProcess[str]:
    """``podium rate`` of a tiny history with ``system`` in a fresh interpreter, then
    ``probe`` (Python code that may read ``rc`` and ``sys.modules``)."""
    _tiny_history(tmp_path / "h")
    code = (
        "import sys; from podium.cli import main; "
        f"rc = main(['rate', {str(tmp_path / 'h')!r}, '--system', {system!r}, '--out', "
        f"{str(tmp_path / 'o')!r}, '--no-progress']); " + probe
    )
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    return out


def test_rate_imports_its_system_only(tmp_path: Path) -> None:
    """``podium rate --system S`` imports S's module (and those it builds on), none of
    the other systems', and not the store (``rate`` opens none)."""
    from podium.systems import REGISTRY

    out = _rate_and_print(tmp_path, "mmr-simple",
                          "print(rc, 'podium.store' in sys.modules); "
                          "print(sorted(m for m in sys.modules "
                          "if m.startswith('podium.systems.')))")
    status, modules = out.stdout.splitlines()[-2:]
    assert status.split() == ["0", "False"]
    others = {f"podium.systems.{m}" for m in REGISTRY} - {
        "podium.systems.elo_mmr_simple", "podium.systems.elo_mmr"}  # the one it builds on
    loaded = set(eval(modules))  # noqa: S307 - our own subprocess's list
    assert "podium.systems.elo_mmr_simple" in loaded
    assert not loaded & others, sorted(loaded & others)


def test_collector_tuned_for_the_podium_process_only(tmp_path: Path) -> None:
    """``main()`` reading the process's command line (the ``podium`` command) raises
    the collector's older thresholds for ``rate`` (not for the other modules' commands,
    such as the server) and freezes the heap at the end; ``main(argv)`` called in a
    program changes nothing."""
    _tiny_history(tmp_path / "h")
    args = ["rate", str(tmp_path / "h"), "--system", "mmr-simple", "--no-progress"]
    code = (
        "import gc, sys; from podium.cli import main; before = gc.get_threshold(); "
        f"main({[*args, '--out', str(tmp_path / 'o1')]!r}); "
        "print(gc.get_threshold() == before, gc.get_freeze_count()); "
        "import contextlib, io; sys.argv = ['podium', 'serve', '--help']; "
        "exec('with contextlib.redirect_stdout(io.StringIO()) as h:\\n try: main()\\n "
        "except SystemExit: pass'); assert 'usage: podium serve' in h.getvalue(); "
        "print(gc.get_threshold() == before, gc.get_freeze_count() > 0); "
        f"sys.argv = ['podium', *{[*args, '--out', str(tmp_path / 'o2')]!r}]; main(); "
        "print(gc.get_threshold()[1:], gc.get_freeze_count() > 0)"
    )
    out = _run(["-c", code], dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-3:] == ["True 0", "True True", "(1000, 1000) True"]
    assert ((tmp_path / "o1" / "ratings.csv").read_bytes()
            == (tmp_path / "o2" / "ratings.csv").read_bytes())


def test_a_small_job_never_loads_the_large_job_kernels(tmp_path: Path) -> None:
    """The compiled standings reader (from ``SCAN_AFTER_ROWS`` rows on) and the compiled
    CSV writer (tables of 100,000 rows or more) cost seconds to compile the first
    time: a small ``podium rate`` must not even import them."""
    out = _rate_and_print(tmp_path, "mmr",
                          "print(rc, sorted(m for m in ('podium.io._scan', "
                          "'podium.io._scan_kernels', 'podium.io._csv_kernels', "
                          "'podium.io._csv_rows') if m in sys.modules))")
    assert out.stdout.splitlines()[-1] == "0 []"
