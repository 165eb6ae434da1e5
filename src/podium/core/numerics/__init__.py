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
compiles or loads from the on-disk cache.  The constants that code outside the kernels
reads are in :mod:`~podium.core.numerics.constants`, without Numba; the package
imports the other modules (and Numba) when one of their names is first asked for
(PEP 562), so that ``from podium.core.numerics import TANH_MULTIPLIER`` loads no
compiler.
"""

from __future__ import annotations

import importlib
from typing import Any

from podium.core.numerics.constants import *  # noqa: F403

#: The modules whose names the package exports, in the order of ``__all__``.
_MODULES = ("special", "lanes", "newton", "robust", "chebyshev", "distinct", "terms",
            "performance")


def _load() -> None:
    """Import every module of the package and bind its exported names here."""
    names: list[str] = []
    for short in _MODULES:
        module = importlib.import_module(f"{__name__}.{short}")
        globals().update({n: getattr(module, n) for n in module.__all__})
        names.extend(module.__all__)
    globals()["__all__"] = list(dict.fromkeys(names))


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    _load()
    try:
        return globals()[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
