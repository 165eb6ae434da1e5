"""Tell the user, once, when a command is about to compile Numba kernels.

Every kernel is compiled with ``cache=True``: the first run after an install (or after
a change of the source, or with a fresh ``NUMBA_CACHE_DIR``) compiles the kernels a
system calls and stores them; later runs load them in a fraction of a second.  A
first run can therefore be silent for several seconds; :func:`announce_compile`
prints one line on stderr before that happens, so that it does not look like a hang.

A cold cache is detected cheaply: a kernel compiled before has an index file
(``*.nbi``) in Numba's cache directory.  A system's kernels are the Numba
dispatchers of its module and of the kernel modules (``_*_kernels``) that module
imports; the cache is cold for the system when none of them has an index file.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any, TextIO

__all__ = ["system_kernels", "cache_is_cold", "announce_compile"]

#: Rough compile time (seconds, one idle core) of the kernels a system of each kernel
#: module calls, from ``benchmarks/bench_cold_start.py`` (cold minus warm); the shared
#: numerics they call are included.
_COMPILE_SECONDS = {
    "podium.systems._elo_mmr_kernels": 5.0,
    "podium.systems._elo_r_kernels": 5.0,
    "podium.systems._elo_srm_kernels": 4.0,
    "podium.systems._codeforces_kernels": 3.0,
    "podium.systems._trueskill_kernels": 3.0,
    "podium.systems._glicko_kernels": 2.5,
    "podium.systems._topcoder_kernels": 1.0,
    "podium.systems._pairwise_kernels": 0.5,
    "podium.systems._openskill_kernels": 6.0,
    "podium.systems._trueskill_team_kernels": 3.0,
}


def _is_dispatcher(obj: Any) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "_cache")


def system_kernels(system: Any) -> dict[str, list[Any]]:
    """The Numba kernels a system may call, by the module that defines them.

    Parameters
    ----------
    system:
        A :class:`~podium.systems.base.RatingSystem`.

    Returns
    -------
    dict
        Module name -> its dispatchers (compiled lazily, ``cache=True``).
    """
    module = sys.modules.get(type(system).__module__)
    if module is None:
        return {}
    found: dict[str, list[Any]] = {}
    seen: set[int] = set()

    def add(obj: Any) -> None:
        if _is_dispatcher(obj) and id(obj) not in seen:
            seen.add(id(obj))
            found.setdefault(obj.py_func.__module__, []).append(obj)

    for value in vars(module).values():
        if isinstance(value, ModuleType) and value.__name__.rsplit(".", 1)[-1].endswith(
            "_kernels"
        ):
            for inner in vars(value).values():
                add(inner)
        else:
            add(value)
    return found


def _has_index(dispatcher: Any) -> bool:
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:  # not a caching dispatcher, or another Numba layout
        return True


def cache_is_cold(system: Any) -> bool:
    """Whether none of the system's kernels is in Numba's on-disk cache yet.

    Parameters
    ----------
    system:
        A rating system.

    Returns
    -------
    bool
        True when the system has kernels and none of them has an index file.
    """
    kernels = system_kernels(system)
    return bool(kernels) and not any(_has_index(d) for ds in kernels.values() for d in ds)


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
    if not cache_is_cold(system):
        return False
    kernels = system_kernels(system)
    return _announce(name, sum(_COMPILE_SECONDS.get(m, 0.0) for m in kernels), stream)


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
    kernels = [v for v in vars(module).values()
               if _is_dispatcher(v) and v.py_func.__module__ == module.__name__]
    if not kernels or any(_has_index(d) for d in kernels):
        return False
    return _announce(what, seconds, stream)
