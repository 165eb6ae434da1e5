"""Phase 1 of ``mmr-smooth``'s bounded update, restricted to the tie groups whose
performance equation moved (docs/history.md, "Incremental update").

With Elo-MMR's logistic terms (Sec. 3.1 of [EbtekarLiu2021]) every term of ``Q_g``
(Theorem 3.2) is ``phi_j(x) = -w_out_j tanh((x - mu_j) w_arg_j)`` plus a constant:
``-w_out_j`` for a loss (``j`` placed better), ``+w_out_j`` for a win (worse), none for
a tie, which counts ``phi_j`` twice unless ties are split.  So, for the group of
positions ``a .. b - 1``,

    Q_g(x) = Phi(x) + [ties not split] Phi_g(x) + sum_{j >= b} w_out_j - sum_{j < a} w_out_j,

``Phi = sum_j phi_j`` over every term (the same function for every group) and
``Phi_g`` over the group's own terms.  One Chebyshev interpolant of ``Phi`` and one of
``Phi'`` per round (panels over the groups' current performances,
:data:`UPDATE_PANELS`, :data:`UPDATE_NODES`) give every group's
residual ``Q_g(x_g)`` at its current performance ``x_g`` and the Newton step
``-Q_g(x_g) / Q_g'(x_g)`` for ``O(N)`` term evaluations per node, and only the groups
whose step exceeds a share of the propagation threshold are solved again (Newton on the
same interpolant, the direct sums outside it).  The residual is taken over every
current term, not only the terms that moved: it also catches changes that were too
small to pass on one by one but add up.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    PanelGrid,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    clenshaw,
    panel_coordinate,
    panel_grid,
    panel_span,
)
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import tanh_sech2
from podium.history._smooth_kernels import round_terms, tie_groups

__all__ = ["SELECT_SHARE", "UPDATE_PANELS", "UPDATE_NODES", "phi_sums", "group_residual",
           "moved_groups"]

#: A group is solved again when its Newton step from the current performance exceeds
#: this share of the propagation threshold.  The step is exact to first order; its
#: second-order error, ``|Q''/(2 Q')| step^2``, is about ``step^2 / (2 delta)`` with
#: ``delta`` (hundreds of rating points on Codeforces) the terms' spread, so a group
#: whose performance would move by more than the threshold is never left out.
SELECT_SHARE = 0.5

#: The interpolant's panels: half-width in units of ``sqrt(3) delta_min / 2`` (the
#: terms' poles lie ``sqrt(3) delta_min`` off the real axis) and nodes.  1.5 times the
#: full solve's sweep width (``SWEEP_PANELS`` of :mod:`~podium.history.smooth_state`)
#: with its 32 nodes (:data:`~podium.core.numerics.chebyshev.CHEB_NODES`): on the
#: first 300 Codeforces contests every zero within 5e-7 rating points of the full
#: solve's (2e-9 at the sweep width, 7e-5 at twice it) for 37 % less time.
UPDATE_PANELS = 3.0
UPDATE_NODES = CHEB_NODES


@nb.njit(cache=True)
def phi_sums(x: float, mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, a: int,
             b: int) -> tuple[float, float]:
    """``sum_{a <= j < b} phi_j(x)`` and its derivative (the logistic terms' shared
    part, :func:`~podium.core.numerics.terms.logistic_terms` without the constants)."""
    s = 0.0
    sp = 0.0
    for j in range(a, b):
        t, d2 = tanh_sech2((x - mu[j]) * w_arg[j])
        s -= t * w_out[j]
        sp -= d2 * w_arg[j] * w_out[j]
    return s, sp


@nb.njit(cache=True)
def group_residual(x: float, mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray,
                   a: int, b: int, const: float, tie_twice: bool, grid: PanelGrid,
                   coef_f: np.ndarray, coef_d: np.ndarray) -> tuple[float, float]:
    """``Q_g(x)`` and ``Q_g'(x)`` of the group of positions ``a .. b - 1`` (``const``:
    its wins' minus its losses' ``w_out``): ``Phi`` from the round's interpolant where
    ``x`` lies on its panels (``coef_f``, ``coef_d`` per panel; none when
    ``grid.n == 0``), else by the direct sum over every term."""
    if grid.n > 0 and grid.left <= x <= grid.right:
        p, _ = panel_coordinate(grid, x)
        _, _, c, r = panel_span(grid, p)
        t = min(1.0, max(-1.0, (x - c) / r))
        f = clenshaw(coef_f[p], t)[0]
        fp = clenshaw(coef_d[p], t)[0]
    else:
        f, fp = phi_sums(x, mu, w_arg, w_out, 0, mu.size)
    if tie_twice:
        s, sp = phi_sums(x, mu, w_arg, w_out, a, b)
        f += s
        fp += sp
    return f + const, fp


@nb.njit(cache=True)
def _round_interpolant(mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, left: float,
                       right: float, half: float,
                       m: int) -> tuple[PanelGrid, np.ndarray, np.ndarray]:
    """Chebyshev coefficients of ``Phi`` and ``Phi'`` on panels of half-width at most
    ``half`` covering ``[left, right]``, ``m`` nodes each."""
    grid = panel_grid(left, right, half)
    cmat = cheb_matrix(m)
    tnodes = cheb_nodes(m)
    coef_f = np.empty((grid.n, m))
    coef_d = np.empty((grid.n, m))
    vf = np.empty(m)
    vd = np.empty(m)
    for p in range(grid.n):
        _, _, c, r = panel_span(grid, p)
        for k in range(m):
            vf[k], vd[k] = phi_sums(c + r * tnodes[k], mu, w_arg, w_out, 0, mu.size)
        cheb_fit(cmat, vf, coef_f[p])
        cheb_fit(cmat, vd, coef_d[p])
    return grid, coef_f, coef_d


@nb.njit(cache=True)
def _moved_round(c: int, contest_rows: np.ndarray, team_place: np.ndarray,
                 contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                 beta: np.ndarray, split_ties: bool, ceiling: np.ndarray, perf: np.ndarray,
                 threshold: float, widen: float, nodes: int,
                 direct_groups: int) -> tuple[float, int, int]:
    """:func:`moved_groups` for contest ``c``: returns the largest change of a
    performance, the rows solved again and the unconverged solves."""
    r0 = contest_rows[c]
    mu, w_arg, w_out, dmin = round_terms(c, contest_rows, cav_mu, cav_sig, beta)
    start, end = tie_groups(team_place[contest_teams[c]:contest_teams[c + 1]])
    n_g = start.size
    # per group: the wins' minus the losses' w_out, by prefix sums in rank order
    total = 0.0
    for j in range(mu.size):
        total += w_out[j]
    const = np.empty(n_g)
    before = 0.0
    lo = math.inf
    hi = -math.inf
    for g in range(n_g):
        inside = 0.0
        for j in range(start[g], end[g]):
            inside += w_out[j]
        const[g] = (total - before - inside) - before
        before += inside
        x = perf[r0 + start[g]]
        lo = min(lo, x)
        hi = max(hi, x)
    half = widen * 0.5 * math.sqrt(3.0) * dmin
    m = nodes
    if n_g > direct_groups and n_g > m * (hi - lo) / (2.0 * half):
        if hi - lo < 1e-6:
            hi = lo + 1e-6
        grid, coef_f, coef_d = _round_interpolant(mu, w_arg, w_out, lo, hi, half, m)
    else:  # fewer groups than nodes: the direct sums cost less
        grid = PanelGrid(0.0, 0.0, 0, 0.0)
        coef_f = np.empty((0, m))
        coef_d = np.empty((0, m))
    tie_twice = not split_ties
    cap = ceiling[c]
    change = 0.0
    rows = 0
    bad = 0
    for g in range(n_g):
        a, b = start[g], end[g]
        x = perf[r0 + a]
        q, qp = group_residual(x, mu, w_arg, w_out, a, b, const[g], tie_twice, grid,
                               coef_f, coef_d)
        guess = x - q / qp
        if not abs(min(guess, cap) - x) > SELECT_SHARE * threshold:
            continue
        state = newton_begin(LO_BOUND, HI_BOUND, min(max(guess, LO_BOUND), HI_BOUND))
        while state.running:
            q, qp = group_residual(state.x, mu, w_arg, w_out, a, b, const[g], tie_twice,
                                   grid, coef_f, coef_d)
            state = newton_next(state, q, qp)
        if state.status != 0:
            bad += 1
        rows += b - a
        pg = min(state.x, cap)
        if not abs(pg - x) > threshold:
            continue  # a change below the threshold is not passed on
        for k in range(a, b):
            change = max(change, abs(pg - perf[r0 + k]))
            perf[r0 + k] = pg
    return change, rows, bad


@nb.njit(cache=True, parallel=True)
def moved_groups(todo: np.ndarray, contest_rows: np.ndarray, team_place: np.ndarray,
                 contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                 beta: np.ndarray, split_ties: bool, ceiling: np.ndarray, perf: np.ndarray,
                 threshold: float, widen: float, nodes: int,
                 direct_groups: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Phase 1 of the contests in ``todo`` (in parallel) for the tie groups whose
    Newton step from their current performance exceeds ``SELECT_SHARE * threshold``:
    those are solved again from the current cavities (the zero of ``Q_g``, capped at
    the contest's ceiling), and their performance is replaced when it moves by more
    than ``threshold``; the others keep theirs (a change below the threshold is not
    passed on, so the players' beliefs stay those of their performances).

    Parameters
    ----------
    todo:
        The contests.
    contest_rows, team_place, contest_teams, cav_mu, cav_sig, beta, ceiling:
        The rounds' layout and terms (:class:`~podium.history._smooth_kernels.Rounds`).
    split_ties:
        Count a tie as half a win and half a loss.
    perf:
        Per row, the performances: read, and written where a group solved again
        moves by more than ``threshold``.
    threshold:
        The propagation threshold (rating points).
    widen, nodes:
        The interpolant's panels: half-width in units of ``sqrt(3) delta_min / 2``,
        Chebyshev nodes (:data:`UPDATE_PANELS`, :data:`UPDATE_NODES`).
    direct_groups:
        Rounds of at most this many tie groups sum every term directly.

    Returns
    -------
    change, rows, bad
        Per contest the largest change of a performance and the rows solved again;
        the unconverged solves.
    """
    change = np.zeros(todo.size)
    rows = np.zeros(todo.size, dtype=np.int64)
    bad = np.zeros(todo.size, dtype=np.int64)
    for q in nb.prange(todo.size):
        change[q], rows[q], bad[q] = _moved_round(todo[q], contest_rows, team_place,
                                                  contest_teams, cav_mu, cav_sig, beta,
                                                  split_ties, ceiling, perf, threshold, widen,
                                                  nodes, direct_groups)
    return change, rows, bad.sum()
