"""The Elo-MMR paper's properties ([EbtekarLiu2021], Sections 4-5) as hypothesis tests.

Each test states the inequality or identity it checks.  Notation: a player's
posterior is a normal factor (p0, w0 = 1/beta0^2) and logistic factors
(p_k, beta_k) with weights w_k = omega_k / beta_k^2; the rating is the zero of
Eq. 6, L'(x) = w0 (x - p0) + sum_k w_out_k tanh((x - p_k) w_arg_k) with
w_out = pi / (sqrt(3) beta) and w_arg = w_out / 2, and 1/sigma^2 = w0 + sum_k w_k
(Eq. 8).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from _histories import (
    RawContest,
    groups_of,
    histories,
    hyp,
    rate_podium,
    standings_from_groups,
    with_standings,
)
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import brentq

from podium import Contest, Rater, rate
from podium.systems.elo_mmr import EloMMRState
from podium.systems.elo_mmr import kernels as K

PI = math.pi
TANH_MULT = PI / math.sqrt(3.0)
# weight of a logistic factor: 6/pi^2 * w_arg * w_out (= 1/beta^2 when fresh)
WEIGHT_OF_TANH = 6.0 / PI**2


def events_by_contest(r: Rater) -> dict[int, Any]:
    ev = r.events_frame()
    return {int(c): g for c, g in ev.groupby("contest_index")}


# ---------------------------------------------------------------------- Theorem 5.2
@pytest.mark.parametrize("system", ["mmr", "mmx", "mmr-inf"])
@hyp(25)
@given(history=histories(weights=True))
def test_better_place_means_higher_performance(system: str, history: list[RawContest]) -> None:
    """Thm 5.2: lo_i < lo_j in a round implies p_i > p_j; tied players share p."""
    r = rate_podium(history, system)
    for _, g in events_by_contest(r).items():
        g = g.sort_values("place", kind="stable")
        places = g["place"].to_numpy()
        perf = g["perf"].to_numpy()
        for a in range(len(g) - 1):
            if places[a] < places[a + 1]:
                assert perf[a] > perf[a + 1], (places[a], places[a + 1], perf[a], perf[a + 1])
            else:
                assert perf[a] == pytest.approx(perf[a + 1], abs=1e-9)


# ---------------------------------------------------------------------- Theorem 5.5
def move_up(groups: list[list[str]], h: str) -> list[list[str]] | None:
    """One place up for h, keeping the relative order of everybody else: break h's tie
    in its favour, or swap with the single player directly above, or join the tie
    group directly above.  None when h is alone in first place."""
    gi = next(k for k, g in enumerate(groups) if h in g)
    out = [list(g) for g in groups]
    if len(out[gi]) > 1:
        out[gi].remove(h)
        out.insert(gi, [h])
        return out
    if gi == 0:
        return None
    if len(out[gi - 1]) == 1:
        out[gi - 1], out[gi] = out[gi], out[gi - 1]
    else:
        out[gi - 1].append(h)
        del out[gi]
    return out


def moves(history: list[RawContest]) -> list[tuple[int, str]]:
    """(contest, player) pairs whose move keeps the set of rated rounds unchanged."""
    out = []
    for ci, c in enumerate(history):
        if c.everybody_tied:
            continue
        groups = groups_of(c.standings)
        for h in c.handles:
            new = move_up(groups, h)
            if new is not None and len(new) > 1:
                out.append((ci, h))
    return out


def without(c: RawContest, h: str) -> RawContest | None:
    groups = [[x for x in g if x != h] for g in groups_of(c.standings)]
    groups = [g for g in groups if g]
    return with_standings(c, groups) if groups else None


@st.composite
def incentive_cases(draw: Any) -> tuple[list[RawContest], list[RawContest], str]:
    """(history, the same history with player h one place up in round c, h).

    Theorem 5.5 holds the historical ratings of every other player fixed.  A plain rerun
    does not: the players h overtakes lose rating, and h meets them again later.  So h
    plays round c against the random field, sits out the rest of the random prefix, and
    then plays 0-3 more rounds against fresh players only, whose priors are the same in
    both runs.  (The chain of Lemmas 5.3 and 5.4 through h's own later rounds is what is
    exercised.)"""
    prefix = draw(histories(weights=True, max_contests=5, max_players=12,
                            pool=[f"h{k:02d}" for k in range(16)]))
    candidates = moves(prefix)
    assume(candidates)
    ci, h = draw(st.sampled_from(candidates))
    new_groups = move_up(groups_of(prefix[ci].standings), h)
    assert new_groups is not None
    base = list(prefix[: ci + 1])
    for c in prefix[ci + 1:]:
        rest = without(c, h)
        if rest is not None:
            base.append(rest)
    t = prefix[-1].time_seconds
    for k in range(draw(st.integers(0, 3))):
        fresh = [f"fresh{k}_{j}" for j in range(draw(st.integers(1, 8)))]
        pos = draw(st.integers(0, len(fresh)))
        order = fresh[:pos] + [h] + fresh[pos:]
        cuts = draw(st.lists(st.integers(0, 3), min_size=len(order) - 1,
                             max_size=len(order) - 1))
        groups = [[order[0]]]
        for x, cut in zip(order[1:], cuts, strict=True):
            if cut:
                groups.append([x])
            else:
                groups[-1].append(x)
        t += draw(st.integers(0, 5 * 86_400))
        weight = draw(st.one_of(st.just(1.0), st.floats(0.5, 2.0)))
        base.append(RawContest(standings_from_groups(groups), f"later{k}", t, weight))
    changed = list(base)
    changed[ci] = with_standings(base[ci], new_groups)
    return base, changed, h


@pytest.mark.parametrize("system", ["mmr", "mmr-inf", "mmx"])
@hyp(40)
@given(case=incentive_cases())
def test_aligned_incentives(system: str,
                            case: tuple[list[RawContest], list[RawContest], str]) -> None:
    """Thm 5.5: moving a player one place up in one past round (others' rankings and
    historical ratings held fixed) never lowers its current rating (1e-9 slack)."""
    base, changed, h = case
    ra, rb = rate_podium(base, system), rate_podium(changed, system)
    before, after = ra.rating(h)[0], rb.rating(h)[0]
    assert after >= before - 1e-9, (h, before, after)
    # the performance in the changed round rises (Lemma 5.3), and so does every later one
    pa, pb = ra.history(h)["perf"].to_numpy(), rb.history(h)["perf"].to_numpy()
    assert pa.size == pb.size
    assert np.all(pb >= pa - 1e-9)


def test_aligned_incentives_needs_others_ratings_fixed() -> None:
    """Why the test above isolates h: in a plain rerun, breaking a tie in h06's favour in
    round 0 lowers h07's rating, and tying h07 again in round 1 then gives h06 a lower
    final rating.  Theorem 5.5 does not cover this (h07's historical rating changed), and
    the reference computes the same numbers."""
    top = [(f"h0{k}", 0, 5) for k in range(6)]
    tied = [*top, ("h06", 6, 7), ("h07", 6, 7)]
    split = [*top, ("h06", 6, 6), ("h07", 7, 7)]
    finals = []
    for first in (tied, split):
        r = rate([Contest(first, name="c0"), Contest(tied, name="c1")], "mmr")
        finals.append(r.rating("h06")[0])
    assert finals[1] < finals[0]
    assert finals == pytest.approx([1212.332316049962, 1207.4201272666758], abs=1e-6)


# ---------------------------------------------------------------------- Theorem 5.7
@pytest.mark.parametrize("rho", [1.0, 0.3, 4.0])
@hyp(20)
@given(history=histories(weights=True, ceilings=True, max_contests=7))
def test_robust_response(rho: float, history: list[RawContest]) -> None:
    """Thm 5.7 (robustness), for every participant of every round, in its finite form.

    With L'_old the rating equation after the diffusion (zero at mu_prev, slope
    between w0 and w0 + pi^2/6 * sum_{k < t} w_k) and the new term
    w_out tanh((x - p_t) w_arg):

      (upper)  |mu_t - mu_prev| <= w_out |tanh((mu_prev - p_t) w_arg)| / w0
                                 <= pi beta0^2 / (beta_t sqrt 3)      (the theorem's bound)
      (lower)  |mu_t - mu_prev| >= w_out |tanh((mu_t - p_t) w_arg)|
                                    / (w0 + pi^2/6 sum_{k < t} w_k)   (the theorem's lower
                                    bound times a tanh factor that tends to 1 as p_t -> +-inf)

    and mu_t moves towards p_t.  w0 is the normal factor's weight after the diffusion
    (read from the state; checked against Eq. 8).
    """
    r = Rater("mmr", rho=rho)
    st_: EloMMRState = r.state
    for raw in history:
        c = Contest(list(raw.standings), name=raw.name, time_seconds=raw.time_seconds,
                    weight=raw.weight, perf_ceiling=raw.perf_ceiling)
        prev = {}
        for h in c.handles:
            prev[h] = r.rating(h) if h in r.players.index else (1500.0, 350.0)
        rep = r.add(c)
        if rep.skipped:
            continue
        w = raw.weight * 0.2
        beta = 80.0 * math.sqrt(1.0 + 1.0 / w)
        w_out = TANH_MULT / beta
        w_arg = 0.5 * w_out
        ev = r.events_frame()
        ev = ev[ev["contest_index"] == rep.index].set_index("handle")
        for h in c.handles:
            i = r.players.index[h]
            mu_prev, _ = prev[h]
            mu_new, sig_new = r.rating(h)
            p_t = float(ev.loc[h, "perf"])
            w0 = float(st_.nf_w[i])
            fp, fa, fo = st_.factors(i)
            # the newest factor is this round's performance (p_t, beta_t)
            assert fp[-1] == pytest.approx(p_t, abs=1e-9)
            assert fa[-1] == pytest.approx(w_arg, rel=1e-9)
            assert fo[-1] == pytest.approx(w_out, rel=1e-9)
            hist_w = float(np.sum(WEIGHT_OF_TANH * fa[:-1] * fo[:-1]))
            # Eq. 8: total weight = 1/sigma^2
            assert w0 + hist_w + beta**-2 == pytest.approx(sig_new**-2, rel=1e-9)
            delta = mu_new - mu_prev
            upper = w_out * abs(math.tanh((mu_prev - p_t) * w_arg)) / w0
            theorem_upper = PI / (beta * math.sqrt(3.0)) / w0
            lower = (w_out * abs(math.tanh((mu_new - p_t) * w_arg))
                     / (w0 + PI**2 / 6.0 * hist_w))
            slack = 1e-7 + 1e-9 * abs(delta)
            assert abs(delta) <= upper + slack, (h, delta, upper)
            assert upper <= theorem_upper * (1 + 1e-12)
            assert abs(delta) >= lower - slack, (h, delta, lower)
            if abs(p_t - mu_prev) > 1e-6:
                assert delta * (p_t - mu_prev) >= -1e-9, (h, delta, p_t, mu_prev)


def test_robust_response_extreme_performance() -> None:
    """Thm 5.7 near its limit: a settled player beating 1500 newcomers (performance far
    above its rating, tanh factor ~ 1) moves by at most pi beta0^2 / (beta sqrt 3) and at
    least the theorem's lower bound (times the tanh factor)."""
    r = Rater("mmr")
    field = [("x", 0, 0), ("y", 1, 1), ("z", 2, 2)]
    for k in range(12):
        order = field[k % 3:] + field[: k % 3]
        r.add(Contest([(h, j, j) for j, (h, _, _) in enumerate(order)], name=f"warm{k}"))
    mu_prev, _ = r.rating("x")
    big = [("x", 0, 0)] + [(f"n{k}", 1 + k, 1 + k) for k in range(1500)]
    r.add(Contest(big, name="big"))
    i = r.players.index["x"]
    beta = 80.0 * math.sqrt(6.0)
    w_out = TANH_MULT / beta
    p_t = float(r.history("x")["perf"].iloc[-1])
    fp, fa, fo = r.state.factors(i)
    hist_w = float(np.sum(WEIGHT_OF_TANH * fa[:-1] * fo[:-1]))
    w0 = float(r.state.nf_w[i])
    mu_new = r.rating("x")[0]
    tanh_factor = abs(math.tanh((mu_new - p_t) * 0.5 * w_out))
    assert p_t - mu_prev > 1000
    assert tanh_factor > 0.99
    theorem_lower = PI / (beta * math.sqrt(3.0)) / (w0 + PI**2 / 6.0 * hist_w)
    theorem_upper = PI / (beta * math.sqrt(3.0)) / w0
    assert theorem_lower * tanh_factor - 1e-9 <= mu_new - mu_prev <= theorem_upper


# ---------------------------------------------------------------------- Theorem 4.1
def eq6_zero(w0: float, p0: float, fp: np.ndarray, fa: np.ndarray, fo: np.ndarray) -> float:
    def f(x: float) -> float:
        return w0 * (x - p0) + float(np.sum(fo * np.tanh((x - fp) * fa)))

    return float(brentq(f, -6000.0, 9000.0, xtol=1e-13, rtol=4 * np.finfo(float).eps,
                        maxiter=500))


def total_weight(st_: EloMMRState, i: int) -> float:
    _, fa, fo = st_.factors(i)
    return float(st_.nf_w[i] + np.sum(WEIGHT_OF_TANH * fa * fo))


def diffuse_one(st_: EloMMRState, i: int, mu: float, sig: float, gamma: float,
                rho: float) -> float:
    out = K.diffuse(
        np.array([i], dtype=np.int64), np.array([mu]), np.array([sig]), np.array([gamma]),
        float(rho), False, st_.normal_view(), K.LazyWeights(st_.scale, st_.sum_aw, st_.sum_w),
        st_.blocks_view(), st_.pool_view(),
    )
    return float(out[0])


rated_history = histories(weights=True, ceilings=True, max_contests=7, all_ties=False)


@hyp(30)
@given(history=rated_history, data=st.data(), gamma=st.floats(0.0, 500.0),
       rho=st.sampled_from([0.25, 0.5, 1.0, 2.0, 6.0]))
def test_pseudodiffusion_preserves_rating_and_adds_gamma_squared(
    history: list[RawContest], data: Any, gamma: float, rho: float
) -> None:
    """Thm 4.1, rating preservation and correct magnitude: after diffuse(gamma, rho) the
    zero of Eq. 6 is unchanged (1e-9) and 1/(total weight) = sigma^2 + gamma^2."""
    r = rate_podium(history, "mmr")
    assume(r.num_players > 0)
    h = data.draw(st.sampled_from(sorted(r.players.index)))
    i = r.players.index[h]
    mu, sig = r.rating(h)
    st_ = r.state.copy()
    fp, fa, fo = st_.factors(i)
    zero_before = eq6_zero(float(st_.nf_w[i]), float(st_.nf_mu[i]), fp, fa, fo)
    assert zero_before == pytest.approx(mu, abs=1e-7)
    assert total_weight(st_, i) == pytest.approx(sig**-2, rel=1e-9)  # Eq. 8

    new_sig = diffuse_one(st_, i, mu, sig, gamma, rho)
    assert new_sig == pytest.approx(math.hypot(sig, gamma), rel=1e-12)
    fp2, fa2, fo2 = st_.factors(i)
    np.testing.assert_array_equal(fp2, fp)  # performances untouched
    zero_after = eq6_zero(float(st_.nf_w[i]), float(st_.nf_mu[i]), fp2, fa2, fo2)
    assert zero_after == pytest.approx(zero_before, abs=1e-9)
    assert 1.0 / total_weight(st_, i) == pytest.approx(sig**2 + gamma**2, rel=1e-9)
    # other players are untouched
    for name in ("nf_mu", "nf_w", "scale"):
        a, b = getattr(r.state, name)[: r.state.n], getattr(st_, name)[: st_.n]
        mask = np.arange(a.size) != i
        np.testing.assert_array_equal(a[mask], b[mask])


@hyp(30)
@given(history=rated_history, data=st.data(), g1=st.floats(0.0, 300.0),
       g2=st.floats(0.0, 300.0), rho=st.sampled_from([0.25, 0.5, 1.0, 2.0, 6.0]))
def test_pseudodiffusion_composes(history: list[RawContest], data: Any, g1: float, g2: float,
                                  rho: float) -> None:
    """Thm 4.1, composability: diffusing by g1 then g2 equals one diffusion by
    hypot(g1, g2): same total weight, same rating, and in fact the same factors."""
    r = rate_podium(history, "mmr")
    assume(r.num_players > 0)
    h = data.draw(st.sampled_from(sorted(r.players.index)))
    i = r.players.index[h]
    mu, sig = r.rating(h)
    two = r.state.copy()
    s1 = diffuse_one(two, i, mu, sig, g1, rho)
    diffuse_one(two, i, mu, s1, g2, rho)
    one = r.state.copy()
    diffuse_one(one, i, mu, sig, math.hypot(g1, g2), rho)

    assert total_weight(two, i) == pytest.approx(total_weight(one, i), rel=1e-9)
    f_two, f_one = two.factors(i), one.factors(i)
    z_two = eq6_zero(float(two.nf_w[i]), float(two.nf_mu[i]), *f_two)
    z_one = eq6_zero(float(one.nf_w[i]), float(one.nf_mu[i]), *f_one)
    assert z_two == pytest.approx(z_one, abs=1e-9)
    assert z_one == pytest.approx(mu, abs=1e-7)
    assert two.nf_w[i] == pytest.approx(one.nf_w[i], rel=1e-9)
    assert two.nf_mu[i] == pytest.approx(one.nf_mu[i], abs=1e-8)
    np.testing.assert_allclose(f_two[2], f_one[2], rtol=1e-9, atol=0)


@hyp(15)
@given(history=rated_history, data=st.data())
def test_zero_diffusion_changes_nothing(history: list[RawContest], data: Any) -> None:
    """Thm 4.1, zero diffusion: gamma = 0 leaves the posterior as it was (rho finite)."""
    r = rate_podium(history, "mmr")
    assume(r.num_players > 0)
    h = data.draw(st.sampled_from(sorted(r.players.index)))
    i = r.players.index[h]
    mu, sig = r.rating(h)
    st_ = r.state.copy()
    assert diffuse_one(st_, i, mu, sig, 0.0, 1.0) == sig
    assert st_.nf_w[i] == pytest.approx(r.state.nf_w[i], rel=1e-15)
    assert st_.nf_mu[i] == pytest.approx(r.state.nf_mu[i], rel=1e-15)
    np.testing.assert_allclose(st_.factors(i)[2], r.state.factors(i)[2], rtol=1e-15)


# ---------------------------------------------------------------------- translation
@pytest.mark.parametrize("system", ["mmr", "mmx", "mmr-inf", "mmr-fast", "mmr-simple"])
@hyp(15)
@given(history=histories(weights=True), shift=st.floats(-1500.0, 1500.0))
def test_translation_invariance(system: str, history: list[RawContest], shift: float) -> None:
    """Adding c to mu_noob adds c to every rating and performance; sigma is unchanged."""
    if system == "mmr-fast":
        # the subsampling buckets are absolute (width 2): shift by whole buckets only
        shift = 2.0 * round(shift / 2.0)
    a = rate_podium(history, system)
    b = rate_podium(history, system, mu_noob=1500.0 + shift)
    ea, eb = a.events_frame(), b.events_frame()
    assert list(ea["handle"]) == list(eb["handle"])
    np.testing.assert_allclose(eb["mu"] - shift, ea["mu"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(eb["perf"] - shift, ea["perf"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(eb["sigma"], ea["sigma"], rtol=1e-12, atol=0)


# ---------------------------------------------------------------------- symmetry
TWINS = ("twin_a", "twin_b")


@st.composite
def twin_histories(draw: Any) -> list[RawContest]:
    """Random history where two extra players always play together, tied."""
    history = draw(histories(weights=True, ceilings=True))
    out = []
    for c in history:
        if not draw(st.booleans()):
            out.append(c)
            continue
        groups = groups_of(c.standings)
        k = draw(st.integers(0, len(groups)))
        if k < len(groups) and draw(st.booleans()):
            groups[k] = groups[k] + list(TWINS)  # join an existing tie group
        else:
            groups.insert(k, list(TWINS))
        out.append(with_standings(c, groups))
    return out


@pytest.mark.parametrize("system",
                         ["mmr", "mmr-fast", "mmx", "mmx-fast", "mmr-inf", "mmr-simple"])
@hyp(15)
@given(history=twin_histories())
def test_tied_players_with_equal_states_get_equal_results(
    system: str, history: list[RawContest]
) -> None:
    r = rate_podium(history, system)
    assume(TWINS[0] in r.players.index)
    ha, hb = r.history(TWINS[0]), r.history(TWINS[1])
    assert list(ha["contest_index"]) == list(hb["contest_index"])
    for col in ("mu", "sigma", "perf"):
        np.testing.assert_allclose(ha[col], hb[col], rtol=0, atol=1e-9, err_msg=col)


@pytest.mark.parametrize("system", ["mmr", "mmr-fast", "mmx", "mmr-inf", "mmr-simple"])
@hyp(10)
@given(history=histories(weights=True, ceilings=True))
def test_non_participants_never_change(system: str, history: list[RawContest]) -> None:
    r = Rater(system)
    for c in history:
        before = r.ratings(sort=False).set_index("handle")
        r.add(Contest(list(c.standings), name=c.name, time_seconds=c.time_seconds,
                      weight=c.weight, perf_ceiling=c.perf_ceiling))
        after = r.ratings(sort=False).set_index("handle")
        out = [h for h in before.index if h not in set(c.handles)]
        np.testing.assert_array_equal(after.loc[out, "mu"], before.loc[out, "mu"])
        np.testing.assert_array_equal(after.loc[out, "sigma"], before.loc[out, "sigma"])


# ---------------------------------------------------------------------- sigma fixed point
@pytest.mark.parametrize("system", ["mmr", "mmx", "mmr-inf", "mmr-fast"])
@hyp(3)
@given(weight_limit=st.floats(0.1, 1.0), sig_limit=st.floats(30.0, 200.0),
       weight=st.floats(0.5, 2.0))
def test_sigma_tends_to_sig_limit(system: str, weight_limit: float, sig_limit: float,
                                  weight: float) -> None:
    """sigma'^-2 = (sigma^2 + gamma^2)^-1 + beta^-2, gamma^2 = w sig_limit^2,
    beta^2 = (1 + 1/w) sig_limit^2 (w = weight * weight_limit): the sequence of a player
    who plays every round follows it and tends to its fixed point sig_limit."""
    w = weight * weight_limit
    beta2 = (1.0 + 1.0 / w) * sig_limit**2
    gamma2 = w * sig_limit**2
    assert 1.0 / (sig_limit**2 + gamma2) + 1.0 / beta2 == pytest.approx(sig_limit**-2,
                                                                        rel=1e-12)
    want = [350.0]
    while abs(want[-1] - sig_limit) > 1e-9 * sig_limit:
        want.append((1.0 / (want[-1] ** 2 + gamma2) + 1.0 / beta2) ** -0.5)
        assert len(want) < 400  # geometric convergence: at most ~270 rounds here
    r = Rater(system, weight_limit=weight_limit, sig_limit=sig_limit)
    for k in range(len(want) - 1):
        r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name=f"r{k}", weight=weight))
    np.testing.assert_allclose(r.history("b")["sigma"], want[1:], rtol=1e-11)
    assert r.rating("b")[1] == pytest.approx(sig_limit, rel=1e-8)


# ---------------------------------------------------------------------- mmr-simple
@hyp(25)
@given(history=histories(weights=True, max_players=20))
def test_simple_implementation_agrees_with_mmr(history: list[RawContest]) -> None:
    """The literal NumPy bisection implementation and the fast kernels agree (1e-6)."""
    a = rate_podium(history, "mmr")
    b = rate_podium(history, "mmr-simple")
    ea, eb = a.events_frame(), b.events_frame()
    assert list(ea["handle"]) == list(eb["handle"])
    for col in ("mu", "sigma", "perf"):
        np.testing.assert_allclose(eb[col], ea[col], rtol=0, atol=1e-6, err_msg=col)


def test_simple_implementation_applies_contest_ceiling() -> None:
    """A contest's perf_ceiling caps performances in mmr-simple as in mmr (and in the
    reference's mmr-simple)."""
    c = [Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="c0", perf_ceiling=1600.0)]
    exact, simple = rate(c, "mmr"), rate(c, "mmr-simple")
    assert exact.history("a")["perf"].iloc[0] == pytest.approx(1600.0)
    np.testing.assert_allclose(simple.events_frame()["perf"], exact.events_frame()["perf"],
                               atol=1e-6)
    np.testing.assert_allclose(simple.events_frame()["mu"], exact.events_frame()["mu"],
                               atol=1e-6)


def test_standings_helpers_round_trip() -> None:
    s = (("a", 0, 1), ("b", 0, 1), ("c", 2, 2))
    assert standings_from_groups(groups_of(s)) == s
