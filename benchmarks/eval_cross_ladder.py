"""Does a cross-ladder newcomer prior help?  Codeforces split into two ladders by division.

    python benchmarks/eval_cross_ladder.py [--widen 0 0.25 0.5 0.75] [--system mmr] [--write-docs]

The Codeforces history (``cache_codeforces.tar.gz``, ``--dedupe --sort-by-time``) is cut
in two ladders: **B** = the Division 1 rounds (a name with "Div. 1" and not "Div. 2"),
**A** = every other round (Div. 2, 3, 4, Educational, Global, combined Div. 1 + 2).  Both
are rated in time order, each with its own Rater, as two ladders of a store would be.
A player's first B round is a *debut*; the question is whether starting a debutant who
is rated in A from that rating (:func:`podium.beliefs.widened_prior`: ``mu`` kept, the
variance widened toward the newcomer prior by the share ``widen``; what a ladder with
``prior_from`` does) predicts better than the system's newcomer prior.

Measured per B round, on the display ratings just before it (the prior's for a
debutant), in standings order:

* **debut pairs**: the pairs of participants at least one of whom debuts, placed apart:
  the percentage the ratings order right (the pair inversion of [EbtekarLiu2021]'s
  Table 2 restricted to those pairs; two equal ratings -- two debutants under the
  newcomer prior -- count half, a coin toss);
* **early rounds**: the same over the pairs with a player in its 2nd to 5th B round (does
  the head start last?);
* **returning**: Table 2's pair inversion over the returning players (every B round,
  :func:`podium.evaluation.metrics.pair_inversion`), the ladder as a whole.

``widen`` 1 keeps A's ``mu`` with the newcomer's ``sigma``; the baseline is the newcomer
prior itself.  A higher percentage is better.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from typing import Any

import numpy as np
from _report import data_dir, load_average, write_section

DOC = "docs/service.md"
SECTION = "cross-ladder-prior"


def is_div1(name: str) -> bool:
    return "Div. 1" in name and "Div. 2" not in name


def _pairs(shown: np.ndarray, lo: np.ndarray, mask: np.ndarray) -> tuple[float, int]:
    """Pairs placed apart with at least one member in ``mask``: (ordered right, all); a
    pair of equal ratings counts half (a coin toss)."""
    n = shown.size
    if n < 2 or not mask.any():
        return 0.0, 0
    i, j = np.triu_indices(n, 1)  # i before j in standings order
    keep = (mask[i] | mask[j]) & (lo[i] < lo[j])
    a, b = shown[i][keep], shown[j][keep]
    return float((a > b).sum() + 0.5 * (a == b).sum()), int(keep.sum())


def run(contests: list[Any], system: str, widen: float | None) -> dict[str, float]:
    """Rate A and B in time order; ``widen`` ``None``: no cross-ladder prior."""
    from podium import Rater
    from podium.beliefs import seed_players, widened_prior
    from podium.evaluation.metrics import pair_inversion, renumber_ties

    ra, rb = Rater(system), Rater(system)
    right = {"debut": 0.0, "early": 0.0}
    total = {"debut": 0, "early": 0}
    returning: list[tuple[float, int]] = []
    debutants = seeded = 0
    for c in contests:
        if not is_div1(c.name):
            ra.add(c)
            continue
        if c.is_outcome_free:
            rb.add(c)
            continue
        tb = rb.players
        idx = np.array([tb.index.get(h, -1) for h in c.handles])
        new = idx < 0
        if widen is not None and new.any():
            fresh = [h for h, nw in zip(c.handles, new.tolist(), strict=True)
                     if nw and h in ra.players.index]
            if fresh:
                ia = [ra.players.index[h] for h in fresh]
                mu, sg = widened_prior(rb.system, ra.players.mu[ia], ra.players.sigma[ia],
                                       widen)
                seed_players(rb, fresh, mu, sg, c.time_seconds)
                seeded += len(fresh)
                idx = np.array([tb.index.get(h, -1) for h in c.handles])
        mu0, sg0 = rb.system.newcomer(c)
        known = idx >= 0
        mu = np.full(idx.size, mu0)
        sigma = np.full(idx.size, sg0)
        mu[known], sigma[known] = tb.mu[idx[known]], tb.sigma[idx[known]]
        played = np.zeros(idx.size, dtype=np.int64)
        played[known] = tb.contests[idx[known]]
        shown = np.asarray(rb.system.display_rating(mu, sigma))
        lo = np.asarray(c.lo)
        debut = played == 0
        debutants += int(debut.sum())
        for key, mask in (("debut", debut), ("early", (played >= 1) & (played <= 4))):
            a, b = _pairs(shown, lo, mask)
            right[key] += a
            total[key] += b
        back = ~debut
        if back.sum() >= 2:
            blo, bhi = renumber_ties(lo[back], np.asarray(c.hi)[back])
            value = pair_inversion(shown[back], blo, bhi)
            if value == value:
                returning.append((value, int(back.sum())))
        rb.add(c)
    w = np.array([n for _, n in returning], dtype=np.float64)
    v = np.array([x for x, _ in returning])
    return {"debut": 100 * right["debut"] / max(total["debut"], 1),
            "early": 100 * right["early"] / max(total["early"], 1),
            "returning": float((v * w).sum() / w.sum()), "debutants": debutants,
            "seeded": seeded, "debut_pairs": total["debut"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--system", default="mmr")
    ap.add_argument("--widen", type=float, nargs="+", default=[0.0, 0.25, 0.5, 0.75, 1.0])
    ap.add_argument("--data", default=None, help="the Codeforces archive")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    load0 = load_average()
    from podium.io import load_contests

    path = args.data or str(data_dir() / "codeforces" / "cache_codeforces.tar.gz")
    t0 = time.perf_counter()
    contests = load_contests(path, dedupe_urls=True, sort_by_time=True).contests
    b = sum(is_div1(c.name) for c in contests)
    print(f"{len(contests)} contests, {b} in ladder B (Div. 1), loaded in "
          f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    rows = [("newcomer prior (no cross-ladder prior)", run(contests, args.system, None))]
    for w in args.widen:
        rows.append((f"from ladder A, widen {w:g}", run(contests, args.system, w)))
        print(rows[-1], file=sys.stderr)
    base = rows[0][1]
    lines = [f"`{args.system}`; ladder B: the {b} Division 1 rounds of the Codeforces "
             f"history, ladder A: the other {len(contests) - b}; {base['debutants']:,} debuts "
             f"in B, {rows[-1][1]['seeded']:,} of them rated in A before.", "",
             "| B's newcomers start from | debut pairs ordered right (%) | 2nd-5th round "
             "pairs (%) | returning players, Table 2 pair inversion (%) |",
             "|---|---|---|---|"]
    for what, r in rows:
        def cell(key: str, r: dict[str, float] = r) -> str:
            d = r[key] - base[key]
            return f"{r[key]:.2f}" + ("" if r is base else f" ({d:+.2f})")
        lines.append(f"| {what} | {cell('debut')} | {cell('early')} | {cell('returning')} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if args.write_docs:
        write_section(DOC, SECTION, table, load_at_start=load0, command=" ".join(
            ["python", "benchmarks/eval_cross_ladder.py", *map(shlex.quote, argv or
                                                                 sys.argv[1:])]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
