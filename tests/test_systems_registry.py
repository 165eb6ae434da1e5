"""The registry of rating systems: names known up front, modules imported on first use."""

from __future__ import annotations

import importlib
import os
import pkgutil
import subprocess
import sys

import pytest

import podium.systems as systems_pkg
from podium.errors import ConfigError
from podium.systems import _MODULES, SYSTEMS, _Registry, get_system


def _discovered() -> dict[str, str]:
    """Every module's ``PRESETS``, found by walking the package: the flagship's module
    first, then by module name (the order ``SYSTEMS`` promises)."""
    names = sorted(m.name for m in pkgutil.iter_modules(systems_pkg.__path__)
                   if not m.name.startswith("_") and m.name != "base")
    names.sort(key=lambda n: (not n.startswith("elo_mmr"), n))
    found: dict[str, str] = {}
    for mod_name in names:
        module = importlib.import_module(f"podium.systems.{mod_name}")
        for name in getattr(module, "PRESETS", {}):
            assert name not in found, f"{name!r} registered by {found[name]} and {mod_name}"
            found[name] = mod_name
    return found


def test_table_matches_every_module() -> None:
    """``_MODULES`` names every system of every module, in order: a system added to a
    module without a line in the table fails here."""
    assert list(_discovered().items()) == list(_MODULES.items())


def test_entries_are_the_modules_presets() -> None:
    for name, mod_name in _MODULES.items():
        module = importlib.import_module(f"podium.systems.{mod_name}")
        assert SYSTEMS[name] is module.PRESETS[name]
    assert list(SYSTEMS) == list(_MODULES)
    assert len(SYSTEMS) == len(_MODULES)


def test_a_stale_table_is_refused() -> None:
    stale = _Registry({"mmr": "elo_mmr", "cfsys": "elo_mmr"})
    assert "cfsys" in stale  # names need no import
    with pytest.raises(RuntimeError, match="_MODULES is out of date for module 'elo_mmr'"):
        stale["cfsys"]


def test_unknown_name() -> None:
    with pytest.raises(ConfigError, match="unknown rating system 'nope'; available: mmr, "):
        get_system("nope")
    assert "nope" not in SYSTEMS
    with pytest.raises(KeyError):
        SYSTEMS["nope"]


def test_set_and_delete_like_a_dict() -> None:
    reg = _Registry(_MODULES)
    preset = reg["mmr"]
    reg["mine"] = preset
    assert list(reg)[-1] == "mine" and reg["mine"] is preset
    del reg["mine"]
    del reg["mmr"]
    assert "mmr" not in reg and len(reg) == len(_MODULES) - 1
    assert dict(reg)["mmr-fast"] is SYSTEMS["mmr-fast"]  # mmr's module still loads


def test_a_system_imports_its_own_module_only() -> None:
    """``get_system('mmr')`` imports Elo-MMR's modules and none of the other systems';
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
    assert before == ["podium.systems.base"]
    assert "podium.systems.elo_mmr" in after
    others = {f"podium.systems.{m}" for m in _MODULES.values()} - {"podium.systems.elo_mmr"}
    assert not others & set(after), sorted(others & set(after))
