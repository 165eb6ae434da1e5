"""openskill's Weng-Lin rating models as Podium systems.

Weng and Lin ([WengLin2011]) approximate the posterior of a ranked game of ``k``
teams by treating it as several two-team games and taking one step of a
Bayesian approximation (a variant of Stein's lemma) per round, which gives
closed-form updates without numerical integration.  The ``openskill`` library
(``openskill.models``, version 6.2.0, https://openskill.me) implements five of
them; these systems compute the same numbers (to ~1e-12, checked to 1e-9 by
``tests/test_openskill.py``):

=================  =====================================  ==========================
system             openskill model                        [WengLin2011]
=================  =====================================  ==========================
``openskill-pl``   ``PlackettLuce``                       Alg. 4
``openskill-tm``   ``ThurstoneMostellerFull``             Alg. 3
``openskill-bt``   ``BradleyTerryFull``                   Alg. 1
``openskill-tmp``  ``ThurstoneMostellerPart``             Alg. 3, partial pairs
``openskill-btp``  ``BradleyTerryPart``                   Alg. 2
=================  =====================================  ==========================

One round, with teams best first (an individual round: every player a team of one,
weight 1):

1. every member's deviation widens by the dynamics factor: ``s^2 = sigma^2 + tau^2``;
2. each team is one player: ``mu_T = sum mu_j``, ``sigma_T^2 = sum s_j^2`` (with
   ``balance``, each member ``j`` scaled by ``1 + (o_max - o_j) / (o_max + kappa)``,
   ``o = mu - 3 s`` its ordinal);
3. the model gives each team its ``Omega_T`` (the step of its mean) and ``Delta_T``
   (the shrink of its variance) from the team ratings and the places
   (:func:`podium.systems.openskill.kernels.team_terms`); the default
   ``gamma = sigma_T / c`` of openskill is used;
4. each member takes the share ``r_j = s_j^2 / sigma_T^2`` of its team's update:
   ``mu_j' = mu_j + r_j Omega_T w_j`` and
   ``sigma_j' = s_j sqrt(max(1 - r_j Delta_T w_j, kappa))`` ([WengLin2011, Eq. 28 and
   44] for ``kappa``), where ``w_j`` is the member's weight when the team gains
   (``Omega_T >= 0``; ``> 0`` for TM-part) and ``1 / w_j`` when it loses;
5. with ``limit_sigma``, ``sigma_j'`` is capped at the ``sigma_j`` before step 1.

Weights.  A member's weight in ``(0, 1]`` (partial play) is openskill's ``weights``.
openskill rescales each team's weights to ``weight_bounds`` (default ``[1, 2]``: the
lightest member of a team gets 1, the heaviest 2, a team of equal weights 1 and a
one-member team 2); ``weight_bounds=None`` uses them as given.  A round whose weights
are all 1 is rated as openskill rates a call without ``weights`` (every member weight
1, whatever ``weight_bounds``).

Places.  Team ``t``'s rank is its place ``lo`` (lower is better, equal for tied
teams), openskill's ``ranks``.  Only the order and the ties of the ranks matter.
openskill's Plackett-Luce and full-pair models average the mean change of tied
teams afterwards; as written, that average compares each updated member with
itself and changes nothing, so it is not repeated here.

Not parameters: openskill's ``gamma`` (a callable; the default above is used) and
``margin`` (it acts on ``scores``, and Podium rates places).  The contest weight is
not used (openskill has none).  The display rating is openskill's ordinal,
``mu - display_sigmas * sigma`` (``display_sigmas = 3``).

The round's ``perf`` (openskill has none) is ``mu_j + Omega_T / Delta_T``: the
member's rating moved by its team's Newton step, which is the performance whose
Gaussian observation would give the same update.

Cost: Plackett-Luce ``O(T)`` per round (its sums are prefix sums over the places);
the pairwise models ``O(T^2)`` (``O(T * window)`` for the partial ones), in parallel
from :data:`~podium.systems.openskill.kernels.PARALLEL_FROM` teams on.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems.openskill.models as M
from podium.core.explain import Explanation
from podium.errors import ConfigError
from podium.systems.base import (
    NoPlayerState,
    PerformanceModel,
    RatingSystem,
    RoundBatch,
    RoundInput,
    RoundOutput,
    RoundsOutput,
    SystemState,
    batch_teams,
    param,
)

__all__ = [
    "OpenSkillModel",
    "PlackettLuce",
    "ThurstoneMostellerFull",
    "BradleyTerryFull",
    "ThurstoneMostellerPart",
    "BradleyTerryPart",
    "TEAM_RULE",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The team rule of every openskill system (docs and the API).
#: :meth:`OpenSkillModel.rate_rounds` uses its compiled loop once the Rater has seen
#: this many contests (so that rating a few contests never compiles that loop).
_BATCH_AFTER = 32

TEAM_RULE = "openskill's own team model (team mu = sum of member mu), [WengLin2011]"


def _real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _arg(x: npt.ArrayLike, dtype: type[np.generic]) -> Any:
    """``x`` as a C-ordered, writable array of ``dtype`` (copied only when needed): the
    kernels are compiled for one signature (read-only arrays would make a second)."""
    if (isinstance(x, np.ndarray) and x.dtype == dtype and x.flags.c_contiguous
            and x.flags.writeable):
        return x
    return np.array(x, dtype=dtype, order="C")


@dataclass(frozen=True)
class OpenSkillModel(RatingSystem):
    """The parameters and the round of every openskill model (one subclass per model).

    Parameters
    ----------
    mu:
        Newcomer mean (25).
    sigma:
        Newcomer deviation (25/3).
    beta:
        Performance deviation of one player (25/6).
    kappa:
        Lower bound, in ``(0, 1]``, on the factor ``sigma'^2 / s^2`` (1e-4).
    tau:
        Deviation added in quadrature to every participant before each round (25/300).
    limit_sigma:
        Never let a round raise a deviation above its value before the round (False).
    balance:
        openskill's ``balance``: weight a team's members by how far their ordinal is
        below the team's best (False).
    weight_bounds:
        ``(lo, hi)`` with ``0 < lo <= hi``: each team's member weights are rescaled
        to this range, as openskill does; ``None`` uses them as given ((1, 2)).
    display_sigmas:
        The display rating is ``mu - display_sigmas * sigma``, openskill's ordinal (3).
    """

    name: ClassVar[str] = "openskill"
    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("mu", "sigma")
    team_rule: ClassVar[str] = TEAM_RULE
    #: The kernel's model code (:mod:`podium.systems.openskill.kernels`).
    MODEL: ClassVar[int] = M.PL
    #: The compiled loop over rounds repeats :meth:`round_update` (:meth:`rate_teams`) and
    #: :meth:`display_rating`; it is taken only while a subclass overrides none of these.
    hooks: ClassVar[tuple[str, ...]] = ("round_update", "rate_teams", "display_rating",
                                        "make_state")

    mu: float = param(25.0, "finite")
    sigma: float = param(25.0 / 3.0, "positive")
    beta: float = param(25.0 / 6.0, "positive")
    kappa: float = param(0.0001, "positive")
    tau: float = param(25.0 / 300.0, "nonnegative")
    limit_sigma: bool = param(False, "bool")
    balance: bool = param(False, "bool")
    weight_bounds: tuple[float, float] | None = (1.0, 2.0)
    display_sigmas: float = param(3.0, "finite")

    def __post_init__(self) -> None:
        """Check every parameter; a ``weight_bounds`` list (from JSON) becomes a tuple.

        Raises
        ------
        ConfigError
            For the first invalid parameter.
        """
        super().__post_init__()
        if self.kappa > 1.0:
            raise ConfigError(f"kappa must be a number in (0, 1], got {self.kappa!r}")
        wb = self.weight_bounds
        if wb is not None:
            ok = (isinstance(wb, Sequence) and not isinstance(wb, str) and len(wb) == 2
                  and all(_real(x) and math.isfinite(x) for x in wb)
                  and 0.0 < wb[0] <= wb[1])
            if not ok:
                raise ConfigError(
                    "weight_bounds must be None or (lo, hi) with 0 < lo <= hi, "
                    f"got {wb!r}"
                )
            object.__setattr__(self, "weight_bounds", (float(wb[0]), float(wb[1])))

    # ------------------------------------------------------------------ interface
    def make_state(self) -> NoPlayerState:
        return NoPlayerState()

    def display_rating(self, mu: FloatArray, sigma: FloatArray) -> FloatArray:
        """openskill's ordinal: ``mu - display_sigmas * sigma``."""
        out: FloatArray = np.asarray(mu, dtype=np.float64) - self.display_sigmas * np.asarray(
            sigma, dtype=np.float64)
        return out

    def performance_model(
        self, sigma: FloatArray, played: IntArray, weight: float
    ) -> PerformanceModel:
        """Normal with ``v = sigma^2 + beta^2``: openskill's win probability of two
        players, ``Phi((mu_a - mu_b) / sqrt(sigma_a^2 + sigma_b^2 + 2 beta^2))``."""
        return PerformanceModel(
            "gaussian", np.asarray(sigma, dtype=np.float64) ** 2 + self.beta**2,
            f"{type(self).__name__} (gaussian): v = sigma^2 + beta^2, openskill's "
            "predict_win",
        )

    # ------------------------------------------------------------------ the update
    def _epsilon(self) -> float:
        return 0.0

    def _window(self) -> int:
        return 0

    def rate_teams(
        self, mu: FloatArray, sigma: FloatArray, offsets: IntArray, rank: IntArray,
        weight: FloatArray | None = None,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Rate one round of teams: openskill's ``model.rate(teams, ranks=rank,
        weights=...)``.

        Parameters
        ----------
        mu, sigma:
            Every member's rating before the round, team after team.
        offsets:
            ``T + 1`` increasing offsets, ``offsets[0] = 0``, ``offsets[T] = n``:
            team ``t`` is members ``offsets[t]:offsets[t + 1]``.
        rank:
            Per team, its place: lower is better, equal for a tie (any order).
        weight:
            Per member, its weight in ``(0, 1]``, or ``None``; all ones is the same
            as ``None`` (see the module's notes on ``weight_bounds``).

        Returns
        -------
        new_mu, new_sigma, perf:
            Per member.
        """
        import podium.systems.openskill.kernels as K

        mu = _arg(mu, np.float64)
        sigma = _arg(sigma, np.float64)
        offsets = _arg(offsets, np.int64)
        rank = _arg(rank, np.int64)
        if weight is None or bool((np.asarray(weight) == 1.0).all()):
            w = np.ones(mu.size)
        elif self.weight_bounds is None:
            w = _arg(weight, np.float64)
        else:
            lo, hi = self.weight_bounds
            w = K.normalize_weights(_arg(weight, np.float64), offsets, lo, hi)
        out: tuple[FloatArray, FloatArray, FloatArray] = K.rate(
            self.MODEL, mu, sigma, offsets, rank, w, float(self.beta), float(self.kappa),
            float(self.tau), float(self._epsilon()), int(self._window()),
            bool(self.limit_sigma), bool(self.balance),
        )
        return out

    def rate_rounds(self, state: SystemState, batch: RoundBatch) -> RoundsOutput:
        """Rate a batch of rounds in one compiled loop (:func:`K.rate_rounds`), each
        round exactly as :meth:`round_update`; until the Rater has seen
        ``_BATCH_AFTER`` contests, for a subclass that overrides one of the declared
        :attr:`hooks`, and for the large rounds of a pairwise model (whose team terms
        run in parallel), round by round."""
        import podium.systems.openskill.kernels as K

        n_rounds = batch.rounds
        if batch.first_index + n_rounds < _BATCH_AFTER or self.overridden_hooks(OpenSkillModel):
            return super().rate_rounds(state, batch)
        team_ptr, team_rows, member_weight, weighted = batch_teams(batch)
        if self.MODEL == M.PL or n_rounds == 1:
            compiled = [self.MODEL == M.PL or int(team_ptr[1]) < K.PARALLEL_FROM] * n_rounds
        else:
            compiled = (np.diff(team_ptr) < K.PARALLEL_FROM).tolist()
        out = RoundsOutput(np.empty((3, batch.players.size)))
        bad = np.zeros(n_rounds, dtype=np.bool_)
        state.ensure_players(batch.players_after[-1])
        # one compiled signature: every array writable (a lone contest's lo is not)
        lo = batch.lo if batch.lo.flags.writeable else batch.lo.copy()
        bounds = [0, *(r for r in range(1, n_rounds) if compiled[r] != compiled[r - 1]),
                  n_rounds]
        for r0, r1 in zip(bounds[:-1], bounds[1:], strict=True):
            if not compiled[r0]:
                for r in range(r0, r1):
                    try:
                        self.rate_round(state, batch, r, out)
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller
                        out.error = exc
                        return out
                continue
            loop: Any = K.rate_rounds  # a Numba dispatcher (mypy cannot see its signature)
            flagged = loop(
                self.MODEL, r0, r1, batch.offsets, batch.players, lo, batch.time_seconds,
                team_ptr, team_rows, member_weight, weighted, *self._kernel_params,
                batch.mu, batch.sigma, batch.played, batch.last_time, batch.max_display,
                batch.last_change, out.events, bad,
            )
            if not flagged:
                out.warnings += [()] * (r1 - r0)
            else:
                label = type(self).__name__
                out.warnings += [
                    (f"contest {batch.contests[r].label!r}: {label} produced non-finite "
                     "ratings",) if bad[r] else () for r in range(r0, r1)
                ]
            out.done = r1
        return out

    @cached_property
    def _kernel_params(self) -> tuple[Any, ...]:
        """The model's parameters as :func:`K.rate_rounds` takes them (``w_lo`` to
        ``display_sigmas``)."""
        rescale = self.weight_bounds is not None
        w_lo, w_hi = self.weight_bounds if self.weight_bounds is not None else (1.0, 1.0)
        return (float(w_lo), float(w_hi), rescale, float(self.beta), float(self.kappa),
                float(self.tau), float(self._epsilon()), int(self._window()),
                bool(self.limit_sigma), bool(self.balance), float(self.display_sigmas))

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """A pairwise model: the change as one term per opponent (a window's mean for the
        partial-pair models); Plackett-Luce: ``Omega`` and ``Delta``
        (:mod:`podium.systems.openskill.explain`)."""
        from podium.systems.openskill.explain import explain_openskill

        return explain_openskill(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """Rate one round (a team round when ``rnd.team_offsets`` is set) with
        :meth:`rate_teams`; each team's rank is the ``lo`` of its rows."""
        lo = np.asarray(rnd.lo, dtype=np.int64)
        if rnd.team_offsets is None:  # every participant a team of one, weight 1
            offsets = np.arange(lo.size + 1, dtype=np.int64)
            weight = None
        else:
            offsets = np.asarray(rnd.team_offsets, dtype=np.int64)
            weight = rnd.weight
        new_mu, new_sig, perf = self.rate_teams(rnd.mu, rnd.sigma, offsets,
                                                lo[offsets[:-1]], weight)
        warnings: tuple[str, ...] = ()
        if not (np.isfinite(new_mu).all() and np.isfinite(new_sig).all()):
            warnings = (f"contest {rnd.contest.label!r}: {type(self).__name__} produced "
                        "non-finite ratings",)
        return RoundOutput(mu=new_mu, sigma=new_sig, perf=perf, warnings=warnings)


@dataclass(frozen=True)
class PlackettLuce(OpenSkillModel):
    """openskill's ``PlackettLuce`` ([WengLin2011, Alg. 4]), ``openskill-pl``.

    With ``c^2 = sum_q (sigma_q^2 + beta^2)`` over the teams, ``e_q = exp(mu_q / c)``,
    ``C_q`` the teams placed no better than ``q``, ``S_q = sum_{s in C_q} e_s`` and
    ``A_q`` the number of teams tied with ``q``, team ``i`` sums over the teams ``q``
    placed no worse than itself: ``Omega_i = sigma_i^2 / c sum_q (1[q = i] - e_i / S_q)
    / A_q`` and ``Delta_i = gamma_i sigma_i^2 / c^2 sum_q (e_i / S_q)(1 - e_i / S_q) /
    A_q``, ``gamma_i = sigma_i / c``.  Parameters: see :class:`OpenSkillModel`.
    """

    name: ClassVar[str] = "openskill-pl"
    MODEL: ClassVar[int] = M.PL


@dataclass(frozen=True)
class ThurstoneMostellerFull(OpenSkillModel):
    """openskill's ``ThurstoneMostellerFull`` ([WengLin2011, Alg. 3]), ``openskill-tm``.

    Every pair of teams ``(i, q)``, ``c_iq^2 = sigma_i^2 + sigma_q^2 + 2 beta^2``,
    ``x = (mu_i - mu_q) / c_iq``, ``t = epsilon / c_iq``: a win adds
    ``sigma_i^2 / c_iq V(x, t)`` to ``Omega_i`` and ``gamma sigma_i^2 / c_iq^2 W(x, t)``
    to ``Delta_i``, a loss ``-sigma_i^2 / c_iq V(-x, t)`` and ``... W(-x, t)``, a tie
    the draw functions ``V~``, ``W~``; ``gamma = sigma_i / c_iq``.

    Parameters
    ----------
    epsilon:
        Draw margin (0.1).  The others: see :class:`OpenSkillModel`.
    """

    name: ClassVar[str] = "openskill-tm"
    MODEL: ClassVar[int] = M.TM

    epsilon: float = param(0.1, "nonnegative")

    def _epsilon(self) -> float:
        return float(self.epsilon)


@dataclass(frozen=True)
class BradleyTerryFull(OpenSkillModel):
    """openskill's ``BradleyTerryFull`` ([WengLin2011, Alg. 1]), ``openskill-bt``.

    Every pair of teams ``(i, q)``, ``c_iq^2 = sigma_i^2 + sigma_q^2 + 2 beta^2``,
    ``p_iq = 1 / (1 + exp((mu_q - mu_i) / c_iq))``, score ``s`` = 1 (win), 1/2 (tie)
    or 0: ``Omega_i += sigma_i^2 / c_iq (s - p_iq)``,
    ``Delta_i += gamma sigma_i^2 / c_iq^2 p_iq (1 - p_iq)``, ``gamma = sigma_i / c_iq``.
    Parameters: see :class:`OpenSkillModel`.
    """

    name: ClassVar[str] = "openskill-bt"
    MODEL: ClassVar[int] = M.BT


@dataclass(frozen=True)
class ThurstoneMostellerPart(OpenSkillModel):
    """openskill's ``ThurstoneMostellerPart`` (after [WengLin2011, Alg. 3]),
    ``openskill-tmp``.

    As :class:`ThurstoneMostellerFull`, but team ``i`` meets only the teams within
    ``window_size`` positions of it in the standings, its terms are averaged over
    them, ``c_iq`` is twice the full-pair one, and a team gains (``w_j`` rather than
    ``1 / w_j``) only when ``Omega > 0``.

    Parameters
    ----------
    epsilon:
        Draw margin (0.1).
    window_size:
        Positions compared on each side (4).  The others: see :class:`OpenSkillModel`.
    """

    name: ClassVar[str] = "openskill-tmp"
    MODEL: ClassVar[int] = M.TMP

    epsilon: float = param(0.1, "nonnegative")
    window_size: int = param(4, "positive_int")

    def _epsilon(self) -> float:
        return float(self.epsilon)

    def _window(self) -> int:
        return int(self.window_size)


@dataclass(frozen=True)
class BradleyTerryPart(OpenSkillModel):
    """openskill's ``BradleyTerryPart`` ([WengLin2011, Alg. 2]), ``openskill-btp``.

    As :class:`BradleyTerryFull`, but team ``i`` meets only the teams within
    ``window_size`` positions of it in the standings and its terms are averaged over
    them.

    Parameters
    ----------
    window_size:
        Positions compared on each side (4).  The others: see :class:`OpenSkillModel`.
    """

    name: ClassVar[str] = "openskill-btp"
    MODEL: ClassVar[int] = M.BTP

    window_size: int = param(4, "positive_int")

    def _window(self) -> int:
        return int(self.window_size)
