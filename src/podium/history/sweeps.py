"""The settings of ``mmr-smooth``'s sweeps (see :mod:`podium.history.smooth_state`):
how wide phase 1's Chebyshev panels are and how far each tie group is solved, and
what one sweep reports (:class:`SweepReport`)."""

from __future__ import annotations

from typing import NamedTuple

from podium.history._smooth_groups import UPDATE_PANELS

__all__ = ["SWEEP_PANELS", "SWEEP_STEP", "WIDE_PANELS_SKIP", "SweepReport", "sweep_panels"]


#: Half-width of the sweeps' Chebyshev panels (phase 1 of a large round: the
#: interpolant of the summed terms, :meth:`SmoothState.phase1_newton`), in units of the
#: first pass's ``sqrt(3) delta_min / 2``.  Every term of ``Q_g`` is analytic in the
#: strip ``|Im x| < sqrt(3) delta_min`` (tanh poles), so on a panel of half-width
#: ``r = 2 * sqrt(3) delta_min / 2`` the interpolant converges like ``rho^-n`` with
#: ``(rho - 1/rho) / 2 < sqrt(3) delta_min / r = 1``, ``rho`` just below ``1 + sqrt 2``:
#: about ``2.4^-32 ~ 1e-12`` of the terms' size with the 32 nodes
#: (:data:`~podium.core.numerics.chebyshev.CHEB_NODES`): the zeros agree with the first
#: pass's exact solve to 2e-9 rating points on the first 300 Codeforces contests, far
#: below the sweeps' ``tol / 100``.  The first pass keeps its own panels (it is
#: Elo-MMR itself, bit for bit).
SWEEP_PANELS = 2.0

#: The sweeps' phase 1 (:meth:`SmoothState.solve` after the first pass) takes each tie
#: group's Newton step from its current performance on one interpolant of the round's
#: summed terms (:func:`~podium.history._smooth_groups.moved_groups`, panels of
#: :data:`SWEEP_PANELS`) and solves the groups on from there; a group whose step is below
#: half of ``SWEEP_STEP * tol`` keeps its performance, and a solved group's new
#: performance replaces the old one when it moved by more than that.  So ``G`` is exact
#: to about ``1e-4 tol`` (1e-6 rating points at the default ``tol`` 0.01), far below the
#: ``tol / 100`` to which the sweeps skip unchanged players and rounds.
SWEEP_STEP = 1e-4

#: The sweeps' phase 1 takes the bounded update's wider panels
#: (:data:`~podium.history._smooth_groups.UPDATE_PANELS`, 1.5 times
#: :data:`SWEEP_PANELS`: zeros within 5e-7 rating points of the exact solve's on the first
#: 300 and 600 Codeforces contests where :data:`SWEEP_PANELS` gives 2e-9 to 8e-7 with
#: the groups kept below ``SWEEP_STEP * tol``, for 23-25 % less CPU) when the sweeps'
#: ``skip`` is at least this (the default ``tol / 100`` at ``tol`` 0.01 and above):
#: ``G`` is then exact only to ``skip`` anyway, 20 times that error.  Tighter solves
#: (the tests' ``tol`` 1e-6, a reference at 1e-4) keep :data:`SWEEP_PANELS`.
WIDE_PANELS_SKIP = 1e-5


def sweep_panels(skip: float) -> float:
    """The sweeps' panel half-width (units of the first pass's) for a solve that skips
    changes below ``skip`` (:data:`WIDE_PANELS_SKIP`)."""
    return UPDATE_PANELS if skip >= WIDE_PANELS_SKIP else SWEEP_PANELS


class SweepReport(NamedTuple):
    """One alternation of the two phases.

    Attributes
    ----------
    players, rounds:
        How many players were re-smoothed (phase 2) and rounds re-solved (phase 1).
    max_cavity_change:
        The largest change of a cavity rating (rating points).
    max_perf_change:
        The largest change of a performance: the residual ``|G(x) - x|`` of the
        fixed-point iteration.
    seconds:
        Wall-clock time of the sweep.
    phase2_seconds, phase1_seconds:
        Of which phase 2 (the players' beliefs) and phase 1 (the rounds' performances);
        the rest is the acceleration and the bookkeeping.
    rows_solved:
        Rows whose performance was solved again: in the bounded update's sweeps the
        tie groups whose performance equation moved (:func:`~.smooth_update.phase1_moved`),
        in the full solve's the groups whose Newton step from the current performance
        exceeded half of ``SWEEP_STEP * tol`` (:meth:`SmoothState.phase1_newton`).
    rounds_gated:
        Of the rounds, those that the bounded update's gate left as they were (their
        stored residuals showed no group moving by more than the threshold).
    """

    players: int
    rounds: int
    max_cavity_change: float
    max_perf_change: float
    seconds: float
    phase2_seconds: float = 0.0
    phase1_seconds: float = 0.0
    rows_solved: int = 0
    rounds_gated: int = 0
