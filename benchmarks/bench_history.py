"""Whole-history engines (podium.history): speed against the reference packages and
against Podium's filter, on generated histories, the Codeforces history and the
international football results.

Sections (``--section``, several allowed; default all):

* ``ttt``: TrueSkill Through Time against ``trueskillthroughtime`` 1.1.0 on the same
  generated histories (1v1; three teams of two with draws), both to the package's
  convergence (``History(...).convergence()``): time and the largest difference of
  the learning curves.
* ``whr``: Whole-History Rating against ``whole-history-rating`` 3.7.1 on a generated
  1v1 history with draws, both to a largest gradient component of 1e-6.
* ``codeforces``: ``mmr-smooth`` to its tolerance against Podium's exact ``mmr``
  (``Rater("mmr").extend``, the rating step of ``podium rate``) on the Codeforces
  history (``--cf-contests``, default all), same process, same loaded contests.
* ``football``: the international results 1872-2026 (read with pandas from the
  data set's own ``results.csv``, days before 1970 negative): time of ``ttt``,
  ``whr``, ``mmr-smooth`` and ``mmr``, and how often each one's rating before a
  decisive match picks its winner (``mmr-smooth`` by its causal forecast, ``ttt`` and
  ``whr`` smoothed over the whole history, so not causal: an upper reference).
* ``teams``: ``mmr-smooth`` against Podium's exact ``mmr`` on the seeded synthetic team
  league (``synthetic_team_contests``: ``--team-players``, ``--team-rounds``, 20 teams
  of 1-5 a round, partial play 0.2), same process, and how far each one's ratings are
  from the members' true skills.

* ``command``: issue 29's speed target as a user meets it: the whole ``podium rate``
  command of ``mmr-smooth`` against exact ``mmr``'s on the Codeforces archive
  (``--cf-contests``), each its own process with every output file, ``mmr`` before and
  after (the faster taken).

``--write-docs`` writes each section's table into docs/history.md, and the
``codeforces``, ``command`` and ``ttt`` tables (issue 29's speed targets) into
docs/benchmarks.md too.
``--reference-tol R`` (``codeforces``) also solves the result on to a residual of ``R``
and reports how far it was from the fixed point.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _report import (  # noqa: E402
    PODIUM_REPORT,
    ROOT,
    checkout_env,
    data_dir,
    load_average,
    timed_process,
    write_section,
)

from podium.history import (  # noqa: E402
    ContestHistory,
    SmoothState,
    history_from_arrays,
    history_from_contests,
    learning_curves,
    mmr_smooth,
    smooth_extend,
    smooth_forecast,
    ttt,
    whr,
)
from podium.history.mmr_smooth import UPDATE_SPREAD, smooth_result  # noqa: E402
from podium.history.smooth_state import SWEEP_STEP, sweep_panels  # noqa: E402

DOC = "docs/history.md"
#: Sections whose tables docs/benchmarks.md carries as well (the speed targets).
BENCHMARKS_DOC = "docs/benchmarks.md"
IN_BENCHMARKS = ("codeforces", "command", "ttt")


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def section_ttt(args: argparse.Namespace) -> str:
    import trueskillthroughtime as pk
    from _history_cases import random_case

    rows = []
    tiny = random_case(0, 5, 6, max_teams=3, max_size=2, draws=True)
    _, t_load = _timed(lambda: ttt(tiny.history, p_draw=0.2))
    cases = [("1v1, 3,000 games, 300 players, 1,000 days",
              dict(seed=11, n_games=3000, n_players=300, span=1000), 0.0),
             ("3 teams of 2, draws, 1,000 games, 200 players, 300 days",
              dict(seed=12, n_games=1000, n_players=200, span=300, max_teams=3, max_size=2,
                   draws=True), 0.2)]
    for label, kw, p_draw in cases:
        case = random_case(**kw)  # type: ignore[arg-type]
        ref, t_ref = _timed(lambda case=case, p_draw=p_draw: _ttt_package(pk, case, p_draw))
        mine, t_first = _timed(lambda case=case, p_draw=p_draw: ttt(case.history,
                                                                     p_draw=p_draw))
        warm = min(_timed(lambda case=case, p_draw=p_draw: ttt(case.history,
                                                                p_draw=p_draw))[1]
                   for _ in range(3))
        curves = learning_curves(mine)
        worst = 0.0
        for name, curve in ref.learning_curves().items():
            _, mu, sigma = curves[int(name)]
            for (_, g), m, s in zip(curve, mu, sigma, strict=True):
                worst = max(worst, abs(g.mu - m), abs(g.sigma - s))
        rows.append(f"| {label} | {t_ref / t_first:.0f}x | {t_ref / warm:.0f}x | "
                    f"{t_ref:.2f} | {t_first:.3f} | {warm:.3f} | {mine.sweeps} | "
                    f"{worst:.1e} |")
        print(rows[-1], flush=True)
    return ("Both to the package's convergence (epsilon 1e-6, at most 30 sweeps), same "
            "process.  Podium's kernels are compiled once and cached on disk by Numba: a "
            f"first call on a tiny history loaded (or compiled) them in {t_load:.2f} s, "
            "before the timings; *first* is the first call on the history, *warm* the best "
            "of the next three.\n\n"
            "| history | speed-up, first | speed-up, warm | trueskillthroughtime s | "
            "podium first s | podium warm s | sweeps | max abs difference |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows))


def _ttt_package(pk: Any, case: Any, p_draw: float) -> Any:
    h = pk.History(case.composition, case.results, case.times, p_draw=p_draw)
    h.convergence(verbose=False)
    return h


def section_whr(args: argparse.Namespace) -> str:
    import warnings

    from _history_cases import random_case
    from whr import WHR

    case = random_case(13, 1000, 100, draws=True, span=300)

    def package() -> Any:
        base = WHR()
        for comp, res, t in zip(case.composition, case.results, case.times, strict=True):
            base.create_game(comp[0][0], comp[1][0], "D" if res[0] == res[1] else "B",
                             int(t), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base.auto_iterate(precision=1e-6, batch_size=10)
        return base

    whr(random_case(0, 5, 6, draws=True).history)  # kernels loaded (or compiled) once
    base, t_ref = _timed(package)
    mine, t_first = _timed(lambda: whr(case.history, tol=1e-6))
    worst = 0.0
    for name, player in base.players.items():
        idx = np.flatnonzero(mine.slot_player == int(name))
        for day, s in zip(player.days, idx, strict=True):
            worst = max(worst, abs(day.elo - mine.elo[s]))
    row = (f"| 1v1 with draws, 1,000 games, 100 players, 300 days | {t_ref / t_first:.0f}x | "
           f"{t_ref:.2f} | {t_first:.3f} | {mine.sweeps} | {worst:.1e} |")
    print(row, flush=True)
    return ("Both until the largest gradient component is below 1e-6 (the package's "
            "`auto_iterate(precision=1e-6)`), same process; Podium's first call on the "
            "history (its kernels loaded beforehand).\n\n"
            "| history | speed-up | whole-history-rating s | podium s | sweeps | "
            "max abs Elo difference |\n|---|---:|---:|---:|---:|---:|\n" + row)


def _warm_up() -> None:
    """Load (or compile) the kernels of ``mmr`` and ``mmr-smooth`` before any timing."""
    from _history_cases import random_case

    from podium import Rater
    from podium.io.synthetic import synthetic_contests

    contests = synthetic_contests(40, 3, seed=1)
    Rater("mmr").extend(contests)
    mmr_smooth(history_from_contests(contests).history)
    smooth_forecast(history_from_contests(contests).history)
    tiny = random_case(0, 5, 6, draws=True)
    ttt(tiny.history, p_draw=0.2)
    whr(tiny.history)


def section_codeforces(args: argparse.Namespace) -> str:
    from podium import Rater
    from podium.io import load_contests

    _warm_up()

    path = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    n = args.cf_contests
    loaded = load_contests(path, dedupe_urls=True, sort_by_time=True,
                           limit=None if n is None else n + 10)
    contests = loaded.contests if n is None else loaded.contests[:n]
    lab = history_from_contests(contests)
    _, t_before = _timed(lambda: Rater("mmr").extend(contests))
    # the whole history but its last contest, smoothed to the tolerance; then the last
    # contest added incrementally (bounded sweeps)
    t0 = time.perf_counter()
    state = SmoothState.start(lab.history, window_tol=args.window_tol)
    state.rate_forward(state.history.n_contests - 1)
    first_pass = time.perf_counter() - t0
    reports, converged = state.solve(args.tol, 100, args.memory, coarse=not args.no_coarse)
    t_smooth = time.perf_counter() - t0
    res = smooth_result(state, converged, reports)
    converged_arrays = state.to_arrays() if args.reference_tol else None
    (_, added), t_add = _timed(lambda: smooth_extend(res, 1, tol=args.tol, max_sweeps=3,
                                                     spread=args.update_spread))
    added_arrays = state.to_arrays() if args.reference_tol else None
    # `mmr` again after the smoothing: on this shared machine one run of it moved by up
    # to 1.8x between runs at the same load, so the ratios take the faster of the two
    _, t_after = _timed(lambda: Rater("mmr").extend(contests))
    t_filter = min(t_before, t_after)
    below = [i for i, r in enumerate(reports) if r.max_perf_change <= 0.1]
    t_01 = first_pass + sum(r.seconds for r in reports[:below[0] + 1]) if below else \
        math.nan
    rows = "\n".join(f"| {i + 1} | {r.seconds:.1f} | {r.phase2_seconds:.1f} | "
                     f"{r.phase1_seconds:.1f} | {r.players} | {r.rounds} | "
                     f"{r.max_perf_change:.3g} | {r.max_cavity_change:.3g} |"
                     for i, r in enumerate(reports))
    add_rows = "\n".join(f"| {i + 1} | {r.seconds:.2f} | {r.phase2_seconds:.2f} | "
                         f"{r.phase1_seconds:.2f} | {r.players} | {r.rounds} | "
                         f"{r.rounds_gated} | {r.rows_solved:,} | {r.max_perf_change:.3g} | "
                         f"{r.max_cavity_change:.3g} |"
                         for i, r in enumerate(added.sweeps))
    check = add_check = ""
    if converged_arrays is not None and added_arrays is not None:
        check = _reference_check(lab.history, converged_arrays, args) + "\n\n"
        add_check = "\n\n" + _update_check(lab.history, added_arrays, args)
    gap = np.nanmean(res.mu - res.filtered_mu)
    body = (f"{len(contests)} contests, {lab.history.n_rows:,} player-rounds, "
            f"{lab.history.n_players:,} players; same process, the contests loaded once "
            "and every kernel loaded before the timings.  `mmr-smooth` smooths all but the "
            "last contest, then adds the last one (`smooth_extend`, at most 3 sweeps).\n\n"
            "| | ratio to `mmr` | seconds |\n|---|---:|---:|\n"
            f"| Podium `mmr`, every contest (`Rater.extend`, the rating step of "
            f"`podium rate`; the faster of a run before the smoothing, {t_before:.1f} s, and "
            f"one after it, {t_after:.1f} s) | 1.0x | {t_filter:.1f} |\n"
            f"| `mmr-smooth`, residual below 0.1 | {t_01 / t_filter:.1f}x | {t_01:.1f} |\n"
            f"| `mmr-smooth`, residual below {args.tol:g} (converged: {converged}) | "
            f"{t_smooth / t_filter:.1f}x | {t_smooth:.1f} |\n"
            f"| `mmr-smooth`, adding the last contest (`tol` {args.tol:g}, propagation "
            f"threshold {args.update_spread:g} `tol`) | {t_add / t_filter:.2f}x "
            f"({100 * t_add / t_smooth:.2f} % of the full pass) | {t_add:.1f} |\n\n"
            f"First pass (Elo-MMR itself, the starting point): {first_pass:.1f} s; then "
            f"{len(reports)} sweeps (Anderson memory {args.memory}, "
            f"{'without' if args.no_coarse else 'with'} the coarse correction; the sweeps' "
            "phase 1: "
            f"Newton per tie group from its current performance to {SWEEP_STEP:g} `tol` "
            f"on one interpolant of the summed terms per round, Chebyshev panels "
            f"{sweep_panels(args.tol / 100):g}x the first pass's width); "
            f"`window_tol` {args.window_tol:g}; unconverged solves {res.unsolved}; mean "
            f"smoothed rating minus filtered rating over all player-rounds: {gap:+.1f}.\n\n"
            + check +
            "| sweep | s | phase 2 s | phase 1 s | players | rounds | residual max abs Δperf "
            "| max abs Δ cavity |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n" + rows
            + f"\n\nAdding the last contest ({added.players:,} players re-smoothed, "
            f"settled: {added.settled}, largest change of an earlier smoothed rating "
            f"{added.max_past_change:.3g}; changes below {args.update_spread:g} × "
            f"{args.tol:g} not passed on; *rows solved*: the rows of the tie groups "
            f"solved again, of {res.state.rated_rows:,}; *gated*: the rounds visited that "
            "the gate left as they were, from their stored residuals; the rest of its time "
            "is rating the contest and the last players' beliefs):\n\n"
            "| update sweep | s | phase 2 s | phase 1 s | players | rounds | gated "
            "| rows solved | max abs Δperf | max abs Δ cavity |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" + add_rows
            + add_check)
    print(body, flush=True)
    return body


def section_teams(args: argparse.Namespace) -> str:
    from podium import Rater
    from podium.io.synthetic_teams import synthetic_team_contests

    _warm_up()
    league = synthetic_team_contests(args.team_players, args.team_rounds, partial_prob=0.2,
                                     seed=1)
    contests = league.contests
    lab = history_from_contests(contests)
    _warm_teams(contests[:5])
    rater = Rater("mmr")
    _, t_filter = _timed(lambda: rater.extend(contests))
    t0 = time.perf_counter()
    state = SmoothState.start(lab.history, window_tol=args.window_tol)
    state.rate_forward(state.history.n_contests - 1)
    first_pass = time.perf_counter() - t0
    reports, converged = state.solve(args.tol, 200, args.memory, coarse=not args.no_coarse)
    t_smooth = time.perf_counter() - t0
    res = smooth_result(state, converged, reports)
    (_, added), t_add = _timed(lambda: smooth_extend(res, 1, tol=args.tol, max_sweeps=3,
                                                     spread=args.update_spread))
    truth = np.concatenate([league.skill[k] for k in lab.contest_index])
    ok = np.isfinite(res.mu)

    def spread(x: np.ndarray) -> float:
        d = x[ok] - truth[ok]
        return float(np.sqrt(np.mean((d - d.mean()) ** 2)))

    phase2 = sum(r.phase2_seconds for r in reports)
    phase1 = sum(r.phase1_seconds for r in reports)
    body = (f"{len(contests)} team rounds (20 teams of 1-5 members, partial play 0.2), "
            f"{lab.history.n_rows:,} player-rounds, {lab.history.n_players:,} players; same "
            "process, every kernel loaded before the timings.  `mmr-smooth` smooths all "
            "but the last round, then adds the last one (`smooth_extend`, at most 3 "
            "sweeps).\n\n"
            "| | ratio to `mmr` | seconds |\n|---|---:|---:|\n"
            f"| Podium `mmr` (`Rater.extend`) | 1.0x | {t_filter:.1f} |\n"
            f"| `mmr-smooth`, residual below {args.tol:g} (converged: {converged}) | "
            f"{t_smooth / t_filter:.1f}x | {t_smooth:.1f} |\n"
            f"| `mmr-smooth`, adding the last round | {t_add / t_filter:.2f}x "
            f"({100 * t_add / t_smooth:.2f} % of the full pass) | {t_add:.2f} |\n\n"
            f"First pass {first_pass:.1f} s, then {len(reports)} sweeps (phase 2 "
            f"{phase2:.1f} s, phase 1 {phase1:.1f} s); unconverged solves {res.unsolved}.  "
            "Distance to the members' true skills (root mean square about the mean "
            f"offset, every player-round): smoothed {spread(res.mu):.1f}, filtered "
            f"{spread(res.filtered_mu):.1f}.")
    print(body, flush=True)
    return body


def _warm_teams(contests: list[Any]) -> None:
    """Load the kernels of a team round (``mmr`` and ``mmr-smooth``) before timing."""
    from podium import Rater

    Rater("mmr").extend(contests)
    mmr_smooth(history_from_contests(contests).history)


def _solved_on(history: ContestHistory, arrays: dict[str, np.ndarray],
               args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """A smoothing's state (``arrays``) solved on to ``--reference-tol``: per rated row,
    how far each performance and smoothed rating moved, the sweeps and whether it
    converged."""
    ref = SmoothState.start(history, window_tol=args.window_tol)
    ref.restore(arrays)
    en = ref.entries
    e = ref.e_of_row[:ref.rated_rows]
    perf, sm = en.perf[e].copy(), en.sm_mu[e].copy()
    reports, ok = ref.solve(args.reference_tol, 100, args.memory)
    return en.perf[e] - perf, en.sm_mu[e] - sm, len(reports), ok


def _reference_check(history: ContestHistory, converged: dict[str, np.ndarray],
                     args: argparse.Namespace) -> str:
    """How far the smoothing at ``--tol`` is from the fixed point: the converged state
    (all but the last contest) solved on to ``--reference-tol``, and the largest
    changes of a performance and of a smoothed rating."""
    d_perf, d_sm, sweeps, ok = _solved_on(history, converged, args)
    return (f"Distance to the fixed point: solved on from the result to a residual of "
            f"{args.reference_tol:g} ({sweeps} more sweeps, converged: {ok}), no "
            f"performance moved by more than {np.abs(d_perf).max():.3g} and no "
            f"smoothed rating by more than {np.abs(d_sm).max():.3g} rating points.")


def _update_check(history: ContestHistory, added: dict[str, np.ndarray],
                  args: argparse.Namespace) -> str:
    """How far the bounded update is from the fixed point of the whole history: its
    state solved on to ``--reference-tol``; the mean change (a common level) and the
    changes less their median (what moves players against each other)."""
    d_perf, d_sm, sweeps, ok = _solved_on(history, added, args)
    rel_p, rel_s = d_perf - np.median(d_perf), d_sm - np.median(d_sm)
    return (f"Distance of the update to the fixed point of the whole history: solved on "
            f"to a residual of {args.reference_tol:g} ({sweeps} more sweeps, converged: "
            f"{ok}), the performances moved by {np.abs(d_perf).max():.3g} at most and "
            f"{d_perf.mean():+.3g} on average, the smoothed ratings by "
            f"{np.abs(d_sm).max():.3g} at most and {d_sm.mean():+.3g} on average; less "
            f"their median change, by at most {np.abs(rel_p).max():.3g} (root mean square "
            f"{np.sqrt(np.mean(rel_p ** 2)):.3g}) and {np.abs(rel_s).max():.3g} "
            f"({np.sqrt(np.mean(rel_s ** 2)):.3g}).")


def football_history(path: Path) -> tuple[ContestHistory, int]:
    """The international results as two-team contests: places from the scores (a draw
    is a tie), days since 1970-01-01 (negative before), team names as they are (former
    names not merged).  Returns the history and the number of teams."""
    import pandas as pd

    df = pd.read_csv(path / "results.csv").dropna(subset=["home_score", "away_score"])
    df = df.sort_values("date", kind="stable")
    days = ((pd.to_datetime(df["date"]) - pd.Timestamp("1970-01-01")).dt.days
            .to_numpy(dtype=np.float64))
    names = pd.unique(pd.concat([df["home_team"], df["away_team"]]))
    idx = {n: i for i, n in enumerate(names)}
    home = df["home_team"].map(idx).to_numpy()
    away = df["away_team"].map(idx).to_numpy()
    hs = df["home_score"].to_numpy()
    as_ = df["away_score"].to_numpy()
    n = len(df)
    first = np.where(hs >= as_, home, away)
    second = np.where(hs >= as_, away, home)
    player = np.empty(2 * n, dtype=np.int64)
    player[0::2] = first
    player[1::2] = second
    place = np.zeros(2 * n, dtype=np.int64)
    place[1::2] = np.where(hs == as_, 0, 1)
    h = history_from_arrays(np.arange(0, 2 * n + 1, 2), np.arange(2 * n + 1), place, player,
                            days, n_players=len(names))
    return h, len(names)


def _winner_picked(h: ContestHistory, mu: np.ndarray) -> float:
    """Share of decisive games whose winner had the higher rating (ties count half)."""
    a, b = mu[0::2], mu[1::2]
    decisive = h.team_place[1::2] == 1
    ok = np.where(a > b, 1.0, np.where(a == b, 0.5, 0.0))[decisive]
    return 100.0 * float(np.nanmean(ok))


def section_football(args: argparse.Namespace) -> str:
    from podium import Contest, Rater

    _warm_up()
    h, n_teams = football_history(data_dir() / "football")
    rows = []
    res_t, t_t = _timed(lambda: ttt(h, p_draw=0.25))
    mu_t = res_t.mu[res_t.row_slot]
    rows.append(f"| `ttt` (p_draw 0.25) | {t_t:.1f} | {res_t.sweeps} sweeps, converged "
                f"{res_t.converged} | {_winner_picked(h, mu_t):.2f} (smoothed) |")
    res_w, t_w = _timed(lambda: whr(h, tol=1e-3, max_iter=1000))
    rows.append(f"| `whr` (nu fitted: {res_w.nu:.3f}; gradient below 1e-3, the package's "
                f"default) | {t_w:.1f} | {res_w.sweeps} sweeps, "
                f"largest gradient {res_w.grad_norm:.2g} | "
                f"{_winner_picked(h, res_w.r[res_w.row_slot]):.2f} (smoothed) |")
    res_s, t_s = _timed(lambda: mmr_smooth(h, tol=args.tol, window_tol=args.window_tol))
    rows.append(f"| `mmr-smooth` (draws left out) | {t_s:.1f} | {len(res_s.sweeps)} sweeps, "
                f"converged {res_s.converged} | "
                f"{_winner_picked(h, res_s.prior_mu):.2f} (smoothed) |")
    (f_mu, _, _), t_f = _timed(lambda: smooth_forecast(h, tol=0.1, max_sweeps=1,
                                                       window_tol=args.window_tol))
    rows.append(f"| `mmr-smooth` causal forecast (1 sweep per match, tol 0.1) | {t_f:.1f} | "
                f"– | {_winner_picked(h, f_mu):.2f} |")
    contests = [Contest([(str(h.player[2 * c]), 0, int(h.team_place[2 * c + 1] == 0)),
                         (str(h.player[2 * c + 1]), int(h.team_place[2 * c + 1]), 1)],
                        time_seconds=int(h.time[c]) * 86400)
                for c in range(h.n_contests)]
    rater = Rater("mmr")
    _, t_m = _timed(lambda: rater.extend(contests))
    # Elo-MMR's priors: the first pass of mmr-smooth is Elo-MMR itself (to 1e-9)
    state = res_s.state
    prior = state.row_view(state.forecast_mu)
    rows.append(f"| `mmr` (Rater.extend, draws skipped) | {t_m:.1f} | – | "
                f"{_winner_picked(h, prior):.2f} |")
    body = (f"{h.n_contests:,} matches, {n_teams} teams (former names not merged), "
            "1872-2026; a draw is a tie.  *Winner picked*: share of decisive matches whose "
            "winner had the higher rating before it (causal rows) or at it (smoothed "
            "rows, which have seen the match: a reference, not a forecast).\n\n"
            "| engine | seconds | iterations | winner picked % |\n|---|---:|---|---:|\n"
            + "\n".join(rows))
    print(body, flush=True)
    return body



def _podium_rate(system: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    """``podium rate`` of the Codeforces archive as a whole process (every default output
    file): its wall and CPU seconds and its own split."""
    path = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    cmd = [sys.executable, "-m", "podium", "rate", str(path), "--dedupe", "--sort-by-time",
           "--system", system, "--out", str(out)]
    if args.cf_contests is not None:
        cmd += ["-n", str(args.cf_contests)]
    wall, cpu, proc = timed_process(cmd, ROOT, checkout_env())
    hit = PODIUM_REPORT.search(proc.stderr)
    if proc.returncode != 0 or hit is None:
        raise RuntimeError(f"podium rate --system {system} failed:\n{proc.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu, "contests": float(hit.group(1)),
            "rows": float(hit.group(2).replace(",", "")), "rate": float(hit.group(3)),
            "load": float(hit.group(4)), "write": float(hit.group(5))}


def section_command(args: argparse.Namespace) -> str:
    """Issue 29's speed target as its user meets it: the whole ``podium rate`` command
    of ``mmr-smooth`` against that of exact ``mmr``, in the same run (``mmr`` before and
    after, the faster taken)."""
    runs: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, system in enumerate(("mmr", "mmr-smooth", "mmr")):
            runs.append((system, _podium_rate(system, args, Path(tmp) / f"out{k}")))
            print(system, runs[-1], flush=True)
    mmr_runs = [r for name, r in runs if name == "mmr"]
    peer = min(mmr_runs, key=lambda r: r["wall"])
    smooth = runs[1][1]
    lines = []
    for label, r in (("`mmr`, before", runs[0][1]), ("`mmr-smooth`", smooth),
                     ("`mmr`, after", runs[2][1])):
        lines.append(f"| {label} | {r['wall'] / peer['wall']:.2f}x | {r['wall']:.1f} | "
                     f"{r['rate']:.1f} | {r['load']:.1f} | {r['write']:.1f} | "
                     f"{r['cpu']:.1f} |")
    body = (f"{int(smooth['contests'])} contests, {int(smooth['rows']):,} player-rounds. "
            "Each command is its own process, timed from start to exit: `podium rate "
            "CODEFORCES --dedupe --sort-by-time --system NAME --out DIR` with every default "
            "output (`ratings.csv`, `histories.csv`, `contests.csv`), every kernel cached; "
            "`mmr` runs before and after `mmr-smooth` and the ratio is to the faster of "
            "the two (the peer's best case). *Rating*, *loading*, *writing*: the "
            "command's own report; *CPU*: the process's user + system time.\n\n"
            "| command | ratio to `mmr` | wall s | rating s | loading s | writing s | "
            "CPU s |\n|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(lines)
            + "\n\n`mmr-smooth` against each `mmr` run: "
            + ", ".join(f"{smooth['wall'] / r['wall']:.2f}x" for r in mmr_runs)
            + "; the rating steps alone: "
            + ", ".join(f"{smooth['rate'] / r['rate']:.2f}x" for r in mmr_runs) + ".")
    print(body, flush=True)
    return body


SECTIONS: dict[str, Callable[[argparse.Namespace], str]] = {
    "ttt": section_ttt, "whr": section_whr, "codeforces": section_codeforces,
    "football": section_football, "teams": section_teams, "command": section_command,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--section", action="append", choices=sorted(SECTIONS))
    ap.add_argument("--cf-contests", type=int, default=None)
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--window-tol", type=float, default=1e-9)
    ap.add_argument("--no-coarse", action="store_true",
                    help="mmr-smooth's sweeps without the coarse correction (the plain map)")
    ap.add_argument("--memory", type=int, default=10,
                    help="Anderson memory of mmr-smooth's sweeps (default: its own)")
    ap.add_argument("--update-spread", type=float, default=UPDATE_SPREAD,
                    help="codeforces: the update's propagation threshold in units of "
                         "--tol (default %(default)g)")
    ap.add_argument("--reference-tol", type=float, default=None,
                    help="codeforces: also solve the result on to this residual and "
                         "report how far it was from the fixed point (more sweeps)")
    ap.add_argument("--team-players", type=int, default=2000)
    ap.add_argument("--team-rounds", type=int, default=3000)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    for name in args.section or list(SECTIONS):
        load = load_average()
        body = SECTIONS[name](args)
        if args.write_docs:
            for doc in (DOC, BENCHMARKS_DOC) if name in IN_BENCHMARKS else (DOC,):
                write_section(doc, f"history-{name}", body, load_at_start=load)


if __name__ == "__main__":
    main()
