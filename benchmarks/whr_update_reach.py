"""Why ``whr``'s bounded update of one football match does not settle (issue 29, item 4):
how far one new match moves the fixed point, against what the update steps.

On the first ``N`` international football results (``bench_history.football_history``,
``--at``), for each of the next ``--matches`` matches:

* *reach*: the whole history solved to a gradient of 1e-10 before and after the match
  (:func:`~podium.history.whr.whr`); the days of the earlier matches whose rating moved
  by more than 0.01 Elo (the update's ``update_tol``), 0.1 Elo and 1 Elo, the players
  they belong to, and how far ``log nu`` moved.  An update settles only once it has
  stepped every day of the first count, so this is the least work a settled update
  does;
* *update*: :func:`~podium.history.whr.whr_update` from a refit solved to 1e-4 (what
  ``causal_history.py --update-between`` starts from), each match added to the previous
  update's result, with the default 3 sweeps: its sweeps, whether it settled, the days
  it stepped, its time, and its largest distance to the exact fit (Elo);
* *settled*: the same update from the exact fit with unbounded sweeps (at most 200):
  the sweeps and days it takes to settle.

A first row times an update that adds nothing (``whr_update`` of the refit's own
history): the part of every update's cost that grows with the history (the slot layout
of the grown history and its checks, and the table of each two-team round's ``u`` for
the Newton step on ``log nu``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average  # noqa: E402
from bench_history import football_history  # noqa: E402

from podium.history import ContestHistory  # noqa: E402
from podium.history.whr import ELO_PER_NAT, WHRResult, whr, whr_update  # noqa: E402

LEVELS = (0.01, 0.1, 1.0)


def moved(before: WHRResult, after: WHRResult) -> np.ndarray:
    """Each earlier slot's change in Elo from ``before`` to ``after`` (a fit of the
    history grown at its end)."""
    where = np.full(before.slot_player.size, -1, dtype=np.int64)
    where[before.row_slot] = after.row_slot[:before.row_slot.size]
    return np.abs(after.r[where] - before.r) * ELO_PER_NAT


def update(previous: WHRResult, h: ContestHistory, sweeps: int) -> tuple[WHRResult, float]:
    """``whr_update`` of ``h`` from ``previous`` and its time in seconds."""
    t0 = time.perf_counter()
    out = whr_update(previous, h, max_sweeps=sweeps)
    dt = time.perf_counter() - t0
    if out is None:
        raise SystemExit("the draw model changed: pick another --at")
    return out[0], dt


def run(h_all: ContestHistory, n: int, k: int) -> None:
    """The rows of the first ``n`` matches and the next ``k``."""
    exact = whr(h_all.prefix(n), tol=1e-10)
    refit = whr(h_all.prefix(n), tol=1e-4)
    update(refit, h_all.prefix(n + 1), 3)  # compile (or load) the kernels
    idle = [update(refit, h_all.prefix(n), 3)[1] for _ in range(7)]
    print(f"\n{n:,} matches ({exact.r.size:,} days, nu {exact.nu:.4f}; refit at 1e-4: "
          f"{refit.sweeps} sweeps): an update adding nothing {np.median(idle) * 1e3:.2f} ms")
    print("| match | days moved > " + " / ".join(f"{x:g}" for x in LEVELS)
          + " Elo | players | d log nu | update: sweeps, settled, days, ms, off by | "
          "settled: sweeps, days |")
    print("|---|---|---:|---:|---|---|")
    prev = refit
    stats = []
    for i in range(1, k + 1):
        h = h_all.prefix(n + i)
        nxt = whr(h, tol=1e-10)
        d = moved(exact, nxt)
        players = np.unique(exact.slot_player[d > LEVELS[0]]).size
        prev, dt = update(prev, h, 3)
        full, _ = update(exact, h, 200)
        off = float(np.max(np.abs(prev.r - nxt.r))) * ELO_PER_NAT
        stats.append((int((d > LEVELS[0]).sum()), prev.days, dt, full.sweeps, full.days))
        print(f"| {n + i} | " + " / ".join(f"{int((d > x).sum()):,}" for x in LEVELS)
              + f" | {players} | {np.log(nxt.nu / exact.nu):+.1e} | {prev.sweeps}, "
              f"{prev.converged}, {prev.days:,}, {dt * 1e3:.1f}, {off:.2f} | {full.sweeps} "
              f"({full.converged}), {full.days:,} |", flush=True)
        exact = nxt
    a = np.array(stats, dtype=float)
    print(f"median: reach {np.median(a[:, 0]):,.0f} days; update {np.median(a[:, 1]):,.0f} "
          f"days, {np.median(a[:, 2]) * 1e3:.1f} ms; settled after {np.median(a[:, 3]):.0f} "
          f"sweeps, {np.median(a[:, 4]):,.0f} days")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--at", default="25000,45000", help="history lengths, comma-separated")
    ap.add_argument("--matches", type=int, default=5, help="matches added after each")
    args = ap.parse_args(argv)
    print(f"load average at start: {load_average()}")
    h_all, _ = football_history(data_dir() / "football")
    for n in (int(x) for x in args.at.split(",")):
        run(h_all, n, args.matches)


if __name__ == "__main__":
    main()
