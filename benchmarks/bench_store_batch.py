"""Write rate of the store for many small contests: batches, one by one, and over HTTP.

    python benchmarks/bench_store_batch.py --write-docs

A seeded history of ``--matches`` eight-player matches (default 3,000) among
``--players`` players (default 5,000), each a new contest one minute after the
previous one, is written into new SQLite stores (``mmr``, default snapshot policy):

* **rating alone** -- ``Rater.extend`` over the same contests in memory, in the same
  batches: the part of every figure below that is the rating system's, not the
  store's;
* **one by one** -- ``Store.ingest`` per match (one transaction each);
* **batches** -- ``Store.ingest_many`` of ``--batch`` matches (default 100 and 1000;
  one transaction and one ``Rater.extend`` each); both run in a fresh process (the
  same script for this checkout and ``--before-src``), so that neither is charged for
  the garbage collection of this process's contests and Raters;
* **over HTTP** -- one ``POST /api/contests`` per match (``--http`` of them, default
  500) to ``podium serve`` (uvicorn, one worker) on loopback through one keep-alive
  ``httpx`` client, and the same matches as ``POST`` s of a JSON list of 100; and, as
  the floor of any request through this stack, as many ``GET /api/health`` (no store
  work: the server's HTTP parsing, middleware and routing, and the client's own work)
  to the same server before its POSTs -- one POST per match can go no faster than that;
* **before** (with ``--before-src DIR``) -- one by one with the ``src`` directory
  of another checkout, in a subprocess, and one POST per match to a server running
  that checkout; e.g. the commit before ladders: ``git archive 55f931e src | tar -x -C
  /tmp/before`` and ``--before-src /tmp/before/src``.

The first match of each one-by-one and HTTP run is ingested untimed (the process
loads its kernels then).  Each line gives the wall time, the CPU time of this
process (for HTTP: of the server process plus this client), matches per second
(wall), and the overhead per match beyond rating:
(time - rating time) / matches, the rating time being the median of three runs of
``Rater.extend`` over the same matches in the same pieces.  Every store of this checkout is
checked to equal the Rater bit for bit.  ``--write-docs`` puts the table into
``docs/service.md``, block ``store-batch``, with the date, commit, machine and
command (``benchmarks/_report.py``).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _report import ROOT, load_average, write_section

sys.path.insert(0, str(ROOT / "tests"))

DOC = "docs/service.md"
SECTION = "store-batch"


def matches(n: int, players: int, size: int = 8, seed: int = 1) -> list[Any]:
    """``n`` seeded matches of ``size`` distinct players among ``players``, no ties."""
    import numpy as np

    from podium import Contest

    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        who = rng.choice(players, size, replace=False)
        out.append(Contest([(f"player{p:05d}", i, i) for i, p in enumerate(who.tolist())],
                           name=f"match {k}", time_seconds=1_700_000_000 + 60 * k))
    return out


def _timed(fn: Callable[[], Any]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def _proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _fresh(tmp: Path, name: str) -> str:
    return f"sqlite:///{tmp / name}"


def _check(url: str, contests: list[Any]) -> None:
    import pandas as pd

    from podium import Rater
    from podium.store import Store

    ref = Rater("mmr")
    ref.extend(contests)
    with Store.open(url) as store:
        pd.testing.assert_frame_equal(store.ratings_frame(),
                                      ref.ratings().reset_index(drop=True), check_exact=True)


_WRITES = """
import json, sys, time
from podium import Contest
from podium.store import Store
contests = [Contest([tuple(s) for s in d["standings"]], name=d["name"],
                    time_seconds=d["time_seconds"]) for d in json.load(open(sys.argv[2]))]
with Store.create(sys.argv[1] + ".db", "mmr") as store:
    store.ingest(contests[0])  # untimed, as in this script: the kernels are loaded
    w, c = time.perf_counter(), time.process_time()
    for m in contests[1:]:
        store.ingest(m)
    print(time.perf_counter() - w, time.process_time() - c)
for b in map(int, sys.argv[3:]):
    with Store.create(f"{sys.argv[1]}{b}.db", "mmr") as store:
        parts = [contests[i:i + b] for i in range(0, len(contests), b)]
        w, c = time.perf_counter(), time.process_time()
        for p in parts:
            store.ingest_many(p)
        print(time.perf_counter() - w, time.process_time() - c)
"""


def tree_label(src: str) -> str:
    """How a ``--before-src`` tree is named in the tables: its commit (``git rev-parse
    --short HEAD`` in it), else its directory's name -- never a path of this machine."""
    path = Path(src).resolve()
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return f"commit {out}" if out else (path.parent.name if path.name == "src" else path.name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=3000)
    ap.add_argument("--players", type=int, default=5000)
    ap.add_argument("--batch", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--http", type=int, default=500, help="matches posted one by one")
    ap.add_argument("--before-src", metavar="DIR",
                    help="also time one-by-one ingestion with this src directory")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"write the table into {DOC} (block {SECTION!r})")
    args = ap.parse_args(argv)
    load0 = load_average()

    import httpx
    from _service import running_server

    from podium import Rater
    from podium.store import Store

    contests = matches(args.matches, args.players)
    n = len(contests)
    Rater("mmr").extend(matches(50, 100, seed=2))  # compile/load the kernels first
    rows: list[dict[str, Any]] = []

    def rating_time(sizes: list[int], skip: int = 0) -> tuple[float, float]:
        """Median over 3 runs of ``Rater.extend`` over ``contests[skip:]`` in ``sizes``
        (after rating the first ``skip`` untimed)."""
        spans, start = [], skip
        for s in sizes:
            spans.append(contests[start:start + s])
            start += s
        runs = []
        for _ in range(3):
            r = Rater("mmr")
            r.extend(contests[:skip])
            runs.append(_timed(lambda r=r: [r.extend(part) for part in spans]))
        runs.sort()
        return runs[1]

    def add(what: str, k: int, wall: float, cpu: float, rating: tuple[float, float],
            server_cpu: float | None = None) -> None:
        cpu_all = cpu + (server_cpu or 0.0)
        rows.append({"what": what, "matches": k, "wall_s": wall, "cpu_s": cpu_all,
                     "client_cpu_s": cpu, "server_cpu_s": server_cpu,
                     "per_s": k / wall, "rating_wall_s": rating[0], "rating_cpu_s": rating[1],
                     "overhead_ms": 1000 * (wall - rating[0]) / k,
                     "overhead_cpu_ms": 1000 * (cpu_all - rating[1]) / k})
        r = rows[-1]
        print(f"{what:44s} {r['per_s']:8.0f}/s  wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"overhead {r['overhead_ms']:.3f} ms/match (cpu {r['overhead_cpu_ms']:.3f})",
              file=sys.stderr)

    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        ones = rating_time([1] * n)
        add("rating alone: Rater.extend per match", n, *ones, ones)
        batch_rating = {}
        for b in args.batch:
            rb = batch_rating[b] = rating_time([min(b, n - i) for i in range(0, n, b)])
            add(f"rating alone: Rater.extend of {b} matches", n, *rb, rb)
        # one by one and in batches, each checkout in a fresh process of its own (the same
        # script: this process holds every contest and several Raters, whose garbage
        # collection would be charged to this checkout's writes)
        data = tmp / "contests.json"
        data.write_text(json.dumps([c.to_json_dict() for c in contests]))
        checkouts = [("", ROOT / "src")]
        if args.before_src:
            checkouts.insert(0, ("before: ", Path(args.before_src).resolve()))
        for tag, src in checkouts:
            env = dict(os.environ, PYTHONPATH=str(src))
            url = _fresh(tmp, f"{'before' if tag else 'now'}")
            out = subprocess.run([sys.executable, "-c", _WRITES, url, str(data),
                                  *map(str, args.batch)], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            label = f" ({tree_label(args.before_src)})" if tag else ""
            add(f"{tag}Store.ingest one by one{label}", n - 1, float(out[0]), float(out[1]),
                rating_time([1] * (n - 1), 1))
            for k, b in enumerate(args.batch):
                add(f"{tag}Store.ingest_many, batches of {b}", n, float(out[2 + 2 * k]),
                    float(out[3 + 2 * k]), batch_rating[b])
            if not tag:  # (a before store may be of an older schema)
                _check(url + ".db", contests)
                for b in args.batch:
                    _check(f"{url}{b}.db", contests)

        # over HTTP: the first match is posted untimed (the server loads its kernels)
        k = min(args.http, n - 1)
        docs = [c.to_json_dict() for c in contests[:k + 1]]
        runs: list[tuple[str, Any, list[int], dict[str, str] | None]] = [
            (f"HTTP: one POST per match ({k} POSTs)", docs[1:], [1] * k, None),
            (f"HTTP: POST lists of 100 ({-(-k // 100)} POSTs)",
             [docs[i:i + 100] for i in range(1, k + 1, 100)],
             [min(100, k + 1 - i) for i in range(1, k + 1, 100)], None),
        ]
        if args.before_src:
            before = {"PYTHONPATH": str(Path(args.before_src).resolve())}
            runs.insert(0, (f"before: HTTP one POST per match ({k} POSTs; "
                            f"{tree_label(args.before_src)})", docs[1:], [1] * k, before))
        for what, bodies, sizes, env in runs:
            url = _fresh(tmp, f"http{len(bodies)}{'b' if env else ''}.db")
            if env is None:
                Store.create(url, "mmr").close()
            # the server of "before" creates its own store (of its own schema)
            with running_server(url, tmp, env_extra=env,
                                extra=("--system", "mmr") if env else ()) as srv, \
                    httpx.Client(base_url=srv.url, timeout=60) as client:
                auth = {"Authorization": f"Bearer {srv.token}"}
                assert client.post("/api/contests", json=docs[0],
                                   headers=auth).status_code == 201

                def post_all(bodies: list[Any] = bodies, auth: dict[str, str] = auth) -> None:
                    for body in bodies:
                        r = client.post("/api/contests", json=body, headers=auth)
                        if r.status_code != 201:
                            raise RuntimeError(f"POST answered {r.status_code}: {r.text}")

                floor = None
                if env is None and len(bodies) == k:  # the stack's floor, same server

                    def get_all() -> None:
                        for _ in range(k):
                            client.get("/api/health").raise_for_status()

                    server0 = _proc_cpu(srv.pid)
                    floor = (*_timed(get_all), _proc_cpu(srv.pid) - server0)
                server0 = _proc_cpu(srv.pid)
                wall, cpu = _timed(post_all)
                server = _proc_cpu(srv.pid) - server0
            if floor is not None:
                add(f"HTTP floor: GET /api/health ({k} GETs)", k, floor[0], floor[1],
                    (0.0, 0.0), floor[2])
            add(what, k, wall, cpu, rating_time(sizes, 1), server)
            if env is None:
                _check(url, contests[:k + 1])

    meta = {"matches": n, "players": args.players}
    table = _table(rows, meta)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    if args.write_docs:
        command = None if argv is None else " ".join(
            ["python", "benchmarks/bench_store_batch.py", *map(shlex.quote, argv)])
        write_section(DOC, SECTION, table, load_at_start=load0, command=command)
    return 0


def _ratios(rows: list[dict[str, Any]]) -> list[str]:
    """The speed-ups of this checkout over ``--before-src`` (same run): matches per second
    (wall) and CPU per match, one by one and one POST per match."""
    def find(prefix: str) -> dict[str, Any] | None:
        return next((r for r in rows if r["what"].startswith(prefix)), None)

    out = []
    pairs = [("`Store.ingest` one by one", find("Store.ingest one by one"),
              find("before: Store.ingest one by one"))]
    for r in rows:
        if r["what"].startswith("Store.ingest_many, batches of "):
            b = r["what"].rsplit(" ", 1)[1]
            pairs.append((f"`Store.ingest_many`, batches of {b}", r,
                          find(f"before: Store.ingest_many, batches of {b}")))
    pairs.append(("one `POST /api/contests` per match", find("HTTP: one POST"),
                  find("before: HTTP one POST")))
    pairs.append(("`GET /api/health` (the HTTP floor) against the before's POST",
                  find("HTTP floor: GET"), find("before: HTTP one POST")))
    for label, now, then in pairs:
        if now is None or then is None:
            continue
        out.append(f"| {label} | **{now['per_s'] / then['per_s']:.1f}x** "
                   f"({then['wall_s']:.2f} s -> {now['wall_s']:.2f} s; "
                   f"{then['per_s']:,.0f}/s -> {now['per_s']:,.0f}/s) | "
                   f"**{then['cpu_s'] / then['matches'] / (now['cpu_s'] / now['matches']):.1f}x** "
                   f"({1000 * then['cpu_s'] / then['matches']:.2f} -> "
                   f"{1000 * now['cpu_s'] / now['matches']:.2f} ms) |")
    if not out:
        return []
    return ["| this checkout against `--before-src`, same run | speed-up, matches/s (wall "
            "s) | CPU per match, speed-up (ms) |", "|---|---|---|", *out, ""]


def _table(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"SQLite in WAL mode, `mmr`: {meta['matches']:,} eight-player matches among "
        f"{meta['players']:,} players.",
        "",
        *_ratios(rows),
        "| how | matches/s (wall) | wall (s) | CPU (s) | rating alone (s) "
        "| overhead beyond rating, per match (ms, wall / CPU) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        plain = r["what"].startswith(("rating", "HTTP floor"))
        rating = "--" if plain else f"{r['rating_wall_s']:.2f}"
        over = "--" if plain else f"{r['overhead_ms']:.3f} / {r['overhead_cpu_ms']:.3f}"
        cpu = f"{r['cpu_s']:.2f}"
        if r["server_cpu_s"] is not None:
            cpu += f" (server {r['server_cpu_s']:.2f} + client {r['client_cpu_s']:.2f})"
        lines.append(f"| {r['what']} | **{r['per_s']:,.0f}** | {r['wall_s']:.2f} | {cpu} | "
                     f"{rating} | {over} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
