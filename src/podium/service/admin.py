"""The API's audit-log and export routes (included by :func:`podium.service.app.create_app`).

* ``GET /api/audit?offset=0&limit=50&action=&contest=`` -- the store's audit log, newest
  first (role ``admin``: :data:`podium.service.guard.ROUTE_ROLES`).
* ``GET /api/export/ratings?format=csv|parquet`` -- every rated player (default CSV).
* ``GET /api/export/history?format=parquet|csv`` -- every rating event with its contest
  and handle (default Parquet).

A CSV export neutralises the text cells that a spreadsheet would run as formulas (a
``'`` in front of a cell beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return: :mod:`podium.io.spreadsheet`); ``raw=true`` writes every cell as stored.

The exports are read in chunks inside one read transaction
(:meth:`podium.store.export.Exporter.export`), so the file is one consistent state,
spooled to a temporary file and streamed from it
(:func:`podium.service.limits.spooled_export`: no database connection waits on a slow
client, a client that takes no block for ``send_timeout_s`` is dropped), with
``Content-Disposition: attachment; filename="podium-ratings.csv"`` (or
``...-history.parquet``).  At most ``max_exports`` run at a time per server process;
one more is answered 429 with ``Retry-After``.  They need a token only on a private
server (role ``read``), like every other read.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from podium.service.api_common import get_store
from podium.service.limits import Gate, spooled_export

__all__ = ["AuditEntryOut", "AuditPageOut", "build_router"]


class AuditEntryOut(BaseModel):
    """One write recorded in the audit log."""

    id: int = Field(description="increasing with every write (newest largest)")
    time: float = Field(description="unix time of the write (seconds)")
    actor: str = Field(description="who: 'token:NAME (ROLE)', 'cli:USER', ...")
    action: str = Field(description="what: ingest, recompute, token-create, ...")
    contest_id: str | None = Field(description="the contest concerned, if any")
    content_hash: str | None = Field(description="SHA-256 of the contest's content")
    revision: int | None = Field(description="the store's revision after the write")
    detail: dict[str, Any] | None = Field(description="further facts (JSON object)")


class AuditPageOut(BaseModel):
    """A page of the audit log, newest first."""

    offset: int
    limit: int
    total: int = Field(description="rows matching the filters")
    entries: list[AuditEntryOut]


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "no valid bearer token"},
    403: {"description": "the token's role is too weak"},
    422: {"description": "invalid parameter"},
}
#: ``raw`` of the export routes (module level: FastAPI resolves the string annotations
#: in this module's namespace).
raw_q = Query(description="CSV cells exactly as stored, for programs; by default a text "
              "cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a "
              "' in front (Parquet is never changed)")
_BUSY: dict[int | str, dict[str, Any]] = {
    429: {"description": "too many exports at once in this server process (Retry-After)"}}


async def _export_response(request: Request, what: str, fmt: str,
                           raw: bool) -> StreamingResponse:
    """The export ``what`` in ``fmt``, spooled (:func:`podium.service.limits.spooled_export`)
    under the app's export gate (429 when it is full)."""
    from podium.store.export import EXPORT_CHUNK_ROWS, export_media_type

    state = request.app.state
    gate: Gate = state.export_gate
    if not gate.enter():
        raise gate.busy()
    try:
        store = get_store(request)
        body = store.export(what, fmt, chunk_rows=state.export_chunk_rows or EXPORT_CHUNK_ROWS,
                            csv_safe=not raw)
    except BaseException:
        gate.leave()
        raise
    name = f"podium-{what}.{fmt}"
    return await spooled_export(body, gate, send_timeout_s=state.send_timeout_s,
                                media_type=export_media_type(fmt), headers={
                                    "Content-Disposition": f'attachment; filename="{name}"',
                                    "Cache-Control": "no-store"})


def build_router() -> APIRouter:
    """The routes of this module, under ``/api``."""
    from podium.store import StoreError

    router = APIRouter(prefix="/api", tags=["admin"])

    @router.get("/audit", response_model=AuditPageOut, responses=_ERRORS,
                summary="The audit log, newest first (admin)")
    def audit(
        request: Request,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 50,
        action: Annotated[str | None, Query(min_length=1, max_length=100,
                                            description="only this action")] = None,
        contest: Annotated[str | None, Query(min_length=1, max_length=2048,
                                             description="only this contest id")] = None,
    ) -> Any:
        """Every write -- ingestion, recomputation, corrections, token management --
        with who made it, when, the contest and its content hash; needs a token of
        role ``admin``."""
        try:
            page = get_store(request).audit(offset=offset, limit=limit, action=action,
                                            contest_id=contest)
        except StoreError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=422)
        return JSONResponse({
            "offset": page.offset, "limit": page.limit, "total": page.total,
            "entries": [e.__dict__ for e in page.entries]})

    stream: dict[int | str, dict[str, Any]] = {200: {
        "content": {"text/csv": {}, "application/vnd.apache.parquet": {}},
        "description": "the file, streamed"}}

    @router.get("/export/ratings", responses={**_ERRORS, **_BUSY, **stream}, response_class=
                StreamingResponse, summary="Every rated player, as CSV or Parquet")
    async def export_ratings(
        request: Request,
        format: Annotated[Literal["csv", "parquet"], Query(  # noqa: A002 - the API's name
            description="file format (default csv)")] = "csv",
        raw: Annotated[bool, raw_q] = False,
    ) -> StreamingResponse:
        """Every rated player, best first: ``rank``, ``handle``, ``display_rating``,
        ``mu``, ``sigma``, ``contests``, ``last_contest_time``, ``max_display_rating``,
        ``last_change`` -- one consistent state, streamed."""
        return await _export_response(request, "ratings", format, raw)

    @router.get("/export/history", responses={**_ERRORS, **_BUSY, **stream}, response_class=
                StreamingResponse, summary="Every rating event, as Parquet or CSV")
    async def export_history(
        request: Request,
        format: Annotated[Literal["parquet", "csv"], Query(  # noqa: A002 - the API's name
            description="file format (default parquet)")] = "parquet",
        raw: Annotated[bool, raw_q] = False,
    ) -> StreamingResponse:
        """Every rating event, contest by contest in time order: ``contest_index``,
        ``contest_id``, ``contest_name``, ``time_seconds``, ``handle``, ``place``,
        ``perf``, ``mu``, ``sigma``, ``display_rating``, ``prev_display``, ``change``,
        ``debut``, ``team`` -- one consistent state, streamed."""
        return await _export_response(request, "history", format, raw)

    return router
