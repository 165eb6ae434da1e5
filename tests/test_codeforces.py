"""The Codeforces rating system ([Mirzayanov2015]), exactly as Codeforces computes it.

* hand-worked rounds of 3 and 4 players (with a tie), every intermediate value written
  out below;
* the two anti-inflation corrections on a hand-made round of 17 (top-s by old rating,
  truncation toward zero, the -10 clamp);
* agreement, to the integer, with a literal O(N^2) transcription of the seed on random
  rounds (ties, negative and extreme ratings);
* the FFT seeds equal directly summed seeds on 20,000-player rounds;
* the official rating changes of contest 908: 6691 of 6691 reproduced (tests/test_replay.py
  covers the replay command);
* the seed's two invariants: the checker finds planted breaches and none on real rounds;
* the Rater integration, the 2020 newcomer rules, checkpoints and configuration errors.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from _histories import histories, hyp, to_podium
from _require import require_codeforces, require_data
from hypothesis import given
from hypothesis import strategies as st

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems.codeforces import (
    DISPLAY_BONUSES_2020,
    Codeforces,
    check_invariants,
    codeforces_round,
    elo_kernel,
)
from podium.systems.codeforces import kernels as K

OFFICIAL_908 = ("codeforces-official", "908.json")


def elo(x: float) -> float:
    """P(a player beats one rated x points higher) = 1 / (1 + 10^(x/400))."""
    return 1.0 / (1.0 + 10.0 ** (x / 400.0))


# ------------------------------------------------------------------ literal transcription
def naive_round(r: list[int], place: list[int]) -> list[int]:
    """[Mirzayanov2015] + round-327 corrections, literally: O(N^2) per binary-search step."""
    n = len(r)

    def seed_against_others(i: int, rating: int) -> float:
        return 1.0 + sum(elo(rating - r[j]) for j in range(n) if j != i)

    def tdiv(a: int, b: int) -> int:  # Java's int division: truncate toward zero
        return int(a / b)

    d = []
    for i in range(n):
        m = math.sqrt(place[i] * seed_against_others(i, r[i]))
        left, right = 1, 8000
        while right - left > 1:
            mid = (left + right) // 2
            if seed_against_others(i, mid) < m:
                right = mid
            else:
                left = mid
        d.append(tdiv(left - r[i], 2))
    inc = tdiv(-sum(d), n) - 1
    d = [x + inc for x in d]
    s = min(n, 4 * math.floor(math.sqrt(n) + 0.5))
    top = sorted(range(n), key=lambda k: -r[k])[:s]  # stable: standings order on ties
    inc2 = min(max(tdiv(-sum(d[k] for k in top), s), -10), 0)
    return [r[k] + d[k] + inc2 for k in range(n)]


# ------------------------------------------------------------------ hand-worked rounds
def test_three_players_by_hand() -> None:
    # Standings: B (1500) first, A (1600) second, C (1400) third; no ties.
    # K(100) = 1/(1+10^0.25) = 0.359935, K(200) = 1/(1+10^0.5) = 0.240253,
    # K(-100) = 0.640065, K(-200) = 0.759747.
    # seed_B = 1 + K(-100) + K(100) = 2.000000;  m_B = sqrt(1 * 2.0)      = 1.414214
    # seed_A = 1 + K(100)  + K(200) = 1.600188;  m_A = sqrt(2 * 1.600188) = 1.788960
    # seed_C = 1 + K(-200) + K(-100)= 2.399812;  m_C = sqrt(3 * 2.399812) = 2.683176
    # Needed ratings (largest R with 1 + sum_{j != i} K(R - r_j) >= m_i):
    #   B: f(1750) = 1.414277 >= 1.414214 > f(1751) = 1.412481  -> R_B = 1750
    #   A: f(1525) = 1.791574 >= 1.788960 > f(1526) = 1.788876  -> R_A = 1525
    #   C: f(1254) = 2.684651 >= 2.683176 > f(1255) = 2.683136  -> R_C = 1254
    # d = (R - r)/2 truncated toward zero: B (250/2) = 125, A (-75/2) = -37 (not -38),
    #   C (-146/2) = -73.  sum = 15; inc1 = -15/3 - 1 = -6 -> 119, -43, -79.
    # s = min(3, 4*round(sqrt 3) = 8) = 3; -sum_s/s = -(-3)/3 = 1 -> inc2 = min(1, 0) = 0.
    # New: B 1619, A 1557, C 1321.
    res = codeforces_round([1500, 1600, 1400], [1, 2, 3])
    np.testing.assert_allclose(res.seed, [2.0, 1.600188, 2.399812], atol=1e-6)
    np.testing.assert_allclose(res.m, [1.414214, 1.788960, 2.683176], atol=1e-6)
    assert res.need.tolist() == [1750, 1525, 1254]
    assert (res.inc1, res.inc2, res.top_size) == (-6, 0, 3)
    assert res.delta.tolist() == [119, -43, -79]
    assert res.new.tolist() == [1619, 1557, 1321]


def test_four_players_with_a_tie_by_hand() -> None:
    # Standings: Y (1800) first; W and X (both 1500) tied for places 2-3; Z (1200) last.
    # Tied players take the worst place of the tie: places 1, 3, 3, 4.
    # K(300) = 0.150980, K(600) = 0.030653, K(0) = 0.5.
    # seed_Y = 1 + 2 K(300) + K(600)          = 1.332613; m_Y = sqrt(1*1.332613) = 1.154388
    # seed_W = 1 + K(-300) + K(0) + K(300)    = 2.500000; m_W = sqrt(3*2.5)      = 2.738613
    # seed_Z = 1 + K(-600) + 2 K(-300)        = 3.667387; m_Z = sqrt(4*3.667387) = 3.830085
    # R_Y = 1947 (f = 1.155160 >= m > 1.154328), R_W = R_X = 1417 (2.740745 >= m > 2.737873),
    # R_Z = 1069 (3.830945 >= m > 3.830039).
    # d: Y 147/2 = 73, W, X -83/2 = -41, Z -131/2 = -65; sum = -74;
    # inc1 = 74/4 - 1 = 18 - 1 = 17 -> 90, -24, -24, -48.
    # s = min(4, 8) = 4: -(-6)/4 = 1 -> inc2 = 0.  New: 1890, 1476, 1476, 1152.
    res = codeforces_round([1800, 1500, 1500, 1200], [1, 3, 3, 4])
    np.testing.assert_allclose(res.seed, [1.332613, 2.5, 2.5, 3.667387], atol=1e-6)
    assert res.need.tolist() == [1947, 1417, 1417, 1069]
    assert (res.inc1, res.inc2) == (17, 0)
    assert res.new.tolist() == [1890, 1476, 1476, 1152]


def test_corrections_by_hand() -> None:
    # n = 17: s = min(17, 4 * round(sqrt 17) = 16) = 16.  Old ratings 2000, 1990, ...,
    # 1840 (k = 0..16), given in scrambled standings order: the top 16 by *old rating*
    # are everybody but the 1840.  Needed ratings chosen so that d0 = (R - r)/2 is
    # +1 for fifteen of the top 16, +2 for the 2000, and -100 for the 1840:
    # sum = 15 + 2 - 100 = -83; inc1 = 83/17 - 1 = 4 - 1 = 3 -> top: 4 (x15), 5; 1840: -97.
    # sum_top = 65; -65/16 = -4.06 -> truncated toward zero: -4 (floor would give -5),
    # inside [-10, 0] -> inc2 = -4.  Final: 0 (x15), 1, -101.
    r = np.array([1840, 1900, 2000, 1990, 1850, 1860, 1870, 1880, 1890, 1910, 1920, 1930,
                  1940, 1950, 1960, 1970, 1980])
    d0 = np.where(r == 2000, 2, np.where(r == 1840, -100, 1))
    d, inc1, inc2, s = K.corrected_deltas(r.astype(np.int64), (r + 2 * d0).astype(np.int64))
    assert (inc1, inc2, s) == (3, -4, 16)
    assert d.tolist() == np.where(r == 2000, 1, np.where(r == 1840, -101, 0)).tolist()
    # The -10 clamp: +30 for the top 16 and -600 for the 1840: sum = -120, inc1 = 7 - 1 = 6;
    # sum_top = 16 * 36 = 576, -576/16 = -36 -> clamped to -10.
    d0 = np.where(r == 1840, -600, 30)
    d, inc1, inc2, s = K.corrected_deltas(r.astype(np.int64), (r + 2 * d0).astype(np.int64))
    assert (inc1, inc2) == (6, -10)
    assert d.tolist() == np.where(r == 1840, -604, 26).tolist()


# ------------------------------------------------------------------ against the literal text
@st.composite
def rounds(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    n = draw(st.integers(1, 40))
    ratings = draw(st.lists(
        st.one_of(st.integers(1000, 2400), st.integers(-300, 4200), st.just(1500)),
        min_size=n, max_size=n,
    ))
    cuts = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    places = []
    k = 0
    while k < n:  # tie groups: worst place of the group
        size = 1
        while k + size < n and cuts[k + size] == 0:
            size += 1
        places += [k + size] * size
        k += size
    return ratings, places


@given(rounds())
@hyp(150)
def test_matches_literal_transcription(case: tuple[list[int], list[int]]) -> None:
    ratings, places = case
    assert codeforces_round(ratings, places).new.tolist() == naive_round(ratings, places)


def test_fft_seeds_equal_direct_sums() -> None:
    rng = np.random.default_rng(7)
    ktab, k0 = elo_kernel()
    for case in range(3):
        n = 20_000
        r = np.rint(rng.normal(1500, 450, n)).astype(np.int64)
        if case == 1:
            r[: n // 2] = 1500  # a mass of newcomers
        if case == 2:
            r = rng.integers(-400, 4300, n)
        places = np.sort(rng.integers(1, n + 1, n))
        res = codeforces_round(r, places)
        vals, cnt = np.unique(r, return_counts=True)
        idx = rng.choice(n, 200, replace=False)
        direct = np.array([1.0 + (cnt * ktab[r[i] - vals - k0]).sum() - 0.5 for i in idx])
        assert np.max(np.abs(res.seed[idx] - direct)) < 1e-8
        # and the needed ratings of those 200 by a direct binary search
        for i in idx[:40].tolist():
            m = math.sqrt(places[i] * direct[list(idx).index(i)])
            left, right = 1, 8000
            while right - left > 1:
                mid = (left + right) // 2
                s = 1.0 + (cnt * ktab[mid - vals - k0]).sum() - ktab[mid - r[i] - k0]
                left, right = (left, mid) if s < m else (mid, right)
            assert res.need[i] == left


def test_direct_resummation_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Force every comparison of every binary search through the direct re-summation:
    # the results must not change (and the path must have been taken).
    import podium.systems.codeforces.system as cf

    rng = np.random.default_rng(3)
    r = rng.integers(600, 3200, 400)
    places = np.sort(rng.integers(1, 401, 400))
    fast = codeforces_round(r, places)
    monkeypatch.setattr(cf, "_FFT_TOL", 1e300)
    slow = codeforces_round(r, places)
    assert slow.n_direct >= 400 * 12  # 12 or 13 halvings of [1, 8000) each
    assert slow.need.tolist() == fast.need.tolist()
    assert slow.new.tolist() == fast.new.tolist()


# ------------------------------------------------------------------ official data
@pytest.mark.slow
def test_official_contest_908() -> None:
    rows = json.loads(require_data(*OFFICIAL_908).read_text())
    rank = np.array([x["rank"] for x in rows])
    old = np.array([x["oldRating"] for x in rows])
    official = np.array([x["newRating"] for x in rows])
    places = np.searchsorted(rank, rank, side="right")  # worst place of each tie
    res = codeforces_round(old, places)
    assert int((res.new == official).sum()) == 6691 == len(rows)
    # the best place of a tie instead of the worst is detectably wrong
    best = np.searchsorted(rank, rank, side="left") + 1
    assert int((codeforces_round(old, best).new == official).sum()) < 6000
    assert check_invariants(old, places, res.delta) == []


# ------------------------------------------------------------------ invariants
def test_invariant_checker_finds_planted_breaches() -> None:
    r = [1500, 1600, 1400, 1700]
    places = [1, 2, 3, 4]
    # invariant 1: C (1400, 3rd) ends at 1650, above A (1600 -> 1620) and B (1500 ->
    # 1510), who both had a higher rating and a better place -> breach.
    # Invariant 2: B (1500, 1st) gained +10 while A (1600, 2nd) gained +20 -> breach.
    delta = [10, 20, 250, -50]
    w = check_invariants(r, places, delta, ["B", "A", "C", "D"], "planted")
    assert len(w) == 2
    # C breaks invariant 1 against both B and A; the example names the first found (B)
    assert "invariant 1" in w[0] and "broken for 1 " in w[0] and "'C'" in w[0]
    assert "'B'" in w[0]
    assert "invariant 2" in w[1] and "'B'" in w[1] and "'A'" in w[1]
    # ties are not compared; an equal-rating pair is not "lower rated"
    assert check_invariants([1500, 1500], [2, 2], [-5, 30]) == []
    assert check_invariants([1500, 1500], [1, 2], [0, 30]) == []


def test_rater_reports_breaches(monkeypatch: pytest.MonkeyPatch) -> None:
    import podium.systems.codeforces.system as cf

    real = cf.codeforces_round

    def broken(ratings, places):  # type: ignore[no-untyped-def]
        res = real(ratings, places)
        delta = res.delta.copy()
        delta[-1] += 1000  # the last player jumps over everybody
        return cf.CodeforcesRound(res.seed, res.m, res.need, delta, res.new + (delta - res.delta),
                                  res.inc1, res.inc2, res.top_size, res.n_direct)

    r = Rater("codeforces")
    r.add(Contest.from_places(["a", "b", "c"], [1, 2, 3], name="warm-up"))
    monkeypatch.setattr(cf, "codeforces_round", broken)
    rep = r.add(Contest.from_places(["a", "b", "c"], [1, 2, 3], name="broken"))
    assert any("invariant 1" in w and "'c'" in w for w in rep.warnings)
    # reversed standings: the top-rated 'a' finishes last yet gains the most
    rep = r.add(Contest.from_places(["c", "b", "a"], [1, 2, 3], name="broken 2"))
    assert any("invariant 2" in w and "'a'" in w for w in rep.warnings)
    assert not Rater("codeforces", check_invariants=False).add(
        Contest.from_places(["a", "b", "c"], [1, 2, 3], name="broken")).warnings


def _brute_breaches(r: list[int], p: list[int], d: list[int]) -> tuple[int, int]:
    n = len(r)
    a = {i for i in range(n) for j in range(n)
         if r[i] < r[j] and p[i] > p[j] and r[i] + d[i] > r[j] + d[j]}
    b = {j for i in range(n) for j in range(n) if p[i] < p[j] and r[i] < r[j] and d[i] < d[j]}
    return len(a), len(b)


@given(st.lists(st.tuples(st.integers(1400, 1410), st.integers(1, 6), st.integers(-9, 9)),
                min_size=2, max_size=25))
@hyp(200)
def test_invariant_counts_match_brute_force(rows: list[tuple[int, int, int]]) -> None:
    rows = sorted(rows, key=lambda t: t[1])
    r = [t[0] for t in rows]
    p = [t[1] for t in rows]
    d = [t[2] for t in rows]
    c1, _, _, c2, _, _ = K.invariant_breaches(np.array(r), np.array(p), np.array(d))
    assert (c1, c2) == _brute_breaches(r, p, d)


# ------------------------------------------------------------------ the Rater
@given(histories(max_contests=6, max_players=25))
@hyp(40)
def test_rater_matches_round_function(history: list) -> None:
    r = Rater("codeforces")
    expect: dict[str, int] = {}
    for c in to_podium(history):
        rep = r.add(c)
        if rep.skipped:
            continue
        old = [expect.get(h, 1500) for h in c.handles]
        res = codeforces_round(old, c.hi + 1)
        expect.update(zip(c.handles, res.new.tolist(), strict=True))
        assert not any("invariant" in w for w in rep.warnings)
    df = r.ratings(sort=False)
    assert dict(zip(df["handle"], df["mu"], strict=True)) == expect
    assert (df["sigma"] == 350.0).all()
    assert (df["display_rating"] == df["mu"]).all()


def test_perf_is_the_needed_rating(tmp_path: Path) -> None:
    c1 = Contest.from_places(["a", "b", "c", "d"], [1, 2, 2, 4], name="one")
    r = Rater("codeforces")
    r.add(c1)
    ev = r.events_frame()
    first = ev[ev["contest_index"] == 0]
    res = codeforces_round([1500] * 4, c1.hi + 1)
    assert first["perf"].tolist() == res.need.tolist()


def test_scheme_2020_display_bonuses() -> None:
    # One rival with a long record (rated 1400 computed = displayed) and a newcomer who
    # plays seven rounds against it.  The newcomer is computed at 1400, displayed at 0;
    # after round k its display is computed - 1400 + (500 + 350 + ... first k bonuses).
    sysobj = Codeforces(scheme="2020")
    assert sysobj.newcomer() == (0.0, 350.0)
    assert sysobj.display_offset([0, 1, 2, 5, 6, 7]).tolist() == [1400, 900, 550, 50, 0, 0]
    r = Rater("codeforces", scheme="2020")
    computed = {"rival": 1400, "noob": 1400}
    played = {"rival": 0, "noob": 0}
    for k in range(7):
        order = ["noob", "rival"] if k % 3 else ["rival", "noob"]
        r.add(Contest.from_places(order, [1, 2], name=f"r{k}"))
        res = codeforces_round([computed[h] for h in order], [1, 2])
        for h, v in zip(order, res.new.tolist(), strict=True):
            computed[h] = v
            played[h] += 1
        for h in order:
            bonus = sum(DISPLAY_BONUSES_2020[: played[h]])
            assert r.rating(h)[0] == computed[h] - 1400 + bonus
    # after six rounds the display equals the computed rating
    assert r.rating("noob")[0] == computed["noob"]
    assert Rater("codeforces").system.newcomer() == (1500.0, 350.0)


@pytest.mark.slow
def test_first_contests_no_invariant_breach() -> None:
    from podium.io import load_contests

    contests = load_contests(str(require_codeforces()), limit=60, sort_by_time=True).contests
    r = Rater("codeforces")
    for c in contests:
        rep = r.add(c)
        assert not any("invariant" in w for w in rep.warnings), rep.warnings
    mu = r.ratings()["mu"].to_numpy()
    assert np.array_equal(mu, np.rint(mu))


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="scheme"):
        Codeforces(scheme="2017")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="check_invariants"):
        Codeforces(check_invariants="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown parameter"):
        Rater("codeforces", beta=3)
    assert Codeforces(scheme=2020).scheme == "2020"  # type: ignore[arg-type]
