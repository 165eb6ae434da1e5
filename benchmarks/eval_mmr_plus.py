"""MMR-plus against Elo-MMR: the comparison and the ablation of docs/mmr-plus.md.

For every data set -- Codeforces contests 0..1086, Reddit, the synthetic set of
seed 002's Sec. 6.1 (10,000 players, 50 rounds, seed 0) and a *lobby* set drawn from a
different model (:func:`lobby_contests`) -- this script

1. tunes ``mmr`` and ``mmr-plus`` (Elo-MMR's ``weight_limit``, ``sig_limit``, ``rho``;
   MMR-plus's ingredients stay at its preset) with ``podium.evaluation.tune`` as
   ``benchmarks/reproduce_table2.py`` does: the first 10 % of the contests (Codeforces,
   Reddit) or an independent, smaller draw of the same model (synthetic, lobbies:
   their first 10 % has nobody with 5 earlier contests);
2. rates every history with Elo-MMR's defaults, Elo-MMR tuned, MMR-plus's preset,
   MMR-plus tuned and the ablation rows (each ingredient of the preset switched off,
   W grouped otherwise, each rejected ingredient switched on), scoring every contest
   after the first 10 %
   (``podium.evaluation.evaluate``: the paper's pair inversion and rank deviation,
   [Batty2026]'s L1/L2, Kendall's tau and Spearman's rho);
3. appends every result to ``OUT/results.jsonl`` and writes the tables into
   docs/mmr-plus.md (block ``<!-- bench:mmr-plus -->``).

Usage::

    python benchmarks/eval_mmr_plus.py --out /tmp/mmr-plus-run --trials 40
    python benchmarks/eval_mmr_plus.py --out /tmp/mmr-plus-run --report   # tables only

Each row is also one CLI command (the tables say which), e.g.::

    podium compare DATA -n 1087 --systems mmr,mmr-plus
    podium eval DATA -n 1087 --system mmr-plus --set trend_rate=0

Data sets are read from ``$PODIUM_DATA_DIR``, else ``../shared/datasets`` relative to the
checkout; a missing one is skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _report import data_dir, load_average, write_section

from podium.core.contest import Contest
from podium.evaluation import evaluate, tune, write_params_file
from podium.io import load_contests
from podium.io.synthetic import synthetic_contests

DOC = "docs/mmr-plus.md"

#: (label, system, parameters, CLI flags) of every row; "tuned" rows read OUT/<ds>/<system>.json
ROWS: list[tuple[str, str, dict[str, Any], str]] = [
    ("Elo-MMR defaults", "mmr", {}, "--system mmr"),
    ("Elo-MMR tuned", "mmr", {"tuned": True}, "--system mmr --params DIR/mmr.json"),
    ("MMR-plus (preset)", "mmr-plus", {}, "--system mmr-plus"),
    ("MMR-plus tuned", "mmr-plus", {"tuned": True},
     "--system mmr-plus --params DIR/mmr-plus.json"),
    ("− trend (T off)", "mmr-plus", {"trend_rate": 0.0}, "--system mmr-plus --set trend_rate=0"),
    ("− reliability weight (R off)", "mmr-plus", {"reliability_ref": None},
     "--system mmr-plus --set reliability_ref=null"),
    ("− drift by whiteness (W off)", "mmr-plus", {"white_rate": 0.0},
     "--system mmr-plus --set white_rate=0"),
    ("W by everybody (one multiplier)", "mmr-plus", {"white_by": "all"},
     "--system mmr-plus --set white_by=all"),
    ("W by days since the last round", "mmr-plus", {"white_by": "gap"},
     "--system mmr-plus --set white_by=gap"),
    ("+ field-size weight (F)", "mmr-plus", {"size_ref": 1000.0, "size_power": 0.75},
     "--system mmr-plus --set size_ref=1000 --set size_power=0.75"),
    ("+ learned newcomer prior (N)", "mmr-plus", {"noob_memory": 2000.0},
     "--system mmr-plus --set noob_memory=2000"),
    ("+ clip of bad rounds (C)", "mmr-plus", {"clip_below": 1.5},
     "--system mmr-plus --set clip_below=1.5"),
    ("+ drift per day (D)", "mmr-plus", {"drift_per_day": 10.0},
     "--system mmr-plus --set drift_per_day=10"),
    ("+ volatility (V)", "mmr-plus", {"vol_rate": 0.3}, "--system mmr-plus --set vol_rate=0.3"),
    ("+ drift by rating level (L)", "mmr-plus", {"level_memory": 1000.0},
     "--system mmr-plus --set level_memory=1000"),
    ("+ spread by rating level (L′)", "mmr-plus", {"level_memory": 1000.0, "level_spread": True},
     "--system mmr-plus --set level_memory=1000 --set level_spread=true"),
]

PUBLISHED = {"codeforces": (78.6, 14.7), "reddit": (61.6, 27.3), "synthetic": (81.7, 12.8)}


def lobby_contests(n_players: int = 3000, n_rounds: int = 3000, lobby: int = 10, *,
                   seed: int = 0) -> list[Contest]:
    """The "lobby" data set: a model other than seed 002's synthetic one.

    ``n_players`` players with skills N(1500, 300^2); each round is a lobby of ``lobby``
    players drawn at random; a performance is the skill plus *logistic* noise of
    standard deviation 200 (the paper's model is normal); every participant's skill
    then moves by N(0, 20^2) (drift per game played, not per round of the history).
    Rounds are an hour apart; no ties.
    """
    rng = np.random.default_rng(seed)
    skill = rng.normal(1500.0, 300.0, n_players)
    scale = 200.0 * np.sqrt(3.0) / np.pi  # logistic scale of sd 200
    out = []
    for t in range(n_rounds):
        who = rng.choice(n_players, size=lobby, replace=False)
        perf = skill[who] + rng.logistic(0.0, scale, lobby)
        order = np.argsort(-perf, kind="stable")
        out.append(Contest.from_places([f"l{k}" for k in who[order]],
                                       list(range(1, lobby + 1)), name=f"lobby {t}",
                                       time_seconds=1_600_000_000 + 3600 * t))
        skill[who] += rng.normal(0.0, 20.0, lobby)
    return out


def load_dataset(name: str, root: Path) -> list[Contest] | None:
    """A data set by name, or ``None`` (with a message) when its file is absent."""
    if name in ("codeforces", "reddit"):
        path = root / name / f"cache_{name}.tar.gz"
        if not path.exists():
            print(f"skip {name}: {path} not found", file=sys.stderr)
            return None
        return list(load_contests(path, limit=1087 if name == "codeforces" else None).contests)
    if name == "synthetic":
        return synthetic_contests(10_000, 50, seed=0)
    if name == "lobbies":
        return lobby_contests(seed=0)
    raise SystemExit(f"unknown data set {name!r}")


def tuning_set(name: str, contests: list[Contest]) -> tuple[list[Contest], int]:
    """What the tuning trials rate and how many of its contests they score from."""
    if name == "synthetic":
        draw = synthetic_contests(1000, 50, seed=1)
        return draw, len(draw)
    if name == "lobbies":
        draw = lobby_contests(1000, 1000, seed=1)
        return draw, len(draw)
    n_train = int(len(contests) * 0.1 + 1e-9)
    return contests[:n_train], n_train


def run(args: argparse.Namespace) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    storage = f"sqlite:///{(out / 'tune.db').resolve()}"
    for ds in [d for d in args.datasets.split(",") if d]:
        contests = load_dataset(ds, Path(args.data))
        if contests is None:
            continue
        (out / ds).mkdir(exist_ok=True)
        for system in ("mmr", "mmr-plus"):
            pfile = out / ds / f"{system}.json"
            if pfile.exists() or args.trials <= 0:
                continue
            draw, n_score = tuning_set(ds, contests)
            t0 = time.perf_counter()
            tuned = tune(draw, system, trials=args.trials, train_contests=n_score,
                         storage=storage, study_name=f"{ds}-{system}-pair_inv")
            write_params_file(pfile, system, tuned.best_params, extra={"tuning": {
                "objective": "pair_inv", "train_value": tuned.best_value,
                "train_contests": tuned.train_contests, "trials": tuned.trials,
                "seconds": round(time.perf_counter() - t0, 1)}})
        for label, system, params, flags in ROWS:
            p = dict(params)
            if p.pop("tuned", False):
                pfile = out / ds / f"{system}.json"
                if not pfile.exists():
                    print(f"skip {ds} {label}: no {pfile}", file=sys.stderr)
                    continue
                p = {**json.loads(pfile.read_text())["params"], **p}
            res = evaluate(contests, system, params=p, train_frac=0.1)
            rec = res.to_dict()
            rec.update(dataset=ds, label=label, flags=flags, given=p)
            with open(out / "results.jsonl", "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(f"{ds} {label}: pair inv. {rec['pair_inv']:.3f}, rank dev. "
                  f"{rec['rank_dev']:.3f}, {rec['seconds']:.1f} s", file=sys.stderr, flush=True)


def _fmt(v: Any, digits: int) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def report(out: Path) -> str:
    """Markdown tables of ``OUT/results.jsonl`` (latest record per data set and row)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        latest[(rec["dataset"], rec["label"])] = rec
    parts = []
    for ds in dict.fromkeys(k[0] for k in latest):
        pub = PUBLISHED.get(ds)
        head = f"\n#### {ds}\n"
        if pub:
            head += f"\nPublished Elo-MMR(ρ), tuned (seed 002, Table 2): {pub[0]} / {pub[1]}.\n"
        base = latest.get((ds, "Elo-MMR defaults"))
        parts += [head, "| row | pair inv. | Δ vs defaults | rank dev. | L1 | L2 | Kendall τ "
                  "| Spearman ρ | seconds | `podium eval DATA ...` |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for label, _, _, _ in ROWS:
            rec = latest.get((ds, label))
            if rec is None:
                continue
            delta = None if base is None else rec["pair_inv"] - base["pair_inv"]
            parts.append(
                f"| {label} | {rec['pair_inv']:.3f} | {_fmt(delta, 3)} | "
                f"{rec['rank_dev']:.3f} | {_fmt(rec.get('l1'), 4)} | {_fmt(rec.get('l2'), 4)} | "
                f"{_fmt(rec.get('kendall_tau'), 4)} | {_fmt(rec.get('spearman_rho'), 4)} | "
                f"{rec['seconds']:.1f} | `{rec['flags']}` |")
        tuned = [(s, (out / ds / f"{s}.json")) for s in ("mmr", "mmr-plus")]
        for s, f in tuned:
            if f.exists():
                p = json.loads(f.read_text())["params"]
                shown = ", ".join(f"`{k}` {v:.4g}" if isinstance(v, float) else f"`{k}` {v}"
                                  for k, v in p.items())
                parts.append(f"\n{s} tuned: {shown}.")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="mmr-plus-run", help="output directory")
    ap.add_argument("--data", default=str(data_dir()),
                    help="datasets root (default: $PODIUM_DATA_DIR, else ../shared/datasets)")
    ap.add_argument("--datasets", default="codeforces,reddit,synthetic,lobbies")
    ap.add_argument("--trials", type=int, default=40, help="optuna trials per system")
    ap.add_argument("--report", action="store_true",
                    help="only write the tables of OUT/results.jsonl")
    ap.add_argument("--no-doc", action="store_true", help=f"print, do not write {DOC}")
    args = ap.parse_args(argv)
    load0 = load_average()
    if not args.report:
        run(args)
    body = report(Path(args.out))
    if args.no_doc:
        print(body)
    else:
        print(f"wrote {write_section(DOC, 'mmr-plus', body, load_at_start=load0)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
