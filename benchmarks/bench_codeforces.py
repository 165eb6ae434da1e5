"""Speed and memory of Podium vs the Rust reference (elo-mmr-py) on real Codeforces data.

Rates indices 0..N-1 (default 1087: the paper's 1087 contests, 3.26 M
player-rounds) of ``../shared/datasets/codeforces/cache_codeforces.tar.gz``,
sorted by time (index 820 is out of order and elo-mmr-py refuses that), with
each system in a fresh subprocess, and prints wall-clock seconds and peak
resident memory for each, plus the agreement of final ratings where both
libraries implement the system.

    python benchmarks/bench_codeforces.py                      # all systems
    python benchmarks/bench_codeforces.py --systems mmr,mmr-fast -n 300
    python benchmarks/bench_codeforces.py --json results.json

Timing: "rate" is the rating loop only (contests already in memory); Podium's
one-off JIT cache load is reported apart as "warm-up".  "peak MB" is the peak
RSS of the whole process (data included).  Needs ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "datasets" / "codeforces" / "cache_codeforces.tar.gz"
REF_SYSTEMS = {"mmr", "mmr-fast", "mmx", "mmx-fast"}

CHILD = r'''
import json, re, resource, sys, tarfile, time
kind, system, data, n, out = sys.argv[1:6]
n = int(n)
if kind == "podium":
    from podium.io import load_contests
    t = time.perf_counter()
    hist = load_contests(data, limit=n, sort_by_time=True)
    contests = hist.contests
    load_s = time.perf_counter() - t
    rows = sum(len(c) for c in contests)
    from podium import Contest, Rater
    t = time.perf_counter()
    Rater(system).add(Contest([("a", 0, 0), ("b", 1, 1)]))  # load the JIT cache
    warm = time.perf_counter() - t
    r = Rater(system)
    t = time.perf_counter()
    for c in contests:
        r.add(c)
    rate_s = time.perf_counter() - t
    df = r.ratings(sort=False)
    ratings = dict(zip(df["handle"], zip(df["mu"].tolist(), df["sigma"].tolist())))
else:
    # the reference's users: json per archive member -> elo_mmr_py.Contest, sorted by time
    import elo_mmr_py as e
    t = time.perf_counter()
    found = {}
    with tarfile.open(data, "r|gz") as tf:
        for m in tf:
            hit = re.search(r"(\d+)\.json$", m.name)
            if not (m.isfile() and hit) or int(hit.group(1)) >= n:
                continue
            d = json.load(tf.extractfile(m))
            found[int(hit.group(1))] = e.Contest(
                [tuple(s) for s in d["standings"]], name=d["name"],
                time_seconds=d["time_seconds"], url=d.get("url"))
    ref = [found[i] for i in sorted(found, key=lambda i: (found[i].time_seconds, i))]
    del found
    rows = sum(len(c.standings) for c in ref)
    load_s = time.perf_counter() - t
    warm = 0.0
    t = time.perf_counter()
    res = e.rate_latest(ref, system)
    rate_s = time.perf_counter() - t
    ratings = {k: (v.mu, v.sig) for k, v in res.items()}
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
with open(out, "w") as fh:
    json.dump({"kind": kind, "system": system, "contests": n, "rows": rows, "load_s": load_s,
               "warm_s": warm, "rate_s": rate_s, "peak_mb": peak, "ratings": ratings}, fh)
'''


def run(kind: str, system: str, data: Path, n: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    try:
        subprocess.run([sys.executable, "-c", CHILD, kind, system, str(data), str(n), out],
                       check=True)
        with open(out) as fh:
            return json.load(fh)
    finally:
        os.unlink(out)


def agreement(a: dict, b: dict) -> tuple[float, float]:
    diffs = sorted(abs(a[h][0] - b[h][0]) for h in b)
    worst = diffs[-1] if diffs else 0.0
    within = sum(d <= 0.05 for d in diffs) / max(len(diffs), 1)
    return worst, within


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("-n", type=int, default=1087, help="contests (default 1087)")
    ap.add_argument("--systems", default="mmr,mmr-fast,mmx,mmx-fast")
    ap.add_argument("--reference", default="mmr-fast,mmx-fast",
                    help="elo-mmr-py systems to time (its exact 'mmr' is all-pairs: hours)")
    ap.add_argument("--exact-n", type=int, default=300,
                    help="also time both libraries' exact 'mmr' on the first N contests "
                    "(elo-mmr-py's is all-pairs, O(N^2) per round; 0 to skip)")
    ap.add_argument("--json", type=Path, help="write the measurements here")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the Codeforces dataset lives in ../shared)")
        return 0
    results = []
    for system in [s for s in args.reference.split(",") if s]:
        print(f"elo-mmr-py {system} ...", file=sys.stderr, flush=True)
        results.append(run("reference", system, args.data, args.n))
    for system in [s for s in args.systems.split(",") if s]:
        print(f"podium {system} ...", file=sys.stderr, flush=True)
        results.append(run("podium", system, args.data, args.n))
    ref = {r["system"]: r for r in results if r["kind"] == "reference"}
    print(f"\n{args.n} Codeforces contests, {results[0]['rows']:,} player-rounds, "
          f"{os.cpu_count()} CPUs\n")
    print("| library | system | rate s | warm-up s | load s | peak MB | vs elo-mmr-py mmr-fast "
          "| max abs(mu diff) vs reference same system | share within 0.05 |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = ref.get("mmr-fast")
    for r in results:
        lib = "podium" if r["kind"] == "podium" else "elo-mmr-py"
        speed = f"{base['rate_s'] / r['rate_s']:.2f}x" if base else ""
        agree = ""
        if r["kind"] == "podium" and r["system"] in ref:
            worst, within = agreement(r["ratings"], ref[r["system"]]["ratings"])
            agree = f"| {worst:.3g} | {100 * within:.3f}%"
        else:
            agree = "| | "
        print(f"| {lib} | {r['system']} | {r['rate_s']:.2f} | {r['warm_s']:.2f} | "
              f"{r['load_s']:.2f} | {r['peak_mb']:.0f} | {speed} {agree} |")
    if args.exact_n:
        print(f"elo-mmr-py mmr (exact) on {args.exact_n} contests ...", file=sys.stderr)
        ref_exact = run("reference", "mmr", args.data, args.exact_n)
        pod_exact = run("podium", "mmr", args.data, args.exact_n)
        worst, _ = agreement(pod_exact["ratings"], ref_exact["ratings"])
        print(f"\nexact mmr, first {args.exact_n} contests ({ref_exact['rows']:,} player-rounds):"
              f" elo-mmr-py {ref_exact['rate_s']:.2f} s, podium {pod_exact['rate_s']:.2f} s "
              f"({ref_exact['rate_s'] / pod_exact['rate_s']:.1f}x); "
              f"max abs(mu diff) {worst:.2g}")
        results += [ref_exact | {"system": "mmr (exact subset)"},
                    pod_exact | {"system": "mmr (exact subset)"}]
    if args.json:
        slim = [{k: v for k, v in r.items() if k != "ratings"} for r in results]
        args.json.write_text(json.dumps(slim, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
