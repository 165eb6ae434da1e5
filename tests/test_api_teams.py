"""Team contests and team predictions over HTTP (FastAPI TestClient, SQLite store).

Team contests are posted in the Elo-MMR JSON format with team rows and read back
(teams, place ranges, members with weights, each player's team in the history),
compared with a :class:`~podium.rater.Rater` over the same contests; the pages group a
contest's rows by team and show a player's team per contest; ``POST /api/predict``
with ``teams`` answers what :func:`podium.predict.predict_teams` computes (and a
hand-computed case).  The rating system is the test-only team Elo of
``tests/_team_system.py``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

import _store_cases as cases  # noqa: E402
import _team_system  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest, Rater  # noqa: E402
from podium.predict import predict_teams  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.systems import get_system  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKEN = "team-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HISTORY = _team_system.team_history()
DOCS = [c.to_json_dict() for c in HISTORY]


def assert_error(r: Any, status: int, *needles: str) -> str:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    for n in needles:
        assert n in detail, detail
    return detail


@pytest.fixture(scope="module")
def registered() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        yield _team_system.register(mp)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory, registered: str) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('api-teams') / 'teams.db'}"


@pytest.fixture(scope="module")
def client(db: str, registered: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, TOKEN, system=registered)) as c:
        r = c.post("/api/contests", json=DOCS[:4], headers=AUTH)
        assert r.status_code == 201, r.text
        for doc in DOCS[4:]:
            r = c.post("/api/contests", json=doc, headers=AUTH)
            assert r.status_code == 201, r.text
        yield c


@pytest.fixture(scope="module")
def batch(registered: str) -> Rater:
    r = Rater(registered)
    r.extend(HISTORY)
    return r


def test_posted_team_contests_equal_rater(client: TestClient, batch: Rater) -> None:
    rows = client.get("/api/leaderboard", params={"limit": 500}).json()["rows"]
    want = batch.ratings()
    assert [x["handle"] for x in rows] == want["handle"].tolist()
    assert [x["mu"] for x in rows] == want["mu"].tolist()  # bit for bit through JSON
    # posting a team contest again is a duplicate
    again = client.post("/api/contests", json=DOCS[3], headers=AUTH)
    assert again.status_code == 200 and again.json()["status"] == "duplicate"


def test_get_contest_gives_the_teams(client: TestClient, batch: Rater) -> None:
    ev = batch.events_frame()
    for k, c in enumerate(HISTORY):
        r = client.get(f"/api/contests/{c.url or c.name}")
        assert r.status_code == 200, r.text
        view = r.json()
        if c.teams is None:
            assert view["teams"] is None
            assert {ch["team"] for ch in view["changes"]} == {None}
            continue
        off = c.teams.offsets.tolist()
        assert view["teams"] == [
            {"name": nm, "lo": int(c.lo[a]), "hi": int(c.hi[a]),
             "members": [{"handle": h, "weight": w} for h, w in
                         zip(c.handles[a:b], c.teams.weight[a:b].tolist(), strict=True)]}
            for nm, a, b in zip(c.teams.names, off, off[1:], strict=False)]
        sub = ev[ev["contest_index"] == k]
        assert [ch["handle"] for ch in view["changes"]] == sub["handle"].tolist()
        assert [ch["team"] for ch in view["changes"]] == sub["team"].tolist()
        assert [ch["mu"] for ch in view["changes"]] == sub["mu"].tolist()
        if view["rated"]:
            assert [ch["weight"] for ch in view["changes"]] == c.teams.weight.tolist()
        else:
            assert view["changes"] == []


def test_player_history_gives_the_team(client: TestClient, batch: Rater) -> None:
    seen = set()
    for h in batch.players.handles:
        hist = client.get(f"/api/players/{h}").json()["history"]
        ref = batch.history(h)
        assert [x["team"] for x in hist] == [t if isinstance(t, str) else None
                                             for t in ref["team"]]
        seen |= {x["team"] is None for x in hist}
    assert seen == {True, False}


def test_bad_team_contests_are_refused(client: TestClient, db: str) -> None:
    before = cases.dump(db)
    t = HISTORY[-1].time_seconds + 100
    two_teams = {"name": "bad", "time_seconds": t, "standings": [
        ["a", 0, 0, ["p00", "p01"]], ["b", 1, 1, ["p02", "p00"]]]}
    assert_error(client.post("/api/contests", json=two_teams, headers=AUTH), 422,
                 "contest 'bad'", "player 'p00'", "in two teams ('a' and 'b')")
    weight = {"name": "bad", "time_seconds": t, "standings": [
        ["a", 0, 0, ["p00", ["p01", 1.5]]], ["b", 1, 1, ["p02"]]]}
    assert_error(client.post("/api/contests", json=weight, headers=AUTH), 422,
                 "team 'a'", "player 'p01'", "(0, 1]")
    assert_error(client.post("/api/contests", json=[DOCS[0], two_teams], headers=AUTH), 422,
                 "contest #1")
    # the same id with another team structure: a conflict
    moved = {**DOCS[3], "standings": [[f"{r[0]}!", *r[1:]] for r in DOCS[3]["standings"]]}
    assert_error(client.post("/api/contests", json=moved, headers=AUTH), 409,
                 "different content", "teams")
    assert cases.dump(db) == before


def test_systems_without_team_rule_answer_422(tmp_path: Path, registered: str) -> None:
    solo = _team_system.SOLO_NAME  # the test system with team_rule None
    with TestClient(create_app(f"sqlite:///{tmp_path / 's.db'}", TOKEN, system=solo)) as c:
        assert_error(c.post("/api/contests", json=DOCS[3], headers=AUTH), 422,
                     "contest 'match 3'", "does not rate team rounds")
        assert c.get("/api/health").json()["contests"] == 0


def test_pages_show_the_teams(client: TestClient) -> None:
    c = HISTORY[3]
    assert c.teams is not None
    page = client.get("/contests/" + c.url.replace("/", "%2F").replace(":", "%3A"))
    assert page.status_code == 200
    html = page.text
    assert html.count('class="team-row"') == len(c.teams)
    assert html.count('class="member-row"') == len(c)
    pos = [html.index(f">{nm}</span>") for nm in c.teams.names]
    assert pos == sorted(pos)  # best team first
    for nm, a, b in zip(c.teams.names, c.teams.offsets, c.teams.offsets[1:], strict=False):
        block = html[html.index(f">{nm}</span>"):]
        for h in c.handles[a:b]:
            assert f'href="/players/{h}"' in block
    assert f"in {len(c.teams)} teams" in html
    if any(c.teams.weight != 1):
        assert "×0." in html
    # the contest in which every team tied is a draw, rated: its teams and their changes
    tied = client.get(f"/contests/{HISTORY[6].name.replace(' ', '%20')}").text
    assert 'id="changes"' in tied and "not rated" not in tied
    for nm in HISTORY[6].teams.names:  # type: ignore[union-attr]
        assert f">{nm}</span>" in tied
    # an individual contest looks as before
    solo = client.get(f"/contests/{HISTORY[1].name.replace(' ', '%20')}").text
    assert "team-row" not in solo and "member-row" not in solo
    # the player page names the team of each team contest
    player = client.get("/players/p00").text
    assert "<th>Team</th>" in player
    hist = client.get("/api/players/p00").json()["history"]
    for x in hist:
        if x["team"]:
            assert f'<td class="team-name">{x["team"]}</td>' in player


# ---------------------------------------------------------------------- predictions
def test_predict_teams_round_trip(client: TestClient, batch: Rater, registered: str) -> None:
    ratings = {h: (float(r.mu), float(r.sigma), int(r.contests))
               for h, r in batch.ratings().set_index("handle").iterrows()}
    body = {"teams": [{"name": "red", "members": ["p00", {"handle": "p01", "weight": 0.5}]},
                      {"name": "blue", "members": ["p02", "newbie"]}],
            "handles": ["p03"], "weight": 0.8}
    r = client.post("/api/predict", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    want = predict_teams(get_system(registered),
                         [("red", ["p00", ("p01", 0.5)]), ("blue", ["p02", "newbie"]),
                          ("p03", ["p03"])], ratings, weight=0.8)
    assert out["team_win_probability"] == want.win_probability.tolist()
    assert [t["name"] for t in out["teams"]] == ["red", "blue", "p03"]
    assert [t["expected_place"] for t in out["teams"]] == want.expected_place.tolist()
    assert [t["mu"] for t in out["teams"]] == want.team_mu.tolist()
    assert [t["sigma"] for t in out["teams"]] == [math.sqrt(v) for v in want.team_variance]
    assert out["match_quality"] == want.match_quality
    assert out["win_probability"] is None
    assert [(p["handle"], p["team"], p["weight"], p["known"]) for p in out["players"]] == [
        ("p00", "red", 1.0, True), ("p01", "red", 0.5, True), ("p02", "blue", 1.0, True),
        ("newbie", "blue", 1.0, False), ("p03", "p03", 1.0, True)]
    assert sum(t["expected_place"] for t in out["teams"]) == pytest.approx(6.0)


def test_predict_teams_hand_computed(tmp_path: Path) -> None:
    """TrueSkill's model on an empty store: every player a newcomer (1500, 350), so a
    team of two against a team of one: M = 3000 vs 1500, V = 2 v vs v with
    v = 350^2 + 35^2 + 175^2 = 154350; mirrored teams: quality 1."""
    with TestClient(create_app(f"sqlite:///{tmp_path / 'ts.db'}", None,
                               system="trueskill")) as c:
        out = c.post("/api/predict", json={"teams": [{"name": "A", "members": ["a", "b"]},
                                                      {"name": "B", "members": ["c"]}]}).json()
        p = 0.5 * (1.0 + math.erf(1500.0 / math.sqrt(3 * 154350.0) / math.sqrt(2.0)))
        assert out["team_win_probability"][0][1] == pytest.approx(p, abs=1e-12)
        assert out["match_quality"] == pytest.approx(2 * (1 - p), abs=1e-12)
        assert out["model"]["kind"] == "gaussian"
        mirrored = c.post("/api/predict", json={"teams": [
            {"name": "A", "members": ["a", "b"]}, {"name": "B", "members": ["c", "d"]}]}).json()
        assert mirrored["match_quality"] == 1.0
        assert mirrored["team_win_probability"] == [[0.5, 0.5], [0.5, 0.5]]
        # players only: the match quality of the lobby of players
        solo = c.post("/api/predict", json={"handles": ["a", "b"]}).json()
        assert solo["match_quality"] == 1.0 and solo["teams"] is None


def test_predict_team_errors(client: TestClient) -> None:
    assert_error(client.post("/api/predict", json={}), 422, "give 'handles'", "'teams'")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": ["x"]}]}), 422, "at least two teams")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": ["x", "y"]}, {"name": "B", "members": ["y"]}]}), 422,
        "player 'y' is in two teams ('A' and 'B')")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": ["x"]}, {"name": "A", "members": ["y"]}]}), 422,
        "two teams are named 'A'")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": ["x"]}, {"name": "B", "members": []}]}), 422,
        "'teams.1.members'")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": [{"handle": "x", "weight": 0}]},
        {"name": "B", "members": ["y"]}]}), 422, "weight")
    assert_error(client.post("/api/predict", json={"teams": [
        {"name": "A", "members": ["x"]}], "handles": ["x"]}), 422,
        "player 'x' is in two teams")
    big = [{"name": f"t{k}", "members": [f"h{k}.{j}" for j in range(3)]} for k in range(67)]
    assert_error(client.post("/api/predict", json={"teams": big}), 422, "at most 200 players")
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/api/predict"]["post"]["requestBody"]["content"]["application/json"]
    assert "teams" in body["schema"]["properties"]
    assert "$ref" not in str(body["schema"]) and "teams" in body["examples"]
    post = spec["paths"]["/api/contests"]["post"]["requestBody"]["content"]["application/json"]
    assert "teams" in post["examples"]
    contest_view = spec["components"]["schemas"]["ContestView"]["properties"]
    assert "teams" in contest_view


def test_one_member_team_contest_on_mmr(tmp_path: Path) -> None:
    """A round of one-member teams is an individual round: any system takes it."""
    doc = DOCS[2]
    c = Contest.from_teams(doc["standings"], name=doc["name"], time_seconds=doc["time_seconds"])
    assert not c.team_round
    with TestClient(create_app(f"sqlite:///{tmp_path / 'm.db'}", TOKEN, system="mmr")) as cl:
        r = cl.post("/api/contests", json=doc, headers=AUTH)
        assert r.status_code == 201, r.text
        view = cl.get(f"/api/contests/{doc['name']}").json()
        assert [t["name"] for t in view["teams"]] == list(c.teams.names)  # type: ignore[union-attr]
        ref = Rater("mmr")
        ref.add(c)
        assert [ch["mu"] for ch in view["changes"]] == ref.events_frame()["mu"].tolist()


def test_page_of_an_unrated_team_contest_lists_its_teams(tmp_path: Path,
                                                         registered: str) -> None:
    """A store that skips draws (``all_tied="skip"``) leaves the contest in which every
    team tied unrated: its page says so and lists the teams."""
    url = f"sqlite:///{tmp_path / 'skip.db'}"
    with TestClient(create_app(url, TOKEN, system=registered,
                               params={"all_tied": "skip"})) as c:
        for doc in DOCS[:7]:
            assert c.post("/api/contests", json=doc, headers=AUTH).status_code == 201
        tied = c.get(f"/contests/{HISTORY[6].name.replace(' ', '%20')}").text
    assert "was not rated" in tied and 'id="teams"' in tied
    for nm in HISTORY[6].teams.names:  # type: ignore[union-attr]
        assert f">{nm}</td>" in tied
