"""Schema migrations of a Podium store: a small hand-written, ordered list.

Each step takes a database from version ``v - 1`` to ``v`` inside the caller's
write transaction (both SQLite and PostgreSQL have transactional DDL, so a
failed or killed migration leaves the previous version intact) and records
``meta.schema_version = v``.  Version 0 is an empty database.

* **1** -- the initial schema: ``meta``, ``players``, ``contests``,
  ``standings``, ``events``, ``snapshots``.
* **2** -- ``players.handle_key``: the case-folded handle (``str.casefold``),
  filled in for existing rows, with an index, for case-insensitive prefix
  search of handles.
* **3** -- ``players.handle_key`` compared by code point on PostgreSQL
  (``COLLATE "C"``, like ``handle``; its index is rebuilt), so that the handles
  starting with a prefix are one range of the index whatever the database's
  locale.  Nothing changes on SQLite, which compares text by code point.
* **4** -- team contests: ``standings.team`` and ``standings.member_weight`` (a
  member's team name and weight) and ``events.team`` (the player's team), all
  nullable and ``NULL`` in the existing rows: every stored contest is an
  individual one.  Adding a nullable column rewrites no row on either database.
* **5** -- access and audit: the tables ``tokens`` (named bearer tokens with a role,
  stored as the SHA-256 of the secret) and ``audit`` (one row per write), and the
  index ``ix_players_active`` on ``players (last_contest_time, display_rating)`` for
  the leaderboard's activity window; and ``ix_standings_player`` on ``standings
  (player_pk, contest_pk)``, so that a correction deleting the players of a removed
  contest does not scan the standings once per player (the foreign key).  Nothing
  existing is rewritten; building the indexes reads the players and the standings
  once.
* **6** -- ladders: the registry ``ladders`` with the row of the ladder ``default`` (the
  store's tables, unchanged: every rating, event and snapshot stays as it is), and the
  ladder's new tables ``seasons``, ``season_ratings`` and ``priors``; ``tokens.ladders``
  (nullable, ``NULL``: a token of every ladder).  Nothing existing is rewritten.  The
  tables of the other ladders are created with the ladder
  (:func:`podium.store.ladders.create_ladder`) at the version of the Podium that creates
  it: a later step that changes a ladder's tables must change them for every ladder of
  the registry.
* **7** -- ratings as of a time: in every ladder of the registry, the indexes
  ``ix_players_mu`` on ``players (mu DESC, handle)``, ``ix_players_sigma`` on ``players
  (sigma)``, ``ix_season_ratings_mu`` on ``season_ratings (season, mu DESC, handle)``
  and ``ix_season_ratings_sigma`` on ``season_ratings (season, sigma)`` (each named
  with the ladder's prefix), which the leaderboard as of a time under time drift
  walks (:func:`podium.store.asof.ranked_page`).  No row is rewritten; building the
  indexes reads each ladder's players and season ratings once.
* **8** -- ``ix_players_mu`` and ``ix_players_sigma`` only where ratings drift: they
  are dropped from every ladder whose rating system (its ``meta`` ``system`` and
  ``params``) has no time drift (:attr:`podium.systems.RatingSystem.has_time_drift`),
  which never reads them, and from a ladder that records no system yet (a store being
  created: :mod:`podium.store.lifecycle` creates them with a drifting system).  A ladder
  whose system this Podium cannot build keeps them.  Every write to such a ladder moved
  each of its players in both indexes; no row is rewritten.

The steps describe their tables explicitly (frozen as of that version) instead
of using :mod:`podium.store.schema`, which always describes the newest version.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    bindparam,
    inspect,
    select,
    text,
)

from podium.errors import ConfigError
from podium.store.schema import SCHEMA_VERSION, handle_type
from podium.systems import get_system, saved_params

__all__ = ["MIGRATIONS", "upgrade", "read_version", "set_meta"]


def set_meta(conn: Connection, key: str, value: str, table: Table | None = None) -> None:
    """Insert or replace one row of ``table`` (a ladder's ``meta``; default the store's
    ``meta``, which is also the ladder ``default``'s), portably: update, else insert."""
    from podium.store import schema as s

    t = s.meta if table is None else table
    res = conn.execute(t.update().where(t.c.key == key).values(value=value))
    if res.rowcount == 0:
        conn.execute(t.insert().values(key=key, value=value))


def read_version(conn: Connection) -> int:
    """The schema version of the database (0 when it has no Podium tables).

    Raises
    ------
    ValueError
        When ``meta`` exists but its ``schema_version`` is missing or not a number.
    """
    if not inspect(conn).has_table("meta"):
        return 0
    from podium.store import schema as s

    row = conn.execute(
        select(s.meta.c.value).where(s.meta.c.key == "schema_version")
    ).first()
    if row is None:
        raise ValueError("table 'meta' has no schema_version row")
    try:
        return int(row[0])
    except ValueError:
        raise ValueError(f"meta.schema_version is not a number: {row[0]!r}") from None


def _v1(conn: Connection) -> None:
    md = MetaData()
    Table(
        "meta", md,
        Column("key", Text, primary_key=True),
        Column("value", Text, nullable=False),
    )
    players = Table(
        "players", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("handle", handle_type(), nullable=False, unique=True),
        Column("mu", Double, nullable=True),
        Column("sigma", Double, nullable=True),
        Column("display_rating", Double, nullable=True),
        Column("contests", Integer, nullable=False),
        Column("last_contest_time", BigInteger, nullable=True),
        Column("max_display_rating", Double, nullable=True),
        Column("last_change", Double, nullable=True),
    )
    Index("ix_players_display", players.c.display_rating.desc(), players.c.handle)
    contests = Table(
        "contests", md,
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
    Table(
        "standings", md,
        Column("contest_pk", Integer, ForeignKey("contests.pk"), nullable=False),
        Column("pos", Integer, nullable=False),
        Column("player_pk", Integer, ForeignKey("players.pk"), nullable=False),
        Column("lo", Integer, nullable=False),
        Column("hi", Integer, nullable=False),
        PrimaryKeyConstraint("contest_pk", "pos", name="pk_standings"),
        sqlite_with_rowid=False,
    )
    events = Table(
        "events", md,
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
        PrimaryKeyConstraint("contest_pk", "player_pk", name="pk_events"),
        sqlite_with_rowid=False,
    )
    Index("ix_events_player", events.c.player_pk, events.c.contest_pk)
    Table(
        "snapshots", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("head_count", Integer, nullable=False),
        Column("epoch", Integer, nullable=False),
        Column("created_at", BigInteger, nullable=False),
        Column("size", BigInteger, nullable=False),
        Column("data", LargeBinary, nullable=False),
    )
    md.create_all(conn)


def _v2(conn: Connection) -> None:
    conn.execute(text("ALTER TABLE players ADD COLUMN handle_key TEXT"))
    md = MetaData()
    players = Table(
        "players", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("handle", Text),
        Column("handle_key", Text),
    )
    rows = conn.execute(select(players.c.pk, players.c.handle)).all()
    if rows:
        conn.execute(
            players.update()
            .where(players.c.pk == bindparam("b_pk"))
            .values(handle_key=bindparam("b_key")),
            [{"b_pk": pk, "b_key": h.casefold()} for pk, h in rows],
        )
    Index("ix_players_handle_key", players.c.handle_key).create(conn)


def _v3(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        # rewrites ix_players_handle_key in the new order
        conn.execute(text('ALTER TABLE players ALTER COLUMN handle_key TYPE TEXT COLLATE "C"'))


def _v4(conn: Connection) -> None:
    double = Double().compile(dialect=conn.dialect)
    conn.execute(text("ALTER TABLE standings ADD COLUMN team TEXT"))
    conn.execute(text(f"ALTER TABLE standings ADD COLUMN member_weight {double}"))
    conn.execute(text("ALTER TABLE events ADD COLUMN team TEXT"))


def _v5(conn: Connection) -> None:
    md = MetaData()
    players = Table(
        "players", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("display_rating", Double, nullable=True),
        Column("last_contest_time", BigInteger, nullable=True),
    )
    tokens = Table(
        "tokens", md,
        Column("pk", Integer, primary_key=True, autoincrement=True),
        Column("name", handle_type(), nullable=False, unique=True),
        Column("role", Text, nullable=False),
        Column("secret_hash", Text, nullable=False, unique=True),
        Column("created_at", BigInteger, nullable=False),
        Column("created_by", Text, nullable=False),
        Column("revoked_at", BigInteger, nullable=True),
    )
    audit = Table(
        "audit", md,
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
    tokens.create(conn)
    audit.create(conn)
    Index("ix_players_active", players.c.last_contest_time,
          players.c.display_rating).create(conn)
    standings = Table("standings", md, Column("player_pk", Integer),
                      Column("contest_pk", Integer))
    Index("ix_standings_player", standings.c.player_pk, standings.c.contest_pk).create(
        conn, checkfirst=True)


def _v6(conn: Connection) -> None:
    md = MetaData()
    Table(
        "ladders", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("name", handle_type(), nullable=False, unique=True),
        Column("prefix", Text, nullable=False),
        Column("created_at", BigInteger, nullable=False),
    )
    Table("contests", md, Column("pk", Integer, primary_key=True))
    Table("players", md, Column("pk", Integer, primary_key=True))
    Table(
        "seasons", md,
        Column("number", Integer, primary_key=True, autoincrement=False),
        Column("contest_pk", Integer, ForeignKey("contests.pk"), nullable=False,
               unique=True),
        Column("time_seconds", BigInteger, nullable=False),
        Column("reset", Text, nullable=False),
        Column("created_at", BigInteger, nullable=False),
    )
    ratings = Table(
        "season_ratings", md,
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
        PrimaryKeyConstraint("season", "player_pk", name="pk_season_ratings"),
        sqlite_with_rowid=False,
    )
    Index("ix_season_ratings_display", ratings.c.season, ratings.c.display_rating.desc(),
          ratings.c.handle)
    Table(
        "priors", md,
        Column("player_pk", Integer, ForeignKey("players.pk"), primary_key=True,
               autoincrement=False),
        Column("mu", Double, nullable=False),
        Column("sigma", Double, nullable=False),
        Column("source", Text, nullable=False),
        Column("source_time", BigInteger, nullable=False),
    )
    for name in ("ladders", "seasons", "season_ratings", "priors"):
        md.tables[name].create(conn)
    conn.execute(text("ALTER TABLE tokens ADD COLUMN ladders TEXT"))
    conn.execute(md.tables["ladders"].insert().values(
        pk=0, name="default", prefix="", created_at=int(time.time())))


def _ladder_prefixes(conn: Connection, md: MetaData) -> list[str]:
    """The table-name prefix of every ladder (version 6 on), in ladder order."""
    ladders = Table("ladders", md, Column("pk", Integer, primary_key=True),
                    Column("prefix", Text))
    rows = conn.execute(select(ladders.c.prefix).order_by(ladders.c.pk)).all()
    return [str(prefix) for (prefix,) in rows]


def _v7(conn: Connection) -> None:
    md = MetaData()
    for n in _ladder_prefixes(conn, md):
        players = Table(f"{n}players", md, Column("pk", Integer, primary_key=True),
                        Column("handle", Text), Column("mu", Double),
                        Column("sigma", Double))
        ratings = Table(f"{n}season_ratings", md, Column("season", Integer),
                        Column("handle", Text), Column("mu", Double),
                        Column("sigma", Double))
        Index(f"ix_{n}players_mu", players.c.mu.desc(), players.c.handle).create(conn)
        Index(f"ix_{n}players_sigma", players.c.sigma).create(conn)
        Index(f"ix_{n}season_ratings_mu", ratings.c.season, ratings.c.mu.desc(),
              ratings.c.handle).create(conn)
        Index(f"ix_{n}season_ratings_sigma", ratings.c.season,
              ratings.c.sigma).create(conn)


def _drifts(conn: Connection, meta: Table) -> bool | None:
    """Whether the rating system recorded in the ladder ``meta`` table has time drift
    (``False`` for none recorded; ``None``: this Podium cannot build it)."""
    rows = dict(conn.execute(select(meta.c.key, meta.c.value)
                             .where(meta.c.key.in_(["system", "params"]))).all())
    if "system" not in rows:
        return False
    try:
        name = str(rows["system"])
        params = saved_params(name, json.loads(rows.get("params") or "{}"))
        return bool(get_system(name, **params).has_time_drift)
    except (ConfigError, ValueError, KeyError, TypeError):
        return None


def _v8(conn: Connection) -> None:
    md = MetaData()
    for n in _ladder_prefixes(conn, md):
        meta = Table(f"{n}meta", md, Column("key", Text, primary_key=True),
                     Column("value", Text))
        if _drifts(conn, meta) is False:
            for name in (f"ix_{n}players_mu", f"ix_{n}players_sigma"):
                conn.execute(text(f'DROP INDEX IF EXISTS "{name}"'))


#: ``(version, step)`` in order; ``step`` takes the database from ``version - 1``.
MIGRATIONS: tuple[tuple[int, Callable[[Connection], None]], ...] = (
    (1, _v1),
    (2, _v2),
    (3, _v3),
    (4, _v4),
    (5, _v5),
    (6, _v6),
    (7, _v7),
    (8, _v8),
)

assert MIGRATIONS[-1][0] == SCHEMA_VERSION


def upgrade(conn: Connection, *, target: int = SCHEMA_VERSION) -> list[int]:
    """Apply the missing steps up to ``target`` in the caller's transaction.

    Returns
    -------
    list of int
        The versions applied (empty when the database was already there).

    Raises
    ------
    ValueError
        When the database is newer than ``target`` or its version is unreadable.
    """
    current = read_version(conn)
    if current > target:
        raise ValueError(
            f"the database has schema version {current}, newer than {target}"
        )
    done = []
    for version, step in MIGRATIONS:
        if current < version <= target:
            step(conn)
            set_meta(conn, "schema_version", str(version))
            done.append(version)
    return done
