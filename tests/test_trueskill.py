"""TrueSkill-SPb (``trueskill``): agreement with elo-mmr-py, closed forms, invariants.

The reference (multi-skill, wrapped by elo-mmr-py 2.0.0) has quirks that define
its numbers and that the closed forms below reproduce on purpose:

* the margin node ``d > 2 eps`` computes its truncated moments as if the incoming
  message's deviation were ``s / sqrt(2)`` (it integrates ``exp(-((x - m)/s)^2)``);
* every margin node of a contest shares one edge, so every pair of consecutive
  places receives the one message computed from the *first* boundary;
* likewise every tie node shares one edge; with a tiny tie margin ``eps`` the tie
  nodes' messages are negligible, which makes the closed forms possible.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _agreement import assert_agrees
from _histories import histories, hyp, rate_as_reference, to_reference
from _require import require_reference
from hypothesis import given

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems.trueskill import TrueSkillSPb
from podium.systems.trueskill import kernels as K

e = require_reference()

BETA, DRIFT = 175.0, 35.0


# ---------------------------------------------------------------------- the reference
# Every comparison: the same players, every mu and sigma bit for bit.
@hyp(120)
@given(histories(max_contests=6, max_players=30))
def test_matches_reference_on_random_histories(history):
    rater = rate_as_reference(history, "trueskill")
    ref = e.rate_latest(to_reference(history), "trueskill")
    assert_agrees(rater, ref, "trueskill")


@hyp(40)
@given(histories(max_contests=4, max_players=30, weights=True))
def test_matches_reference_with_contest_weights(history):
    # a contest of weight w uses beta / sqrt(w)
    rater = rate_as_reference(history, "trueskill")
    ref = e.rate_latest(to_reference(history), "trueskill")
    assert_agrees(rater, ref, "trueskill", case="contest weights")


@pytest.mark.slow
def test_matches_reference_on_first_100_codeforces_contests(codeforces_first_100):
    contests = codeforces_first_100
    rater = Rater("trueskill")
    rater.extend(contests)
    ref = e.rate_latest(
        [e.Contest(c.standings, name=c.name, time_seconds=c.time_seconds) for c in contests],
        "trueskill",
    )
    assert len(ref) == rater.num_players > 5000
    assert_agrees(rater, ref, "trueskill", case="codeforces first 100")


def test_newcomer_prior_and_defaults_are_the_reference():
    system = TrueSkillSPb()
    assert system.newcomer() == (1500.0, 350.0)
    assert (system.eps, system.beta, system.sig_drift) == (1.0, 175.0, 35.0)
    assert (system.convergence_eps, system.max_rounds) == (1e-4, 42)
    # a first contest between two newcomers, as elo-mmr-py rates it
    r = Rater("trueskill")
    r.add(Contest([("a", 0, 0), ("b", 1, 1)], name="c"))
    ref = e.rate_latest([e.Contest([("a", 0, 0), ("b", 1, 1)], name="c", time_seconds=0)],
                        "trueskill")
    assert r.rating("a") == (ref["a"].mu, ref["a"].sig)
    assert r.rating("a")[0] == pytest.approx(1626.1466, abs=1e-3)


def test_erfc_is_statrs():
    # statrs 0.18 (the reference's erfc) returns these, which differ from the exact
    # erfc by up to ~1e-10 relative; the tie node amplifies such differences
    statrs = {
        -0.7: 1.6778011938096657, 0.3: 0.6713732405408726, 0.7: 0.32219880619033425,
        1.0: 0.15729920705728503, 2.0: 0.004677734980852695, 4.0: 1.541725790065934e-08,
        6.5: 3.8421483273222165e-20, 10.0: 2.0884875837105948e-45,
    }
    for x, want in statrs.items():
        assert K.erfc(x) == want
        assert K.erfc(x) == pytest.approx(math.erfc(x), rel=1e-10)
    xs = np.linspace(-6.0, 26.0, 3001)
    got = np.array([K.erfc(float(x)) for x in xs])
    exact = np.array([math.erfc(float(x)) for x in xs])
    np.testing.assert_allclose(got, exact, rtol=2e-10, atol=0)
    assert K.erfc(200.0) == 0.0 and K.erfc(-200.0) == 2.0


# ---------------------------------------------------------------------- closed forms
# Gaussians as (mean, variance).
def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _v(lam: float) -> float:
    """TrueSkill's v: mean shift of a standard normal truncated to (-lam, inf)."""
    return _pdf(lam) / _cdf(lam)


def _w(lam: float) -> float:
    """TrueSkill's w: relative variance loss of that truncation."""
    return _v(lam) * (_v(lam) + lam)


def _add(a, b):
    return a[0] + b[0], a[1] + b[1]


def _sub(a, b):
    return a[0] - b[0], a[1] + b[1]


def _mul(a, b):
    prec = 1.0 / a[1] + 1.0 / b[1]
    return (a[0] / a[1] + b[0] / b[1]) / prec, 1.0 / prec


def _div(a, b):
    prec = 1.0 / a[1] - 1.0 / b[1]
    return (a[0] / a[1] - b[0] / b[1]) / prec, 1.0 / prec


def _margin_message(msg, threshold):
    """EP message of the node ``d > threshold`` given the message ``msg`` into it,
    with the reference's deviation ``sqrt(var / 2)``: the v/w update of the
    two-player TrueSkill win, divided by the incoming message."""
    m, var = msg
    tau = math.sqrt(var / 2.0)
    lam = (m - threshold) / tau
    return _div((m + tau * _v(lam), tau * tau * (1.0 - _w(lam))), msg)


def _prior(mu, sig):
    return mu, sig * sig + DRIFT * DRIFT


def _posterior(prior, perf_msg):
    # the performance message reaches the skill widened by the performance noise
    return _mul(prior, (perf_msg[0], perf_msg[1] + BETA * BETA))


def _two_player(winner, loser, eps):
    pw, pl = _prior(*winner), _prior(*loser)
    tw, tl = _add(pw, (0.0, BETA**2)), _add(pl, (0.0, BETA**2))
    d = _margin_message(_sub(tw, tl), 2.0 * eps)
    return _posterior(pw, _add(tl, d)), _posterior(pl, _sub(tw, d))


def _three_player(ratings, eps):
    """Places A > B > C.  The shared margin message ``d`` is computed from the first
    boundary, whose lower side is ``t_B`` times what the second boundary sends up
    (``t_C + d``): a fixed point, found by iteration."""
    p = [_prior(*r) for r in ratings]
    t = [_add(q, (0.0, BETA**2)) for q in p]
    d = _margin_message(_sub(t[0], t[1]), 2.0 * eps)
    for _ in range(500):
        d = _margin_message(_sub(t[0], _mul(t[1], _add(t[2], d))), 2.0 * eps)
    to_a = _add(_mul(t[1], _add(t[2], d)), d)
    to_b = _mul(_sub(t[0], d), _add(t[2], d))
    to_c = _sub(_mul(t[1], _sub(t[0], d)), d)
    return [_posterior(q, m) for q, m in zip(p, (to_a, to_b, to_c), strict=True)]


def _check(rater, handle, expected):
    mu, sig = rater.rating(handle)
    assert mu == pytest.approx(expected[0], abs=1e-5)
    assert sig == pytest.approx(math.sqrt(expected[1]), abs=1e-5)


EPS_SMALL = 1e-4  # tie nodes negligible (their effect is ~eps); tolerance 1e-5


def test_two_players_closed_form():
    r = Rater("trueskill", eps=EPS_SMALL)
    r.add(Contest([("x", 0, 0), ("y", 1, 1)], name="c0", time_seconds=0))
    before = {h: r.rating(h) for h in "xy"}
    # the upset: y beats x
    r.add(Contest([("y", 0, 0), ("x", 1, 1)], name="c1", time_seconds=10))
    post_y, post_x = _two_player(before["y"], before["x"], EPS_SMALL)
    _check(r, "y", post_y)
    _check(r, "x", post_x)
    # a first round between newcomers, by hand:
    # sigma 350 -> hypot(350, 35), c^2 = 2 (sigma^2 + beta^2)
    r2 = Rater("trueskill", eps=EPS_SMALL)
    r2.add(Contest([("a", 0, 0), ("b", 1, 1)], name="c"))
    s2 = 350.0**2 + 35.0**2
    c2 = 2.0 * (s2 + 175.0**2)
    tau = math.sqrt(c2 / 2.0)
    lam = -2.0 * EPS_SMALL / tau
    # message d: truncated moments divided by N(0, c2)
    mt, vt = tau * _v(lam), tau * tau * (1.0 - _w(lam))
    dm, dv = _div((mt, vt), (0.0, c2))
    perf_a = (1500.0 + dm, s2 + 175.0**2 + dv)
    mu_a, var_a = _mul((1500.0, s2), (perf_a[0], perf_a[1] + 175.0**2))
    assert r2.rating("a")[0] == pytest.approx(mu_a, abs=1e-5)
    assert r2.rating("a")[1] == pytest.approx(math.sqrt(var_a), abs=1e-5)
    assert r2.rating("a")[0] + r2.rating("b")[0] == pytest.approx(3000.0, abs=1e-5)


def test_three_players_closed_form():
    r = Rater("trueskill", eps=EPS_SMALL)
    r.add(Contest([("b", 0, 0), ("c", 1, 1), ("a", 2, 2)], name="c0", time_seconds=0))
    r.add(Contest([("c", 0, 0), ("a", 1, 1)], name="c1", time_seconds=5))
    before = [r.rating(h) for h in "abc"]
    r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="c2", time_seconds=9))
    for h, post in zip("abc", _three_player(before, EPS_SMALL), strict=True):
        _check(r, h, post)


def test_default_tie_margin_moves_little():
    # the tie nodes (eps = 1) shift a first game by ~0.5 rating points only
    a = Rater("trueskill")
    b = Rater("trueskill", eps=EPS_SMALL)
    for r in (a, b):
        r.add(Contest([("p", 0, 0), ("q", 1, 1)], name="c"))
    assert abs(a.rating("p")[0] - b.rating("p")[0]) < 1.0


# ---------------------------------------------------------------------- invariants
def test_tied_players_with_equal_states_get_equal_results():
    r = Rater("trueskill")
    r.add(Contest([("a", 0, 0), ("t1", 1, 2), ("t2", 1, 2), ("z", 3, 3)], name="c0"))
    assert r.rating("t1") == pytest.approx(r.rating("t2"), abs=1e-9, rel=0)
    # equal again in a later contest where both tie at the top of a big group
    r.add(Contest([("t2", 0, 2), ("t1", 0, 2), ("z", 0, 2), ("a", 3, 3), ("n", 4, 4)],
                  name="c1", time_seconds=1))
    assert r.rating("t1") == pytest.approx(r.rating("t2"), abs=1e-9, rel=0)
    # and winners gain, losers lose
    assert r.rating("a")[0] < r.history("a")["mu"].iloc[0]


def test_everybody_tied_changes_nothing_with_the_reference_skip():
    r = Rater("trueskill", all_tied="skip")
    rep = r.add(Contest([("a", 0, 2), ("b", 0, 2), ("c", 0, 2)], name="tie"))
    assert rep.skipped and r.num_players == 0
    r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="c1", time_seconds=1))
    before = r.ratings(sort=False)
    rep = r.add(Contest([("c", 0, 2), ("a", 0, 2), ("b", 0, 2)], name="tie2", time_seconds=2))
    assert rep.skipped
    after = r.ratings(sort=False)
    assert before[["mu", "sigma", "contests"]].equals(after[["mu", "sigma", "contests"]])
    # the reference skips it too
    ref = e.rate_latest(
        [e.Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="c1", time_seconds=1),
         e.Contest([("c", 0, 2), ("a", 0, 2), ("b", 0, 2)], name="tie2", time_seconds=2)],
        "trueskill",
    )
    assert_agrees(r, ref, "trueskill", case="everybody tied")


def test_non_participants_unchanged_and_perf_is_ordered():
    r = Rater("trueskill")
    r.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2), ("d", 3, 3)], name="c0"))
    d_before = r.rating("d")
    r.add(Contest([("c", 0, 0), ("b", 1, 1), ("a", 2, 2)], name="c1", time_seconds=1))
    assert r.rating("d") == d_before
    ev = r.events_frame()
    first = ev[ev.contest_index == 0].sort_values("place")
    # the performance (posterior mean of the performance variable) follows the standings
    assert np.all(np.diff(first["perf"].to_numpy()) < 0)


def test_round_cap_and_warning():
    contest = Contest([(f"p{i}", i, i) for i in range(60)], name="long")
    capped = Rater("trueskill", max_rounds=1, warn_unconverged=True)
    rep = capped.add(contest)
    assert any("max_rounds" in w for w in rep.warnings)
    full = Rater("trueskill")
    assert full.add(contest).warnings == ()
    assert capped.rating("p0") != full.rating("p0")


@pytest.mark.parametrize(
    "params",
    [{"eps": 0.0}, {"beta": -1.0}, {"sig_drift": float("nan")}, {"convergence_eps": 0.0},
     {"max_rounds": 0}, {"max_rounds": 2.5}, {"sig_noob": 0.0}, {"warn_unconverged": 1},
     {"mu_noob": float("inf")}, {"no_such": 1}],
)
def test_bad_parameters_are_rejected(params):
    with pytest.raises(ConfigError):
        Rater("trueskill", **params)
