"""Declared hooks: a subclass that overrides one of a system's hooks sees its override
run, because the system's compiled paths (loops over many small rounds that repeat the
update in compiled code) step aside while any hook is overridden
(``RatingSystem.overridden_hooks``); without an override they are taken."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pytest

from podium import Contest, Rater
from podium.systems import SYSTEMS, get_system
from podium.systems.base import RatingSystem
from podium.systems.elo_mmr import EloMMR
from podium.systems.openskill import OpenSkillModel
from podium.systems.trueskill import TrueSkillSPb

#: The systems with compiled paths, the class that declares their hooks, the kernel
#: modules and functions of those paths, and the preset that exercises each hook.
OWNERS: dict[type[RatingSystem], tuple[str, tuple[tuple[str, str], ...]]] = {
    EloMMR: ("mmr", (("podium.systems.elo_mmr.rounds_kernels", "elo_mmr_rounds"),
                     ("podium.systems.elo_mmr.rounds_kernels", "elo_mmr_add"))),
    TrueSkillSPb: ("trueskill", (("podium.systems.trueskill.rounds_kernels",
                                  "trueskill_rounds"),
                                 ("podium.systems.trueskill.rounds_kernels", "trueskill_add"))),
    OpenSkillModel: ("openskill-pl", (("podium.systems.openskill.kernels", "rate_rounds"),)),
}
#: A hook that only some preset of the owner exercises.
PRESET_OF_HOOK = {"subsampled_performance": "mmr-fast"}


def _lobbies(n: int = 60, pool: int = 40, seed: int = 4) -> list[Contest]:
    """``n`` small individual rounds (2-8 players, ties), then a team round and one more
    lobby: past the contest (32) from which the compiled paths are taken."""
    rng = np.random.default_rng(seed)
    out = []
    for m in range(n):
        size = int(rng.integers(2, 9))
        handles = [f"p{k}" for k in rng.choice(pool, size, replace=False)]
        scores = rng.integers(0, 4, size).astype(float)
        out.append(Contest.from_scores(handles, scores, name=f"r{m}",
                                       time_seconds=1_700_000_000 + 3600 * m))
    out.append(Contest.from_teams([("red", 0, 0, ["p1", "p2"]), ("blue", 1, 1, ["p3", "p4"])],
                                  name="teams", time_seconds=1_700_000_000 + 3600 * n))
    out.append(Contest.from_scores(["p5", "p6", "p7"], [3.0, 2.0, 1.0], name="last",
                                   time_seconds=1_700_000_000 + 3600 * (n + 1)))
    return out


@contextmanager
def counting_kernels(paths: tuple[tuple[str, str], ...]) -> Iterator[list[str]]:
    """Record every call of the compiled-path kernels ``(module, function)``."""
    import importlib

    calls: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        for mod_name, fn in paths:
            module = importlib.import_module(mod_name)
            original = getattr(module, fn)

            def spy(*args: Any, _original: Any = original, _fn: str = fn) -> Any:
                calls.append(_fn)
                return _original(*args)

            spy.overloads = original.overloads  # type: ignore[attr-defined]  # what it holds
            mp.setattr(module, fn, spy)
        yield calls


def _subclass(owner: type[RatingSystem], base: type[RatingSystem], hook: str,
              calls: list[str]) -> type[RatingSystem]:
    """A subclass of ``base`` overriding ``hook``: a method that records its call and
    runs the inherited one (the numbers stay the system's), or a class attribute."""
    inherited = getattr(base, hook)
    if callable(inherited):
        def override(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append(hook)
            return inherited(self, *args, **kwargs)

        namespace: dict[str, Any] = {hook: override}
    else:  # a class attribute: the display's centre, moved to another parameter
        namespace = {hook: "sig_noob", "__annotations__": {hook: ClassVar[str]}}
    return dataclass(frozen=True)(type(f"Custom_{hook}", (base,), namespace))


def _cases() -> list[tuple[type[RatingSystem], str]]:
    return [(owner, hook) for owner in OWNERS for hook in owner.hooks]


@pytest.mark.parametrize(("owner", "hook"), _cases(),
                         ids=[f"{o.__name__}.{h}" for o, h in _cases()])
def test_an_overridden_hook_runs_and_the_compiled_path_steps_aside(
        owner: type[RatingSystem], hook: str) -> None:
    name, kernels = OWNERS[owner]
    name = PRESET_OF_HOOK.get(hook, name)
    base_cls, params, _ = SYSTEMS[name]
    history = _lobbies()
    ran: list[str] = []
    custom = _subclass(owner, base_cls, hook, ran).from_params(dict(params))
    assert custom.overridden_hooks(owner) == (hook,)
    with counting_kernels(kernels) as compiled:
        by_extend = Rater(custom)
        by_extend.extend(history)
        by_add = Rater(custom)
        for c in history:
            by_add.add(c)
    assert not compiled, f"compiled path taken although {hook} is overridden: {compiled[:3]}"
    if callable(getattr(owner, hook)):
        assert hook in ran
        # the override delegates: the ratings are the system's own, bit for bit
        plain = Rater(name)
        plain.extend(history)
        for r in (by_extend, by_add):
            assert np.array_equal(r.ratings()["mu"].to_numpy(), plain.ratings()["mu"].to_numpy())
    else:  # the new centre is what the display uses
        r = by_extend.ratings()
        shown = custom.display_rating(r["mu"].to_numpy(), r["sigma"].to_numpy())
        assert np.array_equal(r["display_rating"].to_numpy(), shown)


@pytest.mark.parametrize("owner", list(OWNERS), ids=[o.__name__ for o in OWNERS])
def test_without_an_override_the_compiled_path_is_taken(owner: type[RatingSystem]) -> None:
    """The control: the same histories take the compiled paths when nothing is
    overridden, through ``extend`` and through ``add``."""
    name, kernels = OWNERS[owner]
    system = get_system(name)
    assert system.overridden_hooks(owner) == ()
    history = _lobbies()
    warm = Rater(system)  # compile first: one kernel calls another, which a spy cannot be
    for c in history:
        warm.add(c)
    with counting_kernels(kernels) as by_extend:
        Rater(system).extend(history)
    assert by_extend
    with counting_kernels(kernels) as by_add:
        r = Rater(system)
        for c in history:
            r.add(c)
    assert by_add


def test_every_declared_hook_exists() -> None:
    for owner in OWNERS:
        assert owner.hooks
        for hook in owner.hooks:
            assert hasattr(owner, hook), (owner.__name__, hook)
