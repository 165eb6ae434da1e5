"""Numba kernels of the pairwise-game systems ([CuffedElo]); see :mod:`podium.systems.pairwise`.

Every Elo kernel uses the seed's update (SingleElo) with a factor ``k`` and the
logistic scale ``c = ln(10) / scale``::

    E   = 1 / (1 + 10**((R_j - R_i) / scale)) = 1 / (1 + exp(c (R_j - R_i)))
    R_i += k (o - E);   R_j -= k (o - E)

(``R_j' = R_j + ((1 - o) - (1 - E))`` is the same zero-sum step.)
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

__all__ = [
    "elo_sequence",
    "elo_round",
    "elo_all_orderings",
    "elo_orderings_mean",
    "glicko_round_sums",
]


@nb.njit(cache=True)
def _elo_step(ri: float, rj: float, o: float, k: float, c: float) -> float:
    """The change of the first player's rating (the second's is its negative)."""
    e = 1.0 / (1.0 + math.exp((rj - ri) * c))
    return k * (o - e)


@nb.njit(cache=True)
def elo_sequence(r, gi, gj, o, k, c):  # pragma: no cover - compiled
    """Play games ``(gi[t], gj[t])`` with outcomes ``o[t]`` in order, updating ``r`` in place."""
    for t in range(gi.size):
        i = gi[t]
        j = gj[t]
        d = _elo_step(r[i], r[j], o[t], k, c)
        r[i] += d
        r[j] -= d


@nb.njit(cache=True)
def elo_round(r, lo, k, c, draw_ties):  # pragma: no cover - compiled
    """SingleElo over every pair of one round, in place, without building the pair list.

    Participants are in standings order (``lo`` non-decreasing).  The games are
    played row by row: for ``a = 0, 1, ...`` the games ``(a, b)`` for
    ``b = a+1, a+2, ...`` -- the same order as
    :func:`podium.systems.pairwise.round_games`.  ``a`` wins when
    ``lo[a] < lo[b]``; a tie is a draw (``o = 0.5``) or, with ``draw_ties``
    false, no game.
    """
    n = r.size
    for a in range(n):
        ra = r[a]
        la = lo[a]
        for b in range(a + 1, n):
            if lo[b] == la:
                if not draw_ties:
                    continue
                o = 0.5
            else:
                o = 1.0
            rb = r[b]
            d = _elo_step(ra, rb, o, k, c)
            ra += d
            r[b] = rb - d
        r[a] = ra


@nb.njit(cache=True)
def elo_all_orderings(r0, ti, tj, to, counts, k, c):  # pragma: no cover - compiled
    """Mean of SingleElo over every ordering of a multiset of games (AverageElo).

    ``(ti[t], tj[t], to[t])`` are the distinct games and ``counts[t]`` how often
    each occurs.  Orderings that only swap identical games give identical
    ratings, so the mean over all ``m!`` orderings equals the mean over the
    ``m! / prod(counts!)`` distinct arrangements, which are enumerated by a
    depth-first search that shares prefixes (one Elo step per tree node) and
    undoes each step on the way back.  Returns ``(mean ratings, leaves)``.
    """
    n_types = ti.size
    m = 0
    for t in range(n_types):
        m += counts[t]
    total = np.zeros_like(r0)
    if m == 0:
        return r0.copy(), 1
    r = r0.copy()
    cnt = counts.copy()
    choice = np.full(m, -1, dtype=np.int64)
    old_i = np.empty(m)
    old_j = np.empty(m)
    leaves = 0
    depth = 0
    while depth >= 0:
        prev = choice[depth]
        if prev >= 0:  # undo the game played at this depth before trying the next one
            r[ti[prev]] = old_i[depth]
            r[tj[prev]] = old_j[depth]
            cnt[prev] += 1
        t = prev + 1
        while t < n_types and cnt[t] == 0:
            t += 1
        if t == n_types:
            choice[depth] = -1
            depth -= 1
            continue
        choice[depth] = t
        i = ti[t]
        j = tj[t]
        old_i[depth] = r[i]
        old_j[depth] = r[j]
        d = _elo_step(r[i], r[j], to[t], k, c)
        r[i] += d
        r[j] -= d
        cnt[t] -= 1
        if depth == m - 1:
            for p in range(r.size):
                total[p] += r[p]
            leaves += 1
        else:
            depth += 1
    return total / leaves, leaves


@nb.njit(cache=True)
def elo_orderings_mean(r0, gi, gj, o, perms, k, c):  # pragma: no cover - compiled
    """Mean of SingleElo over the orderings ``perms[s]`` (rows of game indices): SampleElo."""
    total = np.zeros_like(r0)
    r = np.empty_like(r0)
    n_s = perms.shape[0]
    for s in range(n_s):
        for p in range(r0.size):
            r[p] = r0[p]
        for u in range(perms.shape[1]):
            t = perms[s, u]
            i = gi[t]
            j = gj[t]
            d = _elo_step(r[i], r[j], o[t], k, c)
            r[i] += d
            r[j] -= d
        for p in range(r0.size):
            total[p] += r[p]
    return total / n_s


@nb.njit(cache=True, parallel=True)
def glicko_round_sums(r, g, lo, q, draw_ties):  # pragma: no cover - compiled
    """Glicko's per-player sums over every pair of one round (one rating period).

    Participants in standings order (``lo`` non-decreasing); ``g = g(RD)`` of
    each at the start of the period.  For player ``i`` over every other
    participant ``j`` (a game won by the better placed; a tie is a draw, or no
    game when ``draw_ties`` is false), with
    ``E_ij = 1 / (1 + 10**(-g_j (r_i - r_j) / 400))``::

        u_i = sum_j g_j (s_ij - E_ij)
        v_i = sum_j g_j**2 E_ij (1 - E_ij)

    Because the standings are sorted, ``s_ij`` is 0 for ``j`` before ``i``'s tie
    group, 1/2 inside it and 1 after it, so the loops carry no outcome branch.
    Returns ``(u, v, games)``.
    """
    n = r.size
    u = np.zeros(n)
    v = np.zeros(n)
    games = np.zeros(n)
    qg = q * g
    # tie groups: start[i], end[i] of i's group
    start = np.empty(n, dtype=np.int64)
    end = np.empty(n, dtype=np.int64)
    s0 = 0
    for p in range(1, n + 1):
        if p == n or lo[p] != lo[s0]:
            for x in range(s0, p):
                start[x] = s0
                end[x] = p
            s0 = p
    # suffix sums of g (wins against everybody after the group)
    gsuf = np.zeros(n + 1)
    for p in range(n - 1, -1, -1):
        gsuf[p] = gsuf[p + 1] + g[p]
    for i in nb.prange(n):
        ri = r[i]
        a = start[i]
        b = end[i]
        se = 0.0
        sv = 0.0
        for j in range(a):
            e = 1.0 / (1.0 + math.exp(-qg[j] * (ri - r[j])))
            se += g[j] * e
            sv += g[j] * g[j] * e * (1.0 - e)
        for j in range(b, n):
            e = 1.0 / (1.0 + math.exp(-qg[j] * (ri - r[j])))
            se += g[j] * e
            sv += g[j] * g[j] * e * (1.0 - e)
        won = gsuf[b]
        cnt = float(n - (b - a))
        if draw_ties:
            for j in range(a, b):
                if j == i:
                    continue
                e = 1.0 / (1.0 + math.exp(-qg[j] * (ri - r[j])))
                se += g[j] * e
                sv += g[j] * g[j] * e * (1.0 - e)
                won += 0.5 * g[j]
            cnt += float(b - a - 1)
        u[i] = won - se
        v[i] = sv
        games[i] = cnt
    return u, v, games
