"""Named bearer tokens with roles (``podium.store.tokens``), the role-based guard of the
service (``podium.service.guard``: 401 vs 403, private servers, the server's own token
as admin), CORS, and ``podium token``; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

import _store_cases as cases  # noqa: E402
from _asgi import StreamedBody, call  # noqa: E402

from podium import Contest  # noqa: E402
from podium.cli import main  # noqa: E402
from podium.errors import PodiumError  # noqa: E402
from podium.service.app import check_cors_origins, create_app, create_app_from_env  # noqa: E402
from podium.service.guard import ROUTE_ROLES, Authenticator, required_role  # noqa: E402
from podium.store import Store, StoreError  # noqa: E402
from podium.store.tokens import TOKEN_PREFIX, TokenIdentity, hash_secret, role_allows  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

T0 = 1_700_000_000


def contest_json(name: str, t: int, handles: list[str]) -> dict[str, Any]:
    return {"name": name, "time_seconds": t,
            "standings": [[h, k, k] for k, h in enumerate(handles)]}


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture()
def store(store_url: str) -> Iterator[Store]:
    with Store.create(store_url, "mmr") as s:
        yield s


# ---------------------------------------------------------------------- the store
def test_create_check_list_revoke(store: Store) -> None:
    secret = store.create_token("ci-bot", "write")
    assert secret.startswith(TOKEN_PREFIX) and len(secret) == len(TOKEN_PREFIX) + 43
    assert store.check_token(secret) == TokenIdentity("ci-bot", "write")
    other = store.create_token("ops@example.org", "admin")
    assert other != secret
    assert store.check_token(other).role == "admin"  # type: ignore[union-attr]
    for wrong in (secret + "x", secret[:-1], "podium_", "", "Bearer " + secret,
                  secret.replace("podium_", "other_"), "podium_" + "\udcff" * 3, "x" * 5000):
        assert store.check_token(wrong) is None, wrong
    listed = store.tokens()
    assert [(t.name, t.role, t.active) for t in listed] == [("ci-bot", "write", True),
                                                           ("ops@example.org", "admin", True)]
    assert all(t.created_by.startswith("python:") for t in listed)
    info = store.revoke_token("ci-bot")
    assert info.name == "ci-bot" and not info.active and info.revoked_at is not None
    assert store.check_token(secret) is None
    assert store.check_token(other) is not None
    assert store.count_tokens() == 1 and store.count_tokens(roles=("write",)) == 0
    with pytest.raises(StoreError, match="'ci-bot' is revoked already"):
        store.revoke_token("ci-bot")
    for nobody in ("nobody", "no\x00body", ""):
        with pytest.raises(StoreError, match="no token named"):
            store.revoke_token(nobody)
    # names are never reused, even once revoked: the audit log names one token
    with pytest.raises(StoreError, match=r"named 'ci-bot' exists already \(revoked\)"):
        store.create_token("ci-bot", "read")


def test_only_the_hash_is_stored(store: Store, store_url: str) -> None:
    secret = store.create_token("reader", "read")
    rows = cases.dump(store_url)
    text = repr(rows)
    assert secret not in text and secret[len(TOKEN_PREFIX):] not in text
    assert hash_secret(secret) in text


@pytest.mark.parametrize(("name", "role", "needle"), [
    ("", "read", "token name ''"), ("a b", "read", "token name 'a b'"),
    ("x" * 65, "read", "1 to 64 characters"), ("-lead", "read", "starting with"),
    ("ok", "root", "token role 'root'"), ("ok", "", "must be one of read, write, admin"),
])
def test_bad_names_and_roles(store: Store, name: str, role: str, needle: str) -> None:
    with pytest.raises(StoreError, match=needle.replace("(", r"\(")):
        store.create_token(name, role)
    assert store.tokens() == []


def test_roles_nest() -> None:
    assert role_allows("admin", "write") and role_allows("write", "read")
    assert not role_allows("read", "write") and not role_allows("write", "admin")


# ---------------------------------------------------------------------- the command line
def test_cli(store_url: str, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> None:
    Store.create(store_url, "mmr").close()
    assert main(["token", "create", "--db", store_url, "--role", "write", "--name", "bot"]) == 0
    out, err = capsys.readouterr()
    secret = out.strip()
    assert out == secret + "\n" and secret.startswith(TOKEN_PREFIX)  # nothing else on stdout
    assert "shown only now" in err and secret not in err
    monkeypatch.setenv("PODIUM_ACTOR", "deploy-script")
    assert main(["token", "create", "--db", store_url, "--role", "admin", "--name", "ops"]) == 0
    capsys.readouterr()
    assert main(["token", "list", "--db", store_url, "--json"]) == 0
    out, _ = capsys.readouterr()
    assert secret not in out
    listed = json.loads(out)
    assert [(t["name"], t["role"], t["active"]) for t in listed] == [("bot", "write", True),
                                                                    ("ops", "admin", True)]
    assert listed[0]["created_by"].startswith("cli:")
    assert listed[1]["created_by"] == "deploy-script"
    assert main(["token", "list", "--db", store_url]) == 0
    out, _ = capsys.readouterr()
    assert "bot" in out and "active" in out and secret not in out
    assert main(["token", "revoke", "bot", "--db", store_url]) == 0
    assert "revoked token 'bot'" in capsys.readouterr().out
    assert main(["token", "revoke", "bot", "--db", store_url]) == 1
    assert "revoked already" in capsys.readouterr().err
    assert main(["token", "create", "--db", store_url, "--role", "read", "--name",
                 "bad name"]) == 1
    assert "token name 'bad name'" in capsys.readouterr().err
    with Store.open(store_url) as s:
        assert s.check_token(secret) is None
        actions = [(e.action, e.actor) for e in s.audit().entries]
    assert actions[0][0] == "token-revoke" and actions[1] == ("token-create", "deploy-script")
    assert actions[2][0] == "token-create" and actions[2][1].startswith("cli:")


# ---------------------------------------------------------------------- the service
@pytest.fixture()
def served(store_url: str) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A server on a store holding one contest and a token of each role (cached 0 s, so
    that revocations are seen at once), with its own token ``server-secret``."""
    with Store.create(store_url, "mmr") as s:
        s.ingest(Contest([("ann", 0, 0), ("bob", 1, 1)], name="r0", time_seconds=T0))
        secrets = {role: s.create_token(f"{role}-bot", role)
                   for role in ("read", "write", "admin")}
    secrets["server"] = "server-secret"
    with TestClient(create_app(store_url, "server-secret", token_cache_s=0)) as client:
        yield client, secrets


def test_roles_over_http(served: tuple[TestClient, dict[str, str]]) -> None:
    client, sec = served
    body = contest_json("r1", T0 + 10, ["ann", "bob", "cat"])
    # no token, an unknown one, a read token: refused, 401 or 403
    r = client.post("/api/contests", json=body)
    assert r.status_code == 401 and "missing Authorization" in r.json()["detail"]
    assert r.headers["www-authenticate"].startswith("Bearer")
    r = client.post("/api/contests", json=body, headers=bearer("podium_unknown"))
    assert r.status_code == 401 and "unknown or revoked" in r.json()["detail"]
    r = client.post("/api/contests", json=body, headers=bearer(sec["read"]))
    assert r.status_code == 403, r.text
    assert r.json()["detail"] == ("forbidden: POST /api/contests needs a token with role "
                                  "'write'; the token 'read-bot' has role 'read'")
    assert "www-authenticate" not in r.headers
    # a write token ingests, and is the actor of the audit row
    r = client.post("/api/contests", json=body, headers=bearer(sec["write"]))
    assert r.status_code == 201, r.text
    # the audit log needs admin
    r = client.get("/api/audit", headers=bearer(sec["write"]))
    assert r.status_code == 403 and "role 'admin'" in r.json()["detail"]
    assert client.get("/api/audit").status_code == 401
    for who in ("admin", "server"):
        r = client.get("/api/audit", headers=bearer(sec[who]))
        assert r.status_code == 200, r.text
        top = r.json()["entries"][0]
        assert (top["action"], top["contest_id"], top["actor"]) == (
            "ingest", "r1", "token:write-bot (write)")
    # the server's own token is an admin and writes as 'server-token'
    r = client.post("/api/contests", json=contest_json("r2", T0 + 20, ["ann", "cat"]),
                    headers=bearer(sec["server"]))
    assert r.status_code == 201
    top = client.get("/api/audit", headers=bearer(sec["admin"])).json()["entries"][0]
    assert top["actor"] == "token:server-token (admin)"
    # reads are open on a public server
    assert client.get("/api/leaderboard").status_code == 200
    assert client.get("/api/health").json()["writes_enabled"] is True


def test_revocation_takes_effect(served: tuple[TestClient, dict[str, str]],
                                 store_url: str) -> None:
    client, sec = served
    assert client.get("/api/audit", headers=bearer(sec["admin"])).status_code == 200
    with Store.open(store_url) as s:
        s.revoke_token("admin-bot")
    r = client.get("/api/audit", headers=bearer(sec["admin"]))
    assert r.status_code == 401 and "unknown or revoked" in r.json()["detail"]


def test_cache_remembers_valid_tokens_for_a_while() -> None:
    calls: list[str] = []

    class FakeStore:
        def check_token(self, secret: str) -> Any:
            calls.append(secret)
            from podium.store.tokens import TokenIdentity

            return TokenIdentity("bot", "write") if secret == "podium_ok" else None

        def count_tokens(self, roles: tuple[str, ...] = ()) -> int:
            return 1

    auth = Authenticator(FakeStore(), None, cache_s=60)
    for _ in range(3):
        ident, why = auth.resolve("Bearer podium_ok")
        assert ident is not None and (ident.name, ident.role) == ("bot", "write") and not why
    assert calls == ["podium_ok"]  # looked up once, then remembered
    for _ in range(2):
        assert auth.resolve("Bearer podium_bad")[0] is None
    assert calls == ["podium_ok", "podium_bad", "podium_bad"]  # failures are not remembered
    auth.forget()
    auth.resolve("Bearer podium_ok")
    assert calls[-1] == "podium_ok" and len(calls) == 4
    assert auth.resolve("Basic abc") == (None, "Authorization header must be 'Bearer TOKEN'")


def _raw(app: Any, method: str, path: str, headers: dict[str, str],
         total: int) -> tuple[int, dict[str, str], bytes, int]:
    """One request straight to the ASGI app with a body of ``total`` bytes; also returns
    how many bytes the app pulled."""
    body = StreamedBody(total)
    code, out_headers, out = call(app, method, path, headers, body)
    return code, out_headers, out, body.pulled


def test_refused_before_the_body(served: tuple[TestClient, dict[str, str]],
                                 store_url: str) -> None:
    """A 403 (weak role) is answered from the headers, like a 401: no byte of the body
    is read; corrections (DELETE/PUT of a contest) need admin."""
    _client, sec = served
    app = create_app(store_url, None, token_cache_s=0)
    big = 8 * 1024 * 1024
    for method, path, token, status in (
        ("POST", "/api/contests", sec["read"], 403),
        ("PUT", "/api/contests/r0", sec["write"], 403),
        ("DELETE", "/api/contests/r0", sec["write"], 403),
        ("PUT", "/api/contests/r0", "podium_nope", 401),
    ):
        code, headers, body, pulled = _raw(app, method, path,
                                           {**bearer(token), "content-length": str(big)}, big)
        assert (code, pulled) == (status, 0), (method, path, body)
        assert json.loads(body)["detail"]
        assert headers["x-content-type-options"] == "nosniff"


def test_route_table() -> None:
    assert required_role("POST", "/api/contests") == "write"
    assert required_role("DELETE", "/api/contests/https://x.org/c/1") == "admin"
    assert required_role("PUT", "/api/contests/r1") == "admin"
    assert required_role("PUT", "/api/contests") is None  # no such route: the app's 405
    assert required_role("GET", "/api/audit") == "admin"
    assert required_role("HEAD", "/api/audit") == "admin"
    assert required_role("GET", "/api/leaderboard") is None
    assert required_role("GET", "/api/leaderboard", private=True) == "read"
    assert required_role("POST", "/api/predict", private=True) == "read"
    assert required_role("GET", "/api/health", private=True) is None
    assert required_role("GET", "/static/style.css", private=True) is None
    assert all(role in ("read", "write", "admin") for _m, _p, role in ROUTE_ROLES)


def test_private_server(store_url: str) -> None:
    with Store.create(store_url, "mmr") as s:
        s.ingest(Contest([("ann", 0, 0), ("bob", 1, 1)], name="r0", time_seconds=T0))
        reader = s.create_token("viewer", "read")
        writer = s.create_token("ci", "write")
    with TestClient(create_app(store_url, None, private=True)) as client:
        for path in ("/api/leaderboard", "/api/players/ann", "/api/contests", "/",
                     "/players/ann", "/openapi.json", "/docs", "/api/export/ratings"):
            r = client.get(path)
            assert r.status_code == 401, path
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert client.get(path, headers=bearer(reader)).status_code == 200, path
            assert client.get(path, headers=bearer(writer)).status_code == 200, path
        assert client.post("/api/predict", json={"handles": ["ann", "bob"]}).status_code == 401
        assert client.post("/api/predict", json={"handles": ["ann", "bob"]},
                           headers=bearer(reader)).status_code == 200
        assert client.get("/api/health").status_code == 200  # for load balancers
        assert client.get("/static/style.css").status_code == 200
    # a private server without any token says so
    with Store.open(store_url) as s:
        s.revoke_token("viewer")
        s.revoke_token("ci")
    with TestClient(create_app(store_url, None, private=True)) as client:
        r = client.get("/api/leaderboard", headers=bearer(reader))
        assert r.status_code == 401 and "private and has no valid token" in r.json()["detail"]
        r = client.post("/api/contests", json=contest_json("r1", T0 + 1, ["a", "b"]))
        assert r.status_code == 401 and "writes are disabled" in r.json()["detail"]
        assert client.get("/api/health").json()["writes_enabled"] is False


# ---------------------------------------------------------------------- CORS
def test_cors(store_url: str) -> None:
    Store.create(store_url, "mmr").close()
    origin = "https://app.example.org"
    with TestClient(create_app(store_url, "tok", cors_origins=[origin])) as client:
        # a preflight carries no token: answered before the guard
        pre = client.options("/api/contests", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == origin
        assert "POST" in pre.headers["access-control-allow-methods"]
        assert "authorization" in pre.headers["access-control-allow-headers"].lower()
        bad = client.options("/api/contests", headers={
            "Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        assert bad.status_code == 400 and "access-control-allow-origin" not in bad.headers
        # the guard's 401 is readable by the page (CORS headers on it), and so are reads
        r = client.post("/api/contests", json={}, headers={"Origin": origin})
        assert r.status_code == 401
        assert r.headers["access-control-allow-origin"] == origin
        assert "www-authenticate" in r.headers["access-control-expose-headers"].lower()
        r = client.post("/api/contests", json=contest_json("r0", T0, ["a", "b"]),
                        headers={"Origin": origin, **bearer("tok")})
        assert r.status_code == 201 and r.headers["access-control-allow-origin"] == origin
        r = client.get("/api/leaderboard", headers={"Origin": "https://evil.example"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    # without origins: no CORS headers at all
    with TestClient(create_app(store_url, "tok")) as client:
        r = client.get("/api/leaderboard", headers={"Origin": origin})
        assert "access-control-allow-origin" not in r.headers
        assert client.options("/api/contests", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST"}).status_code == 405


def test_cors_configuration(store_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_cors_origins("https://a.org, http://localhost:3000") == (
        "https://a.org", "http://localhost:3000")
    assert check_cors_origins(["*"]) == ("*",)
    for bad in ("https://a.org/", "a.org", "https://a.org/app", "ftp://a.org", ""):
        with pytest.raises(PodiumError, match="CORS origin"):
            check_cors_origins([bad])
    Store.create(store_url, "mmr").close()
    monkeypatch.setenv("PODIUM_DB", store_url)
    monkeypatch.setenv("PODIUM_CORS_ORIGINS", "https://a.org,https://b.org")
    monkeypatch.setenv("PODIUM_PRIVATE", "1")
    with TestClient(create_app_from_env()) as client:
        r = client.get("/api/health", headers={"Origin": "https://b.org"})
        assert r.headers["access-control-allow-origin"] == "https://b.org"
        assert client.get("/api/leaderboard").status_code == 401
    monkeypatch.setenv("PODIUM_CORS_ORIGINS", "https://a.org/path")
    with pytest.raises(PodiumError, match="CORS origin"):
        create_app_from_env()


# ---------------------------------------------------------------------- podium serve
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_private_with_cors(tmp_path: Any, workers: str) -> None:
    """``podium serve --private --cors-origin`` (one worker, and several: the options
    travel to the workers through the environment)."""
    import httpx
    from _service import running_server

    db = f"sqlite:///{tmp_path / 'served.db'}"
    with Store.create(db, "mmr") as s:
        s.ingest(Contest([("ann", 0, 0), ("bob", 1, 1)], name="r0", time_seconds=T0))
        reader = s.create_token("viewer", "read")
    origin = "https://app.example.org"
    with running_server(db, tmp_path, token="server-secret", extra=[
            "--private", "--cors-origin", origin, "--workers", workers]) as server:
        r = httpx.get(server.url + "/api/leaderboard")
        assert r.status_code == 401
        for secret in (reader, "server-secret"):
            r = httpx.get(server.url + "/api/leaderboard", headers=bearer(secret))
            assert r.status_code == 200 and r.json()["rows"][0]["handle"] == "ann"
        pre = httpx.options(server.url + "/api/contests", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization"})
        assert pre.status_code == 200
        assert pre.headers["access-control-allow-origin"] == origin
        r = httpx.post(server.url + "/api/contests", headers=bearer(reader),
                       json=contest_json("r1", T0 + 5, ["ann", "bob"]))
        assert r.status_code == 403 and "role 'write'" in r.json()["detail"]
