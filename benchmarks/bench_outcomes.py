"""Outcome probabilities of a proposed lobby: Podium against openskill, in one run.

    python benchmarks/bench_outcomes.py --doc docs/lobbies.md

For each lobby shape (seeded ratings) and system, the time of one call of

* Podium ``predict`` (players) or ``predict_teams`` (teams): the whole call, from
  handles and a ratings dict to ``win_probability``, ``expected_place``,
  ``match_quality``, ``p_first``, ``p_draw`` and the T x T ``place_probability``;
* openskill 6.2.0 ``PlackettLuce``: ``predict_win`` + ``predict_draw`` + ``predict_rank``
  on the same lobby (its ratings objects built beforehand; it has no distribution
  of places).

Times are warm (every kernel compiled first), per call, the best of ``--repeat``
batches of calls (as the other benchmarks: the least disturbed by the shared machine's
other work), Podium and openskill interleaved batch by batch so that they see the same
machine load.  The ratio comes first (Podium over openskill: below 1, Podium is
faster), then the seconds.  The targets of issue 27: an 8-team lobby in under 1 ms,
100 players in under 50 ms.  ``--doc`` writes the table into that Markdown file,
block ``outcomes`` (``benchmarks/_report.py``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from _report import load_average, write_section

SECTION = "outcomes"

#: (label, teams, players per team)
SHAPES: tuple[tuple[str, int, int], ...] = (
    ("8 players", 8, 1),
    ("8 teams of 4", 8, 4),
    ("2 teams of 5", 2, 5),
    ("100 players", 100, 1),
    ("10 teams of 10", 10, 10),
)


def lobby(system: Any, n_teams: int, size: int, seed: int
          ) -> tuple[list[tuple[str, list[str]]], dict[str, tuple[float, float, int]]]:
    """Teams of handles and their ratings: mu from the prior spread by 60 % of a
    newcomer's performance deviation, sigma 30-100 % of the prior's."""
    from podium.predict import performance_model

    mu0, sig0 = system.newcomer()
    sd = float(np.sqrt(performance_model(system, np.array([sig0])).variance[0]))
    rng = np.random.default_rng(seed)
    teams = [(f"t{t}", [f"t{t}p{k}" for k in range(size)]) for t in range(n_teams)]
    ratings = {h: (float(mu0 + 0.6 * sd * rng.standard_normal()),
                   float(sig0 * rng.uniform(0.3, 1.0)), 10)
               for _, members in teams for h in members}
    return teams, ratings


def _timed(fn: Callable[[], Any], number: int) -> float:
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number


def measure(system_name: str, label: str, n_teams: int, size: int, repeat: int,
            with_openskill: bool) -> dict[str, Any]:
    from podium.predict import predict, predict_teams
    from podium.systems import get_system

    system = get_system(system_name)
    teams, ratings = lobby(system, n_teams, size, seed=n_teams * 100 + size)
    if size == 1:
        handles = [m[0] for _, m in teams]

        def podium_call() -> Any:
            return predict(system, handles, ratings)
    else:
        def podium_call() -> Any:
            return predict_teams(system, teams, ratings)

    os_call: Callable[[], Any] | None = None
    if with_openskill:
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        os_teams = [[model.rating(mu=ratings[h][0], sigma=ratings[h][1]) for h in members]
                    for _, members in teams]

        def os_call() -> Any:
            return (model.predict_win(os_teams), model.predict_draw(os_teams),
                    model.predict_rank(os_teams))

    podium_call()
    first = podium_call()
    number = max(1, int(0.02 / max(_timed(podium_call, 3), 1e-6)))
    pod, ref = [], []
    for _ in range(repeat):
        pod.append(_timed(podium_call, number))
        if os_call is not None:
            ref.append(_timed(os_call, number))
    out = {"system": system_name, "lobby": label, "podium_s": min(pod),
           "openskill_s": min(ref) if ref else None,
           "p_first_sum": float(first.p_first.sum())}
    if with_openskill:
        out["max_diff"] = float(np.max(np.abs(np.asarray(os_call()[0]) - first.p_first)))
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| lobby | system | Podium / openskill | Podium (ms) | openskill (ms) | "
             "target |",
             "|---|---|---:|---:|---:|---|"]
    targets = {"8 players": 1e-3, "8 teams of 4": 1e-3, "100 players": 50e-3}
    for r in rows:
        ref = r["openskill_s"]
        ratio = f"{r['podium_s'] / ref:.2f}" if ref else "–"
        target = targets.get(r["lobby"])
        verdict = "–" if target is None else (
            f"< {target * 1e3:g} ms: {'met' if r['podium_s'] < target else 'MISSED'}")
        lines.append(f"| {r['lobby']} | {r['system']} | {ratio} | {1e3 * r['podium_s']:.3f} | "
                     f"{'–' if not ref else f'{1e3 * ref:.3f}'} | {verdict} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default="openskill-pl,trueskill,mmr",
                    help="comma-separated systems (openskill is timed with openskill-pl)")
    ap.add_argument("--repeat", type=int, default=15, help="batches per timing (best of)")
    ap.add_argument("--doc", default=None, help="Markdown file to write the table into")
    args = ap.parse_args()
    load0 = load_average()
    rows = []
    for name in args.systems.split(","):
        for label, n_teams, size in SHAPES:
            rows.append(measure(name, label, n_teams, size, args.repeat,
                                with_openskill=name == "openskill-pl"))
            print(rows[-1], flush=True)
    body = table(rows)
    diffs = [r["max_diff"] for r in rows if "max_diff" in r]
    if diffs:
        body += (f"\n\nopenskill-pl's `p_first` against openskill's `predict_win` on these "
                 f"lobbies: largest difference {max(diffs):.1e}.  openskill's times are "
                 "its three `predict_*` calls, which give no place distribution; "
                 "Podium's include the T x T `place_probability`.")
    print(body)
    if args.doc:
        print(f"wrote {write_section(args.doc, SECTION, body, load_at_start=load0)}")


if __name__ == "__main__":
    main()
