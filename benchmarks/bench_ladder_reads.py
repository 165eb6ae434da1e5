"""Reading ratings as of now on a big store: the leaderboard's top page, deeper pages, a
player's rating and rank, with and without time drift, and a finished season's board.

    python benchmarks/bench_ladder_reads.py sqlite:////tmp/cf/cf.db --ladder default \\
        --ladder drift [--repeat 20] [--write-docs]

Each ladder named is read through :class:`podium.store.Store` (the calls the API's
routes make): the median and 95th percentile of ``--repeat`` runs after one warm-up; the
first ladder named is the baseline of the ratio column. A ladder whose system has time
drift (Elo-MMR with ``drift_per_day > 0``) is read in as-of order
(:func:`podium.store.asof.ranked_page`: the rating index walked until no later row can
reach the page); without drift the reads are the index reads of a store before ladders.
Each page is checked against a brute-force sort of every player's as-of rating
(``--no-check`` skips it).

The store of the docs: the whole Codeforces history (``podium ingest
../shared/datasets/codeforces/cache_codeforces.tar.gz --db sqlite:////tmp/cf/cf.db
--system mmr --dedupe --sort-by-time``, and the same into ``--ladder drift --set
drift_per_day=25``).
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _report import load_average, write_section

DOC = "docs/service.md"
SECTION = "ladder-reads"


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median and 95th percentile (ms) of ``repeat`` calls after one warm-up."""
    fn()
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(1000 * (time.perf_counter() - t))
    runs.sort()
    return statistics.median(runs), runs[min(len(runs) - 1, int(0.95 * len(runs)))]


def check(store: Any, as_of: int) -> None:
    """The top 200 and a deep page equal a brute-force sort of every as-of rating."""
    import numpy as np

    frame = store.ratings_frame()
    mu, sigma = store.system.drift(frame.mu.to_numpy(), frame.sigma.to_numpy(),
                                   np.maximum(as_of - frame.last_contest_time.to_numpy(), 0))
    shown = np.asarray(store.system.display_rating(mu, sigma))
    order = sorted(range(len(frame)), key=lambda i: (-shown[i], frame.handle[i]))
    want = [frame.handle[i] for i in order]
    assert [r.handle for r in store.leaderboard(limit=200, as_of=as_of)] == want[:200]
    assert [r.handle for r in store.leaderboard(offset=1000, limit=50, as_of=as_of)] == \
        want[1000:1050]


def measure(store: Any, as_of: int, repeat: int) -> dict[str, tuple[float, float]]:
    """The timings of one ladder's reads as of ``as_of``: the top 50, the pages at 1,000
    and 10,000, a player (the one at rank 5,001) with its rank, and the player count."""
    few = max(3, repeat // 4)
    mid = store.leaderboard(offset=5000, limit=1, as_of=as_of)
    handle = mid[0].handle if mid else store.leaderboard(limit=1, as_of=as_of)[0].handle
    return {
        "top": timed(lambda: store.leaderboard(limit=50, as_of=as_of), repeat),
        "p1k": timed(lambda: store.leaderboard(offset=1000, limit=50, as_of=as_of), repeat),
        "p10k": timed(lambda: store.leaderboard(offset=10000, limit=50, as_of=as_of), few),
        "player": timed(lambda: store.player(handle, as_of=as_of), few),
        "count": timed(lambda: store.count_players(as_of=as_of), repeat),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("--ladder", action="append", default=None)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    load0 = load_average()
    from podium.store import Store

    measured: list[tuple[str, int, dict[str, tuple[float, float]]]] = []
    with Store.open(args.db) as root:
        for name in args.ladder or ["default"]:
            store = root.ladder(name)
            latest = store.latest_contest()
            now = int(time.time())
            as_of = max(now, 0 if latest is None else latest.time_seconds)
            drift = store.params.get("drift_per_day", 0.0)
            if not args.no_check:
                check(store, as_of)
            row = measure(store, as_of, args.repeat)
            n = store.count_players(as_of=as_of)
            label = f"{name} ({store.system_name}, drift_per_day {drift:g})"
            measured.append((label, n, row))
            print(label, n, row, file=sys.stderr)
    base = measured[0][2]["top"][0]
    lines = [f"| ladder (system, drift) | players | top 50: time against {measured[0][0]} | "
             "top 50 (ms) | page at 1,000 (ms) | page at 10,000 (ms) | player + rank (ms) | "
             "count (ms) |", "|---|---|---|---|---|---|---|---|"]
    for label, n, row in measured:
        cells = " | ".join(f"**{a:.1f}** ({b:.1f})" if k == "top" else f"{a:.1f} ({b:.1f})"
                           for k, (a, b) in row.items())
        lines.append(f"| {label} | {n:,} | {row['top'][0] / base:.2f}x | {cells} |")
    table = ("Median (95th percentile) of the `Store` calls, ratings as of now; "
             f"{args.repeat} runs after a warm-up (pages at 10,000 and players: "
             f"{max(3, args.repeat // 4)}).\n\n" + "\n".join(lines) + "\n")
    print(table)
    if args.write_docs:
        write_section(DOC, SECTION, table, load_at_start=load0, command=" ".join(
            ["python", "benchmarks/bench_ladder_reads.py", *map(shlex.quote, argv or
                                                                  sys.argv[1:])]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
