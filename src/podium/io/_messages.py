"""How the contest readers word their errors: values shown short, a
:class:`~podium.errors.ContestError` located in its file, a handle error naming the
contest and player, and the note on handles that normalisation merged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from podium.core.guards import HandleError
from podium.errors import ContestError

__all__ = ["contest_error_at", "duplicate_note", "handle_error", "short", "short_int", "show"]


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def contest_error_at(err: ContestError, where: str) -> ContestError:
    """The same :class:`ContestError` (contest, player, reason) with ``where`` in front."""
    new = ContestError(err.reason, contest=err.contest, player=err.player, team=err.team)
    new.args = (f"{where}: {err}",)
    return new


def short_int(value: int) -> str:
    """An integer for a message: in full up to 30 digits, else its first digits and size."""
    if -(10**30) < value < 10**30:
        return str(value)
    digits = value.bit_length() * 0.30103  # no str(): huge ints cannot be converted
    return f"{'-' if value < 0 else ''}a number of about {digits:.0f} digits"


def handle_error(exc: HandleError, where: str, contest: str, *, team: bool = False
                 ) -> ContestError:
    """:class:`ContestError` naming ``where``, the contest and the player (or team); the
    handle is shown escaped and cut short (it may be 10,000 characters long)."""
    if team:
        err = ContestError(exc.reason, contest=contest, team=exc.handle)
    else:
        err = ContestError(exc.reason, contest=contest, player=exc.handle)
    who = "team" if team else "player"
    err.args = (f"{where}: contest {contest!r}, {who} {show(exc.handle)}: {exc.reason}",)
    err.raw_keeps = exc.raw_keeps
    return err


def duplicate_note(exc: ContestError, raw: Sequence[str],
                   intern: Callable[[str], str]) -> ContestError:
    """``exc`` naming the spellings that normalisation merged, when two handles of the
    contest became one (``raw``: the contest's handles as given; ``intern``: the load's
    handle table, :class:`podium.io._handles.HandleTable`)."""
    if exc.player is None or exc.reason != "duplicate handle":
        return exc
    spellings: list[str] = []
    for h in raw:
        if h not in spellings and intern(h) == exc.player:
            spellings.append(h)
    if len(spellings) < 2:
        return exc
    shown = " and ".join(map(ascii, spellings))  # escaped: the spellings look alike
    return ContestError(f"duplicate handle: {shown} are one handle once normalised (NFC, "
                        "surrounding spaces removed)", contest=exc.contest, player=exc.player)


def show(text: str) -> str:
    """A string quoted for a message, invisible characters escaped, cut short."""
    cut = text if len(text) <= 40 else text[:40] + "..."
    return repr(cut) if cut.isprintable() else ascii(cut)
