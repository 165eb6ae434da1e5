"""Podium: rating systems for ranked multiplayer contests.

The flagship is Elo-MMR (Ebtekar & Liu); see :mod:`podium.systems`.

>>> from podium import Contest, rate
>>> r = rate([Contest([("ann", 0, 0), ("bob", 1, 1), ("cat", 2, 2)])], "mmr")
>>> [round(x) for x in r.ratings()["mu"]]
[1705, 1500, 1295]

The names below are imported on first use (PEP 562), so that ``import podium`` --
and every ``podium`` command -- loads only what it needs (NumPy, Numba and the rating
systems when a system is used; pandas when a table is built).
"""

from __future__ import annotations

import os as _os
from typing import TYPE_CHECKING

from podium._lazy import lazy_names

# Numba's OpenMP workers spin while waiting by default; on a busy or small
# machine that costs far more than it saves (measured: 8x slower rounds on 2
# cores under load).  Passive waiting must be chosen before OpenMP starts.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The same for OpenBLAS (NumPy's and SciPy's BLAS): its worker threads start when
# NumPy is imported and spin for 2**28 cycles (about 0.1 s of a second core) before
# they sleep, in every process, BLAS call or not (measured: a warm `podium rate` of
# three contests, 0.87 s of CPU for 0.65 s of wall clock; 0.66 s with 2**4).  The
# timeout only says how long an idle worker spins: how BLAS splits its work, and so
# every result, is unchanged.  Read once, when OpenBLAS is loaded.
_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from podium._version import __version__  # noqa: E402
from podium.errors import (  # noqa: E402
    CheckpointError,
    ConfigError,
    ContestError,
    ConvergenceError,
    DataFormatError,
    PodiumError,
)

if TYPE_CHECKING:
    from podium.core.contest import Contest, Standing
    from podium.core.teams import Teams
    from podium.rater import Rater, RoundReport, rate
    from podium.systems import SYSTEMS, EloMMR, RatingSystem, get_system

__all__ = [
    "Contest",
    "Standing",
    "Teams",
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

#: Public name -> the module that defines it (imported on first access).
_LAZY = {
    "Contest": "podium.core.contest",
    "Standing": "podium.core.contest",
    "Teams": "podium.core.teams",
    "Rater": "podium.rater",
    "RoundReport": "podium.rater",
    "rate": "podium.rater",
    "RatingSystem": "podium.systems",
    "EloMMR": "podium.systems",
    "SYSTEMS": "podium.systems",
    "get_system": "podium.systems",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
