"""cfsys: the Codeforces-like continuous system of the Elo-MMR paper.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.cfsys.system import (
    DEFAULT_BETA,
    CFSys,
    CFSysState,
    cfsys_round,
)

__all__ = ["CFSys", "CFSysState", "cfsys_round", "DEFAULT_BETA", "SPEC"]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "cfsys": Preset(
            CFSys, {}, "Codeforces-like continuous system of the Elo-MMR paper (cfsys)"
        ),
    },
    search_spaces={
        "cfsys": {
            "beta": SearchRange(80.0, 800.0, log=True),
            "weight": SearchRange(0.05, 5.0, log=True),
        }
    },
    kernels=("podium.systems.codeforces.kernels",),
    compile_seconds=3.0,
)
