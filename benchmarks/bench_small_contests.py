"""Histories of many small contests: loading against pandas, and ``podium eval`` /
``compare`` against ``podium rate``.

Two histories, each written as a CSV long table (``contest,time,player,score``, two
rows a match):

* the international football results (``football/results.csv`` of the shared data
  sets: 49,520 matches from 1872 on, goals as scores);
* a generated history of ``--matches`` 1v1 matches (seeded: ``--players`` players of
  skill N(1500, 300), one match every ten minutes from 2001 on between two players
  drawn at random, the winner drawn from the logistic of the skill difference, one
  match in ten a draw).

**Loading** (in this process, median of ``--repeat`` interleaved runs, every run
reads the file from the page cache): ``pandas.read_csv`` plus ``groupby('contest')``
(its groups computed) against ``podium.io.load_contests``, whose columnar reader
(:mod:`podium.io._csv_fast`) reads such a file; ``--row-reader`` also times the row
reader alone (the reader before the columnar one: every row checked and every
contest built one by one), the *before* figure.

**JSON directories** (``--json-dirs``, football by default): the same history as a
directory of ``0.json, 1.json, ...`` (one match a file, the Elo-MMR format), loaded by
``podium.io.load_contests`` against its peer, a plain ``json.load`` loop over the
files in index order (what elo-mmr-py's loader does); ``--file-by-file`` also times
the reader that decodes and checks each file alone (the *before* figure).

**Commands** (whole processes, wall clock, after a warm-up run that loads every
kernel): ``podium rate FILE --system S --out DIR``, ``podium eval FILE --system S``
and ``podium compare FILE --systems S1,S2`` (``--systems``), each divided by the
``podium rate`` time of its systems.

    python benchmarks/bench_small_contests.py                 # writes docs/benchmarks.md
    python benchmarks/bench_small_contests.py --matches 20000 --no-commands --no-docs

The loading tables go into docs/benchmarks.md, block ``small-contests``, the command
timings into block ``small-contests-commands`` (each only when measured).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _report import cpu_model, data_dir, load_average, write_section
from bench_million import run

DOC = "docs/benchmarks.md"
SECTION = "small-contests"


def football_csv(src: Path, out: Path) -> int:
    """``results.csv`` of the football data set as a long table; returns the matches."""
    import pandas as pd

    df = pd.read_csv(src, usecols=["date", "home_team", "away_team", "home_score",
                                   "away_score"])
    epoch = dt.date(1970, 1, 1)
    days = [(dt.date.fromisoformat(d) - epoch).days for d in df["date"]]
    t = np.asarray(days, dtype=np.int64) * 86400
    n = len(df)
    long = pd.DataFrame({
        "contest": np.repeat(np.arange(n), 2),
        "time": np.repeat(t, 2),
        "player": np.ravel(np.column_stack([df["home_team"], df["away_team"]])),
        "score": np.ravel(np.column_stack([df["home_score"], df["away_score"]])),
    })
    long.to_csv(out, index=False)
    return n


def generated_csv(out: Path, matches: int, players: int, seed: int) -> int:
    """A seeded history of ``matches`` 1v1 matches as a long table."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    skill = rng.normal(1500, 300, players)
    a = rng.integers(0, players, matches)
    b = (a + rng.integers(1, players, matches)) % players  # never a itself
    p_a = 1 / (1 + 10 ** ((skill[b] - skill[a]) / 400))
    a_wins = rng.random(matches) < p_a
    draw = rng.random(matches) < 0.1
    score_a = np.where(draw, 1, np.where(a_wins, 1, 0))
    score_b = np.where(draw, 1, np.where(a_wins, 0, 1))
    long = pd.DataFrame({
        "contest": np.repeat(np.arange(matches), 2),
        "time": np.repeat(1_000_000_000 + 600 * np.arange(matches), 2),
        "player": np.ravel(np.column_stack([a, b])),
        "score": np.ravel(np.column_stack([score_a, score_b])),
    })
    long["player"] = "p" + long["player"].astype(str)
    long.to_csv(out, index=False)
    return matches


def json_dir(csv: Path, out: Path) -> int:
    """The contests of the long table ``csv`` as a directory of ``<n>.json`` files
    (Podium's writer); returns the files."""
    from podium.io import load_contests
    from podium.io.writers import write_contest_dir

    contests = load_contests(csv).contests
    write_contest_dir(contests, out)
    return len(contests)


def json_dir_figures(path: Path, repeat: int, file_by_file: bool) -> dict[str, float]:
    """Median seconds of the ``json.load`` loop, podium's load and (``file_by_file``)
    podium's file-by-file reader of a directory."""
    import podium.io.sources as sources
    from podium.io import load_contests

    def json_loop() -> None:
        names = sorted((n for n in os.listdir(path) if n.endswith(".json")),
                       key=lambda n: int(n[:-5]))
        docs = []
        for n in names:
            with open(os.path.join(path, n), "rb") as fh:
                docs.append(json.load(fh))

    def podium_load() -> None:
        load_contests(path)

    def file_load() -> None:
        saved = sources.BATCH_FILE_BYTES
        sources.BATCH_FILE_BYTES = -1  # every file alone
        try:
            load_contests(path)
        finally:
            sources.BATCH_FILE_BYTES = saved

    jobs = {"json.load": json_loop, "podium": podium_load}
    if file_by_file:
        jobs["file by file"] = file_load
    return _medians(jobs, podium_load, repeat)


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds (this process's, all its threads) of ``fn()``."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def load_figures(path: Path, repeat: int, row_reader: bool) -> dict[str, float]:
    """Median seconds of pandas, podium's load and (``row_reader``) the row reader."""
    import pandas as pd

    import podium.io.csv_long as csv_long
    from podium.io import load_contests

    def pandas_load() -> None:
        pd.read_csv(path).groupby("contest").ngroups  # noqa: B018 - the groups computed

    def podium_load() -> None:
        load_contests(path)

    def row_load() -> None:
        saved = csv_long.COLUMNAR_FROM_BYTES
        csv_long.COLUMNAR_FROM_BYTES = 1 << 62
        try:
            load_contests(path)
        finally:
            csv_long.COLUMNAR_FROM_BYTES = saved

    jobs = {"pandas": pandas_load, "podium": podium_load}
    if row_reader:
        jobs["row reader"] = row_load
    return _medians(jobs, podium_load, repeat)


def _medians(jobs: dict[str, Callable[[], None]], warm: Callable[[], None], repeat: int
             ) -> dict[str, float]:
    """Median wall-clock seconds of each job over ``repeat`` interleaved runs, after
    ``warm()``, and (key ``"<job> cpu"``) the median CPU seconds."""
    warm()  # imports
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in jobs}
    for _ in range(repeat):
        for k, fn in jobs.items():
            times[k].append(timed(fn))
    out = {k: statistics.median(w for w, _ in v) for k, v in times.items()}
    out |= {f"{k} cpu": statistics.median(c for _, c in v) for k, v in times.items()}
    return out


def command_figures(path: Path, systems: list[str], work: Path, timeout: float
                    ) -> dict[str, float]:
    """Wall seconds of ``podium rate`` per system, ``eval`` per system and ``compare``."""
    base = [sys.executable, "-m", "podium.cli"]
    out: dict[str, float] = {}
    for s in systems:  # warm-up: every kernel compiled or loaded once
        run([*base, "eval", str(path), "--system", s, "-n", "200", "--no-progress"], timeout)
    for s in systems:
        out[f"rate {s}"] = run([*base, "rate", str(path), "--system", s, "--out",
                                str(work / f"out-{s}"), "--no-progress"], timeout)[0]
        out[f"eval {s}"] = run([*base, "eval", str(path), "--system", s, "--no-progress"],
                               timeout)[0]
    out["compare"] = run([*base, "compare", str(path), "--systems", ",".join(systems),
                          "--no-progress"], timeout)[0]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=200_000)
    ap.add_argument("--players", type=int, default=5_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of every load (median)")
    ap.add_argument("--row-reader", action="store_true",
                    help="also time the row reader alone (the before figure)")
    ap.add_argument("--systems", default="mmr,glicko",
                    help="systems of the command timings (compare runs them all)")
    ap.add_argument("--json-dirs", default="football",
                    help="the histories also loaded as a directory of JSON files")
    ap.add_argument("--file-by-file", action="store_true",
                    help="also time the file-by-file JSON reader (the before figure)")
    ap.add_argument("--no-commands", action="store_true", help="loading only")
    ap.add_argument("--command-histories", default="football,generated",
                    help="the histories the commands are timed on")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--no-docs", action="store_true")
    args = ap.parse_args()
    load0 = load_average()
    systems = [s for s in args.systems.split(",") if s]
    work = Path(tempfile.mkdtemp(prefix="podium-small-"))
    files: dict[str, tuple[Path, int]] = {}
    fb = data_dir() / "football" / "results.csv"
    if fb.exists():
        files["football"] = (work / "football.csv", football_csv(fb, work / "football.csv"))
    else:
        print(f"no {fb}: football skipped", file=sys.stderr)
    gen = work / "generated.csv"
    files["generated"] = (gen, generated_csv(gen, args.matches, args.players, args.seed))
    loads = {k: load_figures(p, args.repeat, args.row_reader) for k, (p, _) in files.items()}
    dirs = {k: (work / f"{k}-json", json_dir(p, work / f"{k}-json"))
            for k, (p, _) in files.items() if k in args.json_dirs.split(",")}
    dir_loads = {k: json_dir_figures(d, args.repeat, args.file_by_file)
                 for k, (d, _) in dirs.items()}
    lines = [
        f"Machine: {cpu_model()}. Loading: median of {args.repeat} interleaved runs in one "
        "process, the file in the page cache; pandas is `pd.read_csv(path)` then "
        "`.groupby('contest').ngroups`; Podium is `podium.io.load_contests(path)` (every "
        "check kept: handles, numbers, times, agreeing metadata, distinct players). "
        "*CPU* is the process's CPU time (all threads: Arrow reads with several), which "
        "a loaded machine inflates less than the wall clock.",
        "",
        "| history | Podium ÷ pandas | CPU ÷ CPU | Podium s | pandas s |"
        + (" row reader ÷ pandas | row reader s |" if args.row_reader else ""),
        "|---|---:|---:|---:|---:|" + ("---:|---:|" if args.row_reader else ""),
    ]
    for k, (_, n) in files.items():
        f = loads[k]
        row = (f"| {k}: {n:,} matches, {2 * n:,} rows | {f['podium'] / f['pandas']:.1f}× "
               f"| {f['podium cpu'] / f['pandas cpu']:.1f}× "
               f"| {f['podium']:.3f} | {f['pandas']:.3f} |")
        if args.row_reader:
            row += f" {f['row reader'] / f['pandas']:.0f}× | {f['row reader']:.2f} |"
        lines.append(row)
    if dirs:
        lines += [
            "",
            "JSON directories: the same history as `0.json, 1.json, ...` (one match a file, "
            "written by Podium's writer); the peer is a plain `json.load` loop over the files "
            "in index order; Podium is `podium.io.load_contests(dir)` (small files read and "
            "checked in batches)"
            + ("; *file by file* is the reader that decodes and checks each file alone "
               "(the reader before the batches)." if args.file_by_file else "."),
            "",
            "| history | Podium ÷ `json.load` loop | CPU ÷ CPU | Podium s "
            "| `json.load` loop s |"
            + (" file by file ÷ loop | file by file s |" if args.file_by_file else ""),
            "|---|---:|---:|---:|---:|" + ("---:|---:|" if args.file_by_file else ""),
        ]
        for k, (_, n) in dirs.items():
            f = dir_loads[k]
            row = (f"| {k}: {n:,} files | {f['podium'] / f['json.load']:.2f}× "
                   f"| {f['podium cpu'] / f['json.load cpu']:.2f}× "
                   f"| {f['podium']:.3f} | {f['json.load']:.3f} |")
            if args.file_by_file:
                row += (f" {f['file by file'] / f['json.load']:.2f}× "
                        f"| {f['file by file']:.2f} |")
            lines.append(row)
    commands: list[str] = []
    if not args.no_commands:
        commands += [
            f"Machine: {cpu_model()}. Commands: whole processes by wall clock, one run each "
            "after a warm-up; `eval` and `compare` divided by the `podium rate` time of the "
            "same systems.",
            "",
            "| history | command | ÷ rate | s | rate s |",
            "|---|---|---:|---:|---:|",
        ]
        for k, (path, _) in files.items():
            if k not in args.command_histories.split(","):
                continue
            print(f"commands on {k} ...", file=sys.stderr, flush=True)
            c = command_figures(path, systems, work, args.timeout)
            for s in systems:
                r = c[f"rate {s}"]
                commands.append(f"| {k} | `eval --system {s}` | {c[f'eval {s}'] / r:.2f}× "
                                f"| {c[f'eval {s}']:.2f} | {r:.2f} |")
            r = sum(c[f"rate {s}"] for s in systems)
            commands.append(f"| {k} | `compare --systems {','.join(systems)}` | "
                            f"{c['compare'] / r:.2f}× | {c['compare']:.2f} | {r:.2f} |")
    for section, body_lines in ((SECTION, lines), (SECTION + "-commands", commands)):
        if not body_lines:
            continue
        body = "\n".join(body_lines)
        print(body)
        if not args.no_docs:
            print(f"updated {write_section(DOC, section, body, load_at_start=load0)}",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
