"""Database URLs, engines and the two kinds of transaction the store uses.

* A **write** transaction holds the store's write lock from its first statement
  to its end, so that writers are serialised by the database itself, across
  threads and processes: on SQLite ``BEGIN IMMEDIATE`` (with a busy timeout: a
  second writer waits); on PostgreSQL ``pg_advisory_xact_lock`` (released at
  commit or rollback, also when the client dies), under READ COMMITTED so that
  every statement after the lock sees everything committed before it.
* A **read** transaction sees one consistent state: on SQLite a deferred
  ``BEGIN`` (in WAL mode a reader keeps the snapshot of its first read and never
  blocks or is blocked by the writer); on PostgreSQL REPEATABLE READ.

SQLite files are put in WAL mode.  Their ``synchronous`` setting is an engine option
(:data:`SYNCHRONOUS`, a store option of the same name):

* ``"normal"`` (the default): a commit appends the transaction to the write-ahead log
  without waiting for the disk; the log is synced at each checkpoint.  A transaction
  is atomic and durable whatever happens to the *process* (kill -9 included: what was
  committed is in the operating system's cache and reaches the file); after a power
  loss or a crash of the operating system the last committed transactions may be
  lost, never half of one.
* ``"full"``: every commit also waits for the log to reach the disk (an ``fsync``
  per write: several milliseconds each on a virtual machine's disk), so that a
  committed transaction survives a power loss too.

On PostgreSQL the server's own ``synchronous_commit`` decides (on by default: every
commit is flushed to its WAL), and this option is not used.

Checkpoints (copying the log's pages into the database file) run when the log holds
:data:`WAL_AUTOCHECKPOINT` pages, not SQLite's default 1,000: a checkpoint syncs the log
and the database file (two ``fsync`` s, milliseconds each on a shared virtual disk)
and writes each page the log holds, once however often it changed.  An eight-player
match changes about 60 pages, so at SQLite's default every 17th write paid a checkpoint
(most of a write's wall time on the development machine: 2.2 to 2.7 ms per match
against 0.9 to 1.1 ms without any sync); at 16,384 pages (a log of up to 64 MiB) one
write in about 270 does, and the hot pages (the players' indexes) are written once per
checkpoint.  What
a crash can take is unchanged: the log is checksummed, a process killed at any point
loses nothing committed, and under ``"normal"`` a power loss may lose the writes since
the log's last sync, never half of one.

A write transaction's ``BEGIN IMMEDIATE`` is sent with the driver's cursor: the
statement machinery of SQLAlchemy cost more than SQLite's work for it.

A SQLite store's writes keep one connection open between them (:func:`kept_write_txn`):
taking a connection from the pool and giving it back cost about a tenth of a live
match's write (0.09 to 0.13 ms of CPU per ``Store.ingest``, measured in one process,
alternating).  There is one such connection per engine, used by one write at a time (a
second write at the same moment takes one from the pool as before; a pool of one
connection, ``pool_size=1``, keeps it for the readers); a write that fails closes it,
and :func:`dispose_engine` closes it with the engine.  PostgreSQL takes a
connection per write (its isolation level is set per connection, and the pool checks a
connection before handing it out).
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from podium.store.models import DEFAULT_DB, StoreError

__all__ = ["DEFAULT_DB", "normalize_url", "display_url", "sqlite_path", "make_engine",
           "write_txn", "kept_write_txn", "dispose_engine", "read_txn", "db_errors",
           "LOCK_KEY", "REGISTRY_LOCK_KEY",
           "SYNCHRONOUS", "WAL_AUTOCHECKPOINT", "check_synchronous"]

#: Key of the PostgreSQL advisory lock that serialises the writers of the ladder
#: ``default`` ("podium" in ASCII); ladder number ``k`` locks ``LOCK_KEY + k``, and
#: creating a ladder locks :data:`REGISTRY_LOCK_KEY`.
LOCK_KEY = 0x706F6469756D
#: Key of the PostgreSQL advisory lock held while a ladder is created.
REGISTRY_LOCK_KEY = LOCK_KEY - 1

#: Pages in a SQLite store's write-ahead log that start a checkpoint (see the module
#: notes; SQLite's default is 1,000).
WAL_AUTOCHECKPOINT = 16_384

#: The values of the ``synchronous`` option of a SQLite engine (see the module notes),
#: the first being the default.
SYNCHRONOUS = ("normal", "full")


def check_synchronous(value: object) -> str:
    """``value`` as a ``synchronous`` setting (:data:`SYNCHRONOUS`), or :class:`StoreError`
    naming the values allowed."""
    if isinstance(value, str) and value.lower() in SYNCHRONOUS:
        return value.lower()
    raise StoreError(f"synchronous must be one of {', '.join(map(repr, SYNCHRONOUS))} "
                     f"(SQLite: 'normal' survives a crash of the process, 'full' also a "
                     f"power loss), got {value!r}")


def normalize_url(db: str | os.PathLike[str]) -> str:
    """A SQLAlchemy URL for ``db``.

    A bare path (no ``://``) means a SQLite file; ``postgres://`` and
    ``postgresql://`` use the psycopg (3) driver.
    """
    s = os.fspath(db)
    if not s:
        raise StoreError("empty database URL")
    if "://" not in s:
        if s == ":memory:":
            return "sqlite://"
        return "sqlite:///" + s
    scheme, rest = s.split("://", 1)
    if scheme in ("postgres", "postgresql"):
        return "postgresql+psycopg://" + rest
    return s


def _url(db: str) -> URL:
    try:
        return make_url(normalize_url(db))
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {db!r} ({exc})") from None


def display_url(db: str) -> str:
    """``db`` for messages, with any password hidden."""
    try:
        return _url(db).render_as_string(hide_password=True)
    except StoreError:
        return str(db)


def sqlite_path(db: str) -> Path | None:
    """The file of a SQLite URL (None for other back ends and in-memory SQLite)."""
    u = _url(db)
    if u.get_backend_name() != "sqlite" or u.database in (None, "", ":memory:"):
        return None
    return Path(u.database)


def _pool_kwargs(pool_size: int | None, max_overflow: int | None) -> dict[str, int]:
    """``create_engine`` arguments for the connection pool (checked; ``None``: default)."""
    out: dict[str, int] = {}
    for name, value, least in (("pool_size", pool_size, 1), ("max_overflow", max_overflow, 0)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise StoreError(f"{name} must be an integer >= {least}, got {value!r}")
        out[name] = value
    return out


def make_engine(db: str, *, busy_timeout: float = 600.0, pool_size: int | None = None,
                max_overflow: int | None = None, synchronous: str = "normal") -> Engine:
    """An engine for ``db`` set up for the store's transactions.

    Parameters
    ----------
    db:
        URL or bare SQLite path (see :func:`normalize_url`).
    busy_timeout:
        Seconds a SQLite writer waits for another writer before giving up.
    pool_size:
        Connections the pool keeps open (``None``: SQLAlchemy's default, 5).
    max_overflow:
        Connections opened beyond ``pool_size`` under load and closed when returned
        (``None``: SQLAlchemy's default, 10).  At most ``pool_size + max_overflow``
        connections are open at once; a request for one more waits up to 30 s.

    synchronous:
        ``"normal"`` or ``"full"``: what a SQLite file's commit waits for (see the module
        notes); PostgreSQL and in-memory SQLite ignore it.

    Both pool settings apply to PostgreSQL and to SQLite files; an in-memory SQLite
    database always has its one shared connection and ignores them.

    Raises
    ------
    StoreError
        For an unsupported URL or back end, a pool setting below 1 (``pool_size``)
        or 0 (``max_overflow``), or another ``synchronous``.
    """
    u = _url(db)
    sync = check_synchronous(synchronous).upper()
    backend = u.get_backend_name()
    pool = _pool_kwargs(pool_size, max_overflow)
    if backend == "sqlite":
        memory = u.database in (None, "", ":memory:")
        kwargs: dict[str, Any] = {
            "connect_args": {"check_same_thread": False, "timeout": busy_timeout},
        }
        if memory:
            kwargs["poolclass"] = StaticPool
        else:
            kwargs.update(pool)
        engine = create_engine(u, **kwargs)
        ms = int(busy_timeout * 1000)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, record: Any) -> None:
            # pysqlite's own transaction handling is switched off: we emit BEGIN.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            try:
                cur.execute(f"PRAGMA busy_timeout = {ms}")
                cur.execute("PRAGMA foreign_keys = ON")
                if not memory:
                    mode = cur.execute("PRAGMA journal_mode").fetchone()[0]
                    if str(mode).lower() != "wal":
                        cur.execute("PRAGMA journal_mode = WAL")
                    cur.execute(f"PRAGMA synchronous = {sync}")
                    cur.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT}")
            finally:
                cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            if conn.get_execution_options().get("podium_write", False):
                # the driver's cursor: a write's BEGIN is on every write's path; a
                # failure (the busy timeout) is the driver's error, which db_errors
                # reports as SQLAlchemy's
                raw = conn.connection.driver_connection
                assert raw is not None
                raw.execute("BEGIN IMMEDIATE")
            else:
                conn.exec_driver_sql("BEGIN")

        return engine
    if backend == "postgresql":
        if u.drivername == "postgresql":
            u = u.set(drivername="postgresql+psycopg")
        try:
            return create_engine(u, pool_pre_ping=True, **pool)
        except ImportError as exc:
            raise StoreError(
                f"{display_url(db)}: the PostgreSQL driver is missing ({exc}); "
                "pip install 'psycopg[binary]' (or 'podium[service]')"
            ) from None
    raise StoreError(
        f"unsupported database {display_url(db)!r}: use a SQLite file (sqlite:///FILE or a "
        "path) or postgresql://USER@HOST:PORT/DB"
    )


@contextmanager
def write_txn(engine: Engine, lock_key: int = LOCK_KEY) -> Iterator[Connection]:
    """A transaction holding a write lock (default: the ladder ``default``'s; a ladder's
    writes pass its own, so that writes to different ladders run concurrently on
    PostgreSQL); commits on success.  On SQLite every write transaction holds the
    database's one write lock whatever ``lock_key`` is."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="READ COMMITTED")
        else:
            conn.execution_options(podium_write=True)
        with conn.begin():
            if engine.dialect.name == "postgresql":
                raw = conn.connection.driver_connection
                assert raw is not None
                with raw.cursor() as cur:  # the driver's cursor, in the transaction
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key,))
            yield conn


class _KeptConnection:
    """The connection kept open for the write transactions of one SQLite engine."""

    def __init__(self) -> None:
        self.conn: Connection | None = None
        #: Held by the write using :attr:`conn`.
        self.busy = threading.Lock()
        #: Set when the engine is disposed of during a write: that write closes it.
        self.retired = False

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()


_KEPT: weakref.WeakKeyDictionary[Engine, _KeptConnection] = weakref.WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


@contextmanager
def kept_write_txn(engine: Engine, lock_key: int = LOCK_KEY) -> Iterator[Connection]:
    """:func:`write_txn` on the connection kept open for the writes of ``engine`` (a
    SQLite file: see the module notes); on PostgreSQL, or while another write of this
    process uses the kept connection, :func:`write_txn` as it is.  A write that fails
    closes the kept connection (the next one opens another)."""
    size = getattr(engine.pool, "size", None)
    if engine.dialect.name != "sqlite" or (callable(size) and size() < 2):
        # (a pool of one connection keeps it for the readers)
        with write_txn(engine, lock_key) as own:
            yield own
        return
    with _KEPT_LOCK:
        kept = _KEPT.get(engine)
        if kept is None:
            kept = _KEPT[engine] = _KeptConnection()
    if not kept.busy.acquire(blocking=False):
        with write_txn(engine, lock_key) as pooled:
            yield pooled
        return
    try:
        conn = kept.conn
        if conn is None or conn.closed or conn.invalidated:
            conn = kept.conn = engine.connect().execution_options(podium_write=True)
        try:
            with conn.begin():
                yield conn
        except BaseException:
            kept.close()
            raise
    finally:
        if kept.retired:
            kept.close()
        kept.busy.release()


def dispose_engine(engine: Engine) -> None:
    """Close the connection kept for the writes of ``engine`` (if any), then dispose of
    the engine's pool (``engine.dispose()``)."""
    with _KEPT_LOCK:
        kept = _KEPT.pop(engine, None)
    if kept is not None:
        kept.retired = True  # a write in progress (another thread's) closes it at its end
        if kept.busy.acquire(blocking=False):
            try:
                kept.close()
            finally:
                kept.busy.release()
    engine.dispose()


@contextmanager
def read_txn(engine: Engine) -> Iterator[Connection]:
    """A read-only view of one consistent state; rolled back at the end."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        with conn.begin() as txn:
            yield conn
            txn.rollback()


@contextmanager
def db_errors(db: str, what: str) -> Iterator[None]:
    """Turn a database failure (unreachable server, not a database file, disk full, ...)
    into a :class:`StoreError` naming the database and what was being done."""
    try:
        yield
    except SQLAlchemyError as exc:
        orig = getattr(exc, "orig", None)
        lines = str(orig if orig is not None else exc).strip().splitlines()
        detail = lines[0] if lines else type(exc).__name__
        raise StoreError(f"{display_url(db)}: {what}: {detail}") from exc
    except Exception as exc:
        # the driver's own errors, from statements run with its cursor (podium.store.bulk)
        if not type(exc).__module__.startswith(("sqlite3", "psycopg")):
            raise
        lines = str(exc).strip().splitlines()
        raise StoreError(f"{display_url(db)}: {what}: "
                         f"{lines[0] if lines else type(exc).__name__}") from exc
