"""Compile the kernels of a job when the package is built, so that a user's first run
loads them instead of compiling: ``python -m podium.prebuild``.

The build backend (``build_backend/podium_backend.py``) runs it while ``pip install``
builds the package: it rates the README's main job -- the history of ``podium
example`` (2000 players, 30 rounds) with ``mmr``, as ``podium rate`` does -- and small
histories (lobbies of about eight, 1v1 matches; as a batch and one contest at a time),
whose rounds take other compiled paths (with ``--eval`` or ``PODIUM_PREBUILD_EVAL=1``
it also scores each history as ``podium eval`` does: the evaluation's metric and
calibration kernels), in a process whose Numba compiles for a portable CPU
(``NUMBA_CPU_NAME=generic``) into the package's prebuilt directory, and then writes
that directory's manifest (:mod:`podium.core.kernel_cache`).  It needs
Numba and NumPy only (the build environment has no more): the contests are made in
memory and nothing is written, since writing a small table compiles nothing.  A first
``podium rate`` with ``mmr`` then loads its kernels from there; another system, or the
same one on another CPU architecture, Numba or Python, compiles on demand as before,
and says so.

Which systems are compiled is the ``PODIUM_PREBUILD`` variable of the build
(``mmr`` by default; a comma-separated list, ``all`` for every system, ``none`` for no
prebuild) or ``--systems``.  Each system is compiled by the jobs it would run first:
rating the example history and the small histories with that system.  Several
systems are compiled by ``--jobs`` processes side by side, then checked in this one (a kernel
that two of them compiled at once is compiled again if its index lost the race).

    python -m podium.prebuild                      # mmr, into podium/_prebuilt
    python -m podium.prebuild --systems all --jobs 2 --dir /tmp/kernels
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_SYSTEMS", "ENV_EVAL", "ENV_SYSTEMS", "selected_systems", "main"]

#: What a build compiles when ``PODIUM_PREBUILD`` is not set: the README's main job.
DEFAULT_SYSTEMS = ("mmr",)
#: The build's variable naming the systems to compile (``all``, ``none`` or a list).
ENV_SYSTEMS = "PODIUM_PREBUILD"
#: The build's variable that also compiles the evaluation's kernels (``1``: each job's
#: histories are scored as ``podium eval`` scores them).  Off by default: on the
#: 2-core development machine it made ``pip install -e .`` about 1.65x longer (the
#: prebuild of ``mmr`` 43 s -> 80 s), past the install budget of issue 30.
ENV_EVAL = "PODIUM_PREBUILD_EVAL"


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


def _example_contests() -> list[Any]:
    """The history ``podium example`` writes, with the command's own defaults."""
    from podium.cli import build_parser
    from podium.io.synthetic import synthetic_contests

    a = build_parser(["example"]).parse_args(["example", "unused"])
    return synthetic_contests(a.players, a.rounds, seed=a.seed, participation=a.participation,
                              tie_resolution=a.tie_resolution)


#: The small histories a system's job rates besides the example: (what, players, rounds,
#: participation).  A game's lobbies and a live service's one-contest-at-a-time adds take
#: other compiled paths than the example's rounds of about a thousand players (a small
#: round's compiled loop, the serial pairwise terms, ``Rater.add``'s compiled round after
#: its first contests), so a first run on them would compile without these.
SMALL_HISTORIES = (("lobbies of about 8", 64, 48, 0.125), ("1v1 matches", 2, 48, 1.0))


def _jobs() -> list[tuple[str, list[Any], bool]]:
    """What each system's job rates: (what, contests, one by one with ``Rater.add``)."""
    from podium.io.synthetic import synthetic_contests

    jobs: list[tuple[str, list[Any], bool]] = [("the example history", _example_contests(), False)]
    for k, (what, players, rounds, participation) in enumerate(SMALL_HISTORIES):
        contests = synthetic_contests(players, rounds, seed=k + 1, participation=participation)
        jobs += [(what, contests, False), (f"{what}, added one by one", contests, True)]
    return jobs


def _run_jobs(names: Sequence[str], evaluation: bool = False) -> dict[str, float]:
    """Rate the example history with each system in this process, as ``podium rate``
    does (:meth:`~podium.rater.Rater.extend`), then the :data:`SMALL_HISTORIES`, as a
    batch and one contest at a time (:meth:`~podium.rater.Rater.add`), and
    (``evaluation``) score each batch as ``podium eval`` does
    (:func:`~podium.evaluation.runner.score`: the metrics' and the calibration's
    kernels); the seconds each system took (a system
    that refuses the example history is left out; one that refuses a small history
    compiles that path on first use).  Only Numba and NumPy are needed: the build
    environment has no more (the evaluation's tables, which need pandas, are not
    made)."""
    from podium.errors import PodiumError
    from podium.rater import Rater

    jobs = _jobs()
    seconds: dict[str, float] = {}
    for name in names:
        t = time.perf_counter()
        for what, contests, one_by_one in jobs:
            try:
                rater = Rater(name)
                if one_by_one:
                    for contest in contests:
                        rater.add(contest)
                else:
                    rater.extend(contests)
            except PodiumError as exc:
                print(f"podium.prebuild: {name} refuses {what} ({exc}); its kernels for "
                      "them compile on first use", file=sys.stderr)
                if what == jobs[0][0]:
                    break
                continue
            if evaluation and not one_by_one:
                _score(name, what, contests)
        else:
            seconds[name] = round(time.perf_counter() - t, 2)
    return seconds


def _score(name: str, what: str, contests: list[Any]) -> None:
    """Score ``contests`` with ``name`` as ``podium eval`` does
    (:func:`~podium.evaluation.runner.score`, without its warm-up: the history was just
    rated); a failure is told, and leaves those kernels to compile on first use (the
    system's rating kernels stay in the manifest)."""
    from podium.evaluation.runner import score

    try:
        score(contests, name, warmup=False)
    except Exception as exc:  # noqa: BLE001 - a build step: what fails compiles later
        print(f"podium.prebuild: scoring {what} with {name} failed ({exc!r}); the "
              "evaluation's kernels for them compile on first use", file=sys.stderr)


def _in_workers(names: Sequence[str], jobs: int, directory: Path, evaluation: bool) -> None:
    """Compile ``names`` in ``jobs`` processes side by side (round robin)."""
    procs = []
    for k in range(jobs):
        part = list(names[k::jobs])
        if part:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "podium.prebuild", "--dir", str(directory),
                 "--systems", ",".join(part), "--no-manifest",
                 *(["--eval"] if evaluation else [])]))
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
    ap.add_argument("--eval", action="store_true",
                    help=f"also score the jobs as `podium eval` does: its kernels too "
                    f"(default: ${ENV_EVAL}=1; off)")
    ap.add_argument("--no-manifest", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # before Numba reads its configuration: portable machine code
    os.environ["NUMBA_CPU_NAME"] = "generic"
    os.environ.pop("NUMBA_CPU_FEATURES", None)
    from podium.core import kernel_cache

    directory = Path(args.dir or kernel_cache.prebuilt_dir())
    names = selected_systems(args.systems if args.systems is not None
                             else os.environ.get(ENV_SYSTEMS))
    evaluation = args.eval or os.environ.get(ENV_EVAL, "").strip() == "1"
    if not names:
        return 0
    directory.mkdir(parents=True, exist_ok=True)
    kernel_cache.start_prebuild(directory)
    t0 = time.perf_counter()
    if args.jobs > 1 and len(names) > 1:
        _in_workers(names, args.jobs, directory, evaluation)
    seconds = _run_jobs(names, evaluation)
    if args.no_manifest:
        return 0
    kernel_cache.write_manifest(directory, seconds, {
        "seconds": seconds, "total_seconds": round(time.perf_counter() - t0, 2)})
    print(f"podium.prebuild: compiled the kernels of {', '.join(seconds) or 'nothing'} "
          f"into {directory} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
