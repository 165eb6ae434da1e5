"""The registry of rating systems: one folder per system, one line per folder, names
known up front, folders imported on first use; every folder declares itself in its
``SPEC``."""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import pkgutil
import subprocess
import sys

import pytest

import podium.systems as systems_pkg
from podium._jit import system_kernels
from podium.errors import ConfigError
from podium.evaluation.tuning import search_space, search_spaces
from podium.systems import REGISTRY, SYSTEMS, _Registry, get_system, spec_of, system_spec
from podium.systems.base import Preset, RatingSystem, SearchRange, SystemSpec


def _folders() -> list[str]:
    """Every system folder, found by walking the package: the flagship's (``elo_mmr*``)
    first, then by name (the order ``SYSTEMS`` promises); ``base`` is the shared
    package, not a system."""
    names = sorted(m.name for m in pkgutil.iter_modules(systems_pkg.__path__)
                   if m.ispkg and m.name != "base")
    return sorted(names, key=lambda n: (not n.startswith("elo_mmr"), n))


def test_registry_has_one_line_per_folder_matching_its_spec() -> None:
    """A folder without a line, a line without a folder, or a line that lists other
    presets than the folder's ``SPEC`` fails here."""
    assert list(REGISTRY) == _folders()
    for folder, names in REGISTRY.items():
        spec = importlib.import_module(f"podium.systems.{folder}").SPEC
        assert isinstance(spec, SystemSpec)
        assert tuple(spec.presets) == names, folder


def test_entries_are_the_specs_presets() -> None:
    for folder, names in REGISTRY.items():
        spec = importlib.import_module(f"podium.systems.{folder}").SPEC
        for name in names:
            assert SYSTEMS[name] is spec.presets[name]
            assert isinstance(SYSTEMS[name], Preset)
            assert system_spec(name) is spec
    flat = [n for names in REGISTRY.values() for n in names]
    assert list(SYSTEMS) == flat and len(SYSTEMS) == len(flat) == len(set(flat))


def test_a_stale_line_is_refused() -> None:
    stale = _Registry({"elo_mmr": ("mmr", "cfsys")})
    assert "cfsys" in stale  # names need no import
    with pytest.raises(RuntimeError, match="REGISTRY is out of date for folder 'elo_mmr'"):
        stale["cfsys"]


def test_unknown_name() -> None:
    with pytest.raises(ConfigError, match="unknown rating system 'nope'; available: mmr, "):
        get_system("nope")
    with pytest.raises(ConfigError, match="unknown rating system 'nope'"):
        system_spec("nope")
    assert "nope" not in SYSTEMS
    with pytest.raises(KeyError):
        SYSTEMS["nope"]


def test_set_and_delete_like_a_dict() -> None:
    reg = _Registry(REGISTRY)
    preset = reg["mmr"]
    reg["mine"] = preset
    assert list(reg)[-1] == "mine" and reg["mine"] is preset
    del reg["mine"]
    del reg["mmr"]
    assert "mmr" not in reg and len(reg) == len(SYSTEMS) - 1
    assert dict(reg)["mmr-fast"] is SYSTEMS["mmr-fast"]  # mmr's folder still loads


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_spec_declares_presets_search_space_and_kernels(name: str) -> None:
    """Every preset builds; its search space (when it has one) names parameters of its
    class with valid ranges; its kernel modules exist and define kernels; the compile
    estimate is a positive number exactly when there are kernels."""
    spec = system_spec(name)
    system = get_system(name)
    assert isinstance(system, SYSTEMS[name].cls)
    fields = {f.name for f in dataclasses.fields(system)}
    for pname, rng in spec.search_spaces.get(name, {}).items():
        assert pname in fields and isinstance(rng, SearchRange)
        assert rng.low < rng.high and (not rng.log or rng.low > 0)
    if spec.search_spaces.get(name):
        assert search_space(name) == dict(spec.search_spaces[name])
    kernels = system_kernels(system)
    assert list(kernels) == list(spec.kernels)
    assert all(kernels.values()), kernels
    assert (spec.compile_seconds > 0) == bool(spec.kernels)
    assert math.isfinite(spec.compile_seconds)


def test_search_spaces_are_gathered_from_the_specs() -> None:
    spaces = search_spaces()
    assert list(spaces) == [n for n in SYSTEMS if system_spec(n).search_spaces.get(n)]
    assert "mmr" in spaces and "codeforces" not in spaces
    with pytest.raises(ConfigError, match="no search space for system 'codeforces'"):
        search_space("codeforces")


def test_a_subclass_finds_its_bases_spec() -> None:
    """A user's subclass of a system (defined outside its folder) has the folder's
    kernels and compile estimate; a class no folder defines has none."""
    from podium.systems.elo_mmr import EloMMR

    class Mine(EloMMR):
        pass

    assert spec_of(Mine()) is system_spec("mmr")
    assert spec_of(RatingSystem) is None


def test_spec_refuses_what_it_cannot_hold() -> None:
    from podium.systems.topcoder import TopCoder

    with pytest.raises(ValueError, match="unknown presets: other"):
        SystemSpec({"tcsys": Preset(TopCoder, {}, "x")},
                   search_spaces={"other": {}})
    with pytest.raises(ValueError, match="'nope' is not a parameter of TopCoder"):
        SystemSpec({"tcsys": Preset(TopCoder, {}, "x")},
                   search_spaces={"tcsys": {"nope": SearchRange(0.1, 1.0)}})
    with pytest.raises(ValueError, match="unknown parameter"):
        SystemSpec({"tcsys": Preset(TopCoder, {"nope": 1}, "x")})
    with pytest.raises(ValueError, match="finite low < high"):
        SearchRange(1.0, 1.0)
    with pytest.raises(ValueError, match="low > 0"):
        SearchRange(0.0, 1.0, log=True)


def test_a_system_imports_its_own_folder_only() -> None:
    """``get_system('mmr')`` imports Elo-MMR's folder and none of the other systems';
    asking which names exist imports no system at all."""
    code = (
        "import sys; from podium.systems import SYSTEMS, get_system; "
        "mods = lambda: sorted(m for m in sys.modules if m.startswith('podium.systems.')); "
        "assert 'cfsys' in SYSTEMS and len(list(SYSTEMS)) > 20; print(mods()); "
        "get_system('mmr'); print(mods())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stderr
    before, after = (eval(line) for line in out.stdout.splitlines())  # noqa: S307
    assert all(m.startswith("podium.systems.base") for m in before), before
    assert "podium.systems.elo_mmr" in after
    others = {f"podium.systems.{m}" for m in REGISTRY} - {"podium.systems.elo_mmr"}
    loaded = {".".join(m.split(".")[:3]) for m in after}
    assert not others & loaded, sorted(others & loaded)
