"""Team contests in the contest model, the files and the Rater (docs/teams.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from podium import Contest, Rater
from podium.errors import ContestError, DataFormatError
from podium.io.csv_long import read_contests_csv
from podium.io.json_contests import read_contest_json
from podium.io.results import write_results
from podium.io.writers import write_contest_json, write_contests_csv
from podium.systems.base import RoundInput, RoundOutput, SystemState
from podium.systems.cfsys import CFSys


def match(name: str = "m1", **meta: object) -> Contest:
    return Contest.from_teams(
        [("red", 0, 0, ["ann", ("bob", 0.5)]), ("blue", 1, 2, ["cid", "dee"]),
         ("gold", 1, 2, ["eve"])],
        name=name, time_seconds=100, **meta)


# ---------------------------------------------------------------- model
def test_team_contest_rows_ranges_and_weights() -> None:
    c = match()
    assert c.handles == ("ann", "bob", "cid", "dee", "eve")
    assert c.lo.tolist() == [0, 0, 1, 1, 1]
    assert c.hi.tolist() == [0, 0, 2, 2, 2]
    assert c.teams is not None
    assert c.teams.names == ("red", "blue", "gold")
    assert c.teams.offsets.tolist() == [0, 2, 4, 5]
    assert c.teams.weight.tolist() == [1.0, 0.5, 1.0, 1.0, 1.0]
    assert c.team_names == ("red", "red", "blue", "blue", "gold")
    assert c.n_teams == 3 and len(c) == 5
    assert c.team_round
    assert not c.is_outcome_free


def test_one_member_teams_of_weight_one_are_an_individual_round() -> None:
    c = Contest.from_teams([("a", 0, 0, ["a"]), ("b", 1, 1, ["b"])], name="solo")
    assert c.teams is not None and not c.team_round
    weighted = Contest.from_teams([("a", 0, 0, [("a", 0.5)]), ("b", 1, 1, ["b"])], name="w")
    assert weighted.team_round


def test_all_teams_tied_is_outcome_free() -> None:
    c = Contest.from_teams([("x", 0, 1, ["a", "b"]), ("y", 0, 1, ["c"])], name="draw")
    assert c.is_outcome_free


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("r", 0, 0, ["a"]), ("b", 1, 1, ["c", "a"])],
         "contest 'q', player 'a': the player is in two teams ('r' and 'b')"),
        ([("r", 0, 0, ["a", "a"]), ("b", 1, 1, ["c"])],
         "contest 'q', player 'a': the player is twice in team 'r'"),
        ([("r", 0, 0, []), ("b", 1, 1, ["c"])], "contest 'q', team 'r': the team has no members"),
        ([("r", 0, 0, [("a", 0.0)]), ("b", 1, 1, ["c"])],
         "contest 'q', team 'r', player 'a': member weight must be in (0, 1], got 0.0"),
        ([("r", 0, 0, [("a", 1.5)]), ("b", 1, 1, ["c"])],
         "contest 'q', team 'r', player 'a': member weight must be in (0, 1], got 1.5"),
        ([("r", 0, 0, [("a", float("nan"))]), ("b", 1, 1, ["c"])],
         "contest 'q', team 'r', player 'a': member weight must be in (0, 1], got nan"),
        ([("r", 0, 0, ["a"]), ("r", 1, 1, ["c"])],
         "contest 'q', team 'r': two teams of the contest have this name"),
        ([("r", 0, 0, ["a"]), ("b", 0, 0, ["c"])],
         "contest 'q', team 'b': tie range (0, 0) does not contain the team's position 1"),
        ([("r", 0, 1, ["a"]), ("b", 1, 1, ["c"])],
         "contest 'q', team 'b': tie range (1, 1) at position 1 is not contiguous"),
    ],
)
def test_team_validation_names_contest_team_and_player(rows: list, message: str) -> None:
    with pytest.raises(ContestError) as exc:
        Contest.from_teams(rows, name="q")
    assert str(exc.value).startswith(message)


def test_from_team_places_groups_sorts_and_ties() -> None:
    c = Contest.from_team_places(["a", "b", "c", "d", "e"], ["x", "y", "x", "z", "y"],
                                 [2, 1, 2, 2, 1], [1, 1, 0.5, 1, 1], name="p")
    assert c.teams is not None
    assert c.teams.names == ("y", "x", "z")
    assert c.handles == ("b", "e", "a", "c", "d")
    assert c.lo.tolist() == [0, 0, 1, 1, 1] and c.hi.tolist() == [0, 0, 2, 2, 2]
    assert c.teams.weight.tolist() == [1, 1, 1, 0.5, 1]
    s = Contest.from_team_scores(["a", "b", "c"], ["x", "y", "x"], [3.0, 5.0, 3.0], name="s")
    assert s.handles == ("b", "a", "c") and s.lo.tolist() == [0, 1, 1]


def test_from_team_places_rejects_rows_of_a_team_that_disagree() -> None:
    with pytest.raises(ContestError, match="team 'x', player 'b': the rows of one team must "
                                           "share its place: 'a' has 1, 'b' has 2"):
        Contest.from_team_places(["a", "b", "c"], ["x", "x", "y"], [1, 2, 3], name="p")


# ---------------------------------------------------------------- files
def test_json_team_rows_round_trip(tmp_path: Path) -> None:
    c = match(weight=2.0, url="https://example.org/m1")
    path = tmp_path / "0.json"
    write_contest_json(c, path)
    doc = json.loads(path.read_text())
    assert doc["standings"][0] == ["red", 0, 0, ["ann", ["bob", 0.5]]]
    assert read_contest_json(path) == c


def test_json_mixes_team_rows_and_player_rows(tmp_path: Path) -> None:
    path = tmp_path / "0.json"
    path.write_text(json.dumps({"name": "mix", "time_seconds": 1, "standings": [
        ["red", 0, 0, ["ann", "bob"]], ["cid", 1, 1]]}))
    c = read_contest_json(path)
    assert c.teams is not None and c.teams.names == ("red", "cid")
    assert c.handles == ("ann", "bob", "cid")


@pytest.mark.parametrize(
    ("standings", "message"),
    [
        ([["red", 0, 0, "ann"], ["b", 1, 1]],
         "standings[0] (team 'red'): members must be an array of handles or [handle, weight] "
         "pairs, got string 'ann'"),
        ([["red", 0, 0, [["ann", "x"]]], ["b", 1, 1]],
         "standings[0] (team 'red'): member #0 must be a handle or a [handle, weight] pair"),
        ([["red", 0, 0.5, ["ann"]], ["b", 1, 1]],
         "standings[0] (team 'red'): hi must be an integer, got number 0.5"),
        ([[3, 0, 0, ["ann"]], ["b", 1, 1]],
         "standings[0]: the team name must be a string, got number 3"),
        ([["red", 0, 0, ["ann", ["bob", 2]]], ["b", 1, 1]],
         "contest 'bad', team 'red', player 'bob': member weight must be in (0, 1], got 2.0"),
        ([["red", 0, 0, []], ["b", 1, 1]], "contest 'bad', team 'red': the team has no members"),
        ([["red", 0, 0, ["ann"]], ["b", 1, 1, ["ann"]]],
         "contest 'bad', player 'ann': the player is in two teams ('red' and 'b')"),
    ],
)
def test_json_team_errors_name_file_contest_team_and_player(
    tmp_path: Path, standings: list, message: str
) -> None:
    path = tmp_path / "7.json"
    path.write_text(json.dumps({"name": "bad", "time_seconds": 1, "standings": standings}))
    with pytest.raises((ContestError, DataFormatError)) as exc:
        read_contest_json(path)
    assert str(exc.value).startswith(str(path))
    assert message in str(exc.value)


def test_csv_team_column_and_member_weight(tmp_path: Path) -> None:
    path = tmp_path / "games.csv"
    path.write_text(
        "contest,time,player,team,place,weight\n"
        "g1,10,ann,red,1,1\n"
        "g1,10,bob,red,1,0.5\n"
        "g1,10,cid,blue,2,\n"
        "g2,20,ann,red,2,1\n"
        "g2,20,cid,red,2,1\n"
        "g2,20,bob,blue,1,1\n"
    )
    g1, g2 = read_contests_csv(path)
    assert g1 == Contest.from_teams([("red", 0, 0, ["ann", ("bob", 0.5)]),
                                     ("blue", 1, 1, ["cid"])], name="g1", time_seconds=10)
    assert g2.teams is not None and g2.teams.names == ("blue", "red")
    out = tmp_path / "out.csv"
    write_contests_csv([g1, g2], out)
    assert out.read_text().splitlines()[0] == (
        "contest,time_seconds,player,place,name,team,member_weight")
    assert [c.to_json_dict() for c in read_contests_csv(out)] == [
        c.to_json_dict() for c in (g1, g2)]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("g1,10,ann,red,1\ng1,10,bob,,2\n",
         "line 3: contest 'g1', player 'bob': empty team"),
        ("g1,10,ann,red,1\ng1,10,bob,red,2\ng1,10,cid,blue,3\n",
         "line 3: contest 'g1', team 'red', player 'bob': the rows of one team must share its "
         "place"),
        ("g1,10,ann,red,1\ng1,10,ann,blue,2\n",
         "lines 2 and 3: contest 'g1', player 'ann': the player is in two teams"),
    ],
)
def test_csv_team_errors_name_file_line_contest_and_player(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("contest,time,player,team,place\n" + body)
    with pytest.raises((ContestError, DataFormatError)) as exc:
        read_contests_csv(path)
    assert str(exc.value).startswith(f"{path}, ")
    assert message in str(exc.value)


def test_csv_member_weight_out_of_range_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("contest,player,team,place,member_weight\ng,ann,red,1,1.5\ng,bob,b,2,1\n")
    with pytest.raises(DataFormatError, match=r"line 2: contest 'g', player 'ann', team 'red': "
                                              r"member weight must be in \(0, 1\], got '1.5'"):
        read_contests_csv(path)


# ---------------------------------------------------------------- rating
_SEEN: list[RoundInput] = []


@dataclass(frozen=True)
class _Recorder(CFSys):
    """cfsys that records what a team round looks like to a system."""

    name: ClassVar[str] = "recorder"
    team_rule: ClassVar[str | None] = "test only: every member keeps its rating"

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        if rnd.is_team_round:
            _SEEN.append(rnd)
            return RoundOutput(rnd.mu.copy(), rnd.sigma.copy(), np.zeros(rnd.mu.size))
        return super().round_update(state, rnd)


def test_a_system_sees_team_offsets_weights_and_team_ranges() -> None:
    _SEEN.clear()
    rater = Rater(_Recorder())
    rater.add(match())
    (rnd,) = _SEEN
    assert rnd.team_offsets is not None and rnd.team_offsets.tolist() == [0, 2, 4, 5]
    assert rnd.weight is not None and rnd.weight.tolist() == [1.0, 0.5, 1.0, 1.0, 1.0]
    assert rnd.lo.tolist() == [0, 0, 1, 1, 1]
    assert rater.players.handles == ["ann", "bob", "cid", "dee", "eve"]


def test_one_member_teams_rate_bit_identically_to_the_individual_contest() -> None:
    solo = [Contest([("a", 0, 0), ("b", 1, 2), ("c", 1, 2)], name="x", time_seconds=1),
            Contest([("c", 0, 0), ("a", 1, 1), ("b", 2, 2)], name="y", time_seconds=2)]
    as_teams = [Contest.from_teams([(h, lo, hi, [h]) for h, lo, hi in c.standings],
                                   name=c.name, time_seconds=c.time_seconds) for c in solo]
    for system in ("mmr", "trueskill", "codeforces", "elo-r", "glicko"):
        a = Rater(system)
        a.extend(solo)
        b = Rater(system)
        b.extend(as_teams)
        for k in ("mu", "sigma"):
            np.testing.assert_array_equal(getattr(a.players, k), getattr(b.players, k))
        assert b.events_frame()["team"].tolist()[:3] == ["a", "b", "c"]


@dataclass(frozen=True)
class _NoTeams(CFSys):
    name: ClassVar[str] = "no-teams"
    team_rule: ClassVar[str | None] = None


def test_a_system_without_a_team_rule_refuses_and_changes_nothing() -> None:
    rater = Rater(_NoTeams())
    rater.add(Contest([("ann", 0, 0), ("zed", 1, 1)], name="warm-up"))
    before = rater.to_arrays()
    with pytest.raises(ContestError, match="contest 'm1': system 'no-teams' does not rate team"):
        rater.add(match())
    after = rater.to_arrays()
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])


def test_histories_and_checkpoints_keep_the_team(tmp_path: Path) -> None:
    rater = Rater(_Recorder())
    rater.add(Contest([("ann", 0, 0), ("zed", 1, 1)], name="solo", time_seconds=1))
    rater.add(match())
    write_results(rater, tmp_path)
    lines = (tmp_path / "histories.csv").read_text().splitlines()
    assert lines[0].endswith(",place,team")
    by_handle = {}
    for line in lines[1:]:
        cells = line.split(",")
        by_handle.setdefault(cells[0], []).append(cells[-1])
    assert by_handle["ann"] == ["", "red"] and by_handle["zed"] == [""]
    assert by_handle["eve"] == ["gold"]
    hist = rater.history("bob")
    assert hist["team"].tolist() == ["red"]


def test_checkpoints_keep_the_teams(tmp_path: Path) -> None:
    rater = Rater("cfsys")
    rater.add(Contest([("ann", 0, 0), ("zed", 1, 1)], name="solo", time_seconds=1))
    rater.add(Contest.from_teams([("red", 0, 0, ["ann"]), ("blue", 1, 1, ["zed"])],
                                 name="duel", time_seconds=2))
    path = tmp_path / "ck.npz"
    rater.save(path)
    again = Rater.load(path)
    assert again.events.team_names == ["red", "blue"]
    teams = again.events_frame()["team"].tolist()
    assert [t if isinstance(t, str) else None for t in teams] == [None, None, "red", "blue"]
