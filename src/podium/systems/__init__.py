"""Rating systems, one folder per system, all behind :class:`RatingSystem`.

``get_system(name, **params)`` builds a system by name with named hyper-parameters;
``SYSTEMS`` lists the names and their presets.

Every system lives in one folder, ``podium/systems/<folder>/``: its parameters,
state, update rule, kernels, team rule, explanation, presets, tuning search space
and compile estimate.  The folder's ``SPEC`` (a
:class:`~podium.systems.base.spec.SystemSpec`) declares the presets, the search
space and the compile estimate; what every system shares (the interface, the factor
pool, the shared team rules) is the package :mod:`podium.systems.base`.

:data:`REGISTRY` has one line per folder, naming its presets, so that the names are
known without importing anything: a folder is imported when one of its systems is
first used (``podium rate --system mmr`` imports :mod:`podium.systems.elo_mmr` and
its kernels, not the other systems).  Adding a system is adding a folder and its
line here (docs/systems.md, "Adding a system").
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from podium.errors import ConfigError
from podium.systems.base import (
    Preset,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemSpec,
    SystemState,
)

if TYPE_CHECKING:
    from podium.systems.elo_mmr import EloMMR

__all__ = [
    "RatingSystem",
    "RoundInput",
    "RoundOutput",
    "SystemState",
    "EloMMR",
    "REGISTRY",
    "SYSTEMS",
    "get_system",
    "saved_params",
    "describe_systems",
    "spec_of",
    "system_spec",
]

#: One line per system folder: the folder under ``podium/systems/`` and the names of
#: the presets its ``SPEC`` declares, in that order.  :data:`SYSTEMS` lists the
#: presets in the order of this table: the flagship first, then by folder name.
REGISTRY: dict[str, tuple[str, ...]] = {
    "elo_mmr": ("mmr", "mmr-fast", "mmx", "mmx-fast", "mmr-inf"),
    "elo_mmr_simple": ("mmr-simple",),
    "cfsys": ("cfsys",),
    "codeforces": ("codeforces",),
    "elo_r": ("elo-r", "elo-r-leading", "elo-r-all", "elo-r-fancy", "elo-r-nonrobust"),
    "elo_srm": ("elosrm", "srmfix"),
    "glicko": ("glicko", "bar"),
    "mmr_plus": ("mmr-plus",),
    "openskill": ("openskill-pl", "openskill-tm", "openskill-bt", "openskill-tmp",
                  "openskill-btp"),
    "pairwise": ("elo-single", "elo-average", "elo-sample", "elo-lsq", "pagerank",
                 "glicko2p"),
    "topcoder": ("tcsys",),
    "trueskill": ("trueskill",),
}

_NOT_LOADED: Any = object()


def _folder_spec(folder: str, names: tuple[str, ...]) -> SystemSpec:
    """The ``SPEC`` of ``podium.systems.<folder>``, checked against its registry line."""
    spec = importlib.import_module(f"{__name__}.{folder}").SPEC
    if not isinstance(spec, SystemSpec):
        raise RuntimeError(f"podium.systems.{folder}.SPEC is not a SystemSpec")
    if tuple(spec.presets) != names:
        raise RuntimeError(
            f"podium.systems.REGISTRY is out of date for folder {folder!r}: it lists "
            f"{list(names)}, the folder's SPEC declares {list(spec.presets)}"
        )
    return spec


class _Registry(MutableMapping[str, Preset]):
    """:data:`SYSTEMS`: name -> :class:`~podium.systems.base.spec.Preset` (class, preset
    parameters, one-line description).

    A mapping whose names are known up front (:data:`REGISTRY`) and whose entries are
    read from their folder's ``SPEC`` on first access: ``name in SYSTEMS``,
    ``list(SYSTEMS)`` and ``len(SYSTEMS)`` import nothing, ``SYSTEMS[name]`` imports
    that system's folder only, ``SYSTEMS.items()`` all of them.  Entries can be set
    and deleted as in a dict (tests register systems of their own).
    """

    def __init__(self, registry: dict[str, tuple[str, ...]]) -> None:
        self._folders = {name: folder for folder, names in registry.items() for name in names}
        self._lines = {folder: tuple(names) for folder, names in registry.items()}
        self._entries: dict[str, Preset] = dict.fromkeys(self._folders, _NOT_LOADED)

    def _load(self, folder: str) -> None:
        spec = _folder_spec(folder, self._lines[folder])
        for name, preset in spec.presets.items():
            if self._entries.get(name) is _NOT_LOADED:
                self._entries[name] = preset

    def __getitem__(self, name: str) -> Preset:
        value = self._entries[name]
        if value is _NOT_LOADED:
            self._load(self._folders[name])
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

    def folder(self, name: str) -> str | None:
        """The folder of the registered system ``name`` (``None`` for one set by hand)."""
        return self._folders.get(name)


#: name -> (class, preset parameters, one-line description), from the ``SPEC`` of
#: every system folder; each folder is imported on first use of one of its systems.
SYSTEMS: MutableMapping[str, Preset] = _Registry(REGISTRY)


def __getattr__(name: str) -> Any:
    if name == "EloMMR":  # the flagship, imported with its kernels on first use
        from podium.systems.elo_mmr import EloMMR

        globals()["EloMMR"] = EloMMR
        return EloMMR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def system_spec(name: str) -> SystemSpec:
    """The ``SPEC`` of the folder that registers the system ``name``.

    Raises
    ------
    ConfigError
        For a name that no folder registers.
    """
    folder = SYSTEMS.folder(name) if isinstance(SYSTEMS, _Registry) else None
    if folder is None:
        raise ConfigError(
            f"unknown rating system {name!r}; available: {', '.join(SYSTEMS)}"
        )
    return _folder_spec(folder, REGISTRY[folder])


def spec_of(system: RatingSystem | type[RatingSystem]) -> SystemSpec | None:
    """The ``SPEC`` of the folder that defines ``system``'s class or, for a class
    defined elsewhere (a user's subclass), its nearest base class that a folder
    defines; ``None`` when there is none."""
    cls = system if isinstance(system, type) else type(system)
    for klass in cls.__mro__:
        parts = klass.__module__.split(".")
        if len(parts) >= 3 and parts[:2] == ["podium", "systems"] and parts[2] in REGISTRY:
            return _folder_spec(parts[2], REGISTRY[parts[2]])
    return None


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
