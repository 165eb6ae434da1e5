"""A matchmaking queue: players join and leave; matches of a given shape form as soon as
enough players are close enough in rating, and the allowed gap widens as they wait.

Each waiting player ``i`` accepts a match whose players' ratings span at most

.. math::

    s_i(t) = \\min(s_0 + r\\,(t - t_i),\\ s_{\\max})

(``t_i`` its join time, ``s_0`` the initial spread, ``r`` the widening per second,
``s_max`` the cap): the linear widening with waiting time of FAForever's ladder
(a search threshold that widens from a start time to a maximum).  A match takes
``k = teams * team_size`` players; :meth:`Matchmaker.poll` serves the players in order
of arrival: for the longest-waiting player it takes, among the windows of ``k``
consecutive players in rating order that contain it (the groups of ``k`` with the
smallest spread that do), the one of smallest spread, and forms the match if that
spread is within every member's ``s_i(t)``; the match's teams are
:func:`~podium.matchmaking.balance`'s split.  Then the next player in order of
arrival, until nobody can be matched.  A player waiting alone for the others stays in
the queue; nothing is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from podium.errors import PodiumError
from podium.matchmaking.balance import balance, resolve_system
from podium.systems import RatingSystem

__all__ = ["Match", "Matchmaker"]


@dataclass(frozen=True)
class Match:
    """A match the queue formed.

    Attributes
    ----------
    teams:
        The teams (lists of handles), balanced by :func:`~podium.matchmaking.balance`.
    match_quality:
        The match quality of that split.
    spread:
        ``max mu - min mu`` of its players.
    waited:
        Seconds each player waited (``handle -> seconds``).
    time:
        When it formed (the ``now`` of :meth:`Matchmaker.poll`).
    p_first:
        Each team's probability of winning (the prediction of the split).
    """

    teams: list[list[str]]
    match_quality: float
    spread: float
    waited: dict[str, float]
    time: float
    p_first: list[float]


class Matchmaker:
    """A queue forming matches of ``teams`` teams of ``team_size`` players.

    Parameters
    ----------
    system:
        The rating system (name or object) whose ratings and model are used.
    ratings:
        ``handle -> (mu, sigma, contests played)`` of known players (a newcomer gets
        the system's prior); :meth:`join` may give a player's rating instead.
    teams, team_size:
        The match shape: ``teams >= 2`` teams of ``team_size >= 1`` players.
    spread:
        ``s_0``: the rating spread every player accepts at once (>= 0).
    widen:
        ``r``: how much the accepted spread grows per second of waiting (>= 0).
    max_spread:
        ``s_max``: the largest spread anyone accepts (default: no cap).
    """

    def __init__(self, system: str | RatingSystem,
                 ratings: Mapping[str, tuple[float, float, int]] | None = None, *,
                 teams: int = 2, team_size: int = 1, spread: float = 100.0,
                 widen: float = 5.0, max_spread: float = math.inf) -> None:
        self.system = resolve_system(system)
        for name, value in (("teams", teams), ("team_size", team_size)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PodiumError(f"{name} must be a positive integer, got {value!r}")
        if teams < 2:
            raise PodiumError(f"teams must be at least 2, got {teams}")
        for name, x in (("spread", spread), ("widen", widen), ("max_spread", max_spread)):
            if isinstance(x, bool) or not isinstance(x, int | float) or not x >= 0 \
                    or math.isnan(x):
                raise PodiumError(f"{name} must be a number >= 0, got {x!r}")
        self.teams = teams
        self.team_size = team_size
        self.spread = float(spread)
        self.widen = float(widen)
        self.max_spread = float(max_spread)
        self._ratings = dict(ratings or {})
        self._prior = self.system.newcomer()
        self._joined: dict[str, float] = {}
        self._rating: dict[str, tuple[float, float, int]] = {}

    @property
    def match_size(self) -> int:
        """Players per match, ``teams * team_size``."""
        return self.teams * self.team_size

    def __len__(self) -> int:
        return len(self._joined)

    def __contains__(self, handle: object) -> bool:
        return handle in self._joined

    def waiting(self) -> list[str]:
        """The waiting players, in order of arrival."""
        return list(self._joined)

    def join(self, handle: str, now: float,
             rating: tuple[float, float, int] | None = None) -> None:
        """Add ``handle`` to the queue at time ``now`` (seconds), with ``rating`` or
        else its known rating (else the newcomer prior)."""
        if not isinstance(handle, str) or not handle:
            raise PodiumError(f"a player must be a non-empty string, got {handle!r}")
        if handle in self._joined:
            raise PodiumError(f"player {handle!r} is already in the queue")
        if not math.isfinite(now):
            raise PodiumError(f"now must be a finite time, got {now!r}")
        if rating is None:
            known = self._ratings.get(handle)
            rating = known if known is not None else (self._prior[0], self._prior[1], 0)
        mu, sigma, played = float(rating[0]), float(rating[1]), int(rating[2])
        if not (math.isfinite(mu) and math.isfinite(sigma) and sigma >= 0):
            raise PodiumError(f"player {handle!r}: the rating must be finite with sigma "
                              f">= 0, got {rating!r}")
        self._joined[handle] = float(now)
        self._rating[handle] = (mu, sigma, played)

    def leave(self, handle: str) -> bool:
        """Remove ``handle``; False if it was not waiting."""
        if handle not in self._joined:
            return False
        del self._joined[handle]
        del self._rating[handle]
        return True

    def allowed_spread(self, handle: str, now: float) -> float:
        """``s_i(now) = min(spread + widen * waited, max_spread)`` of a waiting player."""
        waited = max(0.0, now - self._joined[handle])
        return min(self.spread + self.widen * waited, self.max_spread)

    def poll(self, now: float) -> list[Match]:
        """Form every match the queue allows at time ``now`` (see the module
        docstring); the players matched leave the queue."""
        k = self.match_size
        out: list[Match] = []
        while len(self._joined) >= k:
            match = self._next_match(now, k)
            if match is None:
                break
            out.append(match)
        return out

    def _next_match(self, now: float, k: int) -> Match | None:
        handles = list(self._joined)
        mu = np.array([self._rating[h][0] for h in handles])
        allowed = np.array([self.allowed_spread(h, now) for h in handles])
        order = np.argsort(mu, kind="stable")
        pos = np.empty_like(order)
        pos[order] = np.arange(order.size)
        sorted_mu = mu[order]
        window_spread = sorted_mu[k - 1:] - sorted_mu[:order.size - k + 1]
        for anchor in range(len(handles)):  # in order of arrival
            p = int(pos[anchor])
            lo, hi = max(0, p - k + 1), min(p, order.size - k)
            j = lo + int(np.argmin(window_spread[lo:hi + 1]))
            members = order[j:j + k]
            if window_spread[j] <= allowed[members].min():
                return self._form([handles[i] for i in sorted(members.tolist())],
                                  float(window_spread[j]), now)
        return None

    def _form(self, players: list[str], spread: float, now: float) -> Match:
        split = balance(self.system, players, self._rating, teams=self.teams)
        waited = {h: now - self._joined[h] for h in players}
        for h in players:
            self.leave(h)
        return Match(split.teams, split.match_quality, spread, waited, now,
                     split.prediction.p_first.tolist())
