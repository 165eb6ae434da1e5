"""The persistent store of the live rating service (SQLite or PostgreSQL).

Design
------
The database is the source of truth for contests, standings, players and rating
events (see :mod:`podium.store.schema`).  The rating system's complete state
(per-player arrays beyond ``mu, sigma``: Elo-MMR's performance history,
TopCoder's volatility, ...) lives in a :class:`~podium.rater.Rater`; the store
keeps *snapshots* of it (:mod:`podium.store.snapshot`) as derived data, each
tagged with the number of contests it covers.

Ingesting a contest is one write transaction (see :mod:`podium.store.engine`):

1. take the write lock and read ``meta`` (store id, epoch);
2. return "duplicate" when the contest id is stored with the same content
   (SHA-256 of the contest), refuse it when the content differs, refuse a
   contest older than the latest one unless ``recompute_from``;
3. get a Rater at the insertion point: the in-process cache when it is still
   valid (same store, same epoch, not ahead), else the newest snapshot at or
   before the point; then replay the stored standings up to the point
   (replaying is deterministic: a split run is bit-identical to one run);
4. rate the contest (and, for ``recompute_from``, every later contest again);
5. insert the contest, its standings and events, insert new players and update
   the others; bump ``meta.revision`` (and ``meta.epoch`` after a recompute);
6. write a new snapshot when ``snapshot_every`` contests or ``snapshot_events``
   player-rounds have been applied since the newest one (keeping the newest
   ``keep_snapshots``), then commit.

Any error rolls the transaction back and drops the in-process cache, so the
database and the next ingestion are as if the contest had never been seen.
A process killed at any point leaves the previous committed state.

Display rating and change: ``system.display_rating(mu, sigma)``; ``change`` is
the new minus the previous display rating, where for a debut the "previous" one
is the display rating of the newcomer prior (the Rater's ``last_change``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import pandas as pd
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    and_,
    delete,
    func,
    select,
    update,
)

from podium.core.contest import Contest
from podium.errors import CheckpointError, ConfigError
from podium.rater import Rater, RoundReport
from podium.store import schema as S
from podium.store.bulk import insert_rows, update_rows
from podium.store.engine import (
    db_errors,
    display_url,
    make_engine,
    read_txn,
    sqlite_path,
    write_txn,
)
from podium.store.migrations import read_version, set_meta, upgrade
from podium.store.models import (
    ContestChange,
    ContestSummary,
    ContestView,
    HistoryRow,
    IngestResult,
    LeaderboardRow,
    PlayerView,
    StoreError,
)
from podium.store.snapshot import LastRoundLog, new_rater, rater_from_bytes, rater_to_bytes
from podium.systems import RatingSystem, get_system

__all__ = ["Store", "default_contest_id", "content_hash", "prefix_upper_bound"]

log = logging.getLogger("podium.store")

_INT64 = 2**63
#: Rows per ``IN (...)`` list (SQLite's historical limit on bound parameters is 999).
_IN_CHUNK = 500
#: Prefix search: with at most this many handles in the prefix's range of ``handle_key``
#: they are read through its index and sorted by rating; with more, the players are
#: walked in rating order until ``limit`` of them match (see :meth:`Store.search_handles`).
_SEARCH_RANGE_ROWS = 2000


# ====================================================================== helpers
def default_contest_id(contest: Contest) -> str:
    """The id a contest is stored under by default: its url, else its name."""
    cid = contest.url if contest.url else contest.name
    if not cid:
        raise StoreError(
            f"contest {contest.label!r} at time {contest.time_seconds} has neither url nor "
            "name to identify it; give it a name or pass contest_id"
        )
    return cid


def content_hash(contest: Contest) -> str:
    """SHA-256 of the contest's canonical JSON (name, url, time, weight, ceiling, standings)."""
    doc = json.dumps(contest.to_json_dict(), sort_keys=True, allow_nan=True,
                     separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()


def _fmt_time(t: int) -> str:
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"t={t}"


def _json_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as they come back from JSON (tuples become lists)."""
    return json.loads(json.dumps(params, allow_nan=True))  # type: ignore[no-any-return]


def _same_params(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def norm(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        return v

    return {k: norm(v) for k, v in a.items()} == {k: norm(v) for k, v in b.items()}


def _resolve(system: str, params: dict[str, Any] | None) -> tuple[RatingSystem, dict[str, Any]]:
    """Build the system (ConfigError for unknown names/parameters) and its full parameters."""
    sysobj = get_system(system, **(params or {}))
    return sysobj, _json_params(sysobj.params())


def prefix_upper_bound(prefix: str) -> str | None:
    r"""The least string greater than every string that starts with ``prefix``.

    Strings are ordered by code point (as Python, SQLite's ``BINARY`` collation and
    PostgreSQL's ``COLLATE "C"`` order them), so ``s.startswith(prefix)`` is exactly
    ``prefix <= s < prefix_upper_bound(prefix)``: an index range.  ``None`` when there
    is no such string (``prefix`` is empty or all U+10FFFF): no upper limit then.

    >>> prefix_upper_bound("tour"), prefix_upper_bound("a_"), prefix_upper_bound("z\U0010ffff")
    ('tous', 'a`', '{')
    """
    head = prefix.rstrip(chr(sys.maxunicode))
    if not head:
        return None
    nxt = ord(head[-1]) + 1
    if 0xD800 <= nxt <= 0xDFFF:  # surrogates are no text (they cannot be stored): skip them
        nxt = 0xE000
    return head[:-1] + chr(nxt)


def _chunks(seq: Sequence[Any], n: int = _IN_CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


@dataclass
class _Meta:
    store_id: str
    epoch: int
    revision: int


@dataclass
class _Cache:
    """A Rater known to equal the first ``count`` contests of store ``store_id`` at ``epoch``."""

    rater: Rater
    count: int
    store_id: str
    epoch: int


@dataclass
class _Rated:
    """One contest as rated in this transaction (rows for ``events`` and ``players``)."""

    report: RoundReport
    idx: np.ndarray | None = None
    mu: np.ndarray | None = None
    sigma: np.ndarray | None = None
    display: np.ndarray | None = None
    perf: np.ndarray | None = None
    prev_display: np.ndarray | None = None
    change: np.ndarray | None = None
    debut: np.ndarray | None = None
    place: np.ndarray | None = None


# ====================================================================== the store
class Store:
    """A persistent, concurrently usable rating store (SQLAlchemy 2; SQLite or PostgreSQL).

    Use :meth:`create`, :meth:`open` or :meth:`open_or_create`; close with
    :meth:`close` or a ``with`` block.

    Parameters
    ----------
    snapshot_every:
        Write a snapshot of the rating state once this many contests were applied
        since the newest one (default 100).
    snapshot_events:
        ... or once this many player-rounds were (default 500,000).
    keep_snapshots:
        How many snapshots to keep (the newest ones; default 2).
    cache:
        Keep the Rater of the latest state in memory between ingestions (default
        True).  Without it every ingestion starts from the newest snapshot.
    busy_timeout:
        Seconds a SQLite writer waits for another one (default 600).
    pool_size, max_overflow:
        The connection pool of the store's engine (PostgreSQL, SQLite files): connections
        kept open, and how many more may be opened under load (default ``None``:
        SQLAlchemy's 5 and 10).  See :func:`podium.store.engine.make_engine`.
    """

    def __init__(self, engine: Engine, url: str, *, system_name: str, params: dict[str, Any],
                 schema_version: int, snapshot_every: int = 100,
                 snapshot_events: int = 500_000, keep_snapshots: int = 2,
                 cache: bool = True) -> None:
        if snapshot_every < 1 or snapshot_events < 1 or keep_snapshots < 1:
            raise ValueError("snapshot_every, snapshot_events and keep_snapshots must be >= 1")
        self.engine = engine
        self.url = url
        self.system_name = system_name
        self.params: dict[str, Any] = params
        self.system: RatingSystem = get_system(system_name, **params)
        self.schema_version = schema_version
        self.snapshot_every = snapshot_every
        self.snapshot_events = snapshot_events
        self.keep_snapshots = keep_snapshots
        self.use_cache = cache
        self._cache: _Cache | None = None
        self._handles: dict[str, int] = {}
        self._handles_store: str | None = None
        self._max_player_pk = -1
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _options(opts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split ``opts`` into the Store's own options and :func:`make_engine`'s."""
        allowed = {"snapshot_every", "snapshot_events", "keep_snapshots", "cache"}
        engine_opts = {
            "busy_timeout": float(opts.pop("busy_timeout", 600.0)),
            "pool_size": opts.pop("pool_size", None),
            "max_overflow": opts.pop("max_overflow", None),
        }
        unknown = set(opts) - allowed
        if unknown:
            raise TypeError(f"unknown Store option(s): {', '.join(sorted(unknown))}")
        return opts, engine_opts

    @classmethod
    def create(cls, url: str, system: str, params: dict[str, Any] | None = None,
               **options: Any) -> Store:
        """Create the store (or upgrade its schema), recording ``system`` and ``params``.

        When the database already holds a store it must be of the same system
        with the same (full) parameters, else :class:`StoreError`.  Unknown
        systems or parameters raise :class:`~podium.errors.ConfigError` before
        the database is touched.
        """
        opts, engine_opts = cls._options(dict(options))
        _sysobj, resolved = _resolve(system, params)
        engine = make_engine(url, **engine_opts)
        try:
            with db_errors(url, "cannot create the store"), write_txn(engine) as conn:
                version = cls._checked_version(conn, url, allow_old=True)
                upgrade(conn)
                stored = cls._meta_map(conn)
                if "system" in stored:
                    cls._check_same_system(url, stored, system, resolved)
                else:
                    now = int(time.time())
                    for key, value in (
                        ("system", system),
                        ("params", json.dumps(resolved, allow_nan=True, sort_keys=True)),
                        ("store_id", uuid.uuid4().hex),
                        ("epoch", "0"),
                        ("revision", "0"),
                        ("created_at", str(now)),
                    ):
                        set_meta(conn, key, value)
                if version != S.SCHEMA_VERSION:
                    from podium import __version__

                    set_meta(conn, "podium_version", __version__)
            return cls(engine, url, system_name=system, params=resolved,
                       schema_version=S.SCHEMA_VERSION, **opts)
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    def open(cls, url: str, **options: Any) -> Store:
        """Open an existing store; its system and parameters come from the database.

        ``options`` are the class's keyword options (``cache``, ``busy_timeout``,
        ``pool_size``, ``max_overflow``, ...), as for :meth:`create`.

        Raises
        ------
        StoreError
            When there is no store there, or its schema version differs from this
            Podium's (the message says whether to run ``podium db-upgrade``).
        """
        opts, engine_opts = cls._options(dict(options))
        path = sqlite_path(url)
        if path is not None and not path.exists():
            raise StoreError(
                f"no Podium store at {display_url(url)} (no such file); create one with "
                f"`podium ingest PATH --db {url} --system NAME`"
            )
        engine = make_engine(url, **engine_opts)
        try:
            with db_errors(url, "cannot open the store"), read_txn(engine) as conn:
                version = cls._checked_version(conn, url, allow_old=False)
                if version == 0:
                    raise StoreError(
                        f"{display_url(url)} holds no Podium store (no schema); create one with "
                        f"`podium ingest PATH --db {url} --system NAME`"
                    )
                stored = cls._meta_map(conn)
            if "system" not in stored:
                raise StoreError(f"{display_url(url)}: the store records no rating system; "
                                 "it was not created by Store.create")
            system = stored["system"]
            try:
                params = json.loads(stored["params"])
                get_system(system, **params)
            except (ConfigError, ValueError, KeyError) as exc:
                raise StoreError(
                    f"{display_url(url)}: the stored rating system {system!r} cannot be built by "
                    f"this Podium ({exc})"
                ) from None
            return cls(engine, url, system_name=system, params=params,
                       schema_version=version, **opts)
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    def open_or_create(cls, url: str, system: str | None = None,
                       params: dict[str, Any] | None = None, **options: Any) -> Store:
        """Open the store at ``url``, creating it (system ``system`` or ``"mmr"``) if absent.

        For an existing store, ``system`` (if given) must be the stored one and
        ``params`` (if given, even ``{}``) must resolve to the stored parameters.
        An existing store of an older schema version is not upgraded here: run
        ``podium db-upgrade`` (or :meth:`create`).
        """
        if system is not None:
            _resolve(system, params)  # ConfigError before touching anything
        if cls._has_store(url, options.get("busy_timeout", 600.0)):
            store = cls.open(url, **options)
            try:
                if system is not None and system != store.system_name:
                    raise StoreError(
                        f"{display_url(url)} rates with {store.system_name!r}, not {system!r}; "
                        "use another database for another system"
                    )
                if params is not None:
                    _sysobj, resolved = _resolve(store.system_name, params)
                    if not _same_params(resolved, store.params):
                        raise StoreError(cls._params_mismatch(url, store.params, resolved))
            except BaseException:
                store.close()
                raise
            return store
        return cls.create(url, system or "mmr", params, **options)

    @classmethod
    def upgrade(cls, url: str, *, busy_timeout: float = 600.0) -> tuple[int, int]:
        """Migrate the store at ``url`` to this Podium's schema version (one transaction).

        Returns
        -------
        (int, int)
            The version before and after.

        Raises
        ------
        StoreError
            When there is no store at ``url`` or it is newer than this Podium.
        """
        path = sqlite_path(url)
        if path is not None and not path.exists():
            raise StoreError(f"no Podium store at {display_url(url)} (no such file)")
        engine = make_engine(url, busy_timeout=busy_timeout)
        try:
            with db_errors(url, "cannot upgrade the store"), write_txn(engine) as conn:
                before = cls._checked_version(conn, url, allow_old=True)
                if before == 0:
                    raise StoreError(f"{display_url(url)} holds no Podium store (no schema) "
                                     "to upgrade")
                upgrade(conn)
                if before != S.SCHEMA_VERSION:
                    from podium import __version__

                    set_meta(conn, "podium_version", __version__)
            return before, S.SCHEMA_VERSION
        finally:
            engine.dispose()

    @staticmethod
    def _has_store(url: str, busy: float) -> bool:
        path = sqlite_path(url)
        if path is not None and not path.exists():
            return False
        engine = make_engine(url, busy_timeout=busy)
        try:
            with db_errors(url, "cannot open the database"), read_txn(engine) as conn:
                try:
                    return read_version(conn) > 0
                except ValueError:
                    return True  # let open() explain
        finally:
            engine.dispose()

    @staticmethod
    def _checked_version(conn: Connection, url: str, *, allow_old: bool) -> int:
        try:
            version = read_version(conn)
        except ValueError as exc:
            raise StoreError(f"{display_url(url)}: damaged store metadata ({exc})") from None
        if version > S.SCHEMA_VERSION:
            raise StoreError(
                f"{display_url(url)} has store schema version {version}, newer than this "
                f"Podium's {S.SCHEMA_VERSION}; upgrade Podium to use it"
            )
        if 0 < version < S.SCHEMA_VERSION and not allow_old:
            raise StoreError(
                f"{display_url(url)} has store schema version {version}, older than this "
                f"Podium's {S.SCHEMA_VERSION}; run `podium db-upgrade --db {url}` to migrate it"
            )
        return version

    @staticmethod
    def _meta_map(conn: Connection) -> dict[str, str]:
        return {k: v for k, v in conn.execute(select(S.meta.c.key, S.meta.c.value)).all()}

    @classmethod
    def _check_same_system(cls, url: str, stored: dict[str, str], system: str,
                           resolved: dict[str, Any]) -> None:
        if stored["system"] != system:
            raise StoreError(
                f"{display_url(url)} already holds a store rated with {stored['system']!r}, not "
                f"{system!r}; use another database for another system"
            )
        old = json.loads(stored["params"])
        if not _same_params(old, resolved):
            raise StoreError(cls._params_mismatch(url, old, resolved))

    @staticmethod
    def _params_mismatch(url: str, old: dict[str, Any], new: dict[str, Any]) -> str:
        diffs = [
            f"{k}: stored {old.get(k)!r}, given {new.get(k)!r}"
            for k in sorted(set(old) | set(new)) if not _same_params(
                {k: old.get(k)}, {k: new.get(k)})
        ]
        return (f"{display_url(url)} already holds a store with other parameters "
                f"({'; '.join(diffs)}); use another database for other parameters")

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Release the database connections (the store object is unusable afterwards)."""
        self._cache = None
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({display_url(self.url)!r}, system={self.system_name!r})"

    # ------------------------------------------------------------------ writing
    def ingest(self, contest: Contest, *, contest_id: str | None = None,
               recompute_from: bool = False) -> IngestResult:
        """Rate ``contest`` and store it, all in one transaction (all of it or nothing).

        Parameters
        ----------
        contest:
            A validated :class:`~podium.core.contest.Contest`.
        contest_id:
            Its id (default: its url if set, else its name).
        recompute_from:
            Allow a contest older than the latest stored one: it is inserted in
            time order (after the stored contests of the same or an earlier time)
            and every later contest is rated again.

        Returns
        -------
        IngestResult
            ``status`` "applied", "duplicate" (the id is stored with the same
            content: nothing changed) or "recomputed".

        Raises
        ------
        StoreError
            When the id is stored with different content, when the contest is older
            than the latest stored one (without ``recompute_from``), or when it has no
            id.  Nothing is changed.
        """
        if not isinstance(contest, Contest):
            raise TypeError(f"expected a Contest, got {type(contest).__name__}")
        cid = default_contest_id(contest) if contest_id is None else contest_id
        if not isinstance(cid, str) or not cid:
            raise StoreError(f"contest {contest.label!r}: contest_id must be a non-empty string")
        if not -_INT64 <= contest.time_seconds < _INT64:
            raise StoreError(f"contest {contest.label!r}: time_seconds {contest.time_seconds} "
                             "does not fit a 64-bit integer")
        chash = content_hash(contest)
        with self._lock:
            new_handles: dict[str, int] = {}
            # On any error the transaction rolls back; the cached Rater was dropped
            # if it had been touched (see _rater_at), so nothing needs undoing here.
            with (db_errors(self.url, f"cannot ingest contest {contest.label!r}"),
                  write_txn(self.engine) as conn):
                result, cache = self._ingest_locked(
                    conn, contest, cid, chash, recompute_from, new_handles
                )
            self._handles.update(new_handles)
            if new_handles:
                self._max_player_pk = max(self._max_player_pk, max(new_handles.values()))
            if cache is not None:
                self._cache = cache if self.use_cache else None
            return result

    def snapshot(self) -> bool:
        """Write a snapshot of the current state unless the newest one is already current.

        Returns True when one was written.  (:meth:`ingest` takes snapshots on its
        own; call this after a batch so that the next process starts at once.)
        """
        with self._lock:
            with db_errors(self.url, "cannot write a snapshot"), write_txn(self.engine) as conn:
                m = self._read_meta(conn)
                head = self._count_contests(conn)
                newest = self._newest_snapshot_head(conn)
                if newest == head:
                    return False
                rater = self._rater_at(conn, m, head)
                self._write_snapshot(conn, rater, head, m.epoch)
                cache = _Cache(rater, head, m.store_id, m.epoch)
            self._cache = cache if self.use_cache else None
            return True

    def _ingest_locked(
        self, conn: Connection, contest: Contest, cid: str, chash: str, recompute_from: bool,
        new_handles: dict[str, int],
    ) -> tuple[IngestResult, _Cache | None]:
        m = self._read_meta(conn)
        self._hook("locked")
        c = S.contests
        row = conn.execute(
            select(c.c.pk, c.c.seq, c.c.name, c.c.url, c.c.time_seconds, c.c.weight,
                   c.c.perf_ceiling, c.c.players, c.c.content_hash).where(c.c.cid == cid)
        ).first()
        if row is not None:
            if row.content_hash == chash:
                return IngestResult("duplicate", cid, int(row.seq), int(row.players), 0, 0, (),
                                    contest.name), None
            raise StoreError(self._describe_conflict(conn, row, contest, cid))
        head = self._count_contests(conn)
        pos = head
        latest = None
        if head:
            latest = conn.execute(
                select(c.c.cid, c.c.name, c.c.time_seconds).where(c.c.seq == head - 1)
            ).first()
        if latest is not None and contest.time_seconds < latest.time_seconds:
            pos = int(conn.execute(
                select(func.count()).select_from(c).where(c.c.time_seconds <= contest.time_seconds)
            ).scalar_one())
            if not recompute_from:
                raise StoreError(
                    f"contest {contest.label!r} (id {cid!r}, {_fmt_time(contest.time_seconds)}) "
                    f"is older than the latest applied contest {latest.name!r} (id "
                    f"{latest.cid!r}, {_fmt_time(latest.time_seconds)}); ingest it with "
                    f"--recompute-from (recompute_from=True) to insert it in time order and "
                    f"re-rate the {head - pos} later contest(s)"
                )
        self._refresh_handles(conn, m)
        rater = self._rater_at(conn, m, pos)
        now = int(time.time())
        next_cpk = int(conn.execute(select(func.coalesce(func.max(c.c.pk), -1))).scalar_one()) + 1
        later: Sequence[Any] = []
        if pos < head:
            later = conn.execute(
                select(c.c.pk, c.c.cid, c.c.seq, c.c.name, c.c.url, c.c.time_seconds, c.c.weight,
                       c.c.perf_ceiling)
                .where(c.c.seq >= pos).order_by(c.c.seq)
            ).all()
            conn.execute(delete(S.events).where(
                S.events.c.contest_pk.in_(select(c.c.pk).where(c.c.seq >= pos))
            ))
            conn.execute(update(c).where(c.c.seq >= pos).values(seq=c.c.seq + 1))
            conn.execute(delete(S.snapshots).where(S.snapshots.c.head_count > pos))
            self._hook("recompute-cleared")

        # the new contest
        rated = self._rate(rater, contest)
        self._hook("rated")
        pks = self._player_pks(contest.handles, new_handles)
        new_pks = set(new_handles.values())
        recompute = pos < head
        if new_handles:
            self._insert_new_players(conn, contest, rated, rater, new_handles,
                                     with_values=not recompute)
        conn.execute(c.insert().values(
            pk=next_cpk, cid=cid, seq=pos, name=contest.name, url=contest.url,
            time_seconds=contest.time_seconds, weight=contest.weight,
            perf_ceiling=contest.perf_ceiling, players=len(contest),
            new_players=rated.report.new_players, rated=not rated.report.skipped,
            content_hash=chash, ingested_at=now,
        ))
        insert_rows(conn, S.standings, ("contest_pk", "pos", "player_pk", "lo", "hi"), [
            (next_cpk, i, pk, lo, hi)
            for i, (pk, lo, hi) in enumerate(zip(pks, contest.lo.tolist(), contest.hi.tolist(),
                                                 strict=True))
        ])
        self._hook("standings")
        touched: set[int] = set()
        if not rated.report.skipped:
            self._insert_events(conn, next_cpk, pks, rated)
            assert rated.idx is not None
            touched.update(rated.idx.tolist())
        self._hook("events")

        # re-rate the later contests
        for row in later:
            old = self._stored_contest(conn, row)
            r2 = self._rate(rater, old)
            conn.execute(update(c).where(c.c.pk == row.pk)
                         .values(new_players=r2.report.new_players))
            if not r2.report.skipped:
                assert r2.idx is not None
                self._insert_events(conn, row.pk, self._player_pks(old.handles, {}), r2)
                touched.update(r2.idx.tolist())
            self._hook("recompute-contest")

        # players: every participant's current values
        if recompute:
            update_idx = sorted(touched)
        elif rated.idx is not None:
            update_idx = [i for i, pk in zip(rated.idx.tolist(), pks, strict=True)
                          if pk not in new_pks]
        else:
            update_idx = []
        self._update_players(conn, rater, update_idx, new_handles)
        self._hook("players")

        new_head = head + 1
        epoch = m.epoch + 1 if recompute else m.epoch
        set_meta(conn, "revision", str(m.revision + 1))
        if recompute:
            set_meta(conn, "epoch", str(epoch))
        self._maybe_snapshot(conn, rater, new_head, epoch)
        self._hook("commit")
        status: Literal["applied", "recomputed"] = "recomputed" if recompute else "applied"
        result = IngestResult(status, cid, pos, len(contest), rated.report.new_players,
                              len(later), rated.report.warnings, contest.name)
        return result, _Cache(rater, new_head, m.store_id, epoch)

    # ------------------------------------------------------------------ write helpers
    @staticmethod
    def _hook(stage: str) -> None:
        """Test hook: with ``PODIUM_STORE_TEST_HOOK=stage:FILE`` set, reaching ``stage``
        creates FILE and sleeps (so that a test can kill the process mid-transaction)."""
        import os

        spec = os.environ.get("PODIUM_STORE_TEST_HOOK")
        if not spec:
            return
        want, _, path = spec.partition(":")
        if want == stage:
            with open(path, "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(float(os.environ.get("PODIUM_STORE_TEST_SLEEP", "60")))

    def _read_meta(self, conn: Connection) -> _Meta:
        stored = self._meta_map(conn)
        try:
            version = int(stored.get("schema_version", "0"))
            m = _Meta(stored["store_id"], int(stored["epoch"]), int(stored["revision"]))
        except (KeyError, ValueError) as exc:
            raise StoreError(f"{display_url(self.url)}: damaged store metadata ({exc})") from None
        if version != self.schema_version or stored.get("system") != self.system_name:
            raise StoreError(
                f"{display_url(self.url)} changed under this process (schema version {version}, "
                f"system {stored.get('system')!r}); open it again"
            )
        return m

    @staticmethod
    def _count_contests(conn: Connection) -> int:
        return int(conn.execute(select(func.count()).select_from(S.contests)).scalar_one())

    @staticmethod
    def _newest_snapshot_head(conn: Connection) -> int | None:
        v = conn.execute(select(func.max(S.snapshots.c.head_count))).scalar_one()
        return None if v is None else int(v)

    def _refresh_handles(self, conn: Connection, m: _Meta) -> None:
        if self._handles_store != m.store_id:
            self._handles = {}
            self._max_player_pk = -1
            self._handles_store = m.store_id
        p = S.players
        rows = conn.execute(
            select(p.c.pk, p.c.handle).where(p.c.pk > self._max_player_pk)
        ).all()
        for pk, h in rows:
            self._handles[h] = pk
            if pk > self._max_player_pk:
                self._max_player_pk = pk

    def _player_pks(self, handles: Sequence[str], new_handles: dict[str, int]) -> list[int]:
        """Player keys of ``handles``; unknown handles get new keys (added to ``new_handles``)."""
        out = []
        known = self._handles
        nxt = self._max_player_pk + 1 + len(new_handles)
        for h in handles:
            pk = known.get(h)
            if pk is None:
                pk = new_handles.get(h)
                if pk is None:
                    pk = nxt
                    nxt += 1
                    new_handles[h] = pk
            out.append(pk)
        return out

    def _rater_at(self, conn: Connection, m: _Meta, pos: int) -> Rater:
        """A Rater that has rated exactly the first ``pos`` stored contests."""
        c = self._cache
        self._cache = None  # the Rater is about to change; re-cached only after a commit
        if c is not None and c.store_id == m.store_id and c.epoch == m.epoch and c.count <= pos:
            rater, start = c.rater, c.count
        else:
            rater, start = self._rater_from_snapshot(conn, pos)
        for old in self._stored_contests(conn, start, pos):
            rater.add(old)
        if len(rater.contests) != pos:  # pragma: no cover - defensive
            raise StoreError(f"internal error: rater at {len(rater.contests)} contests, "
                             f"expected {pos}")
        return rater

    def _rater_from_snapshot(self, conn: Connection, pos: int) -> tuple[Rater, int]:
        sn = S.snapshots
        row = conn.execute(
            select(sn.c.head_count, sn.c.data).where(sn.c.head_count <= pos)
            .order_by(sn.c.head_count.desc()).limit(1)
        ).first()
        if row is not None:
            try:
                rater = rater_from_bytes(bytes(row.data),
                                         where=f"snapshot at {row.head_count} contests")
                if (rater.system_name == self.system_name
                        and _same_params(_json_params(rater.system.params()), self.params)
                        and len(rater.contests) == row.head_count):
                    return rater, int(row.head_count)
                log.warning("snapshot at %d contests does not match the store; replaying",
                            row.head_count)
            except CheckpointError as exc:
                log.warning("%s; replaying from the start", exc)
        return new_rater(self.system_name, self.params), 0

    def _stored_contest(self, conn: Connection, row: Any) -> Contest:
        st, p = S.standings, S.players
        rows = conn.execute(
            select(p.c.handle, st.c.lo, st.c.hi)
            .join(p, p.c.pk == st.c.player_pk)
            .where(st.c.contest_pk == row.pk).order_by(st.c.pos)
        ).all()
        handles = [r[0] for r in rows]
        lo = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        hi = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
        return Contest.from_arrays(
            handles, lo, hi, name=row.name, time_seconds=int(row.time_seconds),
            weight=float(row.weight),
            perf_ceiling=None if row.perf_ceiling is None else float(row.perf_ceiling),
            url=row.url,
        )

    def _stored_contests(self, conn: Connection, start: int, stop: int) -> Iterator[Contest]:
        if start >= stop:
            return
        c = S.contests
        rows = conn.execute(
            select(c.c.pk, c.c.name, c.c.url, c.c.time_seconds, c.c.weight, c.c.perf_ceiling)
            .where(c.c.seq >= start, c.c.seq < stop).order_by(c.c.seq)
        ).all()
        for row in rows:
            yield self._stored_contest(conn, row)

    def _rate(self, rater: Rater, contest: Contest) -> _Rated:
        t = rater.players
        system = rater.system
        if contest.is_outcome_free:
            return _Rated(rater.add(contest))
        known, _ = t.lookup(contest.handles)
        n = len(contest)
        mu0, s0 = system.newcomer(contest)
        prior_mu = np.full(n, mu0, dtype=np.float64)
        prior_sig = np.full(n, s0, dtype=np.float64)
        old = known >= 0
        prior_mu[old] = t.mu[known[old]]
        prior_sig[old] = t.sigma[known[old]]
        prev_display = np.asarray(system.display_rating(prior_mu, prior_sig), dtype=np.float64)
        assert isinstance(rater.events, LastRoundLog)
        rep = rater.add(contest)
        idx, missing = t.lookup(contest.handles)
        last = rater.events.last
        if missing or last is None or last[0] != rep.index:  # pragma: no cover - defensive
            raise StoreError(f"internal error rating contest {contest.label!r}")
        mu = t.mu[idx].copy()
        sigma = t.sigma[idx].copy()
        return _Rated(
            rep, idx=idx, mu=mu, sigma=sigma,
            display=np.asarray(system.display_rating(mu, sigma), dtype=np.float64),
            perf=last[4], prev_display=prev_display, change=t.last_change[idx].copy(),
            debut=~old, place=np.asarray(contest.lo, dtype=np.int64),
        )

    _PLAYER_COLS = ("mu", "sigma", "display_rating", "contests", "last_contest_time",
                    "max_display_rating", "last_change")

    @staticmethod
    def _player_values(rater: Rater, idx: np.ndarray) -> list[tuple[Any, ...]]:
        """The Rater's current ``_PLAYER_COLS`` of players ``idx``."""
        t = rater.players
        mu, sg = t.mu[idx], t.sigma[idx]
        disp = np.asarray(rater.system.display_rating(mu, sg), dtype=np.float64)
        return list(zip(mu.tolist(), sg.tolist(), disp.tolist(), t.contests[idx].tolist(),
                        t.last_time[idx].tolist(), t.max_display[idx].tolist(),
                        t.last_change[idx].tolist(), strict=True))

    def _insert_new_players(self, conn: Connection, contest: Contest, rated: _Rated,
                            rater: Rater, new_handles: dict[str, int], *,
                            with_values: bool) -> None:
        cols = ("pk", "handle", "handle_key", *self._PLAYER_COLS)
        if with_values and not rated.report.skipped:
            idx, _ = rater.players.lookup(list(new_handles))
            vals = self._player_values(rater, idx)
            rows = [(pk, h, h.casefold(), *v)
                    for (h, pk), v in zip(new_handles.items(), vals, strict=True)]
        else:
            rows = [(pk, h, h.casefold(), None, None, None, 0, None, None, None)
                    for h, pk in new_handles.items()]
        insert_rows(conn, S.players, cols, rows)

    @staticmethod
    def _insert_events(conn: Connection, contest_pk: int, pks: list[int], r: _Rated) -> None:
        assert r.mu is not None and r.sigma is not None and r.display is not None
        assert r.perf is not None and r.prev_display is not None and r.change is not None
        assert r.debut is not None and r.place is not None
        n = len(pks)
        rows = list(zip([contest_pk] * n, pks, r.mu.tolist(), r.sigma.tolist(),
                        r.display.tolist(), r.perf.tolist(), r.place.tolist(),
                        r.prev_display.tolist(), r.change.tolist(), r.debut.tolist(),
                        strict=True))
        insert_rows(conn, S.events, ("contest_pk", "player_pk", "mu", "sigma", "display_rating",
                                     "perf", "place", "prev_display", "change", "debut"), rows)

    def _update_players(self, conn: Connection, rater: Rater, idx: list[int],
                        new_handles: dict[str, int]) -> None:
        """Write the Rater's current values of players ``idx`` (Rater indices)."""
        if not idx:
            return
        handles = rater.players.handles
        known = self._handles
        pks = []
        for i in idx:
            h = handles[i]
            pk = known.get(h)
            pks.append(new_handles[h] if pk is None else pk)
        vals = self._player_values(rater, np.asarray(idx, dtype=np.int64))
        update_rows(conn, S.players, "pk", self._PLAYER_COLS,
                    [(pk, *v) for pk, v in zip(pks, vals, strict=True)])

    def _maybe_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        newest = self._newest_snapshot_head(conn)
        base = 0 if newest is None else newest
        since = head - base
        if since <= 0:
            return
        c = S.contests
        events = int(conn.execute(
            select(func.coalesce(func.sum(c.c.players), 0))
            .where(c.c.seq >= base, c.c.rated.is_(True))
        ).scalar_one())
        if since >= self.snapshot_every or events >= self.snapshot_events:
            self._write_snapshot(conn, rater, head, epoch)

    def _write_snapshot(self, conn: Connection, rater: Rater, head: int, epoch: int) -> None:
        data = rater_to_bytes(rater)
        sn = S.snapshots
        pk = int(conn.execute(select(func.coalesce(func.max(sn.c.pk), -1))).scalar_one()) + 1
        conn.execute(sn.insert().values(pk=pk, head_count=head, epoch=epoch,
                                        created_at=int(time.time()), size=len(data), data=data))
        keep = [r[0] for r in conn.execute(
            select(sn.c.pk).order_by(sn.c.head_count.desc(), sn.c.pk.desc())
            .limit(self.keep_snapshots)
        ).all()]
        conn.execute(delete(sn).where(sn.c.pk.not_in(keep)))
        self._hook("snapshot")

    def _describe_conflict(self, conn: Connection, row: Any, contest: Contest, cid: str) -> str:
        diffs = []
        if row.name != contest.name:
            diffs.append(f"name {row.name!r} vs {contest.name!r}")
        if row.url != contest.url:
            diffs.append(f"url {row.url!r} vs {contest.url!r}")
        if int(row.time_seconds) != contest.time_seconds:
            diffs.append(f"time_seconds {row.time_seconds} vs {contest.time_seconds}")
        if float(row.weight) != contest.weight:
            diffs.append(f"weight {row.weight} vs {contest.weight}")
        if row.perf_ceiling != contest.perf_ceiling:
            diffs.append(f"perf_ceiling {row.perf_ceiling} vs {contest.perf_ceiling}")
        stored = self._stored_contest(conn, row).standings
        given = contest.standings
        if len(stored) != len(given):
            diffs.append(f"standings of {len(stored)} players stored, {len(given)} given")
        else:
            for i, (a, b) in enumerate(zip(stored, given, strict=True)):
                if a != b:
                    diffs.append(f"standings differ first at position {i}: stored {a!r}, "
                                 f"given {b!r}")
                    break
        what = "; ".join(diffs) or "content differs"
        return (
            f"contest id {cid!r} is already stored (#{row.seq} {row.name!r}) with different "
            f"content ({what} [stored vs given]); a stored contest is never replaced: give this "
            "one another id or leave it out"
        )

    # ------------------------------------------------------------------ reading
    def _rated_filter(self, *, min_contests: int = 1, active_since: int | None = None,
                      min_rating: float | None = None,
                      max_rating: float | None = None) -> list[Any]:
        p = S.players
        # A player is rated (contests >= 1) exactly when display_rating is set: it is
        # NULL until the first rated contest (see schema.players).  Testing the indexed
        # column lets counts and deep leaderboard pages read the rating index alone.
        conds: list[ColumnElement[bool]]
        if min_contests <= 1:
            conds = [p.c.display_rating.is_not(None)]
        else:
            conds = [p.c.contests >= int(min_contests)]
        if active_since is not None:
            conds.append(p.c.last_contest_time >= int(active_since))
        if min_rating is not None:
            conds.append(p.c.display_rating >= float(min_rating))
        if max_rating is not None:
            conds.append(p.c.display_rating < float(max_rating))
        return conds

    @staticmethod
    def _check_page(offset: int, limit: int) -> None:
        if offset < 0 or limit < 0:
            raise StoreError(f"offset and limit must be >= 0 (got offset={offset}, limit={limit})")

    def leaderboard(self, *, offset: int = 0, limit: int = 50, active_since: int | None = None,
                    min_contests: int = 1) -> list[LeaderboardRow]:
        """Rated players by display rating, best first (ties: handle ascending).

        ``active_since`` keeps players whose last contest is at or after that time;
        ``rank`` is 1-based within the filtered set.
        """
        self._check_page(offset, limit)
        p = S.players
        q = (
            select(p.c.handle, p.c.display_rating, p.c.mu, p.c.sigma, p.c.contests,
                   p.c.last_contest_time, p.c.max_display_rating, p.c.last_change)
            .where(*self._rated_filter(min_contests=min_contests, active_since=active_since))
            .order_by(p.c.display_rating.desc(), p.c.handle.asc())
            .offset(offset).limit(limit)
        )
        with read_txn(self.engine) as conn:
            rows = conn.execute(q).all()
        return [
            LeaderboardRow(offset + k + 1, r.handle, float(r.display_rating), float(r.mu),
                           float(r.sigma), int(r.contests), int(r.last_contest_time),
                           float(r.max_display_rating), float(r.last_change))
            for k, r in enumerate(rows)
        ]

    def count_players(self, *, min_rating: float | None = None,
                      max_rating: float | None = None, active_since: int | None = None) -> int:
        """Number of rated players with display rating in ``[min_rating, max_rating)``."""
        p = S.players
        q = select(func.count()).select_from(p).where(*self._rated_filter(
            active_since=active_since, min_rating=min_rating, max_rating=max_rating))
        with read_txn(self.engine) as conn:
            return int(conn.execute(q).scalar_one())

    def player(self, handle: str) -> PlayerView | None:
        """One rated player (None when unknown or never rated), rank and full history."""
        p, e, c = S.players, S.events, S.contests
        with read_txn(self.engine) as conn:
            r = conn.execute(select(p).where(p.c.handle == handle, p.c.contests >= 1)).first()
            if r is None:
                return None
            # the rated players ranked above: two counts over the rating index alone
            # (display_rating is NULL exactly for the unrated ones)
            above = select(func.count()).select_from(p)
            better = int(conn.execute(
                above.where(p.c.display_rating > r.display_rating)).scalar_one())
            better += int(conn.execute(above.where(
                p.c.display_rating == r.display_rating, p.c.handle < r.handle)).scalar_one())
            hist = conn.execute(
                select(c.c.cid, c.c.name, c.c.time_seconds, c.c.seq, c.c.players, e.c.mu,
                       e.c.sigma, e.c.display_rating, e.c.perf, e.c.change, e.c.place)
                .select_from(e.join(c, c.c.pk == e.c.contest_pk))
                .where(e.c.player_pk == r.pk).order_by(c.c.seq)
            ).all()
        history = [
            HistoryRow(h.cid, h.name, int(h.time_seconds), int(h.seq), float(h.mu),
                       float(h.sigma), float(h.display_rating), float(h.perf), int(h.place),
                       float(h.change), int(h.players))
            for h in hist
        ]
        return PlayerView(r.handle, float(r.mu), float(r.sigma), float(r.display_rating),
                          int(r.contests), int(r.last_contest_time),
                          float(r.max_display_rating), float(r.last_change), int(better) + 1,
                          history)

    def search_handles(self, prefix: str, limit: int = 10) -> list[str]:
        """Rated handles starting with ``prefix`` (case-insensitive), best rated first.

        The match is on the case-folded handle (``str.casefold``); ``_`` and ``%`` are
        plain characters.  Ties in rating go by handle.

        The handles with the prefix are a range of the ``handle_key`` index
        (:func:`prefix_upper_bound`).  When it holds at most ``_SEARCH_RANGE_ROWS``
        handles (rare prefixes, ``tour``), they are read through that index and sorted
        by rating; otherwise (``a``) the players are walked best first, along the
        rating index, until ``limit`` of them match, which takes few rows when many
        match.  The size of the range is counted on the index first (at most
        ``_SEARCH_RANGE_ROWS + 1`` entries).
        """
        self._check_page(0, limit)
        p = S.players
        key = prefix.casefold()
        with read_txn(self.engine) as conn:
            match: list[Any] = []
            if key:
                upper = prefix_upper_bound(key)
                match = [p.c.handle_key >= key]
                if upper is not None:
                    match.append(p.c.handle_key < upper)
                in_range = select(p.c.handle_key).where(*match).limit(_SEARCH_RANGE_ROWS + 1)
                n = int(conn.execute(
                    select(func.count()).select_from(in_range.subquery())).scalar_one())
                if n > _SEARCH_RANGE_ROWS:
                    # too many to read and sort: walk the rating index instead
                    match = [p.c.handle_key.startswith(key, autoescape=True)]
            q = (
                select(p.c.handle).where(p.c.contests >= 1, *match)
                .order_by(p.c.display_rating.desc(), p.c.handle.asc()).limit(limit)
            )
            return [r[0] for r in conn.execute(q).all()]

    def contest(self, contest_id: str) -> ContestView | None:
        """One contest with every player's change, in standings order (None if unknown)."""
        c, st, p, e = S.contests, S.standings, S.players, S.events
        with read_txn(self.engine) as conn:
            row = conn.execute(select(c).where(c.c.cid == contest_id)).first()
            if row is None:
                return None
            rows = conn.execute(
                select(p.c.handle, st.c.lo, st.c.hi, e.c.prev_display, e.c.display_rating,
                       e.c.change, e.c.perf, e.c.mu, e.c.sigma, e.c.debut)
                .select_from(st.join(p, p.c.pk == st.c.player_pk).join(
                    e, and_(e.c.contest_pk == st.c.contest_pk, e.c.player_pk == st.c.player_pk)))
                .where(st.c.contest_pk == row.pk).order_by(st.c.pos)
            ).all()
        changes = [
            ContestChange(r.handle, int(r.lo), int(r.hi),
                          None if r.debut else float(r.prev_display), float(r.display_rating),
                          float(r.change), float(r.perf), float(r.mu), float(r.sigma))
            for r in rows
        ]
        return ContestView(row.cid, row.name, row.url, int(row.time_seconds), int(row.seq),
                           int(row.players), changes, bool(row.rated), float(row.weight),
                           None if row.perf_ceiling is None else float(row.perf_ceiling))

    def contests(self, *, offset: int = 0, limit: int = 50) -> list[ContestSummary]:
        """Contests, newest first."""
        self._check_page(offset, limit)
        c = S.contests
        q = (select(c.c.cid, c.c.name, c.c.url, c.c.time_seconds, c.c.seq, c.c.players)
             .order_by(c.c.seq.desc()).offset(offset).limit(limit))
        with read_txn(self.engine) as conn:
            rows = conn.execute(q).all()
        return [ContestSummary(r.cid, r.name, r.url, int(r.time_seconds), int(r.seq),
                               int(r.players)) for r in rows]

    def current_ratings(self, handles: Sequence[str]) -> dict[str, tuple[float, float, int]]:
        """``handle -> (mu, sigma, contests)`` of the rated players among ``handles``."""
        p = S.players
        out: dict[str, tuple[float, float, int]] = {}
        wanted = list(dict.fromkeys(handles))
        with read_txn(self.engine) as conn:
            for chunk in _chunks(wanted):
                for r in conn.execute(
                    select(p.c.handle, p.c.mu, p.c.sigma, p.c.contests)
                    .where(p.c.handle.in_(list(chunk)), p.c.contests >= 1)
                ).all():
                    out[r.handle] = (float(r.mu), float(r.sigma), int(r.contests))
        return out

    def stats(self) -> dict[str, Any]:
        """Counts and settings: players (rated), contests, events, last_contest_time,
        system, params, schema_version, plus handles, rated_contests, snapshots, epoch,
        revision and database."""
        p, c, sn = S.players, S.contests, S.snapshots
        with read_txn(self.engine) as conn:
            n_players = conn.execute(
                select(func.count()).select_from(p).where(p.c.contests >= 1)).scalar_one()
            n_handles = conn.execute(select(func.count()).select_from(p)).scalar_one()
            agg = conn.execute(
                select(func.count(), func.max(c.c.time_seconds),
                       func.coalesce(func.sum(c.c.players).filter(c.c.rated.is_(True)), 0),
                       func.count().filter(c.c.rated.is_(True)))
            ).one()
            snaps = conn.execute(
                select(sn.c.head_count, sn.c.size).order_by(sn.c.head_count)).all()
            stored = self._meta_map(conn)
        return {
            "players": int(n_players),
            "contests": int(agg[0]),
            "events": int(agg[2]),
            "last_contest_time": None if agg[1] is None else int(agg[1]),
            "system": self.system_name,
            "params": dict(self.params),
            "schema_version": int(stored.get("schema_version", 0)),
            "handles": int(n_handles),
            "rated_contests": int(agg[3]),
            "snapshots": [{"head_count": int(h), "bytes": int(s)} for h, s in snaps],
            "epoch": int(stored.get("epoch", 0)),
            "revision": int(stored.get("revision", 0)),
            "database": display_url(self.url),
        }

    def ratings_frame(self) -> pd.DataFrame:
        """Every rated player, in the format of :meth:`podium.rater.Rater.ratings`."""
        p = S.players
        q = (select(p.c.handle, p.c.mu, p.c.sigma, p.c.display_rating, p.c.contests,
                    p.c.last_contest_time, p.c.max_display_rating, p.c.last_change)
             .where(p.c.contests >= 1)
             .order_by(p.c.display_rating.desc(), p.c.handle.asc()))
        with read_txn(self.engine) as conn:
            rows = conn.execute(q).all()
        cols = ["handle", "mu", "sigma", "display_rating", "contests", "last_contest_time",
                "max_display_rating", "last_change"]
        df = pd.DataFrame([tuple(r) for r in rows], columns=cols)
        return df.astype({"handle": object, "mu": float, "sigma": float, "display_rating": float,
                          "contests": np.int64, "last_contest_time": np.int64,
                          "max_display_rating": float, "last_change": float})

    def lookup_contests(self, contest_ids: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        """``id -> (content_hash, index, name)`` of the stored contests among ``contest_ids``."""
        c = S.contests
        out: dict[str, tuple[str, int, str]] = {}
        wanted = list(dict.fromkeys(contest_ids))
        with read_txn(self.engine) as conn:
            for chunk in _chunks(wanted):
                for r in conn.execute(
                    select(c.c.cid, c.c.content_hash, c.c.seq, c.c.name)
                    .where(c.c.cid.in_(list(chunk)))
                ).all():
                    out[r.cid] = (r.content_hash, int(r.seq), r.name)
        return out

    def latest_contest(self) -> ContestSummary | None:
        """The chronologically last stored contest (None for an empty store)."""
        rows = self.contests(limit=1)
        return rows[0] if rows else None

    def contest_ids(self) -> list[str]:
        """Every stored contest id in chronological order."""
        c = S.contests
        with read_txn(self.engine) as conn:
            return [r[0] for r in conn.execute(select(c.c.cid).order_by(c.c.seq)).all()]
