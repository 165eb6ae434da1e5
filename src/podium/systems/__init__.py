"""Rating systems, one module per system, all behind :class:`RatingSystem`.

``get_system(name, **params)`` builds a system by name with named
hyper-parameters; ``SYSTEMS`` lists the names and their presets.
"""

from __future__ import annotations

import math
from typing import Any

from podium.errors import ConfigError
from podium.systems.base import RatingSystem, RoundInput, RoundOutput, SystemState
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


def _fast(**kw: Any) -> dict[str, Any]:
    return {"subsample_size": 100, "subsample_bucket": 2.0, "max_history": 100, **kw}


#: name -> (class, preset parameters, one-line description)
SYSTEMS: dict[str, tuple[type[RatingSystem], dict[str, Any], str]] = {
    "mmr": (EloMMR, {}, "Elo-MMR(rho=1), logistic, every opponent and the whole history (exact)"),
    "mmr-fast": (EloMMR, _fast(), "Elo-MMR with 100 subsampled opponents and 100 factors"),
    "mmx": (EloMMR, {"variant": "gaussian"}, "Elo-MMchi: Gaussian performance model (exact)"),
    "mmx-fast": (EloMMR, _fast(variant="gaussian"), "Elo-MMchi with 100 subsampled opponents"),
    "mmr-inf": (EloMMR, {"rho": math.inf}, "Elo-MMR(inf): memoryless logistic variant"),
}


def _register_simple() -> None:
    from podium.systems.elo_mmr_simple import SimpleEloMMR

    SYSTEMS["mmr-simple"] = (
        SimpleEloMMR, {}, "Elo-MMR following Algorithms 1-3 literally (O(N^2), for checking)"
    )


_register_simple()


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
    merged = {**preset, **params}
    if "transfer_speed" in merged:  # multi-skill's name for rho
        merged["rho"] = merged.pop("transfer_speed")
    return cls.from_params(merged)


def describe_systems() -> list[tuple[str, str]]:
    return [(k, v[2]) for k, v in SYSTEMS.items()]

