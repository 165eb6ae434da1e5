"""Podium: rating systems for ranked multiplayer contests.

The flagship is Elo-MMR (Ebtekar & Liu); see :mod:`podium.systems`.

>>> from podium import Contest, rate
>>> r = rate([Contest([("ann", 0, 0), ("bob", 1, 1), ("cat", 2, 2)])], "mmr")
>>> [round(x) for x in r.ratings()["mu"]]
[1705, 1500, 1295]
"""

from podium.core.contest import Contest, Standing
from podium.errors import (
    CheckpointError,
    ConfigError,
    ContestError,
    ConvergenceError,
    DataFormatError,
    PodiumError,
)
from podium.rater import Rater, RoundReport, rate
from podium.systems import SYSTEMS, EloMMR, RatingSystem, get_system

__version__ = "0.1.0"

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
