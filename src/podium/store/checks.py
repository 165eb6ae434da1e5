"""What a store checks in a contest before it rates and stores it.

:func:`check_contest` is applied to every contest a :class:`~podium.store.Store`
ingests -- from ``podium ingest``, from ``POST /api/contests`` and from Python -- so
that one set of rules holds whatever the way in (docs/service.md, "Input rules"):

* handles and team names: :func:`podium.core.guards.normalize_contest` (NFC,
  surrounding whitespace trimmed; refused: empty or whitespace-only, control,
  bidi/zero-width format characters, lone surrogates, more than
  :data:`~podium.core.guards.MAX_HANDLE_LENGTH` characters);
* the time: :func:`podium.core.guards.check_contest_time` (1970..2200, at most a
  margin -- one day by default -- after the clock unless ``allow_future``; a value
  that looks like milliseconds is named as such);
* ``weight`` in [:data:`MIN_CONTEST_WEIGHT`, :data:`MAX_CONTEST_WEIGHT`]
  (:func:`podium.core.guards.contest_weight_problem`, as the loaders);
* ``perf_ceiling`` ``None`` (or ``+inf``: no ceiling), else within the bracket of the
  rating solver, [:data:`PERF_CEILING_MIN`, :data:`PERF_CEILING_MAX`];
* ``name`` and ``url``: Unicode text without control characters, at most
  :data:`MAX_NAME_LENGTH` / :data:`MAX_URL_LENGTH` characters; the contest id at most
  :data:`MAX_ID_BYTES` bytes of UTF-8 (it is a key of a database index).

Every refusal is a :class:`~podium.errors.ContestError` naming the contest, the field
(or the player, or the team) and the rule.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

from podium.core.contest import Contest
from podium.core.guards import (
    DEFAULT_FUTURE_MARGIN_S,
    MAX_CONTEST_WEIGHT,
    MAX_HANDLE_LENGTH,
    MIN_CONTEST_WEIGHT,
    TimeError,
    check_contest_time,
    contest_weight_problem,
    handle_key,
    identifier_problem,
    normalize_contest,
)
from podium.core.numerics.constants import HI_BOUND, LO_BOUND
from podium.errors import ContestError

__all__ = [
    "DEFAULT_FUTURE_MARGIN_S",
    "MAX_CONTEST_WEIGHT",
    "MAX_HANDLE_LENGTH",
    "MAX_ID_BYTES",
    "MAX_NAME_LENGTH",
    "MAX_URL_LENGTH",
    "MIN_CONTEST_WEIGHT",
    "PERF_CEILING_MAX",
    "PERF_CEILING_MIN",
    "check_case_insensitive",
    "check_contest",
    "check_contest_id",
    "located",
    "respell",
    "text_problem",
    "with_handles",
]

#: The bracket of the rating solver (:mod:`podium.core.numerics.newton`): a
#: performance ceiling must lie in it.
PERF_CEILING_MIN = LO_BOUND
PERF_CEILING_MAX = HI_BOUND
#: The longest contest name accepted, in characters.
MAX_NAME_LENGTH = 1000
#: The longest contest url accepted, in characters.
MAX_URL_LENGTH = 2048
#: The longest contest id accepted, in bytes of UTF-8 (an index key on PostgreSQL may
#: not exceed about 2700 bytes).
MAX_ID_BYTES = 2048


def text_problem(value: str, limit: int | None = None) -> str | None:
    """What is wrong with ``value`` as stored text (``None`` when nothing is).

    Refused: a lone surrogate (not Unicode text: it cannot be written as UTF-8), a
    control character (``\\x00`` cannot be stored by PostgreSQL, the others have no
    business in a name), and more than ``limit`` characters.
    """
    if limit is not None and len(value) > limit:
        return f"{len(value)} characters; at most {limit} are allowed"
    if value.isprintable():
        return None
    for pos, ch in enumerate(value):
        cat = unicodedata.category(ch)
        if cat == "Cs":
            return (f"character {pos + 1} (U+{ord(ch):04X}) is a lone surrogate (not "
                    "Unicode text)")
        if cat == "Cc":
            return f"character {pos + 1} (U+{ord(ch):04X}) is a control character"
    return None


def check_contest_id(cid: str) -> str | None:
    """What is wrong with ``cid`` as a contest id (``None`` when nothing is).

    A contest id is kept exactly as given (it is a key: the source's url or name), and
    refused when it is empty or holds nothing but whitespace and ``/`` (no URL path
    names it: ``/api/contests//`` is read as another path by clients and proxies), when
    it breaks the character rule of handles
    (:func:`podium.core.guards.identifier_problem`) or when it is longer than
    :data:`MAX_ID_BYTES` bytes of UTF-8.  (An id such as ``..`` is kept: it is reached
    percent-encoded, ``/api/contests/%2E%2E``, or in a query, ``/contest?id=..``.)
    """
    if all(ch.isspace() or ch == "/" for ch in cid):
        return ("empty or only whitespace and '/' (a contest id must name the contest: "
                "its url or name)")
    problem = identifier_problem(cid)
    if problem is not None:
        return problem
    size = len(cid.encode("utf-8"))
    if size > MAX_ID_BYTES:
        return f"{size} bytes of UTF-8; at most {MAX_ID_BYTES} are allowed"
    return None


def check_contest(
    contest: Contest,
    *,
    allow_future: bool = False,
    future_margin_s: float = DEFAULT_FUTURE_MARGIN_S,
    now: float | None = None,
) -> Contest:
    """``contest`` under the store's rules (see the module notes), or ContestError.

    Parameters
    ----------
    contest : Contest
    allow_future : bool, default False
        Accept a time more than ``future_margin_s`` after the clock (simulations,
        scheduled contests); the 1970..2200 range still holds.
    future_margin_s : float, default one day
        How far after the clock a contest may be dated.
    now : float, optional
        The clock (default ``time.time()``).

    Returns
    -------
    Contest
        ``contest`` itself when its handles are already normal, else a copy with
        normalised handles and team names.

    Raises
    ------
    ContestError
        Naming the contest and the field, player or team, and the rule broken.
    """
    label = contest.label
    for field, value, limit in (("name", contest.name, MAX_NAME_LENGTH),
                                ("url", contest.url, MAX_URL_LENGTH)):
        if value is None:
            continue
        problem = text_problem(value, limit)
        if problem is not None:
            raise ContestError(f"{field}: {problem}", contest=label)
    try:
        check_contest_time(contest.time_seconds, now=now, future_margin_s=future_margin_s,
                           allow_future=allow_future)
    except TimeError as exc:
        raise ContestError(str(exc), contest=label) from None
    problem = contest_weight_problem(contest.weight)
    if problem is not None:
        raise ContestError(problem, contest=label)
    ceil = contest.perf_ceiling
    if ceil is not None and ceil != math.inf and not PERF_CEILING_MIN <= ceil <= PERF_CEILING_MAX:
        raise ContestError(f"perf_ceiling={ceil!r} is outside [{PERF_CEILING_MIN:g}, "
                           f"{PERF_CEILING_MAX:g}], the rating solver's bracket (null: no "
                           "ceiling)", contest=label)
    return normalize_contest(contest)


def with_handles(contest: Contest, handles: list[str]) -> Contest:
    """``contest`` with its handles replaced, row for row, by ``handles`` (same places,
    teams, member weights and metadata)."""
    meta: dict[str, Any] = {"name": contest.name, "time_seconds": contest.time_seconds,
                            "weight": contest.weight, "perf_ceiling": contest.perf_ceiling,
                            "url": contest.url}
    teams = contest.teams
    if teams is None:
        return Contest.from_arrays(handles, contest.lo, contest.hi, **meta)
    first = teams.offsets[:-1]
    return Contest.from_team_arrays(handles, teams.offsets, list(teams.names), contest.lo[first],
                                    contest.hi[first], teams.weight, **meta)


def respell(contests: list[Contest], spelling: dict[str, str]) -> list[Contest]:
    """``contests`` with each handle spelt as ``spelling`` (``handle_key -> handle``: the
    spellings a case-insensitive store holds) says; a handle it lacks is added to it with
    the spelling of its first contest.  Unchanged contests are returned as they are."""
    out: list[Contest] = []
    for c in contests:
        canon = [spelling.setdefault(handle_key(h), h) for h in c.handles]
        out.append(c if canon == list(c.handles) else with_handles(c, canon))
    return out


def check_case_insensitive(contest: Contest) -> None:
    """ContestError when two handles of ``contest`` differ only by case
    (:func:`podium.core.guards.handle_key`): one player in a case-insensitive store."""
    seen: dict[str, str] = {}
    for h in contest.handles:
        k = handle_key(h)
        other = seen.get(k)
        if other is not None:
            raise ContestError(f"the handles {other!r} and {h!r} differ only by case: one "
                               "player in this store (case-insensitive handles)",
                               contest=contest.label, player=h)
        seen[k] = h


def located(exc: ContestError, where: str) -> ContestError:
    """``exc`` with the batch position ``where`` (``"contest #k 'label' of the batch: "``)
    in front of its message; ``exc`` itself when ``where`` is empty."""
    if not where:
        return exc
    parts = [f"team {exc.team!r}: " if exc.team is not None else "",
             f"player {exc.player!r}: " if exc.player is not None else ""]
    out = ContestError(where + "".join(parts) + exc.reason)
    out.contest, out.player, out.team = exc.contest, exc.player, exc.team
    return out
