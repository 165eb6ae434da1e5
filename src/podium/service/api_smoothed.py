"""The smoothed-curve routes of the rating service (issue 29; added to the ``/api``
router by :func:`podium.service.api.build_router`, *before* ``GET
/api/players/{handle}``, whose path converter would otherwise take
``.../smoothed`` as part of the handle).

* ``GET /api/players/{handle}/smoothed`` -- both curves of the player: per contest the
  filter's display rating, the smoothed one and the smoothed one aligned to the
  filter's level, with the ladder's level offset
  (:class:`podium.store.smoothed.SmoothedCurve`);
* ``GET /api/players/{handle}/past-changes`` -- what the last update of the smoothed
  curve changed in the player's past: which earlier ratings moved, by how much, and
  which new results revised them (:class:`podium.store.smoothed.PastChanges`);
* ``GET /api/smoothed?handle=...`` and ``GET /api/past-changes?handle=...`` -- the same
  for any handle (one of dots only, or one ending in ``/smoothed``).

404 when the ladder has no smoothed companion (``podium smooth``) or no such player.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse

from podium.service.api_common import get_store
from podium.service.models import model_from_dataclass
from podium.store.smoothed import PastChanges, SmoothedCurve

__all__ = ["add_smoothed_routes", "SmoothedOut", "PastChangesOut"]

#: The ``handle`` query parameter (module level: the annotations are strings that FastAPI
#: resolves in this module's namespace).
handle_q = Query(min_length=1, max_length=1000, description="the player's handle")


#: The answers' models, generated from the store's dataclasses
#: (:func:`podium.service.models.model_from_dataclass`: one definition of the fields).
SmoothedOut = model_from_dataclass(SmoothedCurve, name="SmoothedOut")
PastChangesOut = model_from_dataclass(PastChanges, name="PastChangesOut")


def _missing(store: Any, handle: str) -> HTTPException:
    if store.smoothing() is None:
        return HTTPException(status_code=404, detail="this ladder has no smoothed companion "
                             "(podium smooth --system mmr-smooth turns one on)")
    return HTTPException(status_code=404, detail=f"no player {handle!r}")


def _curve(request: Request, handle: str) -> JSONResponse:
    store = get_store(request)
    out = store.smoothed_curve(handle)
    if out is None:
        raise _missing(store, handle)
    return JSONResponse(asdict(out))


def _past(request: Request, handle: str) -> JSONResponse:
    store = get_store(request)
    out = store.past_changes(handle)
    if out is None:
        raise _missing(store, handle)
    return JSONResponse(asdict(out))


def add_smoothed_routes(router: APIRouter, errors: dict[int | str, dict[str, Any]]) -> None:
    """Add the smoothed-curve routes to ``router`` (see the module docstring)."""
    @router.get("/players/{handle:path}/smoothed", response_model=SmoothedOut,
                responses=errors, summary="A player's smoothed curve next to the filtered one")
    def smoothed(request: Request, handle: Annotated[str, Path(min_length=1)]) -> Any:
        """Per contest the filter's rating, the smoothed one (revised by every later
        contest) and the smoothed one aligned to the filter's level (minus ``offset``)."""
        return _curve(request, handle)

    @router.get("/players/{handle:path}/past-changes", response_model=PastChangesOut,
                responses=errors, summary="What the last update changed in a player's past")
    def past(request: Request, handle: Annotated[str, Path(min_length=1)]) -> Any:
        """The earlier ratings of the player that the last write moved (largest first),
        by how much, and which new results revised them."""
        return _past(request, handle)

    @router.get("/smoothed", response_model=SmoothedOut, responses=errors,
                summary="A player's two curves (handle in the query)")
    def smoothed_by_query(request: Request, handle: Annotated[str, handle_q]) -> Any:
        """As ``GET /api/players/{handle}/smoothed``, for any handle."""
        return _curve(request, handle)

    @router.get("/past-changes", response_model=PastChangesOut, responses=errors,
                summary="What the last update changed in a player's past (handle in the "
                "query)")
    def past_by_query(request: Request, handle: Annotated[str, handle_q]) -> Any:
        """As ``GET /api/players/{handle}/past-changes``, for any handle."""
        return _past(request, handle)
