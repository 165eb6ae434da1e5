"""Team rounds of Elo-MMR (every variant) and Elo-R: the two-phase rule of docs/teams.md.

Properties: one-member weight-1 teams are the individual system bit for bit; a weight
tending to 0 changes nothing; members are exchangeable; moving a team up never lowers
a member's rating; the member update of Elo-MMchi (and of non-robust Elo-R) is direct
Gaussian conditioning on the team sum, computed here independently with matrices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from _histories import hyp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from podium import Rater
from podium.core.contest import Contest
from podium.systems import get_system
from podium.systems.base import RatingSystem, RoundInput, RoundOutput, SystemState
from podium.systems.base.two_phase_teams import (
    check_teams,
    member_measurements,
    team_places,
    team_terms,
)
from podium.systems.elo_r import EloR, EloRState

MMR_VARIANTS = ["mmr", "mmr-fast", "mmx", "mmx-fast", "mmr-inf", "mmr-simple"]
ELO_R_VARIANTS = ["elo-r", "elo-r-leading", "elo-r-all", "elo-r-fancy", "elo-r-nonrobust"]
ALL = MMR_VARIANTS + ELO_R_VARIANTS


def exact(name: str) -> dict[str, float]:
    """Parameters that make an Elo-MMR preset condition on ``P_T`` as if it were exact
    (T4-T5, ``team_perf_uncertainty = 0``); the literal implementation and Elo-R
    always do."""
    return {} if name == "mmr-simple" or name.startswith("elo-r") else {
        "team_perf_uncertainty": 0.0}


# ---------------------------------------------------------------------- a small table
@dataclass
class Table:
    """Ratings of ``n`` players and a system's state, rated round by round."""

    system: RatingSystem
    state: SystemState
    mu: np.ndarray
    sigma: np.ndarray
    played: np.ndarray

    @classmethod
    def new(cls, system: RatingSystem, n: int) -> Table:
        state = system.make_state()
        state.ensure_players(n)
        mu0, sig0 = system.newcomer()
        return cls(system, state, np.full(n, mu0), np.full(n, sig0),
                   np.zeros(n, dtype=np.int64))

    def copy(self) -> Table:
        return Table(self.system, self.state.copy(), self.mu.copy(), self.sigma.copy(),
                     self.played.copy())

    def rate(self, players: npt.ArrayLike, lo: npt.ArrayLike,
             offsets: Sequence[int] | None = None, weight: Sequence[float] | None = None,
             *, contest_weight: float = 1.0, ceiling: float | None = None) -> RoundOutput:
        """One round through ``round_update``: ``players`` best first with first places
        ``lo`` (per row: its team's first team place in a team round); ``offsets`` (and
        ``weight``) make it a team round (even of one-member teams of weight 1)."""
        idx = np.asarray(players, dtype=np.int64)
        n = idx.size
        handles = [f"p{i}" for i in idx]
        meta: dict[str, Any] = {"name": "round", "weight": contest_weight,
                                "perf_ceiling": ceiling}
        if offsets is None:
            contest = Contest.from_arrays(handles, np.asarray(lo), _hi(np.asarray(lo)), **meta)
            team_offsets = w = None
        else:
            offs = np.asarray(offsets, dtype=np.int64)
            t_lo = np.asarray(lo, dtype=np.int64)[offs[:-1]]
            w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
            contest = Contest.from_team_arrays(handles, offs, [f"t{t}" for t in range(t_lo.size)],
                                               t_lo, _hi(t_lo), w, **meta)
            assert contest.teams is not None
            team_offsets, w = contest.teams.offsets, contest.teams.weight
        rnd = RoundInput(contest=contest, players=idx, lo=contest.lo, hi=contest.hi,
                         mu=self.mu[idx].copy(), sigma=self.sigma[idx].copy(),
                         played=self.played[idx].copy(), delta_seconds=np.zeros(n),
                         team_offsets=team_offsets, weight=w)
        out = self.system.round_update(self.state, rnd)
        self.mu[idx] = out.mu
        self.sigma[idx] = out.sigma
        self.played[idx] += 1
        return out


def _hi(lo: np.ndarray) -> np.ndarray:
    """The last place of each tie range, from the first places ``lo`` (sorted)."""
    last = np.searchsorted(lo, lo, side="right") - 1
    return np.asarray(last, dtype=np.int64)


def warmed(name: str, n: int = 12, rounds: int = 4, seed: int = 0, **params: object) -> Table:
    """A table of ``n`` players after a few individual rounds (logistic factors and
    differing uncertainties in every state)."""
    rng = np.random.default_rng(seed)
    tab = Table.new(get_system(name, **params), n)
    for _ in range(rounds):
        k = int(rng.integers(max(2, n // 2), n + 1))
        players = rng.permutation(n)[:k]
        places = np.sort(rng.integers(0, k, size=k))  # ties included
        lo = np.searchsorted(places, places)
        tab.rate(players, lo)
    return tab


def state_image(tab: Table) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in tab.state.to_arrays().items()}


def assert_bits(a: np.ndarray, b: np.ndarray, what: str) -> None:
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    assert a.shape == b.shape, what
    assert a.tobytes() == b.tobytes(), f"{what}: {a} != {b}"


def random_team_round(rng: np.random.Generator, n: int, max_size: int = 3,
                      weights: bool = True) -> tuple[list[int], list[int], list[int], list[float]]:
    """Players, team first places per row, team offsets and weights of a random round."""
    players = rng.permutation(n).tolist()
    offs = [0]
    while offs[-1] < n:
        offs.append(min(n, offs[-1] + int(rng.integers(1, max_size + 1))))
    t = len(offs) - 1
    tplaces = np.sort(rng.integers(0, t, size=t))
    tlo = np.searchsorted(tplaces, tplaces)
    lo = [int(tlo[k]) for k in range(t) for _ in range(offs[k + 1] - offs[k])]
    w = (rng.uniform(0.2, 1.0, size=n) if weights else np.ones(n)).tolist()
    return players, lo, offs, w


# ---------------------------------------------------------------------- the algebra
@hyp(60)
@given(data=st.data())
def test_member_measurement_is_conditioning_on_the_team_sum(data: st.DataObject) -> None:
    """(T4): the posterior of s_i from (p_i, b_i) equals Gaussian conditioning of the
    vector s on P_T = sum w_i s_i + noise, for every member."""
    m = data.draw(st.integers(1, 5))
    f = st.floats(0.05, 1.0)
    w = np.array(data.draw(st.lists(f, min_size=m, max_size=m)))
    mu = np.array(data.draw(st.lists(st.floats(500, 2500), min_size=m, max_size=m)))
    sig = np.array(data.draw(st.lists(st.floats(20, 400), min_size=m, max_size=m)))
    beta = np.array(data.draw(st.lists(st.floats(50, 300), min_size=m, max_size=m)))
    P = data.draw(st.floats(-2000, 6000))
    delta = np.hypot(sig, beta)
    offs = np.array([0, m])
    terms = team_terms(mu, delta, w, offs)
    p, b = member_measurements(mu, delta, beta, w, offs, terms, np.array([P]))
    # direct conditioning: s ~ N(mu, diag sig^2), P = w.s + e, e ~ N(0, sum w^2 beta^2)
    cov = np.diag(sig**2)
    var_p = w @ cov @ w + np.sum(w**2 * beta**2)
    gain = cov @ w / var_p
    post_mu = mu + gain * (P - w @ mu)
    post_var = np.diag(cov - np.outer(gain, w @ cov))
    # the same from the individual measurement (p_i, b_i^2)
    ind_mu = mu + sig**2 / (sig**2 + b**2) * (p - mu)
    ind_var = 1.0 / (1.0 / sig**2 + 1.0 / b**2)
    np.testing.assert_allclose(ind_mu, post_mu, rtol=1e-11, atol=1e-8)
    np.testing.assert_allclose(ind_var, post_var, rtol=1e-9)
    np.testing.assert_allclose(terms.mu, [w @ mu], rtol=1e-13)
    np.testing.assert_allclose(terms.delta**2, [np.sum(w**2 * delta**2)], rtol=1e-13)


def test_member_measurement_formulas_by_hand() -> None:
    mu = np.array([1500.0, 1700.0, 1600.0, 1400.0])
    sig = np.array([100.0, 50.0, 80.0, 120.0])
    beta = np.array([200.0, 210.0, 190.0, 200.0])
    w = np.array([1.0, 0.5, 0.8, 1.0])
    offs = np.array([0, 2, 3, 4])  # teams {0, 1}, {2}, {3}
    delta = np.hypot(sig, beta)
    terms = team_terms(mu, delta, w, offs)
    np.testing.assert_allclose(terms.mu, [1500 + 850, 0.8 * 1600, 1400])
    np.testing.assert_allclose(terms.delta, [math.hypot(delta[0], 0.5 * delta[1]),
                                             0.8 * delta[2], delta[3]])
    P = np.array([2400.0, 1300.0, 1450.0])
    p, b = member_measurements(mu, delta, beta, w, offs, terms, P)
    np.testing.assert_allclose(p, [1500 + 50, 1700 + 50 / 0.5, 1300 / 0.8, 1450])
    np.testing.assert_allclose(b, [math.sqrt(beta[0] ** 2 + 0.25 * delta[1] ** 2),
                                   math.sqrt(beta[1] ** 2 + 4 * delta[0] ** 2),
                                   beta[2], beta[3]])
    assert p[3] == P[2] and b[3] == beta[3]  # one member of weight 1: no round trip
    assert terms.delta[1] == 0.8 * delta[2] and terms.delta[2] == delta[3]
    assert team_places(np.array([0, 0, 1, 2]), offs).tolist() == [0, 1, 2]


@pytest.mark.parametrize(("offsets", "weight", "match"), [
    ([0, 2, 2], [1.0, 1.0], "rise strictly"),
    ([1, 2], [1.0, 1.0], "rise strictly"),
    ([0, 1, 2], [1.0, 0.0], r"\(0, 1\]"),
    ([0, 1, 2], [1.0, 1.5], r"\(0, 1\]"),
    ([0, 2], [1.0], r"\(0, 1\]"),
])
def test_check_teams_rejects(offsets: list[int], weight: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_teams(offsets, weight, 2)


# ---------------------------------------------------------------------- (1) individuals
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("ceiling", [None, 1650.0])
def test_one_member_weight_one_teams_are_the_individual_round(name: str,
                                                              ceiling: float | None) -> None:
    """Every team a single member of weight 1: bit for bit the individual update,
    the state included (T4-T5; the Rater rates such a round as an individual one
    whatever ``team_perf_uncertainty``, see test_rater_...)."""
    rng = np.random.default_rng(3)
    for seed in range(3):
        tab = warmed(name, seed=seed, **exact(name))
        n = tab.mu.size
        players = rng.permutation(n)[: n - 1].tolist()
        places = np.sort(rng.integers(0, n - 1, size=n - 1))
        lo = np.searchsorted(places, places).tolist()
        a, b = tab.copy(), tab.copy()
        oa = a.rate(players, lo, ceiling=ceiling, contest_weight=0.7)
        ob = b.rate(players, lo, list(range(n)), [1.0] * (n - 1), ceiling=ceiling,
                    contest_weight=0.7)
        for col in ("mu", "sigma", "perf"):
            assert_bits(getattr(oa, col), getattr(ob, col), f"{name} {col}")
        ia, ib = state_image(a), state_image(b)
        assert ia.keys() == ib.keys()
        for k in ia:
            assert_bits(ia[k], ib[k], f"{name} state {k}")


# ---------------------------------------------------------------------- (2) weight -> 0
WEIGHTS_TO_ZERO = [0.3, 0.1, 0.03, 0.01, 1e-3, 1e-4, 1e-5, 1e-6]


def prior_rating(tab: Table, who: int) -> float:
    """The rating a player would keep in a round that measured nothing: ``mu`` (the
    pseudodiffusion preserves it, Theorem 4.1), or Elo-R's noised prior mode ``r'``
    (its "all" method moves the mode, Sec. 5.2)."""
    system = tab.system
    if isinstance(system, EloR):
        assert isinstance(tab.state, EloRState)
        r, _ = system.noise_round(tab.state.copy(), np.array([who]), tab.mu[[who]],
                                  tab.sigma[[who]])
        return float(r[0])
    return float(tab.mu[who])


def assert_vanishes(changes: list[float], what: object) -> None:
    """Once w <= 0.01 the changes decrease (about linearly in w) down to ~0."""
    tail = changes[WEIGHTS_TO_ZERO.index(0.01):]
    assert all(b <= a * 1.000001 + 1e-12 for a, b in zip(tail, tail[1:], strict=False)), \
        (what, changes)
    assert tail[-1] < 1e-2, (what, changes)


@pytest.mark.parametrize("name", ALL)
def test_a_lone_member_of_vanishing_weight_keeps_its_rating(name: str) -> None:
    """Every team a single member; one of weight w -> 0+: its change of mu decreases
    to 0 (its team performance is pinned to its own prior, docs/teams.md)."""
    tab = warmed(name, seed=1)
    n = tab.mu.size
    players = list(range(n))
    lo = list(range(n))
    for who in (0, n // 2, n - 1):  # won, middle, last
        changes = []
        for w in WEIGHTS_TO_ZERO:
            t = tab.copy()
            weight = [1.0] * n
            weight[who] = w
            out = t.rate(players, lo, list(range(n + 1)), weight)
            changes.append(abs(out.mu[who] - prior_rating(tab, who)))
        assert_vanishes(changes, (name, who))


@pytest.mark.parametrize("name", ALL)
def test_a_teammate_of_vanishing_weight_changes_nothing(name: str) -> None:
    """In a three-member team, the member whose weight tends to 0 keeps its rating
    and gains no certainty (its measurement noise b_i grows like 1/w_i)."""
    tab = warmed(name, seed=2)
    n = tab.mu.size
    noised = prior_sigma(tab)
    for who in (0, 2):
        for order, offs, lo in (
            (list(range(n)), [0, 3, 5, 6, 8, 10, 12], [0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5]),
            # the team {0, 1, 2} fourth
            ([3, 4, 5, 6, 7, 0, 1, 2, 8, 9, 10, 11], [0, 2, 3, 5, 8, 10, 12],
             [0, 0, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5]),
        ):
            row = order.index(who)
            dmu, dsig = [], []
            for w in WEIGHTS_TO_ZERO:
                weight = [1.0] * n
                weight[row] = w
                out = tab.copy().rate(order, lo, offs, weight)
                dmu.append(abs(out.mu[row] - prior_rating(tab, who)))
                dsig.append(abs(out.sigma[row] - noised[who]))
            assert_vanishes(dmu, (name, who, "mu"))
            assert_vanishes(dsig, (name, who, "sigma"))


def prior_sigma(tab: Table) -> np.ndarray:
    """Every player's uncertainty after the round's diffusion or noise, before any
    measurement: what a member of weight 0 would keep."""
    system = tab.system
    n = tab.mu.size
    if isinstance(system, EloR):
        assert isinstance(tab.state, EloRState)
        _, s = system.noise_round(tab.state.copy(), np.arange(n), tab.mu, tab.sigma)
        return s
    gamma = system.sig_limit * np.sqrt(system.weight_limit)  # type: ignore[attr-defined]
    return np.hypot(tab.sigma, gamma)


# ---------------------------------------------------------------------- (3) exchangeable
@pytest.mark.parametrize("name", ALL)
def test_permuting_members_permutes_the_results(name: str) -> None:
    rng = np.random.default_rng(5)
    for seed in range(3):
        tab = warmed(name, seed=seed)
        players, lo, offs, w = random_team_round(rng, tab.mu.size)
        perm = []
        for t in range(len(offs) - 1):
            perm += (offs[t] + rng.permutation(offs[t + 1] - offs[t])).tolist()
        a, b = tab.copy(), tab.copy()
        oa = a.rate(players, lo, offs, w)
        ob = b.rate([players[k] for k in perm], [lo[k] for k in perm], offs,
                    [w[k] for k in perm])
        for col in ("mu", "sigma", "perf"):
            np.testing.assert_allclose(getattr(ob, col), getattr(oa, col)[perm], rtol=1e-11,
                                       atol=1e-8, err_msg=f"{name} {col}")


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("weight", [1.0, 0.6])
def test_equal_members_get_equal_updates(name: str, weight: float) -> None:
    """Newcomers (equal states) in one team with equal weights: equal results, exactly."""
    tab = Table.new(get_system(name), 9)
    offs = [0, 3, 5, 6, 9]
    lo = [0, 0, 0, 1, 1, 2, 3, 3, 3]
    w = [weight] * 3 + [1.0, 0.5, 1.0, weight, weight, weight]
    for _ in range(3):
        out = tab.rate(list(range(9)), lo, offs, w)
        for col in ("mu", "sigma", "perf"):
            v = getattr(out, col)
            assert v[0] == v[1] == v[2] and v[6] == v[7] == v[8], (name, col, v)
        assert out.mu[0] > 1500.0 > out.mu[6]


# ---------------------------------------------------------------------- (4) monotonicity
@pytest.mark.parametrize("name", ALL)
def test_moving_a_team_up_never_lowers_a_member(name: str) -> None:
    rng = np.random.default_rng(11)
    for seed in range(3):
        tab = warmed(name, seed=seed, n=14)
        players, _, offs, w = random_team_round(rng, tab.mu.size)
        teams = [players[offs[t]:offs[t + 1]] for t in range(len(offs) - 1)]
        tw = [w[offs[t]:offs[t + 1]] for t in range(len(offs) - 1)]

        def rate(order: list[int], places: list[int], tab: Table = tab,
                 teams: list[list[int]] = teams, tw: list[list[float]] = tw) -> dict[int, float]:
            """Teams in ``order`` with places ``places``: each player's new mu."""
            rows = [p for t in order for p in teams[t]]
            lo = [places[q] for q, t in enumerate(order) for _ in teams[t]]
            of = np.cumsum([0] + [len(teams[t]) for t in order]).tolist()
            out = tab.copy().rate(rows, lo, of, [x for t in order for x in tw[t]])
            return dict(zip(rows, out.mu.tolist(), strict=True))

        T = len(teams)
        base = list(range(T))
        distinct = list(range(T))
        before = rate(base, distinct)
        for t in range(1, T):
            up = base.copy()
            up[t - 1], up[t] = up[t], up[t - 1]
            after = rate(up, distinct)
            for p in teams[t]:
                assert after[p] >= before[p] - 1e-9, (name, t, p, before[p], after[p])
            # from a tie with the team above to strictly ahead of it
            tied = distinct[:t] + [t - 1] + distinct[t + 1:]
            tie = rate(base, tied)
            for p in teams[t]:
                assert before[p] - 1e-9 <= tie[p] <= after[p] + 1e-9, (name, t, p)


# ---------------------------------------------------------------------- (5), (6) Gaussian
def _gaussian_q(x: float, t: int, m: np.ndarray, d: np.ndarray, lo: np.ndarray) -> float:
    """Theorem 3.2's Q_t for normal team performances N(m_u, d_u^2), from scipy."""
    q = 0.0
    for u in range(m.size):
        if lo[u] < lo[t]:  # u beat t: l_u = -f / (1 - F)
            q -= math.exp(norm.logpdf(x, m[u], d[u]) - norm.logsf(x, m[u], d[u]))
        elif lo[u] > lo[t]:  # t beat u: v_u = f / F
            q += math.exp(norm.logpdf(x, m[u], d[u]) - norm.logcdf(x, m[u], d[u]))
        else:  # tied (t itself included): d_u = f'/f
            q -= (x - m[u]) / d[u] ** 2
    return q


def _elo_r_q(x: float, t: int, m: np.ndarray, d: np.ndarray, lo: np.ndarray) -> float:
    """Elo-R's Sec. 3 equation over the team terms (barred spreads): a team t beat adds
    (tanh - 1)/d, one that beat t (tanh + 1)/d, a tied one tanh/d, t itself 2 tanh/d."""
    q = 0.0
    for u in range(m.size):
        th = math.tanh((x - m[u]) / d[u])
        if u == t:
            q += 2.0 * th / d[u]
        elif lo[u] < lo[t]:
            q += (th + 1.0) / d[u]
        elif lo[u] > lo[t]:
            q += (th - 1.0) / d[u]
        else:
            q += th / d[u]
    return q


def _conditioned(mu: np.ndarray, var: np.ndarray, noise_var: np.ndarray, offs: list[int],
                 w: np.ndarray, team_lo: np.ndarray, q) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of every member's skill s ~ N(mu, diag var) given its team's
    P_T = sum w_i (s_i + e_i), e_i ~ N(0, noise_var_i), with P_T the zero of ``q`` over
    the team terms: plain matrix algebra, no use of (p_i, b_i)."""
    T = len(offs) - 1
    A = np.zeros((T, mu.size))
    for t in range(T):
        A[t, offs[t]:offs[t + 1]] = w[offs[t]:offs[t + 1]]
    m = A @ mu
    d = np.sqrt(A**2 @ (var + noise_var))
    P = np.array([brentq(q, -20000.0, 30000.0, args=(t, m, d, team_lo), xtol=1e-13,
                         rtol=1e-15, maxiter=500) for t in range(T)])
    cov = np.diag(var)
    post_mu = mu.copy()
    post_var = var.copy()
    for t in range(T):
        a = A[t]
        v = a @ cov @ a + np.sum(a**2 * noise_var)
        gain = cov @ a / v
        rows = slice(offs[t], offs[t + 1])
        post_mu[rows] = (mu + gain * (P[t] - a @ mu))[rows]
        post_var[rows] = np.diag(cov - np.outer(gain, a @ cov))[rows]
    return post_mu, np.sqrt(post_var)


@pytest.mark.parametrize("seed", range(4))
def test_elo_mmchi_is_gaussian_conditioning_on_the_team_sum(seed: int) -> None:
    """(5) Elo-MMchi: skills N(mu, sigma'^2) after the diffusion, performances with
    noise beta; each member's update equals conditioning on its team's sum."""
    rng = np.random.default_rng(seed)
    tab = warmed("mmx", seed=seed, n=13, **exact("mmx"))
    system = tab.system
    players, lo, offs, w = random_team_round(rng, tab.mu.size, max_size=4)
    cw = 0.2 * system.weight_limit  # type: ignore[attr-defined]
    sl = system.sig_limit  # type: ignore[attr-defined]
    beta, gamma = sl * math.sqrt(1.0 + 1.0 / cw), sl * math.sqrt(cw)
    idx = np.array(players)
    var = tab.sigma[idx] ** 2 + gamma**2
    post_mu, post_sd = _conditioned(tab.mu[idx], var, np.full(idx.size, beta**2), offs,
                                    np.array(w), np.array(lo)[offs[:-1]], _gaussian_q)
    out = tab.copy().rate(players, lo, offs, w, contest_weight=0.2)
    np.testing.assert_allclose(out.mu, post_mu, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out.sigma, post_sd, rtol=1e-10)
    # T7: P_T uncertain, Var[P_T | standings] = u (1 - 1/pi) delta_T^2 / (T - 1): the same
    # mean step, the variance shrunk by (1 - V / delta_T^2) of the exact conditioning
    for u in (1.0, 0.4):
        tab_u = warmed("mmx", seed=seed, n=13, team_perf_uncertainty=u)
        out_u = tab_u.rate(players, lo, offs, w, contest_weight=0.2)
        wa = np.array(w)
        sizes = np.diff(offs)
        d2 = np.add.reduceat(wa**2 * (var + beta**2), np.array(offs[:-1]))
        frac = u * (1.0 - 1.0 / math.pi) / (sizes.size - 1)
        shrink = var - post_sd**2
        want_sd = np.sqrt(var - shrink * (1.0 - np.repeat(frac * d2, sizes)
                                          / np.repeat(d2, sizes)))
        np.testing.assert_allclose(out_u.mu, post_mu, rtol=0, atol=1e-6)
        np.testing.assert_allclose(out_u.sigma, want_sd, rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_elo_r_normal_measurements_are_conditioning_on_the_team_sum(seed: int) -> None:
    """(6) Elo-R with normal measurements (``elo-r-nonrobust``): skills
    N(r', sigma^2 + eta^2), performances with spread gamma (barred units); each
    member's update equals conditioning on its team's sum, P_T from Sec. 3."""
    rng = np.random.default_rng(seed)
    tab = warmed("elo-r-nonrobust", seed=seed, n=13)
    system = tab.system
    assert isinstance(system, EloR)
    players, lo, offs, w = random_team_round(rng, tab.mu.size, max_size=4)
    idx = np.array(players)
    var = tab.sigma[idx] ** 2 + system.eta**2
    g2 = system.gamma**2 / 0.5
    post_mu, post_sd = _conditioned(tab.mu[idx], var, np.full(idx.size, g2), offs,
                                    np.array(w), np.array(lo)[offs[:-1]], _elo_r_q)
    out = tab.copy().rate(players, lo, offs, w, contest_weight=0.5)
    np.testing.assert_allclose(out.mu, post_mu, rtol=0, atol=1e-6)
    np.testing.assert_allclose(out.sigma, post_sd, rtol=1e-10)


# ---------------------------------------------------------------------- implementations
@pytest.mark.parametrize("seed", range(4))
def test_mmr_and_the_literal_implementation_agree_on_team_rounds(seed: int) -> None:
    """EloMMR's kernels and SimpleEloMMR's from-the-formulas team path (1e-6)."""
    rng = np.random.default_rng(seed)
    a, b = warmed("mmr", seed=seed, **exact("mmr")), warmed("mmr-simple", seed=seed)
    for _ in range(4):
        players, lo, offs, w = random_team_round(rng, a.mu.size)
        oa = a.rate(players, lo, offs, w, ceiling=1800.0)
        ob = b.rate(players, lo, offs, w, ceiling=1800.0)
        for col in ("mu", "sigma", "perf"):
            np.testing.assert_allclose(getattr(ob, col), getattr(oa, col), rtol=0, atol=1e-6,
                                       err_msg=col)


@pytest.mark.parametrize("name", ALL)
def test_the_ceiling_caps_member_performances(name: str) -> None:
    """The performance ceiling caps each member's p_i (logistic models; Elo-MMchi
    ignores ceilings as in individual rounds)."""
    tab = warmed(name, seed=4)
    players, lo, offs, w = random_team_round(np.random.default_rng(9), tab.mu.size)
    free = tab.copy().rate(players, lo, offs, w)
    capped = tab.copy().rate(players, lo, offs, w, ceiling=1550.0)
    if name.startswith("mmx"):
        assert_bits(capped.perf, free.perf, "perf")
        return
    np.testing.assert_array_equal(capped.perf, np.minimum(free.perf, 1550.0))
    assert np.all(capped.mu <= free.mu + 1e-9)
    assert np.any(free.perf > 1550.0)


# ---------------------------------------------------------------------- through the Rater
Round = tuple[list[int], list[int], list[int] | None, list[float] | None]


def team_history(rounds: int, n: int, seed: int, *, every: int = 2,
                 max_players: int = 24) -> list[Round]:
    """Rounds of at most ``max_players`` of ``n`` players: every ``every``-th an individual
    round, the others team rounds (with weights)."""
    rng = np.random.default_rng(seed)
    out: list[Round] = []
    while len(out) < rounds:
        r = len(out)
        k = int(rng.integers(4, min(n, max_players) + 1))
        chosen = rng.permutation(n)[:k].tolist()
        rnd: Round
        if r % every == 0:
            places = np.sort(rng.integers(0, k, size=k))
            rnd = (chosen, np.searchsorted(places, places).tolist(), None, None)
        else:
            players, lo, offs, w = random_team_round(rng, k, max_size=4)
            rnd = ([chosen[p] for p in players], lo, offs, w)
        if max(rnd[1]) > 0:  # not everybody tied (draws: tests/test_draws.py)
            out.append(rnd)
    return out


def as_contest(r: int, players: list[int], lo: list[int], offs: list[int] | None,
               w: list[float] | None) -> Contest:
    """Round ``r`` as a :class:`Contest` (``Contest.from_teams`` for a team round)."""
    name = f"round {r}"
    if offs is None:
        return Contest([(f"p{p}", a, b) for p, a, b in
                        zip(players, lo, _hi(np.array(lo)).tolist(), strict=True)], name=name)
    assert w is not None
    t_lo = np.array(lo)[offs[:-1]]
    rows = [(f"t{t}", int(t_lo[t]), int(h),
             [(f"p{players[k]}", w[k]) for k in range(offs[t], offs[t + 1])])
            for t, h in enumerate(_hi(t_lo).tolist())]
    return Contest.from_teams(rows, name=name)


def table_events(name: str, n: int, history: list[Round]) -> dict[str, list[np.ndarray]]:
    """Each round of ``history`` through ``round_update`` (no compiled loop): per player
    handle, its (mu, sigma, perf) after each of its rounds."""
    tab = Table.new(get_system(name), n)
    ev: dict[str, list[np.ndarray]] = {}
    for players, lo, offs, w in history:
        out = tab.rate(players, lo, offs, w)
        for k, p in enumerate(players):
            ev.setdefault(f"p{p}", []).append(np.array([out.mu[k], out.sigma[k], out.perf[k]]))
    return ev


def rater_events(r: Rater) -> dict[str, list[np.ndarray]]:
    ev: dict[str, list[np.ndarray]] = {}
    df = r.events_frame()
    for h, m, s_, p in zip(df["handle"], df["mu"], df["sigma"], df["perf"], strict=True):
        ev.setdefault(h, []).append(np.array([m, s_, p]))
    return ev


@pytest.mark.parametrize("name", ALL)
def test_rater_rates_team_contests_with_round_update(name: str) -> None:
    """``Contest.from_teams`` through ``Rater.extend`` and ``Rater.add`` (Elo-MMR's
    compiled loop leaves team rounds to ``round_update``): the numbers of rating each
    round with ``round_update``, bit for bit, individual rounds in between included."""
    n = 30
    history = team_history(44, n, seed=7)  # past _BATCH_AFTER (32): the compiled loop
    want = table_events(name, n, history)
    contests = [as_contest(r, *h) for r, h in enumerate(history)]
    assert sum(c.team_round for c in contests) == 22
    batch = Rater(name)
    batch.extend(contests)
    one = Rater(name)
    for c in contests:
        one.add(c)
    for r in (batch, one):
        got = rater_events(r)
        assert got.keys() == want.keys()
        for h in want:
            assert_bits(np.array(got[h]), np.array(want[h]), f"{name} {h}")
    teams = batch.events_frame()["team"]
    assert teams.notna().sum() == sum(len(c) for c in contests if c.teams is not None)


@pytest.mark.parametrize("name", ALL)
def test_one_member_teams_in_a_rater_are_individuals(name: str) -> None:
    """``Contest.from_teams`` with one member of weight 1 per team: the individual
    contest's ratings, bit for bit."""
    history = [h for h in team_history(12, 16, seed=3, every=1)]
    a, b = Rater(name), Rater(name)
    for r, (players, lo, _, _) in enumerate(history):
        a.add(as_contest(r, players, lo, None, None))
        b.add(as_contest(r, players, lo, list(range(len(players) + 1)), [1.0] * len(players)))
    ea, eb = a.events_frame(), b.events_frame()
    for col in ("mu", "sigma", "perf"):
        assert_bits(eb[col].to_numpy(), ea[col].to_numpy(), f"{name} {col}")


@pytest.mark.parametrize("name", ["mmr", "mmr-fast", "mmx", "mmx-fast", "mmr-inf",
                                  "mmr-simple", "elo-r"])
def test_team_rule_is_declared(name: str) -> None:
    rule = get_system(name).team_rule
    assert rule and "docs/teams.md" in rule and "\n" not in rule


@pytest.mark.parametrize("name", ["mmr", "mmx-fast", "mmr-simple", "elo-r-fancy"])
def test_a_team_history_resumes_from_a_checkpoint(name: str, tmp_path: Path) -> None:
    """Team factors are ordinary state: save, load, go on = one run, bit for bit."""
    contests = [as_contest(r, *h) for r, h in enumerate(team_history(16, 20, seed=5))]
    whole = Rater(name)
    whole.extend(contests)
    part = Rater(name)
    part.extend(contests[:9])
    part.save(str(tmp_path / "r.npz"))
    resumed = Rater.load(str(tmp_path / "r.npz"))
    resumed.extend(contests[9:])
    a, b = whole.events_frame(), resumed.events_frame()
    for col in ("mu", "sigma", "perf"):
        assert_bits(b[col].to_numpy(), a[col].to_numpy(), f"{name} {col}")


@pytest.mark.parametrize("name", ["mmr", "mmx", "mmr-fast", "mmr-simple", "elo-r"])
def test_heavy_teams_are_not_clamped_by_the_solver_bracket(name: str) -> None:
    """Team ratings are sums (six players of ~1650: ~9900, beyond the performance
    solver's bracket of (-6000, 9000)): the team equation is solved around the teams'
    mean, so no bound is hit and the winners gain."""
    rater = Rater(name)
    strong = [f"s{k}" for k in range(6)]
    weak = [f"w{k}" for k in range(6)]
    for k in range(3):  # individual rounds lift the strong players to ~1650
        rater.add(Contest.from_places([*strong, *weak], [1] * 6 + [2] * 6, name=f"warm{k}",
                                      time_seconds=k))
    before = rater.rating("s0")[0]
    assert sum(rater.rating(h)[0] for h in strong) > 9000.0
    report = rater.add(Contest.from_teams([("S", 0, 0, strong), ("W", 1, 1, weak)],
                                          name="match", time_seconds=10))
    assert not [w for w in report.warnings if "bound" in w]
    assert rater.rating("s0")[0] > before
