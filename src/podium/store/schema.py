"""The current schema of a Podium store (SQLAlchemy Core tables).

The tables, one code path for SQLite and PostgreSQL:

``meta``
    Key/value rows: ``schema_version``, ``system`` (rating system name),
    ``params`` (its full parameters, JSON), ``store_id`` (random, set at
    creation), ``epoch`` (bumped whenever contests are re-rated) and
    ``revision`` (bumped by every write).
``players``
    Every handle that appears in a stored standing.  The rating columns are
    ``NULL`` and ``contests`` is 0 until the player's first *rated* contest (a
    contest the system leaves unrated rates nobody); afterwards they hold the
    player's current values, equal to the :class:`~podium.rater.Rater`'s table
    (so ``display_rating IS NOT NULL`` exactly when ``contests >= 1``: the
    queries of rated players use it, with the rating index).  ``handle_key``
    is the case-folded handle, compared by code point (``COLLATE "C"`` on
    PostgreSQL), so that the handles with a given prefix are a range of its
    index.
``contests``
    One row per contest: its id (``cid``: the url, else the name, unless given),
    chronological position ``seq`` (0-based, time-sorted), name, url, time,
    weight, performance ceiling, number of players, of debuts, whether it was
    rated, and the SHA-256 of its content (for idempotent ingestion).
``standings``
    ``(contest, position) -> (player, lo, hi, team, member_weight)``: the contest
    exactly as given.  For a team contest (version 4) each row is a member: ``lo``
    and ``hi`` are its team's range of team places, ``team`` the team's name and
    ``member_weight`` the member's weight in (0, 1]; the rows of a team are
    adjacent, teams best first.  Both are ``NULL`` in an individual contest.
    Indexed by player (version 5), as the foreign key to ``players`` needs when a
    correction deletes a player.
``events``
    One rating event per player and rated contest: ``mu``, ``sigma``, display
    rating, performance, place (0-based ``lo``), the display rating before the
    contest (``prev_display``; for a debut the newcomer prior's display rating),
    ``change`` (new minus previous display rating, exactly the Rater's
    ``last_change``), ``debut`` and (version 4) ``team``: the player's team in a team
    contest (``NULL`` otherwise), so that a player's history reads it from the
    events alone.
``snapshots``
    Derived data: the complete rating state (a :class:`~podium.rater.Rater`
    without its event log, see :mod:`podium.store.snapshot`) after the first
    ``head_count`` contests, so that a process need not replay the whole history.
``tokens`` (version 5)
    The service's bearer tokens (:mod:`podium.store.tokens`): a unique ``name``, a
    ``role`` (``read``, ``write`` or ``admin``), the SHA-256 of the secret (never the
    secret itself; unique, so that a request's token is found by one index lookup),
    who created it and when, and when it was revoked (``NULL`` while it is valid).
``audit`` (version 5)
    One row per write (:mod:`podium.store.audit`): when, who (``actor``), what
    (``action``: ``ingest``, ``recompute``, ``token-create``, ...), the contest's id
    and content hash when the write concerns a contest, the store's ``revision``
    after the write and a JSON ``detail``.  Written in the transaction of the write
    itself, so a write and its audit row are committed together or not at all.

Version 5 also indexes ``players.last_contest_time`` together with
``display_rating`` (``ix_players_active``): the activity window of the leaderboard
(``active_days``) is a range of that index.

**Ladders** (version 6).  A store holds one or more *ladders*, independent
leaderboards each with its own rating system, contests, players and history.  Each
ladder has its own set of the tables above and below (:class:`LadderTables`, built by
:func:`ladder_tables`): the ladder ``default`` -- every store of version 5 or older --
uses the tables named above, unchanged; ladder number ``k`` uses the same tables named
``ladder{k}_meta``, ``ladder{k}_players``, ...  So the writes of two ladders touch
disjoint tables and indexes (they run concurrently on PostgreSQL, each holding its own
lock), and a ladder's rows are exactly those of a one-ladder store.  The shared tables:

``ladders`` (version 6)
    The registry: one row per ladder -- its key, unique ``name``, the ``prefix`` of its
    tables (empty for ``default``) and when it was created.  A ladder's rating system,
    parameters and settings (the provisional rule, the cross-ladder newcomer prior:
    :mod:`podium.store.ladders`) are rows of its own ``meta``.
``tokens``
    As above, plus (version 6) ``ladders``: a JSON list of the ladder names a token is
    limited to (``NULL``: every ladder).
``meta``
    Also the store's ``schema_version`` (the other ladders' ``meta`` tables hold only
    their own keys).

Per ladder, version 6 adds:

``seasons``
    One row per season boundary (:mod:`podium.store.seasons`): the season it starts
    (``number``, 2 for the first boundary), the ``contests`` row that stands for it in
    the ladder's history (``contest_pk``; its events are the players' resets), the
    reset policy and its time.
``season_ratings``
    Every rated player's rating at the end of each finished season (the final
    leaderboard, ``?season=``), before the reset.
``priors``
    The newcomer priors a ladder took from another ladder (cross-ladder newcomer prior):
    one row per player who entered with one, written when the player first played, so
    that a replay never asks the other ladder again.

**Ratings as of a time** (version 7).  Each ladder's ``players`` is also indexed by
``mu`` (descending, then ``handle``: ``ix_players_mu``) and by ``sigma``
(``ix_players_sigma``), and ``season_ratings`` by ``(season, mu)`` and ``(season,
sigma)``: the leaderboard as of a time under time drift walks the players by ``mu``
and bounds the rest with the smallest ``sigma`` (:func:`podium.store.asof.ranked_page`).
No row changes.

**Only where ratings drift** (version 8).  ``ix_players_mu`` and ``ix_players_sigma``
exist only in the ladders whose rating system has time drift
(:attr:`~podium.systems.RatingSystem.has_time_drift`, fixed with the ladder's system and
parameters at its creation): without drift a rating read as of any time is the stored
one, read along ``ix_players_display``, and the two indexes were never read -- but every
write moved each of its players in both (about a third of the pages a match's write
changes).  They are not part of ``players`` here but :attr:`LadderTables.drift_indexes`,
created with a ladder whose system drifts (:mod:`podium.store.lifecycle`).  No row
changes.

The database is the source of truth for contests, standings, players and
events; snapshots can always be rebuilt by replaying the stored standings.

The schema is versioned (``meta.schema_version``); :mod:`podium.store.migrations`
builds it step by step.  This module describes the newest version, and a test
checks that the migrations produce exactly these tables, columns and indexes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
)
from sqlalchemy.types import TypeEngine

__all__ = [
    "SCHEMA_VERSION",
    "metadata",
    "meta",
    "players",
    "contests",
    "standings",
    "events",
    "snapshots",
    "tokens",
    "audit",
    "ladders",
    "seasons",
    "season_ratings",
    "priors",
    "handle_type",
    "LadderTables",
    "ladder_tables",
    "ladder_prefix",
]

#: The schema version this Podium reads and writes.
SCHEMA_VERSION = 8


def handle_type() -> TypeEngine[str]:
    """Text compared by code point on both back ends.

    SQLite compares ``TEXT`` byte-wise (UTF-8, i.e. by code point) by default;
    PostgreSQL uses the database's locale unless told otherwise, which would make
    "handle ascending" differ between the two and from Python.  ``COLLATE "C"``
    makes PostgreSQL agree.
    """
    return Text().with_variant(Text(collation="C"), "postgresql")



def ladder_prefix(pk: int) -> str:
    """The prefix of the tables of ladder number ``pk`` (``""`` for ``default``, 0)."""
    return "" if pk == 0 else f"ladder{int(pk)}_"


@dataclass(frozen=True, eq=False)
class LadderTables:
    """The tables of one ladder (see the module notes): ``meta``, ``players``,
    ``contests``, ``standings``, ``events``, ``snapshots``, ``audit``, ``seasons``,
    ``season_ratings`` and ``priors``, named with ``prefix``.  ``metadata`` holds them
    (for ``default`` also the shared tables).  ``drift_indexes`` are the indexes of
    ``players`` that only a ladder whose ratings drift has (version 8), not created with
    the table."""

    prefix: str
    metadata: MetaData
    meta: Table
    players: Table
    contests: Table
    standings: Table
    events: Table
    snapshots: Table
    audit: Table
    seasons: Table
    season_ratings: Table
    priors: Table
    drift_indexes: tuple[Index, ...]

    @property
    def own(self) -> tuple[Table, ...]:
        """This ladder's tables, in an order that creates each after those it refers to."""
        return (self.meta, self.players, self.contests, self.standings, self.events,
                self.snapshots, self.audit, self.seasons, self.season_ratings, self.priors)


def _build(prefix: str, md: MetaData) -> LadderTables:
    """A ladder's tables named with ``prefix``, in ``md`` (indexes and constraints carry
    the prefix too: their names are global in a database)."""
    n = prefix
    meta_t = Table(
        f"{n}meta", md,
        Column("key", Text, primary_key=True),
        Column("value", Text, nullable=False),
    )
    players_t = Table(
        f"{n}players", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("handle", handle_type(), nullable=False, unique=True),
        Column("mu", Double, nullable=True),
        Column("sigma", Double, nullable=True),
        Column("display_rating", Double, nullable=True),
        Column("contests", Integer, nullable=False),
        Column("last_contest_time", BigInteger, nullable=True),
        Column("max_display_rating", Double, nullable=True),
        Column("last_change", Double, nullable=True),
        # version 2: the case-folded handle, for case-insensitive prefix search; version 3:
        # compared by code point on PostgreSQL too, so that a prefix is an index range
        Column("handle_key", handle_type(), nullable=True),
    )
    Index(f"ix_{n}players_display", players_t.c.display_rating.desc(), players_t.c.handle)
    Index(f"ix_{n}players_handle_key", players_t.c.handle_key)
    # version 5: the activity window (last contest at or after a time) as an index range,
    # with the rating in the index so that counts of active rated players read it alone
    Index(f"ix_{n}players_active", players_t.c.last_contest_time,
          players_t.c.display_rating)
    # version 7: the players by mean and by uncertainty, so that a leaderboard as of a
    # time under time drift reads a few rows (podium.store.asof.ranked_page); version 8:
    # only in a ladder whose ratings drift, so they are built on a copy of the columns
    # they index, which ``players_t.create`` does not create
    drifting = Table(f"{n}players", MetaData(), Column("handle", handle_type()),
                     Column("mu", Double), Column("sigma", Double))
    drift_ix = (Index(f"ix_{n}players_mu", drifting.c.mu.desc(), drifting.c.handle),
                Index(f"ix_{n}players_sigma", drifting.c.sigma))

    contests_t = Table(
        f"{n}contests", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("cid", handle_type(), nullable=False, unique=True),
        Column("seq", Integer, nullable=False),
        Column("name", Text, nullable=False),
        Column("url", Text, nullable=True),
        Column("time_seconds", BigInteger, nullable=False),
        Column("weight", Double, nullable=False),
        Column("perf_ceiling", Double, nullable=True),
        Column("players", Integer, nullable=False),
        Column("new_players", Integer, nullable=False),
        Column("rated", Boolean, nullable=False),
        Column("content_hash", Text, nullable=False),
        Column("ingested_at", BigInteger, nullable=False),
    )
    Index(f"ix_{n}contests_seq", contests_t.c.seq)

    standings_t = Table(
        f"{n}standings", md,
        Column("contest_pk", Integer, ForeignKey(f"{n}contests.pk"), nullable=False),
        Column("pos", Integer, nullable=False),
        Column("player_pk", Integer, ForeignKey(f"{n}players.pk"), nullable=False),
        Column("lo", Integer, nullable=False),
        Column("hi", Integer, nullable=False),
        # version 4: the member's team and weight (NULL in an individual contest)
        Column("team", Text, nullable=True),
        Column("member_weight", Double, nullable=True),
        PrimaryKeyConstraint("contest_pk", "pos", name=f"pk_{n}standings"),
        sqlite_with_rowid=False,
    )
    # version 5: a player's standings rows by key, so that deleting a player (a
    # correction that leaves the player in no contest) does not scan the table for the
    # foreign key
    Index(f"ix_{n}standings_player", standings_t.c.player_pk, standings_t.c.contest_pk)

    events_t = Table(
        f"{n}events", md,
        Column("contest_pk", Integer, ForeignKey(f"{n}contests.pk"), nullable=False),
        Column("player_pk", Integer, ForeignKey(f"{n}players.pk"), nullable=False),
        Column("mu", Double, nullable=False),
        Column("sigma", Double, nullable=False),
        Column("display_rating", Double, nullable=False),
        Column("perf", Double, nullable=False),
        Column("place", Integer, nullable=False),
        Column("prev_display", Double, nullable=False),
        Column("change", Double, nullable=False),
        Column("debut", Boolean, nullable=False),
        # version 4: the player's team (NULL outside team contests)
        Column("team", Text, nullable=True),
        PrimaryKeyConstraint("contest_pk", "player_pk", name=f"pk_{n}events"),
        sqlite_with_rowid=False,
    )
    Index(f"ix_{n}events_player", events_t.c.player_pk, events_t.c.contest_pk)

    snapshots_t = Table(
        f"{n}snapshots", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("head_count", Integer, nullable=False),
        Column("epoch", Integer, nullable=False),
        Column("created_at", BigInteger, nullable=False),
        Column("size", BigInteger, nullable=False),
        Column("data", LargeBinary, nullable=False),
    )

    audit_t = Table(
        f"{n}audit", md,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("time", Double, nullable=False),
        Column("actor", Text, nullable=False),
        Column("action", Text, nullable=False),
        Column("contest_id", handle_type(), nullable=True),
        Column("content_hash", Text, nullable=True),
        Column("revision", BigInteger, nullable=True),
        Column("detail", Text, nullable=True),
    )
    Index(f"ix_{n}audit_contest", audit_t.c.contest_id, audit_t.c.pk)
    Index(f"ix_{n}audit_action", audit_t.c.action, audit_t.c.pk)

    # version 6: seasons, their final leaderboards, and priors taken from other ladders
    seasons_t = Table(
        f"{n}seasons", md,
        Column("number", Integer, primary_key=True, autoincrement=False),
        Column("contest_pk", Integer, ForeignKey(f"{n}contests.pk"), nullable=False,
               unique=True),
        Column("time_seconds", BigInteger, nullable=False),
        Column("reset", Text, nullable=False),
        Column("created_at", BigInteger, nullable=False),
    )
    season_ratings_t = Table(
        f"{n}season_ratings", md,
        Column("season", Integer, nullable=False),
        Column("player_pk", Integer, nullable=False),
        Column("handle", handle_type(), nullable=False),
        Column("mu", Double, nullable=False),
        Column("sigma", Double, nullable=False),
        Column("display_rating", Double, nullable=False),
        Column("contests", Integer, nullable=False),
        Column("last_contest_time", BigInteger, nullable=False),
        Column("max_display_rating", Double, nullable=False),
        Column("last_change", Double, nullable=False),
        PrimaryKeyConstraint("season", "player_pk", name=f"pk_{n}season_ratings"),
        sqlite_with_rowid=False,
    )
    Index(f"ix_{n}season_ratings_display", season_ratings_t.c.season,
          season_ratings_t.c.display_rating.desc(), season_ratings_t.c.handle)
    Index(f"ix_{n}season_ratings_mu", season_ratings_t.c.season,
          season_ratings_t.c.mu.desc(), season_ratings_t.c.handle)
    Index(f"ix_{n}season_ratings_sigma", season_ratings_t.c.season,
          season_ratings_t.c.sigma)
    priors_t = Table(
        f"{n}priors", md,
        Column("player_pk", Integer, ForeignKey(f"{n}players.pk"), primary_key=True,
               autoincrement=False),
        Column("mu", Double, nullable=False),
        Column("sigma", Double, nullable=False),
        Column("source", Text, nullable=False),
        Column("source_time", BigInteger, nullable=False),
    )
    return LadderTables(prefix, md, meta_t, players_t, contests_t, standings_t, events_t,
                        snapshots_t, audit_t, seasons_t, season_ratings_t, priors_t, drift_ix)


metadata = MetaData()
_DEFAULT = _build("", metadata)

meta = _DEFAULT.meta
players = _DEFAULT.players
contests = _DEFAULT.contests
standings = _DEFAULT.standings
events = _DEFAULT.events
snapshots = _DEFAULT.snapshots
audit = _DEFAULT.audit
seasons = _DEFAULT.seasons
season_ratings = _DEFAULT.season_ratings
priors = _DEFAULT.priors

# version 5: access tokens (shared by every ladder); version 6: the ladders a token is
# limited to
tokens = Table(
    "tokens",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("name", handle_type(), nullable=False, unique=True),
    Column("role", Text, nullable=False),
    Column("secret_hash", Text, nullable=False, unique=True),
    Column("created_at", BigInteger, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("revoked_at", BigInteger, nullable=True),
    Column("ladders", Text, nullable=True),
)

# version 6: the registry of ladders
ladders = Table(
    "ladders",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=False),
    Column("name", handle_type(), nullable=False, unique=True),
    Column("prefix", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)

_LADDERS: dict[str, LadderTables] = {"": _DEFAULT}
_LOCK = threading.Lock()


def ladder_tables(prefix: str) -> LadderTables:
    """The tables of the ladder whose tables are named with ``prefix`` (built once per
    process; ``""``: the ladder ``default``, whose tables are this module's)."""
    with _LOCK:
        found = _LADDERS.get(prefix)
        if found is None:
            if not (prefix.startswith("ladder") and prefix.endswith("_")
                    and prefix[6:-1].isdigit()):
                raise ValueError(f"not a ladder's table prefix: {prefix!r}")
            found = _LADDERS[prefix] = _build(prefix, MetaData())
        return found
