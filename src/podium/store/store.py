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
=====================  ===========================================  =====================

A service reaches another only through its public methods: the corrections drop the
Rater cache with ``raters.invalidate`` and restore a Rater with ``raters.from_snapshot``,
the explanations ask ``raters.rater_from_store`` for the Rater before a contest, and
every write stages what it keeps in memory (``raters.stage``, ``handles.stage``), taken
over by ``writes.run_write`` once the transaction committed.  Creating, opening and
migrating a store are the functions of :mod:`podium.store.lifecycle`, which return the
context; :meth:`Store.close` releases every service's state (:meth:`StoreServices.release`)
and the engine.  The facade's methods and attributes are those of the services and the
context.  Several leaderboards in one database would be one context and one set of
services each.

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

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self, TypeVar

import pandas as pd
from sqlalchemy import Engine

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
from podium.store.engine import display_url
from podium.store.explain import Explainer
from podium.store.export import EXPORT_CHUNK_ROWS, Exporter
from podium.store.lifecycle import (
    create_context,
    open_context,
    open_or_create_context,
    upgrade_store,
)
from podium.store.models import (
    ContestSummary,
    ContestView,
    CorrectionResult,
    IngestResult,
    LeaderboardRow,
    PlayerView,
)
from podium.store.queries import Queries
from podium.store.raters import RaterCache
from podium.store.rows import HandleCache
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

    @classmethod
    def build(cls, ctx: StoreContext) -> StoreServices:
        """One service of each kind over ``ctx``, wired to the services it uses."""
        audit = AuditLog(ctx)
        raters = RaterCache(ctx)
        handles = HandleCache()
        writes = Writes(ctx, raters, handles, audit)
        return cls(context=ctx, audit=audit, raters=raters, handles=handles, writes=writes,
                   corrections=Corrections(writes), queries=Queries(ctx),
                   explain=Explainer(ctx, raters), tokens=TokenRegistry(ctx, audit),
                   export=Exporter(ctx))

    def release(self) -> None:
        """Drop what the services keep in memory: the Rater cache, the handle keys and
        the explain cache."""
        self.raters.release()
        self.handles.release()
        self.explain.release()


class Store:
    """A persistent, concurrently usable rating store (SQLAlchemy 2; SQLite or PostgreSQL).

    Use :meth:`create`, :meth:`open` or :meth:`open_or_create`; close with
    :meth:`close` or a ``with`` block.  Their keyword options:

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
    actor:
        Who this object's writes are recorded as in the audit log
        (:mod:`podium.store.audit`) outside an :func:`~podium.store.actor.acting_as`
        block (default: the process's, ``cli:USER`` or ``python:USER``).

    Attributes
    ----------
    services:
        The :class:`StoreServices` the methods delegate to.
    """

    def __init__(self, context: StoreContext) -> None:
        self.services = StoreServices.build(context)

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    @_doc_of(create_context)
    def create(cls, url: str, system: str, params: dict[str, Any] | None = None,
               *, case_insensitive_handles: bool | None = None, **options: Any) -> Self:
        return cls(create_context(url, system, params,
                                  case_insensitive_handles=case_insensitive_handles, **options))

    @classmethod
    @_doc_of(open_context)
    def open(cls, url: str, *, case_insensitive_handles: bool | None = None,
             **options: Any) -> Self:
        return cls(open_context(url, case_insensitive_handles=case_insensitive_handles,
                                **options))

    @classmethod
    @_doc_of(open_or_create_context)
    def open_or_create(cls, url: str, system: str | None = None,
                       params: dict[str, Any] | None = None, **options: Any) -> Self:
        return cls(open_or_create_context(url, system, params, **options))

    @classmethod
    @_doc_of(upgrade_store)
    def upgrade(cls, url: str, *, busy_timeout: float = 600.0) -> tuple[int, int]:
        return upgrade_store(url, busy_timeout=busy_timeout)

    def close(self) -> None:
        """Drop what every service keeps in memory (the Rater cache, the handle keys, the
        explain cache) and release the database connections (the store object is
        unusable afterwards)."""
        self.services.release()
        self.services.context.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        ctx = self.services.context
        return f"Store({display_url(ctx.url)!r}, system={ctx.system_name!r})"

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
    def snapshot_every(self) -> int:
        """The ``snapshot_every`` option."""
        return self.services.context.options.snapshot_every

    @snapshot_every.setter
    def snapshot_every(self, value: int) -> None:
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
                    min_contests: int = 1) -> list[LeaderboardRow]:
        return self.services.queries.leaderboard(offset=offset, limit=limit,
                                                 active_since=active_since,
                                                 min_contests=min_contests)

    @_doc_of(Queries.count_players)
    def count_players(self, *, min_rating: float | None = None,
                      max_rating: float | None = None, active_since: int | None = None) -> int:
        return self.services.queries.count_players(min_rating=min_rating,
                                                   max_rating=max_rating,
                                                   active_since=active_since)

    @_doc_of(Queries.player)
    def player(self, handle: str) -> PlayerView | None:
        return self.services.queries.player(handle)

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
    def current_ratings(self, handles: Sequence[str]) -> dict[str, tuple[float, float, int]]:
        return self.services.queries.current_ratings(handles)

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

    # ------------------------------------------------------------------ tokens
    @_doc_of(TokenRegistry.create_token)
    def create_token(self, name: str, role: str) -> str:
        return self.services.tokens.create_token(name, role)

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
