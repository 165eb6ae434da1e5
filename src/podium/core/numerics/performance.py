"""The performance equation of Theorem 3.2 ([EbtekarLiu2021]), solved for every tie group.

The performance of player ``i`` is the zero of ``Q_i``, a sum over every opponent term
``j`` -- including ``i``'s own -- of a loss term ``l_j`` if ``j`` placed strictly
better, a win term ``v_j`` if strictly worse and a tie term ``d_j`` if tied.  Players
of one tie group share ``Q``, so there is one zero per group.  The terms are logistic
(:data:`LOGISTIC`: tanh terms, Sec. 3.1) or Gaussian (:data:`GAUSSIAN`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np
from numba.core import types
from numba.extending import overload

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    panel_grid,
    panel_span,
    panel_zero,
)
from podium.core.numerics.constants import GAUSSIAN, LOGISTIC
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import (
    INV_SQRT2,
    TAIL_Z,
    fast_tanh,
    normal_cdf,
    normal_hazard,
    normal_pdf,
    tanh_sech2,
)

__all__ = [
    "LOGISTIC",
    "GAUSSIAN",
    "OpponentTerms",
    "TieGroups",
    "logistic_terms",
    "gaussian_terms",
    "node_values",
    "panel_values",
    "n_unsolved",
    "performance_zeros",
    "tie_group_zeros",
    "solve_direct",
]



class OpponentTerms(NamedTuple):
    """The opponent terms of a round, in standings order (best first).

    Attributes
    ----------
    mu:
        Centres.
    pa, pb:
        :data:`LOGISTIC`: ``w_arg`` and ``w_out``; :data:`GAUSSIAN`: ``delta`` and unused.
    """

    mu: np.ndarray
    pa: np.ndarray
    pb: np.ndarray


class TieGroups(NamedTuple):
    """Tie groups as half-open position ranges ``[start[g], end[g])``, best group first."""

    start: np.ndarray
    end: np.ndarray


# Each term function returns (l, l', v, v', d, d') for the loss, win and tie
# contributions of one opponent term at x.


@nb.njit(cache=True, inline="always")
def logistic_terms(x: float, mu: float, w_arg: float, w_out: float, split_ties: bool):
    """Loss, win and tie terms (and derivatives) of one logistic opponent at ``x``."""
    t, d2 = tanh_sech2((x - mu) * w_arg)
    val = -t * w_out
    vp = -d2 * w_arg * w_out
    if split_ties:
        return val - w_out, vp, val + w_out, vp, val, vp
    return val - w_out, vp, val + w_out, vp, 2.0 * val, 2.0 * vp


@nb.njit(cache=True)
def gaussian_terms(x: float, mu: float, sig: float, split_ties: bool):
    """Loss, win and tie terms (and derivatives) of one Gaussian opponent at ``x``.

    Win: ``pdf/cdf = hazard(-z)/sig``; loss: ``pdf/(cdf - 1) = -hazard(z)/sig``, both
    finite however far ``x`` is from ``mu`` (the quotients of tail probabilities
    underflow to 0/0).
    """
    z = (x - mu) / sig
    if abs(z) < TAIL_Z:
        pdf = normal_pdf(z) / sig
        lv = pdf / -normal_cdf(-z)  # cdf - 1 without cancellation
        wv = pdf / normal_cdf(z)
    else:
        lv = -normal_hazard(z) / sig
        wv = normal_hazard(-z) / sig
    zs = z / sig
    lp = -zs * lv - lv * lv  # (pdf'/(cdf - 1)) - lv^2 with pdf' = -z pdf / sig
    wp = -zs * wv - wv * wv
    if split_ties:
        dv = 0.5 * (wv + lv)
        dp = 0.5 * (-zs * (wv + lv) - wv * wv - lv * lv)
    else:
        dv = -z / sig  # pdf'/pdf
        dp = -1.0 / (sig * sig)
    return lv, lp, wv, wp, dv, dp


@nb.njit(cache=True)
def _gaussian_values(x: float, mu: float, sig: float, split_ties: bool):
    """Values (no derivatives) of the Gaussian loss, win and tie terms at x."""
    z = (x - mu) / sig
    if abs(z) < TAIL_Z:  # one erfc for both tails
        pdf = normal_pdf(z) / sig
        if z >= 0.0:
            upper = 0.5 * math.erfc(z * INV_SQRT2)  # P(Z > z), accurate
            lv = -pdf / upper
            wv = pdf / (1.0 - upper)
        else:
            cdf = 0.5 * math.erfc(-z * INV_SQRT2)
            lv = pdf / (cdf - 1.0)
            wv = pdf / cdf
    else:
        lv = -normal_hazard(z) / sig
        wv = normal_hazard(-z) / sig
    if split_ties:
        dv = 0.5 * (wv + lv)
    else:
        dv = -z / sig
    return lv, wv, dv


def model_terms(kind: int, x: float, mu: float, pa: float, pb: float, split_ties: bool):
    """:func:`logistic_terms` or :func:`gaussian_terms` by ``kind``.

    In compiled code ``kind`` must be a literal (``numba.literally``): the choice is
    made while typing, so a kernel specialised for one kind compiles only that
    kind's terms.
    """
    if kind == LOGISTIC:
        return logistic_terms(x, mu, pa, pb, split_ties)
    return gaussian_terms(x, mu, pa, split_ties)


def group_sums(kind: int, x: float, terms: OpponentTerms, first: int, stop: int,
               w_total: float, split_ties: bool) -> tuple[float, float, float]:
    """Sums ``(L, V, D)`` of the loss, win and tie terms of ``terms[first:stop]`` at ``x``
    (values only; ``w_total`` is their total ``w_out``, used by the logistic kind).

    Logistic: all three follow from ``S = sum_j -w_out_j tanh((x - mu_j) w_arg_j)``,
    ``L = S - W``, ``V = S + W``, ``D = 2 S`` (``S`` with split ties) -- one tanh per
    term.  Like :func:`model_terms`, ``kind`` is a literal in compiled code.
    """
    if kind == LOGISTIC:
        return _logistic_sums(x, terms, first, stop, w_total, split_ties)
    return _gaussian_sums(x, terms, first, stop, split_ties)


@overload(model_terms, inline="always")
def _model_terms_ol(kind, x, mu, pa, pb, split_ties):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return lambda kind, x, mu, pa, pb, split_ties: logistic_terms(x, mu, pa, pb, split_ties)
    return lambda kind, x, mu, pa, pb, split_ties: gaussian_terms(x, mu, pa, split_ties)


@overload(group_sums, inline="always")
def _group_sums_ol(kind, x, terms, first, stop, w_total, split_ties):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return (lambda kind, x, terms, first, stop, w_total, split_ties:
                _logistic_sums(x, terms, first, stop, w_total, split_ties))
    return (lambda kind, x, terms, first, stop, w_total, split_ties:
            _gaussian_sums(x, terms, first, stop, split_ties))


# Inlined into node_values: a call per group would pass three arrays (and touch
# their reference counts) once per group, node and panel.
@nb.njit(cache=True, inline="always")
def _logistic_sums(x: float, terms: OpponentTerms, first: int, stop: int, w_total: float,
                   split_ties: bool) -> tuple[float, float, float]:
    sv = 0.0
    for j in range(first, stop):
        sv -= terms.pb[j] * fast_tanh((x - terms.mu[j]) * terms.pa[j])
    tie_mult = 1.0 if split_ties else 2.0
    return sv - w_total, sv + w_total, tie_mult * sv


@nb.njit(cache=True, inline="always")
def _gaussian_sums(x: float, terms: OpponentTerms, first: int, stop: int,
                   split_ties: bool) -> tuple[float, float, float]:
    sl = 0.0
    sw = 0.0
    sd = 0.0
    for j in range(first, stop):
        lv, wv, dv = _gaussian_values(x, terms.mu[j], terms.pa[j], split_ties)
        sl += lv
        sw += wv
        sd += dv
    return sl, sw, sd


@nb.njit(cache=True)
def solve_direct(kind: int, terms: OpponentTerms, groups: TieGroups, g: int | np.int64,
                  split_ties: bool) -> tuple[float, int]:
    """Zero of ``Q_g`` by Newton on the direct ``O(N)`` sum of ``Q_g(x)`` and
    ``Q_g'(x)`` for tie group ``g``, from the group's mean centre."""
    mu, pa, pb = terms
    a = groups.start[g]
    b = groups.end[g]
    s = 0.0
    for j in range(a, b):
        s += mu[j]
    state = newton_begin(LO_BOUND, HI_BOUND, s / (b - a))
    while state.running:
        # summed in this loop rather than by a function of the term arrays: each call
        # would count references to them (atomic operations that cost more than the
        # sum over a round of eight)
        x = state.x
        q = 0.0
        qp = 0.0
        for j in range(mu.size):
            lv, lp, wv, wp, dv, dp = model_terms(kind, x, mu[j], pa[j], pb[j], split_ties)
            if j < a:
                q += lv
                qp += lp
            elif j >= b:
                q += wv
                qp += wp
            else:
                q += dv
                qp += dp
        state = newton_next(state, q, qp)
    return state.x, state.status


@nb.njit(cache=True)
def node_values(kind: int, x: float, terms: OpponentTerms, groups: TieGroups,
                split_ties: bool, wsum: np.ndarray, Qv: np.ndarray, Vs: np.ndarray,
                jj: int) -> None:
    """Fill column ``jj`` of ``Qv`` with ``Q_g(x)`` for every group ``g``.

    ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` where ``L_h, V_h, D_h`` are the
    sums of the loss, win and tie terms of group ``h``.  For the logistic model
    all three follow from ``S_h = sum_j -w_out_j tanh((x - mu_j) w_arg_j)``:
    ``L_h = S_h - W_h``, ``V_h = S_h + W_h``, ``D_h = 2 S_h`` (or ``S_h`` with
    split ties), ``W_h`` the group's total ``w_out`` (``wsum``) -- one tanh per term.
    ``Vs[jj]`` is scratch of one row per node.
    """
    g_start, g_end = groups
    G = g_start.size
    acc = 0.0
    for g in range(G):
        sl, sw, sd = group_sums(kind, x, terms, g_start[g], g_end[g], wsum[g], split_ties)
        Qv[g, jj] = acc + sd  # losses against every better group, ties inside
        acc += sl
        Vs[jj, g] = sw
    acc = 0.0
    for g in range(G - 1, -1, -1):
        Qv[g, jj] += acc  # wins against every worse group
        acc += Vs[jj, g]


@nb.njit(cache=True)
def n_unsolved(solved: np.ndarray) -> int:
    """How many entries of the mask ``solved`` are false (those left to a direct solve)."""
    k = 0
    for s in solved:
        if not s:
            k += 1
    return k


@nb.njit(cache=True, parallel=True)
def panel_values(kind: int, c: float, r: float, tnodes: np.ndarray, terms: OpponentTerms,
                 groups: TieGroups, split_ties: bool, wsum: np.ndarray, Qv: np.ndarray,
                 Vs: np.ndarray) -> None:
    """:func:`node_values` at every node ``c + r tnodes[j]`` of a panel (column ``j``
    of ``Qv``), the nodes in parallel.  ``kind`` is a literal (see :func:`model_terms`)."""
    for jj in nb.prange(tnodes.size):
        node_values(kind, c + r * tnodes[jj], terms, groups, split_ties, wsum, Qv, Vs, jj)


def performance_zeros(kind: int, terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                      min_spread: float, direct_groups: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Performance of every tie group: the zero of ``Q_g`` (Theorem 3.2), exactly.

    Parameters
    ----------
    kind:
        :data:`LOGISTIC` or :data:`GAUSSIAN`.
    terms:
        The opponent terms in standings order (best first).
    groups:
        The tie groups, best first.
    split_ties:
        Count a tie as half a win and half a loss (else as the tie term ``d_j``).
    min_spread:
        The smallest ``delta`` of the round.  The complex singularities of
        every term lie at least ``sqrt(3) * delta_min`` from the real axis
        (tanh poles; the zeros of the normal CDF are farther, ``~2.8 delta``),
        which sets the panel width of the interpolation below.
    direct_groups:
        Rounds with at most this many tie groups are solved directly.

    Notes
    -----
    Every ``Q_g`` is a sum over all ``N`` terms, so solving each of the ``G``
    groups directly costs ``O(G N)`` term evaluations per Newton step.  But
    all groups share the same terms and differ only in which of them count as
    losses, wins or ties, so:

    1. The best and the worst group are solved directly; by Theorem 5.2 every
       other zero lies between them.
    2. That interval is cut into panels of half-width ``sqrt(3)*delta_min/2``.
       On each panel every term is evaluated at ``CHEB_NODES`` Chebyshev-Lobatto
       points (``O(N)`` per node) and prefix sums over the groups in rank order
       give ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` at the nodes for all
       ``g`` at once.
    3. ``Q_g`` is analytic in a strip of half-width ``sqrt(3)*delta_min`` around
       the real axis, so its Chebyshev interpolant on a panel converges
       geometrically (Bernstein ellipse with rho ~ 3.5: error ~ 3.5**-32 of the
       terms' magnitude, i.e. at the level of floating-point rounding).  Each
       group's zero is found by safeguarded Newton on its interpolant, in the
       panel where ``Q_g`` changes sign.  A group not placed this way (rounding
       at the extremes) is solved directly.

    The cost is ``O(N * panels * CHEB_NODES + G * CHEB_NODES**2)`` instead of
    ``O(G * N * iterations)``.

    Returns
    -------
    perf, status : ndarray
        The zero of each group and a solver status code per group.
    n_direct : int
        How many groups were solved directly (all of them below
        ``direct_groups``; otherwise the ones the panels did not place).
    """
    solve = _logistic_zeros if kind == LOGISTIC else _gaussian_zeros
    perf, status, n_direct = solve(terms, groups, split_ties, min_spread, direct_groups)
    return perf, status, int(n_direct)


@nb.njit(cache=True)
def _logistic_zeros(terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                    min_spread: float, direct_groups: int):
    return tie_group_zeros(LOGISTIC, terms, groups, split_ties, min_spread, direct_groups)


@nb.njit(cache=True)
def _gaussian_zeros(terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                    min_spread: float, direct_groups: int):
    return tie_group_zeros(GAUSSIAN, terms, groups, split_ties, min_spread, direct_groups)


# Serial: the direct solves it does itself are few and small (rounds of at most
# ``direct_groups`` groups, and the odd group the panels do not place); the heavy
# loops run in parallel in _panel_zeros and panel_values.  (A parallel function costs
# seconds more to compile: its loops are outlined and compiled one by one.)
@nb.njit(cache=True)
def tie_group_zeros(kind: int, terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                       min_spread: float, direct_groups: int):
    """:func:`performance_zeros` for compiled callers: ``kind`` must be a literal
    (pass the constant ``LOGISTIC`` or ``GAUSSIAN``), so that it is compiled once per
    kind and a system compiles only its own terms.  Returns ``(perf, status,
    n_direct)`` like :func:`performance_zeros`."""
    G = groups.start.size
    perf = np.empty(G)
    status = np.zeros(G, dtype=np.int8)
    if G == 0:
        return perf, status, 0
    solved = np.zeros(G, dtype=np.bool_)
    if G > direct_groups:
        _panel_zeros(kind, terms, groups, split_ties, min_spread, perf, status, solved)
    n_direct = n_unsolved(solved)
    for g in range(G):
        if not solved[g]:
            pg, st = solve_direct(kind, terms, groups, g, split_ties)
            perf[g] = pg
            status[g] = st
    return perf, status, n_direct


@nb.njit(cache=True, parallel=True)
def _panel_zeros(kind: int, terms: OpponentTerms, groups: TieGroups, split_ties: bool,
                 min_spread: float, perf: np.ndarray, status: np.ndarray,
                 solved: np.ndarray) -> None:
    """Steps 1-3 of :func:`performance_zeros`: the best and the worst group solved
    directly, one per thread (each an ``O(N)`` sum per Newton step), then every group
    whose zero lies between theirs placed by interpolation."""
    G = groups.start.size
    for e in nb.prange(2):
        g = np.int64(0) if e == 0 else G - 1
        pg, st = solve_direct(kind, terms, groups, g, split_ties)
        perf[g] = pg
        status[g] = st
        solved[g] = True
    a_all = perf[G - 1]
    b_all = perf[0]
    if b_all - a_all < 1e-6:
        b_all = a_all + 1e-6
    grid = panel_grid(a_all, b_all, 0.5 * math.sqrt(3.0) * min_spread)
    m = CHEB_NODES
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    Vs = np.empty((m, G))
    Qv = np.empty((G, m))
    # per-group sums of w_out (logistic: loss/win terms are val -/+ w_out)
    wsum = np.zeros(G)
    if kind == LOGISTIC:
        for g in range(G):
            for j in range(groups.start[g], groups.end[g]):
                wsum[g] += terms.pb[j]
    # The groups whose zero lies in one panel are consecutive (the zeros decrease with
    # the place), so they are listed first and then shared out: a parallel loop over
    # all G groups would hand one thread nearly all of a panel's fits.
    todo = np.empty(G, dtype=np.int64)
    for p in range(grid.n):
        _, _, c, r = panel_span(grid, p)
        panel_values(kind, c, r, tnodes, terms, groups, split_ties, wsum, Qv, Vs)
        n_todo = 0
        for g in range(G):
            if not solved[g] and Qv[g, m - 1] >= 0.0 and Qv[g, 0] <= 0.0:
                todo[n_todo] = g
                n_todo += 1
        coefs = np.empty((n_todo, m))
        for q in nb.prange(n_todo):
            g = todo[q]
            cheb_fit(cmat, Qv[g], coefs[q])
            t = panel_zero(coefs[q], Qv[g, m - 1], Qv[g, 0], c, r, 0.0, 0.0, False)
            perf[g] = c + r * t
            solved[g] = True
