"""How much is left to predict: a look-ahead bound and paired bootstrap intervals.

Issue 13 asks a causal rating system (one that predicts each contest from the contests
before it) for 78.9 pair inversion on Codeforces contests 0..1086.  This script measures
two things that tell how far that is, written into docs/mmr-plus.md (block
``<!-- bench:mmr-plus-headroom -->``):

1. **A look-ahead bound.**  A system is rated once (``Rater.extend``); from its events
   (the performance ``p`` of Theorem 3.2 and the rating after each round) every scored
   contest is ranked by predictors that use the same performances:

   * the system's rating before the contest (what ``podium eval`` scores);
   * the mean of the player's last ``2K`` performances (causal, a plain window);
   * the mean of the ``K`` performances before and the ``K`` after the contest (not
     causal: it sees the future, but not the contest being predicted);
   * the rating before averaged with the mean of the next ``K`` performances (not
     causal).

   The non-causal rows are not systems anybody could run; they say how much better
   ordering the data hold once results that are not yet known are allowed in.

2. **Paired bootstrap intervals** for the differences between systems that the
   comparison tables report: the rounds scored are resampled with replacement (2,000
   draws, the same draw for both systems), and each draw's difference of
   player-weighted pair inversion is kept; the table gives the difference, its standard
   error and the 2.5-97.5 % interval.

Usage::

    python benchmarks/mmr_plus_headroom.py
    python benchmarks/mmr_plus_headroom.py --params-dir /tmp/plus2   # also the tuned rows

``--params-dir`` is an output directory of ``benchmarks/eval_mmr_plus.py``
(``DIR/<data set>/<system>.json``).  Data sets are read from ``$PODIUM_DATA_DIR``, else
``../shared/datasets`` relative to the checkout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _report import data_dir, load_average, write_section
from eval_mmr_plus import load_dataset

from podium.core.contest import Contest
from podium.evaluation import evaluate
from podium.evaluation.metrics import MetricAccumulator
from podium.evaluation.runner import train_size
from podium.rater import Rater

DOC = "docs/mmr-plus.md"
#: half-widths of the windows of the look-ahead bound (contests of the player)
WINDOWS = (3, 5, 10)
DRAWS = 2000


def load(name: str, root: Path) -> list[Contest]:
    """A shared data set as the comparison tables read it (``eval_mmr_plus.load_dataset``)."""
    contests = load_dataset(name, root)
    if contests is None:
        raise SystemExit(f"{name} not found under {root}: set PODIUM_DATA_DIR or pass --data")
    return contests


# ------------------------------------------------------------------ look-ahead bound
def event_table(contests: list[Contest], system: str) -> dict[str, np.ndarray]:
    """Per rated row, in contest order: contest, player, rating before, earlier
    contests, performance."""
    rater = Rater(system)
    rater.extend(contests)
    ev = rater.events.arrays()
    contest = np.asarray(ev["contest"], dtype=np.int64)
    if np.any(np.diff(contest) < 0):
        raise SystemExit("events are not in contest order")
    player = np.asarray(ev["player"], dtype=np.int64)
    mu_after = np.asarray(ev["mu"], dtype=np.float64)
    order = np.lexsort((np.arange(player.size), player))  # by player, then time
    same = np.r_[False, player[order][1:] == player[order][:-1]]
    before = np.full(player.size, np.nan)
    before[order[same]] = mu_after[order[np.flatnonzero(same) - 1]]
    starts = np.flatnonzero(~same)
    played = np.arange(player.size) - np.repeat(starts, np.diff(np.r_[starts, player.size]))
    n_prev = np.empty(player.size, dtype=np.int64)
    n_prev[order] = played
    return {"contest": contest, "player": player, "before": before, "n_prev": n_prev,
            "perf": np.asarray(ev["perf"], dtype=np.float64), "order": order,
            "starts": starts}


def window_means(tab: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """The predictors of the bound with half-width ``k``, per row."""
    order, starts = tab["order"], tab["starts"]
    n = order.size
    lengths = np.diff(np.r_[starts, n])
    first = np.repeat(starts, lengths)          # start of each sorted row's player
    pos = np.arange(n) - first                  # the row's position in its player
    length = np.repeat(lengths, lengths)
    csum = np.r_[0.0, np.cumsum(tab["perf"][order])]

    def mean(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = np.clip(a, 0, length)
        b = np.clip(b, 0, length)
        return csum[first + b] - csum[first + a], b - a

    s_past, c_past = mean(pos - 2 * k, pos)
    s_before, c_before = mean(pos - k, pos)
    s_next, c_next = mean(pos + 1, pos + 1 + k)
    before = tab["before"][order]
    sorted_preds = {
        f"mean of the last {2 * k} performances (causal)": s_past / np.maximum(c_past, 1),
        f"mean of {k} performances before and {k} after (sees the future)":
            (s_before + s_next) / np.maximum(c_before + c_next, 1),
        f"rating before, averaged with the mean of the next {k} (sees the future)":
            np.where(c_next > 0, 0.5 * before + 0.5 * s_next / np.maximum(c_next, 1),
                     before),
    }
    out = {}
    for key, v in sorted_preds.items():
        unsorted = np.empty(n)
        unsorted[order] = v
        out[key] = unsorted
    return out


def score(contests: list[Contest], tab: dict[str, np.ndarray], pred: np.ndarray,
          n_train: int) -> dict[str, float]:
    """Pair inversion and rank deviation of ``pred`` over the scored contests."""
    acc = MetricAccumulator(min_history=5, extended=False)
    bounds = np.flatnonzero(np.r_[True, np.diff(tab["contest"]) != 0, True])
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        t = int(tab["contest"][s])
        c = contests[t]
        if t < n_train or c.is_outcome_free:
            continue
        if e - s != len(c):
            raise SystemExit(f"contest #{t} {c.label!r}: {e - s} events for {len(c)} rows")
        mu = np.nan_to_num(pred[s:e], nan=0.0)  # NaN only for debuts, never scored
        acc.add_round(mu, c.lo, c.hi, tab["n_prev"][s:e], index=t)
    m = acc.summary()
    return {"pair_inv": m["pair_inv"], "rank_dev": m["rank_dev"]}


def bound_table(contests: list[Contest], system: str) -> str:
    n_train = train_size(len(contests), 0.1)
    tab = event_table(contests, system)
    rows = [("rating before the contest (the system; causal)",
             score(contests, tab, tab["before"], n_train))]
    for k in WINDOWS:
        for label, pred in window_means(tab, k).items():
            rows.append((label, score(contests, tab, pred, n_train)))
            print(f"  {label}: {rows[-1][1]['pair_inv']:.3f}", file=sys.stderr)
    lines = ["| predictor | pair inv. | rank dev. |", "|---|---:|---:|"]
    lines += [f"| {lab} | {m['pair_inv']:.3f} | {m['rank_dev']:.3f} |" for lab, m in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------ bootstrap
def per_round(contests: list[Contest], system: str, params: dict[str, Any]) -> Any:
    res = evaluate(contests, system, params=params, train_frac=0.1, extended=False)
    df = res.per_round[["index", "n_experienced", "pair_inv"]].dropna()
    return df.set_index("index"), res.metrics["pair_inv"]


def paired_bootstrap(a: Any, b: Any, seed: int = 0) -> tuple[float, float, float, float]:
    """``a - b`` in player-weighted pair inversion: value, SE, 2.5 % and 97.5 %."""
    j = a.merge(b, left_index=True, right_index=True, suffixes=("_a", "_b"))
    if not (j["n_experienced_a"] == j["n_experienced_b"]).all():
        raise SystemExit("the two runs scored different players")
    n = j["n_experienced_a"].to_numpy(dtype=np.float64)
    d = n * (j["pair_inv_a"].to_numpy() - j["pair_inv_b"].to_numpy())
    value = d.sum() / n.sum()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n.size, size=(DRAWS, n.size))
    draws = d[idx].sum(axis=1) / n[idx].sum(axis=1)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(value), float(draws.std(ddof=1)), float(lo), float(hi)


def tuned(params_dir: Path | None, ds: str, system: str) -> dict[str, Any] | None:
    if params_dir is None:
        return None
    f = params_dir / ds / f"{system}.json"
    if not f.exists():
        print(f"no {f}: its rows are left out", file=sys.stderr)
        return None
    params: dict[str, Any] = json.loads(f.read_text())["params"]
    return params


def bootstrap_table(data: dict[str, list[Contest]], params_dir: Path | None) -> str:
    lines = ["| data set | A | B | A − B | SE | 95 % interval |", "|---|---|---|---:|---:|---|"]
    for ds, contests in data.items():
        runs: dict[str, tuple[str, dict[str, Any]]] = {
            "Elo-MMR defaults": ("mmr", {}),
            "MMR-plus (preset)": ("mmr-plus", {}),
        }
        for label, system in (("Elo-MMR tuned", "mmr"), ("MMR-plus tuned", "mmr-plus")):
            p = tuned(params_dir, ds, system)
            if p is not None:
                runs[label] = (system, p)
        rounds = {}
        for label, (system, params) in runs.items():
            rounds[label], value = per_round(contests, system, params)
            print(f"  {ds} {label}: {value:.3f}", file=sys.stderr)
        pairs = [("MMR-plus (preset)", "Elo-MMR defaults"), ("MMR-plus (preset)", "Elo-MMR tuned"),
                 ("MMR-plus tuned", "Elo-MMR tuned")]
        for a, b in pairs:
            if a in rounds and b in rounds:
                v, se, lo, hi = paired_bootstrap(rounds[a], rounds[b])
                lines.append(f"| {ds} | {a} | {b} | {v:+.3f} | {se:.3f} | {lo:+.3f} … {hi:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(data_dir()),
                    help="datasets root (default: $PODIUM_DATA_DIR, else ../shared/datasets)")
    ap.add_argument("--system", default="mmr-plus", help="the system of the bound")
    ap.add_argument("--params-dir", type=Path, default=None,
                    help="tuned parameter files (an eval_mmr_plus.py output directory)")
    ap.add_argument("--no-doc", action="store_true", help=f"print, do not write {DOC}")
    args = ap.parse_args(argv)
    load0 = load_average()
    root = Path(args.data)
    data = {ds: load(ds, root) for ds in ("codeforces", "reddit")}
    print("look-ahead bound, Codeforces", file=sys.stderr)
    body = (f"Look-ahead bound, Codeforces contests 0..1086 (scored: 109..1086, players with "
            f"5+ earlier contests), `{args.system}`'s performances:\n\n"
            + bound_table(data["codeforces"], args.system)
            + "\n\nPaired bootstrap over the scored rounds (2,000 draws):\n\n"
            + bootstrap_table(data, args.params_dir))
    if args.no_doc:
        print(body)
    else:
        print(f"wrote {write_section(DOC, 'mmr-plus-headroom', body, load_at_start=load0)}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
