"""Numba's on-disk cache of a kernel is invalidated by an edit of any source the kernel
inlines (podium.core.kernel_cache), not only of its own file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from podium.core import kernel_cache

SRC = Path(__file__).resolve().parents[1] / "src"

INIT = """\
import os

from podium.core.kernel_cache import watch_package

watch_package("tinypkg", os.path.dirname(os.path.abspath(__file__)))
"""

NUMERICS = """\
import numba as nb

import podium.core.kernel_cache  # noqa: F401

STEP = 1.0


@nb.njit(cache=True)
def bump(x):
    return x + STEP
"""

KERNELS = """\
import numba as nb

import podium.core.kernel_cache  # noqa: F401
from tinypkg.numerics import bump


@nb.njit(cache=True)
def kernel(x):
    return 2.0 * bump(x)
"""

PROBE = """\
import json
from tinypkg.kernels import kernel
value = kernel(1.0)
print(json.dumps({"value": value, "hits": sum(kernel.stats.cache_hits.values()),
                  "misses": sum(kernel.stats.cache_misses.values())}))
"""


def _tiny_package(root: Path) -> Path:
    """``tinypkg``: a kernel module whose kernel calls a function of another file."""
    pkg = root / "tinypkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "numerics.py").write_text(NUMERICS)
    (pkg / "kernels.py").write_text(KERNELS)
    return pkg


def _probe(root: Path, cache: Path, stock: bool = False) -> dict[str, float]:
    """Call ``tinypkg.kernels.kernel(1.0)`` in a fresh interpreter with the cache in
    ``cache``; ``stock``: with Numba's own locator instead of Podium's."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(root), str(SRC)])}
    if stock:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = "UserProvidedCacheLocator"
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_an_edit_of_an_inlined_file_recompiles_the_kernel(tmp_path: Path) -> None:
    pkg = _tiny_package(tmp_path / "tree")
    cache = tmp_path / "cache"
    assert _probe(tmp_path / "tree", cache) == {"value": 4.0, "hits": 0, "misses": 1}
    # an unchanged tree loads the kernel from the cache
    assert _probe(tmp_path / "tree", cache) == {"value": 4.0, "hits": 1, "misses": 0}
    # the kernel's own file is unchanged; the function it calls changes
    (pkg / "numerics.py").write_text(NUMERICS.replace("x + STEP", "x + 3.0 * STEP"))
    assert _probe(tmp_path / "tree", cache) == {"value": 8.0, "hits": 0, "misses": 1}
    assert _probe(tmp_path / "tree", cache) == {"value": 8.0, "hits": 1, "misses": 0}
    # so does a module constant the kernel reads through it
    (pkg / "numerics.py").write_text(NUMERICS.replace("x + STEP", "x + 3.0 * STEP")
                                     .replace("STEP = 1.0", "STEP = 0.5"))
    assert _probe(tmp_path / "tree", cache) == {"value": 5.0, "hits": 0, "misses": 1}


def test_numba_alone_would_load_the_stale_kernel(tmp_path: Path) -> None:
    """The control: Numba's own locator stamps a kernel with its own file only, so after
    the same edit it loads the old machine code (what the locators above prevent)."""
    from numba.core import config

    if not hasattr(config, "CACHE_LOCATOR_CLASSES"):
        pytest.skip("this Numba cannot choose its cache locator by environment")
    pkg = _tiny_package(tmp_path / "tree")
    cache = tmp_path / "cache"
    assert _probe(tmp_path / "tree", cache, stock=True)["value"] == 4.0
    (pkg / "numerics.py").write_text(NUMERICS.replace("x + STEP", "x + 3.0 * STEP"))
    assert _probe(tmp_path / "tree", cache, stock=True) == {"value": 4.0, "hits": 1,
                                                          "misses": 0}


def test_stamp_follows_content_not_time_or_place(tmp_path: Path) -> None:
    """The stamp covers the kernel's file and what it imports from watched packages,
    by content: touching a file keeps it, moving the tree keeps it, an edit changes it."""
    pkg = _tiny_package(tmp_path / "a")
    kernel_cache.watch_package("tinypkg", pkg)
    kernels = str(pkg / "kernels.py")
    names = [Path(p).name for p in kernel_cache.kernel_sources(kernels)]
    assert names[0] == "kernels.py" and "numerics.py" in names
    # files of podium are followed too (the tiny kernels import podium.core.kernel_cache)
    assert any(p.endswith(os.path.join("podium", "core", "kernel_cache.py"))
               for p in kernel_cache.kernel_sources(kernels))
    stamp = kernel_cache.source_stamp(kernels)
    os.utime(pkg / "numerics.py", ns=(1, 1))
    assert kernel_cache.source_stamp(kernels) == stamp
    moved = shutil.copytree(pkg, tmp_path / "b" / "tinypkg")
    kernel_cache.watch_package("tinypkg", moved)
    assert kernel_cache.source_stamp(str(moved / "kernels.py")) == stamp
    (moved / "numerics.py").write_text(NUMERICS.replace("STEP = 1.0", "STEP = 2.0"))
    assert kernel_cache.source_stamp(str(moved / "kernels.py")) != stamp


def test_podium_kernels_use_the_locators() -> None:
    """Podium's kernels are stamped by the locators, and a module's stamp covers the
    numerics its kernels inline (performance.py calls chebyshev, newton and special)."""
    import podium.core.numerics.newton as newton
    import podium.core.numerics.performance as performance

    for dispatcher in (performance.panel_values, newton.newton_next):
        assert isinstance(dispatcher._cache._impl.locator, kernel_cache.LOCATORS)
    sources = kernel_cache.kernel_sources(performance.__file__)
    for name in ("chebyshev.py", "newton.py", "special.py"):
        assert any(p.endswith(os.path.join("podium", "core", "numerics", name))
                   for p in sources), name
    assert any(p.endswith(os.path.join("podium", "core", "kernel_cache.py")) for p in sources)


PARALLEL = """\
import numba as nb
import numpy as np

{header}

@nb.njit(cache=True, parallel=True)
def doubled(x):
    out = np.empty(x.size)
    for k in nb.prange(x.size):
        out[k] = 2.0 * x[k]
    return out


@nb.njit(cache=True)
def first(x):
    return doubled(x).sum()


@nb.njit(cache=True)
def second(x):
    return doubled(x).sum() + 1.0
"""

PARALLEL_PROBE = """\
import sys
import numpy as np
import {module} as m
print(getattr(m, sys.argv[1])(np.linspace(0.0, 1.0, 11)))
"""


def _parallel_run(root: Path, cache: Path, module: str,
                  name: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PODIUM_PREBUILT_DIR": str(root / "none"),
           "PYTHONPATH": os.pathsep.join([str(root), str(SRC)])}
    return subprocess.run([sys.executable, "-c", PARALLEL_PROBE.format(module=module), name],
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("podium_cache", [True, False], ids=["kernel-cache", "stock-numba"])
def test_a_kernel_compiled_against_a_cached_parallel_kernel_loads(
        tmp_path: Path, podium_cache: bool) -> None:
    """numba/numba#8578: ``second`` is compiled in a process that *loaded* the parallel
    ``doubled`` from the cache (``first`` compiled it); stock Numba caches ``second``
    without launching the threading layer, and the next process that loads it crashes.
    Podium's cache launches it (``with_parallel_init``) and keeps the need on the loaded
    library (``keep_reload_init``).  The stock run is the control: it shows the three
    processes reach the crash on this Numba (skipped on a Numba that no longer crashes)."""
    root = tmp_path / "tree"
    if podium_cache:
        pkg = _tiny_package(root)
        header = "import podium.core.kernel_cache  # noqa: F401"
        (pkg / "par.py").write_text(PARALLEL.format(header=header))
        module = "tinypkg.par"
    else:
        root.mkdir()
        (root / "stockpar.py").write_text(PARALLEL.format(header=""))
        module = "stockpar"
    cache = tmp_path / "cache"
    runs = [_parallel_run(root, cache, module, name) for name in ("first", "second", "second")]
    assert [r.returncode for r in runs[:2]] == [0, 0], runs[0].stderr + runs[1].stderr
    if podium_cache:
        assert runs[2].returncode == 0, runs[2].stderr
        assert [float(r.stdout) for r in runs] == pytest.approx([11.0, 12.0, 12.0], abs=1e-12)
    elif runs[2].returncode == 0:
        pytest.skip("this Numba loads the kernel without crashing (numba#8578 fixed)")
    else:
        assert runs[2].returncode < 0  # killed by a signal (SIGSEGV)


def test_with_parallel_init_adds_the_launch_only_where_the_code_needs_it() -> None:
    from numba.core.typed_passes import _reload_parfors

    def payload(code: bytes, reload_init: list[object]) -> tuple[object, ...]:
        return (("lib", "object", (code, b"")), None, None, None, False, (), None,
                reload_init, ())

    needs = payload(b"...numba_parallel_for...", [])
    assert kernel_cache.with_parallel_init(needs)[7] == [_reload_parfors]
    serial = payload(b"no threads here", [])
    assert kernel_cache.with_parallel_init(serial) is serial
    recorded = payload(b"numba_parallel_for", [_reload_parfors])
    assert kernel_cache.with_parallel_init(recorded) is recorded
    assert kernel_cache.with_parallel_init(("odd",)) == ("odd",)
