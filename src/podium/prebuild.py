"""Compile the kernels of a job when the package is built, so that a user's first run
loads them instead of compiling: ``python -m podium.prebuild``.

The build backend (``build_backend/podium_backend.py``) runs it while ``pip install``
builds the package: it rates the README's main job -- the history of ``podium
example`` (2000 players, 30 rounds) with ``mmr``, as ``podium rate`` does -- and small
histories (lobbies of about eight, 1v1 matches; as a batch and one contest at a time)
and, with an exact Elo-MMR, one round of 65,536 newcomers (a massive round's solve),
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
rating the example history and the small histories with that system.

The jobs run in ``--jobs`` processes side by side (``PODIUM_PREBUILD_JOBS``; by
default one per CPU this process may use, at most 4 and one per share; one where
POSIX file locks are missing): whole systems when there are at least as many systems
as processes, else each system's example history and its small histories apart
(:func:`split`).  Each process compiles into the same directory; a process takes its
turn at a kernel's index file, and a signature that another process is compiling is
waited for and loaded rather than compiled twice (:mod:`podium.core.build_claims`),
so the processes share the work of the kernels their jobs have in common.  This
process runs the first share, then the other processes' shares again, loading what
they stored (a kernel they left out would be compiled then: the manifest's
``compiled_by_check`` counts them), and writes the manifest.  What is compiled is the
same with any number of processes: the kernels and signatures the jobs call.

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

from podium.core.numerics.constants import COUNTED_FROM

__all__ = ["DEFAULT_SYSTEMS", "ENV_EVAL", "ENV_JOBS", "ENV_SYSTEMS", "MASSIVE_ROUND", "MAX_JOBS",
           "PARTS", "SMALL_HISTORIES", "default_jobs", "selected_systems", "split", "main"]

#: What a build compiles when ``PODIUM_PREBUILD`` is not set: the README's main job.
DEFAULT_SYSTEMS = ("mmr",)
#: The build's variable naming the systems to compile (``all``, ``none`` or a list).
ENV_SYSTEMS = "PODIUM_PREBUILD"
#: The build's variable that also compiles the evaluation's kernels (``1``: each job's
#: histories are scored as ``podium eval`` scores them).  Off by default: on the
#: 2-core development machine it made ``pip install -e .`` about 1.65x longer (the
#: prebuild of ``mmr`` 43 s -> 80 s), past the install budget of issue 30.
ENV_EVAL = "PODIUM_PREBUILD_EVAL"
#: The build's variable naming how many processes compile side by side (``--jobs``).
ENV_JOBS = "PODIUM_PREBUILD_JOBS"


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


#: The massive round the small part of an exact Elo-MMR system's job rates too: one round
#: of :data:`~podium.core.numerics.constants.COUNTED_FROM` newcomers, whose identical
#: terms take the counted solve of the performance equation.  The example's kernels
#: leave that solve out (about 3 s of compilation), so a first round of a million
#: newcomers would compile it without this.
MASSIVE_ROUND = (f"a first round of {COUNTED_FROM:,} newcomers", COUNTED_FROM)


#: The parts of a system's job that may compile in separate processes: the example
#: history, and the :data:`SMALL_HISTORIES` (which reuse some of its kernels) with the
#: :data:`MASSIVE_ROUND` (exact Elo-MMR).
PARTS = ("example", "small")
#: The most processes a prebuild runs by default (``--jobs``, ``PODIUM_PREBUILD_JOBS``).
MAX_JOBS = 4

#: One process's share: (system, part of its job).
Unit = tuple[str, str]


def _jobs(part: str) -> list[tuple[str, list[Any], bool]]:
    """What a part of a system's job rates: (what, contests, one by one with
    ``Rater.add``)."""
    from podium.io.synthetic import synthetic_contests

    if part == "example":
        return [("the example history", _example_contests(), False)]
    jobs: list[tuple[str, list[Any], bool]] = []
    for k, (what, players, rounds, participation) in enumerate(SMALL_HISTORIES):
        contests = synthetic_contests(players, rounds, seed=k + 1, participation=participation)
        jobs += [(what, contests, False), (f"{what}, added one by one", contests, True)]
    return jobs


def default_jobs(units: int) -> int:
    """How many processes compile ``units`` shares side by side by default: the CPUs
    this process may use, at most ``units`` and :data:`MAX_JOBS`; one where processes
    cannot share the prebuilt directory (:func:`~podium.core.build_claims.can_share`).

    Parameters
    ----------
    units:
        How many shares there are (:func:`split`).

    Returns
    -------
    int
    """
    from podium.core.build_claims import can_share

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, units, MAX_JOBS)) if can_share() else 1


def split(names: Sequence[str], jobs: int) -> list[list[Unit]]:
    """The shares of ``jobs`` processes: whole systems, round robin, when there are at
    least as many systems as processes (a system's parts share kernels); else each
    system's :data:`PARTS` too, round robin, the example histories first.

    Parameters
    ----------
    names:
        The systems to compile.
    jobs:
        The processes (at most one per (system, part)).

    Returns
    -------
    list of list of (str, str)
        One list of (system, part) per process, in the order that process runs them.
    """
    units = [(name, part) for part in PARTS for name in names]
    jobs = max(1, min(jobs, len(units)))
    if jobs <= len(names):
        return [[(name, part) for name in names[k::jobs] for part in PARTS]
                for k in range(jobs)]
    return [units[k::jobs] for k in range(jobs)]


def _run_units(units: Sequence[Unit], evaluation: bool, refused: set[str]) -> dict[str, float]:
    """Rate each unit's histories in this process: the example history as ``podium
    rate`` does (:meth:`~podium.rater.Rater.extend`), the :data:`SMALL_HISTORIES` as a
    batch and one contest at a time (:meth:`~podium.rater.Rater.add`) after the
    :data:`MASSIVE_ROUND` (an exact Elo-MMR), and (``evaluation``) score each batch as
    ``podium eval`` does (:func:`~podium.evaluation.runner.score`: the metrics' and the
    calibration's kernels); the seconds each system took.  A system that refuses the
    example history is added to ``refused`` and skipped from then on; one that refuses
    a small history compiles that path on first use.  Only Numba and NumPy are needed:
    the build environment has no more (the evaluation's tables, which need pandas, are
    not made)."""
    from podium.errors import PodiumError
    from podium.rater import Rater

    made: dict[str, list[tuple[str, list[Any], bool]]] = {}
    seconds: dict[str, float] = {}
    for name, part in units:
        if name in refused:
            continue
        t = time.perf_counter()
        # the massive round first: its kernels after the round's first steps (the rating
        # update) are the example's too, which the other process reaches later
        if part == "small" and _takes_counted_solve(name):
            _rate_massive_round(name)
        for what, contests, one_by_one in made.setdefault(part, _jobs(part)):
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
                if part == "example":
                    refused.add(name)
                    break
                continue
            if evaluation and not one_by_one:
                _score(name, what, contests)
        seconds[name] = round(seconds.get(name, 0.0) + time.perf_counter() - t, 2)
    return seconds


def _takes_counted_solve(name: str) -> bool:
    """Whether system ``name`` solves the performance equation of every opponent
    (:func:`~podium.core.numerics.performance_zeros`: an exact Elo-MMR), so that a
    massive round of newcomers takes its counted solve."""
    from podium.systems import get_system
    from podium.systems.elo_mmr import EloMMR

    system = get_system(name)
    return isinstance(system, EloMMR) and system.subsample_size is None


def _rate_massive_round(name: str) -> None:
    """Rate the :data:`MASSIVE_ROUND` with ``name`` (a failure is told, and leaves its
    kernels to compile on first use)."""
    from podium.errors import PodiumError
    from podium.io.synthetic import synthetic_contests
    from podium.rater import Rater

    what, players = MASSIVE_ROUND
    try:
        Rater(name).extend(synthetic_contests(players, 1, seed=len(SMALL_HISTORIES) + 1,
                                              participation=1.0))
    except PodiumError as exc:
        print(f"podium.prebuild: {name} refuses {what} ({exc}); its kernels for it "
              "compile on first use", file=sys.stderr)


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


def _start_worker(units: Sequence[Unit], directory: Path,
                  evaluation: bool) -> subprocess.Popen[bytes]:
    """A process compiling ``units`` into ``directory`` (no manifest: this one writes
    it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "podium.prebuild", "--dir", str(directory), "--units",
         ",".join(f"{name}:{part}" for name, part in units), "--no-manifest",
         *(["--eval"] if evaluation else [])], stdin=subprocess.DEVNULL)


def _kernels_compiled() -> int:
    """How many signatures Podium's kernels compiled in this process so far (their
    cache misses: found in no cache)."""
    from podium.core.kernel_cache import KernelCache

    return sum(sum(kernel.stats.cache_misses.values())
               for name, module in list(sys.modules.items()) if name.startswith("podium")
               for kernel in list(vars(module).values())
               if isinstance(getattr(kernel, "_cache", None), KernelCache))


def _compile(names: Sequence[str], jobs: int, directory: Path,
             evaluation: bool) -> tuple[dict[str, float], int]:
    """Compile the jobs of ``names`` in ``jobs`` processes: this one runs the first
    share (:func:`split`) while the others run theirs, then runs theirs again, loading
    what they stored; a kernel they left out (none, with the prebuilt directory's lock)
    is compiled then.  Returns the seconds of each system in this process, without the
    systems that refused the example history, and how many kernels that second pass
    compiled."""
    shares = split(names, jobs)
    workers = [_start_worker(share, directory, evaluation) for share in shares[1:]]
    refused: set[str] = set()
    t = time.perf_counter()
    seconds = _run_units(shares[0], evaluation, refused)
    if workers:
        print(f"podium.prebuild: {','.join(f'{n}:{p}' for n, p in shares[0])} in "
              f"{time.perf_counter() - t:.1f} s{_waited()}", file=sys.stderr)
    for share, worker in zip(shares[1:], workers, strict=True):
        if worker.wait() != 0:  # what it left out is compiled below
            print(f"podium.prebuild: the process compiling "
                  f"{','.join(f'{n}:{p}' for n, p in share)} ended with status "
                  f"{worker.returncode}", file=sys.stderr)
    before = _kernels_compiled()
    for name, s in _run_units([u for share in shares[1:] for u in share], evaluation,
                              refused).items():
        seconds[name] = round(seconds.get(name, 0.0) + s, 2)
    return ({n: s for n, s in seconds.items() if n not in refused},
            _kernels_compiled() - before)


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
    ap.add_argument("--jobs", type=int, default=None,
                    help=f"processes side by side (default: ${ENV_JOBS}, else the CPUs, "
                    f"at most one per system and part of its job and {MAX_JOBS})")
    ap.add_argument("--eval", action="store_true",
                    help=f"also score the jobs as `podium eval` does: its kernels too "
                    f"(default: ${ENV_EVAL}=1; off)")
    ap.add_argument("--no-manifest", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--units", help=argparse.SUPPRESS)  # a worker's share: NAME:PART,...
    args = ap.parse_args(argv)
    # before Numba reads its configuration: portable machine code
    os.environ["NUMBA_CPU_NAME"] = "generic"
    os.environ.pop("NUMBA_CPU_FEATURES", None)
    from podium.core import build_claims, kernel_cache

    directory = Path(args.dir or kernel_cache.prebuilt_dir())
    evaluation = args.eval or os.environ.get(ENV_EVAL, "").strip() == "1"
    if args.units:
        kernel_cache.start_prebuild(directory)
        t = time.perf_counter()
        _run_units([tuple(u.split(":", 1)) for u in args.units.split(",")],  # type: ignore[misc]
                   evaluation, set())
        print(f"podium.prebuild: {args.units} in {time.perf_counter() - t:.1f} s"
              f"{_waited()}", file=sys.stderr)
        return 0
    names = selected_systems(args.systems if args.systems is not None
                             else os.environ.get(ENV_SYSTEMS))
    if not names:
        return 0
    jobs = args.jobs if args.jobs is not None else _env_jobs()
    jobs = default_jobs(len(names) * len(PARTS)) if jobs is None else max(1, jobs)
    if not build_claims.can_share():  # no file locks: processes could lose kernels
        jobs = 1
    directory.mkdir(parents=True, exist_ok=True)
    kernel_cache.start_prebuild(directory)
    t0 = time.perf_counter()
    seconds, late = _compile(names, jobs, directory, evaluation)
    build_claims.clean(str(directory))
    if args.no_manifest:
        return 0
    total = round(time.perf_counter() - t0, 2)
    kernel_cache.write_manifest(directory, seconds, {
        "seconds": seconds, "total_seconds": total, "jobs": len(split(names, jobs)),
        "compiled_by_check": late})
    print(f"podium.prebuild: compiled the kernels of {', '.join(seconds) or 'nothing'} "
          f"into {directory} in {total:.1f} s ({len(split(names, jobs))} process(es)"
          + (f"; {late} kernel(s) compiled again" if late else "") + ")", file=sys.stderr)
    return 0


def _waited() -> str:
    """This process's CPU time, and what it waited for kernels that other processes
    compiled."""
    from podium.core.build_claims import waits

    cpu = f" (CPU {time.process_time():.1f} s"
    return cpu + (f", waiting {waits[0]:.1f} s for {waits[1]} kernel(s) of other "
                  f"processes)" if waits[1] else ")")


def _env_jobs() -> int | None:
    """``PODIUM_PREBUILD_JOBS`` as a number, or ``None`` when unset or not one."""
    text = os.environ.get(ENV_JOBS, "").strip()
    return int(text) if text.isdigit() else None


if __name__ == "__main__":
    raise SystemExit(main())
