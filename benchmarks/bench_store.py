"""Ingest a whole history into a store, contest by contest, and time it.

    python benchmarks/bench_store.py \\
        ../shared/datasets/codeforces/cache_codeforces.tar.gz \\
        --db /tmp/cf-bench.db --system mmr --json /tmp/store-bench.json

The history is loaded with ``load_contests(..., dedupe_urls=True,
sort_by_time=True)`` (loading is timed apart) into a **new** database (an existing
file is refused), then every contest goes through :meth:`Store.ingest` -- one
transaction each -- and its wall time is recorded; with ``--batch N`` the contests
go through :meth:`Store.ingest_many` in batches of N (one transaction each, as
``podium ingest --batch N``) and the per-contest times are those of the batches
divided among their contests.  Afterwards the script reports: total and per-contest times (median,
95th percentile, maximum, and per 1,000 player-rounds), the time of the final
snapshot, a second pass over the same history (every contest a duplicate), the
cold start of a new process-like Store (newest snapshot, then one more
contest), the database size (file plus WAL) and, on SQLite, the bytes per table
(``dbstat``), and peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def _quantile(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * (len(ys) - 1) + 0.5))]


def _table_bytes(path: Path) -> dict[str, int]:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        rows = con.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    except sqlite3.Error:
        return {}
    finally:
        con.close()
    return {name: int(size) for name, size in rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", help="history: .tar.gz, directory of N.json or CSV")
    ap.add_argument("--db", required=True, help="new SQLite file (or a database URL)")
    ap.add_argument("--system", default="mmr")
    ap.add_argument("-n", type=int, default=None, help="only the first N contests")
    ap.add_argument("--batch", type=int, default=1,
                    help="contests per transaction (Store.ingest_many; default 1: Store.ingest)")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()

    from podium import Contest
    from podium.io import load_contests
    from podium.store import Store
    from podium.store.engine import sqlite_path

    file = sqlite_path(args.db)
    if file is not None and file.exists():
        print(f"{file} exists; give a new file", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    hist = load_contests(args.path, limit=args.n, dedupe_urls=True, sort_by_time=True)
    load_s = time.perf_counter() - t0
    contests = hist.contests
    rows = [len(c) for c in contests]
    print(f"loaded {len(contests)} contests, {sum(rows):,} player-rounds in {load_s:.1f} s",
          file=sys.stderr)

    times: list[float] = []
    t_all = time.perf_counter()
    with Store.create(args.db, args.system) as store:
        for k in range(0, len(contests), args.batch):
            part = contests[k:k + args.batch]
            t = time.perf_counter()
            if args.batch == 1:
                store.ingest(part[0])
            else:
                store.ingest_many(part)
            dt = time.perf_counter() - t
            size = sum(len(c) for c in part)
            times.extend(dt * len(c) / size for c in part)
            if (k + len(part)) // 100 > k // 100:
                print(f"  {k + len(part)} contests, {time.perf_counter() - t_all:.0f} s",
                      file=sys.stderr)
        ingest_s = time.perf_counter() - t_all
        t = time.perf_counter()
        store.snapshot()
        snapshot_s = time.perf_counter() - t
        t = time.perf_counter()
        dup = sum(store.ingest(c).status == "duplicate" for c in contests)
        dup_s = time.perf_counter() - t
        stats = store.stats()
    # a cold start: a fresh Store (no cache) loads the newest snapshot, rates one more
    extra = Contest([(h, i, i) for i, h in enumerate(contests[-1].handles[:200])],
                    name="bench extra contest", time_seconds=contests[-1].time_seconds + 1)
    t = time.perf_counter()
    with Store.open(args.db) as store:
        store.ingest(extra)
    cold_s = time.perf_counter() - t

    size = {}
    if file is not None:
        for suffix in ("", "-wal"):
            p = Path(str(file) + suffix)
            size[p.name] = p.stat().st_size if p.exists() else 0
    per_k = [1000 * s / n for s, n in zip(times, rows, strict=True)]
    res: dict[str, Any] = {
        "system": args.system,
        "batch": args.batch,
        "contests": len(contests),
        "player_rounds": sum(rows),
        "load_s": load_s,
        "ingest_total_s": ingest_s,
        "per_contest_s": {"mean": statistics.fmean(times), "median": statistics.median(times),
                          "p95": _quantile(times, 0.95), "max": max(times)},
        "per_1000_player_rounds_s": {"median": statistics.median(per_k),
                                     "p95": _quantile(per_k, 0.95)},
        "largest_contest": {"players": max(rows), "s": times[rows.index(max(rows))]},
        "final_snapshot_s": snapshot_s,
        "duplicate_pass_s": dup_s,
        "duplicates": dup,
        "cold_start_plus_one_contest_s": cold_s,
        "db_bytes": size,
        "table_bytes": _table_bytes(file) if file is not None else {},
        "stats": {k: v for k, v in stats.items() if k != "params"},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cpu_count": os.cpu_count(),
        "loadavg_at_end": os.getloadavg(),
    }
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
