"""Numba kernels of the factor pool (:mod:`podium.systems.base.factor_pool`): the
per-player normal factor and the pooled lists of logistic factors that Elo-MMR and
Elo-R keep, and the two operations on the pool's layout, :func:`reserve` (room for one
more factor per participant) and :func:`compact_pool`.  No layout operation changes a
value."""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.intrinsics import PREFETCH_AHEAD, prefetch

__all__ = ["Normal", "Blocks", "Factors", "reserve", "compact_pool"]


class Normal(NamedTuple):
    """Per player: the normal factor's mean and weight ``1/var``."""

    mu: np.ndarray
    w: np.ndarray


class Blocks(NamedTuple):
    """Per player: the pool block ``[base, base + cap)`` holding its logistic factors,
    the live ones at ``base + start`` onwards (``length`` of them, oldest first)."""

    base: np.ndarray
    cap: np.ndarray
    start: np.ndarray
    length: np.ndarray


class Factors(NamedTuple):
    """The pool of logistic factors: location, weight inside the tanh, weight in front."""

    mu: np.ndarray
    warg: np.ndarray
    wout: np.ndarray


@nb.njit(cache=True)
def _copy_prefix(src: np.ndarray, dst: np.ndarray, n: int) -> None:
    for q in range(n):
        dst[q] = src[q]


@nb.njit(cache=True)
def reserve(players: np.ndarray, blocks: Blocks, pool: Factors,
            used: int) -> tuple[Factors, int]:
    """Make room for one more logistic factor per participant.

    Each player's factors live in a block ``[base, base + cap)`` of the pool, the
    live ones at ``base + start .. base + start + length``.  A full block is first
    compacted (if factors were folded off its front), else moved to a new block
    twice as large at the end of the pool; the pool grows geometrically.
    Returns the (possibly reallocated) pool and the used size.
    """
    fb_base, fb_cap, fb_start, fb_len = blocks
    f_mu, f_warg, f_wout = pool
    need = used
    for k in range(players.size):
        if k + PREFETCH_AHEAD < players.size:  # the rows of a later participant, fetched meanwhile
            j = players[k + PREFETCH_AHEAD]
            prefetch(fb_start, j)
            prefetch(fb_len, j)
            prefetch(fb_cap, j)
            prefetch(fb_base, j)
        i = players[k]
        if fb_start[i] + fb_len[i] >= fb_cap[i] and fb_start[i] == 0:
            need += max(4, 2 * fb_cap[i])
    if need > f_mu.size:
        cap = max(need, int(f_mu.size * 1.5) + 1024)
        # zeros, not empty: spare slots are saved in checkpoints, which must not carry
        # whatever the memory held (a checkpoint is a deterministic image)
        m2 = np.zeros(cap)
        a2 = np.zeros(cap)
        w2 = np.zeros(cap)
        _copy_prefix(f_mu, m2, used)
        _copy_prefix(f_warg, a2, used)
        _copy_prefix(f_wout, w2, used)
        f_mu, f_warg, f_wout = m2, a2, w2
    for k in range(players.size):
        i = players[k]
        if fb_start[i] + fb_len[i] < fb_cap[i]:
            continue
        src = fb_base[i] + fb_start[i]
        if fb_start[i] > 0:
            dst = fb_base[i]
            fb_start[i] = 0
        else:
            new_cap = max(4, 2 * fb_cap[i])
            dst = used
            used += new_cap
            fb_base[i] = dst
            fb_cap[i] = new_cap
        for q in range(fb_len[i]):
            f_mu[dst + q] = f_mu[src + q]
            f_warg[dst + q] = f_warg[src + q]
            f_wout[dst + q] = f_wout[src + q]
    return Factors(f_mu, f_warg, f_wout), used


@nb.njit(cache=True, inline="always")
def _compacted_cap(cap: int, length: int, roomy: bool) -> int:
    """A block's capacity after :func:`compact_pool`."""
    if roomy:
        return min(cap, max(4, 2 * length))
    return max(4, length)


@nb.njit(cache=True)
def compact_pool(n_players: int, blocks: Blocks, pool: Factors,
                 roomy: bool = False) -> tuple[Factors, int]:
    """Copy every player's live factors into a fresh pool without abandoned blocks.

    By default each block holds exactly ``max(4, length)`` slots and the pool no
    spare ones: the canonical layout, which a checkpoint stores.  ``roomy`` keeps
    each block's room to grow (``min(cap, max(4, 2 length))`` slots, at most what it
    had) and half the pool again as spare slots: compacting to full blocks during a
    run made every participant's next round move its block again, and the pool grow
    again, so that on many small rounds the pool was rebuilt over and over (63 pool
    growths and 17 compactions in 100,000 lobbies among 20,000 players, a quarter of
    the time).  The layout never changes a value.
    """
    fb_base, fb_cap, fb_start, fb_len = blocks
    total = 0
    for i in range(n_players):
        total += _compacted_cap(fb_cap[i], fb_len[i], roomy)
    size = max(total + total // 2 if roomy else total, 1024)
    m2 = np.zeros(size)  # zeros: see reserve
    a2 = np.zeros(size)
    w2 = np.zeros(size)
    pos = 0
    for i in range(n_players):
        cap = _compacted_cap(fb_cap[i], fb_len[i], roomy)
        src = fb_base[i] + fb_start[i]
        for q in range(fb_len[i]):
            m2[pos + q] = pool.mu[src + q]
            a2[pos + q] = pool.warg[src + q]
            w2[pos + q] = pool.wout[src + q]
        fb_base[i] = pos
        fb_cap[i] = cap
        fb_start[i] = 0
        pos += cap
    return Factors(m2, a2, w2), pos
