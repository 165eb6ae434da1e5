"""MMR-plus: Elo-MMR ([EbtekarLiu2021]) with skill trends and a newcomer prior learned online.

Elo-MMR models every player's skill as a random walk with no drift in its mean and
gives every newcomer the same prior ``N(mu_noob, sig_noob^2)``.  On real histories
neither holds: newcomers debut far below the players already rated (on Codeforces
their first performance averages about 360 points below 1500, whatever the scale),
and players with a few dozen contests still improve while veterans do not.  MMR-plus
keeps Elo-MMR's round (Algorithm 1: pseudodiffusion, Theorem 3.2's performances,
Eq. 6-8's posterior) and adds, each switched on by its own parameter
(docs/mmr-plus.md has the equations, the ablation and the measurements):

1. **a newcomer prior learned from debuts** (``noob_memory``): a newcomer's prior
   mean is the exponentially weighted mean of the performances of earlier
   debutants, ``m <- m + d / (d + K) (mean p_debut - m)`` after a round with ``d``
   debutants (``K = noob_memory``); the prior's spread stays ``sig_noob``;
2. **skill trends by experience** (``trend_rate``): after each round every
   participant's whole posterior is translated by ``t[b(n)]``, the learned mean
   change of skill between a player's ``n``-th and next contest (``b``: buckets of
   ``n``, :data:`TREND_EDGES`).  ``t`` is learned online by an integral controller on
   the round's residuals ``r_i = p_i - mu_i`` centred on their mean over the
   returning participants: ``t[b] += trend_rate * sum_{i in b} r_i / (|b| +
   trend_prior)``; at a fixed point the ratings of every experience bucket predict
   their performances without bias.

Everything else is Elo-MMR's, with Elo-MMR's parameters (the ``mmr-plus`` preset
fixes the values chosen on the data; docs/mmr-plus.md).  A translation is
implemented lazily: each player carries an ``offset`` and its normal and logistic
factors are stored relative to it, so Elo-MMR's kernels run unchanged on the local
coordinates (a shift costs O(1) per participant).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

import podium.systems._elo_mmr_kernels as K
from podium.core.numerics import GAUSSIAN, LOGISTIC
from podium.errors import ConfigError
from podium.systems.base import (
    Preset,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)
from podium.systems.elo_mmr import EloMMR, EloMMRState, _status_warnings

__all__ = ["MMRPlus", "MMRPlusState", "TREND_EDGES", "PRESETS"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Lower edges of the experience buckets of the trend table: bucket ``b`` holds the
#: players with ``TREND_EDGES[b] <= n < TREND_EDGES[b + 1]`` contests rated (about
#: geometric, so that every bucket sees many player-rounds on a long history).
TREND_EDGES: tuple[int, ...] = (1, 2, 3, 4, 5, 7, 10, 15, 22, 33, 50, 75, 110, 160, 240)

#: Entries of :attr:`MMRPlusState.learned` before the trend table.
_NOOB_MU = 0
_LEARNED_HEAD = 1


def trend_bucket(played: npt.ArrayLike) -> IntArray:
    """The trend bucket of players with ``played`` (>= 1) rated contests.

    >>> trend_bucket([1, 4, 5, 6, 7, 1000]).tolist()
    [0, 3, 4, 4, 5, 14]
    """
    edges = np.asarray(TREND_EDGES, dtype=np.int64)
    out: IntArray = np.searchsorted(edges, np.asarray(played, dtype=np.int64),
                                    side="right").astype(np.int64) - 1
    return np.maximum(out, 0)


class MMRPlusState(EloMMRState):
    """:class:`~podium.systems.elo_mmr.EloMMRState` plus what MMR-plus learns.

    Per player: ``offset``, the translation of its posterior (its normal factor's
    mean and its logistic factors' locations are stored relative to it).  Shared:
    ``learned`` = ``[newcomer prior mean, t[0], ..., t[B-1]]`` (the trend table,
    :data:`TREND_EDGES`).  Both are checkpointed with the rest.
    """

    _EXTRA_FIELDS: ClassVar[tuple[tuple[str, float], ...]] = (
        *EloMMRState._EXTRA_FIELDS, ("offset", 0.0),
    )
    offset: FloatArray

    def __init__(self, mu_noob: float, sig_noob: float) -> None:
        super().__init__(mu_noob, sig_noob)
        self.learned: FloatArray = np.zeros(_LEARNED_HEAD + len(TREND_EDGES))
        self.learned[_NOOB_MU] = mu_noob

    @property
    def noob_mu(self) -> float:
        """The newcomer prior's mean learned so far (``mu_noob`` before any debut)."""
        return float(self.learned[_NOOB_MU])

    @property
    def trend(self) -> FloatArray:
        """The learned skill change per contest of each experience bucket (a view)."""
        return self.learned[_LEARNED_HEAD:]

    def to_arrays(self) -> dict[str, np.ndarray]:
        """As :meth:`EloMMRState.to_arrays`, plus ``learned``."""
        out = super().to_arrays()
        out["learned"] = self.learned.copy()
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> Self:
        """Inverse of :meth:`to_arrays`.

        Raises
        ------
        KeyError, ValueError
            When an entry is missing or ``learned`` has the wrong length.
        """
        st = super().from_arrays(d)
        learned = np.array(d["learned"], dtype=np.float64).reshape(-1)
        if learned.size != _LEARNED_HEAD + len(TREND_EDGES):
            raise ValueError(
                f"state entry 'learned' has {learned.size} values, not "
                f"{_LEARNED_HEAD + len(TREND_EDGES)}"
            )
        if not np.isfinite(learned).all():
            raise ValueError("state entry 'learned' holds a non-finite value")
        st.learned = learned
        return st

    def copy(self) -> Self:
        """A deep copy (the Rater's roll-back of a failed round)."""
        st = super().copy()
        st.learned = self.learned.copy()
        return st


@dataclass(frozen=True)
class MMRPlus(EloMMR):
    """Elo-MMR with a newcomer prior learned from debuts and skill trends by experience.

    Every parameter of :class:`~podium.systems.elo_mmr.EloMMR` keeps its meaning; the
    ``mmr-plus`` preset sets the values chosen on the data (docs/mmr-plus.md).  Team
    rounds are rated as Elo-MMR rates them (in each player's local coordinates); the
    subsampled performance (``subsample_size``) and history compression work as in
    Elo-MMR.

    Parameters
    ----------
    noob_memory:
        ``K`` of the learned newcomer prior: after a round with ``d`` debutants of
        mean performance ``p``, the prior mean moves by ``d / (d + K) (p - m)``.
        ``0``: off (every newcomer starts at ``mu_noob``, as Elo-MMR).
    trend_rate:
        Step of the trend controller (``0``: off, no trend).
    trend_prior:
        Pseudo-count of the trend controller: a bucket seen by ``c`` participants of
        a round moves by ``trend_rate * sum(r) / (c + trend_prior)``, so that small
        rounds move the table little.
    trend_limit:
        Bound on ``|t[b]|`` (rating points per contest).
    """

    name: ClassVar[str] = "mmr-plus"

    noob_memory: float = param(0.0, "nonnegative")
    trend_rate: float = param(0.0, "nonnegative")
    trend_prior: float = param(50.0, "positive")
    trend_limit: float = param(50.0, "positive")
    size_ref: float | None = param(None, "number_or_none")
    size_power: float = param(0.5, "nonnegative")
    clip_below: float | None = param(None, "number_or_none")
    clip_above: float | None = param(None, "number_or_none")

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("size_ref", "clip_below", "clip_above"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name} must be a finite positive number or None, got {v!r}")

    # ------------------------------------------------------------------ interface
    def make_state(self) -> MMRPlusState:
        return MMRPlusState(self.mu_noob, self.sig_noob)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round: Elo-MMR's (:meth:`EloMMR.round_update` or, for a team round,
        :meth:`EloMMR.team_update`) with the newcomers at the learned prior and each
        player's posterior in its local coordinates; then the learned prior and the
        trend table take the round in, and every participant's posterior is translated
        by its bucket's trend."""
        assert isinstance(state, MMRPlusState)
        new = rnd.played == 0
        mu_in = rnd.mu
        if self.noob_memory > 0.0 and new.any():
            mu_in = np.where(new, state.noob_mu, rnd.mu)
            state.nf_mu[rnd.players[new]] = state.noob_mu
            rnd = dataclasses.replace(rnd, mu=mu_in)
        out = super().round_update(state, rnd)
        self._learn(state, rnd, out.perf)
        if self.trend_rate > 0.0:
            shift = state.trend[trend_bucket(rnd.played + 1)]
            state.offset[rnd.players] += shift
            out = dataclasses.replace(out, mu=out.mu + shift)
        return out

    # ------------------------------------------------------------------ learning
    def _learn(self, state: MMRPlusState, rnd: RoundInput, perf: FloatArray) -> None:
        """Update the learned newcomer prior and the trend table from one round."""
        new = rnd.played == 0
        if self.noob_memory > 0.0 and new.any():
            d = int(np.count_nonzero(new))
            p = float(perf[new].mean())
            if math.isfinite(p):
                state.learned[_NOOB_MU] += d / (d + self.noob_memory) * (p - state.noob_mu)
        if self.trend_rate > 0.0:
            ret = ~new
            if int(np.count_nonzero(ret)) >= 2:
                resid = perf[ret] - rnd.mu[ret]
                resid = resid - resid.mean()
                b = trend_bucket(rnd.played[ret])
                sums = np.bincount(b, weights=resid, minlength=len(TREND_EDGES))
                counts = np.bincount(b, minlength=len(TREND_EDGES))
                step = self.trend_rate * sums / (counts + self.trend_prior)
                if np.isfinite(step).all():
                    np.clip(state.trend + step, -self.trend_limit, self.trend_limit,
                            out=state.trend)

    # ------------------------------------------------------------------ local coordinates
    def _diffuse(self, state: EloMMRState, rnd: RoundInput) -> tuple[FloatArray, FloatArray]:
        """Elo-MMR's step 1 (:meth:`EloMMR._diffuse`) in each player's local coordinates."""
        assert isinstance(state, MMRPlusState)
        weight = rnd.contest.weight * self._size_factor(rnd.players.size)
        beta, gamma = K.round_weights(
            rnd.played, weight, self.weight_limit,
            np.asarray(self.noob_delay, dtype=np.float64), self.sig_limit, self.drift_per_day,
            rnd.delta_seconds,
        )
        sig = K.diffuse(
            rnd.players, rnd.mu - state.offset[rnd.players], rnd.sigma, gamma, float(self.rho),
            self.collapses, state.normal_view(),
            K.LazyWeights(state.scale, state.sum_aw, state.sum_w), state.blocks_view(),
            state.pool_view(),
        )
        return beta, sig

    def _size_factor(self, n: int) -> float:
        """The weight multiplier of a round of ``n`` participants."""
        if self.size_ref is None:
            return 1.0
        return min(1.0, (n / self.size_ref) ** self.size_power)

    def _absorb(self, state: EloMMRState, rnd: RoundInput, kind: int, perf: FloatArray,
                noise: FloatArray, sig: FloatArray, warnings: list[str]) -> RoundOutput:
        """Elo-MMR's step 4 (Eq. 6-8): the performances capped at the round's ceiling in
        rating coordinates, then added to each posterior in its local coordinates."""
        assert isinstance(state, MMRPlusState)
        c = rnd.contest
        players = rnd.players
        if kind == LOGISTIC:
            ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
            if ceiling is not None:
                perf = np.minimum(perf, ceiling)
        off = state.offset[players]
        perf_in = perf
        if self.clip_below is not None or self.clip_above is not None:
            spread = np.hypot(sig, noise)
            lo = (-np.inf if self.clip_below is None else rnd.mu - self.clip_below * spread)
            hi = (np.inf if self.clip_above is None else rnd.mu + self.clip_above * spread)
            perf_in = np.clip(perf, lo, hi)
        if kind == GAUSSIAN:
            mu, sigma = K.update_gaussian(players, perf_in - off, noise, state.normal_view())
        else:
            state.reserve(players)
            max_hist = self.max_history if self.max_history is not None else np.iinfo(np.int64).max
            tol = self.history_tolerance if self.max_history is None else 0.0
            mu, sigma, st2 = K.update_logistic(
                players, perf_in - off, noise, rnd.mu - off, sig, max_hist, tol,
                state.normal_view(), K.LazyWeights(state.scale, state.sum_aw, state.sum_w),
                state.blocks_view(), state.pool_view(),
            )
            warnings = warnings + _status_warnings(st2, c, "rating")
            state.maybe_compact()
        return RoundOutput(mu=mu + off, sigma=sigma, perf=perf, warnings=tuple(warnings))


#: The named systems of this module (see :data:`podium.systems.SYSTEMS`).
PRESETS: dict[str, Preset] = {
    "mmr-plus": (
        MMRPlus, {},
        "Elo-MMR with a newcomer prior learned from debuts and skill trends by experience",
    ),
}
