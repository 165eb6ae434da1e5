"""Shared helpers of the rating tests: random contest histories and conversions.

A history is a list of :class:`RawContest` (plain data), turned into
``podium.Contest`` objects or ``elo_mmr_py.Contest`` objects on demand, so that
the same history can be rated by Podium and by the reference.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from podium import Contest, Rater

Standing = tuple[str, int, int]


@dataclass(frozen=True)
class RawContest:
    standings: tuple[Standing, ...]
    name: str
    time_seconds: int = 0
    weight: float = 1.0
    perf_ceiling: float | None = None

    @property
    def everybody_tied(self) -> bool:
        return self.standings[0][2] == len(self.standings) - 1

    @property
    def handles(self) -> list[str]:
        return [h for h, _, _ in self.standings]


# ---------------------------------------------------------------------- tie groups
def groups_of(standings: Sequence[Standing]) -> list[list[str]]:
    """Tie groups, best first."""
    groups: list[list[str]] = []
    last_lo = None
    for h, lo, _ in standings:
        if lo != last_lo:
            groups.append([])
            last_lo = lo
        groups[-1].append(h)
    return groups


def standings_from_groups(groups: Sequence[Sequence[str]]) -> tuple[Standing, ...]:
    out: list[Standing] = []
    pos = 0
    for g in groups:
        if not g:
            continue
        lo, hi = pos, pos + len(g) - 1
        out.extend((h, lo, hi) for h in g)
        pos = hi + 1
    return tuple(out)


# ---------------------------------------------------------------------- strategies
HANDLE_POOL = [f"h{k:02d}" for k in range(40)]


@st.composite
def raw_contest(
    draw: Any,
    *,
    name: str,
    time_seconds: int,
    pool: Sequence[str] = HANDLE_POOL,
    min_players: int = 2,
    max_players: int = 30,
    weights: bool = False,
    ceilings: bool = False,
    all_ties: bool = True,
) -> RawContest:
    max_players = min(max_players, len(pool))
    players = draw(
        st.lists(st.sampled_from(list(pool)), min_size=min_players, max_size=max_players,
                 unique=True)
    )
    n = len(players)
    if all_ties and draw(st.integers(0, 11)) == 0:
        groups = [players]
    else:
        # 0 continues the current tie group; anything else starts a new one
        cuts = draw(st.lists(st.integers(0, 3), min_size=n - 1, max_size=n - 1))
        groups = [[players[0]]]
        for h, c in zip(players[1:], cuts, strict=True):
            if c == 0:
                groups[-1].append(h)
            else:
                groups.append([h])
    weight = 1.0
    if weights:
        weight = draw(st.one_of(st.just(1.0), st.floats(0.5, 2.0)))
    ceiling = None
    if ceilings:
        ceiling = draw(st.one_of(st.none(), st.integers(1300, 2300).map(float)))
    return RawContest(standings_from_groups(groups), name, time_seconds, weight, ceiling)


@st.composite
def histories(
    draw: Any,
    *,
    min_contests: int = 1,
    max_contests: int = 8,
    pool: Sequence[str] = HANDLE_POOL,
    min_players: int = 2,
    max_players: int = 30,
    weights: bool = False,
    ceilings: bool = False,
    all_ties: bool = True,
    day_gaps: bool = True,
) -> list[RawContest]:
    """1-8 contests of 2-30 players from a pool of 40 handles, random contiguous tie
    groups, nondecreasing integer times (sometimes days apart), occasionally a
    contest where everybody ties; optional random weights in [0.5, 2] and ceilings."""
    k = draw(st.integers(min_contests, max_contests))
    t = draw(st.integers(0, 2_000_000_000))
    out = []
    for c in range(k):
        if c:
            gaps = [st.just(0), st.integers(1, 7200)]
            if day_gaps:
                gaps.append(st.integers(86_400, 40 * 86_400))
            t += draw(st.one_of(*gaps))
        out.append(
            draw(raw_contest(name=f"c{c}", time_seconds=t, pool=pool, min_players=min_players,
                             max_players=max_players, weights=weights, ceilings=ceilings,
                             all_ties=all_ties))
        )
    return out


# ---------------------------------------------------------------------- conversions
def to_podium(history: Iterable[RawContest]) -> list[Contest]:
    return [
        Contest(list(c.standings), name=c.name, time_seconds=c.time_seconds, weight=c.weight,
                perf_ceiling=c.perf_ceiling)
        for c in history
    ]


def to_reference(history: Iterable[RawContest]) -> list[Any]:
    import elo_mmr_py as e

    return [
        e.Contest(list(c.standings), name=c.name, time_seconds=c.time_seconds, weight=c.weight,
                  perf_ceiling=c.perf_ceiling)
        for c in history
    ]


def from_podium(c: Contest) -> RawContest:
    return RawContest(tuple(c.standings), c.name, c.time_seconds, c.weight, c.perf_ceiling)


def rate_podium(history: Iterable[RawContest], system: str = "mmr", **params: Any) -> Rater:
    r = Rater(system, **params)
    r.extend(to_podium(history))
    return r


#: The reference's treatment of a round in which everybody tied: skipped (multi-skill,
#: elo-mmr-py); Podium rates such a round unless told ``all_tied="skip"``.
REFERENCE_PARAMS: dict[str, Any] = {"all_tied": "skip"}


def rate_as_reference(history: Iterable[RawContest], system: str = "mmr",
                      **params: Any) -> Rater:
    """:func:`rate_podium` with the reference's skip of everybody-tied rounds
    (:data:`REFERENCE_PARAMS`), for comparisons with elo-mmr-py."""
    return rate_podium(history, system, **REFERENCE_PARAMS, **params)


def with_standings(c: RawContest, groups: Sequence[Sequence[str]]) -> RawContest:
    return replace(c, standings=standings_from_groups(groups))


def round_half_away(x: float) -> int:
    """Rust's ``f64::round``: halves away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def rounds_to(x: float, expected: int, slack: float = 1e-6) -> bool:
    """``x`` rounds to ``expected``, accepting either side when ``x`` is within
    ``slack`` of a rounding boundary (the reference rounds its own, slightly
    different, float)."""
    if round_half_away(x) == expected:
        return True
    return abs(abs(x - expected) - 0.5) <= slack


def hyp(max_examples: int) -> settings:
    """Hypothesis settings for the rating tests: no deadline (numba's first calls compile
    or load from cache), ``max_examples`` scaled by ``$PODIUM_TEST_EXAMPLES_SCALE``
    (default 1) for longer bug hunts."""
    scale = float(os.environ.get("PODIUM_TEST_EXAMPLES_SCALE", "1"))
    return settings(
        max_examples=max(1, int(max_examples * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
    )
