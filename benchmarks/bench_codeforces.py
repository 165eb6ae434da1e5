"""Speed and memory of Podium vs the Rust reference (elo-mmr-py) on real Codeforces data.

Rates indices 0..N-1 (default 1087: the paper's 1087 contests, 3.26 M
player-rounds) of ``codeforces/cache_codeforces.tar.gz`` in the shared data sets
(``$PODIUM_DATA_DIR``, else ``../shared/datasets``), sorted by time (index 820 is
out of order and elo-mmr-py refuses that), with each system in a fresh
subprocess, and prints wall-clock seconds and peak resident memory for each,
plus the agreement of final ratings where both libraries implement the system.

    python benchmarks/bench_codeforces.py                      # all systems
    python benchmarks/bench_codeforces.py --systems mmr,mmr-fast -n 300
    python benchmarks/bench_codeforces.py --json results.json

``--write-docs`` writes the table into docs/benchmarks.md, block ``--section``
(default ``rate-loop``).  The two blocks there: "rate-loop" (the default systems
against elo-mmr-py, the whole history, and the exact subset) and "other-systems"::

    python benchmarks/bench_codeforces.py --exact-n 500 --write-docs
        --json docs/benchmark-codeforces.json
    python benchmarks/bench_codeforces.py --write-docs --section other-systems
        --systems trueskill,cfsys,codeforces,glicko,bar,tcsys,elosrm,srmfix,elo-r
        --reference trueskill,cfsys,glicko,bar,tcsys -n 300 --exact-n 0

(each command on one line).

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

from _reference import CHILD_ENV
from _report import data_dir, load_average, write_section

DOC = "docs/benchmarks.md"

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
    from _reference import reference_contests
    t = time.perf_counter()
    ref = reference_contests(data, n)
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
                       check=True, env=CHILD_ENV)
        with open(out) as fh:
            return json.load(fh)
    finally:
        os.unlink(out)


def agreement(a: dict, b: dict) -> tuple[float, float]:
    diffs = sorted(abs(a[h][0] - b[h][0]) for h in b)
    worst = diffs[-1] if diffs else 0.0
    within = sum(d <= 0.05 for d in diffs) / max(len(diffs), 1)
    return worst, within


def _reference_systems() -> tuple[str, ...] | None:
    """The systems elo-mmr-py implements (None when it is not installed)."""
    try:
        import elo_mmr_py
    except ImportError:
        return None
    return tuple(getattr(elo_mmr_py, "SUPPORTED_SYSTEMS", ()))


def _ratio(podium_s: float, ref_s: float) -> str:
    """Podium's seconds over elo-mmr-py's, as the tables give it (below 1: Podium faster)."""
    return f"{podium_s / ref_s:.2f}×"


def table(results: list[dict], n: int, exact: tuple[dict, dict] | None = None) -> str:
    """Markdown: one row per Podium system, with elo-mmr-py's same system of the same run.

    A system that only the reference ran gets a row of its own; the column against
    elo-mmr-py's ``mmr-fast`` appears when that system was run.
    """
    pod = {r["system"]: r for r in results if r["kind"] == "podium"}
    ref = {r["system"]: r for r in results if r["kind"] == "reference"}
    known = _reference_systems()
    base = ref.get("mmr-fast")
    lines = [
        f"The first {n} Codeforces contests sorted by time "
        f"({results[0]['rows']:,} player-rounds), each library and system in a fresh "
        "process. The ratios come first: Podium's rating-loop seconds over elo-mmr-py's "
        "in the same run (below 1: Podium is faster), for the same system and against "
        "elo-mmr-py's `mmr-fast`; the absolute seconds and memory follow (they depend on "
        "the machine, named above). "
        + ("\"–\" in the elo-mmr-py columns: elo-mmr-py has no such system or was not "
           "asked for it (`--reference`)."
           if known is None else
           "In the elo-mmr-py columns, *none* means that elo-mmr-py has no such system, "
           "*not run* that `--reference` did not ask for it."),
        "",
    ]
    head = ["system", "Podium ÷ elo-mmr-py, same system"]
    if base is not None:
        head.append("Podium ÷ elo-mmr-py `mmr-fast`")
    head += ["Podium rate s", "elo-mmr-py rate s, same run", "warm-up s", "load s",
             "peak MB", "elo-mmr-py peak MB", "max \\|Δμ\\| vs elo-mmr-py",
             "players within 0.05"]
    lines += ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]

    def why_missing(system: str) -> str:
        if known is None:
            return "–"
        return "– (none)" if system not in known else "– (not run)"

    for system in [*pod, *[s for s in ref if s not in pod]]:
        p, r = pod.get(system), ref.get(system)
        label = f"`{system}`" if p is not None else f"`{system}` (elo-mmr-py only)"
        cells = [label, _ratio(p["rate_s"], r["rate_s"]) if p and r else
                 (why_missing(system) if p else "–")]
        if base is not None:
            cells.append(_ratio(p["rate_s"], base["rate_s"]) if p else "–")
        cells += [f"{p['rate_s']:.2f}" if p else "–", f"{r['rate_s']:.2f}" if r else "–"]
        if p is None:
            cells += ["–", "–", "–"]
        else:
            cells += [f"{p['warm_s']:.2f}", f"{p['load_s']:.2f}", f"{p['peak_mb']:.0f}"]
        cells.append(f"{r['peak_mb']:.0f}" if r else "–")
        if p is not None and r is not None:
            worst, within = agreement(p["ratings"], r["ratings"])
            cells += [f"{worst:.2g}", f"{100 * within:.3f} %"]
        else:
            cells += ["–", "–"]
        lines.append("| " + " | ".join(cells) + " |")
    if exact is not None:
        ref_exact, pod_exact = exact
        worst, _ = agreement(pod_exact["ratings"], ref_exact["ratings"])
        lines += [
            "",
            f"Exact `mmr` on the first {ref_exact['contests']} contests "
            f"({ref_exact['rows']:,} player-rounds), where elo-mmr-py's compares all pairs "
            f"of every round: Podium ÷ elo-mmr-py "
            f"**{_ratio(pod_exact['rate_s'], ref_exact['rate_s'])}** (Podium "
            f"{pod_exact['rate_s']:.2f} s, elo-mmr-py {ref_exact['rate_s']:.2f} s), final "
            f"ratings within {worst:.2g} rating points.",
        ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path,
                    default=data_dir() / "codeforces" / "cache_codeforces.tar.gz")
    ap.add_argument("-n", type=int, default=1087, help="contests (default 1087)")
    ap.add_argument("--systems", default="mmr,mmr-fast,mmx,mmx-fast")
    ap.add_argument("--reference", default="mmr-fast,mmx-fast",
                    help="elo-mmr-py systems to time (its exact 'mmr' is all-pairs: hours)")
    ap.add_argument("--exact-n", type=int, default=300,
                    help="also time both libraries' exact 'mmr' on the first N contests "
                    "(elo-mmr-py's is all-pairs, O(N^2) per round; 0 to skip)")
    ap.add_argument("--json", type=Path, help="write the measurements here")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"write the table into {DOC} (block --section)")
    ap.add_argument("--section", default="rate-loop",
                    help=f"the block of {DOC} that --write-docs fills (default rate-loop; "
                    "other-systems for the baselines)")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (set PODIUM_DATA_DIR)")
        return 0
    load0 = load_average()
    results = []
    for system in [s for s in args.reference.split(",") if s]:
        print(f"elo-mmr-py {system} ...", file=sys.stderr, flush=True)
        results.append(run("reference", system, args.data, args.n))
    for system in [s for s in args.systems.split(",") if s]:
        print(f"podium {system} ...", file=sys.stderr, flush=True)
        results.append(run("podium", system, args.data, args.n))
    exact = None
    if args.exact_n:
        print(f"elo-mmr-py mmr (exact) on {args.exact_n} contests ...", file=sys.stderr)
        exact = (run("reference", "mmr", args.data, args.exact_n),
                 run("podium", "mmr", args.data, args.exact_n))
    body = table(results, args.n, exact)
    print(body)
    if exact is not None:
        results += [exact[0] | {"system": "mmr (exact subset)"},
                    exact[1] | {"system": "mmr (exact subset)"}]
    if args.json:
        slim = [{k: v for k, v in r.items() if k != "ratings"} for r in results]
        args.json.write_text(json.dumps(slim, indent=2))
    if args.write_docs:
        write_section(DOC, args.section, body, load_at_start=load0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
