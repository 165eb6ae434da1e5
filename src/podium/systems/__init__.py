"""Rating systems, one module per system, all behind :class:`RatingSystem`.

``get_system(name, **params)`` builds a system by name with named
hyper-parameters; ``SYSTEMS`` lists the names and their presets.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from podium.errors import ConfigError
from podium.systems.base import Preset, RatingSystem, RoundInput, RoundOutput, SystemState
from podium.systems.elo_mmr import EloMMR

__all__ = [
    "RatingSystem",
    "RoundInput",
    "RoundOutput",
    "SystemState",
    "EloMMR",
    "SYSTEMS",
    "get_system",
    "describe_systems",
]


#: name -> (class, preset parameters, one-line description), gathered from the
#: ``PRESETS`` dict of every module in this package (one module per system).
SYSTEMS: dict[str, Preset] = {}


def _discover() -> None:
    names = sorted(
        m.name for m in pkgutil.iter_modules(__path__)
        if not m.name.startswith("_") and m.name != "base"
    )
    # the flagship first, then alphabetical
    names.sort(key=lambda n: (not n.startswith("elo_mmr"), n))
    for mod_name in names:
        module = importlib.import_module(f"{__name__}.{mod_name}")
        for name, preset in getattr(module, "PRESETS", {}).items():
            if name in SYSTEMS:
                raise RuntimeError(f"rating system {name!r} registered twice ({mod_name})")
            SYSTEMS[name] = preset


_discover()


def get_system(name: str, **params: Any) -> RatingSystem:
    """Build the system ``name`` with its preset overridden by ``params``.

    Raises
    ------
    ConfigError
        For an unknown name or an unknown/invalid parameter.
    """
    try:
        cls, preset, _ = SYSTEMS[name]
    except KeyError:
        raise ConfigError(
            f"unknown rating system {name!r}; available: {', '.join(SYSTEMS)}"
        ) from None
    return cls.from_params({**preset, **params})


def describe_systems() -> list[tuple[str, str]]:
    return [(k, v[2]) for k, v in SYSTEMS.items()]

