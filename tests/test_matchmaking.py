"""Matchmaking (:mod:`podium.matchmaking`): the exact two-team split against brute force
over every split, parties kept together, the local search against exhaustive and random
splits, the errors naming the problem, and the queue's widening spread."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from podium.errors import PodiumError
from podium.matchmaking import (
    EXACT_LIMIT,
    MAX_POOL,
    Matchmaker,
    balance,
    team_sizes,
)
from podium.predict import predict_teams
from podium.systems import get_system


def _ratings(n: int, seed: int, scale: float = 300.0) -> dict[str, tuple[float, float, int]]:
    rng = np.random.default_rng(seed)
    return {f"p{i}": (float(1500 + scale * rng.standard_normal()),
                      float(rng.uniform(40, 200)), 10) for i in range(n)}


def _all_splits(pool: list[str], sizes: list[int]) -> list[list[list[str]]]:
    """Every split of ``pool`` into teams of ``sizes`` (teams as sets, each once)."""
    out: list[list[list[str]]] = []

    def rec(rest: list[str], left: list[int], acc: list[list[str]]) -> None:
        if not left:
            out.append(acc)
            return
        first, others = rest[0], rest[1:]  # the first remaining player opens a team
        for size in sorted(set(left)):
            for comb in itertools.combinations(others, size - 1):
                team = [first, *comb]
                remaining = [h for h in others if h not in comb]
                sizes_left = list(left)
                sizes_left.remove(size)
                rec(remaining, sizes_left, [*acc, team])

    rec(list(pool), list(sizes), [])
    return out


def _quality(system: object, split: list[list[str]], ratings: dict) -> float:
    return predict_teams(system, [(f"t{k}", t) for k, t in enumerate(split)],  # type: ignore[arg-type]
                         ratings).match_quality


@pytest.mark.parametrize(("name", "n", "seed"), [("mmr", 8, 1), ("trueskill", 9, 2),
                                                 ("glicko", 10, 3), ("openskill-pl", 7, 4)])
def test_two_teams_exact_equals_brute_force(name: str, n: int, seed: int) -> None:
    system = get_system(name)
    ratings = _ratings(n, seed, 5.0 if name.startswith("openskill") else 300.0)
    if name.startswith("openskill"):
        ratings = {h: (25.0 + (m - 1500.0), 3.0, c) for h, (m, _, c) in ratings.items()}
    pool = list(ratings)
    best = max(_quality(system, s, ratings) for s in _all_splits(pool, team_sizes(n, 2)))
    got = balance(name, pool, ratings)
    assert got.exact
    assert got.match_quality == pytest.approx(best, abs=1e-12)
    assert sorted(len(t) for t in got.teams) == sorted(team_sizes(n, 2))
    assert sorted(h for t in got.teams for h in t) == sorted(pool)
    assert got.match_quality == _quality(system, got.teams, ratings)
    assert got.match_quality == got.prediction.match_quality


def test_parties_stay_together_and_the_best_such_split_wins() -> None:
    system = get_system("mmr")
    ratings = _ratings(10, 7)
    pool = list(ratings)
    parties = [["p0", "p1", "p2"], ["p5", "p9"]]
    got = balance(system, pool, ratings, parties=parties)
    for party in parties:
        assert any(set(party) <= set(team) for team in got.teams)
    feasible = [s for s in _all_splits(pool, [5, 5])
                if all(any(set(p) <= set(t) for t in s) for p in parties)]
    best = max(_quality(system, s, ratings) for s in feasible)
    assert got.match_quality == pytest.approx(best, abs=1e-12)
    alone = balance(system, pool, ratings)
    assert alone.match_quality >= got.match_quality - 1e-12


def test_sixteen_players_are_exact_and_deterministic() -> None:
    ratings = _ratings(EXACT_LIMIT, 3)
    pool = list(ratings)
    a = balance("trueskill", pool, ratings)
    b = balance("trueskill", pool, ratings)
    assert a.exact and a.teams == b.teams
    assert [len(t) for t in a.teams] == [8, 8]
    assert a.teams[0][0] == "p0"  # teams in the order of their first player
    # more than the exact limit: the local search, still a valid split
    ratings = _ratings(EXACT_LIMIT + 2, 3)
    c = balance("trueskill", list(ratings), ratings)
    assert not c.exact and [len(t) for t in c.teams] == [9, 9]


def test_local_search_against_exhaustive_and_random_splits() -> None:
    system = get_system("mmr")
    ratings = _ratings(9, 11)
    pool = list(ratings)
    got = balance(system, pool, ratings, teams=3)
    assert not got.exact
    best = max(_quality(system, s, ratings) for s in _all_splits(pool, [3, 3, 3]))
    assert got.match_quality >= best - 0.01
    # 40 players in 4 teams: at least the best of 2000 random splits
    ratings = _ratings(40, 12)
    pool = list(ratings)
    got = balance(system, pool, ratings, teams=4)
    rng = np.random.default_rng(0)
    best_random = max(_quality(system, [list(np.array(pool)[perm[k::4]]) for k in range(4)],
                               ratings) for perm in (rng.permutation(40) for _ in range(2000)))
    assert got.match_quality >= best_random
    assert sorted(len(t) for t in got.teams) == [10, 10, 10, 10]


def test_uneven_sizes_and_newcomers() -> None:
    assert team_sizes(7, 3) == [3, 2, 2]
    got = balance("mmr", ["a", "b", "c", "d", "e"], {"a": (1900.0, 80.0, 20)})
    assert sorted(len(t) for t in got.teams) == [2, 3]
    team_a = next(t for t in got.teams if "a" in t)
    assert len(team_a) == 2  # the strong player gets the smaller team
    assert got.prediction.known.sum() == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"system": "no-such-system"}, "unknown system 'no-such-system'"),
        ({"handles": ["a", "b", "a"]}, "player 'a' is listed twice"),
        ({"parties": [["a", "b", "c"]]}, "party #1 (a, b, c) has 3 players, more than a team of 2"),
        ({"teams": 5}, "5 teams but only 4 players"),
        ({"teams": 1}, "teams must be an integer >= 2"),
        ({"parties": [["a", "zz"]]}, "party #1: player 'zz' is not in the pool"),
        ({"parties": [["a", "b"], ["b", "c"]]}, "party #2: player 'b' is also in party #1"),
        ({"parties": [["a", "b"], ["c", "d"], ["e", "f"]],
          "handles": ["a", "b", "c", "d", "e", "f"]},
         "cannot be kept together in teams of sizes 3, 3 (party sizes 2, 2, 2)"),
        ({"handles": [""]}, "non-empty string"),
    ],
)
def test_bad_input_is_named(kwargs: dict, message: str) -> None:
    args = {"system": "mmr", "handles": ["a", "b", "c", "d"], "teams": 2, "parties": None}
    args.update(kwargs)
    with pytest.raises(PodiumError) as exc:
        balance(args["system"], args["handles"], {}, teams=args["teams"],
                parties=args["parties"])
    assert message in str(exc.value)


def test_pool_limit() -> None:
    with pytest.raises(PodiumError, match=f"more than the limit of {MAX_POOL}"):
        balance("mmr", [f"p{i}" for i in range(MAX_POOL + 1)], {})


def test_queue_widens_with_waiting_time() -> None:
    ratings = {"low": (1400.0, 50.0, 10), "high": (1700.0, 50.0, 10)}
    mm = Matchmaker("trueskill", ratings, spread=100.0, widen=10.0)
    mm.join("low", 0.0)
    mm.join("high", 5.0)
    assert mm.poll(10.0) == []  # low accepts 200, high 150: the gap is 300
    assert mm.poll(24.0) == []  # high accepts 290
    (match,) = mm.poll(25.0)  # high accepts 300, low 350
    assert sorted(sum(match.teams, [])) == ["high", "low"]
    assert match.spread == 300.0
    assert match.waited == {"low": 25.0, "high": 20.0}
    assert match.p_first[0] + match.p_first[1] == pytest.approx(1.0)
    assert len(mm) == 0


def test_queue_matches_the_closest_group_of_the_longest_waiting() -> None:
    ratings = {f"p{i}": (1500.0 + 10.0 * i, 50.0, 10) for i in range(7)}
    mm = Matchmaker("mmr", ratings, teams=2, team_size=2, spread=1000.0, widen=0.0,
                    max_spread=1000.0)
    for i, h in enumerate(["p3", "p0", "p6", "p1", "p5", "p2", "p4"]):
        mm.join(h, float(i))
    matches = mm.poll(10.0)
    assert len(matches) == 1  # 7 players: one match of 4, three left waiting
    first = sorted(sum(matches[0].teams, []))
    assert "p3" in first and matches[0].spread == 30.0  # p3 waited longest
    assert len(mm) == 3 and all(len(t) == 2 for t in matches[0].teams)
    assert mm.leave("p6") and not mm.leave("p6")
    assert "p6" not in mm and mm.waiting() == [h for h in ("p0", "p1", "p5", "p2", "p4")
                                               if h not in first]


def test_queue_caps_the_spread_and_refuses_bad_input() -> None:
    mm = Matchmaker("mmr", {}, spread=0.0, widen=100.0, max_spread=50.0)
    mm.join("a", 0.0, rating=(1000.0, 80.0, 3))
    mm.join("b", 0.0, rating=(1100.0, 80.0, 3))
    assert mm.poll(1e6) == []  # 100 apart, the cap is 50
    assert mm.allowed_spread("a", 1e6) == 50.0
    with pytest.raises(PodiumError, match="already in the queue"):
        mm.join("a", 1.0)
    with pytest.raises(PodiumError, match="teams must be at least 2"):
        Matchmaker("mmr", teams=1)
    with pytest.raises(PodiumError, match="widen"):
        Matchmaker("mmr", widen=-1.0)
    with pytest.raises(PodiumError, match="unknown system"):
        Matchmaker("nope")
    with pytest.raises(PodiumError, match="finite"):
        mm.join("c", math.nan)


# ---------------------------------------------------------------------- podium balance
@pytest.fixture(scope="module")
def store_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    from podium.io import synthetic_contests
    from podium.store import Store

    url = f"sqlite:///{tmp_path_factory.mktemp('balance') / 'b.db'}"
    with Store.create(url, "trueskill") as store:
        for c in synthetic_contests(20, 6, seed=2):
            store.ingest(c)
        ratings = store.current_ratings([f"p{i:02d}" for i in range(20)])
    return url, ratings


def test_cli_balance_prints_the_split(store_db: tuple[str, dict],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import main

    url, ratings = store_db
    pool = [f"p{i:02d}" for i in range(8)]
    assert main(["balance", "--db", url, "--players", ",".join(pool), "--teams", "2",
                 "--party", "p00,p01", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = balance("trueskill", pool, ratings, 2, [["p00", "p01"]])
    assert [t["members"] for t in out["teams"]] == want.teams
    assert out["match_quality"] == want.match_quality and out["exact"] is True
    assert out["p_draw"] == pytest.approx(want.prediction.p_draw, abs=1e-15)
    assert main(["balance", "--db", url, "--players", " p00, p01 ,p02,p03"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("team 1 (wins ") and text[-1].startswith("match quality ")
    assert "the best split; trueskill, draw " in text[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--players", "p00,p01,p00"], "player 'p00' is listed twice in the pool"),
        (["--players", "p00,p01,p02,p03", "--party", "p00,p01,p02"],
         "party #1 (p00, p01, p02) has 3 players, more than a team of 2"),
        (["--players", "p00,p01", "--teams", "3"], "3 teams but only 2 players"),
        (["--players", "p00,p01", "--system", "nope"], "unknown system 'nope'"),
        (["--players", "p00,p01", "--system", "mmr"], "rates with 'trueskill'"),
        (["--players", "p00,,p01"], "name #2 is empty"),
        (["--players", ",".join(f"h{i}" for i in range(MAX_POOL + 1))],
         f"more than the limit of {MAX_POOL}"),
    ],
)
def test_cli_balance_bad_input_exits_2(store_db: tuple[str, dict], args: list[str],
                                       message: str, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    from podium.cli import main

    assert main(["balance", "--db", store_db[0], *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("podium: error: ") and message in err[0], err
