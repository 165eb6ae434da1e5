"""Elo-MMR following the paper's Algorithms 1-3 literally (O(N^2)), for checking.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.elo_mmr_simple.system import (
    SimpleEloMMR,
    SimpleState,
)

__all__ = ["SimpleEloMMR", "SimpleState", "SPEC"]

_MMR_RHO = {
    "weight_limit": SearchRange(0.02, 2.0, log=True),
    "sig_limit": SearchRange(20.0, 200.0, log=True),
    "rho": SearchRange(0.05, 20.0, log=True),
}

#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "mmr-simple": Preset(
            SimpleEloMMR, {}, "Elo-MMR following Algorithms 1-3 literally (O(N^2), for checking)"
        ),
    },
    search_spaces={"mmr-simple": _MMR_RHO},
    kernels=(),
    compile_seconds=0.0,
)
