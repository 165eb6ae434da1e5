"""Podium's version and the versions of the files it writes.

One module, imported by :mod:`podium`, :mod:`podium.checkpoint` and
:mod:`podium.store.snapshot`, with no imports of its own (so reading a version
loads nothing else).  ``pyproject.toml`` reads the package version from here
(``[tool.setuptools.dynamic]``).
"""

from __future__ import annotations

__all__ = [
    "__version__",
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "SNAPSHOT_FORMAT",
    "SNAPSHOT_VERSION",
]

#: The package version.
__version__ = "0.1.0"

#: ``format`` and ``version`` of a checkpoint's metadata (:mod:`podium.checkpoint`).
CHECKPOINT_FORMAT = "podium-checkpoint"
CHECKPOINT_VERSION = 1

#: ``format`` and ``version`` of a store snapshot's metadata (:mod:`podium.store.snapshot`).
SNAPSHOT_FORMAT = "podium-store-snapshot"
SNAPSHOT_VERSION = 1
