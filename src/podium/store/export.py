"""Exports of a whole store, streamed: every rated player's rating, or every rating event.

:meth:`Exporter.export` yields the bytes of a CSV or Parquet file piece by piece,
never holding more than one chunk of rows (``chunk_rows``, default
:data:`EXPORT_CHUNK_ROWS`) in memory.  All chunks are read inside **one read
transaction** (:func:`podium.store.engine.read_txn`: a deferred ``BEGIN`` in WAL mode on
SQLite, REPEATABLE READ on PostgreSQL), so the file is one consistent state of the
store even while contests are being ingested; rows are read with keyset paging (each
chunk continues after the last key of the one before, through an index), so a deep
chunk costs what the first one does.

``ratings`` (:data:`RATING_COLUMNS`)
    Every rated player, best first (display rating descending, ties by handle), as
    :meth:`Store.leaderboard <podium.store.queries.Queries.leaderboard>` orders
    them: ``rank``, ``handle``, ``display_rating``, ``mu``, ``sigma``, ``contests``,
    ``last_contest_time``, ``max_display_rating``, ``last_change``.
``history`` (:data:`HISTORY_COLUMNS`)
    Every rating event, contest by contest in chronological order (within a contest
    by player key): ``contest_index`` (0-based, chronological), ``contest_id``,
    ``contest_name``, ``time_seconds``, ``handle``, ``place`` (0-based), ``perf``,
    ``mu``, ``sigma``, ``display_rating``, ``prev_display``, ``change``, ``debut``,
    ``team`` (empty outside team contests).

CSV: a header row, then one row per record; floats are written with :func:`repr`
(the shortest text that reads back as the same double: exact), an empty field for a
missing value; with ``csv_safe`` a text cell that a spreadsheet would run as a formula
is written with a ``'`` in front (:mod:`podium.io.spreadsheet`).  Parquet: one row
group per chunk, written by pyarrow (a dependency of Podium) into a buffer that is
emptied after each row group.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import Connection, and_, or_, select

import podium.store.schema as S
from podium.io.spreadsheet import neutralize
from podium.store.common import StoreContext
from podium.store.engine import read_txn
from podium.store.models import StoreError

__all__ = ["EXPORT_CHUNK_ROWS", "EXPORT_FORMATS", "EXPORT_KINDS", "HISTORY_COLUMNS",
           "RATING_COLUMNS", "Exporter", "export_media_type"]

#: Rows read (and written as one Parquet row group) at a time.
EXPORT_CHUNK_ROWS = 50_000
#: What can be exported.
EXPORT_KINDS = ("ratings", "history")
#: The file formats.
EXPORT_FORMATS = ("csv", "parquet")

RATING_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("rank", pa.int64()), ("handle", pa.string()), ("display_rating", pa.float64()),
    ("mu", pa.float64()), ("sigma", pa.float64()), ("contests", pa.int64()),
    ("last_contest_time", pa.int64()), ("max_display_rating", pa.float64()),
    ("last_change", pa.float64()),
)
HISTORY_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("contest_index", pa.int64()), ("contest_id", pa.string()),
    ("contest_name", pa.string()), ("time_seconds", pa.int64()), ("handle", pa.string()),
    ("place", pa.int64()), ("perf", pa.float64()), ("mu", pa.float64()),
    ("sigma", pa.float64()), ("display_rating", pa.float64()),
    ("prev_display", pa.float64()), ("change", pa.float64()), ("debut", pa.bool_()),
    ("team", pa.string()),
)


def export_media_type(fmt: str) -> str:
    """The HTTP media type of an export in ``fmt``."""
    return "text/csv; charset=utf-8" if fmt == "csv" else "application/vnd.apache.parquet"


def _ratings(conn: Connection, chunk: int) -> Iterator[list[tuple[Any, ...]]]:
    p = S.players
    cols = (p.c.handle, p.c.display_rating, p.c.mu, p.c.sigma, p.c.contests,
            p.c.last_contest_time, p.c.max_display_rating, p.c.last_change)
    rank = 0
    last: tuple[float, str] | None = None
    while True:
        q = select(*cols).where(p.c.display_rating.is_not(None))
        if last is not None:  # keyset: after (rating, handle) in rating-index order
            q = q.where(or_(p.c.display_rating < last[0],
                            and_(p.c.display_rating == last[0], p.c.handle > last[1])))
        rows = conn.execute(q.order_by(p.c.display_rating.desc(), p.c.handle.asc())
                            .limit(chunk)).all()
        if not rows:
            return
        out = []
        for r in rows:
            rank += 1
            out.append((rank, r.handle, float(r.display_rating), float(r.mu), float(r.sigma),
                        int(r.contests), int(r.last_contest_time),
                        float(r.max_display_rating), float(r.last_change)))
        yield out
        last = (float(rows[-1].display_rating), rows[-1].handle)
        if len(rows) < chunk:
            return


def _history(conn: Connection, chunk: int) -> Iterator[list[tuple[Any, ...]]]:
    c, e, p = S.contests, S.events, S.players
    contests = conn.execute(select(c.c.pk, c.c.seq, c.c.cid, c.c.name, c.c.time_seconds)
                            .where(c.c.rated.is_(True)).order_by(c.c.seq)).all()
    cols = (e.c.player_pk, p.c.handle, e.c.place, e.c.perf, e.c.mu, e.c.sigma,
            e.c.display_rating, e.c.prev_display, e.c.change, e.c.debut, e.c.team)
    buf: list[tuple[Any, ...]] = []
    for con in contests:
        after = -1
        while True:  # keyset over the events' primary key (contest, player)
            rows = conn.execute(
                select(*cols).join(p, p.c.pk == e.c.player_pk)
                .where(e.c.contest_pk == con.pk, e.c.player_pk > after)
                .order_by(e.c.player_pk).limit(chunk - len(buf))).all()
            for r in rows:
                buf.append((int(con.seq), con.cid, con.name, int(con.time_seconds), r.handle,
                            int(r.place), float(r.perf), float(r.mu), float(r.sigma),
                            float(r.display_rating), float(r.prev_display), float(r.change),
                            bool(r.debut), r.team))
            if len(buf) >= chunk:
                yield buf
                buf = []
            if not rows:
                break
            after = int(rows[-1].player_pk)
    if buf:
        yield buf


_READERS: dict[str, Callable[[Connection, int], Iterator[list[tuple[Any, ...]]]]] = {
    "ratings": _ratings, "history": _history}
_COLUMNS = {"ratings": RATING_COLUMNS, "history": HISTORY_COLUMNS}


def _csv_text(rows: list[tuple[Any, ...]], safe: bool = False) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if safe:  # text cells only: numbers (a negative change) are never touched
        w.writerows(tuple("" if v is None else repr(v) if isinstance(v, float)
                          else neutralize(v) if isinstance(v, str) else v for v in r)
                    for r in rows)
    else:
        w.writerows(tuple("" if v is None else repr(v) if isinstance(v, float) else v
                          for v in r) for r in rows)
    return out.getvalue().encode("utf-8")


class _Sink(io.RawIOBase):
    """A write-only file that keeps what was written until :meth:`take`."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []
        self._pos = 0

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._parts.append(data)
        self._pos += len(data)
        return len(data)

    def tell(self) -> int:
        return self._pos

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts = []
        return out


class Exporter:
    """Streamed exports of a store context (a service of :class:`~podium.store.Store`;
    see the module notes)."""

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx

    def export(self, what: str, fmt: str = "csv", *,
               chunk_rows: int = EXPORT_CHUNK_ROWS, csv_safe: bool = False) -> Iterator[bytes]:
        """The bytes of the export ``what`` (``ratings`` or ``history``) in ``fmt``
        (``csv`` or ``parquet``), piece by piece, from one consistent state.

        With ``csv_safe``, a CSV text cell that a spreadsheet would run as a formula
        gets a ``'`` in front (:func:`podium.io.spreadsheet.neutralize`; the service and
        ``podium export`` ask for it by default); by default every cell is the value
        as stored (Parquet is never changed).

        The read transaction stays open until the iterator is exhausted or closed.

        Raises
        ------
        StoreError
            For an unknown export or format, or ``chunk_rows`` below 1 (at once, before
            anything is read).
        """
        if what not in EXPORT_KINDS:
            raise StoreError(f"unknown export {what!r}: choose {' or '.join(EXPORT_KINDS)}")
        if fmt not in EXPORT_FORMATS:
            raise StoreError(f"unknown export format {fmt!r}: choose "
                             f"{' or '.join(EXPORT_FORMATS)}")
        if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
            raise StoreError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
        return self._export(what, fmt, chunk_rows, bool(csv_safe))

    def _export(self, what: str, fmt: str, chunk_rows: int, safe: bool) -> Iterator[bytes]:
        columns = _COLUMNS[what]
        names = [n for n, _t in columns]
        schema = pa.schema(list(columns))
        with read_txn(self.ctx.engine) as conn:
            chunks = _READERS[what](conn, chunk_rows)
            if fmt == "csv":
                yield _csv_text([tuple(names)])
                for rows in chunks:
                    yield _csv_text(rows, safe)
                return
            sink = _Sink()
            with pq.ParquetWriter(sink, schema) as writer:
                for rows in chunks:
                    cols = list(zip(*rows, strict=True))
                    writer.write_table(pa.Table.from_arrays(
                        [pa.array(col, type=t) for col, (_n, t) in zip(cols, columns,
                                                                      strict=True)],
                        schema=schema))
                    piece = sink.take()
                    if piece:
                        yield piece
            yield sink.take()
