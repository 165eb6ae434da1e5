"""Numerics shared by every rating system: distributions, root finding, and the
fast evaluation of the performance equation over all opponents.

Everything here works on plain NumPy arrays and is compiled with Numba
(``cache=True``), so the first call of a session compiles or loads from the
on-disk cache, and later calls run at native speed.

Conventions follow the Elo-MMR paper (seed 002):

* A rating ``(mu, sigma)`` entering a round becomes an opponent term with spread
  ``delta = sqrt(sigma**2 + beta**2)``.
* Its logistic form is the tanh term of Sec. 3.1: ``w_out = pi / (sqrt(3) delta)``,
  ``w_arg = w_out / 2`` and value ``-w_out * tanh((x - mu) * w_arg)``.  The
  "weight" of such a term is ``w_arg * w_out * 2 / (pi**2 / 3)`` (``= 1/delta**2``
  when fresh; Eq. 8).
* The performance of player ``i`` is the zero of ``Q_i`` (Theorem 3.2), a sum
  over every term ``j`` -- including ``i``'s own -- of a loss term ``l_j`` if
  ``j`` placed strictly better, a win term ``v_j`` if strictly worse and a tie
  term ``d_j`` if tied.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = [
    "TANH_MULTIPLIER",
    "SOLVER_BOUNDS",
    "STATUS_OK",
    "STATUS_AT_BOUND",
    "STATUS_MAX_ITER",
    "normal_pdf",
    "normal_cdf",
    "normal_hazard",
    "newton_step",
    "tanh_sech2",
    "fast_tanh",
    "solve_robust_average",
    "robust_average_zero",
    "performance_zeros",
    "CHEB_NODES",
    "cheb_matrix",
    "clenshaw",
    "cheb_coefficients",
    "own_logistic_term",
    "panel_zero",
]

#: ``pi / sqrt(3)``: turns a standard deviation into the logistic tanh scale.
TANH_MULTIPLIER = math.pi / math.sqrt(3.0)
#: The bracket every Elo-MMR equation is solved on (as in multi-skill).
SOLVER_BOUNDS = (-6000.0, 9000.0)
_LO_BOUND, _HI_BOUND = SOLVER_BOUNDS
#: Safeguarded Newton: never cut more than this fraction of the bracket per step.
_MAX_CUT = 0.75
_MAX_ITER = 200

# Solver status codes (returned by the kernels, turned into warnings/errors in Python).
STATUS_OK = 0
#: The zero lies outside ``SOLVER_BOUNDS``; the bound was returned (as the reference does).
STATUS_AT_BOUND = 1
#: The iteration limit was hit before the bracket collapsed.
STATUS_MAX_ITER = 2

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
#: Beyond this many deviations the Gaussian terms go through the normal hazard (the
#: plain quotients of tail probabilities would underflow to 0/0 near 38).
_TAIL_Z = 30.0

# Chebyshev-Lobatto nodes per panel of the fast performance evaluation, see
# ``performance_zeros``: with panels of half-width sqrt(3)*delta_min/2 the
# interpolation error is below 1e-16 of the sum of the terms' magnitudes.
CHEB_NODES = 32


@nb.njit(cache=True, inline="always")
def normal_pdf(z: float) -> float:
    """Standard normal density."""
    return _INV_SQRT_2PI * math.exp(-0.5 * z * z)


@nb.njit(cache=True, inline="always")
def normal_cdf(z: float) -> float:
    """Standard normal CDF via ``erfc`` (accurate in the lower tail)."""
    return 0.5 * math.erfc(-z * _INV_SQRT2)


@nb.njit(cache=True, inline="always")
def tanh_sech2(z: float):
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
def newton_step(lo: float, hi: float, guess: float, value: float, deriv: float):
    """One step of a safeguarded Newton method for a *decreasing* function.

    The caller evaluates ``f(guess)`` and ``f'(guess)``.  The sign of ``f``
    moves the bracket ``(lo, hi)``; the Newton point is then clamped so that
    at most 75% of the bracket is cut away per step, and replaced by the
    midpoint when it is not finite or lies on the wrong side (a vanishing
    derivative).  Returns ``(lo, hi, new_guess, done)``; ``done`` is true when
    the new guess no longer lies strictly inside the bracket, i.e. the bracket
    has collapsed to adjacent floating-point numbers (or a bound was hit
    because the zero lies outside the initial bracket).
    """
    extrapolate = guess - value / deriv
    if value > 0.0:
        lo = guess
        ceil = lo + _MAX_CUT * (hi - lo)
        if extrapolate >= lo:
            new = extrapolate if extrapolate < ceil else ceil
        else:
            new = 0.5 * (lo + hi)
    else:
        hi = guess
        floor = hi - _MAX_CUT * (hi - lo)
        if extrapolate <= hi:
            new = extrapolate if extrapolate > floor else floor
        else:
            new = 0.5 * (lo + hi)
    done = not (lo < new < hi)
    return lo, hi, new, done


@nb.njit(cache=True)
def robust_average_zero(mu, w_arg, w_out, first, stop, scale, offset, slope, start):
    """Zero of ``offset + slope*x + scale * sum_k w_out[k] tanh((x - mu[k]) w_arg[k])``
    over ``k in [first, stop)``.

    This is ``L'(s)`` of Eq. 6 -- the rating as a robust average of past
    performances (Eq. 7) -- with the Gaussian factor ``(mu0, w0)`` passed as
    ``offset = -mu0 * w0`` and ``slope = w0``, and ``scale`` a common factor of
    the logistic weights.  Strictly increasing, so the zero is unique.

    Returns ``(x, status)``.
    """
    lo, hi = _LO_BOUND, _HI_BOUND
    guess = start
    if not (lo < guess < hi):
        guess = 0.5 * (lo + hi)
    for _ in range(_MAX_ITER):
        s = offset + slope * guess
        sp = slope
        for k in range(first, stop):
            t, d2 = tanh_sech2((guess - mu[k]) * w_arg[k])
            wo = w_out[k] * scale
            s += t * wo
            sp += d2 * w_arg[k] * wo
        if s == 0.0:
            return guess, STATUS_OK
        # increasing function: negate to use the decreasing-function step
        lo, hi, guess, done = newton_step(lo, hi, guess, -s, -sp)
        if done:
            if guess <= _LO_BOUND or guess >= _HI_BOUND:
                return guess, STATUS_AT_BOUND
            return guess, STATUS_OK
    return guess, STATUS_MAX_ITER


@nb.njit(cache=True)
def solve_robust_average(mu, w_arg, w_out, offset, slope, start):
    """:func:`robust_average_zero` over whole arrays (scale 1)."""
    return robust_average_zero(mu, w_arg, w_out, 0, mu.size, 1.0, offset, slope, start)


# --------------------------------------------------------------------------------------
# Term functions of the performance equation (Theorem 3.2).
# kind: 0 = logistic (tanh terms), 1 = Gaussian.  Each returns (l, l', v, v', d, d')
# for the loss, win and tie contributions of one opponent term at x.


@nb.njit(cache=True, inline="always")
def _logistic_terms(x: float, mu: float, w_arg: float, w_out: float, split_ties: bool):
    t, d2 = tanh_sech2((x - mu) * w_arg)
    val = -t * w_out
    vp = -d2 * w_arg * w_out
    if split_ties:
        return val - w_out, vp, val + w_out, vp, val, vp
    return val - w_out, vp, val + w_out, vp, 2.0 * val, 2.0 * vp


@nb.njit(cache=True)
def normal_hazard(t: float) -> float:
    """``phi(t) / (1 - Phi(t))``, the normal hazard (inverse Mills ratio), at any ``t``.

    The plain quotient is 0/0 once the tail underflows (``t`` past ~38), so for
    ``t >= 0`` it is computed as ``sqrt(2/pi) / erfcx(t/sqrt 2)`` with the scaled
    complementary error function ``erfcx(x) = exp(x^2) erfc(x)``: directly while
    ``exp(x^2)`` is finite, from its asymptotic series beyond (relative error
    below 1e-18 for ``x > 25``).  For ``t -> +inf`` the hazard tends to ``t``.
    """
    if t < 0.0:
        return normal_pdf(t) / (0.5 * math.erfc(t * _INV_SQRT2))
    x = t * _INV_SQRT2
    if x < 25.0:
        erfcx = math.exp(x * x) * math.erfc(x)
    else:
        # erfcx(x) = 1/(x sqrt(pi)) * sum_k (-1)^k (2k-1)!! / (2x^2)^k, k = 0..7: the first
        # omitted term is below 3e-19 relative for x >= 25
        u = 1.0 / (2.0 * x * x)
        series = 1.0 - 13.0 * u
        for k in (11.0, 9.0, 7.0, 5.0, 3.0, 1.0):
            series = 1.0 - k * u * series
        erfcx = series / (x * _SQRT_PI)
    return _SQRT_2_OVER_PI / erfcx


@nb.njit(cache=True, inline="always")
def _gaussian_terms(x: float, mu: float, sig: float, split_ties: bool):
    # win: pdf/cdf = hazard(-z)/sig; loss: pdf/(cdf - 1) = -hazard(z)/sig, both finite
    # however far x is from mu (the quotients of tail probabilities underflow to 0/0).
    z = (x - mu) / sig
    if abs(z) < _TAIL_Z:
        pdf = normal_pdf(z) / sig
        lv = pdf / -normal_cdf(-z)  # cdf - 1 without cancellation
        wv = pdf / normal_cdf(z)
    else:
        lv = -normal_hazard(z) / sig
        wv = normal_hazard(-z) / sig
    zs = z / sig
    lp = -zs * lv - lv * lv  # (pdf'/(cdf - 1)) - lv^2 with pdf' = -z pdf / sig
    wp = -zs * wv - wv * wv
    if split_ties:
        dv = 0.5 * (wv + lv)
        dp = 0.5 * (-zs * (wv + lv) - wv * wv - lv * lv)
    else:
        dv = -z / sig  # pdf'/pdf
        dp = -1.0 / (sig * sig)
    return lv, lp, wv, wp, dv, dp


@nb.njit(cache=True, inline="always")
def _term3(kind: int, x: float, mu: float, a: float, b: float, split_ties: bool):
    if kind == 0:
        return _logistic_terms(x, mu, a, b, split_ties)
    return _gaussian_terms(x, mu, a, split_ties)


@nb.njit(cache=True)
def _q_direct(kind, x, mu, pa, pb, g_start, g_end, g, split_ties):
    """Direct O(N) evaluation of Q_g(x) and Q_g'(x) for tie group ``g``."""
    n = mu.size
    s = 0.0
    sp = 0.0
    a = g_start[g]
    b = g_end[g]
    for j in range(n):
        lv, lp, wv, wp, dv, dp = _term3(kind, x, mu[j], pa[j], pb[j], split_ties)
        if j < a:
            s += lv
            sp += lp
        elif j >= b:
            s += wv
            sp += wp
        else:
            s += dv
            sp += dp
    return s, sp


@nb.njit(cache=True)
def _solve_direct(kind, mu, pa, pb, g_start, g_end, g, split_ties, start):
    lo, hi = _LO_BOUND, _HI_BOUND
    guess = start
    if not (lo < guess < hi):
        guess = 0.5 * (lo + hi)
    for _ in range(_MAX_ITER):
        s, sp = _q_direct(kind, guess, mu, pa, pb, g_start, g_end, g, split_ties)
        if s == 0.0:
            return guess, STATUS_OK
        lo, hi, guess, done = newton_step(lo, hi, guess, s, sp)
        if done:
            if guess <= _LO_BOUND or guess >= _HI_BOUND:
                return guess, STATUS_AT_BOUND
            return guess, STATUS_OK
    return guess, STATUS_MAX_ITER


@nb.njit(cache=True)
def cheb_matrix(n: int) -> np.ndarray:
    """Matrix turning values at the ``n`` Chebyshev-Lobatto points into coefficients (DCT-I).

    Parameters
    ----------
    n:
        Number of points ``t_j = cos(pi j / (n - 1))``, ``j = 0..n-1``.

    Returns
    -------
    ndarray, shape (n, n)
        ``C`` with ``coef = C @ values`` the coefficients of ``sum_k coef[k] T_k``.
    """
    m = n - 1
    c = np.empty((n, n))
    for k in range(n):
        for j in range(n):
            w = 0.5 if (j == 0 or j == m) else 1.0
            c[k, j] = w * math.cos(math.pi * k * j / m) * 2.0 / m
        if k == 0 or k == m:
            for j in range(n):
                c[k, j] *= 0.5
    return c


@nb.njit(cache=True, inline="always")
def clenshaw(coef: np.ndarray, t: float):
    """Value and d/dt of ``sum_k coef[k] T_k(t)`` (Clenshaw's recurrence).

    Parameters
    ----------
    coef:
        Chebyshev coefficients.
    t:
        Point in ``[-1, 1]``.

    Returns
    -------
    value, deriv : float
    """
    n = coef.size
    # value
    b1 = 0.0
    b2 = 0.0
    # derivative via U recurrence: d/dt T_k = k U_{k-1}
    d1 = 0.0
    d2 = 0.0
    for k in range(n - 1, 0, -1):
        b0 = coef[k] + 2.0 * t * b1 - b2
        b2 = b1
        b1 = b0
        # sum_k k coef[k] U_{k-1}(t) with Clenshaw for U (shifted index)
        e0 = k * coef[k] + 2.0 * t * d1 - d2
        d2 = d1
        d1 = e0
    value = coef[0] + t * b1 - b2
    # d1 now holds sum over U_{k-1} series evaluated with U-Clenshaw: result = d1 - ... see below
    deriv = d1  # for U-series sum_{k>=1} a_k U_{k-1}: Clenshaw gives e_1 (U_0 = 1, U_1 = 2t)
    return value, deriv


#: The former private names of :func:`cheb_matrix` and :func:`clenshaw` (kept for callers).
_cheb_matrix = cheb_matrix
_clenshaw = clenshaw


@nb.njit(cache=True, inline="always")
def own_logistic_term(x: float, mu: float, w: float):
    """A player's own logistic term ``-w tanh((x - mu) w)`` and its derivative in ``x``.

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


@nb.njit(cache=True, inline="always")
def cheb_coefficients(cmat: np.ndarray, values: np.ndarray, g: int, coef: np.ndarray) -> None:
    """Fill ``coef`` with the Chebyshev coefficients ``cmat @ values[g]`` of row ``g``.

    Parameters
    ----------
    cmat:
        :func:`cheb_matrix` of the node count.
    values:
        Values at the Chebyshev-Lobatto nodes, one row per function.
    g:
        Row to convert.
    coef:
        Output, ``values.shape[1]`` coefficients.
    """
    m = coef.size
    for k in range(m):
        s = 0.0
        for j in range(m):
            s += cmat[k, j] * values[g, j]
        coef[k] = s


@nb.njit(cache=True, inline="always")
def panel_zero(coef, qa, qb, c, r, own_mu, own_w, with_own):
    """Zero on one panel of a decreasing Chebyshev interpolant, plus an optional own term.

    Solves ``sum_k coef[k] T_k(t) [+ own_logistic_term(c + r t, own_mu, own_w)] = 0``
    for ``t`` in ``[-1, 1]`` by safeguarded Newton (:func:`newton_step`), starting from
    the secant between the panel's end values.  This is the panel step shared by
    :func:`performance_zeros` (no own term) and Elo-R's per-player performances
    (:func:`podium.systems._elo_r_kernels.performances`, with the player's own term).

    Parameters
    ----------
    coef:
        Chebyshev coefficients of the shared part on the panel ``[c - r, c + r]``.
    qa, qb:
        The whole function's values at the panel's left and right ends
        (``qa >= 0 >= qb``).
    c, r:
        Panel centre and half-width: ``x = c + r t``.
    own_mu, own_w:
        The own term's centre and weight (ignored unless ``with_own``).
    with_own:
        Whether to add the own term.

    Returns
    -------
    float
        The zero's ``t``; the zero is at ``x = c + r t``.
    """
    lo_t = -1.0
    hi_t = 1.0
    t = -1.0 + 2.0 * qa / (qa - qb) if qa > qb else 0.0
    if not (-1.0 < t < 1.0):
        t = 0.0
    for _ in range(100):
        val, der = clenshaw(coef, t)
        if with_own:
            v, vp = own_logistic_term(c + r * t, own_mu, own_w)
            val += v
            der += r * vp
        if val == 0.0:
            break
        lo_t, hi_t, t, done = newton_step(lo_t, hi_t, t, val, der)
        if done:
            break
    return t


@nb.njit(cache=True, inline="always")
def _gauss_lvd(x, mu, sig, split_ties):
    """Values (no derivatives) of the Gaussian loss, win and tie terms at x."""
    z = (x - mu) / sig
    if abs(z) < _TAIL_Z:  # one erfc for both tails
        pdf = normal_pdf(z) / sig
        if z >= 0.0:
            upper = 0.5 * math.erfc(z * _INV_SQRT2)  # P(Z > z), accurate
            lv = -pdf / upper
            wv = pdf / (1.0 - upper)
        else:
            cdf = 0.5 * math.erfc(-z * _INV_SQRT2)
            lv = pdf / (cdf - 1.0)
            wv = pdf / cdf
    else:
        lv = -normal_hazard(z) / sig
        wv = normal_hazard(-z) / sig
    if split_ties:
        dv = 0.5 * (wv + lv)
    else:
        dv = -z / sig
    return lv, wv, dv


@nb.njit(cache=True)
def _node_values(kind, x, mu, pa, pb, g_start, g_end, split_ties, wsum, Qv, Vs, jj):
    """Fill column ``jj`` of ``Qv`` with ``Q_g(x)`` for every group ``g``.

    ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` where ``L_h, V_h, D_h`` are the
    sums of the loss, win and tie terms of group ``h``.  For the logistic model
    all three follow from ``S_h = sum_j -w_out_j tanh((x - mu_j) w_arg_j)``:
    ``L_h = S_h - W_h``, ``V_h = S_h + W_h``, ``D_h = 2 S_h`` (or ``S_h`` with
    split ties), ``W_h`` the group's total ``w_out`` -- one tanh per term.
    """
    G = g_start.size
    acc = 0.0
    tie_mult = 1.0 if split_ties else 2.0
    for g in range(G):
        if kind == 0:
            sv = 0.0
            for j in range(g_start[g], g_end[g]):
                sv -= pb[j] * fast_tanh((x - mu[j]) * pa[j])
            sl = sv - wsum[g]
            sw = sv + wsum[g]
            sd = tie_mult * sv
        else:
            sl = 0.0
            sw = 0.0
            sd = 0.0
            for j in range(g_start[g], g_end[g]):
                lv, wv, dv = _gauss_lvd(x, mu[j], pa[j], split_ties)
                sl += lv
                sw += wv
                sd += dv
        Qv[g, jj] = acc + sd  # losses against every better group, ties inside
        acc += sl
        Vs[jj, g] = sw
    acc = 0.0
    for g in range(G - 1, -1, -1):
        Qv[g, jj] += acc  # wins against every worse group
        acc += Vs[jj, g]


@nb.njit(cache=True)
def _group_centre(mu, g_start, g_end, g):
    s = 0.0
    for j in range(g_start[g], g_end[g]):
        s += mu[j]
    return s / (g_end[g] - g_start[g])


@nb.njit(cache=True, parallel=True)
def performance_zeros(
    kind: int,
    mu: np.ndarray,
    pa: np.ndarray,
    pb: np.ndarray,
    g_start: np.ndarray,
    g_end: np.ndarray,
    split_ties: bool,
    min_spread: float,
    direct_groups: int,
):
    """Performance of every tie group: the zero of ``Q_g`` (Theorem 3.2), exactly.

    Parameters
    ----------
    kind:
        0 for the logistic model (``pa = w_arg``, ``pb = w_out``), 1 for the
        Gaussian model (``pa = delta``, ``pb`` unused).
    mu:
        Centres of the opponent terms in standings order (best first).
    g_start, g_end:
        Tie groups as half-open position ranges, best group first.
    min_spread:
        The smallest ``delta`` of the round.  The complex singularities of
        every term lie at least ``sqrt(3) * delta_min`` from the real axis
        (tanh poles; the zeros of the normal CDF are farther, ``~2.8 delta``),
        which sets the panel width of the interpolation below.
    direct_groups:
        Rounds with at most this many tie groups are solved directly.

    Notes
    -----
    Every ``Q_g`` is a sum over all ``N`` terms, so solving each of the ``G``
    groups directly costs ``O(G N)`` term evaluations per Newton step.  But
    all groups share the same terms and differ only in which of them count as
    losses, wins or ties, so:

    1. The best and the worst group are solved directly; by Theorem 5.2 every
       other zero lies between them.
    2. That interval is cut into panels of half-width ``sqrt(3)*delta_min/2``.
       On each panel every term is evaluated at ``CHEB_NODES`` Chebyshev-Lobatto
       points (``O(N)`` per node) and prefix sums over the groups in rank order
       give ``Q_g = sum_{h<g} L_h + D_g + sum_{h>g} V_h`` at the nodes for all
       ``g`` at once.
    3. ``Q_g`` is analytic in a strip of half-width ``sqrt(3)*delta_min`` around
       the real axis, so its Chebyshev interpolant on a panel converges
       geometrically (Bernstein ellipse with rho ~ 3.5: error ~ 3.5**-32 of the
       terms' magnitude, i.e. at the level of floating-point rounding).  Each
       group's zero is found by safeguarded Newton on its interpolant, in the
       panel where ``Q_g`` changes sign.  A group not placed this way (rounding
       at the extremes) is solved directly.

    The cost is ``O(N * panels * CHEB_NODES + G * CHEB_NODES**2)`` instead of
    ``O(G * N * iterations)``.

    Returns
    -------
    perf, status : ndarray
        The zero of each group and a solver status code per group.
    n_direct : int
        How many groups were solved directly (all of them below
        ``direct_groups``; otherwise the ones the panels did not place).
    """
    G = g_start.size
    perf = np.empty(G)
    status = np.zeros(G, dtype=np.int8)
    if G == 0:
        return perf, status, 0

    if G <= direct_groups:
        for g in nb.prange(G):
            p, st = _solve_direct(
                kind, mu, pa, pb, g_start, g_end, g, split_ties,
                _group_centre(mu, g_start, g_end, g),
            )
            perf[g] = p
            status[g] = st
        return perf, status, G

    p_top, st_top = _solve_direct(
        kind, mu, pa, pb, g_start, g_end, 0, split_ties, _group_centre(mu, g_start, g_end, 0)
    )
    p_bot, st_bot = _solve_direct(
        kind, mu, pa, pb, g_start, g_end, G - 1, split_ties,
        _group_centre(mu, g_start, g_end, G - 1),
    )
    perf[0] = p_top
    status[0] = st_top
    perf[G - 1] = p_bot
    status[G - 1] = st_bot
    solved = np.zeros(G, dtype=np.bool_)
    solved[0] = True
    solved[G - 1] = True

    a_all = p_bot
    b_all = p_top
    if b_all - a_all < 1e-6:
        b_all = a_all + 1e-6
    half = 0.5 * math.sqrt(3.0) * min_spread
    n_panels = int(math.ceil((b_all - a_all) / (2.0 * half)))
    if n_panels < 1:
        n_panels = 1
    width = (b_all - a_all) / n_panels
    m = CHEB_NODES
    cmat = cheb_matrix(m)
    # nodes t_j = cos(pi j / (m-1)): j = 0 is the right end (+1), j = m-1 the left end (-1)
    tnodes = np.empty(m)
    for j in range(m):
        tnodes[j] = math.cos(math.pi * j / (m - 1))

    Vs = np.empty((m, G))
    Qv = np.empty((G, m))
    # per-group sums of w_out (logistic: loss/win terms are val -/+ w_out)
    wsum = np.zeros(G)
    if kind == 0:
        for g in range(G):
            for j in range(g_start[g], g_end[g]):
                wsum[g] += pb[j]
    for p in range(n_panels):
        a = a_all + p * width
        b = a_all + (p + 1) * width if p < n_panels - 1 else b_all
        c = 0.5 * (a + b)
        r = 0.5 * (b - a)
        for jj in nb.prange(m):
            _node_values(kind, c + r * tnodes[jj], mu, pa, pb, g_start, g_end, split_ties,
                         wsum, Qv, Vs, jj)
        for g in nb.prange(G):
            if solved[g]:
                continue
            qa = Qv[g, m - 1]
            qb = Qv[g, 0]
            if not (qa >= 0.0 and qb <= 0.0):
                continue
            coef = np.empty(m)
            cheb_coefficients(cmat, Qv, g, coef)
            t = panel_zero(coef, qa, qb, c, r, 0.0, 0.0, False)
            perf[g] = c + r * t
            solved[g] = True
    n_fallback = 0
    for g in range(G):
        if not solved[g]:
            n_fallback += 1
    for g in nb.prange(G):
        if not solved[g]:
            pg, st = _solve_direct(
                kind, mu, pa, pb, g_start, g_end, g, split_ties,
                _group_centre(mu, g_start, g_end, g),
            )
            perf[g] = pg
            status[g] = st
    return perf, status, n_fallback
