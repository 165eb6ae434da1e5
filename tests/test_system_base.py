"""The system interface of :mod:`podium.systems.base`: declarative states
(:class:`ArrayState`), parameter checks (:func:`param`), the newcomer prior, the
display rating and the performance model each system owns."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from podium import Contest, Rater
from podium.errors import ConfigError
from podium.predict import performance_model
from podium.systems import SYSTEMS, get_system
from podium.systems.base import (
    ArrayState,
    NoPlayerState,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    check_param,
    int_scalar,
    param,
    player_array,
    whole_array,
)


class ToyState(ArrayState):
    FIELDS = (
        int_scalar("rounds"),
        player_array("score", fill="start"),
        player_array("seen", np.int64, fill=-1),
        whole_array("table", np.int64),
        int_scalar("t0", optional=True),
    )
    PARAMS = ("start", "spread")
    rounds: int
    score: np.ndarray
    seen: np.ndarray
    table: np.ndarray
    t0: int | None


def _live(image: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A factor pool's live factors only (the slack of a player's block is not state)."""
    if "fb_base" not in image:
        return image
    live = np.concatenate([
        np.arange(b + s, b + s + n) for b, s, n in zip(
            image["fb_base"], image["fb_start"], image["fb_len"], strict=True)
    ] + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    return {k: (v[live] if k in ("f_mu", "f_warg", "f_wout") else v) for k, v in image.items()}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert list(a) == list(b)
    a, b = _live(a), _live(b)
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        # NaN marks a value not there yet (mmr-plus's last residual before a player's
        # first round): equal when both are NaN
        assert np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f"), k


# ------------------------------------------------------------------ ArrayState
def test_declared_fields_grow_save_and_load() -> None:
    st = ToyState(1500.0, 350.0)
    assert st.n == 0 and st.rounds == 0 and st.t0 is None
    st.ensure_players(3)
    np.testing.assert_array_equal(st.score[:3], [1500.0] * 3)
    np.testing.assert_array_equal(st.seen[:3], [-1] * 3)
    st.score[1] = 7.0
    st.ensure_players(2)  # never shrinks
    st.ensure_players(40)  # geometric growth keeps the old rows, fills the new
    assert st.n == 40 and st.score.size >= 40
    assert st.score[1] == 7.0 and st.score[39] == 1500.0 and st.seen[39] == -1
    st.rounds, st.table = 5, np.array([3, 1, 4], dtype=np.int64)
    out = st.to_arrays()
    assert list(out) == ["rounds", "score", "seen", "table", "t0", "prior"]
    assert out["rounds"].dtype == np.int64 and out["rounds"].shape == (1,)
    assert out["score"].shape == (40,) and out["seen"].dtype == np.int64
    assert out["t0"].shape == (0,)
    np.testing.assert_array_equal(out["prior"], [1500.0, 350.0])
    back = ToyState.from_arrays(out)
    assert back.n == 40 and back.rounds == 5 and back.t0 is None
    assert (back.start, back.spread) == (1500.0, 350.0)
    _same(back.to_arrays(), out)
    back.t0 = 123
    assert ToyState.from_arrays(back.to_arrays()).t0 == 123


def test_copy_is_independent() -> None:
    st = ToyState(0.0, 1.0)
    st.ensure_players(4)
    st.table = np.arange(3, dtype=np.int64)
    cp = st.copy()
    before = cp.to_arrays()
    st.score[:] = 99.0
    st.seen[:] = 5
    st.table[0] = 42
    st.rounds += 1
    st.ensure_players(9)
    _same(cp.to_arrays(), before)
    assert cp.n == 4


def test_damaged_images_are_rejected() -> None:
    st = ToyState(0.0, 1.0)
    st.ensure_players(3)
    good = st.to_arrays()
    with pytest.raises(KeyError):
        ToyState.from_arrays({k: v for k, v in good.items() if k != "seen"})
    with pytest.raises(ValueError, match="'seen' has 2 rows, not 3"):
        ToyState.from_arrays({**good, "seen": good["seen"][:2]})
    with pytest.raises(ValueError, match="'rounds' is empty"):
        ToyState.from_arrays({**good, "rounds": np.zeros(0, dtype=np.int64)})
    with pytest.raises(TypeError, match="takes 2 argument"):
        ToyState(1.0)


def test_no_player_state_counts_players_and_tolerates_old_images() -> None:
    st = NoPlayerState()
    st.ensure_players(7)
    _same(st.to_arrays(), {"n": np.array([7], dtype=np.int64)})
    assert NoPlayerState.from_arrays({}).n == 0


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_every_state_round_trips_and_copies(name: str) -> None:
    if name == "elo-average":
        contests = [Contest.from_places(["a", "b", "c"], [1, 2, 2], name="r0", time_seconds=0),
                    Contest.from_places(["c", "d"], [1, 2], name="r1", time_seconds=86_400)]
    else:
        contests = [Contest.from_places([f"p{i}" for i in range(8)], [1, 2, 2, 4, 5, 6, 7, 8],
                                        name="r0", time_seconds=0),
                    Contest.from_places(["p3", "p9", "p1"], [1, 2, 3], name="r1",
                                        time_seconds=86_400)]
    r = Rater(name)
    r.extend(contests)
    state = r.state
    image = state.to_arrays()
    back = type(state).from_arrays(image)
    _same(back.to_arrays(), state.to_arrays())
    cp = state.copy()
    assert isinstance(cp, SystemState) and cp is not state
    frozen = cp.to_arrays()
    r.add(Contest.from_places(["p1", "p3", "zz", "a", "c"], [1, 2, 3, 4, 5], name="r2",
                              time_seconds=2 * 86_400))
    _same(cp.to_arrays(), frozen)


def test_checkpoint_names_and_dtypes_are_pinned() -> None:
    """The state entries of old checkpoints (names, dtypes, ranks) stay what they were."""
    want = {
        "cfsys": {"n": ("i", 1)},
        "codeforces": {},
        "elosrm": {"recent": ("f", 1), "t0": ("i", 1)},
        "glicko": {"n": ("i", 1)},
        "elo-single": {"rounds": ("i", 1)},
        "elo-lsq": {"n": ("i", 1), "keys": ("i", 1), "w_ab": ("f", 1), "w_ba": ("f", 1)},
        "glicko2p": {"rounds": ("i", 1), "last_round": ("i", 1)},
        "tcsys": {"n": ("i", 1)},
        "trueskill": {"n": ("i", 1)},
        "mmr-simple": {"p0": ("f", 1), "w0": ("f", 1), "counts": ("i", 1), "p": ("f", 1),
                       "w": ("f", 1), "b": ("f", 1), "prior": ("f", 1)},
    }
    for name, entries in want.items():
        r = Rater(name)
        r.add(Contest.from_places(["a", "b", "c"], [1, 2, 3], name="x", time_seconds=0))
        got = {k: (v.dtype.kind, v.ndim) for k, v in r.state.to_arrays().items()}
        assert got == entries, name
        assert all(v.dtype.itemsize == 8 for v in r.state.to_arrays().values()), name


# ------------------------------------------------------------------ parameters
@pytest.mark.parametrize(
    "check, good, bad, message",
    [
        ("finite", [0, -3.5, np.float64(2), 1e6, -1e6], [math.inf, math.nan, "1", True, 1e308],
         r"x must be a number in \[-1e\+06, 1e\+06\]"),
        ("positive", [1e-9, 3, np.int64(2), 1e-12], [0, -1, math.inf, math.nan, None, False,
                                                      1e-320, 1e300],
         r"x must be a number in \[1e-12, 1e\+06\]"),
        ("nonnegative", [0, 2.5], [-1e-9, math.inf, math.nan, 1e-300],
         r"x must be 0 or a number in \[1e-12, 1e\+06\]"),
        ("positive_or_inf", [math.inf, 2], [0, math.nan, -math.inf, 1e300],
         r"x must be a number in \[1e-12, 1e\+06\] or math.inf"),
        ("nonnegative_or_inf", [0, math.inf], [-1, math.nan],
         r"x must be 0, a number in \[1e-12, 1e\+06\] or math.inf"),
        ("open_unit", [0.5], [0, 1, math.nan, 1e-300],
         r"x must be a number in \(0, 1\), at least 1e-12 from either end"),
        ("positive_int", [1, np.int64(3)], [0, 2.0, True, None], "x must be a positive integer"),
        ("positive_int_or_none", [None, 4], [0, 1.5], "x must be a positive integer or None"),
        ("bool", [True, False], [0, 1, "yes"], "x must be True or False"),
        ("number_or_none", [None, math.inf, 3], [math.nan, "3", -math.inf, 1e300],
         r"x must be a number in \[-1e\+06, 1e\+06\], math.inf or None"),
        ("finite_list", [[], (1.0, 2.5)], ["abc", [0.0], [math.nan], 1.0],
         r"x must be a list of numbers, each in \[1e-12, 1e\+06\]"),
    ],
)
def test_check_param(check: Any, good: list[Any], bad: list[Any], message: str) -> None:
    for v in good:
        check_param("x", v, check)
    for v in bad:
        with pytest.raises(ConfigError, match=f"^{message}, got "):
            check_param("x", v, check)


@dataclass(frozen=True)
class ToySystem(RatingSystem):
    name: ClassVar[str] = "toy"
    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("start", 0.0)
    display_center: ClassVar[str | None] = "sig_limit"

    start: float = param(1000.0, "finite")
    sig_limit: float = param(50.0, "positive")
    display_sigmas: float = 2.0

    def make_state(self) -> NoPlayerState:
        return NoPlayerState()

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        return RoundOutput(rnd.mu, rnd.sigma, rnd.mu)


def test_param_checks_newcomer_display_and_default_model() -> None:
    with pytest.raises(ConfigError, match=r"sig_limit must be a number in \[1e-12, 1e\+06\]"):
        ToySystem(sig_limit=-1.0)
    with pytest.raises(ConfigError, match="start must be a number in"):
        ToySystem.from_params({"start": math.nan})
    s = ToySystem(start=1200)
    assert s.newcomer() == (1200.0, 0.0) and isinstance(s.newcomer()[0], float)
    np.testing.assert_array_equal(s.display_rating(np.array([1000.0]), np.array([80.0])),
                                  [1000.0 - 2.0 * 30.0])
    model = performance_model(s, [0.0, 10.0])
    assert model.kind == "logistic" and "generic fallback" in model.description


def test_systems_own_their_newcomer_prior() -> None:
    assert get_system("mmr").newcomer() == (1500.0, 350.0)
    assert get_system("elo-single", initial=1000.0).newcomer() == (1000.0, 0.0)
    assert get_system("elo-lsq").newcomer() == (1200.0, 0.0)
    assert get_system("pagerank").newcomer() == (1.0, 0.0)
    assert get_system("glicko2p", rd0=300.0).newcomer() == (1500.0, 300.0)
    assert get_system("elosrm").newcomer() == (1200.0, get_system("elosrm").k)
    assert get_system("codeforces", scheme="2020").newcomer() == (0.0, 350.0)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_every_system_has_a_performance_model(name: str) -> None:
    system = get_system(name)
    sigma = np.array([0.0, 100.0, 350.0])
    model = performance_model(system, sigma, [0, 3, 10], weight=2.0)
    assert model.kind in ("logistic", "gaussian")
    assert model.variance.shape == sigma.shape and np.all(model.variance >= 0)
    assert model.description
