"""Golden values of Elo-MMR ("mmr", default parameters) on a five-contest history.

The numbers were worked out independently of Podium (they are also the example
of the README of the Elo-MMR Python bindings); every event of every player is
checked after rounding to integers, half away from zero.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from podium import Contest, Rater, rate

ORDER = [("p4", 0, 0), ("p1", 1, 1), ("p2", 2, 2), ("p3", 3, 3)]
STANDINGS = [
    [("p1", 0, 0), ("p2", 1, 1), ("p3", 2, 2)],
    [("p1", 0, 1), ("p2", 0, 1), ("p3", 2, 2)],
    [("p1", 0, 0), ("p2", 1, 2), ("p3", 1, 2)],
    ORDER,
    ORDER,
]

# handle -> [(contest_index, mu, sigma, perf, place)], rounded
GOLDEN = {
    "p1": [(0, 1705, 171, 1744, 0), (1, 1663, 130, 1618, 0), (2, 1686, 111, 1728, 0),
           (3, 1678, 100, 1660, 1), (4, 1675, 94, 1666, 1)],
    "p2": [(0, 1500, 171, 1500, 1), (1, 1555, 130, 1618, 0), (2, 1500, 111, 1393, 1),
           (3, 1487, 100, 1459, 2), (4, 1483, 94, 1471, 2)],
    "p3": [(0, 1295, 171, 1256, 2), (1, 1270, 130, 1242, 2), (2, 1312, 111, 1393, 1),
           (3, 1291, 100, 1240, 3), (4, 1279, 94, 1247, 3)],
    "p4": [(3, 1767, 171, 1819, 0), (4, 1809, 130, 1855, 0)],
}

SIG_LIMIT = 80.0
BETA = SIG_LIMIT * math.sqrt(6.0)  # sqrt((1 + 1/0.2) * 80^2)
GAMMA = SIG_LIMIT * math.sqrt(0.2)  # sqrt(0.2 * 80^2)


def _r(x: float) -> int:
    return int(math.floor(x + 0.5))


def _contests() -> list[Contest]:
    return [Contest(s, name=f"c{i}", time_seconds=0) for i, s in enumerate(STANDINGS)]


@pytest.fixture(scope="module")
def rater() -> Rater:
    return rate(_contests(), "mmr")


def _sigma_sequence(n: int) -> list[float]:
    """sigma_0 = 350; sigma_{k+1}^-2 = (sigma_k^2 + gamma^2)^-1 + beta^-2 (Eq. 8 after
    a diffusion by gamma)."""
    seq = [350.0]
    for _ in range(n):
        s = seq[-1]
        seq.append((1.0 / (s * s + GAMMA * GAMMA) + 1.0 / (BETA * BETA)) ** -0.5)
    return seq


@pytest.mark.parametrize("handle", sorted(GOLDEN))
def test_every_event(rater: Rater, handle: str) -> None:
    h = rater.history(handle)
    got = [
        (int(c), _r(mu), _r(sig), _r(perf), int(place))
        for c, mu, sig, perf, place in zip(
            h["contest_index"], h["mu"], h["sigma"], h["perf"], h["place"], strict=True
        )
    ]
    assert got == GOLDEN[handle]


def test_events_frame_matches_golden(rater: Rater) -> None:
    ev = rater.events_frame()
    assert len(ev) == sum(len(v) for v in GOLDEN.values())
    got = {
        (row.handle, int(row.contest_index)): (_r(row.mu), _r(row.sigma), _r(row.perf),
                                                int(row.place))
        for row in ev.itertuples()
    }
    want = {(h, e[0]): e[1:] for h, evs in GOLDEN.items() for e in evs}
    assert got == want


def test_final_ratings(rater: Rater) -> None:
    df = rater.ratings(sort=False).set_index("handle")
    for handle, evs in GOLDEN.items():
        _, mu, sig, _, _ = evs[-1]
        assert _r(df.loc[handle, "mu"]) == mu
        assert _r(df.loc[handle, "sigma"]) == sig
        assert df.loc[handle, "contests"] == len(evs)
        assert rater.rating(handle) == (df.loc[handle, "mu"], df.loc[handle, "sigma"])
    # sorted view: best display rating first
    assert list(rater.ratings()["handle"]) == ["p4", "p1", "p2", "p3"]


def test_first_contest_is_symmetric(rater: Rater) -> None:
    """In the first round the middle player keeps 1500 and the others move symmetrically."""
    ev = rater.events_frame()
    c0 = ev[ev.contest_index == 0].set_index("handle")
    assert c0.loc["p2", "mu"] == pytest.approx(1500.0, abs=1e-9)
    assert c0.loc["p2", "perf"] == pytest.approx(1500.0, abs=1e-9)
    assert c0.loc["p1", "mu"] - 1500.0 == pytest.approx(1500.0 - c0.loc["p3", "mu"], abs=1e-9)
    assert c0.loc["p1", "perf"] - 1500.0 == pytest.approx(
        1500.0 - c0.loc["p3", "perf"], abs=1e-9)


def test_tied_players_share_performance(rater: Rater) -> None:
    ev = rater.events_frame()
    c1 = ev[ev.contest_index == 1].set_index("handle")
    assert c1.loc["p1", "perf"] == c1.loc["p2", "perf"]
    c2 = ev[ev.contest_index == 2].set_index("handle")
    assert c2.loc["p2", "perf"] == c2.loc["p3", "perf"]


def test_sigma_sequence_of_a_regular_player(rater: Rater) -> None:
    seq = _sigma_sequence(5)
    assert [round(s, 1) for s in seq] == [350.0, 171.2, 130.5, 111.3, 100.4, 93.6]
    # p1 played every round: its sigma follows the recurrence exactly
    np.testing.assert_allclose(rater.history("p1")["sigma"], seq[1:], rtol=1e-12)
    # p4 joined at round 3: its sigma restarts from the newcomer's sequence
    np.testing.assert_allclose(rater.history("p4")["sigma"], seq[1:3], rtol=1e-12)


def test_sigma_tends_to_sig_limit() -> None:
    # the fixed point of the recurrence is sig_limit = 80: 80^-2 = (80^2 + gamma^2)^-1 + beta^-2
    fixed = 1.0 / (SIG_LIMIT**2 + GAMMA**2) + 1.0 / BETA**2
    assert fixed == pytest.approx(SIG_LIMIT**-2, rel=1e-14)
    seq = _sigma_sequence(120)
    assert all(a > b for a, b in zip(seq[:30], seq[1:30], strict=False))
    assert all(a >= b for a, b in zip(seq, seq[1:], strict=False))
    assert seq[-1] == pytest.approx(SIG_LIMIT, abs=1e-9)

    r = Rater("mmr")
    for k in range(120):
        r.add(Contest(ORDER, name=f"r{k}", time_seconds=k))
    sig = r.history("p1")["sigma"].to_numpy()
    np.testing.assert_allclose(sig, seq[1:], rtol=1e-12)
    assert r.rating("p1")[1] == pytest.approx(80.0, abs=1e-9)


def test_reference_bindings_readme_example() -> None:
    """The same history through the reference bindings (when installed) gives the same
    rounded events: the golden values are the reference's."""
    from _require import require_reference

    e = require_reference()
    players = e.rate(
        [e.Contest(s, name=f"c{i}", time_seconds=0) for i, s in enumerate(STANDINGS)], "mmr"
    )
    got = {
        h: [(ev.contest_index, ev.rating_mu, ev.rating_sig, ev.perf_score, ev.place)
            for ev in p.events]
        for h, p in players.items()
    }
    assert got == GOLDEN
