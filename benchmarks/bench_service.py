"""Query latency of the rating service on a big store (e.g. the whole Codeforces history).

Measures, on an existing store, each read the API serves -- first the
:class:`~podium.store.Store` call alone, then the same request over HTTP against a
running ``podium serve`` (uvicorn, one worker, loopback) -- and prints the median,
95th percentile and maximum over ``--repeat`` runs (after one warm-up run each).

    podium ingest ../shared/datasets/codeforces/cache_codeforces.tar.gz \\
        --db /tmp/cf.db --system mmr --dedupe --sort-by-time
    python benchmarks/bench_service.py --db sqlite:////tmp/cf.db --repeat 30 --json out.json

The players and contests queried are drawn with a fixed seed from the store.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _timed(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    fn()  # warm-up (caches, JIT, connection pool)
    xs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        xs.append(1000.0 * (time.perf_counter() - t))
    xs.sort()
    return {"median_ms": statistics.median(xs), "p95_ms": xs[int(0.95 * (len(xs) - 1))],
            "max_ms": xs[-1]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="store URL (sqlite:///FILE or postgresql://...)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--no-http", action="store_true", help="measure only the Store calls")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)

    from podium.predict import predict
    from podium.store import Store

    rng = random.Random(1)
    store = Store.open(args.db)
    t = time.perf_counter()
    st = store.stats()
    stats_ms = 1000 * (time.perf_counter() - t)
    print(f"store: {st['players']:,} players, {st['contests']:,} contests, {st['events']:,} "
          f"events ({args.db}); stats() {stats_ms:.0f} ms", file=sys.stderr)
    top = store.leaderboard(limit=1)[0].handle
    sample = [r.handle for r in store.leaderboard(offset=rng.randrange(0, 50_000), limit=200)]
    busiest = max(store.contests(limit=2000), key=lambda c: c.players)
    last = store.latest_contest()
    assert last is not None
    since_90d = last.time_seconds - 90 * 86_400
    mid = store.leaderboard(offset=st["players"] // 2, limit=1)[0].display_rating
    handles_200 = rng.sample(sample, min(200, len(sample)))

    store_calls: dict[str, Callable[[], Any]] = {
        "leaderboard top 50": lambda: store.leaderboard(limit=50),
        "leaderboard offset 100000": lambda: store.leaderboard(offset=100_000, limit=50),
        "leaderboard active 90 days": lambda: store.leaderboard(limit=50, active_since=since_90d),
        "count all": lambda: store.count_players(),
        "count rating range": lambda: store.count_players(min_rating=mid, max_rating=mid + 200),
        "count active 90 days": lambda: store.count_players(active_since=since_90d),
        f"player {top} (top)": lambda: store.player(top),
        "player random": lambda: store.player(rng.choice(sample)),
        "search 'tour'": lambda: store.search_handles("tour", 10),
        "search 'a'": lambda: store.search_handles("a", 10),
        f"contest {busiest.players} players": lambda: store.contest(busiest.contest_id),
        "predict 200 players": lambda: predict(
            store.system, handles_200, store.current_ratings(handles_200)),
        "latest contest": lambda: store.latest_contest(),
    }
    results: dict[str, Any] = {"store": {}, "http": {}, "players": st["players"],
                               "contests": st["contests"], "events": st["events"],
                               "stats_ms": stats_ms, "repeat": args.repeat}
    for name, fn in store_calls.items():
        results["store"][name] = r = _timed(fn, args.repeat)
        print(f"store  {name:32s} median {r['median_ms']:8.1f} ms  p95 {r['p95_ms']:8.1f} ms",
              file=sys.stderr)
    store.close()

    if not args.no_http:
        import tempfile

        import httpx
        from _service import running_server

        with tempfile.TemporaryDirectory() as tmp, running_server(args.db, Path(tmp)) as srv, \
                httpx.Client(base_url=srv.url, timeout=60) as c:
            def get(path: str, **params: Any) -> Callable[[], Any]:
                def go() -> None:
                    r = c.get(path, params=params)
                    r.raise_for_status()
                return go

            http_calls: dict[str, Callable[[], Any]] = {
                "GET /api/health": get("/api/health"),
                "GET /api/leaderboard": get("/api/leaderboard"),
                "GET /api/leaderboard?offset=100000": get("/api/leaderboard", offset=100_000),
                "GET /api/leaderboard?active_days=90": get("/api/leaderboard", active_days=90),
                "GET /api/leaderboard/count (range)": get(
                    "/api/leaderboard/count", min_rating=mid, max_rating=mid + 200),
                f"GET /api/players/{top}": get("/api/players/" + quote(top, safe="")),
                "GET /api/search?prefix=tour": get("/api/search", prefix="tour"),
                f"GET /api/contests/<{busiest.players} players> (first page)": get(
                    "/api/contests/" + quote(busiest.contest_id, safe="")),
                f"GET /api/contests/<{busiest.players} players>?limit=10000": get(
                    "/api/contests/" + quote(busiest.contest_id, safe=""), limit=10_000),
                "POST /api/predict (200 players)": lambda: c.post(
                    "/api/predict", json={"handles": handles_200}).raise_for_status(),
                "GET / (leaderboard page)": get("/"),
                f"GET /players/{top} (page + chart)": get("/players/" + quote(top, safe="")),
                f"GET /contests/<{busiest.players} players> (page)": get(
                    "/contests/" + quote(busiest.contest_id, safe="")),
            }
            for name, fn in http_calls.items():
                results["http"][name] = r = _timed(fn, args.repeat)
                print(f"http   {name:40s} median {r['median_ms']:8.1f} ms  "
                      f"p95 {r['p95_ms']:8.1f} ms", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
