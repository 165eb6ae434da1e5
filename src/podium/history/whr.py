"""Whole-History Rating ([Coulom2008]): the maximum a posteriori of every player's
whole rating history.

The model of the ``whole-history-rating`` package (version 3.7.1), with its defaults:

* a player's rating on each day it plays is ``r = ln(gamma)`` (Elo: ``r 400 / ln 10``);
* between two of its days ``t_1 < t_2`` the rating drifts as a Wiener process:
  ``r_2 - r_1 ~ N(0, |t_2 - t_1| w2)``, ``w2 = 300`` Elo^2 per day (Eq. 1 of the paper);
* the first day carries ``k = 0.5`` virtual wins and ``k`` virtual losses against a
  player of rating 0 (the paper's prior, Sec. 3.2; the package's
  ``initial_prior_wins``);
* a game is Bradley-Terry: ``P(i beats j) = gamma_i / (gamma_i + gamma_j)``; with draws in
  the history, Davidson's model ``P(win) = S/Z``, ``P(draw) = T/Z``, ``T = nu sqrt(S O)``,
  ``Z = S + O + T``, with one draw tendency ``nu`` fitted by maximum likelihood (as the
  package does when no draw rate is declared).

Rounds of more than two participants, and teams, are rated by the paper's extension
(Sec. 2: the generalised Bradley-Terry models of [Hunter2004]):

* a team's strength is the product of its members' (``ln gamma_T = sum_i w_i r_i``,
  member weights ``w_i``);
* a ranking of three or more teams is a Plackett-Luce sequence of choices: the best
  team is chosen among all, the next among the rest, and so on,
  ``P = prod_g gamma_g / S_g``; teams tied for a place are chosen at one stage with
  Breslow's rule ``prod_{t in g} gamma_t / S_g^{m_g}`` (``m_g`` teams, ``S_g`` the
  strength of every team not yet placed).  Two teams are the package's game above.

The estimate is the maximum of the log-posterior: sweeps of one Newton step per player
on all its days at once (tridiagonal, Sec. 3.3), the others fixed, and one on
``log nu``, until the largest gradient component is below ``tol``.  The fixed point is
the package's, whatever the schedule.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from podium.errors import ConfigError, ConvergenceError
from podium.history import _whr_kernels as K
from podium.history.anderson import Anderson
from podium.history.data import ContestHistory, check_history

__all__ = ["WHRResult", "whr", "ELO_PER_NAT"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: One natural rating unit in Elo: ``400 / ln 10``.
ELO_PER_NAT = 400.0 / math.log(10.0)


class WHRResult(NamedTuple):
    """The maximum a posteriori ratings of a whole history.

    Attributes
    ----------
    slot_player, slot_time:
        One slot per (player, day it played): the player and the day; by player, then
        day.
    r:
        Each slot's rating in natural units (``ln gamma``).
    variance:
        Each slot's variance in natural units: the diagonal of the inverse of minus the
        player's Hessian, with the damping on its diagonal (the package's
        ``uncertainty``).
    row_slot:
        Per row of the history, its slot.
    nu:
        The draw tendency (0 without draws).
    converged:
        Whether the largest gradient component fell below ``tol``.
    sweeps:
        Sweeps done.
    grad_norm:
        The largest gradient component at the returned ratings.
    """

    slot_player: IntArray
    slot_time: FloatArray
    r: FloatArray
    variance: FloatArray
    row_slot: IntArray
    nu: float
    converged: bool
    sweeps: int
    grad_norm: float

    @property
    def elo(self) -> FloatArray:
        """Each slot's rating in Elo (``r 400 / ln 10``)."""
        return self.r * ELO_PER_NAT


def whr(history: ContestHistory, *, w2: float = 300.0, prior_wins: float = 0.5,
        nu: float | None = None, damping: float = 1.0, tol: float = 1e-10,
        max_iter: int = 10000, memory: int = 5, strict: bool = False) -> WHRResult:
    """Whole-History Rating of a history ([Coulom2008]).

    Parameters
    ----------
    history:
        The contests in time order, times in days (a player's games on the same day
        share one rating).
    w2:
        Variance of the rating drift, Elo^2 per day (Eq. 1).
    prior_wins:
        The first day's virtual wins and losses against a rating of 0 (Sec. 3.2).
    nu:
        Davidson's draw tendency; ``None`` (default): 0 when no two-team round is a
        draw, else fitted by maximum likelihood; a number pins it (0: draws carry no
        information).
    damping:
        Subtracted from the diagonal of the Hessian whose inverse gives the reported
        variance (Coulom's ``HessianEpsilon``, the package's ``hessian_damping``; 0 gives
        the Laplace approximation's variance).  The package damps its Newton steps
        with it too; that only slows them (the fixed point is the same), so the steps
        here are undamped, each day's change capped at one natural unit.
    tol, max_iter:
        Stop when the largest gradient component (ratings and ``log nu``) is below
        ``tol``, or after ``max_iter`` sweeps.
    memory:
        Anderson acceleration of the sweeps ([WalkerNi2011]; the last ``memory``
        differences of the ratings and ``log nu``; 0: plain sweeps).  Long histories
        converge slowly without it (the international football results: the largest
        gradient component still 2.5e-3 after 180 plain sweeps, below 1e-3 after 43).
    strict:
        Raise :class:`~podium.errors.ConvergenceError` when the sweeps stop first.

    Returns
    -------
    WHRResult

    Raises
    ------
    ConfigError
        On a parameter out of range.
    ConvergenceError
        When a Newton step turns singular or non-finite (drift variance too small for
        the days given), or with ``strict`` when the sweeps do not converge.
    """
    for name, v in (("w2", w2), ("tol", tol)):
        if not (math.isfinite(v) and v > 0):
            raise ConfigError(f"{name} must be finite and positive, got {v!r}")
    for name, v in (("prior_wins", prior_wins), ("damping", damping)):
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be finite and >= 0, got {v!r}")
    if nu is not None and not (math.isfinite(nu) and nu >= 0):
        raise ConfigError(f"nu must be None or finite and >= 0, got {nu!r}")
    check_history(history)
    h = history
    rc = h.row_contest
    # slots: (player, distinct time); by player, then time
    times, t_index = np.unique(h.time, return_inverse=True)
    n_times = max(times.size, 1)
    key = h.player * n_times + t_index.ravel()[rc]
    uniq, row_slot = np.unique(key, return_inverse=True)
    row_slot = row_slot.astype(np.int64).ravel()
    slot_player = (uniq // n_times).astype(np.int64)
    slot_time = times[uniq % n_times] if uniq.size else np.zeros(0)
    player_slots = np.searchsorted(slot_player, np.arange(h.n_players + 1)).astype(np.int64)
    rows = np.argsort(row_slot, kind="stable").astype(np.int64)
    slot_rows = np.searchsorted(row_slot[rows], np.arange(uniq.size + 1)).astype(np.int64)
    # draws among two-team rounds decide whether nu is fitted
    n_teams = np.diff(h.contest_teams)
    two = np.flatnonzero(n_teams == 2)
    first = h.contest_teams[two]
    drawn = h.team_place[first] == h.team_place[first + 1]
    if nu is None:
        fit_nu = bool(drawn.any() and (~drawn).any())
        nu0 = 1.0 if drawn.any() else 0.0
    else:
        fit_nu, nu0 = False, float(nu)
    w2_nat = (math.sqrt(w2) / ELO_PER_NAT) ** 2
    r = np.zeros(uniq.size)
    slot_time = np.ascontiguousarray(slot_time)

    def run(nu_in: float, n: int) -> tuple[float, int, float, int]:
        out = K.whr_run(player_slots, slot_time, slot_rows, rows, rc, h.row_team,
                        h.contest_teams, h.team_rows, h.team_place, h.weight, row_slot, r,
                        nu_in, fit_nu, w2_nat, float(prior_wins), 0.0, float(tol), n)
        return float(out[0]), int(out[1]), float(out[2]), int(out[3])

    if memory == 0:
        nu_out, sweeps, norm, flag = run(nu0, int(max_iter))
    else:
        # sweeps one at a time, Anderson-accelerated on (r, log nu)
        accel = Anderson(memory)
        nu_out, sweeps, norm, flag = nu0, 0, math.inf, 0
        while sweeps < max_iter:
            x = np.r_[r, math.log(nu_out) if fit_nu else 0.0]
            nu_out, _, norm, flag = run(nu_out, 1)
            sweeps += 1
            if flag or norm < tol:
                break
            nxt = accel.step(x, np.r_[r, math.log(nu_out) if fit_nu else 0.0])
            r[:] = nxt[:-1]
            if fit_nu:
                nu_out = math.exp(nxt[-1])
    if not flag and norm >= tol and memory:
        # the gradient at the Anderson iterate, not at the last sweep's ratings
        norm = run(nu_out, 0)[2]
    if flag:
        raise ConvergenceError("a Newton step of WHR turned singular or non-finite: the "
                               "drift prior between two days is too tight for the games; "
                               "use a larger w2 or merge days that are almost equal")
    var = K.variances(player_slots, np.ascontiguousarray(slot_time), slot_rows, rows, rc,
                      h.row_team, h.contest_teams, h.team_rows, h.team_place, h.weight,
                      row_slot, r, nu_out, w2_nat, float(prior_wins), float(damping))
    converged = bool(norm < tol)
    if strict and not converged:
        raise ConvergenceError(f"WHR did not converge in {sweeps} sweeps (largest gradient "
                               f"component {norm:.3g}); raise max_iter or tol")
    return WHRResult(slot_player, np.ascontiguousarray(slot_time), r, var, row_slot,
                     float(nu_out), converged, int(sweeps), float(norm))
