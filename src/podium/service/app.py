"""The rating service: one FastAPI app serving the JSON API and the web pages.

>>> app = create_app("sqlite:///ratings.db", token="s3cret")   # doctest: +SKIP

Run it with ``podium serve --db URL --token T`` (see :mod:`podium.service.cli`) or
with any ASGI server; for several worker processes use the factory
:func:`create_app_from_env` (``uvicorn --factory podium.service.app:create_app_from_env``
with ``PODIUM_DB``, ``PODIUM_TOKEN``, ``PODIUM_MAX_BODY_BYTES`` and optionally
``PODIUM_MAX_PREDICT_BYTES``, ``PODIUM_MAX_PREDICT_PLAYERS``, ``PODIUM_ALLOW_FUTURE``,
``PODIUM_POOL_SIZE``, ``PODIUM_MAX_OVERFLOW``, ``PODIUM_MAX_EXPORTS``,
``PODIUM_MAX_EXPLAINS`` and ``PODIUM_SEND_TIMEOUT`` in the environment).

Errors are JSON ``{"detail": "..."}`` under ``/api/`` (and an HTML page elsewhere):

* 400 -- a body that is not JSON (or holds an integer of more than 4,300 digits);
* 401 -- a request that needs a token (a write; any read on a private server) without
  a valid one, and 403 -- a token whose role is too weak; both answered before the
  body is read (:class:`podium.service.guard.RequestGuard`);
* 404 -- unknown player, contest or path; 409 -- the store refuses the contest
  (older than the latest one, or the same id with other standings);
* 413 -- a body over ``max_body_bytes`` (an authenticated write) or
  ``max_predict_bytes`` (anything else), checked on ``Content-Length`` and while
  reading, before anything is parsed;
* 422 -- a parameter or a contest that fails validation, the store's input rules
  included (:mod:`podium.store.checks`: handles, time, weight, ceiling; the message
  names the field, the contest and the player);
* 429 -- too many exports or explanations at once in this server process
  (``max_exports``, ``max_explains``; ``Retry-After`` says when to retry);
* 503 -- the database could not be reached, stayed locked or had no free connection
  (``Retry-After: 1``); logged as one line.

Every answer carries the security headers of :class:`podium.service.guard.SecurityHeaders`
(a Content-Security-Policy on pages, ``nosniff``, no framing).

The interactive API page ``/docs`` (Swagger UI) is served without internet access:
its script, style sheet and icon come from the ``swagger-ui-bundle-v2`` package and
are served by the app under ``/docs/static/`` (see :func:`swagger_ui_dir`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from podium.errors import PodiumError
from podium.service import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_EXPLAINS,
    DEFAULT_MAX_EXPORTS,
    DEFAULT_MAX_PREDICT_BYTES,
    DEFAULT_MAX_PREDICT_PLAYERS,
    DEFAULT_SEND_TIMEOUT_S,
    MAX_PREDICT_PLAYERS_LIMIT,
)
from podium.service.api import format_validation_errors
from podium.service.guard import (
    Authenticator,
    RequestGuard,
    SecurityHeaders,
    csp_hash,
    install_log_redaction,
)
from podium.service.limits import Gate

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_PREDICT_BYTES", "DEFAULT_MAX_PREDICT_PLAYERS",
           "DOCS_ASSETS_URL", "create_app", "create_app_from_env", "swagger_ui_dir"]

log = logging.getLogger("podium.service")


#: Where the app serves the Swagger UI files that ``/docs`` loads.
DOCS_ASSETS_URL = "/docs/static"
#: The files of the Swagger UI distribution that ``/docs`` needs.
SWAGGER_UI_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")

def _is_api(request: Request) -> bool:
    path = request.url.path
    return path == "/api" or path.startswith("/api/") or path == "/openapi.json"


def _open_store(url: str, system: str | None, params: dict[str, Any] | None,
                options: dict[str, Any]) -> Any:
    from podium.store import Store

    if system is not None:
        return Store.open_or_create(url, system=system, params=params, **options)
    return Store.open(url, **options)


def swagger_ui_dir() -> Path | None:
    """The folder of the Swagger UI distribution shipped by ``swagger-ui-bundle-v2``.

    Returns
    -------
    pathlib.Path or None
        The folder holding :data:`SWAGGER_UI_FILES`; ``None`` when the package is not
        installed, lacks one of them or holds Swagger UI older than 5 (``/docs`` then
        falls back to FastAPI's page, which loads Swagger UI from a CDN).
    """
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    folder = Path(str(swagger_ui_path))
    if not all((folder / name).is_file() for name in SWAGGER_UI_FILES):
        return None
    # The older package swagger-ui-bundle (1.x) installs the same module with Swagger
    # UI 4, which cannot read OpenAPI 3.1 (FastAPI's schema): not usable.
    version = re.fullmatch(r"swagger-ui-(\d+)(?:\..*)?", folder.name)
    if version is not None and int(version.group(1)) < 5:
        return None
    return folder


#: Where FastAPI's own /docs page loads Swagger UI from when the bundle is not installed.
_CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _add_docs(app: FastAPI, assets: Path | None) -> None:
    """``GET /docs``: Swagger UI from the files in ``assets``, served under /docs/static/
    (``None``: from the CDN FastAPI uses), with a Content-Security-Policy that allows
    exactly the page's own inline script (by its hash)."""
    if assets is not None:
        app.mount(DOCS_ASSETS_URL, StaticFiles(directory=str(assets)), name="docs-static")
    title = f"{app.title} - API docs"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        urls: dict[str, Any] = {}
        if assets is not None:
            static = root + DOCS_ASSETS_URL
            urls = {"swagger_js_url": f"{static}/swagger-ui-bundle.js",
                    "swagger_css_url": f"{static}/swagger-ui.css",
                    "swagger_favicon_url": f"{static}/favicon-32x32.png"}
        page = get_swagger_ui_html(
            openapi_url=root + str(app.openapi_url), title=title, **urls,
            # no badge image from the public validator (a request to the internet)
            swagger_ui_parameters={"validatorUrl": None},
        )
        html = bytes(page.body).decode("utf-8")
        scripts = " ".join(csp_hash(m) for m in _INLINE_SCRIPT.findall(html))
        cdn = "" if assets is not None else " " + _CDN
        csp = (f"default-src 'none'; script-src 'self'{cdn} {scripts}; style-src 'self'{cdn}; "
               f"img-src 'self' data:{' https:' if cdn else ''}; connect-src 'self'; "
               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        return HTMLResponse(html, headers={"Content-Security-Policy": csp})


def create_app(
    store_url: str,
    token: str | None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    *,
    system: str | None = None,
    params: dict[str, Any] | None = None,
    store: Any = None,
    pool_size: int | None = None,
    max_overflow: int | None = None,
    synchronous: str = "normal",
    max_predict_bytes: int = DEFAULT_MAX_PREDICT_BYTES,
    max_predict_players: int = DEFAULT_MAX_PREDICT_PLAYERS,
    allow_future: bool = False,
    case_insensitive_handles: bool | None = None,
    private: bool = False,
    cors_origins: Sequence[str] | None = None,
    token_cache_s: float = 5.0,
    export_chunk_rows: int | None = None,
    max_exports: int = DEFAULT_MAX_EXPORTS,
    max_explains: int = DEFAULT_MAX_EXPLAINS,
    send_timeout_s: float = DEFAULT_SEND_TIMEOUT_S,
    keep_snapshots: int | None = None,
    explain_cache_s: float | None = None,
) -> FastAPI:
    """Build the app on the store at ``store_url``.

    Parameters
    ----------
    store_url:
        SQLAlchemy URL of the store (``sqlite:///path.db``,
        ``postgresql+psycopg://user@host/db``).
    token:
        The server's own bearer token, acting with role ``admin`` (the one key of
        servers before named tokens); ``None`` or ``""``: none.  Named tokens with roles
        (``podium token create``) are read from the store whatever this is; without
        either, every write answers 401.
    max_body_bytes:
        Largest body of a write (413 above it); checked only once the bearer token
        is (401 without reading the body otherwise).
    system, params:
        Rating system for a store that does not exist yet (``Store.open_or_create``);
        ``None``: the store must exist (``Store.open``).
    store:
        An already open store to use instead of opening ``store_url`` (tests); the app
        then does not close it.
    pool_size, max_overflow:
        The store's connection pool: connections kept open, and how many more may be
        opened under load (``None``: SQLAlchemy's defaults, 5 and 10); see
        :func:`podium.store.engine.make_engine`.
    synchronous:
        A SQLite store's durability, ``"normal"`` (default) or ``"full"`` (the store
        option; see :mod:`podium.store.engine`).
    max_predict_bytes:
        Largest body of ``POST /api/predict`` (public) and of any other request
        (413 above it).
    max_predict_players:
        Most players (handles and team members) in one prediction, at most
        :data:`~podium.service.MAX_PREDICT_PLAYERS_LIMIT` (422 above it).
    allow_future:
        Accept contests dated more than a day after the server's clock (simulations,
        scheduled contests); otherwise they are refused with 422.
    case_insensitive_handles:
        The handle policy of a store created here (with ``system``): ``True`` makes
        handles that differ only by case one player; for an existing store ``None``
        accepts its policy and a boolean must equal it.
    private:
        Every route and page but ``/api/health`` and ``/static/`` needs a token (role
        ``read`` or more); default False: reads are open.
    cors_origins:
        Origins (``https://app.example.org``, or ``*``) whose pages may call the API
        from a browser (CORS, with preflights answered before the token check);
        default none.
    token_cache_s:
        Seconds a valid named token is remembered by a worker (a revocation takes
        effect within this time; see :class:`~podium.service.guard.Authenticator`).
    export_chunk_rows:
        Rows per chunk of the export routes (default
        :data:`podium.store.export.EXPORT_CHUNK_ROWS`; tests make it small).
    max_exports, max_explains:
        Exports and explanations computed at a time by this worker process; one more is
        answered 429 with ``Retry-After`` (:class:`~podium.service.limits.Gate`).
    send_timeout_s:
        Seconds a client may take to accept one block of an export before it is
        dropped (:func:`~podium.service.limits.spooled_export`).
    keep_snapshots, explain_cache_s:
        Snapshots the store keeps when this server writes, and seconds a Rater built
        for explanations is kept after its last use (``None``: the store's defaults, 2
        and 60); see :class:`podium.store.common.StoreOptions`.

    Returns
    -------
    fastapi.FastAPI

    Raises
    ------
    PodiumError
        (``StoreError``) when the store cannot be opened: the message says why.
    """
    for name, value in (("max_body_bytes", max_body_bytes),
                        ("max_predict_bytes", max_predict_bytes),
                        ("max_predict_players", max_predict_players)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise PodiumError(f"{name} must be a positive integer, got {value!r}")
    if max_predict_players > MAX_PREDICT_PLAYERS_LIMIT:
        raise PodiumError(f"max_predict_players must be at most {MAX_PREDICT_PLAYERS_LIMIT} "
                          f"(the answer holds an n x n matrix), got {max_predict_players}")
    origins = check_cors_origins(cors_origins or ())
    if not (isinstance(token_cache_s, int | float) and 0 <= token_cache_s <= 3600):
        raise PodiumError(f"token_cache_s must be in 0..3600 seconds, got {token_cache_s!r}")
    for name, value in (("max_exports", max_exports), ("max_explains", max_explains)):
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
            raise PodiumError(f"{name} must be an integer in 1..1000, got {value!r}")
    if not (isinstance(send_timeout_s, int | float) and 0.1 <= send_timeout_s <= 3600):
        raise PodiumError(f"send_timeout_s must be in 0.1..3600 seconds, got {send_timeout_s!r}")
    owned = store is None
    if store is None:
        options: dict[str, Any] = {"pool_size": pool_size, "max_overflow": max_overflow,
                                   "allow_future": allow_future, "synchronous": synchronous}
        if keep_snapshots is not None:
            options["keep_snapshots"] = keep_snapshots
        if explain_cache_s is not None:
            options["explain_cache_s"] = explain_cache_s
        if case_insensitive_handles is not None:
            options["case_insensitive_handles"] = case_insensitive_handles
        store = _open_store(store_url, system, params, options)
    install_log_redaction()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if owned:
                store.close()

    from podium._version import __version__ as version
    from podium.service import admin, api, api_lobby, web

    assets = swagger_ui_dir()
    if assets is None:
        log.warning("swagger-ui-bundle-v2 (Swagger UI 5) is not installed: /docs loads "
                    "Swagger UI from a CDN (pip install 'podium[service]' to serve it "
                    "offline)")
    app = FastAPI(
        title="Podium rating service",
        version=str(version),
        description=(
            "Ratings of players from ranked multiplayer contests (Elo-MMR and friends). "
            "Reads are open unless the server is private; `POST /api/contests` needs "
            "`Authorization: Bearer TOKEN` with a token of role write or admin, corrections "
            "and the audit log one of role admin. "
            "Errors are `{\"detail\": \"...\"}`."
        ),
        lifespan=lifespan,
        # /docs is added below (Swagger UI served by the app itself when the bundle is
        # installed); ReDoc only exists as a CDN script, so /redoc is off
        docs_url=None,
        redoc_url=None,
    )
    _add_docs(app, assets)
    app.state.store = store
    app.state.token = token or None
    app.state.auth = Authenticator(store, token or None, cache_s=token_cache_s)
    app.state.private = bool(private)
    app.state.export_chunk_rows = export_chunk_rows
    app.state.export_gate = Gate("exports", max_exports, retry_after_s=10)
    app.state.explain_gate = Gate("explanations", max_explains, retry_after_s=2)
    app.state.send_timeout_s = float(send_timeout_s)
    app.state.max_body_bytes = max_body_bytes
    app.state.max_predict_bytes = max_predict_bytes
    app.state.max_predict_players = max_predict_players
    app.state.allow_future = bool(allow_future)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if _is_api(request) or exc.status_code != 404:
            detail = exc.detail
            if exc.status_code in (404, 405) and detail in ("Not Found", "Method Not Allowed"):
                detail = f"{detail.lower()}: {request.method} {request.url.path}"
                if exc.status_code == 404:
                    detail += " (the API routes are listed at /docs and /openapi.json)"
            return JSONResponse({"detail": detail}, status_code=exc.status_code,
                                headers=getattr(exc, "headers", None))
        return web.not_found_page(request, f"There is no page at {request.url.path}.")

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        status, message = format_validation_errors(exc.errors())
        return JSONResponse({"detail": message}, status_code=status)

    @app.exception_handler(PodiumError)
    async def podium_error(request: Request, exc: PodiumError) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    def database_unavailable(request: Request, exc: Exception) -> Response:
        # one line, no traceback: the database is down or every pooled connection is busy
        name = type(exc).__name__
        log.warning("503 on %s %s: database unavailable or busy (%s: %s)", request.method,
                    request.url.path, name, str(exc).splitlines()[0][:300] if str(exc) else "")
        return JSONResponse(
            {"detail": f"database unavailable or busy ({name}); retry later"},
            status_code=503, headers={"Retry-After": "1"},
        )

    # Registered by class, these are answered inside the app (Starlette re-raises what a
    # handler of Exception answered, and the server then logs its traceback).
    for kind in _database_errors():
        app.add_exception_handler(kind, database_unavailable)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        name = type(exc).__name__
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": f"internal error ({name}); see the server log"},
                            status_code=500)

    app.include_router(api.build_router())
    app.include_router(api_lobby.build_router())
    app.include_router(admin.build_router())
    app.include_router(api.build_router(ladder=True))
    app.include_router(api_lobby.build_router(ladder=True))
    app.include_router(admin.build_router(ladder=True))
    app.include_router(web.build_router())
    app.include_router(web.build_router(ladder=True))
    app.mount("/static", StaticFiles(directory=str(web.STATIC_DIR)), name="static")
    # the last added is the outermost: the security headers go on every answer, the
    # guard's 401 and 413 included
    app.add_middleware(RequestGuard, max_body_bytes=max_body_bytes,
                       max_predict_bytes=max_predict_bytes)
    app.add_middleware(SecurityHeaders)
    if origins:
        # outermost: a preflight (OPTIONS, no token) is answered here, and every answer,
        # the guard's 401 and 403 included, carries the CORS headers a browser needs to
        # read it
        app.add_middleware(
            CORSMiddleware, allow_origins=list(origins), allow_credentials=False,
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
            expose_headers=["Content-Disposition", "WWW-Authenticate", "Retry-After"],
            max_age=600)
    return app


def _database_errors() -> tuple[type[Exception], ...]:
    """The SQLAlchemy errors that mean "the database cannot answer now" (503): it is
    unreachable or locked (``OperationalError``, ``DisconnectionError``) or every
    connection of the pool stayed busy (``TimeoutError``)."""
    from sqlalchemy import exc

    return (exc.OperationalError, exc.TimeoutError, exc.DisconnectionError)


_ORIGIN_RE = re.compile(r"https?://[^/\s?#@]+")


def check_cors_origins(origins: Sequence[str] | str) -> tuple[str, ...]:
    """``origins`` checked: each ``*`` or ``scheme://host[:port]`` (no path, no slash at
    the end), as browsers send them in ``Origin``.

    Raises
    ------
    PodiumError
        Naming the first origin that is not one.
    """
    if isinstance(origins, str):
        origins = [o.strip() for o in origins.split(",") if o.strip()]
    out: list[str] = []
    for o in origins:
        if not isinstance(o, str) or not (o == "*" or _ORIGIN_RE.fullmatch(o)):
            raise PodiumError(f"CORS origin {o!r}: give '*' or scheme://host[:port] without "
                              "a path, e.g. https://app.example.org")
        out.append(o)
    return tuple(out)


def create_app_from_env() -> FastAPI:
    """App factory for ``uvicorn --factory`` / gunicorn workers.

    Reads ``PODIUM_DB`` (required), ``PODIUM_TOKEN`` (optional: writes disabled
    without it), ``PODIUM_MAX_BODY_BYTES``, ``PODIUM_MAX_PREDICT_BYTES``,
    ``PODIUM_MAX_PREDICT_PLAYERS``, ``PODIUM_POOL_SIZE``, ``PODIUM_MAX_OVERFLOW``,
    ``PODIUM_SYNCHRONOUS`` (``normal`` or ``full``) and
    ``PODIUM_ALLOW_FUTURE`` (``1``/``true``/``yes`` or ``0``/``false``/``no``; optional),
    ``PODIUM_PRIVATE`` (the same: every route needs a token), ``PODIUM_CORS_ORIGINS``
    (comma-separated origins), ``PODIUM_MAX_EXPORTS``, ``PODIUM_MAX_EXPLAINS``,
    ``PODIUM_SEND_TIMEOUT`` (seconds), ``PODIUM_KEEP_SNAPSHOTS`` and
    ``PODIUM_EXPLAIN_CACHE_S``.
    """
    url = os.environ.get("PODIUM_DB")
    if not url:
        raise PodiumError("PODIUM_DB is not set: give the store URL, e.g. sqlite:///ratings.db")
    limit = _env_int("PODIUM_MAX_BODY_BYTES")
    predict_bytes = _env_int("PODIUM_MAX_PREDICT_BYTES")
    predict_players = _env_int("PODIUM_MAX_PREDICT_PLAYERS")
    return create_app(url, os.environ.get("PODIUM_TOKEN") or None,
                      DEFAULT_MAX_BODY_BYTES if limit is None else limit,
                      pool_size=_env_int("PODIUM_POOL_SIZE"),
                      max_overflow=_env_int("PODIUM_MAX_OVERFLOW"),
                      synchronous=os.environ.get("PODIUM_SYNCHRONOUS") or "normal",
                      max_predict_bytes=(DEFAULT_MAX_PREDICT_BYTES if predict_bytes is None
                                         else predict_bytes),
                      max_predict_players=(DEFAULT_MAX_PREDICT_PLAYERS
                                           if predict_players is None else predict_players),
                      allow_future=_env_bool("PODIUM_ALLOW_FUTURE"),
                      private=_env_bool("PODIUM_PRIVATE"),
                      max_exports=_env_int("PODIUM_MAX_EXPORTS") or DEFAULT_MAX_EXPORTS,
                      max_explains=_env_int("PODIUM_MAX_EXPLAINS") or DEFAULT_MAX_EXPLAINS,
                      send_timeout_s=_env_float("PODIUM_SEND_TIMEOUT")
                      or DEFAULT_SEND_TIMEOUT_S,
                      keep_snapshots=_env_int("PODIUM_KEEP_SNAPSHOTS"),
                      explain_cache_s=_env_float("PODIUM_EXPLAIN_CACHE_S"),
                      cors_origins=check_cors_origins(os.environ.get("PODIUM_CORS_ORIGINS",
                                                                     "")))


def _env_bool(name: str) -> bool:
    """The yes/no in environment variable ``name`` (``False`` when unset or empty)."""
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise PodiumError(f"{name} must be 1/true/yes or 0/false/no, got {raw!r}")


def _env_float(name: str) -> float | None:
    """The number in environment variable ``name`` (``None`` when unset or empty)."""
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise PodiumError(f"{name} must be a number, got {raw!r}") from None


def _env_int(name: str) -> int | None:
    """The integer in environment variable ``name`` (``None`` when unset or empty)."""
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise PodiumError(f"{name} must be an integer, got {raw!r}") from None
