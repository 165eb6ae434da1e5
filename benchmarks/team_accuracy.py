"""Team accuracy: Podium's team Elo-MMR against openskill (and TrueSkill) on synthetic teams.

Two seeded data sets of :mod:`podium.io.synthetic_teams` ([EbtekarLiu2021]'s Sec. 6.1
model with teams, docs/_teams_eval.md):

* ``league``: 2,000 players in persistent rosters of 1-5, 20 rosters a round, 3,000
  rounds, 5% of a round's players swapping teams after it;
* ``lobby``: 5 v 5 matches drawn at random from 1,000 players, 20,000 matches.

Every system is tuned the same way, the repository's way (:func:`podium.evaluation.tune`:
an optuna TPE study on the first 10% of the history, first trial the system's
defaults, ``--trials`` trials each) on the data set's objective (league: team pair
inversion; lobby: the win-probability log-loss), then rated on the whole history and
scored on the other 90% (:func:`podium.evaluation.evaluate`).  Two reference rows: the
*oracle* (the true skills and the true win probability) and the openskill library
itself (``openskill.models``, default parameters, rated match by match), whose team
ordering must equal the Podium system of the same model at its defaults.

    python benchmarks/team_accuracy.py                    # both data sets, 25 trials
    python benchmarks/team_accuracy.py --tuning independent --trials 10   # robustness check
    python benchmarks/team_accuracy.py --trials 5 --no-write --rounds 600 --matches 4000

The table goes to docs/benchmarks.md (section ``team-accuracy``, or
``team-accuracy-independent`` for ``--tuning independent``) unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _report import load_average, write_section

from podium.core.contest import Contest
from podium.evaluation import evaluate, tune
from podium.evaluation.team_metrics import TeamMetricAccumulator, team_strength
from podium.io.synthetic_teams import TeamHistory, lobby_contests, synthetic_team_contests
from podium.systems import SYSTEMS, get_system

SYSTEMS_DEFAULT = ("mmr", "mmr-inf", "mmx", "openskill-pl", "openskill-tm", "openskill-bt",
                   "openskill-tmp", "openskill-btp", "trueskill")
LIBRARY_MODELS = {"openskill-pl": "PlackettLuce", "openskill-tm": "ThurstoneMostellerFull",
                  "openskill-bt": "BradleyTerryFull"}
#: per-round columns kept for the paired standard errors of the margins
PER_ROUND = ("teams", "team_pair_inv", "team_rank_dev", "log_loss", "brier")
#: objective of each data set (the same for every system)
OBJECTIVE = {"league": "team_pair_inv", "lobby": "log_loss"}
METRICS = (("team pair inv. (%)", "team_pair_inv", 2), ("team rank dev. (%)", "team_rank_dev", 2),
           ("log-loss", "log_loss", 4), ("Brier", "brier", 4),
           ("calibration ×", "calibration", 2), ("skill corr.", "skill_corr", 4),
           ("player pair inv. (%)", "pair_inv", 2))


class _Count(logging.Handler):
    """Counts the rating warnings (instead of printing one line per round)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.n = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.n += 1
        self.first = self.first or record.getMessage()


def oracle(hist: TeamHistory, n_train: int, min_history: int) -> dict[str, float]:
    """The team metrics of the true skills and true win probabilities (same teams scored)."""
    acc = TeamMetricAccumulator(min_history=min_history)
    played: dict[str, int] = {}
    for k, c in enumerate(hist.contests):
        prev = np.array([played.get(h, 0) for h in c.handles], dtype=np.int64)
        if k >= n_train and not c.is_outcome_free:
            assert c.teams is not None
            scored = acc.scored_teams(prev, c.teams.offsets)
            p = (hist.true_win_probability(k) if len(c.teams) == 2 and scored.all() else None)
            starts = c.teams.offsets[:-1]
            acc.add_round(hist.true_strength(k), c.lo[starts], c.hi[starts], scored, p_first=p)
        for h in c.handles:
            played[h] = played.get(h, 0) + 1
    return acc.summary()


def library(contests: Sequence[Contest], system: str, n_train: int,
            min_history: int) -> dict[str, float]:
    """The openskill library's model of ``system`` at its defaults, rated contest by
    contest; scored as Podium scores its systems (team strength ``sum mu``, win
    probability :func:`team_win_probability` with the Podium system at its defaults)
    and, as ``log_loss_own``/``brier_own``, with the library's ``predict_win``."""
    import openskill.models as om

    from podium.evaluation.team_metrics import brier_score, log_loss, team_win_probability

    model = getattr(om, LIBRARY_MODELS[system])()
    podium_sys = get_system(system)
    ratings: dict[str, Any] = {}
    played: dict[str, int] = {}
    acc = TeamMetricAccumulator(min_history=min_history)
    own_p: list[float] = []
    own_y: list[float] = []
    for k, c in enumerate(contests):
        assert c.teams is not None
        off = c.teams.offsets.tolist()
        rows = [[ratings[h] if h in ratings else model.rating(name=h) for h in c.handles[a:b]]
                for a, b in zip(off[:-1], off[1:], strict=True)]
        if k >= n_train and not c.is_outcome_free:
            prev = np.array([played.get(h, 0) for h in c.handles], dtype=np.int64)
            mu = np.array([r.mu for team in rows for r in team])
            sig = np.array([r.sigma for team in rows for r in team])
            scored = acc.scored_teams(prev, c.teams.offsets)
            p = None
            if len(off) == 3 and scored.all():
                p = team_win_probability(podium_sys, mu, sig, prev, np.arange(off[0], off[1]),
                                         np.arange(off[1], off[2]))
                own_p.append(float(model.predict_win(rows)[0]))
                own_y.append(0.5 if c.lo[0] == c.lo[-1] else 1.0)
            starts = c.teams.offsets[:-1]
            acc.add_round(team_strength(mu, c.teams.offsets), c.lo[starts], c.hi[starts],
                          scored, p_first=p)
        new = model.rate(rows, ranks=[float(c.lo[a]) for a in off[:-1]])
        for team in new:
            for r in team:
                ratings[r.name] = r
        for h in c.handles:
            played[h] = played.get(h, 0) + 1
    out = acc.summary()
    out["log_loss_own"] = log_loss(own_p, own_y) if own_p else math.nan
    out["brier_own"] = brier_score(own_p, own_y) if own_p else math.nan
    return out


def diagnostics(ev: Any, hist: TeamHistory) -> dict[str, float]:
    """Two diagnostics of an evaluation (``keep_rater=True``).

    ``calibration``: the factor ``c`` for which ``Phi(c Phi^-1(p))`` has the least
    log-loss over the scored two-team contests (``p``: the predicted probability of the
    winner); above 1 the predictions are under-confident, below 1 over-confident.
    ``skill_corr``: the correlation between the final ratings and the true final skills
    of the players with 20+ contests.
    """
    from scipy.optimize import minimize_scalar
    from scipy.special import log_ndtr, ndtri

    out = {"calibration": math.nan}
    pr = ev.per_round
    if "log_loss" in pr:
        ll = pr["log_loss"].dropna().to_numpy()
        if ll.size:
            z = ndtri(np.clip(np.exp(-ll), 1e-12, 1.0 - 1e-12))
            best = minimize_scalar(lambda c: -float(np.mean(log_ndtr(c * z))),
                                   bounds=(0.05, 20.0), method="bounded")
            out["calibration"] = float(best.x)
    df = ev.rater.ratings(sort=False)
    index = {h: i for i, h in enumerate(hist.handles)}
    keep = df["contests"].to_numpy() >= 20
    skill = hist.final_skill[[index[h] for h in df["handle"]]]
    out["skill_corr"] = float(np.corrcoef(df["mu"].to_numpy()[keep], skill[keep])[0, 1])
    return out


def _fmt(v: Any, digits: int) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _params(p: dict[str, Any], keys: Sequence[str]) -> str:
    return ", ".join(f"{k} {p[k]:.4g}" for k in keys if k in p) or "defaults"


def run_dataset(name: str, hist: TeamHistory, systems: Sequence[str], trials: int,
                train_frac: float, min_history: int, with_library: bool,
                say: Callable[[str], None],
                tune_on: Sequence[Contest] | None = None) -> dict[str, Any]:
    """Tune and score every system on one data set; the rows of its tables.

    ``tune_on``: tune on this whole (independent) history instead of the first
    ``train_frac`` of the data set's own."""
    from podium.evaluation.tuning import search_space

    contests = hist.contests
    n_train = int(len(contests) * train_frac + 1e-9)
    objective = OBJECTIVE[name]
    rows: list[dict[str, Any]] = []
    count = _Count()
    log = logging.getLogger("podium")
    log.addHandler(count)
    log.propagate = False
    try:
        for system in systems:
            count.n = 0
            t0 = time.perf_counter()
            if tune_on is None:
                res = tune(contests, system, trials=trials, train_frac=train_frac,
                           objective=objective, min_history=min_history, seed=0)
            else:
                res = tune(tune_on, system, trials=trials, train_contests=len(tune_on),
                           objective=objective, min_history=min_history, seed=0)
            t_tune = time.perf_counter() - t0
            ev = evaluate(contests, system, params=res.best_params, train_frac=train_frac,
                          min_history=min_history, extended=False, keep_rater=True)
            dflt = evaluate(contests, system, train_frac=train_frac, min_history=min_history,
                            extended=False, keep_rater=True)
            tuned_m = {**ev.metrics, **diagnostics(ev, hist)}
            dflt_m = {**dflt.metrics, **diagnostics(dflt, hist)}
            rows.append({"system": system, "tuned": tuned_m, "defaults": dflt_m,
                         "params": res.best_params, "space": list(search_space(system)),
                         "train_value": res.best_value, "tune_s": t_tune,
                         "rate_s": ev.seconds, "warnings": count.n,
                         "warning": count.first,
                         "per_round": {k: ev.per_round[k].tolist() for k in PER_ROUND
                                       if k in ev.per_round}})
            say(f"{name} {system}: " + ", ".join(
                f"{k} {_fmt(tuned_m.get(k), d)} (defaults {_fmt(dflt_m.get(k), d)})"
                for _, k, d in METRICS[:6]) + f"; tuned in {t_tune:.0f} s; "
                f"{_params(res.best_params, search_space(system))}; {count.n} warnings")
    finally:
        log.removeHandler(count)
        log.propagate = True
    ref = {"oracle": oracle(hist, n_train, min_history)}
    say(f"{name} oracle: " + ", ".join(f"{k} {_fmt(ref['oracle'].get(k), d)}"
                                       for _, k, d in METRICS[:4]))
    if with_library:
        for system in systems:
            if system in LIBRARY_MODELS:
                t0 = time.perf_counter()
                ref[f"openskill {LIBRARY_MODELS[system]}"] = m = library(
                    contests, system, n_train, min_history)
                say(f"{name} library {LIBRARY_MODELS[system]}: " + ", ".join(
                    f"{k} {_fmt(m.get(k), d)}" for _, k, d in METRICS[:4])
                    + f", own log-loss {_fmt(m['log_loss_own'], 4)}; "
                    f"{time.perf_counter() - t0:.0f} s")
    return {"name": name, "contests": len(contests), "train": n_train,
            "player_rounds": sum(len(c) for c in contests), "objective": objective,
            "rows": rows, "reference": ref}


def _table(ds: dict[str, Any]) -> str:
    cols = [m for m in METRICS if any(not math.isnan(r["tuned"].get(m[1], math.nan))
                                      for r in ds["rows"])]
    head = "| system | " + " | ".join(c[0] for c in cols) + " | tuned parameters |"
    lines = [head, "|---|" + "---:|" * len(cols) + "---|"]
    for r in ds["rows"]:
        cells = [_fmt(r["tuned"].get(k), d) for _, k, d in cols]
        lines.append(f"| {r['system']} | " + " | ".join(cells)
                     + f" | {_params(r['params'], r['space'])} |")
    for label, m in ds["reference"].items():
        cells = [_fmt(m.get(k), d) for _, k, d in cols]
        note = ("true skills, true probabilities" if label == "oracle" else
                f"library defaults; its own predict_win: log-loss "
                f"{_fmt(m.get('log_loss_own'), 4)}, Brier {_fmt(m.get('brier_own'), 4)}"
                if ds["name"] == "lobby" else "library defaults")
        lines.append(f"| *{label}* | " + " | ".join(cells) + f" | {note} |")
    checks = []
    for system, model in LIBRARY_MODELS.items():
        lib = ds["reference"].get(f"openskill {model}")
        mine = next((r["defaults"] for r in ds["rows"] if r["system"] == system), None)
        if lib is None or mine is None:
            continue
        gaps = [abs(lib[k] - mine[k]) for _, k, _d in METRICS[:4]
                if not (math.isnan(lib.get(k, math.nan)) or math.isnan(mine.get(k, math.nan)))]
        checks.append(f"{model} vs {system} {max(gaps):.1e}")
    if checks:
        lines += ["", "Sanity check, the openskill library against the Podium system at the same "
                  "(default) parameters, largest difference of the team metrics: "
                  + "; ".join(checks) + "."]
    lines += ["", "At the systems' defaults (no tuning):", "",
              "| system | " + " | ".join(c[0] for c in cols) + " |",
              "|---|" + "---:|" * len(cols)]
    for r in ds["rows"]:
        lines.append(f"| {r['system']} | " + " | ".join(
            _fmt(r["defaults"].get(k), d) for _, k, d in cols) + " |")
    return "\n".join(lines)


def paired_se(a: dict[str, list[float]], b: dict[str, list[float]], key: str) -> float:
    """Standard error of the difference of two systems' aggregate ``key`` over the same
    scored rounds (paired by round; the team metrics weighted by the scored teams, as
    :class:`TeamMetricAccumulator` aggregates them)."""
    x = np.asarray(a[key], dtype=np.float64) - np.asarray(b[key], dtype=np.float64)
    w = np.asarray(a["teams"], dtype=np.float64) if key.startswith("team_") else np.ones(x.size)
    ok = ~np.isnan(x)
    x, w = x[ok], w[ok]
    if x.size < 2:
        return math.nan
    mean = float(np.sum(w * x) / np.sum(w))
    return float(math.sqrt(np.sum(w * w * (x - mean) ** 2) * x.size / (x.size - 1))
                 / np.sum(w))


def _verdict(ds: dict[str, Any]) -> str:
    """mmr (and the best Elo-MMR variant) against the best openskill model, per metric."""
    rows = {r["system"]: r["tuned"] for r in ds["rows"]}
    per = {r["system"]: r["per_round"] for r in ds["rows"]}
    osk = [s for s in rows if s.startswith("openskill")]
    mmr_family = [s for s in rows if s.startswith(("mmr", "mmx"))]
    if not osk or not mmr_family:
        return ""
    lines = [f"Tuned Elo-MMR against the best tuned openskill model on the {ds['name']} data "
             f"(objective `{ds['objective']}`; a positive margin favours Elo-MMR; ± one "
             f"standard error of the margin, paired by contest):", ""]
    for title, key, digits in METRICS[:4]:
        if all(math.isnan(rows[s].get(key, math.nan)) for s in osk):
            continue
        sign = 1.0 if key == "team_pair_inv" else -1.0  # larger is better only for pair inv.
        best_o = max(osk, key=lambda s, k=key, g=sign: g * rows[s][k])
        parts = []
        for s in ("mmr", max(mmr_family, key=lambda s, k=key, g=sign: g * rows[s][k])):
            if s not in rows or (parts and s == "mmr"):
                continue
            margin = sign * (rows[s][key] - rows[best_o][key])
            se = paired_se(per[s], per[best_o], key)
            parts.append(f"{s} {_fmt(rows[s][key], digits)} ({margin:+.{digits}f} "
                         f"± {se:.{digits}f})")
        lines.append(f"* {title}: best openskill {best_o} {_fmt(rows[best_o][key], digits)}; "
                     + ", ".join(parts))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS_DEFAULT),
                    help="systems to compare (those without a team rule are skipped)")
    ap.add_argument("--trials", type=int, default=25, help="optuna trials per system (25)")
    ap.add_argument("--players", type=int, default=2000, help="league players (2000)")
    ap.add_argument("--rounds", type=int, default=3000, help="league rounds (3000)")
    ap.add_argument("--lobby-players", type=int, default=1000, help="lobby pool (1000)")
    ap.add_argument("--matches", type=int, default=20000, help="lobby matches (20000)")
    ap.add_argument("--seed", type=int, default=0, help="data seed (0)")
    ap.add_argument("--data", default="league,lobby", help="data sets (league,lobby)")
    ap.add_argument("--no-library", action="store_true", help="skip the openskill library runs")
    ap.add_argument("--tuning", choices=["prefix", "independent"], default="prefix",
                    help="tune on the first 10%% of the history (prefix, default) or on a "
                    "whole independent draw of the same model (seed + 1)")
    ap.add_argument("--tune-share", type=float, default=0.5, metavar="F",
                    help="independent tuning: the draw's length as a share of the "
                    "history's (0.5)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    load0 = load_average()
    t_all = time.perf_counter()
    asked = [s.strip() for s in args.systems.split(",") if s.strip()]
    systems = [s for s in asked if s in SYSTEMS and SYSTEMS[s][0].team_rule is not None]
    skipped = [s for s in asked if s not in systems]

    def say(msg: str) -> None:
        print(msg, flush=True)

    if skipped:
        say(f"skipped (unknown, or no team rule): {', '.join(skipped)}")
    def draw(name: str, seed: int, share: float = 1.0) -> TeamHistory:
        if name == "league":
            return synthetic_team_contests(args.players, round(args.rounds * share), seed=seed)
        if name == "lobby":
            return lobby_contests(args.lobby_players, round(args.matches * share), seed=seed)
        raise SystemExit(f"unknown data set {name!r}")

    results = []
    for name in args.data.split(","):
        tune_on = (None if args.tuning == "prefix" else
                   draw(name, args.seed + 1, args.tune_share).contests)
        results.append(run_dataset(name, draw(name, args.seed), systems, args.trials, 0.1, 5,
                                   not args.no_library, say, tune_on))
    elapsed = time.perf_counter() - t_all
    parts = []
    for ds in results:
        desc = ("persistent rosters of 1-5 players, 20 teams a round, 5% of a round's "
                f"players swap teams after it; {args.players:,} players"
                if ds["name"] == "league" else
                f"5 v 5 matches drawn at random from {args.lobby_players:,} players")
        how = (f"the first {ds['train']:,} tune" if args.tuning == "prefix" else
               f"the systems are tuned on an independent draw of the same model (seed "
               f"{args.seed + 1}, {args.tune_share:.0%} of the length, all of it scored); "
               f"the first {ds['train']:,}")
        parts.append(f"**{ds['name']}** ({desc}): {ds['contests']:,} contests, "
                     f"{ds['player_rounds']:,} player-rounds; {how} "
                     f"(objective `{ds['objective']}`, {args.trials} optuna trials per "
                     f"system) are not scored; teams scored when every member has 5+ "
                     f"earlier contests.\n\n{_table(ds)}\n\n{_verdict(ds)}")
    body = "\n\n".join(parts)
    if skipped:
        body += f"\n\nNot run (unknown, or no team rule in this tree): {', '.join(skipped)}."
    body += f"\n\nWhole run {elapsed / 60:.1f} min."
    print("\n" + body)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, default=float)
    if not args.no_write:
        section = "team-accuracy" if args.tuning == "prefix" else "team-accuracy-independent"
        path = write_section("docs/benchmarks.md", section, body, load_at_start=load0)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
