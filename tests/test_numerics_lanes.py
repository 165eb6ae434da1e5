"""The logistic sums in SIMD lanes (``podium.core.numerics.lanes``): their accuracy
against libm, and that they vectorise where the smoother's kernels inline them."""

from __future__ import annotations

import math
import platform
import re

import numba as nb
import numpy as np
import pytest

from podium.core.numerics.lanes import (
    EXP_FLOOR,
    SIMD_MATH,
    SIMD_MIN_TERMS,
    exp_neg,
    logistic_sums,
    tanh_sech2_lanes,
)


@nb.njit(fastmath=SIMD_MATH, error_model="numpy")
def _exp_all(u: np.ndarray) -> np.ndarray:
    out = np.empty(u.size)
    for i in range(u.size):
        out[i] = exp_neg(u[i])
    return out


@nb.njit(fastmath=SIMD_MATH, error_model="numpy")
def _tanh_all(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = np.empty(z.size)
    s2 = np.empty(z.size)
    for i in range(z.size):
        t[i], s2[i] = tanh_sech2_lanes(z[i])
    return t, s2


@nb.njit(fastmath=SIMD_MATH, error_model="numpy")
def _sums(x: float, c: np.ndarray, w_out: np.ndarray, w_arg: np.ndarray, a: int,
          b: int) -> tuple[float, float]:
    return logistic_sums(x, c, w_out, w_arg, a, b)


def test_exp_neg_relative_error_below_3e_14() -> None:
    u = np.concatenate([np.linspace(EXP_FLOOR, 0.0, 400_001), [0.0, -0.0, -1e-300,
                                                                -5e-324, EXP_FLOOR]])
    got = _exp_all(u)
    rel = np.abs(got / np.exp(u) - 1.0)
    assert rel.max() <= 3e-14
    assert _exp_all(np.array([0.0]))[0] == 1.0
    # below the floor: exp(EXP_FLOOR)
    below = _exp_all(np.array([-41.0, -700.0, -math.inf]))
    np.testing.assert_allclose(below, math.exp(EXP_FLOOR), rtol=3e-14)


def test_tanh_sech2_lanes_against_libm() -> None:
    z = np.concatenate([np.linspace(-25.0, 25.0, 200_001),
                        [-400.0, -20.0, -1e-9, 0.0, 1e-12, 20.0, 400.0]])
    t, s2 = _tanh_all(z)
    assert np.abs(t - np.tanh(z)).max() <= 2e-14
    inside = np.abs(z) <= 19.0
    np.testing.assert_allclose(s2[inside], 1.0 / np.cosh(z[inside]) ** 2, rtol=1e-12)
    # beyond |z| = 20: tanh exactly +-1, sech^2 positive and at most 4 exp(-40)
    far = np.abs(z) >= 20.0
    assert np.array_equal(t[far], np.sign(z[far]))
    assert (s2 > 0.0).all() and (s2[far] <= 4.0 * math.exp(EXP_FLOOR) * (1 + 1e-12)).all()


@pytest.mark.parametrize("n", [0, 1, 2, SIMD_MIN_TERMS - 1, SIMD_MIN_TERMS, 9, 16, 37, 300])
def test_logistic_sums_against_a_direct_sum(n: int) -> None:
    rng = np.random.default_rng(n)
    c = rng.normal(1500.0, 400.0, n)
    delta = rng.uniform(80.0, 400.0, n)
    w_out = math.pi / (math.sqrt(3.0) * delta) * rng.uniform(0.0, 1.0, n)
    w_arg = math.pi / (2.0 * math.sqrt(3.0) * delta)
    for x in (-2000.0, 900.0, 1500.0, 1501.25, 6000.0):
        f, fp = _sums(x, c, w_out, w_arg, 0, n)
        z = (x - c) * w_arg
        scale = w_out.sum() + 1e-300
        assert abs(f - np.sum(w_out * np.tanh(z))) <= 1e-14 * scale
        assert abs(fp - np.sum(w_out * w_arg / np.cosh(z) ** 2)) <= 1e-14 * scale * w_arg.max(
            initial=0.0)
    # a sub-range [a, b)
    if n >= 4:
        f, _ = _sums(1400.0, c, w_out, w_arg, 1, n - 1)
        ref = np.sum(w_out[1:n - 1] * np.tanh((1400.0 - c[1:n - 1]) * w_arg[1:n - 1]))
        assert abs(f - ref) <= 1e-14 * w_out.sum()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="checks x86-64 packed-double instructions")
def test_logistic_sums_vectorise_under_the_lanes_flags() -> None:
    """Inlined into a kernel compiled with ``SIMD_MATH`` and the NumPy error model, the
    sum runs in packed-double instructions (``divpd``: the ``tanh`` quotient); compiled
    with Numba's defaults (libm ``exp``, divisions checked for zero) it would not."""

    def body(x: float, c: np.ndarray, w_out: np.ndarray, w_arg: np.ndarray,
             n: int) -> tuple[float, float]:
        return logistic_sums(x, c, w_out, w_arg, 0, n)

    lanes = nb.njit(fastmath=SIMD_MATH, error_model="numpy")(body)
    plain = nb.njit(body)
    a = np.ones(16)
    lanes(0.0, a, a, a, 16)
    plain(0.0, a, a, a, 16)
    packed = re.compile(r"\bv?divpd\b")
    assert packed.search(next(iter(lanes.inspect_asm().values())))
    assert not packed.search(next(iter(plain.inspect_asm().values())))


def test_the_smoothers_hot_kernels_carry_the_lanes_flags() -> None:
    from podium.history import _smooth_beliefs, _smooth_groups

    for kernel in (_smooth_beliefs.robust_zero, _smooth_beliefs.gather,
                   _smooth_groups.phi_sums):
        options = kernel.targetoptions
        assert options.get("error_model") == "numpy", kernel
        assert {"reassoc", "contract"} <= set(options.get("fastmath", ())), kernel
