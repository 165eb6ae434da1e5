"""MMR-plus: Elo-MMR ([EbtekarLiu2021]) with round weights, skill trends and drift learned
online.

MMR-plus keeps Elo-MMR's round (Algorithm 1: pseudodiffusion, Theorem 3.2's
performances, Eq. 6-8's posterior, the same kernels) and adds what Elo-MMR fixes by
hand and the data can tell (docs/mmr-plus.md has the equations, the measurements and
the ablation).  Three ingredients are on by default, fixed for every data set:

R. **round weights from the reliability of the results** (``reliability_ref``): the
   rank correlation ``s`` (Spearman) of the ratings before a round with its result,
   over the returning participants, is averaged online (``s <- s + m / (m + M) (s_round
   - s)`` for a round of ``m`` returning players, ``M = reliability_memory``); every
   round's weight is multiplied by ``min(1, s / reliability_ref) ^ reliability_power``
   (at least ``reliability_floor``).
   Where results say little about skill (Reddit threads: s ~ 0.2), each round moves
   ratings less; where they say much (Codeforces, s ~ 0.7) nothing changes.
T. **skill trends by experience** (``trend_rate``): after each round every
   participant's whole posterior is translated by ``t[b(n)]``, the learned mean change
   of skill between a player's ``n``-th and next contest (``b``: buckets of ``n``,
   :data:`TREND_EDGES`).  ``t`` is learned by an integral controller on the round's
   residuals ``r_i = p_i - mu_i`` centred on their mean over the returning
   participants: ``t[b] += trend_rate * sum_{i in b} r_i / (|b| + trend_prior)``.
W. **drift calibrated by the whiteness of the residuals** (``white_rate``, by
   experience: ``white_by="experience"``): with the standardised residuals
   ``z_i = (r_i - mean r) / sqrt(sigma_i^2 + beta^2)`` of the returning participants,
   ``u_i = z_i / rms(z)`` and the same player's ``u`` of its previous round, the
   correlation ``c_g`` of consecutive ``u`` in group ``g`` (``white_by``: experience
   buckets, or everybody, level buckets or buckets of the gap since the player's
   previous round) drives ``log s[g] += white_rate m_g / (m_g + white_memory) c_g``
   (clipped to ``+-log white_max``) and ``gamma^2`` is multiplied by ``s[g]``:
   lagging ratings (positive correlation) get more drift, over-reacting ones
   (negative) less; the fixed point is white residuals, as for an optimal filter.

Measured and off by default (each only where the data did not support it):

N. a newcomer prior learned from debuts (``noob_memory``): ``m <- m + d / (d + K)
   (mean p_debut - m)`` after a round with ``d`` debutants;
F. round weights by the size of the field (``size_ref``): ``min(1, (n / size_ref) ^
   size_power)`` for a round of ``n`` players;
C. a clip of the performance entering the posterior (``clip_below``/``clip_above``):
   ``p`` is clamped to ``mu -/+ k sqrt(sigma^2 + beta^2)`` (the event keeps ``p``);
V. per-player volatility (``vol_rate``): with ``z_i`` as in W and ``q_i = z_i^2 /
   mean z^2``, ``v_i <- v_i + vol_rate (q_i - v_i)``; the next
   drift is ``gamma_i^2 clip(v_i, vol_min, vol_max) ^ vol_power``;
L. drift (or, with ``level_spread``, performance spread) by rating level
   (``level_memory``): ``g[b] <- g[b] + c_b / (c_b + level_memory) (mean_{i in b} q_i
   - g[b])`` over the buckets :data:`LEVEL_EDGES` of ``mu - mu_noob``; ``gamma^2`` (or
   ``beta^2``) is multiplied by ``clip(g[b], 1 / level_max, level_max) ^ level_power``.

Elo-MMR's own parameters keep their meaning and multi-skill's defaults.  A
translation is implemented lazily: each player carries an ``offset`` and its normal
and logistic factors are stored relative to it, so that Elo-MMR's kernels run
unchanged in local coordinates (a shift costs O(1) per participant).  With every
ingredient off the numbers are Elo-MMR's, bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Self

import numpy as np
import numpy.typing as npt

from podium.core.explain import Explanation
from podium.core.numerics import GAUSSIAN, LOGISTIC
from podium.errors import ConfigError
from podium.systems.base import (
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)
from podium.systems.elo_mmr import EloMMR, EloMMRState

__all__ = ["MMRPlus", "MMRPlusState", "TREND_EDGES", "LEVEL_EDGES", "GAP_EDGES", "trend_bucket",
           "gap_bucket", "level_bucket"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Lower edges of the experience buckets of the trend table: bucket ``b`` holds the
#: players with ``TREND_EDGES[b] <= n < TREND_EDGES[b + 1]`` contests rated (about
#: geometric, so that every bucket sees many player-rounds on a long history).
TREND_EDGES: tuple[int, ...] = (1, 2, 3, 4, 5, 7, 10, 15, 22, 33, 50, 75, 110, 160, 240)

#: Lower edges, in rating points above ``mu_noob``, of the rating-level buckets of L
#: (bucket 0 holds everything below the first edge).
LEVEL_EDGES: tuple[float, ...] = (-600.0, -400.0, -200.0, 0.0, 200.0, 400.0, 600.0, 800.0,
                                  1000.0, 1200.0, 1400.0, 1600.0)

#: Lower edges, in days since the player's previous round, of W's gap buckets
#: (``white_by="gap"``).
GAP_EDGES: tuple[float, ...] = (0.0, 2.0, 4.0, 7.0, 10.0, 14.0, 21.0, 30.0, 45.0, 60.0,
                                90.0, 180.0, 365.0)

#: Entries of :attr:`MMRPlusState.learned` before the trend table.
_NOOB_MU = 0
_RELIABILITY = 1
_LEARNED_HEAD = 2
#: Length of ``learned`` before L's table was added (older checkpoints).
_LEARNED_OLD = _LEARNED_HEAD + len(TREND_EDGES)
_LEVEL = _LEARNED_OLD
_WHITE = _LEVEL + len(LEVEL_EDGES) + 1
#: W's table: one entry (``white_by="all"``) or one per experience or level bucket
_WHITE_LEN = max(len(TREND_EDGES), len(LEVEL_EDGES) + 1, len(GAP_EDGES))
_LEARNED_LEN = _WHITE + _WHITE_LEN


def trend_bucket(played: npt.ArrayLike) -> IntArray:
    """The trend bucket of players with ``played`` (>= 1) rated contests.

    >>> trend_bucket([1, 4, 5, 6, 7, 1000]).tolist()
    [0, 3, 4, 4, 5, 14]
    """
    edges = np.asarray(TREND_EDGES, dtype=np.int64)
    out: IntArray = np.searchsorted(edges, np.asarray(played, dtype=np.int64),
                                    side="right").astype(np.int64) - 1
    return np.maximum(out, 0)


def gap_bucket(seconds: npt.ArrayLike) -> IntArray:
    """The gap bucket of players whose previous round was ``seconds`` ago.

    >>> gap_bucket([0.0, 86_400.0, 2 * 86_400.0, 400 * 86_400.0]).tolist()
    [0, 0, 1, 12]
    """
    edges = np.asarray(GAP_EDGES, dtype=np.float64)
    days = np.asarray(seconds, dtype=np.float64) / 86_400.0
    out: IntArray = np.searchsorted(edges, days, side="right").astype(np.int64) - 1
    return np.maximum(out, 0)


#: Levels are rounded to this many decimals (1e-9 rating points) before they are
#: bucketed: far above the rounding of a rating difference, far below any level
#: that matters (:func:`level_bucket`).
LEVEL_SNAP_DECIMALS = 9


def level_bucket(level: npt.ArrayLike) -> IntArray:
    """The rating-level bucket of ratings ``level`` points above ``mu_noob``.

    The levels are rounded to :data:`LEVEL_SNAP_DECIMALS` decimals first.  A level is a
    difference of ratings, each rounded to its own magnitude (about 2e-13 at 1500), so
    a player exactly at an edge -- a newcomer at the prior has level 0 -- could fall
    on either side of it depending on ``mu_noob``; snapped, it falls on the edge's
    side whatever the ratings' origin, which keeps MMR-plus translation invariant.

    >>> level_bucket([-1000.0, -600.0, 0.0, 199.0, 5000.0]).tolist()
    [0, 1, 4, 4, 12]
    >>> level_bucket([-1.8e-15, 1.8e-15]).tolist()
    [4, 4]
    """
    edges = np.asarray(LEVEL_EDGES, dtype=np.float64)
    snapped = np.round(np.asarray(level, dtype=np.float64), LEVEL_SNAP_DECIMALS)
    out: IntArray = np.searchsorted(edges, snapped, side="right").astype(np.int64)
    return out


class MMRPlusState(EloMMRState):
    """:class:`~podium.systems.elo_mmr.EloMMRState` plus what MMR-plus learns.

    Per player: ``offset``, the translation of its posterior (its normal factor's
    mean and its logistic factors' locations are stored relative to it); ``vol``, V's
    running mean of relative squared residuals (1 for a newcomer); ``zlast``, W's
    standardised residual of the player's last round (NaN before one).  Shared:
    ``learned`` = ``[newcomer prior mean, reliability s, t[0], ..., t[B-1], g[0], ...,
    g[L], log s[0], ..., log s[W-1]]`` (N's prior, R's running rank correlation, T's
    table over :data:`TREND_EDGES`, L's table over :data:`LEVEL_EDGES`, W's table).
    All are checkpointed with the rest (checkpoint keys ``state.vol``,
    ``state.zlast``, ``state.learned``); a checkpoint written before V, L and W (no
    ``vol``/``zlast``, the shorter ``learned``) loads with them at their neutral values.
    """

    EXTRA_FIELDS: ClassVar[tuple[tuple[str, float], ...]] = (
        *EloMMRState.EXTRA_FIELDS, ("offset", 0.0), ("vol", 1.0),
        ("zlast", math.nan),
    )
    offset: FloatArray
    vol: FloatArray
    zlast: FloatArray

    def __init__(self, mu_noob: float, sig_noob: float) -> None:
        super().__init__(mu_noob, sig_noob)
        self.learned: FloatArray = np.zeros(_LEARNED_LEN)
        self.learned[_NOOB_MU] = mu_noob
        self.learned[_RELIABILITY] = 1.0
        self.learned[_LEVEL:_WHITE] = 1.0
        self.learned[_WHITE:] = 0.0
        #: the round's ``delta = hypot(sigma, beta)`` of each participant, kept by
        #: ``_diffuse`` for ``_learn`` (not checkpointed: it lives for one round)
        self.round_delta: FloatArray = np.zeros(0)

    @property
    def noob_mu(self) -> float:
        """The newcomer prior's mean learned so far (``mu_noob`` before any debut)."""
        return float(self.learned[_NOOB_MU])

    @property
    def reliability(self) -> float:
        """The learned rank correlation of ratings and results (1 before any round)."""
        return float(self.learned[_RELIABILITY])

    @property
    def trend(self) -> FloatArray:
        """The learned skill change per contest of each experience bucket (a view)."""
        return self.learned[_LEARNED_HEAD:_LEARNED_OLD]

    @property
    def level(self) -> FloatArray:
        """L's learned relative residual variance of each rating-level bucket (a view)."""
        return self.learned[_LEVEL:_WHITE]

    @property
    def drift_scale(self) -> FloatArray:
        """W's learned multipliers of the drift variance ``gamma^2`` (1 before any round):
        entry 0 for ``white_by="all"``, else one per bucket (a copy)."""
        out: FloatArray = np.exp(self.learned[_WHITE:])
        return out

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
        if "vol" not in d and "nf_mu" in d:  # a checkpoint from before V and W
            n = np.asarray(d["nf_mu"]).size
            d = {**d, "vol": np.ones(n), "zlast": np.full(n, math.nan)}
        st = super().from_arrays(d)
        learned = np.array(d["learned"], dtype=np.float64).reshape(-1)
        if learned.size == _LEARNED_OLD:  # a checkpoint from before L
            learned = np.r_[learned, np.ones(_WHITE - _LEVEL), np.zeros(_WHITE_LEN)]
        if learned.size != _LEARNED_LEN:
            raise ValueError(
                f"state entry 'learned' has {learned.size} values, not {_LEARNED_LEN}"
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
    """Elo-MMR with round weights from the learned reliability of results, skill trends
    learned by experience and a drift calibrated by experience so that a player's
    consecutive residuals are uncorrelated (module docstring; docs/mmr-plus.md).

    Every parameter of :class:`~podium.systems.elo_mmr.EloMMR` keeps its meaning and
    default.  The defaults of the parameters below are fixed, not re-tuned per data
    set (docs/mmr-plus.md says how each was chosen); ``None`` or ``0`` switches an
    ingredient off.  Team rounds are rated as
    Elo-MMR rates them (in each player's local coordinates); subsampling
    (``subsample_size``) and history compression (``max_history``) work as in Elo-MMR.

    Parameters
    ----------
    reliability_ref:
        R: the learned rank correlation ``s`` at and above which a round has its full
        weight; below it the weight is multiplied by ``(s / reliability_ref) ^
        reliability_power`` (default 0.5; ``None``: off).
    reliability_power:
        R: the exponent (default 2).
    reliability_memory:
        R: ``M``, in returning player-rounds, of the running mean of ``s``
        (default 300); ``s`` starts at 1 (full weight).
    reliability_floor:
        R: the smallest multiplier (default 0.05), so that a history of pure noise
        still has finite performance spreads (``beta`` grows as ``w^-1/2``).
    trend_rate:
        T: step of the trend controller (default 0.05; ``0``: off).
    trend_prior:
        T: pseudo-count: a bucket seen by ``c`` participants of a round moves by
        ``trend_rate * sum(r) / (c + trend_prior)`` (default 1000).
    trend_limit:
        T: bound on ``|t[b]|``, rating points per contest (default 50).
    noob_memory:
        N: ``K`` of the learned newcomer prior (default ``0``: off; every newcomer
        starts at ``mu_noob``).
    size_ref, size_power:
        F: a round of ``n < size_ref`` players has its weight multiplied by
        ``(n / size_ref) ^ size_power`` (default ``None``: off).
    clip_below, clip_above:
        C: the performance entering the posterior is clamped to ``[mu - clip_below
        delta, mu + clip_above delta]``, ``delta = sqrt(sigma^2 + beta^2)`` (default
        ``None``: no clamp).
    vol_rate:
        V: step of each player's running mean of relative squared residuals, in
        ``[0, 1]`` (default ``0``: off).
    vol_min, vol_max:
        V: bounds of the multiplier of ``gamma^2`` (defaults 0.25 and 4;
        ``vol_min <= vol_max``; equal bounds give a constant multiplier).
    vol_power:
        V: exponent of the multiplier (default 1).
    level_memory:
        L: pseudo-count of the running mean of each rating-level bucket (default ``0``:
        off).
    level_power, level_max:
        L: exponent and bound (``>= 1``; the multiplier lies in ``[1 / level_max,
        level_max]``) of the bucket's multiplier (defaults 1 and 4).
    level_spread:
        L: multiply the performance spread ``beta^2`` instead of the drift ``gamma^2``
        (default ``False``).
    white_rate:
        W: step of the drift controller (default 0.5; ``0``: off).
    white_memory:
        W: a round with ``m`` players of a group with a previous residual moves its
        entry by ``white_rate * m / (m + white_memory) * c`` (default 300).
    white_max:
        W: bound (``>= 1``) of the multiplier of ``gamma^2``, both ways (default 10).
    white_by:
        W: ``"experience"`` (one multiplier per bucket of :data:`TREND_EDGES`,
        default), ``"all"`` (one multiplier), ``"level"`` (one per bucket of :data:`LEVEL_EDGES`) or
        ``"gap"`` (one per bucket of :data:`GAP_EDGES`, days since the player's
        previous round).
    """

    name: ClassVar[str] = "mmr-plus"
    #: W joined the preset after mmr-plus ratings could be saved without it: a
    #: checkpoint or store from before it goes on without it.
    params_added_later: ClassVar[dict[str, Any]] = {
        **EloMMR.params_added_later, "white_rate": 0.0}

    reliability_ref: float | None = param(0.5, "number_or_none")
    reliability_power: float = param(2.0, "nonnegative")
    reliability_memory: float = param(300.0, "positive")
    reliability_floor: float = param(0.05, "open_unit")
    trend_rate: float = param(0.05, "nonnegative")
    trend_prior: float = param(1000.0, "positive")
    trend_limit: float = param(50.0, "positive")
    noob_memory: float = param(0.0, "nonnegative")
    size_ref: float | None = param(None, "number_or_none")
    size_power: float = param(0.5, "nonnegative")
    clip_below: float | None = param(None, "number_or_none")
    clip_above: float | None = param(None, "number_or_none")
    vol_rate: float = param(0.0, "nonnegative")
    vol_power: float = param(1.0, "nonnegative")
    vol_min: float = param(0.25, "positive")
    vol_max: float = param(4.0, "positive")
    level_memory: float = param(0.0, "nonnegative")
    level_power: float = param(1.0, "nonnegative")
    level_max: float = param(4.0, "positive")
    level_spread: bool = param(False, "bool")
    white_rate: float = param(0.5, "nonnegative")
    white_memory: float = param(300.0, "positive")
    white_max: float = param(10.0, "positive")
    white_by: Literal["all", "experience", "level", "gap"] = "experience"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.vol_rate > 1.0:
            raise ConfigError(f"vol_rate must be in [0, 1], got {self.vol_rate!r}")
        for name in ("level_max", "white_max"):
            if getattr(self, name) < 1.0:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.white_by not in ("all", "experience", "level", "gap"):
            raise ConfigError("white_by must be 'all', 'experience', 'level' or 'gap', "
                              f"got {self.white_by!r}")
        if self.vol_min > self.vol_max:
            raise ConfigError(
                f"vol_min ({self.vol_min!r}) must not exceed vol_max ({self.vol_max!r})")
        for name in ("size_ref", "clip_below", "clip_above", "reliability_ref"):
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
        state.round_delta = np.zeros(0)
        out = super().round_update(state, rnd)
        self._learn(state, rnd, out.perf)
        if self.trend_rate > 0.0:
            shift = state.trend[trend_bucket(rnd.played + 1)]
            state.offset[rnd.players] += shift
            out = dataclasses.replace(out, mu=out.mu + shift)
        return out

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The rating before and after, with what ``mmr-plus`` adds to Elo-MMR: the
        round's weight after R (reliability) and the size factor, the multipliers of the
        player's drift ``gamma^2`` and spread ``beta^2`` (V, L, W; 1 when off), and the
        trend shift T applied after the update.  Elo-MMR's term-by-term explanation is not given
        here: the update runs in each player's local coordinates (docs/mmr-plus.md), so
        its terms would not be the numbers the round used."""
        from podium.systems.base.explain import check_position, explanation, prepared_copy

        k = check_position(rnd, position)
        assert isinstance(state, MMRPlusState)
        size = self._size_factor(int(rnd.players.size))
        rel = self._reliability_factor(state.reliability)
        copy = prepared_copy(state, rnd)
        assert isinstance(copy, MMRPlusState)
        drift, spread = self._spread_factors(copy, rnd)
        out = self.round_update(copy, rnd)
        i = int(rnd.players[k])
        before = float(state.offset[i]) if i < state.n else 0.0
        shift = float(copy.offset[i]) - before
        q = {"contest_weight": float(rnd.contest.weight), "size_factor": size,
             "reliability": float(state.reliability), "reliability_factor": rel,
             "round_weight": float(rnd.contest.weight) * size * rel, "trend_shift": shift,
             "drift_factor": float(drift[k]), "spread_factor": float(spread[k])}
        return explanation(self, rnd, k, out, quantities=q, notes=(
            f"Elo-MMR's update with the round weight {q['round_weight']:.6g} (contest "
            f"weight x size factor {size:.6g} x reliability factor {rel:.6g}; the drift "
            f"gamma^2 x {q['drift_factor']:.6g}, the spread beta^2 x "
            f"{q['spread_factor']:.6g}), then the experience trend moved mu by {shift:+.6g}",
            "MMRPlus does not break its update into terms (the Elo-MMR update runs in the "
            "player's local coordinates)"))

    # ------------------------------------------------------------------ learning
    def _learn(self, state: MMRPlusState, rnd: RoundInput, perf: FloatArray) -> None:
        """Update the learned newcomer prior, reliability and trend table from one round,
        then (V, L, W) the tables of the residuals' spread."""
        new = rnd.played == 0
        if self.noob_memory > 0.0 and new.any():
            d = int(np.count_nonzero(new))
            p = float(perf[new].mean())
            if math.isfinite(p):
                state.learned[_NOOB_MU] += d / (d + self.noob_memory) * (p - state.noob_mu)
        if self.reliability_ref is not None:
            ret = np.flatnonzero(~new)
            if ret.size >= 3:
                r = _rank_correlation(rnd.mu[ret], rnd.lo[ret] + rnd.hi[ret])
                if math.isfinite(r):
                    m = ret.size
                    state.learned[_RELIABILITY] += m / (m + self.reliability_memory) * (
                        r - state.reliability)
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
        if (self.vol_rate > 0.0 or self.level_memory > 0.0 or self.white_rate > 0.0) and \
                state.round_delta.size == rnd.players.size:
            self._learn_spread(state, rnd, perf, state.round_delta)

    def _learn_spread(self, state: MMRPlusState, rnd: RoundInput, perf: FloatArray,
                      delta: FloatArray) -> None:
        """V, L and W: the standardised residuals ``z = (r - mean r) / delta`` of the
        returning participants, relative to their mean square over the round."""
        ret = np.flatnonzero(rnd.played > 0)
        if ret.size < 2:
            return
        r = perf[ret] - rnd.mu[ret]
        z = (r - r.mean()) / delta[ret]
        msq = float(z @ z) / z.size
        if not (math.isfinite(msq) and msq > 0.0):
            return
        q = z * z / msq
        who = rnd.players[ret]
        if self.vol_rate > 0.0:
            state.vol[who] += self.vol_rate * (q - state.vol[who])
        if self.white_rate > 0.0:
            zn = z / math.sqrt(msq)
            prev = state.zlast[who]
            both = np.isfinite(prev)
            if int(np.count_nonzero(both)) >= 2:
                a, b = zn[both], prev[both]
                g = self._white_group(rnd.played[ret][both], rnd.mu[ret][both],
                                      rnd.delta_seconds[ret][both])
                ab = np.bincount(g, weights=a * b, minlength=_WHITE_LEN)
                aa = np.bincount(g, weights=a * a, minlength=_WHITE_LEN)
                bb = np.bincount(g, weights=b * b, minlength=_WHITE_LEN)
                m = np.bincount(g, minlength=_WHITE_LEN)
                den = np.sqrt(aa * bb)
                ok = (m >= 2) & (den > 0.0)
                c = np.zeros(_WHITE_LEN)
                c[ok] = ab[ok] / den[ok]
                lim = math.log(self.white_max)
                step = self.white_rate * m / (m + self.white_memory) * c
                if np.isfinite(step).all():
                    tab = state.learned[_WHITE:]
                    np.clip(tab + step, -lim, lim, out=tab)
            state.zlast[who] = zn
        if self.level_memory > 0.0:
            lb = level_bucket(rnd.mu[ret] - self.mu_noob)
            nb = len(LEVEL_EDGES) + 1
            sums = np.bincount(lb, weights=q, minlength=nb)
            counts = np.bincount(lb, minlength=nb)
            seen = counts > 0
            lv = state.level
            lv[seen] += counts[seen] / (counts[seen] + self.level_memory) * (
                sums[seen] / counts[seen] - lv[seen])

    def _white_group(self, played: IntArray, mu: FloatArray,
                     delta_seconds: FloatArray) -> IntArray:
        """W: the entry of the drift table of each player (``white_by``)."""
        if self.white_by == "experience":
            return trend_bucket(np.maximum(played, 1))
        if self.white_by == "level":
            return level_bucket(mu - self.mu_noob)
        if self.white_by == "gap":
            return gap_bucket(delta_seconds)
        return np.zeros(played.size, dtype=np.int64)

    def _vol_factor(self, state: MMRPlusState, players: IntArray) -> FloatArray:
        """V: the multiplier of each participant's drift variance ``gamma^2``."""
        v = state.vol[players]
        return np.clip(v, self.vol_min, self.vol_max) ** self.vol_power

    def _spread_factors(self, state: MMRPlusState,
                        rnd: RoundInput) -> tuple[FloatArray, FloatArray]:
        """V, L, W: the multipliers of each participant's ``gamma^2`` and ``beta^2``."""
        n = rnd.players.size
        drift = np.ones(n)
        spread = np.ones(n)
        if self.vol_rate > 0.0:
            drift *= self._vol_factor(state, rnd.players)
        if self.white_rate > 0.0:
            g = self._white_group(rnd.played, rnd.mu, rnd.delta_seconds)
            drift *= np.exp(state.learned[_WHITE + g])
        if self.level_memory > 0.0:
            if self.level_spread:
                spread *= self._level_factor(state, rnd.mu)
            else:
                drift *= self._level_factor(state, rnd.mu)
        return drift, spread

    def _level_factor(self, state: MMRPlusState, mu: FloatArray) -> FloatArray:
        """L: the multiplier (of ``gamma^2``, or of ``beta^2`` with ``level_spread``)
        of each participant's rating-level bucket."""
        g = state.level[level_bucket(mu - self.mu_noob)]
        return np.clip(g, 1.0 / self.level_max, self.level_max) ** self.level_power

    # ------------------------------------------------------------------ local coordinates
    def diffuse(self, state: EloMMRState, rnd: RoundInput) -> tuple[FloatArray, FloatArray]:
        """Elo-MMR's step 1 (:meth:`EloMMR.diffuse`) in each player's local coordinates."""
        import podium.systems.elo_mmr.kernels as K

        assert isinstance(state, MMRPlusState)
        weight = rnd.contest.weight * self._size_factor(rnd.players.size)
        weight *= self._reliability_factor(state.reliability)
        beta, gamma = K.round_weights(
            rnd.played, weight, self.weight_limit,
            np.asarray(self.noob_delay, dtype=np.float64), self.sig_limit, self.drift_per_day,
            rnd.delta_seconds,
        )
        spreads = self.vol_rate > 0.0 or self.level_memory > 0.0 or self.white_rate > 0.0
        if spreads:
            drift, spread = self._spread_factors(state, rnd)
            gamma = gamma * np.sqrt(drift)
            beta = beta * np.sqrt(spread)
        sig = K.diffuse(
            rnd.players, rnd.mu - state.offset[rnd.players], rnd.sigma, gamma, float(self.rho),
            self.collapses, state.normal_view(),
            K.LazyWeights(state.scale, state.sum_aw, state.sum_w), state.blocks_view(),
            state.pool_view(),
        )
        if spreads:
            state.round_delta = np.hypot(sig, beta)
        return beta, sig

    def _reliability_factor(self, s: float) -> float:
        """R: the weight multiplier for the learned rank correlation ``s``."""
        if self.reliability_ref is None:
            return 1.0
        return max(self.reliability_floor,
                   min(1.0, max(s, 0.0) / self.reliability_ref) ** self.reliability_power)

    def _size_factor(self, n: int) -> float:
        """The weight multiplier of a round of ``n`` participants."""
        if self.size_ref is None:
            return 1.0
        return min(1.0, (n / self.size_ref) ** self.size_power)

    def absorb(self, state: EloMMRState, rnd: RoundInput, kind: int, perf: FloatArray,
                noise: FloatArray, sig: FloatArray, warnings: list[str]) -> RoundOutput:
        """Elo-MMR's step 4 (Eq. 6-8): the performances capped at the round's ceiling in
        rating coordinates, then added to each posterior in its local coordinates."""
        import podium.systems.elo_mmr.kernels as K
        from podium.core.numerics import status_warnings

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
            mu, sigma, st2 = K.update_logistic_for(players.size)(
                players, perf_in - off, noise, rnd.mu - off, sig, max_hist, tol,
                state.normal_view(), K.LazyWeights(state.scale, state.sum_aw, state.sum_w),
                state.blocks_view(), state.pool_view(),
            )
            warnings = warnings + status_warnings(st2, c.label, "rating")
            state.maybe_compact()
        return RoundOutput(mu=mu + off, sigma=sigma, perf=perf, warnings=tuple(warnings))


def _rank_correlation(mu: FloatArray, place2: IntArray) -> float:
    """Spearman's rho between the order of ``mu`` (higher first) and the result
    (``place2 = lo + hi``, smaller first; ties share their mean rank); NaN when either
    side is constant."""
    a = _mean_ranks(-mu)
    b = _mean_ranks(place2.astype(np.float64))
    a -= a.mean()
    b -= b.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / den if den > 0.0 else math.nan


def _mean_ranks(x: FloatArray) -> FloatArray:
    """Ranks 0..n-1 of ``x`` (ascending), ties sharing their mean rank."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], xs.size]
    mean_rank = (starts + ends - 1) / 2.0
    out = np.empty(x.size)
    out[order] = np.repeat(mean_rank, ends - starts)
    return out
