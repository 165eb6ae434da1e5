"""The numerics' constants that code outside the kernels reads (parameter defaults,
the store's checks, the systems' descriptions), in a module without Numba: importing
them loads no compiler (``podium systems``, the store's commands).

:mod:`~podium.core.numerics.special`, :mod:`~podium.core.numerics.newton` and
:mod:`~podium.core.numerics.performance` export them as their own; the kernels read
them from there, as compile-time constants.
"""

from __future__ import annotations

import math

__all__ = ["TANH_MULTIPLIER", "SOLVER_BOUNDS", "LO_BOUND", "HI_BOUND", "LOGISTIC", "GAUSSIAN",
           "COUNTED_FROM"]

#: ``pi / sqrt(3)``: turns a standard deviation into the logistic tanh scale.
TANH_MULTIPLIER = math.pi / math.sqrt(3.0)

#: The bracket every Elo-MMR equation is solved on (as in multi-skill).
SOLVER_BOUNDS = (-6000.0, 9000.0)
LO_BOUND, HI_BOUND = SOLVER_BOUNDS

#: Logistic opponent terms: ``pa = w_arg``, ``pb = w_out`` (Sec. 3.1).
LOGISTIC = 0
#: Gaussian opponent terms: ``pa = delta`` (``pb`` unused).
GAUSSIAN = 1

#: Rounds of at least this many players whose terms merge into few distinct ones solve
#: each tie group's equation over the distinct terms times their counts
#: (:func:`~podium.core.numerics.performance_zeros`); smaller rounds keep the panels.
#: (Here, without Numba, for the prebuild's massive round.)
COUNTED_FROM = 1 << 16
