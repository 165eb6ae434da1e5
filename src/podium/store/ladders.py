"""The ladders of a store: their names, settings and registry.

A store holds one or more *ladders* -- independent leaderboards, each with its own
rating system and parameters, contests, players, history, seasons and write lock (see
:mod:`podium.store.schema` for their tables).  Every store has the ladder ``default``
(the store before ladders existed); a command or route that names no ladder means it.

**Names.**  :func:`check_ladder_name`: a ladder's name is text under the handle rules
(Unicode NFC, surrounding whitespace trimmed; the identifier rule of
:func:`podium.core.guards.identifier_problem`: no control, invisible format,
default-ignorable, private-use, unassigned or noncharacter code point, no lone combining
mark, no lone surrogate), of 1 to :data:`MAX_LADDER_NAME` characters, without ``/`` and
not ``.`` or ``..`` (it is a segment of the service's paths,
``/api/ladders/{ladder}/...``).

**Settings** (:class:`LadderSettings`, a JSON row ``settings`` of the ladder's ``meta``):

* the *provisional* rule: a player with fewer than ``provisional_contests`` rated
  contests, or whose uncertainty as of the reading time exceeds ``provisional_sigma``,
  is provisional -- marked on the pages and in the API, and left out of the
  leaderboard when ``hide_provisional`` is set (a request may ask otherwise);
* the *cross-ladder newcomer prior*: with ``prior_from`` set to another ladder (of the
  same rating system), a player new to this ladder who is rated there starts from that
  rating as of the contest's time, its variance widened toward the newcomer prior by the
  share ``prior_widen`` (:func:`podium.beliefs.widened_prior`).  The prior is taken
  once, when the player first plays here, and kept in the ladder's ``priors`` table.

The registry functions read and write the ``ladders`` table inside the caller's
transaction; creating a ladder's tables and metadata is
:func:`podium.store.lifecycle.create_ladder_context`'s.
"""

from __future__ import annotations

import functools
import json
import math
import unicodedata
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, func, select

import podium.store.schema as S
from podium.core.guards import HandleError, normalize_handle, storable_text
from podium.store.models import DEFAULT_LADDER, Ladder, LadderInfo, StoreError

__all__ = ["MAX_LADDER_NAME", "LadderSettings", "check_ladder_name", "find_ladder",
           "list_ladders", "next_ladder_pk", "ladder_problem", "read_settings",
           "describe_ladders"]

#: The longest ladder name, in characters.
MAX_LADDER_NAME = 64


def ladder_problem(name: object) -> str | None:
    """What is wrong with ``name`` as a ladder's name (``None``: nothing)."""
    if not isinstance(name, str):
        return f"a ladder's name is text, got {type(name).__name__}"
    if not name.strip():
        return "a ladder's name must not be empty"
    try:
        norm = normalize_handle(name)
    except HandleError as exc:
        return exc.reason
    if len(norm) > MAX_LADDER_NAME:
        return f"{len(norm)} characters; a ladder's name has at most {MAX_LADDER_NAME}"
    if "/" in norm:
        return "a ladder's name must not hold '/' (it is a segment of the service's paths)"
    if norm in (".", ".."):
        return "a ladder's name must not be '.' or '..'"
    return None


def check_ladder_name(name: object) -> str:
    """``name`` as a ladder's name (NFC, trimmed), or :class:`StoreError` naming what is
    wrong with it (see the module notes)."""
    problem = ladder_problem(name)
    if problem is not None:
        shown = ascii(name) if isinstance(name, str) and not name.isprintable() else repr(name)
        raise StoreError(f"ladder name {shown}: {problem}")
    assert isinstance(name, str)
    return unicodedata.normalize("NFC", name).strip()


@dataclass(frozen=True)
class LadderSettings:
    """A ladder's settings (see the module notes).

    Attributes
    ----------
    provisional_contests:
        A player with fewer rated contests than this is provisional (0: no such rule).
    provisional_sigma:
        A player whose ``sigma`` as of the reading time is above this is provisional
        (``None``: no such rule).
    hide_provisional:
        Leave provisional players out of the leaderboard unless a request asks for them.
    prior_from:
        The ladder whose rating a newcomer starts from (``None``: the system's newcomer
        prior).
    prior_widen:
        The share, in [0, 1], of the gap between a ``prior_from`` rating's variance and
        the newcomer prior's that is closed (default 0.5).
    """

    provisional_contests: int = 0
    provisional_sigma: float | None = None
    hide_provisional: bool = False
    prior_from: str | None = None
    prior_widen: float = 0.5

    def __post_init__(self) -> None:
        n = self.provisional_contests
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise StoreError(f"provisional_contests must be an integer >= 0, got {n!r}")
        s = self.provisional_sigma
        if s is not None and (isinstance(s, bool) or not isinstance(s, int | float)
                              or not math.isfinite(s) or s < 0):
            raise StoreError(f"provisional_sigma must be a number >= 0 or null, got {s!r}")
        if not isinstance(self.hide_provisional, bool):
            raise StoreError(f"hide_provisional must be true or false, got "
                             f"{self.hide_provisional!r}")
        if self.prior_from is not None:
            object.__setattr__(self, "prior_from", check_ladder_name(self.prior_from))
        w = self.prior_widen
        if isinstance(w, bool) or not isinstance(w, int | float) or not 0.0 <= w <= 1.0:
            raise StoreError(f"prior_widen must be a number in [0, 1], got {w!r}")
        object.__setattr__(self, "prior_widen", float(w))
        if s is not None:
            object.__setattr__(self, "provisional_sigma", float(s))

    @classmethod
    def from_json(cls, text: str | None) -> LadderSettings:
        """The settings stored as ``text`` (``None`` or ``{}``: the defaults); read once
        per text (every write asks)."""
        return _parsed(text or "")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The names of the settings."""
        return tuple(f.name for f in fields(cls))

    def to_json(self) -> str:
        """The settings as stored (JSON, keys sorted)."""
        return json.dumps(asdict(self), sort_keys=True)

    def changed(self, **changes: Any) -> LadderSettings:
        """These settings with ``changes`` (checked; an unknown name is refused)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise StoreError(f"unknown ladder setting(s) {', '.join(unknown)}; known: "
                             f"{', '.join(self.names())}")
        return replace(self, **changes)

    @property
    def has_provisional_rule(self) -> bool:
        """Whether either provisional rule is set."""
        return self.provisional_contests > 0 or self.provisional_sigma is not None

    def provisional(self, contests: npt.ArrayLike, sigma: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Whether each player (rated ``contests`` times, uncertainty ``sigma`` as of the
        reading time) is provisional."""
        c = np.asarray(contests)
        out = c < self.provisional_contests
        if self.provisional_sigma is not None:
            out = out | (np.asarray(sigma, dtype=np.float64) > self.provisional_sigma)
        return np.asarray(out, dtype=bool)


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> LadderSettings:
    if not text:
        return LadderSettings()
    try:
        doc = json.loads(text)
        return LadderSettings(**{k: v for k, v in doc.items() if k in LadderSettings.names()})
    except (ValueError, TypeError, AttributeError) as exc:
        raise StoreError(f"damaged ladder settings {text[:80]!r} ({exc})") from None


def read_settings(conn: Connection, t: S.LadderTables) -> LadderSettings:
    """The settings of the ladder of tables ``t`` (its ``meta`` row ``settings``)."""
    raw = conn.execute(select(t.meta.c.value).where(t.meta.c.key == "settings")).scalar()
    return LadderSettings.from_json(raw)


# ---------------------------------------------------------------------- the registry
def _ladder(row: Any) -> Ladder:
    return Ladder(int(row.pk), row.name, row.prefix)


def find_ladder(conn: Connection, name: str) -> Ladder | None:
    """The ladder called ``name`` (``None``: none)."""
    lt = S.ladders
    if not isinstance(name, str) or not storable_text(name):
        return None
    if name == DEFAULT_LADDER.name:
        return DEFAULT_LADDER
    row = conn.execute(select(lt.c.pk, lt.c.name, lt.c.prefix)
                       .where(lt.c.name == name)).first()
    return None if row is None else _ladder(row)


def list_ladders(conn: Connection) -> list[Ladder]:
    """Every ladder, ``default`` first, then by creation."""
    lt = S.ladders
    return [_ladder(r) for r in conn.execute(
        select(lt.c.pk, lt.c.name, lt.c.prefix).order_by(lt.c.pk)).all()]


def next_ladder_pk(conn: Connection) -> int:
    """The key of the next ladder created."""
    return int(conn.execute(select(func.coalesce(func.max(S.ladders.c.pk), 0))).scalar_one()) + 1


def describe_ladders(conn: Connection) -> list[LadderInfo]:
    """Every ladder (``default`` first, then by creation): its name, system, parameters,
    counts of contests and rated players, current season, creation time and settings
    (read from each ladder's tables)."""
    created = {int(r[0]): int(r[1]) for r in conn.execute(
        select(S.ladders.c.pk, S.ladders.c.created_at)).all()}
    out = []
    for lad in list_ladders(conn):
        t = S.ladder_tables(lad.prefix)
        stored = {k: v for k, v in conn.execute(select(t.meta.c.key, t.meta.c.value)).all()}
        contests = conn.execute(select(func.count()).select_from(t.contests)).scalar_one()
        players = conn.execute(select(func.count()).select_from(t.players).where(
            t.players.c.display_rating.is_not(None))).scalar_one()
        season = conn.execute(select(func.coalesce(func.max(t.seasons.c.number), 1))
                              ).scalar_one()
        out.append(LadderInfo(lad.name, stored.get("system", ""),
                              json.loads(stored.get("params", "{}")), int(contests),
                              int(players), int(season), created.get(lad.pk, 0),
                              asdict(LadderSettings.from_json(stored.get("settings")))))
    return out
