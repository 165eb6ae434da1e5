"""The smoothed companion of a ladder (issue 29): a whole-history system re-estimating
the ladder's whole history after every write, its revised curves stored next to the
filter's events (a service of :class:`~podium.store.Store`, owned by the write service).

A ladder is rated by a filter (``mmr``, ``glicko``, ...): its leaderboard, snapshots,
as-of ratings, seasons and corrections rest on the filter's
:class:`~podium.rater.Rater`.  A ladder may *opt in* to a companion
(:meth:`SmoothCompanion.configure`, ``podium smooth``): a whole-history system
(``mmr-smooth``, ``ttt`` or ``whr``, :mod:`podium.history`) run by a
:class:`~podium.history_rater.HistoryRater` over the ladder's contests.  Every write of
the ladder (an ingest, a batch, a contest inserted in the past, a correction) calls
:meth:`SmoothCompanion.update` inside its own transaction, just before it commits:

1. read the companion's configuration and state (``meta`` rows ``smoothing`` and
   ``smoothing_state``, one query) -- nothing more when the ladder has none;
2. the HistoryRater of the stored state: the one kept in memory when its id is the
   stored one, else the state's bytes (``{prefix}smooth_state``); when the history was
   re-rated since (the ladder's ``epoch`` moved: a correction, ``recompute_from``) or
   the state is unreadable, a new one (a *rebuild*);
3. ``HistoryRater.extend`` with the stored contests after the state (season
   boundaries are the filter's resets: the smoother leaves them out): ``mmr-smooth``
   re-smooths only what the new contests touch, at most ``update_sweeps`` sweeps;
   ``ttt`` and ``whr`` re-solve the whole history;
4. rewrite the rows of ``{prefix}smooth_events`` -- one per player and rated contest:
   the smoothed ``mu``, ``sigma`` and display rating -- of every player one of whose
   values changed (bit for bit) or who played in a new contest (a rebuild rewrites
   them all);
5. replace ``{prefix}smooth_changes`` with what this write changed in the past: per
   player the :data:`TOP_CHANGES` largest changes of its ratings in earlier contests
   (at least :data:`MIN_CHANGE`), the number of its ratings that moved, whether it
   played in a new contest itself and up to three of its opponents in that earlier
   contest who did (the results that revised it);
6. the level offset between the two curves (:func:`level_offset`), the state's bytes
   and the ``smoothing_state`` row (a fresh id, the contests covered, the epoch, the
   offset, and a summary of this update).

All of it is in the write's transaction: the ladder and its companion are committed
together or not at all, and a process killed at any point leaves both as they were.
The in-memory HistoryRater is keyed by the id of the state it equals, so a write that
rolled back (whose id never reached the database) is not reused.

The tables are derived data, created when a ladder opts in and dropped when it opts out;
they carry no foreign keys (a correction deletes contests and players before the
companion rewrites its rows in the same transaction).
"""

from __future__ import annotations

import io
import json
import logging
import time
import uuid
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    delete,
    select,
)

import podium.store.schema as S
from podium.beliefs import SeasonStart
from podium.core.contest import Contest
from podium.errors import CheckpointError, ConfigError, ContestError
from podium.store.bulk import fetch, insert_rows
from podium.store.common import SMOOTHING_KEY, Meta, StoreContext, chunks, json_params
from podium.store.migrations import set_meta
from podium.store.models import StoreError
from podium.store.rows import stored_contests

if TYPE_CHECKING:
    from podium.history_rater import HistoryRater

__all__ = ["SmoothCompanion", "SmoothTables", "smooth_tables", "read_smoothing",
           "level_offset", "companion_params", "MIN_CHANGE", "TOP_CHANGES", "KEY_CONFIG",
           "KEY_STATE"]

log = logging.getLogger("podium.store")

#: The ``meta`` row holding the companion's system and parameters (JSON).
KEY_CONFIG = SMOOTHING_KEY
#: The ``meta`` row holding the state's id, coverage, offset and last update (JSON).
KEY_STATE = "smoothing_state"
#: The smallest change of a past rating recorded (display scale): a change shown as
#: nonzero with two decimals.
MIN_CHANGE = 0.005
#: Past changes recorded per player and write (the largest ones).
TOP_CHANGES = 10
#: Opponents named per revised contest (those who played in a new contest).
VIA = 3

_EVENT_COLS = ("contest_pk", "player_pk", "mu", "sigma", "display_rating")
_CHANGE_COLS = ("player_pk", "contest_pk", "old_rating", "new_rating", "moved", "own", "via")


@dataclass(frozen=True, eq=False)
class SmoothTables:
    """The companion's tables of one ladder (see the module notes)."""

    metadata: MetaData
    events: Table
    changes: Table
    state: Table


@cache
def smooth_tables(prefix: str) -> SmoothTables:
    """The companion's tables of the ladder whose tables are named with ``prefix``."""
    md = MetaData()
    n = prefix
    ev = Table(
        f"{n}smooth_events", md,
        Column("contest_pk", Integer, nullable=False),
        Column("player_pk", Integer, nullable=False),
        Column("mu", Double, nullable=False),
        Column("sigma", Double, nullable=False),
        Column("display_rating", Double, nullable=False),
        PrimaryKeyConstraint("contest_pk", "player_pk", name=f"pk_{n}smooth_events"),
        sqlite_with_rowid=False,
    )
    Index(f"ix_{n}smooth_events_player", ev.c.player_pk, ev.c.contest_pk)
    ch = Table(
        f"{n}smooth_changes", md,
        Column("player_pk", Integer, nullable=False),
        Column("contest_pk", Integer, nullable=False),
        Column("old_rating", Double, nullable=False),
        Column("new_rating", Double, nullable=False),
        Column("moved", Integer, nullable=False),
        Column("own", Boolean, nullable=False),
        Column("via", Text, nullable=False),  # tab-separated handles
        PrimaryKeyConstraint("player_pk", "contest_pk", name=f"pk_{n}smooth_changes"),
        sqlite_with_rowid=False,
    )
    st = Table(
        f"{n}smooth_state", md,
        Column("pk", Integer, primary_key=True, autoincrement=False),
        Column("data", LargeBinary, nullable=False),
    )
    return SmoothTables(md, ev, ch, st)


def read_smoothing(conn: Connection, t: S.LadderTables
                   ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, str]]:
    """The companion's configuration and state of the ladder of ``t`` (``None``: none)
    and the ladder's ``epoch`` and ``revision`` (one query)."""
    rows = fetch(conn, f'SELECT "key", "value" FROM "{t.meta.name}" WHERE "key" IN '
                 f"('{KEY_CONFIG}', '{KEY_STATE}', 'epoch', 'revision')")
    got = dict(rows)
    cfg = got.pop(KEY_CONFIG, None)
    state = got.pop(KEY_STATE, None)
    return (None if cfg is None else json.loads(cfg),
            None if state is None else json.loads(state), got)


def companion_params(filter_system: str, filter_params: dict[str, Any], system: str,
                     params: dict[str, Any] | None) -> dict[str, Any]:
    """The companion's parameters: ``params``, over -- for ``mmr-smooth`` -- the filter's
    parameters that ``mmr-smooth`` shares (a ladder rated by ``mmr`` gets the same
    model, so that the smoother's first pass is the filter)."""
    from podium.history.engines import HISTORY_SYSTEMS

    out: dict[str, Any] = {}
    if system == "mmr-smooth" and filter_system in ("mmr", "mmr-fast", "mmr-plus"):
        known = HISTORY_SYSTEMS[system].defaults
        out = {k: v for k, v in filter_params.items() if k in known}
    out.update(params or {})
    return out


def level_offset(conn: Connection, t: S.LadderTables,
                 st: SmoothTables) -> tuple[float, float, int]:
    """The level offset between the two curves: the mean, over every player-round both
    rate, of the smoothed display rating minus the filtered one; the same for ``mu``
    (the rest of the first is the filter's display rule: Elo-MMR displays
    ``mu - 3 (sigma - sigma_limit)``, a smoothed rating displays its ``mu``); and the
    number of those player-rounds (``nan``, ``nan``, 0: none)."""
    s, e = st.events, t.events
    sql = (f'SELECT avg(s."display_rating" - e."display_rating"), avg(s."mu" - e."mu"), '
           f'count(*) FROM "{s.name}" s JOIN "{e.name}" e ON e."contest_pk" = '
           's."contest_pk" AND e."player_pk" = s."player_pk"')
    shown, mu, n = fetch(conn, sql)[0]
    nan = float("nan")
    return (nan if shown is None else float(shown)), (nan if mu is None else float(mu)), int(n)


@dataclass
class _Kept:
    """A HistoryRater equal to the stored state ``state_id``, and the contest keys of its
    contests in order."""

    state_id: str
    rater: HistoryRater
    pks: list[int]


class SmoothCompanion:
    """The smoothed companion of one ladder (see the module notes).

    Parameters
    ----------
    ctx:
        The store context of the ladder.
    """

    def __init__(self, ctx: StoreContext) -> None:
        self.ctx = ctx
        self.tables = smooth_tables(ctx.tables.prefix)
        self._kept: _Kept | None = None

    def release(self) -> None:
        """Drop the HistoryRater kept in memory."""
        self._kept = None

    # ------------------------------------------------------------------ configuration
    def configure(self, conn: Connection, system: str | None,
                  params: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Turn the companion on with ``system`` and ``params`` (smoothing the stored
        history at once) or, with ``system=None``, off (its tables dropped); inside the
        caller's write transaction.  Returns the stored state (``None`` when off).

        Raises
        ------
        StoreError
            For a system that is not a whole-history one, an unknown parameter, or a
            stored contest the system refuses (naming it).
        """
        from podium.history.engines import HISTORY_SYSTEMS, get_history_system, is_history_system

        st = self.tables
        meta = self.ctx.tables.meta
        self._kept = None
        if system is None:
            conn.execute(delete(meta).where(meta.c.key.in_([KEY_CONFIG, KEY_STATE])))
            st.metadata.drop_all(conn, checkfirst=True)
            return None
        if not is_history_system(system):
            raise StoreError(f"{system!r} is not a whole-history system; the smoothed "
                             f"companion is one of {', '.join(HISTORY_SYSTEMS)}")
        merged = companion_params(self.ctx.system_name, self.ctx.params, system, params)
        try:
            full = json_params(get_history_system(system, **merged).params())
        except ConfigError as exc:
            raise StoreError(f"smoothed companion {system}: {exc}") from None
        st.metadata.create_all(conn, checkfirst=True)
        set_meta(conn, KEY_CONFIG, json.dumps({"system": system, "params": full},
                                              allow_nan=True), meta)
        conn.execute(delete(meta).where(meta.c.key == KEY_STATE))
        return self.update(conn, reason="enable")

    # ------------------------------------------------------------------ the update
    def update(self, conn: Connection, *, reason: str = "write",
               meta: Meta | None = None) -> dict[str, Any] | None:
        """Bring the companion up to the ladder's stored contests, inside the caller's
        write transaction (see the module notes); nothing when the ladder has none.
        Returns the new state (``None`` when the ladder has no companion).

        ``meta``, the ladder's metadata as the transaction read it first
        (:meth:`~podium.store.common.StoreContext.read_meta`), saves a ladder without a
        companion the read of its configuration (every write of a live match).

        Raises
        ------
        StoreError
            When the whole-history system refuses a contest (naming it and how to turn
            the companion off), so that the write is rolled back.
        """
        if meta is not None and not meta.smoothed:
            return None
        t = self.ctx.tables
        cfg, state, got = read_smoothing(conn, t)
        if cfg is None:
            return None
        from podium.history_rater import HistoryRater  # a ladder with a companion only

        epoch, revision = int(got.get("epoch", "0")), int(got.get("revision", "0"))
        c, sn = t.contests, t.seasons
        head = int(conn.execute(select(c.c.seq).order_by(c.c.seq.desc()).limit(1))
                   .scalar() or -1) + 1
        kept = None
        if state is not None and int(state["epoch"]) == epoch and int(state["count"]) <= head:
            kept = self._load(conn, state)
        full = kept is None
        if kept is None:
            kept = _Kept("", HistoryRater(cfg["system"], **cfg["params"]), [])
            reason = reason if reason == "enable" else "rebuild"
        start = 0 if full else int(state["count"])  # type: ignore[index]
        rows = conn.execute(
            select(c.c.pk, c.c.cid, sn.c.number).select_from(
                c.outerjoin(sn, sn.c.contest_pk == c.c.pk))
            .where(c.c.seq >= start).order_by(c.c.seq)).all()
        new = [(int(r.pk), r.cid, item) for r, item in
               zip(rows, stored_contests(conn, t, start, head), strict=True)
               if not isinstance(item, SeasonStart)]
        if not full and not new:  # only season boundaries since: nothing to smooth
            state = {**state, "count": head}  # type: ignore[dict-item]
            set_meta(conn, KEY_STATE, json.dumps(state, allow_nan=False), t.meta)
            self._kept = kept
            return state
        hr = kept.rater
        old = hr.fit
        old_rows = 0 if old is None else old.mu.size
        old_display = (np.zeros(0) if old is None
                       else hr.system.display_rating(old.mu, old.sigma))
        old_sigma = np.zeros(0) if old is None else old.sigma
        contests = [item for _, _, item in new]
        assert all(isinstance(x, Contest) for x in contests)
        try:
            reports = hr.extend(contests)  # type: ignore[arg-type]
        except ContestError as exc:
            self._kept = None
            raise StoreError(
                f"the ladder's smoothed companion ({cfg['system']}) refuses contest "
                f"{exc.contest!r}: {exc.reason}; nothing was written (turn the companion "
                "off with `podium smooth --off`, or set it up with other parameters)"
            ) from None
        pks = kept.pks + [pk for pk, _, _ in new]
        summary: dict[str, Any] = {
            "reason": reason, "revision": revision, "time": int(time.time()),
            "contests": [[cid, item.name] for _, cid, item in new[-20:]],
            "new_contests": len(new), "full": full,
            "sweeps": reports[-1].sweeps if reports else 0,
            "settled": bool(reports[-1].settled) if reports else True,
            "touched": 0, "moved": 0, "max_past_change": 0.0}
        if hr.fit is not None:
            self._write(conn, hr, pks, full, old_rows, old_display, old_sigma,
                        len(hr.contests) - len(new), summary)
        offset, offset_mu, pairs = level_offset(conn, t, self.tables)
        state_id = uuid.uuid4().hex
        self._write_state(conn, hr, pks)
        new_state = {"id": state_id, "count": head, "epoch": epoch,
                     "offset": None if pairs == 0 else offset,
                     "offset_mu": None if pairs == 0 else offset_mu, "pairs": pairs,
                     "last": summary}
        set_meta(conn, KEY_STATE, json.dumps(new_state, allow_nan=False), t.meta)
        self.ctx.hook("smoothed")
        self._kept = _Kept(state_id, hr, pks) if self.ctx.options.cache else None
        return new_state

    def _load(self, conn: Connection, state: dict[str, Any]) -> _Kept | None:
        """The HistoryRater of the stored state: the one kept when it is that state,
        else read from its bytes (``None`` when they are missing or unreadable)."""
        kept, self._kept = self._kept, None  # about to change: kept again after the write
        if kept is not None and kept.state_id == state["id"]:
            return kept
        from podium.history_rater import HistoryRater

        data = conn.execute(select(self.tables.state.c.data)
                            .where(self.tables.state.c.pk == 0)).scalar()
        if data is None:
            return None
        try:
            with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            pks = [int(x) for x in arrays.pop("store.contest_pks")]
            hr = HistoryRater.from_arrays(arrays, where=f"{self.ctx.where}: smoothed state",
                                          what="state")
        except (CheckpointError, KeyError, ValueError, OSError) as exc:
            log.warning("%s; smoothing the ladder's history again", exc)
            return None
        if len(pks) != len(hr.contests):
            return None
        return _Kept(state["id"], hr, pks)

    def _write_state(self, conn: Connection, hr: HistoryRater, pks: list[int]) -> None:
        arrays = hr.to_arrays(header={"format": "podium-smoothed-state", "version": 1})
        arrays["store.contest_pks"] = np.asarray(pks, dtype=np.int64)
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        st = self.tables.state
        conn.execute(delete(st))
        conn.execute(st.insert().values(pk=0, data=buf.getvalue()))

    def _write(self, conn: Connection, hr: HistoryRater, pks: list[int], full: bool,
               old_rows: int, old_display: npt.NDArray[np.float64],
               old_sigma: npt.NDArray[np.float64], first_new: int,
               summary: dict[str, Any]) -> None:
        """Rewrite the smoothed rows of the players whose values changed, and the past
        changes of this update (see the module notes)."""
        assert hr.fit is not None and hr.labelled is not None
        st = self.tables
        fit, lab = hr.fit, hr.labelled
        h = lab.history
        contest_of_row = lab.contest_index[h.row_contest]  # HistoryRater contest index
        cpk = np.asarray(pks, dtype=np.int64)[contest_of_row]
        player = h.player.astype(np.int64)
        display = hr.system.display_rating(fit.mu, fit.sigma)
        rated = np.isfinite(display)
        n_rows = display.size
        if full:
            before = self._stored_display(conn, lab.handles, player, cpk)
            old_sigma_all = np.full(n_rows, np.nan)
        else:
            before = np.full(n_rows, np.nan)
            before[:old_rows] = old_display
            old_sigma_all = np.full(n_rows, np.nan)
            old_sigma_all[:old_rows] = old_sigma
        same = (display == before) & (fit.sigma == old_sigma_all)
        same |= ~rated & ~np.isfinite(before)
        touched = np.unique(player[~same]) if not full else np.arange(h.n_players)
        keys = self._player_keys(conn, [lab.handles[i] for i in touched.tolist()])
        key_of = np.full(h.n_players, -1, dtype=np.int64)
        key_of[touched] = keys
        if full:
            conn.execute(delete(st.events))
        else:
            for part in chunks([k for k in keys if k >= 0]):
                conn.execute(delete(st.events).where(st.events.c.player_pk.in_(list(part))))
        write = np.flatnonzero(rated & (key_of[player] >= 0))
        insert_rows(conn, st.events, _EVENT_COLS, list(zip(
            cpk[write].tolist(), key_of[player[write]].tolist(), fit.mu[write].tolist(),
            fit.sigma[write].tolist(), display[write].tolist(), strict=True)))
        # the past: rows that had a smoothed rating before this update (the rows of new
        # contests have none; a rebuild compares with the stored curves), whose rating moved
        delta = display - before
        past = np.flatnonzero(rated & np.isfinite(before) & (np.abs(delta) >= MIN_CHANGE)
                              & (key_of[player] >= 0))
        conn.execute(delete(st.changes))
        summary["touched"] = int(touched.size)
        summary["moved"] = int(past.size)
        summary["max_past_change"] = float(np.abs(delta[past]).max()) if past.size else 0.0
        if past.size == 0:
            return
        # whose new results revised them: none to name after a rebuild (its cause is the
        # correction of the history)
        new_rows = (contest_of_row >= first_new) & (not full)
        fresh = np.zeros(h.n_players, dtype=bool)
        fresh[player[new_rows]] = True
        moved = np.bincount(player[past], minlength=h.n_players)
        order = past[np.lexsort((-np.abs(delta[past]), player[past]))]
        rank = np.arange(order.size) - np.searchsorted(player[order], player[order])
        chosen = order[rank < TOP_CHANGES]
        via = self._via(h.row_contest, player, fresh, lab.handles, chosen, new_rows)
        who = player[chosen]
        insert_rows(conn, st.changes, _CHANGE_COLS, list(zip(
            key_of[who].tolist(), cpk[chosen].tolist(), before[chosen].tolist(),
            display[chosen].tolist(), moved[who].tolist(), fresh[who].tolist(), via,
            strict=True)))

    @staticmethod
    def _via(row_contest: npt.NDArray[np.int64], player: npt.NDArray[np.int64],
             fresh: npt.NDArray[np.bool_], handles: list[str], chosen: npt.NDArray[np.int64],
             new_rows: npt.NDArray[np.bool_]) -> list[str]:
        """For each chosen row: up to :data:`VIA` other players of its contest who played
        in a new contest (whose new results revised that contest), tab-separated (a
        handle holds no control character: :func:`podium.core.guards.normalize_handle`)."""
        marked = np.flatnonzero(fresh[player] & ~new_rows)
        by_contest: dict[int, list[int]] = {}
        wanted = set(row_contest[chosen].tolist())
        for r in marked.tolist():
            k = int(row_contest[r])
            if k in wanted:
                got = by_contest.setdefault(k, [])
                if len(got) <= VIA:
                    got.append(int(player[r]))
        out = []
        for k, p in zip(row_contest[chosen].tolist(), player[chosen].tolist(), strict=True):
            others = [q for q in by_contest.get(k, ()) if q != p]
            out.append("\t".join(handles[q] for q in others[:VIA]))
        return out

    def _player_keys(self, conn: Connection, handles: list[str]) -> list[int]:
        """The ``players`` keys of ``handles`` (-1 for one the ladder does not hold)."""
        p = self.ctx.tables.players
        found: dict[str, int] = {}
        for part in chunks(handles):
            for pk, handle in conn.execute(select(p.c.pk, p.c.handle)
                                           .where(p.c.handle.in_(list(part)))).all():
                found[handle] = int(pk)
        return [found.get(x, -1) for x in handles]

    def _stored_display(self, conn: Connection, handles: list[str],
                        player: npt.NDArray[np.int64],
                        cpk: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """The stored smoothed display rating of each row (NaN where none): what a
        rebuild compares with."""
        st, p = self.tables, self.ctx.tables.players
        out = np.full(player.size, np.nan)
        rows = conn.execute(select(p.c.handle, st.events.c.contest_pk,
                                   st.events.c.display_rating)
                            .select_from(st.events.join(p, p.c.pk == st.events.c.player_pk))
                            ).all()
        if not rows:
            return out
        index = {hd: i for i, hd in enumerate(handles)}
        known = [(index[hd], int(k), float(v)) for hd, k, v in rows if hd in index]
        if not known:
            return out
        arr = np.array([(a, b) for a, b, _ in known], dtype=np.int64)
        vals = np.array([v for _, _, v in known])
        key = arr[:, 0] * (1 << 32) + arr[:, 1]
        order = np.argsort(key)
        key, vals = key[order], vals[order]
        want = player * (1 << 32) + cpk
        at = np.searchsorted(key, want)
        ok = at < key.size
        ok[ok] = key[at[ok]] == want[ok]
        out[ok] = vals[at[ok]]
        return out
