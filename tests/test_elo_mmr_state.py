"""Elo-MMR player state: lazy weight scale, factor pool, history compression and the
optional history tolerance keep every number they should."""

from __future__ import annotations

import math

import numpy as np
import pytest

from podium import Contest, Rater
from podium.io import synthetic_contests
from podium.systems.base import factor_pool_kernels as PK
from podium.systems.elo_mmr import EloMMRState
from podium.systems.elo_mmr import kernels as K


@pytest.fixture(scope="module")
def long_history():
    # few players, many rounds: long factor lists, many pool relocations
    return synthetic_contests(12, 150, seed=5, tie_resolution=25.0)


def _check_sums(state: EloMMRState) -> None:
    for i in range(state.n):
        b = state.fb_base[i] + state.fb_start[i]
        e = b + state.fb_len[i]
        assert state.fb_start[i] + state.fb_len[i] <= state.fb_cap[i]
        aw = float(np.sum(state.f_warg[b:e] * state.f_wout[b:e]))
        assert state.sum_aw[i] == pytest.approx(aw, rel=1e-9)
        assert state.sum_w[i] == pytest.approx(float(np.sum(state.f_wout[b:e])), rel=1e-9)


def test_every_factor_is_kept_by_exact_mmr(long_history):
    r = Rater("mmr")
    r.extend(long_history)
    for h, i in r.players.index.items():
        p, w_arg, w_out = r.state.factors(i)
        hist = r.history(h)
        assert len(p) == len(hist)
        np.testing.assert_array_equal(p, hist["perf"].to_numpy())  # oldest first
        assert np.all(w_out > 0) and np.all(np.diff(w_out) > 0)  # older = more decayed
    _check_sums(r.state)


def test_history_compression_folds_oldest_factor(long_history):
    r = Rater("mmr", max_history=5)
    r.extend(long_history)
    assert int(r.state.fb_len[: r.num_players].max()) == 5
    _check_sums(r.state)
    for h, i in r.players.index.items():
        p, _, _ = r.state.factors(i)
        np.testing.assert_array_equal(p, r.history(h)["perf"].to_numpy()[-5:])


def test_history_tolerance_changes_almost_nothing(long_history):
    exact = Rater("mmr")
    exact.extend(long_history)
    loose = Rater("mmr", history_tolerance=1e-13)
    loose.extend(long_history)
    np.testing.assert_allclose(loose.ratings(sort=False)["mu"], exact.ratings(sort=False)["mu"],
                               rtol=0, atol=1e-8)


def test_pool_compaction_preserves_factors(long_history):
    r = Rater("mmr")
    r.extend(long_history)
    st = r.state
    before = [st.factors(i) for i in range(st.n)]
    pool, st.used = PK.compact_pool(st.n, st.blocks_view(), st.pool_view())
    st.f_mu, st.f_warg, st.f_wout = pool
    assert st.used <= sum(max(4, int(x)) for x in st.fb_len[: st.n])
    for i in range(st.n):
        for a, b in zip(before[i], st.factors(i), strict=True):
            np.testing.assert_array_equal(a, b)
    _check_sums(st)


@pytest.mark.parametrize("path", ["add", "extend"])
def test_pool_stays_compact_in_a_long_run(path: str) -> None:
    """maybe_compact counts the live factors only once ``used`` passes its last
    threshold; the pool must still be rebuilt whenever abandoned blocks waste more
    than half of it, so that it never exceeds ``2 live + 4 n`` by more than a round's
    relocations.  Few players, many rounds: every block is outgrown again and again."""
    rng = np.random.default_rng(3)
    names = [f"p{i}" for i in range(40)]
    r = Rater("mmr")
    peak_ratio = 0.0
    compactions = 0
    orig = r.state.compact

    def counting(roomy: bool = False) -> None:
        nonlocal compactions
        compactions += 1
        orig(roomy)

    r.state.compact = counting  # type: ignore[method-assign]
    rounds = [Contest.from_scores([names[i] for i in rng.choice(40, 8, replace=False)],
                                  rng.normal(size=8), time_seconds=60 * k)
              for k in range(3000)]
    for k in range(0, len(rounds), 50):
        if path == "add":
            for c in rounds[k:k + 50]:
                r.add(c)
        else:
            r.extend(rounds[k:k + 50])
        st = r.state
        live = st.live_factors()
        if st.used > 4096:
            peak_ratio = max(peak_ratio, st.used / (2 * live + 4 * st.n + 8 * 64))
    assert compactions > 0
    assert peak_ratio <= 1.0
    _check_sums(r.state)


@pytest.mark.parametrize("path", ["add", "extend"])
def test_many_lobbies_do_not_rebuild_the_pool_over_and_over(path: str) -> None:
    """Compacting to full blocks made every participant's next round move its block
    again and the pool grow again: 12,000 eight-player rounds among 1,500 players
    compacted the pool 20 times (extend) or 58 times (add) and reallocated it 24 or
    186 times.  Compaction now leaves blocks their room to grow: 3 compactions and
    11 or 15 reallocations when this was written."""
    rng = np.random.default_rng(5)
    names = [f"p{i}" for i in range(1500)]
    rounds = [Contest.from_scores([names[i] for i in rng.choice(1500, 8, replace=False)],
                                  rng.normal(size=8), time_seconds=60 * k)
              for k in range(12000)]
    r = Rater("mmr-fast")
    st = r.state
    compactions = 0
    orig = st.compact

    def counting(roomy: bool = False) -> None:
        nonlocal compactions
        compactions += 1
        orig(roomy)

    st.compact = counting  # type: ignore[method-assign]
    reallocations = 0
    pool = st.f_mu
    for k in range(0, len(rounds), 500):
        for c in (rounds[k:k + 500] if path == "add" else [None]):
            if c is None:
                r.extend(rounds[k:k + 500])
            else:
                r.add(c)
            if st.f_mu is not pool:
                reallocations += 1
                pool = st.f_mu
    assert compactions <= 6 and reallocations <= 22
    assert st.used <= 2 * (2 * st.live_factors() + 4 * st.n)
    _check_sums(st)


def test_lazy_scale_is_folded_in_before_underflow():
    r = Rater("mmr")
    r.add(Contest([("a", 0, 0), ("b", 1, 1)]))
    st = r.state
    i = r.players.index["a"]
    _, _, w_before = st.factors(i)
    # pretend thousands of rounds have shrunk the lazy scale
    tiny = 1e-150
    b = st.fb_base[i] + st.fb_start[i]
    st.f_wout[b: b + st.fb_len[i]] /= tiny
    st.sum_aw[i] /= tiny
    st.sum_w[i] /= tiny
    st.scale[i] *= tiny
    np.testing.assert_allclose(st.factors(i)[2], w_before, rtol=1e-12)
    players = np.array([i], dtype=np.int64)
    mu, sig = r.players.mu[players], r.players.sigma[players]
    gamma = np.array([80 * math.sqrt(0.2)])
    K.diffuse(players, mu, sig, gamma, 1.0, False, st.normal_view(),
              K.LazyWeights(st.scale, st.sum_aw, st.sum_w), st.blocks_view(), st.pool_view())
    assert st.scale[i] == 1.0  # folded into the stored weights
    kappa = (sig[0] / math.hypot(sig[0], gamma[0])) ** 2
    np.testing.assert_allclose(st.factors(i)[2], w_before * kappa**2, rtol=1e-12)
    _check_sums(st)


@pytest.mark.parametrize("n", [8, 70])
def test_serial_and_parallel_kernels_give_the_same_bits(n: int) -> None:
    """Rounds of fewer than ``PARALLEL_FROM`` players take the serial twins of the
    parallel kernels; both loop over the same per-player function, bit for bit."""
    rng = np.random.default_rng(n)
    names = [f"p{i}" for i in range(3 * n)]
    r = Rater("mmr-fast")
    for k in range(6):  # players with a few factors each
        who = rng.choice(3 * n, n, replace=False)
        r.add(Contest.from_scores([names[i] for i in who], rng.normal(size=n),
                                  time_seconds=86_400 * k))
    st = r.state
    players = np.sort(rng.choice(st.n, n, replace=False)).astype(np.int64)
    mu = r.players.mu[players].copy()
    sig = r.players.sigma[players].copy()
    lo = np.arange(n, dtype=np.int64)
    delta = np.hypot(sig, 200.0)
    order = np.lexsort((lo, np.round(delta / 2.0), np.round(mu / 2.0)))
    merged = K.merge_terms(order, mu, delta, lo, 2.0)
    args = (0, merged, mu, lo, 100, 2.0, False, mu.copy())
    perf_p, st_p = K.subsampled_performance(*args)
    perf_s, st_s = K.subsampled_performance_serial(*args)
    assert perf_p.tobytes() == perf_s.tobytes() and st_p.tobytes() == st_s.tobytes()
    outs = []
    for kernel in (K.update_logistic, K.update_logistic_serial):
        s = type(st).from_arrays(st.to_arrays())
        s.ensure_players(st.n)
        s.reserve(players)
        out = kernel(players, perf_p, np.full(n, 200.0), mu, sig, 100, 0.0, s.normal_view(),
                     K.LazyWeights(s.scale, s.sum_aw, s.sum_w), s.blocks_view(), s.pool_view())
        outs.append((*out, *(getattr(s, f) for f in s.player_fields())))
    for a, b in zip(*outs, strict=True):
        assert a.tobytes() == b.tobytes()
    assert K.update_logistic_for(n) is (K.update_logistic if n >= K.PARALLEL_FROM
                                        else K.update_logistic_serial)
