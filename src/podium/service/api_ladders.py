"""The ladder routes of the API, and what the routes of a ladder share.

* ``GET /api/ladders`` -- every ladder of the store: name, rating system, counts, current
  season and settings (a token limited to some ladders sees only those, on a private
  server);
* ``GET /api/seasons`` and ``GET /api/ladders/{ladder}/seasons`` -- a ladder's seasons.

Every route of :mod:`podium.service.api` and :mod:`podium.service.admin` is served twice:
under ``/api/`` for the ladder ``default`` (the routes of a store before ladders), and
under ``/api/ladders/{ladder}/`` for any ladder (:data:`LADDER_PREFIX`;
:func:`ladder_dependency` documents and checks the path parameter; the routes find their
store with :func:`podium.service.api_common.get_store`).  An unknown ladder is 404.

``as_of`` (leaderboard, counts, players): the time to read the ratings at
(:func:`parse_as_of`: unix seconds or an ISO 8601 date or time, UTC unless it says
otherwise); not before the ladder's latest contest (422).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from pydantic import BaseModel, Field

from podium.service.api_common import get_store, json_answer

__all__ = ["LADDER_PREFIX", "ladder_dependency", "parse_as_of", "as_of_time",
           "add_ladder_routes", "LadderOut", "SeasonOut"]

#: The prefix of a ladder's API routes.
LADDER_PREFIX = "/api/ladders/{ladder}"


def ladder_dependency(
    request: Request,
    ladder: Annotated[str, Path(min_length=1, max_length=1000,
                                description="the ladder's name (GET /api/ladders lists "
                                "them)")],
) -> None:
    """The ``{ladder}`` of a ladder's route: 404 when the store holds no such ladder."""
    get_store(request)


def parse_as_of(text: str | None) -> int | None:
    """``as_of`` as unix seconds: an integer, or an ISO 8601 date (``2024-05-01``) or date
    and time (``2024-05-01T12:00``, UTC unless an offset is given); 422 otherwise."""
    if text is None:
        return None
    raw = text.strip()
    if raw.lstrip("-").isdigit():
        value = int(raw)
        if abs(value) > 10**13:
            raise HTTPException(status_code=422, detail=f"query parameter 'as_of': {raw} is "
                                "out of range for a time in seconds")
        return value
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(status_code=422, detail=f"query parameter 'as_of': {raw[:40]!r} "
                            "is neither unix seconds nor an ISO 8601 date or time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


def as_of_time(store: Any, as_of: str | None) -> int | None:
    """The time a request reads ``store``'s ratings at: ``as_of`` parsed, else -- for a
    system with time drift, so that one page and its count use one time -- now (or the
    latest contest's time, if later); ``None`` when nothing depends on it."""
    from podium.store.asof import read_time

    parsed = parse_as_of(as_of)
    if parsed is not None or not getattr(store.system, "has_time_drift", False):
        return parsed
    latest = store.latest_contest()
    return read_time(None, None if latest is None else int(latest.time_seconds))


class LadderOut(BaseModel):
    """One ladder of the store."""

    name: str
    system: str
    params: dict[str, Any]
    contests: int = Field(description="contests (and season boundaries) stored")
    players: int = Field(description="rated players")
    season: int = Field(description="the current season (1: no boundary yet)")
    created_at: int
    settings: dict[str, Any] = Field(description="the provisional rule and the "
                                     "cross-ladder newcomer prior")


class SeasonOut(BaseModel):
    """One season of a ladder."""

    number: int
    contest_id: str | None = Field(description="the boundary that started it (none for "
                                   "season 1)")
    time_seconds: int | None
    reset: str | None
    players: int = Field(description="players reset when it started")
    current: bool


def _limited_to(request: Request) -> tuple[str, ...] | None:
    from podium.service.guard import IDENTITY_KEY

    state = request.scope.get("state") or {}
    ident = state.get(IDENTITY_KEY) if isinstance(state, dict) else None
    return getattr(ident, "ladders", None)


def add_ladder_routes(router: APIRouter, *, root: bool) -> None:
    """Add ``GET /ladders`` (``root``: the router of ``/api``) and ``GET /seasons`` to
    ``router``."""
    if root:
        @router.get("/ladders", response_model=list[LadderOut],
                    summary="The ladders of the store")
        def ladders(request: Request) -> Any:
            """Every ladder: its rating system and parameters, counts of contests and rated
            players, current season and settings; each one's routes are under
            ``/api/ladders/{name}/`` (those of ``default`` also under ``/api/``)."""
            out = request.app.state.store.ladders()
            limit = _limited_to(request)
            if limit is not None and request.app.state.private:
                out = [x for x in out if x.name in limit]
            return json_answer([asdict(x) for x in out])

    @router.get("/seasons", response_model=list[SeasonOut],
                summary="The seasons of the ladder, oldest first")
    def seasons(request: Request) -> Any:
        """Season 1 runs from the first contest; each later one began at a boundary
        (``podium ladder new-season``), whose reset is named.  A finished season's final
        leaderboard: ``GET .../leaderboard?season=N``."""
        return json_answer([asdict(x) for x in get_store(request).seasons()])
