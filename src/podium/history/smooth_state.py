"""The working state of ``mmr-smooth`` (see :mod:`podium.history.mmr_smooth`): the two
phases of Elo-MMR over a history, rated contest by contest or all at once, and the
sweeps that alternate them until they agree."""

from __future__ import annotations

import math
import time

import numpy as np
import numpy.typing as npt

from podium.core.numerics.performance import (
    LOGISTIC,
    OpponentTerms,
    TieGroups,
    performance_zeros,
)
from podium.errors import ConfigError
from podium.history import _smooth_kernels as K
from podium.history._smooth_groups import (
    UPDATE_NODES,
    UPDATE_PANELS,
    StoredResiduals,
    moved_groups,
)
from podium.history._smooth_teams import (
    TeamSolve,
    restore_noise,
    save_noise,
    solve_team_rounds,
    team_rounds,
)
from podium.history.anderson import Anderson
from podium.history.coarse import CoarseModel
from podium.history.data import (
    ContestHistory,
    check_history,
    player_rounds,
    select_contests,
)
from podium.history.params import MMRParams
from podium.history.residual_store import restore_residuals, save_residuals
from podium.history.sweeps import (
    SWEEP_PANELS,
    SWEEP_STEP,
    WIDE_PANELS_SKIP,
    SweepReport,
    sweep_panels,
)

__all__ = ["MMRParams", "SWEEP_PANELS", "SWEEP_STEP", "WIDE_PANELS_SKIP", "SweepReport",
           "SmoothState", "sweep_panels"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_TANH = math.pi / math.sqrt(3.0)

def _per_contest(value: float | npt.ArrayLike | None, n: int, default: float,
                 what: str) -> FloatArray:
    if value is None:
        return np.full(n, default)
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)).copy()
    if np.any(np.isnan(arr)):
        raise ConfigError(f"{what} must not be NaN")
    return arr


class SmoothState:
    """The arrays of a smoothing: the rated contests (:attr:`history`), their rows in
    contest order (phase 1, :attr:`rounds`) and in player order (phase 2,
    :attr:`entries`), each player's forward belief after its last rated round
    (:attr:`filter_state`).

    Built by :meth:`start`.  :meth:`rate_forward` rates the next contests as Elo-MMR
    does (from the forward priors: nothing later is known yet); :meth:`phase2` and
    :meth:`phase1` redo one phase for some players or contests;
    :func:`~podium.history.smooth_update.bounded_update`
    alternates them from the players whose performances changed.

    Attributes
    ----------
    history:
        The contests that are rated (the input without those everybody tied).
    source_rows:
        Per row of :attr:`history`, its row in the input history.
    rated:
        How many contests are rated so far.
    unsolved:
        Performance solves that did not converge so far.
    filtered_mu, filtered_sigma:
        Per entry, Elo-MMR's own rating after the round (the first pass).
    forecast_mu, forecast_sigma:
        Per row, the prior each contest was first rated from (before anything later
        was known).
    """

    def __init__(self, history: ContestHistory, params: MMRParams, window_tol: float,
                 ceiling: FloatArray, source_rows: IntArray, n_source_rows: int,
                 contest_weight: FloatArray) -> None:
        self.history = history
        self.params = params
        self.window_tol = window_tol
        self.source_rows = source_rows
        self.n_source_rows = n_source_rows
        pr = player_rounds(history)
        rc = history.row_contest
        self.row_contest = rc
        n_r, n_p = pr.rows.size, history.n_players
        p = params
        beta, gamma = K.round_weights(pr.offsets, pr.rows, rc, history.time, contest_weight,
                                      p.weight_limit, np.asarray(p.noob_delay, np.float64),
                                      p.sig_limit, p.drift_per_day)
        self.e_of_row = np.empty(n_r, dtype=np.int64)
        self.e_of_row[pr.rows] = np.arange(n_r, dtype=np.int64)
        beta_r = beta[self.e_of_row]
        z = np.zeros
        self.rounds = K.Rounds(history.contest_rows, history.team_place,
                               history.contest_teams, history.player, beta_r, ceiling,
                               z(n_r), z(n_r), z(n_r))
        self.entries = K.Entries(pr.offsets, pr.rows, np.zeros(n_p, dtype=np.int64), z(n_r),
                                 beta, gamma, _TANH / beta, *(z(n_r) for _ in range(15)))
        self.filter_state = K.FilterState(z(n_p), z(n_p), z(n_p), z(n_p),
                                          np.zeros(n_p, dtype=np.int64))
        self.filtered_mu = z(n_r)
        self.filtered_sigma = z(n_r)
        #: per row: its tie group's last residual, for the update's gate
        self.stored = StoredResiduals(z(n_r), z(n_r), np.full(n_r, np.nan), z(n_r), z(n_r))
        #: per row: its performance moved by more than the update's threshold
        self.moved_rows = np.zeros(n_r, dtype=np.bool_)
        #: per row: the prior each contest was first rated from (nothing later known)
        self.forecast_mu = z(n_r)
        self.forecast_sigma = z(n_r)
        place = history.team_place
        breaks = np.r_[0, np.cumsum(place[1:] != place[:-1])]
        ct = history.contest_teams
        groups = breaks[ct[1:] - 1] - breaks[ct[:-1]] + 1
        #: per contest: more tie groups than the direct solve takes
        self.large = groups > K.DIRECT_GROUPS
        #: the team rounds (rated by Elo-MMR's team rule, :mod:`._smooth_teams`)
        self.teams = team_rounds(history)
        self.rated = 0
        self.unsolved = 0

    @classmethod
    def start(cls, history: ContestHistory, params: MMRParams | None = None,
              contest_weight: npt.ArrayLike | float | None = None,
              perf_ceiling: npt.ArrayLike | float | None = None,
              window_tol: float = 1e-9) -> SmoothState:
        """The state of a history before any contest is rated.

        Parameters
        ----------
        history:
            Contests in time order (team rounds by Elo-MMR's team rule).
        params:
            Elo-MMR's parameters (default: Podium's ``mmr``).
        contest_weight, perf_ceiling:
            Per contest (or one value for all): its weight (default 1) and the cap on
            its performances (default none).
        window_tol:
            A logistic factor whose multiplicity has decayed below this is left out of
            the sums (multiplicities decay geometrically with the rounds since; 0 keeps
            every factor, as Podium's exact ``mmr`` does).

        Raises
        ------
        ContestError
            On a history that breaks its rules (:func:`check_history`).
        ConfigError
            On a weight, ceiling or tolerance out of range.
        """
        if not (0.0 <= window_tol < 1.0):
            raise ConfigError(f"window_tol must be in [0, 1), got {window_tol!r}")
        check_history(history)
        h = history
        cw = _per_contest(contest_weight, h.n_contests, 1.0, "contest_weight")
        if np.any(cw <= 0) or not np.all(np.isfinite(cw)):
            raise ConfigError("contest_weight must be finite and positive")
        ceil = _per_contest(perf_ceiling, h.n_contests, math.inf, "perf_ceiling")
        # a contest everybody tied carries nothing (Elo-MMR skips it)
        keep = h.team_place[h.contest_teams[1:] - 1] != h.team_place[h.contest_teams[:-1]]
        sub, source = select_contests(h, keep)
        return cls(sub, params or MMRParams(), float(window_tol), ceil[keep], source,
                   h.n_rows, cw[keep])

    @property
    def collapse(self) -> bool:
        """Elo-MMR(inf): every diffusion collapses the belief to a normal."""
        return math.isinf(self.params.rho)

    @property
    def rated_rows(self) -> int:
        """The rows of the rated contests are ``0 .. rated_rows - 1``."""
        return int(self.rounds.contest_rows[self.rated])

    def rate_forward(self, n: int) -> IntArray:
        """Rate the next ``n`` contests as Elo-MMR does (each from its participants'
        forward priors, the filter's order); returns the players touched.  Their new
        entries' smoothed ratings start at the filtered ones."""
        p = self.params
        rd, en, fs = self.rounds, self.entries, self.filter_state
        c0, c1 = self.rated, min(self.rated + n, self.history.n_contests)
        bad = np.zeros(1, dtype=np.int64)
        c = c0
        team = np.flatnonzero(self.teams.is_team[c0:c1]) + c0
        for stop in [*team.tolist(), c1]:
            while c < stop:
                c = K.filter_run(c, stop, rd, en, fs, p.mu_noob, p.sig_noob, float(p.rho),
                                 self.collapse, self.window_tol, p.split_ties, bad)
                if c < stop:  # a large round: performances by panels, then the posteriors
                    self._solve_large(c)
                    K.filter_absorb_parallel(c, rd, en, fs, self.window_tol)
                    c += 1
            if c < c1:  # a team round: priors, the team rule, then the posteriors
                K.filter_priors(c, rd, en, fs, p.mu_noob, p.sig_noob, float(p.rho),
                                self.collapse)
                self._solve_teams(np.array([c]), 1.0)
                K.filter_absorb(c, rd, en, fs, self.window_tol)
                c += 1
        self.unsolved += int(bad[0])
        r0, r1 = rd.contest_rows[c0], rd.contest_rows[c1]
        self.forecast_mu[r0:r1] = rd.cav_mu[r0:r1]
        self.forecast_sigma[r0:r1] = rd.cav_sig[r0:r1]
        e = self.e_of_row[r0:r1]
        self.filtered_mu[e] = en.fwd_mu[e]
        self.filtered_sigma[e] = en.fwd_sig[e]
        en.sm_mu[e] = en.fwd_mu[e]
        en.sm_sig[e] = en.fwd_sig[e]
        en.bwd_mu[e] = en.perf[e]
        self.rated = c1
        return np.unique(rd.player[r0:r1])

    def _solve_large(self, c: int, widen: float = 1.0) -> float:
        """Phase 1 for a contest of more than ``DIRECT_GROUPS`` tie groups by
        :func:`~podium.core.numerics.performance_zeros` (Chebyshev panels, in
        parallel: a compiled caller could not be cached); returns the largest change
        of a performance.

        ``widen`` scales the panels' half-width (1: Elo-MMR's own, for the first pass;
        :data:`SWEEP_PANELS` in the sweeps)."""
        rd = self.rounds
        mu, w_arg, w_out, dmin = K.round_terms(c, rd.contest_rows, rd.cav_mu, rd.cav_sig,
                                               rd.beta)
        start, end = K.tie_groups(rd.team_place[rd.contest_teams[c]:rd.contest_teams[c + 1]])
        gperf, status, _ = performance_zeros(LOGISTIC, OpponentTerms(mu, w_arg, w_out),
                                             TieGroups(start, end), self.params.split_ties,
                                             widen * float(dmin), K.DIRECT_GROUPS)
        ch, bad = K.store_perf(c, rd.contest_rows, start, end, gperf,
                               status.astype(np.int64), rd.ceiling, rd.perf)
        self.unsolved += int(bad)
        return float(ch)

    def _solve_teams(self, contests: IntArray, widen: float = SWEEP_PANELS) -> TeamSolve:
        """Phase 1 of team rounds by Elo-MMR's team rule from the members' cavities
        (:func:`~podium.history._smooth_teams.solve_team_rounds`): each member's
        performance to ``rounds.perf``, its noise to ``entries.beta`` and ``entries.a``."""
        out = solve_team_rounds(contests, self.rounds, self.entries, self.e_of_row,
                                self.teams, self.large, self.params.split_ties,
                                self.params.team_perf_uncertainty, widen)
        self.unsolved += out.unsolved
        return out

    def phase2(self, players: IntArray, smoothed: bool = False,
               changed: tuple[IntArray, IntArray] | None = None, eps: float = -1.0) -> float:
        """Rebuild the beliefs of ``players`` from their performances (forward and
        backward filters, cavities; the smoothed beliefs too with ``smoothed``) and hand
        their cavities to phase 1; returns the largest change of a cavity rating.

        ``changed``: per player (aligned with ``players``), the first and last of its
        rounds whose performance changed since its beliefs were computed; the filters
        then restart there and stop once a belief moves by less than ``eps``
        (:func:`~podium.history._smooth_kernels.smooth_player`).  ``None``: every
        round, no early stop.
        """
        return self._phase2(players, smoothed, changed, eps)[0]

    def _phase2(self, players: IntArray, smoothed: bool = False,
                changed: tuple[IntArray, IntArray] | None = None,
                eps: float = -1.0) -> tuple[float, IntArray]:
        """:meth:`phase2`, also returning the rows of the players' rated entries."""
        if players.size == 0:
            return 0.0, np.zeros(0, dtype=np.int64)
        p = self.params
        en, rd = self.entries, self.rounds
        todo = np.ascontiguousarray(players, dtype=np.int64)
        if changed is None:
            lo = np.zeros(todo.size, dtype=np.int64)
            hi = en.n_rated[todo] - 1
            eps = -1.0
        else:
            lo, hi = changed
        ch = K.smooth_players(todo, np.ascontiguousarray(lo, dtype=np.int64),
                              np.ascontiguousarray(hi, dtype=np.int64), float(eps), en,
                              self.filter_state, p.mu_noob, p.sig_noob, float(p.rho),
                              self.collapse, self.window_tol, smoothed)
        e = K.player_entries(todo, en.off, en.n_rated)
        r = en.rows[e]
        rd.cav_mu[r] = en.cav_mu[e]
        rd.cav_sig[r] = en.cav_sig[e]
        return float(ch.max()), r

    def phase1(self, contests: IntArray) -> float:
        """Re-solve the performances of ``contests`` from the current cavities and hand
        them to phase 2; returns the largest change of a performance."""
        if contests.size == 0:
            return 0.0
        worst = self._solve_rounds(contests)
        rd, en = self.rounds, self.entries
        e = K.contest_entries(np.ascontiguousarray(contests, dtype=np.int64),
                              rd.contest_rows, self.e_of_row)
        en.perf[e] = rd.perf[en.rows[e]]
        return worst

    def phase1_newton(self, contests: IntArray, threshold: float,
                      widen: float = SWEEP_PANELS, gate: bool = False,
                      track: bool = False, nodes: int = UPDATE_NODES, keep: bool = True,
                      ) -> tuple[float, int, int, IntArray]:
        """Phase 1 of ``contests`` by Newton from the current performances, on the
        rounds' side only (the sweeps' phase 1, and the update's solves).

        Per individual round one Chebyshev interpolant of the summed terms ``Phi`` and
        ``Phi'`` on panels over the groups' current performances (``widen`` times the
        first pass's half-width; :func:`~podium.history._smooth_groups.moved_groups`)
        gives each tie group's ``Q_g`` and Newton step; a group whose step exceeds
        half of ``threshold`` is solved on to its zero (Newton on the interpolant; the
        direct sums over every term wherever an iterate leaves the panels), and its
        performance is replaced when it moved by more than ``threshold``.  With a
        small ``threshold`` (:data:`SWEEP_STEP` ``* tol``) every performance is the
        zero of its ``Q_g`` (Theorem 3.2) to about ``threshold``, as
        :meth:`phase1` solves it from scratch.  Team rounds are solved again whole by
        the team rule (:meth:`_solve_teams`).  With ``gate``, a round is first gated
        by its stored residuals (:func:`~podium.history.smooth_update.phase1_moved`);
        with ``track``, the rows whose performance moved by more than ``threshold``
        are marked in :attr:`moved_rows`; ``nodes``: the interpolants' Chebyshev
        nodes per panel; ``keep``: store every evaluated group's residual for the gate
        (the full solve's sweeps do not: :meth:`refresh_residuals` stores them all
        when the sweeps end).

        Returns
        -------
        change, rows, gated, written
            The largest change of a performance, the rows solved again, the rounds
            that the gate left as they were and the individual rounds in which a
            performance was replaced.
        """
        rd = self.rounds
        todo = np.ascontiguousarray(contests, dtype=np.int64)
        team = TeamSolve(0.0, 0.0, 0, np.zeros(0, dtype=np.int64))
        if self.teams.any:
            is_team = self.teams.is_team[todo]
            team = self._solve_teams(todo[is_team])
            todo = np.ascontiguousarray(todo[~is_team])
        ch, rows, gated, bad = moved_groups(todo, rd.contest_rows, rd.team_place,
                                            rd.contest_teams, rd.cav_mu, rd.cav_sig, rd.beta,
                                            self.params.split_ties, rd.ceiling, rd.perf,
                                            float(threshold), float(widen), nodes,
                                            K.DIRECT_GROUPS, self.stored, keep, gate,
                                            self.moved_rows, track)
        self.unsolved += int(bad)
        return (max(float(ch.max(initial=0.0)), team.perf_change),
                int(rows.sum()) + team.rows.size, int(gated.sum()), todo[ch > 0])

    def refresh_residuals(self) -> None:
        """Evaluate every rated individual round's stored residuals (the update's gate,
        :func:`~podium.history.smooth_update.phase1_moved`) at the current cavities and
        performances, moving none."""
        todo = np.flatnonzero(~self.teams.is_team[:self.rated])
        self.phase1_newton(todo, math.inf, UPDATE_PANELS)

    def _solve_rounds(self, contests: IntArray) -> float:
        """Phase 1's solves (:meth:`phase1` without handing the performances to the
        entries); returns the largest change of a performance."""
        rd = self.rounds
        worst_team = 0.0
        if self.teams.any:  # team rounds by the team rule, the others as below
            is_team = self.teams.is_team[contests]
            worst_team = self._solve_teams(contests[is_team]).perf_change
            contests = contests[~is_team]
        large = self.large[contests]
        small = np.ascontiguousarray(contests[~large], dtype=np.int64)
        ch, bad = K.solve_small_rounds(small, rd.contest_rows, rd.team_place,
                                       rd.contest_teams, rd.cav_mu, rd.cav_sig, rd.beta,
                                       self.params.split_ties, rd.ceiling, rd.perf)
        self.unsolved += int(bad)
        worst = float(ch.max()) if ch.size else 0.0
        for c in contests[large].tolist():
            worst = max(worst, self._solve_large(c, SWEEP_PANELS))
        return max(worst, worst_team)

    def set_perf(self, perf_e: FloatArray) -> None:
        """Set every rated entry's performance (player order) on both sides."""
        en, rd = self.entries, self.rounds
        r_end = self.rated_rows
        e = self.e_of_row[:r_end]
        en.perf[e] = perf_e[e]
        rd.perf[:r_end] = perf_e[e]

    def _set_row_perf(self, perf_r: FloatArray, e: IntArray) -> None:
        """Set every rated row's performance (contest order; ``e`` its entries) on both
        sides."""
        self.rounds.perf[:perf_r.size] = perf_r
        self.entries.perf[e] = perf_r

    def solve(self, tol: float, max_sweeps: int, memory: int = 10,
              skip: float | None = None, coarse: bool = True,
              ) -> tuple[list[SweepReport], bool]:
        """Alternate both phases over the rated history until no performance moves by
        more than ``tol``: the fixed point of ``x = G(x)``, ``G`` = phase 2 then phase
        1 of the performances ``x``, with Anderson acceleration (:class:`Anderson`,
        ``memory`` differences); then the smoothed beliefs.

        A player whose performances all moved by at most ``skip`` (default
        ``tol / 100``) since its last phase 2 is not redone, nor a contest whose
        cavities all moved by at most ``skip`` since its last phase 1: ``G`` is then
        exact to about ``skip``.  Phase 1 takes each tie group on by Newton from its
        current performance (:meth:`phase1_newton`, to :data:`SWEEP_STEP` ``* tol``;
        panels as :data:`WIDE_PANELS_SKIP` says) instead of solving every round from
        scratch as the first pass does.  With team rounds, a member's noise (the
        spread of its factor, set by phase 1 from its teammates' cavities) is part of
        what phase 2 reads: a player whose noises moved by more than ``skip`` is redone
        too, and the residual is the larger of the performances' and the noises'
        changes.

        With ``coarse``, Anderson runs on ``G'`` (:meth:`CoarseModel.correct
        <podium.history.coarse.CoarseModel.correct>`: ``G`` plus the per-contest
        shifts that a Gaussian model of phase 2 says are still missing, built once
        here), whose fixed points are those of ``G``; the stopping test and the
        final performances are ``G``'s own.

        Returns
        -------
        reports, converged
        """
        en, rd = self.entries, self.rounds
        skip = tol / 100.0 if skip is None else skip
        widen = sweep_panels(skip)
        r_end = self.rated_rows
        # the iterate is the performances in contest order (rows), so that the
        # bookkeeping reads contiguous arrays; phase 2 reads them in player order
        e = self.e_of_row[:r_end]
        row_player = rd.player[:r_end]
        row_contest = self.row_contest[:r_end]
        multi = en.n_rated >= 2
        accel = Anderson(memory)
        model = (CoarseModel.build(en, rd, r_end, self.row_contest, self.rated,
                                   self.params.sig_noob) if coarse and r_end else None)
        seen_perf = np.full(r_end, np.nan)  # x of each row at its player's last phase 2
        seen_mu = np.full(r_end, np.nan)  # cavities of each row at its last phase 1
        seen_sig = np.full(r_end, np.nan)
        g = rd.perf[:r_end].copy()  # G's last value of each row
        # team rounds: each row's noise now, and at its player's last phase 2
        noise = en.beta[e] if self.teams.any else None
        seen_noise = np.full(r_end, np.nan)
        reports: list[SweepReport] = []
        converged = False
        for _ in range(max_sweeps):
            t0 = time.perf_counter()
            x = rd.perf[:r_end].copy()
            # per row: did its performance move since the player's last phase 2
            moved = ~(np.abs(x - seen_perf) <= skip)
            if noise is not None:
                moved |= ~(np.abs(noise - seen_noise) <= skip)
            stale = np.zeros(en.n_rated.size, dtype=bool)
            stale[row_player[moved]] = True
            players = np.flatnonzero(stale & multi)
            ch_cav, p_rows = self._phase2(players)
            seen_perf[p_rows] = x[p_rows]
            if noise is not None:
                seen_noise[p_rows] = noise[p_rows]
            t1 = time.perf_counter()
            moved_r = ~((np.abs(rd.cav_mu[:r_end] - seen_mu) <= skip)
                        & (np.abs(rd.cav_sig[:r_end] - seen_sig) <= skip))
            redo = np.zeros(self.rated, dtype=bool)
            redo[row_contest[moved_r]] = True
            contests = np.flatnonzero(redo)
            _, n_solved, _, _ = self.phase1_newton(contests, SWEEP_STEP * tol, widen,
                                                   keep=False)
            c_rows = redo[row_contest]
            g[c_rows] = rd.perf[:r_end][c_rows]
            seen_mu[c_rows] = rd.cav_mu[:r_end][c_rows]
            seen_sig[c_rows] = rd.cav_sig[:r_end][c_rows]
            t2 = time.perf_counter()
            resid = float(np.abs(g - x).max()) if r_end else 0.0
            if noise is not None:
                new_noise = en.beta[e]
                resid = max(resid, float(np.abs(new_noise - noise).max()))
                noise = new_noise
            if resid <= tol:
                self._set_row_perf(g, e)
                converged = True
            else:
                self._set_row_perf(accel.step(x, g if model is None
                                              else model.correct(x, g)), e)
            reports.append(SweepReport(int(players.size), int(contests.size), ch_cav, resid,
                                       time.perf_counter() - t0, t1 - t0, t2 - t1, n_solved))
            if converged:
                break
        # every belief from the last performances (one-round players too: their
        # cavity is the prior, but their posterior follows their performance)
        self.phase2(np.flatnonzero(en.n_rated >= 1), smoothed=True)
        self.refresh_residuals()
        return reports, converged

    #: Entry fields that depend on the history alone (rebuilt by :meth:`start`; a team
    #: row's ``beta`` and ``a`` are its noise, saved as ``entries.team_noise``).
    _FIXED_ENTRIES = ("off", "rows", "n_rated", "beta", "gamma", "a")

    def to_arrays(self) -> dict[str, np.ndarray]:
        """What the smoothing has computed, as named arrays: per rated row (contest
        order) the round's performance and cavity, the entry's beliefs
        (``entries.*``) and the stored residuals of the update's gate (``stored.*``,
        :func:`~podium.history.residual_store.save_residuals`: ``Q_g`` and ``Q_g'`` per
        row, the cavities and performance they were taken at only where these differ
        from the round's), per player the forward filter and rated rounds, and the
        counters.  With the history, :meth:`start` and :meth:`restore` rebuild the
        state (a checkpoint), also on a history with more contests after these
        (:meth:`restore` on a longer history: incremental growth)."""
        r_end = self.rated_rows
        e = self.e_of_row[:r_end]
        en, rd = self.entries, self.rounds
        out: dict[str, np.ndarray] = {
            "rated": np.array([self.rated, self.unsolved], dtype=np.int64),
            "n_rated": en.n_rated.copy(),
            "rounds.perf": rd.perf[:r_end].copy(),
            "rounds.cav_mu": rd.cav_mu[:r_end].copy(),
            "rounds.cav_sig": rd.cav_sig[:r_end].copy(),
            "filtered_mu": self.filtered_mu[e],
            "filtered_sigma": self.filtered_sigma[e],
            "forecast_mu": self.forecast_mu[:r_end].copy(),
            "forecast_sigma": self.forecast_sigma[:r_end].copy(),
        }
        for name in K.Entries._fields:
            if name not in self._FIXED_ENTRIES:
                out[f"entries.{name}"] = getattr(en, name)[e]
        for name in K.FilterState._fields:
            out[f"filter.{name}"] = getattr(self.filter_state, name).copy()
        out.update(save_noise(self.teams, en, self.row_contest[:r_end], e))
        out.update(save_residuals(self.stored, rd.perf, rd.cav_mu, rd.cav_sig, r_end))
        return out

    def restore(self, arrays: dict[str, np.ndarray]) -> None:
        """Load :meth:`to_arrays` of a state whose history is this one's first
        contests (the same contests, or fewer: the later ones stay to be rated by
        :meth:`rate_forward`, as :func:`~podium.history.mmr_smooth.smooth_extend`
        does).  An image without the stored residuals (written before they were
        saved) is loaded with every row unevaluated: the update's gate then solves
        each round it visits, once.

        Raises
        ------
        ValueError
            When the image does not fit this history (more rated rows or players, not
            the noises of its team rows, or stored residuals that do not fit).
        KeyError
            When an array is missing.
        """
        rated, unsolved = (int(x) for x in arrays["rated"])
        n_old = int(arrays["n_rated"].size)
        if rated > self.history.n_contests or n_old > self.history.n_players:
            raise ValueError(f"a state of {rated} contests and {n_old} players does not "
                             f"fit a history of {self.history.n_contests} contests and "
                             f"{self.history.n_players} players")
        r_end = int(self.rounds.contest_rows[rated])
        if arrays["rounds.perf"].size != r_end:
            raise ValueError(f"{arrays['rounds.perf'].size} rated rows where the history's "
                             f"first {rated} contests have {r_end}")
        restore_residuals(self.stored, arrays, r_end)
        en, rd = self.entries, self.rounds
        e = self.e_of_row[:r_end]
        en.n_rated[:n_old] = arrays["n_rated"]
        for name in ("perf", "cav_mu", "cav_sig"):
            getattr(rd, name)[:r_end] = arrays[f"rounds.{name}"]
        self.filtered_mu[e] = arrays["filtered_mu"]
        self.filtered_sigma[e] = arrays["filtered_sigma"]
        self.forecast_mu[:r_end] = arrays["forecast_mu"]
        self.forecast_sigma[:r_end] = arrays["forecast_sigma"]
        for name in K.Entries._fields:
            if name not in self._FIXED_ENTRIES:
                getattr(en, name)[e] = arrays[f"entries.{name}"]
        for name in K.FilterState._fields:
            getattr(self.filter_state, name)[:n_old] = arrays[f"filter.{name}"]
        restore_noise(self.teams, en, self.row_contest[:r_end], e, arrays)
        self.rated = rated
        self.unsolved = unsolved

    def entry_view(self, values: FloatArray) -> FloatArray:
        """Per-entry values (player order) on the rows of the input history (NaN on
        the rows of contests left out or not rated yet)."""
        return self.entry_views((values,))[0]

    def entry_views(self, values: tuple[FloatArray, ...]) -> FloatArray:
        """:meth:`entry_view` of several per-entry arrays at once, one row each of the
        result (one parallel pass over the rows' indices)."""
        out = np.full((len(values), self.n_source_rows), np.nan)
        K.entries_to_rows(tuple(np.ascontiguousarray(v, dtype=np.float64) for v in values),
                          self.e_of_row, self.source_rows, self.rated_rows, out)
        return out

    def row_view(self, values: FloatArray) -> FloatArray:
        """Per-row values (contest order) on the rows of the input history."""
        r_end = self.rated_rows
        out = np.full(self.n_source_rows, np.nan)
        out[self.source_rows[:r_end]] = values[:r_end]
        return out
