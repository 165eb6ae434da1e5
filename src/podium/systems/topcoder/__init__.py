"""TopCoder's published algorithm rating system (``tcsys``).

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.topcoder.system import (
    TopCoder,
    TopCoderState,
)

__all__ = ["TopCoder", "TopCoderState", "SPEC"]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "tcsys": Preset(
            TopCoder, {}, "TopCoder's published algorithm rating system (volatility, cap)"
        ),
    },
    search_spaces={
        "tcsys": {
            # TopCoder needs weights in (0, 1)
            "weight_noob": SearchRange(0.05, 0.99, log=True),
            "weight_limit": SearchRange(0.01, 0.99, log=True),
        }
    },
    kernels=("podium.systems.topcoder.kernels",),
    compile_seconds=1.0,
)
