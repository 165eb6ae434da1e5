"""Many small rounds: game lobbies rated one match at a time, against openskill.

    python benchmarks/bench_lobbies.py --doc docs/benchmarks.md

Generates seeded lobby histories -- eight-player matches, the players of each match
drawn at random from a pool, ranked by a latent skill plus noise (a few ties) --
and times, in the same run:

* Podium ``Rater.extend(history)`` and a ``Rater.add`` loop, for every system of
  ``--systems`` (a fresh Rater each time);
* openskill's ``PlackettLuce`` (pure Python), one ``model.rate`` call per match,
  ratings kept in a dict by handle.

Times are warm: each system first rates a short history in the same process, so
the compiled kernels are loaded and compilation is excluded.  Each timing is the
best of ``--repeat`` runs, the runs of all libraries interleaved so that they see
the same machine load.  The compile time of the batched kernels is measured once,
in child processes: with an empty Numba cache (compilation) and with the cache
filled (loading it).  The script also checks that ``extend`` and the ``add``
loop give bit-identical ratings.

``--doc`` writes the table into that Markdown file, block ``lobbies`` (with the
date, commit, machine and command: ``benchmarks/_report.py``).
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

import numpy as np
from _reference import podium_rater
from _report import ROOT, load_average, write_section

SECTION = "lobbies"


def lobbies(n_matches: int, n_players: int, *, size: int = 8, seed: int = 0) -> list[Any]:
    """``n_matches`` matches of ``size`` players drawn from ``n_players``.

    Player ``i`` has a latent skill; a match ranks its players by skill plus
    unit noise, rounded to 0.1 (so a few places are shared).  Matches are one
    minute apart.
    """
    from podium import Contest

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, n_players)
    names = [f"player{i}" for i in range(n_players)]
    start = 1_700_000_000
    out = []
    for m in range(n_matches):
        who = rng.choice(n_players, size, replace=False)
        score = np.round(skill[who] + rng.normal(0.0, 1.0, size), 1)
        out.append(Contest.from_scores([names[i] for i in who], score, name=f"match {m}",
                                       time_seconds=start + 60 * m))
    return out


def openskill_rate(history: list[Any]) -> dict[str, Any]:
    """openskill PlackettLuce over ``history``, one ``rate`` call per match."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    for c in history:
        teams = []
        for h in c.handles:
            r = ratings.get(h)
            if r is None:
                r = ratings[h] = model.rating(name=h)
            teams.append([r])
        new = model.rate(teams, ranks=c.lo.tolist())
        for h, (r,) in zip(c.handles, new, strict=True):
            ratings[h] = r
    return ratings


def _identical(a: Any, b: Any) -> bool:
    fa, fb = a.ratings(sort=False), b.ratings(sort=False)
    for col in fa.columns:
        x, y = fa[col].to_numpy(), fb[col].to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x.view(np.uint64), y.view(np.uint64)):
                return False
        elif not np.array_equal(x, y):
            return False
    ea, eb = a.events.arrays(), b.events.arrays()
    return all(np.array_equal(ea[k].view(np.uint8), eb[k].view(np.uint8)) for k in ea)


_COMPILE_CHILD = r"""
import sys, time
sys.path.insert(0, {bench!r})
from bench_lobbies import lobbies
from podium import Rater
out = []
for system in {systems!r}:
    h = lobbies(60, 200, seed=1)
    r = Rater(system)
    r.extend(h[:20])            # below the batch threshold (32): round_update's kernels
    t = time.perf_counter(); r.extend(h[20:40]); first = time.perf_counter() - t
    t = time.perf_counter(); r.extend(h[40:60]); warm = time.perf_counter() - t
    out.append(first - warm)
print(" ".join(f"{{x:.3f}}" for x in out))
"""


def compile_seconds(systems: list[str]) -> tuple[list[float], list[float]]:
    """Seconds the first batch of each system costs over a warm one: with an
    empty Numba cache (compiling) and then with the cache it left (loading)."""
    code = _COMPILE_CHILD.format(bench=str(ROOT / "benchmarks"), systems=systems)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True)
            runs.append([float(x) for x in p.stdout.split()])
    return runs[0], runs[1]


def run(sizes: list[tuple[int, int]], systems: list[str], repeat: int) -> dict[str, Any]:
    # warm-up: load every compiled kernel (compilation is excluded from the timings)
    warm = lobbies(200, 400, seed=2)
    for system in systems:
        podium_rater(system, warm, "extend")
        podium_rater(system, warm, "add")
    openskill_rate(warm[:20])
    results: list[dict[str, Any]] = []
    for n_matches, n_players in sizes:
        history = lobbies(n_matches, n_players)
        best: dict[tuple[str, str], float] = {}
        identical: dict[str, bool] = {}
        for _ in range(repeat):
            t = time.perf_counter()
            openskill_rate(history)
            dt = time.perf_counter() - t
            best[("openskill", "PlackettLuce")] = min(best.get(("openskill", "PlackettLuce"),
                                                          dt), dt)
            for system in systems:
                raters = {}
                for mode in ("extend", "add"):
                    t = time.perf_counter()
                    raters[mode] = podium_rater(system, history, mode)
                    dt = time.perf_counter() - t
                    best[(system, mode)] = min(best.get((system, mode), dt), dt)
                identical[system] = identical.get(system, True) and _identical(
                    raters["extend"], raters["add"])
                del raters
            print(f"{n_matches} matches: run done, load {load_average()}", file=sys.stderr)
        ref = n_matches / best[("openskill", "PlackettLuce")]
        for (who, mode), sec in best.items():
            rate = n_matches / sec
            results.append({
                "matches": n_matches, "players": n_players, "library": who,
                "path": mode, "seconds": sec, "matches_per_s": rate,
                "vs_openskill": rate / ref,
                "extend_equals_add": identical.get(who),
            })
    return {"results": results}


def _table(out: dict[str, Any]) -> str:
    """One row per history, library and path: the time over openskill's of the same run
    first (below 1: faster than openskill), then the absolute seconds and rate."""
    rows = ["| history | system | path | time ÷ openskill, same run | seconds | matches/s |",
            "|---|---|---|---:|---:|---:|"]
    for r in out["results"]:
        hist = f"{r['matches']:,} matches, {r['players']:,} players"
        if r["library"] == "openskill":
            name, path = "openskill `PlackettLuce`", "`model.rate` per match"
        else:
            name = f"Podium `{r['library']}`"
            path = "`Rater.extend`" if r["path"] == "extend" else "`Rater.add` loop"
        rows.append(f"| {hist} | {name} | {path} | {1 / r['vs_openskill']:.2f}× | "
                    f"{r['seconds']:.3f} | {r['matches_per_s']:,.0f} |")
    return "\n".join(rows)


def _section(out: dict[str, Any]) -> str:
    comp = out["compile"]
    systems = out["systems"]
    comp_lines = "; ".join(
        f"`{s}` {c:.1f} s to compile, {w:.2f} s to load from the cache"
        for s, c, w in zip(systems, comp["compile_s"], comp["load_s"], strict=True)
        if c == c) or "not measured in this run (`--no-compile`)"
    same = all(r["extend_equals_add"] for r in out["results"] if r["library"] != "openskill")
    return f"""Eight-player matches, players drawn at random from the pool (seeded), each rated
as it comes. Warm times: every system first rated a short history in the same
process, so **compilation is excluded**; each figure is the best of
{out['repeat']} runs, interleaved with openskill's. openskill's `PlackettLuce` is
pure Python; Podium's `mmr` is exact (every opponent, the whole history).
`Rater.extend` hands the system batches of rounds, which Elo-MMR and TrueSkill rate
in one compiled loop; in the `add` loop each round is one compiled call of the same
per-round code (its newcomers and events included).
`extend` and the `add` loop gave bit-identical ratings and events: **{'yes' if same else 'NO'}**.
The ratio to openskill's time in the same run comes first (below 1: Podium is faster);
the seconds and matches per second depend on the machine (named above).

{_table(out)}

Compile time of the batched kernels, once per machine (measured in child processes,
the systems in the order above, first batch minus a warm one; the Elo-MMR variants
share one kernel, compiled by the first of them): {comp_lines}.
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="3000:5000,100000:20000",
                    help="comma-separated MATCHES:PLAYERS histories")
    ap.add_argument("--systems", default="mmr,mmr-fast,trueskill,mmx,mmr-inf")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time runs")
    ap.add_argument("--doc", type=Path,
                    help=f"write the table into this Markdown file (block {SECTION!r})")
    ap.add_argument("--json", type=Path, help="write the raw results here")
    args = ap.parse_args(argv)
    load0 = load_average()
    sizes = [(int(a), int(b)) for a, b in (s.split(":") for s in args.sizes.split(","))]
    systems = [s for s in args.systems.split(",") if s]
    out = run(sizes, systems, args.repeat)
    if args.no_compile:
        nan = float("nan")
        comp: dict[str, list[float]] = {"compile_s": [nan] * len(systems),
                                        "load_s": [nan] * len(systems)}
    else:
        c, w = compile_seconds(systems)
        comp = {"compile_s": c, "load_s": w}
    out.update(compile=comp, systems=systems, repeat=args.repeat)
    text = _section(out)
    print(text)
    if args.doc:
        command = None if argv is None else " ".join(
            ["python", "benchmarks/bench_lobbies.py", *map(shlex.quote, argv)])
        write_section(args.doc, SECTION, text, load_at_start=load0, command=command)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
