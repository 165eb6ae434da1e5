"""Latency of ``Store.explain`` (docs/explain.md, "Latency").

For a few contests of a store -- by default the last one, the one just before the
oldest kept snapshot (the worst case: replayed from the first contest or the previous
snapshot) and the one at each kept snapshot -- times the first ``explain`` (it builds
the Rater before the contest: newest snapshot at or before it, then a replay) and the
next player's (the Rater comes from the cache).

    python benchmarks/bench_explain.py --db cf.db                 # an existing store
    python benchmarks/bench_explain.py --build 200                # the first 200 Codeforces
                                                                  # contests, in a temp store
    python benchmarks/bench_explain.py --db cf.db --at 99 150 199 # chosen positions
    python benchmarks/bench_explain.py --db cf.db --max-replay 0  # time even what the
                                                                  # store's limit refuses
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _report import data_dir

from podium.store import Store
from podium.store.explain import ExplainTooCostly


def _build(n: int, tmp: Path) -> str:
    from podium.io import load_contests

    data = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    contests = load_contests(data, limit=n, sort_by_time=True, dedupe_urls=True).contests
    url = f"sqlite:///{tmp / 'explain.db'}"
    t = time.perf_counter()
    with Store.create(url, "mmr") as store:
        store.ingest_many(contests)
    print(f"built {url}: {len(contests)} contests in {time.perf_counter() - t:.1f} s")
    return url


def _warm_up(store: Store) -> None:
    """Load the compiled kernels (rating and explaining) before timing anything."""
    from podium import Contest, Rater

    r = Rater(store.system_name, **store.params)
    r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="warm-up 1"))
    r.explain(Contest([("b", 0, 0), ("c", 1, 1), ("a", 2, 2)], name="warm-up 2"), "a")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", help="an existing store")
    ap.add_argument("--build", type=int, metavar="N",
                    help="build a temporary store of the first N Codeforces contests")
    ap.add_argument("--at", type=int, nargs="*", metavar="POS",
                    help="contest positions (0-based) to explain")
    ap.add_argument("--max-replay", type=int, default=None, metavar="N",
                    help="the store's max_explain_replay (default: its default, 1,000,000 "
                    "player-rounds; 0: no limit, to time the replays it would refuse)")
    args = ap.parse_args()
    if (args.db is None) == (args.build is None):
        ap.error("give --db or --build")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db if args.db is not None else _build(args.build, Path(tmp))
        limit = {} if args.max_replay is None else {
            "max_explain_replay": args.max_replay or 2**62}
        with Store.open(url, **limit) as store:  # type: ignore[arg-type]
            ids = store.contest_ids()
            st = store.stats()
            snaps = sorted(int(x["head_count"]) for x in st["snapshots"])
            print(f"{len(ids)} contests, {st['events']} events, {st['players']} players, "
                  f"snapshots at {snaps}")
            _warm_up(store)
            at = args.at if args.at else sorted(
                {len(ids) - 1, *(s - 1 for s in snaps[:1]), *snaps} & set(range(len(ids))))
            for pos in at:
                cid = ids[pos]
                view = store.contest(cid, limit=2)
                assert view is not None and len(view.changes) >= 2, cid
                base = max([s for s in snaps if s <= pos], default=0)
                t = time.perf_counter()
                try:
                    store.explain(cid, view.changes[0].handle)
                except ExplainTooCostly as exc:
                    print(f"contest #{pos}: refused after {time.perf_counter() - t:.3f} s: {exc}")
                    continue
                first = time.perf_counter() - t
                t = time.perf_counter()
                store.explain(cid, view.changes[1].handle)
                nxt = time.perf_counter() - t
                print(f"contest #{pos} ({view.players} players; replayed {pos - base} "
                      f"contests from {'the snapshot at ' + str(base) if base else 'the start'}"
                      f"): first explain {first:.3f} s, next player {nxt:.3f} s")


if __name__ == "__main__":
    main()
