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

from podium.errors import ConfigError

__all__ = ["Check", "check_param", "param"]

T = TypeVar("T")

#: The checks :func:`param` knows (see :func:`check_param` for what each accepts).
Check = Literal[
    "finite", "positive", "nonnegative", "positive_or_inf", "nonnegative_or_inf",
    "open_unit", "positive_int", "positive_int_or_none", "bool", "number_or_none",
    "rate_or_skip",
]


def _real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _integer(v: object) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


#: check -> (test, what the value must be); the error reads ``"{name} must be {what}"``.
_CHECKS: dict[str, tuple[Any, str]] = {
    "finite": (lambda v: _real(v) and math.isfinite(v), "finite"),
    "positive": (lambda v: _real(v) and math.isfinite(v) and v > 0,
                 "a finite positive number"),
    "nonnegative": (lambda v: _real(v) and math.isfinite(v) and v >= 0,
                    "a finite number >= 0"),
    "positive_or_inf": (lambda v: _real(v) and v > 0, "positive (math.inf allowed)"),
    "nonnegative_or_inf": (lambda v: _real(v) and v >= 0, ">= 0 (math.inf allowed)"),
    "open_unit": (lambda v: _real(v) and 0.0 < v < 1.0, "a number in (0, 1)"),
    "positive_int": (lambda v: _integer(v) and v >= 1, "a positive integer"),
    "positive_int_or_none": (lambda v: v is None or (_integer(v) and v >= 1),
                             "a positive integer or None"),
    "bool": (lambda v: isinstance(v, bool), "True or False"),
    "number_or_none": (lambda v: v is None or (_real(v) and not math.isnan(v)),
                       "a number or None"),
    "rate_or_skip": (lambda v: isinstance(v, str) and v in ("rate", "skip"),
                     "'rate' or 'skip'"),
}


def check_param(name: str, value: Any, check: Check) -> None:
    """Raise :class:`~podium.errors.ConfigError` unless ``value`` passes ``check``.

    Checks: ``"finite"``; ``"positive"`` (finite, > 0); ``"nonnegative"`` (finite,
    >= 0); ``"positive_or_inf"`` / ``"nonnegative_or_inf"`` (``math.inf`` allowed,
    NaN not); ``"open_unit"`` (in (0, 1)); ``"positive_int"`` and
    ``"positive_int_or_none"``; ``"bool"``; ``"number_or_none"`` (not NaN);
    ``"rate_or_skip"`` (the string ``"rate"`` or ``"skip"``).  Numbers
    are real numbers other than ``bool`` (NumPy scalars included).

    Raises
    ------
    ConfigError
        ``"{name} must be {what}, got {value!r}"``.
    """
    test, what = _CHECKS[check]
    if not test(value):
        raise ConfigError(f"{name} must be {what}, got {value!r}")


def param(default: T, check: Check | None = None) -> T:
    """A system parameter with a default and a validity check (run by
    :meth:`RatingSystem.__post_init__`), for use in a system's dataclass body::

        sig_noob: float = param(350.0, "positive")
    """
    meta = {} if check is None else {"check": check}
    out: T = dataclasses.field(default=default, metadata=meta)
    return out
