"""TrueSkill-SPb (Nikolenko & Sirotkin): TrueSkill for multiplayer rounds with drift.

Everything about the system is in this folder: ``system.py`` (parameters, state,
update rule, team rule, performance model) and the modules next to it; ``SPEC``
declares its presets, tuning search space and compile estimate.
"""

from __future__ import annotations

from podium.systems.base import Preset, SearchRange, SystemSpec
from podium.systems.trueskill.system import (
    TrueSkillSPb,
    TrueSkillState,
)

__all__ = ["TrueSkillSPb", "TrueSkillState", "SPEC"]


#: The presets, search spaces and kernels of this folder (see :mod:`podium.systems`).
SPEC = SystemSpec(
    presets={
        "trueskill": Preset(
            TrueSkillSPb,
            {},
            "TrueSkill-SPb (Nikolenko & Sirotkin): eps 1, beta 175, drift 35, EP to 1e-4",
        ),
    },
    search_spaces={
        "trueskill": {
            "eps": SearchRange(0.1, 20.0, log=True),
            "beta": SearchRange(40.0, 400.0, log=True),
            "sig_drift": SearchRange(2.0, 100.0, log=True),
        }
    },
    kernels=("podium.systems.trueskill.kernels", "podium.systems.trueskill.team_kernels"),
    compile_seconds=6.0,
)
