"""All-pairs Glicko and Bradley-Terry (BAR): the round as one informative match.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.glicko.system import (
    BAR,
    DEFAULT_BETA,
    AllPairsState,
    Glicko,
    drift_performance_model,
)

__all__ = ["Glicko", "BAR", "AllPairsState", "DEFAULT_BETA", "drift_performance_model", "SPEC"]

_BETA_DRIFT = {
    "beta": SearchRange(80.0, 800.0, log=True),
    "sig_drift": SearchRange(2.0, 150.0, log=True),
}

#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "glicko": Preset(Glicko, {}, "All-pairs Glicko, the round as one highly informative match"),
        "bar": Preset(BAR, {}, "All-pairs Bradley-Terry (BAR), the round as one informative match"),
    },
    search_spaces={"glicko": _BETA_DRIFT, "bar": _BETA_DRIFT},
    kernels=("podium.systems.glicko.kernels",),
    compile_seconds=2.5,
)
