"""One round of 1,000,000 players rated by exact Elo-MMR (every opponent).

Round 1: a million newcomers (all at 1500/350); round 2: the same players,
now with a million distinct ratings, in a new random order.  Places come from
simulated performances (skill N(1500, 300), noise N(0, 200)), rounded to whole
points so that ties occur (``--no-ties`` for a million distinct places).
Prints seconds and the process's peak memory after each round.

    python benchmarks/bench_million.py [--players 1000000] [--system mmr]
    python benchmarks/bench_million.py --write-docs     # both tie settings -> docs

``--write-docs`` runs both settings (distinct places, then places with ties), each
in a fresh process so that each peak memory is its own, and writes the table into
docs/benchmarks.md (block ``million``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import load_average, write_section

from podium import Contest, Rater

DOC = "docs/benchmarks.md"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(players: int, system: str, no_ties: bool, seed: int) -> dict:
    """Rate the two rounds; seconds, tie groups and peak memory after each."""
    rng = np.random.default_rng(seed)
    n = players
    handles = [f"p{i}" for i in range(n)]
    skill = rng.normal(1500, 300, n)
    r = Rater(system)
    t = time.perf_counter()
    Rater(system).add(Contest([("a", 0, 0), ("b", 1, 1)]))
    warm = time.perf_counter() - t
    print(f"warm-up (JIT cache load): {warm:.2f} s")
    rounds = []
    for rnd in (1, 2):
        perf = skill + rng.normal(0, 200, n)
        score = perf if no_ties else np.round(perf)
        t = time.perf_counter()
        c = Contest.from_scores(handles, score, name=f"round {rnd}")
        build = time.perf_counter() - t
        t = time.perf_counter()
        r.add(c)
        secs = time.perf_counter() - t
        groups = int(np.unique(c.lo).size)
        rounds.append({"round": rnd, "players": n, "groups": groups, "seconds": secs,
                       "build_s": build, "peak_mb": peak_mb()})
        print(f"round {rnd}: {n:,} players in {groups:,} tie groups rated by {system} in "
              f"{secs:.2f} s (building the contest {build:.2f} s); peak memory "
              f"{peak_mb():.0f} MB")
    return {"system": system, "no_ties": no_ties, "warm_s": warm, "rounds": rounds}


def _both(args: argparse.Namespace) -> list[dict]:
    """Both tie settings, each in a fresh process (its own peak memory)."""
    out = []
    for no_ties in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "million.json"
            cmd = [sys.executable, __file__, "--players", str(args.players), "--system",
                   args.system, "--seed", str(args.seed), "--json", str(path)]
            subprocess.run(cmd + (["--no-ties"] if no_ties else []), check=True)
            out.append(json.loads(path.read_text()))
    return out


def _table(runs: list[dict]) -> str:
    system = runs[0]["system"]
    lines = [
        f"`{system}`, one round of "
        f"{runs[0]['rounds'][0]['players']:,} players, then the same players again in a "
        "new order; each setting in a fresh process, its kernels loaded beforehand "
        "(warm-up excluded). Places: *distinct* from unrounded simulated performances, "
        "*ties* from performances rounded to whole points.",
        "",
        "| places | round | players | tie groups | seconds | building the contest (s) "
        "| peak MB |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        places = "distinct (`--no-ties`)" if run["no_ties"] else "ties"
        for r in run["rounds"]:
            what = "1 (all newcomers)" if r["round"] == 1 else "2 (rated players)"
            lines.append(f"| {places} | {what} | {r['players']:,} | {r['groups']:,} | "
                         f"{r['seconds']:.2f} | {r['build_s']:.2f} | {r['peak_mb']:.0f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--system", default="mmr")
    ap.add_argument("--no-ties", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write this run's figures here")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"run both tie settings and write the table into {DOC}")
    args = ap.parse_args()
    if not args.write_docs:
        res = measure(args.players, args.system, args.no_ties, args.seed)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
        return 0
    load0 = load_average()
    runs = _both(args)
    body = _table(runs)
    print(body)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    write_section(DOC, "million", body, load_at_start=load0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
