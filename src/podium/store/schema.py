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

The database is the source of truth for contests, standings, players and
events; snapshots can always be rebuilt by replaying the stored standings.

The schema is versioned (``meta.schema_version``); :mod:`podium.store.migrations`
builds it step by step.  This module describes the newest version, and a test
checks that the migrations produce exactly these tables, columns and indexes.
"""

from __future__ import annotations

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
    "handle_type",
]

#: The schema version this Podium reads and writes.
SCHEMA_VERSION = 5


def handle_type() -> TypeEngine[str]:
    """Text compared by code point on both back ends.

    SQLite compares ``TEXT`` byte-wise (UTF-8, i.e. by code point) by default;
    PostgreSQL uses the database's locale unless told otherwise, which would make
    "handle ascending" differ between the two and from Python.  ``COLLATE "C"``
    makes PostgreSQL agree.
    """
    return Text().with_variant(Text(collation="C"), "postgresql")


metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

players = Table(
    "players",
    metadata,
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
Index("ix_players_display", players.c.display_rating.desc(), players.c.handle)
Index("ix_players_handle_key", players.c.handle_key)
# version 5: the activity window (last contest at or after a time) as an index range,
# with the rating in the index so that counts of active rated players read it alone
Index("ix_players_active", players.c.last_contest_time, players.c.display_rating)

contests = Table(
    "contests",
    metadata,
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
Index("ix_contests_seq", contests.c.seq)

standings = Table(
    "standings",
    metadata,
    Column("contest_pk", Integer, ForeignKey("contests.pk"), nullable=False),
    Column("pos", Integer, nullable=False),
    Column("player_pk", Integer, ForeignKey("players.pk"), nullable=False),
    Column("lo", Integer, nullable=False),
    Column("hi", Integer, nullable=False),
    # version 4: the member's team and weight (NULL in an individual contest)
    Column("team", Text, nullable=True),
    Column("member_weight", Double, nullable=True),
    PrimaryKeyConstraint("contest_pk", "pos", name="pk_standings"),
    sqlite_with_rowid=False,
)
# version 5: a player's standings rows by key, so that deleting a player (a correction
# that leaves the player in no contest) does not scan the table for the foreign key
Index("ix_standings_player", standings.c.player_pk, standings.c.contest_pk)

events = Table(
    "events",
    metadata,
    Column("contest_pk", Integer, ForeignKey("contests.pk"), nullable=False),
    Column("player_pk", Integer, ForeignKey("players.pk"), nullable=False),
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
    PrimaryKeyConstraint("contest_pk", "player_pk", name="pk_events"),
    sqlite_with_rowid=False,
)
Index("ix_events_player", events.c.player_pk, events.c.contest_pk)

snapshots = Table(
    "snapshots",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=False),
    Column("head_count", Integer, nullable=False),
    Column("epoch", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

# version 5: access tokens and the audit log
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
)

audit = Table(
    "audit",
    metadata,
    Column("pk", Integer, primary_key=True, autoincrement=True),
    Column("time", Double, nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("contest_id", handle_type(), nullable=True),
    Column("content_hash", Text, nullable=True),
    Column("revision", BigInteger, nullable=True),
    Column("detail", Text, nullable=True),
)
Index("ix_audit_contest", audit.c.contest_id, audit.c.pk)
Index("ix_audit_action", audit.c.action, audit.c.pk)
