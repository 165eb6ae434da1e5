"""How a system's players perform in a round: the model behind its predictions
(:mod:`podium.predict`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["ELO_BETA", "PerformanceKind", "PerformanceModel"]

FloatArray = npt.NDArray[np.float64]

#: Spread of the rating *difference* in Elo's 400-point logistic formula:
#: ``400 (pi / sqrt 3) / ln 10`` (about 315.09).  With it the logistic win
#: probability of unit variance is ``1 / (1 + 10^((r_j - r_i) / 400))``.
ELO_BETA: float = 400.0 * (math.pi / math.sqrt(3.0)) / math.log(10.0)

PerformanceKind = Literal["logistic", "gaussian"]


@dataclass(frozen=True)
class PerformanceModel:
    """How one system's players perform in a round, for
    :func:`podium.predict.win_probabilities`.

    Attributes
    ----------
    kind:
        ``"logistic"`` or ``"gaussian"``: the shape ``F`` of the performance difference.
    variance:
        Per-player performance variance ``v_i`` (same order as the players given).
    description:
        One line saying where the model comes from (shown by the API).
    """

    kind: PerformanceKind
    variance: FloatArray
    description: str
