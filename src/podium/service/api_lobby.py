"""The lobby route of the API: ``POST /api/balance`` (mounted by
:func:`podium.service.app.create_app` next to :func:`podium.service.api.build_router`).

``POST /api/balance`` splits a pool of players (some in parties) into the fairest
teams with :func:`podium.matchmaking.balance`, from the store's current ratings and
its system's performance model.  It needs what ``POST /api/predict`` needs (nothing on a
public server, a ``read`` token on a private one: :func:`podium.service.guard.required_role`)
and takes at most the server's ``--max-predict-players`` players (200 by default).
Every problem is a 422 naming it: an unknown system (the body may name the system it
expects, which must be the store's), a repeated player, a party larger than a team, a
player of a party outside the pool, more teams than players, a pool above the limit,
parties that no split keeps together; a body that is not JSON is a 400.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from podium.service import MAX_PREDICT_PLAYERS_LIMIT
from podium.service.api_common import get_store
from podium.service.models import ErrorOut, Handle, PredictModelOut
from podium.store.checks import MAX_CONTEST_WEIGHT, MIN_CONTEST_WEIGHT

__all__ = ["BalanceOut", "BalanceRequest", "build_router"]


class BalanceRequest(BaseModel):
    """A pool of players to split into teams."""

    model_config = ConfigDict(extra="forbid")

    players: list[Handle] = Field(
        min_length=1, max_length=MAX_PREDICT_PLAYERS_LIMIT,
        description="the pool: distinct handles (unknown ones are rated as newcomers); at "
        "most the server's --max-predict-players")
    teams: int = Field(2, ge=2, le=MAX_PREDICT_PLAYERS_LIMIT,
                       description="number of teams (sizes differ by at most one)")
    parties: list[list[Handle]] | None = Field(
        None, max_length=MAX_PREDICT_PLAYERS_LIMIT,
        description="groups of players of the pool who play on one team")
    weight: float = Field(1.0, ge=MIN_CONTEST_WEIGHT, le=MAX_CONTEST_WEIGHT,
                          allow_inf_nan=False, description="weight of the proposed contest, "
                          f"in [{MIN_CONTEST_WEIGHT:g}, {MAX_CONTEST_WEIGHT:g}] (as for "
                          "POST /api/predict)")
    system: str | None = Field(None, min_length=1, max_length=100,
                               description="the rating system the client expects; must be "
                               "the store's")


class BalanceTeamOut(BaseModel):
    """One team of the split."""

    name: str
    members: list[str]
    mu: float = Field(description="team performance mean: sum of mu of its members")
    sigma: float = Field(description="team performance spread: sqrt(sum of v)")
    p_first: float = Field(description="probability that this team wins")


class BalanceOut(BaseModel):
    """The fairest split found."""

    teams: list[BalanceTeamOut]
    match_quality: float = Field(description="1 - mean over pairs of teams of |2 P - 1| "
                                 "(1: every pair an even match)")
    exact: bool = Field(description="true: the best split (two teams of at most 16 "
                        "players); false: the local search's")
    team_win_probability: list[list[float]] = Field(
        description="team_win_probability[a][b]: P(teams[a] finishes ahead of teams[b])")
    p_draw: float | None = Field(description="probability of a draw (null: the system has "
                                 "no draw model)")
    model: PredictModelOut


def _balance(store: Any, body: BalanceRequest, cap: int) -> JSONResponse:
    from podium.errors import PodiumError
    from podium.matchmaking import balance_store
    from podium.systems import SYSTEMS

    if body.system is not None and body.system != store.system_name:
        why = ("unknown system" if body.system not in SYSTEMS else
               f"this store rates with {store.system_name!r}, not")
        raise HTTPException(status_code=422, detail=f"body field 'system': {why} "
                            f"{body.system!r}" + ("; `podium systems` lists them"
                                                 if body.system not in SYSTEMS else ""))
    if len(body.players) > cap:
        raise HTTPException(status_code=422, detail=f"body field 'players': {len(body.players)} "
                            f"players, more than this server's limit of {cap} "
                            "(--max-predict-players)")
    try:
        got = balance_store(store, body.players, body.teams, body.parties,
                            weight=body.weight)
    except PodiumError as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    pred = got.prediction
    teams = [{"name": name, "members": members, "mu": m, "sigma": math.sqrt(v), "p_first": p}
             for name, members, m, v, p in zip(pred.names, got.teams, pred.team_mu.tolist(),
                                                pred.team_variance.tolist(),
                                                pred.p_first.tolist(), strict=True)]
    return JSONResponse({
        "teams": teams, "match_quality": got.match_quality, "exact": got.exact,
        "team_win_probability": pred.win_probability.tolist(), "p_draw": pred.p_draw,
        "model": {"system": store.system_name, "kind": pred.model.kind,
                  "description": pred.model.description},
    })


def build_router() -> APIRouter:
    """``POST /api/balance``."""
    router = APIRouter(prefix="/api", tags=["lobby"])

    @router.post(
        "/balance", response_model=BalanceOut,
        summary="The fairest split of a pool of players into teams",
        responses={400: {"model": ErrorOut}, 413: {"model": ErrorOut},
                   422: {"model": ErrorOut}},
    )
    async def balance_route(request: Request, body: BalanceRequest) -> Any:
        """Split ``players`` into ``teams`` teams (sizes differing by at most one) with
        every party on one team, maximising the match quality of the store's system
        (:func:`podium.matchmaking.balance`: the best split for two teams of up to 16
        players, a seeded local search beyond).  Unknown handles are newcomers.  The
        answer gives each team with its win probability, the match quality, whether
        the split is the exact best, the pairwise team win probabilities and the draw
        probability where the system has a draw model."""
        cap = int(request.app.state.max_predict_players)
        return await run_in_threadpool(_balance, get_store(request), body, cap)

    return router
