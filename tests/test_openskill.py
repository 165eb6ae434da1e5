"""openskill's Weng-Lin models (``openskill-pl``, ``-tm``, ``-bt``, ``-tmp``, ``-btp``)
against the ``openskill`` package (6.2.0, in the ``test`` extra) as the oracle.

Every comparison: each member's new ``mu`` and ``sigma`` within 1e-9, absolute below 1
and relative above (``|a - b| <= 1e-9 max(1, |b|)``), on seeded random matches of
2-8 teams of 1-5 members, random ratings, ties and member weights in (0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

try:
    import openskill.models as osm
except ImportError as exc:  # a failure, not a skip: the oracle is part of the test extra
    raise ImportError(
        f"openskill (the oracle of these tests) cannot be imported: {exc}; "
        "to fix: pip install -e '.[test]' (it pins openskill==6.2.0)"
    ) from exc

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.systems import SYSTEMS, get_system
from podium.systems.base import RatingSystem
from podium.systems.openskill import TEAM_RULE, OpenSkillModel
from podium.systems.openskill import kernels as K

FloatArray = np.ndarray
TOL = 1e-9

#: Podium name -> openskill model class.
MODELS: dict[str, Callable[..., Any]] = {
    "openskill-pl": osm.PlackettLuce,
    "openskill-tm": osm.ThurstoneMostellerFull,
    "openskill-bt": osm.BradleyTerryFull,
    "openskill-tmp": osm.ThurstoneMostellerPart,
    "openskill-btp": osm.BradleyTerryPart,
}

#: Parameter sets tried on every model (``epsilon``/``window_size`` where the model has
#: them): the defaults, the switches, and other numbers.
CONFIGS: list[dict[str, Any]] = [
    {},
    {"balance": True, "limit_sigma": True},
    {"weight_bounds": None, "tau": 0.0, "beta": 3.0, "kappa": 0.01, "mu": 30.0,
     "sigma": 5.0},
    {"weight_bounds": (0.5, 3.0), "tau": 0.5, "epsilon": 1.5, "window_size": 2},
]


# ---------------------------------------------------------------------- the oracle
def _params_for(name: str, params: dict[str, Any]) -> dict[str, Any]:
    fields = {f for f in get_system(name).params()}
    return {k: v for k, v in params.items() if k in fields}


def _model(name: str, params: dict[str, Any]) -> Any:
    """openskill's model; its compiled constructor refuses ``weight_bounds=None``, which
    the model reads as "no rescaling" when set on the instance."""
    kw = {k: v for k, v in params.items() if not (k == "weight_bounds" and v is None)}
    model = MODELS[name](**kw)
    if "weight_bounds" in params and params["weight_bounds"] is None:
        model.weight_bounds = None
    return model


def openskill_rate(
    name: str, params: dict[str, Any], mu: FloatArray, sigma: FloatArray,
    offsets: np.ndarray, rank: np.ndarray | None, weight: FloatArray | None,
) -> tuple[FloatArray, FloatArray]:
    """One ``model.rate`` call of openskill on the teams ``offsets`` cuts ``mu``,
    ``sigma`` into; ``rank`` per team (``None``: the given order, no ties)."""
    model = _model(name, params)
    cut = list(zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True))
    teams = [[model.rating(mu=float(mu[k]), sigma=float(sigma[k])) for k in range(a, b)]
             for a, b in cut]
    weights = None if weight is None else [[float(weight[k]) for k in range(a, b)]
                                           for a, b in cut]
    ranks = None if rank is None else [int(r) for r in rank]
    out = model.rate(teams, ranks=ranks, weights=weights)
    return (np.array([p.mu for team in out for p in team]),
            np.array([p.sigma for team in out for p in team]))


def assert_close(got: FloatArray, want: FloatArray, what: str) -> None:
    err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
    assert np.all(np.isfinite(got)), f"{what}: non-finite {got}"
    assert err.max(initial=0.0) <= TOL, (
        f"{what}: worst difference {err.max():.3g} at {int(err.argmax())}: "
        f"{got[err.argmax()]!r} vs openskill {want[err.argmax()]!r}"
    )


def random_match(rng: np.random.Generator, *, max_teams: int = 8, max_size: int = 5,
                 weights: bool = True, spread: float = 12.0) -> dict[str, Any]:
    """2..max_teams teams of 1..max_size members, ratings around 25, random ties (ranks
    best first), weights in (0, 1] (or none)."""
    n_teams = int(rng.integers(2, max_teams + 1))
    sizes = rng.integers(1, max_size + 1, n_teams)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(offsets[-1])
    rank = np.sort(rng.integers(0, n_teams, n_teams)).astype(np.int64)
    weight = None
    if weights:
        weight = rng.uniform(0.0, 1.0, n)
        weight = np.where(weight < 0.05, 1.0, 1.0 - weight)  # in (0, 1], some exactly 1
    return {
        "mu": rng.normal(25.0, spread, n), "sigma": rng.uniform(0.05, 12.0, n),
        "offsets": offsets, "rank": rank, "weight": weight,
    }


# ---------------------------------------------------------------------- team rounds
@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("name", list(MODELS))
def test_team_rounds_match_openskill(name: str, config: int) -> None:
    params = _params_for(name, CONFIGS[config])
    system = get_system(name, **params)
    rng = np.random.default_rng([config, list(MODELS).index(name)])
    for trial in range(150):
        m = random_match(rng, weights=trial % 3 != 0, spread=30.0 if trial % 5 == 0 else 12.0)
        new_mu, new_sig, perf = system.rate_teams(m["mu"], m["sigma"], m["offsets"], m["rank"],
                                                  m["weight"])
        want_mu, want_sig = openskill_rate(name, params, m["mu"], m["sigma"], m["offsets"],
                                           m["rank"], m["weight"])
        what = f"{name} {params} match {trial}"
        assert_close(new_mu, want_mu, f"{what}: mu")
        assert_close(new_sig, want_sig, f"{what}: sigma")
        assert np.all(np.isfinite(perf)), what


@pytest.mark.parametrize("name", list(MODELS))
def test_teams_in_any_order(name: str) -> None:
    """Ranks not sorted (openskill sorts the teams stably by rank, which places the
    partial-pair windows): the same numbers as openskill, in the given order."""
    system = get_system(name)
    rng = np.random.default_rng(7)
    for trial in range(60):
        m = random_match(rng)
        rank = rng.integers(0, len(m["offsets"]) - 1, len(m["offsets"]) - 1)
        new_mu, new_sig, _ = system.rate_teams(m["mu"], m["sigma"], m["offsets"], rank,
                                               m["weight"])
        want_mu, want_sig = openskill_rate(name, {}, m["mu"], m["sigma"], m["offsets"], rank,
                                           m["weight"])
        assert_close(new_mu, want_mu, f"{name} match {trial}: mu")
        assert_close(new_sig, want_sig, f"{name} match {trial}: sigma")


@pytest.mark.parametrize("name", list(MODELS))
def test_weights_of_one_are_no_weights(name: str) -> None:
    """All member weights 1: openskill's call without ``weights`` (a one-member team
    would otherwise be rescaled to the top of ``weight_bounds``)."""
    system = get_system(name)
    m = random_match(np.random.default_rng(3), weights=False)
    ones = np.ones(m["mu"].size)
    got = system.rate_teams(m["mu"], m["sigma"], m["offsets"], m["rank"], ones)
    want = system.rate_teams(m["mu"], m["sigma"], m["offsets"], m["rank"], None)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    want_mu, want_sig = openskill_rate(name, {}, m["mu"], m["sigma"], m["offsets"], m["rank"],
                                       None)
    assert_close(got[0], want_mu, "mu")
    assert_close(got[1], want_sig, "sigma")


# ---------------------------------------------------------------------- individual rounds
@pytest.mark.parametrize("name", list(MODELS))
def test_individual_rounds_match_openskill(name: str) -> None:
    """Every player its own team (weight 1): openskill with one-member teams, ranks with
    ties, and without ranks (the given order)."""
    system = get_system(name)
    rng = np.random.default_rng(11)
    for trial in range(80):
        n = int(rng.integers(2, 40))
        mu, sigma = rng.normal(25.0, 10.0, n), rng.uniform(0.1, 10.0, n)
        offsets = np.arange(n + 1, dtype=np.int64)
        rank = np.sort(rng.integers(0, n, n)) if trial % 4 else np.arange(n)
        new_mu, new_sig, _ = system.rate_teams(mu, sigma, offsets, rank)
        want_mu, want_sig = openskill_rate(name, {}, mu, sigma, offsets,
                                           rank if trial % 8 else None, None)
        assert_close(new_mu, want_mu, f"{name} round {trial}: mu")
        assert_close(new_sig, want_sig, f"{name} round {trial}: sigma")


@pytest.mark.parametrize("name", ["openskill-pl", "openskill-tm", "openskill-bt"])
def test_large_round_runs_in_parallel_and_agrees(name: str) -> None:
    """A round of more than ``PARALLEL_FROM`` players (the pairwise models' parallel
    loop; Plackett-Luce's prefix sums)."""
    n = K.PARALLEL_FROM + 44
    rng = np.random.default_rng(5)
    mu, sigma = rng.normal(25.0, 6.0, n), rng.uniform(1.0, 8.0, n)
    offsets = np.arange(n + 1, dtype=np.int64)
    rank = np.sort(rng.integers(0, n // 2, n))
    new_mu, new_sig, _ = get_system(name).rate_teams(mu, sigma, offsets, rank)
    want_mu, want_sig = openskill_rate(name, {}, mu, sigma, offsets, rank, None)
    assert_close(new_mu, want_mu, "mu")
    assert_close(new_sig, want_sig, "sigma")


# ---------------------------------------------------------------------- through the Rater
def _history(rng: np.random.Generator, n_contests: int, pool: int) -> list[Contest]:
    out = []
    for c in range(n_contests):
        k = int(rng.integers(2, 9))
        who = rng.choice(pool, k, replace=False)
        # every sixth contest a draw (everybody tied): rated, as openskill rates it
        places = np.ones(k, dtype=np.int64) if c % 6 == 5 else rng.integers(1, k + 1, k)
        out.append(Contest.from_places([f"p{i}" for i in who], places, name=f"c{c}",
                                       time_seconds=1_000 * c))
    return out


@pytest.mark.parametrize("name", list(MODELS))
def test_rater_sequence_matches_openskill(name: str) -> None:
    """A history of individual contests through ``Rater.extend`` and a ``Rater.add``
    loop: openskill's ratings, one ``rate`` call per contest (ranks = places)."""
    history = _history(np.random.default_rng(17), 60, 25)
    model = MODELS[name]()
    ratings: dict[str, Any] = {}
    for c in history:
        teams = [[ratings.setdefault(h, model.rating())] for h in c.handles]
        out = model.rate(teams, ranks=c.lo.tolist())
        for h, (r,) in zip(c.handles, out, strict=True):
            ratings[h] = r
    whole = Rater(name)
    whole.extend(history)
    one_by_one = Rater(name)
    for c in history:
        one_by_one.add(c)
    handles = sorted(ratings)
    want_mu = np.array([ratings[h].mu for h in handles])
    want_sig = np.array([ratings[h].sigma for h in handles])
    for r in (whole, one_by_one):
        got = np.array([r.rating(h) for h in handles])
        assert_close(got[:, 0], want_mu, f"{name}: mu")
        assert_close(got[:, 1], want_sig, f"{name}: sigma")
    a, b = whole.ratings(sort=False), one_by_one.ratings(sort=False)
    np.testing.assert_array_equal(a["mu"].to_numpy(), b["mu"].to_numpy())
    np.testing.assert_array_equal(a["sigma"].to_numpy(), b["sigma"].to_numpy())
    shown = whole.ratings(sort=False)
    np.testing.assert_allclose(shown["display_rating"].to_numpy(),
                               [ratings[h].ordinal() for h in shown["handle"]], rtol=0,
                               atol=1e-9)


def _team_history(rng: np.random.Generator, n_contests: int, pool: int) -> list[Contest]:
    """Team contests (2-6 teams of 1-4 members, ties, some member weights below 1)
    mixed with individual ones."""
    out = []
    for c in range(n_contests):
        meta = {"name": f"c{c}", "time_seconds": 1_000 * c}
        draw = c % 5 == 2  # a draw: every player (team) tied, rated as openskill rates it
        if c % 4 == 3:
            k = int(rng.integers(2, 7))
            who = rng.choice(pool, k, replace=False)
            places = np.ones(k, dtype=np.int64) if draw else np.r_[1, rng.integers(1, k + 1,
                                                                                  k - 1)]
            out.append(Contest.from_places([f"p{i}" for i in who], places, **meta))
            continue
        n_teams = int(rng.integers(2, 7))
        sizes = rng.integers(1, 5, n_teams)
        who = rng.choice(pool, int(sizes.sum()), replace=False)
        place = np.ones(n_teams, dtype=np.int64) if draw else np.sort(
            rng.integers(1, n_teams + 1, n_teams))
        weighted = c % 3 == 0
        rows, k = [], 0
        for t, size in enumerate(sizes.tolist()):
            members: list[Any] = []
            for h in who[k:k + size]:
                w = float(rng.choice([1.0, rng.uniform(0.1, 1.0)])) if weighted else 1.0
                members.append((f"p{h}", w))
            k += size
            rows.append((f"team{t}", place[t], members))
        out.append(_from_places(rows, meta))
    return out


def _from_places(rows: list[tuple[str, int, list[Any]]], meta: dict[str, Any]) -> Contest:
    """A team contest from ``(name, 1-based place, members)`` rows, best first."""
    places = np.array([p for _, p, _ in rows])
    lo = np.searchsorted(places, places, side="left")
    hi = np.searchsorted(places, places, side="right") - 1
    return Contest.from_teams([(name, int(a), int(b), members)
                               for (name, _, members), a, b in zip(rows, lo, hi, strict=True)],
                              **meta)


def openskill_history(name: str, history: list[Contest]) -> dict[str, Any]:
    """openskill's ratings after ``history``: one ``rate`` call per contest, teams and
    ranks (team places) as the contest gives them, member weights only when some is
    not 1."""
    model = MODELS[name]()
    ratings: dict[str, Any] = {}
    for c in history:
        if c.teams is None:
            offsets = np.arange(len(c.handles) + 1)
            weight = None
        else:
            offsets = c.teams.offsets
            weight = c.teams.weight if np.any(c.teams.weight != 1.0) else None
        cut = list(zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True))
        teams = [[ratings.setdefault(c.handles[k], model.rating()) for k in range(a, b)]
                 for a, b in cut]
        weights = None if weight is None else [[float(weight[k]) for k in range(a, b)]
                                               for a, b in cut]
        out = model.rate(teams, ranks=[int(c.lo[a]) for a, _ in cut], weights=weights)
        for (a, b), team in zip(cut, out, strict=True):
            for k, r in zip(range(a, b), team, strict=True):
                ratings[c.handles[k]] = r
    return ratings


@pytest.mark.parametrize("name", list(MODELS))
def test_rater_team_history_matches_openskill(name: str) -> None:
    """Team contests (weights, ties) mixed with individual ones through ``Rater.extend``
    and a ``Rater.add`` loop: openskill's ratings; the events name each player's team."""
    history = _team_history(np.random.default_rng(23), 48, 40)
    assert any(c.team_round for c in history)
    ratings = openskill_history(name, history)
    handles = sorted(ratings)
    want_mu = np.array([ratings[h].mu for h in handles])
    want_sig = np.array([ratings[h].sigma for h in handles])
    whole = Rater(name)
    whole.extend(history)
    one_by_one = Rater(name)
    for c in history:
        one_by_one.add(c)
    for r in (whole, one_by_one):
        got = np.array([r.rating(h) for h in handles])
        assert_close(got[:, 0], want_mu, f"{name}: mu")
        assert_close(got[:, 1], want_sig, f"{name}: sigma")
    ev = whole.events_frame()
    first = history[0]
    assert first.team_names is not None
    assert list(ev.loc[ev.contest_index == 0, "team"]) == list(first.team_names)


def test_team_round_equals_rate_teams() -> None:
    """``round_update`` on a team round is :meth:`rate_teams` on its offsets, team places
    and weights; one-member teams of weight 1 are an individual round."""
    system = get_system("openskill-tm")
    c = Contest.from_teams([("a", 0, 1, ["x", ("y", 0.5)]), ("b", 0, 1, ["z"]),
                            ("c", 2, 2, ["u", "v", "w"])], name="m")
    assert c.team_round and c.teams is not None
    r = Rater(system)
    r.add(c)
    mu0, sig0 = system.newcomer()
    want = system.rate_teams(np.full(6, mu0), np.full(6, sig0), c.teams.offsets,
                             np.array([0, 0, 2]), c.teams.weight)
    got = np.array([r.rating(h) for h in c.handles])
    np.testing.assert_array_equal(got[:, 0], want[0])
    np.testing.assert_array_equal(got[:, 1], want[1])
    solo = Contest.from_teams([("a", 0, 0, ["x"]), ("b", 1, 1, ["y"])], name="s")
    indiv = Contest.from_places(["x", "y"], [1, 2], name="s")
    assert not solo.team_round
    r1, r2 = Rater(system), Rater(system)
    r1.add(solo)
    r2.add(indiv)
    assert r1.rating("x") == r2.rating("x") and r1.rating("y") == r2.rating("y")


# ---------------------------------------------------------------------- the system
@pytest.mark.parametrize("name", list(MODELS))
def test_registered_with_openskill_defaults(name: str) -> None:
    cls, preset, description = SYSTEMS[name]
    assert preset == {} and description
    system = get_system(name)
    assert isinstance(system, OpenSkillModel) and system.team_rule == TEAM_RULE
    ref = MODELS[name]()
    params = system.params()
    for key in ("mu", "sigma", "beta", "kappa", "tau", "limit_sigma", "balance",
                "epsilon", "window_size"):
        if hasattr(ref, key) or key in params:
            assert params[key] == getattr(ref, key), key
    assert tuple(params["weight_bounds"]) == ref.weight_bounds
    assert system.newcomer() == (25.0, 25.0 / 3.0)
    mu, sigma = np.array([30.0, 20.0]), np.array([2.0, 5.0])
    np.testing.assert_array_equal(system.display_rating(mu, sigma), mu - 3.0 * sigma)
    model = system.performance_model(sigma, np.array([1, 2]), 1.0)
    assert model.kind == "gaussian"
    np.testing.assert_allclose(model.variance, sigma**2 + (25.0 / 6.0) ** 2)
    # a round trip through the parameters' JSON form (tuples become lists)
    back = type(system).from_params({**params, "weight_bounds": list(params["weight_bounds"])})
    assert back == system


@pytest.mark.parametrize(
    "params, message",
    [
        ({"kappa": 0.0}, r"kappa must be a number in \[1e-12, 1e\+06\], got 0.0"),
        ({"kappa": 1.5}, r"kappa must be a number in \(0, 1\]"),
        ({"sigma": -1.0}, r"sigma must be a number in \[1e-12, 1e\+06\], got -1.0"),
        ({"beta": math.inf}, r"beta must be a number in \[1e-12, 1e\+06\], got inf"),
        ({"tau": -0.1}, r"tau must be 0 or a number in \[1e-12, 1e\+06\], got -0.1"),
        ({"mu": math.nan}, r"mu must be a number in \[-1e\+06, 1e\+06\], got nan"),
        ({"balance": 1}, "balance must be True or False"),
        ({"weight_bounds": (2.0, 1.0)}, "weight_bounds must be None or"),
        ({"weight_bounds": (0.0, 1.0)}, "weight_bounds must be None or"),
        ({"weight_bounds": 3.0}, "weight_bounds must be None or"),
        ({"bogus": 1}, "unknown parameter"),
    ],
)
def test_bad_parameters_are_config_errors(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        get_system("openskill-pl", **params)


def test_model_specific_parameters() -> None:
    with pytest.raises(ConfigError, match="window_size must be a positive integer"):
        get_system("openskill-btp", window_size=0)
    with pytest.raises(ConfigError,
                       match=r"epsilon must be 0 or a number in \[1e-12, 1e\+06\], got -1.0"):
        get_system("openskill-tm", epsilon=-1.0)
    with pytest.raises(ConfigError, match="unknown parameter"):
        get_system("openskill-pl", epsilon=0.1)


def test_weight_rescaling_is_openskills() -> None:
    offsets = np.array([0, 1, 3, 6], dtype=np.int64)
    w = np.array([0.3, 0.5, 0.5, 0.2, 0.6, 1.0])
    got = K.normalize_weights(w, offsets, 1.0, 2.0)
    np.testing.assert_allclose(got, [2.0, 1.0, 1.0, 1.0, 1.5, 2.0])


def test_perf_is_the_teams_newton_step() -> None:
    """``perf = mu + Omega / Delta``: the same shift for every member of a team, above
    ``mu`` for the winners and below for the losers of a two-team match."""
    system = get_system("openskill-pl")
    mu = np.array([25.0, 20.0, 30.0, 24.0])
    sigma = np.full(4, 8.0)
    offsets = np.array([0, 2, 4], dtype=np.int64)
    _, _, perf = system.rate_teams(mu, sigma, offsets, np.array([0, 1]))
    shift = perf - mu
    assert shift[0] == pytest.approx(shift[1]) and shift[2] == pytest.approx(shift[3])
    assert shift[0] > 0 > shift[2]


@pytest.mark.parametrize("name", ["openskill-pl", "openskill-tm"])
def test_draws_rated_as_openskill_and_skipped_on_request(name: str) -> None:
    """The histories above hold draws (every team tied), which openskill rates; with
    ``all_tied="skip"`` Podium equals openskill on the history without them, and is
    then far from openskill on the history with them (the symptom of issue 27)."""
    history = _team_history(np.random.default_rng(23), 48, 40)
    draws = [c for c in history if c.is_outcome_free]
    assert len(draws) >= 5 and any(c.team_round for c in draws)
    skip = Rater(name, all_tied="skip")
    skip.extend(history)
    without = openskill_history(name, [c for c in history if not c.is_outcome_free])
    for h, want in without.items():
        assert_close(np.array(skip.rating(h)), np.array([want.mu, want.sigma]), h)
    with_draws = openskill_history(name, history)
    assert max(abs(skip.rating(h)[0] - r.mu) for h, r in with_draws.items()
               if h in skip.players.index) > 0.5


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_loop_equals_round_by_round(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``rate_rounds`` (one compiled loop over a batch, taken from the 32nd contest on)
    gives the numbers of ``round_update`` round by round, bit for bit: ratings, the
    player table and the events, through ``extend`` and through ``add``."""
    history = _team_history(np.random.default_rng(5), 120, 60)
    compiled_whole = Rater(name)
    compiled_whole.extend(history)
    compiled_one = Rater(name)
    for c in history:
        compiled_one.add(c)
    cls = type(compiled_whole.system)
    monkeypatch.setattr(cls, "rate_rounds", RatingSystem.rate_rounds)
    plain = Rater(name)
    plain.extend(history)
    n = plain.players.n
    for r in (compiled_whole, compiled_one):
        assert r.players.handles == plain.players.handles
        for k in ("mu", "sigma", "contests", "last_time", "max_display", "last_change"):
            np.testing.assert_array_equal(getattr(r.players, k)[:n],
                                          getattr(plain.players, k)[:n], err_msg=k)
        got, want = r.events.arrays(), plain.events.arrays()
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=k)
