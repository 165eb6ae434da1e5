"""Speed of the paper's baselines (tcsys, glicko, bar) against elo-mmr-py on Codeforces.

Rates the first N contests (default 1087, the paper's history) of the shared
Codeforces data set, sorted by time, once per library and system, each run in a
fresh subprocess, and prints the rating-loop seconds of both and the largest
difference of final mu and sigma.

    python benchmarks/bench_baselines.py                         # all three, 1087 contests
    python benchmarks/bench_baselines.py --systems glicko -n 300 --json out.json

The reference compares all pairs of every round (O(N^2)); on the whole history it
takes tens of minutes per system on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _report import data_dir

DEFAULT_DATA = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
SYSTEMS = ("tcsys", "glicko", "bar")

CHILD = r'''
import json, sys, time
kind, system, data, n, out = sys.argv[1:6]
from podium.io import load_contests
contests = load_contests(data, limit=int(n), sort_by_time=True).contests
if kind == "podium":
    from podium import Contest, Rater
    Rater(system).add(Contest([("a", 0, 0), ("b", 1, 1)]))  # load the JIT cache
    r = Rater(system)
    t = time.perf_counter()
    for c in contests:
        r.add(c)
    rate_s = time.perf_counter() - t
    df = r.ratings(sort=False)
    ratings = dict(zip(df["handle"], zip(df["mu"].tolist(), df["sigma"].tolist())))
else:
    import elo_mmr_py as e
    ec = [e.Contest(c.standings, name=c.name, time_seconds=c.time_seconds) for c in contests]
    t = time.perf_counter()
    res = e.rate_latest(ec, system)
    rate_s = time.perf_counter() - t
    ratings = {h: (p.mu, p.sig) for h, p in res.items()}
json.dump({"rate_s": rate_s, "rows": sum(len(c) for c in contests), "ratings": ratings},
          open(out, "w"))
'''


def run(kind: str, system: str, data: str, n: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as tmp:
        subprocess.run([sys.executable, "-c", CHILD, kind, system, data, str(n), tmp.name],
                       check=True)
        return json.load(open(tmp.name))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("-n", type=int, default=1087, help="number of contests (default 1087)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    rows = []
    for system in args.systems.split(","):
        pod = run("podium", system, args.data, args.n)
        print(f"podium     {system:7s} {pod['rate_s']:9.2f} s", flush=True)
        ref = run("reference", system, args.data, args.n)
        print(f"elo-mmr-py {system:7s} {ref['rate_s']:9.2f} s", flush=True)
        a, b = pod["ratings"], ref["ratings"]
        assert sorted(a) == sorted(b), "different sets of players"
        dmu = max(abs(a[h][0] - b[h][0]) for h in a)
        dsig = max(abs(a[h][1] - b[h][1]) for h in a)
        rows.append({"system": system, "contests": args.n, "player_rounds": pod["rows"],
                     "podium_s": pod["rate_s"], "reference_s": ref["rate_s"],
                     "speedup": ref["rate_s"] / pod["rate_s"], "max_dmu": dmu,
                     "max_dsigma": dsig})
        print(f"  speed-up {rows[-1]['speedup']:.1f}x, max |dmu| {dmu:.2e}, "
              f"max |dsigma| {dsig:.2e}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
