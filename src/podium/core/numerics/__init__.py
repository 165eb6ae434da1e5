"""Numerics shared by every rating system, in small modules:

* :mod:`~podium.core.numerics.special` -- the normal pdf, CDF and hazard (``erfcx``),
  the logistic ``tanh``/``sech^2`` terms;
* :mod:`~podium.core.numerics.newton` -- the one bracketed, safeguarded Newton solver,
  its bounds, iteration cap and status codes;
* :mod:`~podium.core.numerics.chebyshev` -- the Chebyshev panel grid: nodes, fit,
  evaluation, and the zero on a panel;
* :mod:`~podium.core.numerics.robust` -- the rating as a robust average (Eq. 6-7);
* :mod:`~podium.core.numerics.performance` -- the performance equation of
  Theorem 3.2 solved for every tie group.

Everything is compiled with Numba (``cache=True``): the first call of a session
compiles or loads from the on-disk cache.
"""

from podium.core.numerics.chebyshev import (
    CHEB_NODES,
    PanelGrid,
    cheb_fit,
    cheb_matrix,
    cheb_nodes,
    clenshaw,
    lobatto_weights,
    panel_coordinate,
    panel_ends,
    panel_grid,
    panel_mid,
    panel_zero,
)
from podium.core.numerics.newton import (
    HI_BOUND,
    LO_BOUND,
    MAX_ITER,
    SOLVER_BOUNDS,
    STATUS_AT_BOUND,
    STATUS_MAX_ITER,
    STATUS_OK,
    NewtonState,
    newton_begin,
    newton_next,
    newton_step,
)
from podium.core.numerics.performance import (
    GAUSSIAN,
    LOGISTIC,
    OpponentTerms,
    TieGroups,
    node_values,
    performance_zeros,
)
from podium.core.numerics.robust import robust_average_zero, solve_robust_average
from podium.core.numerics.special import (
    TANH_MULTIPLIER,
    erfcx,
    fast_tanh,
    normal_cdf,
    normal_hazard,
    normal_pdf,
    own_logistic_term,
    tanh_sech2,
)

__all__ = [
    "TANH_MULTIPLIER",
    "SOLVER_BOUNDS",
    "LO_BOUND",
    "HI_BOUND",
    "MAX_ITER",
    "STATUS_OK",
    "STATUS_AT_BOUND",
    "STATUS_MAX_ITER",
    "normal_pdf",
    "normal_cdf",
    "normal_hazard",
    "erfcx",
    "tanh_sech2",
    "fast_tanh",
    "own_logistic_term",
    "NewtonState",
    "newton_step",
    "newton_begin",
    "newton_next",
    "robust_average_zero",
    "solve_robust_average",
    "CHEB_NODES",
    "PanelGrid",
    "panel_grid",
    "panel_ends",
    "panel_mid",
    "panel_coordinate",
    "cheb_nodes",
    "lobatto_weights",
    "cheb_matrix",
    "cheb_fit",
    "clenshaw",
    "panel_zero",
    "LOGISTIC",
    "GAUSSIAN",
    "OpponentTerms",
    "TieGroups",
    "node_values",
    "performance_zeros",
]
