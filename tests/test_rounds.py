"""Many small rounds: ``Rater.extend`` (batches, compiled round loops) against one
round at a time.

The reference is :func:`reference_add`: the Rater's bookkeeping around one
:meth:`RatingSystem.round_update` call, as ``Rater.add`` did it before batches
existed.  Every test compares everything a user, a checkpoint or the store can
see, bit for bit: the ratings table, the event log, the contest records, the
reports and the checkpoint image.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest
from _histories import hyp
from hypothesis import given
from hypothesis import strategies as st

from podium import Contest, Rater, RoundReport
from podium.core.state import ContestRecord, EventLog
from podium.systems import SYSTEMS, RoundInput, RoundOutput, SystemState
from podium.systems.elo_mmr import EloMMR
from podium.systems.elo_mmr import system as elo_mmr_module
from podium.systems.glicko import Glicko
from podium.systems.trueskill import system as trueskill_module

POOL = [f"p{k:02d}" for k in range(16)]


# ---------------------------------------------------------------------- the reference
def reference_add(r: Rater, contest: Contest) -> RoundReport:
    """Rate ``contest`` with one ``round_update`` call and the Rater's bookkeeping."""
    index = len(r.contests)
    warnings: list[str] = []
    if r.last_time is not None and contest.time_seconds < r.last_time:
        warnings.append(
            f"contest {contest.label!r} (#{index}) has time_seconds={contest.time_seconds}, "
            f"earlier than the previous contest ({r.last_time}); rated in the given order "
            "with no time drift for its players"
        )
    if r.system.skips_round(contest):
        r.contests.append(
            ContestRecord(contest.name, contest.time_seconds, contest.url, len(contest), True)
        )
        msg = (f"contest {contest.label!r} (#{index}): {r.system.skip_reason(contest)}; "
               "nothing changed")
        return RoundReport(index, contest.name, len(contest), 0, True, (*warnings, msg))
    table = r.players
    n_before = table.n
    mu0, sig0 = r.system.newcomer(contest)
    idx, n_new = table.lookup_or_add(contest.handles, mu0, sig0, contest.time_seconds)
    r.state.ensure_players(table.n)
    try:
        played = table.contests[idx].copy()
        delta = np.maximum(contest.time_seconds - table.last_time[idx], 0).astype(np.float64)
        delta[played == 0] = 0.0
        prior_mu = table.mu[idx].copy()
        prior_sig = table.sigma[idx].copy()
        rnd = RoundInput(
            contest=contest, players=idx, lo=contest.lo, hi=contest.hi,
            mu=prior_mu, sigma=prior_sig, played=played, delta_seconds=delta,
        )
        out = r.system.round_update(r.state, rnd)
    except Exception:
        table.truncate(n_before)
        r.state.truncate_players(n_before)
        raise
    display_old = r.system.display_rating(prior_mu, prior_sig)
    display_new = r.system.display_rating(out.mu, out.sigma)
    table.mu[idx] = out.mu
    table.sigma[idx] = out.sigma
    table.contests[idx] += 1
    table.last_time[idx] = np.maximum(table.last_time[idx], contest.time_seconds)
    table.max_display[idx] = np.maximum(table.max_display[idx], display_new)
    table.last_change[idx] = display_new - display_old
    r.events.append(index, idx, out.mu, out.sigma, out.perf, contest.lo)
    r.contests.append(
        ContestRecord(contest.name, contest.time_seconds, contest.url, len(contest), False)
    )
    r.last_time = (contest.time_seconds if r.last_time is None
                   else max(r.last_time, contest.time_seconds))
    return RoundReport(index, contest.name, len(contest), n_new, False,
                       (*warnings, *out.warnings))


def reference(system: Any, history: list[Contest]) -> tuple[Rater, list[RoundReport],
                                                             BaseException | None]:
    r = Rater(system)
    reports = []
    for c in history:
        try:
            reports.append(reference_add(r, c))
        except Exception as exc:
            return r, reports, exc
    return r, reports, None


# ---------------------------------------------------------------------- comparisons
def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint8) if a.dtype.kind in "fiub" else a


def _live_pool(image: dict[str, Any]) -> None:
    """Keep only the live slots of a factor pool: the compacted pool's blocks have
    room beyond each player's factors, which nothing writes (their bytes are
    whatever the allocation held)."""
    if "state.f_mu" not in image:
        return
    base = image["state.fb_base"] + image["state.fb_start"]
    live = np.concatenate([np.arange(b, b + n) for b, n in
                           zip(base.tolist(), image["state.fb_len"].tolist(), strict=True)]
                          + [np.zeros(0, dtype=np.int64)])
    for k in ("state.f_mu", "state.f_warg", "state.f_wout"):
        image[k] = image[k][live]


def assert_same(a: Rater, b: Rater) -> None:
    """Ratings, events, contest records and the checkpoint image, bit for bit."""
    ia = a.to_arrays()
    ib = b.to_arrays()
    _live_pool(ia)
    _live_pool(ib)
    assert sorted(ia) == sorted(ib)
    for k in ia:
        x, y = np.asarray(ia[k]), np.asarray(ib[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        assert np.array_equal(_bits(x), _bits(y)), k
    assert a.contests == b.contests
    assert a.last_time == b.last_time
    assert a.players.handles == b.players.handles
    assert a.players.index == b.players.index
    fa, fb = a.ratings(sort=False), b.ratings(sort=False)
    for col in fa.columns:
        assert np.array_equal(_bits(fa[col].to_numpy()), _bits(fb[col].to_numpy())) \
            if col != "handle" else list(fa[col]) == list(fb[col]), col


@contextmanager
def compiled_from_start() -> Iterator[None]:
    """Compiled round loops from the first contest on (not only after 32)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(elo_mmr_module, "BATCH_AFTER", 0)
        mp.setattr(trueskill_module, "BATCH_AFTER", 0)
        yield


@pytest.fixture
def batch_from_start() -> Iterator[None]:
    with compiled_from_start():
        yield


# ---------------------------------------------------------------------- histories
@st.composite
def lobby_histories(draw: Any) -> list[Contest]:
    """2-14 contests from a pool of 16 handles (newcomers and returning players),
    mostly 2-8 players, sometimes 25-30 with fresh handles (a round too large for the
    compiled Elo-MMR loop), random tie groups, weights and ceilings, times that
    sometimes go backwards, and an everybody-tied contest somewhere."""
    n = draw(st.integers(2, 14))
    t = draw(st.integers(0, 10**9))
    tied_at = draw(st.integers(0, n - 1))
    out = []
    for c in range(n):
        t += draw(st.one_of(st.just(0), st.integers(1, 86_400), st.integers(-5000, -1),
                            st.integers(86_400, 30 * 86_400)))
        if draw(st.integers(0, 9)) == 0:
            players = [f"big{c}_{k}" for k in range(draw(st.integers(25, 30)))] + \
                draw(st.lists(st.sampled_from(POOL), min_size=0, max_size=4, unique=True))
        else:
            players = draw(st.lists(st.sampled_from(POOL), min_size=2, max_size=8, unique=True))
        m = len(players)
        if c == tied_at:
            lo = [0] * m
            hi = [m - 1] * m
        else:
            cuts = draw(st.lists(st.integers(0, 2), min_size=m - 1, max_size=m - 1))
            starts = [0] + [k + 1 for k, cut in enumerate(cuts) if cut]
            ends = starts[1:] + [m]
            lo = [s for s, e in zip(starts, ends, strict=True) for _ in range(e - s)]
            hi = [e - 1 for s, e in zip(starts, ends, strict=True) for _ in range(e - s)]
        weight = draw(st.sampled_from([1.0, 1.0, 0.5, 1.75]))
        ceiling = draw(st.sampled_from([None, None, 1600.0, float("inf")]))
        out.append(Contest.from_arrays(players, lo, hi, name=f"c{c}", time_seconds=t,
                                       weight=weight, perf_ceiling=ceiling))
    return out


def _rate(system: str, history: list[Contest], mode: str) -> tuple[
        Rater, list[RoundReport], BaseException | None]:
    r = Rater(system)
    reports: list[RoundReport] = []
    try:
        if mode == "extend":
            r.extend(history, progress=reports.append)
        else:
            for c in history:
                reports.append(r.add(c))
    except Exception as exc:  # e.g. elo-average refusing a large history
        return r, reports, exc
    return r, reports, None


# ---------------------------------------------------------------------- bit identity
@pytest.mark.parametrize("system", list(SYSTEMS))
@hyp(8)
@given(history=lobby_histories())
def test_extend_equals_add_loop_and_round_update(system: str, history: list[Contest]) -> None:
    """extend == add loop == one round_update per contest, bit for bit, for every
    system; the compiled round loops run from the first contest on."""
    ref, ref_reports, ref_error = reference(system, history)
    for mode in ("extend", "add"):
        with compiled_from_start():
            r, reports, error = _rate(system, history, mode)
        assert type(error) is type(ref_error) and str(error) == str(ref_error)
        assert reports == ref_reports
        assert_same(r, ref)


@pytest.mark.parametrize("system", ["mmr", "mmr-fast", "mmx-fast", "trueskill"])
@hyp(5)
@given(history=lobby_histories())
def test_default_threshold_and_resumed_batches(system: str, history: list[Contest]) -> None:
    """With the default threshold (round_update for the first contests), in batches
    split anywhere, the result is the reference's."""
    long_history = history * 5  # past the threshold; later copies are returning players
    ref, ref_reports, _ = reference(system, long_history)
    r = Rater(system)
    reports = []
    cut = len(long_history) // 3
    reports += r.extend(long_history[:cut])
    for c in long_history[cut:cut + 3]:
        reports.append(r.add(c))
    reports += r.extend(iter(long_history[cut + 3:]))
    assert reports == ref_reports
    assert_same(r, ref)


def test_lobbies_in_large_batches(batch_from_start: None) -> None:
    """Thousands of 8-player lobbies in one call, across the Rater's batch limit."""
    rng = np.random.default_rng(5)
    history = []
    for m in range(5000):
        who = rng.choice(300, 8, replace=False)
        history.append(Contest.from_scores([f"x{i}" for i in who], rng.normal(size=8).round(1),
                                           name=f"m{m}", time_seconds=60 * m))
    for system in ("mmr-fast", "trueskill"):
        ref, ref_reports, _ = reference(system, history)
        r = Rater(system)
        assert r.extend(history) == ref_reports
        assert_same(r, ref)


def test_solver_warnings_match(batch_from_start: None) -> None:
    """Performances beyond the solver's bounds are reported as by round_update."""
    history = [Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name=f"r{k}",
                       time_seconds=k) for k in range(4)]
    for system in (EloMMR(mu_noob=8990.0), EloMMR(mu_noob=8990.0, subsample_size=100)):
        ref, ref_reports, _ = reference(system, history)
        assert any("bound was used" in w for rep in ref_reports for w in rep.warnings)
        r = Rater(system)
        assert r.extend(history) == ref_reports
        assert_same(r, ref)


def test_warnings_are_logged_in_order(batch_from_start: None,
                                      caplog: pytest.LogCaptureFixture) -> None:
    history = [
        Contest([("a", 0, 0), ("b", 1, 1)], name="one", time_seconds=100),
        Contest([("a", 0, 1), ("b", 0, 1)], name="tied", time_seconds=50),
        Contest([("b", 0, 0), ("c", 1, 1)], name="early", time_seconds=10),
    ]
    with caplog.at_level(logging.INFO, logger="podium"):
        reports = Rater("mmr", all_tied="skip").extend(history)
    # a skipped contest logs its out-of-order warning, then that it was skipped
    assert caplog.messages == [*reports[1].warnings, *reports[2].warnings]
    assert reports[1].skipped and "earlier than" in reports[1].warnings[0]
    assert reports[2].new_players == 1 and "earlier than" in reports[2].warnings[0]


# ---------------------------------------------------------------------- failures
@dataclass(frozen=True)
class ExplodingMMR(EloMMR):
    """Elo-MMR that raises on the contest named ``boom``."""

    name: ClassVar[str] = "exploding-mmr"

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        if rnd.contest.name == "boom":
            raise RuntimeError("boom")
        return super().round_update(state, rnd)


@dataclass(frozen=True)
class ExplodingGlicko(Glicko):
    """Glicko (the default, round-by-round batch) that raises on ``boom``."""

    name: ClassVar[str] = "exploding-glicko"

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        if rnd.contest.name == "boom":
            raise RuntimeError("boom")
        return super().round_update(state, rnd)


@dataclass(frozen=True)
class PickyMMR(EloMMR):
    """Elo-MMR whose newcomer prior refuses the contest named ``boom``."""

    name: ClassVar[str] = "picky-mmr"

    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        if contest is not None and contest.name == "boom":
            raise ValueError("no newcomers here")
        return super().newcomer(contest)


def _failing_history(big: bool) -> list[Contest]:
    """Small rounds, then ``boom`` (large or small, with newcomers), then more."""
    rng = np.random.default_rng(3)
    out = []
    for m in range(12):
        who = rng.choice(10, 6, replace=False)
        out.append(Contest.from_scores([f"q{i}" for i in who], rng.normal(size=6),
                                       name=f"m{m}", time_seconds=100 * m))
    out.append(Contest([("q1", 0, 1), ("q2", 0, 1)], name="all tied", time_seconds=1250))
    boom = [f"new{k}" for k in range(30 if big else 3)] + ["q0", "q5"]
    out.append(Contest.from_scores(boom, np.arange(len(boom), dtype=float), name="boom",
                                   time_seconds=1300))
    out.append(Contest([("q3", 0, 0), ("new0", 1, 1)], name="after", time_seconds=1400))
    return out


def assert_same_table(a: Rater, b: Rater) -> None:
    """Everything but the system's state: players, ratings, events, contests."""
    ia = {k: v for k, v in a.to_arrays().items()
          if not k.startswith("state.")}
    ib = {k: v for k, v in b.to_arrays().items()
          if not k.startswith("state.")}
    assert sorted(ia) == sorted(ib)
    for k in ia:
        assert np.array_equal(_bits(np.asarray(ia[k])), _bits(np.asarray(ib[k]))), k
    assert a.contests == b.contests and a.last_time == b.last_time


@pytest.mark.parametrize("system,big", [
    (ExplodingMMR(), True), (ExplodingMMR(), False), (ExplodingGlicko(), False),
    (PickyMMR(), False), (PickyMMR(), True),
])
def test_failure_mid_batch_leaves_the_state_before_that_contest(
    system: Any, big: bool, batch_from_start: None
) -> None:
    """The contests before the failing one are rated and reported; the Rater is as
    an add loop leaves it: the players, ratings, events and contests of a Rater that
    never saw the failing contest (its state forgets the contest's newcomers too),
    and it goes on as one."""
    history = _failing_history(big)
    at = next(k for k, c in enumerate(history) if c.name == "boom")
    never = Rater(system)
    ref_reports = [reference_add(never, c) for c in history[:at]]
    add_loop = Rater(system)
    for c in history[:at]:
        reference_add(add_loop, c)
    with pytest.raises((RuntimeError, ValueError), match="boom|no newcomers"):
        reference_add(add_loop, history[at])
    r = Rater(system)
    seen: list[RoundReport] = []
    with pytest.raises((RuntimeError, ValueError), match="boom|no newcomers"):
        r.extend(history, progress=seen.append)
    assert seen == ref_reports
    assert "new1" not in r.players.index
    assert_same_table(r, never)
    assert_same(r, add_loop)
    assert_same(r, never)
    # the Rater goes on as if the failing contest had never been offered
    rest = history[at + 1:]
    assert r.extend(rest) == [reference_add(never, c) for c in rest]
    for c in rest:
        reference_add(add_loop, c)
    assert_same_table(r, never)
    assert_same(r, add_loop)


def test_add_failure_leaves_the_state_before_that_contest(batch_from_start: None) -> None:
    history = _failing_history(True)
    at = next(k for k, c in enumerate(history) if c.name == "boom")
    r, ref = Rater(ExplodingMMR()), Rater(ExplodingMMR())
    for c in history[:at]:
        r.add(c)
        reference_add(ref, c)
    for rater, add in ((r, Rater.add), (ref, reference_add)):
        with pytest.raises(RuntimeError, match="boom"):
            add(rater, history[at])
    assert_same(r, ref)


def test_bad_item_or_failing_iterable_mid_batch(batch_from_start: None) -> None:
    history = _failing_history(False)[:12]
    ref = Rater("mmr")
    for c in history[:7]:
        reference_add(ref, c)
    r = Rater("mmr")
    with pytest.raises(TypeError, match="expected a Contest, got str"):
        r.extend([*history[:7], "not a contest", *history[7:]])  # type: ignore[list-item]
    assert_same(r, ref)

    def failing() -> Iterator[Contest]:
        yield from history[:7]
        raise OSError("disk went away")

    r = Rater("mmr")
    seen: list[RoundReport] = []
    with pytest.raises(OSError, match="disk went away"):
        r.extend(failing(), progress=seen.append)
    assert len(seen) == 7
    assert_same(r, ref)


def test_progress_that_raises_keeps_the_rated_batch(batch_from_start: None) -> None:
    """``progress`` runs after its batch: rounds rated before it raised stay rated and
    consistent (their events and records exist)."""
    history = _failing_history(False)[:12]
    r = Rater("mmr")

    def stop(rep: RoundReport) -> None:
        if rep.index == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        r.extend(history, progress=stop)
    ref = Rater("mmr")
    for c in history[:r.contests_processed]:
        reference_add(ref, c)
    assert_same(r, ref)


# ---------------------------------------------------------------------- Rater.add's path
SMALL_PATH_SYSTEMS = ["mmr", "mmr-fast", "mmx", "mmr-inf", "trueskill"]


def _lobby_history(n: int, pool: int, seed: int) -> list[Contest]:
    """``n`` contests among ``pool`` players: mostly 2-8 players with ties, weights and
    ceilings, times that sometimes go backwards, an everybody-tied contest, a round of
    30 fresh players (too large for Elo-MMR's compiled path), a team contest and a
    contest of one-player teams."""
    rng = np.random.default_rng(seed)
    out = []
    t = 1_000_000
    for m in range(n):
        t += int(rng.choice([0, 60, 60, 86_400, -500]))
        if m == n // 3:
            out.append(Contest([(f"p{k}", 0, 2) for k in range(3)], name=f"tied{m}",
                               time_seconds=t))
            continue
        if m == n // 2:
            big = [f"big{k}" for k in range(30)]
            out.append(Contest.from_scores(big, rng.normal(size=30), name=f"big{m}",
                                           time_seconds=t))
            continue
        if m in (2 * n // 3, 2 * n // 3 + 1):  # a team round; one-player teams
            teams = ([("red", 0, 0, ["p1", "p2"]), ("blue", 1, 1, ["p3"])] if m == 2 * n // 3
                     else [("solo", 0, 0, ["p4"]), ("alone", 1, 1, ["p5"])])
            out.append(Contest.from_teams(teams, name=f"team{m}", time_seconds=t))
            continue
        size = int(rng.integers(2, 9))
        who = rng.choice(pool, size, replace=False)
        score = np.round(rng.normal(size=size), 1)
        out.append(Contest.from_scores([f"p{i}" for i in who], score, name=f"m{m}",
                                       time_seconds=t,
                                       weight=float(rng.choice([1.0, 1.0, 0.5])),
                                       perf_ceiling=rng.choice([None, None, 1600.0])))
    return out


@contextmanager
def counting_small_rounds() -> Iterator[list[int]]:
    """Count the rounds rated through ``rate_small_round`` (one entry per round)."""
    taken: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        for cls in (EloMMR, trueskill_module.TrueSkillSPb):
            original = cls.rate_small_round

            def wrapped(self: Any, *args: Any, _original: Any = original) -> Any:
                out = _original(self, *args)
                if out is not None and out is not NotImplemented:
                    taken.append(args[3])
                return out

            mp.setattr(cls, "rate_small_round", wrapped)
        yield taken


@pytest.mark.parametrize("system", SMALL_PATH_SYSTEMS)
def test_add_small_round_path_is_the_batch_path(system: str) -> None:
    """``Rater.add`` of small rounds (one compiled call each, after the default
    threshold) gives the ratings, events, records and reports of ``extend`` and of
    ``add`` through the batch path, bit for bit, through the growth of the table, the
    factor pool and the event log's tail, with ``extend`` calls and reads of the event
    log in between."""
    history = _lobby_history(700, 160, seed=11)
    ref = Rater(system)
    ref_reports = ref.extend(history)
    batch_path = Rater(system)
    batch_path._small = None  # add through _rate_many
    assert [batch_path.add(c) for c in history] == ref_reports
    assert_same(batch_path, ref)
    with counting_small_rounds() as taken:
        r = Rater(system)
        reports = r.extend(history[:50])
        for k, c in enumerate(history[50:400], start=50):
            reports.append(r.add(c))
            if k == 200:  # a read in between: the log's cache must follow later adds
                assert len(r.events) == r.events.arrays()["player"].size
        reports += r.extend(history[400:420])  # closes the tail into a chunk
        for c in history[420:]:
            reports.append(r.add(c))
    assert reports == ref_reports
    assert_same(r, ref)
    skipped = {k for k, c in enumerate(history)
               if (c.is_outcome_free and system == "trueskill")  # its team graph rates it
               or c.team_round or c.teams is not None
               or (len(c) > 24 and system != "trueskill")}
    assert set(taken) == set(range(50, 400)).union(range(420, 700)) - skipped
    if system in ("mmr", "mmr-fast"):
        assert r.state.f_mu.size > 1024  # the pool grew during an add


@pytest.mark.parametrize("system", SMALL_PATH_SYSTEMS)
def test_add_small_round_failure_changes_nothing(system: str) -> None:
    """A round whose compiled call raises leaves the Rater as before it (its
    newcomers unknown, no event, no record), and the Rater goes on as one that never
    saw it."""
    history = _lobby_history(120, 60, seed=4)
    at = next(k for k, c in enumerate(history)
              if k > 40 and 2 < len(c) <= 8 and c.teams is None
              and any(h not in {x for d in history[:k] for x in d.handles}
                      for h in c.handles))
    kernels = _rounds_kernels_module(system)
    name = "trueskill_add" if system == "trueskill" else "elo_mmr_add"
    real = getattr(kernels, name)

    def failing(*args: Any) -> Any:
        if args[4 if system == "trueskill" else 5] == at:
            raise MemoryError("no room")
        return real(*args)

    r = Rater(system)
    for c in history[:at]:
        r.add(c)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernels, name, failing)
        with pytest.raises(MemoryError, match="no room"):
            r.add(history[at])
    never = Rater(system)
    never._small = None  # add through _rate_many
    for c in history[:at]:
        never.add(c)
    assert_same(r, never)
    assert len(r.events) == never.events.arrays()["player"].size
    rest = history[at + 1:]
    assert [r.add(c) for c in rest] == [never.add(c) for c in rest]
    assert_same(r, never)


def _rounds_kernels_module(system: str) -> Any:
    """The module of the system's compiled small-round kernels."""
    import importlib

    folder = "trueskill" if system == "trueskill" else "elo_mmr"
    return importlib.import_module(f"podium.systems.{folder}.rounds_kernels")


class KeepEverySecond(EventLog):
    """An event sink that filters what it keeps (as the store's does)."""

    def append(self, contest: int, *args: Any, **kwargs: Any) -> None:
        if contest % 2 == 0:
            super().append(contest, *args, **kwargs)


@pytest.mark.parametrize("system", ["mmr-fast", "trueskill"])
def test_add_small_round_with_a_filtering_sink(system: str) -> None:
    """A sink that overrides ``append`` gets every round through it, not through the
    log's tail."""
    history = [c for c in _lobby_history(200, 50, seed=8) if c.teams is None]
    with counting_small_rounds() as taken:
        plain = Rater(system)
        sink = KeepEverySecond()
        r = Rater(system, events=sink)
        for c in history:
            assert plain.add(c) == r.add(c)
    assert len(taken) > 100
    assert sink._tail_n == 0
    ev, full = sink.arrays(), plain.events.arrays()
    keep = full["contest"] % 2 == 0
    for k in ev:
        assert np.array_equal(_bits(ev[k]), _bits(full[k][keep])), k


def test_event_log_tail() -> None:
    """Events written through the tail read as if appended round by round, before and
    after a chunk closes the tail; a reservation without a commit logs nothing."""
    rng = np.random.default_rng(0)
    rounds = []
    for c in range(900):  # past the tail's first capacity (1024 events)
        n = int(rng.integers(1, 6))
        rounds.append((c, rng.integers(0, 99, n), rng.normal(size=n), rng.normal(size=n),
                       rng.normal(size=n), np.arange(n)))
    ref, log = EventLog(), EventLog()
    for c, players, mu, sigma, perf, place in rounds:
        ref.append(c, players, mu, sigma, perf, place)
        if c % 300 == 299:  # an ordinary chunk in between
            log.append(c, players, mu, sigma, perf, place)
            continue
        vals, ids, at = log.reserve_tail(players.size)
        before = log.arrays()["mu"].size
        s = slice(at, at + players.size)
        vals[0, s], vals[1, s], vals[2, s] = mu, sigma, perf
        ids[0, s], ids[1, s], ids[2, s] = c, players, place
        assert log.arrays()["mu"].size == before
        log.commit_tail(players.size)
        assert len(log) == len(ref)
    log.reserve_tail(5)  # reserved, never committed
    a, b = ref.arrays(), log.arrays()
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


def test_a_system_that_changes_the_update_is_not_asked_again() -> None:
    """A subclass that changes ``round_update`` declines the small-round path for good
    (``NotImplemented``) once past the threshold; its rounds go through ``round_update``."""
    history = [c for c in _lobby_history(60, 30, seed=2) if c.teams is None]
    ref, ref_reports, _ = reference(ExplodingMMR(), history)
    with counting_small_rounds() as taken:
        r = Rater(ExplodingMMR())
        assert r._small is not None
        assert [r.add(c) for c in history] == ref_reports
    assert r._small is None and not taken
    assert_same(r, ref)


_SMALL_MODULES = {"mmr": elo_mmr_module, "trueskill": trueskill_module}


@pytest.mark.parametrize("loaded", [False, True])
@pytest.mark.parametrize("system", ["mmr", "trueskill"])
def test_add_offers_the_small_round_path_only_rounds_within_its_limits(
    system: str, loaded: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A round the system's ``small_round_limits`` exclude (too early, too large) goes
    straight to the batch path: ``rate_small_round`` is not asked (which would look
    the handles up a second time).  "Too early" is the first 31 contests in a process
    that does not hold the compiled round yet, none once it does."""
    monkeypatch.setattr(_SMALL_MODULES[system], "add_kernel_ready", lambda: loaded)
    r = Rater(system)
    after, most = r.system.small_round_limits
    assert after == (1 if loaded else 32)
    seen: list[int] = []
    small = r._small
    assert small is not None

    def spy(state: Any, table: Any, contest: Contest, *rest: Any) -> Any:
        seen.append(len(contest))
        return small(state, table, contest, *rest)

    r._small = spy
    ref = Rater(system)
    rng = np.random.default_rng(9)
    sizes = [4] * (after + 3) + [(most or 40) + 1, 5]
    for m, size in enumerate(sizes):
        c = Contest.from_scores([f"h{i}" for i in rng.choice(60, size, replace=False)],
                                rng.normal(size=size), name=f"r{m}", time_seconds=60 * m)
        assert r.add(c) == ref.extend([c])[0]
    expected = sizes[after - 1:] if most is None else [s for s in sizes[after - 1:] if s <= most]
    assert seen == expected
    assert_same(r, ref)
