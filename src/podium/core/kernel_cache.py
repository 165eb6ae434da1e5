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

Prebuilt kernels
----------------
The kernels of a job can be compiled when the package is built or installed
(:mod:`podium.prebuild`, run by the build backend) into a directory that ships with
the package, ``podium/_prebuilt`` (:func:`prebuilt_dir`; ``PODIUM_PREBUILT_DIR``
names another), for a portable CPU target (``NUMBA_CPU_NAME=generic``: the
baseline instruction set of the architecture).  :class:`KernelCache`, the cache of
every Podium kernel, looks a signature up in Numba's cache first (code compiled on
this machine) and then in the prebuilt directory, under the key the build wrote
(its target instead of this CPU's).  The prebuilt directory is used only when its
manifest (:func:`prebuilt_manifest`) was written by the same Numba and Python for
this architecture; each of its index files still checks the source stamp above, so
an edited tree compiles the edited kernels.  Whatever is not found is compiled on
demand, into Numba's cache, as before.  Generic code gives the same numbers as code
for this CPU: Podium's kernels use no fast-math and no vector math library, so
LLVM reorders no floating-point operation on either target.  While a prebuild runs,
its processes take turns at an index and compile each signature once
(:mod:`podium.core.build_claims`).

A kernel found in a cache is loaded without Numba's compiler registries (about
0.2 s of imports, SciPy's BLAS among them, that only compiling needs): the runtime
is initialised, and the registries are loaded first only for machine code that
calls a symbol they define (:data:`REGISTRY_SYMBOLS`).

Importing this module installs the locators, in front of Numba's own
(:func:`install`; ``NUMBA_CACHE_LOCATOR_CLASSES``, when set, still wins), and
:class:`KernelCache` as the cache of Numba's dispatchers.  Every module that
defines ``cache=True`` kernels imports it before its decorators run
(``tests/test_architecture.py`` checks that).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

import numba
from numba.core import caching, dispatcher, event, sigutils

from podium.core import build_claims

__all__ = [
    "watch_package",
    "kernel_sources",
    "source_stamp",
    "ContentStampMixin",
    "UserDirKernelLocator",
    "InTreeKernelLocator",
    "UserWideKernelLocator",
    "PrebuiltKernelLocator",
    "LOCATORS",
    "KernelCache",
    "PREBUILT_CPU",
    "REGISTRY_SYMBOLS",
    "prebuilt_dir",
    "prebuilt_manifest",
    "PARALLEL_SYMBOL",
    "with_parallel_init",
    "keep_reload_init",
    "prebuilt_covers",
    "is_cached",
    "start_prebuild",
    "write_manifest",
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


# ====================================================================== prebuilt
#: The CPU the prebuilt kernels are compiled for (LLVM's name for the baseline of
#: the architecture; Numba then asks for no optional feature).
PREBUILT_CPU = "generic"
#: Symbols that Numba's compiler registries define when they are imported (not when
#: Numba starts): machine code calling one needs them loaded first.
REGISTRY_SYMBOLS: tuple[bytes, ...] = (b"_numba_hashsecret_",)
_MANIFEST = "manifest.json"
_FORMAT = 1
#: The prebuild's output directory while :func:`start_prebuild` is in force.
_building: list[str] = []
_manifests: dict[str, dict[str, Any] | None] = {}


def prebuilt_dir() -> str:
    """The directory of the prebuilt kernels: ``PODIUM_PREBUILT_DIR`` when set, else
    ``_prebuilt`` inside the package (shipped with it; see :mod:`podium.prebuild`)."""
    return os.environ.get("PODIUM_PREBUILT_DIR") or os.path.join(_PACKAGES["podium"],
                                                                 "_prebuilt")


def _subdir(py_file: str) -> str:
    """The folder of a kernel's file inside the prebuilt directory: its folder's path in
    its package (``podium/systems/elo_mmr``), so that files of the same name in two
    folders do not meet and the layout is the same wherever the tree lies."""
    return _label(_real(py_file)).rpartition("/")[0]


def _python_tag() -> str:
    return f"{sys.implementation.cache_tag}{getattr(sys, 'abiflags', '')}"


def _triple() -> str:
    from llvmlite import binding

    return str(binding.get_process_triple())


def prebuilt_manifest(directory: str | None = None) -> dict[str, Any] | None:
    """The manifest of a prebuilt directory, when its kernels can run here.

    Parameters
    ----------
    directory:
        Default :func:`prebuilt_dir`.

    Returns
    -------
    dict or None
        ``{"format", "numba", "python", "magic", "systems", "stamps", ...}`` (see
        :func:`write_manifest`); ``None`` when there is none, it cannot be read, or
        it was written by another Numba or Python, for another architecture, or for
        a CPU other than :data:`PREBUILT_CPU` (then every kernel is compiled on
        demand, as without it).  Read once per process.
    """
    directory = prebuilt_dir() if directory is None else directory
    if directory in _manifests:
        return _manifests[directory]
    manifest: dict[str, Any] | None = None
    try:
        with open(os.path.join(directory, _MANIFEST), encoding="utf-8") as f:
            found = json.load(f)
        magic = found["magic"]
        if (found["format"] == _FORMAT and found["numba"] == numba.__version__
                and found["python"] == _python_tag() and magic[0] == _triple()
                and magic[1:] == [PREBUILT_CPU, ""]):
            manifest = found
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        manifest = None
    _manifests[directory] = manifest
    return manifest


def prebuilt_covers(target: str, modules: Iterable[str]) -> bool:
    """Whether the prebuilt directory holds ``target``'s kernels for this tree.

    Parameters
    ----------
    target:
        What the prebuild compiled for (a system's name; see :mod:`podium.prebuild`).
    modules:
        Dotted names of the kernel modules of ``target``: each must have the stamp it
        had when the prebuild ran (an edited tree compiles again).

    Returns
    -------
    bool
    """
    manifest = prebuilt_manifest()
    if manifest is None or target not in manifest.get("systems", ()):
        return False
    stamps = manifest.get("stamps", {})
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path is None or stamps.get(name) != source_stamp(path):
            return False
    return True


class PrebuiltKernelLocator(ContentStampMixin, caching._CacheLocator):
    """While a prebuild runs (:func:`start_prebuild`): the prebuilt directory, one
    folder per source folder (:func:`_subdir`)."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_building[0], *_subdir(py_file).split("/"))

    def get_cache_path(self) -> str:
        """The kernel's folder in the prebuilt directory."""
        return self._cache_path

    def get_disambiguator(self) -> str:
        """The first line of the function, as Numba's own locators say it."""
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        """A locator while a prebuild runs and ``py_file`` is in a watched package."""
        if not _building or not _watched(py_file):
            return None
        return cls(py_func, py_file)


#: Podium's locators, in Numba's order of preference.
LOCATORS: tuple[type, ...] = (PrebuiltKernelLocator, UserDirKernelLocator, InTreeKernelLocator,
                              UserWideKernelLocator)


def start_prebuild(directory: str | os.PathLike[str]) -> None:
    """Compile every kernel of a watched package into ``directory`` from now on.

    Call it before the kernel modules are imported (their caches are made when their
    decorators run), in a process whose ``NUMBA_CPU_NAME`` is :data:`PREBUILT_CPU`.
    """
    _building[:] = [os.path.abspath(directory)]
    if not _listening:
        event.register("numba:compile", _FailedCompile())
        _listening.append(True)


_listening: list[bool] = []


class _FailedCompile(event.Listener):
    """Releases the claim on a signature whose compilation failed (Numba tries some
    argument types that fail on its way to those it compiles), so that no other
    process of the prebuild waits for it."""

    def on_start(self, ev: event.Event) -> None:
        """Nothing at the start of a compilation."""

    def on_end(self, ev: event.Event) -> None:
        """At its end, when it raised: release its claim, if any."""
        failed = (getattr(ev, "_exc_details", None) or (None,))[0] is not None
        cache = getattr(ev.data["dispatcher"], "_cache", None)
        if failed and _building and isinstance(cache, KernelCache):
            build_claims.release(_building[0], cache.claim_name(ev.data["args"]))


def write_manifest(directory: str | os.PathLike[str], systems: Iterable[str],
                   extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the manifest of a prebuilt directory (after its kernels are compiled).

    Parameters
    ----------
    directory:
        The prebuilt directory.
    systems:
        What was compiled (:func:`prebuilt_covers` answers for these).
    extra:
        More keys to record (timings).

    Returns
    -------
    dict
        The manifest: format, Numba version, Python tag, the codegen's target (triple,
        CPU, features: the key under which the kernels were stored), the systems, and
        the source stamp of every kernel module loaded in this process.
    """
    from numba.core.registry import cpu_target

    magic = list(cpu_target.target_context.codegen().magic_tuple())
    stamps = {name: source_stamp(str(mod.__file__)) for name, mod in sorted(sys.modules.items())
              if name.split(".")[0] in _PACKAGES and getattr(mod, "__file__", None)
              and any(_is_kernel(v) for v in vars(mod).values())}
    manifest = {"format": _FORMAT, "numba": numba.__version__, "python": _python_tag(),
                "magic": magic, "systems": sorted(set(systems)), "stamps": stamps,
                **(extra or {})}
    path = os.path.join(directory, _MANIFEST)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, path)
    _manifests.pop(os.fspath(directory), None)
    return manifest


def _is_kernel(obj: Any) -> bool:
    return isinstance(getattr(obj, "_cache", None), KernelCache)


def _needs_registries(payload: Any) -> bool:
    """Whether cached machine code calls a symbol of Numba's registries (or is laid out
    in a way this module does not know: then load them, to be safe)."""
    try:
        code = payload[0][2][0]
        return any(symbol in code for symbol in REGISTRY_SYMBOLS)
    except (TypeError, IndexError):
        return True


PARALLEL_SYMBOL = b"numba_parallel_for"
"""The threading layer's entry point, called by the machine code of every ``prange``
loop (``parallel=True``); it is defined only once the layer's threads are launched."""


def with_parallel_init(payload: Any) -> Any:
    """A cached compile result that launches the threading layer when it is loaded, if
    its machine code runs a ``prange`` loop.

    Numba records the need (``reload_init``: launch the threads) on a kernel compiled
    with ``parallel=True`` and on every kernel compiled *in the same process* that
    calls it.  A kernel that calls a parallel kernel *loaded from the cache* inherits
    nothing (Numba rebuilds the callee's library without its ``reload_init``), so it is
    cached without the need, and a later process that loads it first jumps into the
    threading layer before it exists: a segmentation fault (numba/numba#8578; a
    ``cache=True`` kernel whose inner ``prange`` kernel was compiled by another process).
    The machine code tells: whatever calls :data:`PARALLEL_SYMBOL` gets the launch.

    Parameters
    ----------
    payload:
        What Numba's cache stores for one overload (``CompileResult._reduce``:
        library, function descriptor, environment, signature, object mode, lifted
        loops, type annotation, ``reload_init``, referenced environments).

    Returns
    -------
    Any
        ``payload``, with the launch added to ``reload_init`` where it was missing.
    """
    try:
        code = payload[0][2][0]
        reload_init = payload[7]
    except (TypeError, IndexError):  # another Numba layout: as stored
        return payload
    if reload_init or not isinstance(code, bytes) or PARALLEL_SYMBOL not in code:
        return payload
    from numba.core.typed_passes import _reload_parfors

    return (*payload[:7], [_reload_parfors], *payload[8:])


def keep_reload_init(cres: Any) -> None:
    """Give a compile result rebuilt from the cache its ``reload_init`` back on its
    library, where Numba looks for it when another kernel links the library in, so a
    kernel compiled against a loaded parallel kernel is cached with the launch too
    (see :func:`with_parallel_init`)."""
    library = getattr(cres, "library", None)
    hooks = getattr(library, "_reload_init", None)
    if isinstance(hooks, set) and cres.reload_init:
        hooks.update(cres.reload_init)


class KernelCache(caching.FunctionCache):
    """Numba's function cache, for a kernel of a watched package: this machine's cache
    first, then the prebuilt directory; a kernel found is loaded without the compiler
    registries (see the module notes).  Other functions are served as by Numba."""

    def __init__(self, py_func: Any) -> None:
        super().__init__(py_func)
        try:
            py_file = inspect.getfile(py_func)
        except TypeError:  # a function without a file
            py_file = ""
        self._podium = bool(py_file) and _watched(py_file)
        self._prebuilt: caching.IndexDataCacheFile | None = None
        if self._podium and not _building and prebuilt_manifest() is not None:
            self._prebuilt = caching.IndexDataCacheFile(
                cache_path=os.path.join(prebuilt_dir(), *_subdir(py_file).split("/")),
                filename_base=self._impl.filename_base, source_stamp=source_stamp(py_file))

    def save_overload(self, sig: Any, data: Any) -> None:
        """Store a compiled kernel; while a prebuild runs, under the prebuilt directory's
        index lock, then releasing this process's claim on it (:mod:`.build_claims`)."""
        if not (self._podium and _building):
            super().save_overload(sig, data)
            return
        try:
            with build_claims.index_lock(_building[0]):
                super().save_overload(sig, data)
        finally:
            build_claims.release(_building[0], self.claim_name(sig))

    def claim_name(self, sig: Any) -> str:
        """What names the compilation of ``sig`` in every process of a prebuild."""
        args, _ = sigutils.normalize_signature(sig)
        return f"{self._cache_file._index_path}\0{tuple(args)}"

    @property
    def prebuilt_index(self) -> str | None:
        """The index file this kernel would have in the prebuilt directory, if usable."""
        return None if self._prebuilt is None else self._prebuilt._index_path

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        """The compiled kernel for ``sig`` from a cache, or ``None``."""
        if not self._podium:
            return super().load_overload(sig, target_context)
        with self._guard_against_spurious_io_errors():
            if not _building:
                return self._load_either(sig, target_context)
            return self._load_or_claim(sig, target_context)
        return None  # pragma: no cover - an error the guard swallows (Windows)

    def _load_or_claim(self, sig: Any, target_context: Any) -> Any:
        """While a prebuild runs: the kernel if a process of the prebuild stored it, else
        ``None`` once this process holds the claim to compile it, waiting while another
        process holds it (:mod:`.build_claims`)."""
        what, held = self.claim_name(sig), False
        while True:
            found = self._load_either(sig, target_context)
            if found is not None or held:
                if found is not None:
                    build_claims.release(_building[0], what)
                return found
            held = build_claims.claim(_building[0], what)

    def _load_either(self, sig: Any, target_context: Any) -> Any:
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        payload = self._cache_file.load(key)
        if payload is None and self._prebuilt is not None:
            manifest = prebuilt_manifest()
            if manifest is not None:
                payload = self._prebuilt.load((key[0], tuple(manifest["magic"]), key[2]))
        if payload is None:
            return None
        from numba.core.runtime import nrt

        if _needs_registries(payload):
            target_context.refresh()
        else:
            nrt.rtsys.initialize(target_context)
        cres = self._impl.rebuild(target_context, with_parallel_init(payload))
        keep_reload_init(cres)
        return cres


def is_cached(kernel: Any, prebuilt: bool = True) -> bool:
    """Whether a kernel has an index in this machine's cache or (``prebuilt``) in the
    prebuilt directory, so that its first call may load rather than compile.

    Parameters
    ----------
    kernel:
        A Numba dispatcher.
    prebuilt:
        Count an index in the prebuilt directory (usable here) too.

    Returns
    -------
    bool
        ``True`` also for a dispatcher this module cannot look into.
    """
    cache = getattr(kernel, "_cache", None)
    try:
        if os.path.exists(cache._cache_file._index_path):  # type: ignore[union-attr]
            return True
    except AttributeError:  # not a caching dispatcher, or another Numba layout
        return True
    index = cache.prebuilt_index if prebuilt and isinstance(cache, KernelCache) else None
    return index is not None and os.path.exists(index)


def install() -> None:
    """Put :data:`LOCATORS` in front of Numba's own locators, and :class:`KernelCache`
    in place of Numba's function cache (once)."""
    # the base of Numba's cache implementations ("_CacheImpl" in older releases)
    impl = next(c for c in (getattr(caching, n, None) for n in ("CacheImpl", "_CacheImpl"))
                if c is not None)
    classes = impl._locator_classes
    for cls in reversed(LOCATORS):
        if cls not in classes:
            classes.insert(0, cls)
    setattr(dispatcher, "FunctionCache", KernelCache)  # noqa: B010 - Numba's global


watch_package("podium", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
install()
