"""The bounded incremental update of ``ttt`` and ``whr`` (issue 29, item 4): adding one
contest to a fitted history against solving the whole history again, same process.

The history is the first ``--contests`` international football results (1v1 matches,
a draw is a tie; ``bench_history.football_history``), or all of them.  For each engine
the whole history but its last match is fitted in full (the engine's defaults; ``ttt``
with ``p_draw`` 0.25 for the draws), then the last match is added two ways, through
:meth:`~podium.history.engines.WholeHistorySystem.fit`, the step of
``HistoryRater.add``:

* *full*: the whole history solved again (what ``add`` did before);
* *update*: from the previous fit, at most ``update_sweeps`` sweeps over what the
  match touches.

Times are the best of ``--repeats``; the table gives the update's sweeps, the players
it touched, the largest change of an earlier rating it reported and its largest
distance to the full solve (display scale: ``ttt`` skill units, ``whr`` Elo).  A last
row times ``HistoryRater.add`` itself (the history's arrays rebuilt, the curves
republished) against ``HistoryRater.extend`` of every match at once.

``--write-docs`` writes the table into docs/history.md (block ``history-update``).
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average, write_section  # noqa: E402
from bench_history import football_history  # noqa: E402

from podium import Contest  # noqa: E402
from podium.history import ContestHistory  # noqa: E402
from podium.history.engines import get_history_system  # noqa: E402
from podium.history_rater import HistoryRater  # noqa: E402

DOC = "docs/history.md"
PARAMS: dict[str, dict[str, Any]] = {"ttt": {"p_draw": 0.25}, "whr": {}}


def best(fn: Callable[[], Any], repeats: int) -> tuple[Any, float]:
    """``fn()``'s result and its best time over ``repeats`` calls."""
    out, times = None, []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, min(times)


def contests_of(h: ContestHistory) -> list[Contest]:
    """The matches as Podium contests (teams by number; a draw a tie)."""
    out = []
    for c in range(h.n_contests):
        tie = int(h.team_place[2 * c + 1] == 0)
        out.append(Contest([(str(h.player[2 * c]), 0, tie),
                            (str(h.player[2 * c + 1]), tie ^ 1, 1)],
                           name=f"m{c}", time_seconds=int(h.time[c]) * 86400))
    return out


def run(args: argparse.Namespace) -> str:
    h_all, _ = football_history(data_dir() / "football")
    n = min(args.contests or h_all.n_contests, h_all.n_contests)
    h = h_all.prefix(n)
    h_old = h.prefix(n - 1)
    active = int(np.unique(h.player).size)
    rows = []
    for name in args.systems.split(","):
        system = get_history_system(name, **PARAMS[name])
        w = np.ones(n)
        ceiling = np.full(n, np.inf)

        def fit(hh: ContestHistory, previous: Any = None) -> Any:
            k = hh.n_contests
            return system.fit(hh, contest_weight=w[:k], perf_ceiling=ceiling[:k],  # noqa: B023
                              previous=previous)

        base = fit(h_old)
        full, t_full = best(lambda: fit(h), args.repeats)  # noqa: B023
        upd, t_upd = best(lambda: fit(h, base), args.repeats * 3)  # noqa: B023
        dist = float(np.nanmax(np.abs(upd.mu - full.mu)))
        rows.append(
            f"| `{name}` | {100 * t_upd / t_full:.2f} % | {t_full:.3f} | {t_upd * 1e3:.1f} | "
            f"{full.sweeps} | {upd.sweeps} (settled: {upd.converged}) | "
            f"{upd.players} of {active} | {upd.max_past_change:.3g} | {dist:.3g} |")
        print(rows[-1], flush=True)
    # the HistoryRater's own step: add against extend of everything
    contests = contests_of(h)
    for name in args.systems.split(","):
        rater = HistoryRater(name, **PARAMS[name])
        rater.extend(contests[:-1])
        t_add = min(_timed_add(rater, contests[-1]) for _ in range(args.repeats * 3))
        _, t_ext = best(lambda: HistoryRater(name, **PARAMS[name]).extend(contests),  # noqa: B023
                        args.repeats)
        rows.append(f"| `{name}`: `HistoryRater.add` against `extend` of all | "
                    f"{100 * t_add / t_ext:.2f} % | {t_ext:.3f} | {t_add * 1e3:.1f} | "
                    "| | | | |")
        print(rows[-1], flush=True)
    body = (f"The first {n:,} international football matches ({h.n_rows:,} player-rounds, "
            f"{active} teams); the last one added to the fit of the others.  Best of "
            f"{args.repeats} full solves and {args.repeats * 3} updates, same process, "
            "kernels compiled beforehand.\n\n"
            "| engine | update / full | full s | update ms | full sweeps | update sweeps | "
            "players touched | max past change | distance to full |\n"
            "|---|---:|---:|---:|---:|---|---:|---:|---:|\n" + "\n".join(rows))
    return body


def _timed_add(rater: HistoryRater, contest: Contest) -> float:
    r = copy.deepcopy(rater)
    t0 = time.perf_counter()
    r.add(contest)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--contests", type=int, default=5000,
                    help="the first N matches (0: all 49,520)")
    ap.add_argument("--systems", default="ttt,whr")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    load = load_average()
    # compile (or load) the kernels on a small history first
    small = argparse.Namespace(**{**vars(args), "contests": 50, "repeats": 1})
    run(small)
    body = run(args)
    print(body)
    if args.write_docs:
        write_section(DOC, "history-update", body, load_at_start=load)


if __name__ == "__main__":
    main()
