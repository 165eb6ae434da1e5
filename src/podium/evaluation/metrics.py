"""How well ratings predict contest results.

Every metric compares the ratings players held *before* a contest with the
contest's standings.  A round is given as arrays in standings order (best
first): ``mu`` (the rating before the contest), ``lo``/``hi`` (the 0-based,
inclusive range of places a tie shares) and, for :class:`MetricAccumulator`,
``n_prev`` (earlier rated contests; 0 for a debut).

Two families are computed.

**The Elo-MMR paper's Table 2** ([EbtekarLiu2021]; multi-skill's ``metrics.rs``):

* The scored players are the returning ones (debutants excluded), or those with
  at least ``min_history`` (5) earlier contests for the paper's figures, or the
  returning players placed in the top ``top_k`` (100).  A subset's tie ranges
  are renumbered among its members (:func:`renumber_ties`).
* *Pair inversion* (:func:`pair_inversion`): the percentage of pairs of players
  whose order the ratings predict -- a pair tied in the results counts as
  predicted; otherwise the better-placed player must hold the strictly higher
  rating.
* *Rank deviation* (:func:`rank_deviation`): with ``i`` the position in a stable
  sort by rating (best first), ``100 * sum_i |i - clamp(i, lo_i, hi_i)| / ((n-1) n)``.
* A round is weighted by its number of scored players ``n``; a round that is
  *outcome free* (no players, or everybody tied) counts for nothing.

**[Batty2026]'s accuracy** (Sec. 2.3-2.5): every participant, debutants included,
gets an actual rank ``r`` and an expected rank ``r_hat`` (Eq. 4, ties split
half-half) and the error ``e = log2 r_hat - log2 r`` (Eq. 5-6);
``L1 = mean |e|`` (Eq. 7) and ``L2 = sqrt(mean e^2)`` (Eq. 8) over all
player-rounds.  Kendall's tau-b and Spearman's rho between the order of the
ratings and the result complete it ([Batty2026] Sec. 2.5, per round over the
returning players).

Every per-round computation is ``O(n log n)``; see :mod:`podium.evaluation._metrics_kernels`.

Examples
--------
>>> import numpy as np
>>> mu = np.array([1500.0, 1600.0, 1400.0, 1400.0])
>>> lo, hi = np.array([0, 1, 1, 3]), np.array([0, 2, 2, 3])
>>> round(pair_inversion(mu, lo, hi), 4), round(rank_deviation(mu, lo, hi), 4)
(66.6667, 16.6667)
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
import numpy.typing as npt

import podium.evaluation._metrics_kernels as _k

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COUNT_KEYS",
    "ROUND_KEYS",
    "SUMMARY_KEYS",
    "MetricAccumulator",
    "announce_compile",
    "is_outcome_free",
    "kendall_tau",
    "pair_inversion",
    "rank_deviation",
    "rank_log_errors",
    "renumber_ties",
    "spearman_rho",
]

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Metric values :meth:`MetricAccumulator.add_round` returns for one round.
ROUND_KEYS: tuple[str, ...] = (
    "pair_inv", "rank_dev", "pair_inv_all", "rank_dev_all", "pair_inv_top", "rank_dev_top",
    "l1", "l2", "kendall_tau", "spearman_rho",
)
#: Player counts :meth:`MetricAccumulator.add_round` also returns.
COUNT_KEYS: tuple[str, ...] = ("n", "n_returning", "n_experienced", "n_top")
#: Keys of :meth:`MetricAccumulator.summary`.
SUMMARY_KEYS: tuple[str, ...] = (
    "pair_inv", "rank_dev", "pair_inv_all", "rank_dev_all", "pair_inv_top", "rank_dev_top",
    "l1", "l2", "kendall_tau", "spearman_rho", "kendall_tau_mean", "spearman_rho_mean",
    "rounds", "player_rounds",
)

# (metric family, subset) pairs of the Table 2 metrics, in ROUND_KEYS naming
_TABLE2 = ("pair_inv", "rank_dev", "pair_inv_all", "rank_dev_all", "pair_inv_top",
           "rank_dev_top")
_CORR = ("kendall_tau", "spearman_rho")
_LN10 = math.log(10.0)


def announce_compile(stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for the evaluation's metrics, once: ~N s`` when none of
    the metric kernels is in Numba's cache or the prebuilt kernels yet (an install
    prebuilds them only with ``PODIUM_PREBUILD_EVAL=1``, :mod:`podium.prebuild`);
    whether it was printed."""
    from podium._jit import announce_module_compile

    return announce_module_compile("the evaluation's metrics", _k, _k.COMPILE_SECONDS,
                                   sys.stderr if stream is None else stream)


# --------------------------------------------------------------------------------------
# Input checking


def _writable(a: ArrayLike, dtype: type[np.generic]) -> Any:
    """A C-contiguous array of ``dtype`` that can be written (a copy of a read-only one,
    e.g. a contest's ``lo``): the kernels always get writable arrays, so each compiles
    (and caches, and prebuilds) one overload instead of two that differ only in
    writability."""
    arr = np.ascontiguousarray(a, dtype=dtype)
    return arr if arr.flags.writeable else arr.copy()


def _round_arrays(mu: ArrayLike, lo: ArrayLike, hi: ArrayLike | None
                  ) -> tuple[FloatArray, IntArray, IntArray | None]:
    """Contiguous float64/int64 copies (or views) of one round, checked."""
    m = _writable(mu, np.float64)
    lo_a = _writable(lo, np.int64)
    if m.ndim != 1 or lo_a.shape != m.shape:
        raise ValueError(f"mu and lo must be 1-D of equal length, got {m.shape} and {lo_a.shape}")
    if not np.isfinite(m).all():
        raise ValueError("ratings must be finite")
    if m.size > 1 and np.any(lo_a[1:] < lo_a[:-1]):
        raise ValueError("lo must be non-decreasing (arrays in standings order, best first)")
    if hi is None:
        return m, lo_a, None
    hi_a = _writable(hi, np.int64)
    if hi_a.shape != m.shape:
        raise ValueError(f"hi must have the shape of mu, got {hi_a.shape}")
    if np.any(hi_a < lo_a):
        raise ValueError("every hi must be >= its lo")
    return m, lo_a, hi_a


# --------------------------------------------------------------------------------------
# One round


def renumber_ties(lo: ArrayLike, hi: ArrayLike) -> tuple[IntArray, IntArray]:
    """Tie ranges of an already-filtered standings list, renumbered among its members.

    Walking the list in order, a player's new ``lo`` is the position of the
    first kept player with the same original ``lo`` and its new ``hi`` the
    position of the last kept player with the same original ``hi`` (as
    multi-skill's ``get_participant_ratings``).

    Parameters
    ----------
    lo, hi:
        Original tie ranges of the kept players, in standings order.

    Returns
    -------
    lo, hi : ndarray of int64
        The renumbered ranges.

    Examples
    --------
    >>> lo = np.array([0, 0, 2, 3, 3, 3]); hi = np.array([1, 1, 2, 5, 5, 5])
    >>> keep = [0, 2, 3, 5]
    >>> [a.tolist() for a in renumber_ties(lo[keep], hi[keep])]
    [[0, 1, 2, 2], [0, 1, 3, 3]]
    """
    lo_a = _writable(lo, np.int64)
    hi_a = _writable(hi, np.int64)
    if lo_a.ndim != 1 or hi_a.shape != lo_a.shape:
        raise ValueError("lo and hi must be 1-D of equal length")
    return _k.renumber_ranges(lo_a, hi_a)


def is_outcome_free(lo: ArrayLike, hi: ArrayLike) -> bool:
    """Whether a (renumbered) round says nothing about order: no players, or the
    first player's tie covers everybody (``hi[0] + 1 >= n``; one player included)."""
    hi_a = np.asarray(hi)
    n = hi_a.size
    return n == 0 or int(hi_a[0]) + 1 >= n


def _pair_sum(mu: FloatArray, lo: IntArray, equal_mu_correct: bool) -> float:
    """multi-skill's per-round ``sum`` of pair inversion (its weight is ``n``):
    ``100 * (2 correct + 2 tied) / (n - 1)``, counting ordered pairs twice."""
    n = mu.size
    correct, cross = _k.pair_counts(mu, lo, equal_mu_correct)
    tied2 = float(n) * (n - 1.0) - 2.0 * cross
    return 100.0 * (2.0 * correct + tied2) / (n - 1.0)


def _rank_sum(mu: FloatArray, lo: IntArray, hi: IntArray) -> float:
    """multi-skill's per-round ``sum`` of rank deviation: ``100 * sum error / (n - 1)``."""
    return 100.0 * float(_k.rank_deviation_sum(mu, lo, hi)) / (mu.size - 1.0)


def pair_inversion(mu: ArrayLike, lo: ArrayLike, hi: ArrayLike, *,
                   equal_mu_correct: bool = False) -> float:
    """Percentage of pairs of players whose order the ratings predict.

    A pair tied in the results (same ``lo``) counts as predicted; a pair placed
    ``lo_w < lo_l`` counts when ``mu_w > mu_l`` strictly.  The value is
    ``100 (correct + tied) / (n (n - 1) / 2)`` -- multi-skill's
    ``pairwise_metric``, the pair inversion of [EbtekarLiu2021]'s Table 2.

    Parameters
    ----------
    mu:
        Ratings before the contest, in standings order.
    lo, hi:
        Tie ranges of the scored players, renumbered among them (:func:`renumber_ties`).
    equal_mu_correct:
        Count a pair of different places but equal ratings as predicted (the
        later, merge-sort version of multi-skill's metric) instead of wrong (the
        all-pairs version, default).

    Returns
    -------
    float
        Percent; NaN when the round is outcome free (:func:`is_outcome_free`).

    Notes
    -----
    ``O(n log n)``: a Fenwick tree over rating ranks counts, for each player,
    the better-placed players with a higher rating.
    """
    m, lo_a, hi_a = _round_arrays(mu, lo, hi)
    assert hi_a is not None  # given hi, _round_arrays returns it
    if is_outcome_free(lo_a, hi_a):
        return math.nan
    return _pair_sum(m, lo_a, equal_mu_correct) / m.size


def rank_deviation(mu: ArrayLike, lo: ArrayLike, hi: ArrayLike) -> float:
    """Mean distance, in percent of ``n - 1``, from each player's position by
    rating to the nearest place of its tie range.

    Sort by rating, best first, with a stable sort (equal ratings keep standings
    order); the player at 0-based position ``i`` with range ``[lo, hi]`` is off
    by ``|i - clamp(i, lo, hi)|``.  The value is
    ``100 sum_i error_i / ((n - 1) n)`` -- multi-skill's
    ``percentile_distance_metric`` ([EbtekarLiu2021]'s Table 2) divided by its weight ``n``.

    Parameters
    ----------
    mu:
        Ratings before the contest, in standings order.
    lo, hi:
        Tie ranges of the scored players, renumbered among them (:func:`renumber_ties`).

    Returns
    -------
    float
        Percent; NaN when the round is outcome free.
    """
    m, lo_a, hi_a = _round_arrays(mu, lo, hi)
    assert hi_a is not None
    if is_outcome_free(lo_a, hi_a):
        return math.nan
    return _rank_sum(m, lo_a, hi_a) / m.size


def rank_log_errors(mu: ArrayLike, lo: ArrayLike, hi: ArrayLike, *,
                    scale: float = 400.0) -> FloatArray:
    """[Batty2026]'s per-player error ``e = log2(r_hat) - log2(r)`` (Eq. 4-5).

    With ``r_ties = #{j != i tied with i} / 2`` (tied: same ``lo``),
    ``r = 1 + #{j placed better} + r_ties`` and
    ``r_hat = 1 + sum_{j not tied with i} w_j + r_ties``, where
    ``w_j = 1 / (1 + 10^((mu_i - mu_j) / scale))`` is the probability that ``j``
    beats ``i`` (Eq. 3).  ``|e|`` is Eq. 6's error; Eq. 7-8 average it.

    Parameters
    ----------
    mu:
        Ratings before the contest of every participant (debutants at their
        newcomer rating), in standings order.
    lo, hi:
        The contest's tie ranges (``hi`` is only checked).
    scale:
        Rating difference giving odds of 10 to 1 (400 in Elo's and [Batty2026]'s formula).

    Returns
    -------
    ndarray
        ``e`` per player, in input order.

    Notes
    -----
    ``sum_j w_j`` over all players for every ``i`` is evaluated by Chebyshev
    interpolation of ``x -> sum_j w_j(x)`` on panels (``O(n)`` per panel, about
    seven panels for a Codeforces round), to rounding-level accuracy; the sum
    over ``i``'s tie group is subtracted exactly.  Small rounds are summed term
    by term.
    """
    m, lo_a, _ = _round_arrays(mu, lo, hi)
    if not (scale > 0.0 and math.isfinite(scale)):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    return _k.rank_log_errors_kernel(m, lo_a, _LN10 / scale, _k.METHOD_AUTO)


def kendall_tau(mu: ArrayLike, lo: ArrayLike) -> float:
    """Kendall's tau-b between the ratings (higher is better) and the result
    (lower ``lo`` is better): +1 for a perfect prediction.

    Ties in either are handled as tau-b (as :func:`scipy.stats.kendalltau`).
    NaN when the ratings or the places are all equal, or ``n < 2``.
    ``O(n log n)`` (Knight's algorithm).
    """
    m, lo_a, _ = _round_arrays(mu, lo, None)
    return float(_k.kendall_tau_b(m, -lo_a))


def spearman_rho(mu: ArrayLike, lo: ArrayLike) -> float:
    """Spearman's rho (Pearson correlation of average ranks, as
    :func:`scipy.stats.spearmanr`) between the ratings and ``-lo``: +1 for a
    perfect prediction.  NaN when either is constant or ``n < 2``."""
    m, lo_a, _ = _round_arrays(mu, lo, None)
    return float(_k.spearman(m, -lo_a))


# --------------------------------------------------------------------------------------
# Accumulation over contests


def _running_sum(start: float, values: FloatArray) -> float:
    """``start + values[0] + values[1] + ...`` added left to right (as a loop of ``+=``;
    ``np.cumsum`` adds in order, unlike ``np.sum``)."""
    if values.size == 0:
        return start
    return float(np.cumsum(np.concatenate(([start], values)))[-1])


def _round_sums(e: FloatArray, offsets: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per round: ``sum |e|`` and ``e . e``, as ``np.abs(e).sum()`` and ``np.dot(e, e)``
    give them for the round alone (rounds of one size at a time, as rows of a matrix:
    ``sum(axis=1)`` and a stack of row-by-column products add in the same order)."""
    n = np.diff(offsets)
    a_sum = np.zeros(n.size)
    q_sum = np.zeros(n.size)
    for size in np.unique(n[n > 0]).tolist():
        rounds = np.flatnonzero(n == size)
        rows = e[offsets[rounds][:, None] + np.arange(size)]
        a_sum[rounds] = np.abs(rows).sum(axis=1)
        q_sum[rounds] = (rows[:, None, :] @ rows[:, :, None]).reshape(-1)
    return a_sum, q_sum


class MetricAccumulator:
    """Per-round metrics of a sequence of contests and their aggregates.

    Parameters
    ----------
    min_history:
        Earlier contests a player needs to count as *experienced* (the paper's
        figures ``pair_inv``/``rank_dev``; multi-skill uses 5).
    top_k:
        The ``*_top`` metrics score the returning players whose renumbered
        ``lo`` is below ``top_k`` (more than ``top_k`` when a tie spans it).
    scale:
        Elo scale of [Batty2026]'s win probability (Eq. 3).
    extended:
        Compute every metric.  ``False`` computes only ``pair_inv`` and
        ``rank_dev`` (experienced players): the fast path for tuning; the other
        values are then NaN.
    equal_mu_correct:
        See :func:`pair_inversion` (default: a pair with equal ratings is wrong).

    Notes
    -----
    Aggregates: the Table 2 metrics as multi-skill does,
    ``sum_rounds n * value / sum_rounds n`` over rounds that are not outcome
    free; ``l1``/``l2`` over all player-rounds (Eq. 7-8); ``kendall_tau`` and
    ``spearman_rho`` weighted by the returning players of each round, and
    ``*_mean`` their plain mean over rounds, skipping rounds where they are
    undefined.  ``rounds``/``player_rounds`` count the rounds and player-rounds
    behind ``pair_inv``.
    """

    def __init__(self, *, min_history: int = 5, top_k: int = 100, scale: float = 400.0,
                 extended: bool = True, equal_mu_correct: bool = False) -> None:
        if min_history < 1:
            raise ValueError(f"min_history must be >= 1 (debutants are never scored), "
                             f"got {min_history}")
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if not (scale > 0.0 and math.isfinite(scale)):
            raise ValueError(f"scale must be positive and finite, got {scale}")
        self.min_history = int(min_history)
        self.top_k = int(top_k)
        self.scale = float(scale)
        self.extended = bool(extended)
        self.equal_mu_correct = bool(equal_mu_correct)
        # Table 2 metrics: (sum of weights, sum of weight * value, rounds)
        self._wt: dict[str, float] = dict.fromkeys(_TABLE2, 0.0)
        self._sum: dict[str, float] = dict.fromkeys(_TABLE2, 0.0)
        self._rounds: dict[str, int] = dict.fromkeys(_TABLE2, 0)
        # [Batty2026]: sum |e|, sum e^2, player-rounds
        self._abs = 0.0
        self._sq = 0.0
        self._count = 0
        # correlations: sum n, sum n*v, sum v, rounds
        self._cw: dict[str, float] = dict.fromkeys(_CORR, 0.0)
        self._cwv: dict[str, float] = dict.fromkeys(_CORR, 0.0)
        self._cv: dict[str, float] = dict.fromkeys(_CORR, 0.0)
        self._cn: dict[str, int] = dict.fromkeys(_CORR, 0)
        # per-round records: lists of row dicts (add_round) and column chunks
        # (add_rounds), in the order added
        self._parts: list[list[dict[str, Any]] | dict[str, np.ndarray]] = []
        self._added = 0

    def _table2(self, key_pair: str, key_rank: str, mu: FloatArray, lo: IntArray,
                hi: IntArray, out: dict[str, Any]) -> None:
        n = mu.size
        if is_outcome_free(lo, hi):
            return
        ps = _pair_sum(mu, lo, self.equal_mu_correct)
        rs = _rank_sum(mu, lo, hi)
        for key, s in ((key_pair, ps), (key_rank, rs)):
            self._wt[key] += n
            self._sum[key] += s
            self._rounds[key] += 1
            out[key] = s / n

    def add_round(self, mu: ArrayLike, lo: ArrayLike, hi: ArrayLike, n_prev: ArrayLike, *,
                  index: int | None = None) -> dict[str, float]:
        """Score one contest and add it to the aggregates.

        Parameters
        ----------
        mu:
            Rating before the contest of every participant (newcomer rating for
            debutants), in standings order.
        lo, hi:
            The contest's tie ranges.
        n_prev:
            Earlier rated contests of each participant (0 for a debut).
        index:
            Label of the round in :meth:`per_round` (default: rounds added so far).

        Returns
        -------
        dict
            This round's values (keys :data:`ROUND_KEYS`; NaN where outcome free,
            undefined, or not computed) and player counts ``n``, ``n_returning``,
            ``n_experienced``, ``n_top`` (:data:`COUNT_KEYS`; ``n_top`` is 0 when not
            ``extended``).
        """
        m, lo_a, hi_a = _round_arrays(mu, lo, hi)
        assert hi_a is not None
        prev = np.ascontiguousarray(n_prev, dtype=np.int64)
        if prev.shape != m.shape:
            raise ValueError(f"n_prev must have the shape of mu, got {prev.shape}")
        if np.any(prev < 0):
            raise ValueError("n_prev must be >= 0")
        out: dict[str, Any] = {"index": self._added if index is None else index}
        out.update(dict.fromkeys(ROUND_KEYS, math.nan))
        out["n"] = int(m.size)

        exp_mask = prev >= self.min_history
        mu_e = m[exp_mask]
        lo_e, hi_e = _k.renumber_ranges(lo_a[exp_mask], hi_a[exp_mask])
        out["n_experienced"] = int(mu_e.size)
        self._table2("pair_inv", "rank_dev", mu_e, lo_e, hi_e, out)

        if self.extended:
            ret_mask = prev >= 1
            mu_r = m[ret_mask]
            lo_r, hi_r = _k.renumber_ranges(lo_a[ret_mask], hi_a[ret_mask])
            out["n_returning"] = int(mu_r.size)
            self._table2("pair_inv_all", "rank_dev_all", mu_r, lo_r, hi_r, out)
            # top-k: a prefix of the renumbered returning players, closed under ties
            n_top = int(np.searchsorted(lo_r, self.top_k, side="left"))
            out["n_top"] = n_top
            self._table2("pair_inv_top", "rank_dev_top", mu_r[:n_top], lo_r[:n_top],
                         hi_r[:n_top], out)

            if m.size > 0:
                e = _k.rank_log_errors_kernel(m, lo_a, _LN10 / self.scale, _k.METHOD_AUTO)
                a = float(np.abs(e).sum())
                q = float(np.dot(e, e))
                self._abs += a
                self._sq += q
                self._count += int(m.size)
                out["l1"] = a / m.size
                out["l2"] = math.sqrt(q / m.size)

            n_r = mu_r.size
            neg_lo = -lo_r
            for key, v in (("kendall_tau", float(_k.kendall_tau_b(mu_r, neg_lo))),
                           ("spearman_rho", float(_k.spearman(mu_r, neg_lo)))):
                out[key] = v
                if not math.isnan(v):
                    self._cw[key] += n_r
                    self._cwv[key] += n_r * v
                    self._cv[key] += v
                    self._cn[key] += 1
        else:
            out["n_returning"] = int(np.count_nonzero(prev >= 1))
            out["n_top"] = 0

        self._row_list().append(out)
        self._added += 1
        return {k: v for k, v in out.items() if k != "index"}

    def _row_list(self) -> list[dict[str, Any]]:
        """The list of row dicts at the end of the records (a new one after a chunk)."""
        if not self._parts or not isinstance(self._parts[-1], list):
            self._parts.append([])
        last = self._parts[-1]
        assert isinstance(last, list)
        return last

    def add_rounds(self, mu: ArrayLike, lo: ArrayLike, hi: ArrayLike, n_prev: ArrayLike,
                   offsets: ArrayLike, index: ArrayLike) -> None:
        """Score many contests at once, as :meth:`add_round` for each in turn.

        Round ``r`` is rows ``offsets[r]:offsets[r + 1]`` of the flat arrays (each
        round in standings order, as :meth:`add_round` takes it) and is labelled
        ``index[r]``.  Rounds of at most
        :data:`~podium.evaluation._metrics_kernels.SMALL_ROUND` players are scored in
        one compiled loop (:func:`~podium.evaluation._metrics_kernels.small_rounds`),
        larger ones by :meth:`add_round`; every value and aggregate is the same, bit for
        bit, as adding the rounds one by one (the sums over rounds are taken in the
        same order).
        """
        m = np.ascontiguousarray(mu, dtype=np.float64)
        lo_a = np.ascontiguousarray(lo, dtype=np.int64)
        hi_a = np.ascontiguousarray(hi, dtype=np.int64)
        prev = np.ascontiguousarray(n_prev, dtype=np.int64)
        off = np.ascontiguousarray(offsets, dtype=np.int64)
        idx = np.ascontiguousarray(index, dtype=np.int64)
        if not (m.ndim == 1 and lo_a.shape == m.shape == hi_a.shape == prev.shape):
            raise ValueError("mu, lo, hi and n_prev must be 1-D of equal length")
        if (off.ndim != 1 or off.size != idx.size + 1 or off[0] != 0 or off[-1] != m.size
                or np.any(np.diff(off) < 0)):
            raise ValueError(f"offsets must rise from 0 to {m.size} with one round per index")
        if not np.isfinite(m).all():
            raise ValueError("ratings must be finite")
        if np.any(prev < 0):
            raise ValueError("n_prev must be >= 0")
        if np.any(hi_a < lo_a):
            raise ValueError("every hi must be >= its lo")
        same_round = np.ones(m.size, dtype=bool)
        same_round[off[1:-1]] = False  # a round's first row may go below the last's
        if m.size > 1 and np.any((lo_a[1:] < lo_a[:-1]) & same_round[1:]):
            raise ValueError("lo must be non-decreasing (arrays in standings order, best first)")
        size = np.diff(off)
        big = np.flatnonzero(size > _k.SMALL_ROUND).tolist()
        start = 0
        for r in [*big, idx.size]:  # runs of small rounds, each big round alone
            if r > start:
                self._add_small(m, lo_a, hi_a, prev, off[start:r + 1], idx[start:r])
            if r < idx.size:
                a, b = int(off[r]), int(off[r + 1])
                self.add_round(m[a:b], lo_a[a:b], hi_a[a:b], prev[a:b], index=int(idx[r]))
            start = r + 1

    def _add_small(self, m: FloatArray, lo: IntArray, hi: IntArray, prev: IntArray,
                   off: IntArray, idx: IntArray) -> None:
        """:meth:`add_rounds` for a run of small rounds (``off`` from its first row)."""
        a0, b0 = int(off[0]), int(off[-1])
        sub_off = off - a0
        counts, counted, sums, corr, e = _k.small_rounds(
            m[a0:b0].copy(), lo[a0:b0].copy(), hi[a0:b0].copy(), prev[a0:b0].copy(),
            sub_off, self.min_history, self.top_k, _LN10 / self.scale, self.extended,
            self.equal_mu_correct)
        n = np.diff(sub_off)
        cols: dict[str, np.ndarray] = {"index": idx, "n": n, "n_returning": counts[1],
                                       "n_experienced": counts[0],
                                       "n_top": counts[2] if self.extended else 0 * n}
        nan = np.full(idx.size, math.nan)
        for key in ROUND_KEYS:
            cols[key] = nan
        subsets = (("pair_inv", "rank_dev"), ("pair_inv_all", "rank_dev_all"),
                   ("pair_inv_top", "rank_dev_top"))
        for j, (kp, kr) in enumerate(subsets[:3 if self.extended else 1]):
            ok = counted[j]
            w = counts[j][ok]
            for key, s in ((kp, sums[2 * j]), (kr, sums[2 * j + 1])):
                cols[key] = np.where(ok, s / np.where(ok, counts[j], 1), math.nan)
                self._wt[key] = _running_sum(self._wt[key], w.astype(np.float64))
                self._sum[key] = _running_sum(self._sum[key], s[ok])
                self._rounds[key] += int(ok.sum())
        if self.extended:
            a_sum, q_sum = _round_sums(e, sub_off)
            has = n > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                cols["l1"] = np.where(has, a_sum / n, math.nan)
                cols["l2"] = np.where(has, np.sqrt(q_sum / n), math.nan)
            self._abs = _running_sum(self._abs, a_sum[has])
            self._sq = _running_sum(self._sq, q_sum[has])
            self._count += int(n.sum())
            n_r = counts[1]
            for j, key in enumerate(_CORR):
                v = corr[j]
                cols[key] = v
                ok = ~np.isnan(v)
                self._cw[key] = _running_sum(self._cw[key], n_r[ok].astype(np.float64))
                self._cwv[key] = _running_sum(self._cwv[key], n_r[ok] * v[ok])
                self._cv[key] = _running_sum(self._cv[key], v[ok])
                self._cn[key] += int(ok.sum())
        self._parts.append(cols)
        self._added += int(idx.size)

    def summary(self) -> dict[str, float]:
        """Aggregates over every round added (keys :data:`SUMMARY_KEYS`; NaN when
        nothing counted)."""
        res: dict[str, float] = {}
        for key in _TABLE2:
            w = self._wt[key]
            res[key] = self._sum[key] / w if w > 0 else math.nan
        res["l1"] = self._abs / self._count if self._count else math.nan
        res["l2"] = math.sqrt(self._sq / self._count) if self._count else math.nan
        for key in _CORR:
            w = self._cw[key]
            res[key] = self._cwv[key] / w if w > 0 else math.nan
            res[key + "_mean"] = self._cv[key] / self._cn[key] if self._cn[key] else math.nan
        res["rounds"] = self._rounds["pair_inv"]
        res["player_rounds"] = int(self._wt["pair_inv"])
        return {k: res[k] for k in SUMMARY_KEYS}

    def merge(self, other: MetricAccumulator) -> MetricAccumulator:
        """Add ``other``'s rounds to this accumulator (settings must match); returns self."""
        if not isinstance(other, MetricAccumulator):
            raise TypeError(f"can only merge a MetricAccumulator, got {type(other).__name__}")
        mine = (self.min_history, self.top_k, self.scale, self.extended, self.equal_mu_correct)
        theirs = (other.min_history, other.top_k, other.scale, other.extended,
                  other.equal_mu_correct)
        if mine != theirs:
            raise ValueError(f"cannot merge accumulators with different settings: "
                             f"{mine} vs {theirs}")
        for key in _TABLE2:
            self._wt[key] += other._wt[key]
            self._sum[key] += other._sum[key]
            self._rounds[key] += other._rounds[key]
        self._abs += other._abs
        self._sq += other._sq
        self._count += other._count
        for key in _CORR:
            self._cw[key] += other._cw[key]
            self._cwv[key] += other._cwv[key]
            self._cv[key] += other._cv[key]
            self._cn[key] += other._cn[key]
        for part in other._parts:
            if isinstance(part, list):
                self._row_list().extend(dict(r) for r in part)
            else:
                self._parts.append(dict(part))
        self._added += other._added
        return self

    def per_round(self) -> pd.DataFrame:
        """One row per round added: ``index``, the player counts and the round's values
        (pandas is imported here only: scoring needs NumPy and Numba alone)."""
        import pandas as pd

        cols = ["index", *COUNT_KEYS, *ROUND_KEYS]
        frames = [pd.DataFrame.from_records(p, columns=cols) if isinstance(p, list)
                  else pd.DataFrame(p, columns=cols) for p in self._parts]
        if not frames:
            return pd.DataFrame.from_records([], columns=cols)
        return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)

    def __len__(self) -> int:
        return self._added
