"""A team as one entity: the team rule of the systems without a team model of their own.

cfsys, codeforces, tcsys, glicko, bar, elosrm/srmfix and the pairwise family rate a
team round (:attr:`RoundInput.team_offsets <podium.systems.base.RoundInput.team_offsets>`
set) through the functions of this module (docs/teams.md, "The other systems: a team as
one entity"):

1. every team ``t`` becomes one **entity** with the weighted mean rating and the
   root-weighted-mean-square uncertainty of its members (:func:`entity_ratings`),
   the weighted mean of their round counts (rounded down) and of their times since
   the last round (:func:`entity_counts`), and the team's tie range;
2. the round of entities (a :class:`~podium.systems.base.RoundInput` of ``T`` rows,
   :func:`entity_round`) is rated by the system's own individual update;
3. each member takes its weight's share of the entity's change
   (:func:`member_ratings`): ``mu_i' = mu_i + w_i (mu_T' - mu_T)`` and, on the log
   scale of the variance, ``sigma_i'^2 = sigma_i^2 (sigma_T'^2 / sigma_T^2)^{w_i}``;
   its performance is the entity's.

:func:`rate_as_entities` does the three steps for a system whose update keeps no
per-player state indexed by player.  The global pairwise systems (elo-lsq, pagerank)
keep every game between players and use :func:`member_games` instead: a game between
two teams is a game between every pair of members across them, of weight
``w_i w_j``.

Every function works on plain arrays in the round's (standings) order; team ``t`` is
rows ``offsets[t]:offsets[t + 1]`` (``T + 1`` offsets, no team empty).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.systems.base.rounds import RoundInput, RoundOutput

__all__ = [
    "team_of",
    "weighted_means",
    "entity_ratings",
    "entity_counts",
    "entity_contest",
    "entity_round",
    "member_ratings",
    "round_half_away",
    "rate_as_entities",
    "member_games",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: A weighted mean of round counts is rounded down after adding this, so that members
#: with equal counts give that count whatever the rounding of the weighted sum.
_COUNT_SLACK = 1e-9


def team_of(offsets: npt.ArrayLike) -> IntArray:
    """Per row: the index of its team.

    Parameters
    ----------
    offsets:
        ``T + 1`` row offsets (team ``t`` is rows ``offsets[t]:offsets[t + 1]``).

    Returns
    -------
    numpy.ndarray
        ``int64`` array of ``offsets[-1]`` team indices.
    """
    off = np.asarray(offsets, dtype=np.int64)
    return np.repeat(np.arange(off.size - 1, dtype=np.int64), np.diff(off))


def weighted_means(values: npt.ArrayLike, weight: npt.ArrayLike,
                   offsets: npt.ArrayLike) -> FloatArray:
    """Per team: ``sum_i w_i x_i / sum_i w_i`` over its rows.

    A one-member team of weight 1 gives its member's value exactly.

    Parameters
    ----------
    values, weight:
        Per row: the value ``x_i`` and the member weight ``w_i`` (> 0).
    offsets:
        ``T + 1`` row offsets, no team empty.

    Returns
    -------
    numpy.ndarray
        ``T`` weighted means.
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    starts = np.asarray(offsets, dtype=np.int64)[:-1]
    if starts.size == 0:
        return np.zeros(0)
    out: FloatArray = np.add.reduceat(w * x, starts) / np.add.reduceat(w, starts)
    return out


def entity_ratings(mu: npt.ArrayLike, sigma: npt.ArrayLike, weight: npt.ArrayLike,
                   offsets: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """The rating of each team's entity: ``(mu_T, sigma_T)``.

    ``mu_T = sum_i w_i mu_i / sum_i w_i`` and
    ``sigma_T = sqrt(sum_i w_i sigma_i^2 / sum_i w_i)``.

    Parameters
    ----------
    mu, sigma, weight:
        Per row: the member's rating, its uncertainty and its weight.
    offsets:
        ``T + 1`` row offsets.

    Returns
    -------
    tuple of numpy.ndarray
        ``T`` means and ``T`` uncertainties.
    """
    s = np.asarray(sigma, dtype=np.float64)
    return (weighted_means(mu, weight, offsets),
            np.sqrt(weighted_means(s * s, weight, offsets)))


def entity_counts(played: npt.ArrayLike, delta_seconds: npt.ArrayLike, weight: npt.ArrayLike,
                  offsets: npt.ArrayLike) -> tuple[IntArray, FloatArray]:
    """The experience of each team's entity: ``(played_T, delta_seconds_T)``.

    ``played_T`` is the weighted mean of the members' earlier rated rounds, rounded
    down (a team of a veteran and a newcomer counts as half as experienced as the
    veteran; members with equal counts give that count); ``delta_seconds_T`` the
    weighted mean of the members' times since their last round.

    Parameters
    ----------
    played, delta_seconds, weight:
        Per row.
    offsets:
        ``T + 1`` row offsets.

    Returns
    -------
    tuple of numpy.ndarray
        ``T`` round counts (``int64``) and ``T`` times in seconds.
    """
    p = weighted_means(np.asarray(played, dtype=np.float64), weight, offsets)
    played_t = np.floor(p + _COUNT_SLACK).astype(np.int64)
    return played_t, weighted_means(delta_seconds, weight, offsets)


def entity_contest(contest: Contest, offsets: npt.ArrayLike) -> Contest:
    """The contest of the entities: one row per team, named after it (``"#t"`` when
    the contest has no team names), with the team's tie range and the contest's
    name, time, weight, performance ceiling and URL.

    Parameters
    ----------
    contest:
        The team contest (one row per member).
    offsets:
        Its ``T + 1`` row offsets.

    Returns
    -------
    Contest
        An individual contest of ``T`` rows.
    """
    off = np.asarray(offsets, dtype=np.int64)
    first = off[:-1]
    teams = contest.teams
    names = (teams.names if teams is not None and len(teams) == first.size
             else tuple(f"#{t}" for t in range(first.size)))
    return Contest.from_arrays(
        names, contest.lo[first], contest.hi[first], name=contest.name,
        time_seconds=contest.time_seconds, weight=contest.weight,
        perf_ceiling=contest.perf_ceiling, url=contest.url)


def _team_rows(rnd: RoundInput) -> tuple[IntArray, FloatArray]:
    """``(offsets, weight)`` of a team round (weights 1 when none are given)."""
    if rnd.team_offsets is None:
        raise ValueError("not a team round: RoundInput.team_offsets is None")
    off = np.asarray(rnd.team_offsets, dtype=np.int64)
    n = np.asarray(rnd.mu).size
    if off.ndim != 1 or off.size < 2 or off[0] != 0 or off[-1] != n or np.any(np.diff(off) <= 0):
        raise ValueError(f"team offsets must rise strictly from 0 to {n}, got {off.tolist()}")
    w = np.ones(n) if rnd.weight is None else np.asarray(rnd.weight, dtype=np.float64)
    if w.shape != (n,) or not np.all((w > 0.0) & (w <= 1.0)):
        raise ValueError(f"member weights must be {n} numbers in (0, 1]")
    return off, w


def entity_round(rnd: RoundInput, *, mu: npt.ArrayLike | None = None,
                 sigma: npt.ArrayLike | None = None) -> RoundInput:
    """The round of entities of a team round: a :class:`RoundInput` of ``T`` rows.

    Parameters
    ----------
    rnd:
        A team round (``team_offsets`` set).
    mu, sigma:
        The members' ratings to average instead of ``rnd.mu`` / ``rnd.sigma`` (a
        system that adjusts them first: a debutant's entry rating, the growth of an
        uncertainty with inactivity).

    Returns
    -------
    RoundInput
        The entity contest (:func:`entity_contest`), ``players`` the team indices
        ``0..T-1`` (scratch indices: the update must not read per-player state by
        them), the teams' tie ranges, :func:`entity_ratings` and
        :func:`entity_counts`; an individual round (no team offsets).

    Raises
    ------
    ValueError
        When ``rnd`` is not a team round or its offsets or weights are malformed.
    """
    off, w = _team_rows(rnd)
    first = off[:-1]
    mu_t, sigma_t = entity_ratings(rnd.mu if mu is None else mu,
                                   rnd.sigma if sigma is None else sigma, w, off)
    played_t, delta_t = entity_counts(rnd.played, rnd.delta_seconds, w, off)
    return RoundInput(
        contest=entity_contest(rnd.contest, off), players=np.arange(first.size, dtype=np.int64),
        lo=np.asarray(rnd.lo, dtype=np.int64)[first], hi=np.asarray(rnd.hi, dtype=np.int64)[first],
        mu=mu_t, sigma=sigma_t, played=played_t, delta_seconds=delta_t,
    )


def member_ratings(
    mu: npt.ArrayLike, sigma: npt.ArrayLike, weight: npt.ArrayLike, offsets: npt.ArrayLike,
    mu_t: npt.ArrayLike, sigma_t: npt.ArrayLike, new_mu_t: npt.ArrayLike,
    new_sigma_t: npt.ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Each member's new rating from its entity's change.

    ``mu_i' = mu_i + w_i (mu_T' - mu_T)`` and ``sigma_i' = sigma_i (sigma_T' /
    sigma_T)^{w_i}``, i.e. ``log sigma_i'^2 = log sigma_i^2 + w_i (log sigma_T'^2 -
    log sigma_T^2)``: the member takes its weight's share of the entity's change of
    ``mu`` and of ``log sigma^2``, so an uncertainty stays positive without a floor.
    An entity whose uncertainty does not change leaves its members' unchanged; one
    whose uncertainty was 0 (all its members certain) gives each member
    ``sqrt(w_i) sigma_T'``.

    Parameters
    ----------
    mu, sigma, weight:
        Per row: the member's rating and uncertainty before the round, its weight.
    offsets:
        ``T + 1`` row offsets.
    mu_t, sigma_t, new_mu_t, new_sigma_t:
        Per team: the entity's rating before (:func:`entity_ratings`) and after
        the round.

    Returns
    -------
    tuple of numpy.ndarray
        The members' new ``mu`` and ``sigma``.
    """
    tof = team_of(offsets)
    w = np.asarray(weight, dtype=np.float64)
    m0 = np.asarray(mu_t, dtype=np.float64)
    s0 = np.asarray(sigma_t, dtype=np.float64)
    s1 = np.asarray(new_sigma_t, dtype=np.float64)
    new_mu = np.asarray(mu, dtype=np.float64) + w * (np.asarray(new_mu_t) - m0)[tof]
    moved = s1 != s0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(moved & (s0 > 0.0), s1 / s0, 1.0)
    new_sigma = np.asarray(sigma, dtype=np.float64) * ratio[tof] ** w
    from_zero = (moved & (s0 == 0.0))[tof]
    if from_zero.any():
        new_sigma[from_zero] = np.sqrt(w[from_zero]) * s1[tof][from_zero]
    return new_mu, new_sigma


def round_half_away(x: npt.ArrayLike) -> IntArray:
    """The nearest integers, halves away from zero (so gains and losses round alike).

    Parameters
    ----------
    x:
        Finite numbers.

    Returns
    -------
    numpy.ndarray
        ``int64``.
    """
    a = np.asarray(x, dtype=np.float64)
    return (np.sign(a) * np.floor(np.abs(a) + 0.5)).astype(np.int64)


def rate_as_entities(
    rnd: RoundInput, update: Callable[[RoundInput], RoundOutput], *,
    mu: npt.ArrayLike | None = None, sigma: npt.ArrayLike | None = None,
) -> RoundOutput:
    """Rate a team round as a round of entities (the three steps of the module).

    Parameters
    ----------
    rnd:
        A team round.
    update:
        The system's individual update of a round (for systems with per-player state
        the caller binds a state that is not indexed by the scratch ``players``).
    mu, sigma:
        The members' ratings the round starts from, when the system adjusts
        ``rnd.mu`` / ``rnd.sigma`` first (see :func:`entity_round`).

    Returns
    -------
    RoundOutput
        Per member: :func:`member_ratings` and the entity's performance; the
        warnings of the entity round.
    """
    off, w = _team_rows(rnd)
    mu0 = np.asarray(rnd.mu if mu is None else mu, dtype=np.float64)
    sig0 = np.asarray(rnd.sigma if sigma is None else sigma, dtype=np.float64)
    ent = entity_round(rnd, mu=mu0, sigma=sig0)
    out = update(ent)
    new_mu, new_sigma = member_ratings(mu0, sig0, w, off, ent.mu, ent.sigma, out.mu, out.sigma)
    perf = np.asarray(out.perf, dtype=np.float64)[team_of(off)]
    return RoundOutput(mu=new_mu, sigma=new_sigma, perf=perf, warnings=out.warnings)


def member_games(lo: npt.ArrayLike, offsets: npt.ArrayLike, weight: npt.ArrayLike,
                 ties: str = "draw") -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """The pair games of a team round: every pair of members of different teams.

    Parameters
    ----------
    lo:
        Per row: the ``lo`` of its team's tie range (standings order).
    offsets:
        ``T + 1`` row offsets.
    weight:
        Per row: the member weight.
    ties:
        ``"draw"``: members of tied teams draw (outcome 1/2); ``"skip"``: no game.

    Returns
    -------
    tuple of numpy.ndarray
        Positions ``(a, b)`` with ``a < b`` (row by row, as
        :func:`~podium.systems.pairwise.functional.round_games`), the outcome of ``a``
        (1: its team placed better, 1/2: tied) and the game's weight ``w_a w_b``.
        One-member teams of weight 1 give exactly the games of the individual round.
    """
    lo_a = np.asarray(lo, dtype=np.int64)
    w = np.asarray(weight, dtype=np.float64)
    tof = team_of(offsets)
    a, b = np.triu_indices(lo_a.size, 1)
    keep = tof[a] != tof[b]
    if ties == "skip":
        keep &= lo_a[a] != lo_a[b]
    a, b = a[keep].astype(np.int64), b[keep].astype(np.int64)
    o = np.where(lo_a[a] == lo_a[b], 0.5, 1.0)
    return a, b, o, w[a] * w[b]
