"""Names of a package loaded on first use (PEP 562), for the packages whose ``import``
must stay cheap (``podium``, ``podium.io``, ``podium.evaluation``): a command that does
not use a name does not import its module.

    __getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str], names: Iterable[str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    where:
        Name -> the module that defines it; the value is imported on first access and
        kept in the package's namespace, so later accesses cost nothing.
    names:
        The package's public names (``__all__``), listed by ``dir()`` before they load.
    """
    public = frozenset(names)

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | public)

    return __getattr__, __dir__
