"""Draws on real data: 49,520 men's international football matches, 1872-2026, 23 % drawn.

Every system rates the whole history twice, with draws rated (``all_tied="rate"``,
the default) and skipped (``all_tied="skip"``, the reference's behaviour).  Before each
match after the first 10 % whose two teams have 5 earlier matches each, the ratings
are scored as ``podium compare`` scores a round (:mod:`podium.evaluation`: its
``MetricAccumulator`` and ``TeamMetricAccumulator``):

* **pair inv.**: [EbtekarLiu2021]'s pair inversion: the share of the decisive matches
  won by the team rated higher (a draw counts for nothing: outcome free);
* **log-loss**, **Brier**: of the system's own probability ``p`` that the first team
  beats the second (its performance model, :func:`~podium.evaluation.team_metrics.
  team_win_probability`) against the expected score ``y`` = 1, 1/2 or 0 (a draw is half
  a win, as :class:`~podium.evaluation.team_metrics.TeamMetricAccumulator` scores it),
  over every scored match, draws included, and over the draws alone.

Both settings of a system are scored on the same matches; what differs is only whether
the draws moved the ratings.  (Scoring the decisive matches alone would favour the
skip: ratings that ignore draws spread wider and are more confident, which pays on
decisive matches and costs on the draws.)

The data (``../shared/datasets/football``, CC0, martj42/international_results): one
two-player round per match, the winner first, a draw both at place 1; scores after
extra time, so a match decided on penalties is a draw (``shootouts.csv`` is not used);
no home advantage is modelled.  Former names are merged into the current one
(``former_names.csv``, within its dates: Dahomey's matches of 1959-1975 are Benin's).
Times: each match at its true date, in seconds from 1970-01-01 (negative before it;
Podium takes times back to 1800).

    python benchmarks/football_draws.py                   # every system, both settings
    python benchmarks/football_draws.py --systems mmr,glicko --no-write
    python benchmarks/football_draws.py --limit 3000        # a quick check of every system

The table goes to docs/systems.md (section ``football-draws``) unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import logging
import math
import time
from pathlib import Path

import numpy as np
from _report import data_dir, load_average, write_section

from podium import Rater
from podium.core.contest import Contest
from podium.evaluation.metrics import MetricAccumulator
from podium.evaluation.runner import train_size
from podium.evaluation.team_metrics import TeamMetricAccumulator, team_win_probability
from podium.systems import SYSTEMS

#: Times are seconds since this day (negative before it).
EPOCH = dt.date(1970, 1, 1)
MIN_HISTORY = 5
#: Left out by default: on rounds of two players they give the numbers of the system
#: named, to the digits shown (mmr-simple: mmr's, computed plainly and slowly;
#: elo-average, elo-sample: one game per round, so every ordering is elo-single's;
#: openskill-bt, -btp: for two teams Bradley-Terry's update is Plackett-Luce's, and the
#: partial pairing is the full one; checked on the first 3,000 matches, --limit 3000).
SAME_ON_PAIRS = {"mmr-simple": "mmr", "elo-average": "elo-single",
                 "elo-sample": "elo-single", "openskill-bt": "openskill-pl",
                 "openskill-btp": "openskill-pl"}
_FIRST, _SECOND = np.array([0]), np.array([1])


def former_names(path: Path) -> list[tuple[str, str, dt.date, dt.date]]:
    """``(former, current, start, end)`` rows of ``former_names.csv``."""
    with path.open(newline="", encoding="utf-8") as fh:
        return [(r["former"], r["current"], dt.date.fromisoformat(r["start_date"]),
                 dt.date.fromisoformat(r["end_date"])) for r in csv.DictReader(fh)]


def load_football(folder: Path, *, merge_former: bool = True) -> list[Contest]:
    """The matches of ``results.csv`` as two-side rounds, in file (date) order.

    Raises
    ------
    ValueError
        Naming the file and line of a row whose date or scores do not parse.
    """
    renames = former_names(folder / "former_names.csv") if merge_former else []
    out: list[Contest] = []
    path = folder / "results.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            try:
                day = dt.date.fromisoformat(row["date"])
                home, away = int(row["home_score"]), int(row["away_score"])
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{line}: {exc}") from None
            teams = [row["home_team"], row["away_team"]]
            for k, name in enumerate(teams):
                for former, current, start, end in renames:
                    if name == former and start <= day <= end:
                        teams[k] = current
            t = (day - EPOCH).days * 86_400
            label = f"{row['date']} {teams[0]}-{teams[1]}"
            if home == away:
                out.append(Contest([(teams[0], 0, 1), (teams[1], 0, 1)], name=label,
                                   time_seconds=t))
            else:
                win, lose = (teams[0], teams[1]) if home > away else (teams[1], teams[0])
                out.append(Contest([(win, 0, 0), (lose, 1, 1)], name=label, time_seconds=t))
    return out


def score(contests: list[Contest], name: str, all_tied: str) -> dict[str, float]:
    """Rate ``contests`` with ``name`` (``all_tied``) and score each match before it."""
    Rater(name, all_tied=all_tied).extend(contests[:200])  # compile (or load) the kernels
    r = Rater(name, all_tied=all_tied)
    system, table = r.system, r.players
    ordinal = MetricAccumulator(min_history=MIN_HISTORY, extended=False)
    every = TeamMetricAccumulator(min_history=MIN_HISTORY)
    drawn = TeamMetricAccumulator(min_history=MIN_HISTORY)
    n_train = train_size(len(contests), 0.1)
    mu0, sig0 = system.newcomer(None)
    t0 = time.perf_counter()
    for k, c in enumerate(contests):
        if k >= n_train:
            idx, _ = table.lookup(c.handles)
            known = idx >= 0
            mu = np.where(known, table.mu[idx], mu0)
            sigma = np.where(known, table.sigma[idx], sig0)
            played = np.where(known, table.contests[idx], 0)
            ordinal.add_round(mu, c.lo, c.hi, played)
            if played.min() >= MIN_HISTORY:
                p = team_win_probability(system, mu, sigma, played, _FIRST, _SECOND)
                acc = (every, drawn) if c.is_outcome_free else (every,)
                for a in acc:
                    a.add_round(mu, c.lo, c.hi, p_first=p)
        r.add(c)
    out = {**ordinal.summary(), "seconds": time.perf_counter() - t0}
    out.update({k: every.summary()[k] for k in ("log_loss", "brier", "matches")})
    out.update({f"draw_{k}": drawn.summary()[k] for k in ("log_loss", "matches")})
    return out


COLUMNS = (("pair inv. (%)", "pair_inv", 2), ("log-loss", "log_loss", 4),
           ("Brier", "brier", 4), ("log-loss of the draws", "draw_log_loss", 4))


def measure(contests: list[Contest], systems: list[str]) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name in systems:
        row: dict[str, object] = {"system": name}
        for setting in ("rate", "skip"):
            row[setting] = score(contests, name, setting)
        rate, skip = row["rate"], row["skip"]
        assert isinstance(rate, dict) and isinstance(skip, dict)
        print(f"{name:16s} " + "  ".join(f"{key} {rate[key]:.4f}/{skip[key]:.4f}"
                                         for _, key, _ in COLUMNS), flush=True)
        rows.append(row)
    return rows


def _fmt(x: object, digits: int) -> str:
    return "–" if not isinstance(x, float) or math.isnan(x) else f"{x:.{digits}f}"


def table(rows: list[dict[str, object]], contests: list[Contest]) -> str:
    draws = sum(c.is_outcome_free for c in contests)
    head = ["system"]
    for title, _, _ in COLUMNS:
        head += [f"{title}, draws rated", "skipped"]
    head.append("s (rated)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first: dict[str, float] = {}
    for row in rows:
        rate, skip = row["rate"], row["skip"]
        assert isinstance(rate, dict) and isinstance(skip, dict)
        first = first or rate
        cells = [f"`{row['system']}`"]
        for _, key, digits in COLUMNS:
            a, b = rate[key], skip[key]
            better = (a > b) if key == "pair_inv" else (a < b)
            fa, fb = _fmt(a, digits), _fmt(b, digits)
            cells += [f"**{fa}**" if better and fa != fb else fa, fb]
        cells.append(f"{rate['seconds']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    note = (f"{len(contests):,} matches, {draws:,} draws ({100 * draws / len(contests):.1f} %); "
            f"scored: the {int(first.get('matches', 0)):,} matches after the first 10 % whose "
            f"teams have {MIN_HISTORY} earlier matches each, {int(first.get('draw_matches', 0)):,}"
            " of them draws (pair inversion: the decisive ones).  Bold: the better of the two "
            "settings; s: seconds to rate and score with draws rated.  Not shown, the "
            "numbers of the system in parentheses to the digits shown (rounds of two): "
            + ", ".join(f"`{a}` (`{b}`)" for a, b in SAME_ON_PAIRS.items()) + ".")
    return note + "\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--data", type=Path, default=None, help="the football folder")
    ap.add_argument("--limit", type=int, default=None,
                    help="only the first N matches (a quick check; implies --no-write)")
    ap.add_argument("--no-write", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    logging.getLogger("podium").setLevel(logging.ERROR)  # same-day matches, solver notes
    systems = [s for s in args.systems.split(",") if s] or [
        s for s in SYSTEMS if s not in SAME_ON_PAIRS]
    load0 = load_average()
    contests = load_football(args.data or data_dir() / "football")[:args.limit]
    rows = measure(contests, systems)
    body = table(rows, contests)
    print(body)
    if not (args.no_write or args.limit):
        print(write_section("docs/systems.md", "football-draws", body, load_at_start=load0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
