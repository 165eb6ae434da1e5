"""Fast bulk writes of many rows inside the caller's transaction.

A contest of 30,000 players writes 60,000 rows and updates up to 30,000 more;
building SQLAlchemy parameter dictionaries for them costs more than the database
work.  These helpers hand plain tuples to the driver instead:

* SQLite: ``cursor.executemany`` of one prepared statement;
* PostgreSQL: binary ``COPY ... FROM STDIN`` for inserts; for updates of a few rows
  (:data:`PG_SMALL_UPDATE`) one ``executemany`` of ``UPDATE`` s (psycopg pipelines
  them), for more a binary ``COPY`` into a temporary table and one ``UPDATE ... FROM``
  it.

Both run on the connection of the current transaction, so they commit or roll
back with everything else.  Table and column names come from
:mod:`podium.store.schema`, never from user input.

:func:`fetch` and :func:`execute` run one small statement of a write transaction the
same way, with the driver's cursor (its SQL written with ``?`` marks): the statements
every write runs (the metadata, the latest contest, a duplicate's lookup, the revision)
cost a few microseconds each instead of SQLAlchemy's statement machinery's hundred.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table

__all__ = ["insert_rows", "update_rows", "fetch", "execute", "PG_SMALL_UPDATE"]


_CHECKED: dict[tuple[str, tuple[str, ...]], str] = {}
# SQLite's INSERT of a table and column list, and its UPDATE of a table, key and
# columns, written once (every write runs several)
_INSERTS: dict[tuple[str, tuple[str, ...]], str] = {}
_UPDATES: dict[tuple[str, tuple[str, ...], int], str] = {}


def _names(table: Table, columns: Sequence[str]) -> str:
    """``"a", "b", ...`` for ``columns`` of ``table`` (checked once per table and list)."""
    key = (table.name, tuple(columns))
    names = _CHECKED.get(key)
    if names is None:
        for c in columns:
            if c not in table.c:
                raise KeyError(f"table {table.name} has no column {c!r}")
        names = _CHECKED[key] = ", ".join(f'"{c}"' for c in columns)
    return names


def _sqlite_insert(table: Table, columns: Sequence[str]) -> str:
    """The SQLite ``INSERT`` of one row of ``columns`` into ``table`` (``?`` marks)."""
    key = (table.name, tuple(columns))
    sql = _INSERTS.get(key)
    if sql is None:
        marks = ", ".join("?" for _ in columns)
        sql = _INSERTS[key] = (f'INSERT INTO "{table.name}" ({_names(table, columns)}) '
                               f"VALUES ({marks})")
    return sql


_PG_TYPES = {"INTEGER": "int4", "BIGINT": "int8", "DOUBLE": "float8", "FLOAT": "float8",
             "DOUBLE PRECISION": "float8", "BOOLEAN": "bool", "TEXT": "text"}


_PG_TYPES_OF: dict[tuple[str, tuple[str, ...]], list[str]] = {}

#: Most rows an update on PostgreSQL sends as one ``executemany`` of ``UPDATE``s (a
#: pipeline: one round trip); more go through a temporary table (``COPY`` and one
#: ``UPDATE ... FROM``), whose four statements cost more than a few rows' updates.
PG_SMALL_UPDATE = 64


def _pg_types(conn: Connection, table: Table, columns: Sequence[str]) -> list[str]:
    """The binary ``COPY`` types of ``columns`` of ``table`` (found once per list)."""
    key = (table.name, tuple(columns))
    out = _PG_TYPES_OF.get(key)
    if out is None:
        out = []
        for c in columns:
            name = str(table.c[c].type.compile(conn.dialect)).upper().split(" COLLATE")[0]
            out.append(_PG_TYPES[name])
        _PG_TYPES_OF[key] = out
    return out


def _pg_copy(conn: Connection, table_name: str, cols: str, types: list[str],
             rows: Sequence[tuple[Any, ...]]) -> None:
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor() as cur, cur.copy(
        f'COPY "{table_name}" ({cols}) FROM STDIN (FORMAT BINARY)'
    ) as cp:
        cp.set_types(types)
        for r in rows:
            cp.write_row(r)


@functools.lru_cache(maxsize=512)
def _pg_sql(sql: str) -> str:
    return sql.replace("?", "%s")


def fetch(conn: Connection, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of the query ``sql`` (``?`` marks for ``params``), run with the driver's
    cursor in the transaction of ``conn``."""
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cur:
            cur.execute(_pg_sql(sql), tuple(params))
            return list(cur.fetchall())
    return raw.execute(sql, tuple(params)).fetchall()  # type: ignore[no-any-return]


def execute(conn: Connection, sql: str, params: Sequence[Any] = ()) -> int:
    """Run the statement ``sql`` (``?`` marks for ``params``) with the driver's cursor in
    the transaction of ``conn``; the number of rows it changed."""
    raw = conn.connection.driver_connection
    assert raw is not None
    if conn.dialect.name == "postgresql":
        with raw.cursor() as cur:
            cur.execute(_pg_sql(sql), tuple(params))
            return int(cur.rowcount)
    return int(raw.execute(sql, tuple(params)).rowcount)


def insert_rows(conn: Connection, table: Table, columns: Sequence[str],
                rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert ``rows`` (tuples in the order of ``columns``) into ``table``."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        _pg_copy(conn, table.name, _names(table, columns), _pg_types(conn, table, columns),
                 rows)
        return
    raw = conn.connection.driver_connection
    assert raw is not None
    raw.executemany(_sqlite_insert(table, columns), rows)


def update_rows(conn: Connection, table: Table, key: str | Sequence[str], columns: Sequence[str],
                rows: Sequence[tuple[Any, ...]]) -> int:
    """Set ``columns`` of the rows of ``table`` whose ``key`` is the first item of each tuple.

    Each tuple is ``(key, value_1, ..., value_n)`` in the order of ``columns``; with a
    composite ``key`` (a sequence of column names) it starts with every key column.  On
    PostgreSQL the rows are copied into a temporary table (dropped at commit) and
    applied with one ``UPDATE ... FROM``.  Returns the number of rows updated.
    """
    if not rows:
        return 0
    keys = [key] if isinstance(key, str) else list(key)
    nk = len(keys)
    allc = [*keys, *columns]
    cols = _names(table, allc)
    if conn.dialect.name == "postgresql":
        raw = conn.connection.driver_connection
        assert raw is not None
        if len(rows) <= PG_SMALL_UPDATE:
            sets = ", ".join(f'"{c}" = %s' for c in columns)
            where = " AND ".join(f'"{k}" = %s' for k in keys)
            with raw.cursor() as cur:
                cur.executemany(f'UPDATE "{table.name}" SET {sets} WHERE {where}',
                                [(*r[nk:], *r[:nk]) for r in rows], returning=False)
                return int(cur.rowcount)  # (psycopg: the sum over the statements)
        # one temporary table per table and column list (its columns are fixed at creation)
        tmp = f"_podium_update_{table.name}_{zlib.crc32(cols.encode()):08x}"
        with raw.cursor() as cur:
            cur.execute(f'CREATE TEMP TABLE IF NOT EXISTS "{tmp}" ON COMMIT DROP AS '
                        f'SELECT {cols} FROM "{table.name}" WITH NO DATA')
            cur.execute(f'TRUNCATE "{tmp}"')
        _pg_copy(conn, tmp, cols, _pg_types(conn, table, allc), rows)
        sets = ", ".join(f'"{c}" = v."{c}"' for c in columns)
        on = " AND ".join(f't."{k}" = v."{k}"' for k in keys)
        with raw.cursor() as cur:
            cur.execute(f'UPDATE "{table.name}" AS t SET {sets} FROM "{tmp}" AS v WHERE {on}')
            return int(cur.rowcount)
    ukey = (table.name, tuple(allc), nk)
    sql = _UPDATES.get(ukey)
    if sql is None:
        # numbered parameters (?1 is the tuple's first item): the tuples are bound as they are
        sets = ", ".join(f'"{c}" = ?{nk + i + 1}' for i, c in enumerate(columns))
        where = " AND ".join(f'"{k}" = ?{i + 1}' for i, k in enumerate(keys))
        sql = _UPDATES[ukey] = f'UPDATE "{table.name}" SET {sets} WHERE {where}'
    raw = conn.connection.driver_connection
    assert raw is not None
    return int(raw.executemany(sql, rows).rowcount)
