"""Reading a ladder's smoothed companion (:mod:`podium.store.smoothing`): a player's
revised curve next to the filtered one, and what the last write changed in the past.

:func:`smoothed_curve` gives both curves of one player (:class:`SmoothedCurve`): per
contest the filter's display rating and the smoothed one, raw and *aligned* -- shifted by
the ladder's level offset so that both curves have the same mean over every player-round
they share.  Why the two levels differ: the filter starts every newcomer at the prior's
mean (1500 for Elo-MMR) *at entry*, whatever its later results; the smoother's prior
pins the average *first skill* of all players to that mean after every later result has
revised it.  Where most newcomers turn out weak (Codeforces), the filter's whole scale
sinks below the smoother's (about +865 on the whole Codeforces history, docs/history.md).
Differences between players -- every ranking and prediction -- do not depend on the
level, so the page draws the aligned curve and states the offset.

:func:`past_changes` explains the last update (:class:`PastChanges`): which earlier
ratings of the player moved, by how much, and why -- the player's own new result, or
the new results of opponents it met in that earlier contest; :func:`format_past_changes`
writes it as text (``podium explain --past``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from podium.core.guards import HandleError, handle_key, normalize_handle, storable_text
from podium.store.common import StoreContext, fmt_time
from podium.store.engine import read_txn
from podium.store.smoothing import read_smoothing, smooth_tables

if TYPE_CHECKING:
    from podium.store.writes import Writes

__all__ = ["SmoothedPoint", "SmoothedCurve", "PastChange", "PastChanges", "smoothed_curve",
           "past_changes", "format_past_changes", "smoothing_status", "SmoothingStatus",
           "set_smoothing"]


@dataclass(frozen=True)
class SmoothedPoint:
    """One contest of a player's two curves.

    Attributes
    ----------
    contest_id, contest_name, time_seconds:
        The contest.
    filtered:
        The filter's display rating after the contest (``None``: the filter left the
        contest unrated for the player).
    smoothed:
        The smoothed display rating at the contest, revised by every later contest.
    smoothed_sigma:
        Its uncertainty.
    aligned:
        ``smoothed - offset``: on the filter's level.
    """

    contest_id: str
    contest_name: str
    time_seconds: int
    filtered: float | None
    smoothed: float
    smoothed_sigma: float
    aligned: float


@dataclass(frozen=True)
class SmoothedCurve:
    """A player's filtered and smoothed curves (see the module notes).

    Attributes
    ----------
    handle, system, filter_system:
        The player, the companion's whole-history system and the ladder's filter.
    offset:
        Mean of smoothed minus filtered display rating over the ``pairs``
        player-rounds of the ladder that both rate (``None``: none yet).
    offset_mu:
        The same for ``mu``: the part of ``offset`` that is not the filter's display
        rule (:func:`podium.store.smoothing.level_offset`).
    points:
        One per contest the companion rates for the player, oldest first.
    """

    handle: str
    system: str
    filter_system: str
    offset: float | None
    offset_mu: float | None
    pairs: int
    points: list[SmoothedPoint] = field(default_factory=list)


@dataclass(frozen=True)
class PastChange:
    """One earlier rating of the player that the last update moved.

    Attributes
    ----------
    contest_id, contest_name, time_seconds:
        The earlier contest.
    before, after, change:
        The smoothed display rating at that contest before and after the update.
    own:
        Whether the player played in one of the update's new contests (its own new
        result revised the earlier rating, through the drift between its rounds).
    via:
        Up to three opponents of the player in that earlier contest who played in one of
        the new contests (their revised strength re-solved the player's performance).
    """

    contest_id: str
    contest_name: str
    time_seconds: int
    before: float
    after: float
    change: float
    own: bool
    via: list[str]


@dataclass(frozen=True)
class PastChanges:
    """What the last update of the companion changed in a player's past.

    Attributes
    ----------
    handle, system:
        The player and the whole-history system.
    reason:
        ``"write"`` (new contests), ``"rebuild"`` (the history was re-rated: a
        correction or a contest inserted in the past) or ``"enable"``.
    revision, time_seconds:
        The ladder's revision after that write, and when it ran.
    contests:
        ``[id, name]`` of the (last 20) contests it added.
    sweeps, settled, touched, moved_total, max_past_change:
        The update: its sweeps, whether it reached its tolerance, the players whose
        curve it rewrote, the earlier ratings (of every player) that moved by at least
        :data:`~podium.store.smoothing.MIN_CHANGE`, and the largest such move.
    moved:
        How many of this player's earlier ratings moved.
    changes:
        The largest of them (at most :data:`~podium.store.smoothing.TOP_CHANGES`),
        largest first.
    """

    handle: str
    system: str
    reason: str
    revision: int
    time_seconds: int
    contests: list[list[str]]
    new_contests: int
    sweeps: int
    settled: bool
    touched: int
    moved_total: int
    max_past_change: float
    moved: int
    changes: list[PastChange] = field(default_factory=list)


@dataclass(frozen=True)
class SmoothingStatus:
    """A ladder's companion: its system and parameters, the contests it covers, the
    level offset and the last update (``podium smooth``'s report)."""

    system: str
    params: dict[str, Any]
    contests: int
    offset: float | None
    offset_mu: float | None
    pairs: int
    last: dict[str, Any]


def _player(conn: Connection, ctx: StoreContext, handle: str) -> tuple[int, str] | None:
    """The key and stored spelling of ``handle`` (the lookup rules of the queries)."""
    p = ctx.tables.players
    if not isinstance(handle, str) or not storable_text(handle):
        return None
    try:
        norm: str | None = normalize_handle(handle)
    except HandleError:
        norm = None
    if ctx.case_insensitive_handles:
        looks = [] if norm is None else [(p.c.handle_key, handle_key(norm))]
    else:
        looks = [] if norm is None else [(p.c.handle, norm)]
        if norm != handle:
            looks.append((p.c.handle, handle))
    for col, value in looks:
        row = conn.execute(select(p.c.pk, p.c.handle).where(col == value)).first()
        if row is not None:
            return int(row.pk), str(row.handle)
    return None


def _companion_and_player(conn: Connection, ctx: StoreContext, handle: str
                          ) -> tuple[dict[str, Any], dict[str, Any], int, str] | None:
    """The companion's configuration and state, and ``handle``'s key and spelling
    (``None``: no companion or no such player)."""
    cfg, state, _ = read_smoothing(conn, ctx.tables)
    if cfg is None or state is None:
        return None
    found = _player(conn, ctx, handle)
    return None if found is None else (cfg, state, *found)


def smoothing_status(ctx: StoreContext) -> SmoothingStatus | None:
    """The ladder's companion (``None``: the ladder has none)."""
    with read_txn(ctx.engine) as conn:
        cfg, state, _ = read_smoothing(conn, ctx.tables)
    if cfg is None or state is None:
        return None
    return SmoothingStatus(cfg["system"], cfg["params"], int(state["count"]),
                           state.get("offset"), state.get("offset_mu"),
                           int(state.get("pairs", 0)),
                           state.get("last", {}))


def set_smoothing(writes: Writes, system: str | None,
                  params: dict[str, Any] | None = None) -> SmoothingStatus | None:
    """Turn on the ladder's smoothed companion -- the whole-history ``system``
    (``mmr-smooth``, ``ttt``, ``whr``) with ``params`` (for ``mmr-smooth`` over the
    filter's shared parameters), recomputed by every write from now on; the stored
    history is smoothed at once -- or, with ``system=None``, turn it off (see
    :mod:`podium.store.smoothing`).  One write transaction of the ladder, audited as
    ``smoothing``.  Returns the companion's status (``None`` when off).

    Raises
    ------
    StoreError
        For a system that is not a whole-history one, an unknown parameter, or a stored
        contest the system refuses (nothing is changed then).
    """
    def body(conn: Connection) -> None:
        m = writes.ctx.read_meta(conn)
        writes.bump_revision(conn, m)
        writes.smoothing.configure(conn, system, params)
        writes.audit.record(conn, "smoothing", revision=m.revision + 1,
                            detail={"system": system, "params": params or {}})

    writes.run_write("cannot set the smoothed companion", body)
    return smoothing_status(writes.ctx)


def smoothed_curve(ctx: StoreContext, handle: str) -> SmoothedCurve | None:
    """``handle``'s filtered and smoothed curves (``None``: the ladder has no companion
    or no such player)."""
    t = ctx.tables
    st = smooth_tables(t.prefix)
    with read_txn(ctx.engine) as conn:
        found = _companion_and_player(conn, ctx, handle)
        if found is None:
            return None
        cfg, state, pk, spelt = found
        s, e, c = st.events, t.events, t.contests
        rows = conn.execute(
            select(c.c.cid, c.c.name, c.c.time_seconds, e.c.display_rating, s.c.display_rating,
                   s.c.sigma)
            .select_from(s.join(c, c.c.pk == s.c.contest_pk).outerjoin(
                e, (e.c.contest_pk == s.c.contest_pk) & (e.c.player_pk == s.c.player_pk)))
            .where(s.c.player_pk == pk).order_by(c.c.seq)).all()
    offset = state.get("offset")
    shift = 0.0 if offset is None else float(offset)
    points = [SmoothedPoint(r[0], r[1], int(r[2]), None if r[3] is None else float(r[3]),
                            float(r[4]), float(r[5]), float(r[4]) - shift) for r in rows]
    return SmoothedCurve(spelt, cfg["system"], ctx.system_name, offset,
                         state.get("offset_mu"), int(state.get("pairs", 0)), points)


def past_changes(ctx: StoreContext, handle: str) -> PastChanges | None:
    """What the companion's last update changed in ``handle``'s past (``None``: the
    ladder has no companion or no such player)."""
    t = ctx.tables
    st = smooth_tables(t.prefix)
    with read_txn(ctx.engine) as conn:
        found = _companion_and_player(conn, ctx, handle)
        if found is None:
            return None
        cfg, state, pk, spelt = found
        ch, c = st.changes, t.contests
        rows = conn.execute(
            select(c.c.cid, c.c.name, c.c.time_seconds, ch.c.old_rating, ch.c.new_rating,
                   ch.c.moved, ch.c.own, ch.c.via)
            .select_from(ch.join(c, c.c.pk == ch.c.contest_pk))
            .where(ch.c.player_pk == pk)).all()
    changes = sorted(
        (PastChange(r[0], r[1], int(r[2]), float(r[3]), float(r[4]), float(r[4]) - float(r[3]),
                    bool(r[6]), r[7].split("\t") if r[7] else []) for r in rows),
        key=lambda x: (-abs(x.change), x.time_seconds))
    last = state.get("last", {})
    return PastChanges(
        spelt, cfg["system"], str(last.get("reason", "write")), int(last.get("revision", 0)),
        int(last.get("time", 0)), [list(x) for x in last.get("contests", [])],
        int(last.get("new_contests", 0)), int(last.get("sweeps", 0)),
        bool(last.get("settled", True)), int(last.get("touched", 0)),
        int(last.get("moved", 0)), float(last.get("max_past_change", 0.0)),
        int(rows[0][5]) if rows else 0, changes)


def _cause(pc: PastChanges) -> str:
    if pc.reason == "enable":
        return f"the ladder turned on its smoothed companion ({pc.system})"
    if pc.reason == "rebuild":
        return ("the ladder's history was re-rated (a correction, or a contest inserted in "
                f"the past), so {pc.system} smoothed it again from the start")
    names = ", ".join(repr(name) for _, name in pc.contests[-3:])
    more = pc.new_contests - min(3, len(pc.contests))
    return (f"{pc.new_contests} new contest(s) ({names}{f' and {more} more' if more > 0 else ''})"
            f" were added, and {pc.system} re-smoothed the history")


def format_past_changes(pc: PastChanges, *, top: int = 5) -> str:
    """``pc`` as text: the cause, the update's figures, then the player's largest past
    changes, each with why (``podium explain --past``)."""
    when = fmt_time(pc.time_seconds) if pc.time_seconds else "?"
    sweeps = (f"{pc.sweeps} sweep(s), {'settled' if pc.settled else 'not settled'}; "
              if pc.reason == "write" else "")
    lines = [
        f"What changed in the past of {pc.handle} at the last update of the smoothed "
        f"curve (revision {pc.revision}, {when}):",
        f"  cause: {_cause(pc)}",
        f"  update: {sweeps}{pc.touched} player curve(s) rewritten; {pc.moved_total} earlier "
        f"rating(s) moved, the largest by {pc.max_past_change:.2f}",
    ]
    if pc.reason == "enable":
        lines.append("  (the first smoothing: there was no earlier smoothed curve to change)")
        return "\n".join(lines)
    if not pc.changes:
        lines.append(f"  none of {pc.handle}'s earlier ratings moved (by 0.005 or more)")
        return "\n".join(lines)
    shown = pc.changes[:max(top, 1)]
    lines.append(f"  {pc.moved} of {pc.handle}'s earlier ratings moved; the largest:")
    for x in shown:
        why = []
        if x.own:
            why.append(f"{pc.handle}'s own new result, carried back by the drift model")
        if x.via:
            why.append("the new results of opponents met there: " + ", ".join(x.via))
        if not why:
            why.append("the re-solved strengths of its opponents (revised in turn)")
        lines.append(
            f"    {x.contest_name or x.contest_id} ({fmt_time(x.time_seconds)[:10]}): "
            f"{x.before:.2f} -> {x.after:.2f} ({x.change:+.2f}); why: {'; '.join(why)}")
    if pc.moved > len(shown):
        lines.append(f"    ... and {pc.moved - len(shown)} smaller change(s)")
    return "\n".join(lines)
