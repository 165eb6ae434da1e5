"""Special functions of the rating models: the standard normal density, CDF and
hazard (through the scaled complementary error function ``erfcx``) and the
logistic ``tanh``/``sech^2`` terms.

Conventions follow the Elo-MMR paper ([EbtekarLiu2021]): a rating ``(mu, sigma)`` entering a
round becomes an opponent term of spread ``delta = sqrt(sigma**2 + beta**2)``; its
logistic form (Sec. 3.1) has ``w_out = pi / (sqrt(3) delta)``, ``w_arg = w_out / 2``
and value ``-w_out * tanh((x - mu) * w_arg)``.
"""

from __future__ import annotations

import math

import numba as nb

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.constants import TANH_MULTIPLIER

__all__ = [
    "TANH_MULTIPLIER",
    "TAIL_Z",
    "normal_pdf",
    "normal_cdf",
    "erfcx",
    "normal_hazard",
    "tanh_sech2",
    "fast_tanh",
    "own_logistic_term",
]

#: Beyond this many deviations the Gaussian terms go through the normal hazard (the
#: plain quotients of tail probabilities would underflow to 0/0 near 38).
TAIL_Z = 30.0

INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
INV_SQRT2 = 1.0 / math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
#: Beyond this argument ``erfcx`` uses its asymptotic series (``exp(x^2)`` overflows
#: near 26.6).
_ERFCX_SERIES_FROM = 25.0


@nb.njit(cache=True)
def normal_pdf(z: float) -> float:
    """Standard normal density ``phi(z)``."""
    return INV_SQRT_2PI * math.exp(-0.5 * z * z)


@nb.njit(cache=True)
def normal_cdf(z: float) -> float:
    """Standard normal CDF ``Phi(z)`` via ``erfc`` (accurate in the lower tail)."""
    return 0.5 * math.erfc(-z * INV_SQRT2)


@nb.njit(cache=True)
def erfcx(x: float) -> float:
    """The scaled complementary error function ``exp(x^2) erfc(x)`` for ``x >= 0``.

    Directly while ``exp(x^2)`` is finite (``x < 25``), beyond from the asymptotic
    series ``1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k``, ``k = 0..7``: the first
    omitted term is below 3e-19 relative for ``x >= 25``.
    """
    if x < _ERFCX_SERIES_FROM:
        return math.exp(x * x) * math.erfc(x)
    u = 1.0 / (2.0 * x * x)
    series = 1.0 - 13.0 * u
    for k in (11.0, 9.0, 7.0, 5.0, 3.0, 1.0):
        series = 1.0 - k * u * series
    return series / (x * _SQRT_PI)


@nb.njit(cache=True)
def normal_hazard(t: float) -> float:
    """``phi(t) / (1 - Phi(t))``, the normal hazard (inverse Mills ratio), at any ``t``.

    The plain quotient is 0/0 once the tail underflows (``t`` past ~38), so for
    ``t >= 0`` it is ``sqrt(2/pi) / erfcx(t/sqrt 2)`` (:func:`erfcx`).  For
    ``t -> +inf`` the hazard tends to ``t``.
    """
    if t < 0.0:
        return normal_pdf(t) / (0.5 * math.erfc(t * INV_SQRT2))
    return _SQRT_2_OVER_PI / erfcx(t * INV_SQRT2)


@nb.njit(cache=True, inline="always")
def tanh_sech2(z: float) -> tuple[float, float]:
    """``(tanh z, sech^2 z)`` from one ``exp``, accurate in absolute terms everywhere.

    ``1 - tanh(z)**2`` rounds to exactly 0 for ``|z| > 19``; a Newton step with such
    a derivative would divide by zero.  Here ``sech^2`` stays positive until
    ``exp(-2|z|)`` underflows (``|z| > 354``), as ``cosh(z)**-2`` would.
    """
    e = math.exp(-2.0 * abs(z))  # in (0, 1]; one exp is ~2.5x cheaper than libm tanh
    d = 1.0 + e
    t = (1.0 - e) / d
    if z < 0.0:
        t = -t
    return t, 4.0 * e / (d * d)


@nb.njit(cache=True, inline="always")
def fast_tanh(z: float) -> float:
    """``tanh(z)`` from one ``exp``, exact to ~1e-16 in absolute terms (what sums need)."""
    e = math.exp(-2.0 * abs(z))
    t = (1.0 - e) / (1.0 + e)
    return t if z >= 0.0 else -t


@nb.njit(cache=True, inline="always")
def own_logistic_term(x: float, mu: float, w: float) -> tuple[float, float]:
    """A logistic term ``-w tanh((x - mu) w)`` and its derivative in ``x``.

    Parameters
    ----------
    x:
        Where to evaluate.
    mu, w:
        The term's centre and weight ``1/delta``.

    Returns
    -------
    value, deriv : float
    """
    t, d2 = tanh_sech2((x - mu) * w)
    return -w * t, -w * w * d2
