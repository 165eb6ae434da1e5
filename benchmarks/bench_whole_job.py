"""Whole jobs by wall clock: ``podium rate`` against elo-mmr-py's whole process.

Every job runs as its own subprocess and is timed from start to exit:

* ``podium rate CODEFORCES -n N --dedupe --sort-by-time --out DIR`` with every
  default output (``ratings.csv``, ``histories.csv``, ``contests.csv``), for
  ``mmr`` and ``mmr-fast``; its own report gives the split (load, rate, write);
* elo-mmr-py's whole process, as its users run it: ``json.load`` of each contest
  file of the same archive, ``elo_mmr_py.Contest`` objects in time order, then
  ``elo_mmr_py.rate(contests, "mmr-fast")`` (the reference writes no files);
* ``podium rate`` on one round of 1,000,000 players (a JSON file made with the
  generator of ``bench_million.py``: skill N(1500, 300), noise N(0, 200), scores
  rounded to whole points);
* loading only, in-process: ``podium.io.load_contests`` against the ``json.load``
  loop, on the ``.tar.gz`` and on a directory of its JSON files (extracted to a
  temporary directory).

The first run of each job is reported as "first" (cold caches); the next
``--repeat`` runs give "warm" (their median).  All jobs run in the same benchmark
run, interleaved round by round, so that their ratios share the machine's load.

    python benchmarks/bench_whole_job.py                       # writes docs/benchmarks.md
    python benchmarks/bench_whole_job.py -n 100 --players 100000 --repeat 1 --no-docs

The table goes into docs/benchmarks.md, block ``whole-job``, with the date,
commit, machine and command (``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from _reference import CHILD_ENV
from _report import PODIUM_REPORT, checkout_env, data_dir, load_average, write_section
from bench_million import million_file

DEFAULT_TAR = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
DOC = "docs/benchmarks.md"
SECTION = "whole-job"

# elo-mmr-py's whole process: json.load per contest file, Contests in time order, rate.
REFERENCE = r'''
import json, sys, time
import elo_mmr_py as e
from _reference import reference_contests
t0 = time.perf_counter()
data, n, system = sys.argv[1], int(sys.argv[2]), sys.argv[3]
contests = reference_contests(data, n, dedupe_urls=True)  # as podium rate --dedupe
t1 = time.perf_counter()
players = e.rate(contests, system)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "rate_s": t2 - t1, "players": len(players)}),
      file=sys.stderr)
'''

# Load only, in-process: Podium's loader or the json.load loop, on an archive or directory.
LOADER = r'''
import json, os, re, sys, tarfile, time
kind, src, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "podium":
    from podium.io import load_contests
    t0 = time.perf_counter()
    rows = load_contests(src, limit=n).num_rows
else:
    t0 = time.perf_counter()
    docs = []
    if os.path.isdir(src):
        for k in range(n):
            with open(os.path.join(src, f"{k}.json"), "rb") as fh:
                docs.append(json.load(fh))
    else:
        with tarfile.open(src, "r|gz") as tf:
            for m in tf:
                hit = re.search(r"(\d+)\.json$", m.name)
                if m.isfile() and hit and int(hit.group(1)) < n:
                    docs.append(json.load(tf.extractfile(m)))
    rows = sum(len(d["standings"]) for d in docs)
print(json.dumps({"load_s": time.perf_counter() - t0, "rows": rows}), file=sys.stderr)
'''


def run(argv: list[str], timeout: float) -> tuple[float, str]:
    """Wall-clock seconds of a whole subprocess, and its stderr."""
    # time this checkout's podium (and find benchmarks/_reference.py)
    env = checkout_env(CHILD_ENV)
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... failed:\n{proc.stderr[-2000:]}")
    return wall, proc.stderr


def last_json(text: str) -> dict[str, Any]:
    return json.loads(text.strip().splitlines()[-1])


def extract(tar: Path, n: int, directory: Path) -> None:
    """Members ``k.json`` with ``k < n`` of the archive into ``directory``."""
    with tarfile.open(tar, "r|gz") as tf:
        for m in tf:
            hit = re.search(r"(\d+)\.json$", m.name)
            if m.isfile() and hit and int(hit.group(1)) < n:
                fobj = tf.extractfile(m)
                assert fobj is not None
                (directory / f"{int(hit.group(1))}.json").write_bytes(fobj.read())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_TAR)
    ap.add_argument("-n", type=int, default=1087, help="Codeforces contests (default 1087)")
    ap.add_argument("--systems", default="mmr,mmr-fast", help="Podium systems to time")
    ap.add_argument("--players", type=int, default=1_000_000, help="players of the big round")
    ap.add_argument("--repeat", type=int, default=2, help="warm runs after the first")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per job")
    ap.add_argument("--no-docs", action="store_true",
                    help=f"do not update {DOC} (block {SECTION!r})")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (set PODIUM_DATA_DIR)")
        return 0
    py = sys.executable
    load0 = load_average()
    work = Path(tempfile.mkdtemp(prefix="podium-whole-job-"))
    try:
        json_dir = work / "codeforces"
        json_dir.mkdir()
        extract(args.data, args.n, json_dir)
        big = work / "million.json"
        million_file(big, args.players, seed=0)
        big_distinct = work / "million-distinct.json"
        million_file(big_distinct, args.players, seed=0, ties=False)
        cf = [str(args.data), "-n", str(args.n), "--dedupe", "--sort-by-time"]
        jobs: dict[str, list[str]] = {"elo-mmr-py mmr-fast": [py, "-c", REFERENCE,
                                                              str(args.data), str(args.n),
                                                              "mmr-fast"]}
        for system in [s for s in args.systems.split(",") if s]:
            jobs[f"podium {system}"] = [py, "-m", "podium.cli", "rate", *cf, "--system", system,
                                        "--out", str(work / f"out-{system}"), "--no-progress"]
        jobs["podium mmr, 1M players, ties"] = [
            py, "-m", "podium.cli", "rate", str(big), "--system", "mmr",
            "--out", str(work / "out-million"), "--no-progress"]
        jobs["podium mmr, 1M players, distinct places"] = [
            py, "-m", "podium.cli", "rate", str(big_distinct), "--system", "mmr",
            "--out", str(work / "out-million-distinct"), "--no-progress"]
        loads = {
            "podium load_contests, .tar.gz": [py, "-c", LOADER, "podium", str(args.data)],
            "json.load loop, .tar.gz": [py, "-c", LOADER, "json", str(args.data)],
            "podium load_contests, directory": [py, "-c", LOADER, "podium", str(json_dir)],
            "json.load loop, directory": [py, "-c", LOADER, "json", str(json_dir)],
        }
        walls: dict[str, list[float]] = {k: [] for k in jobs}
        splits: dict[str, list[dict[str, float]]] = {k: [] for k in jobs}
        load_s: dict[str, list[float]] = {k: [] for k in loads}
        rows = ""
        for rnd in range(1 + args.repeat):
            label = "first" if rnd == 0 else f"warm {rnd}"
            for name, argv in jobs.items():
                print(f"[{label}] {name} ...", file=sys.stderr, flush=True)
                wall, err = run(argv, args.timeout)
                walls[name].append(wall)
                if name.startswith("podium"):
                    m = PODIUM_REPORT.search(err)
                    if m is None:
                        raise RuntimeError(f"no timing line in podium's report:\n{err[-1000:]}")
                    rows = rows or m.group(2)
                    splits[name].append({"load_s": float(m.group(4)),
                                         "rate_s": float(m.group(3)),
                                         "write_s": float(m.group(5))})
                else:
                    splits[name].append(last_json(err))
                print(f"    {wall:.2f} s", file=sys.stderr, flush=True)
            for name, argv in loads.items():
                _, err = run([*argv, str(args.n)], args.timeout)
                load_s[name].append(last_json(err)["load_s"])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def warm(values: list[float]) -> float:
        return statistics.median(values[1:]) if len(values) > 1 else values[0]

    ref = "elo-mmr-py mmr-fast"
    lines = [
        "| job | whole job ÷ elo-mmr-py `mmr-fast` (warm, same run) | first s | warm s "
        "| load s | rate s | write s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in jobs:
        split = splits[name][-1] if len(splits[name]) == 1 else {
            k: statistics.median(s[k] for s in splits[name][1:]) for k in splits[name][0]}
        ratio = warm(walls[name]) / warm(walls[ref])
        write = f"{split['write_s']:.2f}" if "write_s" in split else "–"
        lines.append(
            f"| {name} | {'–' if name == ref or 'players' in name else f'**{ratio:.2f}×**'} | "
            f"{walls[name][0]:.2f} | {warm(walls[name]):.2f} | "
            f"{split['load_s']:.2f} | {split['rate_s']:.2f} | {write} |"
        )
    load_lines = ["| loader | ÷ the `json.load` loop of the same files (warm) | first s | warm s |",
                  "|---|---|---|---|"]
    for name, values in load_s.items():
        peer = load_s["json.load loop, .tar.gz" if "tar.gz" in name else
                      "json.load loop, directory"]
        ratio_s = "–" if name.startswith("json.load") else f"**{warm(values) / warm(peer):.2f}×**"
        load_lines.append(f"| {name} | {ratio_s} | {values[0]:.2f} | {warm(values):.2f} |")
    tar_ratio = warm(load_s["podium load_contests, .tar.gz"]) / warm(
        load_s["json.load loop, .tar.gz"])
    dir_ratio = warm(load_s["podium load_contests, directory"]) / warm(
        load_s["json.load loop, directory"])
    section = "\n".join([
        f"Whole processes by wall clock (interpreter start to exit). Codeforces: the first "
        f"{args.n} contests ({rows} player-rounds) with `--dedupe --sort-by-time`, every "
        "default output written (`ratings.csv`, `histories.csv`, `contests.csv`); "
        "elo-mmr-py: `json.load` per archive member, then `elo_mmr_py.rate(contests, "
        f"\"mmr-fast\")`, no files written. 1M players: one round of {args.players:,} "
        "players from one JSON file, its places from scores rounded to whole points (ties) "
        "or from the unrounded scores (a million distinct places). \"first\" is the first "
        "run (cold caches), \"warm\" the "
        f"median of the next {args.repeat}; load/rate/write are the job's own split (warm).",
        "",
        *lines,
        "",
        "Loading only (in-process seconds, the same contests): Podium's loader checks every "
        "value, builds the contests and interns handles; the `json.load` loop only parses.",
        "",
        *load_lines,
        "",
        f"Podium's loader takes {tar_ratio:.2f}× the `json.load` loop's time on the archive "
        f"and {dir_ratio:.2f}× on the directory.",
    ])
    print(section)
    if not args.no_docs:
        path = write_section(DOC, SECTION, section, load_at_start=load0)
        print(f"updated {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
