"""The causal forecast of the whole-history systems against the filters (issue 29,
item 5), written into docs/history.md (one block per data set,
``<!-- bench:history-causal-NAME -->``).

Each data set is scored as ``podium eval`` scores it (first 10 % rated, not scored;
players with 5+ earlier contests): the filters (``mmr``, ``mmr-plus``) by their ratings
before each contest, the whole-history systems by ``--protocol causal``
(:func:`podium.evaluation.causal.evaluate_causal`: the ratings from smoothing only the
earlier contests).  The differences against ``mmr`` (and ``mmr-plus``) come with a
paired bootstrap over the scored contests (``benchmarks/mmr_plus_headroom.py``'s:
2,000 draws, the same draw for both, player-weighted pair inversion).

Usage::

    python benchmarks/causal_history.py --dataset synthetic --dataset reddit \\
        --dataset football --dataset codeforces --cf-contests 120 --write-docs

Data sets are read from ``$PODIUM_DATA_DIR``, else ``../shared/datasets``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average, write_section  # noqa: E402
from bench_history import football_history  # noqa: E402
from mmr_plus_headroom import DRAWS, paired_bootstrap  # noqa: E402

from podium import Contest  # noqa: E402
from podium.evaluation.causal import evaluate_causal  # noqa: E402
from podium.evaluation.runner import evaluate  # noqa: E402
from podium.history.engines import is_history_system  # noqa: E402
from podium.io import load_contests, synthetic_contests  # noqa: E402

DOC = "docs/history.md"


def load(name: str, args: argparse.Namespace) -> list[Contest]:
    root = data_dir()
    if name == "synthetic":
        return synthetic_contests(args.synthetic_players, 50, seed=0)
    if name == "reddit":
        return list(load_contests(root / "reddit" / "cache_reddit.tar.gz").contests)
    if name == "codeforces":
        return list(load_contests(root / "codeforces" / "cache_codeforces.tar.gz",
                                  limit=args.cf_contests).contests)
    if name == "football":
        h, _ = football_history(root / "football")
        return [Contest([(f"t{h.player[2 * c]}", 0, int(h.team_place[2 * c + 1] == 0)),
                         (f"t{h.player[2 * c + 1]}", int(h.team_place[2 * c + 1]), 1)],
                        name=f"match {c}", time_seconds=int(h.time[c]) * 86400)
                for c in range(h.n_contests)]
    raise SystemExit(f"unknown data set {name!r}")


def score(contests: list[Contest], system: str, params: dict[str, Any],
          refit_every: int) -> tuple[Any, dict[str, float], float]:
    t0 = time.perf_counter()
    if is_history_system(system):
        res = evaluate_causal(contests, system, params=params, extended=False,
                              refit_every=refit_every)
    else:
        res = evaluate(contests, system, params=params, extended=False)
    seconds = time.perf_counter() - t0
    df = res.per_round[["index", "n_experienced", "pair_inv"]].dropna().set_index("index")
    return df, res.metrics, seconds


def section(name: str, args: argparse.Namespace) -> str:
    contests = load(name, args)
    systems = [s for s in args.systems.split(",") if s]
    if name == "football":  # individual 1v1 matches with draws: ttt needs p_draw
        systems = [s for s in systems if s != "mmr-plus"]
    rows, rounds = [], {}
    runs: list[tuple[str, str, dict[str, Any], int]] = []
    for system in systems:
        if system == "mmr-smooth":
            for v in args.smooth.split(","):
                sw, tol, *spread = v.split(":")
                params: dict[str, Any] = {"update_sweeps": int(sw), "tol": float(tol)}
                label = f"mmr-smooth, {sw} sweep(s) per contest, tol {tol}"
                if spread:
                    params["update_spread"] = float(spread[0])
                    label += f", threshold {spread[0]} tol"
                runs.append((label, system, params, 1))
        elif system in ("ttt", "whr"):
            for k in args.refits.split(","):
                refit = max(1, len(contests) // int(k))
                runs.append((f"{system}, refit every {refit}", system,
                             {"p_draw": 0.25} if system == "ttt" else
                             {"tol": args.whr_tol, "max_iter": 1000}, refit))
        else:
            runs.append((system, system, {}, 1))
    for label, system, params, refit in runs:
        try:
            df, m, secs = score(contests, system, params, refit)
        except Exception as exc:  # noqa: BLE001 - a row that says why
            print(f"  {name} {label}: {exc}", file=sys.stderr, flush=True)
            rows.append(f"| {label} | – | – | – | {type(exc).__name__}: {exc} |")
            continue
        rounds[label] = df
        how = "causal" if is_history_system(system) else "filter"
        rows.append(f"| {label} | {m['pair_inv']:.3f} | {m['rank_dev']:.3f} | "
                    f"{secs:.1f} | {how} |")
        print(f"  {name} {label}: {m['pair_inv']:.3f} / {m['rank_dev']:.3f} "
              f"({secs:.1f} s)", file=sys.stderr, flush=True)
    boot = []
    for a in rounds:
        for b in ("mmr", "mmr-plus"):
            if a != b and b in rounds and a not in ("mmr", "mmr-plus"):
                v, se, lo, hi = paired_bootstrap(rounds[a], rounds[b])
                boot.append(f"| {a} − `{b}` | {v:+.3f} | {se:.3f} | {lo:+.3f} … {hi:+.3f} |")
    n_rows = sum(len(c) for c in contests)
    body = (f"{name}: {len(contests):,} contests, {n_rows:,} player-rounds; first 10 % "
            "rated but not scored; players with 5+ earlier contests.\n\n"
            "| system | pair inv. | rank dev. | seconds | protocol |\n|---|---:|---:|---:|---|\n"
            + "\n".join(rows)
            + "\n\nPaired bootstrap of the pair inversion over the scored contests "
            f"({DRAWS} draws):\n\n| difference | value | SE | 95 % interval |\n"
            "|---|---:|---:|---|\n" + "\n".join(boot))
    print(body, flush=True)
    return body


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", choices=["synthetic", "reddit",
                                                           "football", "codeforces"])
    ap.add_argument("--systems", default="mmr,mmr-plus,mmr-smooth,whr,ttt")
    ap.add_argument("--cf-contests", type=int, default=1087)
    ap.add_argument("--synthetic-players", type=int, default=10_000)
    ap.add_argument("--smooth", default="1:0.1",
                    help="mmr-smooth's runs: SWEEPS:TOL[:SPREAD] per contest, "
                         "comma-separated (SPREAD: the update's propagation threshold in "
                         "units of TOL, default the system's; 1 is the rule of the "
                         "blocks recorded before it existed)")
    ap.add_argument("--refits", default="20",
                    help="ttt/whr: smooth anew this many times over the history "
                    "(comma-separated: one run each)")
    ap.add_argument("--whr-tol", type=float, default=1e-3,
                    help="whr: largest gradient component at the end (default 1e-3, the "
                    "package's auto_iterate precision)")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    command = "python benchmarks/causal_history.py " + " ".join(argv or sys.argv[1:])
    for name in args.dataset or ["synthetic", "reddit", "football", "codeforces"]:
        start = load_average()
        body = section(name, args)
        if args.write_docs:
            write_section(DOC, f"history-causal-{name}", body, load_at_start=start,
                          command=command)


if __name__ == "__main__":
    main()
