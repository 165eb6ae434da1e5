"""The persistent store of the live rating service (SQLite or PostgreSQL).

Design
------
The database is the source of truth for contests, standings, players and rating
events (see :mod:`podium.store.schema`).  The rating system's complete state
(per-player arrays beyond ``mu, sigma``: Elo-MMR's performance history,
TopCoder's volatility, ...) lives in a :class:`~podium.rater.Rater`; the store
keeps *snapshots* of it (:mod:`podium.store.snapshot`) as derived data, each
tagged with the number of contests it covers.

The :class:`Store` is a facade over one *service* object per concern, each built over
one shared :class:`~podium.store.common.StoreContext` (the engine and URL, the rating
system and its parameters, the options, the test hooks and the write lock) and each
owning its own state (:class:`StoreServices`):

=====================  ===========================================  =====================
service                does                                         owns (in memory)
=====================  ===========================================  =====================
``audit``              the audit log: rows of a write, ``audit``    --
                       (:class:`~podium.store.audit.AuditLog`)
``raters``             Raters at a point: snapshots, replay         the Rater cache
                       (:class:`~podium.store.raters.RaterCache`)
``handles``            the players' keys                            the handle keys
                       (:class:`~podium.store.rows.HandleCache`)
``writes``             ``ingest``, ``ingest_many``, ``snapshot``,   --
                       the frame of every write
                       (:class:`~podium.store.writes.Writes`)
``corrections``        ``delete``, ``replace``                      --
                       (:class:`~podium.store.corrections.Corrections`)
``queries``            the reads                                    --
                       (:class:`~podium.store.queries.Queries`)
``explain``            ``explain``                                  the explain cache
                       (:class:`~podium.store.explain.Explainer`)
``tokens``             bearer tokens                                --
                       (:class:`~podium.store.tokens.TokenRegistry`)
``export``             streamed CSV/Parquet exports                 --
                       (:class:`~podium.store.export.Exporter`)
``seasons``            ``new_season``, ``seasons``                  --
                       (:class:`~podium.store.seasons.Seasons`)
=====================  ===========================================  =====================

A service reaches another only through its public methods: the corrections drop the
Rater cache with ``raters.invalidate`` and restore a Rater with ``raters.from_snapshot``,
the explanations ask ``raters.rater_from_store`` for the Rater before a contest, and
every write stages what it keeps in memory (``raters.stage``, ``handles.stage``), taken
over by ``writes.run_write`` once the transaction committed.  Creating, opening and
migrating a store are the functions of :mod:`podium.store.lifecycle`, which return the
context; :meth:`Store.close` releases every service's state (:meth:`StoreServices.release`)
and the engine.  The facade's methods and attributes are those of the services and the
context.

**Ladders.**  A store object serves one ladder (:mod:`podium.store.ladders`): ``default``
unless opened with ``ladder=``.  :meth:`Store.ladder` gives the store object of another
ladder of the same database -- its own context and services over the shared engine,
made once and closed with the object that opened the database -- and
:meth:`Store.create_ladder`, :meth:`Store.ladders`, :meth:`Store.set_ladder_settings`
manage them.  Writes to different ladders hold different locks (on PostgreSQL they run
concurrently), and each ladder keeps its own Rater cache, handle keys and explain
cache.

Ingesting a contest (or a batch) is one write transaction (see
:mod:`podium.store.engine`):

1. take the write lock and read ``meta`` (store id, epoch);
2. return "duplicate" when the contest id is stored with the same content
   (SHA-256 of the contest), refuse it when the content differs, refuse a
   contest older than the latest one unless ``recompute_from``;
3. get a Rater at the insertion point: the in-process cache when it is still
   valid (same store, same epoch, not ahead), else the newest snapshot at or
   before the point; then replay the stored standings up to the point
   (replaying is deterministic: a split run is bit-identical to one run);
4. rate the contest (and, for ``recompute_from``, every later contest again) with
   one ``Rater.extend`` call;
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

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self, TypeVar

import pandas as pd
from sqlalchemy import Engine

import podium.store.schema as S
from podium.beliefs import SeasonReset
from podium.core.contest import Contest
from podium.core.explain import Explanation
from podium.store.audit import AuditLog, AuditPage
from podium.store.common import (
    StoreContext,
    StoreHooks,
    content_hash,
    default_contest_id,
    fmt_time,
    prefix_upper_bound,
    resolve_system,
)
from podium.store.corrections import Corrections
from podium.store.engine import db_errors, display_url, dispose_engine, read_txn
from podium.store.explain import Explainer
from podium.store.export import EXPORT_CHUNK_ROWS, Exporter
from podium.store.ladders import LadderSettings, describe_ladders, find_ladder, read_settings
from podium.store.lifecycle import (
    create_context,
    create_ladder_context,
    ladder_context,
    open_context,
    open_or_create_context,
    upgrade_store,
    write_settings,
)
from podium.store.models import (
    ContestSummary,
    ContestView,
    CorrectionResult,
    IngestResult,
    LadderInfo,
    LeaderboardRow,
    PlayerView,
    SeasonInfo,
    UnknownLadderError,
)
from podium.store.queries import Queries
from podium.store.raters import RaterCache
from podium.store.rows import HandleCache
from podium.store.seasons import Seasons
from podium.store.smoothed import (
    PastChanges,
    SmoothedCurve,
    SmoothingStatus,
    past_changes,
    set_smoothing,
    smoothed_curve,
    smoothing_status,
)
from podium.store.tokens import ROLES, TokenIdentity, TokenInfo, TokenRegistry
from podium.store.writes import Writes
from podium.systems import RatingSystem

__all__ = ["Store", "StoreHooks", "StoreServices", "default_contest_id", "content_hash",
           "prefix_upper_bound", "fmt_time", "resolve_system"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _doc_of(owner: Callable[..., Any]) -> Callable[[_F], _F]:
    """Give the decorated facade method the docstring of the service method it calls."""
    def put(method: _F) -> _F:
        method.__doc__ = owner.__doc__
        return method

    return put


@dataclass(frozen=True)
class StoreServices:
    """The services of one store object, over one context (see the module notes for
    what each does and owns)."""

    context: StoreContext
    audit: AuditLog
    raters: RaterCache
    handles: HandleCache
    writes: Writes
    corrections: Corrections
    queries: Queries
    explain: Explainer
    tokens: TokenRegistry
    export: Exporter
    seasons: Seasons

    @classmethod
    def build(cls, ctx: StoreContext) -> StoreServices:
        """One service of each kind over ``ctx``, wired to the services it uses (the
        tokens, shared by every ladder, record into the store's audit log)."""
        audit = AuditLog(ctx)
        raters = RaterCache(ctx)
        handles = HandleCache(ctx.tables)
        writes = Writes(ctx, raters, handles, audit)
        return cls(context=ctx, audit=audit, raters=raters, handles=handles, writes=writes,
                   corrections=Corrections(writes), queries=Queries(ctx),
                   explain=Explainer(ctx, raters),
                   tokens=TokenRegistry(ctx, AuditLog(ctx, S.audit)),
                   export=Exporter(ctx), seasons=Seasons(writes))

    def release(self) -> None:
        """Drop what the services keep in memory: the Rater cache, the handle keys and
        the explain cache."""
        self.raters.release()
        self.handles.release()
        self.explain.release()
        self.writes.smoothing.release()


class Store:
    """A persistent, concurrently usable rating store (SQLAlchemy 2; SQLite or PostgreSQL).

    Use :meth:`create`, :meth:`open` or :meth:`open_or_create`; close with
    :meth:`close` or a ``with`` block.  Their keyword options:

    Parameters
    ----------
    snapshot_every:
        Write a snapshot of the rating state once this many contests were applied
        since the newest one; default: once 100 contests were and they hold as many
        player-rounds as the state holds players
        (:meth:`~podium.store.common.StoreOptions.snapshot_due`).
    snapshot_events:
        ... or once this many player-rounds were (default 500,000).
    keep_snapshots:
        How many snapshots to keep (the newest ones; default 2).
    cache:
        Keep the Rater of the latest state in memory between ingestions (default
        True).  Without it every ingestion starts from the newest snapshot.
    hooks:
        A callable called with the name of each stage a write transaction reaches
        (:data:`podium.store.common.StoreHooks`), inside the transaction: the crash
        tests stop the process there to kill it.  Default none.
    busy_timeout:
        Seconds a SQLite writer waits for another one (default 600).
    pool_size, max_overflow:
        The connection pool of the store's engine (PostgreSQL, SQLite files): connections
        kept open, and how many more may be opened under load (default ``None``:
        SQLAlchemy's 5 and 10).  See :func:`podium.store.engine.make_engine`.
    synchronous:
        A SQLite file's durability (:mod:`podium.store.engine`): ``"normal"`` (the
        default) keeps every committed write through a crash of the process (kill -9)
        and may lose the last ones, never half of one, in a power loss; ``"full"`` waits
        for the disk at every commit (an ``fsync``, milliseconds) so that a power loss
        loses nothing committed.  PostgreSQL ignores it (its ``synchronous_commit``
        decides).
    actor:
        Who this object's writes are recorded as in the audit log
        (:mod:`podium.store.audit`) outside an :func:`~podium.store.actor.acting_as`
        block (default: the process's, ``cli:USER`` or ``python:USER``).
    ladder:
        (``open``, ``create``, ``open_or_create``) The ladder this object serves (default
        ``default``); :meth:`ladder` gives the others.

    Attributes
    ----------
    services:
        The :class:`StoreServices` the methods delegate to.
    """

    def __init__(self, context: StoreContext, *, owner: Store | None = None) -> None:
        self.services = StoreServices.build(context)
        # the object that opened the database: it owns the engine and the other ladders'
        # objects (made by ladder()), and closes them all
        self._owner = self if owner is None else owner
        self._ladders: dict[str, Store] = {}
        self._ladders_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def _on_ladder(cls, ctx: StoreContext, ladder: str | None, system: str | None,
                   params: dict[str, Any] | None, create: bool) -> Self:
        """The store object of ``ladder`` over the engine of ``ctx`` (an open store): its
        context, made (with ``create``, rated with ``system``) when it does not exist."""
        try:
            if ladder is None or ladder == ctx.ladder.name:
                return cls(ctx)
            if not create:
                return cls(ladder_context(ctx, ladder))
            try:
                return cls(ladder_context(ctx, ladder))
            except UnknownLadderError:
                if system is None:
                    raise UnknownLadderError(
                        f"no ladder {ladder!r} in {display_url(ctx.url)}; give a rating "
                        "system to create it (--system NAME)", ladder) from None
            made = create_ladder_context(ctx, ladder, system, params, exist_ok=True)
            return cls(made)
        except BaseException:
            dispose_engine(ctx.engine)
            raise

    @classmethod
    def create(cls, url: str, system: str, params: dict[str, Any] | None = None,
               *, case_insensitive_handles: bool | None = None, ladder: str | None = None,
               **options: Any) -> Self:
        """Create the store (or upgrade its schema), recording ``system`` and ``params``;
        with ``ladder``, create that ladder (rated with them) in the store, which is
        opened or created (its ladder ``default`` then rated with them too).

        See :func:`podium.store.lifecycle.create_context` for what is checked.
        """
        if ladder is None:
            return cls(create_context(url, system, params,
                                      case_insensitive_handles=case_insensitive_handles,
                                      **options))
        ctx = open_or_create_context(url, system, params, check_system=False,
                                     case_insensitive_handles=case_insensitive_handles,
                                     **options)
        return cls._on_ladder(ctx, ladder, system, params, True)

    @classmethod
    def open(cls, url: str, *, case_insensitive_handles: bool | None = None,
             ladder: str | None = None, **options: Any) -> Self:
        """Open an existing store (its ladder ``ladder``, default ``default``); see
        :func:`podium.store.lifecycle.open_context`.

        Raises
        ------
        UnknownLadderError
            (a :class:`StoreError`) naming a ladder the store does not hold.
        """
        ctx = open_context(url, case_insensitive_handles=case_insensitive_handles, **options)
        return cls._on_ladder(ctx, ladder, None, None, False)

    @classmethod
    def open_or_create(cls, url: str, system: str | None = None,
                       params: dict[str, Any] | None = None, *, ladder: str | None = None,
                       **options: Any) -> Self:
        """Open the store at ``url``, creating it if absent (see
        :func:`podium.store.lifecycle.open_or_create_context`); with ``ladder``, its
        ladder of that name, created (rated with ``system`` and ``params``) on first use;
        an existing ladder must rate with them when they are given."""
        if ladder is None:
            return cls(open_or_create_context(url, system, params, **options))
        ctx = open_or_create_context(url, system, params, check_system=False, **options)
        return cls._on_ladder(ctx, ladder, system, params, True)

    @classmethod
    @_doc_of(upgrade_store)
    def upgrade(cls, url: str, *, busy_timeout: float = 600.0) -> tuple[int, int]:
        return upgrade_store(url, busy_timeout=busy_timeout)

    def close(self) -> None:
        """Drop what every service keeps in memory (the Rater cache, the handle keys, the
        explain cache); the object that opened the database also closes the objects of
        its other ladders and releases the database connections (the store object is
        unusable afterwards)."""
        self.services.release()
        if self._owner is not self:
            return
        with self._ladders_lock:
            others, self._ladders = list(self._ladders.values()), {}
        for other in others:
            other.services.release()
        dispose_engine(self.services.context.engine)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        ctx = self.services.context
        ladder = "" if ctx.ladder.pk == 0 else f", ladder={ctx.ladder.name!r}"
        return f"Store({display_url(ctx.url)!r}{ladder}, system={ctx.system_name!r})"

    # ------------------------------------------------------------------ ladders
    @property
    def ladder_name(self) -> str:
        """The name of the ladder this object serves."""
        return self.services.context.ladder.name

    def ladder(self, name: str) -> Store:
        """The store object of the ladder ``name`` of this database (this one for its own
        name): made once, sharing the engine, closed with the object that opened the
        database.

        Raises
        ------
        UnknownLadderError
            (a :class:`StoreError`, HTTP 404) naming the ladder when there is none of
            that name.
        """
        if name == self.ladder_name:
            return self
        owner = self._owner
        if name == owner.ladder_name:
            return owner
        with owner._ladders_lock:
            found = owner._ladders.get(name)
        if found is not None:
            return found
        made = Store(ladder_context(owner.services.context, name), owner=owner)
        with owner._ladders_lock:
            return owner._ladders.setdefault(name, made)

    def create_ladder(self, name: str, system: str, params: dict[str, Any] | None = None,
                      *, exist_ok: bool = False, **settings: Any) -> Store:
        """Create the ladder ``name`` of this database, rated with ``system`` and ``params``
        (``settings``: :class:`~podium.store.ladders.LadderSettings` by name), and return
        its store object; see :func:`podium.store.lifecycle.create_ladder_context`."""
        ctx = create_ladder_context(self._owner.services.context, name, system, params,
                                    LadderSettings(**settings), exist_ok=exist_ok)
        return self.ladder(ctx.ladder.name)

    def ladders(self) -> list[LadderInfo]:
        """Every ladder of the database (``default`` first, then by creation); see
        :func:`podium.store.ladders.describe_ladders`."""
        ctx = self.services.context
        with db_errors(ctx.url, "cannot list the ladders"), read_txn(ctx.engine) as conn:
            return describe_ladders(conn)

    def has_ladder(self, name: str) -> bool:
        """Whether the database holds a ladder called ``name``."""
        ctx = self.services.context
        with db_errors(ctx.url, "cannot read the ladders"), read_txn(ctx.engine) as conn:
            return find_ladder(conn, name) is not None

    def ladder_settings(self) -> LadderSettings:
        """This ladder's settings (:class:`~podium.store.ladders.LadderSettings`)."""
        ctx = self.services.context
        with read_txn(ctx.engine) as conn:
            return read_settings(conn, ctx.tables)

    @_doc_of(write_settings)
    def set_ladder_settings(self, **changes: Any) -> LadderSettings:
        return write_settings(self.services.context, **changes)

    @_doc_of(Seasons.new_season)
    def new_season(self, reset: str | SeasonReset | None = None, *,
                   time_seconds: int | None = None) -> SeasonInfo:
        return self.services.seasons.new_season(reset, time_seconds=time_seconds)

    @_doc_of(Seasons.seasons)
    def seasons(self) -> list[SeasonInfo]:
        return self.services.seasons.seasons()

    # ------------------------------------------------------------------ the context
    @property
    def engine(self) -> Engine:
        """The store's SQLAlchemy engine."""
        return self.services.context.engine

    @property
    def url(self) -> str:
        """The store's database URL."""
        return self.services.context.url

    @property
    def system_name(self) -> str:
        """The name of the store's rating system."""
        return self.services.context.system_name

    @property
    def params(self) -> dict[str, Any]:
        """The rating system's full parameters, as recorded in the store."""
        return self.services.context.params

    @property
    def system(self) -> RatingSystem:
        """The store's rating system."""
        return self.services.context.system

    @property
    def schema_version(self) -> int:
        """The store's schema version."""
        return self.services.context.schema_version

    @property
    def case_insensitive_handles(self) -> bool:
        """The store's handle policy (``True``: handles differing only by case are one
        player)."""
        return self.services.context.case_insensitive_handles

    @property
    def hooks(self) -> StoreHooks | None:
        """The test hook of the write transactions (``None``: none)."""
        return self.services.context.hooks

    @hooks.setter
    def hooks(self, hooks: StoreHooks | None) -> None:
        self.services.context.hooks = hooks

    @property
    def snapshot_every(self) -> int | None:
        """The ``snapshot_every`` option (``None``: the default policy)."""
        return self.services.context.options.snapshot_every

    @snapshot_every.setter
    def snapshot_every(self, value: int | None) -> None:
        self.services.context.options.snapshot_every = value

    @property
    def snapshot_events(self) -> int:
        """The ``snapshot_events`` option."""
        return self.services.context.options.snapshot_events

    @snapshot_events.setter
    def snapshot_events(self, value: int) -> None:
        self.services.context.options.snapshot_events = value

    @property
    def keep_snapshots(self) -> int:
        """The ``keep_snapshots`` option."""
        return self.services.context.options.keep_snapshots

    @keep_snapshots.setter
    def keep_snapshots(self, value: int) -> None:
        self.services.context.options.keep_snapshots = value

    @property
    def use_cache(self) -> bool:
        """The ``cache`` option."""
        return self.services.context.options.cache

    @use_cache.setter
    def use_cache(self, value: bool) -> None:
        self.services.context.options.cache = value

    @property
    def allow_future(self) -> bool:
        """The ``allow_future`` option."""
        return self.services.context.options.allow_future

    @allow_future.setter
    def allow_future(self, value: bool) -> None:
        self.services.context.options.allow_future = value

    @property
    def future_margin_s(self) -> float:
        """The ``future_margin_s`` option."""
        return self.services.context.options.future_margin_s

    @future_margin_s.setter
    def future_margin_s(self, value: float) -> None:
        self.services.context.options.future_margin_s = value

    @property
    def actor(self) -> str | None:
        """The ``actor`` option."""
        return self.services.context.options.actor

    @actor.setter
    def actor(self, value: str | None) -> None:
        self.services.context.options.actor = value

    # ------------------------------------------------------------------ writes
    @_doc_of(Writes.ingest)
    def ingest(self, contest: Contest, *, contest_id: str | None = None,
               recompute_from: bool = False, allow_future: bool | None = None) -> IngestResult:
        return self.services.writes.ingest(contest, contest_id=contest_id,
                                           recompute_from=recompute_from,
                                           allow_future=allow_future)

    @_doc_of(Writes.ingest_many)
    def ingest_many(self, contests: Sequence[Contest], *,
                    contest_ids: Sequence[str | None] | None = None,
                    allow_future: bool | None = None) -> list[IngestResult]:
        return self.services.writes.ingest_many(contests, contest_ids=contest_ids,
                                                allow_future=allow_future)

    @_doc_of(Writes.snapshot)
    def snapshot(self) -> bool:
        return self.services.writes.snapshot()

    @_doc_of(Corrections.delete)
    def delete(self, contest_id: str) -> CorrectionResult:
        return self.services.corrections.delete(contest_id)

    @_doc_of(Corrections.replace)
    def replace(self, contest: Contest, *, contest_id: str | None = None,
                allow_future: bool | None = None) -> CorrectionResult:
        return self.services.corrections.replace(contest, contest_id=contest_id,
                                                 allow_future=allow_future)

    # ------------------------------------------------------------------ reads
    @_doc_of(Queries.leaderboard)
    def leaderboard(self, *, offset: int = 0, limit: int = 50, active_since: int | None = None,
                    min_contests: int = 1, as_of: int | None = None,
                    include_provisional: bool | None = None,
                    season: int | None = None) -> list[LeaderboardRow]:
        return self.services.queries.leaderboard(
            offset=offset, limit=limit, active_since=active_since, min_contests=min_contests,
            as_of=as_of, include_provisional=include_provisional, season=season)

    @_doc_of(Queries.count_players)
    def count_players(self, *, min_rating: float | None = None,
                      max_rating: float | None = None, active_since: int | None = None,
                      as_of: int | None = None, include_provisional: bool | None = None,
                      season: int | None = None) -> int:
        return self.services.queries.count_players(
            min_rating=min_rating, max_rating=max_rating, active_since=active_since,
            as_of=as_of, include_provisional=include_provisional, season=season)

    @_doc_of(Queries.player)
    def player(self, handle: str, *, as_of: int | None = None) -> PlayerView | None:
        return self.services.queries.player(handle, as_of=as_of)

    @_doc_of(Queries.search_handles)
    def search_handles(self, prefix: str, limit: int = 10) -> list[str]:
        return self.services.queries.search_handles(prefix, limit)

    @_doc_of(Queries.contest)
    def contest(self, contest_id: str, *, offset: int = 0,
                limit: int | None = None) -> ContestView | None:
        return self.services.queries.contest(contest_id, offset=offset, limit=limit)

    @_doc_of(Queries.contests)
    def contests(self, *, offset: int = 0, limit: int = 50) -> list[ContestSummary]:
        return self.services.queries.contests(offset=offset, limit=limit)

    @_doc_of(Queries.handle_spellings)
    def handle_spellings(self, handles: Iterable[str]) -> dict[str, str]:
        return self.services.queries.handle_spellings(handles)

    @_doc_of(Queries.current_ratings)
    def current_ratings(self, handles: Sequence[str], *,
                        as_of: int | None = None) -> dict[str, tuple[float, float, int]]:
        return self.services.queries.current_ratings(handles, as_of=as_of)

    @_doc_of(Queries.stats)
    def stats(self) -> dict[str, Any]:
        return self.services.queries.stats()

    @_doc_of(Queries.ratings_frame)
    def ratings_frame(self) -> pd.DataFrame:
        return self.services.queries.ratings_frame()

    @_doc_of(Queries.lookup_contests)
    def lookup_contests(self, contest_ids: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        return self.services.queries.lookup_contests(contest_ids)

    @_doc_of(Queries.latest_contest)
    def latest_contest(self) -> ContestSummary | None:
        return self.services.queries.latest_contest()

    @_doc_of(Queries.contest_ids)
    def contest_ids(self) -> list[str]:
        return self.services.queries.contest_ids()

    @_doc_of(Explainer.explain)
    def explain(self, contest_id: str, handle: str) -> Explanation:
        return self.services.explain.explain(contest_id, handle)

    @_doc_of(Exporter.export)
    def export(self, what: str, fmt: str = "csv", *,
               chunk_rows: int = EXPORT_CHUNK_ROWS, csv_safe: bool = False) -> Iterator[bytes]:
        return self.services.export.export(what, fmt, chunk_rows=chunk_rows, csv_safe=csv_safe)

    @_doc_of(AuditLog.read)
    def audit(self, *, offset: int = 0, limit: int = 50, action: str | None = None,
              contest_id: str | None = None) -> AuditPage:
        return self.services.audit.read(offset=offset, limit=limit, action=action,
                                        contest_id=contest_id)

    # ------------------------------------------------------------------ smoothed companion
    @_doc_of(set_smoothing)
    def set_smoothing(self, system: str | None,
                      params: dict[str, Any] | None = None) -> SmoothingStatus | None:
        return set_smoothing(self.services.writes, system, params)

    @_doc_of(smoothing_status)
    def smoothing(self) -> SmoothingStatus | None:
        return smoothing_status(self.services.context)

    @_doc_of(smoothed_curve)
    def smoothed_curve(self, handle: str) -> SmoothedCurve | None:
        return smoothed_curve(self.services.context, handle)

    @_doc_of(past_changes)
    def past_changes(self, handle: str) -> PastChanges | None:
        return past_changes(self.services.context, handle)

    # ------------------------------------------------------------------ tokens
    @_doc_of(TokenRegistry.create_token)
    def create_token(self, name: str, role: str,
                     ladders: Sequence[str] | None = None) -> str:
        return self.services.tokens.create_token(name, role, ladders)

    @_doc_of(TokenRegistry.tokens)
    def tokens(self) -> list[TokenInfo]:
        return self.services.tokens.tokens()

    @_doc_of(TokenRegistry.revoke_token)
    def revoke_token(self, name: str) -> TokenInfo:
        return self.services.tokens.revoke_token(name)

    @_doc_of(TokenRegistry.check_token)
    def check_token(self, secret: str) -> TokenIdentity | None:
        return self.services.tokens.check_token(secret)

    @_doc_of(TokenRegistry.count_tokens)
    def count_tokens(self, *, roles: tuple[str, ...] = ROLES) -> int:
        return self.services.tokens.count_tokens(roles=roles)
