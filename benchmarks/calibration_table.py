"""Calibration of each system's outcome probabilities on real and synthetic histories.

    python benchmarks/calibration_table.py --doc docs/lobbies.md

For each data set and system, :func:`podium.evaluation.evaluate` (the protocol of
``podium eval``: the first 10 % rated but not scored, players with 5 earlier contests)
and its calibration scores (:mod:`podium.evaluation.calibration`): log-loss, Brier and
expected calibration error of P(first), of the pairwise outcomes, and of win / draw /
loss where the system has a draw model.  Data sets:

* ``football``: the international results of ``../shared/datasets/football/results.csv``
  (49,520 matches since 1872, 23 % drawn), each match a contest of two players (the
  national teams), placed by the score (a draw: both first).  The contests are built
  here as :class:`~podium.core.contest.Contest` objects with their true dates (times
  before 1970 are negative seconds).  Home advantage is not modelled.  Draws are rated
  (every system's default, ``all_tied="rate"``) and scored: P(first) counts a draw as
  half a win, the three outcomes as a draw.
* ``lobbies``: 10,000 synthetic 5 v 5 lobby matches of 2,000 players
  (:func:`podium.io.synthetic_teams.lobby_contests`, seed 0).
* ``reddit``: the paper's Reddit threads (``../shared/datasets/reddit``), individual
  contests of about 13 players: P(first) among the experienced players of a thread.

``--doc`` writes the table into that Markdown file, block ``calibration``.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import sys
import time
from pathlib import Path
from typing import Any

from _report import data_dir, load_average, write_section

SECTION = "calibration"

#: (label, system, parameters)
RUNS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("mmr", "mmr", {}),
    ("mmx", "mmx", {}),
    ("glicko", "glicko", {}),
    ("elo-single", "elo-single", {}),
    ("openskill-pl", "openskill-pl", {}),
    ("trueskill", "trueskill", {}),
    ("trueskill, eps 80", "trueskill", {"eps": 80.0}),
)

COLUMNS = (("LL first", "first_log_loss"), ("Brier first", "first_brier"),
           ("ECE first", "first_ece"), ("LL pairs", "pair_log_loss"),
           ("Brier pairs", "pair_brier"), ("ECE pairs", "pair_ece"),
           ("LL W/D/L", "three_log_loss"), ("Brier W/D/L", "three_brier"))


#: Outcome of each football contest for the home side: win, draw, loss (see football()).
HOME_OUTCOME: list[int] = []


def football(root: Path) -> list[Any] | None:
    """The football results as contests of two players, in date order (and each
    match's result for the home side, 0 win / 1 draw / 2 loss, in
    :data:`HOME_OUTCOME`)."""
    from podium import Contest

    path = root / "football" / "results.csv"
    if not path.exists():
        print(f"skip football: {path} not found", file=sys.stderr)
        return None
    epoch = dt.date(1970, 1, 1)
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        for k, row in enumerate(csv.DictReader(fh)):
            try:
                home, away = int(row["home_score"]), int(row["away_score"])
            except ValueError:  # a match without a score (not played yet)
                continue
            day = dt.date.fromisoformat(row["date"])
            places = [1, 1] if home == away else ([1, 2] if home > away else [2, 1])
            HOME_OUTCOME.append(1 if home == away else (0 if home > away else 2))
            out.append(Contest.from_places(
                [row["home_team"], row["away_team"]], places,
                name=f"{row['date']} {row['home_team']} - {row['away_team']} #{k}",
                time_seconds=(day - epoch).days * 86_400))
    return out


def dataset(name: str, root: Path) -> list[Any] | None:
    if name == "football":
        return football(root)
    if name == "lobbies":
        from podium.io.synthetic_teams import lobby_contests

        return list(lobby_contests(2_000, 10_000, seed=0).contests)
    if name == "reddit":
        from podium.io import load_contests

        path = root / "reddit" / "cache_reddit.tar.gz"
        if not path.exists():
            print(f"skip reddit: {path} not found", file=sys.stderr)
            return None
        return list(load_contests(path).contests)
    raise SystemExit(f"unknown data set {name!r}")


def _base_rates(indices: list[int]) -> str:
    """A table row: the constant forecast of the home side's win / draw / loss
    frequencies over the contests scored (fitted on them: an in-sample reference)."""
    import numpy as np

    y = np.array([HOME_OUTCOME[i] for i in indices])
    freq = np.bincount(y, minlength=3) / y.size
    ll = float(-np.mean(np.log(freq[y])))
    brier = float(np.mean(((freq[None, :] - np.eye(3)[y]) ** 2).sum(axis=1)))
    cells = ["–"] * 6 + [f"{ll:.4f}", f"{brier:.4f}"]
    return (f"| base rates (home {100 * freq[0]:.1f} %, draw {100 * freq[1]:.1f} %, away "
            f"{100 * freq[2]:.1f} %; in-sample) | " + " | ".join(cells)
            + f" | – | {y.size:,} | – |")


def _fmt(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def run(datasets: list[str], root: Path) -> str:
    from podium.evaluation import evaluate

    parts = []
    for ds in datasets:
        contests = dataset(ds, root)
        if contests is None:
            continue
        draws = sum(1 for c in contests if c.is_outcome_free)
        lines = [f"**{ds}**: {len(contests):,} contests ({draws:,} all tied).", "",
                 "| system | " + " | ".join(c[0] for c in COLUMNS)
                 + " | pair inv. (%) | contests scored | seconds |",
                 "|---|" + "---:|" * (len(COLUMNS) + 3)]
        for label, system, params in RUNS:
            t = time.perf_counter()
            res = evaluate(contests, system, params=params)
            m = res.metrics
            lines.append(f"| {label} | " + " | ".join(_fmt(m.get(key)) for _, key in COLUMNS)
                         + f" | {m['pair_inv']:.2f} | {m['calibrated_contests']:,} | "
                         f"{time.perf_counter() - t:.0f} |")
            print(lines[-1], flush=True)
            if ds == "football" and label == RUNS[0][0] and res.calibration is not None:
                base = _base_rates([r["index"] for r in res.calibration.records])
        if ds == "football":
            lines.append(base)
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + (
        "\n\nLL: log-loss (natural logarithm), Brier: Brier's multi-class score, ECE: "
        "expected calibration error over 10 bins (docs/evaluation.md).  \"pairs\": "
        "P(a ahead of b) from the system's pairwise formula; \"W/D/L\": the three "
        "outcomes of a two-side match, for the systems with a draw model.  "
        "\"trueskill, eps 80\": TrueSkill with a draw margin 2 eps = 160, near "
        "the one that gives two equal football teams the data's 23 % of draws "
        "(the default eps 1 gives them 0.3 %); eps also changes the ratings.  \"base "
        "rates\": the same probabilities of a home win, draw and away win for every "
        "football match, the frequencies over the contests scored.  Seconds: the whole "
        "evaluation (rating and every metric).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="football,lobbies,reddit")
    ap.add_argument("--data", default=str(data_dir()), help="the shared data sets")
    ap.add_argument("--doc", default=None, help="Markdown file to write the table into")
    args = ap.parse_args()
    load0 = load_average()
    body = run([d for d in args.datasets.split(",") if d], Path(args.data))
    print(body)
    if args.doc:
        print(f"wrote {write_section(args.doc, SECTION, body, load_at_start=load0)}")


if __name__ == "__main__":
    main()
