"""Outcome probabilities of a proposed match: who finishes first, at which place, and draws.

A match has ``T`` *sides* (players or teams).  Side ``t`` performs ``P_t``, the sum of
its members' weighted performances, each member's independent with mean ``mu_i`` and
variance ``v_i`` from the system's performance model (:mod:`podium.predict`):

* ``kind="gaussian"``: every member normal, so ``P_t ~ N(M_t, V_t)`` with
  ``M_t = sum w_i mu_i``, ``V_t = sum w_i^2 v_i`` (exact);
* ``kind="logistic"``: every member logistic with variance ``v_i`` (scale
  ``s_i = sqrt(3 v_i) / pi``).  A one-member side is logistic; a team's sum of
  logistics is *not* logistic, and its density and distribution function are
  computed exactly from its characteristic function ``prod_i pi w_i s_i u /
  sinh(pi w_i s_i u)`` (:mod:`podium._outcome_kernels`).

The sides finish in the order of their performances (ties have probability 0), so

.. math::

    P(t \\text{ at place } r) = \\int f_t(x)\\, [z^r] \\prod_{s \\neq t}
        \\bigl(F_s(x) + S_s(x) z\\bigr)\\, dx

(``F_s``, ``S_s``: the probability that side ``s`` performs below / above ``x``;
place ``r`` 0-based: ``r`` sides above), computed by the trapezoid rule on a uniform
grid (step a third of the narrowest side's standard deviation; geometric
convergence, below 1e-12 here) with the polynomial built once per grid point and
each side's factor divided out (:func:`place_probabilities`, ``O(T^2)`` per point).
``P(first)`` alone costs ``O(T)`` per point (:func:`first_probabilities`).

**Draws** need a draw model: a *draw margin* ``m``, two sides drawing when their
performances lie within ``m`` of each other (TrueSkill's ``|d| <= 2 eps``,
[Herbrich2006]).  :func:`draw_probability` gives ``P(|P_a - P_b| <= m)`` for two sides
and, for more, the mean of it over the pairs of sides, as openskill's
``predict_draw`` defines it; :func:`three_way` gives (A wins by more than ``m``,
draw, B wins by more than ``m``) of a two-side match.

**openskill's own formulas** (:func:`openskill_win`, :func:`openskill_draw`), which
are not the model's exact probabilities for more than two sides (its
``predict_win`` averages the pairwise ones), are carried over from openskill 6.2.0
(``PlackettLuce.predict_win`` / ``predict_draw``; the same in its other models).

Examples
--------
>>> sides = side_model([0.0, 0.0], [1.0, 1.0])
>>> first_probabilities(sides).round(12).tolist()
[0.5, 0.5]
>>> float(round(draw_probability(sides, 0.0), 12))
0.0
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from podium.core.numerics import TANH_MULTIPLIER
from podium.systems.base import PerformanceKind

__all__ = [
    "COMPILE_SECONDS",
    "MAX_GRID",
    "announce_compile",
    "SideModel",
    "draw_probability",
    "expected_places",
    "first_probabilities",
    "margin_probabilities",
    "match_quality",
    "openskill_draw",
    "openskill_three_way",
    "openskill_win",
    "pair_places",
    "pair_win_probability",
    "place_probabilities",
    "side_model",
    "team_performance",
    "three_way",
    "upper_pairs",
    "win_probabilities",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_LOGISTIC_SCALE = TANH_MULTIPLIER

#: Rough compile time of :mod:`podium._outcome_kernels` (seconds, one idle core of the
#: project's machine; cached on disk afterwards, loaded in about a second).
COMPILE_SECONDS = 12.0
#: Most grid points of one computation (the spread of the sides' means and widths
#: over the narrowest side's width, times about 60); beyond it a ValueError.
MAX_GRID = 2_000_000
#: Grid steps per standard deviation of the narrowest side, times ``sqrt(max(T, 4))``,
#: below 50 sides (normal sides; sums of logistics; a lone logistic among the sides;
#: from 50 sides on 1): see :mod:`podium._outcome_kernels`.
_STEPS = {"gaussian": 1.0, "sum": 1.25, "logistic": 1.5}
#: A normal side's grid reaches this many standard deviations (tail mass 6e-16).
_GAUSS_REACH = 8.0
#: A logistic side's grid reaches until its tail mass is below ``e^-_TAIL`` (a lone
#: logistic of scale ``s``: ``_TAIL s``; a sum: by the Chernoff bound).
_TAIL = 32.0
#: ``theta max(a_i)`` of the Chernoff bounds tried for the reach of a logistic sum.
_CHERNOFF = np.linspace(0.05, 0.95, 19)
#: The characteristic function is cut where it, and the normal reference, fall below
#: e^-_CF_CUT.
_CF_CUT = 32.0


# ------------------------------------------------------------------ pairwise
@functools.lru_cache(maxsize=256)
def upper_pairs(n: int) -> tuple[IntArray, IntArray]:
    """``np.triu_indices(n, 1)``: the pairs ``a < b`` of ``n`` sides, row by row
    (cached, read-only)."""
    a, b = np.triu_indices(n, 1)
    a.flags.writeable = False
    b.flags.writeable = False
    return a, b


def _check_vectors(mu: npt.ArrayLike, variance: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    m = np.asarray(mu, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    if m.ndim != 1:
        raise ValueError(f"mu must be one-dimensional, got shape {m.shape}")
    v = v.astype(np.float64) if v.shape == m.shape else np.broadcast_to(v, m.shape).astype(
        np.float64)
    if not np.all(np.isfinite(m)):
        bad_mu = int(np.flatnonzero(~np.isfinite(m))[0])
        raise ValueError(f"mu must be finite; bad entry at index {bad_mu}")
    bad = ~(np.isfinite(v) & (v >= 0))
    if bad.any():
        raise ValueError(
            f"variance must be finite and >= 0; bad entry at index {int(np.flatnonzero(bad)[0])}"
        )
    return m, v


def _ndtr(x: npt.ArrayLike) -> Any:
    """:func:`scipy.special.ndtr`, the normal distribution function; SciPy's special
    functions are imported on first use (about 0.1 s that a logistic model, e.g.
    Elo-MMR's, never needs)."""
    from scipy.special import ndtr  # type: ignore[import-untyped]

    return ndtr(x)


def _ndtri(p: float) -> float:
    """:func:`scipy.special.ndtri`, the normal quantile (imported on first use)."""
    from scipy.special import ndtri  # type: ignore[import-untyped]

    return float(ndtri(p))


def _cdf(x: FloatArray, kind: PerformanceKind) -> FloatArray:
    if kind == "gaussian":
        return np.asarray(_ndtr(x), dtype=np.float64)
    if kind == "logistic":
        # 1 / (1 + exp(-s x)) written with tanh: no overflow, exact symmetry
        return 0.5 + 0.5 * np.tanh(0.5 * _LOGISTIC_SCALE * x)
    raise ValueError(f"kind must be 'logistic' or 'gaussian', got {kind!r}")


def win_probabilities(
    mu: npt.ArrayLike, variance: npt.ArrayLike, kind: PerformanceKind = "gaussian"
) -> FloatArray:
    """Pairwise win probabilities ``P[i, j] = F((mu_i - mu_j) / sqrt(v_i + v_j))``.

    Parameters
    ----------
    mu:
        Ratings, shape ``(n,)``.
    variance:
        Performance variances ``v_i`` (shape ``(n,)`` or a scalar), >= 0.
    kind:
        ``"gaussian"`` (standard normal ``F``) or ``"logistic"`` (unit-variance logistic).

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` matrix with ``P + P.T == 1`` and ``1/2`` on the diagonal.  Two players
        with zero variance each get 1, 0 or 1/2 (the sign of the rating difference).
    """
    m, v = _check_vectors(mu, variance)
    diff = m[:, None] - m[None, :]
    spread = np.sqrt(v[:, None] + v[None, :])
    z = np.zeros_like(diff)
    pos = spread > 0
    z[pos] = diff[pos] / spread[pos]
    certain = ~pos & (diff != 0)
    z[certain] = np.sign(diff[certain]) * np.inf
    p = _cdf(z, kind)
    # exact antisymmetry whatever the rounding: keep the upper triangle, mirror it
    iu = upper_pairs(m.size)
    p[(iu[1], iu[0])] = 1.0 - p[iu]
    np.fill_diagonal(p, 0.5)
    return p


def expected_places(win_probability: npt.ArrayLike) -> FloatArray:
    """1-based expected places ``1 + sum_{j != i} P[j, i]`` from a win-probability matrix.

    Parameters
    ----------
    win_probability:
        ``(n, n)`` matrix as returned by :func:`win_probabilities`.

    Returns
    -------
    numpy.ndarray
        Shape ``(n,)``; sums to ``n (n + 1) / 2`` when ``P + P.T == 1``.
    """
    p = np.asarray(win_probability, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"win_probability must be a square matrix, got shape {p.shape}")
    beaten_by = p.sum(axis=0) - np.diag(p)
    return 1.0 + beaten_by


def team_performance(
    mu: npt.ArrayLike, variance: npt.ArrayLike, offsets: npt.ArrayLike,
    member_weight: npt.ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Team performance means ``sum w_i mu_i`` and variances ``sum w_i^2 v_i``.

    Parameters
    ----------
    mu, variance:
        Per member: rating and performance variance ``v_i`` (>= 0), team by team.
    offsets:
        ``T + 1`` non-decreasing offsets from 0 to the number of members: team ``t`` is
        members ``offsets[t]:offsets[t + 1]`` (each team has at least one member).
    member_weight:
        Per member weight in (0, 1] (``None``: all 1).

    Returns
    -------
    tuple of numpy.ndarray
        ``(team_mu, team_variance)``, shape ``(T,)`` each.  The members of a team are
        summed in the order given.
    """
    m, v = _check_vectors(mu, variance)
    off = np.asarray(offsets, dtype=np.int64)
    n = m.size
    if off.ndim != 1 or off.size < 2 or off[0] != 0 or off[-1] != n:
        raise ValueError(f"offsets must run from 0 to {n} (the number of members), "
                         f"got {off.tolist()}")
    if np.any(np.diff(off) <= 0):
        t = int(np.flatnonzero(np.diff(off) <= 0)[0])
        raise ValueError(f"every team needs at least one member; team #{t} has none")
    w = np.ones(n) if member_weight is None else np.asarray(member_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{n} members but {w.size} weights")
    bad = ~((w > 0.0) & (w <= 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"member weights must be in (0, 1]; bad entry at index {i}")
    starts = off[:-1]
    return np.add.reduceat(w * m, starts), np.add.reduceat(w * w * v, starts)


def match_quality(win_probability: npt.ArrayLike) -> float:
    """How balanced a lobby is: ``1 - mean over pairs of |2 P[a, b] - 1|``.

    Parameters
    ----------
    win_probability:
        ``(T, T)`` matrix with ``T >= 2`` (teams or players) as returned by
        :func:`win_probabilities` or in :class:`TeamPrediction`.

    Returns
    -------
    float
        In [0, 1]: 1 when every pair is an even match, tending to 0 as every pair
        becomes a foregone conclusion (see the module docstring).
    """
    p = np.asarray(win_probability, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"win_probability must be a square matrix, got shape {p.shape}")
    t = p.shape[0]
    if t < 2:
        raise ValueError("match quality needs at least two teams (or players)")
    iu = upper_pairs(t)
    return float(1.0 - np.mean(np.abs(2.0 * p[iu] - 1.0)))



# ------------------------------------------------------------------ sides
@dataclass(frozen=True)
class SideModel:
    """The performance distribution of each side of a proposed match.

    Attributes
    ----------
    mean, variance:
        Per side: ``M_t = sum w_i mu_i`` and ``V_t = sum w_i^2 v_i`` (``V_t > 0``).
    kind:
        ``"gaussian"`` or ``"logistic"``: the members' performance shape.
    member_scale:
        Logistic models: each member's weighted logistic scale ``w_i sqrt(3 v_i) /
        pi``, side by side (empty for a normal model).
    offsets:
        ``T + 1`` offsets: side ``t``'s members are ``member_scale[offsets[t]:
        offsets[t + 1]]``.
    """

    mean: FloatArray
    variance: FloatArray
    kind: PerformanceKind
    member_scale: FloatArray
    offsets: IntArray

    @property
    def sides(self) -> int:
        """The number of sides ``T``."""
        return int(self.mean.size)

    @cached_property
    def _prepared(self) -> tuple[Any, ...]:
        """Per side: kernel kind, scale and reach (where its tail mass falls below
        ``e^-32``: a normal side at ``_GAUSS_REACH`` standard deviations, a lone
        logistic of scale ``s`` at ``_TAIL s``, a logistic sum by a Chernoff bound),
        the logistic sums' characteristic-function tables
        (:func:`podium._outcome_kernels.sum_tables`) and the grid ``x0, h, G``."""
        import podium._outcome_kernels as K  # Numba: loaded when first used

        n_sides = self.sides
        sd = np.sqrt(self.variance)
        kind = np.full(n_sides, K.KIND_GAUSSIAN, dtype=np.int64)
        scale = sd.copy()
        reach = _GAUSS_REACH * sd
        cf_off = np.zeros(n_sides + 1, dtype=np.int64)
        cf_du = np.zeros(n_sides)
        cf_phi = cf_psi = np.zeros(0)
        if self.kind == "logistic":
            a = self.member_scale
            starts = self.offsets[:-1]
            members = np.add.reduceat((a > 0).astype(np.int64), starts)
            a_max = np.maximum.reduceat(a, starts)
            one = members == 1
            kind[one] = K.KIND_LOGISTIC
            scale[one] = a_max[one]
            reach = _TAIL * a_max
            sums = np.flatnonzero(~one)
            if sums.size:
                kind[sums] = K.KIND_LOGISTIC_SUM
                side_of = np.repeat(np.arange(n_sides), np.diff(self.offsets))
                keep = (a > 0) & ~one[side_of]
                rows = (np.cumsum(~one) - 1)[side_of[keep]]
                size = members[sums]
                pa = np.zeros((sums.size, int(size.max())))
                pa[rows, np.arange(rows.size) - np.repeat(np.cumsum(size) - size, size)] = (
                    np.pi * a[keep])
                reach[sums], cf_du[sums], count, cf_phi, cf_psi = K.sum_tables(
                    pa, size, sd[sums], _CHERNOFF, _TAIL, _CF_CUT)
                nodes = np.zeros(n_sides, dtype=np.int64)
                nodes[sums] = count
                np.cumsum(nodes, out=cf_off[1:])
        x0 = float(np.min(self.mean - reach))
        # lone logistics have the poles nearest the real axis; sums of two or more
        # are as smooth as normal sides
        if n_sides >= 50 or not np.any(kind != K.KIND_GAUSSIAN):
            c = 1.0
        else:
            c = _STEPS["logistic" if np.any(kind == K.KIND_LOGISTIC) else "sum"]
        h = float(sd.min()) / (c * math.sqrt(max(n_sides, 4)))
        n = int(math.floor((float(np.max(self.mean + reach)) - x0) / h)) + 2
        return kind, scale, reach, cf_off, cf_du, cf_phi, cf_psi, x0, h, n

    def grid(self) -> tuple[float, float, int]:
        """``(x0, h, G)``: the grid ``x0 + g h``, ``g < G``, covering every side's
        reach (where its tail mass falls below ``e^-32``)."""
        x0, h, n = self._prepared[7:]
        if n > MAX_GRID:
            raise ValueError(
                f"the sides' performance distributions are too far apart for their widths "
                f"({n:,} grid points, more than {MAX_GRID:,}): the narrowest side has "
                f"standard deviation {float(np.sqrt(self.variance.min())):.4g} and the means span "
                f"{float(np.ptp(self.mean)):.4g}")
        return float(x0), float(h), int(n)

    def kernel_args(self) -> tuple[FloatArray, IntArray, FloatArray, FloatArray, IntArray,
                                   FloatArray, FloatArray, FloatArray]:
        """The side arrays of :mod:`podium._outcome_kernels`: ``mean, kind, scale,
        reach, cf_off, cf_du, cf_phi, cf_psi`` (see :meth:`_prepared`)."""
        return (self.mean, *self._prepared[:7])


def announce_compile(stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for outcome probabilities, once: ~N s`` when none of
    the kernels is in Numba's cache yet (:mod:`podium._jit`); whether it was printed."""
    import podium._outcome_kernels as K
    from podium._jit import announce_module_compile

    return announce_module_compile("outcome probabilities", K, COMPILE_SECONDS,
                                   sys.stderr if stream is None else stream)


def side_model(
    mu: npt.ArrayLike,
    variance: npt.ArrayLike,
    offsets: npt.ArrayLike | None = None,
    member_weight: npt.ArrayLike | None = None,
    kind: PerformanceKind = "gaussian",
) -> SideModel:
    """The sides' performance distributions from their members'.

    Parameters
    ----------
    mu, variance:
        Per member: mean ``mu_i`` (finite) and performance variance ``v_i >= 0``.
    offsets:
        ``T + 1`` offsets from 0 to the number of members, each side non-empty
        (``None``: every member a side of its own).
    member_weight:
        Per member weight ``w_i`` in (0, 1] (``None``: all 1).
    kind:
        ``"gaussian"`` or ``"logistic"`` (the members' shape).

    Returns
    -------
    SideModel

    Raises
    ------
    ValueError
        On bad arrays, or a side whose performance variance is 0 (a point mass: its
        place is not a smooth function of the others').
    """
    m = np.asarray(mu, dtype=np.float64).reshape(-1)
    v = np.asarray(variance, dtype=np.float64).reshape(-1)
    if v.shape != m.shape:
        v = np.broadcast_to(v, m.shape).astype(np.float64)
    n = m.size
    if n == 0 or not np.isfinite(m).all():
        raise ValueError("mu must be a non-empty array of finite numbers")
    if not (np.isfinite(v).all() and (v >= 0).all()):
        raise ValueError("variance must be finite and >= 0")
    off = (np.arange(n + 1, dtype=np.int64) if offsets is None
           else np.asarray(offsets, dtype=np.int64).reshape(-1))
    if off.size < 2 or off[0] != 0 or off[-1] != n or np.any(np.diff(off) <= 0):
        raise ValueError(f"offsets must rise strictly from 0 to {n}, got {off.tolist()[:8]}")
    w = np.ones(n) if member_weight is None else np.asarray(member_weight, np.float64)
    if w.shape != (n,) or not np.all((w > 0) & (w <= 1)):
        raise ValueError(f"member weights must be {n} numbers in (0, 1]")
    if kind not in ("gaussian", "logistic"):
        raise ValueError(f"kind must be 'logistic' or 'gaussian', got {kind!r}")
    starts = off[:-1]
    mean = np.add.reduceat(w * m, starts)
    var = np.add.reduceat(w * w * v, starts)
    if not (var > 0).all():
        t = int(np.flatnonzero(var <= 0)[0])
        raise ValueError(f"side #{t} has performance variance 0: outcome probabilities "
                         "need every side's performance to be uncertain")
    scale = w * np.sqrt(3.0 * v) / np.pi if kind == "logistic" else np.zeros(0)
    return SideModel(mean, var, kind, scale, off)


def place_probabilities(sides: SideModel) -> FloatArray:
    """``P[t, r]``: the probability that side ``t`` finishes at place ``r`` (0-based).

    Parameters
    ----------
    sides:
        From :func:`side_model`.

    Returns
    -------
    numpy.ndarray
        ``(T, T)``, in [0, 1] (rounding below 0 clipped); each row and each column
        sums to 1 (to ~1e-12); column 0 is :func:`first_probabilities`.  One side:
        ``[[1]]``.
    """
    import podium._outcome_kernels as K  # Numba: loaded when first used

    if sides.sides == 1:
        return np.ones((1, 1))
    x0, h, n = sides.grid()
    out: FloatArray = np.clip(K.place_kernel(x0, h, n, *sides.kernel_args()), 0.0, 1.0)
    return out


def pair_places(mean: FloatArray, variance: FloatArray, kind: PerformanceKind
                ) -> FloatArray:
    """:func:`place_probabilities` of many two-player matches at once, bit for bit.

    Parameters
    ----------
    mean, variance:
        ``(R, 2)``: each match's two players (sides of one member, weight 1), variances
        finite and positive.
    kind:
        The performance shape of every player.

    Returns
    -------
    numpy.ndarray
        ``(R, 2, 2)``: ``P[r, t, place]``; NaN for a match whose grid would exceed
        :data:`MAX_GRID` (where :meth:`SideModel.grid` raises).
    """
    import podium._outcome_kernels as K  # Numba: loaded when first used

    m = np.ascontiguousarray(mean, dtype=np.float64)
    sd = np.sqrt(np.ascontiguousarray(variance, dtype=np.float64))
    code = np.full(m.shape, K.KIND_GAUSSIAN, dtype=np.int64)
    if kind == "logistic":  # SideModel._prepared of lone logistics
        scale = 1.0 * np.sqrt(3.0 * variance) / np.pi
        reach = _TAIL * scale
        code[:] = K.KIND_LOGISTIC
        c = _STEPS["logistic"]
    else:
        scale = sd.copy()
        reach = _GAUSS_REACH * sd
        c = 1.0
    x0 = np.min(m - reach, axis=1)
    h = np.min(sd, axis=1) / (c * math.sqrt(4))
    span = np.floor((np.max(m + reach, axis=1) - x0) / h)
    n_grid = np.where(span + 2 <= MAX_GRID, span + 2, 0).astype(np.int64)
    out: FloatArray = np.clip(K.place_pairs(x0, h, n_grid, m, code, scale, reach), 0.0, 1.0)
    return out


def pair_win_probability(mu_a: FloatArray, mu_b: FloatArray, variance_a: FloatArray,
                         variance_b: FloatArray, kind: PerformanceKind) -> FloatArray:
    """``P[a, b]`` of :func:`win_probabilities` for many pairs at once (positive
    variances): ``F((mu_a - mu_b) / sqrt(v_a + v_b))``."""
    return _cdf((mu_a - mu_b) / np.sqrt(variance_a + variance_b), kind)


def first_probabilities(sides: SideModel) -> FloatArray:
    """Each side's probability of finishing first, ``int f_t prod_{s != t} F_s``.

    ``O(T)`` per grid point (for large fields: :func:`place_probabilities` costs
    ``O(T^2)``); renormalised to sum to 1 (the quadrature's sum is 1 to ~1e-12).
    """
    import podium._outcome_kernels as K  # Numba: loaded when first used

    if sides.sides == 1:
        return np.ones(1)
    x0, h, n = sides.grid()
    p: FloatArray = np.clip(K.first_kernel(x0, h, n, *sides.kernel_args()), 0.0, 1.0)
    return np.minimum(p / p.sum(), 1.0)


def margin_probabilities(sides: SideModel, margin: float = 0.0) -> FloatArray:
    """``W[a, b] = P(P_a - P_b > margin)`` for every ordered pair of sides.

    ``margin = 0`` gives the exact pairwise win probabilities of the model (for
    normal sides ``Phi((M_a - M_b) / sqrt(V_a + V_b))``; for logistic sides the
    distribution of the difference, which is not logistic).  Normal pairs are
    computed in closed form, the others by quadrature: ``sum_g h f_b(x_g)
    S_a(x_g + margin)``.  The diagonal holds ``P(P_a - P_a' > margin)`` for an
    independent copy.
    """
    import podium._outcome_kernels as K  # Numba: loaded when first used

    m = float(margin)
    if not math.isfinite(m) or m < 0:
        raise ValueError(f"the margin must be finite and >= 0, got {margin!r}")
    if sides.kind == "gaussian":
        spread = np.sqrt(sides.variance[:, None] + sides.variance[None, :])
        return np.asarray(_ndtr((sides.mean[:, None] - sides.mean[None, :] - m) / spread),
                          dtype=np.float64)
    x0, h, n = sides.grid()
    xs = x0 + h * np.arange(n)
    args = sides.kernel_args()
    dens = K.side_values(xs, *args)[0]
    surv = K.side_values(xs + m, *args)[1]
    weight = dens * h
    weight /= weight.sum(axis=1, keepdims=True)
    out: FloatArray = surv @ weight.T
    return out


def _pair_draws(sides: SideModel, margin: float) -> FloatArray:
    """``D[a, b] = P(|P_a - P_b| <= margin)`` (symmetric)."""
    w = margin_probabilities(sides, margin)
    return np.clip(1.0 - w - w.T, 0.0, 1.0)


def draw_probability(sides: SideModel, margin: float) -> float:
    """The probability of a draw under a draw margin ``m``.

    Two sides draw when ``|P_a - P_b| <= m``.  For two sides this is the probability
    of a draw; for more, the mean over the ``T (T - 1) / 2`` pairs of sides of their
    pairwise draw probability (openskill's definition in ``predict_draw``).

    Parameters
    ----------
    sides:
        From :func:`side_model` (at least two sides).
    margin:
        The draw margin ``m >= 0`` on the performance scale (TrueSkill: ``2 eps``).
    """
    if sides.sides < 2:
        raise ValueError("a draw needs at least two sides")
    d = _pair_draws(sides, margin)
    iu = upper_pairs(sides.sides)
    return float(d[iu].mean())


def three_way(sides: SideModel, margin: float) -> FloatArray:
    """``[P(A wins), P(draw), P(B wins)]`` of a two-side match under a draw margin ``m``:
    ``P(P_A - P_B > m)``, ``P(|P_A - P_B| <= m)``, ``P(P_B - P_A > m)`` (sum 1)."""
    if sides.sides != 2:
        raise ValueError(f"three_way needs exactly two sides, got {sides.sides}")
    w = margin_probabilities(sides, margin)
    draw = max(0.0, 1.0 - w[0, 1] - w[1, 0])
    return np.array([w[0, 1], draw, w[1, 0]])


# ------------------------------------------------------------------ openskill's formulas
def _openskill_args(team_mu: npt.ArrayLike, team_sigma_sq: npt.ArrayLike,
                    beta: float) -> tuple[FloatArray, FloatArray, float]:
    m = np.asarray(team_mu, dtype=np.float64).reshape(-1)
    s = np.asarray(team_sigma_sq, dtype=np.float64).reshape(-1)
    if m.size < 2 or s.shape != m.shape:
        raise ValueError("openskill's predictions need at least two teams (mu and sigma^2 "
                         "of each)")
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and positive, got {beta!r}")
    return m, s, float(beta)


def openskill_win(team_mu: npt.ArrayLike, team_sigma_sq: npt.ArrayLike,
                  beta: float) -> FloatArray:
    """openskill's ``predict_win``: each team's "probability of winning".

    With ``c_ab = sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)`` (team ``sigma^2``: the sum
    of its members'), two teams get ``Phi((mu_a - mu_b) / c_ab)`` and its complement;
    more get ``p_a = sum_{b != a} Phi((mu_a - mu_b) / c_ab) / (T - 1)``, normalised to
    sum 1 (openskill 6.2.0, after [Ibstedt2014]).

    Parameters
    ----------
    team_mu, team_sigma_sq:
        Per team: the sum of its members' ``mu`` and of their ``sigma^2``.
    beta:
        The model's ``beta``.
    """
    m, s, beta = _openskill_args(team_mu, team_sigma_sq, beta)
    c = np.sqrt(2.0 * beta * beta + s[:, None] + s[None, :])
    pair = _ndtr((m[:, None] - m[None, :]) / c)
    if m.size == 2:
        p = float(pair[0, 1])
        return np.array([p, 1.0 - p])
    np.fill_diagonal(pair, 0.0)
    win = pair.sum(axis=1) / (m.size - 1)
    return np.asarray(win / win.sum(), dtype=np.float64)


def _openskill_margin(beta: float, n_players: int) -> float:
    if isinstance(n_players, bool) or int(n_players) != n_players or n_players < 2:
        raise ValueError(f"n_players must be an integer >= 2, got {n_players!r}")
    p = 1.0 / n_players
    return float(math.sqrt(n_players) * beta * _ndtri((1.0 + p) / 2.0))


def openskill_draw(team_mu: npt.ArrayLike, team_sigma_sq: npt.ArrayLike, beta: float,
                   n_players: int) -> float:
    """openskill's ``predict_draw``: the mean over pairs of teams of ``P(|d| <= m)``.

    ``d ~ N(mu_a - mu_b, c_ab^2)`` as in :func:`openskill_win`, and the draw margin
    ``m = sqrt(N) beta Phi^-1((1 + 1/N) / 2)`` with ``N`` the players of the match
    (openskill's assumed draw probability ``1/N``).
    """
    m, s, beta = _openskill_args(team_mu, team_sigma_sq, beta)
    margin = _openskill_margin(beta, n_players)
    iu = upper_pairs(m.size)
    a, b = iu
    c = np.sqrt(2.0 * beta * beta + s[a] + s[b])
    pair = _ndtr((margin - m[a] + m[b]) / c) - _ndtr((m[b] - m[a] - margin) / c)
    return float(np.mean(pair))


def openskill_three_way(team_mu: npt.ArrayLike, team_sigma_sq: npt.ArrayLike, beta: float,
                        n_players: int) -> FloatArray:
    """``[P(A wins), P(draw), P(B wins)]`` of two teams under openskill's model of
    :func:`openskill_draw`: ``Phi((d - m) / c)``, the draw, ``Phi((-d - m) / c)`` with
    ``d = mu_A - mu_B`` (they sum to 1; the draw equals ``openskill_draw``)."""
    m, s, beta = _openskill_args(team_mu, team_sigma_sq, beta)
    if m.size != 2:
        raise ValueError(f"three_way needs exactly two teams, got {m.size}")
    margin = _openskill_margin(beta, n_players)
    c = math.sqrt(2.0 * beta * beta + s[0] + s[1])
    d = float(m[0] - m[1])
    win = float(_ndtr((d - margin) / c))
    loss = float(_ndtr((-d - margin) / c))
    return np.array([win, max(0.0, 1.0 - win - loss), loss])
