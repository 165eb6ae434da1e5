"""Ladders over HTTP and on the command line (FastAPI TestClient on a SQLite store).

* ``GET /api/ladders`` lists them; every route is served under ``/api/ladders/{ladder}/``
  with the ladder's own data, and the old routes keep serving ``default``; an unknown
  ladder is 404 (API and pages).
* A token limited to some ladders writes there and nowhere else (403).
* The leaderboard's ``season``, ``as_of`` and ``include_provisional``; the provisional
  flag in the API and on the pages; the ladder picker and a player's page across
  ladders.
* ``podium ladder create/list/set/new-season/seasons``; ``--ladder`` on ingest (creating
  the ladder on first use), store delete/replace, explain, export, audit and token
  create; errors naming an unknown ladder or a refused name.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest, Rater  # noqa: E402
from podium.cli import main  # noqa: E402
from podium.io import synthetic_contests, write_contest_dir  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = 1_600_000_000


def _named(cs: list[Contest], tag: str) -> list[Contest]:
    return [Contest(c.standings, name=f"{tag} {c.name}", time_seconds=c.time_seconds)
            for c in cs]


MAIN = synthetic_contests(20, 5, seed=1, participation=0.8)
DUO = _named(synthetic_contests(16, 4, seed=2, participation=0.8), "duo")


@pytest.fixture()
def client(tmp_path: Path) -> Any:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with Store.create(url, "mmr") as store:
        store.ingest_many(MAIN)
        duo = store.create_ladder("duo", "glicko", provisional_contests=3)
        duo.ingest_many(DUO)
        store.create_ladder("Zoë league", "mmr")
    with TestClient(create_app(url, TOKEN)) as c:
        c.url_db = url  # type: ignore[attr-defined]
        yield c


def test_ladder_list_and_every_route_of_a_ladder(client: TestClient) -> None:
    got = client.get("/api/ladders").json()
    assert [x["name"] for x in got] == ["default", "duo", "Zoë league"]
    assert got[1]["system"] == "glicko" and got[1]["contests"] == 4
    assert got[1]["settings"]["provisional_contests"] == 3
    base = "/api/ladders/duo"
    ref = Rater("glicko")
    ref.extend(DUO)
    board = client.get(base + "/leaderboard?limit=100").json()
    assert [r["handle"] for r in board["rows"]] == ref.ratings()["handle"].tolist()
    assert board["total"] == len(ref.ratings())
    assert client.get(base + "/health").json()["ladder"] == "duo"
    assert client.get(base + "/stats").json()["system"] == "glicko"
    assert client.get(base + "/contests").json()["total"] == 4
    cid = DUO[1].name
    view = client.get(base + "/contests/" + quote(cid, safe="")).json()
    assert view["contest_id"] == cid and len(view["changes"]) == len(DUO[1])
    h = view["changes"][0]["handle"]
    assert client.get(f"{base}/players/{quote(h)}").json()["handle"] == h
    assert client.get(f"{base}/player", params={"handle": h}).status_code == 200
    assert client.get(f"{base}/search", params={"prefix": h[:2]}).json()["handles"]
    ex = client.get(f"{base}/contests/{quote(cid, safe='')}/players/{quote(h)}/explain")
    assert ex.status_code == 200 and ex.json()["system"] == "glicko"
    assert client.get(f"{base}/explain", params={"contest": cid, "handle": h}).status_code == 200
    assert client.post(f"{base}/predict", json={"handles": [h, "nobody"]}).status_code == 200
    bal = client.post(f"{base}/balance", json={"players": [h, "nobody", "x", "y"], "teams": 2})
    assert bal.status_code == 200 and bal.json()["model"]["system"] == "glicko"
    assert client.get(f"{base}/leaderboard/count").json()["count"] == board["total"]
    assert client.get(f"{base}/seasons").json()[0]["number"] == 1
    assert client.get(f"{base}/audit", headers=AUTH).json()["total"] == 4  # one per contest
    csv = client.get(f"{base}/export/ratings").text
    assert csv.count("\n") == 1 + board["total"]
    # the old routes serve default, and know nothing of duo's contests
    assert client.get("/api/contests/" + quote(cid, safe="")).status_code == 404
    assert client.get("/api/stats").json()["ladder"] == "default"
    assert client.get("/api/ladders/default/stats").json() == client.get("/api/stats").json()
    # writes and corrections of a ladder
    new = {"name": "duo extra", "time_seconds": T0 + 10**7,
           "standings": [["x1", 0, 0], ["x2", 1, 1]]}
    assert client.post(f"{base}/contests", json=new, headers=AUTH).status_code == 201
    assert client.get(f"{base}/contests").json()["total"] == 5
    assert client.get("/api/contests").json()["total"] == 5  # default's own five
    assert client.delete(f"{base}/contests/duo%20extra", headers=AUTH).status_code == 200
    # a name with a space and a non-ASCII letter
    z = "/api/ladders/" + quote("Zoë league")
    assert client.get(z + "/stats").json()["ladder"] == "Zoë league"


@pytest.mark.parametrize("path", ["/api/ladders/nope/leaderboard", "/api/ladders/nope/stats",
                                  "/api/ladders/nope/contests/x", "/api/ladders/%09/stats"])
def test_unknown_ladder_is_404(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404 and "ladder" in r.json()["detail"]


def test_pages_of_ladders(client: TestClient) -> None:
    picker = client.get("/ladders")
    assert picker.status_code == 200
    for name in ("default", "duo", "Zoë league"):
        assert name in picker.text
    assert 'href="/ladders/duo/"' in picker.text
    page = client.get("/ladders/duo/")
    assert page.status_code == 200 and "provisional" in page.text
    h = DUO[0].handles[0]
    player = client.get(f"/ladders/duo/players/{quote(h)}")
    assert player.status_code == 200 and 'href="/ladders/duo/contests/' in player.text
    # a player of both ladders: each page names the other ladder
    both = next(x for x in DUO[0].handles if any(x in c.handles for c in MAIN))
    home = client.get(f"/players/{quote(both)}")
    assert "In other ladders" in home.text and f"/ladders/duo/players/{quote(both)}" in \
        home.text
    assert client.get("/ladders/duo/contests").status_code == 200
    assert client.get("/ladders/nope/").status_code == 404
    assert client.get("/ladders/nope/players/x").status_code == 404


def test_token_limited_to_ladders(client: TestClient) -> None:
    with Store.open(client.url_db) as store:  # type: ignore[attr-defined]
        secret = store.create_token("duo-writer", "write", ["duo"])
    auth = {"Authorization": f"Bearer {secret}"}
    body = {"name": "by token", "time_seconds": T0 + 10**7,
            "standings": [["y1", 0, 0], ["y2", 1, 1]]}
    assert client.post("/api/ladders/duo/contests", json=body, headers=auth).status_code == 201
    r = client.post("/api/contests", json=body, headers=auth)
    assert r.status_code == 403 and "limited to the ladder(s) 'duo'" in r.json()["detail"]
    r = client.post("/api/ladders/" + quote("Zoë league") + "/contests", json=body, headers=auth)
    assert r.status_code == 403
    assert client.get("/api/stats").status_code == 200  # reads need no token


def test_seasons_as_of_and_provisional_over_http(client: TestClient) -> None:
    with Store.open(client.url_db) as store:  # type: ignore[attr-defined]
        final = store.ratings_frame()
        store.new_season("soft", time_seconds=MAIN[-1].time_seconds + 60)
    old = client.get("/api/leaderboard?season=1&limit=100").json()
    assert [r["handle"] for r in old["rows"]] == final["handle"].tolist()
    assert [r["mu"] for r in old["rows"]] == final["mu"].tolist()
    assert old["season"] == 1
    assert client.get("/api/leaderboard?season=9").status_code == 422
    assert client.get("/api/leaderboard?as_of=1999-01-01").status_code == 422
    assert client.get("/api/leaderboard?as_of=nonsense").status_code == 422
    later = client.get("/api/leaderboard?as_of=2100-01-01T00:00:00Z").json()
    assert later["as_of"] == 4102444800
    history = client.get(f"/api/players/{quote(final.handle[0])}").json()["history"]
    assert history[-1]["kind"] == "season" and history[-1]["contest_id"] == "season:2"
    board = client.get("/api/ladders/duo/leaderboard?limit=100").json()
    prov = [r for r in board["rows"] if r["provisional"]]
    assert prov and all(r["contests"] < 3 for r in prov)
    hidden = client.get("/api/ladders/duo/leaderboard?limit=100&include_provisional=false")
    assert len(hidden.json()["rows"]) == len(board["rows"]) - len(prov)
    assert hidden.json()["total"] == len(hidden.json()["rows"])
    assert client.get("/").status_code == 200
    assert "season 2" in client.get("/").text


# ---------------------------------------------------------------------- the CLI
def test_ladder_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "c.db")
    write_contest_dir(MAIN, tmp_path / "main")
    write_contest_dir(DUO, tmp_path / "duo")
    assert main(["ingest", str(tmp_path / "main"), "--db", db, "-q", "--no-progress"]) == 0
    # --ladder on ingest creates the ladder on first use (with --system)
    assert main(["ingest", str(tmp_path / "duo"), "--db", db, "--ladder", "duo",
                 "--system", "glicko", "-q", "--no-progress"]) == 0
    assert "ladder 'duo'" in capsys.readouterr().out
    assert main(["ladder", "create", "solo", "--db", db, "--system", "mmr",
                 "--provisional-contests", "2", "--prior-from", "default"]) == 0
    assert main(["ladder", "list", "--db", db, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [x["name"] for x in listed] == ["default", "duo", "solo"]
    assert listed[2]["settings"]["prior_from"] == "default"
    assert main(["ladder", "set", "duo", "--db", db, "--hide-provisional",
                 "--provisional-sigma", "100"]) == 0
    with Store.open(db, ladder="duo") as s:
        assert s.ladder_settings().hide_provisional and s.ladder_settings().provisional_sigma \
            == 100.0
    assert main(["ladder", "new-season", "default", "--db", db, "--reset", "soft:0.5",
                 "--time", str(MAIN[-1].time_seconds + 5)]) == 0
    assert "season 2 began" in capsys.readouterr().out
    assert main(["ladder", "seasons", "default", "--db", db, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    assert main(["explain", "--db", db, "--ladder", "duo", "--contest", DUO[0].name,
                 "--player", DUO[0].handles[0], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["system"] == "glicko"
    out = tmp_path / "r.csv"
    assert main(["export", "ratings", "--db", db, "--ladder", "duo", "-o", str(out)]) == 0
    assert out.read_text().count("\n") == 1 + len({h for c in DUO for h in c.handles})
    assert main(["store", "delete", DUO[3].name, "--db", db, "--ladder", "duo"]) == 0
    assert main(["audit", "--db", db, "--ladder", "duo", "--json"]) == 0
    audit = json.loads(capsys.readouterr().out.splitlines()[-1])
    actions = [e["action"] for e in audit["entries"]]  # newest first
    assert actions[:2] == ["delete", "ladder-set"] and actions.count("ingest") == 4
    assert main(["token", "create", "--db", db, "--role", "write", "--name", "t",
                 "--ladder", "duo"]) == 0
    with Store.open(db) as s:
        assert s.tokens()[0].ladders == ("duo",)
    assert main(["db-info", "--db", db, "--ladder", "duo", "--json"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["ingest", "{dir}", "--db", "{db}", "--ladder", "nope"], "no ladder 'nope'"),
    (["explain", "--db", "{db}", "--ladder", "nope", "--contest", "x", "--player", "y"],
     "no ladder 'nope'"),
    (["ladder", "new-season", "nope", "--db", "{db}"], "no ladder 'nope'"),
    (["ladder", "create", "", "--db", "{db}", "--system", "mmr"], "must not be empty"),
    (["ladder", "create", "x" * 65, "--db", "{db}", "--system", "mmr"], "at most 64"),
    (["ladder", "create", "a\x07b", "--db", "{db}", "--system", "mmr"], "control character"),
    (["token", "create", "--db", "{db}", "--role", "read", "--name", "t", "--ladder", "nope"],
     "no ladder 'nope'"),
])
def test_ladder_errors_name_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               argv: list[str], message: str) -> None:
    db = str(tmp_path / "e.db")
    write_contest_dir(MAIN[:2], tmp_path / "main")
    assert main(["ingest", str(tmp_path / "main"), "--db", db, "-q", "--no-progress"]) == 0
    capsys.readouterr()
    args = [a.replace("{db}", db).replace("{dir}", str(tmp_path / "main")) for a in argv]
    assert main(args) == 1
    assert message in capsys.readouterr().err
