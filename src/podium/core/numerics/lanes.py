"""Sums of logistic terms written so that LLVM runs them in SIMD lanes.

The whole-history smoother (``mmr-smooth``) spends most of its time in sums
``sum_j w_j tanh((x - c_j) a_j)`` and their derivatives, the logistic terms of
[EbtekarLiu2021, Eq. 6] (a player's belief) and Thm 3.2 (a round's performance
equation).  :func:`~podium.core.numerics.special.tanh_sech2` calls libm's ``exp``,
which LLVM cannot vectorise without a vector math library (Numba has none unless
Intel's SVML is installed), and Numba's default Python error model checks every
division for zero, which also stops the loop vectoriser.  Here:

* :func:`exp_neg` is ``exp(u)`` for ``u <= 0`` from arithmetic alone:
  ``exp(u / 128)`` by its Taylor polynomial of degree 12 (remainder below 5e-17 on
  ``[-40/128, 0]``), squared seven times.  Relative error at most 3e-14 (the squarings
  double it seven times; ``tests/test_numerics_lanes.py`` asserts it), against
  1e-16 for libm.  The argument is clamped to :data:`EXP_FLOOR`.
* :func:`tanh_sech2_lanes` is :func:`~podium.core.numerics.special.tanh_sech2` on
  :func:`exp_neg`: ``tanh`` exact to 2e-14 in absolute terms.  Beyond ``|z| = 20`` it
  returns ``tanh = +-1`` exactly (as libm does, ``exp(-40)`` being below half an ulp
  of 1) and ``sech^2 = 4 exp(-40)`` (1.7e-17) instead of the smaller true value: a
  derivative that stays positive, as the Newton solves need.
* :func:`logistic_sums` adds the terms; callers compile with :data:`SIMD_MATH` and
  ``error_model="numpy"`` (the flags of the function a kernel inlines into are the
  ones LLVM sees), so that the sums split into lanes.  Sums of fewer than
  :data:`SIMD_MIN_TERMS` terms take libm's ``exp``: the vector body takes 8 terms at
  a time and a shorter sum runs the scalar remainder only.

Rounding differs from the scalar loop (the lanes add in another order, and
``exp_neg`` is 3e-14 where libm is 1e-16), so results move in their last digits:
on the first 300 and 600 Codeforces contests the smoother's performances and ratings
moved by at most 2e-8 rating points, the size of its solvers' own stopping steps
(docs/history.md, "The sums in SIMD lanes").
"""

from __future__ import annotations

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.special import tanh_sech2

__all__ = ["SIMD_MATH", "SIMD_MIN_TERMS", "EXP_FLOOR", "exp_neg", "tanh_sech2_lanes",
           "logistic_sums"]

#: Numba's ``fastmath`` flags of a kernel whose sums should run in lanes:
#: reassociation lets LLVM split a sum into partial sums, ``contract`` fuses
#: multiply-adds, ``nsz`` and ``arcp`` drop the sign of zero and allow reciprocals.
#: No ``nnan``/``ninf``: infinities and NaN keep their meaning.
SIMD_MATH = {"reassoc", "contract", "nsz", "arcp"}
#: Sums of fewer terms than this use libm's ``exp`` (the scalar remainder of a vector
#: loop of 4 lanes, unrolled twice).
SIMD_MIN_TERMS = 8
#: :func:`exp_neg` clamps its argument to this: ``exp(-40) = 4.2e-18``, below half an
#: ulp of 1, so that ``tanh`` beyond it is exactly +-1.
EXP_FLOOR = -40.0
#: ``1 / 128``: the argument's scale before the seven squarings.
_SCALE = 0.0078125


@nb.njit(cache=True, inline="always")
def exp_neg(u: float) -> float:
    """``exp(u)`` for ``EXP_FLOOR <= u <= 0`` (larger negative ``u`` give
    ``exp(EXP_FLOOR)``), relative error below 3e-14, without a library call: the
    Taylor polynomial of ``exp(u / 128)`` (degree 12, Horner) squared seven times."""
    r = max(u, EXP_FLOOR) * _SCALE
    p = 1.0 + r * (1.0 + r * (1.0 / 2.0 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (
        1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0 + r * (1.0 / 40320.0 + r * (
            1.0 / 362880.0 + r * (1.0 / 3628800.0 + r * (1.0 / 39916800.0
                                                      + r / 479001600.0)))))))))))
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    return p * p


@nb.njit(cache=True, inline="always")
def tanh_sech2_lanes(z: float) -> tuple[float, float]:
    """``(tanh z, sech^2 z)`` as :func:`~podium.core.numerics.special.tanh_sech2`, on
    :func:`exp_neg` so that a loop of them vectorises (absolute error of ``tanh``
    below 2e-14; ``sech^2`` never below ``4 exp(EXP_FLOOR)``)."""
    e = exp_neg(-2.0 * abs(z))
    d = 1.0 + e
    t = (1.0 - e) / d
    t = -t if z < 0.0 else t
    return t, 4.0 * e / (d * d)


@nb.njit(cache=True, inline="always")
def logistic_sums(x: float, centre: np.ndarray, w_out: np.ndarray, w_arg: np.ndarray,
                  a: int, b: int) -> tuple[float, float]:
    """``sum_{a <= j < b} w_out_j tanh((x - centre_j) w_arg_j)`` and its derivative in
    ``x``, ``sum_j w_out_j w_arg_j sech^2(..)`` ([EbtekarLiu2021, Eq. 6]'s logistic
    factors; a round's ``Phi`` of Thm 3.2 is minus this).

    In lanes (:func:`tanh_sech2_lanes`) from :data:`SIMD_MIN_TERMS` terms on, through
    libm's ``exp`` below.  Inline it into a kernel compiled with ``fastmath=SIMD_MATH,
    error_model="numpy"``, else the loop stays scalar.
    """
    f = 0.0
    fp = 0.0
    if b - a < SIMD_MIN_TERMS:
        for j in range(a, b):
            t, d2 = tanh_sech2((x - centre[j]) * w_arg[j])
            f += w_out[j] * t
            fp += w_out[j] * w_arg[j] * d2
        return f, fp
    for j in range(a, b):
        t, d2 = tanh_sech2_lanes((x - centre[j]) * w_arg[j])
        f += w_out[j] * t
        fp += w_out[j] * w_arg[j] * d2
    return f, fp
