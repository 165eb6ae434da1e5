"""Cold and warm whole-process time of ``podium rate`` for every rating system.

Three first runs per system, each with a fresh ``NUMBA_CACHE_DIR`` in a temporary
directory (Numba's user-provided cache locator comes before the in-tree ``__pycache__``
one, so a cache left in the source tree cannot mask it):

* "install": ``python -m podium.prebuild --systems NAME`` into a fresh directory, what
  a build with ``PODIUM_PREBUILD=NAME`` adds to ``pip install`` (wall and CPU);
* "first": the first ``podium rate`` with that directory as the prebuilt kernels
  (``PODIUM_PREBUILT_DIR``), what a user gets after such an install;
* "cold": the first ``podium rate`` with no prebuilt kernel (an empty
  ``PODIUM_PREBUILT_DIR``): every kernel the system calls is compiled on demand.

"Warm" reruns the command with the cache of the cold run filled (best of
``--warm-runs``).  Each table gives the ratios first -- first run to warm run, and warm
run to the peer's whole process in the same run -- then the absolute times, with the
machine (CPU model) in the block's header.
Python's bytecode is cached as for an installed Podium, cold and warm alike
(``PYTHONDONTWRITEBYTECODE`` is dropped from the commands' environment).

Input: the first three Codeforces contests of
``../shared/datasets/codeforces/cache_codeforces.tar.gz`` (66, 122 and 264
players), and the README's main job (``podium example example-data`` then
``podium rate example-data --system mmr --out out``: 2000 players, 30 rounds).
The peer is elo-mmr-py (the Rust reference's Python bindings), timed the same way
(whole process: import, read the three files, ``rate_latest``) for ``mmr-fast``.

    python benchmarks/bench_cold_start.py                          # this checkout
    git worktree add --detach /tmp/podium-main main
    python benchmarks/bench_cold_start.py --before /tmp/podium-main/src --write-docs

``--src`` picks the source tree that ``podium`` is imported from (``PYTHONPATH``).
``--before SRC`` measures another checkout ("before", e.g. main) in the same run,
system by system right before this one, so that both see the same machine load.
``--write-docs`` puts the table into docs/benchmarks.md (block ``cold-start``, with
the date, commit, machine and command: ``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from _report import ROOT, data_dir, load_average, write_section

ARCHIVE = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
DOC = "docs/benchmarks.md"
SECTION = "cold-start"

PEER = r'''
import json, sys
import elo_mmr_py as e
cs = []
for i in range(3):
    with open(f"{sys.argv[1]}/{i}.json") as fh:
        d = json.load(fh)
    cs.append(e.Contest([tuple(s) for s in d["standings"]], name=d["name"],
                        time_seconds=d["time_seconds"], url=d.get("url")))
e.rate_latest(cs, "mmr-fast")
'''


class Refused(Exception):
    """The command exited with an error (a system that refuses this input)."""


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system) of a whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise Refused(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                      f"exit status {proc.returncode}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return dt, cpu


def _index_files(cache: Path) -> int:
    return sum(1 for _ in cache.rglob("*.nbi"))


def measure(cmd: list[str], env: dict[str, str], cwd: Path, warm_runs: int) -> dict[str, Any]:
    """Cold (fresh Numba cache) and warm (same cache, best of ``warm_runs``) times."""
    cache = Path(tempfile.mkdtemp(prefix="podium-numba-"))
    try:
        e = {**env, "NUMBA_CACHE_DIR": str(cache)}
        load = os.getloadavg()[0]
        cold, cold_cpu = _timed(cmd, e, cwd)
        nbi = _index_files(cache)
        warm, warm_cpu = min(_timed(cmd, e, cwd) for _ in range(warm_runs))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {"cold_s": cold, "warm_s": warm, "cold_cpu_s": cold_cpu, "warm_cpu_s": warm_cpu,
            "index_files": nbi, "load": load}


def prebuilt(name: str, env: dict[str, str], cwd: Path) -> tuple[float, float, Path]:
    """``python -m podium.prebuild --systems NAME`` into a fresh directory: wall and CPU
    seconds, and the directory."""
    directory = Path(tempfile.mkdtemp(prefix="podium-prebuilt-"))
    wall, cpu = _timed([sys.executable, "-m", "podium.prebuild", "--systems", name,
                        "--dir", str(directory)], env, cwd)
    return wall, cpu, directory


def measure_all(name: str, cmd: list[str], env: dict[str, str], cwd: Path,
                warm_runs: int) -> dict[str, Any]:
    """:func:`measure` without prebuilt kernels, then the prebuild of ``name`` and the
    first run with it (for a tree without ``podium.prebuild``: the cold figures only)."""
    empty = Path(tempfile.mkdtemp(prefix="podium-noprebuilt-"))
    try:
        r = measure(cmd, {**env, "PODIUM_PREBUILT_DIR": str(empty)}, cwd, warm_runs)
        try:
            wall, cpu, directory = prebuilt(name, env, cwd)
        except Refused:
            return r
        try:
            cache = Path(tempfile.mkdtemp(prefix="podium-numba-"))
            e = {**env, "PODIUM_PREBUILT_DIR": str(directory), "NUMBA_CACHE_DIR": str(cache)}
            first, first_cpu = _timed(cmd, e, cwd)
            compiled = _index_files(cache)
            shutil.rmtree(cache, ignore_errors=True)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        r.update({"prebuild_s": wall, "prebuild_cpu_s": cpu, "first_s": first,
                  "first_cpu_s": first_cpu, "first_compiled": compiled})
        return r
    finally:
        shutil.rmtree(empty, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="source tree to import podium from (default: this checkout)")
    ap.add_argument("--systems", default=None, help="comma-separated (default: all SYSTEMS)")
    ap.add_argument("--warm-runs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--before", type=Path,
                    help="source tree of the 'before' version, measured alongside")
    ap.add_argument("--from-json", type=Path,
                    help="write the docs from results saved by --json (no measuring)")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"write the table into {DOC} (block {SECTION!r})")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        write_docs(saved["after"], saved.get("before"), saved.get("peer_s"),
                   warm_runs=saved.get("warm_runs", 2), saved=saved)
        return 0
    load0 = load_average()
    if not ARCHIVE.exists():
        print(f"skipped: {ARCHIVE} not found (set PODIUM_DATA_DIR)", file=sys.stderr)
        return 0
    trees = {"after": args.src.resolve()}
    if args.before:
        trees = {"before": args.before.resolve(), **trees}
    envs = {}
    for label, src in trees.items():
        env = {**os.environ, "PYTHONPATH": str(src)}
        env.pop("NUMBA_CACHE_DIR", None)
        # An installed Podium runs from bytecode (pip compiles it at install time);
        # with PYTHONDONTWRITEBYTECODE in the caller's environment every run would
        # compile Podium's sources again (about 0.05 s).  The first run writes them.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        envs[label] = env
    py = sys.executable
    names = subprocess.run(
        [py, "-c", "from podium.systems import SYSTEMS; print(','.join(SYSTEMS))"],
        env=envs["after"], capture_output=True, text=True, check=True,
    ).stdout.strip().split(",")
    systems = args.systems.split(",") if args.systems else names

    results: dict[str, Any] = {
        label: {"src": str(src), "systems": {}} for label, src in trees.items()
    }
    results["argv"] = sys.argv[1:]
    results["load_at_start"] = load0
    results["warm_runs"] = args.warm_runs
    results["measured"] = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    with tempfile.TemporaryDirectory(prefix="podium-cold-") as tmp_s:
        tmp = Path(tmp_s)
        cf3 = tmp / "cf3"
        cf3.mkdir()
        with tarfile.open(ARCHIVE, "r|gz") as tf:
            for m in tf:
                hit = re.search(r"(?:^|/)([0-2])\.json$", m.name)
                f = tf.extractfile(m) if hit and m.isfile() else None
                if f is not None and hit is not None:
                    (cf3 / f"{hit.group(1)}.json").write_bytes(f.read())
                if len(list(cf3.iterdir())) == 3:
                    break
        podium = [py, "-m", "podium.cli"]
        for name in systems:
            for label, env in envs.items():
                try:
                    r = measure_all(name, podium + ["rate", str(cf3), "--system", name,
                                                    "--out", str(tmp / "out"),
                                                    "--no-progress"], env, tmp,
                                    args.warm_runs)
                except Refused as exc:
                    print(f"{label:6s} {name:16s} refused: {exc}", flush=True)
                    results[label]["systems"][name] = None
                    continue
                results[label]["systems"][name] = r
                if "first_s" in r:
                    print(f"{label:6s} {name:16s} install +{r['prebuild_s']:6.2f} s "
                          f"(cpu {r['prebuild_cpu_s']:5.2f})  first {r['first_s']:5.2f} s "
                          f"(cpu {r['first_cpu_s']:4.2f}, {r['first_compiled']} kernels "
                          "compiled)", flush=True)
                print(f"{label:6s} {name:16s} cold {r['cold_s']:6.2f} s "
                      f"(cpu {r['cold_cpu_s']:5.2f})  warm {r['warm_s']:5.2f} s "
                      f"(cpu {r['warm_cpu_s']:4.2f})  {r['index_files']} index files; "
                      f"load {r['load']:.2f}", flush=True)
        _timed(podium + ["example", "example-data"], envs["after"], tmp)
        for label, env in envs.items():
            r = measure_all("mmr", podium + ["rate", "example-data", "--system", "mmr",
                                             "--out", "out", "--no-progress"], env, tmp,
                            args.warm_runs)
            results[label]["readme"] = r
            print(f"{label:6s} {'README example':16s} cold {r['cold_s']:6.2f} s "
                  f"(cpu {r['cold_cpu_s']:5.2f})  warm {r['warm_s']:5.2f} s "
                  f"(cpu {r['warm_cpu_s']:4.2f})  load {r['load']:.2f}", flush=True)
        try:
            peer = [py, "-c", PEER, str(cf3)]
            t = min(_timed(peer, envs["after"], tmp)[0] for _ in range(args.warm_runs))
            results["peer_s"] = t
            print(f"{'elo-mmr-py':16s} mmr-fast whole process {t:5.2f} s", flush=True)
        except Refused as exc:
            print(f"peer skipped: {exc}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.write_docs:
        write_docs(results["after"], results.get("before"), results.get("peer_s"),
                   warm_runs=args.warm_runs, load_at_start=load0)
    return 0


def _tree(src: str) -> str:
    """A source tree as the docs name it: relative to this checkout where it is near."""
    path = Path(src)
    if path.is_absolute() and path.is_relative_to(ROOT.parent):
        return os.path.relpath(path, ROOT)
    return src


def write_docs(after: dict[str, Any], before: dict[str, Any] | None, peer: float | None,
               *, warm_runs: int = 2, load_at_start: str | None = None,
               saved: dict[str, Any] | None = None) -> None:
    """Write these results into docs/benchmarks.md, block ``cold-start``.

    ``saved``: results read back from ``--json`` (their date and command are noted,
    since the block's header then describes the run that wrote the doc).
    """

    def cell(res: dict[str, Any] | None, key: str) -> str:
        return f"{res[key]:.2f}" if res and key in res else "–"

    def ratio(res: dict[str, Any] | None, num: str, den: float | None) -> str:
        if not res or num not in res or not den:
            return "–"
        return f"{res[num] / den:.2f}×"

    def row(label: str, b: dict[str, Any] | None, r: dict[str, Any]) -> str:
        ratios = [ratio(r, "first_s", r["warm_s"]), ratio(r, "cold_s", r["warm_s"]),
                  ratio(r, "warm_s", peer)]
        cells = [f"{cell(b, k)} → {cell(r, k)}" if before else cell(r, k)
                 for k in ("first_s", "warm_s", "cold_s", "cold_cpu_s", "prebuild_s",
                           "prebuild_cpu_s")]
        load = f"{b['load']:.1f} / {r['load']:.1f}" if b else f"{r['load']:.1f}"
        return f"| {label} | " + " | ".join(ratios + cells) + f" | {load} |"

    rows = [
        "| system | first ÷ warm | cold ÷ warm | warm ÷ peer | first wall (s) | warm wall (s) "
        "| cold wall (s) | cold CPU (s) | install + wall (s) | install + CPU (s) | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    bsys = before["systems"] if before else {}
    for name, r in after["systems"].items():
        if r is None:
            rows.append(f"| `{name}` | refuses this input (see `podium rate`) "
                        "| | | | | | | | | |")
            continue
        rows.append(row(f"`{name}`", bsys.get(name), r))
    rows.append(row("README example (`mmr`, 2000 players × 30 rounds)",
                    before.get("readme") if before else None, after["readme"]))
    note = []
    if saved is not None:
        argv = " ".join(map(_tree, saved.get("argv", [])))
        note = [f"Figures measured {saved.get('measured', '(date not saved)')} (load "
                f"{saved.get('load_at_start', 'not saved')} at the start) by "
                f"`python benchmarks/bench_cold_start.py {argv}`, "
                "written from its `--json` results by the command above.", ""]
    text = "\n".join([
        *note,
        "Whole-process wall-clock time of `podium rate DIR --system NAME --out OUT` on the "
        "first three Codeforces contests (66, 122 and 264 players). *First*: a fresh, empty "
        "`NUMBA_CACHE_DIR` and the kernels the build compiled for the system "
        "(`python -m podium.prebuild --systems NAME`, whose time is *install +*: what "
        "`PODIUM_PREBUILD=NAME` adds to `pip install`); *cold*: a fresh cache and no "
        "prebuilt kernel (every kernel the system calls is compiled on demand); *warm*: "
        f"the cold run's command again with its cache (best of {warm_runs}); *peer*: "
        "elo-mmr-py's whole process in the same run (below). "
        + (f"Each cell is *before → after*: before is the tree given by `--before` "
           f"(`{_tree(before['src'])}`), after is this checkout, measured one right after "
           "the other for each row. " if before else "")
        + "*CPU* is the process's user + "
        "system time, which the machine's load inflates far less than the wall-clock "
        "time; *load* is the 1-minute load average before each cold run"
        + (" (before / after). " if before else ". ") +
        "The README example is the rating step of `podium example example-data && podium "
        "rate example-data --system mmr --out out`.",
        "",
        *rows,
        "",
        (f"Peer: elo-mmr-py's `mmr-fast` on the same three contests takes {peer:.2f} s as a "
         "whole process (import, read, rate; compiled ahead of time, so it has no cold start)."
         if peer is not None else "Peer: elo-mmr-py was not available."),
    ])
    print(text)
    write_section(DOC, SECTION, text, load_at_start=load_at_start)


if __name__ == "__main__":
    raise SystemExit(main())
