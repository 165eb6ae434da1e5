"""Compile the kernels of a job when the package is built, so that a user's first run
loads them instead of compiling: ``python -m podium.prebuild``.

The build backend (``build_backend/podium_backend.py``) runs it while ``pip install``
builds the package: it runs the README's main job -- ``podium example`` (2000 players,
30 rounds) and ``podium rate --system mmr`` -- in a process whose Numba compiles for
a portable CPU (``NUMBA_CPU_NAME=generic``) into the package's prebuilt directory,
and then writes that directory's manifest (:mod:`podium.core.kernel_cache`).  A first
``podium rate`` with ``mmr`` then loads its kernels from there; another system, or the
same one on another CPU architecture, Numba or Python, compiles on demand as before,
and says so.

Which systems are compiled is the ``PODIUM_PREBUILD`` variable of the build
(``mmr`` by default; a comma-separated list, ``all`` for every system, ``none`` for no
prebuild) or ``--systems``.  Each system is compiled by the job it would run first:
``podium rate`` of the example history with that system.  Several systems are
compiled by ``--jobs`` processes side by side, then checked in this one (a kernel
that two of them compiled at once is compiled again if its index lost the race).

    python -m podium.prebuild                      # mmr, into podium/_prebuilt
    python -m podium.prebuild --systems all --jobs 2 --dir /tmp/kernels
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DEFAULT_SYSTEMS", "ENV_SYSTEMS", "selected_systems", "main"]

#: What a build compiles when ``PODIUM_PREBUILD`` is not set: the README's main job.
DEFAULT_SYSTEMS = ("mmr",)
#: The build's variable naming the systems to compile (``all``, ``none`` or a list).
ENV_SYSTEMS = "PODIUM_PREBUILD"


def selected_systems(spec: str | None) -> list[str]:
    """The systems named by ``spec`` (``PODIUM_PREBUILD``'s syntax).

    Parameters
    ----------
    spec:
        ``None`` or empty: :data:`DEFAULT_SYSTEMS`; ``none``/``0``: nothing; ``all``:
        every registered system; else a comma-separated list of system names.

    Returns
    -------
    list of str
    """
    text = (spec or "").strip()
    if not text:
        return list(DEFAULT_SYSTEMS)
    if text.lower() in ("none", "0", "off"):
        return []
    from podium.systems import SYSTEMS

    if text.lower() == "all":
        return list(SYSTEMS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        raise SystemExit(f"podium.prebuild: unknown system(s) {', '.join(unknown)}; "
                         f"available: {', '.join(SYSTEMS)}")
    return names


def _example(work: Path) -> Path:
    """``podium example`` into ``work`` (once)."""
    from podium.cli import main as podium

    data = work / "example-data"
    if not data.exists() and podium(["-q", "example", str(data)]) != 0:
        raise SystemExit("podium.prebuild: podium example failed")
    return data


def _run_jobs(names: Sequence[str], work: Path) -> dict[str, float]:
    """Run ``podium rate`` of the example history with each system in this process;
    the seconds each took (a system that refuses the history is left out)."""
    from podium.cli import main as podium

    data = _example(work)
    seconds: dict[str, float] = {}
    for name in names:
        t = time.perf_counter()
        rc = podium(["-q", "rate", str(data), "--system", name, "--out", str(work / name),
                     "--no-progress"])
        if rc == 0:
            seconds[name] = round(time.perf_counter() - t, 2)
        else:
            print(f"podium.prebuild: {name}: podium rate failed; its kernels compile on "
                  "first use", file=sys.stderr)
    return seconds


def _in_workers(names: Sequence[str], jobs: int, directory: Path, work: Path) -> None:
    """Compile ``names`` in ``jobs`` processes side by side (round robin)."""
    procs = []
    for k in range(jobs):
        part = list(names[k::jobs])
        if part:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "podium.prebuild", "--dir", str(directory),
                 "--systems", ",".join(part), "--work", str(work), "--no-manifest"]))
    for p in procs:
        p.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Compile the kernels of the selected systems into the prebuilt directory.

    Parameters
    ----------
    argv:
        Command-line arguments (see ``python -m podium.prebuild --help``).

    Returns
    -------
    int
        0 (a system whose job fails is left out of the manifest and compiles on
        first use).
    """
    ap = argparse.ArgumentParser(prog="python -m podium.prebuild",
                                 description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--dir", help="the prebuilt directory (default: the package's)")
    ap.add_argument("--systems", default=None,
                    help=f"all, none or NAME,NAME (default: ${ENV_SYSTEMS} or "
                    f"{','.join(DEFAULT_SYSTEMS)})")
    ap.add_argument("--jobs", type=int, default=1, help="processes side by side")
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--no-manifest", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # before Numba reads its configuration: portable machine code
    os.environ["NUMBA_CPU_NAME"] = "generic"
    os.environ.pop("NUMBA_CPU_FEATURES", None)
    from podium.core import kernel_cache

    directory = Path(args.dir or kernel_cache.prebuilt_dir())
    names = selected_systems(args.systems if args.systems is not None
                             else os.environ.get(ENV_SYSTEMS))
    if not names:
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    kernel_cache.start_prebuild(directory)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="podium-prebuild-") as tmp:
        work = Path(args.work or tmp)
        if args.jobs > 1 and len(names) > 1:
            _example(work)
            _in_workers(names, args.jobs, directory, work)
        seconds = _run_jobs(names, work)
    if args.no_manifest:
        return 0
    kernel_cache.write_manifest(directory, seconds, {
        "seconds": seconds, "total_seconds": round(time.perf_counter() - t0, 2)})
    print(f"podium.prebuild: compiled the kernels of {', '.join(seconds) or 'nothing'} "
          f"into {directory} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
