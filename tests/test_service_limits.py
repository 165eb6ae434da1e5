"""Issue 31, items 1 and 6: no client starves the others, and odd URLs are refused.

* 16 stalled export clients and 20 concurrent explains against a real server on
  loopback: ``/api/health`` and ``/api/leaderboard`` stay answered (p95 under 1 s and
  2 s); the exports beyond ``max_exports`` and the explains beyond ``max_explains`` are
  answered 429 with ``Retry-After`` (before: every pooled connection was held by a
  stalled client and every route answered 503 after 30 s);
* a client that stops reading an export is dropped after ``--send-timeout`` and its
  place is free again; the export streamed to a reading client is the store's;
* a 503 (the database unavailable) is one log line, not a traceback;
* a URL whose percent-escapes are not UTF-8 is refused (it used to become U+FFFD);
* every contest id that can be stored can be deleted over HTTP, ``/`` among its
  characters; ids of nothing but ``/`` and whitespace are refused.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
httpx = pytest.importorskip("httpx")

from _asgi import StreamedBody, call  # noqa: E402
from _load import STALLED_RCVBUF, run_load  # noqa: E402
from _service import running_server  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from podium import Contest  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store  # noqa: E402

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = 1_600_000_000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Contest]]:
    """A store whose history export (about 10 MB of CSV) is far more than a stalled
    client's socket buffers hold: 300 contests of about 200 of 400 players."""
    tmp = tmp_path_factory.mktemp("limits")
    url = f"sqlite:///{tmp / 'big.db'}"
    contests = synthetic_contests(400, 300, seed=1, participation=0.5)
    with Store.create(url, "mmr") as store:
        store.ingest_many(contests)
    return url, contests


def test_stalled_exports_and_an_explain_burst_leave_reads_answered(
        big_store: tuple[str, list[Contest]], tmp_path: Path) -> None:
    url, contests = big_store
    queries = [(c.name, c.handles[0]) for c in contests]
    with running_server(url, tmp_path, extra=["--max-exports", "2", "--max-explains", "2",
                                              "--send-timeout", "60"]) as srv:
        res = run_load(srv.url, queries, stalled=16, explainers=20, probe_s=6.0,
                       timeout=10.0)
        log = srv.log_text()
    summary = res.summary()
    assert res.probes == {200: len(res.health_s) + len(res.leaderboard_s)}, summary
    assert res.p95(res.health_s) < 1.0, summary
    assert res.p95(res.leaderboard_s) < 2.0, summary
    assert res.exports["HTTP/1.1 200 OK"] == 2, summary
    assert res.exports["HTTP/1.1 429 Too Many Requests"] == 14, summary
    assert res.explains[200] > 0 and res.explains[429] > 0, summary
    assert set(res.explains) <= {200, 429}, summary
    assert "Traceback" not in log, log


def test_a_stalled_reader_is_dropped_and_its_place_freed(
        big_store: tuple[str, list[Contest]], tmp_path: Path) -> None:
    url, _ = big_store
    with Store.open(url) as store:
        expected = b"".join(store.export("history", "csv"))
    with running_server(url, tmp_path, extra=["--max-exports", "1", "--send-timeout", "1"]
                        ) as srv:
        host, port = srv.url.removeprefix("http://").split(":")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STALLED_RCVBUF)
        sock.connect((host, int(port)))
        sock.sendall(b"GET /api/export/history?format=csv HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        busy = httpx.get(srv.url + "/api/export/ratings", timeout=10)
        assert busy.status_code == 429 and busy.headers["retry-after"] == "10"
        assert "too many exports at once" in busy.json()["detail"]
        deadline = time.monotonic() + 20
        while True:  # the stalled reader is dropped after about 1 s
            r = httpx.get(srv.url + "/api/export/history?format=csv", timeout=30)
            if r.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        sock.close()
        assert r.status_code == 200, r.text
        assert r.content == expected
        log = srv.log_text()
    assert "connection dropped" in log, log
    assert "Traceback" not in log, log


@pytest.fixture()
def small_db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.create(url, "mmr") as store:
        store.ingest(Contest([("alice", 0, 0), ("bob", 1, 1)], name="r1", time_seconds=T0))
    return url


def test_full_gates_answer_429_with_retry_after(small_db: str) -> None:
    app = create_app(small_db, TOKEN, max_exports=1, max_explains=1)
    with TestClient(app) as client:
        assert client.get("/api/explain?contest=r1&handle=alice").status_code == 200
        assert app.state.explain_gate.enter()  # a long explanation is running
        r = client.get("/api/explain?contest=r1&handle=alice")
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        assert "too many explanations at once (1 run at a time" in r.json()["detail"]
        app.state.explain_gate.leave()
        assert client.get("/api/explain?contest=r1&handle=alice").status_code == 200
        assert app.state.export_gate.enter()
        r = client.get("/api/export/ratings?format=csv")
        assert r.status_code == 429 and r.headers["retry-after"] == "10"
        app.state.export_gate.leave()
        r = client.get("/api/export/ratings?format=csv")
        assert r.status_code == 200 and r.text.startswith("rank,handle,")
        assert app.state.export_gate.held == 0  # left once the file was sent


def test_a_503_is_one_log_line(small_db: str, caplog: pytest.LogCaptureFixture,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy.exc import OperationalError, TimeoutError

    app = create_app(small_db, TOKEN)
    store = app.state.store
    for exc in (OperationalError("SELECT 1", {}, Exception("database is locked\nline 2")),
                TimeoutError("QueuePool limit of size 5 overflow 10 reached, connection "
                             "timed out, timeout 30.00")):
        def down(*args: object, _exc: Exception = exc, **kwargs: object) -> None:
            raise _exc

        monkeypatch.setattr(store, "latest_contest", down)
        monkeypatch.setattr(store, "export", down)
        caplog.clear()
        # raise_server_exceptions: an exception the app re-raises after answering (what
        # Starlette does with a handler of Exception, and the server then logs its
        # traceback) fails here
        with TestClient(app) as client, caplog.at_level(logging.INFO):
            for path in ("/api/health", "/api/export/ratings"):
                r = client.get(path)
                assert r.status_code == 503, r.text
                assert r.headers["retry-after"] == "1"
                assert "database unavailable or busy" in r.json()["detail"]
        records = [r for r in caplog.records if r.name.startswith("podium")]
        assert len(records) == 2, [r.getMessage() for r in records]
        for rec in records:
            assert rec.levelno == logging.WARNING and rec.exc_info is None
            assert "\n" not in rec.getMessage()
        assert app.state.export_gate.held == 0


@pytest.mark.parametrize("path", [
    "/api/contests/%ED%A0%80",  # a lone surrogate's bytes
    "/api/players/%FF",
    "/api/explain?contest=%ED%A0%80&handle=a",
    "/api/contests?contest_id=%C3",
])
def test_urls_that_are_not_utf8_are_refused(small_db: str, path: str) -> None:
    with TestClient(create_app(small_db, TOKEN)) as client:
        for method in ("GET", "POST", "DELETE"):
            r = client.request(method, path, headers=AUTH)
            assert r.status_code == 400, (method, r.text)
            assert "not UTF-8" in r.json()["detail"]
        assert client.get("/api/contests/%C3%A9").status_code == 404  # UTF-8: looked up


STORABLE_IDS = ["a/", "https://x.org/c/1/", "a%2Fb", "what?#frag", "caf\u00e9 r\u00e9sum\u00e9",
                "/leading", "a//b", "..a", "..", ".", "space inside", "+plus&amp=1",
                "\U0001F469\u200d\U0001F4BB cup"]


def test_every_storable_contest_id_can_be_deleted(small_db: str) -> None:
    with TestClient(create_app(small_db, TOKEN)) as client:
        for k, cid in enumerate(STORABLE_IDS):
            body = {"name": f"c{k}", "time_seconds": T0 + 10 + k,
                    "standings": [["alice", 0, 0], ["bob", 1, 1]]}
            r = client.post("/api/contests", params={"contest_id": cid}, json=body, headers=AUTH)
            assert r.status_code == 201, (cid, r.text)
            assert r.json()["contest_id"] == cid
        app = client.app
        # straight to the app, as a server hands it a request for
        # /api/contests/<quote(cid, safe="")>: the path decoded once (the test client
        # would decode it twice)
        for cid in reversed(STORABLE_IDS):
            status, _, content = call(app, "DELETE", "/api/contests/" + cid, AUTH,
                                      StreamedBody(0))
            assert status == 200, (cid, content)
            assert json.loads(content)["contest_id"] == cid
        assert client.get("/api/stats").json()["contests"] == 1
        # the route is reached with the id "/" (it used to answer 401 to an admin token)
        status, _, content = call(app, "DELETE", "/api/contests//", AUTH, StreamedBody(0))
        assert status == 404 and b"not found" in content, content


@pytest.mark.parametrize("cid, reason", [
    ("/", "only whitespace and '/'"),
    ("//", "only whitespace and '/'"),
    (" / ", "only whitespace and '/'"),
    ("   ", "only whitespace"),
    ("\u00a0", "only whitespace"),
    ("a\u202eb", "U+202E) is an invisible format character"),
    ("round\u3164", "U+3164) is default-ignorable"),
])
def test_odd_contest_ids_are_refused(small_db: str, cid: str, reason: str) -> None:
    body = {"name": "x", "time_seconds": T0 + 5, "standings": [["alice", 0, 0], ["bob", 1, 1]]}
    with TestClient(create_app(small_db, TOKEN)) as client:
        r = client.post("/api/contests", params={"contest_id": cid}, json=body, headers=AUTH)
        assert r.status_code == 422, r.text
        assert reason in r.json()["detail"]
        assert client.get("/api/stats").json()["contests"] == 1


def test_a_client_gone_before_the_first_byte_frees_its_place(small_db: str) -> None:
    """The export's place and spool are let go even when the answer never started (the
    client disconnected before its headers could be sent)."""
    import asyncio

    app = create_app(small_db, TOKEN, max_exports=1)

    async def run() -> None:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": "/api/export/ratings",
                 "raw_path": b"/api/export/ratings", "root_path": "",
                 "query_string": b"format=csv", "headers": [], "client": ("127.0.0.1", 1),
                 "server": ("127.0.0.1", 8000)}

        async def receive() -> dict[str, object]:
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                raise OSError("the client is gone")

        with pytest.raises(Exception):  # noqa: B017 - whatever the server makes of it
            await app(scope, receive, send)

    asyncio.run(run())
    deadline = time.monotonic() + 10
    while app.state.export_gate.held and time.monotonic() < deadline:
        time.sleep(0.05)
    assert app.state.export_gate.held == 0
