"""What the store's services share: contest ids and hashes, parameter checks, and the
context every service of a :class:`~podium.store.Store` is built over
(:class:`StoreContext`).

A :class:`~podium.store.Store` is a facade over one service object per concern (see
:mod:`podium.store.store` for the list and which state each one owns).  The services
share only the :class:`StoreContext`: the database (engine and URL), the rating system
and its parameters, the options (:class:`StoreOptions`), the test hooks and the write
lock.  What a service keeps in memory (the Rater cache, the handle keys, the explain
cache) is its own, reached by the others through its public methods only.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, Connection, Engine, Index, MetaData, Table, select

import podium.store.schema as S
from podium.core.contest import Contest
from podium.core.guards import DEFAULT_FUTURE_MARGIN_S
from podium.errors import ConfigError
from podium.store.actor import check_actor
from podium.store.bulk import fetch
from podium.store.engine import LOCK_KEY, display_url
from podium.store.models import DEFAULT_LADDER, Ladder, StoreError
from podium.systems import RatingSystem, get_system

__all__ = ["StoreContext", "StoreOptions", "StoreHooks", "STORE_OPTIONS", "Meta", "meta_map",
           "check_hooks", "chunks", "default_contest_id", "content_hash", "json_params",
           "prefix_upper_bound", "fmt_time", "resolve_system", "same_params",
           "POLICY_EXACT", "POLICY_INSENSITIVE", "CI_HANDLE_INDEX", "SNAPSHOT_CONTESTS",
           "SMOOTHING_KEY"]

#: A test hook: called with the name of each stage a write transaction reaches
#: (``"locked"``, ``"rated"``, ``"standings"``, ``"events"``, ``"players"``,
#: ``"snapshot"``, ``"commit"``; for a recomputation also ``"recompute-cleared"`` and
#: ``"recompute-contest"``), inside the transaction.  The crash tests pass one that
#: stops the process there so that it can be killed mid-transaction.
StoreHooks = Callable[[str], None]

_META_Q = select(S.meta.c.key, S.meta.c.value)

#: The keyword options of a store object (:class:`StoreOptions`, plus ``hooks``).
STORE_OPTIONS = ("snapshot_every", "snapshot_events", "keep_snapshots", "cache", "hooks",
                 "allow_future", "future_margin_s", "actor", "explain_cache_s",
                 "max_explain_replay")

#: ``meta.handle_policy`` of a store whose handles are compared exactly (the default,
#: and every store created before the policy existed).
POLICY_EXACT = "exact"
#: ``meta.handle_policy`` of a store in which handles that differ only by case are one
#: player (:func:`podium.core.guards.handle_key`).
POLICY_INSENSITIVE = "case-insensitive"

# A unique index on players.handle_key, created in case-insensitive stores only (so not
# part of schema.players): the database itself then refuses a second spelling.
_ci_players = Table("players", MetaData(), Column("handle_key", S.handle_type()))
CI_HANDLE_INDEX = Index("ux_players_handle_key_ci", _ci_players.c.handle_key, unique=True)

#: The ``meta`` row of a ladder's smoothed companion (its system and parameters, JSON;
#: :mod:`podium.store.smoothing`): a ladder has a companion when it holds this row.
SMOOTHING_KEY = "smoothing"

#: The contests between two snapshots, at least, under the default policy
#: (:meth:`StoreOptions.snapshot_due`).
SNAPSHOT_CONTESTS = 100

#: Rows per ``IN (...)`` list (SQLite's historical limit on bound parameters is 999).
IN_CHUNK = 500


def default_contest_id(contest: Contest) -> str:
    """The id a contest is stored under by default: its url, else its name."""
    cid = contest.url if contest.url else contest.name
    if not cid:
        raise StoreError(
            f"contest {contest.label!r} at time {contest.time_seconds} has neither url nor "
            "name to identify it; give it a name or pass contest_id"
        )
    return cid


# the canonical JSON of a contest's content (what json.dumps with these options writes;
# one encoder, not one per call: every write hashes its contests)
_CANONICAL = json.JSONEncoder(sort_keys=True, allow_nan=True, separators=(",", ":"),
                              ensure_ascii=False)


def content_hash(contest: Contest) -> str:
    """SHA-256 of the contest's canonical JSON (name, url, time, weight, ceiling, standings)."""
    doc = _CANONICAL.encode(contest.to_json_dict())
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()


def fmt_time(t: int) -> str:
    """``t`` (unix seconds) as a UTC date and time for messages."""
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"t={t}"


def json_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as they come back from JSON (tuples become lists)."""
    return json.loads(json.dumps(params, allow_nan=True))  # type: ignore[no-any-return]


def same_params(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two parameter dicts are equal (NaN equal to NaN, tuples to lists)."""
    def norm(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        return v

    return {k: norm(v) for k, v in a.items()} == {k: norm(v) for k, v in b.items()}


def resolve_system(system: str,
                   params: dict[str, Any] | None) -> tuple[RatingSystem, dict[str, Any]]:
    """Build the system (ConfigError for unknown names/parameters, and for a
    whole-history system, naming ``podium smooth``) and its full parameters."""
    try:
        sysobj = get_system(system, **(params or {}))
    except ConfigError:
        from podium.history.engines import is_history_system

        if not is_history_system(system):
            raise
        raise ConfigError(
            f"{system!r} is a whole-history system: a ladder is rated by a filter, and a "
            "whole-history system can be its smoothed companion; create the ladder with a "
            f"filter (e.g. --system mmr), then run podium smooth --system {system}"
        ) from None
    return sysobj, json_params(sysobj.params())


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


def chunks(seq: Sequence[Any], n: int = IN_CHUNK) -> Iterator[Sequence[Any]]:
    """``seq`` in slices of at most ``n`` items (for ``IN (...)`` lists)."""
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def meta_map(conn: Connection, table: Table | None = None) -> dict[str, str]:
    """Every row of a ladder's ``meta`` table (default: the store's, which is also the
    ladder ``default``'s), ``key -> value``."""
    if table is None or table is S.meta:
        return {k: v for k, v in conn.execute(_META_Q).all()}
    return {k: v for k, v in conn.execute(select(table.c.key, table.c.value)).all()}


@dataclass
class Meta:
    """The ``meta`` rows a write transaction needs: the ladder's id, epoch, revision and
    settings (JSON, :class:`podium.store.ladders.LadderSettings`)."""

    store_id: str
    epoch: int
    revision: int
    settings: str = "{}"
    #: Whether the ladder has a smoothed companion (its :data:`SMOOTHING_KEY` row): a
    #: write of a ladder without one skips the companion's own read of ``meta``.
    smoothed: bool = False


@dataclass
class StoreOptions:
    """The keyword options of a store object (checked when it is made).

    Parameters
    ----------
    snapshot_every:
        Write a snapshot of the rating state once this many contests were applied
        since the newest one.  Default (``None``): once :data:`SNAPSHOT_CONTESTS` (100)
        contests were *and* they hold as many player-rounds as the rating state holds
        players -- a snapshot costs what the state costs to write, so many small
        contests (eight-player matches among thousands of players) are replayed, not
        snapshot every 100 (:meth:`snapshot_due`).
    snapshot_events:
        ... or once this many player-rounds were (default 500,000).
    keep_snapshots:
        How many snapshots to keep (the newest ones; default 2).
    cache:
        Keep the Rater of the latest state in memory between ingestions (default
        True).  Without it every ingestion starts from the newest snapshot.
    allow_future:
        Accept contests dated more than ``future_margin_s`` after the clock
        (simulations, scheduled contests); default False.  The range 1970..2200
        always holds (:func:`podium.store.checks.check_contest`).
    future_margin_s:
        How far after the clock a contest may be dated (default one day).
    actor:
        Who the store object's writes are recorded as in the audit log outside an
        :func:`~podium.store.actor.acting_as` block (default ``None``: the process's).
    explain_cache_s:
        Seconds a Rater built for an explanation is kept after its last use (default
        60); then it is dropped and its memory given back to the system.
    max_explain_replay:
        The most player-rounds one explanation may replay after the nearest snapshot
        (default 1,000,000, twice ``snapshot_events``); an explanation that would
        replay more is refused (:class:`~podium.store.explain.ExplainTooCostly`).  A
        store that keeps every snapshot (``keep_snapshots``) serves every contest
        within ``snapshot_events`` player-rounds.
    """

    snapshot_every: int | None = None
    snapshot_events: int = 500_000
    keep_snapshots: int = 2
    cache: bool = True
    allow_future: bool = False
    future_margin_s: float = DEFAULT_FUTURE_MARGIN_S
    actor: str | None = None
    explain_cache_s: float = 60.0
    max_explain_replay: int = 1_000_000

    def __post_init__(self) -> None:
        if ((self.snapshot_every is not None and self.snapshot_every < 1)
                or self.snapshot_events < 1 or self.keep_snapshots < 1):
            raise ValueError("snapshot_every, snapshot_events and keep_snapshots must be >= 1")
        if not (isinstance(self.explain_cache_s, int | float)
                and 0 <= self.explain_cache_s <= 86_400):
            raise ValueError(f"explain_cache_s must be in 0..86400 seconds, got "
                             f"{self.explain_cache_s!r}")
        if isinstance(self.max_explain_replay, bool) or not isinstance(
                self.max_explain_replay, int) or self.max_explain_replay < 0:
            raise ValueError(f"max_explain_replay must be an integer >= 0, got "
                             f"{self.max_explain_replay!r}")
        margin = self.future_margin_s
        if not (isinstance(margin, int | float) and math.isfinite(margin) and margin >= 0):
            raise ValueError(f"future_margin_s must be a finite number >= 0, got {margin!r}")
        self.allow_future = bool(self.allow_future)
        self.future_margin_s = float(margin)
        if self.actor is not None:
            self.actor = check_actor(self.actor)

    def snapshot_due(self, since: int, events: int, players: int) -> bool:
        """Whether a snapshot is due after ``since`` contests holding ``events``
        player-rounds (of rated contests) were applied since the newest one, the rating
        state then holding ``players`` players (see ``snapshot_every``)."""
        if since <= 0:
            return False
        if events >= self.snapshot_events:
            return True
        if self.snapshot_every is not None:
            return since >= self.snapshot_every
        return since >= SNAPSHOT_CONTESTS and events >= players


def check_hooks(hooks: object) -> StoreHooks | None:
    """``hooks`` if it is ``None`` or callable, else :class:`TypeError`."""
    if hooks is not None and not callable(hooks):
        raise TypeError(f"hooks must be a callable taking a stage name, got {hooks!r}")
    return hooks  # type: ignore[return-value]


class StoreContext:
    """What every service of a store object shares: one store, one rating system.

    The services of a :class:`~podium.store.Store` (:mod:`podium.store.store`) are built
    over one context and keep their own state; they read the database, the system and
    the options from here, call :meth:`hook` at the stages of a write and hold
    :attr:`write_lock` while they write.

    Parameters
    ----------
    engine, url:
        The store's engine (:func:`podium.store.engine.make_engine`) and its URL.
    system_name, params:
        The rating system and its full parameters, as recorded in the store.
    schema_version:
        The store's schema version.
    case_insensitive_handles:
        The store's handle policy, as recorded in its metadata (``meta.handle_policy``).
    options:
        The store object's options (:class:`StoreOptions`).
    hooks:
        A test hook called with the name of each stage of a write transaction
        (:data:`StoreHooks`); default none.
    ladder:
        The ladder (default: ``default``): its tables (:attr:`tables`) and its write lock
        (:attr:`lock_key`).

    Notes
    -----
    Everything that belongs to one leaderboard is here or in a service built over a
    context: the system and its parameters, the ladder's tables, the write lock (writes
    to one ladder are serialised; writes to two ladders are not, on PostgreSQL), and
    the Rater cache, handle keys and explain cache of the services.  The ladders of one
    database are one context each -- sharing the engine, URL, options and hooks -- with
    one set of services over each (:meth:`podium.store.Store.ladder`).
    """

    def __init__(self, engine: Engine, url: str, *, system_name: str, params: dict[str, Any],
                 schema_version: int, case_insensitive_handles: bool = False,
                 options: StoreOptions | None = None, hooks: StoreHooks | None = None,
                 ladder: Ladder | None = None) -> None:
        self.engine = engine
        self.url = url
        self.ladder = DEFAULT_LADDER if ladder is None else ladder
        #: The ladder's tables.
        self.tables: S.LadderTables = S.ladder_tables(self.ladder.prefix)
        #: The PostgreSQL advisory lock of the ladder's writes.
        self.lock_key = LOCK_KEY + self.ladder.pk
        # the ladder's meta rows, and for a ladder other than default the store's schema
        # version, in one query
        self._meta_sql = f'SELECT "key", "value" FROM "{self.tables.meta.name}"'
        if self.ladder.pk != 0:
            self._meta_sql += (f' UNION ALL SELECT "key", "value" FROM "{S.meta.name}" '
                               "WHERE \"key\" = 'schema_version'")
        self.system_name = system_name
        self.params: dict[str, Any] = params
        self.system: RatingSystem = get_system(system_name, **params)
        self.schema_version = schema_version
        self.case_insensitive_handles = bool(case_insensitive_handles)
        self.options = StoreOptions() if options is None else options
        self.hooks = check_hooks(hooks)
        #: Held by every write transaction of this context (re-entrant).
        self.write_lock = threading.RLock()

    def hook(self, stage: str) -> None:
        """Call the test hook (if any) with ``stage``."""
        if self.hooks is not None:
            self.hooks(stage)

    @property
    def where(self) -> str:
        """The database and, for a ladder other than ``default``, the ladder, for
        messages."""
        shown = display_url(self.url)
        if self.ladder.pk == 0:
            return shown
        return f"{shown}, ladder {self.ladder.name!r}"

    def read_meta(self, conn: Connection) -> Meta:
        """The ladder's id, epoch and revision; checks that the store is still the one
        this context was opened on (schema version, system and handle policy).  One
        query through the driver's cursor (every write runs it)."""
        stored = dict(fetch(conn, self._meta_sql))
        try:
            version = int(stored.get("schema_version", "0"))
            m = Meta(stored["store_id"], int(stored["epoch"]), int(stored["revision"]),
                     stored.get("settings", "{}"), SMOOTHING_KEY in stored)
        except (KeyError, ValueError) as exc:
            raise StoreError(f"{self.where}: damaged store metadata ({exc})") from None
        policy = stored.get("handle_policy", POLICY_EXACT)
        if (version != self.schema_version or stored.get("system") != self.system_name
                or (policy == POLICY_INSENSITIVE) != self.case_insensitive_handles):
            raise StoreError(
                f"{self.where} changed under this process (schema version {version}, "
                f"system {stored.get('system')!r}, {policy} handles); open it again"
            )
        return m
