"""Input guards shared by the loaders, the store and the service: handles and times.

Handles
-------
A handle names a player everywhere: in files, in the store, in URLs and on pages.
:func:`normalize_handle` applies one rule set (docs/datasets.md, "What the loaders check"):

* Unicode NFC normalisation, so that a decomposed ``"e\\u0301"`` and the composed
  ``"\\u00e9"`` are one player;
* surrounding whitespace trimmed (inner spaces are kept: ``"Lewis Hamilton"``);
* refused: an empty or whitespace-only handle; a control character (``\\x00``,
  ``\\t``, ``\\n``, ...); a format character (bidi overrides and isolates such as
  ``\\u202e``, zero-width spaces and joiners, the byte-order mark, the soft hyphen);
  a line or paragraph separator; a lone surrogate (text that is not Unicode);
* at most :data:`MAX_HANDLE_LENGTH` characters (after normalisation).

:func:`handle_key` is the case-insensitive key (``str.casefold`` of the normalised
handle) that a store uses when it is asked to treat handles differing only by case
as one player.

Times
-----
:func:`check_contest_time` refuses a contest time outside 1970-01-01 ..
2200-01-01, or more than a margin (default one day) after the clock, and says
when the value looks like milliseconds.

Stored text
-----------
:func:`storable_text` says whether a text can be sent to a database at all (no NUL,
no lone surrogate): a lookup of any other text finds nothing without asking.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.core.contest import Contest

__all__ = [
    "DEFAULT_FUTURE_MARGIN_S",
    "MAX_HANDLE_LENGTH",
    "MAX_TIME_SECONDS",
    "MIN_TIME_SECONDS",
    "HandleError",
    "TimeError",
    "check_contest_time",
    "handle_key",
    "normalize_contest",
    "normalize_handle",
    "normalize_handles",
    "storable_text",
]

#: The longest handle accepted, in characters (code points) after NFC normalisation.
MAX_HANDLE_LENGTH = 128
#: 1970-01-01T00:00:00Z: the earliest contest time accepted.
MIN_TIME_SECONDS = 0
#: 2200-01-01T00:00:00Z: the latest contest time accepted whatever the clock says.
MAX_TIME_SECONDS = 7_258_118_400
#: How far after the clock a contest may be dated by default (one day).
DEFAULT_FUTURE_MARGIN_S = 86_400

# General categories refused anywhere in a handle: Cc control, Cf format (bidi
# controls, zero-width characters, BOM, soft hyphen), Cs surrogate, Zl line and Zp
# paragraph separators.
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible format character",
                       "Cs": "a lone surrogate (not Unicode text)",
                       "Zl": "a line separator", "Zp": "a paragraph separator"}


class HandleError(ValueError):
    """A handle breaks the rules of :func:`normalize_handle`.

    Attributes
    ----------
    handle:
        The handle as given.
    reason:
        What is wrong, in words.
    """

    def __init__(self, handle: str, reason: str) -> None:
        self.handle = handle
        self.reason = reason
        super().__init__(f"handle {_show(handle)}: {reason}")


class TimeError(ValueError):
    """A contest time outside the accepted range; the message names the value."""


def _show(handle: str) -> str:
    """A handle quoted for a message: escapes for the invisible characters, cut short."""
    text = handle if len(handle) <= 40 else handle[:40] + "..."
    return ascii(text) if not text.isprintable() else repr(text)


def _check_characters(handle: str) -> None:
    for pos, ch in enumerate(handle):
        cat = unicodedata.category(ch)
        what = _REFUSED_CATEGORIES.get(cat)
        if what is not None:
            raise HandleError(handle, f"character {pos + 1} (U+{ord(ch):04X}) is {what}")


def normalize_handle(handle: str) -> str:
    """The handle under Podium's rules (see the module notes), or :class:`HandleError`.

    Parameters
    ----------
    handle : str

    Returns
    -------
    str
        NFC-normalised, surrounding whitespace removed.  A handle already in that
        form (every printable ASCII handle without surrounding spaces) is returned
        as the same object.

    Raises
    ------
    HandleError
        Naming the handle and the rule it breaks.
    TypeError
        When ``handle`` is not a string.
    """
    if not isinstance(handle, str):
        raise TypeError(f"a handle must be a string, got {type(handle).__name__}")
    # fast path: printable ASCII (no control characters), nothing to trim
    if (handle.isascii() and handle.isprintable() and 0 < len(handle) <= MAX_HANDLE_LENGTH
            and handle[0] != " " and handle[-1] != " "):
        return handle
    _check_characters(handle)  # before NFC: a lone surrogate cannot be normalised
    out = unicodedata.normalize("NFC", handle).strip()
    if not out:
        raise HandleError(handle, "empty or only whitespace")
    if len(out) > MAX_HANDLE_LENGTH:
        raise HandleError(handle, f"{len(out)} characters; at most {MAX_HANDLE_LENGTH} "
                                  "are allowed")
    return out


def normalize_handles(handles: Iterable[str]) -> dict[str, str]:
    """:func:`normalize_handle` of each distinct handle, as a mapping from the given
    handle to its normal form (each distinct handle is checked once)."""
    return {h: normalize_handle(h) for h in set(handles)}


def normalize_contest(contest: Contest) -> Contest:
    """``contest`` with every handle (and team name) under :func:`normalize_handle`.

    Returns the same object when nothing changes; otherwise a new :class:`Contest`
    with the same places, teams, weights and metadata.

    Raises
    ------
    ContestError
        Naming the contest and the player (or team) when a handle breaks the rules,
        or when two handles of the contest become one after normalisation.
    """
    from podium.core.contest import Contest
    from podium.errors import ContestError

    label = contest.label

    def fix(values: Iterable[str], what: str) -> tuple[list[str], bool]:
        out: list[str] = []
        changed = False
        for h in values:
            try:
                n = normalize_handle(h)
            except HandleError as exc:
                if what == "team":
                    raise ContestError(exc.reason, contest=label, team=h) from None
                raise ContestError(exc.reason, contest=label, player=h) from None
            changed = changed or n is not h
            out.append(n)
        return out, changed

    handles, changed = fix(contest.handles, "player")
    teams = contest.teams
    names: list[str] = []
    if teams is not None:
        names, team_changed = fix(teams.names, "team")
        changed = changed or team_changed
    if not changed:
        return contest
    meta: dict[str, Any] = {"name": contest.name, "time_seconds": contest.time_seconds,
            "weight": contest.weight, "perf_ceiling": contest.perf_ceiling, "url": contest.url}
    if teams is None:
        return Contest.from_arrays(handles, contest.lo, contest.hi, **meta)
    first = teams.offsets[:-1]
    return Contest.from_team_arrays(handles, teams.offsets, names, contest.lo[first],
                                    contest.hi[first], teams.weight, **meta)


def handle_key(handle: str) -> str:
    """The case-insensitive identity of a normalised handle (``str.casefold``)."""
    return handle.casefold()


def storable_text(text: str) -> bool:
    """Whether ``text`` can be stored in (and so be looked up in) a database.

    Refused: a NUL (``\\x00``: PostgreSQL's ``text`` cannot hold it) and a lone
    surrogate (not Unicode text: it has no UTF-8 form).  No stored handle, contest id
    or audit field holds either, so a lookup of such a text finds nothing; the store
    answers "not found" without sending it (PostgreSQL would refuse the query).

    >>> storable_text("tourist"), storable_text("a\\x00b"), storable_text("\\ud800")
    (True, False, False)
    """
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_contest_time(
    time_seconds: int | float,
    *,
    now: float | None = None,
    future_margin_s: float = DEFAULT_FUTURE_MARGIN_S,
    allow_future: bool = False,
) -> None:
    """Refuse a contest time that cannot be right.

    Parameters
    ----------
    time_seconds : int or float
        Seconds since 1970-01-01 UTC.
    now : float, optional
        The clock (default ``time.time()``).
    future_margin_s : float, default one day
        How far after ``now`` a contest may be dated.
    allow_future : bool, default False
        Accept any time up to 2200 (simulations, scheduled contests).

    Raises
    ------
    TimeError
        When the time is before 1970, after 2200, or more than ``future_margin_s``
        after ``now`` (unless ``allow_future``); the message names the value and
        suggests seconds when it looks like milliseconds.
    """
    t = time_seconds
    hint = ""
    if MAX_TIME_SECONDS < t <= MAX_TIME_SECONDS * 1000:
        hint = (f"; it looks like milliseconds: in seconds it is {int(t // 1000)} "
                f"({_iso(t / 1000)})")
    if t < MIN_TIME_SECONDS:
        raise TimeError(f"time_seconds={t} is before 1970-01-01 (seconds since the Unix "
                        "epoch are expected)")
    if t > MAX_TIME_SECONDS:
        raise TimeError(f"time_seconds={t} is after 2200-01-01{hint}")
    if allow_future:
        return
    clock = time.time() if now is None else now
    if t > clock + future_margin_s:
        raise TimeError(
            f"time_seconds={t} ({_iso(t)}) is more than {_span(future_margin_s)} in the "
            f"future of this machine's clock ({_iso(clock)}); pass --allow-future (or "
            "allow_future) for simulated or scheduled contests"
        )


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


def _span(seconds: float) -> str:
    if seconds % 86_400 == 0:
        days = int(seconds // 86_400)
        return f"{days} day" + ("s" if days != 1 else "")
    return f"{seconds:g} s"
