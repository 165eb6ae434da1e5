"""The rating service: one FastAPI app serving the JSON API and the web pages.

>>> app = create_app("sqlite:///ratings.db", token="s3cret")   # doctest: +SKIP

Run it with ``podium serve --db URL --token T`` (see :mod:`podium.service.cli`) or
with any ASGI server; for several worker processes use the factory
:func:`create_app_from_env` (``uvicorn --factory podium.service.app:create_app_from_env``
with ``PODIUM_DB``, ``PODIUM_TOKEN``, ``PODIUM_MAX_BODY_BYTES`` and optionally
``PODIUM_POOL_SIZE`` and ``PODIUM_MAX_OVERFLOW`` in the environment).

Errors are JSON ``{"detail": "..."}`` under ``/api/`` (and an HTML page elsewhere):

* 400 -- a body that is not JSON; 401 -- a write without the right bearer token;
* 404 -- unknown player, contest or path; 409 -- the store refuses the contest
  (older than the latest one, or the same id with other standings);
* 413 -- a body over ``max_body_bytes`` (checked on ``Content-Length`` and while
  reading, before anything is parsed);
* 422 -- a parameter or a contest that fails validation (the message names the
  field, the contest and the player);
* 503 -- the database could not be reached or stayed locked (retry).

The interactive API page ``/docs`` (Swagger UI) is served without internet access:
its script, style sheet and icon come from the ``swagger-ui-bundle-v2`` package and
are served by the app under ``/docs/static/`` (see :func:`swagger_ui_dir`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from podium.errors import PodiumError
from podium.service import DEFAULT_MAX_BODY_BYTES
from podium.service.api import format_validation_errors

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DOCS_ASSETS_URL", "BodyLimitMiddleware", "create_app",
           "create_app_from_env", "swagger_ui_dir"]

log = logging.getLogger("podium.service")


#: Where the app serves the Swagger UI files that ``/docs`` loads.
DOCS_ASSETS_URL = "/docs/static"
#: The files of the Swagger UI distribution that ``/docs`` needs.
SWAGGER_UI_FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimitMiddleware:
    """Refuse request bodies over ``max_bytes`` with 413, before the app parses them.

    A ``Content-Length`` over the limit is refused at once; otherwise the body is
    read (counting the bytes, so a chunked body cannot slip past) and replayed to
    the app.  Only requests that may carry a body (POST, PUT, PATCH) are buffered.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _too_large(self, scope: Scope, send: Send) -> None:
        response = JSONResponse(
            {"detail": f"request body is larger than the limit of {self.max_bytes} bytes"},
            status_code=413,
        )
        await response(scope, _no_receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    resp = JSONResponse({"detail": "invalid Content-Length header"},
                                        status_code=400)
                    await resp(scope, _no_receive, send)
                    return
                if declared > self.max_bytes:
                    await self._too_large(scope, send)
                    return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await self._too_large(scope, send)
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


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}


def _is_api(request: Request) -> bool:
    path = request.url.path
    return path == "/api" or path.startswith("/api/") or path == "/openapi.json"


def _open_store(url: str, system: str | None, params: dict[str, Any] | None,
                pool: dict[str, int | None]) -> Any:
    from podium.store import Store

    if system is not None:
        return Store.open_or_create(url, system=system, params=params, **pool)
    return Store.open(url, **pool)


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


def _add_offline_docs(app: FastAPI, assets: Path) -> None:
    """``GET /docs``: Swagger UI from the files in ``assets``, served under /docs/static/."""
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=str(assets)), name="docs-static")
    title = f"{app.title} - API docs"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        static = root + DOCS_ASSETS_URL
        return get_swagger_ui_html(
            openapi_url=root + str(app.openapi_url),
            title=title,
            swagger_js_url=f"{static}/swagger-ui-bundle.js",
            swagger_css_url=f"{static}/swagger-ui.css",
            swagger_favicon_url=f"{static}/favicon-32x32.png",
            # no badge image from the public validator (a request to the internet)
            swagger_ui_parameters={"validatorUrl": None},
        )


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
) -> FastAPI:
    """Build the app on the store at ``store_url``.

    Parameters
    ----------
    store_url:
        SQLAlchemy URL of the store (``sqlite:///path.db``,
        ``postgresql+psycopg://user@host/db``).
    token:
        Bearer token that ``POST /api/contests`` must present; ``None`` or ``""``
        disables writes (every write answers 401).
    max_body_bytes:
        Largest request body accepted (413 above it).
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

    Returns
    -------
    fastapi.FastAPI

    Raises
    ------
    PodiumError
        (``StoreError``) when the store cannot be opened: the message says why.
    """
    if not isinstance(max_body_bytes, int) or max_body_bytes < 1:
        raise PodiumError(f"max_body_bytes must be a positive integer, got {max_body_bytes!r}")
    owned = store is None
    if store is None:
        store = _open_store(store_url, system, params,
                            {"pool_size": pool_size, "max_overflow": max_overflow})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if owned:
                store.close()

    from podium import __version__ as version
    from podium.service import api, web

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
            "Reads are open; `POST /api/contests` needs `Authorization: Bearer TOKEN`. "
            "Errors are `{\"detail\": \"...\"}`."
        ),
        lifespan=lifespan,
        # /docs is added below with Swagger UI served by the app itself; ReDoc only
        # exists as a CDN script, so /redoc is off
        docs_url="/docs" if assets is None else None,
        redoc_url=None,
    )
    if assets is not None:
        _add_offline_docs(app, assets)
    app.state.store = store
    app.state.token = token or None
    app.state.max_body_bytes = max_body_bytes

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

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        name = type(exc).__name__
        module = type(exc).__module__ or ""
        if module.startswith("sqlalchemy") and name in ("OperationalError", "TimeoutError",
                                                        "DisconnectionError"):
            log.warning("database unavailable on %s %s: %s", request.method,
                        request.url.path, exc)
            return JSONResponse(
                {"detail": f"database unavailable or busy ({name}); retry later"},
                status_code=503, headers={"Retry-After": "1"},
            )
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": f"internal error ({name}); see the server log"},
                            status_code=500)

    app.include_router(api.build_router())
    app.include_router(web.build_router())
    app.mount("/static", StaticFiles(directory=str(web.STATIC_DIR)), name="static")
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes)
    return app


def create_app_from_env() -> FastAPI:
    """App factory for ``uvicorn --factory`` / gunicorn workers.

    Reads ``PODIUM_DB`` (required), ``PODIUM_TOKEN`` (optional: writes disabled
    without it), ``PODIUM_MAX_BODY_BYTES``, ``PODIUM_POOL_SIZE`` and
    ``PODIUM_MAX_OVERFLOW`` (optional).
    """
    url = os.environ.get("PODIUM_DB")
    if not url:
        raise PodiumError("PODIUM_DB is not set: give the store URL, e.g. sqlite:///ratings.db")
    limit = _env_int("PODIUM_MAX_BODY_BYTES")
    return create_app(url, os.environ.get("PODIUM_TOKEN") or None,
                      DEFAULT_MAX_BODY_BYTES if limit is None else limit,
                      pool_size=_env_int("PODIUM_POOL_SIZE"),
                      max_overflow=_env_int("PODIUM_MAX_OVERFLOW"))


def _env_int(name: str) -> int | None:
    """The integer in environment variable ``name`` (``None`` when unset or empty)."""
    raw = os.environ.get(name)
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise PodiumError(f"{name} must be an integer, got {raw!r}") from None
