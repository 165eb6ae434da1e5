"""Elo-R ([Ebtekar2015]): the first form of the two-phase Bayesian system and its noising methods.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.elo_r.system import (
    NOISE_METHODS,
    EloR,
    EloRState,
)

__all__ = ["EloR", "EloRState", "NOISE_METHODS", "SPEC"]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "elo-r": Preset(
            EloR, {}, "Elo-R ([Ebtekar2015]), normal approximation: Algorithms 1-2, memoryless"
        ),
        "elo-r-leading": Preset(
            EloR, {"noise": "leading"}, "Elo-R, constant multiple on the leading tau (Sec. 6.2.2)"
        ),
        "elo-r-all": Preset(
            EloR,
            {"noise": "all"},
            "Elo-R, constant multiple on all tau (Sec. 6.2.3; Sec. 6.3's curve)",
        ),
        "elo-r-fancy": Preset(
            EloR, {"noise": "fancy"}, "Elo-R, the fancy kappa search (Algorithms 3-4, Sec. 6.2.4)"
        ),
        "elo-r-nonrobust": Preset(
            EloR,
            {"robust": False},
            "Elo-R without outlier reduction: normal measurements, memoryless (Sec. 6.3 orange)",
        ),
    },
    search_spaces={
        # Elo-R needs sig_star < gamma: the ranges do not overlap
        "elo-r": {
            "sig_star": SearchRange(20.0, 200.0, log=True),
            "gamma": SearchRange(210.0, 1500.0, log=True),
        },
    },
    kernels=("podium.systems.elo_r.kernels",),
    compile_seconds=5.0,
)
