"""Numba kernels of TrueSkill-SPb (see :mod:`podium.systems.trueskill`).

The factor graph of one round (one player per team, teams grouped into places
by their tie range) and every message on it live in flat arrays.  A message is a
Gaussian ``(m, s)`` given by its mean and standard deviation; ``s = inf`` is the
uniform message ("one" of the product) and ``(0, 0)`` the point mass at zero
("zero" of the sum).  Gaussian arithmetic follows multi-skill exactly, including
its conventions (the sum/difference of two messages adds/subtracts the means and
combines the deviations with ``hypot``; the quotient divides by the signed
difference of variances for the mean and by its absolute value for the
deviation), its erfc (statrs's) and the order of its floating-point operations,
so that every message -- and with it the number of rounds until convergence --
is the reference's, bit for bit.

Edge names (``x.a`` is the message the factor sends to the node, ``x.b`` the one
the node sends back; player ``k``, place ``g``, boundary ``i`` between places
``i`` and ``i+1``):

* ``T[k]``: performance ``t_k = s_k + noise`` of the player (constant during the
  iteration: the message of the performance into its place factor).
* ``ta[k]``: message from the place factor ``l_g = t_k + u`` back to ``t_k``
  (what the round says about the performance; convergence is measured on it).
* ``la/lb[k]``: edge between player ``k``'s place factor and ``l_g``.
* ``xa/xb[i]``: edge of ``l_i`` to the difference factor ``l_i = l_{i+1} + d``,
  ``ya/yb[i]``: edge of ``l_{i+1}`` to it.
* ``ua/ub`` and ``da/db``: the tie node ``|u| <= eps`` and the margin node
  ``d > 2 eps``.  In the reference every tie node of a contest shares one edge,
  and so does every margin node (``vec![node.clone(); n]`` clones the ``Rc`` of
  the edge): each factor overwrites the shared incoming message, the node answers
  the last one written, and every factor reads that one answer.  The kernels keep
  exactly this behaviour, with one scalar message per direction.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)

_SQRT_PI = math.sqrt(math.pi)
_INF = math.inf
#: Below this probability mass the tie node returns the fixed message (eps, eps).
_FLOAT_CMP_EPS = 1e-8


# ----------------------------------------------------------------- erfc
# The reference evaluates erfc with statrs 0.18, a port of Boost's rational
# approximations (J. Maddock, "erf" minimax fits): on [0, 0.5)
# erf(z) = z (1.125 + P(z)/Q(z)); on [a_k, a_{k+1}) up to 110,
# erfc(z) = exp(-z^2)/z (b_k + P_k(z - a_k)/Q_k(z - a_k)).  statrs uses the
# double literals of the constants b_k where Boost uses their float roundings,
# which makes its erfc differ from the exact value by up to ~1e-10 relative.  The
# truncated moments of the tie node subtract nearly equal multiples of erfc, which
# magnifies such differences ~1e7 times, so matching the reference needs the same
# erfc, bit for bit: the coefficients below are Boost's, the evaluation order
# (Horner from the highest coefficient, ``g*b + g*r``) statrs's.
_ERF_SMALL_P = np.array([
    0.00337916709551257388990745, -0.00073695653048167948530905,
    -0.374732337392919607868241, 0.0817442448733587196071743,
    -0.0421089319936548595203468, 0.0070165709512095756344528,
    -0.00495091255982435110337458, 0.000871646599037922480317225,
])
_ERF_SMALL_Q = np.array([
    1.0, -0.218088218087924645390535, 0.412542972725442099083918,
    -0.0841891147873106755410271, 0.0655338856400241519690695,
    -0.0120019604454941768171266, 0.00408165558926174048329689,
    -0.000615900721557769691924509,
])
#: Lower ends of the erfc intervals (the last one ends at 110).
_ERFC_A = np.array([0.5, 0.75, 1.25, 2.25, 3.5, 5.25, 8.0, 11.5, 17.0, 24.0, 38.0, 60.0, 85.0])
_ERFC_B = np.array([
    0.3440242112, 0.419990927, 0.4898625016, 0.5317370892, 0.5489973426, 0.5571740866,
    0.5609807968, 0.5626493692, 0.5634598136, 0.5638477802, 0.5640528202, 0.5641309023,
    0.5641584396,
])
# numerator / denominator coefficients per interval, lowest degree first, zero-padded
# (a zero leading coefficient leaves Horner's result unchanged)
_ERFC_P = np.array([
    [-0.0361790390718262471360258, 0.292251883444882683221149, 0.281447041797604512774415,
     0.125610208862766947294894, 0.0274135028268930549240776, 0.00250839672168065762786937,
     0.0, 0.0],
    [-0.0397876892611136856954425, 0.153165212467878293257683, 0.191260295600936245503129,
     0.10276327061989304213645, 0.029637090615738836726027, 0.0046093486780275489468812,
     0.000307607820348680180548455, 0.0],
    [-0.0300838560557949717328341, 0.0538578829844454508530552, 0.0726211541651914182692959,
     0.0367628469888049348429018, 0.00964629015572527529605267, 0.00133453480075291076745275,
     0.778087599782504251917881e-4, 0.0],
    [-0.0117907570137227847827732, 0.014262132090538809896674, 0.0202234435902960820020765,
     0.00930668299990432009042239, 0.00213357802422065994322516, 0.00025022987386460102395382,
     0.120534912219588189822126e-4, 0.0],
    [-0.00546954795538729307482955, 0.00404190278731707110245394, 0.0054963369553161170521356,
     0.00212616472603945399437862, 0.000394984014495083900689956, 0.365565477064442377259271e-4,
     0.135485897109932323253786e-5, 0.0],
    [-0.00270722535905778347999196, 0.0013187563425029400461378, 0.00119925933261002333923989,
     0.00027849619811344664248235, 0.267822988218331849989363e-4, 0.923043672315028197865066e-6,
     0.0, 0.0],
    [-0.00109946720691742196814323, 0.000406425442750422675169153, 0.000274499489416900707787024,
     0.465293770646659383436343e-4, 0.320955425395767463401993e-5, 0.778286018145020892261936e-7,
     0.0, 0.0],
    [-0.00056907993601094962855594, 0.000169498540373762264416984, 0.518472354581100890120501e-4,
     0.382819312231928859704678e-5, 0.824989931281894431781794e-7, 0.0, 0.0, 0.0],
    [-0.000241313599483991337479091, 0.574224975202501512365975e-4, 0.115998962927383778460557e-4,
     0.581762134402593739370875e-6, 0.853971555085673614607418e-8, 0.0, 0.0, 0.0],
    [-0.000146674699277760365803642, 0.162666552112280519955647e-4, 0.269116248509165239294897e-5,
     0.979584479468091935086972e-7, 0.101994647625723465722285e-8, 0.0, 0.0, 0.0],
    [-0.583905797629771786720406e-4, 0.412510325105496173512992e-5, 0.431790922420250949096906e-6,
     0.993365155590013193345569e-8, 0.653480510020104699270084e-10, 0.0, 0.0, 0.0],
    [-0.196457797609229579459841e-4, 0.157243887666800692441195e-5, 0.543902511192700878690335e-7,
     0.317472492369117710852685e-9, 0.0, 0.0, 0.0, 0.0],
    [-0.789224703978722689089794e-5, 0.622088451660986955124162e-6, 0.145728445676882396797184e-7,
     0.603715505542715364529243e-10, 0.0, 0.0, 0.0, 0.0],
])
_ERFC_Q = np.array([
    [1.0, 1.8545005897903486499845, 1.43575803037831418074962, 0.582827658753036572454135,
     0.124810476932949746447682, 0.0113724176546353285778481, 0.0, 0.0],
    [1.0, 1.95520072987627704987886, 1.64762317199384860109595, 0.768238607022126250082483,
     0.209793185936509782784315, 0.0319569316899913392596356, 0.00213363160895785378615014, 0.0],
    [1.0, 1.75967098147167528287343, 1.32883571437961120556307, 0.552528596508757581287907,
     0.133793056941332861912279, 0.0179509645176280768640766, 0.00104712440019937356634038,
     -0.106640381820357337177643e-7],
    [1.0, 1.50376225203620482047419, 0.965397786204462896346934, 0.339265230476796681555511,
     0.0689740649541569716897427, 0.00771060262491768307365526, 0.000371421101531069302990367,
     0.0],
    [1.0, 1.21019697773630784832251, 0.620914668221143886601045, 0.173038430661142762569515,
     0.0276550813773432047594539, 0.00240625974424309709745382, 0.891811817251336577241006e-4,
     -0.465528836283382684461025e-11],
    [1.0, 0.814632808543141591118279, 0.268901665856299542168425, 0.0449877216103041118694989,
     0.00381759663320248459168994, 0.000131571897888596914350697, 0.404815359675764138445257e-11,
     0.0],
    [1.0, 0.588173710611846046373373, 0.139363331289409746077541, 0.0166329340417083678763028,
     0.00100023921310234908642639, 0.24254837521587225125068e-4, 0.0, 0.0],
    [1.0, 0.339637250051139347430323, 0.043472647870310663055044, 0.00248549335224637114641629,
     0.535633305337152900549536e-4, -0.117490944405459578783846e-12, 0.0, 0.0],
    [1.0, 0.233044138299687841018015, 0.0204186940546440312625597, 0.000797185647564398289151125,
     0.117019281670172327758019e-4, 0.0, 0.0, 0.0],
    [1.0, 0.165907812944847226546036, 0.0103361716191505884359634, 0.000286593026373868366935721,
     0.298401570840900340874568e-5, 0.0, 0.0, 0.0],
    [1.0, 0.105077086072039915406159, 0.00414278428675475620830226, 0.726338754644523769144108e-4,
     0.477818471047398785369849e-6, 0.0, 0.0, 0.0],
    [1.0, 0.052803989240957632204885, 0.000926876069151753290378112, 0.541011723226630257077328e-5,
     0.535093845803642394908747e-15, 0.0, 0.0, 0.0],
    [1.0, 0.0375328846356293715248719, 0.000467919535974625308126054,
     0.193847039275845656900547e-5, 0.0, 0.0, 0.0, 0.0],
])


@nb.njit(cache=True, error_model="numpy")
def _horner(z: float, c) -> float:
    acc = c[c.size - 1]
    for i in range(c.size - 2, -1, -1):
        acc = acc * z + c[i]
    return acc


@nb.njit(cache=True, error_model="numpy")
def _erf_small(z: float) -> float:
    """erf on [0, 0.5)."""
    if z < 1e-10:
        return z * 1.125 + z * 0.003379167095512573896158903121545171688
    return z * 1.125 + z * _horner(z, _ERF_SMALL_P) / _horner(z, _ERF_SMALL_Q)


@nb.njit(cache=True, error_model="numpy")
def _erfc_large(z: float) -> float:
    """erfc on [0.5, inf)."""
    if z >= 110.0:
        return 0.0
    k = 0
    while k + 1 < _ERFC_A.size and z >= _ERFC_A[k + 1]:
        k += 1
    x = z - _ERFC_A[k]
    r = _horner(x, _ERFC_P[k]) / _horner(x, _ERFC_Q[k])
    g = math.exp(-z * z) / z
    return g * _ERFC_B[k] + g * r


@nb.njit(cache=True, error_model="numpy")
def erfc(x: float) -> float:
    """Complementary error function, bit-identical to statrs 0.18 (the reference's)."""
    if math.isnan(x):
        return x
    if x == _INF:
        return 0.0
    if x == -_INF:
        return 2.0
    if x < 0.0:
        if x < -0.5:
            return 2.0 - _erfc_large(-x)
        if x == -0.5:
            return 1.0 + (1.0 - _erfc_large(0.5))
        return 1.0 + _erf_small(-x)
    if x < 0.5:
        return 1.0 - _erf_small(x)
    return _erfc_large(x)


# ----------------------------------------------------------------- Gaussian arithmetic
@nb.njit(cache=True, error_model="numpy")
def _mul(am: float, a_s: float, bm: float, bs: float) -> tuple[float, float]:
    """Product of two Gaussian messages (uniform ``s = inf`` is the identity)."""
    if math.isinf(a_s):
        return bm, bs
    if math.isinf(bs):
        return am, a_s
    v1 = a_s * a_s
    v2 = bs * bs
    return (am * v2 + bm * v1) / (v1 + v2), a_s * bs / math.sqrt(v1 + v2)


@nb.njit(cache=True, error_model="numpy")
def _div(am: float, a_s: float, bm: float, bs: float) -> tuple[float, float]:
    """Quotient ``a / b`` of two Gaussian messages, multi-skill's convention: the
    variance difference is used signed for the mean and unsigned for the deviation."""
    if math.isinf(bs):
        return am, a_s
    if math.isinf(a_s):
        return -bm, bs
    v1 = a_s * a_s
    v2 = bs * bs
    dv = v2 - v1
    return (am * v2 - bm * v1) / dv, a_s * bs / math.sqrt(abs(dv))


# The truncated moments below integrate exp(-((x - mu)/sigma)^2) (sic: the
# reference's density has standard deviation sigma/sqrt(2)) over [t, inf).
@nb.njit(cache=True, error_model="numpy")
def _gexp(mu: float, sigma: float, t: float) -> float:
    z = (t - mu) / sigma
    return math.exp(-(z * z))


@nb.njit(cache=True, error_model="numpy")
def _moment0(mu: float, sigma: float, t: float) -> float:
    return sigma * _SQRT_PI / 2.0 * erfc((t - mu) / sigma)


@nb.njit(cache=True, error_model="numpy")
def _moment1(mu: float, sigma: float, t: float) -> float:
    return mu * _moment0(0.0, sigma, t - mu) + sigma * sigma / 2.0 * _gexp(mu, sigma, t)


@nb.njit(cache=True, error_model="numpy")
def _moment2(mu: float, sigma: float, t: float) -> float:
    d = t - mu
    half = sigma / 2.0
    return (
        mu * mu * _moment0(0.0, sigma, d)
        + 2.0 * mu * _moment1(0.0, sigma, d)
        + half * half * (2.0 * _gexp(mu, sigma, t) * d + sigma * _SQRT_PI * erfc(d / sigma))
    )


@nb.njit(cache=True, error_model="numpy")
def leq_eps(m: float, s: float, eps: float) -> tuple[float, float]:
    """Message of the tie node ``|u| <= eps`` given the incoming message ``(m, s)``."""
    alpha = _moment0(m, s, -eps) - _moment0(m, s, eps)
    if alpha < _FLOAT_CMP_EPS:
        mu = eps
        sig = eps
    else:
        mu = (_moment1(m, s, -eps) - _moment1(m, s, eps)) / alpha
        var = (_moment2(m, s, -eps) - _moment2(m, s, eps)) / alpha - mu * mu
        sig = math.sqrt(var) if var > 0.0 else 0.0
    return _div(mu, sig, m, s)


@nb.njit(cache=True, error_model="numpy")
def greater_eps(m: float, s: float, eps: float) -> tuple[float, float]:
    """Message of the margin node ``d > eps`` given the incoming message ``(m, s)``."""
    alpha = _moment0(m, s, eps)
    if alpha < _FLOAT_CMP_EPS:
        mu = eps
        sig = eps
    else:
        mu = _moment1(m, s, eps) / alpha
        var = _moment2(m, s, eps) / alpha - mu * mu
        sig = math.sqrt(var) if var > 0.0 else 0.0
    return _div(mu, sig, m, s)


# ----------------------------------------------------------------- the round
@nb.njit(cache=True, error_model="numpy")
def _place_factors(Tm, Ts, la, lb, ta, ub_m, ub_s):
    """Factors ``l_g = t_k + u`` of every player, in standings order.

    Each sends ``t_k + u`` to its place, ``l_g - u`` to the performance and
    ``l_g - t_k`` to the (shared) tie edge; the tie edge keeps the last player's.
    Returns that message.
    """
    n = Tm.size
    for k in range(n):
        la[k, 0] = Tm[k] + ub_m
        la[k, 1] = math.hypot(Ts[k], ub_s)
        ta[k, 0] = lb[k, 0] - ub_m
        ta[k, 1] = math.hypot(lb[k, 1], ub_s)
    k = n - 1
    return lb[k, 0] - Tm[k], math.hypot(lb[k, 1], Ts[k])


@nb.njit(cache=True, error_model="numpy")
def _infer_place(g, n_groups, starts, la, lb, xa, xb, ya, yb, pm, ps, members):
    """Variable ``l_g``: each edge gets the product of the other edges' messages.

    Edge order (as in the reference): the group's players, then the edge to the
    factor above (``y[g-1]``, when ``g > 0``), then the one below (``x[g]``,
    when ``g < n_groups - 1``).  Prefix products run forwards and suffix products
    backwards over that order, each new factor multiplied on the right.  The
    players' own edges are written only when ``members`` is true (they are read
    only after the last update of a sweep).
    """
    b = starts[g]
    e = starts[g + 1]
    has_y = g > 0
    has_x = g < n_groups - 1
    # prefix products over the players: pm/ps[k] = product of edges b..k-1
    cm = 0.0
    cs = _INF
    for k in range(b, e):
        pm[k] = cm
        ps[k] = cs
        cm, cs = _mul(cm, cs, la[k, 0], la[k, 1])
    # cm/cs: product of all the players' edges; sm/ss: suffix product after them
    if has_y and has_x:
        yb[g - 1, 0], yb[g - 1, 1] = _mul(cm, cs, xa[g, 0], xa[g, 1])
        xb[g, 0], xb[g, 1] = _mul(cm, cs, ya[g - 1, 0], ya[g - 1, 1])
        sm, ss = _mul(xa[g, 0], xa[g, 1], ya[g - 1, 0], ya[g - 1, 1])
    elif has_y:
        yb[g - 1, 0] = cm
        yb[g - 1, 1] = cs
        sm = ya[g - 1, 0]
        ss = ya[g - 1, 1]
    elif has_x:
        xb[g, 0] = cm
        xb[g, 1] = cs
        sm = xa[g, 0]
        ss = xa[g, 1]
    else:
        sm = 0.0
        ss = _INF
    if members:
        for k in range(e - 1, b - 1, -1):
            lb[k, 0], lb[k, 1] = _mul(pm[k], ps[k], sm, ss)
            sm, ss = _mul(sm, ss, la[k, 0], la[k, 1])


@nb.njit(cache=True, error_model="numpy")
def _sweep(n_groups, starts, la, lb, xa, xb, ya, yb, db_m, db_s, pm, ps, last):
    """Down and up the chain of places (the reference's ``infer_ld``).

    The factor ``l_i = l_{i+1} + d`` of boundary ``i`` sends ``l_{i+1} + d`` up,
    ``l_i - d`` down and ``l_i - l_{i+1}`` to the shared margin edge (which keeps
    the last one's: boundary 0, on the way back up).  Returns that message.
    """
    da_m = 0.0
    da_s = 0.0
    for i in range(n_groups - 1):
        _infer_place(i, n_groups, starts, la, lb, xa, xb, ya, yb, pm, ps, False)
        xa[i, 0] = yb[i, 0] + db_m
        xa[i, 1] = math.hypot(yb[i, 1], db_s)
        ya[i, 0] = xb[i, 0] - db_m
        ya[i, 1] = math.hypot(xb[i, 1], db_s)
    g = n_groups - 1
    _infer_place(g, n_groups, starts, la, lb, xa, xb, ya, yb, pm, ps, last)
    for i in range(n_groups - 2, -1, -1):
        xa[i, 0] = yb[i, 0] + db_m
        xa[i, 1] = math.hypot(yb[i, 1], db_s)
        ya[i, 0] = xb[i, 0] - db_m
        ya[i, 1] = math.hypot(xb[i, 1], db_s)
        da_m = xb[i, 0] - yb[i, 0]
        da_s = math.hypot(xb[i, 1], yb[i, 1])
        _infer_place(i, n_groups, starts, la, lb, xa, xb, ya, yb, pm, ps, last)
    return da_m, da_s


@nb.njit(cache=True, error_model="numpy")
def trueskill_round(mu, sig, starts, sig_perf, eps, conv_eps, max_rounds):
    """One round of TrueSkill-SPb message passing, scheduled as the reference.

    Parameters
    ----------
    mu, sig:
        Each participant's prior skill (already widened by the drift), in
        standings order.
    starts:
        Start index of every place (tie group), plus ``n`` at the end; at least
        two places.
    sig_perf:
        Standard deviation of a performance around the skill.
    eps:
        Tie margin (the tie node is ``|u| <= eps``, the margin node ``d > 2 eps``).
    conv_eps, max_rounds:
        Stop before a round when no message from the places to a performance
        moved by ``conv_eps`` or more in the previous round, or after
        ``max_rounds`` rounds (the reference: 42).

    Returns
    -------
    new_mu, new_sig, perf_mu, perf_sig, rounds, converged
        Posterior skill, posterior of the performance variable, the number of
        message-passing rounds and whether the tolerance was met.
    """
    n = mu.size
    n_groups = starts.size - 1
    nd = max(n_groups - 1, 1)
    Tm = np.empty(n)
    Ts = np.empty(n)
    la = np.zeros((n, 2))
    lb = np.zeros((n, 2))  # a variable's outgoing messages start as the point mass (0, 0)
    ta = np.zeros((n, 2))
    xa = np.zeros((nd, 2))
    xb = np.zeros((nd, 2))
    ya = np.zeros((nd, 2))
    yb = np.zeros((nd, 2))
    for i in range(nd):
        xa[i, 1] = _INF  # ... and its incoming ones uniform
        ya[i, 1] = _INF
    pm = np.empty(n)
    ps = np.empty(n)
    old_m = np.empty(n)
    old_s = np.empty(n)
    for k in range(n):
        # skill + performance noise, through the reference's chain of sums
        Tm[k] = 0.0 + mu[k] + 0.0
        Ts[k] = math.hypot(sig[k], sig_perf)
    # the tie edge and the margin edge, each shared by the whole contest
    ub_m = 0.0
    ub_s = 0.0
    db_m = 0.0
    db_s = 0.0
    ua_m, ua_s = _place_factors(Tm, Ts, la, lb, ta, ub_m, ub_s)
    ub_m, ub_s = leq_eps(ua_m, ua_s, eps)
    ua_m, ua_s = _place_factors(Tm, Ts, la, lb, ta, ub_m, ub_s)
    rounds = 0
    converged = False
    while True:
        if rounds > 0:
            diff = 0.0
            for k in range(n):
                d0 = abs(ta[k, 0] - old_m[k])
                d1 = abs(ta[k, 1] - old_s[k])
                if d0 > diff:
                    diff = d0
                if d1 > diff:
                    diff = d1
            if not (diff >= conv_eps):
                converged = True
                break
        if rounds >= max_rounds:
            break
        for k in range(n):
            old_m[k] = ta[k, 0]
            old_s[k] = ta[k, 1]
        rounds += 1
        da_m, da_s = _sweep(n_groups, starts, la, lb, xa, xb, ya, yb, db_m, db_s, pm, ps, False)
        if n_groups > 1:
            db_m, db_s = greater_eps(da_m, da_s, 2.0 * eps)
        _sweep(n_groups, starts, la, lb, xa, xb, ya, yb, db_m, db_s, pm, ps, True)
        ua_m, ua_s = _place_factors(Tm, Ts, la, lb, ta, ub_m, ub_s)
        ub_m, ub_s = leq_eps(ua_m, ua_s, eps)
        ua_m, ua_s = _place_factors(Tm, Ts, la, lb, ta, ub_m, ub_s)
    new_mu = np.empty(n)
    new_sig = np.empty(n)
    perf_mu = np.empty(n)
    perf_sig = np.empty(n)
    for k in range(n):
        # message to the skill: the performance message widened by the noise
        msg_s = math.hypot(ta[k, 1], sig_perf)
        new_mu[k], new_sig[k] = _mul(mu[k], sig[k], ta[k, 0], msg_s)
        perf_mu[k], perf_sig[k] = _mul(Tm[k], Ts[k], ta[k, 0], ta[k, 1])
    return new_mu, new_sig, perf_mu, perf_sig, rounds, converged
