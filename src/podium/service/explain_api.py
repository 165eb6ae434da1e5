"""The explain routes of the rating service (added to the ``/api`` router by
:func:`podium.service.api.build_router`, *before* ``GET /api/contests/{id}``, whose
path converter would otherwise take ``.../players/{handle}/explain`` as part of the
contest id).

* ``GET /api/contests/{contest_id}/players/{handle}/explain`` -- the contest id may
  contain slashes (a URL); the handle is the last segment before ``/explain`` (a
  handle with a slash also works: the contest id is everything before the *last*
  ``/players/``).
* ``GET /api/explain?contest=...&handle=...`` -- the same for any id and handle (a
  handle of dots only, or one containing ``/players/``).

The answer is :meth:`podium.core.explain.Explanation.to_dict` (``ExplainOut``);
404 for an unknown contest, an unrated one or a player not in it; 429 (with
``Retry-After``) when ``max_explains`` explanations are already being computed in this
server process (:class:`podium.service.limits.Gate`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

__all__ = ["add_explain_routes", "ExplainOut", "DEFAULT_TOP", "MAX_TOP"]

#: Terms listed per direction and equation by default (``top``) ...
DEFAULT_TOP = 10
#: ... and at most (``all=true`` lists every term).
MAX_TOP = 1000


#: The query parameters ``top`` and ``all`` (module level: the annotations are strings
#: that FastAPI resolves in this module's namespace).
top_q = Query(ge=0, le=MAX_TOP, description="terms listed per direction (up, down) of each "
              "long equation; the others are summed in omitted_total")
all_q = Query(alias="all", description="list every term")


class TermOut(BaseModel):
    """One term: the opponent (handle) or factor it comes from, its value."""

    source: str
    kind: str
    value: float | None
    equation: str
    detail: dict[str, float | None] = Field(default_factory=dict)


class EquationOut(BaseModel):
    """An equation whose terms (listed and omitted) add up to ``total`` = ``target``
    within ``tolerance``."""

    name: str
    formula: str
    reference: str
    at: float | None
    total: float | None
    target: float | None
    tolerance: float | None
    slope: float | None
    residual: float | None
    holds: bool
    count: int
    omitted: int
    omitted_total: float | None


class ExplainOut(BaseModel):
    """Why a player's rating changed in a contest (docs/explain.md)."""

    system: str
    contest: str
    contest_id: str | None
    player: str
    place: list[int]
    participants: int
    debut: bool
    mu_before: float | None
    sigma_before: float | None
    mu_after: float | None
    sigma_after: float | None
    display_before: float | None
    display_after: float | None
    change: float | None
    performance: float | None
    equations: list[EquationOut]
    terms: list[TermOut]
    quantities: dict[str, float | None]
    notes: list[str]


def _answer(request: Request, contest_id: str, handle: str, top: int,
            every: bool) -> JSONResponse:
    from podium.store.explain import ExplainNotFound

    store = request.app.state.store
    gate = request.app.state.explain_gate
    if not gate.enter():
        raise gate.busy()
    try:
        out = store.explain(contest_id, handle)
    except ExplainNotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    finally:
        gate.leave()
    return JSONResponse(out.to_dict(top=None if every else top))


def add_explain_routes(router: APIRouter, errors: dict[int | str, dict[str, Any]]) -> None:
    """Add the explain routes to ``router`` (see the module docstring)."""
    errors = {**errors, 429: {"description": "too many explanations at once in this server "
                                             "process (Retry-After)"}}

    @router.get("/contests/{contest_id:path}/players/{handle:path}/explain",
                response_model=ExplainOut, responses=errors,
                summary="Why a player's rating changed in a contest")
    def explain(
        request: Request,
        contest_id: Annotated[str, Path(min_length=1)],
        handle: Annotated[str, Path(min_length=1)],
        top: Annotated[int, top_q] = DEFAULT_TOP,
        every: Annotated[bool, all_q] = False,
    ) -> Any:
        """The player's rating before and after, the performance and the terms of the
        update's equations (docs/explain.md).  The contest id may contain slashes."""
        return _answer(request, contest_id, handle, top, every)

    @router.get("/explain", response_model=ExplainOut, responses=errors,
                summary="Why a player's rating changed (ids in the query)")
    def explain_by_query(
        request: Request,
        contest: Annotated[str, Query(min_length=1, max_length=2000,
                                      description="the contest id")],
        handle: Annotated[str, Query(min_length=1, max_length=1000,
                                     description="the player's handle")],
        top: Annotated[int, top_q] = DEFAULT_TOP,
        every: Annotated[bool, all_q] = False,
    ) -> Any:
        """As ``GET /api/contests/{id}/players/{handle}/explain``, for any id and handle."""
        return _answer(request, contest, handle, top, every)
