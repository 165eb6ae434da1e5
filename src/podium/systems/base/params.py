"""A system's hyper-parameters: named, with defaults and a validity check each.

A system is a frozen dataclass whose fields are its parameters; :func:`param`
declares one with its check, and
:meth:`RatingSystem.__post_init__ <podium.systems.base.system.RatingSystem.__post_init__>`
runs every check (:func:`check_param`), so that a bad value is refused with the
parameter's name and the range it must be in.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Literal, TypeVar

from podium.core.numerics.constants import HI_BOUND, LO_BOUND
from podium.errors import ConfigError

__all__ = ["MAX_MAGNITUDE", "MIN_POSITIVE", "RATING_RANGE", "Check", "check_by_annotation",
           "check_param", "param"]

T = TypeVar("T")

#: The checks :func:`param` knows (see :func:`check_param` for what each accepts).
Check = Literal[
    "finite", "positive", "nonnegative", "positive_or_inf", "nonnegative_or_inf",
    "open_unit", "positive_int", "positive_int_or_none", "bool", "number_or_none",
    "finite_list", "integer", "integer_or_none", "rate_or_skip",
]

#: The largest magnitude of a real parameter: ratings, spreads, rates and memories all
#: live far below it, and squares and reciprocals of values within
#: [:data:`MIN_POSITIVE`, :data:`MAX_MAGNITUDE`] stay far from overflow (a weight limit
#: of 1e308 or a ``sig_limit`` of 1e-320 divided by zero inside an update).
MAX_MAGNITUDE = 1e6
#: The smallest positive real parameter (the tolerances of the iterative systems are
#: 1e-12 by default).
MIN_POSITIVE = 1e-12
#: The ratings a system that solves for them can reach (the solver's bracket,
#: :data:`podium.core.numerics.newton.SOLVER_BOUNDS`): where its newcomers must start.
RATING_RANGE = {"lo": LO_BOUND, "hi": HI_BOUND}


def _real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _integer(v: object) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _bounded(v: object) -> bool:
    return _real(v) and -MAX_MAGNITUDE <= v <= MAX_MAGNITUDE  # type: ignore[operator]


def _positive(v: object) -> bool:
    return _real(v) and MIN_POSITIVE <= v <= MAX_MAGNITUDE  # type: ignore[operator]


def _finite_list(v: object) -> bool:
    if isinstance(v, str | bytes) or not isinstance(v, list | tuple):
        return False
    return all(_positive(x) for x in v)


_RANGE = f"[{MIN_POSITIVE:g}, {MAX_MAGNITUDE:g}]"
_SPAN = f"[{-MAX_MAGNITUDE:g}, {MAX_MAGNITUDE:g}]"

#: check -> (test, what the value must be); the error reads ``"{name} must be {what}"``.
_CHECKS: dict[str, tuple[Any, str]] = {
    "finite": (_bounded, f"a number in {_SPAN}"),
    "positive": (_positive, f"a number in {_RANGE}"),
    "nonnegative": (lambda v: _real(v) and (v == 0 or _positive(v)),
                    f"0 or a number in {_RANGE}"),
    "positive_or_inf": (lambda v: _real(v) and (v == math.inf or _positive(v)),
                        f"a number in {_RANGE} or math.inf"),
    "nonnegative_or_inf": (lambda v: _real(v) and (v == 0 or v == math.inf or _positive(v)),
                           f"0, a number in {_RANGE} or math.inf"),
    "open_unit": (lambda v: _real(v) and MIN_POSITIVE <= v <= 1.0 - MIN_POSITIVE,
                  f"a number in (0, 1), at least {MIN_POSITIVE:g} from either end"),
    "positive_int": (lambda v: _integer(v) and v >= 1, "a positive integer"),
    "positive_int_or_none": (lambda v: v is None or (_integer(v) and v >= 1),
                             "a positive integer or None"),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "number_or_none": (lambda v: v is None or (_real(v) and (v == math.inf or _bounded(v))),
                       f"a number in {_SPAN}, math.inf or None"),
    "finite_list": (_finite_list, f"a list of numbers, each in {_RANGE}"),
    "integer": (lambda v: _integer(v) and -(2**63) <= v < 2**63, "a 64-bit integer"),
    "integer_or_none": (lambda v: v is None or (_integer(v) and -(2**63) <= v < 2**63),
                        "a 64-bit integer or None"),
    "rate_or_skip": (lambda v: isinstance(v, str) and v in ("rate", "skip"),
                     "'rate' or 'skip'"),
}


def check_param(name: str, value: Any, check: Check, lo: float | None = None,
                hi: float | None = None) -> None:
    """Raise :class:`~podium.errors.ConfigError` unless ``value`` passes ``check`` (and,
    when it is a finite number, lies in ``[lo, hi]``).

    Checks: ``"finite"`` (in [-:data:`MAX_MAGNITUDE`, :data:`MAX_MAGNITUDE`]);
    ``"positive"`` (in [:data:`MIN_POSITIVE`, :data:`MAX_MAGNITUDE`]); ``"nonnegative"``
    (0 or positive); ``"positive_or_inf"`` / ``"nonnegative_or_inf"`` (``math.inf``
    allowed, NaN not); ``"open_unit"`` (in (0, 1), :data:`MIN_POSITIVE` from either
    end); ``"positive_int"`` and ``"positive_int_or_none"``; ``"bool"``;
    ``"number_or_none"`` (``None``, ``math.inf``, or as ``"finite"``); ``"finite_list"``
    (a list of positive numbers); ``"integer"``, ``"integer_or_none"``;
    ``"rate_or_skip"`` (the string ``"rate"`` or ``"skip"``).  Numbers are
    real numbers other than ``bool`` (NumPy scalars included).  The bounds keep every
    update away from overflow and division by zero; the error names the range.

    Raises
    ------
    ConfigError
        ``"{name} must be {what}, got {value!r}"``.
    """
    test, what = _CHECKS[check]
    if lo is not None or hi is not None:
        span = f"[{-math.inf if lo is None else lo:g}, {math.inf if hi is None else hi:g}]"
        what = f"{what}, and within {span}"
    ok = test(value)
    if ok and _real(value) and math.isfinite(value):
        ok = (lo is None or value >= lo) and (hi is None or value <= hi)
    if not ok:
        raise ConfigError(f"{name} must be {what}, got {value!r}")


def param(default: T, check: Check | None = None, *, lo: float | None = None,
          hi: float | None = None) -> T:
    """A system parameter with a default and a validity check (run by
    :meth:`RatingSystem.__post_init__`), for use in a system's dataclass body::

        sig_noob: float = param(350.0, "positive")
        sig_limit: float = param(80.0, "positive", lo=1.0)

    ``lo`` and ``hi`` narrow the check's range where the system needs it (a finite
    value outside is refused; the message names the range).
    """
    meta: dict[str, Any] = {} if check is None else {"check": check}
    if lo is not None:
        meta["lo"] = lo
    if hi is not None:
        meta["hi"] = hi
    out: T = dataclasses.field(default=default, metadata=meta)
    return out


#: The check of a field declared without :func:`param`, by its type annotation (the
#: annotations are strings: ``from __future__ import annotations``).
_BY_ANNOTATION: dict[str, Check] = {
    "float": "finite", "bool": "bool", "int": "integer",
    "tuple[float, ...]": "finite_list", "float | None": "number_or_none",
    "int | None": "integer_or_none",
}


def check_by_annotation(name: str, value: Any, annotation: object) -> None:
    """The check of a parameter declared without :func:`param`, read from its type
    annotation (``float``: ``"finite"``, ``bool``, ``tuple[float, ...]``: a list of
    positive numbers, ...); a parameter of another type is left to its system.

    Raises
    ------
    ConfigError
        As :func:`check_param`.
    """
    check = _BY_ANNOTATION.get(str(annotation))
    if check is not None:
        check_param(name, value, check)
