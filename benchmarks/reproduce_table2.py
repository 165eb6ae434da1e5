"""Reproduce seed 002's Tables 2 and 3: tune on the first 10 %, score on the rest.

For every data set (Codeforces contests 0..1086, Reddit, the synthetic set of
Sec. 6.1) and every system of the paper's table that Podium has (Codeforces
sys = ``cfsys``, TopCoder sys = ``tcsys``, ``trueskill``, Elo-MMχ = ``mmx``,
Elo-MMR(ρ) = ``mmr``), this script

1. tunes the system's parameters with ``podium.evaluation.tune`` on the first
   10 % of the contests (optuna TPE, ``--trials`` trials, objective pair
   inversion; the study is kept in ``OUT/tune.db``),
2. rates the whole history with the best parameters and scores every contest
   after the first 10 % (``podium.evaluation.evaluate``),
3. writes ``OUT/<dataset>/<system>.json`` (the parameter file), the results as
   JSON lines in ``OUT/results.jsonl``, and prints the Markdown tables.

Usage::

    python benchmarks/reproduce_table2.py --out table2-run --trials 60
    python benchmarks/reproduce_table2.py --datasets reddit --systems mmr,cfsys --trials 10

The same figures come from the CLI, one system at a time::

    podium tune  DATA -n 1087 --system mmr --trials 60 --out mmr.json
    podium compare DATA -n 1087 --systems cfsys,tcsys,trueskill,mmx,mmr --params-dir DIR

Data sets are read from ``$PODIUM_DATA_DIR``, else ``../shared/datasets`` relative to
the checkout (``--data`` changes the root);
a data set whose file is absent is skipped with a message.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from _report import data_dir

from podium.core.contest import Contest
from podium.evaluation import evaluate, tune, write_params_file
from podium.evaluation.cli import markdown_table
from podium.io import load_contests
from podium.io.synthetic import synthetic_contests

#: The published figures (seed 002, Table 2): pair inversion / rank deviation.
PUBLISHED: dict[str, dict[str, tuple[float, float]]] = {
    "codeforces": {"cfsys": (78.3, 14.9), "tcsys": (78.5, 15.1), "trueskill": (61.7, 25.4),
                   "mmx": (78.5, 14.8), "mmr": (78.6, 14.7)},
    "reddit": {"cfsys": (61.5, 27.3), "tcsys": (61.4, 27.4), "trueskill": (61.5, 27.2),
               "mmx": (61.6, 27.3), "mmr": (61.6, 27.3)},
    "synthetic": {"cfsys": (81.7, 12.9), "tcsys": (81.7, 12.8), "trueskill": (81.3, 13.1),
                  "mmx": (81.7, 12.8), "mmr": (81.7, 12.8)},
}
#: Published run times on Codeforces (seed 002, Table 3; 24 cores), seconds.
PUBLISHED_SECONDS = {"cfsys": 212.9, "tcsys": 72.5, "trueskill": 67.2, "mmx": 31.4, "mmr": 35.4}
SYSTEMS = ("cfsys", "tcsys", "trueskill", "mmx", "mmr")


def load_dataset(name: str, root: Path, synthetic_seed: int) -> list[Contest] | None:
    if name == "codeforces":
        path = root / "codeforces" / "cache_codeforces.tar.gz"
        if not path.exists():
            print(f"skip codeforces: {path} not found", file=sys.stderr)
            return None
        return list(load_contests(path, limit=1087).contests)
    if name == "reddit":
        path = root / "reddit" / "cache_reddit.tar.gz"
        if not path.exists():
            print(f"skip reddit: {path} not found", file=sys.stderr)
            return None
        return list(load_contests(path).contests)
    if name == "synthetic":
        return synthetic_contests(10_000, 50, seed=synthetic_seed)
    raise SystemExit(f"unknown data set {name!r}")


def report(results: Path) -> str:
    """Markdown tables of ``results.jsonl`` (latest record per data set and system), each
    figure next to the published one."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for line in results.read_text().splitlines():
        rec = json.loads(line)
        latest[(rec["dataset"], rec["system"])] = rec
    out = []
    for ds in dict.fromkeys(k[0] for k in latest):
        out += [f"\n#### {ds}\n",
                "| system | pair inv. | paper | rank dev. | paper | seconds | tuning s |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for name in SYSTEMS:
            rec = latest.get((ds, name))
            if rec is None:
                continue
            pub = rec.get("published") or (None, None)
            out.append(
                f"| {name} | {rec['pair_inv']:.2f} | {pub[0] if pub[0] else '–'} | "
                f"{rec['rank_dev']:.2f} | {pub[1] if pub[1] else '–'} | "
                f"{rec['seconds']:.1f} | {rec.get('tune_seconds', 0):.0f} |"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="table2-run", help="output directory")
    ap.add_argument("--data", default=str(data_dir()),
                    help="datasets root (default: $PODIUM_DATA_DIR, else ../shared/datasets)")
    ap.add_argument("--datasets", default="codeforces,reddit,synthetic")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--trials", type=int, default=60, help="optuna trials per system")
    ap.add_argument("--train-frac", type=float, default=0.1)
    ap.add_argument("--synthetic-seed", type=int, default=0)
    ap.add_argument("--synthetic-tuning", choices=["independent", "prefix"],
                    default="independent",
                    help="tune the synthetic systems on an independent draw of 1,000 players "
                    "(default, as the paper's authors did) or on the first 10 %%")
    ap.add_argument("--no-tune", action="store_true",
                    help="use parameter files already in OUT/<dataset>/ (or the defaults)")
    ap.add_argument("--report", action="store_true",
                    help="only print the tables of OUT/results.jsonl")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.report:
        print(report(out / "results.jsonl"))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{(out / 'tune.db').resolve()}"
    systems = [s for s in args.systems.split(",") if s]
    all_records: list[dict[str, Any]] = []
    for ds in [d for d in args.datasets.split(",") if d]:
        contests = load_dataset(ds, Path(args.data), args.synthetic_seed)
        if contests is None:
            continue
        (out / ds).mkdir(exist_ok=True)
        records = []
        for name in systems:
            tag = f"{ds}-{args.synthetic_tuning}" if ds == "synthetic" else ds
            (out / tag).mkdir(exist_ok=True)
            pfile = out / tag / f"{name}.json"
            params: dict[str, Any] = {}
            tune_s = 0.0
            if not args.no_tune:
                t0 = time.perf_counter()
                if ds == "synthetic" and args.synthetic_tuning == "independent":
                    # As the paper's authors did (their grid search ran on a reduced
                    # synthetic set): tune on an independent, smaller draw of the same
                    # model, every round, players with 5+ earlier contests.
                    draw = synthetic_contests(1000, 50, seed=args.synthetic_seed + 1)
                    res = tune(draw, name, trials=args.trials, train_contests=len(draw),
                               storage=storage, study_name=f"{ds}-indep-{name}-pair_inv")
                else:
                    # The first 10 % of the synthetic set is 5 rounds: nobody has 5
                    # earlier contests there, so its trials score returning players.
                    res = tune(contests, name, trials=args.trials,
                               train_frac=args.train_frac, storage=storage,
                               study_name=f"{ds}-{name}-pair_inv",
                               min_history=1 if ds == "synthetic" else 5)
                tune_s = time.perf_counter() - t0
                params = res.best_params
                write_params_file(pfile, name, params, extra={"tuning": {
                    "objective": "pair_inv", "train_value": res.best_value,
                    "train_contests": res.train_contests, "trials": res.trials}})
            elif pfile.exists():
                params = json.loads(pfile.read_text())["params"]
            ev = evaluate(contests, name, params=params, train_frac=args.train_frac)
            rec = ev.to_dict()
            rec.update(dataset=tag, tune_seconds=round(tune_s, 1),
                       published=PUBLISHED.get(ds, {}).get(name),
                       date=dt.date.today().isoformat(), machine=platform.node())
            records.append(rec)
            with open(out / "results.jsonl", "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            pub = rec["published"]
            print(f"{ds} {name}: pair inv. {rec['pair_inv']:.2f} (paper {pub and pub[0]}), "
                  f"rank dev. {rec['rank_dev']:.2f} (paper {pub and pub[1]}), "
                  f"{rec['seconds']:.1f} s, tuning {tune_s:.0f} s", file=sys.stderr, flush=True)
        all_records.extend(records)
        print(f"\n### {ds}\n")
        print(markdown_table(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
