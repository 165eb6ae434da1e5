"""Numba's on-disk cache for Podium's kernels, stamped with every source a kernel inlines.

Numba stamps a cached kernel with its own source file only (its modification time
and size in older releases, a hash of its content in recent ones).  A compiled kernel
also holds the machine code of every Numba function it calls and the values of the
module constants it reads, and many of those live in other files:
:mod:`podium.core.numerics`, :mod:`podium.core.intrinsics`, other kernel modules.  An
edit there would leave the cached kernel stale: it would load, and run the old code.

The locators here give a kernel a *source stamp* that is a content hash of its own
file and of every file of a watched package (:func:`watch_package`; Podium is
watched) that its module imports, transitively (:func:`kernel_sources`).  Any edit
to one of them is a cache miss; an unchanged tree loads from the cache.  The stamp
depends neither on file times nor on where the tree lies (each file enters it by its
path inside its package), so the stamp of a cache written elsewhere, e.g. when the
package is built, still matches an unchanged installed tree.

Where the cache lives is Numba's choice, unchanged: ``NUMBA_CACHE_DIR`` if set,
else ``__pycache__`` next to the source, else the user-wide cache directory.  The
stamp is separate from the place (:class:`ContentStampMixin` over Numba's own
locators), so a locator for another directory needs only a ``get_cache_path``.

Importing this module installs the locators, in front of Numba's own
(:func:`install`; ``NUMBA_CACHE_LOCATOR_CLASSES``, when set, still wins).  Every
module that defines ``cache=True`` kernels imports it before its decorators run
(``tests/test_architecture.py`` checks that).
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from numba.core import caching

__all__ = [
    "watch_package",
    "kernel_sources",
    "source_stamp",
    "ContentStampMixin",
    "UserDirKernelLocator",
    "InTreeKernelLocator",
    "UserWideKernelLocator",
    "LOCATORS",
    "install",
]

#: Watched packages: top-level name -> its directory (resolved).
_PACKAGES: dict[str, str] = {}

# ``from a.b import (x, y)`` / ``from a.b import x as y, z`` / ``import a.b as c, d``, at
# any indentation (a function-level import is followed too: it is never wrong to
# include a file, only slower).
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
    re.MULTILINE,
)

# Comments go first, so that a ")" in one cannot end a parenthesised import early
# (a "#" inside a string loses the rest of its line: only import lines matter here).
_COMMENT = re.compile(r"#[^\n]*")

_StatKey = tuple[str, int, int]
_digests: dict[_StatKey, bytes] = {}
_direct: dict[_StatKey, tuple[str, ...]] = {}
_stamps: dict[tuple[_StatKey, ...], str] = {}
_realpaths: dict[str, str] = {}


def watch_package(name: str, directory: str | os.PathLike[str]) -> None:
    """Serve the kernels of a package with these locators and follow its imports.

    Parameters
    ----------
    name:
        Top-level package name (``"podium"``).
    directory:
        The package's directory (the one holding its ``__init__.py``).
    """
    _PACKAGES[name] = os.path.realpath(directory)


def _stat_key(path: str) -> _StatKey:
    st = os.stat(path)
    return path, st.st_mtime_ns, st.st_size


def _digest(key: _StatKey) -> bytes:
    """SHA-256 of a file's content (memoised on path, time and size, as Numba does, so
    that a file edited while the process runs is hashed again)."""
    if key not in _digests:
        with open(key[0], "rb") as f:
            _digests[key] = hashlib.sha256(f.read()).digest()
    return _digests[key]


def _module_file(module: str) -> str | None:
    """The source file of a module of a watched package, or ``None``."""
    top, *rest = module.split(".")
    root = _PACKAGES.get(top)
    if root is None:
        return None
    base = os.path.join(root, *rest)
    for candidate in (base + ".py" if rest else "", os.path.join(base, "__init__.py")):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def _names(clause: str) -> list[str]:
    """The names of an import clause (``a as b, c`` or ``(a,\\n b)``)."""
    return [part.split()[0] for part in clause.strip("()").split(",") if part.split()]


def _imported_files(key: _StatKey) -> tuple[str, ...]:
    """The files of watched packages that one source file imports directly: each
    imported module, and each ``from M import name`` whose name is a submodule of M."""
    if key not in _direct:
        with open(key[0], encoding="utf-8") as f:
            text = _COMMENT.sub("", f.read())
        found: list[str | None] = []
        for m in _IMPORT.finditer(text):
            module, clause, plain = m.groups()
            if module is not None:
                found.append(_module_file(module))
                found.extend(_module_file(f"{module}.{n}") for n in _names(clause))
            else:
                found.extend(_module_file(n) for n in _names(plain))
        _direct[key] = tuple(sorted({f for f in found if f is not None and f != key[0]}))
    return _direct[key]


def _real(path: str) -> str:
    """``os.path.realpath``, memoised (a kernel module's file is looked up once per
    kernel)."""
    real = _realpaths.get(path)
    if real is None:
        real = _realpaths[path] = os.path.realpath(path)
    return real


def _closure(py_file: str) -> list[_StatKey]:
    """Stat keys of ``py_file`` and of every watched file it imports, transitively."""
    first = _stat_key(_real(py_file))
    keys = {first[0]: first}
    todo = [first]
    while todo:
        for dep in _imported_files(todo.pop()):
            if dep not in keys:
                keys[dep] = _stat_key(dep)
                todo.append(keys[dep])
    return [first, *sorted(k for path, k in keys.items() if path != first[0])]


def kernel_sources(py_file: str) -> list[str]:
    """The files whose content a kernel of ``py_file`` may depend on.

    Parameters
    ----------
    py_file:
        A module's source file.

    Returns
    -------
    list of str
        ``py_file`` (resolved) and every file of a watched package that it imports,
        transitively (sorted).
    """
    return [key[0] for key in _closure(py_file)]


def _label(path: str) -> str:
    """A file's name inside its watched package (``podium/core/numerics/newton.py``), so
    that a stamp does not depend on where the tree lies; the bare file name otherwise."""
    for name, root in _PACKAGES.items():
        if path.startswith(root + os.sep):
            return name + "/" + path[len(root) + 1:].replace(os.sep, "/")
    return os.path.basename(path)


def source_stamp(py_file: str) -> str:
    """Numba's source stamp for the kernels of ``py_file``: a SHA-256 over the labels
    and content hashes of :func:`kernel_sources` (no file times, no absolute paths).

    Parameters
    ----------
    py_file:
        A module's source file.

    Returns
    -------
    str
        Hex digest; it changes exactly when one of those files' content (or the set
        of files) changes.
    """
    keys = tuple(_closure(py_file))
    stamp = _stamps.get(keys)
    if stamp is None:
        h = hashlib.sha256()
        for key in keys:
            h.update(_label(key[0]).encode())
            h.update(b"\0")
            h.update(_digest(key))
        stamp = _stamps[keys] = h.hexdigest()
    return stamp


def _watched(py_file: str) -> bool:
    if not os.path.isfile(py_file):
        return False
    real = _real(py_file)
    return any(real.startswith(root + os.sep) for root in _PACKAGES.values())


class ContentStampMixin:
    """Put in front of a Numba cache locator: stamp with :func:`source_stamp`, and
    serve only the functions defined in watched packages (Numba's own locators serve
    the others)."""

    _py_file: str

    def get_source_stamp(self) -> str:
        """The content stamp of the function's file and what it imports."""
        return source_stamp(self._py_file)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        """A locator for ``py_func`` when its file lies in a watched package (and the
        cache directory is usable), else ``None``."""
        if not _watched(py_file):
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


class UserDirKernelLocator(ContentStampMixin, caching.UserProvidedCacheLocator):
    """In ``NUMBA_CACHE_DIR``, when set."""


class InTreeKernelLocator(ContentStampMixin, caching.InTreeCacheLocator):
    """In ``__pycache__`` next to the source, when writable."""


class UserWideKernelLocator(ContentStampMixin, caching.UserWideCacheLocator):
    """In the user-wide cache directory (``~/.cache/numba``)."""


#: Podium's locators, in Numba's order of preference.
LOCATORS: tuple[type, ...] = (UserDirKernelLocator, InTreeKernelLocator, UserWideKernelLocator)


def install() -> None:
    """Put :data:`LOCATORS` in front of Numba's own locators (once)."""
    # the base of Numba's cache implementations ("_CacheImpl" in older releases)
    impl = next(c for c in (getattr(caching, n, None) for n in ("CacheImpl", "_CacheImpl"))
                if c is not None)
    classes = impl._locator_classes
    for cls in reversed(LOCATORS):
        if cls not in classes:
            classes.insert(0, cls)


watch_package("podium", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
install()
