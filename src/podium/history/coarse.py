"""A two-level (coarse-grid) correction of ``mmr-smooth``'s sweeps: one shift per
contest, solved from a Gaussian model of phase 2 (docs/history.md, "The coarse
correction").

The sweeps solve ``x = G(x)`` (``G``: phase 2 then phase 1 of the performances ``x``,
rows in contest order; :meth:`~podium.history.smooth_state.SmoothState.solve`).  Its
slow errors are shifts of whole contests: a shift ``s_k`` of every performance of
contest ``k`` moves the cavities of its participants' other rounds, and phase 1 (which
is invariant under a common shift of a round's cavities, Theorem 3.2) passes a round's
mean cavity shift on to its performances.  So the per-contest means of ``G`` respond
to ``s`` through a ``C x C`` matrix ``M`` whose rows sum to nearly 1 (only the
newcomers' prior pins the level): a plain sweep, and Anderson's few differences,
remove those shifts slowly.

The model: each player is a Gaussian random walk, its diffusion ``gamma_k`` before its
``k``-th round, measured by its performances with variance ``beta_k^2`` (the weight
``1 / beta^2`` of Eq. 8), from the newcomer prior ``N(mu_noob, sig_noob^2)``.  With the
forward (Kalman) gains ``K_j = P_j / beta_j^2`` and the backward ones ``L_j`` (the
share of round ``j``'s measurement in the backward message at ``j``), the cavity
rating at round ``k`` is

    mu_k^c = lambda_k m_k^- + (1 - lambda_k) m~_k,
    d mu_k^c / d p_j = lambda_k K_j prod_{j<i<k} (1 - K_i)        (j < k),
                     = (1 - lambda_k) L_j prod_{k<i<j} (1 - L_i)  (j > k),

``lambda_k`` the forward prior's share of the cavity's precision.  ``M[c, d]`` is the
mean over the rows of contest ``c`` (weighted by their shares ``u``, about ``1 /
delta``: :meth:`CoarseModel.build`) of the derivatives of their cavities with respect
to the player's performance in contest ``d`` (pairs whose derivative is below
``eps`` left out: the work is the rows times the window of rounds that matter).

The correction: with the residual ``f = G(x) - x``, ``R`` the per-contest mean of rows
and ``P`` the spread of a per-contest value to its rows, the sweeps iterate on

    G'(x) = G(x) + P M (I - M)^{-1} R f = G(x) + P ((I - M)^{-1} - I) R f:

the coarse error ``s`` of ``x`` is ``(I - M)^{-1} R f`` in the model, ``G`` carries it
to ``M s``, and ``G'`` removes that.  A fixed point of ``G'`` is one of ``G``
(``R f + M (I - M)^{-1} R f = (I - M)^{-1} R f = 0`` gives ``R f = 0``, then ``f = 0``).
Histories of more than :data:`MAX_GROUPS` contests group consecutive contests, one
shift per group.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
import numpy.typing as npt
import scipy.linalg

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.history._smooth_kernels import Entries, Rounds

__all__ = ["COARSE_EPS", "MAX_GROUPS", "CoarseModel", "shift_model"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Derivatives of a cavity below this are left out of ``M`` (they decay geometrically
#: with the rounds between, ``(1 - K)`` about 0.83 per round at ``mmr``'s defaults).
COARSE_EPS = 1e-4

#: The most coarse unknowns: histories of more contests group consecutive contests
#: (``M`` is dense, ``8 MAX_GROUPS^2`` bytes, and factored once).
MAX_GROUPS = 3000


@nb.njit(cache=True)
def shift_model(off: np.ndarray, rows: np.ndarray, n_rated: np.ndarray, weight: np.ndarray,
                gamma: np.ndarray, group_of_row: np.ndarray, share: np.ndarray,
                n_groups: int, sig_noob: float, eps: float) -> np.ndarray:
    """``M`` of the Gaussian model (module docstring): ``M[a, b]`` the mean over the
    rows of group ``a`` (weighted by ``share``) of the derivatives of their cavity
    ratings with respect to the same player's performances in group ``b``.

    Parameters
    ----------
    off, rows, n_rated:
        Per player its entries ``off[i] .. off[i] + n_rated[i] - 1`` (player order) and
        their rows.
    weight, gamma:
        Per entry, the performance's weight (the inverse of its variance) and the
        diffusion before the round.
    group_of_row, share:
        Per row its group and its share of the group's mean (summing to 1 per group).
    n_groups:
        How many groups.
    sig_noob:
        The newcomer prior's uncertainty.
    eps:
        Derivatives below this are left out.
    """
    m = np.zeros((n_groups, n_groups))
    n_max = 0
    for i in range(off.size - 1):
        n_max = max(n_max, n_rated[i])
    gain_f = np.empty(n_max)  # K_j
    gain_b = np.empty(n_max)  # L_j
    lam = np.empty(n_max)  # forward prior's share of the cavity precision
    prior_w = np.empty(n_max)
    for i in range(off.size - 1):
        n = n_rated[i]
        if n < 2:
            continue
        e0 = off[i]
        var = sig_noob * sig_noob
        for k in range(n):  # forward: prior variance, gain
            var += gamma[e0 + k] ** 2
            prior_w[k] = 1.0 / var
            var = 1.0 / (prior_w[k] + weight[e0 + k])
            gain_f[k] = var * weight[e0 + k]
        bw = 0.0  # backward message's precision at round k (none after the last)
        for k in range(n - 1, -1, -1):
            lam[k] = prior_w[k] / (prior_w[k] + bw)
            tot = bw + weight[e0 + k]
            gain_b[k] = weight[e0 + k] / tot
            if k > 0:
                bw = 1.0 / (1.0 / tot + gamma[e0 + k] ** 2)
        for j in range(n):
            gj = group_of_row[rows[e0 + j]]
            coef = gain_f[j]  # later cavities' dependence on p_j
            for k in range(j + 1, n):
                if coef < eps:
                    break
                d = lam[k] * coef
                gk = group_of_row[rows[e0 + k]]
                m[gk, gj] += d * share[rows[e0 + k]]
                coef *= 1.0 - gain_f[k]
            coef = gain_b[j]  # earlier cavities' dependence on p_j
            for k in range(j - 1, -1, -1):
                if coef < eps:
                    break
                d = (1.0 - lam[k]) * coef
                gk = group_of_row[rows[e0 + k]]
                m[gk, gj] += d * share[rows[e0 + k]]
                coef *= 1.0 - gain_b[k]
    return m


class CoarseModel:
    """The coarse correction of the sweeps (module docstring): ``M`` of the Gaussian
    model, ``(I - M)`` factored once, and :meth:`correct`.

    Attributes
    ----------
    group_of_row:
        Per row (contest order), its coarse unknown (its contest, or its group of
        consecutive contests beyond :data:`MAX_GROUPS`).
    group_size:
        Per group, how many rows it has.
    m:
        The model's ``M``.
    """

    def __init__(self, group_of_row: IntArray, group_size: FloatArray, m: FloatArray) -> None:
        self.group_of_row = group_of_row
        self.group_size = group_size
        self.m = m
        self._lu = scipy.linalg.lu_factor(np.eye(m.shape[0]) - m)

    @classmethod
    def build(cls, en: Entries, rd: Rounds, r_end: int, row_contest: IntArray,
              n_contests: int, sig_noob: float, eps: float = COARSE_EPS,
              max_groups: int = MAX_GROUPS) -> CoarseModel:
        """The model of the first ``r_end`` rows (contest order, ``row_contest``) and
        the players' rated entries.

        A performance weighs ``1 / beta^2`` (Eq. 8's weight of its logistic factor),
        and a row's share ``u`` of its contest's mean is ``1 / delta`` normalised over
        the round (``delta = hypot(sigma^c, beta)``, the current cavities): phase 1
        moves a round's performances by about that weighted mean of the cavities'
        shifts (term ``j`` of Theorem 3.2's ``Q`` counts in proportion to about
        ``1 / delta_j`` summed over the round).
        """
        n_groups = min(n_contests, max_groups)
        per = math.ceil(n_contests / n_groups) if n_contests else 1
        group_of_row = np.ascontiguousarray(row_contest[:r_end] // per, dtype=np.int64)
        n_groups = int(group_of_row.max()) + 1 if r_end else 0
        counts = np.bincount(group_of_row, minlength=n_groups).astype(np.float64)
        inv_delta = 1.0 / np.hypot(rd.cav_sig[:r_end], rd.beta[:r_end])
        share = inv_delta / np.bincount(group_of_row, inv_delta, n_groups)[group_of_row]
        m = shift_model(en.off, en.rows, en.n_rated, 1.0 / en.beta ** 2, en.gamma,
                        group_of_row, share, n_groups, float(sig_noob), float(eps))
        return cls(group_of_row, counts, m)

    def correct(self, x: FloatArray, g: FloatArray) -> FloatArray:
        """``G'(x) = G(x) + P ((I - M)^{-1} - I) R (G(x) - x)`` from ``x`` and
        ``g = G(x)`` (rows in contest order)."""
        mean = np.bincount(self.group_of_row, g - x, self.group_size.size) / self.group_size
        shift = scipy.linalg.lu_solve(self._lu, mean) - mean
        return g + shift[self.group_of_row]
