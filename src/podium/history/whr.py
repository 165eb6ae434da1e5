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
from podium.history import _whr_update as U
from podium.history.anderson import Anderson
from podium.history.data import ContestHistory, check_history

__all__ = ["WHRResult", "whr", "whr_update", "ELO_PER_NAT", "result_arrays",
           "result_from_arrays"]

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
    nu_swept:
        The draw tendency at which every day last took a Newton step (``nu`` for
        :func:`whr`; :func:`whr_update` steps every day again once ``log nu`` has
        moved from it by more than its ``nu_tol``).
    days:
        :func:`whr_update`: the days it stepped (its work: the Newton steps' windows,
        summed; a window widened is counted again); 0 for :func:`whr`.
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
    nu_swept: float = math.nan
    days: int = 0

    @property
    def elo(self) -> FloatArray:
        """Each slot's rating in Elo (``r 400 / ln 10``)."""
        return self.r * ELO_PER_NAT


#: The drift of ``log nu`` after which :func:`whr_update` steps every day again.  A
#: new round moves the maximum-likelihood ``log nu`` of a long history by about
#: ``1 / (its two-team rounds)`` (on the football results about 1e-4 per match, up and
#: down), so a threshold at the rating tolerance (0.01 Elo, 5.8e-5 natural units)
#: re-stepped the whole history every few matches; at 1e-3 it does so after a drift
#: of 1e-3 (docs/history.md, "Adding one contest": what the drift moves).
NU_TOL = 1e-3

#: The error of a singular or non-finite Newton step.
SINGULAR = ("a Newton step of WHR turned singular or non-finite: the drift prior between "
            "two days is too tight for the games; use a larger w2 or merge days that are "
            "almost equal")


def whr(history: ContestHistory, *, w2: float = 300.0, prior_wins: float = 0.5,
        nu: float | None = None, damping: float = 1.0, tol: float = 1e-10,
        max_iter: int = 10000, memory: int = 5, strict: bool = False,
        start: WHRResult | None = None) -> WHRResult:
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
    start:
        A fit of this history's first contests (:func:`whr` or :func:`whr_update`) to
        start the sweeps from: its days keep their ratings, a new day starts at the
        player's previous day's (0 for a newcomer) and a fitted ``nu`` at its ``nu``,
        instead of every rating at 0 and ``nu`` at 1.  The maximum is the same (the
        stopping rule is the gradient's, wherever the sweeps start); near it, fewer
        sweeps reach ``tol``.  Its variances are not used: the result's are computed
        at the maximum, as from scratch.  ``None`` (default): from scratch.

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
    ValueError
        When ``start`` is not a fit of the history's first contests.
    """
    _check_params(w2, prior_wins, damping, nu, tol)
    h = history
    rc = h.row_contest
    st = _structure(h)
    player_slots, slot_time, slot_rows, rows, row_slot = (
        st.player_slots, st.slot_time, st.slot_rows, st.rows, st.row_slot)
    fit_nu, nu0 = _draw_model(h, nu)
    w2_nat = (math.sqrt(w2) / ELO_PER_NAT) ** 2
    r = np.zeros(st.slot_player.size)
    if start is not None:
        # the ratings only: the variances are computed once, at the maximum, by one
        # direct recursion per player (nothing to start from)
        r[:] = _carry_ratings(start, st, _old_slots(start, st))
        if fit_nu and start.nu > 0 and math.isfinite(start.nu):
            nu0 = float(start.nu)

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
        raise ConvergenceError(SINGULAR)
    var = K.variances(player_slots, np.ascontiguousarray(slot_time), slot_rows, rows, rc,
                      h.row_team, h.contest_teams, h.team_rows, h.team_place, h.weight,
                      row_slot, r, nu_out, w2_nat, float(prior_wins), float(damping))
    converged = bool(norm < tol)
    if strict and not converged:
        raise ConvergenceError(f"WHR did not converge in {sweeps} sweeps (largest gradient "
                               f"component {norm:.3g}); raise max_iter or tol")
    return WHRResult(st.slot_player, slot_time, r, var, row_slot, float(nu_out), converged,
                     int(sweeps), float(norm), float(nu_out))


def _check_params(w2: float, prior_wins: float, damping: float, nu: float | None,
                  tol: float) -> None:
    for name, v in (("w2", w2), ("tol", tol)):
        if not (math.isfinite(v) and v > 0):
            raise ConfigError(f"{name} must be finite and positive, got {v!r}")
    for name, v in (("prior_wins", prior_wins), ("damping", damping)):
        if not (math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be finite and >= 0, got {v!r}")
    if nu is not None and not (math.isfinite(nu) and nu >= 0):
        raise ConfigError(f"nu must be None or finite and >= 0, got {nu!r}")


class _Structure(NamedTuple):
    """The slots (player, distinct time) of a history, by player then time, with each
    player's slot range and each slot's rows."""

    slot_player: IntArray
    slot_time: FloatArray
    player_slots: IntArray
    row_slot: IntArray
    rows: IntArray
    slot_rows: IntArray


def _structure(h: ContestHistory, first: int = 0) -> _Structure:
    """Check ``h`` (the rows of the contests before ``first`` were checked before) and
    lay out its slots in one pass over the rows (``_whr_update.player_layout``)."""
    check_history(h, first=first)
    # the distinct times (the history's are in order) and each contest's
    new_time = np.r_[True, h.time[1:] != h.time[:-1]] if h.n_contests else np.zeros(0, bool)
    times = h.time[new_time]
    t_index = (np.cumsum(new_time) - 1).astype(np.int64)
    slot_player, slot_t, player_slots, row_slot, rows, slot_rows = U.player_layout(
        h.row_contest, t_index, h.player, h.n_players)
    slot_time = np.ascontiguousarray(times[slot_t] if slot_t.size else np.zeros(0))
    return _Structure(slot_player, slot_time, player_slots, row_slot, rows, slot_rows)


def _draw_model(h: ContestHistory, nu: float | None) -> tuple[bool, float]:
    """Whether ``nu`` is fitted, and its start: draws among the two-team rounds decide
    (fitted when some are draws and some not; 0 without draws)."""
    n_teams = np.diff(h.contest_teams)
    first = h.contest_teams[np.flatnonzero(n_teams == 2)]
    drawn = h.team_place[first] == h.team_place[first + 1]
    if nu is None:
        return bool(drawn.any() and (~drawn).any()), 1.0 if drawn.any() else 0.0
    return False, float(nu)


def whr_update(previous: WHRResult, history: ContestHistory, *, w2: float = 300.0,
               prior_wins: float = 0.5, nu: float | None = None, damping: float = 1.0,
               tol: float = 0.01 / ELO_PER_NAT, max_sweeps: int = 3,
               nu_tol: float = NU_TOL) -> tuple[WHRResult, int] | None:
    """Whole-History Rating of a history that grew at its end, from the previous fit's
    ratings, re-solving only what the new contests touch.

    A new day starts at the player's latest rating (0 for a newcomer).  Then sweeps of
    Newton steps (Sec. 3.3) on *windows* of days: first the new contests' days, each
    in a window of its player's days around it, the player's other days held fixed,
    widened while its edge days move by more than ``tol``; a day that moved by more
    than ``tol`` is stepped again at the next sweep, with the days of every participant
    of its rounds (``_whr_update.whr_update``); at most ``max_sweeps`` sweeps.  The
    work is the days stepped (``days`` of the result), not the careers of the players
    touched.  The fixed point is :func:`whr`'s, up to what the bounded sweeps leave
    (and the variances of the days not stepped, which are kept).

    Parameters
    ----------
    previous:
        The result of :func:`whr` (or of this function) on the first contests of
        ``history``.
    history:
        ``previous``'s history followed by new contests (none earlier than its last).
    w2, prior_wins, nu, damping:
        The model, as :func:`whr` (the previous fit's values).
    tol:
        The change of a rating (natural units) that spreads.
    nu_tol:
        The drift of ``log nu`` since every day last took a step (over any number of
        updates) that makes this update step every day again (:data:`NU_TOL`).
    max_sweeps:
        At most this many sweeps.

    Returns
    -------
    (WHRResult, int) or None
        The result (``sweeps`` the update's; ``converged``: whether nothing moved by
        more than ``tol`` was left to spread; ``grad_norm`` NaN: not computed) and the
        number of players stepped; ``None`` when the draw model changed with the new
        contests (the first draw, or the first decisive round: ``nu`` starts afresh, so
        :func:`whr` must solve the whole history).

    Raises
    ------
    ValueError
        When ``previous`` is not a fit of the history's first contests.
    ConfigError, ConvergenceError
        As :func:`whr`.
    """
    _check_params(w2, prior_wins, damping, nu, tol)
    if not (math.isfinite(nu_tol) and nu_tol > 0):
        raise ConfigError(f"nu_tol must be finite and positive, got {nu_tol!r}")
    if max_sweeps < 1:
        raise ConfigError(f"max_sweeps must be >= 1, got {max_sweeps!r}")
    h = history
    n_old_rows = previous.row_slot.size
    n_old = int(np.searchsorted(h.contest_rows, n_old_rows, side="left"))
    st = _structure(h, first=n_old)
    fit_nu, nu0 = _draw_model(h, nu)
    old_fit, old_nu0 = _draw_model(h.prefix(n_old), nu)
    if fit_nu != old_fit or (not fit_nu and nu0 != old_nu0):
        return None
    n_s = st.slot_player.size
    where = _old_slots(previous, st)
    r = _carry_ratings(previous, st, where)
    # an old day keeps its variance until it is stepped; a new day's (0 here) is
    # computed when it is
    variance = np.zeros(n_s)
    variance[where] = previous.variance
    mark = np.zeros(n_s, dtype=np.bool_)
    mark[st.row_slot[n_old_rows:]] = True
    w2_nat = (math.sqrt(w2) / ELO_PER_NAT) ** 2
    nu_prev = previous.nu if fit_nu else nu0
    nu_swept = previous.nu_swept if math.isfinite(previous.nu_swept) else nu_prev
    nu_out, nu_swept, sweeps, settled, touched, days, flag = U.whr_update(
        st.player_slots, st.slot_player, st.slot_time, st.slot_rows, st.rows, h.row_contest,
        h.row_team, h.contest_teams, h.team_rows, h.team_place, h.weight, st.row_slot,
        h.contest_rows, r, variance, nu_prev, nu_swept, fit_nu, w2_nat, float(prior_wins),
        float(damping), float(tol), float(nu_tol), int(max_sweeps), mark)
    if flag:
        raise ConvergenceError(SINGULAR)
    return (WHRResult(st.slot_player, st.slot_time, r, variance, st.row_slot, float(nu_out),
                      bool(settled), int(sweeps), math.nan, float(nu_swept), int(days)),
            int(touched))


def _old_slots(previous: WHRResult, st: _Structure) -> IntArray:
    """Where ``previous``'s slots are among the slots ``st`` of a history that grew at
    its end (the old rows map them onto the new ones).

    Raises
    ------
    ValueError
        When ``previous`` is not a fit of the history's first contests.
    """
    n_old_rows = previous.row_slot.size
    if n_old_rows > st.row_slot.size:
        raise ValueError("the previous WHR result is not a fit of this history's first "
                         "contests")
    where = np.full(previous.slot_player.size, -1, dtype=np.int64)
    where[previous.row_slot] = st.row_slot[:n_old_rows]
    if (np.any(where < 0) or not np.array_equal(st.slot_player[where], previous.slot_player)
            or not np.array_equal(st.slot_time[where], previous.slot_time)):
        raise ValueError("the previous WHR result is not a fit of this history's first "
                         "contests")
    return where


def _carry_ratings(previous: WHRResult, st: _Structure, where: IntArray) -> FloatArray:
    """The starting ratings ``r`` of the slots ``st`` from ``previous`` (its slots at
    ``where``): an old day keeps its own, a new day starts at the player's previous
    day's (0 for a newcomer; slots are by player, then time)."""
    n_s = st.slot_player.size
    fresh = np.ones(n_s, dtype=bool)
    fresh[where] = False
    r = np.zeros(n_s)
    r[where] = previous.r
    for s in np.flatnonzero(fresh):
        if s > 0 and st.slot_player[s - 1] == st.slot_player[s]:
            r[s] = r[s - 1]
    return r


def result_arrays(result: WHRResult) -> dict[str, npt.NDArray[np.generic]]:
    """The arrays of ``result`` that :func:`whr_update` goes on from (a checkpoint's),
    by name; :func:`result_from_arrays` reads them back."""
    return {"slot_player": result.slot_player, "slot_time": result.slot_time,
            "r": result.r, "variance": result.variance, "row_slot": result.row_slot,
            "nu": np.array([result.nu, result.nu_swept])}


def result_from_arrays(arrays: dict[str, npt.NDArray[np.generic]]) -> WHRResult:
    """The :class:`WHRResult` of :func:`result_arrays`' output (``sweeps`` 0).

    Raises
    ------
    KeyError
        For a missing array.
    """
    a = {k: np.asarray(v) for k, v in arrays.items()}
    return WHRResult(a["slot_player"].astype(np.int64), a["slot_time"], a["r"],
                     a["variance"], a["row_slot"].astype(np.int64), float(a["nu"][0]), True,
                     0, math.nan, float(a["nu"][1]))
