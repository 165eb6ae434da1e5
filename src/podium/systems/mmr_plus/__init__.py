"""MMR-plus: Elo-MMR with learned round weights, skill trends and drift (docs/mmr-plus.md).

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.mmr_plus.system import (
    GAP_EDGES,
    LEVEL_EDGES,
    TREND_EDGES,
    MMRPlus,
    MMRPlusState,
    gap_bucket,
    level_bucket,
    trend_bucket,
)

__all__ = ["MMRPlus", "MMRPlusState", "TREND_EDGES", "LEVEL_EDGES", "GAP_EDGES",
           "trend_bucket", "gap_bucket", "level_bucket", "SPEC"]

# Elo-MMR's own three; MMR-plus's ingredients stay at the preset (docs/mmr-plus.md)
_MMR_RHO = {
    "weight_limit": SearchRange(0.02, 2.0, log=True),
    "sig_limit": SearchRange(20.0, 200.0, log=True),
    "rho": SearchRange(0.05, 20.0, log=True),
}

#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "mmr-plus": Preset(
            MMRPlus,
            {},
            "Elo-MMR with round weights from the learned reliability of results, skill "
            "trends and drift learned by experience",
        ),
    },
    search_spaces={"mmr-plus": _MMR_RHO},
    kernels=("podium.systems.elo_mmr.kernels",),
    compile_seconds=5.0,
)
