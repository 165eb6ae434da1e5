"""Validation of the contest model: every bad input raises a ContestError that names the
contest (and the player where there is one) and leaves a Rater untouched; builders
(from_places, from_scores) and the JSON form."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Contest, ContestError, Rater
from podium.io import contest_from_json_dict


@pytest.fixture
def rater() -> Rater:
    return warmed()


def warmed(**params: Any) -> Rater:
    r = Rater("mmr", **params)
    r.add(Contest([("ann", 0, 0), ("bob", 1, 2), ("cat", 1, 2)], name="warm-up 1",
                  time_seconds=100))
    r.add(Contest([("cat", 0, 0), ("ann", 1, 1), ("dan", 2, 2)], name="warm-up 2",
                  time_seconds=200))
    return r


def snapshot(r: Rater) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
    return (r.ratings(sort=False).copy(), r.events_frame().copy(), r.contests_processed,
            r.num_players)


def assert_unchanged(r: Rater, before: tuple[pd.DataFrame, pd.DataFrame, int, int]) -> None:
    after = snapshot(r)
    pd.testing.assert_frame_equal(after[0], before[0])
    pd.testing.assert_frame_equal(after[1], before[1])
    assert after[2:] == before[2:]


def attempt(r: Rater, make: Any) -> ContestError:
    """Build a contest with ``make()`` and add it to ``r``; return the ContestError."""
    before = snapshot(r)
    with pytest.raises(ContestError) as info:
        r.add(make())
    assert_unchanged(r, before)
    # the rater still works afterwards
    rep = r.add(Contest([("ann", 0, 0), ("eve", 1, 1)], name="after", time_seconds=300))
    assert not rep.skipped
    return info.value


def check_names(err: ContestError, contest: str, player: str | None) -> None:
    assert err.contest == contest
    assert contest in str(err)
    if player is not None:
        assert err.player == player
        assert player in str(err)


# ---------------------------------------------------------------------- bad standings
BAD_STANDINGS = {
    "duplicate handle": ([("ann", 0, 0), ("zed", 1, 1), ("ann", 2, 2)], "ann"),
    "overlapping ranges": ([("ann", 0, 1), ("zed", 1, 1), ("bob", 2, 2)], "zed"),
    "ranges not shared": ([("ann", 0, 0), ("zed", 1, 2), ("bob", 2, 2)], "bob"),
    "last range too long": ([("ann", 0, 0), ("zed", 1, 3), ("bob", 1, 3)], "bob"),
    "tied players apart": ([("ann", 0, 2), ("zed", 1, 1), ("bob", 0, 2)], "zed"),
    "position outside range (lo)": ([("ann", 0, 0), ("zed", 2, 2), ("bob", 2, 2)], "zed"),
    "position outside range (hi)": ([("ann", 0, 0), ("zed", 0, 0), ("bob", 2, 2)], "zed"),
    "gap in places": ([("ann", 0, 0), ("zed", 2, 2)], "zed"),
    "first group not at 0": ([("zed", 1, 1), ("ann", 2, 2)], "zed"),
}


@pytest.mark.parametrize("case", sorted(BAD_STANDINGS))
def test_bad_standings(rater: Rater, case: str) -> None:
    standings, player = BAD_STANDINGS[case]
    err = attempt(rater, lambda: Contest(standings, name=f"bad: {case}"))
    check_names(err, f"bad: {case}", player)


def test_duplicate_handle_names_the_player_in_from_places(rater: Rater) -> None:
    err = attempt(rater, lambda: Contest.from_places(["ann", "zed", "ann"], [1, 2, 3],
                                                     name="dup places"))
    check_names(err, "dup places", "ann")


def test_empty_standings(rater: Rater) -> None:
    err = attempt(rater, lambda: Contest([], name="nobody came"))
    check_names(err, "nobody came", None)
    assert "empty" in str(err)


def test_unnamed_contest_still_says_which(rater: Rater) -> None:
    err = attempt(rater, lambda: Contest([("a", 0, 0), ("a", 1, 1)]))
    assert err.contest  # a placeholder such as "<unnamed>"
    assert err.player == "a"


@pytest.mark.parametrize("weight", [math.nan, math.inf, -math.inf, 0.0, -1.0, -1e-300])
def test_bad_weight(rater: Rater, weight: float) -> None:
    err = attempt(rater, lambda: Contest([("ann", 0, 0), ("zed", 1, 1)], name="weighty",
                                         weight=weight))
    check_names(err, "weighty", None)
    assert "weight" in str(err)


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf])
def test_non_finite_time(rater: Rater, t: float) -> None:
    err = attempt(rater, lambda: Contest([("ann", 0, 0), ("zed", 1, 1)], name="timeless",
                                         time_seconds=t))
    check_names(err, "timeless", None)
    assert "time" in str(err)


@pytest.mark.parametrize("ceiling", [math.nan, -math.inf])
def test_bad_ceiling(rater: Rater, ceiling: float) -> None:
    err = attempt(rater, lambda: Contest([("ann", 0, 0), ("zed", 1, 1)], name="capped",
                                         perf_ceiling=ceiling))
    check_names(err, "capped", None)
    assert "ceiling" in str(err)


@pytest.mark.parametrize(
    "standings",
    [
        [("ann", 0.5, 0), ("zed", 1, 1)],
        [("ann", 0, 0), ("zed", 1.5, 1.5)],
        [("ann", 0, 0), ("zed", "1", 1)],
        [("ann", 0, 0), ("zed", None, 1)],
        [("ann", 0, 0), ("zed", math.nan, 1)],
    ],
)
def test_non_integer_lo(rater: Rater, standings: list[Any]) -> None:
    err = attempt(rater, lambda: Contest(standings, name="fractional"))
    check_names(err, "fractional", None)


@pytest.mark.parametrize("t", [0, 1_700_000_000, 2**53 + 1, 2**62 + 1, -5])
def test_integer_times_are_kept_exactly(t: int) -> None:
    """time_seconds is an integer (the reference stores u64/i64 seconds): whole numbers,
    also beyond 2**53, must not go through float rounding."""
    c = Contest([("ann", 0, 0), ("zed", 1, 1)], name="when", time_seconds=t)
    assert c.time_seconds == t
    assert type(c.time_seconds) is int
    c = Contest([("ann", 0, 0), ("zed", 1, 1)], name="when", time_seconds=np.int64(t))
    assert c.time_seconds == t


def test_fractional_time_is_rejected() -> None:
    with pytest.raises(ContestError) as info:
        Contest([("ann", 0, 0), ("zed", 1, 1)], name="when", time_seconds=1.5)
    check_names(info.value, "when", None)


def test_integral_floats_are_accepted() -> None:
    c = Contest([("ann", 0.0, 0.0), ("zed", 1.0, 1.0)], name="floats")
    assert c.standings == [("ann", 0, 0), ("zed", 1, 1)]


def test_not_a_triple(rater: Rater) -> None:
    err = attempt(rater, lambda: Contest([("ann", 0, 0), ("zed", 1)], name="pairs"))
    check_names(err, "pairs", None)


@pytest.mark.parametrize("places", [[1, math.nan], [1, math.inf], [0, 1]])
def test_bad_places_name_the_player(rater: Rater, places: list[float]) -> None:
    err = attempt(rater, lambda: Contest.from_places(["ann", "zed"], places, name="places"))
    check_names(err, "places", "zed" if places[0] == 1 else "ann")


def test_bad_score_names_the_player(rater: Rater) -> None:
    err = attempt(rater, lambda: Contest.from_scores(["ann", "zed"], [3.0, math.nan],
                                                     name="scores"))
    check_names(err, "scores", "zed")


def test_json_dict_errors_name_the_contest() -> None:
    d = {"name": "from json", "time_seconds": 0,
         "standings": [["ann", 0, 0], ["ann", 1, 1]]}
    with pytest.raises(ContestError) as info:
        contest_from_json_dict(d, source="x.json")
    assert "from json" in str(info.value)
    assert "ann" in str(info.value)


# ---------------------------------------------------------------------- everybody ties
@pytest.mark.parametrize("n", [1, 2, 5])
def test_everybody_tied_changes_nothing_when_skipped(n: int) -> None:
    """One player: never rated (one side); two or more: with ``all_tied="skip"``."""
    rater = warmed(**({} if n == 1 else {"all_tied": "skip"}))
    handles = ["ann", "bob", "newbie", "cat", "dan"][:n]
    before = snapshot(rater)
    rep = rater.add(Contest([(h, 0, n - 1) for h in handles], name="draw", time_seconds=500))
    assert rep.skipped is True
    assert rep.new_players == 0
    after = snapshot(rater)
    pd.testing.assert_frame_equal(after[0], before[0])
    pd.testing.assert_frame_equal(after[1], before[1])
    assert after[3] == before[3]
    assert "newbie" not in rater.players.index
    # a later real contest rates as if the tied one never happened
    reference = Rater("mmr")
    reference.add(Contest([("ann", 0, 0), ("bob", 1, 2), ("cat", 1, 2)], name="warm-up 1",
                          time_seconds=100))
    reference.add(Contest([("cat", 0, 0), ("ann", 1, 1), ("dan", 2, 2)], name="warm-up 2",
                          time_seconds=200))
    nxt = Contest([("dan", 0, 0), ("ann", 1, 1), ("bob", 2, 2)], name="next", time_seconds=600)
    rater.add(nxt)
    reference.add(nxt)
    a = rater.ratings(sort=False).set_index("handle").sort_index()
    b = reference.ratings(sort=False).set_index("handle").sort_index()
    np.testing.assert_array_equal(a["mu"], b["mu"])
    np.testing.assert_array_equal(a["sigma"], b["sigma"])


def test_everybody_tied_for_a_fresh_rater() -> None:
    r = Rater("mmr-fast", all_tied="skip")
    rep = r.add(Contest([("a", 0, 2), ("b", 0, 2), ("c", 0, 2)], name="all equal"))
    assert rep.skipped
    assert r.num_players == 0
    assert len(r.ratings()) == 0
    assert len(r.events_frame()) == 0
    # rated by default: a draw of three newcomers leaves them at the prior mu
    r = Rater("mmr-fast")
    rep = r.add(Contest([("a", 0, 2), ("b", 0, 2), ("c", 0, 2)], name="all equal"))
    assert not rep.skipped and r.num_players == 3
    assert r.ratings()["mu"].tolist() == [1500.0] * 3
    assert r.events_frame()["place"].tolist() == [0, 0, 0]


def test_contest_is_outcome_free_flag() -> None:
    assert Contest([("a", 0, 1), ("b", 0, 1)]).is_outcome_free
    assert Contest([("a", 0, 0)]).is_outcome_free
    assert not Contest([("a", 0, 0), ("b", 1, 1)]).is_outcome_free


# ---------------------------------------------------------------------- builders
@pytest.mark.parametrize("places", [[1, 1, 3], [1, 1, 2], [10, 10, 20]])
def test_from_places_ties(places: list[int]) -> None:
    c = Contest.from_places(["a", "b", "c"], places, name="p")
    assert c.standings == [("a", 0, 1), ("b", 0, 1), ("c", 2, 2)]
    assert list(c.places) == [1, 1, 3]


def test_from_places_sorts_best_first_and_keeps_input_order_in_ties() -> None:
    c = Contest.from_places(["c", "b", "a", "d"], [3, 1, 1, 2], name="p")
    assert c.standings == [("b", 0, 1), ("a", 0, 1), ("d", 2, 2), ("c", 3, 3)]
    dense = Contest.from_places(["c", "b", "a", "d"], [4, 1, 1, 3], name="p")
    assert dense.standings == c.standings


def test_from_places_keeps_metadata() -> None:
    c = Contest.from_places(["a", "b"], [2, 1], name="meta", time_seconds=42, weight=1.5,
                            perf_ceiling=2000.0, url="https://example.invalid/c")
    assert (c.name, c.time_seconds, c.weight, c.perf_ceiling, c.url) == (
        "meta", 42, 1.5, 2000.0, "https://example.invalid/c")


def test_from_scores_ties_equal_scores() -> None:
    c = Contest.from_scores(["a", "b", "c", "d"], [10.0, 30.0, 10.0, 20.0], name="s")
    assert c.standings == [("b", 0, 0), ("d", 1, 1), ("a", 2, 3), ("c", 2, 3)]
    low = Contest.from_scores(["a", "b", "c", "d"], [10.0, 30.0, 10.0, 20.0],
                              higher_is_better=False, name="s")
    assert low.standings == [("a", 0, 1), ("c", 0, 1), ("d", 2, 2), ("b", 3, 3)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=25))
def test_from_places_matches_a_direct_tie_computation(places: list[int]) -> None:
    handles = [f"p{k}" for k in range(len(places))]
    c = Contest.from_places(handles, places, name="h")
    pos = {h: k for k, h in enumerate(c.handles)}
    for h, p in zip(handles, places, strict=True):
        lo = sum(q < p for q in places)
        hi = sum(q <= p for q in places) - 1
        k = pos[h]
        assert (int(c.lo[k]), int(c.hi[k])) == (lo, hi)
    # from_scores with negated places gives the same contest
    s = Contest.from_scores(handles, [-float(p) for p in places], name="h")
    assert s.standings == c.standings


# ---------------------------------------------------------------------- JSON form
@pytest.mark.parametrize(
    "meta",
    [
        {},
        {"weight": 1.5},
        {"perf_ceiling": 2100.0, "url": "https://example.invalid/round/7"},
        {"weight": 0.75, "perf_ceiling": math.inf, "time_seconds": 1_700_000_000},
    ],
)
def test_json_round_trip(meta: dict[str, Any]) -> None:
    c = Contest([("ann", 0, 1), ("bob", 0, 1), ("cat", 2, 2)], name="round 7",
                **{"time_seconds": 123, **meta})
    d = c.to_json_dict()
    assert d["standings"] == [["ann", 0, 1], ["bob", 0, 1], ["cat", 2, 2]]
    assert ("weight" in d) == ("weight" in meta)
    assert ("perf_ceiling" in d) == ("perf_ceiling" in meta)
    back = contest_from_json_dict(d, source="mem")
    assert back == c
    # through actual JSON text as well
    again = contest_from_json_dict(json.loads(json.dumps(d)), source="mem")
    assert again == c
