"""Podium's build backend: setuptools', plus the kernels compiled at build time.

``pip install .`` and ``pip install -e .`` build the package through this module
(``[build-system]`` of pyproject.toml).  Everything is setuptools' work, except that
the build also runs ``python -m podium.prebuild``: the README's main job, compiled for
a portable CPU into ``src/podium/_prebuilt`` (ignored by git, left out of the sdist,
shipped in a wheel as package data; an editable install reads it in place), so that
a user's first ``podium rate`` loads its kernels instead of compiling them.

Timeline under pip: the build environment gets Numba and NumPy besides setuptools
(:func:`get_requires_for_build_wheel`: the versions of the project's own
dependencies); :func:`prepare_metadata_for_build_wheel` starts the prebuild in the
background, so that it compiles while pip resolves and downloads the dependencies;
:func:`build_wheel` (or ``build_editable``) waits for it before the wheel is made.
A build that asks for no metadata first (``python -m build``) runs it in the
foreground.  The prebuild compiles in one process per CPU (at most 4, and at most
two per system: its example history and its small histories; ``PODIUM_PREBUILD_JOBS``
sets the number), which share the kernels the jobs have in common, so on a multi-core
machine with idle cores the build waits for less than the compile's CPU time.  A
failed prebuild fails nothing: its log is ``_prebuilt/build.log``, and the kernels
compile on first use as without it.

``PODIUM_PREBUILD`` chooses what is compiled: unset, ``mmr`` (the README's job);
``all``, every system (minutes of CPU); a list such as ``mmr,trueskill``; ``none``,
nothing (and no Numba in the build environment).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every hook we do not change

PREBUILT = Path("src", "podium", "_prebuilt")
_LOCK = PREBUILT / ".lock"
_STARTED = PREBUILT / ".started"
_LOG = PREBUILT / "build.log"
#: How long a build waits for a background prebuild before it goes on without it.
WAIT_SECONDS = 1800


def _wanted() -> bool:
    return os.environ.get("PODIUM_PREBUILD", "").strip().lower() not in ("none", "0", "off")


def _prebuild_requires() -> list[str]:
    """The project's own requirements on Numba and NumPy (pyproject.toml), which the
    prebuild needs in the build environment."""
    with open("pyproject.toml", "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    return [d for d in deps if re.match(r"(numba|numpy)\b", d)]


def _env() -> dict[str, str]:
    src = str(Path("src").resolve())
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else ""),
            "NUMBA_CPU_NAME": "generic"}


def _command() -> list[str]:
    return [sys.executable, "-m", "podium.prebuild", "--dir", str(PREBUILT.resolve())]


def _can_prebuild() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        print("podium build: Numba is not in the build environment; the kernels will "
              "compile on first use", file=sys.stderr)
        return False
    return True


def _start() -> None:
    """Start the prebuild in the background, holding a lock its process inherits."""
    if not _wanted() or not _can_prebuild():
        return
    try:
        import fcntl
    except ImportError:  # not POSIX: the build runs it in the foreground
        return
    PREBUILT.mkdir(parents=True, exist_ok=True)
    lock = os.open(_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another build of this tree is running it
        os.close(lock)
        return
    _STARTED.write_text(str(time.time()))
    with open(_LOG, "wb") as log:
        subprocess.Popen(_command(), env=_env(), stdin=subprocess.DEVNULL, stdout=log,
                         stderr=subprocess.STDOUT, pass_fds=(lock,), start_new_session=True)
    os.close(lock)  # the prebuild's process holds the lock until it ends


def _finish() -> None:
    """Wait for a background prebuild, or run one now."""
    if not _wanted():
        return
    if _STARTED.exists():
        try:
            import fcntl
        except ImportError:
            pass
        else:
            deadline = time.monotonic() + WAIT_SECONDS
            lock = os.open(_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                while True:
                    try:
                        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except OSError:
                        if time.monotonic() > deadline:
                            print("podium build: the kernel prebuild is still running; "
                                  "going on without it", file=sys.stderr)
                            return
                        time.sleep(0.2)
            finally:
                os.close(lock)
        _STARTED.unlink(missing_ok=True)
        log = _LOG.read_text(errors="replace").strip().splitlines() if _LOG.exists() else []
        if log:
            print(f"podium build: {log[-1]}", file=sys.stderr)
        return
    if _can_prebuild():
        PREBUILT.mkdir(parents=True, exist_ok=True)
        subprocess.run(_command(), env=_env(), stdin=subprocess.DEVNULL, check=False)


def get_requires_for_build_wheel(config_settings: Any = None) -> list[str]:
    """setuptools' requirements, and Numba and NumPy for the prebuild."""
    extra = _prebuild_requires() if _wanted() else []
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def get_requires_for_build_editable(config_settings: Any = None) -> list[str]:
    """setuptools' requirements, and Numba and NumPy for the prebuild."""
    extra = _prebuild_requires() if _wanted() else []
    return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Any = None) -> str:
    """setuptools' metadata; the prebuild starts in the background."""
    _start()
    return _setuptools.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str,
                                        config_settings: Any = None) -> str:
    """setuptools' metadata; the prebuild starts in the background."""
    _start()
    return _setuptools.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory: str, config_settings: Any = None,
                metadata_directory: str | None = None) -> str:
    """setuptools' wheel, with the prebuilt kernels as package data."""
    _finish()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: Any = None,
                   metadata_directory: str | None = None) -> str:
    """setuptools' editable wheel; the prebuilt kernels stay in the source tree."""
    _finish()
    return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
