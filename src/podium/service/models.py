"""Pydantic models of the HTTP API, generated from the store's frozen dataclasses.

The store (:mod:`podium.store`) answers with plain frozen dataclasses; the API
documents and validates its answers with pydantic models that have exactly the
same fields and types.  :func:`model_from_dataclass` builds such a model (nested
dataclasses become nested models), so a field the store adds appears in the API
and its OpenAPI schema without a second definition to keep in step.  The
request bodies and the envelopes (pages of rows, counts, predictions) are
written out here.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    model_validator,
)

from podium.core.guards import HandleError, normalize_handle
from podium.service import DEFAULT_MAX_PREDICT_PLAYERS, MAX_PREDICT_PLAYERS_LIMIT
from podium.store.checks import MAX_CONTEST_WEIGHT, MIN_CONTEST_WEIGHT

__all__ = [
    "Handle",
    "MAX_PREDICT_HANDLES",
    "MAX_PREDICT_TEAMS",
    "model_from_dataclass",
    "to_jsonable",
    "PredictRequest",
    "ErrorOut",
]

#: Most players in one prediction request by default (the answer holds an n x n
#: matrix), team members included; a server may set another cap up to
#: :data:`~podium.service.MAX_PREDICT_PLAYERS_LIMIT` (``--max-predict-players``).
MAX_PREDICT_HANDLES = DEFAULT_MAX_PREDICT_PLAYERS
#: Most teams in one prediction request (at most the cap on players, too).
MAX_PREDICT_TEAMS = MAX_PREDICT_PLAYERS_LIMIT

_MODELS: dict[type, type[BaseModel]] = {}


def _convert(tp: Any) -> Any:
    """The annotation ``tp`` with every dataclass replaced by its generated model."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return model_from_dataclass(tp)
    origin = typing.get_origin(tp)
    if origin is None:
        return tp
    args = typing.get_args(tp)
    if origin is Literal or origin is Annotated:
        return tp
    conv = tuple(_convert(a) for a in args)
    if origin is typing.Union or origin is types.UnionType:
        return functools.reduce(operator.or_, conv)
    if origin in (list, tuple, dict, set, frozenset) or origin.__module__ == "collections.abc":
        simple = {"Sequence": list, "Mapping": dict}.get(getattr(origin, "__name__", ""), origin)
        return simple[conv if len(conv) > 1 else conv[0]]
    return tp


def model_from_dataclass(dc: type, *, name: str | None = None) -> type[BaseModel]:
    """A pydantic model with the fields (names, types, defaults) of dataclass ``dc``.

    Parameters
    ----------
    dc:
        A dataclass type; nested dataclasses in its field types (``list[HistoryRow]``,
        ``HistoryRow | None``) become nested generated models.
    name:
        Model name in the OpenAPI schema (default: the dataclass's name).

    Returns
    -------
    type[pydantic.BaseModel]
        Cached: the same dataclass always gives the same model.
    """
    if not (dataclasses.is_dataclass(dc) and isinstance(dc, type)):
        raise TypeError(f"{dc!r} is not a dataclass type")
    cached = _MODELS.get(dc)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(dc)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(dc):
        tp = _convert(hints.get(f.name, Any))
        if f.default is not dataclasses.MISSING:
            fields[f.name] = (tp, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            fields[f.name] = (tp, Field(default_factory=f.default_factory))
        else:
            fields[f.name] = (tp, ...)
    doc = (dc.__doc__ or "").strip().split("\n\n")[0].strip() or None
    model = create_model(  # type: ignore[call-overload]
        name or dc.__name__,
        __config__=ConfigDict(from_attributes=True),
        __doc__=doc,
        **fields,
    )
    _MODELS[dc] = model
    return model


_SCALARS = (str, int, bool, type(None))
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def to_jsonable(value: Any) -> Any:
    """Dataclasses, tuples and NumPy scalars to JSON types; NaN and infinities to ``None``.

    JSON has no NaN/Infinity (Starlette refuses to send them); a non-finite float
    in the store (an unbounded performance, say) is sent as ``null``.  Dispatches on
    the exact type first: a contest of 18 000 players converts in about 0.1 s.
    """
    t = type(value)
    if t is float:
        return value if math.isfinite(value) else None
    if t in _SCALARS:
        return value
    if t is list or t is tuple:
        return [to_jsonable(v) for v in value]
    if t is dict:
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {n: to_jsonable(getattr(value, n)) for n in _field_names(t)}
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    item = getattr(value, "item", None)  # NumPy scalar
    if callable(item) and getattr(value, "ndim", None) == 0:
        return to_jsonable(item())
    tolist = getattr(value, "tolist", None)  # NumPy array
    if callable(tolist):
        return to_jsonable(tolist())
    return value


class ErrorOut(BaseModel):
    """Every 4xx/5xx answer: a message saying what is wrong and where."""

    detail: str = Field(description="What is wrong, naming the field, player or contest")


def _normal_handle(value: str) -> str:
    """The handle under the handle rules (:func:`podium.core.guards.normalize_handle`)."""
    try:
        return normalize_handle(value)
    except HandleError as exc:
        raise ValueError(str(exc)) from None


_Handle = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_normal_handle)]
#: A handle field of a request body (NFC, trimmed, under the handle rules).
Handle = _Handle


class PredictMemberIn(BaseModel):
    """A team member with a weight (partial play)."""

    model_config = ConfigDict(extra="forbid")

    handle: _Handle
    weight: float = Field(1.0, gt=0, le=1, allow_inf_nan=False,
                          description="the share of the round the member plays, in (0, 1]")


class PredictTeamIn(BaseModel):
    """A team of a proposed contest."""

    model_config = ConfigDict(extra="forbid")

    name: _Handle
    members: list[_Handle | PredictMemberIn] = Field(
        min_length=1, max_length=MAX_PREDICT_PLAYERS_LIMIT,
        description="handles, or {handle, weight} objects (weight in (0, 1], default 1)")


class PredictRequest(BaseModel):
    """Players, or teams, of a proposed contest (give ``handles``, ``teams`` or both:
    with ``teams``, each handle of ``handles`` plays alone, as a one-member team named
    by its handle)."""

    model_config = ConfigDict(extra="forbid")

    handles: list[_Handle] | None = Field(
        None, min_length=1, max_length=MAX_PREDICT_PLAYERS_LIMIT,
        description="distinct handles; unknown ones are rated as newcomers",
    )
    teams: list[PredictTeamIn] | None = Field(
        None, min_length=1, max_length=MAX_PREDICT_TEAMS,
        description="teams (names distinct, no player in two teams); unknown handles are "
        "rated as newcomers",
    )
    weight: float = Field(1.0, ge=MIN_CONTEST_WEIGHT, le=MAX_CONTEST_WEIGHT, allow_inf_nan=False,
                          description="weight of the proposed contest, in "
                          f"[{MIN_CONTEST_WEIGHT:g}, {MAX_CONTEST_WEIGHT:g}] (as a stored "
                          "contest's)")

    @model_validator(mode="before")
    @classmethod
    def _handles_or_teams(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("handles") is None and data.get("teams") is None:
            raise ValueError("give 'handles' (a list of players) or 'teams' (a list of "
                             "{name, members}), or both")
        return data

    @model_validator(mode="after")
    def _size(self, info: ValidationInfo) -> PredictRequest:
        cap = MAX_PREDICT_HANDLES
        if isinstance(info.context, dict):
            cap = int(info.context.get("max_players", cap))
        n = len(self.handles or ()) + sum(len(t.members) for t in self.teams or ())
        if n > cap:
            raise ValueError(f"at most {cap} players in all ('handles' and team members) "
                             f"on this server, got {n}")
        return self

    def team_list(self) -> list[tuple[str, list[str | tuple[str, float]]]] | None:
        """The teams as :func:`podium.predict.predict_teams` takes them (each handle of
        ``handles`` a one-member team named by its handle); ``None`` without teams."""
        if self.teams is None:
            return None
        out: list[tuple[str, list[str | tuple[str, float]]]] = [
            (t.name, [m if isinstance(m, str) else (m.handle, m.weight) for m in t.members])
            for t in self.teams
        ]
        out.extend((h, [h]) for h in self.handles or ())
        return out


class PredictPlayer(BaseModel):
    """One player's prediction."""

    handle: str
    known: bool = Field(description="False: not in the store, rated as a newcomer")
    mu: float
    sigma: float
    expected_place: float = Field(description="1-based expected place (in a team request: "
                                  "the expected place of the player's team)")
    team: str | None = Field(None, description="the player's team (team requests)")
    weight: float | None = Field(None, description="the player's member weight (team "
                                 "requests)")


class PredictTeamOut(BaseModel):
    """One team's prediction."""

    name: str
    members: list[str]
    mu: float = Field(description="team performance mean: sum of weight * mu of its members")
    sigma: float = Field(description="team performance spread: sqrt(sum of weight^2 * v)")
    expected_place: float = Field(description="1-based expected place among the teams")


class PredictModelOut(BaseModel):
    """The performance model used."""

    system: str
    kind: Literal["logistic", "gaussian"]
    description: str


class PredictOut(BaseModel):
    """Predictions for a proposed contest."""

    players: list[PredictPlayer]
    win_probability: list[list[float]] | None = Field(
        description="win_probability[i][j]: P(players[i] finishes ahead of players[j]); "
        "1/2 on the diagonal (null in a team request: see team_win_probability)"
    )
    teams: list[PredictTeamOut] | None = Field(
        None, description="the teams, in the order given (then the lone players of "
        "'handles'); null without teams")
    team_win_probability: list[list[float]] | None = Field(
        None, description="team_win_probability[a][b]: P(teams[a] finishes ahead of "
        "teams[b]); 1/2 on the diagonal")
    match_quality: float | None = Field(
        None, description="how balanced the lobby is (teams, else players): 1 - mean over "
        "pairs of |2 P - 1|; 1 = every pair an even match, -> 0 = a foregone conclusion; "
        "null for a single player")
    p_first: list[float] = Field(
        description="each side's (team's, else player's) probability of finishing first; "
        "they sum to 1")
    p_draw: float | None = Field(
        description="probability of a draw (for more than two sides the mean over pairs); "
        "null where the system has no draw model")
    place_probability: list[list[float]] = Field(
        description="place_probability[t][r]: P(side t finishes at place r + 1)")
    model: PredictModelOut


class HealthOut(BaseModel):
    """Liveness: the rating system and the latest contest."""

    status: Literal["ok"]
    system: str
    contests: int = Field(description="number of stored contests")
    last_contest_time: int | None = Field(description="unix time of the latest contest")
    schema_version: int | None = None
    writes_enabled: bool = Field(description="false: started without a token")


class StatsOut(BaseModel):
    """Counts and settings of the store."""

    players: int = Field(description="players with at least one rated contest")
    contests: int
    events: int = Field(description="rating events (player-contests)")
    last_contest_time: int | None
    system: str
    params: dict[str, Any]
    schema_version: int | None
    handle_policy: Literal["exact", "case-insensitive"] = Field(
        "exact", description="'case-insensitive': handles differing only by case are one "
        "player (fixed when the store was created)")


class CountOut(BaseModel):
    """Number of players whose display rating is in ``[min_rating, max_rating)``."""

    count: int
    min_rating: float | None
    max_rating: float | None
    active_days: float | None
    active_since: int | None


class SearchOut(BaseModel):
    """Handles starting with ``prefix`` (case-insensitive), best rated first."""

    prefix: str
    handles: list[str]
