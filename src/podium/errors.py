"""Exceptions raised by Podium.

Every error about user input says *where* the problem is (file, line, contest,
player) and *what* is wrong, so that a user can fix the data without a debugger.
"""

from __future__ import annotations

__all__ = [
    "PodiumError",
    "ContestError",
    "DataFormatError",
    "CheckpointError",
    "ConvergenceError",
    "ConfigError",
]


class PodiumError(Exception):
    """Base class of every error Podium raises on purpose."""


class ContestError(PodiumError, ValueError):
    """A contest is malformed (duplicate handle, bad tie range, bad weight, ...).

    Attributes
    ----------
    contest:
        Name (or index) of the offending contest, when known.
    player:
        Handle of the offending player, when the problem is about one player.
    team:
        Name of the offending team (team contests), when the problem is about one team.
    raw_keeps:
        The handle (or team name) broke the handle rules, and keeping handles as written
        (``--raw-handles``) would accept it.
    """

    def __init__(self, message: str, *, contest: str | None = None, player: str | None = None,
                 team: str | None = None):
        self.raw_keeps = False
        self.contest = contest
        self.player = player
        self.team = team
        self.reason = message
        where = []
        if contest is not None:
            where.append(f"contest {contest!r}")
        if team is not None:
            where.append(f"team {team!r}")
        if player is not None:
            where.append(f"player {player!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class DataFormatError(PodiumError, ValueError):
    """A file could not be read as contest data; the message names file and line."""


class CheckpointError(PodiumError, ValueError):
    """A checkpoint file is missing, corrupt, of an unknown version or of another system."""


class ConfigError(PodiumError, ValueError):
    """Unknown system name, unknown or out-of-range hyper-parameter."""


class UsageError(PodiumError, ValueError):
    """A command-line argument or option value out of its range (``podium`` exits with
    status 2, as for a value its parser refuses)."""


class ConvergenceError(PodiumError, ArithmeticError):
    """A root finder failed to bracket or converge (reported, never silently ignored)."""
