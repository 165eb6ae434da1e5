"""Numba kernels of the compiled CSV writer (:mod:`podium.io._csv_rows`), and the
shortest round-trip text of a double (Ryu) that they write.

Row kernels
-----------
A block of rows is written in three steps:

1. the gathers (:func:`gather_floats`, :func:`gather_ints`, :func:`gather_keys`) copy
   each column's values of the block's rows into one row of a 2-D array per kind
   (``floats``, ``ints``, ``keys``).  Rows in handle order read the columns at random;
   a loop that does nothing but load waits far less on the cache misses than one that
   also formats (about 4x faster on millions of rows);
2. :func:`chunk_capacity` bounds the text of each chunk of :data:`CHUNK` rows (the
   exact length of its strings plus the longest text of each number);
3. :func:`write_chunks` writes each chunk's rows at its own offset (``prange`` over the
   chunks): fields in column order, separated by ``,``, each row ended by ``\\n``.
   The chunks' texts, back to back, are the block's CSV text.

Column ``j`` of a row is of kind ``kinds[j]`` (:data:`FLOAT`, :data:`INT`,
:data:`TEXT`) and is row ``slot[j]`` of the array of its kind.  A text field is the
string ``data[offsets[k]:offsets[k + 1]]`` of its key ``k`` (negative: an empty
field); NaN is an empty field.

The ``parallel=True`` kernels are called from Python only.

Numbers
-------
:func:`format_double` writes the text that ``pyarrow.compute.cast(x, pa.string())``
(and Arrow's CSV writer) writes for a float64: double-conversion's ``ToShortest``
with Arrow's settings --

* the shortest decimal digits that read back as the same double (the closest such,
  ties to even), found by Ryu's ``d2d`` (Ulf Adams, "Ryū: fast float-to-string
  conversion", PLDI 2018);
* decimal notation when the scientific exponent ``e`` has ``-6 <= e < 10``
  (``1500``, ``0.000001``, ``1000000000``, ``0.30000000000000004``), otherwise
  ``d[.ddd]e+X`` / ``d[.ddd]e-X`` (``1e+10``, ``1.2345e-7``, ``5e-324``);
* ``-0`` for negative zero, ``inf`` / ``-inf``; NaN is written as nothing (an empty
  CSV field: :mod:`podium.io.results` writes NaN as a missing value).

:func:`format_int` writes an int64 as Arrow casts it (plain decimal).

Ryu needs 64 x 128-bit products: the high half of a 64 x 64-bit product is one
LLVM ``i128`` multiply (:func:`_mulhi`, a Numba intrinsic), the rest is ``uint64``
arithmetic (Numba types a mix of int64 and uint64 as float64, so every unsigned
quantity here is explicitly ``np.uint64``).  The tables of powers of five are
computed at import with Python integers (:func:`_pow5_tables`).

Both live in one module on purpose: Numba's on-disk cache of a kernel is
invalidated by a change of the kernel's own file only, so a change of the number
formatting in another module would leave stale compiled row kernels behind.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

__all__ = ["MAX_FLOAT_CHARS", "MAX_INT_CHARS", "format_double", "format_int", "shortest_digits",
           "CHUNK", "FLOAT", "INT", "TEXT", "gather_floats", "gather_ints", "gather_keys",
           "chunk_capacity", "write_chunks"]

#: The longest text of a double: ``-0.0000012345678901234567`` (25 characters).
MAX_FLOAT_CHARS = 25
#: The longest text of an int64: ``-9223372036854775808`` (20 characters).
MAX_INT_CHARS = 20

_MANTISSA_BITS = 52
_BIAS = 1023
_POW5_INV_BITCOUNT = 125
_POW5_BITCOUNT = 125
_INV_TABLE_SIZE = 342  # 5^q for q <= log10(2^(2046 - 1075)) = 292 < 342
_TABLE_SIZE = 326  # 5^i for i <= 1074 + 2 - log10(5^1076) < 326


def _pow5_tables() -> tuple[np.ndarray, np.ndarray]:
    """Ryu's ``DOUBLE_POW5_INV_SPLIT`` and ``DOUBLE_POW5_SPLIT`` as ``(n, 2)`` uint64
    arrays of (low, high) 64-bit halves.

    ``inv[q] = floor(2^(bits(5^q) - 1 + 125) / 5^q) + 1`` and
    ``pow[i] = 5^i`` scaled by a power of two to exactly 125 bits.
    """
    inv = np.zeros((_INV_TABLE_SIZE, 2), dtype=np.uint64)
    pw = np.zeros((_TABLE_SIZE, 2), dtype=np.uint64)
    mask = (1 << 64) - 1
    for q in range(_INV_TABLE_SIZE):
        p = 5**q
        v = (1 << (p.bit_length() - 1 + _POW5_INV_BITCOUNT)) // p + 1
        inv[q] = (v & mask, v >> 64)
    for i in range(_TABLE_SIZE):
        p = 5**i
        shift = p.bit_length() - _POW5_BITCOUNT
        v = p >> shift if shift >= 0 else p << -shift
        pw[i] = (v & mask, v >> 64)
    return inv, pw


_POW5_INV_SPLIT, _POW5_SPLIT = _pow5_tables()

#: "00" "01" ... "99": two decimal digits per division by 100.
_DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode("ascii"),
                             dtype=np.uint8).copy()

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U4 = np.uint64(4)
_U5 = np.uint64(5)
_U10 = np.uint64(10)
_U50 = np.uint64(50)
_U63 = np.uint64(63)
_U64 = np.uint64(64)
_U100 = np.uint64(100)
_E8 = np.uint64(10**8)
_MANTISSA_MASK = np.uint64((1 << _MANTISSA_BITS) - 1)
_HIDDEN_BIT = np.uint64(1 << _MANTISSA_BITS)
_EXP_MASK = np.uint64(0x7FF)
_ZERO = 48  # ord("0")


@nb.njit(cache=True, nogil=True, inline="always")
def _pow5bits(e: int) -> int:
    """``ceil(log2(5^e))`` for ``0 <= e <= 3528`` (1 for ``e = 0``)."""
    return ((e * 1217359) >> 19) + 1


@nb.njit(cache=True, nogil=True, inline="always")
def _log10_pow2(e: int) -> int:
    """``floor(log10(2^e))`` for ``0 <= e <= 1650``."""
    return (e * 78913) >> 18


@nb.njit(cache=True, nogil=True, inline="always")
def _log10_pow5(e: int) -> int:
    """``floor(log10(5^e))`` for ``0 <= e <= 2620``."""
    return (e * 732923) >> 20


@nb.njit(cache=True, nogil=True, inline="always")
def _pow5_factor(value: np.uint64) -> int:
    count = 0
    while value % _U5 == _U0:
        value = value // _U5
        count += 1
    return count


@intrinsic
def _mulhi(typingctx: Any, a: Any, b: Any) -> Any:
    """The high 64 bits of the 128-bit product of two uint64 (one ``mul`` instruction)."""
    if a != types.uint64 or b != types.uint64:
        return None
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return sig, codegen


@nb.njit(cache=True, nogil=True, inline="always")
def _umul128(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """``a * b`` as (low, high) 64-bit halves."""
    return a * b, _mulhi(a, b)  # type: ignore[call-arg]  # a Numba intrinsic


@nb.njit(cache=True, nogil=True, inline="always")
def _shift_right128(lo: np.uint64, hi: np.uint64, dist: int) -> np.uint64:
    """``(hi * 2^64 + lo) >> dist`` (low 64 bits) for ``0 < dist < 64``."""
    d = np.uint64(dist)
    return (hi << (_U64 - d)) | (lo >> d)


@nb.njit(cache=True, nogil=True, inline="always")
def _mul_shift_all64(m: np.uint64, mul_lo: np.uint64, mul_hi: np.uint64, j: int,
                     mm_shift: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64]:
    """``(4m * mul) >> j``, ``((4m + 2) * mul) >> j`` and ``((4m - 1 - mm_shift) * mul)
    >> j`` (``vr``, ``vp``, ``vm``) from the two products of ``2m`` (Ryu's
    ``mulShiftAll64``; ``m`` has at most 53 bits, ``64 < j - 1 < 128``)."""
    m = m << _U1
    lo, tmp = _umul128(m, mul_lo)
    lo1, hi = _umul128(m, mul_hi)
    mid = tmp + lo1
    hi += _U1 if mid < tmp else _U0
    lo2 = lo + mul_lo
    mid2 = mid + mul_hi + (_U1 if lo2 < lo else _U0)
    hi2 = hi + (_U1 if mid2 < mid else _U0)
    vp = _shift_right128(mid2, hi2, j - 65)
    if mm_shift == _U1:
        lo3 = lo - mul_lo
        mid3 = mid - mul_hi - (_U1 if lo3 > lo else _U0)
        hi3 = hi - (_U1 if mid3 > mid else _U0)
        vm = _shift_right128(mid3, hi3, j - 65)
    else:
        lo3 = lo + lo
        mid3 = mid + mid + (_U1 if lo3 < lo else _U0)
        hi3 = hi + hi + (_U1 if mid3 < mid else _U0)
        lo4 = lo3 - mul_lo
        mid4 = mid3 - mul_hi - (_U1 if lo4 > lo3 else _U0)
        hi4 = hi3 - (_U1 if mid4 > mid3 else _U0)
        vm = _shift_right128(mid4, hi4, j - 64)
    vr = _shift_right128(mid, hi, j - 65)
    return vr, vp, vm


@nb.njit(cache=True, nogil=True)
def shortest_digits(ieee_mantissa: np.uint64, ieee_exponent: int) -> tuple[np.uint64, int]:
    """Ryu's ``d2d``: the shortest decimal ``(digits, exponent)`` with
    ``digits * 10^exponent`` reading back as the finite, non-zero double of the given
    IEEE fields (the closest such; halfway cases to even)."""
    if ieee_exponent == 0:
        e2 = 1 - _BIAS - _MANTISSA_BITS - 2
        m2 = ieee_mantissa
    else:
        e2 = ieee_exponent - _BIAS - _MANTISSA_BITS - 2
        m2 = _HIDDEN_BIT | ieee_mantissa
    even = (m2 & _U1) == _U0
    accept_bounds = even
    mv = _U4 * m2
    mm_shift = _U1 if (ieee_mantissa != _U0 or ieee_exponent <= 1) else _U0
    vm_trailing = False
    vr_trailing = False
    if e2 >= 0:
        q = _log10_pow2(e2) - (1 if e2 > 3 else 0)
        e10 = q
        k = _POW5_INV_BITCOUNT + _pow5bits(q) - 1
        i = -e2 + q + k
        mul_lo = _POW5_INV_SPLIT[q, 0]
        mul_hi = _POW5_INV_SPLIT[q, 1]
        vr, vp, vm = _mul_shift_all64(m2, mul_lo, mul_hi, i, mm_shift)
        if q <= 21:
            # at most 22 digits: 5^q may divide mv (vr, vm or vp is then exact)
            if mv % _U5 == _U0:
                vr_trailing = _pow5_factor(mv) >= q
            elif accept_bounds:
                vm_trailing = _pow5_factor(mv - _U1 - mm_shift) >= q
            elif _pow5_factor(mv + _U2) >= q:
                vp -= _U1
    else:
        q = _log10_pow5(-e2) - (1 if -e2 > 1 else 0)
        e10 = q + e2
        i = -e2 - q
        k = _pow5bits(i) - _POW5_BITCOUNT
        j = q - k
        mul_lo = _POW5_SPLIT[i, 0]
        mul_hi = _POW5_SPLIT[i, 1]
        vr, vp, vm = _mul_shift_all64(m2, mul_lo, mul_hi, j, mm_shift)
        if q <= 1:
            # mv has at least q trailing binary zeros: vr is exact
            vr_trailing = True
            if accept_bounds:
                vm_trailing = mm_shift == _U1
            else:
                vp -= _U1
        elif q < 63:
            # the full product has at least q trailing zeros iff mv has q binary ones
            vr_trailing = (mv & ((_U1 << np.uint64(q)) - _U1)) == _U0
    removed = 0
    last_removed = _U0
    if vm_trailing or vr_trailing:
        # the rare general case
        while vp // _U10 > vm // _U10:
            vm_trailing = vm_trailing and (vm % _U10 == _U0)
            vr_trailing = vr_trailing and (last_removed == _U0)
            last_removed = vr % _U10
            vr = vr // _U10
            vp = vp // _U10
            vm = vm // _U10
            removed += 1
        if vm_trailing:
            while vm % _U10 == _U0:
                vr_trailing = vr_trailing and (last_removed == _U0)
                last_removed = vr % _U10
                vr = vr // _U10
                vp = vp // _U10
                vm = vm // _U10
                removed += 1
        if vr_trailing and last_removed == _U5 and vr % _U2 == _U0:
            last_removed = _U4  # exactly halfway: round to even
        up = (vr == vm and (not accept_bounds or not vm_trailing)) or last_removed >= _U5
        output = vr + (_U1 if up else _U0)
    else:
        # the common case: no trailing zeros to track
        round_up = False
        if vp // _U100 > vm // _U100:
            round_up = bool(vr % _U100 >= _U50)
            vr = vr // _U100
            vp = vp // _U100
            vm = vm // _U100
            removed += 2
        while vp // _U10 > vm // _U10:
            round_up = bool(vr % _U10 >= _U5)
            vr = vr // _U10
            vp = vp // _U10
            vm = vm // _U10
            removed += 1
        output = vr + (_U1 if (vr == vm or round_up) else _U0)
    return output, e10 + removed


_POW10 = np.array([10**k for k in range(20)], dtype=np.uint64)


@nb.njit(cache=True, nogil=True, inline="always")
def _decimal_length(v: np.uint64) -> int:
    """The number of decimal digits of ``v`` (1 for 0): a binary search of the powers
    of ten."""
    lo = 1
    hi = 20
    while lo < hi:  # the answer is in [lo, hi]
        mid = (lo + hi) >> 1
        if v >= _POW10[mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _div_tables() -> tuple[np.ndarray, np.ndarray]:
    """Multipliers and shifts that divide by ``10^k`` (``1 <= k <= 19``): for
    ``s = floor(log2(10^k))`` and ``M = ceil(2^(64 + s) / 10^k)`` (below ``2^64``),
    ``v // 10^k == (v * M) >> (64 + s)`` for every ``v < 2^57``, which holds all the
    digits Ryu makes (at most 17): the error ``e = M 10^k - 2^(64 + s) < 10^k
    < 2^(s + 1)`` makes ``v e < 2^(64 + s)``."""
    magic = np.zeros(20, dtype=np.uint64)
    shift = np.zeros(20, dtype=np.uint64)
    for k in range(1, 20):
        d = 10**k
        s = d.bit_length() - 1
        m = -((-1 << (64 + s)) // d)
        assert m < 1 << 64 and (m * d - (1 << (64 + s))) << 57 < 1 << (64 + s)
        magic[k] = m
        shift[k] = s
    return magic, shift


_DIV_MAGIC, _DIV_SHIFT = _div_tables()


@nb.njit(cache=True, nogil=True, inline="always")
def _div_pow10(v: np.uint64, k: int) -> np.uint64:
    """``v // 10^k`` for ``v < 2^57`` and ``1 <= k <= 19``, by a multiply."""
    _, hi = _umul128(v, _DIV_MAGIC[k])
    return hi >> _DIV_SHIFT[k]


@nb.njit(cache=True, nogil=True, inline="always")
def _put_small(v: np.uint32, n: int, out: np.ndarray, end: int) -> None:
    """The last ``n`` decimal digits of ``v < 2^32`` ending at ``out[end - 1]``, two at a
    time (32-bit arithmetic)."""
    while n >= 2:
        r = np.int64(v % np.uint32(100))
        v = v // np.uint32(100)
        end -= 2
        out[end] = _DIGIT_PAIRS[2 * r]
        out[end + 1] = _DIGIT_PAIRS[2 * r + 1]
        n -= 2
    if n:
        out[end - 1] = _ZERO + np.int64(v % np.uint32(10))


@nb.njit(cache=True, nogil=True, inline="always")
def _put_digits(v: np.uint64, n: int, out: np.ndarray, pos: int) -> None:
    """The ``n`` decimal digits of ``v`` at ``out[pos:pos + n]``: the number is cut into
    8-digit pieces, each written with 32-bit arithmetic."""
    end = pos + n
    while n > 8:
        q = v // _E8
        _put_small(np.uint32(v - q * _E8), 8, out, end)
        v = q
        end -= 8
        n -= 8
    _put_small(np.uint32(v), n, out, end)


@nb.njit(cache=True, nogil=True)
def format_double(x: float, out: np.ndarray, pos: int) -> int:
    """Write the text of ``x`` (Arrow's spelling, see the module notes) at
    ``out[pos:]`` (a uint8 array with room for :data:`MAX_FLOAT_CHARS`) and return its
    length; NaN writes nothing (length 0)."""
    bits = np.uint64(np.float64(x).view(np.uint64))
    negative = (bits >> _U63) != _U0
    ieee_mantissa = bits & _MANTISSA_MASK
    ieee_exponent = int((bits >> np.uint64(_MANTISSA_BITS)) & _EXP_MASK)
    p = pos
    if ieee_exponent == 0x7FF:
        if ieee_mantissa != _U0:
            return 0  # NaN: an empty field
        if negative:
            out[p] = 45  # "-"
            p += 1
        out[p] = 105  # "inf"
        out[p + 1] = 110
        out[p + 2] = 102
        return p + 3 - pos
    if negative:
        out[p] = 45
        p += 1
    if ieee_exponent == 0 and ieee_mantissa == _U0:
        out[p] = _ZERO
        return p + 1 - pos
    digits, exp = shortest_digits(ieee_mantissa, ieee_exponent)
    n = _decimal_length(digits)
    point = exp + n  # digits before the decimal point
    sci = point - 1  # the scientific exponent
    if -6 <= sci < 10:
        if point <= 0:  # 0.000ddd
            out[p] = _ZERO
            out[p + 1] = 46  # "."
            p += 2
            for _ in range(-point):
                out[p] = _ZERO
                p += 1
            _put_digits(digits, n, out, p)
            p += n
        elif point >= n:  # ddd000
            _put_digits(digits, n, out, p)
            p += n
            for _ in range(point - n):
                out[p] = _ZERO
                p += 1
        else:  # dd.ddd
            frac = n - point
            whole = _div_pow10(digits, frac)
            _put_digits(whole, point, out, p)
            out[p + point] = 46
            _put_digits(digits - whole * _POW10[frac], frac, out, p + point + 1)
            p += n + 1
    else:  # d.ddde+X
        _put_digits(digits, n, out, p + 1)
        out[p] = out[p + 1]
        if n > 1:
            out[p + 1] = 46
            p += n + 1
        else:
            p += 1
        out[p] = 101  # "e"
        out[p + 1] = 45 if sci < 0 else 43  # "-" / "+"
        p += 2
        a = -sci if sci < 0 else sci
        m = 1 if a < 10 else (2 if a < 100 else 3)
        _put_digits(np.uint64(a), m, out, p)
        p += m
    return p - pos


@nb.njit(cache=True, nogil=True)
def format_int(v: int, out: np.ndarray, pos: int) -> int:
    """Write the decimal text of the int64 ``v`` at ``out[pos:]`` (room for
    :data:`MAX_INT_CHARS`) and return its length."""
    p = pos
    if v < 0:
        out[p] = 45
        p += 1
        # the magnitude, also of -2^63, in uint64
        mag = ~np.uint64(v) + _U1
    else:
        mag = np.uint64(v)
    n = _decimal_length(mag)
    _put_digits(mag, n, out, p)
    return p + n - pos


# ======================================================================================
# row kernels
# ======================================================================================

#: Rows per chunk (the unit of work of a thread).
CHUNK = 4096
#: Kinds of columns.
FLOAT = 0
INT = 1
TEXT = 2

_COMMA = 44
_NEWLINE = 10


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_floats(values: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = values[rows[i]]`` (float64)."""
    for i in nb.prange(rows.size):
        out[i] = values[rows[i]]


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_ints(values: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = values[rows[i]]`` (int64)."""
    for i in nb.prange(rows.size):
        out[i] = values[rows[i]]


@nb.njit(cache=True, nogil=True, parallel=True)
def gather_keys(keys: np.ndarray, rows: np.ndarray, base: int, out: np.ndarray) -> None:
    """``out[i] = keys[rows[i]] + base``, or -1 where the key is negative (a null)."""
    for i in nb.prange(rows.size):
        k = keys[rows[i]]
        out[i] = k + base if k >= 0 else -1


@nb.njit(cache=True, nogil=True, parallel=True)
def chunk_capacity(keys: np.ndarray, offsets: np.ndarray, m: int, fixed: int,
                   cap: np.ndarray) -> None:
    """``cap[c]``: room for the text of the rows ``c * CHUNK ..`` of the block (``m``
    rows): their strings (``keys``, one row per text column) plus ``fixed`` bytes per
    row (the longest text of its numbers, and the separators)."""
    for c in nb.prange(cap.size):
        lo = c * CHUNK
        hi = min(m, lo + CHUNK)
        total = fixed * (hi - lo)
        for t in range(keys.shape[0]):
            for i in range(lo, hi):
                k = keys[t, i]
                if k >= 0:
                    total += offsets[k + 1] - offsets[k]
        cap[c] = total


@nb.njit(cache=True, nogil=True, parallel=True)
def write_chunks(floats: np.ndarray, ints: np.ndarray, keys: np.ndarray, offsets: np.ndarray,
                 data: np.ndarray, kinds: np.ndarray, slot: np.ndarray, m: int,
                 starts: np.ndarray, out: np.ndarray, used: np.ndarray) -> None:
    """Write the CSV rows of the block (``m`` rows) chunk by chunk: chunk ``c`` at
    ``out[starts[c]:]``, its length into ``used[c]``."""
    ncols = kinds.size
    for c in nb.prange(starts.size):
        p = starts[c]
        for i in range(c * CHUNK, min(m, (c + 1) * CHUNK)):
            for j in range(ncols):
                kind = kinds[j]
                s = slot[j]
                if kind == FLOAT:
                    p += format_double(floats[s, i], out, p)
                elif kind == INT:
                    p += format_int(ints[s, i], out, p)
                else:
                    k = keys[s, i]
                    if k >= 0:
                        a = offsets[k]
                        n = offsets[k + 1] - a
                        for t in range(n):
                            out[p + t] = data[a + t]
                        p += n
                out[p] = _COMMA if j < ncols - 1 else _NEWLINE
                p += 1
        used[c] = p - starts[c]


#: The most bytes a number's field takes, by kind (text: 0, its strings are counted).
FIXED_WIDTH = (MAX_FLOAT_CHARS, MAX_INT_CHARS, 0)
