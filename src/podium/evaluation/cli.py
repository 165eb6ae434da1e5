"""``podium eval``, ``podium compare``, ``podium tune`` and ``podium incentive``."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from podium.cli_common import add_input_args, float_in, int_in
from podium.errors import PodiumError, UsageError

__all__ = ["add_parsers", "markdown_table"]

#: ``podium tune --objective`` choices: the keys of
#: :data:`podium.evaluation.tuning.OBJECTIVES` (not imported here: the parser stays light).
OBJECTIVE_CHOICES: tuple[str, ...] = ("pair_inv", "rank_dev", "team_pair_inv", "team_rank_dev",
                                      "log_loss", "brier")

#: (column title, metric key, digits) of the Markdown table; the first three
#: are [EbtekarLiu2021]'s Table 2 (experienced players) and Table 3.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("pair inv. (%)", "pair_inv", 2),
    ("rank dev. (%)", "rank_dev", 2),
    ("seconds", "seconds", 2),
    ("pair inv. all", "pair_inv_all", 2),
    ("rank dev. all", "rank_dev_all", 2),
    ("pair inv. top", "pair_inv_top", 2),
    ("rank dev. top", "rank_dev_top", 2),
    ("L1", "l1", 4),
    ("L2", "l2", 4),
    ("Kendall τ", "kendall_tau", 4),
    ("Spearman ρ", "spearman_rho", 4),
)
#: The team metrics (:mod:`podium.evaluation.team_metrics`), shown after the first
#: three columns when the history has team contests (and a value to show).
TEAM_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("team pair inv. (%)", "team_pair_inv", 2),
    ("team rank dev. (%)", "team_rank_dev", 2),
    ("log-loss", "log_loss", 4),
    ("Brier", "brier", 4),
)


#: The calibration scores (:mod:`podium.evaluation.calibration`), shown at the end of the
#: table where scored: log-loss, Brier and expected calibration error of P(first), of
#: the pairwise outcomes and of win/draw/loss (two sides, systems with a draw model).
CALIBRATION_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("LL first", "first_log_loss", 4),
    ("Brier first", "first_brier", 4),
    ("ECE first", "first_ece", 4),
    ("LL pairs", "pair_log_loss", 4),
    ("Brier pairs", "pair_brier", 4),
    ("ECE pairs", "pair_ece", 4),
    ("LL W/D/L", "three_log_loss", 4),
    ("Brier W/D/L", "three_brier", 4),
)


def _fmt(v: Any, digits: int) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.{digits}f}"


def markdown_table(records: Sequence[dict[str, Any]]) -> str:
    """The evaluation records (``EvalResult.to_dict()``) as a Markdown table; the team
    metrics (:data:`TEAM_COLUMNS`) come after the first three columns, the calibration
    scores (:data:`CALIBRATION_COLUMNS`) last, where scored."""
    team = [c for c in TEAM_COLUMNS if any(r.get(c[1]) is not None for r in records)]
    calib = [c for c in CALIBRATION_COLUMNS if any(r.get(c[1]) is not None for r in records)]
    cols = [c for c in COLUMNS if any(c[1] in r for r in records)]
    cols = cols[:3] + team + cols[3:] + calib
    lines = [
        "| system | " + " | ".join(c[0] for c in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for r in records:
        cells = [_fmt(r.get(key), digits) for _, key, digits in cols]
        lines.append(f"| {r['system']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _history(args: argparse.Namespace) -> list[Any]:
    import logging

    from podium.cli_common import load_options
    from podium.io import check_history, load_contests
    from podium.io.history import refused_report

    # an evaluation goes on past a handle the rules refuse: it is kept as written and
    # reported (how many, why, where), as --raw-handles would keep every handle
    hist = load_contests(args.path, limit=args.n, dedupe_urls=args.dedupe,
                         sort_by_time=args.sort_by_time, keep_refused_handles=True,
                         **load_options(args))
    for line in refused_report(hist):
        print(f"warning: {line}" if not line.startswith("  ") else line, file=sys.stderr)
    for line in hist.changes:
        print(f"changed: {line}", file=sys.stderr)
    for line in hist.warnings:
        logging.getLogger("podium.cli").warning(line)
    if args.verbose_data:
        for line in check_history(hist.contests, hist.indices):
            print(f"warning: {line}", file=sys.stderr)
    if len(hist.contests) < 2:
        raise PodiumError(f"{args.path}: need at least 2 contests to evaluate, "
                          f"found {len(hist.contests)}")
    return list(hist.contests)


def _add_data_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", metavar="PATH",
                   help="JSON contest file, directory of N.json files, .tar.gz of one, or CSV")
    p.add_argument("-n", type=int_in(0), default=None, metavar="N",
                   help="use the first N contests")
    p.add_argument("--train-frac", type=float_in(0.0, 1.0, open_hi=True), default=0.1,
                   metavar="F",
                   help="leading share of contests rated but not scored (default 0.1, "
                   "as the paper)")
    p.add_argument("--min-history", type=int_in(1), default=5, metavar="K",
                   help="earlier contests a player needs to be scored (default 5)")
    p.add_argument("--dedupe", action="store_true", help="drop contests whose url repeats")
    p.add_argument("--sort-by-time", action="store_true", help="stable-sort contests by time")
    p.add_argument("--data-warnings", dest="verbose_data", action="store_true",
                   help="print the data quirks found (out-of-order times, repeated urls)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per system instead of a Markdown table")
    p.add_argument("--plot", metavar="DIR",
                   help="write figures (metric over time, trajectories, distribution, "
                   "reliability diagram) to DIR")
    p.add_argument("--plot-handles", metavar="H1,H2",
                   help="players whose rating trajectories are drawn (default: top 3)")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.add_argument("--protocol", choices=("sequential", "causal"), default="sequential",
                   help="sequential (default): rate in order, score the ratings before each "
                   "contest; causal: the same for the filters, and for the whole-history "
                   "systems (ttt, whr, mmr-smooth) the ratings from smoothing only the "
                   "contests before each one (docs/history.md)")
    p.add_argument("--refit-every", type=int_in(1), default=1, metavar="K",
                   help="--protocol causal, ttt and whr: smooth the earlier contests anew "
                   "every K contests (default 1: before each)")
    p.add_argument("--update-between", action="store_true",
                   help="--protocol causal, ttt and whr: between two refits, add each "
                   "contest with the bounded incremental update (update_sweeps) instead "
                   "of keeping the last refit's ratings")
    add_input_args(p)


def _run(args: argparse.Namespace, runs: list[tuple[str, dict[str, Any]]]) -> int:
    from podium.cli_common import Progress
    from podium.evaluation.metrics import announce_compile as announce_metrics
    from podium.evaluation.runner import evaluate
    from podium.history.engines import is_history_system
    from podium.outcomes import announce_compile

    contests = _history(args)
    announce_metrics()  # the metrics' kernels
    announce_compile()  # the calibration scores' kernels
    keep = bool(args.plot)
    results = []
    for name, params in runs:
        bar = Progress(len(contests), sys.stderr, not args.no_progress)

        def progress(done: int, _total: int, bar: Progress = bar) -> None:
            bar.update(done, len(contests[done - 1]))

        if is_history_system(name):
            if args.protocol != "causal":
                raise UsageError(f"{name} is a whole-history system: its ratings have seen "
                                 "the contests they would predict; use --protocol causal")
            if keep:
                raise UsageError(f"--plot draws a filter's ratings; {name} has none "
                                 "(leave out --plot)")
            from podium.evaluation.causal import evaluate_causal  # the smoothers' stack

            res = evaluate_causal(contests, name, params=params, train_frac=args.train_frac,
                                  min_history=args.min_history,
                                  refit_every=args.refit_every,
                                  update_between=args.update_between, progress=progress)
        else:  # a filter's ratings before a contest are causal already
            res = evaluate(
                contests, name, params=params, train_frac=args.train_frac,
                min_history=args.min_history, keep_rater=keep, progress=progress,
            )
        bar.close()
        results.append(res)
        if not args.json:
            m = res.metrics
            team = "".join(f", {title} {_fmt(m[key], digits)}" for title, key, digits
                           in TEAM_COLUMNS + CALIBRATION_COLUMNS[::3]
                           if key in m and not math.isnan(m[key]))
            print(f"{name}: pair inv. {_fmt(m['pair_inv'], 2)}, rank dev. "
                  f"{_fmt(m['rank_dev'], 2)}{team}, {res.seconds:.2f} s", file=sys.stderr)
    records = [r.to_dict() for r in results]
    if args.json:
        for rec in records:
            print(json.dumps(rec))
    else:
        first = results[0]
        today = _dt.date.today().isoformat()
        teams = ("" if "team_pair_inv" not in first.metrics else
                 f" (teams: every member; {first.metrics['team_rounds']} team rounds, "
                 f"{first.metrics['matches']} two-team matches scored)")
        print(f"{args.path}: {first.contests} contests ({first.player_rounds:,} player-rounds); "
              f"first {first.train_contests} rated but not scored, {first.scored_contests} "
              f"scored; players with {args.min_history}+ earlier contests{teams}; {today}\n")
        print(markdown_table(records))
    if args.plot:
        from podium.evaluation.plots import write_plots

        handles = args.plot_handles.split(",") if args.plot_handles else ()
        for f in write_plots(results, args.plot, handles=handles):
            print(f"wrote {f}", file=sys.stderr)
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from podium.cli_common import load_params

    file_system, params = load_params(args.params, args.set or [])
    system = args.system or file_system
    if not system:
        raise UsageError("--system is required (or a parameter file naming one)")
    if file_system and args.system and file_system != args.system:
        raise PodiumError(f"{args.params} is for system {file_system!r}, not {args.system!r}")
    return _run(args, [(system, params)])


def _cmd_compare(args: argparse.Namespace) -> int:
    from podium.cli_common import load_params

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if not systems:
        raise UsageError("--systems needs at least one system name")
    files: dict[str, str] = {}
    for item in args.params or []:
        name, sep, path = item.partition("=")
        if not sep:
            raise UsageError(f"--params expects SYSTEM=FILE, got {item!r}")
        files[name] = path
    unknown = sorted(set(files) - set(systems))
    if unknown:
        raise UsageError(f"--params given for {', '.join(unknown)}, not in --systems")
    runs = []
    for name in systems:
        path = files.get(name)
        if path is None and args.params_dir:
            cand = Path(args.params_dir) / f"{name}.json"
            path = str(cand) if cand.exists() else None
        file_system, params = load_params(path, [])
        if file_system and file_system != name:
            raise PodiumError(f"{path} is for system {file_system!r}, not {name!r}")
        runs.append((name, params))
    return _run(args, runs)


def _cmd_tune(args: argparse.Namespace) -> int:
    from podium.cli_common import load_params
    from podium.evaluation.tuning import tune, write_params_file
    from podium.history.engines import is_history_system

    if is_history_system(args.system) and args.protocol != "causal":
        raise UsageError(f"{args.system} is a whole-history system: its trials are scored "
                         "by the causal protocol; use --protocol causal")
    _, fixed = load_params(None, args.set or [])
    contests = _history(args)
    storage = args.storage
    out = args.out or f"tuned-{args.system}.json"
    err = sys.stderr
    show = not args.no_progress

    def report(number: int, value: float, params: dict[str, float], best: float) -> None:
        if show:
            shown = ", ".join(f"{k}={v:.4g}" for k, v in params.items())
            print(f"trial {number}: {args.objective} {value:.4f} ({shown}); best {best:.4f}",
                  file=err)

    t0 = time.perf_counter()
    res = tune(
        contests, args.system, trials=args.trials, train_frac=args.train_frac,
        objective=args.objective, storage=storage, study_name=args.study, seed=args.seed,
        fixed=fixed, timeout=args.timeout, min_history=args.min_history, callback=report,
        refit_every=args.refit_every, update_between=args.update_between,
    )
    write_params_file(out, res.system, res.best_params, extra={"tuning": {
        "objective": res.objective, "train_value": res.best_value,
        "train_contests": res.train_contests, "trials": res.trials,
        "study": res.study_name, "storage": res.storage, "data": str(args.path),
    }})
    shown = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in res.best_params.items())
    print(f"best of {res.trials} trials in study {res.study_name!r}: {res.objective} "
          f"{res.best_value:.4f} on the first {res.train_contests} contests ({shown}); "
          f"{time.perf_counter() - t0:.1f} s", file=err)
    print(f"wrote {out}: use it with `podium eval {args.path} --params {out}` or "
          f"`podium rate ... --params {out}`", file=err)
    return 0


def _cmd_incentive(args: argparse.Namespace) -> int:
    from podium.cli_common import load_options
    from podium.evaluation.incentive import plot_incentive, volatility_farming
    from podium.io import load_contests

    contests = load_contests(args.path, limit=args.n, **load_options(args)).contests
    window = None
    if args.window:
        a, sep, b = args.window.partition(":")
        try:
            window = (int(a), int(b))
        except ValueError:
            raise UsageError(f"--window expects START:END, got {args.window!r}") from None
        if not sep:
            raise UsageError(f"--window expects START:END, got {args.window!r}")
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    res = volatility_farming(contests, args.handle, systems=systems, decide_by=args.decide_by,
                             threshold=args.threshold, window=window)
    print(f"{args.handle}: placed last in {len(res.manipulated)} contests of the window "
          f"{res.window[0]}..{res.window[1]} (when {res.decide_by} rating > {res.threshold:g})")
    print()
    cols = ["system", "honest_final", "farming_final", "gain_final", "honest_peak_after",
            "farming_peak_after", "gain_peak_after"]
    print("| " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * (len(cols) - 1))
    for row in res.summary[cols].itertuples(index=False):
        print(f"| {row[0]} | " + " | ".join(f"{v:.1f}" for v in row[1:]) + " |")
    if args.plot:
        out = Path(args.plot)
        out.mkdir(parents=True, exist_ok=True)
        f = plot_incentive(res, out / "incentive.png")
        res.trajectories.to_csv(out / "incentive_trajectories.csv", index=False)
        print(f"wrote {f} and {out / 'incentive_trajectories.csv'}", file=sys.stderr)
    return 0


def _cmd_teams_sim(args: argparse.Namespace) -> int:
    import csv

    from podium.io import write_contest_dir, write_contests_csv
    from podium.io.synthetic_teams import lobby_contests, synthetic_team_contests

    common: dict[str, Any] = dict(
        partial_prob=args.partial, seed=args.seed, team_noise_sd=args.team_noise,
        drift_sd=args.drift, perf_sd=args.perf_sd, skill_sd=args.skill_sd)
    try:
        if args.kind == "league":
            hist = synthetic_team_contests(
                args.players, args.rounds, teams_per_round=args.teams_per_round,
                min_size=args.min_size, max_size=args.max_size, switch_prob=args.switch,
                **common)
        else:
            hist = lobby_contests(args.players, args.rounds, team_size=args.team_size,
                                  matchmaking=args.matchmaking, **common)
    except ValueError as exc:
        raise PodiumError(f"teams-sim: {exc}") from None
    out = Path(args.out)
    if args.csv:
        out.mkdir(parents=True, exist_ok=True)
        write_contests_csv(hist.contests, out / "contests.csv")
    else:
        write_contest_dir(hist.contests, out)
    with open(out / "skills.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["player", "initial_skill", "final_skill"])
        for h, a, b in zip(hist.handles, hist.initial_skill.tolist(),
                           hist.final_skill.tolist(), strict=True):
            w.writerow([h, f"{a:.3f}", f"{b:.3f}"])
    rows = sum(len(c) for c in hist.contests)
    what = "contests.csv" if args.csv else "0.json, 1.json, ..."
    print(f"wrote {len(hist.contests)} synthetic {args.kind} team contests ({rows:,} "
          f"player-rounds) to {out}/ ({what} and skills.csv, the true skills)", file=sys.stderr)
    return 0


def add_parsers(subparsers: Any) -> None:
    """Register ``eval``, ``compare``, ``tune``, ``incentive`` and ``teams-sim``."""
    e = subparsers.add_parser(
        "eval", help="score one system's predictions on a history ([EbtekarLiu2021] Table 2)",
        description="Rate PATH with one system and score, before every contest after the "
        "first --train-frac, how well the current ratings predict its result: pair "
        "inversion and rank deviation of players with 5+ earlier contests (the paper's "
        "figures) and variants (all players, top 100, [Batty2026]'s L1/L2, Kendall, Spearman).",
    )
    _add_data_args(e)
    e.add_argument("--system", "-s", default=None, help="rating system (`podium systems`)")
    e.add_argument("--params", metavar="FILE", help="JSON/TOML parameter file (e.g. from "
                   "`podium tune`)")
    e.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a parameter")
    e.set_defaults(func=_cmd_eval)

    c = subparsers.add_parser(
        "compare", help="score several systems on one history and print the table",
        description="`podium eval` for several systems, printed as one Markdown table "
        "(or JSON lines with --json), with each system's rating time.",
    )
    _add_data_args(c)
    c.add_argument("--systems", required=True, metavar="A,B,C", help="comma-separated systems")
    c.add_argument("--params", action="append", metavar="SYSTEM=FILE",
                   help="parameter file for one system (repeatable)")
    c.add_argument("--params-dir", metavar="DIR",
                   help="directory of <system>.json parameter files (as `podium tune` writes)")
    c.set_defaults(func=_cmd_compare)

    t = subparsers.add_parser(
        "tune", help="search a system's hyper-parameters on the first part of a history",
        description="Optuna search (TPE) of the system's parameters on the first "
        "--train-frac of PATH, scored by pair inversion or rank deviation of experienced "
        "players (a whole-history system, whr or ttt: with --protocol causal, each training "
        "contest predicted from the smoothing of the ones before it).  The study is kept "
        "in --storage (SQLite file by default; a PostgreSQL URL "
        "lets several processes or machines share one study).  The best parameters are "
        "written as a file `podium rate/eval --params` accept.",
    )
    _add_data_args(t)
    t.add_argument("--system", "-s", required=True, help="rating system to tune")
    t.add_argument("--trials", type=int_in(1), required=True,
                   help="trials to run in this process")
    t.add_argument("--objective", choices=OBJECTIVE_CHOICES, default="pair_inv",
                   help="metric to optimise (default pair_inv; the team_*, log_loss and "
                   "brier objectives need team contests, log_loss and brier two-team ones)")
    t.add_argument("--storage", default="sqlite:///podium-tune.db", metavar="URL",
                   help="optuna storage URL or SQLite file (default sqlite:///podium-tune.db)")
    t.add_argument("--study", default=None, help="study name (default SYSTEM-OBJECTIVE)")
    t.add_argument("--out", "-o", default=None, metavar="FILE",
                   help="best parameters file (default tuned-SYSTEM.json)")
    t.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    t.add_argument("--timeout", type=float_in(0.0, 1e9, open_lo=True), default=None,
                   metavar="S",
                   help="stop starting trials after S seconds")
    t.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="hold a parameter fixed (repeatable)")
    t.set_defaults(func=_cmd_tune)

    i = subparsers.add_parser(
        "incentive", help="the volatility-farming experiment (TopCoder vs Elo-MMR)",
        description="Replay PATH twice: honestly, and with HANDLE moved to last place "
        "whenever their --decide-by rating exceeds --threshold inside --window; print how "
        "each system's final rating of HANDLE reacts (Thm 5.5 of the Elo-MMR paper).",
    )
    i.add_argument("path", metavar="PATH", help="contest history")
    i.add_argument("--handle", default="tourist", help="the manipulating player (tourist)")
    i.add_argument("-n", type=int_in(1), default=400, metavar="N",
                   help="first N contests (default 400, as the paper's code)")
    i.add_argument("--systems", default="tcsys,mmr", help="systems compared (tcsys,mmr)")
    i.add_argument("--decide-by", default="tcsys",
                   help="system whose rating triggers the losses (default tcsys)")
    i.add_argument("--threshold", type=float, default=3000.0, help="rating threshold (3000)")
    i.add_argument("--window", default=None, metavar="START:END",
                   help="contest indices where losing is allowed (default N/4:3N/4)")
    i.add_argument("--plot", metavar="DIR", help="write incentive.png and the trajectories CSV")
    add_input_args(i)
    i.set_defaults(func=_cmd_incentive)

    ts = subparsers.add_parser(
        "teams-sim", help="write a synthetic team history (league or 5v5 lobbies)",
        description="[EbtekarLiu2021]'s synthetic model (Sec. 6.1: skills N(1500, 300^2), "
        "performance noise 200, drift 35 between a player's rounds) with teams: a team's "
        "performance is the sum of its members' (times their share of the round) plus a "
        "team noise.  --kind league: persistent rosters of --min-size..--max-size players, "
        "--teams-per-round of them per round, players swapping teams with probability "
        "--switch after each round.  --kind lobby: two-team matches of --team-size players "
        "a side drawn from the pool at random or by similar skill.  Writes DIR/0.json, ... "
        "(or DIR/contests.csv) and DIR/skills.csv (each player's true initial and final "
        "skill); `podium compare DIR` scores the team metrics.",
    )
    ts.add_argument("out", metavar="DIR", help="directory to write")
    ts.add_argument("--kind", choices=["league", "lobby"], default="league",
                    help="league of persistent rosters (default) or two-team lobbies")
    ts.add_argument("--players", type=int_in(2), default=2000,
                    help="players in the pool (2000)")
    ts.add_argument("--rounds", type=int_in(1), default=3000,
                    help="rounds (league) or matches (lobby) (default 3000)")
    ts.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ts.add_argument("--teams-per-round", type=int_in(2), default=20,
                    help="league: teams in each round (default 20)")
    ts.add_argument("--min-size", type=int_in(1), default=1,
                    help="league: smallest roster (1)")
    ts.add_argument("--max-size", type=int_in(1), default=5, help="league: largest roster (5)")
    ts.add_argument("--switch", type=float_in(0.0, 1.0), default=0.05,
                    help="league: chance a participant swaps teams after a round (0.05)")
    ts.add_argument("--team-size", type=int_in(1), default=5, help="lobby: players a side (5)")
    ts.add_argument("--matchmaking", choices=["random", "skill"], default="random",
                    help="lobby: draw the players at random (default) or by similar skill")
    ts.add_argument("--partial", type=float_in(0.0, 1.0), default=0.0, metavar="P",
                    help="chance a member plays only part of a round (a weight in "
                    "[0.25, 1]; default 0)")
    ts.add_argument("--team-noise", type=float_in(0.0, 1e6), default=100.0, metavar="SD",
                    help="noise of a team's performance (default 100)")
    ts.add_argument("--perf-sd", type=float_in(0.0, 1e6), default=200.0,
                    help="member performance noise (200)")
    ts.add_argument("--skill-sd", type=float_in(0.0, 1e6), default=300.0,
                    help="initial skill spread (300)")
    ts.add_argument("--drift", type=float_in(0.0, 1e6), default=35.0,
                    help="skill drift between two rounds of a player (35)")
    ts.add_argument("--csv", action="store_true",
                    help="write one long CSV (contests.csv, with a team column) instead")
    ts.set_defaults(func=_cmd_teams_sim)
