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
With the README job's prebuilt kernels, ``podium eval example-data --system mmr`` is
also run with a fresh cache (its first run after an install, and the kernels it compiled)
and again with that cache (best of ``--warm-runs``).
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

``--startup`` measures only how a warm command line starts (issue 30, item 2): the
whole process of ``podium rate three.csv --system mmr --out OUT`` (a long CSV of three
contests of 20 players) against ``python -c "import numpy, numba"``, run alternately
``--startup-runs`` times each after one warm-up run of each, in the same run; the
ratio of the medians comes first (target: at most 1.2x), then the seconds, wall-clock
and CPU.  With ``--before SRC`` the other checkout's ``podium rate`` is interleaved
too.  ``--write-docs`` then writes block ``startup``::

    python benchmarks/bench_cold_start.py --startup --before /tmp/podium-main/src --write-docs
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from _report import ROOT, data_dir, load_average, timed_process, write_section

ARCHIVE = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
DOC = "docs/benchmarks.md"
SECTION = "cold-start"
STARTUP_SECTION = "startup"
#: The README's evaluation, run after its rating job with the same prebuilt kernels.
README_EVAL = ["eval", "example-data", "--system", "mmr"]
#: The peer of ``--startup``: what any script that uses NumPy and Numba pays to start.
STARTUP_PEER = "import numpy, numba"

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
    """Wall-clock and CPU seconds (user + system) of a whole process
    (:func:`timed_process`)."""
    dt, cpu, proc = timed_process(cmd, cwd, env)
    if proc.returncode != 0:
        raise Refused(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                      f"exit status {proc.returncode}")
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
                warm_runs: int, first_runs: int = 1, also: list[str] | None = None
                ) -> dict[str, Any]:
    """:func:`measure` without prebuilt kernels, then the prebuild of ``name`` and the
    first run with it (for a tree without ``podium.prebuild``: the cold figures only).

    ``first_runs``: the first run is repeated with a fresh ``NUMBA_CACHE_DIR`` each
    time, and the median is kept (wall and CPU apart).  ``also``: another command run
    with the same prebuilt kernels, first with a fresh cache (``also_first_s``,
    ``also_first_cpu_s``, ``also_compiled``), then again with that cache (best of
    ``warm_runs``: ``also_again_s``, ``also_again_cpu_s``)."""
    empty = Path(tempfile.mkdtemp(prefix="podium-noprebuilt-"))
    try:
        r = measure(cmd, {**env, "PODIUM_PREBUILT_DIR": str(empty)}, cwd, warm_runs)
        try:
            wall, cpu, directory = prebuilt(name, env, cwd)
        except Refused:
            return r
        try:
            runs = []
            for _ in range(max(1, first_runs)):
                cache = Path(tempfile.mkdtemp(prefix="podium-numba-"))
                e = {**env, "PODIUM_PREBUILT_DIR": str(directory),
                     "NUMBA_CACHE_DIR": str(cache)}
                runs.append(_timed(cmd, e, cwd))
                compiled = _index_files(cache)
                shutil.rmtree(cache, ignore_errors=True)
            first = statistics.median(w for w, _ in runs)
            first_cpu = statistics.median(c for _, c in runs)
            if also is not None:
                r.update(_also(also, {**env, "PODIUM_PREBUILT_DIR": str(directory)}, cwd,
                               warm_runs))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        r.update({"prebuild_s": wall, "prebuild_cpu_s": cpu, "first_s": first,
                  "first_cpu_s": first_cpu, "first_compiled": compiled})
        return r
    finally:
        shutil.rmtree(empty, ignore_errors=True)


def _also(cmd: list[str], env: dict[str, str], cwd: Path, runs: int) -> dict[str, Any]:
    """``cmd``'s first run with a fresh cache (and the prebuilt kernels of ``env``), the
    kernels it compiled, and the best of ``runs`` runs again with that cache."""
    cache = Path(tempfile.mkdtemp(prefix="podium-numba-"))
    try:
        e = {**env, "NUMBA_CACHE_DIR": str(cache)}
        first, first_cpu = _timed(cmd, e, cwd)
        compiled = _index_files(cache)
        again = [_timed(cmd, e, cwd) for _ in range(max(1, runs))]
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {"also_first_s": first, "also_first_cpu_s": first_cpu, "also_compiled": compiled,
            "also_again_s": min(w for w, _ in again),
            "also_again_cpu_s": min(c for _, c in again)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="source tree to import podium from (default: this checkout)")
    ap.add_argument("--systems", default=None, help="comma-separated (default: all SYSTEMS)")
    ap.add_argument("--warm-runs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--before", type=Path,
                    help="source tree of the 'before' version, measured alongside")
    ap.add_argument("--from-json", type=Path, nargs="+",
                    help="write the docs from results saved by --json (no measuring); "
                    "with several files, a later file's systems and README row replace "
                    "the earlier ones' (e.g. a rerun of a few rows on a quiet machine)")
    ap.add_argument("--first-runs", type=int, default=1,
                    help="first runs per system, each with a fresh cache (median; "
                    "default 1)")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"write the table into {DOC} (block {SECTION!r}, or "
                    f"{STARTUP_SECTION!r} with --startup)")
    ap.add_argument("--startup", action="store_true",
                    help="measure only a warm `podium rate` of a 3-contest CSV against "
                    f"`python -c {STARTUP_PEER!r}` (issue 30, item 2)")
    ap.add_argument("--startup-runs", type=int, default=21,
                    help="runs of each command for --startup (median; default 21)")
    args = ap.parse_args()
    if args.startup:
        return startup(args.src.resolve(), args.before.resolve() if args.before else None,
                       args.startup_runs, write_docs=args.write_docs, as_json=args.json)
    if args.from_json:
        saved = merged([json.loads(f.read_text()) for f in args.from_json])
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
    envs = {label: _env(src) for label, src in trees.items()}
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
    results["first_runs"] = args.first_runs
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
                                    args.warm_runs, args.first_runs)
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
                            args.warm_runs, args.first_runs,
                            also=podium + README_EVAL + ["--no-progress"])
            results[label]["readme"] = r
            print(f"{label:6s} {'README example':16s} cold {r['cold_s']:6.2f} s "
                  f"(cpu {r['cold_cpu_s']:5.2f})  warm {r['warm_s']:5.2f} s "
                  f"(cpu {r['warm_cpu_s']:4.2f})  load {r['load']:.2f}", flush=True)
            if "also_first_s" in r:
                print(f"{label:6s} {'README eval':16s} first {r['also_first_s']:5.2f} s "
                      f"(cpu {r['also_first_cpu_s']:4.2f}, {r['also_compiled']} kernels "
                      f"compiled)  again {r['also_again_s']:5.2f} s "
                      f"(cpu {r['also_again_cpu_s']:4.2f})", flush=True)
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


def _env(src: Path) -> dict[str, str]:
    """The environment of a command run from the source tree ``src``: its ``PYTHONPATH``,
    Numba's default cache, and Python's bytecode cache.

    An installed Podium runs from bytecode (pip compiles it at install time); with
    ``PYTHONDONTWRITEBYTECODE`` in the caller's environment every run would compile
    Podium's sources again (about 0.05 s).  The first run writes them.
    """
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def three_contests_csv(path: Path) -> Path:
    """A long CSV of three contests of 20 players each, drawn (seeded) from 40."""
    import random

    rng = random.Random(1)
    rows = ["contest,time_seconds,player,place"]
    for c in range(3):
        for place, p in enumerate(rng.sample(range(40), 20), start=1):
            rows.append(f"c{c},{1_600_000_000 + c * 86_400},p{p},{place}")
    path.write_text("\n".join(rows) + "\n")
    return path


def startup(src: Path, before: Path | None, runs: int, *, write_docs: bool,
            as_json: Path | None) -> int:
    """``--startup``: whole-process wall-clock and CPU seconds of a warm ``podium rate``
    of :func:`three_contests_csv` and of ``python -c STARTUP_PEER``, alternately (the
    order flips every round, so that both see the same load); medians."""
    load0 = load_average()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="podium-startup-") as tmp_s:
        tmp = Path(tmp_s)
        data = three_contests_csv(tmp / "three.csv")
        trees = {"after": src, **({"before": before} if before else {})}
        cmds: dict[str, tuple[list[str], dict[str, str]]] = {
            "peer": ([py, "-c", STARTUP_PEER], _env(src)),
            **{label: ([py, "-m", "podium.cli", "rate", str(data), "--system", "mmr",
                        "--out", str(tmp / f"out-{label}"), "--no-progress"], _env(tree))
               for label, tree in trees.items()},
        }
        for cmd, env in cmds.values():  # warm-up: Numba's cache, Python's bytecode
            _timed(cmd, env, tmp)
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in cmds}
        for k in range(runs):
            order = list(cmds) if k % 2 == 0 else list(cmds)[::-1]
            for label in order:
                cmd, env = cmds[label]
                times[label].append(_timed(cmd, env, tmp))
        if before:
            for name in ("ratings", "histories", "contests"):
                same = (tmp / "out-after" / f"{name}.csv").read_bytes() == (
                    tmp / "out-before" / f"{name}.csv").read_bytes()
                print(f"{name}.csv before == after: {same}", flush=True)
    med = {label: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t),
                   min(w for w, _ in t)) for label, t in times.items()}
    for label, (wall, cpu, best) in med.items():
        print(f"{label:6s} median wall {wall:.3f} s (best {best:.3f}), median CPU {cpu:.3f} s; "
              f"wall / peer {wall / med['peer'][0]:.2f}x, CPU / peer "
              f"{cpu / med['peer'][1]:.2f}x", flush=True)
    if as_json:
        as_json.write_text(json.dumps({"runs": runs, "times": times, "load_at_start": load0},
                                      indent=1))
    if write_docs:
        names = {"peer": f"`python -c \"{STARTUP_PEER}\"`",
                 "after": "`podium rate three.csv --system mmr --out OUT`"
                 + (" (this checkout)" if before else ""),
                 "before": f"the same, `--before` tree (`{_tree(str(before))}`)"}
        rows = ["| command | wall ÷ peer (medians) | CPU ÷ peer (medians) | median wall (s) "
                "| best wall (s) | median CPU (s) |", "|---|---:|---:|---:|---:|---:|"]
        for label in ("after", "before", "peer"):
            if label in med:
                wall, cpu, best = med[label]
                rows.append(f"| {names[label]} | {wall / med['peer'][0]:.2f}× | "
                            f"{cpu / med['peer'][1]:.2f}× | {wall:.3f} | {best:.3f} | "
                            f"{cpu:.3f} |")
        text = "\n".join([
            "A warm `podium rate` of a long CSV of three contests (20 players each, "
            "`--system mmr`, every output written) against the peer "
            f"`python -c \"{STARTUP_PEER}\"`, each a whole process, {runs} runs of each "
            "alternating (the order flips every round) after one warm-up run of each, in "
            "the same run. The ratio of the medians comes first (issue 30's target: at most "
            "1.2×); *CPU* is user + system time, which the machine's load inflates less "
            "than the wall-clock time.",
            "",
            *rows,
        ])
        print(text)
        write_section(DOC, STARTUP_SECTION, text, load_at_start=load0)
    return 0


def _tree(src: str) -> str:
    """A source tree as the docs name it: relative to this checkout where it is near."""
    path = Path(src)
    if path.is_absolute() and path.is_relative_to(ROOT.parent):
        return os.path.relpath(path, ROOT)
    return src


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Results of several ``--json`` runs as one: a later run's systems, README row and
    peer replace the earlier ones'; ``"runs"`` keeps each run's date, load and command,
    and every row keeps the run it came from (``"run"``: its position)."""
    out: dict[str, Any] = {"after": {"systems": {}}, "runs": []}
    for k, run in enumerate(runs):
        out["runs"].append({key: run.get(key) for key in
                            ("measured", "load_at_start", "argv", "first_runs", "peer_s")})
        for label in ("before", "after"):
            if label not in run:
                continue
            side = out.setdefault(label, {"systems": {}})
            side["src"] = run[label]["src"]
            tag = {"run": k, "peer_s": run.get("peer_s")}  # each row keeps its run's peer
            for name, r in run[label]["systems"].items():
                side["systems"][name] = None if r is None else {**r, **tag}
            if "readme" in run[label]:
                side["readme"] = {**run[label]["readme"], **tag}
        for key in ("peer_s", "warm_runs"):
            if key in run:
                out[key] = run[key]
    return out


def _eval_lines(r: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """The README evaluation's first run after the prebuild (a paragraph, or none when
    it was not measured)."""
    if not r or "also_first_s" not in r:
        return []

    def figures(x: dict[str, Any]) -> str:
        return (f"{x['also_first_s'] / x['also_again_s']:.2f}× its next run "
                f"({x['also_first_s']:.2f} s against {x['also_again_s']:.2f} s; by CPU "
                f"{x['also_first_cpu_s'] / x['also_again_cpu_s']:.2f}×), "
                f"{x['also_compiled']} kernels compiled")

    before = (f" (before: {figures(b)})" if b and "also_first_s" in b else "")
    return [f"README evaluation, `podium {' '.join(README_EVAL)}`, with the kernels of the "
            "same prebuild and a fresh cache: the first run takes " + figures(r) + before
            + ".", ""]


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

    runs = saved.get("runs", []) if saved is not None else []

    def row(label: str, b: dict[str, Any] | None, r: dict[str, Any]) -> str:
        ratios = [ratio(r, "first_s", r["warm_s"]), ratio(r, "first_cpu_s", r["warm_cpu_s"]),
                  ratio(r, "cold_s", r["warm_s"]), ratio(r, "warm_s", r.get("peer_s", peer))]
        cells = [f"{cell(b, k)} → {cell(r, k)}" if before else cell(r, k)
                 for k in ("first_s", "warm_s", "cold_s", "cold_cpu_s", "prebuild_s",
                           "prebuild_cpu_s")]
        load = f"{b['load']:.1f} / {r['load']:.1f}" if b else f"{r['load']:.1f}"
        if len(runs) > 1:
            load += f" (run {r.get('run', 0) + 1})"
        return f"| {label} | " + " | ".join(ratios + cells) + f" | {load} |"

    rows = [
        "| system | first ÷ warm | first ÷ warm, CPU | cold ÷ warm | warm ÷ peer "
        "| first wall (s) | warm wall (s) | cold wall (s) | cold CPU (s) "
        "| install + wall (s) | install + CPU (s) | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    bsys = before["systems"] if before else {}
    for name, r in after["systems"].items():
        if r is None:
            rows.append(f"| `{name}` | refuses this input (see `podium rate`) "
                        "| | | | | | | | | | |")
            continue
        rows.append(row(f"`{name}`", bsys.get(name), r))
    rows.append(row("README example (`mmr`, 2000 players × 30 rounds)",
                    before.get("readme") if before else None, after["readme"]))
    note = []
    for k, run in enumerate(runs):
        argv = " ".join(map(_tree, run.get("argv") or []))
        first_runs = run.get("first_runs") or 1
        note += [f"{f'Run {k + 1}: f' if len(runs) > 1 else 'F'}igures measured "
                 f"{run.get('measured') or '(date not saved)'} (load "
                 f"{run.get('load_at_start') or 'not saved'} at the start) by "
                 f"`python benchmarks/bench_cold_start.py {argv}`"
                 + (f" (first run: median of {first_runs})" if first_runs > 1 else "")
                 + ("; its rows replace the earlier run's" if k else "")
                 + ", written from its `--json` results by the command above.", ""]
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
        "time (*first ÷ warm, CPU* compares the two runs' CPU times); *load* is the "
        "1-minute load average before each cold run"
        + (" (before / after). " if before else ". ") +
        "The README example is the rating step of `podium example example-data && podium "
        "rate example-data --system mmr --out out`.",
        "",
        *rows,
        "",
        *_eval_lines(after.get("readme"), before.get("readme") if before else None),
        ("Peer: elo-mmr-py's `mmr-fast` on the same three contests takes "
         + (", ".join(f"{run['peer_s']:.2f} s in run {k + 1}" for k, run in enumerate(runs)
                      if run.get("peer_s") is not None) if len(runs) > 1 else f"{peer:.2f} s")
         + " as a "
         "whole process (import, read, rate; compiled ahead of time, so it has no cold start)"
         + ("; each row's *warm ÷ peer* divides by the peer of its own run." if len(runs) > 1
            else ".")
         if peer is not None else "Peer: elo-mmr-py was not available."),
    ])
    print(text)
    write_section(DOC, SECTION, text, load_at_start=load_at_start)


if __name__ == "__main__":
    raise SystemExit(main())
