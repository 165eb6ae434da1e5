"""One round of 1,000,000 players rated by exact Elo-MMR (every opponent).

Round 1: a million newcomers (all at 1500/350); round 2: the same players,
now with a million distinct ratings, in a new random order.  Places come from
simulated performances (skill N(1500, 300), noise N(0, 200)), rounded to whole
points so that ties occur (``--no-ties`` for a million distinct places).
Prints seconds and the process's peak memory after each round.

    python benchmarks/bench_million.py [--players 1000000] [--system mmr]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from podium import Contest, Rater


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1_000_000)
    ap.add_argument("--system", default="mmr")
    ap.add_argument("--no-ties", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.players
    handles = [f"p{i}" for i in range(n)]
    skill = rng.normal(1500, 300, n)
    r = Rater(args.system)
    t = time.perf_counter()
    Rater(args.system).add(Contest([("a", 0, 0), ("b", 1, 1)]))
    print(f"warm-up (JIT cache load): {time.perf_counter() - t:.2f} s")
    for rnd in (1, 2):
        perf = skill + rng.normal(0, 200, n)
        score = perf if args.no_ties else np.round(perf)
        t = time.perf_counter()
        c = Contest.from_scores(handles, score, name=f"round {rnd}")
        build = time.perf_counter() - t
        t = time.perf_counter()
        r.add(c)
        secs = time.perf_counter() - t
        groups = int(np.unique(c.lo).size)
        print(f"round {rnd}: {n:,} players in {groups:,} tie groups rated by {args.system} in "
              f"{secs:.2f} s (building the contest {build:.2f} s); peak memory {peak_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
