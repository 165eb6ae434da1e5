"""``Rater.add`` of one small round through the system's ``rate_small_round``.

A system whose rounds of a few players cost microseconds (Elo-MMR and TrueSkill: a
compiled kernel) rates such a round, its newcomers' rows and its events in one
compiled call; what is left is the Rater's bookkeeping for one round, here, without
the machinery of a batch (:meth:`podium.rater.Rater._rate_many`).  The result is the
batch path's, bit for bit: the same players in the same rows, the same events, records,
warnings and report.

The protocol, for a system that offers it (an optional method; the Rater looks it up
once, and only when the system's newcomer prior is the same for every contest)::

    system.rate_small_round(state, table, contest, index, players, n_before, n_after,
                            prior, (values, ids, at)) -> tuple[str, ...] | None

``players`` holds the participants' rows (standings order); rows ``n_before ..
n_after - 1`` are the round's newcomers, which the system writes (``prior``, the
contest's time: what :meth:`~podium.core.state.PlayerTable.add_players` writes) within
the table's capacity; the events go to columns ``at ..`` of ``values`` (mu, sigma,
perf) and ``ids`` (contest index, player, place), as
:meth:`~podium.core.state.EventLog.reserve_tail` lays them out.  A system may
declare ``small_round_limits = (after, most)`` (an attribute or a property, read at
each ``add``): the Rater then offers it no round before its ``after``-th contest and
none of more than ``most`` players (a large
round goes straight to the batch path, its handles looked up once).  So does a
contest a loader numbered (:attr:`~podium.core.contest.Contest.handle_codes`): the batch
path finds its players by number.  It returns the
round's warnings, or ``None`` having changed nothing (the round is not for it; the
Rater then takes the batch path), or ``NotImplemented`` likewise when no round is
(a subclass that changes the update: the Rater stops asking).  When it raises, the
Rater's players are as before and the state is rolled back to ``n_before`` players,
as after a failed batch.
"""

from __future__ import annotations

import logging
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np

from podium.core.state import EventLog

if TYPE_CHECKING:
    from podium.core.contest import Contest
    from podium.rater import Rater

__all__ = ["add_small_round", "early_warning"]

log = logging.getLogger("podium")

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def early_warning(contest: Contest, index: int, last_time: int) -> str:
    """The warning for contest ``index`` dated before the previous contest."""
    return (f"contest {contest.label!r} (#{index}) has time_seconds={contest.time_seconds}, "
            f"earlier than the previous contest ({last_time}); rated in the given order with "
            "no time drift for its players")


def add_small_round(rater: Rater, contest: Contest) -> tuple[int, int, int,
                                                            tuple[str, ...]] | None:
    """Rate ``contest`` (a validated :class:`~podium.core.contest.Contest`) as
    :meth:`Rater.add <podium.rater.Rater.add>` does, through the system's
    ``rate_small_round``.

    Returns
    -------
    tuple or None
        ``(index, players, new_players, warnings)`` of the round's report (the
        warnings logged), or ``None`` with the Rater unchanged when the round is not
        for this path: a team contest, one the Rater leaves unrated
        (:meth:`~podium.systems.RatingSystem.skips_round`), a time outside 64 bits, or
        one the system declines.
    """
    t = contest.time_seconds
    after, most = getattr(rater.system, "small_round_limits", (0, None))
    if (len(rater.contests) + 1 < after or (most is not None and len(contest) > most)
            or contest.teams is not None
            or rater.system.skips_round(contest)
            or contest.handle_codes is not None  # loaded: found by handle numbers
            or not _INT64_MIN <= t <= _INT64_MAX):
        return None  # declined before any work: the batch path rates it
    table = rater.players
    handles = contest.handles
    looked = list(map(table.index.get, handles, repeat(-1)))
    n_before = n_after = table.n
    new: list[str] = []
    if -1 in looked:  # newcomers get the next rows, in standings order
        for k, i in enumerate(looked):
            if i < 0:
                looked[k] = n_after
                n_after += 1
                new.append(handles[k])
        table.reserve(n_after)
    n = len(looked)
    index = len(rater.contests)
    events = rater.events
    tail = type(events) is EventLog  # a subclass may filter in append: it gets append
    ev = events.reserve_tail(n) if tail else (np.empty((3, n)),
                                              np.empty((3, n), dtype=np.int32), 0)
    players = np.array(looked, dtype=np.int64)
    assert rater._small is not None and rater._prior is not None
    try:
        warnings = rater._small(rater.state, table, contest, index, players, n_before,
                                n_after, rater._prior, ev)
    except BaseException:
        rater.state.truncate_players(n_before)
        raise
    if warnings is None or warnings is NotImplemented:
        if warnings is NotImplemented:  # never for this system: stop asking
            rater._small = None
        return None
    if new:
        table.index.update(zip(new, range(n_before, n_after), strict=True))
        table.handles.extend(new)
    if tail:
        events.commit_tail(n)
    else:
        vals = ev[0]
        events.append(index, players, vals[0], vals[1], vals[2], contest.lo)
    rater.contests.add(contest.name, t, contest.url, n, False)
    last_time = rater.last_time
    if last_time is None or t > last_time:
        rater.last_time = t
    elif t < last_time:
        warnings = (early_warning(contest, index, last_time), *warnings)
    for w in warnings:
        log.warning(w)
    return index, n, len(new), warnings
