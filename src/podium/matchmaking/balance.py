"""Split a pool of players, some in parties, into the fairest teams.

:func:`balance` returns the split whose lobby has the best
:func:`~podium.predict.match_quality` (``1 - mean over pairs of teams of |2 P - 1|``,
``P`` the system's pairwise team win probability), with every party on one team and
team sizes differing by at most one (``n`` players in ``T`` teams: ``n mod T`` teams of
``ceil(n / T)``, the others of ``floor(n / T)``).  A party is a list of players who
queued together; a player in no party is a party of one (a *unit*).

* **Two teams, up to** :data:`EXACT_LIMIT` **players: the best split**, by enumerating
  every assignment of the units (the first unit's team fixed: the teams are
  interchangeable), ``2^(u - 1)`` of them for ``u`` units.  With two teams every split
  has the same total variance ``V_A + V_B``, so the best match quality is the split
  with the smallest ``|M_A - M_B|`` (the team means ``sum mu_i``) -- what BAR's
  teiserver brute-forces for two teams of up to 16 players, there with broken parties
  penalised rather than forbidden.
* **Larger pools or more teams: a local search** from a greedy start (units by
  decreasing size and rating, each to the team with the lowest mean that has room)
  and from :data:`RESTARTS` random feasible starts (2 beyond 128 units): repeatedly
  the best swap of two equal-size units between two teams by the match quality
  itself, until no swap improves it (the candidates of each unit: the two units of
  the other team nearest the ideal exchange); the best local optimum wins.  Seeded,
  so a pool always gets the same answer.  Measured: within 0.01 match quality of the
  best of 10^5 random splits for 64 players in 4 teams
  (``benchmarks/bench_matchmaking.py``).

Pools above :data:`MAX_POOL` players are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import erf  # type: ignore[import-untyped]

from podium.errors import PodiumError
from podium.outcomes import match_quality, win_probabilities
from podium.predict import TeamPrediction, performance_model, predict_teams, ratings_of
from podium.systems import RatingSystem, get_system

__all__ = ["EXACT_LIMIT", "MAX_POOL", "RESTARTS", "Balance", "balance", "balance_store",
           "resolve_system", "team_sizes"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Two-team pools up to this many players get the exactly best split.
EXACT_LIMIT = 16
#: The largest pool :func:`balance` takes.
MAX_POOL = 1000
#: Random starts of the local search besides the greedy one.
RESTARTS = 8


@dataclass(frozen=True)
class Balance:
    """The split :func:`balance` found.

    Attributes
    ----------
    teams:
        The teams, each a list of handles in the order the pool listed them; teams in
        the order of their first player in the pool.
    match_quality:
        ``predict_teams(system, teams, ratings).match_quality`` of this split.
    exact:
        True when the split is the best one (two teams of up to
        :data:`EXACT_LIMIT` players), False for the local search's.
    prediction:
        :func:`~podium.predict.predict_teams` of the split (teams named ``"team 1"``,
        ``"team 2"``, ...).
    """

    teams: list[list[str]]
    match_quality: float
    exact: bool
    prediction: TeamPrediction


def team_sizes(n_players: int, teams: int) -> list[int]:
    """The team sizes of ``n_players`` in ``teams`` teams: the first ``n mod T`` teams
    one larger, every size ``floor(n / T)`` or ``ceil(n / T)``."""
    base, extra = divmod(n_players, teams)
    return [base + 1] * extra + [base] * (teams - extra)


def resolve_system(system: str | RatingSystem) -> RatingSystem:
    """A system object from a name of ``podium systems`` (or the object itself);
    :class:`PodiumError` naming an unknown system."""
    if isinstance(system, RatingSystem):
        return system
    if not isinstance(system, str):
        raise PodiumError(f"system must be a system name or a RatingSystem, got {system!r}")
    try:
        return get_system(system)
    except PodiumError as exc:
        raise PodiumError(f"unknown system {system!r}: {exc}") from None


def _units(handles: Sequence[str], teams: int, parties: Sequence[Sequence[str]] | None
           ) -> tuple[list[str], list[list[int]]]:
    """The checked pool and its units (lists of pool indices; parties first, then the
    players in no party, each in pool order)."""
    if isinstance(handles, str) or not isinstance(handles, Sequence):
        raise PodiumError(f"handles must be a list of players, got {handles!r}")
    pool = list(handles)
    if isinstance(teams, bool) or not isinstance(teams, int) or teams < 2:
        raise PodiumError(f"teams must be an integer >= 2, got {teams!r}")
    if len(pool) > MAX_POOL:
        raise PodiumError(f"the pool has {len(pool)} players, more than the limit of "
                          f"{MAX_POOL} (podium.matchmaking.MAX_POOL)")
    index: dict[str, int] = {}
    for h in pool:
        if not isinstance(h, str) or not h:
            raise PodiumError(f"every player must be a non-empty string, got {h!r}")
        if h in index:
            raise PodiumError(f"player {h!r} is listed twice in the pool")
        index[h] = len(index)
    if teams > len(pool):
        raise PodiumError(f"{teams} teams but only {len(pool)} players: every team needs a "
                          "player")
    largest = team_sizes(len(pool), teams)[0]
    units: list[list[int]] = []
    in_party: dict[str, int] = {}
    for k, party in enumerate(parties or ()):
        if isinstance(party, str) or not isinstance(party, Sequence) or not party:
            raise PodiumError(f"party #{k + 1} must be a non-empty list of players, "
                              f"got {party!r}")
        members: list[int] = []
        for h in party:
            if h not in index:
                raise PodiumError(f"party #{k + 1}: player {h!r} is not in the pool")
            if h in in_party:
                where = ("twice in it" if in_party[h] == k
                         else f"also in party #{in_party[h] + 1}")
                raise PodiumError(f"party #{k + 1}: player {h!r} is {where}")
            in_party[h] = k
            members.append(index[h])
        if len(members) > largest:
            raise PodiumError(f"party #{k + 1} ({', '.join(party)}) has {len(members)} "
                              f"players, more than a team of {largest} "
                              f"({len(pool)} players in {teams} teams)")
        units.append(sorted(members))
    units.extend([i] for i, h in enumerate(pool) if h not in in_party)
    return pool, units


def balance(
    system: str | RatingSystem,
    handles: Sequence[str],
    ratings: Mapping[str, tuple[float, float, int]],
    teams: int = 2,
    parties: Sequence[Sequence[str]] | None = None,
    *,
    weight: float = 1.0,
) -> Balance:
    """The fairest split of ``handles`` into ``teams`` teams (see the module docstring).

    Parameters
    ----------
    system:
        The rating system (a name of ``podium systems`` or a system object): its
        performance model gives the win probabilities.
    handles:
        The pool: distinct non-empty handles, at most :data:`MAX_POOL`.
    ratings:
        ``handle -> (mu, sigma, contests played)`` of the known players (as
        ``Store.current_ratings`` returns); any other handle is a newcomer.
    teams:
        The number of teams, from 2 to the number of players.
    parties:
        Groups of handles of the pool that must play on one team (each at most a
        team's size; a player in at most one party).
    weight:
        The contest weight passed to the performance model (default 1).

    Returns
    -------
    Balance

    Raises
    ------
    PodiumError
        Naming the problem: an unknown system, a repeated player, a party larger than
        a team (or naming a player outside the pool, or a player twice), more teams
        than players, a pool above :data:`MAX_POOL`, or parties that no split into
        the team sizes can keep together.
    """
    sysm = resolve_system(system)
    pool, units = _units(handles, teams, parties)
    sizes = team_sizes(len(pool), teams)
    _check_weight(weight)
    mu, sigma, played, _ = ratings_of(sysm, pool, dict(ratings))
    model = performance_model(sysm, sigma, played, weight=float(weight))
    var = model.variance
    u_size = np.array([len(u) for u in units], dtype=np.int64)
    u_mu = np.array([mu[u].sum() for u in units])
    u_var = np.array([var[u].sum() for u in units])
    exact = teams == 2 and len(pool) <= EXACT_LIMIT
    if exact:
        team_of = _best_two_way(u_size, u_mu, sizes)
    else:
        team_of = _local_search(u_size, u_mu, u_var, sizes, model.kind)
    if team_of is None:
        raise PodiumError(
            f"the parties cannot be kept together in teams of sizes "
            f"{', '.join(map(str, sizes))} (party sizes "
            f"{', '.join(str(len(u)) for u in units if len(u) > 1)}); "
            "split a party or change the number of teams")
    member_team = np.empty(len(pool), dtype=np.int64)
    for u, t in zip(units, team_of.tolist(), strict=True):
        member_team[u] = t
    order = sorted(range(teams), key=lambda t: int(np.flatnonzero(member_team == t)[0]))
    split = [[pool[i] for i in np.flatnonzero(member_team == t).tolist()] for t in order]
    pred = predict_teams(sysm, [(f"team {k + 1}", members) for k, members in
                                enumerate(split)], dict(ratings), weight=weight)
    return Balance(split, pred.match_quality, exact, pred)


def balance_store(store: Any, players: Sequence[str], teams: int = 2,
                  parties: Sequence[Sequence[str]] | None = None, *,
                  weight: float = 1.0) -> Balance:
    """:func:`balance` of ``players`` from a store's current ratings and system.

    ``store`` is a :class:`podium.store.Store` (its ``system``, ``current_ratings`` and,
    in a store with case-insensitive handles, ``handle_spellings``: each handle is
    spelled as the store first saw it, so that ``Tourist`` and ``tourist`` are one
    player).  Arguments and errors as for :func:`balance`.
    """
    from podium.core.guards import handle_key

    spelling: dict[str, str] = {}
    if getattr(store, "case_insensitive_handles", False) is True:
        spelling = store.handle_spellings(players)

    def spell(h: str) -> str:
        return spelling.get(handle_key(h), h) if spelling and isinstance(h, str) else h

    pool = [spell(h) for h in players]
    groups = [[spell(h) for h in p] for p in parties or ()]
    return balance(store.system, pool, store.current_ratings(pool), teams, groups or None,
                   weight=weight)


def _check_weight(weight: object) -> None:
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not (
            np.isfinite(weight) and weight > 0):
        raise PodiumError(f"weight must be finite and positive, got {weight!r}")


def _best_two_way(u_size: IntArray, u_mu: FloatArray, sizes: list[int]) -> IntArray | None:
    """Team (0 or 1) of each unit in the two-team split of the right sizes with the
    smallest ``|M_0 - M_1|``; the first unit on team 0, ties to the first split in
    enumeration order (subset ``k`` of units 1.. puts unit ``j + 1`` on team 1 when
    bit ``j`` of ``k`` is set); ``None`` when no split has the sizes.  The sums of all
    ``2^(u - 1)`` subsets are built by doubling (``O(2^u)``)."""
    size_1 = np.zeros(1, dtype=np.int64)
    mean_1 = np.zeros(1)
    for j in range(1, u_size.size):
        size_1 = np.concatenate([size_1, size_1 + u_size[j]])
        mean_1 = np.concatenate([mean_1, mean_1 + u_mu[j]])
    ok = (size_1 == sizes[0]) | (size_1 == sizes[-1])
    if not ok.any():
        return None
    gap = np.abs(float(u_mu.sum()) - 2.0 * mean_1)
    gap[~ok] = np.inf
    best = int(np.argmin(gap))
    return np.array([0] + [(best >> j) & 1 for j in range(u_size.size - 1)], dtype=np.int64)


def _quality(t_mu: FloatArray, t_var: FloatArray, kind: str) -> float:
    return match_quality(win_probabilities(t_mu, t_var, kind))  # type: ignore[arg-type]


def _start(u_size: IntArray, order: IntArray, sizes: list[int], u_mu: FloatArray
           ) -> IntArray | None:
    """Units in ``order`` (largest first), each to the team with room for it whose
    mean is lowest (ties: most room); ``None`` if some unit fits nowhere."""
    room = np.array(sizes, dtype=np.int64)
    means = np.zeros(len(sizes))
    team_of = np.full(u_size.size, -1, dtype=np.int64)
    for u in order.tolist():
        fits = np.flatnonzero(room >= u_size[u])
        if not fits.size:
            return None
        t = int(fits[np.lexsort((-room[fits], means[fits]))[0]])
        team_of[u] = t
        room[t] -= u_size[u]
        means[t] += u_mu[u]
    return team_of


def _local_search(u_size: IntArray, u_mu: FloatArray, u_var: FloatArray, sizes: list[int],
                  kind: str) -> IntArray | None:
    """The best local optimum of the swap search from the greedy start and
    :data:`RESTARTS` random starts (2 beyond 128 units; seeded); ``None`` when no
    start keeps the parties together."""
    rng = np.random.default_rng(0)
    greedy = np.lexsort((-u_mu, -u_size))
    starts = [greedy]
    for _ in range(RESTARTS if u_size.size <= 128 else 2):
        perm = rng.permutation(u_size.size)
        starts.append(perm[np.argsort(-u_size[perm], kind="stable")])
    best: IntArray | None = None
    best_q = -1.0
    for order in starts:
        team_of = _start(u_size, order, sizes, u_mu)
        if team_of is None:
            continue
        team_of, q = _improve(team_of, u_size, u_mu, u_var, len(sizes), kind)
        if q > best_q + 1e-15:
            best, best_q = team_of, q
    return best


def _improve(team_of: IntArray, u_size: IntArray, u_mu: FloatArray, u_var: FloatArray,
             n_teams: int, kind: str) -> tuple[IntArray, float]:
    """Best-improvement swaps of two equal-size units between two teams until none
    raises the match quality; returns the assignment and its quality.

    For teams ``a`` and ``b`` a swap of ``u`` (in ``a``) and ``v`` (in ``b``) changes
    ``M_a - M_b`` by ``-2 (mu_u - mu_v)``; the candidates are, for each ``u``, the two
    units of ``b`` (of ``u``'s size) whose ``mu_v`` is nearest ``mu_u - (M_a - M_b) / 2``
    (by binary search: ``O(n log n)`` per pair of teams rather than every pair of
    units), each scored by the match quality of the whole lobby."""
    team_of = team_of.copy()
    t_mu, t_var = _team_sums(team_of, u_mu, u_var, n_teams)
    q = _quality(t_mu, t_var, kind)
    pairs = np.triu_indices(n_teams, 1)
    while True:
        best_gain, best_swap = 1e-12, None
        for a, b in zip(*pairs, strict=True):
            ia, ib = _candidates(np.flatnonzero(team_of == a), np.flatnonzero(team_of == b),
                                 u_size, u_mu, 0.5 * float(t_mu[a] - t_mu[b]))
            if not ia.size:
                continue
            d_mu = u_mu[ib] - u_mu[ia]
            d_var = u_var[ib] - u_var[ia]
            cand_mu: FloatArray = np.repeat(t_mu[None, :], ia.size, axis=0)
            cand_var: FloatArray = np.repeat(t_var[None, :], ia.size, axis=0)
            cand_mu[:, a] += d_mu
            cand_mu[:, b] -= d_mu
            cand_var[:, a] += d_var
            cand_var[:, b] -= d_var
            quality = _batch_quality(cand_mu, cand_var, kind)
            k = int(np.argmax(quality))
            if quality[k] - q > best_gain:
                best_gain = float(quality[k] - q)
                best_swap = (int(ia[k]), int(ib[k]), int(a), int(b))
        if best_swap is None:
            return team_of, q
        u, v, team_u, team_v = best_swap  # u leaves team_u for team_v, v the other way
        team_of[u] = team_v
        team_of[v] = team_u
        t_mu, t_var = _team_sums(team_of, u_mu, u_var, n_teams)
        q = _quality(t_mu, t_var, kind)


def _candidates(ua: IntArray, ub: IntArray, u_size: IntArray, u_mu: FloatArray,
                half_gap: float) -> tuple[IntArray, IntArray]:
    """Swap candidates ``(u, v)``, ``u`` of ``ua`` and ``v`` of ``ub`` of equal size:
    for each ``u`` the two ``v`` with ``mu_v`` nearest ``mu_u - half_gap``."""
    out_a: list[IntArray] = []
    out_b: list[IntArray] = []
    for size in np.intersect1d(u_size[ua], u_size[ub]).tolist():
        a = ua[u_size[ua] == size]
        b = ub[u_size[ub] == size]
        b = b[np.argsort(u_mu[b], kind="stable")]
        j = np.searchsorted(u_mu[b], u_mu[a] - half_gap)
        for k in (np.clip(j - 1, 0, b.size - 1), np.clip(j, 0, b.size - 1)):
            out_a.append(a)
            out_b.append(b[k])
    if not out_a:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(out_a), np.concatenate(out_b)


def _team_sums(team_of: IntArray, u_mu: FloatArray, u_var: FloatArray, n_teams: int
               ) -> tuple[FloatArray, FloatArray]:
    """Each team's ``sum mu`` and ``sum v`` over its units."""
    return (np.bincount(team_of, u_mu, minlength=n_teams).astype(np.float64),
            np.bincount(team_of, u_var, minlength=n_teams).astype(np.float64))


def _batch_quality(t_mu: FloatArray, t_var: FloatArray, kind: str) -> FloatArray:
    """:func:`~podium.predict.match_quality` of many candidate lobbies at once (rows
    of team means and variances): ``1 - mean |2 F(z) - 1|`` over the pairs, with
    ``|2 F(z) - 1| = erf(|z| / sqrt 2)`` (normal) or ``tanh(pi |z| / (2 sqrt 3))``
    (logistic)."""
    a, b = np.triu_indices(t_mu.shape[1], 1)
    z = np.abs(t_mu[:, a] - t_mu[:, b]) / np.sqrt(t_var[:, a] + t_var[:, b])
    gap = erf(z / np.sqrt(2.0)) if kind == "gaussian" else np.tanh(
        0.5 * np.pi / np.sqrt(3.0) * z)
    return np.asarray(1.0 - gap.mean(axis=1), dtype=np.float64)
