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

The kernels (:mod:`podium.systems._trueskill_kernels`) follow the reference's
order of floating-point operations too, so the number of message-passing rounds,
and every rating, is the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems._trueskill_kernels as K
from podium.systems.base import (
    NoPlayerState,
    PerformanceModel,
    Preset,
    RatingSystem,
    RoundBatch,
    RoundInput,
    RoundOutput,
    RoundsOutput,
    SystemState,
    param,
)
from podium.systems.glicko import drift_performance_model

__all__ = ["TrueSkillSPb", "TrueSkillState", "PRESETS"]

FloatArray = npt.NDArray[np.float64]

#: :meth:`TrueSkillSPb.rate_rounds` rates the rounds in one compiled loop once the
#: Rater has seen this many contests (so that rating a few never loads that loop).
_BATCH_AFTER = 32


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
        reference stops silently, and large contests often do).
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

    eps: float = param(1.0, "positive")
    beta: float = param(175.0, "positive")
    sig_drift: float = param(35.0, "nonnegative")
    convergence_eps: float = param(1e-4, "positive")
    max_rounds: int = param(42, "positive_int")
    warn_unconverged: bool = param(False, "bool")
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

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
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

    def rate_rounds(self, state: SystemState, batch: RoundBatch) -> RoundsOutput:
        """Rate a batch of rounds in one compiled loop
        (:func:`podium.systems._rounds_kernels.trueskill_rounds`), each round exactly
        as :meth:`round_update`; until the Rater has seen ``_BATCH_AFTER`` contests
        (and for a subclass that changes :meth:`round_update` or
        :meth:`display_rating`), round by round with :meth:`round_update`."""
        n_rounds = batch.rounds
        cls = type(self)
        if (batch.first_index + n_rounds < _BATCH_AFTER
                or cls.round_update is not TrueSkillSPb.round_update
                or cls.display_rating is not TrueSkillSPb.display_rating
                or cls.display_center is not None
                or batch.team_round.any()):
            return super().rate_rounds(state, batch)
        from podium.systems import _rounds_kernels as RK

        out = RoundsOutput(np.empty((3, batch.players.size)))
        sig_perf = np.array([self.beta / math.sqrt(c.weight) for c in batch.contests])
        n_iter = np.zeros(n_rounds, dtype=np.int64)
        flags = np.zeros(n_rounds, dtype=np.int64)
        state.ensure_players(batch.players_after[-1])
        flagged = RK.trueskill_rounds(
            0, n_rounds, batch.offsets, batch.players, batch.lo, batch.time_seconds, sig_perf,
            batch.mu, batch.sigma, batch.played, batch.last_time, batch.max_display,
            batch.last_change, float(self.sig_drift), float(self.eps),
            float(self.convergence_eps), int(self.max_rounds), out.events, n_iter, flags,
        )
        if not flagged:
            out.warnings += [()] * n_rounds
        for r in range(n_rounds) if flagged else ():
            label = batch.contests[r].label
            warnings = []
            if flags[r] & RK.TS_UNCONVERGED and self.warn_unconverged:
                warnings.append(
                    f"contest {label!r}: message passing stopped after "
                    f"{int(n_iter[r])} rounds (max_rounds) before reaching convergence_eps"
                )
            if flags[r] & RK.TS_NONFINITE:
                warnings.append(f"contest {label!r}: message passing produced non-finite ratings")
            out.warnings.append(tuple(warnings))
        out.done = n_rounds
        return out


#: The named systems of this module (see :data:`podium.systems.SYSTEMS`).
PRESETS: dict[str, Preset] = {
    "trueskill": (
        TrueSkillSPb, {},
        "TrueSkill-SPb (Nikolenko & Sirotkin): eps 1, beta 175, drift 35, EP to 1e-4",
    ),
}
