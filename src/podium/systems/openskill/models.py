"""openskill's model codes, without Numba: the systems' classes name their model
(:attr:`~podium.systems.openskill.system.OpenSkill.MODEL`) when they are defined, and
the kernels (:mod:`podium.systems.openskill.kernels`) branch on it."""

from __future__ import annotations

__all__ = ["PL", "TM", "BT", "TMP", "BTP"]

#: Model codes: Plackett-Luce, Thurstone-Mosteller full pair, Bradley-Terry full
#: pair, and the partial-pair (windowed) variants of the last two.
PL, TM, BT, TMP, BTP = 0, 1, 2, 3, 4
