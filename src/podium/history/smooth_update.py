"""The bounded update of ``mmr-smooth`` (docs/history.md, "Incremental update"):
after new contests are rated, only what they touch is re-smoothed, alternating phase 2
for the players whose performances moved and phase 1 for the rounds where one of their
cavities moved, at most ``max_sweeps`` times, changes below a propagation threshold
not passed on.  It works on a :class:`~podium.history.smooth_state.SmoothState`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from podium.history import _smooth_kernels as K
from podium.history._smooth_groups import MOVED_NODES, UPDATE_PANELS
from podium.history.sweeps import SweepReport

if TYPE_CHECKING:
    from podium.history.smooth_state import SmoothState

__all__ = ["MovedRounds", "UpdateSweeps", "bounded_update", "phase1_moved"]

IntArray = npt.NDArray[np.int64]


class MovedRounds(NamedTuple):
    """What :func:`phase1_moved` did.

    Attributes
    ----------
    change:
        The largest change of a performance.
    rows_solved:
        Rows whose tie group was solved again.
    gated:
        Rounds that the gate left as they were (their stored residuals showed no group
        moving by more than the threshold).
    moved:
        The rows (contest order) whose performance, or a team member's noise, moved by
        more than the threshold.
    """

    change: float
    rows_solved: int
    gated: int
    moved: IntArray


class UpdateSweeps(NamedTuple):
    """What :func:`bounded_update` did: one :class:`SweepReport` per sweep; whether it
    stopped because nothing moved by more than the threshold (``settled``); the players
    re-smoothed (``touched``); the largest change of a smoothed rating of an earlier
    row (``max_change``)."""

    reports: list[SweepReport]
    settled: bool
    touched: IntArray
    max_change: float


def phase1_moved(state: SmoothState, contests: IntArray, threshold: float) -> MovedRounds:
    """Phase 1 of ``contests`` for the tie groups whose performance would move by more
    than about ``threshold / 2``: a round whose stored residuals, advanced by its
    changed terms, show that no group can move by more than ``threshold`` is left as
    it is (the gate of :mod:`~podium.history._smooth_groups`); in the others each
    group's residual ``Q_g`` and Newton step at its current performance come from the
    current cavities (one interpolant of the summed terms per round), only the groups
    whose step exceeds half the threshold are solved again, and a group's new
    performance replaces the old one (on both sides) when it moved by more than
    ``threshold``.  The interpolants take
    :data:`~podium.history._smooth_groups.MOVED_NODES` nodes per panel.  Team rounds
    are solved again whole (the team rule).

    Only the rounds where a performance was replaced are read back (the entries' side
    and the rows that moved): the gated rounds and those left as they were cost
    nothing beyond their solve.
    """
    rd, en = state.rounds, state.entries
    todo = np.ascontiguousarray(contests, dtype=np.int64)
    team = todo[state.teams.is_team[todo]] if state.teams.any else todo[:0]
    t_e = K.contest_entries(team, rd.contest_rows, state.e_of_row)
    t_rows = en.rows[t_e]
    old_perf, old_noise = rd.perf[t_rows], en.beta[t_e]
    change, rows_solved, gated, written = state.phase1_newton(todo, threshold,
                                                              UPDATE_PANELS, gate=True,
                                                              track=True,
                                                              nodes=MOVED_NODES)
    e = K.contest_entries(written, rd.contest_rows, state.e_of_row)
    rows = en.rows[e]
    en.perf[e] = rd.perf[rows]
    flags = state.moved_rows
    moved = rows[flags[rows]]
    flags[moved] = False
    en.perf[t_e] = rd.perf[t_rows]
    t_moved = ((np.abs(rd.perf[t_rows] - old_perf) > threshold)
               | (np.abs(en.beta[t_e] - old_noise) > threshold))
    return MovedRounds(change, rows_solved, gated, np.r_[moved, t_rows[t_moved]])


def _changed_ranges(state: SmoothState, rows: IntArray) -> tuple[IntArray, IntArray,
                                                                   IntArray]:
    """The players of ``rows`` and, per player, the first and last of its rounds
    among them."""
    en = state.entries
    e = state.e_of_row[rows]
    player = state.rounds.player[rows]
    k = e - en.off[player]
    players, inv = np.unique(player, return_inverse=True)
    lo = np.full(players.size, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(players.size, -1, dtype=np.int64)
    np.minimum.at(lo, inv, k)
    np.maximum.at(hi, inv, k)
    return players, lo, hi


def bounded_update(state: SmoothState, rows: IntArray, tol: float, max_sweeps: int,
                   new_from: int | None = None,
                   threshold: float | None = None) -> UpdateSweeps:
    """Alternate the phases from ``rows`` (whose performances are new or changed):
    phase 2 for their players (each filter restarted at the changed rounds and stopped
    once a belief moves by less than ``tol / 10``), phase 1 for every rated contest in
    which one of their cavities moved by more than ``threshold``, restricted to the
    tie groups whose performance would move by more than about ``threshold / 2``
    (:func:`phase1_moved`), phase 2 for the players whose performance moved by more
    than ``threshold``, ... at most ``max_sweeps`` times; then the beliefs of the last
    players changed.  Changes below ``threshold`` are not passed on; the work is
    proportional to what is touched, not to the history.

    Parameters
    ----------
    state:
        The smoothing, updated in place.
    rows:
        The rows (contest order) to start from.
    tol:
        The accuracy of the beliefs recomputed (phase 2 stops at ``tol / 10``).
    max_sweeps:
        As above.
    new_from:
        Rows from this one on are new (left out of the reported change).
    threshold:
        The propagation threshold (rating points; default ``tol``).

    Returns
    -------
    UpdateSweeps
    """
    rd, en = state.rounds, state.entries
    eps = tol / 10.0
    threshold = tol if threshold is None else float(threshold)
    reports: list[SweepReport] = []
    # the players of the rows whose performance is new or changed, and where
    todo, lo, hi = _changed_ranges(state, np.asarray(rows, dtype=np.int64))
    touched = [todo]
    settled = False
    e_parts = [K.player_entries(todo, en.off, en.n_rated)]
    before = [en.sm_mu[e_parts[0]]]
    for _ in range(max_sweeps):
        if todo.size == 0:
            settled = True
            break
        t0 = time.perf_counter()
        rows = en.rows[K.player_entries(todo, en.off, en.n_rated)]
        old_mu, old_sig = rd.cav_mu[rows], rd.cav_sig[rows]
        ch_cav = state.phase2(todo, True, (lo, hi), eps)
        t1 = time.perf_counter()
        moved = ((np.abs(rd.cav_mu[rows] - old_mu) > threshold)
                 | (np.abs(rd.cav_sig[rows] - old_sig) > threshold))
        rounds = np.unique(state.row_contest[rows[moved]])
        p1 = phase1_moved(state, rounds, threshold)
        t2 = time.perf_counter()
        reports.append(SweepReport(int(todo.size), int(rounds.size), ch_cav, p1.change,
                                   t2 - t0, t1 - t0, t2 - t1, p1.rows_solved, p1.gated))
        todo, lo, hi = _changed_ranges(state, p1.moved)
        touched.append(todo)
        if todo.size:
            e_parts.append(K.player_entries(todo, en.off, en.n_rated))
            before.append(en.sm_mu[e_parts[-1]])
    else:
        settled = todo.size == 0
    if todo.size:
        # the last changes' beliefs, not passed on any further
        state.phase2(todo, True, (lo, hi), eps)
    e_all = np.concatenate(e_parts)
    old = en.rows[e_all] < (new_from if new_from is not None else state.rated_rows)
    diff = np.abs(en.sm_mu[e_all] - np.concatenate(before))[old]
    return UpdateSweeps(reports, settled, np.unique(np.concatenate(touched)),
                        float(diff.max()) if diff.size else 0.0)
