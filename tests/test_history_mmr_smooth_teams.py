"""``mmr-smooth`` on team rounds (podium.history._smooth_teams; docs/history.md, "Team
rounds"): its first pass is Podium's ``mmr`` with its team rule, one-member teams are
smoothed as the individuals they are, a history where nothing comes later is the
filter's, later wins of a team raise its members' earlier ratings, and the fixed point
solves the team performance equation over the members' cavities."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _history_cases import mmr_rows, team_contests
from scipy.optimize import brentq

from podium import Contest
from podium.cli import main
from podium.history import (
    ContestHistory,
    MMRParams,
    SmoothState,
    history_from_contests,
    mmr_smooth,
    smooth_extend,
)
from podium.history.mmr_smooth import smooth_result
from podium.history.sweeps import SWEEP_STEP
from podium.history_rater import HistoryRater
from podium.io import write_contests_csv
from podium.io.synthetic_teams import synthetic_team_contests

TANH = math.pi / math.sqrt(3.0)
DAY = 86400


@pytest.mark.parametrize("u", [1.0, 0.0])
def test_first_pass_is_podium_mmr_on_team_rounds(u: float) -> None:
    """With ties, member weights, one-member teams and rounds of 30 teams (the panels'
    path), every filtered rating, uncertainty and member performance equals ``mmr``'s
    team rule (``team_perf_uncertainty`` ``u``) to 1e-6."""
    contests = team_contests(1, large=(5, 12))
    h, rows, ev = mmr_rows(contests, team_perf_uncertainty=u)
    st = SmoothState.start(h, MMRParams(team_perf_uncertainty=u), window_tol=0.0)
    assert st.teams.is_team.sum() >= 15 and st.large.sum() == 2
    assert st.history.n_contests < h.n_contests  # an all-tied round is left out
    st.rate_forward(h.n_contests)
    assert np.abs(st.entry_view(st.filtered_mu)[rows] - ev.mu.to_numpy()).max() < 1e-6
    assert np.abs(st.entry_view(st.filtered_sigma)[rows] - ev.sigma.to_numpy()).max() < 1e-9
    assert np.abs(st.entry_view(st.entries.perf)[rows] - ev.perf.to_numpy()).max() < 1e-6


def _all_team_route(h: ContestHistory, params: MMRParams, tol: float) -> SmoothState:
    """Smooth ``h`` with every contest sent through the team rule."""
    st = SmoothState.start(h, params)
    st.teams = st.teams._replace(is_team=np.ones(st.history.n_contests, dtype=bool))
    st.rate_forward(st.history.n_contests)
    st.solve(tol, 100)
    return st


def test_one_member_teams_are_smoothed_as_individuals() -> None:
    """Every contest of an individual history (ties, a round of 30 tie groups) sent
    through the team rule as one-member teams of weight 1 (with ``u = 0``: the
    standings' variance T7 is the one step that tells a team from an individual) gives
    the same smoothing: the team route solves each round's zeros exactly, the individual
    sweeps by Newton on the round's interpolant to ``SWEEP_STEP * tol`` (here 1e-8 rating
    points; they agree to about 3e-12)."""
    contests = team_contests(2, n_rounds=15, large=(4,), max_size=1, weights=False)
    h = history_from_contests(contests).history
    params = MMRParams(team_perf_uncertainty=0.0)
    st = SmoothState.start(h, params)
    assert not st.teams.any
    st.rate_forward(h.n_contests)
    st.solve(1e-4, 100)
    team = _all_team_route(h, params, 1e-4)
    for name in ("perf", "beta", "fwd_mu", "fwd_sig", "cav_mu", "cav_sig", "sm_mu", "sm_sig"):
        np.testing.assert_allclose(getattr(team.entries, name), getattr(st.entries, name),
                                   rtol=0.0, atol=SWEEP_STEP * 1e-4, err_msg=name)
    # with u > 0 the team rule differs (each member carries P_T's uncertainty)
    other = _all_team_route(h, MMRParams(), 1e-4)
    assert np.abs(other.entries.sm_mu - st.entries.sm_mu).max() > 1.0


def test_with_nothing_later_the_smoothing_is_the_filter() -> None:
    """When no player has a later (or earlier) round, every cavity is Elo-MMR's prior:
    the sweeps' team phase 1 gives back the filter's member performances and noises,
    and the smoothed ratings are ``mmr``'s, on every team round."""
    rng = np.random.default_rng(4)
    contests, k = [], 0
    for r in range(8):
        rows = []
        for t in range(int(rng.integers(2, 5))):
            size = int(rng.integers(1, 4))
            mem = [(f"q{k + j}", float(rng.choice([1.0, 0.5, 0.8]))) for j in range(size)]
            k += size
            rows.append((f"t{t}", t, t, mem))
        contests.append(Contest.from_teams(rows, name=f"r{r}", time_seconds=r * DAY))
    h, rows_, ev = mmr_rows(contests)
    res = mmr_smooth(h, tol=1e-8)
    assert res.converged and len(res.sweeps) == 1
    np.testing.assert_allclose(res.mu[rows_], ev.mu.to_numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.sigma[rows_], ev.sigma.to_numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.perf[rows_], ev.perf.to_numpy(), rtol=0, atol=1e-6)


def test_later_wins_of_a_team_raise_its_members_earlier_ratings() -> None:
    """ann and bob (half a round) lose to cid and dan on day 0; then ann and bob beat a
    new pair of newcomers every day for ten days.  Their first ratings rise above the
    filter's (and above the smoothing of day 0 alone, which is the filter's), and so do
    the winners' of day 0 (they beat a strong team)."""
    first = Contest.from_teams([("cd", 0, 0, ["cid", "dan"]),
                                ("ab", 1, 1, ["ann", ("bob", 0.5)])], name="d0",
                               time_seconds=0)
    later = [Contest.from_teams([("ab", 0, 0, ["ann", ("bob", 0.5)]),
                                 ("new", 1, 1, [f"x{d}", f"y{d}"])], name=f"d{d}",
                                time_seconds=d * DAY) for d in range(1, 11)]
    lab = history_from_contests([first, *later])
    res = mmr_smooth(lab.history, tol=1e-6)
    alone = mmr_smooth(history_from_contests([first]).history, tol=1e-6)
    assert res.converged and alone.converged
    np.testing.assert_allclose(alone.mu, alone.filtered_mu, rtol=0, atol=1e-6)
    idx = {h: lab.history.player.tolist().index(i) for i, h in enumerate(lab.handles)}
    for who, gain in (("ann", 400.0), ("bob", 200.0), ("cid", 100.0), ("dan", 100.0)):
        r = idx[who]
        assert res.mu[r] > res.filtered_mu[r] + gain, who
        assert res.mu[r] > alone.mu[r] + gain, who


def test_smoothing_estimates_team_members_better_than_the_filter() -> None:
    """On the seeded synthetic team league (persistent rosters of 1-3, partial play,
    ten teams a round), the smoothed ratings are closer to the members' true skills than
    ``mmr``'s filtered ones (root mean square error about each estimate's mean offset:
    the two scales sit at different levels, docs/history.md)."""
    th = synthetic_team_contests(200, 150, teams_per_round=10, max_size=3, partial_prob=0.2,
                                 seed=3)
    lab = history_from_contests(th.contests)
    truth = np.concatenate([th.skill[k] for k in lab.contest_index])
    res = mmr_smooth(lab.history)
    assert res.converged

    def spread(x: np.ndarray) -> float:
        d = x - truth
        return float(np.sqrt(np.mean((d - d.mean()) ** 2)))

    assert spread(res.mu) < 0.8 * spread(res.filtered_mu)


def test_accelerated_team_solve_reaches_the_plain_iterations_fixed_point() -> None:
    """On a league of persistent rosters (1-4 members, partial play: the histories whose
    sweeps converge slowly), the accelerated solve at ``tol`` lands where the plain
    iteration ``x = G(x)`` (``memory=0``, every sweep's performances and noises as phase
    2 then phase 1 give them) converges to, solved on to 1e-7: the performances and
    smoothed ratings within ``25 tol`` (measured 9 tol: a residual below ``tol`` still
    leaves the slow directions' error, docs/history.md "Team rounds"), the noises to
    1e-9, in under a fifth of the plain iteration's sweeps (42 against 352)."""
    th = synthetic_team_contests(30, 30, teams_per_round=5, max_size=4, partial_prob=0.2,
                                 seed=3)
    h = history_from_contests(th.contests).history

    def solved(tol: float, memory: int) -> tuple[SmoothState, int]:
        st = SmoothState.start(h)
        st.rate_forward(h.n_contests)
        reports, converged = st.solve(tol, 2000, memory)
        assert converged
        return st, len(reports)

    tol = 1e-4
    fast, n_fast = solved(tol, 10)
    plain, n_plain = solved(1e-7, 0)
    assert fast.teams.any and n_fast * 5 < n_plain
    for name, atol in (("perf", 25 * tol), ("sm_mu", 25 * tol), ("beta", 1e-9)):
        np.testing.assert_allclose(getattr(fast.entries, name), getattr(plain.entries, name),
                                   rtol=0.0, atol=atol, err_msg=name)


def _team_q(x: float, mu_t: np.ndarray, w_t: np.ndarray, place: np.ndarray,
            own: int) -> float:
    """Q of Theorem 3.2 over the team terms: a loss to each better-placed team, a win
    over each worse one, the tie term doubled."""
    v = -w_t * np.tanh((x - mu_t) * w_t / 2)
    return float(np.sum(np.where(place < own, v - w_t,
                                 np.where(place > own, v + w_t, 2 * v))))


def test_fixed_point_solves_the_team_equation() -> None:
    """At convergence, in every team round: each team's performance is the zero
    (``brentq``) of Q over the team terms built from its members' final cavities
    (``mu_T = sum w_i mu_i``, ``delta_T^2 = sum w_i^2 (sigma_i^2 + beta_i^2)``), and
    each member's performance and noise are T4 and T7 of that zero, written out."""
    contests = team_contests(3, n_players=60, n_rounds=20)
    h = history_from_contests(contests).history
    tol = 1e-5
    u = 1.0
    res = mmr_smooth(h, tol=tol, window_tol=0.0)
    assert res.converged
    st = res.state
    sh, rd, en = st.history, st.rounds, st.entries
    worst_p = worst_n = 0.0
    checked = 0
    for c in np.flatnonzero(st.teams.is_team):
        t0, t1 = sh.contest_teams[c], sh.contest_teams[c + 1]
        mu_t, d2_t, rows = [], [], []
        for t in range(t0, t1):
            r = np.arange(sh.team_rows[t], sh.team_rows[t + 1])
            w = sh.weight[r]
            d2 = rd.cav_sig[r] ** 2 + rd.beta[r] ** 2
            mu_t.append(float(np.sum(w * rd.cav_mu[r])))
            d2_t.append(float(np.sum(w * w * d2)))
            rows.append(r)
        mu_ta, d_ta = np.array(mu_t), np.sqrt(d2_t)
        place = sh.team_place[t0:t1]
        n_t = t1 - t0
        frac = u * (1 - 1 / math.pi) / (n_t - 1)
        for k, r in enumerate(rows):
            p_t = brentq(_team_q, mu_ta.mean() - 9000, mu_ta.mean() + 9000,
                         args=(mu_ta, TANH / d_ta, place, place[k]), xtol=1e-10)
            w = sh.weight[r]
            d2 = rd.cav_sig[r] ** 2 + rd.beta[r] ** 2
            stretch = 1 / (1 - frac)
            if r.size == 1 and w[0] == 1.0:
                p, b2 = np.array([p_t]), rd.beta[r] ** 2
            else:
                p = rd.cav_mu[r] + (p_t - mu_ta[k]) / w
                b2 = rd.beta[r] ** 2 + (d2_t[k] - w * w * d2) / (w * w)
            p = rd.cav_mu[r] + (p - rd.cav_mu[r]) * stretch
            b = np.sqrt((rd.cav_sig[r] ** 2 + b2) * stretch - rd.cav_sig[r] ** 2)
            e = st.e_of_row[r]
            worst_p = max(worst_p, float(np.abs(p - rd.perf[r]).max()))
            worst_n = max(worst_n, float(np.abs(b - en.beta[e]).max()))
            checked += r.size
    assert checked > 100
    assert worst_p < 50 * tol
    assert worst_n < 1e-6


def test_extending_a_team_history_reaches_the_batch_smoothing() -> None:
    """The bounded update re-solves a team round whole (no moved-group selection):
    smoothing a prefix, then adding the last rounds with unbounded sweeps, reaches the
    batch fixed point of the whole history; a bounded update solves every row of the
    team rounds it touches."""
    h = history_from_contests(team_contests(5, n_players=50, n_rounds=18)).history
    full = mmr_smooth(h, tol=1e-6)
    st = SmoothState.start(h)
    st.rate_forward(st.history.n_contests - 3)
    st.solve(1e-6, 200)
    part = smooth_result(st, True, [])
    ext, report = smooth_extend(part, 3, tol=1e-6, max_sweeps=500, spread=1.0)
    assert report.contests == 3 and report.settled and report.max_past_change > 0.0
    assert np.nanmax(np.abs(ext.mu - full.mu)) < 0.05
    sweep = report.sweeps[0]
    touched = st.rounds.contest_rows[1:] - st.rounds.contest_rows[:-1]
    assert sweep.rows_solved >= touched[st.teams.is_team].min()


def test_history_rater_adds_team_rounds_and_resumes(tmp_path) -> None:
    """``HistoryRater.add`` takes team rounds one by one (the incremental update), and a
    checkpoint taken midway (with the members' noises) goes on as the rater does."""
    contests = team_contests(6, n_players=40, n_rounds=12)
    r = HistoryRater("mmr-smooth", update_sweeps=2)
    for c in contests[:8]:
        rep = r.add(c)
        assert rep.sweeps <= 2 and (rep.skipped or rep.touched >= len(c))
    path = tmp_path / "teams.ckpt.npz"
    r.save(path)
    again = HistoryRater.load(path)
    for c in contests[8:]:
        r.add(c)
        again.add(c)
    pd.testing.assert_frame_equal(again.ratings(), r.ratings())
    # every player of a rated round has a rating (an all-tied round is skipped)
    assert r.ratings()["mu"].notna().sum() >= 30


def test_rate_a_team_file_through_the_cli(tmp_path) -> None:
    """``podium rate --system mmr-smooth`` on a team CSV (weights, ties) writes the
    smoothing of the whole history."""
    contests = team_contests(7, n_players=40, n_rounds=10)
    path = tmp_path / "teams.csv"
    write_contests_csv(contests, path)
    out = tmp_path / "out"
    assert main(["rate", str(path), "--system", "mmr-smooth", "--out", str(out),
                 "--no-progress"]) == 0
    hist = pd.read_csv(out / "histories.csv")
    lab = history_from_contests(contests)
    ref = mmr_smooth(lab.history)
    rated = np.isfinite(ref.mu)
    assert len(hist) == int(rated.sum())
    handle = np.asarray(lab.handles)[lab.history.player]
    want = pd.DataFrame({"handle": handle[rated],
                         "contest_index": lab.contest_index[lab.history.row_contest][rated],
                         "mu": ref.mu[rated]}).sort_values(["contest_index", "handle"])
    got = hist.sort_values(["contest_index", "handle"])
    np.testing.assert_array_equal(got["handle"].to_numpy(), want["handle"].to_numpy())
    np.testing.assert_allclose(got["mu"].to_numpy(), want["mu"].to_numpy(), rtol=0, atol=1e-9)
