"""Synthetic team histories: [EbtekarLiu2021]'s Gaussian model (Sec. 6.1) with teams.

Skills and performances follow the synthetic data set of [EbtekarLiu2021], Sec. 6.1
(:mod:`podium.io.synthetic`): initial skills ``N(mu, skill_sd^2)``, a performance
``skill + N(0, perf_sd^2)`` per player and round, and a skill drift ``N(0, drift_sd^2)``
between rounds.  Teams are added the way every team model of Podium assumes
(docs/teams.md): a team's performance is the sum of its members' performances, each
weighted by the member's share of the round (partial play), plus a team noise
``N(0, team_noise_sd^2)``; teams are ranked by performance.

Two generators:

* :func:`synthetic_team_contests` -- a *league*: persistent rosters of 1-5 players
  (sizes drawn uniformly at the start), ``teams_per_round`` teams drawn at random for
  each round, and after each round every participant swaps teams with a random player
  of another team with probability ``switch_prob`` (a swap keeps every roster's size).
* :func:`lobby_contests` -- *lobbies*: two-team matches (5 v 5 by default) drawn from
  a player pool, either at random or by similar skill (the matchmaker sees each skill
  through a noise of ``matchmaking_sd``), the ten players split into two teams at
  random.

The drift is applied to a player each time the player plays again (before the round),
so that a player's skill moves by ``N(0, drift_sd^2)`` between two consecutive rounds
of the player, as between the rounds of the paper's data set, where everybody plays
every round.  Both generators are deterministic given ``seed`` and return a
:class:`TeamHistory`: the contests and the true skills.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.special import ndtr  # type: ignore[import-untyped]

from podium.core.contest import Contest
from podium.io.synthetic import default_start_time

__all__ = ["TeamHistory", "lobby_contests", "synthetic_team_contests"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TeamHistory:
    """A synthetic team history and its ground truth.

    Attributes
    ----------
    contests:
        The team contests, in order (teams best first).
    handles:
        Every player of the pool (``p0000``, ``p0001``, ...).
    initial_skill, final_skill:
        Each player's true skill before the first round and after the last one
        (order of :attr:`handles`).
    skill:
        Per contest: the true skill of each row (member) when the round was played.
    perf_sd, team_noise_sd:
        The noise of a member's performance and of a team's performance.
    """

    contests: list[Contest]
    handles: tuple[str, ...]
    initial_skill: FloatArray = field(repr=False)
    final_skill: FloatArray = field(repr=False)
    skill: list[FloatArray] = field(repr=False)
    perf_sd: float
    team_noise_sd: float

    def true_strength(self, k: int) -> FloatArray:
        """Each team's expected performance in contest ``k``: ``sum_i w_i skill_i``."""
        c = self.contests[k]
        assert c.teams is not None
        off = c.teams.offsets
        return np.add.reduceat(c.teams.weight * self.skill[k], off[:-1])

    def true_variance(self, k: int) -> FloatArray:
        """The variance of each team's performance in contest ``k``:
        ``perf_sd^2 sum_i w_i^2 + team_noise_sd^2``."""
        c = self.contests[k]
        assert c.teams is not None
        w2 = c.teams.weight ** 2
        return self.perf_sd**2 * np.add.reduceat(w2, c.teams.offsets[:-1]) \
            + self.team_noise_sd**2

    def true_win_probability(self, k: int) -> float:
        """The probability that the first team of the two-team contest ``k`` beats the
        second, under the generating model (the best possible prediction).

        Raises
        ------
        ValueError
            When contest ``k`` does not have exactly two teams.
        """
        s = self.true_strength(k)
        v = self.true_variance(k)
        if s.size != 2:
            raise ValueError(f"contest {k} has {s.size} teams, not 2")
        return float(ndtr((s[0] - s[1]) / np.sqrt(v[0] + v[1])))


def _check(n_players: int, n_rounds: int, perf_sd: float, skill_sd: float, drift_sd: float,
           team_noise_sd: float, partial_prob: float, min_weight: float) -> None:
    if n_players < 2 or n_rounds < 1:
        raise ValueError(f"need at least 2 players and 1 round, got {n_players} and {n_rounds}")
    for name, v in (("perf_sd", perf_sd), ("skill_sd", skill_sd), ("drift_sd", drift_sd),
                    ("team_noise_sd", team_noise_sd)):
        if not (np.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be finite and >= 0, got {v!r}")
    if not 0.0 <= partial_prob <= 1.0:
        raise ValueError(f"partial_prob must be in [0, 1], got {partial_prob!r}")
    if not 0.0 < min_weight <= 1.0:
        raise ValueError(f"min_weight must be in (0, 1], got {min_weight!r}")


def _handles(n: int) -> list[str]:
    width = len(str(n - 1))
    return [f"p{i:0{width}d}" for i in range(n)]


class _Pool:
    """The players' skills, drifting each time a player plays again."""

    def __init__(self, rng: np.random.Generator, n: int, mu: float, skill_sd: float,
                 drift_sd: float) -> None:
        self.rng = rng
        self.skill = rng.normal(mu, skill_sd, n)
        self.initial = self.skill.copy()
        self.played = np.zeros(n, dtype=bool)
        self.drift_sd = drift_sd

    def play(self, idx: IntArray) -> FloatArray:
        """Drift the returning players of ``idx``; their skills for this round."""
        step = self.rng.normal(0.0, self.drift_sd, idx.size)
        self.skill[idx] += np.where(self.played[idx], step, 0.0)
        self.played[idx] = True
        return self.skill[idx].copy()


def _weights(rng: np.random.Generator, n: int, partial_prob: float,
             min_weight: float) -> FloatArray:
    """Member weights: 1, or with probability ``partial_prob`` a share drawn uniformly
    from ``[min_weight, 1]`` (rounded to 0.01)."""
    w = np.ones(n)
    if partial_prob > 0.0:
        part = rng.random(n) < partial_prob
        w[part] = np.round(rng.uniform(min_weight, 1.0, int(part.sum())), 2)
        w = np.clip(w, 0.01, 1.0)
    return w


def _rank_teams(rng: np.random.Generator, members: list[IntArray], skill: FloatArray,
                weight: FloatArray, perf_sd: float, team_noise_sd: float,
                handles: list[str], names: list[str], label: str, time_seconds: int
                ) -> tuple[Contest, IntArray]:
    """Draw the round's performances and build the contest; also the row order (the
    position in ``skill``/``weight`` of each row of the contest)."""
    sizes = np.array([m.size for m in members], dtype=np.int64)
    starts = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    perf = skill + rng.normal(0.0, perf_sd, skill.size)
    team_perf = np.add.reduceat(weight * perf, starts[:-1]) + rng.normal(
        0.0, team_noise_sd, sizes.size)
    order = np.argsort(-team_perf, kind="stable")
    rows = np.concatenate([np.arange(starts[t], starts[t + 1]) for t in order])
    flat = np.concatenate(members)
    off = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes[order], out=off[1:])
    places = np.arange(sizes.size, dtype=np.int64)
    contest = Contest.from_team_arrays(
        [handles[i] for i in flat[rows]], off, [names[t] for t in order], places, places,
        weight[rows], name=label, time_seconds=time_seconds)
    return contest, rows


def synthetic_team_contests(
    n_players: int = 2_000,
    n_rounds: int = 3_000,
    *,
    teams_per_round: int = 20,
    min_size: int = 1,
    max_size: int = 5,
    switch_prob: float = 0.05,
    partial_prob: float = 0.0,
    min_weight: float = 0.25,
    mu: float = 1500.0,
    skill_sd: float = 300.0,
    perf_sd: float = 200.0,
    drift_sd: float = 35.0,
    team_noise_sd: float = 100.0,
    seed: int = 0,
    start_time: int | None = None,
    round_seconds: int = 86_400,
) -> TeamHistory:
    """A league of persistent rosters: the seeded synthetic team history.

    Parameters
    ----------
    n_players, n_rounds:
        Players in the pool and rounds generated.
    teams_per_round:
        Teams drawn (uniformly, without replacement) to play each round.
    min_size, max_size:
        Roster sizes are drawn uniformly from ``min_size..max_size`` once, at the start.
    switch_prob:
        After each round, each of its participants swaps places with a uniformly drawn
        player of another roster with this probability (rosters otherwise persist).
    partial_prob, min_weight:
        Each member plays a share of the round drawn from ``[min_weight, 1]`` with
        probability ``partial_prob`` (0: everybody plays the whole round).
    mu, skill_sd, perf_sd, drift_sd:
        [EbtekarLiu2021]'s Sec. 6.1 model: initial skill ``N(mu, skill_sd^2)``, the
        performance noise and the drift between two rounds of a player.
    team_noise_sd:
        The noise added to each team's performance.
    seed:
        Seed of :func:`numpy.random.default_rng`: the same arguments give the same history.
    start_time, round_seconds:
        ``time_seconds`` of round ``t`` is ``start_time + t * round_seconds``; by
        default ``start_time`` is :func:`podium.io.synthetic.default_start_time`
        (2020-09-13, earlier for a history that would run past 2023-11-14).

    Returns
    -------
    TeamHistory
        Team ``names`` are the rosters' (``t000``, ...), persistent across rounds.

    Raises
    ------
    ValueError
        On sizes or probabilities out of range, or fewer than two rosters.
    """
    _check(n_players, n_rounds, perf_sd, skill_sd, drift_sd, team_noise_sd, partial_prob,
           min_weight)
    if not 1 <= min_size <= max_size:
        raise ValueError(f"need 1 <= min_size <= max_size, got {min_size} and {max_size}")
    if not 0.0 <= switch_prob <= 1.0:
        raise ValueError(f"switch_prob must be in [0, 1], got {switch_prob!r}")
    if start_time is None:
        start_time = default_start_time(n_rounds, round_seconds)
    rng = np.random.default_rng(seed)
    pool = _Pool(rng, n_players, mu, skill_sd, drift_sd)
    handles = _handles(n_players)
    # rosters: a shuffled pool cut into sizes drawn from min_size..max_size
    sizes_l: list[int] = []
    while sum(sizes_l) < n_players:
        sizes_l.append(int(rng.integers(min_size, max_size + 1)))
    sizes_l[-1] -= sum(sizes_l) - n_players
    if sizes_l[-1] < min_size:  # fold a short last roster into the others
        rest = sizes_l.pop()
        k = 0
        while rest:
            if sizes_l[k % len(sizes_l)] < max_size:
                sizes_l[k % len(sizes_l)] += 1
                rest -= 1
            k += 1
            if k > 10 * n_players:
                raise ValueError("cannot cut the pool into rosters of these sizes")
    n_teams = len(sizes_l)
    if n_teams < 2:
        raise ValueError(f"{n_players} players make {n_teams} roster; need at least 2")
    if not 2 <= teams_per_round <= n_teams:
        raise ValueError(f"teams_per_round must be in [2, {n_teams}] (the rosters), "
                         f"got {teams_per_round}")
    perm = rng.permutation(n_players)
    cuts = np.cumsum(sizes_l)[:-1]
    rosters: list[IntArray] = [r.astype(np.int64) for r in np.split(perm, cuts)]
    team_of = np.empty(n_players, dtype=np.int64)
    slot_of = np.empty(n_players, dtype=np.int64)
    for t, r in enumerate(rosters):
        team_of[r] = t
        slot_of[r] = np.arange(r.size)
    names = [f"t{t:0{len(str(n_teams - 1))}d}" for t in range(n_teams)]
    contests: list[Contest] = []
    skills: list[FloatArray] = []
    for k in range(n_rounds):
        chosen = np.sort(rng.choice(n_teams, size=teams_per_round, replace=False))
        members = [rosters[t].copy() for t in chosen]
        flat = np.concatenate(members)
        skill = pool.play(flat)
        weight = _weights(rng, flat.size, partial_prob, min_weight)
        contest, rows = _rank_teams(
            rng, members, skill, weight, perf_sd, team_noise_sd, handles,
            [names[t] for t in chosen], f"team round {k + 1}",
            start_time + k * round_seconds)
        contests.append(contest)
        skills.append(skill[rows])
        # switches: each participant swaps with a random player of another roster
        movers = flat[rng.random(flat.size) < switch_prob]
        partners = rng.integers(0, n_players, movers.size)
        for a, b in zip(movers.tolist(), partners.tolist(), strict=True):
            ta, tb = int(team_of[a]), int(team_of[b])
            if ta == tb:
                continue
            sa, sb = int(slot_of[a]), int(slot_of[b])
            rosters[ta][sa], rosters[tb][sb] = b, a
            team_of[a], team_of[b] = tb, ta
            slot_of[a], slot_of[b] = sb, sa
    return TeamHistory(contests, tuple(handles), pool.initial, pool.skill.copy(), skills,
                       float(perf_sd), float(team_noise_sd))


def lobby_contests(
    n_players: int = 2_000,
    n_matches: int = 10_000,
    *,
    team_size: int = 5,
    matchmaking: Literal["random", "skill"] = "random",
    matchmaking_sd: float = 100.0,
    partial_prob: float = 0.0,
    min_weight: float = 0.25,
    mu: float = 1500.0,
    skill_sd: float = 300.0,
    perf_sd: float = 200.0,
    drift_sd: float = 35.0,
    team_noise_sd: float = 100.0,
    seed: int = 0,
    start_time: int | None = None,
    match_seconds: int = 600,
) -> TeamHistory:
    """Two-team lobby matches (``team_size`` v ``team_size``) drawn from a player pool.

    Parameters
    ----------
    n_players, n_matches:
        Players in the pool and matches generated.
    team_size:
        Players per team (5: 5 v 5).
    matchmaking:
        ``"random"``: the ``2 team_size`` players of a match are drawn uniformly from
        the pool; ``"skill"``: the pool is sorted by skill seen through a noise
        ``N(0, matchmaking_sd^2)`` (drawn afresh for each match) and a random window of
        ``2 team_size`` consecutive players is taken.  Either way the players are split
        into the two teams at random.
    partial_prob, min_weight, mu, skill_sd, perf_sd, drift_sd, team_noise_sd, seed:
        As for :func:`synthetic_team_contests`.
    start_time, match_seconds:
        ``time_seconds`` of match ``t`` is ``start_time + t * match_seconds``; by
        default ``start_time`` is :func:`podium.io.synthetic.default_start_time`.

    Returns
    -------
    TeamHistory
        The teams of each match are named ``blue`` and ``red``; a draw cannot happen.

    Raises
    ------
    ValueError
        On a pool smaller than one match, an unknown matchmaking or values out of range.
    """
    _check(n_players, n_matches, perf_sd, skill_sd, drift_sd, team_noise_sd, partial_prob,
           min_weight)
    if team_size < 1 or 2 * team_size > n_players:
        raise ValueError(f"team_size must be in [1, {n_players // 2}], got {team_size}")
    if matchmaking not in ("random", "skill"):
        raise ValueError(f"matchmaking must be 'random' or 'skill', got {matchmaking!r}")
    if not (np.isfinite(matchmaking_sd) and matchmaking_sd >= 0):
        raise ValueError(f"matchmaking_sd must be finite and >= 0, got {matchmaking_sd!r}")
    if start_time is None:
        start_time = default_start_time(n_matches, match_seconds)
    rng = np.random.default_rng(seed)
    pool = _Pool(rng, n_players, mu, skill_sd, drift_sd)
    handles = _handles(n_players)
    m = 2 * team_size
    contests: list[Contest] = []
    skills: list[FloatArray] = []
    for k in range(n_matches):
        if matchmaking == "random":
            players = rng.choice(n_players, size=m, replace=False)
        else:
            seen = pool.skill + rng.normal(0.0, matchmaking_sd, n_players)
            start = int(rng.integers(0, n_players - m + 1))
            # the players of ranks start..start + m - 1 (argpartition places both ends)
            players = np.sort(np.argpartition(seen, (start, start + m - 1))[start:start + m])
        players = rng.permutation(players).astype(np.int64)
        members = [players[:team_size], players[team_size:]]
        flat = np.concatenate(members)
        skill = pool.play(flat)
        weight = _weights(rng, flat.size, partial_prob, min_weight)
        contest, rows = _rank_teams(
            rng, members, skill, weight, perf_sd, team_noise_sd, handles, ["blue", "red"],
            f"match {k + 1}", start_time + k * match_seconds)
        contests.append(contest)
        skills.append(skill[rows])
    return TeamHistory(contests, tuple(handles), pool.initial, pool.skill.copy(), skills,
                       float(perf_sd), float(team_noise_sd))
