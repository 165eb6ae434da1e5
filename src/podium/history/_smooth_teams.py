"""Phase 1 of ``mmr-smooth`` for team rounds: Elo-MMR's team rule (docs/teams.md,
"Elo-MMR and Elo-R"; :mod:`podium.systems.base.two_phase_teams`) over the members'
cavity beliefs (docs/history.md, "Team rounds").

A round is a team round when a team has several members or a member a weight below 1
(as :attr:`~podium.core.contest.Contest.team_round`, the rounds ``mmr`` rates with
:meth:`~podium.systems.elo_mmr.EloMMR.team_update`).  Its phase 1 is the filter's
steps 3-4 with each member's cavity ``(mu^c_i, sigma^c_i)`` in place of its prior:

* (T1) the team terms ``mu_T = sum_i w_i mu^c_i``,
  ``delta_T^2 = sum_i w_i^2 delta_i^2``, ``delta_i = hypot(sigma^c_i, beta_i)``
  (:func:`~podium.systems.base.two_phase_teams.team_terms`);
* Theorem 3.2 over the team terms: each team performance ``P_T`` is the zero of
  ``Q_T``, solved around the round's mean ``mu_T``
  (:func:`~podium.systems.base.two_phase_teams.solve_center`), directly up to
  ``DIRECT_GROUPS`` tie groups of teams, by Chebyshev panels above;
* (T4) each member's measurement ``p_i = mu^c_i + (P_T - mu_T) / w_i`` with noise
  ``b_i^2 = beta_i^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2``, and (T7, when
  ``team_perf_uncertainty`` ``u > 0``) ``p_i' = mu^c_i + (p_i - mu^c_i) d``,
  ``sigma^c_i^2 + b_i'^2 = (sigma^c_i^2 + b_i^2) d``,
  ``d = delta_T^2 / (delta_T^2 - V_T)``, ``V_T = u (1 - 1/pi) delta_T^2 / (T - 1)``;
  ``p_i'`` capped at the contest's ceiling.

Phase 2 is unchanged: the measurement enters the member's forward and backward
filters as a logistic factor of centre ``p_i'`` and spread ``b_i'`` (Eq. 6-8), so a
team entry's ``beta`` and ``a = pi / (sqrt 3 beta)`` are the noise of its last phase 1
(the diffusion's ``gamma`` stays the member's own).  The round's Elo-MMR ``beta_i``
(phase 1's ``delta_i``) is kept per row in :class:`~podium.history._smooth_kernels.Rounds`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from podium.core.numerics.performance import (
    LOGISTIC,
    OpponentTerms,
    TieGroups,
    performance_zeros,
)
from podium.history import _smooth_kernels as K
from podium.history.data import ContestHistory, concat_ranges
from podium.systems.base.two_phase_teams import (
    member_measurements,
    standings_variance,
    team_terms,
    uncertain_measurements,
)

__all__ = ["TeamRounds", "TeamSolve", "team_rounds", "solve_team_rounds",
           "save_noise", "restore_noise"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_TANH = math.pi / math.sqrt(3.0)


class TeamRounds(NamedTuple):
    """What the team rule reads of a history besides :class:`~K.Rounds`.

    Attributes
    ----------
    is_team:
        Per contest: rated by the team rule.
    team_rows:
        The history's ``T + 1`` team offsets into its rows.
    weight:
        Per row: the member's weight ``w_i``.
    """

    is_team: BoolArray
    team_rows: IntArray
    weight: FloatArray

    @property
    def any(self) -> bool:
        """Whether some contest is a team round."""
        return bool(self.is_team.any())


class TeamSolve(NamedTuple):
    """What a team phase 1 changed.

    Attributes
    ----------
    perf_change, noise_change:
        The largest change of a member's performance ``p_i'`` and of its noise ``b_i'``.
    unsolved:
        Team performance solves that did not converge.
    rows:
        The rows re-solved (contest order).
    """

    perf_change: float
    noise_change: float
    unsolved: int
    rows: IntArray


def team_rounds(history: ContestHistory) -> TeamRounds:
    """The team rounds of ``history``: a contest with fewer teams than rows or a member
    weight below 1 (:attr:`~podium.core.contest.Contest.team_round`)."""
    h = history
    ct = h.contest_teams
    n_teams = np.diff(ct)
    n_rows = np.diff(h.contest_rows)
    partial = np.zeros(h.n_contests, dtype=bool)
    partial[h.row_contest[h.weight != 1.0]] = True
    return TeamRounds((n_teams != n_rows) | partial, h.team_rows, h.weight)


def solve_team_rounds(contests: IntArray, rd: K.Rounds, en: K.Entries, e_of_row: IntArray,
                      teams: TeamRounds, large: BoolArray, split_ties: bool,
                      uncertainty: float, widen: float) -> TeamSolve:
    """Phase 1 of the team rounds ``contests`` from the members' current cavities (see
    the module docstring): writes each member's ``p_i'`` to ``rd.perf`` (the rows) and
    its noise ``b_i'`` to ``en.beta`` and ``en.a`` (its entry).

    Parameters
    ----------
    contests:
        Team rounds, in any order.
    rd, en, e_of_row:
        The state's rows, entries and the entry of each row.
    teams:
        :func:`team_rounds` of the state's history.
    large:
        Per contest: more than ``DIRECT_GROUPS`` tie groups (of teams).
    split_ties, uncertainty:
        Elo-MMR's ``split_ties`` and ``team_perf_uncertainty``.
    widen:
        The Chebyshev panels' half-width in units of the filter's (1 in the first pass).

    Returns
    -------
    TeamSolve
    """
    cs = np.ascontiguousarray(contests, dtype=np.int64)
    if cs.size == 0:
        return TeamSolve(0.0, 0.0, 0, np.zeros(0, dtype=np.int64))
    ct = rd.contest_teams
    t_of = concat_ranges(ct[cs], ct[cs + 1])  # the rounds' teams
    rows = concat_ranges(rd.contest_rows[cs], rd.contest_rows[cs + 1])
    n_t = ct[cs + 1] - ct[cs]
    sizes = np.diff(teams.team_rows)[t_of]
    offs = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    c_loc = np.r_[0, np.cumsum(n_t)].astype(np.int64)  # teams of each round (local)
    mu, sig, beta = rd.cav_mu[rows], rd.cav_sig[rows], rd.beta[rows]
    w = teams.weight[rows]
    delta = np.hypot(sig, beta)
    # T1: one term per team
    terms = team_terms(mu, delta, w, offs)
    # solved around each round's mean team rating (solve_center), 0 for one-member teams
    n_rows = rd.contest_rows[cs + 1] - rd.contest_rows[cs]
    mean = np.add.reduceat(terms.mu, c_loc[:-1]) / n_t
    center = np.where(n_t < n_rows, mean, 0.0)
    team_c = np.repeat(np.arange(cs.size, dtype=np.int64), n_t)
    t_mu = np.ascontiguousarray(terms.mu - center[team_c])
    t_delta = np.ascontiguousarray(terms.delta)
    zero = np.zeros(t_of.size)
    place = np.ascontiguousarray(rd.team_place[t_of])
    no_cap = np.full(cs.size, math.inf)
    perf_t = np.zeros(t_of.size)
    big = large[cs]
    # Theorem 3.2 over the team terms: a team is a "row" of delta_T = hypot(delta_T, 0)
    _, bad = K.solve_small_rounds(np.flatnonzero(~big).astype(np.int64), c_loc, place, c_loc,
                                  t_mu, t_delta, zero, split_ties, no_cap, perf_t)
    for q in np.flatnonzero(big).tolist():
        tm, w_arg, w_out, dmin = K.round_terms(q, c_loc, t_mu, t_delta, zero)
        start, end = K.tie_groups(place[c_loc[q]:c_loc[q + 1]])
        gperf, status, _ = performance_zeros(LOGISTIC, OpponentTerms(tm, w_arg, w_out),
                                             TieGroups(start, end), split_ties,
                                             widen * float(dmin), K.DIRECT_GROUPS)
        _, nb = K.store_perf(q, c_loc, start, end, gperf, status.astype(np.int64), no_cap,
                             perf_t)
        bad += nb
    perf_t = perf_t + center[team_c]
    # T4 (and T7): each member's measurement
    measured = member_measurements(mu, delta, beta, w, offs, terms, perf_t)
    if uncertainty > 0.0:
        measured = uncertain_measurements(mu, sig, offs, terms, measured,
                                          standings_variance(uncertainty, terms.delta,
                                                             n_t[team_c]))
    row_c = np.repeat(cs, n_rows)
    perf = np.minimum(measured.perf, rd.ceiling[row_c])
    e = e_of_row[rows]
    ch_p = float(np.abs(perf - rd.perf[rows]).max())
    ch_n = float(np.abs(measured.noise - en.beta[e]).max())
    rd.perf[rows] = perf
    en.beta[e] = measured.noise
    en.a[e] = _TANH / measured.noise
    return TeamSolve(ch_p, ch_n, int(bad), rows)


def _team_entries(teams: TeamRounds, row_contest: IntArray, e: IntArray) -> IntArray:
    """The entries ``e`` (per row) of the rows of team rounds (``row_contest`` per row)."""
    if not teams.any:
        return np.zeros(0, dtype=np.int64)
    return e[teams.is_team[row_contest]]


def save_noise(teams: TeamRounds, en: K.Entries, row_contest: IntArray,
               e: IntArray) -> dict[str, FloatArray]:
    """The noises of the team rows among the rows ``e`` (entries; their contests
    ``row_contest``), as ``{"entries.team_noise": ...}`` (none without team rows): what
    a checkpoint of the state needs besides the history."""
    team = _team_entries(teams, row_contest, e)
    return {"entries.team_noise": en.beta[team]} if team.size else {}


def restore_noise(teams: TeamRounds, en: K.Entries, row_contest: IntArray, e: IntArray,
                  arrays: dict[str, npt.NDArray[np.float64]]) -> None:
    """Load :func:`save_noise` into the team rows' ``beta`` and ``a``.

    Raises
    ------
    KeyError, ValueError
        When the image has no noises, or not one per team row.
    """
    team = _team_entries(teams, row_contest, e)
    if team.size == 0:
        return
    noise = arrays["entries.team_noise"]
    if noise.size != team.size:
        raise ValueError(f"{noise.size} team noises where the history's rated contests "
                         f"have {team.size} team rows")
    en.beta[team] = noise
    en.a[team] = _TANH / noise
