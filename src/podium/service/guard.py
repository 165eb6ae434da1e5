"""The service's outer defences, as ASGI middleware and a logging filter.

* :class:`RequestGuard` -- authentication first, then body limits.  A write route
  (:data:`WRITE_ROUTES`) is refused with 401 from its headers alone, before one byte of
  its body is read; a body over the route's limit (``max_body_bytes`` for writes,
  ``max_predict_bytes`` for ``POST /api/predict`` and for any other request) is refused
  with 413 on its ``Content-Length`` or as soon as the bytes read pass the limit.  Only
  then is the body buffered (at most the limit) and handed to the app.
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
import hashlib
import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from fastapi.responses import JSONResponse

__all__ = [
    "PAGE_CSP",
    "RedactSecrets",
    "RequestGuard",
    "SecurityHeaders",
    "WRITE_PREFIXES",
    "WRITE_ROUTES",
    "csp_hash",
    "install_log_redaction",
    "redact",
    "token_problem",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: ``(method, path)`` of the routes that need the bearer token.
WRITE_ROUTES = frozenset({("POST", "/api/contests")})
#: ``(method, path prefix)`` of the routes under a prefix that need it: deleting and
#: replacing a contest (``/api/contests/{id}``, the id being the rest of the path).
WRITE_PREFIXES = (("DELETE", "/api/contests/"), ("PUT", "/api/contests/"))
#: The route whose body may be up to ``max_predict_bytes`` (public).
PREDICT_ROUTE = ("POST", "/api/predict")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def csp_hash(text: str) -> str:
    """The CSP source expression (``'sha256-...'``) that allows an inline ``<script>``
    or ``<style>`` whose content is exactly ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _chart_style_hash() -> str:
    from podium.service.charts import _STYLE

    return csp_hash(_STYLE)


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
    """Authentication first, then the body limits (see the module notes).

    Parameters
    ----------
    app:
        The ASGI app.
    max_body_bytes:
        Largest body of a write (``POST /api/contests``).
    max_predict_bytes:
        Largest body of ``POST /api/predict`` and of any other request with a body (at
        most ``max_body_bytes``: the smaller of the two applies).
    token:
        A callable giving the server's bearer token (``None``: writes disabled); by
        default ``app.state.token`` of the Starlette app serving the request.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, max_predict_bytes: int,
                 token: Callable[[Scope], str | None] | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_predict_bytes = min(max_predict_bytes, max_body_bytes)
        self.token = token or _app_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        if scope["type"] != "http" or method not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        path = route_path(scope).rstrip("/") or "/"
        route = (str(method), path)
        if route in WRITE_ROUTES or any(method == m and path.startswith(p)
                                        for m, p in WRITE_PREFIXES):
            auth = _header(scope, b"authorization")
            problem = token_problem(self.token(scope),
                                    None if auth is None else auth.decode("latin-1"))
            if problem is not None:
                await _answer(scope, send, 401, problem,
                              {"WWW-Authenticate": 'Bearer realm="podium"'})
                return
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

        await self.app(scope, replay, send)


def _app_token(scope: Scope) -> str | None:
    app = scope.get("app")
    state = getattr(app, "state", None)
    token = getattr(state, "token", None)
    return token if isinstance(token, str) and token else None


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
