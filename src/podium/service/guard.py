"""The service's outer defences, as ASGI middleware and a logging filter.

* :class:`RequestGuard` -- access first, then body limits.  Each route needs a *role*
  (:func:`required_role`, from the table :data:`ROUTE_ROLES`: ``write`` for ingestion,
  ``admin`` for corrections and the audit log; ``read`` for every other route when the
  server is private, else none).  A request to a route that needs one is answered from
  its headers alone, before one byte of its body is read: 401 (with
  ``WWW-Authenticate: Bearer``) without a valid bearer token -- none, unknown, revoked --
  and 403 with a valid token whose role is too weak (the message names the role
  needed).  Tokens are resolved by :class:`Authenticator`.  A body over the route's
  limit (``max_body_bytes`` for writes, ``max_predict_bytes`` for ``POST /api/predict``
  and for any other request) is refused with 413 on its ``Content-Length`` or as soon
  as the bytes read pass the limit.  Only then is the body buffered (at most the limit)
  and handed to the app, with the caller recorded as the actor of its writes
  (:func:`podium.store.actor.acting_as`: ``token:NAME (ROLE)``).
* :class:`SecurityHeaders` -- ``X-Content-Type-Options: nosniff``, ``X-Frame-Options:
  DENY`` and ``Referrer-Policy: same-origin`` on every answer; a Content-Security-Policy
  on HTML pages (:data:`PAGE_CSP`: scripts, styles and images from the service itself
  only, no inline script, no framing) and on JSON (``default-src 'none'``).  A route may
  set its own policy (the API page ``/docs`` adds the hash of its inline script).
* :class:`RedactSecrets` -- a :class:`logging.Filter` that replaces the values of
  ``token=``, ``access_token=``, ``api_key=``, ``password=`` (...) query parameters in
  log records by ``[REDACTED]``: uvicorn's access log writes the request line with its
  query string.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from fastapi.responses import JSONResponse

from podium.store.actor import acting_as

log = logging.getLogger("podium.service")

__all__ = [
    "Authenticator",
    "Identity",
    "LEGACY_TOKEN_NAME",
    "PUBLIC_ROUTES",
    "ROUTE_ROLES",
    "PAGE_CSP",
    "RedactSecrets",
    "RequestGuard",
    "SecurityHeaders",
    "WRITE_ROUTES",
    "csp_hash",
    "database_error",
    "identity_problem",
    "install_log_redaction",
    "redact",
    "required_role",
    "token_problem",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The roles, weakest first; each allows what the ones before it allow (the same as
#: :data:`podium.store.tokens.ROLES`).
ROLES = ("read", "write", "admin")

#: ``(method, path, role)``: the role a route needs, first match wins.  A path ending in
#: ``/*`` matches every path below it (``/api/contests/*``: ``/api/contests/X``, any
#: ``X``).  Adding a protected route means adding its line here.  Routes not listed need
#: ``read`` on a private server and nothing otherwise (:func:`required_role`).
ROUTE_ROLES: tuple[tuple[str, str, str], ...] = (
    ("POST", "/api/contests", "write"),
    ("DELETE", "/api/contests/*", "admin"),
    ("PUT", "/api/contests/*", "admin"),
    ("GET", "/api/audit", "admin"),
)
#: ``(method, path)`` of the routes that need a ``write`` or ``admin`` token (the
#: routes of :data:`ROUTE_ROLES` with an exact path).
WRITE_ROUTES = frozenset((m, p) for m, p, _r in ROUTE_ROLES if not p.endswith("/*"))
#: Paths open even on a private server: liveness for load balancers, and the style
#: sheet and script of the pages (``/static/*``).
PUBLIC_ROUTES: tuple[str, ...] = ("/api/health", "/static/*")
#: The name under which the server's own token (``--token``, ``PODIUM_TOKEN``) acts;
#: its role is ``admin`` (it was the one key of servers before named tokens).
LEGACY_TOKEN_NAME = "server-token"
#: The route whose body may be up to ``max_predict_bytes`` (public).
PREDICT_ROUTE = ("POST", "/api/predict")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def csp_hash(text: str) -> str:
    """The CSP source expression (``'sha256-...'``) that allows an inline ``<script>``
    or ``<style>`` whose content is exactly ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _chart_style_hash() -> str:
    from podium.service.charts import CHART_STYLE

    return csp_hash(CHART_STYLE)


#: The Content-Security-Policy of the HTML pages: everything from the service itself,
#: no inline script, the one inline style of the rating chart by its hash, no framing.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' " + _chart_style_hash()
    + "; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
#: The Content-Security-Policy of JSON and other answers: nothing may run or load.
DATA_CSP = "default-src 'none'; frame-ancestors 'none'"
_COMMON = ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
           (b"referrer-policy", b"same-origin"))


def _matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (as sent) is matched by ``pattern``: a wildcard pattern by the
    path as it is (``/api/contests//`` is the contest ``/`` of ``/api/contests/*``), an
    exact one by the path without its trailing slashes."""
    if pattern.endswith("/*"):
        return path.startswith(pattern[:-1]) and len(path) > len(pattern) - 1
    return (path.rstrip("/") or "/") == pattern


def required_role(method: str, path: str, *, private: bool = False) -> str | None:
    """The role a request needs (``None``: none), from :data:`ROUTE_ROLES`; ``path`` as
    sent (see :func:`_matches`).  On a private server every route not in
    :data:`PUBLIC_ROUTES` needs at least ``read``.  ``HEAD`` needs what ``GET`` needs."""
    if method == "HEAD":
        method = "GET"
    for m, pattern, role in ROUTE_ROLES:
        if m == method and _matches(pattern, path):
            return role
    if private and not any(_matches(p, path) for p in PUBLIC_ROUTES):
        return "read"
    return None


@dataclass(frozen=True)
class Identity:
    """Who a request's bearer token belongs to: the token's ``name`` and ``role``."""

    name: str
    role: str

    @property
    def actor(self) -> str:
        """The actor of this caller's writes in the audit log."""
        return f"token:{self.name} ({self.role})"

    def allows(self, needed: str) -> bool:
        """Whether this identity's role includes ``needed``."""
        return ROLES.index(self.role) >= ROLES.index(needed)


#: ``scope["state"]`` key of the request's :class:`Identity` (set by the guard).
IDENTITY_KEY = "podium_identity"


class Authenticator:
    """Resolve a bearer token: the server's own token (``admin``), else a named token
    of the store (:meth:`podium.store.Store.check_token`).

    A valid named token is remembered for ``cache_s`` seconds (default 5): within that
    time the store is not asked again, so a revocation takes effect after at most
    ``cache_s`` seconds in every worker (:meth:`forget` drops what is remembered at
    once).  Unknown and revoked tokens are not remembered (each costs one indexed
    lookup, in a worker thread).

    Parameters
    ----------
    store:
        The store holding the tokens (anything with ``check_token`` and
        ``count_tokens``), or ``None``: the server's token only.
    token:
        The server's own token (``--token``), or ``None``.
    cache_s:
        How long a valid named token is remembered.
    """

    def __init__(self, store: Any, token: str | None, *, cache_s: float = 5.0) -> None:
        self.store = store
        self.token = token or None
        self.cache_s = float(cache_s)
        self._valid: dict[str, tuple[Identity, float]] = {}
        self._any: dict[bool, tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Drop what is remembered (after a token is revoked or created here)."""
        with self._lock:
            self._valid.clear()
            self._any.clear()

    def _lookup(self, secret: str) -> Identity | None:
        from podium.store.tokens import hash_secret

        key = hash_secret(secret)
        now = time.monotonic()
        with self._lock:
            hit = self._valid.get(key)
            if hit is not None and hit[1] > now:
                return hit[0]
        found = self.store.check_token(secret)
        if found is None:
            return None
        ident = Identity(found.name, found.role)
        with self._lock:
            if len(self._valid) > 10_000:
                self._valid.clear()
            self._valid[key] = (ident, now + self.cache_s)
        return ident

    def has_tokens(self, *, writers: bool = False) -> bool:
        """Whether any token could authenticate -- the server's, or a valid named one
        (with ``writers``: of role ``write`` or ``admin``); the store's answer is
        remembered for ``cache_s`` seconds."""
        if self.token is not None:
            return True
        if self.store is None:
            return False
        now = time.monotonic()
        with self._lock:
            hit = self._any.get(writers)
            if hit is not None and hit[1] > now:
                return hit[0]
        roles = ("write", "admin") if writers else ROLES
        found = self.store.count_tokens(roles=roles) > 0
        with self._lock:
            self._any[writers] = (found, now + self.cache_s)
        return found

    def resolve(self, header: str | None) -> tuple[Identity | None, str]:
        """``(identity, "")`` for a valid ``Authorization`` header, else ``(None, why)``
        (blocking: it may query the store; the guard calls it in a worker thread)."""
        if not header:
            return None, "missing Authorization header: send 'Authorization: Bearer TOKEN'"
        scheme, _, given = header.partition(" ")
        given = given.strip()
        if scheme.lower() != "bearer" or not given:
            return None, "Authorization header must be 'Bearer TOKEN'"
        if self.token is not None and hmac.compare_digest(
                given.encode("utf-8", "surrogateescape"),
                self.token.encode("utf-8", "surrogateescape")):
            return Identity(LEGACY_TOKEN_NAME, "admin"), ""
        if self.store is not None:
            ident = self._lookup(given)
            if ident is not None:
                return ident, ""
        return None, "wrong bearer token: no valid token has this secret (unknown or revoked)"


def identity_problem(scope: Scope, needed: str) -> tuple[int, str] | None:
    """``(status, message)`` when the request of ``scope`` may not do what needs
    ``needed`` (per the :class:`Identity` the guard found), else ``None``; for routes'
    own checks behind the guard."""
    state = scope.get("state") or {}
    ident = state.get(IDENTITY_KEY) if isinstance(state, dict) else None
    if not isinstance(ident, Identity):
        return 401, "missing Authorization header: send 'Authorization: Bearer TOKEN'"
    if not ident.allows(needed):
        return 403, _forbidden(ident, needed, str(scope.get("method")), route_path(scope))
    return None


def _forbidden(ident: Identity, needed: str, method: str, path: str) -> str:
    return (f"forbidden: {method} {path} needs a token with role {needed!r}; the token "
            f"{ident.name!r} has role {ident.role!r}")


def token_problem(expected: str | None, header: str | None) -> str | None:
    """Why the ``Authorization`` header ``header`` does not authorise a write (``None``
    when it does); ``expected`` is the server's token (``None``: writes disabled)."""
    if expected is None:
        return "writes are disabled: this server was started without --token"
    if not header:
        return "missing Authorization header: send 'Authorization: Bearer TOKEN'"
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return "Authorization header must be 'Bearer TOKEN'"
    if not hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"),
                               expected.encode("utf-8", "surrogateescape")):
        return "wrong bearer token"
    return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def route_path(scope: Scope) -> str:
    """The request's path inside the app (without the ``root_path`` it is mounted at)."""
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root):]
    return path


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}


async def _answer(scope: Scope, send: Send, status: int, detail: str,
                  headers: dict[str, str] | None = None) -> None:
    """Answer without reading the request's body."""
    await JSONResponse({"detail": detail}, status_code=status, headers=headers)(
        scope, _no_receive, send)


class RequestGuard:
    """Access first, then the body limits (see the module notes).

    Parameters
    ----------
    app:
        The ASGI app.
    max_body_bytes:
        Largest body of a request that needs ``write`` or ``admin``.
    max_predict_bytes:
        Largest body of ``POST /api/predict`` and of any other request with a body (at
        most ``max_body_bytes``: the smaller of the two applies).
    auth:
        A callable giving the :class:`Authenticator` of a request (``None``: no token
        is valid); by default ``app.state.auth`` of the Starlette app serving it.
    private:
        A callable telling whether the server is private (every route but
        :data:`PUBLIC_ROUTES` needs ``read``); by default ``app.state.private``.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, max_predict_bytes: int,
                 auth: Callable[[Scope], Authenticator | None] | None = None,
                 private: Callable[[Scope], bool] | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_predict_bytes = min(max_predict_bytes, max_body_bytes)
        self.auth = auth or _app_auth
        self.private = private or _app_private

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method"))
        bad_url = _invalid_utf8(scope)
        if bad_url is not None:
            await _answer(scope, send, 400, bad_url)
            return
        full = route_path(scope)
        path = full.rstrip("/") or "/"
        needed = required_role(method, full, private=self.private(scope))
        ident: Identity | None = None
        if needed is not None:
            auth = self.auth(scope)
            raw = _header(scope, b"authorization")
            header = None if raw is None else raw.decode("latin-1")
            try:
                if auth is None:
                    ident, why = None, ""
                elif header and header.partition(" ")[2].strip().startswith("podium_"):
                    # a named token: the store may be asked, off the event loop
                    ident, why = await anyio.to_thread.run_sync(auth.resolve, header)
                else:
                    ident, why = auth.resolve(header)
                writers = needed != "read"
                disabled = ident is None and (auth is None or not await anyio.to_thread.run_sync(
                    functools.partial(auth.has_tokens, writers=writers)))
            except Exception as exc:
                if not database_error(exc):
                    raise
                log.warning("503 on %s %s: database unavailable or busy while checking the "
                            "token (%s)", method, path, type(exc).__name__)
                await _answer(scope, send, 503, f"database unavailable or busy "
                              f"({type(exc).__name__}); retry later", {"Retry-After": "1"})
                return
            if ident is None:
                if disabled:
                    why = ("writes are disabled: this server was started without --token and "
                           "its store holds no valid write or admin token (podium token "
                           "create)" if writers else
                           "this server is private and has no valid token (podium token "
                           "create --role read)")
                await _answer(scope, send, 401, why,
                              {"WWW-Authenticate": 'Bearer realm="podium"'})
                return
            if not ident.allows(needed):
                await _answer(scope, send, 403, _forbidden(ident, needed, method, path))
                return
            state = scope.setdefault("state", {})
            if isinstance(state, dict):
                state[IDENTITY_KEY] = ident
        if method not in _BODY_METHODS:
            await self._call(scope, receive, send, ident)
            return
        if needed in ("write", "admin"):
            limit, what = self.max_body_bytes, "max_body_bytes"
        else:
            limit, what = self.max_predict_bytes, "max_predict_bytes"
        too_large = (f"request body is larger than the limit of {limit} bytes for "
                     f"{method} {path} ({what})")
        declared = _header(scope, b"content-length")
        if declared is not None:
            digits = declared.strip()
            if not digits.isdigit():
                await _answer(scope, send, 400, "invalid Content-Length header")
                return
            if len(digits) > 18 or int(digits) > limit:
                await _answer(scope, send, 413, too_large)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > limit:
                await _answer(scope, send, 413, too_large)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        whole = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self._call(scope, replay, send, ident)

    async def _call(self, scope: Scope, receive: Receive, send: Send,
                    ident: Identity | None) -> None:
        if ident is None:
            await self.app(scope, receive, send)
            return
        with acting_as(ident.actor):
            await self.app(scope, receive, send)


def database_error(exc: BaseException) -> bool:
    """Whether ``exc`` says that the database cannot answer now (unreachable, locked, or
    no free connection in the pool): SQLAlchemy's ``OperationalError``, ``TimeoutError``
    and ``DisconnectionError`` (told by name: this module does not import SQLAlchemy)."""
    kind = type(exc)
    return (kind.__module__ or "").startswith("sqlalchemy") and kind.__name__ in (
        "OperationalError", "TimeoutError", "DisconnectionError")


def _percent_decoded(raw: bytes) -> bytes:
    """``raw`` with its ``%XX`` escapes decoded (``+`` kept), as bytes."""
    return urllib.parse.unquote_to_bytes(raw)


def _invalid_utf8(scope: Scope) -> str | None:
    """Why the request's path or query string is not UTF-8 once percent-decoded (``None``
    when both are): servers decode such bytes to U+FFFD, which would then be taken as
    the text sent (``/api/contests/%ED%A0%80`` is no contest id)."""
    raw_path = scope.get("raw_path")
    for what, raw in (("path", raw_path if isinstance(raw_path, bytes) else None),
                      ("query string", scope.get("query_string"))):
        if not raw:
            continue
        try:
            _percent_decoded(bytes(raw)).decode("utf-8")
        except UnicodeDecodeError as exc:
            return (f"the URL's {what} is not UTF-8 once percent-decoded (byte {exc.start + 1} "
                    "of it): send text as UTF-8, e.g. %C3%A9 for \u00e9")
    return None


def _app_auth(scope: Scope) -> Authenticator | None:
    app = scope.get("app")
    auth = getattr(getattr(app, "state", None), "auth", None)
    return auth if isinstance(auth, Authenticator) else None


def _app_private(scope: Scope) -> bool:
    app = scope.get("app")
    return bool(getattr(getattr(app, "state", None), "private", False))


class SecurityHeaders:
    """Add the security headers to every answer (see the module notes); a header the
    app set itself is kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {bytes(k).lower() for k, _ in headers}
                ctype = next((bytes(v) for k, v in headers
                              if bytes(k).lower() == b"content-type"), b"")
                extra = list(_COMMON)
                if ctype.startswith(b"text/html"):
                    extra.append((b"content-security-policy", PAGE_CSP.encode()))
                elif ctype.startswith(b"application/json"):
                    extra.append((b"content-security-policy", DATA_CSP.encode()))
                headers.extend((k, v) for k, v in extra if k not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


#: Query parameters whose values never reach a log.
SECRET_PARAMS = ("token", "access_token", "auth", "authorization", "api_key", "apikey",
                 "key", "password", "passwd", "secret", "client_secret", "bearer")
_SECRET_RE = re.compile(
    r"([?&;](?:" + "|".join(re.escape(p) for p in SECRET_PARAMS) + r")=)[^&;#\s\"']*",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with the value of every secret-looking query parameter replaced."""
    return _SECRET_RE.sub(r"\1[REDACTED]", text) if "=" in text else text


class RedactSecrets(logging.Filter):
    """Rewrite a log record's message and arguments with :func:`redact` (never drops a
    record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in args)
        elif isinstance(args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in args.items()}
        return True


#: The loggers that may write a request's URL: uvicorn's access and error logs and the
#: service's own.
REDACTED_LOGGERS = ("uvicorn.access", "uvicorn.error", "podium.service")


def install_log_redaction(loggers: Iterable[str] = REDACTED_LOGGERS) -> None:
    """Put one :class:`RedactSecrets` filter on each of ``loggers`` (idempotent)."""
    for name in loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
