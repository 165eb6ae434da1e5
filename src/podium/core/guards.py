"""Input guards shared by the loaders, the store and the service: handles and times.

Handles
-------
A handle names a player everywhere: in files, in the store, in URLs and on pages.
:func:`normalize_handle` applies one rule set (docs/datasets.md, "What the loaders check"):

* Unicode NFC normalisation, so that a decomposed ``"e\\u0301"`` and the composed
  ``"\\u00e9"`` are one player;
* surrounding whitespace trimmed (inner spaces are kept: ``"Lewis Hamilton"``);
* refused: an empty or whitespace-only handle, more than :data:`MAX_HANDLE_LENGTH`
  characters (after normalisation), and any character that :func:`identifier_problem`
  refuses.

:func:`identifier_problem` is the one character rule of every identifier -- handles,
team names, contest ids -- after the Unicode identifier and security standards (UAX #31,
"Unicode Identifiers and Syntax"; UTS #39, "Unicode Security Mechanisms", section 3.1,
whose ``Identifier_Status=Restricted`` covers every class below).  Refused anywhere:

* a control character (``Cc``: ``\\x00``, ``\\t``, ``\\n``, ...), a line or paragraph
  separator (``Zl``, ``Zp``), a lone surrogate (``Cs``: text that is not Unicode);
* a *default-ignorable* code point (``Default_Ignorable_Code_Point``, UAX #44: drawn as
  nothing) -- bidi controls such as U+202E, zero-width spaces and joiners, the
  byte-order mark, the soft hyphen, the Hangul fillers U+115F, U+1160, U+3164 and
  U+FFA0, the combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and
  U+17B5, variation selectors, tags -- and any other format character (``Cf``);
* a private-use (``Co``), unassigned (``Cn``, in the Unicode version of the ``regex``
  package, newer than Python's own tables) or noncharacter code point (U+FDD0..U+FDEF,
  U+xxFFFE, U+xxFFFF);
* U+2800 BRAILLE PATTERN BLANK, drawn as a blank but neither whitespace nor ignorable;
* a combining mark with no base character: first, or after whitespace (a *lone*
  combining mark).

Emoji sequences (UTS #51) are emoji, not invisible characters: inside one, a zero-width
joiner between two emoji (``"\\U0001F469\\u200d\\U0001F4BB"``), a variation selector
after an emoji (``"\\u2764\\ufe0f"``), a keycap (``"1\\ufe0f\\u20e3"``) and the tags of a
flag (``"\\U0001F3F4\\U000E0067...\\U000E007F"``) are accepted (:func:`emoji_sequence`).

:func:`handle_key` is the case-insensitive key (``str.casefold`` of the normalised
handle) that a store uses when it is asked to treat handles differing only by case
as one player.

Times
-----
:func:`check_contest_time` refuses a contest time outside 1800-01-01 ..
2200-01-01 (a time before 1970 is a negative number of seconds), or more than a margin
(default one day) after the clock, and says when the value looks like milliseconds
(more than 1000 times the range in either direction).

Weights
-------
:func:`contest_weight_problem` refuses a contest weight outside
[:data:`MIN_CONTEST_WEIGHT`, :data:`MAX_CONTEST_WEIGHT`]: the range in which every
rating system was checked (a weight of 1e300 divided by zero inside Elo-MMR's update,
1e5 rated silently to 8405.8).  The loaders (``--any-weight`` for research data), the
store and the service apply it.

Stored text
-----------
:func:`storable_text` says whether a text can be sent to a database at all (no NUL,
no lone surrogate): a lookup of any other text finds nothing without asking.
"""

from __future__ import annotations

import functools
import time
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.core.contest import Contest

__all__ = [
    "DEFAULT_FUTURE_MARGIN_S",
    "MAX_CONTEST_WEIGHT",
    "MAX_HANDLE_LENGTH",
    "MAX_TIME_SECONDS",
    "MIN_CONTEST_WEIGHT",
    "MIN_TIME_SECONDS",
    "HandleError",
    "TimeError",
    "check_contest_time",
    "contest_weight_problem",
    "emoji_sequence",
    "handle_key",
    "identifier_problem",
    "normalize_contest",
    "normalize_handle",
    "normalize_handles",
    "storable_text",
]

#: The longest handle accepted, in characters (code points) after NFC normalisation.
MAX_HANDLE_LENGTH = 128
#: 1800-01-01T00:00:00Z: the earliest contest time accepted (negative: before 1970).
MIN_TIME_SECONDS = -5_364_662_400
#: 2200-01-01T00:00:00Z: the latest contest time accepted whatever the clock says.
MAX_TIME_SECONDS = 7_258_118_400
#: How far after the clock a contest may be dated by default (one day).
DEFAULT_FUTURE_MARGIN_S = 86_400
#: The smallest contest weight accepted (the rating systems divide by it).
MIN_CONTEST_WEIGHT = 1e-3
#: The largest contest weight accepted (Elo-MMR's performance equations already leave
#: the solver's bracket near it; 1e300 divided by zero).
MAX_CONTEST_WEIGHT = 100.0

_EMOJI = r"\p{Extended_Pictographic}[\uFE0E\uFE0F]?\p{Emoji_Modifier}?\uFE0F?"


class _Patterns:
    """The character rule's regular expressions (the ``regex`` module's Unicode
    properties), compiled on first use: a printable ASCII text needs none of them, and
    importing ``regex`` and compiling them costs about 10 ms of every command."""

    def __init__(self) -> None:
        import regex

        #: One emoji sequence of UTS #51 ("Unicode Emoji", ED-14..ED-17): an emoji (an
        #: ``Extended_Pictographic`` character, optionally with a variation selector and
        #: a skin tone), a keycap, a flag of two regional indicators or a flag of tags;
        #: emoji joined by zero-width joiners.  Inside one, the joiners, selectors and
        #: tags belong to an emoji: they are not invisible characters.
        self.emoji_sequence = regex.compile(
            r"(?:\U0001F3F4[\U000E0020-\U000E007E]+\U000E007F|" + _EMOJI
            + r"|[0-9#*]\uFE0F?\u20E3|\p{Regional_Indicator}{2})(?:\u200D" + _EMOJI + r")*")
        # Code points refused anywhere in an identifier (outside an emoji sequence).
        self.refused = regex.compile(
            r"[\p{Cc}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Cf}\p{Default_Ignorable_Code_Point}"
            r"\u2800]")
        # A combining mark with no base character: first, or after whitespace.
        self.lone_mark = regex.compile(r"(?:^|(?<=\s))\p{M}")
        # Why a character of ``refused`` is refused: the first that matches.
        self.reasons: tuple[tuple[Any, str], ...] = (
            (regex.compile(r"\p{Cc}"), "a control character"),
            (regex.compile(r"\p{Cs}"), "a lone surrogate (not Unicode text)"),
            (regex.compile(r"\p{Zl}"), "a line separator"),
            (regex.compile(r"\p{Zp}"), "a paragraph separator"),
            (regex.compile(r"\p{Co}"), "a private-use character (it has no agreed glyph)"),
            (regex.compile(r"\p{Noncharacter_Code_Point}"), "a noncharacter"),
            (regex.compile(r"\p{Cn}"), "unassigned in Unicode"),
            (regex.compile(r"[\u200D\uFE00-\uFE0F\U000E0020-\U000E007F]"),
             "invisible outside an emoji sequence (a joiner, variation selector or tag)"),
            (regex.compile(r"\p{Cf}"), "an invisible format character"),
            (regex.compile(r"\p{Default_Ignorable_Code_Point}"),
             "default-ignorable (drawn as nothing)"),
            (regex.compile(r"\u2800"), "a blank Braille pattern (drawn as nothing)"),
        )


@functools.cache
def _patterns() -> _Patterns:
    return _Patterns()


def emoji_sequence() -> Any:
    """The compiled pattern (``regex``) of one emoji sequence of UTS #51 (see
    :class:`_Patterns`), compiled on first use."""
    return _patterns().emoji_sequence


class HandleError(ValueError):
    """A handle breaks the rules of :func:`normalize_handle`.

    Attributes
    ----------
    handle:
        The handle as given.
    reason:
        What is wrong, in words.
    raw_keeps:
        Whether keeping handles as written (``raw_handles``) accepts it: every handle
        that is Unicode text (a lone surrogate is refused either way).
    """

    def __init__(self, handle: str, reason: str, *, raw_keeps: bool | None = None) -> None:
        self.handle = handle
        self.reason = reason
        self.raw_keeps = _unicode(handle) if raw_keeps is None else raw_keeps
        super().__init__(f"handle {_show(handle)}: {reason}")


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class TimeError(ValueError):
    """A contest time outside the accepted range; the message names the value."""


def _show(handle: str) -> str:
    """A handle quoted for a message: escapes for the invisible characters, cut short."""
    text = handle if len(handle) <= 40 else handle[:40] + "..."
    return ascii(text) if not text.isprintable() else repr(text)


def identifier_problem(text: str) -> str | None:
    """What makes ``text`` unfit as an identifier (a handle, a team name, a contest id)
    under the character rule of the module notes; ``None`` when nothing does.

    Only characters are judged here, not emptiness, length or surrounding whitespace
    (each kind of identifier rules on those itself).  Printable ASCII is always fit.

    Parameters
    ----------
    text : str

    Returns
    -------
    str or None
        ``"character N (U+XXXX) is ..."`` for the first refused character (``N``
        counts from 1 in ``text``).

    Examples
    --------
    >>> identifier_problem("tourist"), identifier_problem("\\U0001F469\\u200d\\U0001F4BB")
    (None, None)
    >>> identifier_problem("tourist\\u3164")
    'character 8 (U+3164) is default-ignorable (drawn as nothing)'
    >>> identifier_problem("\\u0301abc")
    'character 1 (U+0301) is a combining mark with no base character before it'
    """
    if text.isascii() and text.isprintable():
        return None
    masked = text
    p = _patterns()
    if not text.isascii():
        masked = p.emoji_sequence.sub(lambda m: "x" * len(m.group()), text)
    hit = p.refused.search(masked)
    if hit is not None:
        pos = hit.start()
        ch = text[pos]
        why = next((w for r, w in p.reasons if r.match(ch)), "not allowed")
        return f"character {pos + 1} (U+{ord(ch):04X}) is {why}"
    lone = p.lone_mark.search(masked)
    if lone is not None:
        pos = lone.start()
        return (f"character {pos + 1} (U+{ord(text[pos]):04X}) is a combining mark with no "
                "base character before it")
    return None


def _sized_and_trimmed(handle: str) -> bool:
    """Whether ``handle`` has 1 to :data:`MAX_HANDLE_LENGTH` characters and no space at
    either end: for a printable ASCII handle, all that makes it its own normal form
    (the fast path of :func:`normalize_handle` and :func:`normalize_contest`)."""
    return 0 < len(handle) <= MAX_HANDLE_LENGTH and handle[0] != " " and handle[-1] != " "


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
    if handle.isascii() and handle.isprintable() and _sized_and_trimmed(handle):
        return handle
    problem = identifier_problem(handle)
    if problem is not None:
        raise HandleError(handle, problem)
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
    handles0 = contest.handles
    if contest.teams is None:
        # normalize_handle's fast path for every handle at once (a property of each
        # character holds for all of them when it holds for their concatenation):
        # printable ASCII, nothing to trim -- the contest is returned as it is
        try:
            joined = "".join(handles0)
        except TypeError:  # not all strings: the per-handle checks below name the culprit
            joined = "\n"
        if (joined.isascii() and joined.isprintable()
                and all(_sized_and_trimmed(h) for h in handles0)):
            return contest
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


def contest_weight_problem(weight: float) -> str | None:
    """What is wrong with ``weight`` as a contest weight (``None`` when nothing is).

    >>> contest_weight_problem(1.0) is None, contest_weight_problem(1e300)
    (True, 'weight=1e+300 is outside [0.001, 100], the range of contest weights accepted')
    """
    if MIN_CONTEST_WEIGHT <= weight <= MAX_CONTEST_WEIGHT:
        return None
    return (f"weight={weight!r} is outside [{MIN_CONTEST_WEIGHT:g}, {MAX_CONTEST_WEIGHT:g}], "
            "the range of contest weights accepted")


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
        Seconds since 1970-01-01 UTC (negative before 1970).
    now : float, optional
        The clock (default ``time.time()``).
    future_margin_s : float, default one day
        How far after ``now`` a contest may be dated.
    allow_future : bool, default False
        Accept any time up to 2200 (simulations, scheduled contests).

    Raises
    ------
    TimeError
        When the time is before 1800, after 2200, or more than ``future_margin_s``
        after ``now`` (unless ``allow_future``); the message names the value and
        suggests seconds when it looks like milliseconds.
    """
    t = time_seconds
    hint = ""
    if MAX_TIME_SECONDS < abs(t) <= 1000 * max(MAX_TIME_SECONDS, -MIN_TIME_SECONDS) and (
            MIN_TIME_SECONDS <= t / 1000 <= MAX_TIME_SECONDS):
        hint = (f"; it looks like milliseconds: in seconds it is {int(t // 1000)} "
                f"({_iso(t / 1000)})")
    if t < MIN_TIME_SECONDS:
        raise TimeError(f"time_seconds={t} is before 1800-01-01 (seconds since the Unix "
                        f"epoch are expected, negative before 1970){hint}")
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
    """``t`` (unix seconds, negative before 1970) as a UTC date and time."""
    try:
        when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=t)
    except OverflowError:
        return f"t={t}"
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _span(seconds: float) -> str:
    if seconds % 86_400 == 0:
        days = int(seconds // 86_400)
        return f"{days} day" + ("s" if days != 1 else "")
    return f"{seconds:g} s"
