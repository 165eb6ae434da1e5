"""The persistent store of the live rating service (SQLite or PostgreSQL).

Design
------
The database is the source of truth for contests, standings, players and rating
events (see :mod:`podium.store.schema`).  The rating system's complete state
(per-player arrays beyond ``mu, sigma``: Elo-MMR's performance history,
TopCoder's volatility, ...) lives in a :class:`~podium.rater.Rater`; the store
keeps *snapshots* of it (:mod:`podium.store.snapshot`) as derived data, each
tagged with the number of contests it covers.

The class is composed of three layers, one module each, over the state they share
(:class:`podium.store.common.StoreBase`):

* :mod:`podium.store.lifecycle` -- ``create``, ``open``, ``open_or_create``,
  ``upgrade`` (schema migrations), ``close``;
* :mod:`podium.store.writes` -- ``ingest``, ``ingest_many`` (a batch in one
  transaction), ``snapshot``; it reaches a Rater's internals only through
  :mod:`podium.store.rating`;
* :mod:`podium.store.queries` -- the reads;
* :mod:`podium.store.explain` -- ``explain`` (why a stored rating changed).

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

from podium.store.common import (
    StoreHooks,
    content_hash,
    default_contest_id,
    fmt_time,
    prefix_upper_bound,
    resolve_system,
)
from podium.store.corrections import StoreCorrections
from podium.store.explain import StoreExplain
from podium.store.export import StoreExport
from podium.store.lifecycle import StoreLifecycle
from podium.store.queries import StoreQueries
from podium.store.tokens import StoreTokens
from podium.store.writes import StoreWrites

__all__ = ["Store", "StoreHooks", "default_contest_id", "content_hash", "prefix_upper_bound",
           "fmt_time", "resolve_system"]


class Store(StoreLifecycle, StoreExplain, StoreCorrections, StoreWrites, StoreQueries,
            StoreTokens, StoreExport):
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
    """
