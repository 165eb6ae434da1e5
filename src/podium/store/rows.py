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
from functools import cache
from itertools import repeat
from typing import Any, cast

import numpy as np
from sqlalchemy import Connection, select

import podium.store.schema as S
from podium.beliefs import SeasonReset, SeasonStart
from podium.core.contest import Contest
from podium.rater import Rater
from podium.store.bulk import fetch, insert_rows, update_rows
from podium.store.common import Meta
from podium.store.rating import (
    PLAYER_COLS,
    HistoryItem,
    RatedRun,
    handle_of,
    player_values,
    rated_indices,
)

__all__ = ["CONTEST_COLS", "NEW_PLAYER_COLS", "HandleCache", "Item", "contest_from_rows",
           "contest_row", "player_rows",
           "describe_conflict", "insert_events", "insert_new_players", "insert_standings",
           "stored_contest", "stored_contests", "stored_priors", "update_players"]

CONTEST_COLS = ("pk", "cid", "seq", "name", "url", "time_seconds", "weight", "perf_ceiling",
                "players", "new_players", "rated", "content_hash", "ingested_at")
EVENT_COLS = ("contest_pk", "player_pk", "mu", "sigma", "display_rating", "perf", "place",
              "prev_display", "change", "debut", "team")
STANDING_COLS = ("contest_pk", "pos", "player_pk", "lo", "hi", "team", "member_weight")
#: The columns of a new ``players`` row.
NEW_PLAYER_COLS = ("pk", "handle", "handle_key", *PLAYER_COLS)
# the rating columns of a player only seen in unrated contests
_NO_RATING = (None, None, None, 0, None, None, None)


@cache
def _new_players_sql(t: S.LadderTables) -> str:
    """The players added after a key (run with the driver's cursor: every write runs it)."""
    return f'SELECT "pk", "handle" FROM "{t.players.name}" WHERE "pk" > ?'


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

    def __init__(self, tables: S.LadderTables | None = None) -> None:
        self.tables = S.ladder_tables("") if tables is None else tables
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
        rows = fetch(conn, _new_players_sql(self.tables), (self._max_pk,))
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


def insert_standings(conn: Connection, t: S.LadderTables, cpks: Sequence[int],
                     contests: Sequence[Contest], pks: Sequence[list[int]]) -> None:
    """The standings rows; a team contest's rows also name the member's team and
    weight (``NULL`` for an individual contest).  The columns are built for all the
    contests at once (a batch of small contests: one list per column, not per contest)."""
    if not contests:
        return
    if len(contests) == 1 and contests[0].team_names is None:  # a live match
        c = contests[0]
        cpk = cpks[0]
        insert_rows(conn, t.standings, STANDING_COLS, [
            (cpk, i, pk, lo, hi, None, None) for i, (pk, lo, hi)
            in enumerate(zip(pks[0], c.lo.tolist(), c.hi.tolist(), strict=True))])
        return
    sizes = [len(ppk) for ppk in pks]
    contest_col = np.repeat(np.asarray(cpks, dtype=np.int64), sizes).tolist()
    pos = [k for n in sizes for k in range(n)]
    player = [pk for ppk in pks for pk in ppk]
    lo = np.concatenate([c.lo for c in contests]).tolist()
    hi = np.concatenate([c.hi for c in contests]).tolist()
    team: list[str | None] = []
    weight: list[float | None] = []
    if any(c.team_names is not None for c in contests):
        for cont, n in zip(contests, sizes, strict=True):
            names = cont.team_names
            if names is None or cont.teams is None:
                team.extend([None] * n)
                weight.extend([None] * n)
            else:
                team.extend(names)
                weight.extend(cont.teams.weight.tolist())
    else:
        team = weight = [None] * len(player)  # type: ignore[assignment]
    insert_rows(conn, t.standings, STANDING_COLS,
                list(zip(contest_col, pos, player, lo, hi, team, weight, strict=True)))


def insert_events(conn: Connection, t: S.LadderTables, run: RatedRun, which: Sequence[int],
                  cpks: Sequence[int], pks: Sequence[list[int]]) -> None:
    """The events of contests ``which`` (positions in the run); ``pks[k]`` are the keys of
    the players of item ``k``'s events, in order.  The columns are built for all of
    them at once."""
    if len(which) == 1 and len(run.offsets) == 2:  # a run of one contest: a live match
        n = int(run.offsets[1])
        if n:
            insert_rows(conn, t.events, EVENT_COLS, list(zip(
                repeat(cpks[which[0]], n), pks[which[0]], run.mu.tolist(),
                run.sigma.tolist(), run.display.tolist(), run.perf.tolist(),
                run.place.tolist(), run.prev_display.tolist(), run.change.tolist(),
                run.debut.tolist(), run.team.tolist(), strict=True)))
        return
    spans = [(k, int(run.offsets[k]), int(run.offsets[k + 1])) for k in which]
    spans = [x for x in spans if x[1] < x[2]]
    if not spans:
        return
    if len(spans) == len(run.offsets) - 1:  # the whole run, in order
        sel: slice | np.ndarray = slice(None)
    else:
        sel = np.concatenate([np.arange(a, b) for _, a, b in spans])
    contest_col = np.repeat(np.asarray([cpks[k] for k, _, _ in spans], dtype=np.int64),
                            [b - a for _, a, b in spans]).tolist()
    player = [pk for k, _, _ in spans for pk in pks[k]]
    rows = list(zip(contest_col, player, run.mu[sel].tolist(), run.sigma[sel].tolist(),
                    run.display[sel].tolist(), run.perf[sel].tolist(),
                    run.place[sel].tolist(), run.prev_display[sel].tolist(),
                    run.change[sel].tolist(), run.debut[sel].tolist(),
                    run.team[sel].tolist(), strict=True))
    insert_rows(conn, t.events, EVENT_COLS, rows)


def insert_new_players(conn: Connection, t: S.LadderTables, rater: Rater,
                       new_handles: dict[str, int]) -> None:
    """Insert the players first seen in this write, with their current ratings (NULL
    for those only seen in unrated contests: RatingSystem.skips_round)."""
    if not new_handles:
        return
    handles = list(new_handles)
    idx = rated_indices(rater, handles)
    rated = idx >= 0
    vals = iter(player_values(rater, idx[rated]))
    rows = [(new_handles[h], h, h.casefold(), *(next(vals) if r else _NO_RATING))
            for h, r in zip(handles, rated.tolist(), strict=True)]
    insert_rows(conn, t.players, NEW_PLAYER_COLS, rows)


def player_rows(rater: Rater, run: RatedRun, pks: Sequence[list[int]],
                new_handles: dict[str, int]) -> tuple[list[tuple[Any, ...]],
                                                      list[tuple[Any, ...]]]:
    """The ``players`` rows a run of contests writes: the rows to insert for the players
    first seen in it (``new_handles``, handle -> key; in that order) and the rows to
    update for the others it rated, all with the Rater's current values
    (:data:`~podium.store.rating.PLAYER_COLS`).

    ``pks[k]`` are the keys of contest ``k``'s players in standings order, which is the
    order of its events in ``run``: each rated player's Rater index is read off its event
    (no lookup by handle).  An insert row is ``(pk, handle, handle_key, *values)``, with
    NULL values for a player only seen in unrated contests
    (:meth:`~podium.systems.RatingSystem.skips_round`); an update row is
    ``(pk, *values)``.
    """
    idx_of: dict[int, int] = {}
    offsets = run.offsets.tolist()
    player = run.player.tolist()
    for k, ppk in enumerate(pks):
        a, b = offsets[k], offsets[k + 1]
        if a < b:
            idx_of.update(zip(ppk, player[a:b], strict=True))
    vals = dict(zip(idx_of, player_values(rater, np.fromiter(
        idx_of.values(), dtype=np.int64, count=len(idx_of))), strict=True))
    inserts: list[tuple[Any, ...]] = []
    unseen: list[str] = []
    for h, pk in new_handles.items():
        v = vals.pop(pk, None)
        if v is None:
            unseen.append(h)
        else:
            inserts.append((pk, h, h.casefold(), *v))
    if unseen:  # in no event of the run: rated before it (a prior taken elsewhere), or never
        idx = rated_indices(rater, unseen)
        rated = idx >= 0
        seen = iter(player_values(rater, idx[rated]))
        inserts.extend((new_handles[h], h, h.casefold(), *(next(seen) if r else _NO_RATING))
                       for h, r in zip(unseen, rated.tolist(), strict=True))
    return inserts, [(pk, *v) for pk, v in vals.items()]


def update_players(conn: Connection, t: S.LadderTables, rater: Rater, touched: np.ndarray,
                   handles: HandleCache, inserted: dict[str, int],
                   txn_new: dict[str, int] | None = None) -> None:
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
    update_rows(conn, t.players, "pk", PLAYER_COLS,
                [(pk, *v) for pk, v in zip(pks, vals, strict=True)])


# ---------------------------------------------------------------------- reading back
def stored_contest(conn: Connection, t: S.LadderTables, row: Any) -> Contest:
    """The stored contest ``row`` (a ``contests`` row) exactly as it was ingested:
    a team contest with its teams, member weights and team places."""
    st, p = t.standings, t.players
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


def stored_contests(conn: Connection, t: S.LadderTables, start: int,
                    stop: int) -> Iterator[HistoryItem]:
    """The stored items at positions ``start .. stop - 1``, in time order: each contest
    exactly as it was ingested (:func:`stored_contest`), each season boundary as its
    :class:`~podium.beliefs.SeasonStart`."""
    if start >= stop:
        return
    c, sn = t.contests, t.seasons
    rows = conn.execute(
        select(c.c.pk, c.c.name, c.c.url, c.c.time_seconds, c.c.weight, c.c.perf_ceiling,
               sn.c.number, sn.c.reset)
        .select_from(c.outerjoin(sn, sn.c.contest_pk == c.c.pk))
        .where(c.c.seq >= start, c.c.seq < stop).order_by(c.c.seq)
    ).all()
    for row in rows:
        if row.number is not None:
            yield SeasonStart(int(row.number), int(row.time_seconds),
                              SeasonReset.parse(row.reset))
        else:
            yield stored_contest(conn, t, row)


def stored_priors(conn: Connection, t: S.LadderTables) -> dict[str, tuple[float, float]]:
    """``handle -> (mu, sigma)``: the newcomer priors the ladder took from another ladder
    (its ``priors`` table; empty for a ladder that takes none)."""
    pr, p = t.priors, t.players
    rows = conn.execute(select(p.c.handle, pr.c.mu, pr.c.sigma)
                        .select_from(pr.join(p, p.c.pk == pr.c.player_pk))).all()
    return {h: (float(mu), float(sg)) for h, mu, sg in rows}


def describe_conflict(conn: Connection, t: S.LadderTables, row: Any, contest: Contest,
                      cid: str) -> str:
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
    old = stored_contest(conn, t, row)
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
