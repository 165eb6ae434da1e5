"""The service under attack and careless use (issue 14): authentication before the body
is read, body limits, security headers and CSP, no 500 for any input, time guard,
parameter ranges, handle rules, paging, reachable handles, tokens kept out of logs.

Most tests run the app in-process (FastAPI's TestClient, or raw ASGI calls that count
the bytes the app pulls); one starts ``podium serve`` to read its access log.
"""

from __future__ import annotations

import html
import json
import logging
import re
import time
import warnings
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import _store_cases as cases
import pytest
from _asgi import StreamedBody, call

pytest.importorskip("fastapi", reason="the service extra is not installed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest  # noqa: E402
from podium.errors import PodiumError  # noqa: E402
from podium.service.app import create_app, create_app_from_env  # noqa: E402
from podium.service.guard import RedactSecrets, csp_hash, redact  # noqa: E402
from podium.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = 1_700_000_000
DAY = 86_400


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


@pytest.fixture()
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'h.db'}"
    with Store.create(url, "mmr") as store:
        store.ingest(Contest([("alice", 0, 0), ("bob", 1, 1), ("carol", 2, 2)], name="r1",
                             time_seconds=T0))
    return url


@pytest.fixture()
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, TOKEN)) as c:
        yield c


# ---------------------------------------------------------------------- raw ASGI
SIXTEEN_MIB = 16 * 1024 * 1024


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer wrong"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": "Bearer"},
])
def test_unauthenticated_write_is_refused_before_its_body(db: str,
                                                          headers: dict[str, str]) -> None:
    """The issue: 20 connections each sending 16 MiB without a token raised the server's
    memory; now the answer comes from the headers and not one byte is read."""
    app = create_app(db, TOKEN)
    for declared in (True, False):  # with a Content-Length, and chunked
        body = StreamedBody(SIXTEEN_MIB)
        h = {**headers, "content-type": "application/json"}
        if declared:
            h["content-length"] = str(SIXTEEN_MIB)
        status, out_headers, content = call(app, "POST", "/api/contests", h, body)
        assert status == 401, content
        assert body.pulled == 0
        assert out_headers["www-authenticate"].startswith("Bearer")
        assert out_headers["x-content-type-options"] == "nosniff"
        assert json.loads(content)["detail"]
    # writes disabled: the same, whatever the header says
    app = create_app(db, None)
    body = StreamedBody(SIXTEEN_MIB)
    status, _, content = call(app, "POST", "/api/contests", {**AUTH}, body)
    assert status == 401 and body.pulled == 0 and b"writes are disabled" in content


def test_over_limit_bodies_are_not_buffered(db: str) -> None:
    app = create_app(db, TOKEN, max_body_bytes=1_000_000, max_predict_bytes=10_000)
    # declared too large: refused at once, authenticated or public
    body = StreamedBody(SIXTEEN_MIB)
    status, _, content = call(app, "POST", "/api/contests",
                               {**AUTH, "content-length": str(SIXTEEN_MIB)}, body)
    assert status == 413 and body.pulled == 0 and b"1000000 bytes" in content
    body = StreamedBody(SIXTEEN_MIB)
    status, _, content = call(app, "POST", "/api/predict",
                               {"content-length": str(SIXTEEN_MIB)}, body)
    assert status == 413 and body.pulled == 0
    assert b"10000 bytes for POST /api/predict (max_predict_bytes)" in content
    # chunked: read only until the limit is passed
    body = StreamedBody(SIXTEEN_MIB)
    status, _, _ = call(app, "POST", "/api/predict", {}, body)
    assert status == 413 and body.pulled <= 10_000 + 65_536
    body = StreamedBody(SIXTEEN_MIB)
    status, _, _ = call(app, "POST", "/api/contests", {**AUTH}, body)
    assert status == 413 and body.pulled <= 1_000_000 + 65_536
    # any other path with a body: the small limit, then the app's own answer
    body = StreamedBody(SIXTEEN_MIB)
    status, _, _ = call(app, "PUT", "/api/contests", {"content-length": str(SIXTEEN_MIB)},
                         body)
    assert status == 413 and body.pulled == 0
    body = StreamedBody(100)
    status, _, _ = call(app, "PUT", "/api/contests", {"content-length": "100"}, body)
    assert status == 405
    for bad in ("-1", "12abc", "1" * 5000):
        body = StreamedBody(100)
        status, _, _ = call(app, "POST", "/api/predict", {"content-length": bad}, body)
        assert status in (400, 413) and body.pulled == 0, bad


def test_predict_limits_are_configurable(db: str) -> None:
    with TestClient(create_app(db, None, max_predict_players=3, max_predict_bytes=600)) as c:
        assert c.post("/api/predict", json={"handles": ["a", "b", "c"]}).status_code == 200
        assert_error(c.post("/api/predict", json={"handles": ["a", "b", "c", "d"]}), 422,
                     "at most 3 players", "'handles'")
        assert_error(c.post("/api/predict", json={"teams": [
            {"name": "x", "members": ["a", "b"]}, {"name": "y", "members": ["c", "d"]}]}),
            422, "at most 3 players")
        assert_error(c.post("/api/predict", json={"handles": ["h" * 100] * 7}), 413,
                     "600 bytes")
    for kw, needle in (({"max_predict_players": 0}, "max_predict_players"),
                       ({"max_predict_players": 1001}, "at most 1000"),
                       ({"max_predict_bytes": 0}, "max_predict_bytes")):
        with pytest.raises(PodiumError, match=needle):
            create_app(db, None, **kw)


# ---------------------------------------------------------------------- headers, CSP
class _Inline(HTMLParser):
    """Inline scripts, inline styles and event-handler attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.handlers: list[str] = []
        self._in: str | None = None
        self._src = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {k for k, _ in attrs}
        self.handlers += [f"{tag}.{k}" for k in names if k.startswith("on")]
        if "style" in names:
            self.handlers.append(f"{tag}.style")
        if tag in ("script", "style"):
            self._in, self._src = tag, "src" in names

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script" and not self._src and data.strip():
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)


def _csp(r: Any) -> dict[str, str]:
    policy = r.headers["content-security-policy"]
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] if " " in d else ""
            for d in (x.strip() for x in policy.split(";")) if d}


def test_pages_have_a_strict_csp_and_no_inline_script(client: TestClient) -> None:
    for path in ("/", "/?active_days=30", "/contests", "/contests/r1", "/players/alice",
                 "/search?q=a", "/players/nobody", "/no/such/page"):
        r = client.get(path)
        assert r.headers["content-type"].startswith("text/html"), path
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "same-origin"
        csp = _csp(r)
        assert csp["default-src"] == "'none'" and csp["frame-ancestors"] == "'none'"
        assert csp["script-src"] == "'self'", path  # no inline script, no eval
        assert "unsafe-inline" not in r.headers["content-security-policy"]
        page = _Inline()
        page.feed(r.text)
        assert not page.scripts and not page.handlers, (path, page.scripts, page.handlers)
        for style in page.styles:  # the rating chart's style, allowed by its hash
            assert csp_hash(style) in csp["style-src"].split(), path
    # JSON: nothing may run, never sniffed
    r = client.get("/api/health")
    assert r.headers["x-content-type-options"] == "nosniff"
    assert _csp(r)["default-src"] == "'none'"
    # /docs: its own inline script, allowed by its hash and nothing else
    r = client.get("/docs")
    page = _Inline()
    page.feed(r.text)
    assert len(page.scripts) == 1
    csp = _csp(r)
    assert csp_hash(page.scripts[0]) in csp["script-src"].split()
    assert "unsafe-inline" not in r.headers["content-security-policy"]
    assert csp["frame-ancestors"] == "'none'"


# ---------------------------------------------------------------------- time guard
def test_time_guard_over_http(db: str, tmp_path: Path) -> None:
    """A time in milliseconds used to be applied and then wedge the store: now it is a
    422 naming the value and suggesting seconds, and nothing stored changes."""
    with TestClient(create_app(db, TOKEN)) as c:
        before = cases.dump(db)
        detail = assert_error(c.post("/api/contests", headers=AUTH, json=contest_json(
            "ms", 1_602_505_600_000, ["a", "b"])), 422, "time_seconds=1602505600000",
            "milliseconds", "1602505600")
        assert "request body: contest 'ms'" in detail
        assert_error(c.post("/api/contests", headers=AUTH, json=contest_json(
            "big", 2**63 - 1 - 10**6, ["a", "b"])), 422, "after 2200")
        ahead = int(time.time()) + 2 * DAY
        assert_error(c.post("/api/contests", headers=AUTH, json=contest_json(
            "ahead", ahead, ["a", "b"])), 422, "in the future", "allow_future")
        assert_error(c.post("/api/contests", headers=AUTH, json=[
            contest_json("r2", T0 + 10, ["a", "b"]),
            contest_json("ms", 1_602_505_600_000, ["a", "b"])]), 422, "contest #1",
            "milliseconds")
        assert cases.dump(db) == before
        r = c.post("/api/contests", headers=AUTH, json=contest_json("r2", T0 + 10, ["a", "b"]))
        assert r.status_code == 201, r.text
    with TestClient(create_app(db, TOKEN, allow_future=True)) as c:
        r = c.post("/api/contests", headers=AUTH, json=contest_json("ahead", ahead, ["a", "b"]))
        assert r.status_code == 201, r.text
        assert_error(c.post("/api/contests", headers=AUTH, json=contest_json(
            "ms", 1_602_505_600_000, ["a", "b"])), 422, "milliseconds")


def test_factory_reads_the_new_settings(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PODIUM_DB", db)
    monkeypatch.setenv("PODIUM_ALLOW_FUTURE", "yes")
    monkeypatch.setenv("PODIUM_MAX_PREDICT_PLAYERS", "5")
    monkeypatch.setenv("PODIUM_MAX_PREDICT_BYTES", "1234")
    app = create_app_from_env()
    with TestClient(app):
        assert app.state.allow_future is True
        assert app.state.max_predict_players == 5 and app.state.max_predict_bytes == 1234
    monkeypatch.setenv("PODIUM_ALLOW_FUTURE", "maybe")
    with pytest.raises(PodiumError, match="PODIUM_ALLOW_FUTURE must be"):
        create_app_from_env()


def test_serve_rejects_bad_new_options(capsys: pytest.CaptureFixture[str]) -> None:
    from podium.cli import main

    assert main(["serve", "--max-predict-players", "0"]) == 2  # a usage error
    assert "--max-predict-players must be in 1..1000, got 0" in capsys.readouterr().err
    assert main(["serve", "--max-predict-bytes", "0"]) == 2
    assert "--max-predict-bytes must be >= 1" in capsys.readouterr().err


# ---------------------------------------------------------------------- ranges, text
BIG = "1" * 5000


@pytest.mark.parametrize(("path", "body", "needle"), [
    ("/api/predict", {"handles": ["alice", "bob"], "weight": 1e308}, "'weight'"),
    ("/api/predict", {"handles": ["alice", "bob"], "weight": 1e-308}, "'weight'"),
    ("/api/predict", {"handles": ["alice", "bob"], "weight": 1e300}, "'weight'"),
    ("/api/predict", {"handles": ["alice", "x\ud800"]}, "'handles.1'"),
    ("/api/predict", {"handles": ["alice", "a\u202eb"]}, "U+202E"),
    ("/api/predict", {"handles": ["alice", "   "]}, "empty or only whitespace"),
    ("/api/predict", {"handles": ["alice", "alice "]}, "'alice' is listed twice"),
    ("/api/predict", {"teams": [{"name": "t\ud800", "members": ["a"]},
                                {"name": "u", "members": ["b"]}]}, "'teams.0.name'"),
    ("/api/predict", {"teams": [{"name": "t", "members": [{"handle": "a", "weight": 1e-308}]},
                                {"name": "u", "members": ["b"]}]}, None),
    ("/api/contests", contest_json("w", T0 + 1, ["a", "b"], weight=1e300), "weight=1e+300"),
    ("/api/contests", contest_json("w", T0 + 1, ["a", "b"], weight=0.0001), "weight="),
    ("/api/contests", contest_json("w", T0 + 1, ["a", "b"], perf_ceiling=-1e308),
     "perf_ceiling=-1e+308"),
    ("/api/contests", contest_json("n\ud800", T0 + 1, ["a", "b"]),
     "'name' 'n\\ud800' is not Unicode text: character 2"),
    ("/api/contests", contest_json("n", T0 + 1, ["a", "b"], url="u\ud800"),
     "'url' 'u\\ud800' is not Unicode text"),
    ("/api/contests", contest_json("n", T0 + 1, ["a\ud800", "b"]), "player 'a\\ud800'"),
    ("/api/contests", contest_json("n", T0 + 1, ["a\x00", "b"]), "U+0000"),
    ("/api/contests", contest_json("n", T0 + 1, ["a\u202e", "b"]), "U+202E"),
    ("/api/contests", contest_json("n", T0 + 1, [" \t ", "b"]), "control character"),
    ("/api/contests", contest_json("n", T0 + 1, ["\u3000", "b"]), "empty or only whitespace"),
    ("/api/contests", contest_json("n", T0 + 1, ["x" * 10_000, "b"]), "10000 characters"),
    ("/api/contests", {"name": "t", "time_seconds": T0 + 1, "standings": [
        ["red\ud800", 0, 0, ["a"]], ["blue", 1, 1, ["b"]]]}, "team 'red\\ud800'"),
])
def test_bad_values_are_4xx_naming_the_field(client: TestClient, path: str, body: Any,
                                             needle: str | None) -> None:
    r = client.post(path, content=json.dumps(body), headers=AUTH)
    if needle is None:  # accepted, as long as it is no 500
        assert r.status_code < 500, r.text
        return
    assert_error(r, 422, needle)


@pytest.mark.parametrize("body", [
    f'{{"handles": ["a", "b"], "weight": {BIG}}}',
    f'{{"name": "x", "time_seconds": {BIG}, "standings": [["a", 0, 0]]}}',
    f'{{"name": "x", "time_seconds": 1, "standings": [["a", {BIG}, 0]]}}',
    f'[{BIG}]',
    f'{{"x": [{{"y": -{BIG}}}]}}',
])
def test_huge_integers_are_400(client: TestClient, body: str) -> None:
    for path in ("/api/predict", "/api/contests"):
        assert_error(client.post(path, content=body, headers=AUTH), 400, "too many digits")
    for query in (f"/api/leaderboard?limit={BIG}", f"/api/contests/r1?offset={BIG}",
                  f"/api/leaderboard/count?min_rating={BIG}"):
        assert client.get(query).status_code == 422


# ---------------------------------------------------------------------- handles
def test_handles_are_normalised_over_http(client: TestClient) -> None:
    r = client.post("/api/contests", headers=AUTH, json=contest_json(
        "r2", T0 + 10, ["e\u0301mile", " alice ", "\u0435ve", "eve"]))
    assert r.status_code == 201, r.text
    assert r.json()["new_players"] == 3  # alice is alice; Cyrillic \u0435ve is not eve
    r = client.post("/api/contests", headers=AUTH, json=contest_json(
        "r3", T0 + 20, ["\u00e9mile", "bob"]))
    assert r.json()["new_players"] == 0
    got = client.get("/api/players/" + quote("e\u0301mile")).json()
    assert got["handle"] == "\u00e9mile" and got["contests"] == 2
    assert client.get("/api/players/%20alice%20").json()["handle"] == "alice"
    assert_error(client.get("/api/players/a%E2%80%AEb"), 404, "U+202E")
    out = client.post("/api/predict", json={"handles": ["e\u0301mile", "bob "]}).json()
    assert [p["handle"] for p in out["players"]] == ["\u00e9mile", "bob"]
    assert all(p["known"] for p in out["players"])
    contest = client.get("/contests/r2").text
    assert "\u202e" not in contest and "e\u0301" not in contest


def test_case_insensitive_store_over_http(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ci.db'}"
    app = create_app(url, TOKEN, system="mmr", case_insensitive_handles=True)
    with TestClient(app) as c:
        assert c.post("/api/contests", headers=AUTH, json=contest_json(
            "r1", T0, ["Tourist", "petr"])).status_code == 201
        r = c.post("/api/contests", headers=AUTH, json=contest_json(
            "r2", T0 + 10, ["PETR", "tourist"]))
        assert r.status_code == 201 and r.json()["new_players"] == 0
        assert_error(c.post("/api/contests", headers=AUTH, json=contest_json(
            "r3", T0 + 20, ["ann", "Ann"])), 422, "differ only by case")
        assert c.get("/api/players/TOURIST").json()["handle"] == "Tourist"
        assert {x["handle"] for x in c.get("/api/leaderboard").json()["rows"]} == {
            "petr", "Tourist"}
        out = c.post("/api/predict", json={"handles": ["TOURIST", "nobody"]}).json()
        assert out["players"][0]["handle"] == "Tourist" and out["players"][0]["known"]
        assert_error(c.post("/api/predict", json={"handles": ["tourist", "Tourist"]}), 422,
                     "listed twice")
        assert "Tourist" in c.get("/players/tOURISt").text
    with pytest.raises(PodiumError, match="fixed when a store is created"):
        create_app(url, TOKEN, system="mmr", case_insensitive_handles=False)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("class") == "handle":
            self._href = a.get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((self._href, data))
            self._href = None


ODD = [".", "..", "a/b", "%2e", "%2E%2e", "q?x=1", "h#1", "100%", "..."]


def test_every_handle_is_reachable_from_the_contest_page(db: str) -> None:
    """The links of the contest page, requested as a server receives them (the path
    percent-decoded once; FastAPI's TestClient decodes twice, so this goes straight to
    the ASGI app), lead to each player's page; the browser test follows them in
    Chromium."""
    app = create_app(db, TOKEN)
    with TestClient(app) as client:
        r = client.post("/api/contests", headers=AUTH, json=contest_json("odd", T0 + 5, ODD))
        assert r.status_code == 201, r.text
        page = _Links()
        page.feed(client.get("/contests/odd").text)
        for handle in ODD:
            api = client.get("/api/player", params={"handle": handle})
            assert api.status_code == 200 and api.json()["handle"] == handle
    hrefs = {text: href for href, text in page.links}
    assert set(hrefs) == set(ODD)
    assert hrefs["."] == "/player?handle=." and hrefs[".."] == "/player?handle=.."
    assert hrefs["a/b"] == "/players/a%2Fb" and hrefs["%2e"] == "/players/%252e"
    for handle, href in hrefs.items():
        path, _, query = href.partition("?")
        # no dot segment a browser would resolve, no raw ? or # in the path
        assert path.split("/")[-1].lower() not in (".", "..", "%2e", "%2e%2e", ".%2e")
        assert "#" not in href
        status, _, body = call(app, "GET", unquote(path), {}, StreamedBody(0), query.encode())
        assert status == 200, (handle, href)
        h1 = re.search(r'<h1 class="player-name">(.*?)</h1>', body.decode())
        assert h1 is not None and html.unescape(h1.group(1)) == handle, href
    # the contest page of an id ".." (a contest named so) is reachable too
    with TestClient(app) as client:
        _contest_named_dots(client)


def _contest_named_dots(client: TestClient) -> None:
    assert client.post("/api/contests", headers=AUTH, json=contest_json(
        "..", T0 + 6, ["a", "b"])).status_code == 201
    assert '/contest?id=..' in client.get("/contests").text
    assert client.get("/contest", params={"id": ".."}).status_code == 200


# ---------------------------------------------------------------------- paging
def test_contest_answer_is_paged(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    handles = [f"p{k:03d}" for k in range(120)]
    assert client.post("/api/contests", headers=AUTH, json=contest_json(
        "big", T0 + 5, handles)).status_code == 201
    whole = client.get("/api/contests/big").json()
    assert (whole["offset"], whole["limit"], whole["total"]) == (0, 1000, 120)
    assert [x["handle"] for x in whole["changes"]] == handles
    page = client.get("/api/contests/big", params={"offset": 50, "limit": 20}).json()
    assert [x["handle"] for x in page["changes"]] == handles[50:70]
    assert page["total"] == page["players"] == 120
    assert_error(client.get("/api/contests/big", params={"limit": 0}), 422, "'limit'")
    assert_error(client.get("/api/contests/big", params={"limit": 10_001}), 422, "'limit'")
    assert_error(client.get("/api/contests/big", params={"offset": -1}), 422, "'offset'")
    from podium.service import web

    monkeypatch.setattr(web, "CONTEST_PAGE_SIZE", 50)
    last = client.get("/contests/big", params={"page": 3}).text
    assert last.count('<a class="handle"') == 20 and 'rel="next"' not in last


# ---------------------------------------------------------------------- no 500, ever
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=12,
)
handles = st.text(min_size=0, max_size=6) | st.sampled_from(
    ["alice", "bob", " bob", "Bob", ".", "..", "\ud800", "a\x00", "\u202e", "e\u0301"])
contests = st.fixed_dictionaries(
    {"name": st.text(max_size=5), "time_seconds": st.integers(-10, 10**20)
     | st.sampled_from([T0 + 100, 1_602_505_600_000, 2**63 - 1]) | st.floats(),
     "standings": st.lists(st.tuples(handles, st.integers(-1, 4), st.integers(-1, 4))
                           .map(list), max_size=4)},
    optional={"weight": st.floats() | st.integers(), "url": st.none() | st.text(max_size=4),
              "perf_ceiling": st.none() | st.floats()},
)
predictions = st.fixed_dictionaries(
    {}, optional={"handles": st.lists(handles, max_size=4) | json_values,
                  "teams": st.lists(st.fixed_dictionaries(
                      {"name": handles, "members": st.lists(
                          handles | st.fixed_dictionaries({"handle": handles,
                                                          "weight": st.floats()}),
                          max_size=3)}), max_size=3) | json_values,
                  "weight": st.floats() | st.integers() | json_values})
balances = st.fixed_dictionaries(
    {}, optional={"players": st.lists(handles, max_size=6) | json_values,
                  "teams": st.integers(-2, 8) | json_values,
                  "parties": st.lists(st.lists(handles, max_size=4), max_size=3) | json_values,
                  "system": st.sampled_from(["mmr", "glicko", "nope"]) | json_values,
                  "weight": st.floats() | st.integers() | json_values})
bodies = st.one_of(json_values, contests, predictions, balances,
                   st.lists(contests, max_size=3))
segments = handles | st.sampled_from(["r1", "alice", "%2e", "a/b", "%00", "%ED%A0%80",
                                     "default"])
ROUTES = [
    "/api/health", "/api/stats", "/api/leaderboard", "/api/leaderboard/count", "/api/search",
    "/api/players/{}", "/api/player", "/api/contests", "/api/contests/{}", "/api/predict",
    "/openapi.json", "/", "/contests", "/contests/{}", "/players/{}", "/player", "/contest",
    "/search", "/api/audit", "/api/export/ratings", "/api/export/history",
    "/api/contests/{}/players/{}/explain", "/api/explain", "/api/balance", "/api/ladders",
    "/api/seasons", "/ladders",
    # a ladder's smoothed companion (issue 29): both curves and what changed in the past
    "/api/players/{}/smoothed", "/api/smoothed", "/api/players/{}/past-changes",
    "/api/past-changes",
]
# every route of a ladder (issue 28): the API's under /api/ladders/{ladder}/, the pages'
# under /ladders/{ladder}/ (the segment drawn names the ladder too: mostly unknown, 404)
ROUTES += [r.replace("/api/", "/api/ladders/{}/", 1) for r in ROUTES
           if r.startswith("/api/") and r != "/api/ladders"]
ROUTES += ["/ladders/{}" + r for r in ("/", "/contests", "/contests/{}", "/players/{}",
                                       "/player", "/contest", "/search")]
QUERY = ["offset", "limit", "active_days", "min_contests", "min_rating", "max_rating",
         "prefix", "handle", "id", "q", "page", "contest_id", "recompute_from", "token",
         "format", "action", "contest", "top", "all", "as_of", "season",
         "include_provisional", "provisional"]


def test_every_route_is_covered(client: TestClient) -> None:
    """The routes the fuzz test below hits are every route of the API."""
    spec = client.get("/openapi.json").json()
    listed = {p.replace("{handle}", "{}").replace("{contest_id}", "{}")
              .replace("{ladder}", "{}") for p in spec["paths"]}
    assert listed <= set(ROUTES), listed - set(ROUTES)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(route=st.sampled_from(ROUTES), segment=segments,
       method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]),
       body=bodies, auth=st.booleans(),
       query=st.dictionaries(st.sampled_from(QUERY), st.text(max_size=6)
                             | st.integers().map(str), max_size=3))
def test_any_request_is_answered_below_500(client: TestClient, route: str, segment: str,
                                           method: str, body: Any, auth: bool,
                                           query: dict[str, str]) -> None:
    """Every route and method, authenticated or not, with any JSON body (lone
    surrogates, huge integers, infinities included) and any query: never a 500."""
    raw = "%" in segment and segment.isascii() and segment.isprintable()  # "%2e", "%00"
    path = route.replace("{}", segment if raw else
                         quote(segment, safe="", errors="surrogatepass"))
    content = json.dumps(body).encode("utf-8", "surrogatepass")
    r = client.request(method, path, content=content, params=query,
                       headers={**(AUTH if auth else {}), "content-type": "application/json"})
    assert r.status_code < 500, (method, path, r.text[:500])
    if r.headers.get("content-type", "").startswith("application/json") and method != "HEAD":
        detail = r.json().get("detail", "") if isinstance(r.json(), dict) else ""
        assert isinstance(detail, str)


# ---------------------------------------------------------------------- logs
def test_redaction_filter() -> None:
    assert redact("GET /api/health?token=abc&x=1 HTTP/1.1") == \
        "GET /api/health?token=[REDACTED]&x=1 HTTP/1.1"
    assert redact("/p?a=1&API_KEY=zz;password=pw#f") == \
        "/p?a=1&API_KEY=[REDACTED];password=[REDACTED]#f"
    assert redact("/p?tokens=1&mytoken=2") == "/p?tokens=1&mytoken=2"
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1,
                               '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/api/health?token=SECRET", "1.1", 200),
                               None)
    assert RedactSecrets().filter(record)
    assert "SECRET" not in record.getMessage() and "token=[REDACTED]" in record.getMessage()


@pytest.mark.slow
def test_token_in_the_query_never_reaches_the_access_log(db: str, tmp_path: Path) -> None:
    import httpx
    from _service import running_server

    with running_server(db, tmp_path, access_log=True) as srv:
        for k in range(3):
            httpx.get(srv.url + f"/api/health?token=SECRET{k}&x=1", timeout=10)
        r = httpx.post(srv.url + "/api/contests?token=SECRET9", json={}, timeout=10)
        assert r.status_code == 401
        deadline = time.monotonic() + 10
        while "SECRET9" not in srv.log_text() and "token=[REDACTED]" not in srv.log_text() \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
        log = srv.log_text()
    assert "token=[REDACTED]" in log, log
    assert "SECRET" not in log, log
