"""Matchmaking: fair teams from a pool of players (:func:`balance`) and a queue that
forms matches as players arrive (:class:`Matchmaker`).  docs/lobbies.md is the guide."""

from __future__ import annotations

from podium.matchmaking.balance import (
    EXACT_LIMIT,
    MAX_POOL,
    RESTARTS,
    Balance,
    balance,
    balance_store,
    resolve_system,
    team_sizes,
)
from podium.matchmaking.queue import Match, Matchmaker

__all__ = ["EXACT_LIMIT", "MAX_POOL", "RESTARTS", "Balance", "Match", "Matchmaker", "balance",
           "balance_store", "resolve_system", "team_sizes"]
