"""Seed 002's Table 3 on this machine: Podium and elo-mmr-py timed in the same run.

Rates the paper's 1087 Codeforces contests (sorted by time) with each system of
the paper's Table 3, every run in a fresh process, Podium and the reference one
after the other in the same invocation, and writes the table into
``docs/evaluation.md`` (block ``table3``).  Both libraries run with their
default parameters, so both sides do the same work.

elo-mmr-py's Codeforces and TopCoder systems compare all pairs of every round
(about an hour and 40 minutes on the whole history on 2 cores); they are timed,
with Podium's, on the first ``--prefix`` contests instead.

    python benchmarks/table3.py                 # about 10 minutes on 2 cores
    python benchmarks/table3.py -n 200 --prefix 100 --no-write   # a quick look
"""

from __future__ import annotations

import argparse
import sys

from _report import data_dir, load_average, write_section
from bench_codeforces import run

#: Seed 002, Table 3 (seconds, 24 cores) for the systems below.
PAPER = {"cfsys": 212.9, "tcsys": 72.5, "trueskill": 67.2, "mmx": 31.4, "mmr": 35.4}
LABEL = {"cfsys": "Codeforces sys", "tcsys": "TopCoder sys", "trueskill": "TrueSkill",
         "mmx": "Elo-MMχ", "mmr": "Elo-MMR(ρ)"}
#: The reference system timed next to each row: its subsampled Elo-MMR variants
#: (its exact ones are all pairs) and its own implementation of the baselines.
REFERENCE = {"cfsys": "cfsys", "tcsys": "tcsys", "trueskill": "trueskill",
             "mmx": "mmx-fast", "mmr": "mmr-fast"}
ALL_PAIRS = ("cfsys", "tcsys")


def _ratio(ref_s: float, podium_s: float) -> str:
    r = ref_s / podium_s
    return f"{r:.1f}× faster" if r >= 1 else f"{1 / r:.1f}× slower"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=1087)
    ap.add_argument("--prefix", type=int, default=300,
                    help="contests for the reference's all-pairs systems (cfsys, tcsys)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    data = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    if not data.exists():
        print(f"error: {data} not found (set PODIUM_DATA_DIR)", file=sys.stderr)
        return 2
    load0 = load_average()
    rows = []
    for system in PAPER:
        n_ref = args.prefix if system in ALL_PAIRS else args.n
        print(f"{system}: podium ({args.n}) ...", file=sys.stderr, flush=True)
        pod = run("podium", system, data, args.n)
        pod_fast = None
        if system in ("mmr", "mmx"):
            print(f"{system}-fast: podium ({args.n}) ...", file=sys.stderr, flush=True)
            pod_fast = run("podium", f"{system}-fast", data, args.n)
        pod_prefix = run("podium", system, data, n_ref) if n_ref != args.n else pod
        print(f"{REFERENCE[system]}: elo-mmr-py ({n_ref}) ...", file=sys.stderr, flush=True)
        ref = run("reference", REFERENCE[system], data, n_ref)
        rows.append((system, pod, pod_fast, pod_prefix, ref, n_ref))

    lines = [
        f"Seconds to rate the first {args.n} Codeforces contests "
        f"({rows[0][1]['rows']:,} player-rounds), rating loop only (loading excluded), "
        "default parameters on both sides, each run in a fresh process.",
        "",
        "| system | Podium (s) | Podium subsampled (s) | paper, 24 cores (s) "
        "| elo-mmr-py, same run (s) | Podium vs elo-mmr-py |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for system, pod, pod_fast, pod_prefix, ref, n_ref in rows:
        fast = f"{pod_fast['rate_s']:.1f}" if pod_fast else "–"
        if n_ref == args.n:
            refcell = f"{ref['rate_s']:.1f} (`{REFERENCE[system]}`)"
            base = pod_fast if pod_fast else pod
            ratio = _ratio(ref["rate_s"], base["rate_s"])
        else:
            refcell = (f"first {n_ref} contests: {ref['rate_s']:.1f} "
                       f"(Podium {pod_prefix['rate_s']:.2f})")
            ratio = f"{_ratio(ref['rate_s'], pod_prefix['rate_s'])} on {n_ref}"
        lines.append(f"| {LABEL[system]} (`{system}`) | {pod['rate_s']:.1f} | {fast} | "
                     f"{PAPER[system]} | {refcell} | {ratio} |")
    lines += [
        "",
        "The speed-up for Elo-MMR and Elo-MMχ compares Podium's subsampled variant with the "
        "reference's (the same approximation); Podium's exact systems (every opponent, the "
        "whole history) are in the first column. elo-mmr-py's Codeforces and TopCoder "
        f"systems compare all pairs of every round, so both libraries ran them on the first "
        f"{args.prefix} contests only.",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("docs/evaluation.md", "table3", body, load_at_start=load0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
