"""The plain, frozen results the :class:`~podium.store.Store` returns.

Every one is a frozen dataclass (``dataclasses.asdict``-able) of plain Python
values; floats are unrounded, exactly as stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from podium.errors import PodiumError

__all__ = [
    "DEFAULT_DB",
    "StoreError",
    "UnknownContestError",
    "IngestResult",
    "CorrectionResult",
    "LeaderboardRow",
    "HistoryRow",
    "PlayerView",
    "ContestChange",
    "ContestTeam",
    "ContestView",
    "TeamMember",
    "ContestSummary",
]


#: The default database: ``podium.db`` in the working directory.
DEFAULT_DB = "sqlite:///podium.db"


class StoreError(PodiumError):
    """A store cannot be opened or a contest cannot be ingested; nothing was changed."""


class UnknownContestError(StoreError):
    """A correction names a contest id the store does not hold (nothing was changed)."""

    def __init__(self, message: str, contest_id: str) -> None:
        super().__init__(message)
        self.contest_id = contest_id


@dataclass(frozen=True)
class IngestResult:
    """What :meth:`Store.ingest` did with one contest.

    Attributes
    ----------
    status:
        ``"applied"`` (rated and stored), ``"duplicate"`` (the same contest is
        already stored; nothing changed) or ``"recomputed"`` (inserted in time
        order before later contests, which were re-rated).
    contest_id:
        The id the contest is stored under.
    index:
        Its chronological position (0-based).
    players:
        Number of players in its standings.
    new_players:
        Players whose first rated contest it is (0 for a duplicate).
    recomputed:
        Number of later contests re-rated.
    warnings:
        Messages of the rating system (e.g. "one side only; nothing changed").
    name:
        The contest's name.
    """

    status: Literal["applied", "duplicate", "recomputed"]
    contest_id: str
    index: int
    players: int
    new_players: int
    recomputed: int = 0
    warnings: tuple[str, ...] = ()
    name: str = ""


@dataclass(frozen=True)
class CorrectionResult:
    """What :meth:`Store.delete` or :meth:`Store.replace` did.

    Attributes
    ----------
    status:
        ``"deleted"``, ``"replaced"``, or ``"unchanged"`` (a replacement whose content
        equals the stored contest's: nothing was written).
    contest_id:
        The id of the contest deleted or replaced (a replacement keeps it).
    name:
        The contest's name (for a replacement, the new one).
    index:
        Its chronological position (0-based) before the correction.
    new_index:
        Its position afterwards (``None`` after a deletion); a replacement that changes
        the time moves the contest.
    players:
        Players in the standings deleted, or in the replacement.
    previous_players:
        Players in the stored standings before the correction.
    rerated:
        Later contests rated again (every stored contest after the earlier of the old
        and the new position).
    players_removed:
        Players removed from the store: they appear in no remaining contest.
    players_added:
        Players new to the store (only a replacement adds any).
    content_hash:
        SHA-256 of the contest deleted, or of the replacement.
    previous_hash:
        SHA-256 of the stored contest before the correction.
    warnings:
        Messages of the rating system about the replacement (e.g. "one side only").
    """

    status: Literal["deleted", "replaced", "unchanged"]
    contest_id: str
    name: str
    index: int
    new_index: int | None
    players: int
    previous_players: int
    rerated: int
    players_removed: int
    players_added: int
    content_hash: str
    previous_hash: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeaderboardRow:
    """One row of :meth:`Store.leaderboard`; ``rank`` is 1-based within the filtered set."""

    rank: int
    handle: str
    display_rating: float
    mu: float
    sigma: float
    contests: int
    last_contest_time: int
    max_display_rating: float
    last_change: float


@dataclass(frozen=True)
class HistoryRow:
    """One rated contest of a player.

    ``place`` is the 0-based ``lo`` of the player's tie range (in a team contest: of
    the player's team, in team places), ``change`` the display rating change (for a
    debut: from the newcomer prior's display rating), ``players`` the size of the
    contest and ``team`` the player's team in a team contest (``None`` otherwise).
    """

    contest_id: str
    contest_name: str
    time_seconds: int
    index: int
    mu: float
    sigma: float
    display_rating: float
    perf: float
    place: int
    change: float
    players: int
    team: str | None = None


@dataclass(frozen=True)
class PlayerView:
    """A rated player, with ``rank`` among all rated players (1-based) and full history."""

    handle: str
    mu: float
    sigma: float
    display_rating: float
    contests: int
    last_contest_time: int
    max_display_rating: float
    last_change: float
    rank: int | None
    history: list[HistoryRow] = field(default_factory=list)


@dataclass(frozen=True)
class ContestChange:
    """One player's result and rating change in a contest (``old_display`` None for a debut).

    In a team contest ``lo``/``hi`` are the range of team places of the player's
    ``team`` and ``weight`` the player's member weight in (0, 1] (both ``None`` in an
    individual contest).
    """

    handle: str
    lo: int
    hi: int
    old_display: float | None
    new_display: float
    change: float
    perf: float
    mu: float
    sigma: float
    team: str | None = None
    weight: float | None = None


@dataclass(frozen=True)
class TeamMember:
    """A member of a team and the member's weight in (0, 1] (partial play)."""

    handle: str
    weight: float


@dataclass(frozen=True)
class ContestTeam:
    """One team of a team contest: its name, its 0-based inclusive range of team places
    (shared by tied teams) and its members."""

    name: str
    lo: int
    hi: int
    members: list[TeamMember] = field(default_factory=list)


@dataclass(frozen=True)
class ContestView:
    """One contest with every player's rating change, in standings order.

    ``rated`` is False for a contest the rating system left unrated (one side only,
    or everybody tied with ``all_tied="skip"``:
    :meth:`~podium.systems.RatingSystem.skips_round`): it changed nothing and
    ``changes`` is empty.  ``teams`` lists the teams of a team contest, best
    first (``None`` for an individual contest).

    A page of a contest (``Store.contest(id, offset=, limit=)``) holds the changes of
    the standings rows ``offset .. offset + limit - 1``; ``total`` is the number of
    standings rows in all (``players``) and ``limit`` ``None`` means "to the end".
    """

    contest_id: str
    name: str
    url: str | None
    time_seconds: int
    index: int
    players: int
    changes: list[ContestChange] = field(default_factory=list)
    rated: bool = True
    weight: float = 1.0
    perf_ceiling: float | None = None
    teams: list[ContestTeam] | None = None
    offset: int = 0
    limit: int | None = None
    total: int = 0


@dataclass(frozen=True)
class ContestSummary:
    """One row of :meth:`Store.contests`."""

    contest_id: str
    name: str
    url: str | None
    time_seconds: int
    index: int
    players: int
