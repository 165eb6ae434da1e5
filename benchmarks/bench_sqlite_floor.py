"""SQLite's own floor for a match's write: the statements of ``Store.ingest`` with no Podium.

    python benchmarks/bench_sqlite_floor.py [--matches 3000] [--writes 1000]

A store of ``--matches`` eight-player matches among ``--players`` players is written
with ``Store.ingest_many`` (``mmr``, the history of ``bench_store_batch.py``), then
copied, and on each copy ``--writes`` more matches are written with Python's
``sqlite3`` alone: per match the statements a write of ``Store.ingest`` runs on SQLite
-- ``BEGIN IMMEDIATE``, the ``meta`` read, one ``contests`` row, 8 ``standings`` and 8
``events`` rows, 8 ``players`` updates, the revision, one ``audit`` row, ``COMMIT`` --
with the store's own SQL, connection settings (WAL, ``synchronous=NORMAL``, the
store's checkpoint interval) and random ratings.  Nothing is rated and no row is built
by Podium: what remains is what SQLite costs for this schema, the lower bound of any
write of a match through it.  Each is timed one match per transaction and in
transactions of ``--batch`` matches (default 1000), with the schema of this checkout
and, ``--v7``, with the two indexes of schema 7 that version 8 drops for a ladder
without time drift (``ix_players_mu``, ``ix_players_sigma``).  Also counted: the pages
a one-match transaction writes to the log (frames per commit, with checkpoints off).

The figures are CPU and wall time per match, the best of ``--repeat`` runs (each on a
fresh copy).  Printed as a Markdown table; nothing is written into the docs.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import ROOT, load_average

sys.path.insert(0, str(ROOT / "benchmarks"))

# the store's statements (podium.store.bulk / writes / audit), as SQLite runs them
INSERT_CONTEST = ('INSERT INTO "contests" ("pk", "cid", "seq", "name", "url", "time_seconds", '
                  '"weight", "perf_ceiling", "players", "new_players", "rated", '
                  '"content_hash", "ingested_at") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
INSERT_STANDING = ('INSERT INTO "standings" ("contest_pk", "pos", "player_pk", "lo", "hi", '
                   '"team", "member_weight") VALUES (?, ?, ?, ?, ?, ?, ?)')
INSERT_EVENT = ('INSERT INTO "events" ("contest_pk", "player_pk", "mu", "sigma", '
                '"display_rating", "perf", "place", "prev_display", "change", "debut", '
                '"team") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
UPDATE_PLAYER = ('UPDATE "players" SET "mu" = ?2, "sigma" = ?3, "display_rating" = ?4, '
                 '"contests" = ?5, "last_contest_time" = ?6, "max_display_rating" = ?7, '
                 '"last_change" = ?8 WHERE "pk" = ?1')
INSERT_AUDIT = ('INSERT INTO "audit" ("time", "actor", "action", "contest_id", '
                '"content_hash", "revision", "detail") VALUES (?, ?, ?, ?, ?, ?, ?)')
REVISION = 'UPDATE "meta" SET "value" = ? WHERE "key" = \'revision\''
V7 = ('CREATE INDEX ix_players_mu ON players (mu DESC, handle)',
      'CREATE INDEX ix_players_sigma ON players (sigma)')


def base_store(path: Path, matches: int, players: int) -> None:
    """A store of ``matches`` matches (``Store.ingest_many`` in batches of 500)."""
    from bench_store_batch import matches as history

    from podium.store import Store

    with Store.create(f"sqlite:///{path}", "mmr") as store:
        cs = history(matches, players)
        for i in range(0, len(cs), 500):
            store.ingest_many(cs[i:i + 500])
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


def _rows(con: sqlite3.Connection, n: int, seed: int) -> list[tuple[Any, ...]]:
    """``n`` matches' rows: (contest, standings, events, player updates, audit)."""
    n_players = int(con.execute("SELECT max(pk) FROM players").fetchone()[0]) + 1
    pk0 = int(con.execute("SELECT max(pk) FROM contests").fetchone()[0]) + 1
    t0 = int(con.execute("SELECT max(time_seconds) FROM contests").fetchone()[0]) + 60
    rng = random.Random(seed)
    out = []
    for k in range(n):
        c = pk0 + k
        who = rng.sample(range(n_players), 8)
        st = [(c, i, p, i, i, None, None) for i, p in enumerate(who)]
        ev = [(c, p, rng.gauss(1500, 300), rng.uniform(80, 200), rng.gauss(1300, 300),
               rng.gauss(1500, 300), i, 1300.0, 5.0, False, None) for i, p in enumerate(who)]
        up = [(p, e[2], e[3], e[4], 5, t0 + 60 * k, e[4], 5.0)
              for p, e in zip(who, ev, strict=True)]
        row = (c, f"floor {k}", c, f"floor {k}", None, t0 + 60 * k, 1.0, None, 8, 0, True,
               "ab" * 32, t0)
        audit = (time.time(), "python:root", "ingest", f"floor {k}", "ab" * 32, 10**6 + k,
                 '{"index": 1, "players": 8}')
        out.append((row, st, ev, up, audit))
    return out


def run(base: Path, tmp: Path, writes: int, batch: int, v7: bool,
        checkpoints: bool = True) -> tuple[float, float, float]:
    """CPU and wall seconds per match, and log frames per transaction, of ``writes``
    matches in transactions of ``batch`` on a fresh copy of ``base``."""
    from podium.store.engine import WAL_AUTOCHECKPOINT

    path = tmp / "floor.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(base, path)
    con = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON",
                   f"wal_autocheckpoint = {WAL_AUTOCHECKPOINT if checkpoints else 0}"):
        con.execute(f"PRAGMA {pragma}")
    if v7:
        for sql in V7:
            con.execute(sql)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = _rows(con, writes, seed=7)
    frames0 = os.path.getsize(f"{path}-wal") if os.path.exists(f"{path}-wal") else 0
    w, c = time.perf_counter(), time.process_time()
    for i in range(0, writes, batch):
        part = data[i:i + batch]
        con.execute("BEGIN IMMEDIATE")
        con.execute('SELECT "key", "value" FROM "meta"').fetchall()
        con.executemany(INSERT_CONTEST, [p[0] for p in part])
        con.executemany(INSERT_STANDING, [r for p in part for r in p[1]])
        con.executemany(INSERT_EVENT, [r for p in part for r in p[2]])
        con.executemany(UPDATE_PLAYER, [r for p in part for r in p[3]])
        con.execute(REVISION, (str(10**6 + i),))
        con.executemany(INSERT_AUDIT, [p[4] for p in part])
        con.execute("COMMIT")
    w, c = time.perf_counter() - w, time.process_time() - c
    page = int(con.execute("PRAGMA page_size").fetchone()[0])
    frames = (os.path.getsize(f"{path}-wal") - frames0) / (page + 24) / (writes / batch)
    con.close()
    return c / writes, w / writes, frames


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=3000, help="matches in the store first")
    ap.add_argument("--players", type=int, default=5000)
    ap.add_argument("--writes", type=int, default=1000, help="matches written and timed")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    load0 = load_average()
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        base = tmp / "base.db"
        base_store(base, args.matches, args.players)
        lines = [f"SQLite alone, {args.writes:,} eight-player matches after {args.matches:,} "
                 f"among {args.players:,} players (load {load0}; best of {args.repeat}):", "",
                 "| schema | pages per match (one per transaction) | one per transaction: "
                 "CPU / wall per match (ms) | matches/s (wall) | batches of "
                 f"{args.batch}: CPU / wall per match (ms) | matches/s (wall) |",
                 "|---|---|---|---|---|---|"]
        for v7 in (False, True):
            frames = run(base, tmp, min(args.writes, 300), 1, v7, checkpoints=False)[2]
            one = min(run(base, tmp, args.writes, 1, v7) for _ in range(args.repeat))
            many = min(run(base, tmp, args.writes, args.batch, v7) for _ in range(args.repeat))
            name = ("version 7 (with `ix_players_mu`, `ix_players_sigma`)" if v7
                    else "this checkout (version 8, no time drift)")
            lines.append(f"| {name} | {frames:.0f} | {1000 * one[0]:.3f} / {1000 * one[1]:.3f} "
                         f"| {1 / one[1]:,.0f} | {1000 * many[0]:.3f} / {1000 * many[1]:.3f} "
                         f"| {1 / many[1]:,.0f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
