"""openskill's models on team matches: openskill's ``rate`` against Podium's Rater.

    python benchmarks/bench_openskill.py --doc docs/benchmarks.md

Generates a seeded history of eight-player team matches (2 teams of 4, or 4 teams
of 2) among a pool of players -- the players of each match drawn at random, teams
ranked by their members' latent skill plus noise, rounded so that a few teams
tie -- and times, in the same run:

* openskill's model (compiled with mypyc in its wheel), one ``model.rate`` call per
  match, ratings kept in a dict by handle;
* Podium's ``openskill-*`` system: one ``Rater.extend`` of all matches, and one
  ``Rater.add`` per match (a fresh Rater each time).

Times are warm (each path first rates a short history in the same process, so
the compiled kernels are loaded and compilation is excluded); each is the best
of ``--repeat`` runs, the libraries interleaved so that they see the same load.
The table also gives the largest difference between Podium's and openskill's
final ratings (mu and sigma, relative above 1).

``--doc`` writes the table into that Markdown file, block ``openskill``
(``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _reference import podium_rater
from _report import load_average, write_section

SECTION = "openskill"

#: Podium system -> openskill model class name.
MODELS = {"openskill-pl": "PlackettLuce", "openskill-tm": "ThurstoneMostellerFull"}


def team_matches(n_matches: int, n_players: int, *, teams: int, size: int,
                 seed: int = 0) -> list[Any]:
    """``n_matches`` matches of ``teams`` teams of ``size`` players from ``n_players``.

    Team score: the sum of its members' latent skills plus noise, rounded to 0.5
    (so a few teams tie, never all of them); matches are one minute apart.
    """
    from podium import Contest

    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.0, n_players)
    start = 1_700_000_000
    out = []
    for m in range(n_matches):
        who = rng.choice(n_players, teams * size, replace=False).reshape(teams, size)
        score = np.round(skill[who].sum(axis=1) + rng.normal(0.0, 1.5, teams) * 2) / 2
        order = np.argsort(-score, kind="stable")
        s = score[order]
        if s[0] == s[-1]:  # all tied: the Rater skips such a match (it says nothing)
            s[-1] -= 0.5
        lo = np.searchsorted(-s, -s, side="left")
        hi = np.searchsorted(-s, -s, side="right") - 1
        rows = [(f"t{t}", int(lo[k]), int(hi[k]), [f"player{i}" for i in who[t]])
                for k, t in enumerate(order.tolist())]
        out.append(Contest.from_teams(rows, name=f"match {m}", time_seconds=start + 60 * m))
    return out


def openskill_rate(model_name: str, history: list[Any]) -> dict[str, Any]:
    """openskill's model over ``history``: one ``rate`` call per match, ranks = team
    places."""
    import openskill.models as osm

    model = getattr(osm, model_name)()
    ratings: dict[str, Any] = {}
    for c in history:
        off = c.teams.offsets.tolist()
        teams = [[ratings.get(h) or model.rating() for h in c.handles[a:b]]
                 for a, b in zip(off[:-1], off[1:], strict=True)]
        new = model.rate(teams, ranks=[int(c.lo[a]) for a in off[:-1]])
        for a, team in zip(off[:-1], new, strict=True):
            for k, r in enumerate(team):
                ratings[c.handles[a + k]] = r
    return ratings


def _difference(rater: Any, ratings: dict[str, Any]) -> float:
    handles = list(ratings)
    got = np.array([rater.rating(h) for h in handles])
    want = np.array([(ratings[h].mu, ratings[h].sigma) for h in handles])
    return float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))


def run(n_matches: int, n_players: int, shapes: list[tuple[int, int]], repeat: int
        ) -> dict[str, Any]:
    for system, model_name in MODELS.items():  # warm-up: load the compiled kernels
        warm = team_matches(50, 400, teams=2, size=4, seed=2)
        podium_rater(system, warm, "extend")
        podium_rater(system, warm, "add")
        openskill_rate(model_name, warm[:5])
    results: list[dict[str, Any]] = []
    for teams, size in shapes:
        history = team_matches(n_matches, n_players, teams=teams, size=size)
        for system, model_name in MODELS.items():
            best: dict[str, float] = {}
            diff = 0.0
            for _ in range(repeat):
                t = time.perf_counter()
                ref = openskill_rate(model_name, history)
                best["openskill"] = min(best.get("openskill", np.inf), time.perf_counter() - t)
                for mode in ("extend", "add"):
                    t = time.perf_counter()
                    rater = podium_rater(system, history, mode)
                    best[mode] = min(best.get(mode, np.inf), time.perf_counter() - t)
                    diff = max(diff, _difference(rater, ref))
            print(f"{teams}x{size} {system}: done, load {load_average()}", file=sys.stderr)
            for path, sec in best.items():
                results.append({
                    "teams": teams, "size": size, "system": system, "model": model_name,
                    "path": path, "seconds": sec, "matches_per_s": n_matches / sec,
                    "vs_openskill": best["openskill"] / sec, "max_difference": diff,
                })
    return {"results": results, "matches": n_matches, "players": n_players,
            "repeat": repeat}


def _table(out: dict[str, Any]) -> str:
    """One row per shape, model and path: the time over openskill's of the same run first
    (below 1: faster than openskill), then the absolute seconds and rate."""
    rows = ["| matches | model | path | time ÷ openskill, same run | seconds | matches/s "
            "| largest difference |",
            "|---|---|---|---:|---:|---:|---:|"]
    for r in out["results"]:
        shape = f"{r['teams']} teams of {r['size']}"
        if r["path"] == "openskill":
            who, diff = f"openskill `{r['model']}.rate` per match", ""
        else:
            path = "`Rater.extend`" if r["path"] == "extend" else "`Rater.add` per match"
            who, diff = f"Podium `{r['system']}`, {path}", f"{r['max_difference']:.1e}"
        rows.append(f"| {shape} | {r['model']} | {who} | {1 / r['vs_openskill']:.2f}× | "
                    f"{r['seconds']:.3f} | {r['matches_per_s']:,.0f} | {diff} |")
    return "\n".join(rows)


def _section(out: dict[str, Any]) -> str:
    return f"""{out['matches']:,} eight-player team matches among {out['players']:,} players
(seeded; teams ranked by their members' latent skill plus noise, a few ties), rated
match by match. Warm times, **compilation excluded**; each figure is the best of
{out['repeat']} runs, interleaved with openskill's (one `model.rate` per match; the
6.2.0 wheel's models are compiled with mypyc). Team matches go through
`round_update` one round at a time (one compiled call per round), for `extend` as
for `add`. "Largest difference": between Podium's
and openskill's final ratings, mu and sigma of every player (relative above 1).
The ratio to openskill's time in the same run comes first (below 1: Podium is faster);
the seconds and matches per second depend on the machine (named above).

{_table(out)}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matches", type=int, default=3000)
    ap.add_argument("--players", type=int, default=5000)
    ap.add_argument("--shapes", default="2x4,4x2", help="TEAMSxSIZE, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--doc", type=Path,
                    help=f"write the table into this Markdown file (block {SECTION!r})")
    ap.add_argument("--json", type=Path, help="write the raw results here")
    args = ap.parse_args(argv)
    load0 = load_average()
    shapes = [(int(a), int(b)) for a, b in (s.split("x") for s in args.shapes.split(","))]
    out = run(args.matches, args.players, shapes, args.repeat)
    text = _section(out)
    print(text)
    if args.doc:
        command = None if argv is None else " ".join(
            ["python", "benchmarks/bench_openskill.py", *map(shlex.quote, argv)])
        write_section(args.doc, SECTION, text, load_at_start=load0, command=command)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
