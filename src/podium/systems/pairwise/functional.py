"""Pairwise games ([CuffedElo]) on plain arrays: SingleElo, AverageElo, SampleElo, the
least-squares "system of equations", PageRank and classic two-player Glicko.

A **functional API** (choix-style): every function takes a list/array of games
``(i, j)`` -- by default "``i`` beat ``j``" -- with optional ``outcomes`` (the seed's
``o_g``: the first player's score, 1 win, 0 loss, 0.5 draw) and returns a ratings
array indexed by player::

    >>> import numpy as np
    >>> from podium.systems.pairwise import elo_single, elo_lsq
    >>> games = [(0, 1), (0, 1), (1, 0), (1, 2)]
    >>> elo_single(games, k=32).round(2)
    array([1211.75, 1204.79, 1183.46])
    >>> elo_lsq(games).round(2)
    array([1200.  , 1111.26,  920.41])

The rating systems for multiplayer contests built on these functions are in
:mod:`podium.systems.pairwise.systems`; :func:`round_games` turns one round into
its pair games.  Every name is also importable from :mod:`podium.systems.pairwise`.

Sections of [CuffedElo] cited below: "The Elo rating system" (SingleElo),
"AverageElo: ignore the order of games" (AverageElo, SampleElo), "Exact
solution for AverageElo" (the system of equations) and "Results" (the
comparators and the simulation, :mod:`podium.evaluation.pairwise_sim`).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from podium.errors import ConfigError, ConvergenceError
from podium.systems.base import check_param

__all__ = [
    "GLICKO_Q",
    "DEFAULT_MAX_ORDERINGS",
    "DEFAULT_MAX_PAIRS",
    "Ties",
    "elo_expected",
    "elo_single",
    "elo_average",
    "elo_sample",
    "elo_lsq",
    "pagerank",
    "glicko",
    "glicko_g",
    "pair_table",
    "count_orderings",
    "round_games",
    "check_ties",
    "average_over_orderings",
    "sample_orderings",
    "orderings_capped",
    "refuse_too_many_orderings",
    "merge_pairs",
    "lsq_solve",
    "pagerank_solve",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Ties = Literal["draw", "skip"]

#: Glickman's ``q = ln(10) / 400``.
GLICKO_Q = math.log(10.0) / 400.0
#: AverageElo refuses histories with more distinct orderings than this (10! = 3,628,800).
DEFAULT_MAX_ORDERINGS = math.factorial(10)
#: Global systems (elo-lsq, pagerank) refuse histories with more distinct player pairs.
DEFAULT_MAX_PAIRS = 2_000_000


# ====================================================================== input helpers
def _as_games(
    games: Any, outcomes: Any, n_players: int | None
) -> tuple[IntArray, IntArray, FloatArray, int]:
    """Validate games ``(i, j)`` and outcomes; return ``(gi, gj, o, n)``."""
    g = np.asarray(games)
    if g.size == 0:
        g = np.zeros((0, 2), dtype=np.int64)
    if g.ndim != 2 or g.shape[1] != 2:
        raise ValueError(
            f"games must be a list of (i, j) pairs (shape (m, 2)), got shape {g.shape}"
        )
    if not np.issubdtype(g.dtype, np.integer):
        whole = np.issubdtype(g.dtype, np.floating) and np.all(np.isfinite(g))
        if whole and np.all(g == np.round(g)):
            g = g.astype(np.int64)
        else:
            raise ValueError("games must hold integer player indices")
    g = g.astype(np.int64, copy=False)
    if g.size and g.min() < 0:
        raise ValueError(f"player indices must be >= 0, got {int(g.min())}")
    if np.any(g[:, 0] == g[:, 1]):
        t = int(np.flatnonzero(g[:, 0] == g[:, 1])[0])
        raise ValueError(f"game #{t} is between player {int(g[t, 0])} and itself")
    n_min = int(g.max()) + 1 if g.size else 0
    if n_players is None:
        n = n_min
    else:
        n = int(n_players)
        if n < n_min:
            raise ValueError(f"n_players={n} but the games name player {n_min - 1}")
    m = g.shape[0]
    if outcomes is None:
        o = np.ones(m)
    else:
        o = np.asarray(outcomes, dtype=np.float64)
        if o.shape != (m,):
            raise ValueError(f"outcomes must have one value per game ({m}), got shape {o.shape}")
        if not np.all((o >= 0.0) & (o <= 1.0)):
            raise ValueError("outcomes must lie in [0, 1] (1: first player won, 0.5: draw)")
    return (np.ascontiguousarray(g[:, 0]), np.ascontiguousarray(g[:, 1]),
            np.ascontiguousarray(o), n)


def _initial_vector(initial: float | npt.ArrayLike, n: int, what: str = "initial") -> FloatArray:
    arr = np.asarray(initial, dtype=np.float64)
    if arr.ndim == 0:
        out = np.full(n, float(arr))
    elif arr.shape == (n,):
        out = arr.copy()
    else:
        raise ValueError(
            f"{what} must be a number or an array of {n} values, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{what} must be finite")
    return out


def _check_scale(k: float | None, scale: float) -> None:
    if k is not None:
        check_param("k", k, "positive")
    check_param("scale", scale, "positive")


def elo_expected(ri: float | FloatArray, rj: float | FloatArray,
                 scale: float = 400.0) -> float | FloatArray:
    """Elo's probability that ``i`` beats ``j``: ``10^(Ri/s) / (10^(Ri/s) + 10^(Rj/s))``."""
    return 1.0 / (1.0 + 10.0 ** ((np.asarray(rj) - np.asarray(ri)) / scale))


# ====================================================================== Elo family
def elo_single(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    k: float = 1.0,
    initial: float | npt.ArrayLike = 1200.0,
    scale: float = 400.0,
) -> FloatArray:
    """Classic Elo over the games in the given order ([CuffedElo], "The Elo rating system").

    After game ``g = (i, j)`` with outcome ``o_g`` (1 if ``i`` won)::

        E   = 10^(R_i/scale) / (10^(R_i/scale) + 10^(R_j/scale))
        R_i' = R_i + k (o_g - E),    R_j' = R_j + k ((1 - o_g) - (1 - E))

    Parameters
    ----------
    games:
        ``(i, j)`` pairs (``m x 2``), in the order they were played.
    n_players:
        Length of the result (default: the largest index + 1).
    outcomes:
        ``o_g`` per game (default: all 1, i.e. each pair is ``(winner, loser)``).
    k:
        The K factor.  The seed's update has none, i.e. ``k = 1`` (the default);
        chess federations use 10-40.
    initial:
        Starting rating(s): a number or one value per player (default 1200,
        the seed's anchor value).
    scale:
        Rating points per factor 10 in the odds (400).
    """
    import podium.systems.pairwise.kernels as K

    _check_scale(k, scale)
    gi, gj, o, n = _as_games(games, outcomes, n_players)
    r = _initial_vector(initial, n)
    K.elo_sequence(r, gi, gj, o, float(k), math.log(10.0) / scale)
    return r


def count_orderings(games: Any, outcomes: Any = None) -> int:
    """Number of *distinct* orderings of a history: ``m! / prod(c!)`` over repeated games."""
    gi, gj, o, _ = _as_games(games, outcomes, None)
    counts = Counter(zip(gi.tolist(), gj.tolist(), o.tolist(), strict=True))
    out = math.factorial(gi.size)
    for c in counts.values():
        out //= math.factorial(c)
    return out


def orderings_capped(counts: list[int], cap: int) -> int | None:
    """The multinomial ``(sum c)! / prod(c!)``, or ``None`` as soon as it exceeds ``cap``."""
    total = 0
    out = 1
    for c in counts:
        for x in range(1, c + 1):  # multiply by C(total + c, c) one factor at a time
            total += 1
            out = out * total // x
            if out > cap:
                return None
    return out


def refuse_too_many_orderings(m: int, cap: int) -> None:
    """Raise the :class:`~podium.errors.ConfigError` of AverageElo over ``m`` games with
    more than ``cap`` distinct orderings (naming the options that get past it)."""
    raise ConfigError(
        f"AverageElo over {m:,} games has more than max_orderings={cap:,} distinct orderings "
        "(m! / prod(c!) for games repeated c times); use elo_sample / 'elo-sample' (random "
        "orderings) or raise max_orderings (time grows like the number of orderings)"
    )


def average_over_orderings(
    r0: FloatArray, gi: IntArray, gj: IntArray, o: FloatArray, k: float, c: float,
    max_orderings: int,
) -> FloatArray:
    """AverageElo of the games on ratings ``r0`` (all players), exactly."""
    import podium.systems.pairwise.kernels as K

    counts = Counter(zip(gi.tolist(), gj.tolist(), o.tolist(), strict=True))
    n_orderings = orderings_capped(list(counts.values()), max_orderings)
    if n_orderings is None:
        refuse_too_many_orderings(gi.size, max_orderings)
    out = r0.copy()
    if gi.size == 0:
        return out
    # only the players in the games move: work on them alone (compressed indices)
    active = np.unique(np.concatenate([gi, gj]))
    keys = list(counts)
    pos = {int(p): q for q, p in enumerate(active.tolist())}
    ti = np.array([pos[key[0]] for key in keys], dtype=np.int64)
    tj = np.array([pos[key[1]] for key in keys], dtype=np.int64)
    to = np.array([key[2] for key in keys], dtype=np.float64)
    tc = np.array([counts[key] for key in keys], dtype=np.int64)
    mean, leaves = K.elo_all_orderings(r0[active].copy(), ti, tj, to, tc, k, c)
    assert leaves == n_orderings
    out[active] = mean
    return out


def elo_average(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    k: float = 1.0,
    initial: float | npt.ArrayLike = 1200.0,
    scale: float = 400.0,
    max_orderings: int = DEFAULT_MAX_ORDERINGS,
) -> FloatArray:
    """AverageElo: the mean of SingleElo over every ordering of the games ([CuffedElo],
    "AverageElo: ignore the order of games").

    ``AverageElo_i(g) = sum over permutations pi of Elo_i(pi(g)) / |S(g)|``,
    computed exactly by enumerating the orderings (identical games are
    interchangeable, so only the ``m! / prod(c!)`` distinct arrangements are
    visited, sharing prefixes; about ``e`` Elo steps per ordering).

    Raises
    ------
    ConfigError
        When the history has more than ``max_orderings`` distinct orderings
        (default ``10! = 3,628,800``: any 10 games; more when games repeat).
        Use :func:`elo_sample` for larger histories.

    Other parameters as :func:`elo_single`.
    """
    _check_scale(k, scale)
    check_param("max_orderings", max_orderings, "positive_int")
    gi, gj, o, n = _as_games(games, outcomes, n_players)
    r0 = _initial_vector(initial, n)
    return average_over_orderings(r0, gi, gj, o, float(k), math.log(10.0) / scale, max_orderings)


def sample_orderings(
    r0: FloatArray, gi: IntArray, gj: IntArray, o: FloatArray, k: float, c: float,
    samples: int, rng: np.random.Generator,
) -> FloatArray:
    """SampleElo of the games on ratings ``r0`` (all players): Elo run over ``samples``
    random orderings of the games (drawn from ``rng``), averaged."""
    import podium.systems.pairwise.kernels as K

    m = gi.size
    if m == 0:
        return r0.copy()
    total = np.zeros_like(r0)
    chunk = max(1, min(samples, (1 << 22) // m))
    done = 0
    while done < samples:
        s = min(chunk, samples - done)
        perms = rng.permuted(np.broadcast_to(np.arange(m, dtype=np.int64), (s, m)), axis=1)
        total += s * K.elo_orderings_mean(r0, gi, gj, o, np.ascontiguousarray(perms), k, c)
        done += s
    return total / samples


def elo_sample(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    samples: int = 100,
    seed: int | np.random.Generator | None = None,
    k: float = 1.0,
    initial: float | npt.ArrayLike = 1200.0,
    scale: float = 400.0,
) -> FloatArray:
    """SampleElo: the mean of SingleElo over ``samples`` orderings drawn uniformly at random
    ([CuffedElo], ``SampleElo_i(g, k)``; the seed's ``k`` is ``samples`` here, ``k`` is the
    K factor).  ``seed`` makes it reproducible.  Other parameters as :func:`elo_single`.
    """
    _check_scale(k, scale)
    check_param("samples", samples, "positive_int")
    gi, gj, o, n = _as_games(games, outcomes, n_players)
    r0 = _initial_vector(initial, n)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return sample_orderings(r0, gi, gj, o, float(k), math.log(10.0) / scale, samples, rng)


# ====================================================================== pair tables
def _pair_keys(a: IntArray, b: IntArray) -> IntArray:
    return (a.astype(np.int64) << 32) | b.astype(np.int64)


def merge_pairs(
    keys: IntArray, w_ab: FloatArray, w_ba: FloatArray,
    gi: IntArray, gj: IntArray, o: FloatArray, games: FloatArray | None = None,
) -> tuple[IntArray, FloatArray, FloatArray]:
    """Add games ``(gi, gj, o)`` to a sorted table of unordered pairs ``a < b``;
    ``games``: each game's weight (a team round's ``w_i w_j``; ``None``: 1), which
    multiplies both scores it adds."""
    swap = gi > gj
    a = np.where(swap, gj, gi)
    b = np.where(swap, gi, gj)
    s_ab = np.where(swap, 1.0 - o, o)  # score of the lower index against the higher
    s_ba = 1.0 - s_ab
    if games is not None:
        s_ab = games * s_ab
        s_ba = games * s_ba
    all_keys = np.concatenate([keys, _pair_keys(a, b)])
    uniq, inv = np.unique(all_keys, return_inverse=True)
    new_ab = np.bincount(inv, weights=np.concatenate([w_ab, s_ab]), minlength=uniq.size)
    new_ba = np.bincount(inv, weights=np.concatenate([w_ba, s_ba]), minlength=uniq.size)
    return uniq.astype(np.int64, copy=False), new_ab.astype(np.float64, copy=False), \
        new_ba.astype(np.float64, copy=False)


def pair_table(
    games: Any, n_players: int | None = None, *, outcomes: Any = None
) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """Aggregate games per unordered pair: ``(a, b, w_ab, w_ba)`` with ``a < b``, where
    ``w_ab`` is ``a``'s total score against ``b`` (wins, plus 1/2 per draw)."""
    gi, gj, o, _ = _as_games(games, outcomes, n_players)
    keys, w_ab, w_ba = merge_pairs(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), gi, gj, o)
    return keys >> 32, keys & 0xFFFFFFFF, w_ab, w_ba


def lsq_solve(
    n: int, a: IntArray, b: IntArray, w_ab: FloatArray, w_ba: FloatArray,
    anchor: float, pseudo_count: float, scale: float,
) -> FloatArray:
    """Least-squares solution of ``R_a - R_b = scale log10((w_ab + alpha) / (w_ba + alpha))``,
    one equation per pair that played, each connected component anchored at its lowest
    index (``R = anchor``)."""
    import scipy.sparse as sp  # here: SciPy is slow to import and rarely needed
    from scipy.sparse.csgraph import connected_components
    from scipy.sparse.linalg import spsolve

    played = (w_ab + w_ba) > 0
    a, b, w_ab, w_ba = a[played], b[played], w_ab[played], w_ba[played]
    if pseudo_count == 0.0:
        bad = np.flatnonzero((w_ab == 0) | (w_ba == 0))
        if bad.size:
            p = int(bad[0])
            raise ValueError(
                f"players {int(a[p])} and {int(b[p])}: one side never scored "
                f"({w_ab[p]:g} to {w_ba[p]:g}), so log10(0) is undefined; use pseudo_count > 0 "
                f"(default 0.5){f' ({bad.size} such pairs)' if bad.size > 1 else ''}"
            )
    d = scale * (np.log10(w_ab + pseudo_count) - np.log10(w_ba + pseudo_count))
    x = np.zeros(n)
    if a.size:
        ones = np.ones(a.size)
        adj = sp.coo_matrix((ones, (a, b)), shape=(n, n)).tocsr()
        adj = adj + adj.T
        deg = np.asarray(adj.sum(axis=1)).ravel()
        lap = (sp.diags(deg) - adj).tocsr()
        rhs = np.bincount(a, weights=d, minlength=n) - np.bincount(b, weights=d, minlength=n)
        n_comp, labels = connected_components(adj, directed=False)
        # anchor: the lowest index of every component (R_1 = anchor in the seed)
        first = np.full(n_comp, n, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(n, dtype=np.int64))
        free = np.ones(n, dtype=bool)
        free[first] = False
        if free.any():
            sub = lap[free][:, free].tocsc()
            x[free] = np.atleast_1d(spsolve(sub, rhs[free]))
    return anchor + x


def pagerank_solve(
    n: int, a: IntArray, b: IntArray, w_ab: FloatArray, w_ba: FloatArray,
    damping: float, tol: float, max_iter: int,
) -> FloatArray:
    """PageRank of the graph with an edge ``loser -> winner`` weighted by the winner's score."""
    import scipy.sparse as sp  # here: SciPy is slow to import and rarely needed

    if n == 0:
        return np.zeros(0)
    src = np.concatenate([b, a])  # b "votes" for a with weight w_ab, a for b with w_ba
    dst = np.concatenate([a, b])
    w = np.concatenate([w_ab, w_ba])
    keep = w > 0
    src, dst, w = src[keep], dst[keep], w[keep]
    out = np.bincount(src, weights=w, minlength=n)
    trans = sp.csr_matrix((w / out[src], (dst, src)), shape=(n, n))
    dangling = out == 0
    p = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        new = trans @ p
        new *= damping
        new += (1.0 - damping + damping * p[dangling].sum()) / n
        err = float(np.abs(new - p).sum())
        p = new
        if err < tol:
            return p / p.sum()
    raise ConvergenceError(f"PageRank did not converge to tol={tol} in {max_iter} iterations")


def elo_lsq(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    anchor: float = 1200.0,
    pseudo_count: float = 0.5,
    scale: float = 400.0,
) -> FloatArray:
    """The seed's "system of equations" ([CuffedElo], "Exact solution for AverageElo").

    For every pair ``(i, j)`` that played, one equation::

        R_i / 400 - R_j / 400 = log10(w_ij + alpha) - log10(w_ji + alpha)

    where ``w_ij`` is the number of games ``i`` beat ``j`` (a draw counts 1/2 to
    each) and ``alpha = pseudo_count``; plus ``R_1 = anchor``.  The system is
    solved by least squares (the normal equations are a graph-Laplacian system,
    solved sparsely).

    Pairs where one side never won: ``log10(0)`` is undefined, so ``alpha``
    (default **1/2**, the Haldane-Anscombe correction) is added to *both* win
    counts of *every* pair that played.  It is symmetric (swapping the players
    flips the sign of the equation), makes a 1-0 record worth odds 3:1
    (``400 log10 3 = 190.8`` points) instead of infinity, and is the classical
    small-sample correction of an empirical log-odds (its bias is ``O(1/n^2)``
    instead of ``O(1/n)``, Gart & Zweifel 1967; it is also exactly the posterior
    mode of the log-odds under a Jeffreys Beta(1/2, 1/2) prior on the win
    probability).  ``pseudo_count=0`` reproduces the
    seed's equations verbatim and raises :class:`ValueError` when some pair has
    a side that never scored.

    Disconnected players: the differences fix ratings only inside a connected
    component of the "played" graph, so every component is anchored at its
    lowest-index player (for a connected history this is exactly ``R_1 =
    anchor``); players without games get ``anchor``.

    This is *not* exactly AverageElo: it is the point where Elo's expected
    update vanishes for every pair (the seed's derivation), i.e. the limit of
    many repetitions, whereas AverageElo of a finite history with a small K
    stays close to the initial ratings.
    """
    _check_scale(None, scale)
    check_param("pseudo_count", pseudo_count, "nonnegative")
    check_param("anchor", anchor, "finite")
    a, b, w_ab, w_ba = pair_table(games, n_players, outcomes=outcomes)
    _, _, _, n = _as_games(games, outcomes, n_players)
    return lsq_solve(n, a, b, w_ab, w_ba, float(anchor), float(pseudo_count), float(scale))


def pagerank(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    damping: float = 0.85,
    tol: float = 1e-12,
    max_iter: int = 10_000,
) -> FloatArray:
    """PageRank of the games graph (a comparator of [CuffedElo], "Results").

    Every game adds an edge ``loser -> winner`` of weight 1 (a draw: 1/2 each
    way), so a player is important when beaten players of importance "vote"
    for it.  With damping ``d`` (0.85, Brin & Page) and ``n`` players::

        p = (1 - d)/n + d (M p + (sum of p over players who never lost) / n)

    where ``M[i, j]`` is the share of ``j``'s losses that went to ``i``; a
    player who never lost (no out-edge) spreads its weight uniformly.  Solved by
    power iteration until the L1 change is below ``tol``.  Returns the
    stationary distribution (sums to 1; larger is stronger).
    """
    check_param("damping", damping, "open_unit")
    check_param("tol", tol, "positive")
    a, b, w_ab, w_ba = pair_table(games, n_players, outcomes=outcomes)
    _, _, _, n = _as_games(games, outcomes, n_players)
    return pagerank_solve(n, a, b, w_ab, w_ba, float(damping), float(tol), int(max_iter))


# ====================================================================== Glicko
def glicko_g(rd: FloatArray | float) -> FloatArray | float:
    """Glickman's ``g(RD) = 1 / sqrt(1 + 3 q^2 RD^2 / pi^2)``."""
    return 1.0 / np.sqrt(1.0 + 3.0 * GLICKO_Q**2 * np.square(rd) / math.pi**2)


def _glicko_period(
    r: FloatArray, rd: FloatArray, gi: IntArray, gj: IntArray, o: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """One rating period (Glickman 1999, step 2) from start-of-period ``r, rd``."""
    n = r.size
    g = np.asarray(glicko_g(rd), dtype=np.float64)
    e_i = 1.0 / (1.0 + 10.0 ** (-g[gj] * (r[gi] - r[gj]) / 400.0))
    e_j = 1.0 / (1.0 + 10.0 ** (-g[gi] * (r[gj] - r[gi]) / 400.0))
    u: FloatArray = np.add(np.bincount(gi, weights=g[gj] * (o - e_i), minlength=n),
                           np.bincount(gj, weights=g[gi] * ((1.0 - o) - e_j), minlength=n))
    v: FloatArray = np.add(np.bincount(gi, weights=g[gj] ** 2 * e_i * (1.0 - e_i), minlength=n),
                           np.bincount(gj, weights=g[gi] ** 2 * e_j * (1.0 - e_j), minlength=n))
    played = np.bincount(np.concatenate([gi, gj]), minlength=n) > 0
    inv_var = 1.0 / rd**2 + GLICKO_Q**2 * v  # 1/RD^2 + 1/d^2
    new_rd = np.where(played, 1.0 / np.sqrt(inv_var), rd)
    new_r = np.where(played, r + GLICKO_Q * u / inv_var, r)
    return new_r, new_rd


def glicko(
    games: Any,
    n_players: int | None = None,
    *,
    outcomes: Any = None,
    periods: Any = None,
    initial: float | npt.ArrayLike = 1500.0,
    rd: float | npt.ArrayLike = 350.0,
    c: float = 34.6,
    rd_max: float = 350.0,
) -> tuple[FloatArray, FloatArray]:
    """Classic two-player Glicko (Glickman 1999; a comparator of [CuffedElo]).

    Every rating period, from the ratings ``r`` and deviations ``RD`` at its
    start (step 2 of Glickman's "The Glicko system")::

        q = ln 10 / 400,  g(RD) = 1 / sqrt(1 + 3 q^2 RD^2 / pi^2)
        E_j = 1 / (1 + 10^(-g(RD_j) (r - r_j) / 400))
        1/d^2 = q^2 sum_j g(RD_j)^2 E_j (1 - E_j)
        r'  = r + q / (1/RD^2 + 1/d^2) sum_j g(RD_j) (s_j - E_j)
        RD' = (1/RD^2 + 1/d^2)^(-1/2)

    and before every later period (step 1) ``RD <- min(sqrt(RD^2 + c^2 t), rd_max)``
    for every player, ``t`` the number of periods elapsed.

    Parameters
    ----------
    periods:
        Rating-period label of each game (non-decreasing integers).  ``None``
        (default): all games form **one** rating period (the batch form of the
        paper's worked example; the ordering of games then does not matter).
    initial, rd:
        Ratings and deviations at the start of the first period (numbers or one
        value per player; default 1500 and 350, the unrated player).
    c:
        Growth of RD per elapsed period (34.6: the paper's example, RD 50 -> 350
        in 100 periods).
    rd_max:
        Cap of RD (350).

    Returns
    -------
    (r, RD) after the last period; players without games keep their values
    (with the RD growth of the periods they missed).
    """
    check_param("c", c, "nonnegative")
    check_param("rd_max", rd_max, "positive")
    gi, gj, o, n = _as_games(games, outcomes, n_players)
    r = _initial_vector(initial, n, "initial")
    dev = _initial_vector(rd, n, "rd")
    if np.any(dev <= 0):
        raise ValueError("rd must be positive")
    if periods is None:
        return _glicko_period(r, dev, gi, gj, o)
    per = np.asarray(periods)
    if per.shape != gi.shape or (per.size and not np.issubdtype(per.dtype, np.integer)):
        raise ValueError(f"periods must hold one integer per game ({gi.size})")
    per = per.astype(np.int64)
    if per.size > 1 and np.any(np.diff(per) < 0):
        raise ValueError("periods must be non-decreasing (games in time order)")
    starts = np.flatnonzero(np.r_[True, per[1:] != per[:-1]]) if per.size else np.zeros(0, int)
    ends = np.r_[starts[1:], per.size]
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if s > 0:
            t = float(per[s] - per[s - 1])
            dev = np.minimum(np.sqrt(dev**2 + c**2 * t), rd_max)
        r, dev = _glicko_period(r, dev, gi[s:e], gj[s:e], o[s:e])
    return r, dev


# ====================================================================== rounds as games
def round_games(lo: npt.ArrayLike, ties: Ties = "draw") -> tuple[IntArray, IntArray, FloatArray]:
    """The pair games of one round, in the order the order-dependent systems play them.

    ``lo`` are the participants' tie ranges in standings order (best first).
    Returns positions ``(a, b)`` with ``a < b`` -- row by row: ``(0,1), (0,2), ...,
    (0,N-1), (1,2), ...`` -- and the outcome of ``a``: 1 when ``a`` placed
    strictly better, 1/2 when they tie (``ties="draw"``; with ``"skip"`` tied
    pairs are left out).
    """
    lo_arr = np.asarray(lo, dtype=np.int64)
    a, b = np.triu_indices(lo_arr.size, 1)
    tie = lo_arr[a] == lo_arr[b]
    o = np.where(tie, 0.5, 1.0)
    if ties == "skip":
        keep = ~tie
        a, b, o = a[keep], b[keep], o[keep]
    return a.astype(np.int64), b.astype(np.int64), o


def check_ties(ties: str) -> None:
    """:class:`~podium.errors.ConfigError` unless ``ties`` is ``"draw"`` or ``"skip"``."""
    if ties not in ("draw", "skip"):
        raise ConfigError(f"ties must be 'draw' or 'skip', got {ties!r}")
