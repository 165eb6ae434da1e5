"""A million players in one round, as whole processes against elo-mmr-py's whole process.

Every job runs as its own subprocess, timed by wall clock from start to exit, with its
peak resident memory as the kernel counts it (``wait4``):

* ``podium rate PATH --system mmr --out DIR`` as a user runs it (every default output
  written: ``ratings.csv``, ``histories.csv``, ``contests.csv``); its own report gives
  the split (load, rate, write);
* elo-mmr-py's whole process as its users run it: ``json.load`` of the same files, one
  ``elo_mmr_py.Contest`` per file, ``elo_mmr_py.rate(contests, SYSTEM)`` (no file
  written).

Data (seeded): ``--players`` players of skill N(1500, 300); each round's places come
from performances skill + N(0, 200), rounded to whole points (*ties*, about 2,800 tie
groups) or unrounded (*distinct*: a million places).

* **one round** of newcomers (one JSON file): Podium's exact ``mmr`` against
  elo-mmr-py's exact ``mmr``.  Every newcomer enters as the same opponent term, which
  elo-mmr-py merges (its exact system merges terms of equal rating) and Podium
  evaluates once (:func:`podium.core.numerics.merge_identical`);
* **two rounds** with the same players (a directory of two JSON files, the second
  round's places from new performances): Podium's exact ``mmr`` against elo-mmr-py's
  ``mmr-fast``, since once a million ratings differ elo-mmr-py's exact ``mmr`` compares
  all pairs.

The jobs run ``--repeat`` times, interleaved (every job once, then again), after a
warm-up ``podium rate`` of two rounds of 120,000 players (and of its first round alone)
that compiles or loads every kernel the jobs use (compilation is not timed;
``bench_cold_start.py`` measures it); a figure is the median of the repeats.

    python benchmarks/bench_million.py                       # writes docs/benchmarks.md
    python benchmarks/bench_million.py --players 100000 --repeat 1 --no-docs
    python benchmarks/bench_million.py --jobs one-ties,two-ties --no-docs

The table goes into docs/benchmarks.md, block ``million`` (``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _reference import CHILD_ENV
from _report import PODIUM_REPORT, checkout_env, load_average, write_section

DOC = "docs/benchmarks.md"
SECTION = "million"

# elo-mmr-py's whole process: json.load of each file, one Contest per file, rate.
REFERENCE = r'''
import json, sys, time
import elo_mmr_py as e
t0 = time.perf_counter()
system, paths = sys.argv[1], sys.argv[2:]
contests = []
for path in paths:
    with open(path, "rb") as fh:
        d = json.load(fh)
    contests.append(e.Contest([tuple(s) for s in d["standings"]], name=d["name"],
                              time_seconds=d["time_seconds"]))
t1 = time.perf_counter()
players = e.rate(contests, system)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "rate_s": t2 - t1, "players": len(players)}),
      file=sys.stderr)
'''

#: Players of the warm-up rounds: two rounds make more rows than the compiled JSON
#: reader waits for, and a round more than the compiled CSV writer does.
WARM_PLAYERS = 120_000
#: job -> (rounds, places, elo-mmr-py's system)
JOBS = {
    "one-ties": (1, "ties", "mmr"),
    "one-distinct": (1, "distinct", "mmr"),
    "two-ties": (2, "ties", "mmr-fast"),
    "two-distinct": (2, "distinct", "mmr-fast"),
}


def million_file(path: Path, players: int, seed: int, *, ties: bool = True,
                 rnd: int = 1) -> None:
    """Round ``rnd`` (1 or 2) of ``players`` players: places from simulated performances
    rounded to whole points (``ties``) or unrounded (distinct), the same players and
    skills in both rounds, round 2 a day after round 1."""
    import numpy as np

    from podium import Contest
    from podium.io import write_contest_json

    rng = np.random.default_rng(seed)
    skill = rng.normal(1500, 300, players)
    for _ in range(rnd):
        score = skill + rng.normal(0, 200, players)
    if ties:
        score = np.round(score)
    handles = [f"p{i}" for i in range(players)]
    write_contest_json(Contest.from_scores(handles, score, name=f"round {rnd}",
                                           time_seconds=86400 * rnd), path)


def run(argv: list[str], timeout: float) -> tuple[float, float, str]:
    """Wall-clock seconds of a whole subprocess, its peak resident memory (MB) and its
    stderr."""
    env = checkout_env(CHILD_ENV)  # time this checkout's podium
    with tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    if wall > timeout:
        print(f"    (over the {timeout:.0f} s budget)", file=sys.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... failed:\n{text[-2000:]}")
    return wall, usage.ru_maxrss / 1024, text


def cpu_name() -> str:
    """The CPU's model name (Linux), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def make_data(work: Path, jobs: list[str], players: int, seed: int) -> dict[str, list[Path]]:
    """The JSON files of each job (generated once per setting of places)."""
    files: dict[str, list[Path]] = {}
    for name in jobs:
        rounds, places, _ = JOBS[name]
        d = work / places
        d.mkdir(exist_ok=True)
        paths = []
        for rnd in range(1, rounds + 1):
            path = d / f"{rnd - 1}.json"
            if not path.exists():
                print(f"writing {path.name} ({places}, round {rnd}) ...", file=sys.stderr)
                million_file(path, players, seed, ties=places == "ties", rnd=rnd)
            paths.append(path)
        files[name] = paths
    return files


def podium_argv(name: str, paths: list[Path], work: Path) -> list[str]:
    """``podium rate`` of one file (one round) or of the directory of both rounds."""
    src = paths[0] if len(paths) == 1 else paths[0].parent
    return [sys.executable, "-m", "podium.cli", "rate", str(src), "--system", "mmr",
            "--out", str(work / f"out-{name}"), "--no-progress"]


def measure(args: argparse.Namespace, jobs: list[str]) -> dict[str, dict[str, Any]]:
    """Every job's runs: wall seconds, peak MB and the split of each."""
    work = Path(tempfile.mkdtemp(prefix="podium-million-"))
    try:
        files = make_data(work, jobs, args.players, args.seed)
        warm = work / "warm"
        warm.mkdir()
        for rnd in (1, 2):  # enough rows for the compiled JSON reader and CSV writer
            million_file(warm / f"{rnd - 1}.json", WARM_PLAYERS, args.seed, rnd=rnd)
        for src in (warm, warm / "0.json"):
            run([sys.executable, "-m", "podium.cli", "rate", str(src), "--system", "mmr",
                 "--out", str(work / "out-warm"), "--no-progress"], args.timeout)
        argvs: dict[str, list[str]] = {}
        for name in jobs:
            argvs[f"podium {name}"] = podium_argv(name, files[name], work)
            argvs[f"elo-mmr-py {name}"] = [sys.executable, "-c", REFERENCE, JOBS[name][2],
                                           *map(str, files[name])]
        res: dict[str, dict[str, Any]] = {k: {"wall": [], "peak": [], "split": []}
                                          for k in argvs}
        for rep in range(args.repeat):
            for key, argv in argvs.items():
                print(f"[{rep + 1}/{args.repeat}] {key} ...", file=sys.stderr, flush=True)
                wall, peak, err = run(argv, args.timeout)
                if key.startswith("podium"):
                    m = PODIUM_REPORT.search(err)
                    if m is None:
                        raise RuntimeError(f"no timing line in podium's report:\n{err[-1000:]}")
                    split = {"load_s": float(m.group(4)), "rate_s": float(m.group(3)),
                             "write_s": float(m.group(5))}
                else:
                    split = json.loads(err.strip().splitlines()[-1])
                res[key]["wall"].append(wall)
                res[key]["peak"].append(peak)
                res[key]["split"].append(split)
                print(f"    {wall:.2f} s, {peak:.0f} MB", file=sys.stderr, flush=True)
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(res: dict[str, dict[str, Any]], jobs: list[str], players: int, repeat: int) -> str:
    """The Markdown of the results: the ratio to the peer of the same run first."""

    def med(key: str, what: str) -> float:
        return statistics.median(res[key][what])

    def split(key: str, part: str) -> float:
        return statistics.median(s[part] for s in res[key]["split"])

    lines = [
        f"Whole processes by wall clock on {cpu_name()} ({os.cpu_count()} CPUs), median of "
        f"{repeat} interleaved runs, kernels loaded from Numba's cache (warm-up `podium "
        f"rate` runs beforehand). Podium: `podium rate PATH --system mmr --out DIR`, every "
        "default output written; elo-mmr-py: `json.load` of the same files, then "
        "`elo_mmr_py.rate`, no file written. Places from simulated performances rounded to "
        "whole points (*ties*) or unrounded (*distinct*). Peak memory is the process's "
        "peak resident set.",
        "",
        "| job | Podium ÷ elo-mmr-py (time) | Podium ÷ elo-mmr-py (peak memory) | Podium s "
        "| elo-mmr-py s | Podium peak MB | elo-mmr-py peak MB | Podium load / rate / write s "
        "| elo-mmr-py load / rate s |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for name in jobs:
        rounds, places, system = JOBS[name]
        p, e = f"podium {name}", f"elo-mmr-py {name}"
        what = (f"{'one round' if rounds == 1 else 'two rounds'} of {players:,} players, "
                f"{places}: Podium `mmr` vs elo-mmr-py `{system}`")
        lines.append(
            f"| {what} | {med(p, 'wall') / med(e, 'wall'):.2f}× | "
            f"{med(p, 'peak') / med(e, 'peak'):.2f}× | {med(p, 'wall'):.2f} | "
            f"{med(e, 'wall'):.2f} | {med(p, 'peak'):.0f} | {med(e, 'peak'):.0f} | "
            f"{split(p, 'load_s'):.2f} / {split(p, 'rate_s'):.2f} / {split(p, 'write_s'):.2f} "
            f"| {split(e, 'load_s'):.2f} / {split(e, 'rate_s'):.2f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--jobs", default=",".join(JOBS),
                    help=f"comma-separated, of {', '.join(JOBS)}")
    ap.add_argument("--repeat", type=int, default=2, help="runs of every job (median)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per job (reported)")
    ap.add_argument("--json", type=Path, help="write the raw figures here")
    ap.add_argument("--no-docs", action="store_true",
                    help=f"do not update {DOC} (block {SECTION!r})")
    args = ap.parse_args()
    jobs = [j for j in args.jobs.split(",") if j]
    unknown = sorted(set(jobs) - set(JOBS))
    if unknown:
        ap.error(f"unknown job(s) {', '.join(unknown)}; known: {', '.join(JOBS)}")
    load0 = load_average()
    res = measure(args, jobs)
    body = table(res, jobs, args.players, args.repeat)
    print(body)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    if not args.no_docs:
        path = write_section(DOC, SECTION, body, load_at_start=load0)
        print(f"updated {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
