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

A ladder's history also holds season boundaries (:class:`~podium.beliefs.SeasonStart`)
and may give newcomers priors taken from another ladder: :func:`rate_run` and
:func:`replay` take both.  A boundary ends a run of contests and is applied by
:func:`podium.beliefs.start_season` (its events: every rated player's reset); a
newcomer with a prior (``priors``: handle -> ``(mu, sigma)``) is entered with it
(:func:`podium.beliefs.seed_players`) just before the first contest that rates it, so
that its debut is rated from that prior (``prev_display`` is the prior's display
rating) whatever the batches.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from podium.beliefs import SeasonStart, seed_players, start_season
from podium.core.contest import Contest
from podium.core.records import RoundReports
from podium.rater import Rater
from podium.store.models import StoreError
from podium.store.snapshot import RunEventLog

__all__ = ["RatedRun", "rate_run", "replay", "player_values", "rated_indices", "PLAYER_COLS",
           "HistoryItem", "Priors"]

#: An item of a ladder's history: a contest or the start of a season.
HistoryItem = Contest | SeasonStart
#: Newcomer priors taken from elsewhere: ``handle -> (mu, sigma)``.
Priors = Mapping[str, tuple[float, float]]

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


def _pieces(rater: Rater, items: Sequence[HistoryItem],
            priors: Priors | None) -> Iterator[list[Contest] | SeasonStart]:
    """``items`` as runs of contests and season boundaries, in order; the newcomers of
    ``priors`` are seeded into ``rater`` just before the run holding their first rated
    contest starts (the run is cut there), so their indices and priors are those of a
    run contest by contest."""
    run: list[Contest] = []
    seeded: set[str] = set()
    for it in items:
        if isinstance(it, SeasonStart):
            if run:
                yield run
                run = []
            yield it
            continue
        if priors and not it.is_outcome_free:
            index = rater.players.index
            fresh = [h for h in dict.fromkeys(it.handles)
                     if h in priors and h not in index and h not in seeded]
            if fresh:
                if run:
                    yield run
                    run = []
                seed_players(rater, fresh, [priors[h][0] for h in fresh],
                             [priors[h][1] for h in fresh], it.time_seconds)
                seeded.update(fresh)
        run.append(it)
    if run:
        yield run


def replay(rater: Rater, items: Sequence[HistoryItem], priors: Priors | None = None) -> None:
    """Rate stored ``items`` again to bring ``rater`` forward (events are discarded)."""
    for piece in _pieces(rater, items, priors):
        if isinstance(piece, SeasonStart):
            start_season(rater, piece)
        else:
            rater.extend(piece)


def rate_run(rater: Rater, items: Sequence[HistoryItem],
             priors: Priors | None = None) -> RatedRun:
    """Rate ``items`` -- contests with one ``rater.extend`` call per run between season
    boundaries, boundaries with :func:`~podium.beliefs.start_season` -- and return every
    event's rows, item by item.

    Raises
    ------
    StoreError
        When the Rater's event log does not cover exactly the rated contests
        (an internal error; the caller's transaction rolls back).
    """
    if len(items) == 1 and isinstance(items[0], Contest) and not priors:
        return _one_contest_run(rater, items[0])
    parts = [_season_run(rater, piece) if isinstance(piece, SeasonStart)
             else _contest_run(rater, piece) for piece in _pieces(rater, items, priors)]
    if len(parts) <= 1:
        return parts[0] if parts else _contest_run(rater, [])
    return _concat(parts)


def _season_run(rater: Rater, start: SeasonStart) -> RatedRun:
    """The rows of a season boundary: one event per rated player, its reset."""
    sink = _sink(rater)
    with sink.run():
        run = start_season(rater, start)
    n = int(run.players.size)
    reports = RoundReports()
    reports.add(run.index, start.name, n, 0, False, ())
    return RatedRun(
        reports=reports, offsets=np.array([0, n], dtype=np.int64), player=run.players,
        mu=run.mu_after, sigma=run.sigma_after, display=run.display_after,
        perf=run.mu_before, place=np.full(n, -1, dtype=np.int64),
        prev_display=run.display_before, change=run.display_after - run.display_before,
        debut=np.zeros(n, dtype=bool), team=np.full(n, None, dtype=object))


def _concat(parts: list[RatedRun]) -> RatedRun:
    """One run of the items of ``parts``, in order."""
    reports = RoundReports()
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for p in parts:
        reports.extend(p.reports)
        offsets.append(p.offsets[1:] + base)
        base += int(p.offsets[-1])

    def cat(name: str) -> np.ndarray:
        return np.concatenate([getattr(p, name) for p in parts])

    return RatedRun(reports=reports, offsets=np.concatenate(offsets), player=cat("player"),
                    mu=cat("mu"), sigma=cat("sigma"), display=cat("display"),
                    perf=cat("perf"), place=cat("place"), prev_display=cat("prev_display"),
                    change=cat("change"), debut=cat("debut"), team=cat("team"))


def _one_contest_run(rater: Rater, contest: Contest) -> RatedRun:
    """:func:`_contest_run` of one contest, the live case (a match posted as it ends):
    rated with ``rater.add`` (the compiled path of one small round, the same numbers bit
    for bit), and each player's previous rating is the one before the contest (a
    contest names a player once), without the bookkeeping of a run.

    A live match has a handful of players, so each step on NumPy arrays costs its call,
    not its work: the players' rows are looked up in plain Python, the event log's one
    chunk is taken as it is (:meth:`RunEventLog.round_events
    <podium.store.snapshot.RunEventLog.round_events>`), and the priors are taken whole
    when every player had a rating (the usual case); the display ratings are the
    system's own, on arrays, as in a run.
    """
    t = rater.players
    system = rater.system
    n = len(contest)
    known = list(map(t.index.get, contest.handles, repeat(-1, n)))
    newcomers = known.count(-1)
    rows = [k for k in known if k >= 0] if newcomers else known
    idx = np.array(rows, dtype=np.int64)
    pre_mu, pre_sigma = t.mu[idx], t.sigma[idx]  # fancy indexing: copies
    # a player entered with a prior from elsewhere (seed_players) has state but no round
    seeded = [k for k, c in zip(rows, t.contests[idx].tolist(), strict=True) if c == 0]
    sink = _sink(rater)
    with sink.run():
        rep = rater.add(contest)
        player, mu, sigma, perf, place, team = sink.round_events()
    reports = RoundReports()
    reports.append(rep)
    if rep.skipped:
        empty = np.zeros(0)
        return RatedRun(reports, np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64),
                        empty, empty, empty, empty, np.zeros(0, dtype=np.int64), empty, empty,
                        np.zeros(0, dtype=bool), np.zeros(0, dtype=object))
    if len(player) != n:
        raise StoreError("internal error: the Rater's events do not match the contest rated "
                         f"({len(player)} events for {n} players)")
    if newcomers:
        has_state = np.array([k >= 0 for k in known], dtype=bool)
        prior_mu = np.empty(n)
        prior_sigma = np.empty(n)
        prior_mu[has_state], prior_sigma[has_state] = pre_mu, pre_sigma
        mu0, sig0 = system.newcomer(contest)
        prior_mu[~has_state], prior_sigma[~has_state] = mu0, sig0
        debut = ~has_state
    else:
        prior_mu, prior_sigma = pre_mu, pre_sigma
        debut = np.zeros(n, dtype=bool)
    if seeded:  # a debut from a prior taken elsewhere is a newcomer to the ladder
        debut[[k for k, i in enumerate(known) if i in seeded]] = True
        reports.new_players[:] = [int(debut.sum())]
    display = np.asarray(system.display_rating(mu, sigma), dtype=np.float64)
    prev_display = np.asarray(system.display_rating(prior_mu, prior_sigma), dtype=np.float64)
    return RatedRun(
        reports=reports, offsets=np.array([0, n], dtype=np.int64),
        player=player.astype(np.int64), mu=mu, sigma=sigma, display=display, perf=perf,
        place=place.astype(np.int64), prev_display=prev_display,
        change=display - prev_display, debut=debut, team=team,
    )


def _contest_run(rater: Rater, contests: Sequence[Contest]) -> RatedRun:
    """The rows of a run of contests, rated with one ``rater.extend`` call."""
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
    # a player entered with a prior from elsewhere (seed_players) has state but no round
    seeded = np.zeros(len(flat), dtype=bool)
    seeded[has_state] = t.contests[known[has_state]] == 0

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
    debut = first & (~has_state[pos] | seeded[pos])
    if seeded.any():  # a debut from a prior taken elsewhere is a newcomer to the ladder
        counts = np.bincount(contest_of_event[debut], minlength=len(contests)).tolist()
        reports.new_players[:] = counts
    prior_mu = np.empty(len(player))
    prior_sigma = np.empty(len(player))
    prior_mu[~first] = mu[prev[~first]]
    prior_sigma[~first] = sigma[prev[~first]]
    prior_mu[from_before] = pre_mu[pos[from_before]]
    prior_sigma[from_before] = pre_sigma[pos[from_before]]
    fresh = debut & ~has_state[pos]
    if fresh.any():
        newcomer = np.array([system.newcomer(c) if r else (0.0, 0.0)
                             for c, r in zip(contests, rated.tolist(), strict=True)],
                            dtype=np.float64).reshape(-1, 2)
        prior_mu[fresh] = newcomer[contest_of_event[fresh], 0]
        prior_sigma[fresh] = newcomer[contest_of_event[fresh], 1]
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
