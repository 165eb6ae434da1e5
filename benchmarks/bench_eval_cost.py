"""What an evaluation costs over rating: ``podium eval`` and ``podium compare`` against
``podium rate`` of the same systems, on histories of many small contests.

The histories of ``bench_small_contests.py``: the international football results
(49,520 matches) and a generated history of ``--matches`` 1v1 matches, each written as a
long CSV.

* **Whole processes** (wall clock, one run each after a warm-up run that loads every
  kernel): ``podium rate FILE --system S --out DIR``, ``podium eval FILE --system S`` and
  ``podium compare FILE --systems S1,S2,...``; ``eval`` is divided by ``rate`` of its
  system, ``compare`` by the sum of the ``rate`` times of its systems (issue 30, item 4:
  at most 1.5×).  ``rate`` writes its outputs, ``eval`` prints a table.
* **In process**, from contests loaded once (what the loader costs is left out:
  another branch works on it): ``Rater(S).extend(contests)`` against
  ``evaluate(contests, S)`` (rating and every metric, calibration included), after a
  warm-up of both on the first 300 contests.

    python benchmarks/bench_eval_cost.py --repeat 2           # writes docs/benchmarks.md
    python benchmarks/bench_eval_cost.py --matches 20000 --no-processes --no-docs

The table goes into docs/benchmarks.md, block ``eval-cost``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _report import cpu_model, data_dir, load_average, write_section
from bench_small_contests import command_figures, football_csv, generated_csv

DOC = "docs/benchmarks.md"
SECTION = "eval-cost"


def in_process(path: Path, systems: list[str]) -> dict[str, float]:
    """Seconds of ``Rater.extend`` and ``evaluate`` per system, contests loaded once."""
    from podium.evaluation import evaluate
    from podium.io import load_contests
    from podium.rater import Rater

    t = time.perf_counter()
    contests = list(load_contests(path).contests)
    out = {"load": time.perf_counter() - t}
    for s in systems:
        Rater(s).extend(contests[:300])
        evaluate(contests[:300], s)
        t = time.perf_counter()
        Rater(s).extend(contests)
        out[f"rate {s}"] = time.perf_counter() - t
        t = time.perf_counter()
        evaluate(contests, s, warmup=False)
        out[f"eval {s}"] = time.perf_counter() - t
    return out


def best_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """The fastest of each figure over ``runs``."""
    return {key: min(run[key] for run in runs) for key in runs[0]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=200_000)
    ap.add_argument("--players", type=int, default=5_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--systems", default="mmr,glicko,trueskill",
                    help="systems timed (compare runs them all)")
    ap.add_argument("--histories", default="football,generated")
    ap.add_argument("--no-processes", action="store_true", help="in-process figures only")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--repeat", type=int, default=1,
                    help="best of N runs of every figure (a loaded machine inflates "
                    "single runs; the runs of rate and eval alternate)")
    args = ap.parse_args()
    load0 = load_average()
    systems = [s for s in args.systems.split(",") if s]
    wanted = args.histories.split(",")
    work = Path(tempfile.mkdtemp(prefix="podium-eval-cost-"))
    files: dict[str, tuple[Path, int]] = {}
    fb = data_dir() / "football" / "results.csv"
    if "football" in wanted:
        if fb.exists():
            files["football"] = (work / "football.csv", football_csv(fb, work / "football.csv"))
        else:
            print(f"no {fb}: football skipped", file=sys.stderr)
    if "generated" in wanted:
        gen = work / "generated.csv"
        files["generated"] = (gen, generated_csv(gen, args.matches, args.players, args.seed))
    lines = [
        f"Machine: {cpu_model()}. *Process*: whole processes by wall clock, best of "
        f"{max(args.repeat, 1)} run(s) each after a warm-up; `eval` divided by "
        "`podium rate` of the same system, `compare` by the sum of the `rate` times of "
        "its systems. *In process*: contests loaded once, "
        "`evaluate(contests, S)` divided by `Rater(S).extend(contests)`.",
        "",
        "| history | command | ÷ rate (process) | ÷ rate (in process) | process s "
        "| rate process s | in process s | rate in process s |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for k, (path, n) in files.items():
        print(f"{k}: in process ...", file=sys.stderr, flush=True)
        ip = best_of([in_process(path, systems) for _ in range(max(args.repeat, 1))])
        proc: dict[str, float] = {}
        if not args.no_processes:
            print(f"{k}: whole processes ...", file=sys.stderr, flush=True)
            proc = best_of([command_figures(path, systems, work, args.timeout)
                            for _ in range(max(args.repeat, 1))])
        name = f"{k} ({n:,} matches)"
        for s in systems:
            r, e = ip[f"rate {s}"], ip[f"eval {s}"]
            if proc:
                pr, pe = proc[f"rate {s}"], proc[f"eval {s}"]
                head = f"**{pe / pr:.2f}×** | {e / r:.2f}× | {pe:.2f} | {pr:.2f}"
            else:
                head = f"– | **{e / r:.2f}×** | – | –"
            lines.append(f"| {name} | `eval --system {s}` | {head} | {e:.2f} | {r:.2f} |")
        r = sum(ip[f"rate {s}"] for s in systems)
        e = sum(ip[f"eval {s}"] for s in systems)
        if proc:
            pr, pc = sum(proc[f"rate {s}"] for s in systems), proc["compare"]
            head = f"**{pc / pr:.2f}×** | {e / r:.2f}× | {pc:.2f} | {pr:.2f}"
        else:
            head = f"– | **{e / r:.2f}×** | – | –"
        lines.append(f"| {name} | `compare --systems {','.join(systems)}` | {head} "
                     f"| {e:.2f} | {r:.2f} |")
    lines += ["", "In process, `compare` is the sum of the systems' `evaluate` times (the "
              "command loads the contests once and rates each system once)."]
    body = "\n".join(lines)
    print(body)
    if not args.no_docs:
        print(f"updated {write_section(DOC, SECTION, body, load_at_start=load0)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
