"""Podium: rating systems for ranked multiplayer contests.

The flagship is Elo-MMR (Ebtekar & Liu); see :mod:`podium.systems`.

>>> from podium import Contest, rate
>>> r = rate([Contest([("ann", 0, 0), ("bob", 1, 1), ("cat", 2, 2)])], "mmr")
>>> [round(x) for x in r.ratings()["mu"]]
[1705, 1500, 1295]
"""

import os as _os

# Numba's OpenMP workers spin while waiting by default; on a busy or small
# machine that costs far more than it saves (measured: 8x slower rounds on 2
# cores under load).  Passive waiting must be chosen before OpenMP starts.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from podium._version import __version__  # noqa: E402
from podium.core.contest import Contest, Standing  # noqa: E402
from podium.errors import (  # noqa: E402
    CheckpointError,
    ConfigError,
    ContestError,
    ConvergenceError,
    DataFormatError,
    PodiumError,
)
from podium.rater import Rater, RoundReport, rate  # noqa: E402
from podium.systems import SYSTEMS, EloMMR, RatingSystem, get_system  # noqa: E402

__all__ = [
    "Contest",
    "Standing",
    "Rater",
    "RoundReport",
    "rate",
    "RatingSystem",
    "EloMMR",
    "SYSTEMS",
    "get_system",
    "PodiumError",
    "ContestError",
    "DataFormatError",
    "CheckpointError",
    "ConfigError",
    "ConvergenceError",
    "__version__",
]
