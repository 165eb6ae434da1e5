"""Rating systems, one module per system, all behind :class:`RatingSystem`.

``get_system(name, **params)`` builds a system by name with named
hyper-parameters; ``SYSTEMS`` lists the names and their presets.

Each system's module is imported when the system is first used: ``podium rate
--system mmr`` imports :mod:`podium.systems.elo_mmr` and its kernels, not the modules
of the other systems (measured: 0.025 s of a warm run from bytecode, 0.055 s when the
sources are compiled).  :data:`_MODULES` names the module of
each system; every module's ``PRESETS`` must agree with it (checked when a module is
imported, and for all of them by ``tests/test_systems_registry.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from podium.errors import ConfigError
from podium.systems.base import Preset, RatingSystem, RoundInput, RoundOutput, SystemState

if TYPE_CHECKING:
    from podium.systems.elo_mmr import EloMMR

__all__ = [
    "RatingSystem",
    "RoundInput",
    "RoundOutput",
    "SystemState",
    "EloMMR",
    "SYSTEMS",
    "get_system",
    "saved_params",
    "describe_systems",
]

#: System name -> the module of this package whose ``PRESETS`` registers it, in the
#: order of :data:`SYSTEMS`: the flagship first, then by module name, each module's
#: systems in the order of its ``PRESETS``.
_MODULES: dict[str, str] = {
    "mmr": "elo_mmr",
    "mmr-fast": "elo_mmr",
    "mmx": "elo_mmr",
    "mmx-fast": "elo_mmr",
    "mmr-inf": "elo_mmr",
    "mmr-simple": "elo_mmr_simple",
    "cfsys": "cfsys",
    "codeforces": "codeforces",
    "elo-r": "elo_r",
    "elo-r-leading": "elo_r",
    "elo-r-all": "elo_r",
    "elo-r-fancy": "elo_r",
    "elo-r-nonrobust": "elo_r",
    "elosrm": "elo_srm",
    "srmfix": "elo_srm",
    "glicko": "glicko",
    "bar": "glicko",
    "mmr-plus": "mmr_plus",
    "openskill-pl": "openskill",
    "openskill-tm": "openskill",
    "openskill-bt": "openskill",
    "openskill-tmp": "openskill",
    "openskill-btp": "openskill",
    "elo-single": "pairwise",
    "elo-average": "pairwise",
    "elo-sample": "pairwise",
    "elo-lsq": "pairwise",
    "pagerank": "pairwise",
    "glicko2p": "pairwise",
    "tcsys": "topcoder",
    "trueskill": "trueskill",
}

_NOT_LOADED: Any = object()


class _Registry(MutableMapping[str, Preset]):
    """:data:`SYSTEMS`: name -> (class, preset parameters, one-line description).

    A mapping whose names are known up front (:data:`_MODULES`) and whose entries are
    read from their module's ``PRESETS`` on first access: ``name in SYSTEMS``,
    ``list(SYSTEMS)`` and ``len(SYSTEMS)`` import nothing, ``SYSTEMS[name]`` imports
    that system's module only, ``SYSTEMS.items()`` all of them.  Entries can be set
    and deleted as in a dict (tests register systems of their own).
    """

    def __init__(self, modules: dict[str, str]) -> None:
        self._entries: dict[str, Preset] = dict.fromkeys(modules, _NOT_LOADED)
        self._modules = dict(modules)

    def _load(self, module_name: str) -> None:
        module = importlib.import_module(f"{__name__}.{module_name}")
        presets: dict[str, Preset] = getattr(module, "PRESETS", {})
        expected = [n for n, m in self._modules.items() if m == module_name]
        if list(presets) != expected:
            raise RuntimeError(
                f"podium.systems._MODULES is out of date for module {module_name!r}: "
                f"it lists {expected}, the module's PRESETS define {list(presets)}"
            )
        for name, preset in presets.items():
            if self._entries.get(name) is _NOT_LOADED:
                self._entries[name] = preset

    def __getitem__(self, name: str) -> Preset:
        value = self._entries[name]
        if value is _NOT_LOADED:
            self._load(self._modules[name])
            value = self._entries[name]
        return value

    def __setitem__(self, name: str, value: Preset) -> None:
        self._entries[name] = value

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return repr(dict(self.items()))


#: name -> (class, preset parameters, one-line description), from the ``PRESETS``
#: dict of every module in this package (one module per system); each module is
#: imported on first use of one of its systems.
SYSTEMS: MutableMapping[str, Preset] = _Registry(_MODULES)


def __getattr__(name: str) -> Any:
    if name == "EloMMR":  # the flagship, imported with its kernels on first use
        from podium.systems.elo_mmr import EloMMR

        globals()["EloMMR"] = EloMMR
        return EloMMR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def saved_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters to rebuild the system ``name`` saved with ``params`` (a
    checkpoint's or a store's): those the system added later with a new default
    (:attr:`~podium.systems.base.RatingSystem.params_added_later`) and that
    ``params`` lacks get their value from before, so the saved ratings go on as
    they were computed.  An unknown name is left to :func:`get_system` to refuse."""
    try:
        cls = SYSTEMS[name][0]
    except KeyError:
        return dict(params)
    return {**{k: v for k, v in cls.params_added_later.items() if k not in params},
            **params}


def describe_systems() -> list[tuple[str, str]]:
    return [(k, v[2]) for k, v in SYSTEMS.items()]
