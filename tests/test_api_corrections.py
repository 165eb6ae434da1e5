"""``DELETE`` and ``PUT /api/contests/{id}`` (src/podium/service/api_corrections.py), on
SQLite and PostgreSQL: the answers, the bearer token, ids that are URLs (percent-encoded
or not), bad bodies, and the store afterwards equal to the corrected history from
scratch."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

import _corrections as corr  # noqa: E402
import _store_cases as cases  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
URL_ID = "https://codeforces.com/contest/1"


def _history() -> list[Contest]:
    cs = cases.tied_history(n_players=30, rounds=8, seed=4)
    c = cs[5]
    with_url = Contest.from_arrays(c.handles, c.lo, c.hi, name=c.name,
                                   time_seconds=c.time_seconds, url=URL_ID)
    return [*cs[:5], with_url, *cs[6:]]


@pytest.fixture()
def app(store_url: str) -> Iterator[tuple[TestClient, str]]:
    with Store.create(store_url, "mmr") as store:
        for c in _history():
            store.ingest(c)
    with TestClient(create_app(store_url, TOKEN)) as client:
        yield client, store_url


def _doc(c: Contest) -> dict[str, object]:
    return {"name": c.name, "url": c.url, "time_seconds": c.time_seconds,
            "standings": [[h, int(lo), int(hi)] for h, lo, hi in c.standings]}


@pytest.mark.parametrize("encoded", [True, False])
def test_delete_a_contest_with_a_url_id(app, encoded):
    client, url = app
    history = _history()
    path = "/api/contests/" + (quote(URL_ID, safe="") if encoded else URL_ID)
    before = cases.dump(url)
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        r = client.delete(path, headers=headers)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"].startswith("Bearer")
    assert cases.dump(url) == before
    r = client.delete(path, headers=AUTH)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "deleted" and body["contest_id"] == URL_ID
    assert (body["index"], body["new_index"], body["rerated"]) == (5, None, len(history) - 6)
    assert client.get(path).status_code == 404
    r = client.delete(path, headers=AUTH)
    assert r.status_code == 404 and URL_ID in r.json()["detail"]
    rest = history[:5] + history[6:]
    corr.assert_same_logical(corr.logical_dump(url), corr.fresh_dump(rest))
    with Store.open(url) as store:
        cases.assert_store_equals_rater(store, cases._reference(rest, "mmr"))


@pytest.mark.parametrize("encoded", [True, False])
def test_replace_a_contest(app, encoded):
    client, url = app
    history = _history()
    old = history[5]
    fixed = Contest.from_places(list(old.handles[1:]), (old.lo[1:] + 1).tolist(),
                                name="fixed name", time_seconds=old.time_seconds,
                                url="https://example.org/other")
    path = "/api/contests/" + (quote(URL_ID, safe="") if encoded else URL_ID)
    assert client.put(path, json=_doc(fixed)).status_code == 401
    r = client.put(path, json=_doc(fixed), headers=AUTH)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "replaced" and body["contest_id"] == URL_ID  # the path's id
    assert (body["players"], body["previous_players"]) == (len(fixed), len(old))
    assert body["rerated"] == len(history) - 6
    view = client.get(path).json()
    assert view["name"] == "fixed name" and view["players"] == len(fixed)
    again = client.put(path, json=_doc(fixed), headers=AUTH).json()
    assert again["status"] == "unchanged" and again["rerated"] == 0
    corrected = [*history[:5], fixed, *history[6:]]
    ids = [c.url or c.name for c in corrected]
    ids[5] = URL_ID
    corr.assert_same_logical(corr.logical_dump(url), corr.fresh_dump(corrected, ids=ids))


def test_bad_requests_change_nothing(app):
    client, url = app
    history = _history()
    before = cases.dump(url)
    path = f"/api/contests/{quote(history[2].name)}"
    r = client.put(path, content=b"{not json", headers={**AUTH,
                                                         "content-type": "application/json"})
    assert r.status_code == 400
    r = client.put(path, json=[_doc(history[2])], headers=AUTH)
    assert r.status_code == 422 and "one contest" in r.json()["detail"]
    bad = _doc(history[2])
    bad["standings"] = [["a", 0, 0], ["a", 1, 1]]
    r = client.put(path, json=bad, headers=AUTH)
    assert r.status_code == 422 and "request body" in r.json()["detail"]
    bad = _doc(history[2])
    bad["weight"] = 1e9
    r = client.put(path, json=bad, headers=AUTH)
    assert r.status_code == 422 and "weight" in r.json()["detail"]
    r = client.put("/api/contests/nope", json=_doc(history[2]), headers=AUTH)
    assert r.status_code == 404 and "'nope'" in r.json()["detail"]
    r = client.delete("/api/contests/nope", headers=AUTH)
    assert r.status_code == 404 and json.loads(r.text)["detail"].startswith("contest 'nope'")
    assert cases.dump(url) == before


def test_writes_disabled_without_a_token(store_url):
    with Store.create(store_url, "mmr") as store:
        store.ingest(_history()[0])
    with TestClient(create_app(store_url, None)) as client:
        r = client.delete(f"/api/contests/{quote(_history()[0].name)}", headers=AUTH)
        assert r.status_code == 401 and "disabled" in r.json()["detail"]


def test_openapi_documents_the_routes(app):
    client, _ = app
    paths = client.get("/openapi.json").json()["paths"]
    ops = paths["/api/contests/{contest_id}"]
    assert {"get", "delete", "put"} <= set(ops)
    assert "404" in ops["delete"]["responses"] and "422" in ops["put"]["responses"]


@pytest.mark.parametrize("method", ["DELETE", "PUT"])
def test_unauthenticated_correction_is_refused_before_its_body(app, method):
    """The guard answers 401 from the headers: not one byte of the body is read."""
    import asyncio

    client, url = app
    pulled = []

    async def receive() -> dict[str, object]:
        pulled.append(1)
        return {"type": "http.request", "body": b"x" * 65_536, "more_body": True}

    path = "/api/contests/" + URL_ID
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path,
             "raw_path": quote(path).encode("ascii"), "root_path": "", "query_string": b"",
             "headers": [(b"content-length", str(16 * 2**20).encode())],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    out: dict[str, object] = {}

    async def send(message: dict[str, object]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]

    asyncio.run(asyncio.wait_for(client.app(scope, receive, send), 30))
    assert out["status"] == 401 and not pulled
    assert client.get(path).status_code == 200  # still there
