"""Elo-MMR ([EbtekarLiu2021]): Elo-MMR(rho), Elo-MMchi, Elo-MMR(inf) and their subsampled variants.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

import math
from typing import Any

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.elo_mmr.system import (
    EloMMR,
    EloMMRState,
    round_performance_model,
)

__all__ = ["EloMMR", "EloMMRState", "round_performance_model", "SPEC"]


def _fast(**kw: Any) -> dict[str, Any]:
    """The subsampled variants: 100 merged opponent terms and 100 factors (Sec. 5.3,
    multi-skill's fast systems)."""
    return {"subsample_size": 100, "subsample_bucket": 2.0, "max_history": 100, **kw}


_MMR = {
    "weight_limit": SearchRange(0.02, 2.0, log=True),
    "sig_limit": SearchRange(20.0, 200.0, log=True),
}
_MMR_RHO = {**_MMR, "rho": SearchRange(0.05, 20.0, log=True)}

#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "mmr": Preset(
            EloMMR, {}, "Elo-MMR(rho=1), logistic, every opponent and the whole history (exact)"
        ),
        "mmr-fast": Preset(
            EloMMR, _fast(), "Elo-MMR with 100 subsampled opponents and 100 factors"
        ),
        "mmx": Preset(
            EloMMR, {"variant": "gaussian"}, "Elo-MMchi: Gaussian performance model (exact)"
        ),
        "mmx-fast": Preset(
            EloMMR, _fast(variant="gaussian"), "Elo-MMchi with 100 subsampled opponents"
        ),
        "mmr-inf": Preset(EloMMR, {"rho": math.inf}, "Elo-MMR(inf): memoryless logistic variant"),
    },
    search_spaces={
        "mmr": _MMR_RHO,
        "mmr-fast": _MMR_RHO,
        "mmx": _MMR,
        "mmx-fast": _MMR,
        "mmr-inf": _MMR,
    },
    kernels=("podium.systems.elo_mmr.kernels",),
    compile_seconds=5.0,
)
