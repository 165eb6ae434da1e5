"""The audit log of a store: one row per write, in the write's own transaction.

Every write of a :class:`~podium.store.Store` records who made it (the *actor*, see
:mod:`podium.store.actor`), what (the ``action``), when (unix seconds, fractional), the
contest it concerns (its id and the SHA-256 of its content, :func:`content_hash`), the
store's ``revision`` after the write and a JSON ``detail``:

=================  ==========================================================
action             written by
=================  ==========================================================
``ingest``         :meth:`Store.ingest` / :meth:`Store.ingest_many` (and so
                   ``podium ingest`` and ``POST /api/contests``): one row per
                   applied contest (a duplicate changes nothing and is not
                   recorded); ``detail``: ``index`` (its chronological
                   position) and ``players``
``recompute``      an older contest inserted with ``recompute_from``; ``detail``:
                   ``index``, ``players``, ``rerated`` (later contests re-rated)
``token-create``   :meth:`Store.create_token`; ``detail``: ``name``, ``role``
``token-revoke``   :meth:`Store.revoke_token`; ``detail``: ``name``, ``role``
``ladder-create``  :meth:`Store.create_ladder`; ``detail``: ``ladder``,
                   ``system``
``ladder-set``     :meth:`Store.set_ladder_settings`; ``detail``: the settings
``season``         :meth:`Store.new_season`: the boundary's id; ``detail``:
                   ``season``, ``reset``, ``players``
=================  ==========================================================

Each ladder has its own audit log (its ``audit`` table): the writes of its contests,
corrections, settings and seasons.  What concerns the whole store -- tokens, the
creation of ladders -- is in the store's log, which is also the ladder ``default``'s.

The row is inserted by the same connection, inside the same transaction, as the write:
both are committed or neither (a crash at any point leaves neither).  A write path
adds its row with :meth:`AuditLog.record` (one row) or :meth:`AuditLog.record_many`
(one per contest of a batch).

:meth:`AuditLog.read` (``Store.audit``) reads the log newest first, paged and filtered
by action or contest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Table, func, select

from podium.core.guards import storable_text
from podium.store.actor import current_actor
from podium.store.bulk import insert_rows
from podium.store.common import StoreContext
from podium.store.engine import read_txn
from podium.store.models import StoreError

__all__ = ["AUDIT_ACTIONS", "AuditEntry", "AuditLog", "AuditPage"]

#: The actions a store records (a later version may add more).
AUDIT_ACTIONS = ("ingest", "recompute", "delete", "replace", "token-create",
                 "token-revoke", "ladder-create", "ladder-set", "season")
_COLS = ("time", "actor", "action", "contest_id", "content_hash", "revision", "detail")
# a row's detail as JSON (json.dumps(detail, sort_keys=True, allow_nan=False); one encoder,
# not one per row)
_DETAIL = json.JSONEncoder(sort_keys=True, allow_nan=False)

#: Most rows one :meth:`AuditLog.read` call returns.
MAX_AUDIT_LIMIT = 1000


@dataclass(frozen=True)
class AuditEntry:
    """One audit row.

    Attributes
    ----------
    id:
        The row's key: increasing with every write (newest largest).
    time:
        Unix time of the write (seconds, fractional).
    actor:
        Who wrote (``token:NAME (ROLE)``, ``cli:USER``, ...).
    action:
        What (see :data:`AUDIT_ACTIONS`).
    contest_id, content_hash:
        The contest concerned, and the SHA-256 of its content; ``None`` for a write
        that concerns no contest (token management).
    revision:
        The store's ``meta.revision`` after the write.
    detail:
        Further facts (a JSON object), or ``None``.
    """

    id: int
    time: float
    actor: str
    action: str
    contest_id: str | None
    content_hash: str | None
    revision: int | None
    detail: dict[str, Any] | None


@dataclass(frozen=True)
class AuditPage:
    """A page of the audit log, newest first: ``entries`` from ``offset``, of ``total``
    rows matching the filters."""

    offset: int
    limit: int
    total: int
    entries: list[AuditEntry]


class AuditLog:
    """Recording and reading the audit log of a store context; see the module notes.

    The actor of a write is resolved when it is recorded (:func:`current_actor`), from
    the store's ``actor`` option (:attr:`StoreOptions.actor
    <podium.store.common.StoreOptions>`) outside an :func:`~podium.store.actor.acting_as`
    block.
    """

    def __init__(self, ctx: StoreContext, table: Table | None = None) -> None:
        self.ctx = ctx
        #: The audit table written and read: the ladder's (default), or the store's.
        self.table = ctx.tables.audit if table is None else table

    # ------------------------------------------------------------------ writing
    def record(self, conn: Connection, action: str, *, revision: int | None,
               contest_id: str | None = None, content_hash: str | None = None,
               detail: dict[str, Any] | None = None) -> None:
        """Add one audit row inside the write transaction of ``conn``.

        Parameters
        ----------
        conn:
            The connection of the write transaction (the row commits with the write).
        action:
            What was done (``"ingest"``, ``"delete"``, ...).
        revision:
            The store's ``meta.revision`` after the write.
        contest_id, content_hash:
            The contest concerned and the SHA-256 of its content (``None``: none).
        detail:
            JSON-serialisable facts about the write.
        """
        self.record_many(conn, action, [(contest_id, content_hash, detail)],
                         revision=revision)

    def record_many(self, conn: Connection, action: str,
                    entries: Sequence[tuple[str | None, str | None, dict[str, Any] | None]],
                    *, revision: int | None) -> None:
        """One audit row per ``(contest_id, content_hash, detail)`` of ``entries``, all
        with the same actor, time, action and revision (one statement)."""
        if not entries:
            return
        actor = current_actor(self.ctx.options.actor)
        now = time.time()
        insert_rows(conn, self.table, _COLS, [
            (now, actor, action, cid, chash, revision,
             None if detail is None else _DETAIL.encode(detail))
            for cid, chash, detail in entries
        ])

    # ------------------------------------------------------------------ reading
    def read(self, *, offset: int = 0, limit: int = 50, action: str | None = None,
             contest_id: str | None = None) -> AuditPage:
        """The audit log, newest first.

        Parameters
        ----------
        offset, limit:
            The page (``limit`` at most 1000).
        action:
            Only rows of this action (see :data:`AUDIT_ACTIONS`).
        contest_id:
            Only rows about this contest.

        Raises
        ------
        StoreError
            For a negative offset, a limit outside 0..1000, or an empty filter.
        """
        if offset < 0 or not 0 <= limit <= MAX_AUDIT_LIMIT:
            raise StoreError(f"offset must be >= 0 and limit in 0..{MAX_AUDIT_LIMIT} (got "
                             f"offset={offset}, limit={limit})")
        a = self.table
        conds = []
        if action is not None:
            if not action:
                raise StoreError("action filter must not be empty")
            conds.append(a.c.action == action)
        if contest_id is not None:
            if not contest_id:
                raise StoreError("contest filter must not be empty")
            conds.append(a.c.contest_id == contest_id)
        if any(f is not None and not storable_text(f) for f in (action, contest_id)):
            return AuditPage(offset, limit, 0, [])  # no stored text equals it
        q = select(a).where(*conds).order_by(a.c.pk.desc()).offset(offset).limit(limit)
        with read_txn(self.ctx.engine) as conn:
            total = int(conn.execute(select(func.count()).select_from(a).where(*conds))
                        .scalar_one())
            rows = conn.execute(q).all()
        return AuditPage(offset, limit, total, [
            AuditEntry(int(r.pk), float(r.time), r.actor, r.action, r.contest_id,
                       r.content_hash, None if r.revision is None else int(r.revision),
                       None if r.detail is None else json.loads(r.detail))
            for r in rows])
