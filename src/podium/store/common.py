"""What the store's layers share: contest ids and hashes, parameter checks, and the
state every :class:`~podium.store.Store` holds (:class:`StoreBase`).

The :class:`~podium.store.Store` is composed of three layers, one module each:
:mod:`podium.store.lifecycle` (creating, opening, migrating, closing),
:mod:`podium.store.writes` (ingestion, recomputation, snapshots) and
:mod:`podium.store.queries` (reads).  They all derive from :class:`StoreBase`.
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
from podium.store.engine import display_url
from podium.store.models import StoreError
from podium.systems import RatingSystem, get_system

__all__ = ["StoreBase", "StoreHooks", "default_contest_id", "content_hash",
           "prefix_upper_bound", "fmt_time", "resolve_system", "same_params",
           "POLICY_EXACT", "POLICY_INSENSITIVE", "CI_HANDLE_INDEX"]

#: A test hook: called with the name of each stage a write transaction reaches
#: (``"locked"``, ``"rated"``, ``"standings"``, ``"events"``, ``"players"``,
#: ``"snapshot"``, ``"commit"``; for a recomputation also ``"recompute-cleared"`` and
#: ``"recompute-contest"``), inside the transaction.  The crash tests pass one that
#: stops the process there so that it can be killed mid-transaction.
StoreHooks = Callable[[str], None]

_META_Q = select(S.meta.c.key, S.meta.c.value)

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


def content_hash(contest: Contest) -> str:
    """SHA-256 of the contest's canonical JSON (name, url, time, weight, ceiling, standings)."""
    doc = json.dumps(contest.to_json_dict(), sort_keys=True, allow_nan=True,
                     separators=(",", ":"), ensure_ascii=False)
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
    """Build the system (ConfigError for unknown names/parameters) and its full parameters."""
    sysobj = get_system(system, **(params or {}))
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


@dataclass
class Meta:
    """The ``meta`` rows a write transaction needs."""

    store_id: str
    epoch: int
    revision: int


class StoreBase:
    """The state of a store object, shared by its layers.

    Parameters
    ----------
    engine, url:
        The store's engine (:func:`podium.store.engine.make_engine`) and its URL.
    system_name, params:
        The rating system and its full parameters, as recorded in the store.
    schema_version:
        The store's schema version.
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
        A test hook called with the name of each stage of a write transaction
        (:data:`StoreHooks`); default none.
    case_insensitive_handles:
        The store's handle policy, as recorded in its metadata (``meta.handle_policy``).
    allow_future:
        Accept contests dated more than ``future_margin_s`` after the clock
        (simulations, scheduled contests); default False.  The range 1970..2200
        always holds (:func:`podium.store.checks.check_contest`).
    future_margin_s:
        How far after the clock a contest may be dated (default one day).
    """

    def __init__(self, engine: Engine, url: str, *, system_name: str, params: dict[str, Any],
                 schema_version: int, snapshot_every: int = 100,
                 snapshot_events: int = 500_000, keep_snapshots: int = 2,
                 cache: bool = True, hooks: StoreHooks | None = None,
                 case_insensitive_handles: bool = False, allow_future: bool = False,
                 future_margin_s: float = DEFAULT_FUTURE_MARGIN_S) -> None:
        if snapshot_every < 1 or snapshot_events < 1 or keep_snapshots < 1:
            raise ValueError("snapshot_every, snapshot_events and keep_snapshots must be >= 1")
        if hooks is not None and not callable(hooks):
            raise TypeError(f"hooks must be a callable taking a stage name, got {hooks!r}")
        if not (isinstance(future_margin_s, int | float) and math.isfinite(future_margin_s)
                and future_margin_s >= 0):
            raise ValueError(f"future_margin_s must be a finite number >= 0, got "
                             f"{future_margin_s!r}")
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
        self.hooks = hooks
        self.case_insensitive_handles = bool(case_insensitive_handles)
        self.allow_future = bool(allow_future)
        self.future_margin_s = float(future_margin_s)
        self._lock = threading.RLock()

    def _release(self) -> None:
        """Drop what the layers keep in memory (called by ``close``)."""

    def _hook(self, stage: str) -> None:
        """Call the test hook (if any) with ``stage``."""
        if self.hooks is not None:
            self.hooks(stage)

    @staticmethod
    def _meta_map(conn: Connection) -> dict[str, str]:
        return {k: v for k, v in conn.execute(_META_Q).all()}

    def _read_meta(self, conn: Connection) -> Meta:
        """The store's id, epoch and revision; checks that the store is still the one
        this object opened (schema version and system)."""
        stored = self._meta_map(conn)
        try:
            version = int(stored.get("schema_version", "0"))
            m = Meta(stored["store_id"], int(stored["epoch"]), int(stored["revision"]))
        except (KeyError, ValueError) as exc:
            raise StoreError(f"{display_url(self.url)}: damaged store metadata ({exc})") from None
        policy = stored.get("handle_policy", POLICY_EXACT)
        if (version != self.schema_version or stored.get("system") != self.system_name
                or (policy == POLICY_INSENSITIVE) != self.case_insensitive_handles):
            raise StoreError(
                f"{display_url(self.url)} changed under this process (schema version {version}, "
                f"system {stored.get('system')!r}, {policy} handles); open it again"
            )
        return m
