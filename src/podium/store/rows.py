"""The rows of a write transaction (the lower half of the write service,
:mod:`podium.store.writes`): the player keys (:class:`HandleCache`), the rows of
``contests``, ``standings``, ``events`` and ``players``, and the stored contests a write
or an explanation reads back.

Rows go to the database in one statement per table (:mod:`podium.store.bulk`:
``executemany`` on SQLite, binary ``COPY`` on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from sqlalchemy import Connection, bindparam, select

import podium.store.schema as S
from podium.core.contest import Contest
from podium.rater import Rater
from podium.store.bulk import insert_rows, update_rows
from podium.store.common import Meta
from podium.store.rating import (
    PLAYER_COLS,
    RatedRun,
    handle_of,
    player_values,
    rated_indices,
)

__all__ = ["CONTEST_COLS", "HandleCache", "Item", "contest_from_rows", "contest_row",
           "describe_conflict", "insert_events", "insert_new_players", "insert_standings",
           "stored_contest", "stored_contests", "update_players"]

CONTEST_COLS = ("pk", "cid", "seq", "name", "url", "time_seconds", "weight", "perf_ceiling",
                "players", "new_players", "rated", "content_hash", "ingested_at")
EVENT_COLS = ("contest_pk", "player_pk", "mu", "sigma", "display_rating", "perf", "place",
              "prev_display", "change", "debut", "team")
STANDING_COLS = ("contest_pk", "pos", "player_pk", "lo", "hi", "team", "member_weight")


# The statements of every write, built once (building one costs more than running it).
_NEW_PLAYERS_Q = select(S.players.c.pk, S.players.c.handle).where(
    S.players.c.pk > bindparam("after"))


@dataclass(frozen=True)
class Item:
    """One contest of a write, checked before the transaction.

    ``where`` prefixes its error messages (empty for a single ingestion).
    """

    contest: Contest
    cid: str
    chash: str
    where: str


class HandleCache:
    r"""The keys (``players.pk``) of the store's players, kept between writes.

    A write reads only the players added since the last one (:meth:`refresh`); the keys
    of the players it inserts are :meth:`stage`\ d and taken over by :meth:`commit` once
    its transaction has committed (:meth:`discard` drops them after a failure).  The
    keys are read again from scratch when the store's id or epoch changed (a correction
    deletes players and bumps the epoch).
    """

    def __init__(self) -> None:
        self._keys: dict[str, int] = {}
        # the (store id, epoch) the keys were read at
        self._read_at: tuple[str, int] | None = None
        self._max_pk = -1
        self._staged: dict[str, int] = {}

    def refresh(self, conn: Connection, m: Meta) -> None:
        """Read the players added since the last read (every player after a change of
        the store's id or epoch)."""
        if self._read_at != (m.store_id, m.epoch):
            self._keys = {}
            self._max_pk = -1
            self._read_at = (m.store_id, m.epoch)
        rows = conn.execute(_NEW_PLAYERS_Q, {"after": self._max_pk}).all()
        for pk, h in rows:
            self._keys[h] = pk
            if pk > self._max_pk:
                self._max_pk = pk

    def keys_of(self, handles: Sequence[str], new_handles: dict[str, int]) -> list[int]:
        """Player keys of ``handles``; unknown handles get new keys (added to
        ``new_handles``, the players new in this transaction)."""
        out = []
        known = self._keys
        nxt = self._max_pk + 1 + len(new_handles)
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

    def known_keys(self, handles: Sequence[str], extra: dict[str, int]) -> list[int]:
        """The keys of ``handles``, each known here or else in ``extra`` (the players
        inserted earlier in the transaction)."""
        known = self._keys
        out = []
        for h in handles:
            pk = known.get(h)
            out.append(extra[h] if pk is None else pk)
        return out

    def names_by_key(self) -> np.ndarray:
        """An object array: the handle of each known player at its key (``None`` at keys
        of no known player)."""
        names = np.empty(self._max_pk + 1, dtype=object)
        for h, pk in self._keys.items():
            names[pk] = h
        return names

    # ------------------------------------------------------------------ transactions
    def begin(self) -> None:
        """Start a write: nothing staged."""
        self._staged = {}

    def stage(self, new_handles: dict[str, int]) -> None:
        """Keep the keys of the players being inserted, once they are committed."""
        self._staged = new_handles

    def commit(self) -> None:
        """The write committed: take over the staged keys."""
        new = self._staged
        if new:
            self._keys.update(new)
            self._max_pk = max(self._max_pk, max(new.values()))
        self._staged = {}

    def discard(self) -> None:
        """The write failed: drop the staged keys."""
        self._staged = {}

    def release(self) -> None:
        """Forget every key (closing the store)."""
        self._keys = {}
        self._read_at = None
        self._max_pk = -1
        self._staged = {}


# ---------------------------------------------------------------------- rows
def contest_row(pk: int, it: Item, seq: int, new_players: int, rated: bool,
                now: int) -> tuple[Any, ...]:
    """The ``contests`` row (:data:`CONTEST_COLS`) of item ``it`` at key ``pk`` and
    position ``seq``."""
    c = it.contest
    return (pk, it.cid, seq, c.name, c.url, c.time_seconds, c.weight, c.perf_ceiling,
            len(c), new_players, rated, it.chash, now)


def insert_standings(conn: Connection, cpks: Sequence[int], contests: Sequence[Contest],
                     pks: Sequence[list[int]]) -> None:
    """The standings rows; a team contest's rows also name the member's team and
    weight (``NULL`` for an individual contest)."""
    rows: list[tuple[Any, ...]] = []
    for cpk, cont, ppk in zip(cpks, contests, pks, strict=True):
        n = len(ppk)
        teams = cont.team_names
        if teams is None or cont.teams is None:
            team: Sequence[str | None] = [None] * n
            weight: Sequence[float | None] = [None] * n
        else:
            team, weight = teams, cont.teams.weight.tolist()
        rows.extend(zip([cpk] * n, range(n), ppk, cont.lo.tolist(), cont.hi.tolist(), team,
                        weight, strict=True))
    insert_rows(conn, S.standings, STANDING_COLS, rows)


def insert_events(conn: Connection, run: RatedRun, which: Sequence[int],
                  cpks: Sequence[int], pks: Sequence[list[int]]) -> None:
    """The events of contests ``which`` (positions in the run)."""
    rows: list[tuple[Any, ...]] = []
    for k in which:
        a, b = int(run.offsets[k]), int(run.offsets[k + 1])
        if a == b:
            continue
        rows.extend(zip([cpks[k]] * (b - a), pks[k], run.mu[a:b].tolist(),
                        run.sigma[a:b].tolist(), run.display[a:b].tolist(),
                        run.perf[a:b].tolist(), run.place[a:b].tolist(),
                        run.prev_display[a:b].tolist(), run.change[a:b].tolist(),
                        run.debut[a:b].tolist(), run.team[a:b].tolist(), strict=True))
    insert_rows(conn, S.events, EVENT_COLS, rows)


def insert_new_players(conn: Connection, rater: Rater, new_handles: dict[str, int]) -> None:
    """Insert the players first seen in this write, with their current ratings (NULL
    for those only seen in unrated contests: RatingSystem.skips_round)."""
    if not new_handles:
        return
    handles = list(new_handles)
    idx = rated_indices(rater, handles)
    rated = idx >= 0
    vals = iter(player_values(rater, idx[rated]))
    empty = (None, None, None, 0, None, None, None)
    rows = [(new_handles[h], h, h.casefold(), *(next(vals) if r else empty))
            for h, r in zip(handles, rated.tolist(), strict=True)]
    insert_rows(conn, S.players, ("pk", "handle", "handle_key", *PLAYER_COLS), rows)


def update_players(conn: Connection, rater: Rater, touched: np.ndarray, handles: HandleCache,
                   inserted: dict[str, int], txn_new: dict[str, int] | None = None) -> None:
    """Write the Rater's current values of the players ``touched`` (Rater indices,
    repeats allowed) but those just ``inserted``; their keys come from ``handles``, or
    from ``txn_new`` for the players inserted earlier in this transaction."""
    if not len(touched):
        return
    idx: list[int] = []
    names: list[str] = []
    for i in np.unique(touched).tolist():
        h = handle_of(rater, i)
        if h not in inserted:
            idx.append(i)
            names.append(h)
    if not idx:
        return
    pks = handles.known_keys(names, txn_new or {})
    vals = player_values(rater, np.asarray(idx, dtype=np.int64))
    update_rows(conn, S.players, "pk", PLAYER_COLS,
                [(pk, *v) for pk, v in zip(pks, vals, strict=True)])


# ---------------------------------------------------------------------- reading back
def stored_contest(conn: Connection, row: Any) -> Contest:
    """The stored contest ``row`` (a ``contests`` row) exactly as it was ingested:
    a team contest with its teams, member weights and team places."""
    st, p = S.standings, S.players
    rows = conn.execute(
        select(p.c.handle, st.c.lo, st.c.hi, st.c.team, st.c.member_weight)
        .join(p, p.c.pk == st.c.player_pk)
        .where(st.c.contest_pk == row.pk).order_by(st.c.pos)
    ).all()
    handles = [r[0] for r in rows]
    lo = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
    hi = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
    meta: dict[str, Any] = {
        "name": row.name, "time_seconds": int(row.time_seconds), "weight": float(row.weight),
        "perf_ceiling": None if row.perf_ceiling is None else float(row.perf_ceiling),
        "url": row.url,
    }
    if not rows or rows[0][3] is None:
        return Contest.from_arrays(handles, lo, hi, **meta)
    return contest_from_rows(meta, handles, lo, hi, [r[3] for r in rows], [r[4] for r in rows])


def contest_from_rows(meta: dict[str, Any], handles: list[str], lo: np.ndarray, hi: np.ndarray,
                      team: Sequence[str | None], weight: Sequence[float | None]) -> Contest:
    """A stored contest from its standings rows in order (``lo``, ``hi``, and per row the
    ``team`` and member ``weight``, ``None`` in an individual contest); ``meta`` holds
    the contest's name, time, weight, ceiling and url.  A team contest comes back with
    its teams, member weights and team places, exactly as it was ingested."""
    if not handles or team[0] is None:
        return Contest.from_arrays(handles, lo, hi, **meta)
    # a team contest: the rows of a team are adjacent, teams best first
    starts = [0, *(i for i in range(1, len(team)) if team[i] != team[i - 1])]
    offsets = np.array([*starts, len(team)], dtype=np.int64)
    w = np.asarray(weight, dtype=np.float64)
    return Contest.from_team_arrays(handles, offsets, [cast(str, team[i]) for i in starts],
                                    lo[starts], hi[starts], w, **meta)


def stored_contests(conn: Connection, start: int, stop: int) -> Iterator[Contest]:
    """The stored contests at positions ``start .. stop - 1``, in time order, exactly as
    they were ingested (:func:`stored_contest`)."""
    if start >= stop:
        return
    c = S.contests
    rows = conn.execute(
        select(c.c.pk, c.c.name, c.c.url, c.c.time_seconds, c.c.weight, c.c.perf_ceiling)
        .where(c.c.seq >= start, c.c.seq < stop).order_by(c.c.seq)
    ).all()
    for row in rows:
        yield stored_contest(conn, row)


def describe_conflict(conn: Connection, row: Any, contest: Contest, cid: str) -> str:
    """The refusal of ``contest`` under id ``cid``, stored (``row``) with other content:
    what differs, stored against given."""
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
    old = stored_contest(conn, row)
    stored = old.standings
    given = contest.standings
    if (old.teams is None) != (contest.teams is None):
        diffs.append("a team contest stored, an individual one given"
                     if contest.teams is None else
                     "an individual contest stored, a team contest given")
    elif old.teams is not None and contest.teams is not None and old.teams != contest.teams:
        ta, tb = old.teams, contest.teams
        if ta.names != tb.names:
            diffs.append(f"teams {list(ta.names)!r} vs {list(tb.names)!r}")
        elif not np.array_equal(ta.offsets, tb.offsets):
            diffs.append("the members of the teams differ")
        else:
            i = int(np.flatnonzero(ta.weight != tb.weight)[0])
            diffs.append(f"member weight of {contest.handles[i]!r} {float(ta.weight[i])!r} vs "
                         f"{float(tb.weight[i])!r}")
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
