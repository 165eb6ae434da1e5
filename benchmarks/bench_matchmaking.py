"""Matchmaking: balance's speed and quality, and a queue simulation, in one run.

    python benchmarks/bench_matchmaking.py --doc docs/lobbies.md

Three parts, each written as its own block of ``--doc`` (``benchmarks/_report.py``):

* ``balance-exact``: :func:`podium.matchmaking.balance` of 16 players into two teams
  (the exact search), with and without parties; the best of ``--repeat`` calls
  (target: under 50 ms).
* ``balance-search``: 64 players into 4 teams (the local search) on ``--pools`` seeded
  pools, against the best of 10^5 random splits of the same pool into teams of 16
  (target: within 0.01 match quality).  The random splits are scored with the same
  formula, vectorised here, and the best one is checked with ``predict_teams``.
* ``queue``: a :class:`podium.matchmaking.Matchmaker` fed 10,000 players arriving by a
  Poisson process (``--rate`` per second) with true skills ``N(1500, 350^2)``, known to
  the queue as their ratings (sigma 50); polled every second.  Each match's result is
  drawn from the true model (each player performs ``N(skill, beta^2)``, TrueSkill's
  ``beta``, a team the sum).  Reported: waiting-time percentiles, match quality, and how
  often the favoured side (the higher ``p_first``) actually won, with its 95 %
  interval, next to the true model's probability of that (target for balanced
  two-team matches: 50 +- 2 %).
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
from _report import load_average, write_section
from scipy.special import erf  # type: ignore[import-untyped]


def _pool(n: int, seed: int) -> tuple[list[str], dict[str, tuple[float, float, int]]]:
    rng = np.random.default_rng(seed)
    handles = [f"p{i}" for i in range(n)]
    return handles, {h: (float(rng.normal(1500.0, 350.0)), float(rng.uniform(50, 150)), 20)
                     for h in handles}


def exact_part(repeat: int) -> str:
    from podium.matchmaking import balance

    rows = ["| system | pool | parties | best of calls (ms) | match quality | target |",
            "|---|---|---|---:|---:|---|"]
    for system in ("mmr", "trueskill", "openskill-pl"):
        handles, ratings = _pool(16, 7)
        if system.startswith("openskill"):
            ratings = {h: (25.0 + (m - 1500.0) / 60.0, s / 60.0, c)
                       for h, (m, s, c) in ratings.items()}
        for parties in (None, [handles[:3], handles[5:7], handles[9:11]]):
            balance(system, handles, ratings, 2, parties)
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                got = balance(system, handles, ratings, 2, parties)
                times.append(time.perf_counter() - t)
            med = min(times)
            assert got.exact
            rows.append(f"| {system} | 16 players, 2 teams | "
                        f"{'3, 2, 2' if parties else 'none'} | {1e3 * med:.2f} | "
                        f"{got.match_quality:.6f} | < 50 ms: "
                        f"{'met' if med < 0.05 else 'MISSED'} |")
    return "\n".join(rows)


def _random_best(system: Any, handles: list[str], ratings: dict, n_splits: int,
                 teams: int, seed: int) -> tuple[float, list[list[str]]]:
    """The best of ``n_splits`` random splits into equal teams by the match quality
    ``1 - mean |2 F(z) - 1|`` (vectorised; F the system's)."""
    from podium.predict import performance_model, ratings_of

    mu, sigma, played, _ = ratings_of(system, handles, ratings)
    model = performance_model(system, sigma, played)
    rng = np.random.default_rng(seed)
    n = len(handles)
    size = n // teams
    best_q, best_perm = -1.0, None
    for start in range(0, n_splits, 10_000):
        k = min(10_000, n_splits - start)
        perm = np.argsort(rng.random((k, n)), axis=1)
        team_mu = mu[perm].reshape(k, teams, size).sum(axis=2)
        team_var = model.variance[perm].reshape(k, teams, size).sum(axis=2)
        a, b = np.triu_indices(teams, 1)
        z = np.abs(team_mu[:, a] - team_mu[:, b]) / np.sqrt(team_var[:, a] + team_var[:, b])
        gap = (erf(z / math.sqrt(2.0)) if model.kind == "gaussian"
               else np.tanh(0.5 * math.pi / math.sqrt(3.0) * z))
        q = 1.0 - gap.mean(axis=1)
        i = int(np.argmax(q))
        if q[i] > best_q:
            best_q, best_perm = float(q[i]), perm[i]
    assert best_perm is not None
    split = [[handles[j] for j in best_perm[t * size:(t + 1) * size]] for t in range(teams)]
    return best_q, split


def search_part(pools: int) -> str:
    from podium.matchmaking import balance
    from podium.predict import predict_teams
    from podium.systems import get_system

    rows = ["| system | pool | local search | best of 10^5 random | difference | seconds | "
            "target |", "|---|---:|---:|---:|---:|---:|---|"]
    for name in ("mmr", "trueskill"):
        system = get_system(name)
        for seed in range(pools):
            handles, ratings = _pool(64, 100 + seed)
            t = time.perf_counter()
            got = balance(system, handles, ratings, 4)
            secs = time.perf_counter() - t
            q_random, split = _random_best(system, handles, ratings, 100_000, 4, seed)
            check = predict_teams(system, [(f"t{k}", s) for k, s in enumerate(split)],
                                  ratings).match_quality
            assert abs(check - q_random) < 1e-9, (check, q_random)
            diff = got.match_quality - q_random
            rows.append(f"| {name} | 64 in 4 teams, seed {seed} | {got.match_quality:.6f} | "
                        f"{q_random:.6f} | {diff:+.6f} | {secs:.3f} | >= -0.01: "
                        f"{'met' if diff >= -0.01 else 'MISSED'} |")
            print(rows[-1], flush=True)
    return "\n".join(rows)


def simulate(n_players: int, rate: float, teams: int, team_size: int, seed: int,
             spread: float, widen: float, max_spread: float, replays: int = 100
             ) -> dict[str, Any]:
    """Feed a Matchmaker ``n_players`` Poisson arrivals; draw every match's result
    ``replays`` times from the true model (the first draw is "the" result)."""
    from podium.matchmaking import Matchmaker
    from podium.systems import get_system

    system = get_system("trueskill")
    beta = float(system.beta)
    rng = np.random.default_rng(seed)
    skill = rng.normal(1500.0, 350.0, n_players)
    arrive = np.cumsum(rng.exponential(1.0 / rate, n_players))
    names = [f"p{i}" for i in range(n_players)]
    index = {h: i for i, h in enumerate(names)}
    mm = Matchmaker(system, {h: (float(skill[i]), 50.0, 50) for i, h in enumerate(names)},
                    teams=teams, team_size=team_size, spread=spread, widen=widen,
                    max_spread=max_spread)
    matches = []
    nxt = 0
    now = 0.0
    t0 = time.perf_counter()
    last = arrive[-1] + 3600.0
    while now < last and (nxt < n_players or len(mm) >= mm.match_size):
        now += 1.0
        while nxt < n_players and arrive[nxt] <= now:
            mm.join(names[nxt], float(arrive[nxt]))
            nxt += 1
        matches.extend(mm.poll(now))
    wall = time.perf_counter() - t0
    waits = np.array([w for m in matches for w in m.waited.values()])
    quality = np.array([m.match_quality for m in matches])
    fav_won = []
    fav_true = []
    for m in matches:
        fav = int(np.argmax(m.p_first))
        totals = np.array([sum(skill[index[h]] for h in team) for team in m.teams])
        spread_t = beta * np.sqrt([len(team) for team in m.teams])
        perf = totals[:, None] + spread_t[:, None] * rng.standard_normal((len(totals), replays))
        fav_won.append(np.argmax(perf, axis=0) == fav)
        if teams == 2:
            other = 1 - fav
            z = (totals[fav] - totals[other]) / math.hypot(spread_t[fav], spread_t[other])
            fav_true.append(0.5 * (1.0 + math.erf(z / math.sqrt(2.0))))
    won = np.array(fav_won, dtype=float)  # (matches, replays)
    once = won[:, 0]
    half = 1.96 * math.sqrt(max(once.mean() * (1 - once.mean()), 1e-12) / once.size)
    many = won.mean()
    half_many = 1.96 * math.sqrt(max(many * (1 - many), 1e-12) / won.size)
    return {"shape": f"{team_size}v{team_size}" if teams == 2 else f"{teams}x{team_size}",
            "matches": len(matches), "left": len(mm), "wait": np.percentile(waits, [50, 90, 99]),
            "wait_max": float(waits.max()), "quality_mean": float(quality.mean()),
            "quality_p5": float(np.percentile(quality, 5)), "won": float(once.mean()),
            "half": half, "won_many": float(many), "half_many": half_many,
            "true": float(np.mean(fav_true)) if fav_true else math.nan, "wall": wall}


def queue_part(n_players: int, rate: float) -> str:
    rows = ["| shape | matches (left waiting) | wait p50 / p90 / p99 / max (s) | match quality "
            "mean (p5) | favourite won, one result per match | favourite won, 100 results "
            "per match | true P(favourite) | wall (s) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for teams, size in ((2, 5), (2, 1)):
        r = simulate(n_players, rate, teams, size, seed=27, spread=50.0, widen=5.0,
                     max_spread=1000.0)
        w = r["wait"]
        rows.append(f"| {r['shape']} | {r['matches']} ({r['left']}) | {w[0]:.0f} / {w[1]:.0f} / "
                    f"{w[2]:.0f} / {r['wait_max']:.0f} | {r['quality_mean']:.4f} "
                    f"({r['quality_p5']:.4f}) | {100 * r['won']:.1f} % +- "
                    f"{100 * r['half']:.1f} | {100 * r['won_many']:.1f} % +- "
                    f"{100 * r['half_many']:.1f} | {100 * r['true']:.1f} % | {r['wall']:.1f} |")
        print(rows[-1], flush=True)
    return "\n".join(rows) + (
        f"\n\n{n_players:,} players arriving at {rate:g} per second (Poisson), skills "
        "N(1500, 350^2) known to the queue (sigma 50, trueskill); spread 50 at once, "
        "widening by 5 per second of waiting, at most 1000; polled every second; each "
        "player plays one match.  \"favourite won\": the share of matches the side with "
        "the higher p_first won, with results drawn from the true model: one per match "
        "(the match as played), and 100 per match (the same matches replayed, a tighter "
        "estimate), each with its 95 % interval; \"true P(favourite)\": the true "
        "model's mean probability of that.  The "
        "target of 50 +- 2 % is for balanced two-team matches (5v5): a 1v1 match cannot "
        "be balanced inside, only by the pairing.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=21, help="calls per exact timing")
    ap.add_argument("--pools", type=int, default=3, help="seeded pools of 64 per system")
    ap.add_argument("--players", type=int, default=10_000, help="players of the queue run")
    ap.add_argument("--rate", type=float, default=2.0, help="arrivals per second")
    ap.add_argument("--doc", default=None, help="Markdown file to write the tables into")
    args = ap.parse_args()
    load0 = load_average()
    exact = exact_part(args.repeat)
    print(exact, flush=True)
    search = search_part(args.pools)
    queue = queue_part(args.players, args.rate)
    if args.doc:
        write_section(args.doc, "balance-exact", exact, load_at_start=load0)
        write_section(args.doc, "balance-search", search, load_at_start=load0)
        print(f"wrote {write_section(args.doc, 'queue', queue, load_at_start=load0)}")


if __name__ == "__main__":
    main()
