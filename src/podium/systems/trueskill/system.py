"""TrueSkill-SPb: Nikolenko and Sirotkin's improved TrueSkill for ranked contests.

The ``trueskill`` baseline of the Elo-MMR paper's experiments ([EbtekarLiu2021], Sec. 6
and Table 2: "the improved TrueSkill algorithm of [25]"), computed exactly as
multi-skill computes it, so the numbers agree with ``elo-mmr-py`` bit for bit.

Model of one round (every player is a team of one; players tied in the
standings share a *place*):

* skill ``s_k ~ N(mu_k, sigma_k^2 + drift^2)``: each round first widens the
  player's uncertainty by ``drift`` (35), whatever the time since the last round
  (the constant diffusion of [EbtekarLiu2021], Sec. 4);
* performance ``t_k = s_k + N(0, beta^2 / w)`` with ``beta = 175`` and ``w`` the
  contest weight;
* every place ``g`` has a performance ``l_g`` with ``l_g = t_k + u`` for each of
  its players, ``|u| <= eps`` (tie margin ``eps = 1``);
* consecutive places are separated by more than ``2 eps``:
  ``l_g = l_{g+1} + d`` with ``d > 2 eps``.

The posterior is approximated by expectation propagation on this factor graph
(Gaussian messages; the truncations ``|u| <= eps`` and ``d > 2 eps`` are
moment-matched).  The schedule is the reference's: one pass down to the place
variables, then rounds of (sweep down and up the chain of places, update the
margin node, sweep again, update the tie node) until no message from the places
to a player's performance moved by ``convergence_eps`` (1e-4) or more in the last
round, or 42 rounds have run; then one pass back up to the skills.  The new
rating is the skill posterior.

Quirks of the reference, kept on purpose because they define its numbers:

* all the tie nodes of a contest share one edge, and so do all the margin nodes
  (the Rust code clones an ``Rc``): each factor overwrites the shared message to
  the node, which answers the last one written (the last player's, resp. the
  first boundary's on the way back up), and every factor reads that answer;
* the truncated moments integrate ``exp(-((x - m)/s)^2)``, i.e. treat a message
  of deviation ``s`` as if it were ``s / sqrt(2)``;
* Gaussian division uses the signed difference of variances for the mean and its
  absolute value for the deviation;
* a node whose incoming message puts less than ``1e-8`` mass (of that density)
  on its truncation region answers the fixed ``(eps, eps)``;
* erfc is statrs's (Boost's rational fits with double-rounded constants), which
  differs from the exact function by up to ~1e-10 relative -- enough to move the
  tie node's moments, which subtract nearly equal numbers, at the 1e-4 level.

The kernels (:mod:`podium.systems.trueskill.kernels`) follow the reference's
order of floating-point operations too, so the number of message-passing rounds,
and every rating, is the same.

Team rounds
-----------
A team round (:attr:`Contest.team_round <podium.core.contest.Contest.team_round>`:
a team of several members, or a member weight below 1) is rated with the standard
TrueSkill factor graph of [Herbrich2006, Fig. 1] instead, with the same
parameters (:mod:`podium.systems.trueskill.team_kernels`):

* skill ``s_i ~ N(mu_i, sigma_i^2 + drift^2)`` and performance
  ``p_i ~ N(s_i, beta^2 / w)`` as above (``w`` the contest weight);
* team performance ``P_t = sum_i w_i p_i`` over the team's members, ``w_i`` the
  member weight in (0, 1] (partial play: the weighted-sum factor of
  [Herbrich2006, Table 1]);
* for adjacent teams in standings order, ``d = P_t - P_{t+1}`` with
  ``d > 2 eps`` (the better team won) or ``|d| <= 2 eps`` (tied teams: a draw).
  The draw margin ``2 eps`` is SPb's: consecutive places are more than ``2 eps``
  apart, and two tied players' performances lie within ``2 eps`` of each other;
* expectation propagation with exact truncated-normal moments ([Herbrich2006,
  Table 1], the functions ``v`` and ``w``), sweeping the chain of differences as
  [Herbrich2006, Fig. 1] (and the ``trueskill`` package) does, until no difference
  marginal moves by more than ``team_tol`` of its cavity deviation in a sweep
  (at most ``team_max_sweeps`` sweeps; a handful in practice); then the messages
  back to each member's skill.  A member's new rating is its skill posterior; its
  performance (``perf``) the posterior mean of ``p_i``.

This is the model of the ``trueskill`` package (H. Lee, 0.4.5) with ``mu, sigma``
each member's rating, ``beta = beta / sqrt(w)``, ``tau = sig_drift`` and the draw
margin ``2 eps`` for every pair of adjacent teams (the package derives a pair's margin
from its ``draw_probability`` and the pair's number of players ``n``:
``inverse_cdf((p + 1) / 2) sqrt(n) beta``); ``tests/test_trueskill_teams.py``
checks the two agree within 1e-10 (measured: 4e-13 of the rating scale in mu, 9e-12
relative in sigma; docs/teams.md, "TrueSkill").  With a member weight ``w_i -> 0`` the
member's skill is left as it was (after the drift), as the package's.

Individual rounds keep the SPb graph above, bit for bit with elo-mmr-py, and differ
from the team graph (with one member of weight 1 per team, which is the standard
individual TrueSkill, as the package rates it) in the tie nodes (SPb: a place
variable per tie group, ``|u| <= eps`` per player, shared edges; standard: a draw
factor ``|d| <= 2 eps`` between adjacent tied players), the margin nodes (SPb's
moments of a deviation ``s / sqrt 2``, one shared message) and the schedule.  Two
newcomers, one win: SPb 1626.15 / 1373.85, the team graph 1678.19 / 1321.81.

Draws
-----
A round in which every player tied (a draw; rated unless ``all_tied="skip"``) is
rated with the team graph above, each player a team of one: adjacent players'
performances within ``2 eps`` of each other.  For two players that is SPb's own model
of a tie (both within ``eps`` of their place's performance), computed with exact
truncated moments instead of the reference's quirks, which exist to reproduce
elo-mmr-py's numbers -- and the reference has none for such a round (it skips it).
So a 1v1 draw is the ``trueskill`` package's draw with margin ``2 eps``
(``tests/test_trueskill_draws.py``; the SPb graph would differ from it by ~5e-4 in
mu).  With three or more players the chain of adjacent draws is the package's model
too; SPb's single place would bound every pair (not only adjacent ones) by ``2 eps``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from podium.core.explain import Explanation
from podium.systems.base import (
    NoPlayerState,
    PerformanceModel,
    RatingSystem,
    RoundBatch,
    RoundInput,
    RoundOutput,
    RoundsOutput,
    SystemState,
    param,
)
from podium.systems.glicko import drift_performance_model

if TYPE_CHECKING:
    from podium.core.contest import Contest
    from podium.core.state import PlayerTable

__all__ = ["TrueSkillSPb", "TrueSkillState"]

FloatArray = npt.NDArray[np.float64]

#: :meth:`TrueSkillSPb.rate_rounds` rates the rounds in one compiled loop once the
#: Rater has seen this many contests (so that rating a few never loads that loop).
BATCH_AFTER = 32


def add_kernel_ready() -> bool:
    """Whether this process holds the compiled ``Rater.add`` round
    (:func:`~podium.systems.trueskill.rounds_kernels.trueskill_add`), compiled or loaded
    by an earlier call: then ``Rater.add`` takes it from the first contest on (as
    Elo-MMR's; either path gives the same numbers, bit for bit)."""
    rk = sys.modules.get("podium.systems.trueskill.rounds_kernels")
    return rk is not None and bool(rk.trueskill_add.overloads)


class TrueSkillState(NoPlayerState):
    """TrueSkill keeps nothing beyond each player's ``(mu, sigma)`` (held by the
    :class:`~podium.rater.Rater`); this state only counts the players."""


@dataclass(frozen=True)
class TrueSkillSPb(RatingSystem):
    """TrueSkill-SPb with multi-skill's parameters and defaults.

    Parameters
    ----------
    eps:
        Tie margin: tied players' performances lie within ``eps`` of their
        place's performance, and consecutive places differ by more than
        ``2 eps`` (default 1).
    beta:
        Standard deviation of a performance around the skill in a contest of
        weight 1; a contest of weight ``w`` uses ``beta / sqrt(w)`` (default 175).
    sig_drift:
        Deviation added (in quadrature) to every participant's sigma at the
        start of each round (default 35).
    convergence_eps:
        Message passing stops once no message into a performance moved by this
        much or more in a round (default 1e-4).
    max_rounds:
        The most message-passing rounds per contest (42, as the reference).
    warn_unconverged:
        Report, as a round warning, a contest whose message passing stopped at
        ``max_rounds`` before meeting ``convergence_eps`` (default False: the
        reference stops silently, and large contests often do), or a team round
        that stopped at ``team_max_sweeps`` before meeting ``team_tol``.
    team_tol:
        Team rounds only: the message passing on the chain of team differences
        ([Herbrich2006, Fig. 1]) stops after a sweep in which no difference's
        marginal (its mean or deviation) moved by more than ``team_tol`` times the
        deviation of the difference's cavity (default 1e-10: a few sweeps; the
        ratings are then within ~1e-12 relative of the fixed point).  Unlike the
        ``trueskill`` package's ``min_delta`` (a change of precision-scaled
        parameters), this is independent of the rating scale.
    team_max_sweeps:
        Team rounds only: the most sweeps (forward and backward along the chain)
        per round (default 100).
    mu_noob, sig_noob:
        Newcomer prior (1500, 350), as in ``elo-mmr-py``.

    Notes
    -----
    :class:`~podium.systems.base.RoundOutput` fields: ``sigma`` is the TrueSkill
    posterior standard deviation of the skill; ``perf`` is the posterior mean of
    the player's performance variable ``t_k`` in the round (its prior
    ``N(mu, sigma^2 + drift^2 + beta^2/w)`` times the message the standings
    send it).  The display rating is ``mu`` (as ``elo-mmr-py``'s rounded rating).
    """

    name: ClassVar[str] = "trueskill"
    team_rule: ClassVar[str | None] = (
        "the TrueSkill team factor graph [Herbrich2006]: team performance = sum of "
        "weighted member performances, adjacent teams win by > 2 eps or draw within it")
    #: The compiled loops over individual rounds repeat :meth:`round_update` and
    #: :meth:`display_rating` (``mu``); they are taken only while a subclass overrides
    #: none of these (:meth:`~podium.systems.base.RatingSystem.overridden_hooks`).
    hooks: ClassVar[tuple[str, ...]] = ("round_update", "display_rating", "make_state")

    eps: float = param(1.0, "positive")
    beta: float = param(175.0, "positive")
    sig_drift: float = param(35.0, "nonnegative")
    convergence_eps: float = param(1e-4, "positive")
    max_rounds: int = param(42, "positive_int")
    warn_unconverged: bool = param(False, "bool")
    team_tol: float = param(1e-10, "positive")
    team_max_sweeps: int = param(100, "positive_int")
    mu_noob: float = param(1500.0, "finite")
    sig_noob: float = param(350.0, "positive")

    # ------------------------------------------------------------------ interface
    def make_state(self) -> TrueSkillState:
        return TrueSkillState()

    def performance_model(
        self, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float
    ) -> PerformanceModel:
        """Normal with ``v = sigma^2 + sig_drift^2 + beta^2 / w`` (the model's own
        performance variable ``t_k``)."""
        return drift_performance_model(self, sigma, weight, "gaussian")

    def draw_margin(self, n_players: int) -> float | None:
        """``2 eps``: two tied players' performances lie within ``2 eps`` of each other
        in the factor graph (docs/teams.md, "TrueSkill"), for any number of players."""
        return 2.0 * float(self.eps)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round: the SPb graph, or the team graph for a team round and for a round
        in which every player tied (module docstring, "Draws")."""
        import podium.systems.trueskill.kernels as K

        if rnd.team_offsets is not None or rnd.contest.is_outcome_free:
            return self._team_round_update(rnd)
        lo = np.asarray(rnd.lo, dtype=np.int64)
        n = lo.size
        starts = np.flatnonzero(np.r_[True, lo[1:] != lo[:-1]]).astype(np.int64)
        starts = np.append(starts, n)
        mu = np.ascontiguousarray(rnd.mu, dtype=np.float64)
        sig = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), self.sig_drift)
        sig_perf = self.beta / math.sqrt(rnd.contest.weight)
        new_mu, new_sig, perf, _, rounds, converged = K.trueskill_round(
            mu, sig, starts, sig_perf, float(self.eps), float(self.convergence_eps),
            int(self.max_rounds),
        )
        warnings: list[str] = []
        if not converged and self.warn_unconverged:
            warnings.append(
                f"contest {rnd.contest.label!r}: message passing stopped after "
                f"{rounds} rounds (max_rounds) before reaching convergence_eps"
            )
        if not (np.all(np.isfinite(new_mu)) and np.all(np.isfinite(new_sig))):
            warnings.append(
                f"contest {rnd.contest.label!r}: message passing produced non-finite ratings"
            )
        return RoundOutput(mu=new_mu, sigma=new_sig, perf=perf, warnings=tuple(warnings))

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The new rating as the precision-weighted mean of the drift-widened prior and
        the contest's message to the skill (:mod:`podium.systems.openskill.explain`)."""
        from podium.systems.trueskill.explain import explain_trueskill

        return explain_trueskill(self, state, rnd, position)

    def _team_round_update(self, rnd: RoundInput) -> RoundOutput:
        """A team round: the factor graph of [Herbrich2006, Fig. 1] (module docstring,
        "Team rounds"), by :func:`podium.systems.trueskill.team_kernels.team_round`;
        an individual round (every player tied) as a round of one-player teams."""
        import podium.systems.trueskill.team_kernels as TK

        offsets = (np.arange(len(rnd.lo) + 1, dtype=np.int64) if rnd.team_offsets is None
                   else np.ascontiguousarray(rnd.team_offsets, dtype=np.int64))
        rank = np.ascontiguousarray(np.asarray(rnd.lo, dtype=np.int64)[offsets[:-1]])
        n = offsets[-1] if offsets.size else 0
        weight = (np.ones(n) if rnd.weight is None
                  else np.ascontiguousarray(rnd.weight, dtype=np.float64))
        mu = np.ascontiguousarray(rnd.mu, dtype=np.float64)
        sig = np.hypot(np.asarray(rnd.sigma, dtype=np.float64), self.sig_drift)
        sig_perf = self.beta / math.sqrt(rnd.contest.weight)
        new_mu, new_sig, perf, sweeps, converged = TK.team_round(
            mu, sig, sig_perf, weight, offsets, rank, 2.0 * float(self.eps),
            float(self.team_tol), int(self.team_max_sweeps),
        )
        warnings: list[str] = []
        if not converged and self.warn_unconverged:
            warnings.append(
                f"contest {rnd.contest.label!r}: team message passing stopped after "
                f"{sweeps} sweeps (team_max_sweeps) before reaching team_tol"
            )
        if not (np.all(np.isfinite(new_mu)) and np.all(np.isfinite(new_sig))):
            warnings.append(
                f"contest {rnd.contest.label!r}: message passing produced non-finite ratings"
            )
        return RoundOutput(mu=new_mu, sigma=new_sig, perf=perf, warnings=tuple(warnings))

    def rate_rounds(self, state: SystemState, batch: RoundBatch) -> RoundsOutput:
        """Rate a batch of rounds in one compiled loop
        (:func:`podium.systems.trueskill.rounds_kernels.trueskill_rounds`), each round exactly
        as :meth:`round_update`; until the Rater has seen ``BATCH_AFTER`` contests
        (and for a subclass that overrides one of the declared :attr:`hooks`), round by
        round with :meth:`round_update`.

        Team rounds (``batch.team_round``) and rounds in which every player tied go
        through :meth:`round_update` one by one (the team graph); the runs of other
        individual rounds between them through the compiled loop."""
        n_rounds = batch.rounds
        if batch.first_index + n_rounds < BATCH_AFTER or self.overridden_hooks(TrueSkillSPb):
            return super().rate_rounds(state, batch)
        out = RoundsOutput(np.empty((3, batch.players.size)))
        sig_perf = np.array([self.beta / math.sqrt(c.weight) for c in batch.contests])
        team = [t or c.is_outcome_free
                for t, c in zip(batch.team_round.tolist(), batch.contests, strict=True)]
        bounds = [0, *(r for r in range(1, n_rounds) if team[r] != team[r - 1]), n_rounds]
        for r0, r1 in zip(bounds[:-1], bounds[1:], strict=True):
            if not team[r0]:
                self._rate_compiled_rounds(state, batch, r0, r1, sig_perf, out)
                continue
            for r in range(r0, r1):
                try:
                    self.rate_round(state, batch, r, out)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    out.error = exc
                    return out
        return out

    @property
    def small_round_limits(self) -> tuple[int, int | None]:
        """``Rater.add`` asks :meth:`rate_small_round` only from this contest on (any
        size); from the first once this process has run the compiled round
        (:func:`~podium.systems.trueskill.rounds_kernels.trueskill_add`), as Elo-MMR's
        :attr:`~podium.systems.elo_mmr.EloMMR.small_round_limits`."""
        return (1 if add_kernel_ready() else BATCH_AFTER, None)

    def rate_small_round(
        self, state: SystemState, table: PlayerTable, contest: Contest, index: int,
        players: npt.NDArray[np.int64], n_before: int, n_after: int,
        prior: tuple[float, float], events: tuple[FloatArray, np.ndarray, int],
    ) -> Any:
        """``Rater.add`` of one individual round, in one compiled call
        (:func:`~podium.systems.trueskill.rounds_kernels.trueskill_add`; the same numbers as
        :meth:`rate_rounds`).  The arguments and the result are those of
        :meth:`EloMMR.rate_small_round <podium.systems.elo_mmr.EloMMR.rate_small_round>`;
        ``None`` (nothing changed) for a team round or before the Rater has seen
        ``BATCH_AFTER`` contests (unless this process has run the kernel) and for a
        round in which every player tied (the team graph rates it),
        ``NotImplemented`` for a subclass that changes the update."""
        if self.overridden_hooks(TrueSkillSPb):
            return NotImplemented
        if ((index + 1 < BATCH_AFTER and not add_kernel_ready()) or contest.team_round
                or contest.is_outcome_free):
            return None
        from podium.systems.trueskill import rounds_kernels as RK

        if n_after > state.n:
            state.ensure_players(n_after)
        ev_f, ev_i, at = events
        rounds, flags = RK.trueskill_add(
            players, contest.lo, contest.time_seconds, self.beta / math.sqrt(contest.weight),
            index, n_before, n_after, prior[0], prior[1], table.mu, table.sigma,
            table.contests, table.last_time, table.max_display, table.last_change,
            float(self.sig_drift), float(self.eps), float(self.convergence_eps),
            int(self.max_rounds), ev_f, ev_i, at,
        )
        if not flags:
            return ()
        return self._round_warnings(contest.label, flags, rounds)

    def _round_warnings(self, label: str, flags: int, rounds: int) -> tuple[str, ...]:
        """The warnings of a round the compiled loop flagged."""
        from podium.systems.trueskill import rounds_kernels as RK

        warnings = []
        if flags & RK.TS_UNCONVERGED and self.warn_unconverged:
            warnings.append(
                f"contest {label!r}: message passing stopped after "
                f"{rounds} rounds (max_rounds) before reaching convergence_eps"
            )
        if flags & RK.TS_NONFINITE:
            warnings.append(f"contest {label!r}: message passing produced non-finite ratings")
        return tuple(warnings)

    def _rate_compiled_rounds(
        self, state: SystemState, batch: RoundBatch, r0: int, r1: int,
        sig_perf: FloatArray, out: RoundsOutput,
    ) -> None:
        """Rate the individual rounds ``r0..r1-1`` of ``batch`` in the compiled loop
        (``sig_perf``: each round's ``beta / sqrt(weight)``), writing their events and
        warnings into ``out`` (``out.done`` becomes ``r1``)."""
        from podium.systems.trueskill import rounds_kernels as RK

        n_iter = np.zeros(batch.rounds, dtype=np.int64)
        flags = np.zeros(batch.rounds, dtype=np.int64)
        state.ensure_players(batch.players_after[r1 - 1])
        flagged = RK.trueskill_rounds(
            r0, r1, batch.offsets, batch.players, batch.lo, batch.time_seconds, sig_perf,
            batch.mu, batch.sigma, batch.played, batch.last_time, batch.max_display,
            batch.last_change, float(self.sig_drift), float(self.eps),
            float(self.convergence_eps), int(self.max_rounds), out.events, n_iter, flags,
        )
        if not flagged:
            out.warnings += [()] * (r1 - r0)
        for r in range(r0, r1) if flagged else ():
            out.warnings.append(self._round_warnings(batch.contests[r].label, int(flags[r]),
                                                     int(n_iter[r])))
        out.done = r1
