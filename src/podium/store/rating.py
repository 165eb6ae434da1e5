"""The store's only contact with a :class:`~podium.rater.Rater`'s internals.

The writes layer (:mod:`podium.store.writes`) rates contests with a Rater and
writes what it did as rows.  Everything it needs from the Rater beyond its public
methods is here, so that a change of the Rater's internals is adapted in one place:

* ``rater.events`` -- the :class:`~podium.store.snapshot.RunEventLog` the Rater
  was built with (:func:`~podium.store.snapshot.new_rater`,
  :func:`~podium.store.snapshot.rater_from_bytes`): :func:`rate_run` reads one
  run's events from it, :func:`replay` lets it drop them;
* ``rater.players`` -- the :class:`~podium.core.state.PlayerTable`: ``lookup``,
  ``n``, ``mu``, ``sigma``, ``contests``, ``last_time``, ``max_display``,
  ``last_change`` (:func:`rate_run`, :func:`player_values`, :func:`rated_indices`);
* ``rater.contests`` (its length: the contests rated so far) and ``rater.system``
  (``newcomer``, ``display_rating``).

A run of contests is rated with **one** ``rater.extend(contests)`` call, and every
event's rows are rebuilt from the event log: the Rater's own per-round numbers,
bit for bit.  The rating before a contest (for ``prev_display`` and ``change``)
is the player's previous event in the run, else the player's state before the
run, else (a debut) the newcomer prior of that contest -- exactly the prior
``Rater.add`` reads from its table, so ``change`` equals the Rater's
``last_change`` (display rating after minus before, Ebtekar & Liu's displayed
rating ``mu - 3 (sigma - sigma_limit)`` for Elo-MMR).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from podium.core.contest import Contest
from podium.core.records import RoundReports
from podium.rater import Rater
from podium.store.models import StoreError
from podium.store.snapshot import RunEventLog

__all__ = ["RatedRun", "rate_run", "replay", "player_values", "rated_indices", "PLAYER_COLS"]

#: The ``players`` columns that hold a player's current rating state, in the order of
#: :func:`player_values`.
PLAYER_COLS = ("mu", "sigma", "display_rating", "contests", "last_contest_time",
               "max_display_rating", "last_change")


@dataclass
class RatedRun:
    """A run of contests as one ``Rater.extend`` rated them.

    Attributes
    ----------
    reports:
        One :class:`~podium.rater.RoundReport` per contest of the run
        (:class:`~podium.core.records.RoundReports`).
    offsets:
        The events of contest ``k`` of the run are ``[offsets[k], offsets[k + 1])`` of
        the arrays below (an empty range for a contest that rated nobody); within it,
        the contest's players in standings order.
    player:
        The Rater index of each event's player.
    mu, sigma, display, perf, place, prev_display, change, debut, team:
        The values of the ``events`` table (:mod:`podium.store.schema`); ``team`` (an
        object array) holds the player's team name in a team contest, else ``None``.
    """

    reports: RoundReports
    offsets: np.ndarray
    player: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    display: np.ndarray
    perf: np.ndarray
    place: np.ndarray
    prev_display: np.ndarray
    change: np.ndarray
    debut: np.ndarray
    team: np.ndarray


def _sink(rater: Rater) -> RunEventLog:
    sink = rater.events
    if not isinstance(sink, RunEventLog):
        raise StoreError("internal error: a store's Rater must be built with a RunEventLog "
                         "(podium.store.snapshot.new_rater / rater_from_bytes)")
    return sink


def replay(rater: Rater, contests: Sequence[Contest]) -> None:
    """Rate stored ``contests`` again to bring ``rater`` forward (events are discarded)."""
    if contests:
        rater.extend(contests)


def rate_run(rater: Rater, contests: Sequence[Contest]) -> RatedRun:
    """Rate ``contests`` with one ``rater.extend`` call and return every event's rows.

    Raises
    ------
    StoreError
        When the Rater's event log does not cover exactly the rated contests
        (an internal error; the caller's transaction rolls back).
    """
    t = rater.players
    system = rater.system
    base = len(rater.contests)
    # Every handle of the run, and the state before the run of those who have one.
    sizes = np.fromiter((len(c) for c in contests), dtype=np.int64, count=len(contests))
    starts = np.concatenate(([0], np.cumsum(sizes)))
    flat = [h for c in contests for h in c.handles]
    known, _ = t.lookup(flat)
    has_state = known >= 0
    pre_mu = np.zeros(len(flat))
    pre_sigma = np.zeros(len(flat))
    pre_mu[has_state] = t.mu[known[has_state]]
    pre_sigma[has_state] = t.sigma[known[has_state]]

    sink = _sink(rater)
    with sink.run():
        reports = rater.extend(contests)
        ev = sink.arrays()
        team_names = np.array([*sink.team_names, None], dtype=object)

    # The positions (in ``flat``) of the events: the rated contests' players in order.
    rated = ~np.array(reports.skipped, dtype=bool)
    n_ev = np.where(rated, sizes, 0)
    offsets = np.concatenate(([0], np.cumsum(n_ev)))
    contest_of_event = np.repeat(np.arange(len(contests)), n_ev)
    pos = (np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], n_ev)
           + np.repeat(starts[:-1], n_ev))
    if (len(ev["contest"]) != len(pos)
            or not np.array_equal(ev["contest"], contest_of_event + base)):
        raise StoreError("internal error: the Rater's events do not match the contests rated "
                         f"({len(ev['contest'])} events for {len(pos)} rated player-rounds)")
    player = ev["player"].astype(np.int64)
    mu, sigma = ev["mu"], ev["sigma"]

    # Each event's previous event of the same player within the run (-1: none).
    prev = np.full(len(player), -1, dtype=np.int64)
    if len(player):
        order = np.argsort(player, kind="stable")
        same = player[order[1:]] == player[order[:-1]]
        prev[order[1:][same]] = order[:-1][same]
    first = prev < 0
    from_before = first & has_state[pos]
    debut = first & ~has_state[pos]
    prior_mu = np.empty(len(player))
    prior_sigma = np.empty(len(player))
    prior_mu[~first] = mu[prev[~first]]
    prior_sigma[~first] = sigma[prev[~first]]
    prior_mu[from_before] = pre_mu[pos[from_before]]
    prior_sigma[from_before] = pre_sigma[pos[from_before]]
    if debut.any():
        newcomer = np.array([system.newcomer(c) if r else (0.0, 0.0)
                             for c, r in zip(contests, rated.tolist(), strict=True)],
                            dtype=np.float64).reshape(-1, 2)
        prior_mu[debut] = newcomer[contest_of_event[debut], 0]
        prior_sigma[debut] = newcomer[contest_of_event[debut], 1]
    display = np.asarray(system.display_rating(mu, sigma), dtype=np.float64)
    prev_display = np.asarray(system.display_rating(prior_mu, prior_sigma), dtype=np.float64)
    return RatedRun(
        reports=reports, offsets=offsets, player=player, mu=mu, sigma=sigma, display=display,
        perf=ev["perf"], place=ev["place"].astype(np.int64), prev_display=prev_display,
        change=display - prev_display, debut=debut,
        team=team_names[np.where(ev["team"] < 0, len(team_names) - 1, ev["team"])],
    )


def rated_indices(rater: Rater, handles: Sequence[str]) -> np.ndarray:
    """The Rater indices of ``handles`` (``-1`` for players it has never rated)."""
    idx, _ = rater.players.lookup(handles)
    return idx


def player_values(rater: Rater, idx: np.ndarray) -> list[tuple[Any, ...]]:
    """The Rater's current :data:`PLAYER_COLS` of players ``idx`` (Rater indices)."""
    t = rater.players
    mu, sg = t.mu[idx], t.sigma[idx]
    disp = np.asarray(rater.system.display_rating(mu, sg), dtype=np.float64)
    return list(zip(mu.tolist(), sg.tolist(), disp.tolist(), t.contests[idx].tolist(),
                    t.last_time[idx].tolist(), t.max_display[idx].tolist(),
                    t.last_change[idx].tolist(), strict=True))


def handle_of(rater: Rater, idx: int) -> str:
    """The handle of the Rater's player ``idx``."""
    return rater.players.handles[idx]
