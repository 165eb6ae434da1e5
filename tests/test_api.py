"""The HTTP API (FastAPI TestClient on a temporary SQLite store).

Every answer is checked against an independent computation: the batch
:class:`~podium.rater.Rater` over the same contests, or probabilities worked out by
hand.  Errors must be 4xx JSON ``{"detail": "..."}`` naming what is wrong, never 500.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Rater  # noqa: E402
from podium.core.contest import Contest  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DAY = 86_400


def _history() -> list[Contest]:
    """12 synthetic rounds, one of them identified by a URL (an id with slashes)."""
    out = []
    for k, c in enumerate(synthetic_contests(40, 12, seed=5, participation=0.7)):
        url = "https://example.org/contest/7" if k == 6 else None
        # rounds further apart in time, so that activity windows cut the field
        out.append(Contest.from_arrays(c.handles, c.lo, c.hi, name=c.name,
                                       time_seconds=c.time_seconds + k * 9 * DAY, url=url))
    return out


HISTORY = _history()


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('api') / 'api.db'}"
    with Store.create(url, "mmr") as store:
        for c in HISTORY:
            store.ingest(c)
    return url


@pytest.fixture(scope="module")
def client(db_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(db_url, TOKEN)) as c:
        yield c


@pytest.fixture(scope="module")
def batch() -> Rater:
    r = Rater("mmr")
    r.extend(HISTORY)
    return r


@pytest.fixture()
def fresh(tmp_path: Path) -> Iterator[TestClient]:
    """A writable app on an empty store of its own."""
    with TestClient(create_app(f"sqlite:///{tmp_path / 'w.db'}", TOKEN, system="mmr")) as c:
        yield c


def contest_json(name: str, t: int, handles: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": name, "time_seconds": t,
            "standings": [[h, k, k] for k, h in enumerate(handles)], **extra}


def assert_error(r: Any, status: int, *needles: str) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    detail = r.json()["detail"]
    assert isinstance(detail, str)
    for n in needles:
        assert n in detail, detail
    return detail


# ---------------------------------------------------------------------- reading
def test_health_and_openapi(client: TestClient) -> None:
    r = client.get("/api/health")
    assert r.status_code == 200
    h = r.json()
    assert h["status"] == "ok" and h["system"] == "mmr"
    assert h["contests"] == 12
    assert h["last_contest_time"] == HISTORY[-1].time_seconds
    assert h["writes_enabled"] is True
    s = client.get("/api/stats").json()
    assert s["players"] == 40 and s["contests"] == 12 and s["system"] == "mmr"
    assert s["events"] == sum(len(c) for c in HISTORY)
    assert s["params"]["sig_limit"] == 80.0
    spec = client.get("/openapi.json").json()
    for path in ("/api/health", "/api/stats", "/api/leaderboard", "/api/leaderboard/count",
                 "/api/search", "/api/players/{handle}", "/api/contests",
                 "/api/contests/{contest_id}", "/api/predict"):
        assert path in spec["paths"], path
    assert "post" in spec["paths"]["/api/contests"]
    assert "LeaderboardRow" in spec["components"]["schemas"]
    assert set(spec["components"]["schemas"]["HistoryRow"]["properties"]) >= {
        "contest_id", "perf", "place", "change", "display_rating"}
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    assert "/" not in [p for p in spec["paths"]]  # web pages stay out of the schema


class _AssetRefs(HTMLParser):
    """The ``src`` of scripts and ``href`` of links in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is not None and (tag, name) in (("script", "src"), ("link", "href")):
                self.urls.append((tag, value))


def test_docs_are_served_offline(client: TestClient) -> None:
    """/docs loads Swagger UI from the app itself: every asset URL is same-origin."""
    r = client.get("/docs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "SwaggerUIBundle" in r.text
    assert "://" not in r.text and "cdn" not in r.text.lower()  # nothing from elsewhere
    assert "url: '/openapi.json'" in r.text
    assert '"validatorUrl": null' in r.text  # no badge from the public validator
    refs = _AssetRefs()
    refs.feed(r.text)
    # the script, the style sheet and the icon
    assert sorted(tag for tag, _ in refs.urls) == ["link", "link", "script"]
    for tag, url in refs.urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc and url.startswith("/"), url
        asset = client.get(url)
        assert asset.status_code == 200, url
        ctype = asset.headers["content-type"]
        if tag == "script":
            assert ctype.startswith(("text/javascript", "application/javascript")), ctype
            assert b"SwaggerUIBundle" in asset.content
        elif url.endswith(".css"):
            assert ctype.startswith("text/css") and b"swagger-ui" in asset.content
        else:
            assert ctype == "image/png", (url, ctype)
    # ReDoc exists only as a CDN script: not served; unknown assets are 404
    assert client.get("/redoc").status_code == 404
    assert client.get("/docs/static/no-such-file.js").status_code == 404


def test_docs_fall_back_without_the_bundle(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without swagger-ui-bundle-v2 the app still starts and /docs is FastAPI's page."""
    import podium.service.app as app_module

    monkeypatch.setattr(app_module, "swagger_ui_dir", lambda: None)
    with TestClient(create_app(db_url, None)) as c:
        r = c.get("/docs")
        assert r.status_code == 200 and "SwaggerUIBundle" in r.text
        assert c.get("/docs/static/swagger-ui.css").status_code == 404


def test_leaderboard_equals_batch_rater(client: TestClient, batch: Rater) -> None:
    expected = batch.ratings()
    r = client.get("/api/leaderboard", params={"limit": 500})
    assert r.status_code == 200
    page = r.json()
    assert page["total"] == len(expected) == 40
    rows = page["rows"]
    assert [x["handle"] for x in rows] == expected["handle"].tolist()
    assert [x["rank"] for x in rows] == list(range(1, 41))
    for x, (_, e) in zip(rows, expected.iterrows(), strict=True):
        for key in ("mu", "sigma", "display_rating", "max_display_rating", "last_change"):
            assert x[key] == pytest.approx(e[key], rel=1e-12, abs=1e-9), (x["handle"], key)
        assert x["contests"] == e["contests"]
        assert x["last_contest_time"] == e["last_contest_time"]
    # paging: rows 6..10
    r = client.get("/api/leaderboard", params={"offset": 5, "limit": 5}).json()
    assert [x["handle"] for x in r["rows"]] == expected["handle"].tolist()[5:10]
    assert [x["rank"] for x in r["rows"]] == [6, 7, 8, 9, 10]
    assert client.get("/api/leaderboard", params={"offset": 40}).json()["rows"] == []


def test_leaderboard_activity_window(client: TestClient, batch: Rater) -> None:
    df = batch.ratings()
    last = HISTORY[-1].time_seconds
    for days in (1, 10, 30, 60):
        since = last - days * DAY
        want = df[df["last_contest_time"] >= since]["handle"].tolist()
        page = client.get("/api/leaderboard", params={"active_days": days, "limit": 500}).json()
        assert page["active_since"] == since
        assert [x["handle"] for x in page["rows"]] == want, days
        assert [x["rank"] for x in page["rows"]] == list(range(1, len(want) + 1))
        assert page["total"] == len(want)
    assert 0 < len(df[df["last_contest_time"] >= last - 10 * DAY]) < 40  # the window cuts


def test_count_in_rating_range(client: TestClient, batch: Rater) -> None:
    d = batch.ratings()["display_rating"]
    for lo, hi in ((1400.0, 1600.0), (None, 1500.0), (1500.0, None), (None, None)):
        params = {k: v for k, v in (("min_rating", lo), ("max_rating", hi)) if v is not None}
        got = client.get("/api/leaderboard/count", params=params).json()["count"]
        mask = (d >= (lo if lo is not None else -math.inf)) & (
            d < (hi if hi is not None else math.inf))
        assert got == int(mask.sum()), (lo, hi)
    # a boundary exactly at a player's rating: [min, max)
    x = float(d.iloc[3])
    assert client.get("/api/leaderboard/count", params={"min_rating": x, "max_rating": x}
                      ).json()["count"] == 0
    assert client.get("/api/leaderboard/count", params={"min_rating": x}).json()["count"] == 4
    assert_error(client.get("/api/leaderboard/count", params={"min_rating": 1600,
                                                              "max_rating": 1500}),
                 422, "min_rating", "max_rating")
    assert_error(client.get("/api/leaderboard/count", params={"min_rating": "high"}), 422,
                 "'min_rating'")


def test_bad_query_parameters_name_the_field(client: TestClient) -> None:
    assert_error(client.get("/api/leaderboard", params={"limit": 0}), 422, "'limit'")
    assert_error(client.get("/api/leaderboard", params={"limit": 100_000}), 422, "'limit'")
    assert_error(client.get("/api/leaderboard", params={"offset": -1}), 422, "'offset'")
    assert_error(client.get("/api/leaderboard", params={"active_days": "soon"}), 422,
                 "'active_days'")
    assert_error(client.get("/api/leaderboard", params={"active_days": "nan"}), 422,
                 "'active_days'")
    assert_error(client.get("/api/search"), 422, "'prefix'")


def test_search_prefix(client: TestClient, batch: Rater) -> None:
    df = batch.ratings()
    want = [h for h in df["handle"] if h.startswith("p1")]
    assert len(want) == 10
    r = client.get("/api/search", params={"prefix": "P1", "limit": 50}).json()
    assert r["handles"] == want  # case-insensitive, best rated first
    assert client.get("/api/search", params={"prefix": "p1", "limit": 3}).json()["handles"] \
        == want[:3]
    assert client.get("/api/search", params={"prefix": "zz"}).json()["handles"] == []
    assert client.get("/api/search", params={"prefix": "p_"}).json()["handles"] == []


def test_player_and_history(client: TestClient, batch: Rater) -> None:
    df = batch.ratings()
    handle = df["handle"].iloc[7]
    r = client.get(f"/api/players/{handle}")
    assert r.status_code == 200
    p = r.json()
    assert p["rank"] == 8
    assert p["display_rating"] == pytest.approx(df["display_rating"].iloc[7], rel=1e-12)
    hist = batch.history(handle)
    assert [h["index"] for h in p["history"]] == hist["contest_index"].tolist()
    assert [h["contest_name"] for h in p["history"]] == hist["contest_name"].tolist()
    assert [h["mu"] for h in p["history"]] == pytest.approx(hist["mu"].tolist(), rel=1e-12)
    assert [h["perf"] for h in p["history"]] == pytest.approx(hist["perf"].tolist(), rel=1e-12)
    assert [h["place"] for h in p["history"]] == hist["place"].tolist()
    assert_error(client.get("/api/players/nobody"), 404, "player 'nobody' not found")


def test_contest_view_and_list(client: TestClient, batch: Rater) -> None:
    lst = client.get("/api/contests", params={"limit": 5}).json()
    assert lst["total"] == 12
    assert [c["name"] for c in lst["contests"]] == [c.name for c in HISTORY[::-1][:5]]
    c2 = HISTORY[2]
    r = client.get("/api/contests/synthetic%20round%203")
    assert r.status_code == 200
    v = r.json()
    assert v["name"] == c2.name and v["index"] == 2 and v["players"] == len(c2)
    assert [x["handle"] for x in v["changes"]] == list(c2.handles)
    ev = batch.events_frame()
    ev = ev[ev["contest_index"] == 2].set_index("handle")
    for x in v["changes"]:
        assert x["mu"] == pytest.approx(ev.loc[x["handle"], "mu"], rel=1e-12)
        if x["old_display"] is not None:
            assert x["change"] == pytest.approx(x["new_display"] - x["old_display"], abs=1e-9)
    # an id with slashes, raw or percent-encoded
    for path in ("/api/contests/https://example.org/contest/7",
                 "/api/contests/https%3A%2F%2Fexample.org%2Fcontest%2F7"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.json()["contest_id"] == "https://example.org/contest/7"
    assert_error(client.get("/api/contests/no-such-round"), 404, "'no-such-round' not found")


def test_unknown_routes_and_methods(client: TestClient) -> None:
    assert_error(client.get("/api/nothing"), 404, "GET /api/nothing")
    assert_error(client.put("/api/contests", json={}), 405)
    page = client.get("/no/such/page")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")


def test_web_pages_render(client: TestClient, batch: Rater) -> None:
    top = batch.ratings()["handle"].iloc[0]
    home = client.get("/")
    assert home.status_code == 200 and f'href="/players/{top}"' in home.text
    player = client.get(f"/players/{top}")
    assert player.status_code == 200 and 'class="rating-line"' in player.text
    contest = client.get("/contests/https%3A%2F%2Fexample.org%2Fcontest%2F7")
    assert contest.status_code == 200 and "synthetic round 7" in contest.text
    r = client.get("/search", params={"q": top}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/players/{top}"
    assert client.get("/static/search.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200
    assert "https://" not in home.text.replace("https://example.org", "")  # nothing external


# ---------------------------------------------------------------------- predictions
def test_predict_hand_computed(client: TestClient, batch: Rater) -> None:
    df = batch.ratings().set_index("handle")
    a, b = df.index[0], df.index[5]
    r = client.post("/api/predict", json={"handles": [a, b, "newcomer"]})
    assert r.status_code == 200, r.text
    out = r.json()
    # Elo-MMR (mmr defaults): v = sigma^2 + gamma^2 + beta^2, gamma^2 = 0.2 * 80^2 = 1280,
    # beta^2 = (1 + 1/0.2) * 80^2 = 38400; logistic of unit variance on the difference
    mu = [df.loc[a, "mu"], df.loc[b, "mu"], 1500.0]
    var = [df.loc[a, "sigma"] ** 2 + 39680, df.loc[b, "sigma"] ** 2 + 39680, 350.0**2 + 39680]

    def p(i: int, j: int) -> float:
        z = (mu[i] - mu[j]) / math.sqrt(var[i] + var[j])
        return 1.0 / (1.0 + math.exp(-math.pi * z / math.sqrt(3.0)))

    w = out["win_probability"]
    for i in range(3):
        for j in range(3):
            assert w[i][j] == pytest.approx(0.5 if i == j else p(i, j), abs=1e-12)
    places = [pl["expected_place"] for pl in out["players"]]
    assert places == pytest.approx([1 + sum(p(j, i) for j in range(3) if j != i)
                                    for i in range(3)], abs=1e-12)
    assert sum(places) == pytest.approx(6.0)
    assert [pl["known"] for pl in out["players"]] == [True, True, False]
    assert out["model"]["kind"] == "logistic" and out["model"]["system"] == "mmr"


def test_predict_errors(client: TestClient) -> None:
    # any Content-Type (curl -d sends a form type): the body is read as JSON
    ok = client.post("/api/predict", content=b'{"handles": ["p01", "p02"]}',
                     headers={"content-type": "application/x-www-form-urlencoded"})
    assert ok.status_code == 200 and len(ok.json()["players"]) == 2
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/api/predict"]["post"]["requestBody"]["content"]["application/json"]
    assert "handles" in body["schema"]["properties"]
    assert_error(client.post("/api/predict", json={"handles": []}), 422, "'handles'")
    assert_error(client.post("/api/predict", json={"handles": ["a", "a"]}), 422,
                 "'a' is listed twice")
    assert_error(client.post("/api/predict", json={"handles": [f"h{k}" for k in range(201)]}),
                 422, "'handles'", "200")
    assert_error(client.post("/api/predict", json={"handles": ["a"], "weight": 0}), 422,
                 "'weight'")
    assert_error(client.post("/api/predict", json={"handles": ["a"], "x": 1}), 422, "'x'")
    assert_error(client.post("/api/predict", json={"players": ["a"]}), 422, "'handles'")
    assert_error(client.post("/api/predict", content=b"{nope",
                             headers={"content-type": "application/json"}), 400, "JSON")


# ---------------------------------------------------------------------- writing
def test_writes_need_the_token(fresh: TestClient, db_url: str) -> None:
    body = contest_json("r1", 1_700_000_000, ["a", "b"])
    r = fresh.post("/api/contests", json=body)
    assert_error(r, 401, "Authorization")
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert_error(fresh.post("/api/contests", json=body,
                            headers={"Authorization": "Bearer wrong"}), 401, "wrong bearer token")
    assert_error(fresh.post("/api/contests", json=body,
                            headers={"Authorization": f"Basic {TOKEN}"}), 401, "Bearer")
    assert fresh.get("/api/health").json()["contests"] == 0  # nothing was written
    with TestClient(create_app(db_url, None)) as ro:
        assert ro.get("/api/health").json()["writes_enabled"] is False
        assert_error(ro.post("/api/contests", json=body, headers=AUTH), 401,
                     "writes are disabled")


def test_post_apply_duplicate_conflict_older(fresh: TestClient) -> None:
    t = 1_700_000_000
    r = fresh.post("/api/contests", json=contest_json("r1", t, ["a", "b", "c"]), headers=AUTH)
    assert r.status_code == 201, r.text
    res = r.json()
    assert res["status"] == "applied" and res["contest_id"] == "r1"
    assert res["players"] == 3 and res["new_players"] == 3 and res["index"] == 0
    again = fresh.post("/api/contests", json=contest_json("r1", t, ["a", "b", "c"]),
                       headers=AUTH)
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert_error(fresh.post("/api/contests", json=contest_json("r1", t, ["c", "b", "a"]),
                            headers=AUTH), 409, "'r1'")
    r2 = fresh.post("/api/contests", json=contest_json("r2", t + 100, ["b", "d"],
                                                       url="https://x.org/r/2"), headers=AUTH)
    assert r2.status_code == 201 and r2.json()["contest_id"] == "https://x.org/r/2"
    older = contest_json("r0", t - 100, ["a", "d"])
    detail = assert_error(fresh.post("/api/contests", json=older, headers=AUTH), 409,
                          "older than the latest", "recompute_from=true")
    assert "'r0'" in detail
    r3 = fresh.post("/api/contests", params={"recompute_from": "true"}, json=older,
                    headers=AUTH)
    assert r3.status_code == 201 and r3.json()["status"] == "recomputed"
    assert r3.json()["index"] == 0 and r3.json()["recomputed"] == 2
    # the end state equals the batch run over the contests in time order
    batch = Rater("mmr")
    for doc in (older, contest_json("r1", t, ["a", "b", "c"]),
                contest_json("r2", t + 100, ["b", "d"], url="https://x.org/r/2")):
        batch.add(Contest(doc["standings"], name=doc["name"], time_seconds=doc["time_seconds"],
                          url=doc.get("url")))
    rows = fresh.get("/api/leaderboard").json()["rows"]
    want = batch.ratings()
    assert [x["handle"] for x in rows] == want["handle"].tolist()
    assert [x["mu"] for x in rows] == pytest.approx(want["mu"].tolist(), rel=1e-12)
    # explicit ids
    r4 = fresh.post("/api/contests", params={"contest_id": "custom-7"},
                    json=contest_json("", t + 200, ["a", "b"]), headers=AUTH)
    assert r4.status_code == 201 and r4.json()["contest_id"] == "custom-7"
    assert_error(fresh.post("/api/contests", json=contest_json("", t + 300, ["a", "b"]),
                            headers=AUTH), 422, "neither 'url' nor 'name'")


def test_post_a_list_is_one_batch(fresh: TestClient) -> None:
    """A JSON list is checked whole, stored in one transaction, answered per contest."""
    docs = [c.to_json_dict() for c in HISTORY[:6]]
    r = fresh.post("/api/contests", json=docs[:4], headers=AUTH)
    assert r.status_code == 201, r.text
    assert [(x["status"], x["index"], x["name"]) for x in r.json()] == [
        ("applied", k, HISTORY[k].name) for k in range(4)]
    # already stored, repeated in the list, new: one answer each, in order
    r = fresh.post("/api/contests", json=[docs[2], docs[4], docs[4], docs[5]], headers=AUTH)
    assert r.status_code == 201, r.text
    assert [(x["status"], x["index"]) for x in r.json()] == [
        ("duplicate", 2), ("applied", 4), ("duplicate", 4), ("applied", 5)]
    again = fresh.post("/api/contests", json=docs[:6], headers=AUTH)
    assert again.status_code == 200 and {x["status"] for x in again.json()} == {"duplicate"}
    batch = Rater("mmr")
    batch.extend(HISTORY[:6])
    rows = fresh.get("/api/leaderboard", params={"limit": 500}).json()["rows"]
    want = batch.ratings()
    assert [x["handle"] for x in rows] == want["handle"].tolist()
    assert [x["mu"] for x in rows] == want["mu"].tolist()  # bit for bit through JSON
    # nothing of a bad list is stored
    more = [c.to_json_dict() for c in HISTORY[6:9]]
    bad = [more[0], {**more[1], "standings": [["x", 0, 0], ["x", 1, 1]]}, more[2]]
    assert_error(fresh.post("/api/contests", json=bad, headers=AUTH), 422,
                 "request body, contest #1", "duplicate handle")
    swapped = {**docs[3], "standings": docs[3]["standings"][1::-1] + docs[3]["standings"][2:]}
    swapped["standings"][0][1:] = [0, 0]
    swapped["standings"][1][1:] = [1, 1]
    assert_error(fresh.post("/api/contests", json=[more[0], swapped], headers=AUTH), 409,
                 "contest #1", "of the batch", "different content")
    assert_error(fresh.post("/api/contests", json=[more[1], more[0]], headers=AUTH), 409,
                 "contest #1", "older than the contest before it")
    assert fresh.get("/api/health").json()["contests"] == 6
    assert_error(fresh.post("/api/contests", json=[], headers=AUTH), 422, "empty list")
    assert_error(fresh.post("/api/contests", params={"contest_id": "x"}, json=more,
                            headers=AUTH), 422, "apply to one contest")
    assert_error(fresh.post("/api/contests", json=more), 401, "Authorization")
    r = fresh.post("/api/contests", json=more, headers=AUTH)
    assert r.status_code == 201 and [x["index"] for x in r.json()] == [6, 7, 8]


def test_body_limit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'small.db'}"
    with TestClient(create_app(url, TOKEN, max_body_bytes=2_000, system="mmr")) as c:
        big = contest_json("big", 1, [f"player{k}" for k in range(200)])
        assert len(json.dumps(big)) > 2_000
        assert_error(c.post("/api/contests", json=big, headers=AUTH), 413, "2000 bytes")
        # chunked, no Content-Length: counted while reading
        data = json.dumps(big).encode()

        def chunks() -> Iterator[bytes]:
            for k in range(0, len(data), 500):
                yield data[k:k + 500]

        assert_error(c.post("/api/contests", content=chunks(),
                            headers={**AUTH, "content-type": "application/json"}), 413)
        assert_error(c.post("/api/predict", content=json.dumps(
            {"handles": [f"someone{k}" for k in range(150)]}),
            headers={"content-type": "application/json"}), 413)
        small = contest_json("small", 1, ["a", "b"])
        assert c.post("/api/contests", json=small, headers=AUTH).status_code == 201
        assert c.get("/api/health").json()["contests"] == 1


BAD_BODIES: list[tuple[bytes, int, str]] = [
    (b"", 400, "empty"),
    (b"{not json", 400, "line 1, column 2"),
    (b'{"name": "x"', 400, "not valid JSON"),
    (b"\xff\xfe", 400, "UTF-8"),
    (b"[1, 2]", 422, "expected a JSON object"),
    (b'"text"', 422, "expected a JSON object"),
    (b'{"name": "x", "time_seconds": 1}', 422, "missing required key 'standings'"),
    (b'{"time_seconds": 1, "standings": []}', 422, "missing required key 'name'"),
    (b'{"name": "x", "time_seconds": 1, "standings": []}', 422, "standings are empty"),
    (b'{"name": "x", "time_seconds": "soon", "standings": [["a",0,0]]}', 422, "time_seconds"),
    (b'{"name": "x", "time_seconds": 1.5, "standings": [["a",0,0]]}', 422, "whole number"),
    (b'{"name": "x", "time_seconds": 1, "standings": {"a": 1}}', 422, "'standings'"),
    (b'{"name": "x", "time_seconds": 1, "standings": [["a",0]]}', 422, "standings[0]"),
    (b'{"name": "x", "time_seconds": 1, "standings": [["a",0,0],["a",1,1]]}', 422,
     "duplicate handle"),
    (b'{"name": "x", "time_seconds": 1, "standings": [["a",0,0],["b",0,0]]}', 422,
     "player 'b'"),
    (b'{"name": "x", "time_seconds": 1, "standings": [["a","0",0]]}', 422, "lo must be"),
    (b'{"name": "x", "time_seconds": 1, "standings": [[7,0,0]]}', 422, "handle must be"),
    (b'{"name": "x", "time_seconds": 1, "weight": -1, "standings": [["a",0,0]]}', 422,
     "weight"),
    (b'{"name": "x", "time_seconds": 1, "weight": NaN, "standings": [["a",0,0]]}', 422,
     "weight"),
    (b'{"name": 5, "time_seconds": 1, "standings": [["a",0,0]]}', 422, "'name'"),
    (b'{"name": "x", "url": 3, "time_seconds": 1, "standings": [["a",0,0]]}', 422, "'url'"),
    (b'{"name": "x", "time_seconds": 1e300, "standings": [["a",0,0]]}', 422, "64-bit"),
    (b'{"name": "x", "time_seconds": 1, "standings": [["a",0,99999999999999999999]]}', 422,
     "hi"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
]


@pytest.mark.parametrize(("body", "status", "needle"), BAD_BODIES)
def test_bad_contest_bodies(fresh: TestClient, body: bytes, status: int, needle: str) -> None:
    r = fresh.post("/api/contests", content=body,
                   headers={**AUTH, "content-type": "application/json"})
    assert_error(r, status, needle)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2**64) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=12,
)
standing = st.tuples(st.text(min_size=0, max_size=3), st.integers(-1, 4), st.integers(-1, 4))
near_contests = st.fixed_dictionaries(
    {"name": st.text(max_size=4) | st.integers(), "time_seconds": st.integers(-10, 10**20)
     | st.floats(allow_nan=False) | st.text(max_size=2),
     "standings": st.lists(standing.map(list), max_size=5) | json_values},
    optional={"weight": st.floats(allow_nan=False) | st.integers(-1, 3),
              "url": st.none() | st.text(max_size=4),
              "perf_ceiling": st.none() | st.floats(allow_nan=False)},
)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(json_values, near_contests))
def test_random_bodies_never_500(fresh: TestClient, doc: Any) -> None:
    body = json.dumps(doc)  # Infinity allowed, as in the contest files
    r = fresh.post("/api/contests", content=body,
                   headers={**AUTH, "content-type": "application/json"})
    assert r.status_code in (200, 201, 400, 409, 422), r.text
    assert isinstance(r.json().get("detail", ""), str)


def test_database_trouble_is_503_not_500(db_url: str) -> None:
    from sqlalchemy.exc import OperationalError

    class Busy:
        system_name = "mmr"

        def __getattr__(self, name: str) -> Any:
            def fail(*args: Any, **kwargs: Any) -> Any:
                raise OperationalError("SELECT 1", {}, Exception("database is locked"))
            return fail

    with TestClient(create_app(db_url, TOKEN, store=Busy()), raise_server_exceptions=False) as c:
        assert_error(c.get("/api/leaderboard"), 503, "retry")
        assert_error(c.get("/api/health"), 503)


def test_pages_escape_user_text(fresh: TestClient) -> None:
    evil = "<script>alert(1)</script>"
    body = contest_json("<b>bold</b> round", 1_700_000_000, [evil, "a/b", "Zoë"],
                        url="javascript:alert(2)")
    r = fresh.post("/api/contests", json=body, headers=AUTH)
    assert r.status_code == 201, r.text
    cid = r.json()["contest_id"]
    page = fresh.get("/contests/" + quote(cid, safe=""))
    assert page.status_code == 200
    assert evil not in page.text and "&lt;script&gt;" in page.text
    assert "<b>bold</b>" not in page.text
    assert 'href="javascript:' not in page.text  # a non-http url is shown, not linked
    player = fresh.get("/players/" + quote(evil, safe=""))
    assert player.status_code == 200 and evil not in player.text
    # handles with a slash or non-ASCII letters round-trip through the paths
    assert fresh.get("/api/players/a%2Fb").json()["handle"] == "a/b"
    assert fresh.get("/api/players/" + quote("Zoë")).json()["handle"] == "Zoë"
    assert fresh.get("/api/search", params={"prefix": "zO"}).json()["handles"] == ["Zoë"]


def test_contest_page_is_paged(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.service import web

    monkeypatch.setattr(web, "CONTEST_PAGE_SIZE", 10)
    c = HISTORY[2]
    n = len(c)
    assert n > 20
    k = -(-n // 10)
    pages = [client.get("/contests/synthetic%20round%203", params={"page": p}).text
             for p in range(1, k + 1)]
    rows = [p.count('<a class="handle"') for p in pages]
    assert rows == [10] * (k - 1) + [n - 10 * (k - 1)]
    assert 'rel="next" href="/contests/synthetic%20round%203?page=2"' in pages[0]
    assert 'rel="next"' not in pages[-1] and 'rel="prev"' in pages[-1]
    assert f'href="/players/{c.handles[0]}"' in pages[0]
    assert f'href="/players/{c.handles[-1]}"' in pages[-1]


def test_serve_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import main

    missing = tmp_path / "missing.db"
    assert main(["serve", "--db", f"sqlite:///{missing}"]) == 1
    err = capsys.readouterr().err
    assert "podium: error:" in err and "no Podium store" in err and "podium ingest" in err
    assert not missing.exists()
    assert main(["serve", "--db", "x.db", "--token-file", str(tmp_path / "nope.txt")]) == 1
    assert "nope.txt: cannot read token file" in capsys.readouterr().err
    assert main(["serve", "--token", "a", "--token-file", "b"]) == 1
    assert "not both" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port" in capsys.readouterr().err
    assert main(["serve", "--pool-size", "0"]) == 2
    assert "--pool-size must be >= 1, got 0" in capsys.readouterr().err
    assert main(["serve", "--max-overflow", "-1"]) == 2
    assert "--max-overflow must be >= 0, got -1" in capsys.readouterr().err


def test_pool_settings_reach_the_store(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from podium.errors import PodiumError
    from podium.service.app import create_app_from_env

    app = create_app(db_url, None, pool_size=3, max_overflow=1)
    with TestClient(app) as c:
        pool = app.state.store.engine.pool
        assert pool.size() == 3 and pool._max_overflow == 1
        assert c.get("/api/leaderboard/count").json()["count"] == 40
    monkeypatch.setenv("PODIUM_DB", db_url)
    monkeypatch.setenv("PODIUM_POOL_SIZE", "4")
    monkeypatch.setenv("PODIUM_MAX_OVERFLOW", "0")
    app = create_app_from_env()
    with TestClient(app):
        pool = app.state.store.engine.pool
        assert pool.size() == 4 and pool._max_overflow == 0
    monkeypatch.setenv("PODIUM_POOL_SIZE", "many")
    with pytest.raises(PodiumError, match="PODIUM_POOL_SIZE must be an integer, got 'many'"):
        create_app_from_env()


def test_synchronous_reaches_the_store(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``podium serve --synchronous`` (``PODIUM_SYNCHRONOUS`` for workers): the SQLite
    store's PRAGMA synchronous (1 = NORMAL, the default; 2 = FULL)."""
    from podium.service.app import create_app_from_env
    from podium.store import StoreError

    def setting(app: Any) -> int:
        with app.state.store.engine.connect() as conn:
            raw = conn.connection.driver_connection
            return int(raw.execute("PRAGMA synchronous").fetchone()[0])

    for value, expected in ((None, 1), ("full", 2), ("normal", 1)):
        app = create_app(db_url, None) if value is None else create_app(
            db_url, None, synchronous=value)
        with TestClient(app):
            assert setting(app) == expected
    monkeypatch.setenv("PODIUM_DB", db_url)
    monkeypatch.setenv("PODIUM_SYNCHRONOUS", "full")
    app = create_app_from_env()
    with TestClient(app):
        assert setting(app) == 2
    monkeypatch.setenv("PODIUM_SYNCHRONOUS", "off")
    with pytest.raises(StoreError, match="synchronous must be one of 'normal', 'full'"):
        create_app_from_env()
