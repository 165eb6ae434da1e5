"""Reading ratings as of now on a big store: the leaderboard's top page, deeper pages, a
player's rating and rank, with and without time drift, and a finished season's board;
and the top 50 of a ladder with drift read at several times, against the walk it
replaced.

    python benchmarks/bench_ladder_reads.py sqlite:////tmp/cf/cf.db --ladder default \\
        --ladder drift [--repeat 20] [--write-docs]

Each ladder named is read through :class:`podium.store.Store` (the calls the API's
routes make): the median and 95th percentile of ``--repeat`` runs after one warm-up; the
first ladder named is the baseline of the ratio column. A ladder whose system has time
drift (Elo-MMR with ``drift_per_day > 0``) is read in as-of order
(:func:`podium.store.asof.ranked_page`: the players walked by ``mu`` until the system's
bound rules out every row left); without drift the reads are the index reads of a store
before ladders.  Each page is checked against a brute-force sort of every player's
as-of rating (``--no-check`` skips it).

For each ladder with drift, a second table: the top 50 as of the latest contest, a day,
a year and five years after it, and now, three ways in the same run -- the
``Store.leaderboard`` call; the walk of the commit before (the stored-display index
read until the next stored rating falls below the page: :func:`display_walk`, kept
here as the baseline, with the same read transaction, latest-contest and settings
reads); and the full computation (every row read, drifted, sorted) -- with the rows
each walk read.

The store of the docs: the whole Codeforces history (``podium ingest
../shared/datasets/codeforces/cache_codeforces.tar.gz --db sqlite:////tmp/cf/cf.db
--system mmr --dedupe --sort-by-time``, and the same into ``--ladder drift --set
drift_per_day=25``; ``podium db-upgrade`` for a store of schema 6).
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
SECTION_TIMES = "ladder-reads-as-of"
DAY = 86_400
#: The read times of the second table: seconds after the latest contest (None: now).
READ_TIMES: tuple[tuple[str, int | None], ...] = (
    ("the latest contest", 0), ("+1 day", DAY), ("+365 days", 365 * DAY),
    ("+5 years", 5 * 365 * DAY), ("now", None))


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


def display_walk(store: Any, as_of: int, limit: int = 50) -> tuple[list[Any], int]:
    """The top ``limit`` as of ``as_of`` by the walk of the commit before (the stored
    display-rating index, read in chunks of 256, 512, ... until the stored rating of
    the next row is below the page's last as-of rating), and the rows it read."""
    import heapq

    import numpy as np
    from sqlalchemy import and_, or_, select

    from podium.store.asof import RatingView
    from podium.store.engine import read_txn
    from podium.store.ladders import read_settings

    ctx = store.services.context
    p, c = ctx.tables.players, ctx.tables.contests
    cols = (p.c.handle, p.c.display_rating, p.c.mu, p.c.sigma, p.c.last_contest_time)
    order = (p.c.display_rating.desc(), p.c.handle.asc())
    with read_txn(ctx.engine) as conn:
        latest = conn.execute(select(c.c.time_seconds).order_by(c.c.seq.desc())
                              .limit(1)).scalar()
        view = RatingView(ctx.system, as_of, read_settings(conn, ctx.tables), latest)
        cands: list[tuple[float, str, float, float]] = []
        chunk, after, read = max(256, 2 * limit), None, 0
        while True:
            q = select(*cols).where(p.c.display_rating.is_not(None))
            if after is not None:
                q = q.where(or_(p.c.display_rating < after[0],
                                and_(p.c.display_rating == after[0], p.c.handle > after[1])))
            rows = conn.execute(q.order_by(*order).limit(chunk)).all()
            read += len(rows)
            if not rows:
                break
            mu, sigma, shown = view.values(np.array([r.mu for r in rows]),
                                           np.array([r.sigma for r in rows]),
                                           np.array([r.last_contest_time for r in rows],
                                                    dtype=np.float64))
            cands.extend((-float(shown[k]), r.handle, float(mu[k]), float(sigma[k]))
                         for k, r in enumerate(rows))
            if len(rows) < chunk:
                break
            bound = float(rows[-1].display_rating)
            if len(cands) >= limit and -heapq.nsmallest(limit, cands)[-1][0] > bound:
                break
            after, chunk = (bound, rows[-1].handle), chunk * 2
    return heapq.nsmallest(limit, cands), read  # (-as-of display, handle, mu, sigma)


def full_computation(store: Any, as_of: int, limit: int = 50) -> list[tuple[float, str]]:
    """The top ``limit`` of every player's as-of rating: every rated row read (four
    columns), drifted, the best ``limit`` (ties: handle) sorted."""
    import numpy as np
    from sqlalchemy import select

    from podium.store.engine import read_txn

    ctx = store.services.context
    p = ctx.tables.players
    with read_txn(ctx.engine) as conn:
        rows = conn.execute(select(p.c.handle, p.c.mu, p.c.sigma, p.c.last_contest_time)
                            .where(p.c.display_rating.is_not(None))).all()
    handles, mu, sigma, last = zip(*rows, strict=True)
    mu_t, sigma_t = store.system.drift(np.array(mu), np.array(sigma),
                                       np.maximum(as_of - np.array(last, dtype=np.float64), 0))
    shown = np.asarray(store.system.display_rating(mu_t, sigma_t))
    cut = np.partition(shown, shown.size - limit)[shown.size - limit]
    best = np.flatnonzero(shown >= cut).tolist()
    return sorted((-float(shown[i]), handles[i]) for i in best)[:limit]


def interleaved(calls: list[Callable[[], Any]],
                repeat: int) -> list[tuple[float, float, float]]:
    """Median and 95th percentile of the wall time and median CPU time of this process
    (ms) of each call, the calls taking turns ``repeat`` times after one warm-up each
    (so that the machine's load weighs on them alike)."""
    for fn in calls:
        fn()
    runs: list[list[float]] = [[] for _ in calls]
    cpu: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for k, fn in enumerate(calls):
            c = time.process_time()
            t = time.perf_counter()
            fn()
            runs[k].append(1000 * (time.perf_counter() - t))
            cpu[k].append(1000 * (time.process_time() - c))
    out = []
    for r, u in zip(runs, cpu, strict=True):
        r.sort()
        out.append((statistics.median(r), r[min(len(r) - 1, int(0.95 * len(r)))],
                    statistics.median(u)))
    return out


def rows_walked(store: Any, as_of: int, limit: int = 50) -> int:
    """The rows :func:`podium.store.asof.ranked_page` reads for the top ``limit`` (the
    rows whose as-of values it computes: :meth:`RatingView.values`, counted)."""
    from podium.store import asof

    real = asof.RatingView.values
    rows = [0]

    def values(self: Any, mu: Any, sigma: Any, last: Any) -> Any:
        rows[0] += len(mu)
        return real(self, mu, sigma, last)

    asof.RatingView.values = values  # type: ignore[method-assign]
    try:
        store.leaderboard(limit=limit, as_of=as_of)
    finally:
        asof.RatingView.values = real  # type: ignore[method-assign]
    return rows[0]


def read_times(store: Any, repeat: int) -> list[str]:
    """The second table's rows for one ladder with drift (see the module notes)."""
    latest = store.latest_contest().time_seconds
    out = []
    for label, after in READ_TIMES:
        at = int(time.time()) if after is None else latest + after
        new = [(-r.display_rating, r.handle) for r in store.leaderboard(limit=50, as_of=at)]
        old, old_rows = display_walk(store, at)
        assert [(neg, h) for neg, h, _, _ in old] == new == full_computation(store, at)
        t_new, t_old = interleaved([lambda: store.leaderboard(limit=50, as_of=at),  # noqa: B023
                                    lambda: display_walk(store, at)], repeat)  # noqa: B023
        t_full = timed(lambda: full_computation(store, at), max(3, repeat // 10))  # noqa: B023
        when = label if after is None else f"{label} ({time.strftime('%Y-%m-%d', time.gmtime(at))})"
        out.append(f"| {when} | **{t_old[0] / t_new[0]:.1f}x** | {t_full[0] / t_new[0]:.0f}x | "
                   f"**{t_new[0]:.1f}** ({t_new[1]:.1f}) | {t_new[2]:.1f} | "
                   f"{t_old[0]:.1f} ({t_old[1]:.1f}) | {t_old[2]:.1f} | {t_full[0]:.0f} | "
                   f"{rows_walked(store, at):,} | {old_rows:,} |")
        print(out[-1], file=sys.stderr)
    return out


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
    by_time: list[tuple[str, list[str]]] = []
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
            if store.system.has_time_drift:
                by_time.append((label, read_times(store, args.repeat)))
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
    times = ""
    for label, rows in by_time:
        times += (f"Ladder {label}: the top 50 as of each time, median (95th percentile) "
                  f"of {args.repeat} runs after a warm-up, the call and the walk before "
                  "taking turns (the full computation: "
                  f"{max(3, args.repeat // 10)}); the three give the same page.\n\n"
                  "| read as of | the walk before: time against this one | full "
                  "computation: time against this one | `Store.leaderboard` (ms) | its "
                  "CPU (ms) | the walk before (ms) | its CPU (ms) | full computation "
                  "(ms) | rows read | rows read by the walk before |\n"
                  "|---|---|---|---|---|---|---|---|---|---|\n"
                  + "\n".join(rows) + "\n\n")
    print(times)
    if args.write_docs:
        command = " ".join(["python", "benchmarks/bench_ladder_reads.py",
                            *map(shlex.quote, argv or sys.argv[1:])])
        write_section(DOC, SECTION, table, load_at_start=load0, command=command)
        if times:
            write_section(DOC, SECTION_TIMES, times.rstrip("\n") + "\n",
                          load_at_start=load0, command=command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
