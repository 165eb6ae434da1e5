"""Agreement with elo-mmr-py 2.0.0, the Python bindings of the Rust reference (multi-skill).

Every comparison checks that both sides rate the same set of players, then every
player's final mu and sigma (tests/_agreement.py holds the tolerances and why):

* exact systems ("mmr", "mmr-simple" within 1e-8; "mmx" within 1e-7) on random
  histories, with default and non-default parameters;
* "mmr-inf" (no counterpart in the reference) against the reference's "mmr" within
  1e-8 on histories in which everybody plays once, where the two must coincide;
* fast systems ("mmr-fast", "mmx-fast"): every player within 1e-6 -- their
  subsampling is deterministic and the reference's -- on small random histories and
  on large rounds (300-1000 players) where the subsampling windows matter (the exact
  systems are checked on those rounds too);
* the first 100 Codeforces contests of the shared data set (all of the above);
* rounded per-event values of ``elo_mmr_py.rate`` for "mmr".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from _agreement import assert_agrees
from _histories import (
    RawContest,
    from_podium,
    histories,
    hyp,
    rate_as_reference,
    rounds_to,
    standings_from_groups,
    to_podium,
    to_reference,
)
from _require import require_reference
from hypothesis import given
from hypothesis import strategies as st

from podium import Contest, Rater

e = require_reference()


# ---------------------------------------------------------------------- helpers
def reference_latest(history: list[RawContest], system: str, *, mu_noob: float = 1500.0,
                     sig_noob: float = 350.0, **config: Any) -> dict[str, Any]:
    sys_arg: Any = e.EloMmrConfig(system, **config) if config else system
    return e.rate_latest(to_reference(history), sys_arg, mu_noob=mu_noob, sig_noob=sig_noob)


def everybody_once(history: list[RawContest]) -> list[RawContest]:
    """The same contests with every handle renamed per contest: all newcomers."""
    return [replace(c, standings=tuple((f"{h}@{k}", lo, hi) for h, lo, hi in c.standings))
            for k, c in enumerate(history)]


# ---------------------------------------------------------------------- exact systems
@pytest.mark.parametrize("system", ["mmr", "mmx", "mmr-simple"])
@hyp(40)
@given(history=histories(weights=True, ceilings=True))
def test_exact_systems_agree_with_reference(system: str, history: list[RawContest]) -> None:
    r = rate_as_reference(history, system)
    assert_agrees(r, reference_latest(history, system), system)


# the reference accepts noob_delay entries in (0, 1] only
@hyp(20)
@given(history=histories(weights=True, ceilings=False))
def test_mmr_simple_agrees_with_reference_without_ceilings(history: list[RawContest]) -> None:
    """The same comparison as above for "mmr-simple" with no performance ceilings, so that
    the rest of its algorithm is checked even if ceilings are mishandled."""
    r = rate_as_reference(history, "mmr-simple")
    assert_agrees(r, reference_latest(history, "mmr-simple"), "mmr-simple")


noob_delays = st.lists(st.floats(0.1, 1.0), max_size=4)


@pytest.mark.parametrize("system", ["mmr", "mmx"])
@hyp(20)
@given(
    history=histories(weights=True, ceilings=True),
    weight_limit=st.floats(0.05, 1.0),
    sig_limit=st.floats(30.0, 150.0),
    noob_delay=noob_delays,
    drift_per_day=st.one_of(st.just(0.0), st.floats(0.0, 400.0)),
    split_ties=st.booleans(),
)
def test_exact_systems_with_parameters(
    system: str, history: list[RawContest], weight_limit: float, sig_limit: float,
    noob_delay: list[float], drift_per_day: float, split_ties: bool,
) -> None:
    cfg = dict(weight_limit=weight_limit, sig_limit=sig_limit, noob_delay=noob_delay,
               drift_per_day=drift_per_day, split_ties=split_ties)
    r = rate_as_reference(history, system, **cfg)
    assert_agrees(r, reference_latest(history, system, **cfg), system, case="parameters")


@hyp(15)
@given(
    history=histories(weights=True, max_contests=6),
    drift_per_day=st.floats(1.0, 2000.0),
    mu_noob=st.floats(800.0, 2500.0),
    sig_noob=st.floats(100.0, 600.0),
)
def test_drift_over_days_and_newcomer_prior(
    history: list[RawContest], drift_per_day: float, mu_noob: float, sig_noob: float
) -> None:
    # spread the contests over days so that drift_per_day * days dominates the drift
    spread = [
        RawContest(c.standings, c.name, c.time_seconds + k * 3 * 86_400, c.weight,
                   c.perf_ceiling)
        for k, c in enumerate(history)
    ]
    r = rate_as_reference(spread, "mmr", drift_per_day=drift_per_day, mu_noob=mu_noob,
                    sig_noob=sig_noob)
    ref = reference_latest(spread, "mmr", mu_noob=mu_noob, sig_noob=sig_noob,
                           drift_per_day=drift_per_day)
    assert_agrees(r, ref, "mmr", case="drift, priors")


# ---------------------------------------------------------------------- fast systems
@pytest.mark.parametrize("system", ["mmr-fast", "mmx-fast"])
@hyp(20)
@given(history=histories(weights=True, ceilings=True))
def test_fast_systems_agree_on_small_histories(system: str, history: list[RawContest]) -> None:
    r = rate_as_reference(history, system)
    assert_agrees(r, reference_latest(history, system), system)


def large_history(seed: int, n_players: int, warmups: int) -> list[RawContest]:
    """A pool of players with hidden skills; warm-up contests spread the ratings, then a
    final round in which almost everybody plays (so the windows of 100 merged terms are
    a small part of the field)."""
    rng = np.random.default_rng(seed)
    handles = [f"u{k:04d}" for k in range(n_players)]
    skill = rng.normal(0.0, 1.0, n_players)
    out = []
    t = 1_600_000_000
    for c in range(warmups + 1):
        share = 0.95 if c == warmups else rng.uniform(0.5, 0.9)
        idx = rng.choice(n_players, size=max(2, int(share * n_players)), replace=False)
        score = skill[idx] + rng.normal(0.0, 0.7, idx.size)
        score = np.round(score * 20.0)  # coarse scores produce ties
        order = idx[np.argsort(-score, kind="stable")]
        s_sorted = -np.sort(-score, kind="stable")
        groups: list[list[str]] = []
        for j, k in enumerate(order.tolist()):
            if j and s_sorted[j] == s_sorted[j - 1]:
                groups[-1].append(handles[k])
            else:
                groups.append([handles[k]])
        out.append(RawContest(standings_from_groups(groups), f"big{c}", t))
        t += int(rng.integers(0, 10 * 86_400))
    return out


@pytest.mark.parametrize("system", ["mmr-fast", "mmx-fast", "mmr", "mmx"])
@hyp(6)
@given(seed=st.integers(0, 2**32 - 1), n_players=st.integers(300, 1000),
       warmups=st.integers(2, 4))
def test_large_rounds(system: str, seed: int, n_players: int, warmups: int) -> None:
    """Large rounds: the fast systems' subsampling windows cover a part of the field
    only, and still every player agrees within 1e-6 (the exact ones within 1e-8 or,
    for "mmx", 1e-7)."""
    history = large_history(seed, n_players, warmups)
    r = rate_as_reference(history, system)
    # the windows really are a part of the field: more merged terms than subsample_size
    mu = r.ratings(sort=False)["mu"].to_numpy()
    assert np.unique(np.round(mu / 2.0)).size > 100
    assert_agrees(r, reference_latest(history, system), system, case="large rounds")


# ---------------------------------------------------------------------- mmr-inf
@hyp(20)
@given(history=histories(weights=True, ceilings=True))
def test_mmr_inf_equals_reference_mmr_for_newcomers(history: list[RawContest]) -> None:
    """elo-mmr-py has no "mmr-inf" (rho = infinity only changes how a player's history
    is carried from one round to the next), so with every player playing once it must
    give the reference's "mmr" ratings within 1e-8."""
    once = everybody_once(history)
    assert_agrees(rate_as_reference(once, "mmr-inf"), reference_latest(once, "mmr"), "mmr-inf")


# ---------------------------------------------------------------------- per-event values
@hyp(20)
@given(history=histories(weights=True, ceilings=True))
def test_rounded_events_match_reference(history: list[RawContest]) -> None:
    r = rate_as_reference(history, "mmr")
    players = e.rate(to_reference(history), "mmr")
    ev = r.events_frame()
    assert sorted(set(ev["handle"])) == sorted(players)
    for handle, p in players.items():
        mine = ev[ev["handle"] == handle]
        assert len(mine) == len(p.events), handle
        for row, ref in zip(mine.itertuples(), p.events, strict=True):
            assert int(row.contest_index) == ref.contest_index, handle
            assert int(row.place) == ref.place, handle
            assert rounds_to(row.mu, ref.rating_mu), (handle, row.contest_index, row.mu, ref)
            assert rounds_to(row.sigma, ref.rating_sig), (handle, row.contest_index, row.sigma,
                                                          ref)
            assert rounds_to(row.perf, ref.perf_score), (handle, row.contest_index, row.perf,
                                                         ref)


# ---------------------------------------------------------------------- real data
CF_SYSTEMS = ["mmr", "mmx", "mmr-fast", "mmx-fast", "mmr-inf"]


@pytest.fixture(scope="module")
def codeforces_reference(codeforces_first_100: list[Contest]) -> list[Any]:
    return [e.Contest(c.standings, name=c.name, time_seconds=c.time_seconds)
            for c in codeforces_first_100]


@pytest.mark.slow
@pytest.mark.parametrize("system", CF_SYSTEMS)
def test_codeforces_first_100_contests(system: str, codeforces_first_100: list[Contest],
                                       codeforces_reference: list[Any]) -> None:
    contests, ref_contests = codeforces_first_100, codeforces_reference
    if system == "mmr-inf":  # everybody a newcomer in every contest: see above
        raw = everybody_once([from_podium(c) for c in contests])
        contests, ref_contests = to_podium(raw), to_reference(raw)
    r = Rater(system, all_tied="skip")  # none is all tied; a reference run all the same
    r.extend(contests)
    ref = e.rate_latest(ref_contests, "mmr" if system == "mmr-inf" else system)
    assert r.num_players == len(ref) > 1000
    assert_agrees(r, ref, system, case="codeforces first 100")
