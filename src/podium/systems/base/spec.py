"""What a system folder declares about itself, in one place: its :data:`SPEC`.

Every system lives in one folder, ``podium/systems/<folder>/``, whose ``__init__``
defines ``SPEC``, a :class:`SystemSpec`:

* ``presets``: the named systems the folder provides (``podium rate --system NAME``),
  each a :class:`Preset` -- the class, the parameters that differ from its defaults
  and a one-line description;
* ``search_spaces``: per preset, the parameters ``podium tune`` searches and their
  ranges (:class:`SearchRange`); a preset without one cannot be tuned;
* ``kernels``: the modules of the Numba kernels its update may compile, and
  ``compile_seconds``, a rough cold compile time of them (one idle core, from
  ``benchmarks/bench_cold_start.py``), which :mod:`podium._jit` announces before a
  first run compiles them.

The registry (:mod:`podium.systems`), ``podium systems -v``, ``podium tune`` and the
compile notice all read these declarations; nothing else lists them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from podium.systems.base.system import RatingSystem

__all__ = ["Preset", "SearchRange", "SystemSpec"]


class Preset(NamedTuple):
    """A named system: its class, the parameters that differ from the class's
    defaults, and a one-line description (``podium systems``)."""

    cls: type[RatingSystem]
    params: dict[str, Any]
    description: str


@dataclass(frozen=True)
class SearchRange:
    """One searched hyper-parameter: a float in ``[low, high]``, log-uniform if ``log``."""

    low: float
    high: float
    log: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise ValueError(f"a search range needs finite low < high, got "
                             f"[{self.low}, {self.high}]")
        if self.log and self.low <= 0:
            raise ValueError(f"a log-uniform range needs low > 0, got {self.low}")


@dataclass(frozen=True)
class SystemSpec:
    """Everything the rest of Podium needs to know about one system folder.

    Attributes
    ----------
    presets:
        Name -> :class:`Preset`, in the order ``podium systems`` lists them.
    search_spaces:
        Preset name -> searched parameter -> :class:`SearchRange`.
    kernels:
        Dotted names of the modules whose Numba kernels the update calls.
    compile_seconds:
        Rough cold compile time of those kernels, in seconds on one idle core.
    """

    presets: Mapping[str, Preset]
    search_spaces: Mapping[str, Mapping[str, SearchRange]] = field(default_factory=dict)
    kernels: tuple[str, ...] = ()
    compile_seconds: float = 0.0

    def __post_init__(self) -> None:
        unknown = sorted(set(self.search_spaces) - set(self.presets))
        if unknown:
            raise ValueError(f"search spaces for unknown presets: {', '.join(unknown)}")
        for name, (cls, params, _) in self.presets.items():
            fields = set(cls.__dataclass_fields__)
            for pname in self.search_spaces.get(name, {}):
                if pname not in fields:
                    raise ValueError(f"preset {name!r}: searched parameter {pname!r} is not "
                                     f"a parameter of {cls.__name__}")
            extra = sorted(set(params) - fields)
            if extra:
                raise ValueError(f"preset {name!r}: unknown parameter(s) {', '.join(extra)}")
