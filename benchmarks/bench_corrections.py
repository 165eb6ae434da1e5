"""Corrections on the Codeforces history: ``Store.delete`` and ``Store.replace`` of an
early contest against ``podium rate`` of the corrected history.

The issue's target: deleting the 100th of the paper's 1087 Codeforces contests and
re-rating the rest with exact ``mmr`` within 2x of the time ``podium rate`` needs for
those contests.  The script

1. builds a SQLite store of the contests ``0..N-1`` once (``podium ingest DATA -n N
   --dedupe --sort-by-time --system mmr``, as ``bench_whole_job.py`` rates them) and
   keeps it (``--store``; reused when it exists);
2. per repeat, on a fresh copy of it: ``Store.delete`` of the contest at ``--position``
   (0-based: 99 is the 100th) in a new process, timed around the call, with the time
   of each stage of the transaction (its hooks); then on another copy
   ``Store.replace`` of that contest by its standings without the winner (a
   disqualified player; the places behind move up);
3. per repeat, ``podium rate`` of each corrected history (the ``N - 1`` contests left by
   the deletion, and the ``N`` with the replacement), written as a directory of JSON
   files: the whole process by wall clock, as ``bench_whole_job.py`` times it, with the
   job's own load / rate / write split;
4. checks that the corrected store equals ``Rater.extend`` of the corrected history,
   bit for bit (``--no-check`` skips it).

    python benchmarks/bench_corrections.py                  # writes docs/service.md
    python benchmarks/bench_corrections.py -n 300 --position 20 --no-doc

The table goes into docs/service.md, block ``corrections`` (``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _reference import CHILD_ENV
from _report import PODIUM_REPORT, checkout_env, data_dir, load_average, write_section

DEFAULT_TAR = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
DOC = "docs/service.md"
SECTION = "corrections"

#: One correction in a fresh process: open the store, time the call, report the stages.
CHILD = r'''
import json, sys, time
from podium.store import Store
from podium.io import load_contests
url, what, pos = sys.argv[1], sys.argv[2], int(sys.argv[3])
marks = []
def hook(stage):
    marks.append((stage, time.perf_counter()))
with Store.open(url, hooks=hook) as store:
    cid = store.contest_ids()[pos]
    replacement = load_contests(sys.argv[4]).contests[0] if what == "replace" else None
    t0 = time.perf_counter()
    if replacement is None:
        res = store.delete(cid)
    else:
        res = store.replace(replacement, contest_id=cid)
    t1 = time.perf_counter()
stages, prev = {}, t0
for stage, t in marks:
    stages[stage] = stages.get(stage, 0.0) + t - prev
    prev = t
stages["(commit)"] = t1 - prev
print(json.dumps({"seconds": t1 - t0, "stages": stages, "rerated": res.rerated,
                  "status": res.status, "removed": res.players_removed,
                  "name": res.name}), file=sys.stderr)
'''

#: The stages of a correction's transaction (its hooks), with what each one covers.
STAGES = [
    ("replayed", "read the contests from the newest snapshot on (one query per table), "
                 "replay those before the point"),
    ("correction-cleared", "delete the contest's events and standings, shift positions, "
                           "drop later snapshots"),
    ("rated", "rate the later contests (one `Rater.extend`)"),
    ("standings", "the replacement's contest row and standings"),
    ("events", "rewrite the later contests' events (one bulk update)"),
    ("players", "update, insert and delete players"),
    ("snapshot", "write a snapshot of the corrected state"),
    ("commit", "bump revision and epoch"),
    ("(commit)", "commit"),
]


def _env() -> dict[str, str]:
    return checkout_env(CHILD_ENV)


def run(argv: list[str], timeout: float) -> tuple[float, str]:
    """Wall-clock seconds of a whole subprocess, and its stderr."""
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=_env())
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:5])} ... failed:\n{proc.stderr[-3000:]}")
    return wall, proc.stderr


def last_json(text: str) -> dict[str, Any]:
    return json.loads(text.strip().splitlines()[-1])


def copy_db(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(dst) + suffix).unlink(missing_ok=True)
    shutil.copyfile(src, dst)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_TAR)
    ap.add_argument("-n", type=int, default=1087, help="Codeforces contests (default 1087)")
    ap.add_argument("--position", type=int, default=99,
                    help="0-based position of the contest to correct (default 99: the 100th)")
    ap.add_argument("--late", type=int, default=1080,
                    help="also time deleting the contest at this position (default 1080: few "
                    "later contests, many players seen only there; -1: not)")
    ap.add_argument("--store", type=Path, default=None,
                    help="the SQLite store of the N contests: built when missing, else reused "
                    "(default: podium-bench-corrections-N.db in the temporary directory)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each job (median shown)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per job")
    ap.add_argument("--no-check", action="store_true",
                    help="do not check the corrected store against a Rater")
    ap.add_argument("--no-doc", action="store_true", help=f"do not update {DOC}")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (set PODIUM_DATA_DIR)")
        return 0
    from podium import Contest
    from podium.io import load_contests, write_contest_dir, write_contest_json

    py = sys.executable
    load0 = load_average()
    store = args.store or Path(tempfile.gettempdir()) / f"podium-bench-corrections-{args.n}.db"
    build_s = None
    if not store.exists():
        print(f"building {store} ...", file=sys.stderr, flush=True)
        build_s, _ = run([py, "-m", "podium.cli", "ingest", str(args.data), "-n", str(args.n),
                          "--dedupe", "--sort-by-time", "--system", "mmr", "--db", str(store),
                          "-q", "--no-progress"], args.timeout)
    history = load_contests(str(args.data), limit=args.n, dedupe_urls=True,
                            sort_by_time=True).contests
    k = args.position
    old = history[k]
    fixed = Contest.from_places(list(old.handles[1:]), (old.lo[1:] + 1).tolist(),
                                name=old.name, time_seconds=old.time_seconds, url=old.url,
                                weight=old.weight, perf_ceiling=old.perf_ceiling)
    corrected = {"delete": history[:k] + history[k + 1:],
                 "replace": [*history[:k], fixed, *history[k + 1:]]}
    rounds = {w: sum(len(c) for c in cs) for w, cs in corrected.items()}
    work = Path(tempfile.mkdtemp(prefix="podium-corrections-"))
    times: dict[str, list[float]] = {}
    stages: dict[str, list[dict[str, float]]] = {}
    splits: dict[str, list[tuple[float, float, float]]] = {}
    info: dict[str, dict[str, Any]] = {}
    try:
        write_contest_json(fixed, work / "fixed.json")
        for what, cs in corrected.items():
            write_contest_dir(cs, work / f"history-{what}")
        for rnd in range(args.repeat):
            for what in ("delete", "replace"):
                db = work / f"{what}.db"
                copy_db(store, db)
                print(f"[{rnd + 1}] Store.{what} of #{k} ...", file=sys.stderr, flush=True)
                _, err = run([py, "-c", CHILD, f"sqlite:///{db}", what, str(k),
                              str(work / "fixed.json")], args.timeout)
                out = last_json(err)
                info[what] = out
                times.setdefault(f"Store.{what}", []).append(out["seconds"])
                stages.setdefault(what, []).append(out["stages"])
                print(f"    {out['seconds']:.2f} s", file=sys.stderr, flush=True)
            if 0 <= args.late < args.n:
                db = work / "late.db"
                copy_db(store, db)
                print(f"[{rnd + 1}] Store.delete of #{args.late} ...", file=sys.stderr,
                      flush=True)
                _, err = run([py, "-c", CHILD, f"sqlite:///{db}", "delete", str(args.late),
                              "-"], args.timeout)
                out = last_json(err)
                info["late"] = out
                times.setdefault("late", []).append(out["seconds"])
                print(f"    {out['seconds']:.2f} s", file=sys.stderr, flush=True)
            for what in ("delete", "replace"):
                name = f"podium rate, {what}-corrected"
                print(f"[{rnd + 1}] {name} ...", file=sys.stderr, flush=True)
                wall, err = run([py, "-m", "podium.cli", "rate", str(work / f"history-{what}"),
                                 "--system", "mmr", "--out", str(work / f"out-{what}"),
                                 "--no-progress"], args.timeout)
                m = PODIUM_REPORT.search(err)
                if m is None:
                    raise RuntimeError(f"no timing line in podium's report:\n{err[-1000:]}")
                times.setdefault(name, []).append(wall)
                splits.setdefault(name, []).append((float(m.group(4)), float(m.group(3)),
                                                    float(m.group(5))))
                print(f"    {wall:.2f} s", file=sys.stderr, flush=True)
        checked = ""
        if not args.no_check:
            checked = check(work, corrected)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {name: statistics.median(v) for name, v in times.items()}
    lines = ["| job | seconds | vs `podium rate` of the corrected history | target |",
             "|---|---:|---:|---|"]
    for what in ("delete", "replace"):
        rate_name = f"podium rate, {what}-corrected"
        ratio = med[f"Store.{what}"] / med[rate_name]
        lines.append(f"| `Store.{what}` of #{k} ({info[what]['rerated']} later contests "
                     f"re-rated) | **{med[f'Store.{what}']:.2f}** | **{ratio:.2f}×** | "
                     f"{'met' if ratio <= 2 else 'missed'} (≤ 2×) |")
        ld, rt, wr = (statistics.median(s[i] for s in splits[rate_name]) for i in range(3))
        lines.append(f"| `podium rate` of the {what}-corrected history "
                     f"({len(corrected[what])} contests, {rounds[what]:,} player-rounds; "
                     f"load {ld:.2f} + rate {rt:.2f} + write {wr:.2f} s) | "
                     f"{med[rate_name]:.2f} | 1.00× | |")
    if "late" in med:
        late = info["late"]
        lines.append(f"| `Store.delete` of #{args.late} ({late['rerated']} later contests "
                     f"re-rated, {late['removed']:,} players removed) | {med['late']:.2f} | "
                     "| |")
    stage_lines = ["| stage | what | delete s | replace s |", "|---|---|---:|---:|"]
    for stage, what in STAGES:
        vals = []
        for kind in ("delete", "replace"):
            got = [s[stage] for s in stages[kind] if stage in s]
            vals.append(f"{statistics.median(got):.2f}" if got else "–")
        stage_lines.append(f"| `{stage}` | {what} | {vals[0]} | {vals[1]} |")
    build = (f" Building the store ({args.n} contests, `podium ingest --dedupe "
             f"--sort-by-time`, batches) took {build_s:.0f} s in this run."
             if build_s is not None else " The store was built before this run and reused "
             "(a copy per job).")
    section = "\n".join([
        f"SQLite store of the first {args.n} Codeforces contests (`mmr`), the contest at "
        f"position {k} ({info['delete']['name']!r}, {len(old):,} players) deleted, or "
        "replaced by its standings without the winner; each correction in a new process on "
        "a fresh copy of the store, timed around the call (opening the store is not "
        "included, nor is loading the replacement file). `podium rate` rates the corrected "
        "history from a directory of JSON files, timed as a whole process (interpreter start "
        "to exit, all three CSV files written), in the same run. Median of "
        f"{args.repeat} run(s).{build}",
        "",
        *lines,
        "",
        "Where a correction's time goes (the stages of its transaction, from its hooks; "
        "median seconds):",
        "",
        *stage_lines,
        *(["", checked] if checked else []),
    ])
    print(section)
    if not args.no_doc:
        path = write_section(DOC, SECTION, section, load_at_start=load0)
        print(f"updated {path}", file=sys.stderr)
    return 0


def check(work: Path, corrected: dict[str, list[Any]]) -> str:
    """The corrected stores equal ``Rater.extend`` of the corrected histories, bit for
    bit (every player's mu, sigma, display rating, contests, last time, maximum and last
    change); raises when they do not."""
    import pandas as pd

    from podium import Rater
    from podium.store import Store

    for what, cs in corrected.items():
        rater = Rater("mmr")
        rater.extend(cs)
        with Store.open(f"sqlite:///{work / f'{what}.db'}") as store:
            got = store.ratings_frame()
        pd.testing.assert_frame_equal(got, rater.ratings().reset_index(drop=True),
                                      check_exact=True)
    return ("Checked in the same run: after each correction the store's ratings of every "
            "player equal `Rater.extend` of the corrected history bit for bit "
            f"({', '.join(f'{len(c)} contests' for c in corrected.values())}).")


if __name__ == "__main__":
    raise SystemExit(main())
