"""Codeforces' own rating system (2015 rules with the round-327 correction), in integers.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SystemSpec
from podium.systems.codeforces.system import (
    DISPLAY_BONUSES_2020,
    Codeforces,
    CodeforcesRound,
    CodeforcesState,
    check_invariants,
    codeforces_round,
    elo_kernel,
)

__all__ = [
    "Codeforces",
    "CodeforcesState",
    "CodeforcesRound",
    "codeforces_round",
    "check_invariants",
    "elo_kernel",
    "DISPLAY_BONUSES_2020",
    "SPEC",
]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "codeforces": Preset(
            Codeforces,
            {},
            "Codeforces' own rating system (2015 rules + round-327 correction), in integers",
        ),
    },
    search_spaces={},
    kernels=("podium.systems.codeforces.kernels",),
    compile_seconds=3.0,
)
