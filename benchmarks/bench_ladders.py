"""Writes to different ladders run concurrently: 4 processes into 4 ladders of one
PostgreSQL, against one ladder alone and against 4 processes into one ladder.

    python benchmarks/bench_ladders.py postgresql://USER@HOST:PORT/DB [--matches N] [--write-docs]

Each writer is a separate process that opens the store on its ladder and ingests
``--matches`` eight-player matches (default 400; seeded, distinct per writer) one
``Store.ingest`` per match -- the live-game workload, where the fixed cost of a write
transaction dominates -- after one untimed match (the process loads its kernels then).
The writers start together (a file barrier) and each reports its own wall time; the
total rate is all matches over the slowest writer's time.  Runs:

* **one ladder alone**: one writer;
* **4 ladders, 4 processes**: each writer on its own ladder (its own advisory lock:
  :data:`podium.store.engine.LOCK_KEY` plus the ladder's key);
* **1 ladder, 4 processes**: the same four writers on one ladder, serialised by its one
  lock (what every write was before ladders).

A fresh database schema each run (every table dropped first).  Every ladder is then
checked to equal a Rater over its matches, bit for bit.  The table also gives the writer
processes' CPU per match and their CPU over the wall time (how many cores the writers
kept busy; the database server's own CPU is not counted).  ``--write-docs`` puts the
table into ``docs/service.md`` (block ``ladders-concurrency``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import ROOT, load_average, write_section

DOC = "docs/service.md"
SECTION = "ladders-concurrency"

WRITER = """
import json, os, sys, time
from podium import Contest
from podium.store import Store
url, ladder, data, go = sys.argv[1:5]
docs = json.load(open(data))
contests = [Contest([tuple(s) for s in d["standings"]], name=d["name"],
                    time_seconds=d["time_seconds"]) for d in docs]
with Store.open(url, ladder=ladder) as store:
    store.ingest(contests[0])  # untimed: the kernels load
    open(go + "." + str(os.getpid()), "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    w, c = time.perf_counter(), time.process_time()
    for m in contests[1:]:
        store.ingest(m)
    print(json.dumps({"wall": time.perf_counter() - w, "cpu": time.process_time() - c,
                      "matches": len(contests) - 1}))
"""


def matches(n: int, seed: int, players: int = 2000, size: int = 8) -> list[Any]:
    import numpy as np

    from podium import Contest

    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        who = rng.choice(players, size, replace=False)
        out.append(Contest([(f"p{seed}_{p:05d}", i, i) for i, p in enumerate(who.tolist())],
                           name=f"w{seed} match {k}", time_seconds=1_700_000_000 + 60 * k))
    return out


def _reset(url: str) -> None:
    from sqlalchemy import text

    from podium.store.engine import make_engine

    eng = make_engine(url)
    with eng.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    eng.dispose()


def run(url: str, ladders: list[str], n: int, tmp: Path) -> dict[str, Any]:
    """One run: ``len(ladders)`` writers, writer ``k`` on ``ladders[k]``."""
    from podium.store import Store

    _reset(url)
    with Store.create(url, "mmr") as store:
        for name in sorted(set(ladders) - {"default"}):
            store.create_ladder(name, "mmr")
    go = tmp / f"go-{time.monotonic_ns()}"
    procs, data = [], []
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    for k, ladder in enumerate(ladders):
        cs = matches(n + 1, seed=k + 1)
        data.append((ladder, cs))
        path = tmp / f"w{k}.json"
        path.write_text(json.dumps([c.to_json_dict() for c in cs]))
        procs.append(subprocess.Popen([sys.executable, "-c", WRITER, url, ladder, str(path),
                                       str(go)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 600
    while len(list(tmp.glob(go.name + ".*"))) < len(procs):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            raise RuntimeError("a writer did not start: "
                               + "".join(p.communicate()[1] for p in procs))
        time.sleep(0.01)
    load0 = os.getloadavg()[0]
    go.touch()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(err)
        results.append(json.loads(out.strip().splitlines()[-1]))
    _check(url, data)
    wall = max(r["wall"] for r in results)
    total = sum(r["matches"] for r in results)
    return {"writers": len(ladders), "ladders": len(set(ladders)), "matches": total,
            "wall_s": wall, "per_s": total / wall,
            "writer_walls": [round(r["wall"], 2) for r in results],
            "cpu_s": sum(r["cpu"] for r in results), "load_before": load0}


def _check(url: str, data: list[tuple[str, list[Any]]]) -> None:
    import pandas as pd

    from podium import Rater
    from podium.store import Store

    by_ladder: dict[str, list[Any]] = {}
    for ladder, cs in data:
        by_ladder.setdefault(ladder, []).extend(cs)
    with Store.open(url) as store:
        for ladder, cs in by_ladder.items():
            lad = store.ladder(ladder)
            if len({c.name.split()[0] for c in cs}) > 1:  # interleaved writers: their order
                order = lad.contest_ids()
                by_name = {c.name: c for c in cs}
                cs = [by_name[name] for name in order]
            ref = Rater("mmr")
            ref.extend(cs)
            pd.testing.assert_frame_equal(lad.ratings_frame(),
                                          ref.ratings().reset_index(drop=True),
                                          check_exact=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="a PostgreSQL database (its public schema is dropped!)")
    ap.add_argument("--matches", type=int, default=400, help="matches per writer")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case (median)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    if not args.url.startswith(("postgres://", "postgresql")):
        raise SystemExit("bench_ladders.py: give a PostgreSQL URL (concurrent writers)")
    load0 = load_average()
    cases = [("one ladder alone (1 process)", ["l0"]),
             ("4 ladders, 4 processes", ["l0", "l1", "l2", "l3"]),
             ("1 ladder, 4 processes", ["l0", "l0", "l0", "l0"])]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for what, ladders in cases:
            runs = sorted((run(args.url, ladders, args.matches, Path(d))
                           for _ in range(args.repeat)), key=lambda r: r["per_s"])
            r = runs[len(runs) // 2]
            r["what"] = what
            rows.append(r)
            print(f"{what:32s} {r['per_s']:8.1f} matches/s  wall {r['wall_s']:.2f} s  "
                  f"writers {r['writer_walls']}", file=sys.stderr)
    base = rows[0]["per_s"]
    lines = [f"PostgreSQL, `mmr`, eight-player matches, one `Store.ingest` (one transaction) "
             f"per match; {args.matches} matches per writer; {os.cpu_count()} CPUs.", "",
             "| writers | total matches/s against one ladder alone | matches/s (total) | "
             "wall (s) | each writer's wall (s) | writers' CPU per match (ms) | writers' CPU "
             "/ wall (cores busy) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['what']} | **{r['per_s'] / base:.2f}x** | {r['per_s']:,.0f} | "
                     f"{r['wall_s']:.2f} | {', '.join(map(str, r['writer_walls']))} | "
                     f"{1000 * r['cpu_s'] / r['matches']:.2f} | "
                     f"{r['cpu_s'] / r['wall_s']:.2f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if args.write_docs:
        shown = [a if not a.startswith("postgres") else "$PODIUM_TEST_POSTGRES_URL"
                 for a in (argv if argv is not None else sys.argv[1:])]
        write_section(DOC, SECTION, table, load_at_start=load0, command=" ".join(
            ["python", "benchmarks/bench_ladders.py", *map(shlex.quote, shown)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
