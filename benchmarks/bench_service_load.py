"""Reads under hostile load (issue 31): 16 stalled export clients and 20 concurrent
explains, while ``/api/health`` and ``/api/leaderboard`` are timed.

Runs ``podium serve`` (one worker, loopback) on a store, stalls ``--stalled`` clients on
``GET /api/export/history?format=csv`` (each reads 1 KB and stops reading), starts
``--explainers`` threads asking ``GET /api/explain`` for contests spread over the whole
store, and times the two probes for ``--seconds``; prints their median, p95 and maximum
and what the other clients were answered (docs/service.md, "Limits under load").

    python benchmarks/bench_service_load.py --build 200            # first 200 Codeforces
    python benchmarks/bench_service_load.py --db sqlite:////tmp/cf.db --seconds 20

Run it with another checkout first on ``PYTHONPATH`` to measure that code's server.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
from _load import run_load  # noqa: E402
from _report import data_dir  # noqa: E402
from _service import running_server  # noqa: E402

from podium.store import Store  # noqa: E402


def _build(n: int, tmp: Path) -> str:
    from podium.io import load_contests

    data = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    contests = load_contests(data, limit=n, sort_by_time=True, dedupe_urls=True).contests
    url = f"sqlite:///{tmp / 'load.db'}"
    t = time.perf_counter()
    with Store.create(url, "mmr") as store:
        store.ingest_many(contests)
    print(f"built {url}: {len(contests)} contests in {time.perf_counter() - t:.1f} s")
    return url


def _rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` (Linux), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _line(name: str, xs: list[float]) -> str:
    s = sorted(xs)
    p95 = s[min(len(s) - 1, int(0.95 * len(s)))]
    return (f"{name}: n={len(s)}, median {statistics.median(s):.3f} s, p95 {p95:.3f} s, "
            f"max {s[-1]:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="an existing store")
    ap.add_argument("--build", type=int, metavar="N",
                    help="build a temporary store of the first N Codeforces contests")
    ap.add_argument("--stalled", type=int, default=16)
    ap.add_argument("--explainers", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=15.0, help="probe time (default 15)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="per-request timeout; a request past it counts as it (default 10)")
    ap.add_argument("--serve-args", default="", help="extra `podium serve` options")
    ap.add_argument("--warm-wait", type=float, default=0.0, metavar="S",
                    help="before the load: one explanation and one export, then wait S s "
                    "(the explain cache's time) so that 'before' is a warm server")
    ap.add_argument("--rss-wait", type=float, default=0.0, metavar="S",
                    help="also report the server's resident memory before the load, right "
                    "after it and S seconds later (the explain cache lets go after 60 s)")
    args = ap.parse_args()
    if (args.db is None) == (args.build is None):
        ap.error("give --db or --build")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db if args.db is not None else _build(args.build, Path(tmp))
        with Store.open(url) as store:
            ids = store.contest_ids()
            queries = []
            for cid in ids[:: max(1, len(ids) // 100)]:
                view = store.contest(cid, limit=1)
                if view is not None and view.changes:
                    queries.append((cid, view.changes[0].handle))
        with running_server(url, Path(tmp), extra=args.serve_args.split()) as srv:
            if args.warm_wait > 0:  # one explanation and one export: code loaded, caches
                with httpx.Client(base_url=srv.url, timeout=600) as client:
                    client.get("/api/explain", params={"contest": queries[-1][0],
                                                       "handle": queries[-1][1]})
                    client.get("/api/export/ratings?format=csv")
                time.sleep(args.warm_wait)
            rss = [_rss_mb(srv.pid)]
            t = time.perf_counter()
            res = run_load(srv.url, queries, stalled=args.stalled, explainers=args.explainers,
                           probe_s=args.seconds, timeout=args.timeout)
            took = time.perf_counter() - t
            rss.append(_rss_mb(srv.pid))
            if args.rss_wait > 0:
                time.sleep(args.rss_wait)
                rss.append(_rss_mb(srv.pid))
            tracebacks = srv.log_text().count("Traceback")
    print(f"{args.stalled} stalled export clients, {args.explainers} explainers, "
          f"{took:.1f} s in all")
    print(_line("/api/health", res.health_s))
    print(_line("/api/leaderboard?limit=20", res.leaderboard_s))
    print(f"exports answered: {dict(res.exports)}")
    print(f"explains answered: {dict(res.explains)} (0: no answer within {args.timeout:g} s)")
    print(f"probes answered: {dict(res.probes)}; tracebacks in the server log: {tracebacks}")
    print("server resident memory (MB): " + ", ".join(
        f"{name} {mb:.0f}" for name, mb in zip(
            ("before", "right after", f"{args.rss_wait:g} s later"), rss, strict=False)))


if __name__ == "__main__":
    main()
