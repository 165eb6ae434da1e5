"""Numerics shared by every rating system, in small modules:

* :mod:`~podium.core.numerics.special` -- the normal pdf, CDF and hazard (``erfcx``),
  the logistic ``tanh``/``sech^2`` terms;
* :mod:`~podium.core.numerics.newton` -- the bracketed, safeguarded Newton solvers (the
  one of every rating equation, and one stopped by a relative tolerance for nested
  solves), their bounds, iteration cap, status codes and warnings;
* :mod:`~podium.core.numerics.chebyshev` -- Chebyshev panels (an equal grid, or a
  greedy cover of points): nodes, fit, evaluation, and the zero on a panel;
* :mod:`~podium.core.numerics.robust` -- the rating as a robust average (Eq. 6-7);
* :mod:`~podium.core.numerics.distinct` -- the distinct rows of a round's term arrays;
* :mod:`~podium.core.numerics.terms` -- the terms of the performance equation
  (Theorem 3.2), identical ones merged, and their sums over a tie group;
* :mod:`~podium.core.numerics.performance` -- the performance equation solved for
  every tie group.

Everything is compiled with Numba (``cache=True``): the first call of a session
compiles or loads from the on-disk cache.
"""

from podium.core.numerics import (
    chebyshev,
    distinct,
    newton,
    performance,
    robust,
    special,
    terms,
)
from podium.core.numerics.chebyshev import *  # noqa: F403
from podium.core.numerics.distinct import *  # noqa: F403
from podium.core.numerics.newton import *  # noqa: F403
from podium.core.numerics.performance import *  # noqa: F403
from podium.core.numerics.robust import *  # noqa: F403
from podium.core.numerics.special import *  # noqa: F403
from podium.core.numerics.terms import *  # noqa: F403

__all__ = [
    *special.__all__,
    *newton.__all__,
    *robust.__all__,
    *chebyshev.__all__,
    *distinct.__all__,
    *terms.__all__,
    *performance.__all__,
]
