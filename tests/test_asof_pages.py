"""The leaderboard as of a time under time drift (:func:`podium.store.asof.ranked_page`:
the players walked by ``mu`` until the system's :meth:`~podium.systems.RatingSystem.
as_of_bound` rules out every row left) against the full computation: every player's
as-of rating (the system's public ``drift`` and ``display_rating`` on the store's
stored ratings), the filters applied, sorted by display rating then handle.

Small stores of every system with time drift (Elo-MMR's presets and MMR-plus, several
``drift_per_day``, ``display_sigmas < 0`` for a system without a bound), with random
contest times, twins who always tie (equal ``mu``: ties across the walk's chunks),
random read times from the latest contest to decades later, pages anywhere, the
provisional rule, ``min_contests``, the activity window and a finished season; the
walk's first chunk is shrunk so that it takes many chunks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import podium.store.asof as A
from podium import Contest
from podium.store import Store
from podium.store.ladders import LadderSettings
from podium.store.models import LeaderboardRow
from podium.systems import get_system

T0 = 1_500_000_000
DAY = 86_400

#: (system, params): every system with time drift, and one without a bound.
DRIFTING = [
    ("mmr", {"drift_per_day": 25.0}),
    ("mmr", {"drift_per_day": 0.3}),
    ("mmr-fast", {"drift_per_day": 4.0}),
    ("mmx", {"drift_per_day": 60.0}),
    ("mmr-plus", {"drift_per_day": 9.0}),
    ("mmr", {"drift_per_day": 25.0, "display_sigmas": -1.0}),  # drift raises the rating
]


def history(seed: int, players: int = 36, rounds: int = 14) -> list[Contest]:
    """Contests at random times (gaps of an hour to four months): half the players play
    every round (close uncertainties: the bound is tight for them), the others at
    random, and pairs of twins always play together and tie (equal ratings)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(1500.0, 350.0, players)
    twins = [(f"twin{k}a", f"twin{k}b") for k in range(3)]
    t = T0
    out = []
    for r in range(rounds):
        t += int(rng.integers(3600, 120 * DAY))
        here = [i for i in range(players) if i % 2 == 0 or rng.random() < 0.4]
        perf = {f"p{i:02d}": skill[i] + rng.normal(0.0, 250.0) for i in here}
        for k, (a, _) in enumerate(twins):
            if rng.random() < 0.6:
                perf[a] = 1400.0 + 200.0 * k + rng.normal(0.0, 250.0)
        ranked = sorted(perf, key=lambda h: -perf[h])
        standings: list[tuple[str, int, int]] = []
        for h in ranked:
            pos = len(standings)
            twin = next((b for a, b in twins if a == h), None)
            if twin is None:
                standings.append((h, pos, pos))
            else:
                standings += [(h, pos, pos + 1), (twin, pos, pos + 1)]
        if len(standings) >= 2:
            out.append(Contest(standings, name=f"round {r}", time_seconds=t))
    return out


def full_computation(frame: Any, system: Any, at: int, rule: LadderSettings, *,
                     hide: bool, min_contests: int, active_since: int | None,
                     offset: int, limit: int) -> list[LeaderboardRow]:
    """The page of every player's as-of rating, filtered and sorted."""
    last = frame.last_contest_time.to_numpy()
    mu, sg = system.drift(frame.mu.to_numpy(), frame.sigma.to_numpy(),
                          np.maximum(at - last.astype(np.float64), 0.0))
    shown = np.asarray(system.display_rating(mu, sg), dtype=np.float64)
    contests = frame.contests.to_numpy()
    prov = rule.provisional(contests, sg)
    keep = contests >= max(min_contests, 1)
    if hide:
        keep &= ~prov
    if active_since is not None:
        keep &= last >= active_since
    idx = sorted(np.flatnonzero(keep).tolist(), key=lambda i: (-shown[i], frame.handle[i]))
    return [LeaderboardRow(offset + k + 1, frame.handle[i], float(shown[i]), float(mu[i]),
                           float(sg[i]), int(contests[i]), int(last[i]),
                           float(frame.max_display_rating[i]), float(frame.last_change[i]),
                           bool(prov[i]))
            for k, i in enumerate(idx[offset:offset + limit])]


class Case:
    """A store of one system over :func:`history`, with a finished season 1 (its final
    ratings kept as ``final``) and a few contests of season 2."""

    def __init__(self, url: str, system: str, params: dict[str, Any], seed: int) -> None:
        cs = history(seed)
        self.store = Store.create(url, system, params)
        self.store.ingest_many(cs[:-3])
        self.final = self.store.ratings_frame()
        self.end = cs[-4].time_seconds + 40 * DAY
        self.store.new_season("soft", time_seconds=self.end)
        later = [Contest(c.standings, name=c.name, time_seconds=c.time_seconds + 400 * DAY)
                 for c in cs[-3:]]
        self.store.ingest_many(later)
        self.latest = later[-1].time_seconds
        self.system = get_system(system, **params)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, Case]]:
    root: Path = tmp_path_factory.mktemp("asof")
    made = {k: Case(f"sqlite:///{root / f'{k}.db'}", system, params, seed=k)
            for k, (system, params) in enumerate(DRIFTING)}
    yield made
    for c in made.values():
        c.store.close()


def _later() -> st.SearchStrategy[int]:
    return st.one_of(st.just(0), st.integers(1, 3 * DAY), st.integers(0, 40 * 365 * DAY))


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(0, len(DRIFTING) - 1), later=_later(), season=st.sampled_from([None, 1]),
       offset=st.integers(0, 45), limit=st.integers(0, 12), chunk=st.integers(1, 8),
       hide=st.booleans(), prov_contests=st.integers(0, 4),
       prov_sigma=st.one_of(st.none(), st.floats(60.0, 400.0)),
       min_contests=st.integers(1, 4), active=st.one_of(st.none(), st.integers(0, 12)),
       pick=st.integers(0, 10 ** 6))
def test_pages_are_the_full_computation(cases: dict[int, Case], k: int, later: int,
                                        season: int | None, offset: int, limit: int,
                                        chunk: int, hide: bool, prov_contests: int,
                                        prov_sigma: float | None, min_contests: int,
                                        active: int | None, pick: int) -> None:
    """A page, and (read as of now) a player's rank and the count from its rating."""
    case = cases[k]
    store = case.store
    rule = store.set_ladder_settings(provisional_contests=prov_contests,
                                     provisional_sigma=prov_sigma)
    frame = store.ratings_frame() if season is None else case.final
    at = case.latest + later if season is None else case.end
    active_since = None if active is None else T0 + active * 30 * DAY
    want = full_computation(frame, case.system, at, rule, hide=hide,
                            min_contests=min_contests, active_since=active_since,
                            offset=offset, limit=limit)
    with mock.patch.object(A, "FIRST_CHUNK", chunk), mock.patch.object(A, "PAGE_CHUNKS", 0):
        got = store.leaderboard(offset=offset, limit=limit, min_contests=min_contests,
                                as_of=None if season is not None else at,
                                include_provisional=not hide, active_since=active_since,
                                season=season)
    assert got == want
    if season is not None:
        return
    board = full_computation(frame, case.system, at, rule, hide=False, min_contests=1,
                             active_since=None, offset=0, limit=len(frame))
    row = board[pick % len(board)]
    view = store.player(row.handle, as_of=at)
    assert view is not None and (view.rank, view.display_rating) == (row.rank,
                                                                     row.display_rating)
    shown = full_computation(frame, case.system, at, rule, hide=hide, min_contests=1,
                             active_since=None, offset=0, limit=len(frame))
    assert store.count_players(min_rating=row.display_rating, as_of=at,
                               include_provisional=not hide) == \
        sum(r.display_rating >= row.display_rating for r in shown)


@pytest.mark.parametrize("k", range(len(DRIFTING)))
def test_every_page_on_both_databases(store_url: str, k: int) -> None:
    """Every page of 7 rows, at the latest contest, a day, a year and 30 years later, on
    SQLite and PostgreSQL, with a walk of the smallest chunks."""
    system, params = DRIFTING[k]
    case = Case(store_url, system, params, seed=10 + k)
    try:
        rule = case.store.ladder_settings()
        frame = case.store.ratings_frame()
        for later in (0, DAY, 365 * DAY, 30 * 365 * DAY):
            at = case.latest + later
            full = full_computation(frame, case.system, at, rule, hide=False, min_contests=1,
                                    active_since=None, offset=0, limit=len(frame))
            with mock.patch.object(A, "FIRST_CHUNK", 1), \
                    mock.patch.object(A, "PAGE_CHUNKS", 0):
                pages = [row for offset in range(0, len(frame), 7)
                         for row in case.store.leaderboard(offset=offset, limit=7, as_of=at)]
            assert pages == full
            assert len({r.mu for r in full}) < len(full)  # twins: ties in mu
        final = full_computation(case.final, case.system, case.end, rule, hide=False,
                                 min_contests=1, active_since=None, offset=0,
                                 limit=len(case.final))
        assert case.store.leaderboard(limit=len(case.final), season=1) == final
    finally:
        case.store.close()


@settings(max_examples=300, deadline=None)  # the first call loads the drift kernel
@given(mu=st.floats(-5000.0, 5000.0), sigma_min=st.floats(1.0, 400.0),
       extra=st.floats(0.0, 500.0), elapsed_min=st.integers(0, 10 ** 9),
       more=st.integers(0, 10 ** 9), below=st.floats(0.0, 3000.0),
       k=st.integers(0, len(DRIFTING) - 2))
def test_the_bound_holds(mu: float, sigma_min: float, extra: float, elapsed_min: int,
                         more: int, below: float, k: int) -> None:
    """Every player rated at most ``mu``, at least ``sigma_min`` and ``elapsed_min``
    seconds before the read time is shown at most the bound, as of that time."""
    system = get_system(DRIFTING[k][0], **DRIFTING[k][1])
    bound = system.as_of_bound(np.array([mu]), sigma_min, float(elapsed_min))
    assert bound is not None
    m, s = system.drift(np.array([mu - below]), np.array([sigma_min + extra]),
                        np.array([float(elapsed_min + more)]))
    assert system.display_rating(m, s)[0] <= bound[0]
    # the bound is the rating of the row it is computed for (it is tight)
    m0, s0 = system.drift(np.array([mu]), np.array([sigma_min]), np.array([float(elapsed_min)]))
    assert system.display_rating(m0, s0)[0] == bound[0]


def test_no_bound_without_a_falling_display_or_drift() -> None:
    assert get_system("mmr", drift_per_day=5.0, display_sigmas=-1.0).as_of_bound(
        np.zeros(1), 80.0, 0.0) is None
    for name in ("glicko", "trueskill", "openskill-pl", "codeforces", "mmr-simple"):
        assert get_system(name).as_of_bound(np.zeros(1), 80.0, 0.0) is None
