"""The correction routes of the API: ``DELETE /api/contests/{id}`` and
``PUT /api/contests/{id}`` (added to the ``/api`` router by
:func:`podium.service.api.build_router`).

Both need a bearer token of role ``admin`` (the server's own ``--token``, or a named
token created with ``--role admin``; :data:`podium.service.guard.ROUTE_ROLES`): the
:class:`~podium.service.guard.RequestGuard` answers 401 without a valid token and 403
with a weaker one (``write`` or ``read``) before reading the body, and the routes check
again.  They answer the store's :class:`~podium.store.models.CorrectionResult` as JSON.  The
contest id is the rest of the path, slashes included (a contest URL; percent-encoded
or not): ``DELETE /api/contests/https%3A%2F%2Fcodeforces.com%2Fcontest%2F1``.

A ``PUT`` body is one contest in the JSON model of ``POST /api/contests``.  The path
names the stored contest to replace, and the replacement keeps that id whatever the
body's ``url`` and ``name`` say (so that a typo in either can be fixed).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.concurrency import run_in_threadpool

from podium.errors import ContestError
from podium.service.api_common import (
    check_token,
    contest_of,
    get_store,
    json_answer,
    parse_json_body,
    shown,
)
from podium.service.models import ErrorOut, model_from_dataclass

__all__ = ["add_correction_routes"]


def add_correction_routes(router: APIRouter, contest_schema: dict[str, Any]) -> None:
    """Add ``DELETE`` and ``PUT /contests/{contest_id}`` to ``router`` (the ``/api``
    router); ``contest_schema`` is the JSON schema of one posted contest."""
    from podium import store as store_module

    StoreError = store_module.StoreError
    Unknown = store_module.UnknownContestError
    result = model_from_dataclass(store_module.CorrectionResult)
    errors: dict[int | str, dict[str, Any]] = {
        401: {"model": ErrorOut, "description": "missing or wrong bearer token"},
        403: {"model": ErrorOut, "description": "the token's role is not admin"},
        404: {"model": ErrorOut, "description": "no contest has this id"},
        409: {"model": ErrorOut, "description": "the store refused the correction"},
    }

    def _answer_error(exc: Exception, contest_id: str) -> HTTPException:
        if isinstance(exc, Unknown):
            return HTTPException(status_code=404,
                                 detail=f"contest {shown(contest_id)} not found; nothing "
                                 "was changed")
        if isinstance(exc, ContestError):
            return HTTPException(status_code=422, detail=f"request body: {exc}")
        return HTTPException(status_code=409, detail=str(exc))

    @router.delete(
        "/contests/{contest_id:path}", response_model=result, responses=errors,
        summary="Delete a contest and re-rate every later one (admin token)")
    async def delete_contest(request: Request,
                             contest_id: Annotated[str, Path(min_length=1)]) -> Any:
        """Delete the contest and re-rate every later contest in one transaction:
        readers see the old state until it commits, a failure leaves it.  Players who
        appear in no remaining contest are removed.  The answer says what was re-rated
        (``rerated``, ``players_removed``, ...)."""
        check_token(request, "admin")
        store = get_store(request)
        try:
            res = await run_in_threadpool(store.delete, contest_id)
        except (StoreError, ContestError) as exc:
            raise _answer_error(exc, contest_id) from None
        return json_answer(res)

    @router.put(
        "/contests/{contest_id:path}", response_model=result,
        responses={**errors,
                   400: {"model": ErrorOut, "description": "body is not JSON"},
                   413: {"model": ErrorOut, "description": "body over the size limit"},
                   422: {"model": ErrorOut, "description": "invalid contest"}},
        summary="Replace a contest's standings and re-rate every later one (admin token)",
        openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
            "schema": contest_schema,
            "example": {"name": "Round 1", "url": "https://example.org/round/1",
                        "time_seconds": 1700000000,
                        "standings": [["alice", 0, 0], ["carol", 1, 1]]},
        }}}},
    )
    async def replace_contest(request: Request,
                              contest_id: Annotated[str, Path(min_length=1)]) -> Any:
        """Replace the stored contest by the body (one contest, as for ``POST
        /api/contests``: e.g. a disqualified player removed, a tie fixed) and re-rate
        every later contest, in one transaction.  The contest keeps the id of the path
        whatever the body's ``url`` and ``name``; a new ``time_seconds`` moves it.
        ``status`` is ``replaced``, or ``unchanged`` when the body equals the stored
        contest (nothing is written)."""
        check_token(request, "admin")
        doc = parse_json_body(await request.body())
        if not isinstance(doc, dict):
            raise HTTPException(status_code=422, detail="request body: one contest (a JSON "
                                "object) replaces a stored contest")
        store = get_store(request)
        future = bool(request.app.state.allow_future)
        contest = contest_of(doc, "request body", contest_id, store, future)
        try:
            res = await run_in_threadpool(store.replace, contest, contest_id=contest_id,
                                          allow_future=future)
        except (StoreError, ContestError) as exc:
            raise _answer_error(exc, contest_id) from None
        return json_answer(res)
