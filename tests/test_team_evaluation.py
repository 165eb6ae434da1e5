"""Team evaluation: the synthetic team generators, the team metrics, the runner and the
``podium teams-sim`` / ``podium compare`` commands on team data.

The hand-made history of :func:`_duel_history` is worked out on paper: two fixed
teams A = (a1, a2) and B = (b1, b2); A wins contests 0-4, B wins contest 5.  The toy
system below moves every member of the winning team up by 10 and of the losing team
down by 10, so before contest 5 (the only one where every member has 5 earlier
contests) A's members hold 1550 and B's 1450: strengths 3100 and 2900.  The result
(B first) is the reverse of the prediction: team pair inversion 0, team rank
deviation 100 (each team one place off, ``100 * 2 / (1 * 2)``), and the log-loss is
``-ln P(B beats A)``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from scipy.special import ndtr

from podium import Contest
from podium.cli import main
from podium.evaluation import evaluate
from podium.evaluation.team_metrics import (
    TeamMetricAccumulator,
    brier_score,
    log_loss,
    team_pair_inversion,
    team_rank_deviation,
    team_strength,
    team_win_probability,
)
from podium.io.synthetic_teams import lobby_contests, synthetic_team_contests
from podium.predict import win_probabilities
from podium.systems import SYSTEMS, get_system
from podium.systems.base import (
    NoPlayerState,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
)


# ------------------------------------------------------------------ a toy team system
@dataclass(frozen=True)
class _TeamToy(RatingSystem):
    """Winners' members +10, losers' -10 (a two-team toy), sigma unchanged."""

    name: ClassVar[str] = "team-toy"
    newcomer_prior: ClassVar[tuple[str | float, str | float]] = (1500.0, 350.0)
    team_rule: ClassVar[str | None] = "toy: members of the first team +10, of the others -10"

    def make_state(self) -> NoPlayerState:
        return NoPlayerState()

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        step = np.where(rnd.lo == 0, 10.0, -10.0)
        return RoundOutput(rnd.mu + step, rnd.sigma.copy(), rnd.mu + step)


@dataclass(frozen=True)
class _Contrarian(_TeamToy):
    """The toy with its own team prediction: the weaker team is predicted to win."""

    def team_strength(self, mu: np.ndarray, sigma: np.ndarray, played: np.ndarray,
                      offsets: np.ndarray, weight: np.ndarray) -> np.ndarray:
        return -np.add.reduceat(weight * mu, offsets[:-1])


def _duel_history() -> list[Contest]:
    a = ("A", ["a1", "a2"])
    b = ("B", ["b1", "b2"])
    out = []
    for t in range(6):
        first, second = (a, b) if t < 5 else (b, a)
        out.append(Contest.from_teams([(first[0], 0, 0, first[1]), (second[0], 1, 1, second[1])],
                                      name=f"duel {t}", time_seconds=86_400 * t))
    return out


# ------------------------------------------------------------------ generators
def _rosters(contests: list[Contest]) -> list[dict[str, frozenset[str]]]:
    out = []
    for c in contests:
        assert c.teams is not None
        off = c.teams.offsets.tolist()
        out.append({nm: frozenset(c.handles[off[k]:off[k + 1]])
                    for k, nm in enumerate(c.teams.names)})
    return out


def test_league_is_deterministic() -> None:
    a = synthetic_team_contests(60, 40, teams_per_round=6, seed=3, partial_prob=0.3)
    b = synthetic_team_contests(60, 40, teams_per_round=6, seed=3, partial_prob=0.3)
    c = synthetic_team_contests(60, 40, teams_per_round=6, seed=4, partial_prob=0.3)
    assert a.contests == b.contests
    assert np.array_equal(a.final_skill, b.final_skill)
    assert all(np.array_equal(x, y) for x, y in zip(a.skill, b.skill, strict=True))
    assert a.contests != c.contests


def test_league_sizes_and_rosters_without_switching() -> None:
    h = synthetic_team_contests(80, 50, teams_per_round=5, min_size=2, max_size=4,
                                switch_prob=0.0, seed=1)
    assert len(h.contests) == 50
    seen: dict[str, frozenset[str]] = {}
    for c, rosters in zip(h.contests, _rosters(h.contests), strict=True):
        assert c.teams is not None and len(c.teams) == 5 and c.team_round
        assert np.all((c.teams.sizes >= 2) & (c.teams.sizes <= 4))
        assert np.all(c.teams.weight == 1.0)
        assert c.lo.tolist() == c.hi.tolist()  # no ties
        for name, members in rosters.items():
            assert seen.setdefault(name, members) == members  # persistent rosters
    # every player is in exactly one roster
    everyone = [p for r in seen.values() for p in r]
    assert len(everyone) == len(set(everyone))


def test_league_switching_keeps_sizes_and_moves_players() -> None:
    h = synthetic_team_contests(100, 300, teams_per_round=10, switch_prob=0.2, seed=2)
    sizes: dict[str, int] = {}
    members: dict[str, set[frozenset[str]]] = {}
    for rosters in _rosters(h.contests):
        for name, m in rosters.items():
            assert sizes.setdefault(name, len(m)) == len(m)  # a swap keeps the size
            assert 1 <= len(m) <= 5
            members.setdefault(name, set()).add(m)
    changed = sum(len(v) > 1 for v in members.values())
    assert changed > len(members) // 2
    # in any one round a player is in one team only (Contest checks it) and the
    # rosters never lose or gain players overall
    assert sum(sizes.values()) == 100


def test_league_partial_weights_and_true_model() -> None:
    h = synthetic_team_contests(50, 30, teams_per_round=8, partial_prob=0.5, min_weight=0.3,
                                seed=5)
    w = np.concatenate([c.teams.weight for c in h.contests if c.teams is not None])
    assert np.any(w < 1.0) and np.all((w >= 0.3) & (w <= 1.0))
    c = h.contests[0]
    assert c.teams is not None
    strength = h.true_strength(0)
    assert strength.shape == (8,)
    assert np.allclose(strength, team_strength(h.skill[0], c.teams.offsets, c.teams.weight))
    w2 = np.add.reduceat(c.teams.weight ** 2, c.teams.offsets[:-1])
    assert np.allclose(h.true_variance(0), 200.0**2 * w2 + 100.0**2)


def test_generators_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="teams_per_round"):
        synthetic_team_contests(10, 5, teams_per_round=50)
    with pytest.raises(ValueError, match="min_size"):
        synthetic_team_contests(10, 5, min_size=3, max_size=2)
    with pytest.raises(ValueError, match="switch_prob"):
        synthetic_team_contests(10, 5, teams_per_round=2, switch_prob=1.5)
    with pytest.raises(ValueError, match="matchmaking"):
        lobby_contests(20, 5, matchmaking="elo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="team_size"):
        lobby_contests(8, 5, team_size=5)


def test_lobby_matches() -> None:
    h = lobby_contests(40, 200, seed=7)
    assert h.contests == lobby_contests(40, 200, seed=7).contests
    for c in h.contests:
        assert c.teams is not None
        assert set(c.teams.names) == {"blue", "red"}
        assert c.teams.sizes.tolist() == [5, 5] and len(set(c.handles)) == 10
        assert c.lo.tolist() == [0] * 5 + [1] * 5
    # matchmaking by skill puts players of similar skill together
    rnd = lobby_contests(400, 300, seed=1)
    sk = lobby_contests(400, 300, seed=1, matchmaking="skill", matchmaking_sd=20.0)
    spread_rnd = np.mean([np.ptp(s) for s in rnd.skill])
    spread_sk = np.mean([np.ptp(s) for s in sk.skill])
    assert spread_sk < spread_rnd / 3


# ------------------------------------------------------------------ metrics by hand
def test_team_strength_and_orders() -> None:
    mu = np.array([1500.0, 1400.0, 1600.0, 1000.0, 1200.0, 1300.0])
    off = np.array([0, 2, 3, 6])
    assert team_strength(mu, off).tolist() == [2900.0, 1600.0, 3500.0]
    w = np.array([1.0, 0.5, 1.0, 1.0, 0.5, 0.5])
    assert team_strength(mu, off, w).tolist() == [2200.0, 1600.0, 2250.0]
    # three teams placed 0, 1, 2 with strengths 3, 1, 2: pairs (0,1), (0,2) right,
    # (1,2) wrong; by strength team 1 sits at 2 (place 1) and team 2 at 1 (place 2)
    lo = np.array([0, 1, 2])
    assert team_pair_inversion([3.0, 1.0, 2.0], lo, lo) == pytest.approx(200 / 3)
    assert team_rank_deviation([3.0, 1.0, 2.0], lo, lo) == pytest.approx(100 * 2 / 6)
    # a perfect prediction, and a tie that counts as predicted
    assert team_pair_inversion([3.0, 2.0, 1.0], lo, lo) == 100.0
    assert team_rank_deviation([3.0, 2.0, 1.0], lo, lo) == 0.0
    assert team_pair_inversion([3.0, 1.0, 2.0], [0, 1, 1], [0, 2, 2]) == 100.0
    with pytest.raises(ValueError, match="offsets"):
        team_strength(mu, [0, 2, 2, 6])
    with pytest.raises(ValueError, match="weights"):
        team_strength(mu, off, np.zeros(6))


def test_log_loss_and_brier() -> None:
    assert log_loss([0.8], [1.0]) == pytest.approx(-math.log(0.8))
    assert brier_score([0.8], [1.0]) == pytest.approx(0.04)
    assert log_loss([0.8, 0.3], [0.0, 0.5]) == pytest.approx(
        (-math.log(0.2) - 0.5 * math.log(0.3) - 0.5 * math.log(0.7)) / 2)
    assert brier_score([0.5, 0.5], [1.0, 0.0]) == 0.25
    assert log_loss([0.5], [1.0]) == pytest.approx(math.log(2))
    assert math.isfinite(log_loss([0.0], [1.0]))  # clipped
    assert math.isnan(log_loss([], []))
    with pytest.raises(ValueError, match="probabilities"):
        brier_score([1.2], [1.0])
    with pytest.raises(ValueError, match="outcomes"):
        log_loss([0.5], [2.0])


def test_team_win_probability_is_the_sum_of_member_models() -> None:
    sys_ = get_system("trueskill")
    mu = np.array([1600.0, 1500.0, 1450.0, 1550.0, 1400.0])
    sigma = np.array([100.0, 200.0, 150.0, 80.0, 300.0])
    played = np.array([3, 0, 7, 2, 1])
    model = sys_.performance_model(sigma, played, 1.0)
    a, b = np.array([0, 1]), np.array([2, 3, 4])
    z = (mu[a].sum() - mu[b].sum()) / math.sqrt(model.variance.sum())
    assert model.kind == "gaussian"
    p = team_win_probability(sys_, mu, sigma, played, a, b)
    assert p == pytest.approx(float(ndtr(z)), rel=1e-12)
    assert p + team_win_probability(sys_, mu, sigma, played, b, a) == pytest.approx(1.0)
    # one-member teams: the pairwise prediction of podium.predict
    pw = win_probabilities(mu, model.variance, model.kind)
    assert team_win_probability(sys_, mu, sigma, played, [0], [4]) == pytest.approx(pw[0, 4])
    # weights scale a member's mean by w and its variance by w^2
    w = np.array([1.0, 0.5, 1.0, 1.0, 1.0])
    z_w = (mu[0] + 0.5 * mu[1] - mu[b].sum()) / math.sqrt(
        model.variance[0] + 0.25 * model.variance[1] + model.variance[b].sum())
    assert team_win_probability(sys_, mu, sigma, played, a, b, weight=w) == pytest.approx(
        float(ndtr(z_w)))
    with pytest.raises(ValueError, match="both teams"):
        team_win_probability(sys_, mu, sigma, played, [0, 1], [1, 2])
    # the same number as the service's team prediction (podium.predict)
    from podium.predict import team_win_probability as predicted

    ratings = {f"h{i}": (mu[i], sigma[i], int(played[i])) for i in range(5)}
    for name in ("mmr", "openskill-pl", "trueskill", "glicko"):
        s = get_system(name)
        mine = team_win_probability(s, mu, sigma, played, a, b, weight=w)
        theirs = predicted(s, [("h0", 1.0), ("h1", 0.5)], ["h2", "h3", "h4"], ratings)
        assert mine == pytest.approx(theirs, rel=1e-12, abs=1e-15)


def test_accumulator_scores_experienced_teams_only() -> None:
    acc = TeamMetricAccumulator(min_history=2)
    scored = acc.scored_teams([2, 5, 1, 3, 3], [0, 2, 3, 5])
    assert scored.tolist() == [True, False, True]
    # the unscored middle team is left out: teams 0 and 2 remain, renumbered 0 and 1
    out = acc.add_round([1.0, 9.0, 2.0], [0, 1, 2], [0, 1, 2], scored)
    assert out["teams"] == 2 and out["team_pair_inv"] == 0.0 and out["team_rank_dev"] == 100.0
    acc.add_round([2.0, 1.0], [0, 1], [0, 1], p_first=0.75)
    acc.add_round([2.0, 1.0], [0, 1], [0, 1], [True, False], p_first=0.9)  # not scored
    s = acc.summary()
    assert s["team_pair_inv"] == pytest.approx(100 * 2 / 4)  # weighted by scored teams
    assert s["matches"] == 1 and s["log_loss"] == pytest.approx(-math.log(0.75))
    assert s["brier"] == pytest.approx(0.0625) and s["team_rounds"] == 2
    with pytest.raises(ValueError, match="p_first"):
        acc.add_round([2.0, 1.0], [0, 1], [0, 1], p_first=1.5)


def test_true_probabilities_are_calibrated() -> None:
    """The generating model's own probability is a perfect forecaster: its Brier score
    is the mean ``p (1 - p)`` and its log-loss the mean entropy, up to sampling noise."""
    h = lobby_contests(300, 3000, seed=11)
    acc = TeamMetricAccumulator(min_history=0)
    p = np.array([h.true_win_probability(k) for k in range(len(h.contests))])
    for k in range(len(h.contests)):
        acc.add_round(h.true_strength(k), [0, 1], [0, 1], p_first=p[k])
    s = acc.summary()
    err = (1.0 - p) ** 2  # the first team is the winner
    se = err.std() / math.sqrt(p.size)
    assert s["brier"] == pytest.approx(np.mean(p * (1 - p)), abs=4 * se)
    ent = -(p * np.log(p) + (1 - p) * np.log1p(-p))
    se = (-np.log(p)).std() / math.sqrt(p.size)
    assert s["log_loss"] == pytest.approx(ent.mean(), abs=4 * se)
    # the true strengths order the pair right exactly when p > 1/2
    assert s["team_pair_inv"] == pytest.approx(100 * np.mean(p > 0.5))


# ------------------------------------------------------------------ runner
def test_evaluate_scores_team_contests_by_hand() -> None:
    hist = _duel_history()
    res = evaluate(hist, _TeamToy(), train_contests=0, warmup=False)
    m = res.metrics
    assert m["team_rounds"] == 1 and m["matches"] == 1
    assert m["team_pair_inv"] == 0.0 and m["team_rank_dev"] == 100.0
    v = 350.0**2 + 315.0898**2 / 2  # the generic logistic model of the toy
    x = (2900.0 - 3100.0) / math.sqrt(4 * v)
    p = 1.0 / (1.0 + math.exp(-math.pi / math.sqrt(3.0) * x))
    assert m["log_loss"] == pytest.approx(-math.log(p), rel=1e-4)
    assert m["brier"] == pytest.approx((1 - p) ** 2, rel=1e-4)
    row = res.per_round.set_index("index").loc[5]
    assert row["team_pair_inv"] == 0.0 and row["log_loss"] == pytest.approx(-math.log(p),
                                                                             rel=1e-4)
    # the system's own team prediction replaces sum(mu)
    own = evaluate(hist, _Contrarian(), train_contests=0, warmup=False).metrics
    assert own["team_pair_inv"] == 100.0 and own["team_rank_dev"] == 0.0
    # an individual history has no team metrics
    solo = [Contest.from_places(["x", "y"], [1, 2], name=f"s{t}") for t in range(3)]
    assert "team_pair_inv" not in evaluate(solo, "mmr", warmup=False).metrics


def _team_systems() -> list[str]:
    return [s for s in ("mmr", "openskill-pl") if s in SYSTEMS
            and SYSTEMS[s][0].team_rule is not None]


def test_teams_sim_and_compare_print_the_team_metrics(tmp_path, capsys) -> None:
    systems = _team_systems()
    assert systems, "no system with a team rule"
    out = tmp_path / "lobby"
    assert main(["teams-sim", str(out), "--kind", "lobby", "--players", "40", "--rounds",
                 "80", "--seed", "2"]) == 0
    assert (out / "0.json").exists() and (out / "79.json").exists()
    skills = (out / "skills.csv").read_text().splitlines()
    assert skills[0] == "player,initial_skill,final_skill" and len(skills) == 41
    row = json.loads((out / "0.json").read_text())["standings"][0]
    assert row[0] in ("blue", "red") and len(row[3]) == 5
    capsys.readouterr()
    assert main(["compare", str(out), "--systems", ",".join(systems), "--no-progress"]) == 0
    cap = capsys.readouterr()
    assert "team pair inv. (%)" in cap.out and "log-loss" in cap.out and "Brier" in cap.out
    assert "two-team matches scored" in cap.out
    for s in systems:
        assert f"| {s} |" in cap.out
    assert "log-loss" in cap.err
    # a league written as CSV (team column), through podium eval --json
    league = tmp_path / "league"
    assert main(["teams-sim", str(league), "--players", "60", "--rounds", "40",
                 "--teams-per-round", "6", "--csv", "--partial", "0.2"]) == 0
    assert (league / "contests.csv").exists()
    capsys.readouterr()
    assert main(["eval", str(league / "contests.csv"), "--system", systems[0], "--json",
                 "--no-progress", "--min-history", "2"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert 0.0 <= rec["team_pair_inv"] <= 100.0 and rec["matches"] == 0
    assert rec["log_loss"] is None  # no two-team contests


def test_teams_sim_rejects_bad_arguments(tmp_path, capsys) -> None:
    assert main(["teams-sim", str(tmp_path / "x"), "--players", "10", "--teams-per-round",
                 "50"]) == 1
    assert "teams_per_round" in capsys.readouterr().err


def test_tune_on_a_team_objective() -> None:
    pytest.importorskip("optuna")
    from podium.evaluation import tune
    from podium.evaluation.cli import OBJECTIVE_CHOICES
    from podium.evaluation.tuning import OBJECTIVES

    assert set(OBJECTIVE_CHOICES) == set(OBJECTIVES)
    systems = _team_systems()
    assert systems, "no system with a team rule"
    h = lobby_contests(30, 200, seed=4)
    res = tune(h.contests, systems[0], trials=2, train_frac=0.5, objective="log_loss",
               min_history=2)
    assert 0.0 < res.best_value < 2.0 and res.trials == 2
