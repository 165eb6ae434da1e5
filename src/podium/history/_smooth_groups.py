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

Every evaluation keeps, per row, its group's residual and derivative and the cavities
and performance they were taken at (:class:`StoredResiduals`).  A round visited again
with the same performances is first *gated*: since then ``Q_g`` changed only through
the terms whose cavity changed (bit for bit, however little), so

    Q_g(x_g) = stored Q_g(x_g) + sum_{changed j} [phi_j^new(x_g) - phi_j^old(x_g)]
               + [ties not split] (the same over the group's own changed terms)
               + sum_{j >= b} dw_j - sum_{j < a} dw_j,   dw_j = w_out_j^new - w_out_j^old,

and ``Q_g'`` likewise: exact, from an interpolant of the changed terms only (old terms
with their sign turned).  When no group's Newton step exceeds :data:`GATE_SHARE` of
the threshold, no group can move by more than the threshold, the round is left as it
is and only its stored residuals advance; otherwise it is solved as above.
"""

from __future__ import annotations

import math
from typing import NamedTuple

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
from podium.core.numerics.lanes import SIMD_MATH, logistic_sums
from podium.core.numerics.newton import HI_BOUND, LO_BOUND, newton_begin, newton_next
from podium.core.numerics.special import TANH_MULTIPLIER
from podium.history._smooth_kernels import STRIPES, round_terms, tie_groups

__all__ = ["GATE_SHARE", "GATE_TERMS", "MOVED_NODES", "SELECT_SHARE", "UPDATE_PANELS",
           "UPDATE_NODES", "StoredResiduals", "phi_sums", "group_residual", "moved_groups"]

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

#: The bounded update's own interpolants (its rounds solved and its gate) take fewer
#: nodes: a performance moves there only by more than the propagation threshold (0.3
#: rating points at the defaults), and ``rho^-24`` instead of ``rho^-32``
#: (``rho ~ 1.87`` at :data:`UPDATE_PANELS`) leaves the updated performances within
#: 8.2e-5 rating points of those with :data:`UPDATE_NODES` after adding the last
#: Codeforces contest to the whole history (the same groups solved and replaced),
#: for 25 % less time in its phase 1.
MOVED_NODES = 24

#: The gate leaves a round as it is when no group's exact Newton step from its
#: performance exceeds this share of the threshold.  Then no zero moves by more than
#: the threshold: every term's ``phi_j'`` has one sign and ``|phi_j''| <= 2 w_arg_j
#: |phi_j'|``, so ``|Q_g''| <= 2 w_max |Q_g'|`` (``w_max = pi / (2 sqrt 3 delta_min)``)
#: and the zero lies within ``|step| (1 + 2 w_max |step|)`` (to first order in
#: ``w_max |step|``) of the performance; the gate checks that this stays below the
#: threshold.  Larger than :data:`SELECT_SHARE`: a group that the solve below takes on
#: but does not move by more than the threshold (its step between the two shares) does
#: not send the round to the solve again at every visit.
GATE_SHARE = 0.75

#: The gate is tried only when the sums it takes, the old and the new value of each
#: changed term, are at most this share of the round's terms (so at most 15 % of the
#: terms changed): beyond that a round gated in vain (some group still to solve) costs
#: both interpolants (docs/history.md, "The gate": the counts on the first 600
#: Codeforces contests).
GATE_TERMS = 0.3


class StoredResiduals(NamedTuple):
    """Per row (contest order), the last evaluation of its tie group's ``Q_g`` and
    ``Q_g'`` (``q``, ``qp``) and the cavities (``mu``, ``sig``) and performance
    (``perf``; ``NaN`` before any) it was taken at: what the update's gate starts from."""

    mu: np.ndarray
    sig: np.ndarray
    perf: np.ndarray
    q: np.ndarray
    qp: np.ndarray


@nb.njit(cache=True, fastmath=SIMD_MATH, error_model="numpy")
def phi_sums(x: float, mu: np.ndarray, w_arg: np.ndarray, w_out: np.ndarray, a: int,
             b: int) -> tuple[float, float]:
    """``sum_{a <= j < b} phi_j(x)`` and its derivative (the logistic terms' shared
    part, :func:`~podium.core.numerics.terms.logistic_terms` without the constants),
    in SIMD lanes (:func:`~podium.core.numerics.lanes.logistic_sums`)."""
    s, sp = logistic_sums(x, mu, w_out, w_arg, a, b)
    return -s, -sp


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
                 threshold: float, widen: float, nodes: int, direct_groups: int,
                 store: StoredResiduals, keep: bool, moved_rows: np.ndarray,
                 track: bool) -> tuple[float, int, int]:
    """:func:`moved_groups` for contest ``c``: returns the largest change of a
    performance, the rows solved again and the unconverged solves; with ``keep``,
    every group's residual at its final performance goes to ``store``."""
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
        if keep:
            store.q[r0 + a:r0 + b] = q
            store.qp[r0 + a:r0 + b] = qp
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
            if track:
                moved_rows[r0 + k] = abs(pg - perf[r0 + k]) > threshold
            perf[r0 + k] = pg
        if keep:
            q, qp = group_residual(pg, mu, w_arg, w_out, a, b, const[g], tie_twice, grid,
                                   coef_f, coef_d)
            store.q[r0 + a:r0 + b] = q
            store.qp[r0 + a:r0 + b] = qp
    if keep:
        r1 = contest_rows[c + 1]
        store.mu[r0:r1] = cav_mu[r0:r1]
        store.sig[r0:r1] = cav_sig[r0:r1]
        store.perf[r0:r1] = perf[r0:r1]
    return change, rows, bad


@nb.njit(cache=True)
def _gate_round(c: int, contest_rows: np.ndarray, team_place: np.ndarray,
                contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                beta: np.ndarray, split_ties: bool, ceiling: np.ndarray, perf: np.ndarray,
                threshold: float, widen: float, nodes: int, direct_groups: int,
                store: StoredResiduals) -> bool:
    """The gate of contest ``c`` (module docstring): ``True`` when its stored residuals
    were advanced to the current cavities and no group's Newton step exceeds
    :data:`GATE_SHARE` of ``threshold``; ``False`` (nothing written) when the round is
    to be solved: a performance moved since the stored evaluation (or there is none),
    more than :data:`GATE_TERMS` of the terms changed, or some group's step is too
    large."""
    r0, r1 = contest_rows[c], contest_rows[c + 1]
    n = r1 - r0
    changed = np.zeros(n, dtype=np.bool_)
    n_changed = 0
    dmin_all = math.inf
    for k in range(n):
        row = r0 + k
        if not perf[row] == store.perf[row]:  # NaN: never evaluated
            return False
        dmin_all = min(dmin_all, math.hypot(cav_sig[row], beta[row]))
        if cav_mu[row] != store.mu[row] or cav_sig[row] != store.sig[row]:
            changed[k] = True
            n_changed += 1
    if 2 * n_changed > GATE_TERMS * n:
        return False
    step = GATE_SHARE * threshold
    # the zero within |step| (1 + 2 w_max |step|) of the performance (GATE_SHARE)
    if step * (1.0 + 2.0 * step * 0.5 * TANH_MULTIPLIER / dmin_all) > threshold:
        return False
    # the changed terms: the new ones, and the old ones with their sign turned
    mu = np.empty(2 * n_changed)
    w_out = np.empty(2 * n_changed)
    dw = np.zeros(n + 1)  # prefix sums of the change of w_out, in rank order
    at = np.empty(n, dtype=np.int64)  # row k's new term at at[k], its old one next
    dmin = math.inf
    i = 0
    for k in range(n):
        dw[k + 1] = dw[k]
        if not changed[k]:
            continue
        at[k] = i
        row = r0 + k
        d_new = math.hypot(cav_sig[row], beta[row])
        d_old = math.hypot(store.sig[row], beta[row])
        dmin = min(dmin, d_new, d_old)
        mu[i] = cav_mu[row]
        w_out[i] = TANH_MULTIPLIER / d_new
        mu[i + 1] = store.mu[row]
        w_out[i + 1] = -TANH_MULTIPLIER / d_old
        dw[k + 1] += w_out[i] + w_out[i + 1]
        i += 2
    w_arg = 0.5 * np.abs(w_out)
    start, end = tie_groups(team_place[contest_teams[c]:contest_teams[c + 1]])
    n_g = start.size
    lo = math.inf
    hi = -math.inf
    for g in range(n_g):
        lo = min(lo, perf[r0 + start[g]])
        hi = max(hi, perf[r0 + start[g]])
    half = widen * 0.5 * math.sqrt(3.0) * dmin
    m = nodes
    if n_changed > 0 and n_g > direct_groups and n_g > m * (hi - lo) / (2.0 * half):
        if hi - lo < 1e-6:
            hi = lo + 1e-6
        grid, coef_f, coef_d = _round_interpolant(mu, w_arg, w_out, lo, hi, half, m)
    else:
        grid = PanelGrid(0.0, 0.0, 0, 0.0)
        coef_f = np.empty((0, m))
        coef_d = np.empty((0, m))
    q_new = np.empty(n_g)
    qp_new = np.empty(n_g)
    cap = ceiling[c]
    for g in range(n_g):
        a, b = start[g], end[g]
        x = perf[r0 + a]
        dq, dqp = group_residual(x, mu, w_arg, w_out, 0, 0, (dw[n] - dw[b]) - dw[a],
                                 False, grid, coef_f, coef_d)
        if not split_ties:  # the group's own changed terms count twice
            for k in range(a, b):
                if changed[k]:  # new minus old: the pair at at[k]
                    f, fp = phi_sums(x, mu, w_arg, w_out, at[k], at[k] + 2)
                    dq += f
                    dqp += fp
        q = store.q[r0 + a] + dq
        qp = store.qp[r0 + a] + dqp
        if not abs(min(x - q / qp, cap) - x) <= step:
            return False
        q_new[g] = q
        qp_new[g] = qp
    for g in range(n_g):
        store.q[r0 + start[g]:r0 + end[g]] = q_new[g]
        store.qp[r0 + start[g]:r0 + end[g]] = qp_new[g]
    store.mu[r0:r1] = cav_mu[r0:r1]
    store.sig[r0:r1] = cav_sig[r0:r1]
    return True


@nb.njit(cache=True, parallel=True)
def moved_groups(todo: np.ndarray, contest_rows: np.ndarray, team_place: np.ndarray,
                 contest_teams: np.ndarray, cav_mu: np.ndarray, cav_sig: np.ndarray,
                 beta: np.ndarray, split_ties: bool, ceiling: np.ndarray, perf: np.ndarray,
                 threshold: float, widen: float, nodes: int, direct_groups: int,
                 store: StoredResiduals, keep: bool, gate: bool, moved_rows: np.ndarray,
                 track: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
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
    store, keep:
        Per row, the last evaluation of its group's residual (read by the gate;
        written by every evaluation with ``keep``: the full solve's sweeps leave it,
        since :meth:`~podium.history.smooth_state.SmoothState.refresh_residuals`
        writes it once they end).
    gate:
        Try the gate first (module docstring): a round whose stored residuals show
        that no group can move by more than ``threshold`` is left as it is.
    moved_rows, track:
        With ``track``, per row: set where its performance is replaced by one more
        than ``threshold`` away (the caller reads and clears it).

    Returns
    -------
    change, rows, gated, bad
        Per contest the largest change of a performance, the rows solved again and
        whether the gate left it as it is; the unconverged solves.
    """
    change = np.zeros(todo.size)
    rows = np.zeros(todo.size, dtype=np.int64)
    gated = np.zeros(todo.size, dtype=np.bool_)
    bad = np.zeros(todo.size, dtype=np.int64)
    # every stripes-th contest per iteration (STRIPES): each thread gets early and
    # late (larger) rounds
    stripes = max(1, min(todo.size, STRIPES))
    for s in nb.prange(stripes):
        for q in range(s, todo.size, stripes):
            if gate:
                gated[q] = _gate_round(todo[q], contest_rows, team_place, contest_teams,
                                       cav_mu, cav_sig, beta, split_ties, ceiling, perf,
                                       threshold, widen, nodes, direct_groups, store)
            if not gated[q]:
                change[q], rows[q], bad[q] = _moved_round(
                    todo[q], contest_rows, team_place, contest_teams, cav_mu, cav_sig, beta,
                    split_ties, ceiling, perf, threshold, widen, nodes, direct_groups, store,
                    keep, moved_rows, track)
    return change, rows, gated, bad.sum()
