"""Write a benchmark's table into a Markdown document, with where and how it was measured.

Every benchmark script ends with :func:`write_section`: the document keeps one
block per benchmark between ``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``
markers, and a new run replaces that block only.  The block starts with the
date, the git commit (``+dirty`` when the tree had uncommitted changes), the
machine (CPU count, memory, Python and library versions, load average at the
start and at the end of the run) and the exact command, so that every figure in
the docs names the script run that produced it.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["PODIUM_REPORT", "ROOT", "checkout_env", "cpu_model", "data_dir", "load_average",
           "machine_line", "timed_process", "write_section"]


#: ``podium rate``'s closing line on stderr: the contests, the player-rounds, and the
#: seconds of rating, loading and writing.
PODIUM_REPORT = re.compile(
    r"rated (\d+) contests \(([\d,]+) player-rounds.* in ([\d.]+) s "
    r"\(loading ([\d.]+) s, writing ([\d.]+) s\)"
)


def checkout_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with this checkout's ``src`` first
    on ``PYTHONPATH``, so that a child process times this checkout's ``podium``."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"),
                                         *filter(None, [env.get("PYTHONPATH")])])
    return env

def timed_process(cmd: list[str], cwd: Path, env: dict[str, str]
                  ) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Run ``cmd`` as a whole process: its wall-clock seconds, its CPU seconds (the
    children's user + system time) and the finished process (output captured as text;
    the caller checks its return code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def data_dir() -> Path:
    """The shared datasets: ``PODIUM_DATA_DIR``, else ``../shared/datasets`` from the checkout."""
    env = os.environ.get("PODIUM_DATA_DIR")
    return Path(env) if env else ROOT.parent / "shared" / "datasets"


def load_average() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        return "n/a"


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()

    sha = git("rev-parse", "--short=10", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{sha}+dirty" if dirty else sha


def _versions() -> str:
    parts = [f"Python {platform.python_version()}"]
    for mod in ("numpy", "numba", "pyarrow", "elo_mmr_py", "openskill"):
        try:
            m = __import__(mod)
        except ImportError:
            continue
        v = getattr(m, "__version__", None)
        if v is None and mod == "elo_mmr_py":
            from importlib.metadata import version

            v = version("elo-mmr-py")
        parts.append(f"{mod} {v}")
    return ", ".join(parts)


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), so that every table names its machine."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def machine_line(load_at_start: str | None = None) -> str:
    """One line: CPU model, cores, memory, versions, load average (1/5/15 min) at start
    and end."""
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        mem_s = f"{mem:.0f} GiB"
    except (ValueError, OSError):  # pragma: no cover
        mem_s = "? GiB"
    load = f"load {load_at_start} at the start, {load_average()} at the end" \
        if load_at_start else f"load {load_average()}"
    return f"{cpu_model()}, {os.cpu_count()} CPUs, {mem_s}, {_versions()}; {load}"


def _portable(arg: str) -> str:
    """An absolute path next to the checkout (``/x/main/src``, ``/x/shared/...``) relative to it.

    The docs name no folder of one machine (tests/test_repository_paths.py); scratch
    paths elsewhere (``/tmp/...``) stay as they are.
    """
    if os.path.isabs(arg):
        path = Path(arg).resolve()
        if path.is_relative_to(ROOT.parent):
            return os.path.relpath(path, ROOT)
    return arg


def write_section(
    doc: str | Path, name: str, body: str, *, load_at_start: str | None = None,
    command: str | None = None,
) -> Path:
    """Replace (or append) the block ``name`` of ``doc`` with ``body`` and its provenance.

    Parameters
    ----------
    doc : path
        The Markdown file, relative to the repository root unless absolute.
    name : str
        The block's marker name (``<!-- bench:name -->``).
    body : str
        The Markdown produced by the run (tables, notes).
    load_at_start : str, optional
        :func:`load_average` taken before the measurements.
    command : str, optional
        The command line; by default the one that runs this process.
    """
    path = Path(doc)
    if not path.is_absolute():
        path = ROOT / path
    cmd = command or "python " + " ".join(
        shlex.quote(_portable(a)) for a in [os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]
    )
    header = (
        f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, commit `{_commit()}`, "
        f"{machine_line(load_at_start)}.\n\n```bash\n{cmd}\n```\n"
    )
    block = f"<!-- bench:{name} -->\n{header}\n{body.strip()}\n<!-- /bench:{name} -->"
    text = path.read_text() if path.exists() else ""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    i, j = text.find(start), text.find(end)
    if i >= 0 and j > i:
        text = text[:i] + block + text[j + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
    return path
