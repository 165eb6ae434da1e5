"""openskill's five Weng-Lin models (Plackett-Luce, Thurstone-Mosteller, Bradley-Terry).

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.openskill.system import (
    TEAM_RULE,
    BradleyTerryFull,
    BradleyTerryPart,
    OpenSkillModel,
    PlackettLuce,
    ThurstoneMostellerFull,
    ThurstoneMostellerPart,
)

__all__ = [
    "OpenSkillModel",
    "PlackettLuce",
    "ThurstoneMostellerFull",
    "BradleyTerryFull",
    "ThurstoneMostellerPart",
    "BradleyTerryPart",
    "TEAM_RULE",
    "SPEC",
]

# openskill's scale (mu 25): the prior, the performance spread and the dynamics
_SKILL = {
    "sigma": SearchRange(1.0, 40.0, log=True),
    "beta": SearchRange(0.5, 25.0, log=True),
    "tau": SearchRange(0.005, 2.5, log=True),
}

#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "openskill-pl": Preset(
            PlackettLuce, {}, "openskill's Plackett-Luce (Weng-Lin Alg. 4), teams native"
        ),
        "openskill-tm": Preset(
            ThurstoneMostellerFull,
            {},
            "openskill's Thurstone-Mosteller, full pairs (Weng-Lin Alg. 3), teams native",
        ),
        "openskill-bt": Preset(
            BradleyTerryFull,
            {},
            "openskill's Bradley-Terry, full pairs (Weng-Lin Alg. 1), teams native",
        ),
        "openskill-tmp": Preset(
            ThurstoneMostellerPart,
            {},
            "openskill's Thurstone-Mosteller, partial pairs (window 4), teams native",
        ),
        "openskill-btp": Preset(
            BradleyTerryPart,
            {},
            "openskill's Bradley-Terry, partial pairs (Weng-Lin Alg. 2, window 4), teams native",
        ),
    },
    search_spaces={
        name: _SKILL
        for name in (
            "openskill-pl",
            "openskill-tm",
            "openskill-bt",
            "openskill-tmp",
            "openskill-btp",
        )
    },
    kernels=("podium.systems.openskill.kernels",),
    compile_seconds=6.0,
)
