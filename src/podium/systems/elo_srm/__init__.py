"""EloSRM and SRMFix ([Batty2026]): Elo on log2 rank performance for TopCoder SRMs.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.elo_srm.system import (
    K0,
    SRMFIX,
    EloSRM,
    EloSRMState,
    division_contests,
)

__all__ = ["EloSRM", "EloSRMState", "division_contests", "K0", "SRMFIX", "SPEC"]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "elosrm": Preset(
            EloSRM,
            {},
            "EloSRM ([Batty2026]): Elo on log2 rank performance, every Table 1 "
            "factor, Appendix A constants",
        ),
        "srmfix": Preset(
            EloSRM, dict(SRMFIX), "SRMFix ([Batty2026], Sec. 3.5): K=247, W=sqrt(N), M=8.2 only"
        ),
    },
    search_spaces={
        "elosrm": {"k": SearchRange(50.0, 3000.0, log=True)},
        "srmfix": {"k": SearchRange(50.0, 3000.0, log=True)},
    },
    kernels=("podium.systems.elo_srm.kernels",),
    compile_seconds=4.0,
)
