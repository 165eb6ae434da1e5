"""Two limits of a store on a big history (docs/service.md, "Scale: queries").

``first-write URL [--profile]``
    A fresh process opens the store at ``URL`` and ingests one small contest (the 20
    best-rated players and a newcomer, a day after the latest contest), then a second
    one; prints the time of each.  On a store whose newest snapshot is current (as
    ``podium ingest`` leaves it) the first write loads that snapshot and replays
    nothing.  The store is changed: run it on a copy.
``window URL [--repeat N]``
    The activity-window queries (counts and leaderboard pages of the players active in
    the last 90 or 365 days before the latest contest): median and 95th percentile of
    ``N`` runs after a warm-up, in milliseconds.

Example (the Codeforces history)::

    podium ingest ../shared/datasets/codeforces/cache_codeforces.tar.gz \\
        --db sqlite:////tmp/cf.db --system mmr --dedupe --sort-by-time -q
    cp /tmp/cf.db /tmp/copy.db
    python benchmarks/bench_store_limits.py first-write sqlite:////tmp/copy.db
    python benchmarks/bench_store_limits.py window sqlite:////tmp/cf.db --repeat 20
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any


def first_write(url: str, profile: bool) -> None:
    t0 = time.perf_counter()
    from podium import Contest
    from podium.store import Store

    t1 = time.perf_counter()
    store = Store.open(url)
    t2 = time.perf_counter()
    st = store.stats()
    latest = store.latest_contest()
    assert latest is not None, "an empty store"
    top = [r.handle for r in store.leaderboard(limit=20)]
    c = Contest([(h, k, k) for k, h in enumerate([*top, "first-write-newbie"])],
                name=f"first write {time.time()}", time_seconds=latest.time_seconds + 86_400)
    prof = cProfile.Profile() if profile else None
    t3 = time.perf_counter()
    if prof is not None:
        prof.enable()
    res = store.ingest(c)
    if prof is not None:
        prof.disable()
    t4 = time.perf_counter()
    c2 = Contest([(h, k, k) for k, h in enumerate(reversed(top))],
                 name=f"second write {time.time()}", time_seconds=latest.time_seconds + 172_800)
    res2 = store.ingest(c2)
    t5 = time.perf_counter()
    store.close()
    if prof is not None:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    print(f"snapshots at {[s['head_count'] for s in st['snapshots']]} of {st['contests']} "
          f"contests; import {t1 - t0:.2f} s, open {t2 - t1:.2f} s, first write "
          f"{t4 - t3:.2f} s ({res.status}), second write {t5 - t4:.2f} s ({res2.status})")


def window(url: str, repeat: int) -> None:
    from podium.store import Store

    with Store.open(url) as s:
        latest = s.latest_contest()
        assert latest is not None, "an empty store"
        since = latest.time_seconds - 90 * 86_400
        year = latest.time_seconds - 365 * 86_400
        cases: dict[str, Callable[[], Any]] = {
            "count active (90 days)": lambda: s.count_players(active_since=since),
            "count active (365 days)": lambda: s.count_players(active_since=year),
            "count active (90 days), rating in [1900, 2100)": lambda: s.count_players(
                active_since=since, min_rating=1900, max_rating=2100),
            "leaderboard active (90 days), top 50": lambda: s.leaderboard(
                active_since=since, limit=50),
            "leaderboard active (90 days), offset 10,000": lambda: s.leaderboard(
                active_since=since, offset=10_000, limit=50),
        }
        print(f"players active in 90 days: {s.count_players(active_since=since):,} of "
              f"{s.count_players():,}")
        for name, f in cases.items():
            f()
            ts = []
            for _ in range(repeat):
                t = time.perf_counter()
                f()
                ts.append((time.perf_counter() - t) * 1000)
            ts.sort()
            print(f"{name}: median {statistics.median(ts):.1f} ms, "
                  f"p95 {ts[int(0.95 * (len(ts) - 1))]:.1f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    f = sub.add_parser("first-write")
    f.add_argument("url")
    f.add_argument("--profile", action="store_true", help="cProfile the first write")
    w = sub.add_parser("window")
    w.add_argument("url")
    w.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    if args.what == "first-write":
        first_write(args.url, args.profile)
    else:
        window(args.url, args.repeat)


if __name__ == "__main__":
    main()
