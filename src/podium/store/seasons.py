"""Seasons of a ladder (the season service of :class:`~podium.store.Store`).

A ladder's history is divided into seasons: season 1 from its first contest, and each
:meth:`Seasons.new_season` starts the next one.  Starting season ``N`` is one write
transaction:

1. the season boundary becomes the next item of the ladder's history: a ``contests``
   row (id ``season:N``, name ``season N``, no standings) at the end, and its
   ``seasons`` row (number, time, reset policy);
2. the final leaderboard of season ``N - 1`` -- every rated player's stored rating --
   is copied into ``season_ratings`` (read back with ``leaderboard(season=N - 1)``,
   ``?season=`` over HTTP, as of the boundary's time);
3. every rated player is reset (:func:`podium.beliefs.start_season`: the system's
   soft reset, :meth:`podium.systems.RatingSystem.season_reset`), which is one event
   per player at the boundary -- in the player's history and in ``explain`` -- and
   their new ratings; the Rater cache and the snapshot policy treat the boundary as a
   contest.

A finished season is closed: a correction or an insertion in the past
(``recompute_from``) that would re-rate a contest before the latest boundary is
refused (:func:`podium.store.writes.check_current_season`), so a final leaderboard
never changes.  Replaying the history applies the boundaries again, bit for bit.
"""

from __future__ import annotations

import hashlib
import time

from sqlalchemy import Connection, func, select

from podium.beliefs import SeasonReset, SeasonStart
from podium.store.bulk import insert_rows
from podium.store.common import fmt_time
from podium.store.engine import read_txn
from podium.store.models import SeasonInfo, StoreError
from podium.store.raters import CachedRater
from podium.store.rating import handle_of, rate_run
from podium.store.rows import CONTEST_COLS, insert_events, update_players
from podium.store.writes import Writes, head_of

__all__ = ["Seasons", "SEASON_RATING_COLS"]

#: The columns of a ``season_ratings`` row after ``season``: a player's stored rating.
SEASON_RATING_COLS = ("player_pk", "handle", "mu", "sigma", "display_rating", "contests",
                      "last_contest_time", "max_display_rating", "last_change")


class Seasons:
    """Starting and listing the seasons of a ladder (see the module notes); its writes
    are those of ``writes`` (:meth:`~podium.store.writes.Writes.run_write`)."""

    def __init__(self, writes: Writes) -> None:
        self.writes = writes
        self.ctx = writes.ctx

    def new_season(self, reset: str | SeasonReset | None = None, *,
                   time_seconds: int | None = None) -> SeasonInfo:
        """Start the next season of the ladder: close the current one (its final
        leaderboard is kept) and reset every rated player by ``reset`` (a policy of
        :meth:`podium.beliefs.SeasonReset.parse`; default ``soft``), in one transaction.

        ``time_seconds``: when the season starts (default now, or the latest contest's
        time if that is later); not before the latest contest.

        Returns
        -------
        SeasonInfo
            The new season.

        Raises
        ------
        ConfigError
            For an unknown policy, or a reset the system cannot take.
        StoreError
            For a time before the latest contest.
        """
        policy = SeasonReset.parse(reset)
        if time_seconds is not None and (isinstance(time_seconds, bool)
                                         or not isinstance(time_seconds, int)):
            raise StoreError(f"time_seconds must be a unix time in seconds, got "
                             f"{time_seconds!r}")
        return self.writes.run_write(
            f"cannot start a new season of ladder {self.ctx.ladder.name!r}",
            lambda conn: self._new_season(conn, policy, time_seconds))

    def _new_season(self, conn: Connection, policy: SeasonReset,
                    when: int | None) -> SeasonInfo:
        ctx, w = self.ctx, self.writes
        t = ctx.tables
        m = ctx.read_meta(conn)
        ctx.hook("locked")
        head = head_of(conn, t)
        now = int(time.time())
        latest = head.latest_time
        if when is None:
            when = now if latest is None or now >= latest else latest
        elif latest is not None and when < latest:
            raise StoreError(f"a season cannot start at {fmt_time(when)}, before the latest "
                             f"contest {head.latest_name!r} ({fmt_time(latest)})")
        sn = t.seasons
        number = int(conn.execute(select(func.coalesce(func.max(sn.c.number), 1)))
                     .scalar_one()) + 1
        cid = self._free_id(conn, f"season:{number}")
        w.handles.refresh(conn, m)
        rater = w.raters.rater_at(conn, m, head.count)
        start = SeasonStart(number, when, policy)
        run = rate_run(rater, [start])
        ctx.hook("rated")
        players = int(run.offsets[-1])
        cpk = head.next_pk
        chash = hashlib.sha256(f"{start.name} {policy.text} {when}".encode()).hexdigest()
        insert_rows(conn, t.contests, CONTEST_COLS, [
            (cpk, cid, head.count, start.name, None, when, 1.0, None, players, 0, True, chash,
             now)])
        conn.execute(sn.insert().values(number=number, contest_pk=cpk, time_seconds=when,
                                        reset=policy.text, created_at=now))
        p = t.players
        # the final leaderboard of the season that ends: the stored ratings, which are the
        # Rater's before the reset
        rows = conn.execute(select(p.c.pk, p.c.handle, p.c.mu, p.c.sigma, p.c.display_rating,
                                   p.c.contests, p.c.last_contest_time,
                                   p.c.max_display_rating, p.c.last_change)
                            .where(p.c.display_rating.is_not(None))).all()
        insert_rows(conn, t.season_ratings, ("season", *SEASON_RATING_COLS),
                    [(number - 1, *r) for r in rows])
        names = [handle_of(rater, i) for i in run.player.tolist()]
        pks = [w.handles.known_keys(names, {})]
        insert_events(conn, t, run, [0], [cpk], pks)
        ctx.hook("events")
        update_players(conn, t, rater, run.player, w.handles, {})
        ctx.hook("players")
        w.bump_revision(conn, m)
        w.audit.record(conn, "season", revision=m.revision + 1, contest_id=cid,
                       content_hash=chash,
                       detail={"season": number, "reset": policy.text, "players": players})
        w.raters.maybe_snapshot(conn, rater, head.count + 1, m.epoch)
        ctx.hook("commit")
        w.raters.stage(CachedRater(rater, head.count + 1, m.store_id, m.epoch))
        return SeasonInfo(number, cid, when, policy.text, players, True)

    def _free_id(self, conn: Connection, cid: str) -> str:
        """``cid``, or ``cid#k`` for the least ``k`` that no stored contest has."""
        c = self.ctx.tables.contests
        k, out = 1, cid
        while conn.execute(select(c.c.pk).where(c.c.cid == out)).first() is not None:
            k += 1
            out = f"{cid}#{k}"
        return out

    def seasons(self) -> list[SeasonInfo]:
        """The ladder's seasons, oldest first (season 1, from the start, included)."""
        t = self.ctx.tables
        c, sn = t.contests, t.seasons
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(select(sn.c.number, c.c.cid, sn.c.time_seconds, sn.c.reset,
                                       c.c.players)
                                .select_from(sn.join(c, c.c.pk == sn.c.contest_pk))
                                .order_by(sn.c.number)).all()
        last = int(rows[-1].number) if rows else 1
        out = [SeasonInfo(1, None, None, None, 0, last == 1)]
        out.extend(SeasonInfo(int(r.number), r.cid, int(r.time_seconds), r.reset,
                              int(r.players), int(r.number) == last) for r in rows)
        return out
