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
