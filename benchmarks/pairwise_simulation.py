"""Reproduce the simulation of seed 004 (five players, random games, Spearman vs truth).

    python benchmarks/pairwise_simulation.py                 # the default set-up, 400 reps
    python benchmarks/pairwise_simulation.py --games 20 --strength-sd 100
    python benchmarks/pairwise_simulation.py --sweep         # also games x spread table
    python benchmarks/pairwise_simulation.py --json out.json

Prints Markdown tables (the seed's value next to ours); the set-up is described in
:mod:`podium.evaluation.pairwise_sim` and ``docs/pairwise.md``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from podium.evaluation.pairwise_sim import SEED_RESULTS, SimulationSetup, simulate, simulate_samples


def main(argv: list[str] | None = None) -> int:
    d = SimulationSetup()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--players", type=int, default=d.players)
    ap.add_argument("--games", type=int, default=d.games)
    ap.add_argument("--repetitions", type=int, default=d.repetitions)
    ap.add_argument("--strength-sd", type=float, default=d.strength_sd)
    ap.add_argument("--k", type=float, default=d.k, help="Elo K factor (seed: 1)")
    ap.add_argument("--sample-orderings", type=int, default=d.sample_orderings)
    ap.add_argument("--no-average", action="store_true", help="skip exact AverageElo")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--sweep", action="store_true",
                    help="also games in (5, 10, 20, 50) x strength sd in (100, 200, 400)")
    ap.add_argument("--json", help="write every result to this file")
    a = ap.parse_args(argv)
    setup = SimulationSetup(
        players=a.players, games=a.games, repetitions=a.repetitions, strength_sd=a.strength_sd,
        k=a.k, sample_orderings=a.sample_orderings, average_exact=not a.no_average, seed=a.seed,
    )
    t = time.perf_counter()
    samples = simulate_samples(setup)
    secs = time.perf_counter() - t
    res = {name: float(v.mean()) for name, v in samples.items()}
    se = {name: float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan")
          for name, v in samples.items()}
    print(f"set-up: {setup.as_dict()}  ({secs:.1f} s)\n")
    print("| rating system | seed's value | ours (± standard error) |")
    print("|---|---|---|")
    for name, v in res.items():
        seed_v = SEED_RESULTS.get(name)
        seed_s = "" if seed_v is None else f"{seed_v:.5g}"
        print(f"| {name} | {seed_s} | {v:.4f} ± {se[name]:.4f} |")
    out: dict[str, object] = {"setup": setup.as_dict(), "results": res, "standard_errors": se,
                              "seconds": secs}
    if a.sweep:
        rows = []
        names = list(res)
        print("\n| games | strength sd | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for games in (5, 10, 20, 50):
            for sd in (100.0, 200.0, 400.0):
                r = simulate(replace(setup, games=games, strength_sd=sd,
                                     average_exact=setup.average_exact and games <= 10))
                rows.append({"games": games, "strength_sd": sd, "results": r})
                cells = " | ".join(f"{r[n]:.3f}" if n in r else "–" for n in names)
                print(f"| {games} | {sd:g} | {cells} |", flush=True)
        out["sweep"] = rows
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
