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

Parameters: ``--set SYSTEM:NAME=VALUE`` gives a system's runs a parameter (tuned
Elo-MMR on Reddit: ``--set mmr:weight_limit=0.02067 --set mmr:sig_limit=198.1 --set
mmr:rho=0.6156``, docs/mmr-plus.md); ``--tune SYSTEM`` first tunes it the paper's
way (:func:`podium.evaluation.tune`: ``--trials`` TPE trials on the first 10 % of the
contests, pair inversion of the experienced players, seed 0; a whole-history system's
trials scored by the causal protocol) and adds its tuned runs next to its defaults'.
``--clock contests`` puts contest *k* on day *k* (Reddit's threads have no times, so
every contest is on one day and ``whr``'s drift ``w2`` does nothing); ``--clock
monotone`` keeps the data's order and puts a contest that starts before the one
listed before it at that one's time (Codeforces' fixed set, scored in the file's
order, where contest 820 starts 30 minutes before 819: the causal history refuses a
time that goes back, and ``mmr-smooth``'s default model does not use the times);
``--update-between`` adds, next to each ``ttt`` and ``whr`` run that refits every
*K* > 1 contests, one that adds each contest between refits with the engine's bounded
update (``whr``'s refits in those runs solved to ``--whr-refit-tol``, 1e-4: from a
refit at ``--whr-tol``'s 1e-3 every update chased the refit's own error, which exceeds
the update's ``update_tol`` of 0.01 Elo, over the whole history -- about 15× the days
stepped after 45,000 football matches); ``--limit N`` keeps the first *N* contests.
The bootstrap compares every whole-history run with every filter run.

Data sets are read from ``$PODIUM_DATA_DIR``, else ``../shared/datasets``.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average, write_section  # noqa: E402
from bench_history import football_history  # noqa: E402
from mmr_plus_headroom import DRAWS, paired_bootstrap  # noqa: E402

from podium import Contest  # noqa: E402
from podium.cli_common import load_params  # noqa: E402
from podium.evaluation.causal import causal_ratings, evaluate_causal  # noqa: E402
from podium.evaluation.metrics import MetricAccumulator  # noqa: E402
from podium.evaluation.runner import evaluate, ratings_before, train_size  # noqa: E402
from podium.evaluation.tuning import tune  # noqa: E402
from podium.history import history_from_contests  # noqa: E402
from podium.history.engines import SmoothSystem, get_history_system, is_history_system  # noqa: E402
from podium.history.smooth_state import SmoothState  # noqa: E402
from podium.io import load_contests, synthetic_contests  # noqa: E402
from podium.rater import Rater  # noqa: E402

DOC = "docs/history.md"


def load(name: str, args: argparse.Namespace) -> list[Contest]:
    return clocked(load_data(name, args)[:args.limit], args.clock)


def clocked(contests: list[Contest], clock: str) -> list[Contest]:
    """The contests with their times set by ``--clock`` (copies where a time changes):
    ``data`` keeps them; ``contests`` puts contest *k* on day *k*; ``monotone`` keeps
    the data's order and times, but a contest that starts before the one listed
    before it gets that one's time (the causal history needs times that never go
    back; Codeforces' contest 820 starts 30 minutes before 819, and the fixed set's
    figures were scored in the file's order)."""
    timed = list(contests)
    for k, c in enumerate(contests):
        if clock == "contests":
            t = k * 86400
        elif clock == "monotone" and k:
            t = max(c.time_seconds, timed[k - 1].time_seconds)
        else:
            continue
        if t != c.time_seconds:
            timed[k] = copy.copy(c)
            timed[k].time_seconds = t
    return timed


def load_data(name: str, args: argparse.Namespace) -> list[Contest]:
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
          refit_every: int, update_between: bool = False
          ) -> tuple[Any, dict[str, float], float]:
    t0 = time.perf_counter()
    if is_history_system(system):
        res = evaluate_causal(contests, system, params=params, extended=False,
                              refit_every=refit_every, update_between=update_between)
    else:
        res = evaluate(contests, system, params=params, extended=False)
    seconds = time.perf_counter() - t0
    df = res.per_round[["index", "n_experienced", "pair_inv"]].dropna().set_index("index")
    return df, res.metrics, seconds


def given(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``--set SYSTEM:NAME=VALUE`` by system."""
    sets: dict[str, list[str]] = {}
    for item in args.set or []:
        system, sep, assignment = item.partition(":")
        if not sep:
            raise SystemExit(f"--set expects SYSTEM:NAME=VALUE, got {item!r}")
        sets.setdefault(system, []).append(assignment)
    return {system: load_params(None, items)[1] for system, items in sets.items()}


def shown(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                     for k, v in params.items())


def fixed_params(system: str, args: argparse.Namespace) -> dict[str, Any]:
    """The benchmark's own settings of a whole-history system (not searched)."""
    if system == "ttt":
        return {"p_draw": 0.25}
    if system == "whr":
        return {"tol": args.whr_tol, "max_iter": 1000}
    return {}


def between_params(system: str, params: dict[str, Any], mine: dict[str, Any],
                   args: argparse.Namespace) -> dict[str, Any]:
    """The parameters of a run with the bounded update between refits: ``whr``'s refits
    solved to ``--whr-refit-tol`` (unless ``--set whr:tol=...`` gave a tolerance), so
    that the updates start from a fit as precise as they are."""
    if system == "whr" and "tol" not in mine:
        return {**params, "tol": min(float(params["tol"]), args.whr_refit_tol)}
    return params


def tuned_params(name: str, contests: list[Contest], system: str,
                 args: argparse.Namespace, base: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Tune ``system`` on the first 10 % of ``contests`` (the paper's way, as
    docs/mmr-plus.md tuned Elo-MMR); its parameters and a line that says how."""
    t0 = time.perf_counter()
    res = tune(contests, system, trials=args.trials, train_frac=0.1, seed=0, fixed=base)
    secs = time.perf_counter() - t0
    searched = {k: v for k, v in res.best_params.items() if k not in base}
    line = (f"{system} tuned on the first {res.train_contests} contests ({res.trials} "
            f"trials, pair inversion {res.best_value:.3f} there, {secs:.0f} s): "
            f"{shown(searched)}.")
    print(f"  {name} {line}", file=sys.stderr, flush=True)
    return res.best_params, line


def section(name: str, args: argparse.Namespace) -> str:
    contests = load(name, args)
    systems = [s for s in args.systems.split(",") if s]
    if name == "football":  # individual 1v1 matches with draws: ttt needs p_draw
        systems = [s for s in systems if s != "mmr-plus"]
    sets = given(args)
    rows, rounds, notes = [], {}, []
    filters: list[str] = []
    runs: list[tuple[str, str, dict[str, Any], int, bool]] = []
    for system in systems:
        mine = sets.get(system, {})
        if system == "mmr-smooth":
            for v in args.smooth.split(","):
                sw, tol, *spread = v.split(":")
                params: dict[str, Any] = {**mine, "update_sweeps": int(sw),
                                          "tol": float(tol)}
                label = f"mmr-smooth, {sw} sweep(s) per contest, tol {tol}"
                if spread:
                    params["update_spread"] = float(spread[0])
                    label += f", threshold {spread[0]} tol"
                runs.append((label, system, params, 1, False))
        elif system in ("ttt", "whr"):
            variants = [(system, {**fixed_params(system, args), **mine})]
            if system in (args.tune or []):
                params, line = tuned_params(name, contests, system, args, variants[0][1])
                notes.append(line)
                variants.append((f"{system} tuned", params))
            for what, params in variants:
                for k in args.refits.split(","):
                    refit = max(1, len(contests) // int(k))
                    runs.append((f"{what}, refit every {refit}", system, params, refit, False))
                    if args.update_between and refit > 1:
                        between = between_params(system, params, mine, args)
                        tol = (f" (tol {between['tol']:g})"
                               if between.get("tol") != params.get("tol") else "")
                        runs.append((f"{what}, refit every {refit}{tol}, bounded update "
                                     "between", system, between, refit, True))
        else:
            label = f"{system} ({shown(mine)})" if mine else system
            runs.append((label, system, mine, 1, False))
            filters.append(label)
    for label, system, params, refit, update in runs:
        try:
            df, m, secs = score(contests, system, params, refit, update)
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
        for b in filters:
            if a not in filters and b in rounds:
                v, se, lo, hi = paired_bootstrap(rounds[a], rounds[b])
                boot.append(f"| {a} − `{b}` | {v:+.3f} | {se:.3f} | {lo:+.3f} … {hi:+.3f} |")
    n_rows = sum(len(c) for c in contests)
    clock = ("; contest *k* on day *k* (`--clock contests`)"
             if args.clock == "contests" else "")
    part = f"the first {len(contests):,}" if args.limit else f"{len(contests):,}"
    body = (f"{name}: {part} contests, {n_rows:,} player-rounds; first "
            f"{train_size(len(contests), 0.1)} (10 %) rated but not scored; players with "
            f"5+ earlier contests{clock}.\n\n"
            + "".join(f"{line}\n\n" for line in notes)
            + "| system | pair inv. | rank dev. | seconds | protocol |\n|---|---:|---:|---:|---|\n"
            + "\n".join(rows)
            + "\n\nPaired bootstrap of the pair inversion over the scored contests "
            f"({DRAWS} draws):\n\n| difference | value | SE | 95 % interval |\n"
            "|---|---:|---:|---|\n" + "\n".join(boot))
    print(body, flush=True)
    return body


def fixed_point_check(contests: list[Contest], first: int, count: int, sweeps: int,
                      tol: float) -> tuple[str, dict[str, float]]:
    """Contests ``first .. first + count - 1``: ``mmr-smooth``'s forecast from the
    earlier contests smoothed to the fixed point (solved to ``tol`` before each
    contest), against the causal protocol's (``sweeps`` per contest) and ``mmr``'s
    rating before the contest: each one's pair inversion over those contests, and how
    far the forecasts lie apart (players with 5+ earlier contests, each contest's
    median difference taken out: a common shift does not change an order).  Returns
    the tables and each forecast's pair inversion."""
    sub = contests[:first + count]
    lh = history_from_contests(sub)
    if lh.contest_index.tolist() != list(range(len(sub))):
        raise SystemExit("--fixed-point: a contest of the range is left out of the history")
    h = lh.history
    sysobj = get_history_system("mmr-smooth", tol=tol)
    assert isinstance(sysobj, SmoothSystem)
    weight = np.array([c.weight for c in sub], dtype=np.float64)
    ceiling = np.array([np.inf if c.perf_ceiling is None else c.perf_ceiling for c in sub])
    t0 = time.perf_counter()
    state = SmoothState.start(h, sysobj.mmr_params(), weight, ceiling,
                              float(sysobj.params()["window_tol"]))
    state.rate_forward(first)
    for _ in range(count):  # the earlier contests to the fixed point, then the forecast
        _, converged = state.solve(tol, 100)
        if not converged:
            raise SystemExit("--fixed-point: a prefix did not converge in 100 sweeps")
        state.rate_forward(1)
    fixed = state.row_view(state.forecast_mu)
    solve_s = time.perf_counter() - t0
    causal = causal_ratings(sub, "mmr-smooth", {"update_sweeps": sweeps, "tol": tol},
                            first=first)
    rater = Rater("mmr")
    rater.extend(sub)
    which = list(range(first, first + count))
    before = ratings_before(rater, sub, which)
    played: dict[str, int] = {}
    for c in sub[:first]:
        if c.n_teams > 1:
            for hd in c.handles:
                played[hd] = played.get(hd, 0) + 1
    names = ["fixed point", f"causal, {sweeps} sweep(s) per contest", "mmr"]
    accs = [MetricAccumulator(min_history=5, extended=False) for _ in names]
    pairs = [(0, 1), (0, 2), (1, 2)]
    diffs: list[list[np.ndarray]] = [[] for _ in pairs]
    rows = h.contest_rows
    for i, t in enumerate(which):
        c = sub[t]
        n_prev = np.fromiter((played.get(hd, 0) for hd in c.handles), dtype=np.int64,
                             count=len(c))
        seg = causal[t]
        assert seg is not None
        mus = [fixed[rows[t]:rows[t + 1]], seg,
               before.mu[before.offsets[i]:before.offsets[i + 1]]]
        for acc, mu in zip(accs, mus, strict=True):
            acc.add_round(mu, c.lo, c.hi, n_prev, index=t)
        e = n_prev >= 5
        for out, (a, b) in zip(diffs, pairs, strict=True):
            d = mus[a][e] - mus[b][e]
            out.append(d - np.median(d))
        for hd in c.handles:
            played[hd] = played.get(hd, 0) + 1
    lines = [f"Contests {first}..{first + count - 1} (the fixed points solved in "
             f"{solve_s:.0f} s):", "", "| forecast | pair inv. | rank dev. |",
             "|---|---:|---:|"]
    scores = {}
    for name, acc in zip(names, accs, strict=True):
        m = acc.summary()
        scores[name] = float(m["pair_inv"])
        lines.append(f"| {name} | {m['pair_inv']:.3f} | {m['rank_dev']:.3f} |")
    lines += ["", "| difference (less each contest's median) | rms | median abs | max abs |",
              "|---|---:|---:|---:|"]
    for (a, b), out in zip(pairs, diffs, strict=True):
        d = np.concatenate(out)
        lines.append(f"| {names[a]} − {names[b]} | {np.sqrt(np.mean(d ** 2)):.2f} | "
                     f"{np.median(np.abs(d)):.2f} | {np.abs(d).max():.1f} |")
    text = "\n".join(lines)
    print(text, flush=True)
    return text, scores


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
    ap.add_argument("--whr-refit-tol", type=float, default=1e-4,
                    help="whr with --update-between: the refits' largest gradient "
                    "component (default 1e-4; the updates spread changes above 0.01 Elo, "
                    "which a refit at 1e-3 leaves)")
    ap.add_argument("--set", action="append", metavar="SYSTEM:NAME=VALUE",
                    help="a parameter of SYSTEM's runs (repeatable)")
    ap.add_argument("--tune", action="append", metavar="SYSTEM",
                    help="tune SYSTEM (ttt, whr) on the first 10 %% of the contests and add "
                    "its tuned runs (repeatable)")
    ap.add_argument("--trials", type=int, default=40, help="--tune: optuna trials (40)")
    ap.add_argument("--limit", type=int, default=None, metavar="N",
                    help="the first N contests of each data set only")
    ap.add_argument("--clock", choices=["data", "contests", "monotone"], default="data",
                    help="the contests' times: the data's (default), contest k on day k, "
                    "or the data's with a contest that starts before the previous one "
                    "put at the previous one's time (the file's order kept: Codeforces' "
                    "fixed set, whose contest 820 starts 30 minutes before 819)")
    ap.add_argument("--update-between", action="store_true",
                    help="ttt/whr: also run each refit schedule with the bounded update of "
                    "each contest between refits")
    ap.add_argument("--block-suffix", default="",
                    help="write the block history-causal-NAME-SUFFIX (default: "
                    "history-causal-NAME)")
    ap.add_argument("--fixed-point", metavar="FIRST:COUNT",
                    help="mmr-smooth only: at contests FIRST..FIRST+COUNT-1, compare the "
                    "forecast from the earlier contests smoothed to the fixed point with "
                    "the causal run's (the first --smooth setting) and mmr's, and stop")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    command = "python benchmarks/causal_history.py " + " ".join(argv or sys.argv[1:])
    if args.fixed_point:
        first, count = (int(v) for v in args.fixed_point.split(":"))
        sw, tol, *_ = args.smooth.split(",")[0].split(":")
        for name in args.dataset or ["codeforces"]:
            fixed_point_check(load(name, args), first, count, int(sw), float(tol))
        return
    for name in args.dataset or ["synthetic", "reddit", "football", "codeforces"]:
        start = load_average()
        body = section(name, args)
        if args.write_docs:
            block = f"history-causal-{name}" + (f"-{args.block_suffix}"
                                                 if args.block_suffix else "")
            write_section(DOC, block, body, load_at_start=start,
                          command=command)


if __name__ == "__main__":
    main()
