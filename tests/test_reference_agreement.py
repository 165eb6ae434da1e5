"""Agreement with elo-mmr-py 2.0.0, the Python bindings of the Rust reference (multi-skill).

* exact systems ("mmr", "mmx", "mmr-simple"): every player's final mu and sigma within
  1e-4 of the reference on random histories, with default and non-default parameters;
* fast systems ("mmr-fast", "mmx-fast"): within 0.05 for all but 0.1% of players, on
  small random histories and on large rounds (300-1000 players) where the subsampling
  windows matter (the exact systems are checked on those rounds too);
* the first 100 Codeforces contests of the shared data set ("mmr" and "mmr-fast");
* rounded per-event values of ``elo_mmr_py.rate`` for "mmr".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _histories import (
    RawContest,
    from_podium,
    histories,
    hyp,
    rate_podium,
    rounds_to,
    standings_from_groups,
    to_podium,
    to_reference,
)
from hypothesis import given
from hypothesis import strategies as st

from podium import Rater

e = pytest.importorskip(
    "elo_mmr_py",
    reason="elo-mmr-py (the Rust reference's bindings, test-only oracle) is not installed; "
    "run pip install -e '.[test]'",
)

CODEFORCES_TAR = Path("/work/shared/datasets/codeforces/cache_codeforces.tar.gz")
EXACT_TOL = 1e-4
FAST_TOL = 0.05
FAST_OUTLIER_FRACTION = 0.001



# ---------------------------------------------------------------------- helpers
def reference_latest(history: list[RawContest], system: str, *, mu_noob: float = 1500.0,
                     sig_noob: float = 350.0, **config: Any) -> dict[str, Any]:
    sys_arg: Any = e.EloMmrConfig(system, **config) if config else system
    return e.rate_latest(to_reference(history), sys_arg, mu_noob=mu_noob, sig_noob=sig_noob)


def differences(r: Rater, ref: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """|mu - mu_ref| and |sigma - sig_ref| per player (the same set of players)."""
    df = r.ratings(sort=False)
    assert sorted(df["handle"]) == sorted(ref), "different sets of rated players"
    handles = list(df["handle"])
    dmu = np.abs(df["mu"].to_numpy() - np.array([ref[h].mu for h in handles]))
    dsig = np.abs(df["sigma"].to_numpy() - np.array([ref[h].sig for h in handles]))
    return dmu, dsig, handles


def assert_exact_agreement(r: Rater, ref: dict[str, Any], tol: float = EXACT_TOL) -> None:
    dmu, dsig, handles = differences(r, ref)
    if dmu.size:
        k = int(np.argmax(dmu))
        assert dmu[k] <= tol, (
            f"mu of {handles[k]!r}: podium {r.rating(handles[k])[0]!r}, "
            f"reference {ref[handles[k]].mu!r}"
        )
        k = int(np.argmax(dsig))
        assert dsig[k] <= tol, (
            f"sigma of {handles[k]!r}: podium {r.rating(handles[k])[1]!r}, "
            f"reference {ref[handles[k]].sig!r}"
        )


def assert_fast_agreement(r: Rater, ref: dict[str, Any]) -> None:
    dmu, dsig, handles = differences(r, ref)
    n = dmu.size
    allowed = math.floor(FAST_OUTLIER_FRACTION * n)
    bad = np.flatnonzero((dmu > FAST_TOL) | (dsig > FAST_TOL))
    assert bad.size <= allowed, (
        f"{bad.size} of {n} players differ by more than {FAST_TOL} (allowed {allowed}); "
        f"worst mu difference {dmu.max():.6g} ({handles[int(np.argmax(dmu))]!r}), "
        f"worst sigma difference {dsig.max():.6g}"
    )


# ---------------------------------------------------------------------- exact systems
@pytest.mark.parametrize("system", ["mmr", "mmx", "mmr-simple"])
@hyp(40)
@given(history=histories(weights=True, ceilings=True))
def test_exact_systems_agree_with_reference(system: str, history: list[RawContest]) -> None:
    r = rate_podium(history, system)
    assert_exact_agreement(r, reference_latest(history, system))


# the reference accepts noob_delay entries in (0, 1] only
@hyp(20)
@given(history=histories(weights=True, ceilings=False))
def test_mmr_simple_agrees_with_reference_without_ceilings(history: list[RawContest]) -> None:
    """The same comparison as above for "mmr-simple" with no performance ceilings, so that
    the rest of its algorithm is checked even if ceilings are mishandled."""
    r = rate_podium(history, "mmr-simple")
    assert_exact_agreement(r, reference_latest(history, "mmr-simple"))


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
    r = rate_podium(history, system, **cfg)
    assert_exact_agreement(r, reference_latest(history, system, **cfg))


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
    r = rate_podium(spread, "mmr", drift_per_day=drift_per_day, mu_noob=mu_noob,
                    sig_noob=sig_noob)
    ref = reference_latest(spread, "mmr", mu_noob=mu_noob, sig_noob=sig_noob,
                           drift_per_day=drift_per_day)
    assert_exact_agreement(r, ref)


# ---------------------------------------------------------------------- fast systems
@pytest.mark.parametrize("system", ["mmr-fast", "mmx-fast"])
@hyp(20)
@given(history=histories(weights=True, ceilings=True))
def test_fast_systems_agree_on_small_histories(system: str, history: list[RawContest]) -> None:
    r = rate_podium(history, system)
    assert_fast_agreement(r, reference_latest(history, system))


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
    """Large rounds: the fast systems within 0.05 for all but 0.1% of players (their
    subsampling windows cover a part of the field only), the exact ones within 1e-4."""
    history = large_history(seed, n_players, warmups)
    r = rate_podium(history, system)
    # the windows really are a part of the field: more merged terms than subsample_size
    mu = r.ratings(sort=False)["mu"].to_numpy()
    assert np.unique(np.round(mu / 2.0)).size > 100
    ref = reference_latest(history, system)
    if system.endswith("-fast"):
        assert_fast_agreement(r, ref)
    else:
        assert_exact_agreement(r, ref)


# ---------------------------------------------------------------------- per-event values
@hyp(20)
@given(history=histories(weights=True, ceilings=True))
def test_rounded_events_match_reference(history: list[RawContest]) -> None:
    r = rate_podium(history, "mmr")
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
@pytest.fixture(scope="module")
def codeforces_100() -> list[RawContest]:
    if not CODEFORCES_TAR.exists():
        pytest.skip(f"Codeforces data set not found at {CODEFORCES_TAR}")
    from podium.io import load_contests

    loaded = load_contests(CODEFORCES_TAR, limit=100)
    assert len(loaded) == 100
    return [from_podium(c) for c in loaded.contests]


@pytest.mark.slow
@pytest.mark.parametrize("system", ["mmr", "mmr-fast"])
def test_codeforces_first_100_contests(system: str, codeforces_100: list[RawContest]) -> None:
    r = Rater(system)
    r.extend(to_podium(codeforces_100))
    ref = e.rate_latest(to_reference(codeforces_100), system)
    assert r.num_players == len(ref) > 1000
    if system == "mmr":
        assert_exact_agreement(r, ref)
    else:
        assert_fast_agreement(r, ref)
