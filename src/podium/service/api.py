"""The JSON routes of the rating service, under ``/api/``.

Every route is served for the ladder ``default`` under ``/api/`` and for every ladder
under ``/api/ladders/{ladder}/`` (:mod:`podium.service.api_ladders`).

Reads need nothing; ``POST /api/contests`` (and the corrections ``DELETE`` and
``PUT /api/contests/{id}``, :mod:`podium.service.api_corrections`) need
``Authorization: Bearer TOKEN`` with the token the server was started with.  Every error is JSON
``{"detail": "..."}`` naming the field, player or contest at fault (see
:mod:`podium.service.app` for the handlers and the body-size limit).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError, create_model

from podium.core.guards import HandleError, normalize_handle
from podium.errors import ContestError
from podium.service.api_common import (
    check_token,
    contest_of,
    get_store,
    json_answer,
    parse_json_body,
    shown,
)
from podium.service.api_corrections import add_correction_routes
from podium.service.api_ladders import (
    LADDER_PREFIX,
    add_ladder_routes,
    as_of_time,
    ladder_dependency,
    parse_as_of,
)
from podium.service.api_smoothed import add_smoothed_routes
from podium.service.explain_api import add_explain_routes
from podium.service.models import (
    CountOut,
    ErrorOut,
    HealthOut,
    PredictOut,
    PredictRequest,
    SearchOut,
    StatsOut,
    model_from_dataclass,
)

__all__ = ["build_router", "active_since_for", "DAY_SECONDS", "MAX_LIMIT",
           "DEFAULT_CONTEST_LIMIT", "MAX_CONTEST_LIMIT"]

log = logging.getLogger("podium.service")

DAY_SECONDS = 86_400
#: Most rows one page of the leaderboard or of the contest list may ask for.
MAX_LIMIT = 500
#: Standings rows of one contest answered by default (``GET /api/contests/{id}``).
DEFAULT_CONTEST_LIMIT = 1000
#: Most standings rows of one contest a request may ask for.
MAX_CONTEST_LIMIT = 10_000


@cache
def api_models() -> dict[str, type[BaseModel]]:
    """The response models: generated from the store's dataclasses, plus envelopes."""
    from podium import store

    row = model_from_dataclass(store.LeaderboardRow)
    summary = model_from_dataclass(store.ContestSummary)
    models: dict[str, type[BaseModel]] = {
        "LeaderboardRow": row,
        "PlayerView": model_from_dataclass(store.PlayerView),
        "ContestView": model_from_dataclass(store.ContestView),
        "ContestSummary": summary,
        "IngestResult": model_from_dataclass(store.IngestResult),
    }
    models["LeaderboardPage"] = create_model(
        "LeaderboardPage",
        __doc__="One page of the leaderboard.",
        offset=(int, ...),
        limit=(int, ...),
        active_days=(float | None, ...),
        active_since=(int | None, Field(description="unix time: only players whose last "
                                        "contest is at or after it")),
        min_contests=(int, ...),
        total=(int | None, Field(description="players in the filtered leaderboard "
                                 "(null when min_contests > 1)")),
        as_of=(int | None, Field(description="unix time the ratings are read at (null: "
                                 "the stored ratings, the system has no time drift)")),
        season=(int | None, Field(description="a finished season's final leaderboard "
                                  "(null: the current ratings)")),
        include_provisional=(bool, Field(description="whether provisional players are "
                                         "listed (marked)")),
        rows=(list[row], ...),  # type: ignore[valid-type]
    )
    models["ContestList"] = create_model(
        "ContestList",
        __doc__="One page of contests, newest first.",
        offset=(int, ...),
        limit=(int, ...),
        total=(int, ...),
        contests=(list[summary], ...),  # type: ignore[valid-type]
    )
    return models


def _stats(store: Any) -> dict[str, Any]:
    return dict(store.stats())


def active_since_for(store: Any, active_days: float | None) -> int | None:
    """Unix time ``last contest time - active_days`` (``None``: no window).

    The window is relative to the *latest contest in the store*, not to the clock, so
    that a store of an old history (or one that is not being fed) still has active
    players and the answer does not change while nothing is ingested.
    """
    if active_days is None:
        return None
    last = latest_contest_time(store)
    if last is None:
        return None
    return int(last) - int(math.ceil(active_days * DAY_SECONDS))


def latest_contest_time(store: Any) -> int | None:
    """Time of the chronologically last contest (``None`` for an empty store).

    Contests are stored in time order, so this is the newest contest's time (one
    indexed row; ``stats()`` would count every player).
    """
    latest = getattr(store, "latest_contest", None)
    if callable(latest):
        row = latest()
        return None if row is None else int(row.time_seconds)
    t = _stats(store).get("last_contest_time")
    return None if t is None else int(t)


def _not_found(what: str) -> HTTPException:
    return HTTPException(status_code=404, detail=what)


_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "not found"},
    422: {"model": ErrorOut, "description": "invalid parameter"},
}


def _speller(store: Any, handles: Sequence[str]) -> Any:
    """``handle -> the store's spelling of it``: in a store with case-insensitive
    handles the spelling it first saw (so that ``Tourist`` and ``tourist`` are one
    player), else the handle itself."""
    if getattr(store, "case_insensitive_handles", False) is not True:
        return lambda h: h
    from podium.core.guards import handle_key

    known: dict[str, str] = store.handle_spellings(handles)
    return lambda h: known.get(handle_key(h), h)


def _player_answer(store: Any, handle: str, as_of: int | None = None) -> JSONResponse:
    """The player's view, or 404 naming the handle (and the rule it breaks, if any)."""
    view = store.player(handle, as_of=as_of)
    if view is None:
        why = ""
        try:
            normalize_handle(handle)
        except HandleError as exc:
            why = f" (no handle can be: {exc.reason})"
        raise _not_found(f"player {shown(handle)} not found{why}")
    return json_answer(view)


def _predict(store: Any, body: PredictRequest) -> JSONResponse:
    from podium.errors import PodiumError
    from podium.predict import predict, predict_teams

    teams = body.team_list()
    spell = _speller(store, [*(body.handles or ()), *(
        m if isinstance(m, str) else m[0] for _, members in teams or () for m in members)])
    if teams is not None:
        teams = [(name, [spell(m) if isinstance(m, str) else (spell(m[0]), m[1])
                         for m in members]) for name, members in teams]
    try:
        if teams is None:
            handles = [spell(h) for h in body.handles or []]
            known = store.current_ratings(handles)
            pred = predict(store.system, handles, known, weight=body.weight)
        else:
            known = store.current_ratings([m if isinstance(m, str) else m[0]
                                           for _, members in teams for m in members])
            tp = predict_teams(store.system, teams, known, weight=body.weight)
    except PodiumError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    if teams is None:
        # plain lists (a 200 x 200 matrix through pydantic objects costs ~100 ms)
        players = [
            {"handle": h, "known": bool(known_k), "mu": mu, "sigma": sig, "expected_place": e}
            for h, known_k, mu, sig, e in zip(
                pred.handles, pred.known.tolist(), pred.mu.tolist(), pred.sigma.tolist(),
                pred.expected_place.tolist(), strict=True)
        ]
        return json_answer({
            "players": players, "win_probability": pred.win_probability.tolist(),
            "teams": None, "team_win_probability": None, "match_quality": pred.match_quality,
            "p_first": pred.p_first.tolist(), "p_draw": pred.p_draw,
            "place_probability": pred.place_probability.tolist(),
            "model": {"system": store.system_name, "kind": pred.model.kind,
                      "description": pred.model.description},
        })
    off = tp.offsets.tolist()
    places = tp.expected_place.tolist()
    team_of = [t for t in range(len(tp.names)) for _ in range(off[t], off[t + 1])]
    players = [
        {"handle": h, "known": bool(k), "mu": mu, "sigma": sig, "expected_place": places[t],
         "team": tp.names[t], "weight": w}
        for h, k, mu, sig, w, t in zip(tp.handles, tp.known.tolist(), tp.mu.tolist(),
                                       tp.sigma.tolist(), tp.member_weight.tolist(), team_of,
                                       strict=True)
    ]
    out_teams = [
        {"name": nm, "members": list(tp.handles[off[t]:off[t + 1]]), "mu": m,
         "sigma": math.sqrt(v), "expected_place": e}
        for t, (nm, m, v, e) in enumerate(zip(tp.names, tp.team_mu.tolist(),
                                              tp.team_variance.tolist(), places, strict=True))
    ]
    return json_answer({
        "players": players, "win_probability": None, "teams": out_teams,
        "team_win_probability": tp.win_probability.tolist(),
        "match_quality": tp.match_quality, "p_first": tp.p_first.tolist(),
        "p_draw": tp.p_draw, "place_probability": tp.place_probability.tolist(),
        "model": {"system": store.system_name, "kind": tp.model.kind,
                  "description": tp.model.description},
    })


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic JSON schema with its ``$defs`` written in place of their ``$ref``s
    (the request body of a route must not point into its own ``$defs``)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.rsplit("/", 1)[1]])
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)  # type: ignore[no-any-return]


def format_validation_errors(errors: Sequence[Mapping[str, Any]]) -> tuple[int, str]:
    """Status and one message naming each bad field (``query parameter 'limit': ...``).

    ``errors`` are pydantic/FastAPI error dicts; a JSON syntax error gives 400, the
    rest 422.
    """
    parts = []
    status = 422
    for err in errors:
        loc = [str(x) for x in err.get("loc", ())]
        kind = err.get("type", "")
        if kind == "json_invalid":
            status = 400
            ctx = err.get("ctx") or {}
            parts.append(f"request body is not valid JSON: {ctx.get('error', err.get('msg'))}")
            continue
        where = loc[0] if loc else "request"
        field = ".".join(loc[1:])
        label = {"query": "query parameter", "path": "path parameter", "body": "body field",
                 "header": "header"}.get(where, where)
        if where == "body" and not field:
            parts.append(f"request body: {err.get('msg')}")
        else:
            parts.append(f"{label} {field!r}: {err.get('msg')}")
    return status, "; ".join(parts) or "invalid request"


#: ``as_of`` query parameter of the routes that read ratings.
AS_OF_Q = Query(max_length=40, description="read the ratings as of this time: unix "
                "seconds or an ISO 8601 date/time (UTC unless it says); default now; not "
                "before the latest contest")


def build_router(*, ladder: bool = False) -> APIRouter:
    """The ``/api`` routes (the store's dataclasses must be importable); with ``ladder``
    the same routes under ``/api/ladders/{ladder}/``."""
    from podium.store import StoreError

    M = api_models()
    if ladder:
        router = APIRouter(prefix=LADDER_PREFIX, tags=["ladders"],
                           dependencies=[Depends(ladder_dependency)])
    else:
        router = APIRouter(prefix="/api", tags=["api"])
    add_ladder_routes(router, root=not ladder)

    @router.get("/health", response_model=HealthOut, summary="Liveness (cheap)")
    def health(request: Request) -> Any:
        """``status: ok`` with the rating system and the number and time of the latest
        contest: one indexed query, for load balancers and monitors (503 when the
        database cannot be reached)."""
        store = get_store(request)
        latest = store.latest_contest()
        return json_answer({
            "status": "ok",
            "system": store.system_name,
            "contests": 0 if latest is None else int(latest.index) + 1,
            "last_contest_time": None if latest is None else int(latest.time_seconds),
            "schema_version": getattr(store, "schema_version", None),
            "writes_enabled": request.app.state.auth.has_tokens(writers=True),
            "ladder": getattr(store, "ladder_name", "default"),
        })

    @router.get("/stats", response_model=StatsOut, summary="Counts and settings of the store")
    def stats(request: Request) -> Any:
        """Players, contests, rating events, the rating system and its parameters (counts
        every player: tens of milliseconds on a store of 360 000 players)."""
        st = _stats(get_store(request))
        return json_answer({k: st.get(k, StatsOut.model_fields[k].default)
                            for k in StatsOut.model_fields})

    @router.get("/leaderboard", response_model=M["LeaderboardPage"], responses=_ERRORS,
                summary="Players ranked by display rating")
    def leaderboard(
        request: Request,
        offset: Annotated[int, Query(ge=0, le=10**9, description="rows to skip")] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="rows to return")] = 50,
        active_days: Annotated[float | None, Query(
            gt=0, le=1e6, allow_inf_nan=False,
            description="only players whose last contest is at most this many days before "
            "the latest contest in the store",
        )] = None,
        min_contests: Annotated[int, Query(ge=1, le=10**9)] = 1,
        as_of: Annotated[str | None, AS_OF_Q] = None,
        include_provisional: Annotated[bool | None, Query(
            description="list the provisional players (marked); default: as the ladder's "
            "settings say")] = None,
        season: Annotated[int | None, Query(ge=1, le=10**6, description="a finished "
                                            "season's final leaderboard")] = None,
    ) -> Any:
        """Players by display rating as of ``as_of`` (default now: each rating with the
        system's time drift since the player's last contest), best first.  Ranks are
        1-based within the filtered set; ties in rating go by handle.  ``provisional``
        marks a player under the ladder's provisional rule."""
        store = get_store(request)
        since = active_since_for(store, active_days)
        t = parse_as_of(as_of) if season is not None else as_of_time(store, as_of)
        show = (not store.ladder_settings().hide_provisional if include_provisional is None
                else include_provisional)
        rows = store.leaderboard(offset=offset, limit=limit, active_since=since,
                                 min_contests=min_contests, as_of=t, include_provisional=show,
                                 season=season)
        total = (store.count_players(active_since=since, as_of=t, include_provisional=show,
                                     season=season) if min_contests == 1 else None)
        return json_answer({
            "offset": offset, "limit": limit, "active_days": active_days,
            "active_since": since, "min_contests": min_contests, "total": total,
            "as_of": t, "season": season, "include_provisional": show, "rows": rows,
        })

    @router.get("/leaderboard/count", response_model=CountOut, responses=_ERRORS,
                summary="Number of players in a rating range")
    def count(
        request: Request,
        min_rating: Annotated[float | None, Query(allow_inf_nan=False,
                                                  description="inclusive")] = None,
        max_rating: Annotated[float | None, Query(allow_inf_nan=False,
                                                  description="exclusive")] = None,
        active_days: Annotated[float | None, Query(gt=0, le=1e6, allow_inf_nan=False)] = None,
        as_of: Annotated[str | None, AS_OF_Q] = None,
    ) -> Any:
        """Players (with at least one rated contest) whose display rating (as of
        ``as_of``, default now) is in ``[min_rating, max_rating)``, optionally only the
        recently active ones."""
        if min_rating is not None and max_rating is not None and min_rating > max_rating:
            raise HTTPException(
                status_code=422,
                detail=f"min_rating ({min_rating:g}) must not exceed max_rating ({max_rating:g})",
            )
        store = get_store(request)
        since = active_since_for(store, active_days)
        n = store.count_players(min_rating=min_rating, max_rating=max_rating,
                                active_since=since, as_of=as_of_time(store, as_of),
                                include_provisional=True)
        return json_answer({"count": n, "min_rating": min_rating, "max_rating": max_rating,
                            "active_days": active_days, "active_since": since})

    @router.get("/search", response_model=SearchOut, responses=_ERRORS,
                summary="Handles by prefix (autocomplete)")
    def search(
        request: Request,
        prefix: Annotated[str, Query(min_length=1, max_length=100,
                                     description="case-insensitive prefix")],
        limit: Annotated[int, Query(ge=1, le=50)] = 10,
    ) -> Any:
        """Up to ``limit`` handles starting with ``prefix``, best rated first."""
        handles = get_store(request).search_handles(prefix, limit=limit)
        return json_answer({"prefix": prefix, "handles": list(handles)})

    # before the next route: its path converter would take ".../smoothed" as a handle
    add_smoothed_routes(router, _ERRORS)

    @router.get("/players/{handle:path}", response_model=M["PlayerView"], responses=_ERRORS,
                summary="A player's rating and full history")
    def player(request: Request, handle: Annotated[str, Path(min_length=1)],
               as_of: Annotated[str | None, AS_OF_Q] = None) -> Any:
        """Rating and rank as of ``as_of`` (default now), whether provisional, and every
        rated contest (and season start), oldest first.  The handle is looked up under
        the handle rules (NFC, trimmed; in a store with case-insensitive handles,
        whatever its case); a handle made of dots only (``.``, ``..``) is best asked for
        as ``GET /api/player?handle=..`` (clients remove such path segments)."""
        return _player_answer(get_store(request), handle, parse_as_of(as_of))

    @router.get("/player", response_model=M["PlayerView"], responses=_ERRORS,
                summary="A player's rating and full history (handle in the query)")
    def player_by_query(
        request: Request,
        handle: Annotated[str, Query(min_length=1, max_length=1000,
                                     description="the player's handle")],
        as_of: Annotated[str | None, AS_OF_Q] = None,
    ) -> Any:
        """As ``GET /api/players/{handle}``, for any handle (``.`` and ``..`` included:
        no client rewrites a query string)."""
        return _player_answer(get_store(request), handle, parse_as_of(as_of))

    @router.get("/contests", response_model=M["ContestList"], responses=_ERRORS,
                summary="Contests, newest first")
    def contests(
        request: Request,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 50,
    ) -> Any:
        store = get_store(request)
        rows = store.contests(offset=offset, limit=limit)
        latest = store.latest_contest()  # one indexed row; stats() counts every event
        total = 0 if latest is None else latest.index + 1
        return json_answer({"offset": offset, "limit": limit, "total": total,
                            "contests": rows})

    # before the next route: its path converter would take ".../explain" as an id
    add_explain_routes(router, _ERRORS)

    @router.get("/contests/{contest_id:path}", response_model=M["ContestView"],
                responses=_ERRORS, summary="A contest and its rating changes")
    def contest(
        request: Request,
        contest_id: Annotated[str, Path(min_length=1)],
        offset: Annotated[int, Query(ge=0, le=10**9, description="standings rows to "
                                     "skip")] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_CONTEST_LIMIT, description="standings "
                                    "rows to return")] = DEFAULT_CONTEST_LIMIT,
    ) -> Any:
        """The standings with each player's rating before and after (ids may contain
        slashes, e.g. a contest URL; percent-encode them or not), one page of them:
        the changes of the standings rows ``offset .. offset + limit - 1``; ``total``
        (= ``players``) is the number of rows in all, ``teams`` (a team contest) lists
        every team whatever the page.  Before paging existed the answer held every
        row: a client that wants them all pages with ``offset`` until ``offset >=
        total``."""
        view = get_store(request).contest(contest_id, offset=offset, limit=limit)
        if view is None:
            raise _not_found(f"contest {shown(contest_id)} not found")
        return json_answer(view)

    contest_schema: dict[str, Any] = {
        "type": "object", "required": ["name", "time_seconds", "standings"],
        "properties": {
            "name": {"type": "string"},
            "url": {"type": ["string", "null"]},
            "time_seconds": {"type": "integer"},
            "standings": {"type": "array", "items": {"oneOf": [{
                "type": "array", "prefixItems": [
                    {"type": "string"}, {"type": "integer"}, {"type": "integer"},
                ], "minItems": 3, "maxItems": 3, "description": "[handle, lo, hi]",
            }, {
                "type": "array", "prefixItems": [
                    {"type": "string"}, {"type": "integer"}, {"type": "integer"},
                    {"type": "array", "minItems": 1, "items": {"oneOf": [
                        {"type": "string"},
                        {"type": "array", "prefixItems": [{"type": "string"},
                                                          {"type": "number"}],
                         "minItems": 2, "maxItems": 2},
                    ]}},
                ], "minItems": 4, "maxItems": 4,
                "description": "a team: [team name, lo, hi, [member, ...]], a member "
                "being a handle or [handle, weight] (weight in (0, 1], partial play)",
            }]}, "description": "best first: [handle, lo, hi] rows, or (a team contest) "
                "[team, lo, hi, members] rows; lo..hi: 0-based inclusive places (team "
                "places) shared by a tie"},
            "weight": {"type": "number"},
            "perf_ceiling": {"type": ["number", "null"]},
        },
    }

    one_result = M["IngestResult"]
    ingest_answer: Any = one_result | list[one_result]  # type: ignore[valid-type]

    @router.post(
        "/contests", response_model=ingest_answer, status_code=201,
        summary="Add a contest, or a batch of contests (bearer token)",
        responses={
            200: {"model": ingest_answer,
                  "description": "nothing new: every contest is already stored"},
            400: {"model": ErrorOut, "description": "body is not JSON"},
            401: {"model": ErrorOut, "description": "missing or wrong bearer token"},
            409: {"model": ErrorOut, "description": "older than the latest contest, or the "
                  "same id with other standings (for a batch: naming the contest)"},
            413: {"model": ErrorOut, "description": "body over the size limit"},
            422: {"model": ErrorOut, "description": "invalid contest"},
        },
        openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
            "schema": {"oneOf": [contest_schema, {
                "type": "array", "items": contest_schema, "minItems": 1,
                "description": "a batch, in time order: stored in one transaction"}]},
            "examples": {
                "players": {"summary": "a contest of players", "value": {
                    "name": "Round 1", "url": "https://example.org/round/1",
                    "time_seconds": 1700000000,
                    "standings": [["alice", 0, 0], ["bob", 1, 2], ["carol", 1, 2]]}},
                "teams": {"summary": "a team contest", "value": {
                    "name": "Match 1", "time_seconds": 1700003600,
                    "standings": [["red", 0, 0, ["alice", ["bob", 0.5]]],
                                  ["blue", 1, 1, ["carol", "dave"]]]}},
            },
        }}}},
    )
    async def post_contest(
        request: Request,
        contest_id: Annotated[str | None, Query(
            min_length=1, max_length=1000,
            description="id of the contest (default: its url, else its name); one contest "
            "only")] = None,
        recompute_from: Annotated[bool, Query(
            description="accept a contest older than the latest one: insert it in time "
            "order and re-rate every later contest (one contest only)")] = False,
    ) -> Any:
        """Rate one contest in the Elo-MMR JSON format, or a JSON list of them, and store
        it (one transaction).  A team contest has team rows ``[team, lo, hi, members]``
        (a member: a handle or ``[handle, weight]``); the store's rating system must
        rate team rounds (422 otherwise).

        One contest: 201 with ``status: applied`` (or ``recomputed``); posting the same
        contest again answers 200 with ``status: duplicate`` and changes nothing.

        A list: every contest is checked first (422 naming the first invalid one), then
        the batch is rated and stored in one transaction -- all of it or, on a 409
        naming the contest at fault, none of it.  The answer lists each contest's
        ``IngestResult`` in the given order (``duplicate`` for one already stored or
        repeated in the list); 201 when any was applied, else 200.
        """
        check_token(request)
        doc = parse_json_body(await request.body())
        batch = isinstance(doc, list)
        if batch and (contest_id is not None or recompute_from):
            raise HTTPException(
                status_code=422, detail="contest_id and recompute_from apply to one contest, "
                "not to a list: post such a contest on its own")
        if batch and not doc:
            raise HTTPException(status_code=422, detail="request body: an empty list of "
                                "contests")
        docs = doc if batch else [doc]
        store = get_store(request)
        future = bool(request.app.state.allow_future)
        contests = [contest_of(d, f"request body, contest #{k}" if batch else "request body",
                                contest_id, store, future)
                    for k, d in enumerate(docs)]
        try:
            if batch:
                results = await run_in_threadpool(store.ingest_many, contests,
                                                  allow_future=future)
            else:
                results = [await run_in_threadpool(
                    store.ingest, contests[0], contest_id=contest_id,
                    recompute_from=recompute_from, allow_future=future)]
        except ContestError as exc:
            raise HTTPException(status_code=422, detail=str(exc)) from None
        except StoreError as exc:
            detail = str(exc)
            if "recompute" in detail and not recompute_from:
                detail += ("; over HTTP: POST that contest on its own to "
                           "/api/contests?recompute_from=true")
            raise HTTPException(status_code=409, detail=detail) from None
        code = 200 if all(r.status == "duplicate" for r in results) else 201
        return json_answer(results if batch else results[0], status_code=code)

    @router.post(
        "/predict", response_model=PredictOut,
        summary="Win probabilities and expected places for a proposed contest",
        responses={400: {"model": ErrorOut}, 413: {"model": ErrorOut},
                   422: {"model": ErrorOut}},
        openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
            "schema": _inline_refs(PredictRequest.model_json_schema()),
            "examples": {
                "players": {"summary": "players",
                            "value": {"handles": ["alice", "bob", "newcomer"], "weight": 1.0}},
                "teams": {"summary": "teams (match quality for matchmaking)", "value": {
                    "teams": [{"name": "red", "members": ["alice", {"handle": "bob",
                                                                    "weight": 0.5}]},
                              {"name": "blue", "members": ["carol", "dave"]}]}},
            },
        }}}},
    )
    async def predict_route(request: Request) -> Any:
        """Each player's probability of finishing ahead of each other one, and expected
        place, from the current ratings and the system's performance model (see
        :mod:`podium.predict`), and the lobby's match quality.  With ``teams``: each
        team's probability of finishing ahead of each other one (a team performs the sum
        of its members' weighted performances), expected places and the match quality
        (1 = every pair of teams an even match); each handle of ``handles`` then plays
        alone.  At most 200 players in all by default (the server's
        ``--max-predict-players``); unknown handles are newcomers.  Handles and team
        names follow the handle rules (NFC, trimmed; no control or invisible
        characters); the weight lies in [0.001, 100].  No token needed; the body may
        hold at most 256 KiB by default (``--max-predict-bytes``).  The body is read as
        JSON whatever its Content-Type.  Both answers also give each side's (team's,
        else player's) probability of finishing first, of each place, and of a draw
        where the system has a draw model."""
        doc = parse_json_body(await request.body())
        try:
            body = PredictRequest.model_validate(
                doc, context={"max_players": request.app.state.max_predict_players})
        except ValidationError as exc:
            errors = [{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors()]
            raise HTTPException(status_code=422,
                                detail=format_validation_errors(errors)[1]) from None
        store = get_store(request)
        return await run_in_threadpool(_predict, store, body)

    # DELETE and PUT /api/contests/{id}: corrections (bearer token)
    add_correction_routes(router, contest_schema)
    return router
