"""Tell the user, once, when a command is about to compile Numba kernels.

Every kernel is compiled with ``cache=True``: the first run after an install (or after
a change of the source, or with a fresh ``NUMBA_CACHE_DIR``) compiles the kernels a
system calls and stores them; later runs load them in a fraction of a second.  A
first run can therefore be silent for several seconds; :func:`announce_compile`
prints one line on stderr before that happens, so that it does not look like a hang.

A cold cache is detected cheaply: a kernel compiled before has an index file
(``*.nbi``) in Numba's cache directory, or in the directory of kernels compiled when
the package was built (:func:`podium.core.kernel_cache.is_cached`).  A system's
kernels are the Numba dispatchers defined in the modules its folder's ``SPEC`` names
(``SPEC.kernels``), and the line quotes the folder's rough compile time
(``SPEC.compile_seconds``); the cache is cold for the system when the build did not
compile the system's job for this tree (:func:`podium.core.kernel_cache.prebuilt_covers`)
and none of its kernels has an index file.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, TextIO

__all__ = ["system_kernels", "cache_is_cold", "announce_compile", "announce_module_compile"]


def _is_dispatcher(obj: Any) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "_cache")


def _module_kernels(module: ModuleType) -> list[Any]:
    """The Numba dispatchers defined in ``module`` (not those it imports)."""
    return [v for v in vars(module).values()
            if _is_dispatcher(v) and v.py_func.__module__ == module.__name__]


def system_kernels(system: Any) -> dict[str, list[Any]]:
    """The Numba kernels a system's update may compile, by the module that defines them.

    Parameters
    ----------
    system:
        A :class:`~podium.systems.base.RatingSystem`.

    Returns
    -------
    dict
        Module name -> its dispatchers (compiled lazily, ``cache=True``), for the modules
        of ``SPEC.kernels`` of the system's folder (:func:`podium.systems.spec_of`);
        empty for a system no folder defines.
    """
    from podium.systems import spec_of

    spec = spec_of(system)
    if spec is None:
        return {}
    return {name: _module_kernels(importlib.import_module(name)) for name in spec.kernels}


def cache_is_cold(system: Any, name: str | None = None) -> bool:
    """Whether none of the system's kernels is in a cache yet.

    Parameters
    ----------
    system:
        A rating system.
    name:
        The system's name: when the build compiled its job for this tree (the
        prebuilt kernels), the cache is warm.

    Returns
    -------
    bool
        True when the system has kernels, the build did not compile them for
        ``name`` and none of them has an index file.
    """
    from podium.core.kernel_cache import is_cached, prebuilt_covers

    kernels = system_kernels(system)
    if not kernels or (name is not None and prebuilt_covers(name, kernels)):
        return False
    # the prebuilt directory counts for the systems the build compiled (above) only
    return not any(is_cached(d, prebuilt=False) for ds in kernels.values() for d in ds)


def announce_compile(name: str, system: Any, stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for NAME, once: ~N s`` when the cache is cold.

    Parameters
    ----------
    name:
        The system's name, as the user gave it.
    system:
        The rating system.
    stream:
        Where to write (default ``sys.stderr``).

    Returns
    -------
    bool
        Whether the line was printed.
    """
    if not cache_is_cold(system, name):
        return False
    from podium.systems import spec_of

    spec = spec_of(system)
    return _announce(name, spec.compile_seconds if spec is not None else 0.0, stream)


def _announce(what: str, seconds: float, stream: TextIO | None) -> bool:
    out = sys.stderr if stream is None else stream
    print(f"compiling kernels for {what}, once: ~{max(seconds, 1.0):.0f} s", file=out,
          flush=True)
    return True


def announce_module_compile(what: str, module: ModuleType, seconds: float,
                            stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for WHAT, once: ~N s`` when none of the Numba kernels
    defined in ``module`` is in the on-disk cache yet (kernels outside the rating
    systems, e.g. the compiled CSV writer of :mod:`podium.io.results`).

    Parameters
    ----------
    what:
        What the kernels are for, as the line names it.
    module:
        The module whose dispatchers are checked.
    seconds:
        The rough compile time the line quotes.
    stream:
        Where to write (default ``sys.stderr``).

    Returns
    -------
    bool
        Whether the line was printed.
    """
    from podium.core.kernel_cache import is_cached

    kernels = _module_kernels(module)
    if not kernels or any(is_cached(d) for d in kernels):
        return False
    return _announce(what, seconds, stream)
