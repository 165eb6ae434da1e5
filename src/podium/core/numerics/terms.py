"""The terms of the performance equation (Theorem 3.2 of [EbtekarLiu2021]) and their sums.

``Q_g``, the performance equation of tie group ``g``, sums over every opponent term
``j`` (including the group's own) a loss term ``l_j`` if ``j`` placed strictly better,
a win term ``v_j`` if strictly worse and a tie term ``d_j`` if tied.  This module
holds the terms (logistic, :data:`LOGISTIC`, Sec. 3.1; Gaussian, :data:`GAUSSIAN`),
their layout (:class:`OpponentTerms`, :class:`TieGroups`) and the sums over one tie
group at several points at once (:func:`group_sums_at`), which
:mod:`podium.core.numerics.performance` turns into ``Q_g`` for every group.

Identical terms (players who share a rating: every newcomer of a round) have
identical values, bit for bit: :func:`merge_identical` lists the distinct ones
(:class:`DistinctTerms`), :func:`term_values_at` evaluates each once, and the sums
read the value back for every copy -- the same numbers added in the same order as
when every copy is evaluated, so merging changes no result.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np
from numba.core import types
from numba.extending import overload

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.constants import GAUSSIAN, LOGISTIC
from podium.core.numerics.distinct import distinct_rows
from podium.core.numerics.special import (
    INV_SQRT2,
    TAIL_Z,
    fast_tanh,
    normal_cdf,
    normal_hazard,
    normal_pdf,
    tanh_sech2,
)

__all__ = [
    "LOGISTIC",
    "GAUSSIAN",
    "MERGE_AT_MOST",
    "OpponentTerms",
    "TieGroups",
    "DistinctTerms",
    "merge_identical",
    "unmerged",
    "logistic_terms",
    "gaussian_terms",
    "model_terms",
    "counted_terms",
    "term_values_at",
    "group_sums_at",
]



class OpponentTerms(NamedTuple):
    """The opponent terms of a round, in standings order (best first).

    Attributes
    ----------
    mu:
        Centres.
    pa, pb:
        :data:`LOGISTIC`: ``w_arg`` and ``w_out``; :data:`GAUSSIAN`: ``delta`` and unused.
    """

    mu: np.ndarray
    pa: np.ndarray
    pb: np.ndarray


class TieGroups(NamedTuple):
    """Tie groups as half-open position ranges ``[start[g], end[g])``, best group first."""

    start: np.ndarray
    end: np.ndarray


#: Terms are merged (:func:`merge_identical`) when at most this fraction of them is
#: distinct: reading a value back costs a load and an add, evaluating a tanh ~10x that,
#: so merging pays once a quarter of the terms repeat.
MERGE_AT_MOST = 0.75


class DistinctTerms(NamedTuple):
    """A round's opponent terms with the identical ones merged.

    Attributes
    ----------
    of:
        Per term of the round (standings order): which distinct term it is (int32);
        empty when the terms are not merged (:func:`unmerged`), and then ``terms``
        are the round's own.
    terms:
        The distinct terms, in order of first appearance.
    """

    of: np.ndarray
    terms: OpponentTerms


@nb.njit(cache=True)
def merge_identical(terms: OpponentTerms) -> DistinctTerms:
    """The distinct terms of ``terms`` (equal ``mu, pa, pb`` bits), when at most
    :data:`MERGE_AT_MOST` of them are distinct; else :func:`unmerged` terms (copies)."""
    of, first = distinct_rows(terms.mu, terms.pa, terms.pb)
    mu, pa, pb = terms
    if first.size > MERGE_AT_MOST * mu.size:
        return DistinctTerms(of[:0], OpponentTerms(mu.copy(), pa.copy(), pb.copy()))
    return DistinctTerms(of, OpponentTerms(mu[first], pa[first], pb[first]))


@nb.njit(cache=True)
def unmerged(terms: OpponentTerms) -> DistinctTerms:
    """``terms`` as :class:`DistinctTerms` without merging (an empty ``of``)."""
    return DistinctTerms(np.empty(0, dtype=np.int32), terms)


# Each term function returns (l, l', v, v', d, d') for the loss, win and tie
# contributions of one opponent term at x.


@nb.njit(cache=True, inline="always")
def logistic_terms(x: float, mu: float, w_arg: float, w_out: float, split_ties: bool):
    """Loss, win and tie terms (and derivatives) of one logistic opponent at ``x``."""
    t, d2 = tanh_sech2((x - mu) * w_arg)
    val = -t * w_out
    vp = -d2 * w_arg * w_out
    if split_ties:
        return val - w_out, vp, val + w_out, vp, val, vp
    return val - w_out, vp, val + w_out, vp, 2.0 * val, 2.0 * vp


@nb.njit(cache=True)
def gaussian_terms(x: float, mu: float, sig: float, split_ties: bool):
    """Loss, win and tie terms (and derivatives) of one Gaussian opponent at ``x``.

    Win: ``pdf/cdf = hazard(-z)/sig``; loss: ``pdf/(cdf - 1) = -hazard(z)/sig``, both
    finite however far ``x`` is from ``mu`` (the quotients of tail probabilities
    underflow to 0/0).
    """
    z = (x - mu) / sig
    if abs(z) < TAIL_Z:
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


@nb.njit(cache=True)
def _gaussian_values(x: float, mu: float, sig: float, split_ties: bool):
    """Values (no derivatives) of the Gaussian loss, win and tie terms at x."""
    z = (x - mu) / sig
    if abs(z) < TAIL_Z:  # one erfc for both tails
        pdf = normal_pdf(z) / sig
        if z >= 0.0:
            upper = 0.5 * math.erfc(z * INV_SQRT2)  # P(Z > z), accurate
            lv = -pdf / upper
            wv = pdf / (1.0 - upper)
        else:
            cdf = 0.5 * math.erfc(-z * INV_SQRT2)
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


def model_terms(kind: int, x: float, mu: float, pa: float, pb: float, split_ties: bool):
    """:func:`logistic_terms` or :func:`gaussian_terms` by ``kind``.

    In compiled code ``kind`` must be a literal (``numba.literally``): the choice is
    made while typing, so a kernel specialised for one kind compiles only that
    kind's terms.
    """
    if kind == LOGISTIC:
        return logistic_terms(x, mu, pa, pb, split_ties)
    return gaussian_terms(x, mu, pa, split_ties)


@overload(model_terms, inline="always")
def _model_terms_ol(kind, x, mu, pa, pb, split_ties):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return lambda kind, x, mu, pa, pb, split_ties: logistic_terms(x, mu, pa, pb, split_ties)
    return lambda kind, x, mu, pa, pb, split_ties: gaussian_terms(x, mu, pa, split_ties)


def counted_terms(kind: int, x: float, mu: float, pa: float, pb: float, n_less: float,
                  n_tied: float, n_more: float, split_ties: bool) -> tuple[float, float]:
    """One distinct term's share of ``Q_g(x)`` and ``Q_g'(x)`` when ``n_less`` copies of
    it placed better than group ``g``, ``n_tied`` in it and ``n_more`` worse:
    ``n_less l + n_tied d + n_more v`` (Theorem 3.2).  ``kind`` is a literal in compiled
    code (see :func:`model_terms`).

    The logistic terms are written without cancellation, ``l = -w_out (1 + tanh z)``
    and ``v = w_out (1 - tanh z)`` from ``e = exp(-2|z|)`` (``1 - tanh z = 2e / (1 +
    e)`` for ``z >= 0``): far in a tail, where a million copies of a tiny ``v``
    balance a few ``l``, the sum keeps its digits and Newton its slope.
    """
    if kind == LOGISTIC:
        return _counted_logistic(x, mu, pa, pb, n_less, n_tied, n_more, split_ties)
    return _counted_gaussian(x, mu, pa, n_less, n_tied, n_more, split_ties)


@overload(counted_terms, inline="always")
def _counted_terms_ol(kind, x, mu, pa, pb, n_less, n_tied, n_more,  # type: ignore[no-untyped-def]
                      split_ties):
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return (lambda kind, x, mu, pa, pb, n_less, n_tied, n_more, split_ties:
                _counted_logistic(x, mu, pa, pb, n_less, n_tied, n_more, split_ties))
    return (lambda kind, x, mu, pa, pb, n_less, n_tied, n_more, split_ties:
            _counted_gaussian(x, mu, pa, n_less, n_tied, n_more, split_ties))


@nb.njit(cache=True, inline="always")
def _counted_logistic(x: float, mu: float, w_arg: float, w_out: float, n_less: float,
                      n_tied: float, n_more: float, split_ties: bool) -> tuple[float, float]:
    z = (x - mu) * w_arg
    e = math.exp(-2.0 * abs(z))
    d = 1.0 + e
    small = 2.0 * e / d  # 1 - |tanh z|
    big = 2.0 / d  # 1 + |tanh z|
    t = (1.0 - e) / d
    if z < 0.0:
        small, big, t = big, small, -t
    tie_mult = 1.0 if split_ties else 2.0
    q = w_out * (n_more * small - n_less * big - n_tied * tie_mult * t)
    qp = -(n_less + n_more + tie_mult * n_tied) * w_arg * w_out * (4.0 * e / (d * d))
    return q, qp


@nb.njit(cache=True, inline="always")
def _counted_gaussian(x: float, mu: float, sig: float, n_less: float, n_tied: float,
                      n_more: float, split_ties: bool) -> tuple[float, float]:
    lv, lp, wv, wp, dv, dp = gaussian_terms(x, mu, sig, split_ties)
    return (n_less * lv + n_tied * dv + n_more * wv,
            n_less * lp + n_tied * dp + n_more * wp)


def term_values_at(kind: int, xs: np.ndarray, terms: OpponentTerms, split_ties: bool,
                   out: np.ndarray) -> None:
    """Every term's values at every point of ``xs``: ``out[c, k, u]`` for term ``u``
    and point ``xs[k]``.

    Logistic: ``out[0, k, u] = w_out tanh((x - mu) w_arg)`` (the sums subtract it);
    Gaussian: the loss, win and tie values in ``c = 0, 1, 2``.  Like
    :func:`model_terms`, ``kind`` is a literal in compiled code.
    """
    if kind == LOGISTIC:
        _logistic_values_at(xs, terms, out)
    else:
        _gaussian_values_at(xs, terms, split_ties, out)


def group_sums_at(kind: int, xs: np.ndarray, terms: DistinctTerms, values: np.ndarray,
                  groups: TieGroups, wsum: np.ndarray, g0: int, g1: int, split_ties: bool,
                  sl: np.ndarray, sw: np.ndarray, sd: np.ndarray) -> None:
    """Sums ``(L, V, D)`` of the loss, win and tie terms of each group ``g0 <= g < g1``
    at every point ``xs[k]``, into ``sl[k, g - g0], sw[k, g - g0], sd[k, g - g0]``.

    Each row is evaluated where ``terms`` are not merged; a merged row reads its
    distinct term's value from ``values`` (:func:`term_values_at` of ``terms.terms``
    at ``xs``).  Logistic: all three follow from ``S = sum_j -w_out_j tanh((x - mu_j)
    w_arg_j)``, ``L = S - W``, ``V = S + W``, ``D = 2 S`` (``S`` with split ties),
    ``W = wsum[g]`` the group's total ``w_out`` -- one tanh per term.  A group's rows
    are added in order, for each point as a sum at that point alone would add them.
    One call fills a chunk of groups (the term arrays are passed once, not per group).
    ``kind`` is a literal in compiled code.
    """
    if kind == LOGISTIC:
        _logistic_sums_at(xs, terms, values, groups, wsum, g0, g1, split_ties, sl, sw, sd)
    else:
        _gaussian_sums_at(xs, terms, values, groups, g0, g1, split_ties, sl, sw, sd)


@overload(term_values_at, inline="always")
def _term_values_at_ol(kind, xs, terms, split_ties, out):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return lambda kind, xs, terms, split_ties, out: _logistic_values_at(xs, terms, out)
    return (lambda kind, xs, terms, split_ties, out:
            _gaussian_values_at(xs, terms, split_ties, out))


@overload(group_sums_at)
def _group_sums_at_ol(kind, xs, terms, values, groups, wsum, g0, g1,  # type: ignore[no-untyped-def]
                      split_ties, sl, sw, sd):
    if not isinstance(kind, types.IntegerLiteral):
        return None  # Numba retries with the literal
    if kind.literal_value == LOGISTIC:
        return (lambda kind, xs, terms, values, groups, wsum, g0, g1, split_ties, sl, sw, sd:
                _logistic_sums_at(xs, terms, values, groups, wsum, g0, g1, split_ties,
                                  sl, sw, sd))
    return (lambda kind, xs, terms, values, groups, wsum, g0, g1, split_ties, sl, sw, sd:
            _gaussian_sums_at(xs, terms, values, groups, g0, g1, split_ties, sl, sw, sd))


@nb.njit(cache=True)
def _logistic_values_at(xs: np.ndarray, terms: OpponentTerms, out: np.ndarray) -> None:
    mu, pa, pb = terms
    for k in range(xs.size):
        for u in range(mu.size):
            out[0, k, u] = pb[u] * fast_tanh((xs[k] - mu[u]) * pa[u])


@nb.njit(cache=True)
def _gaussian_values_at(xs: np.ndarray, terms: OpponentTerms, split_ties: bool,
                        out: np.ndarray) -> None:
    mu, pa, _ = terms
    for k in range(xs.size):
        for u in range(mu.size):
            lv, wv, dv = _gaussian_values(xs[k], mu[u], pa[u], split_ties)
            out[0, k, u] = lv
            out[1, k, u] = wv
            out[2, k, u] = dv


@nb.njit(cache=True)
def _logistic_sums_at(xs: np.ndarray, terms: DistinctTerms, values: np.ndarray,
                      groups: TieGroups, wsum: np.ndarray, g0: int, g1: int, split_ties: bool,
                      sl: np.ndarray, sw: np.ndarray, sd: np.ndarray) -> None:
    K = xs.size
    of = terms.of
    mu, pa, pb = terms.terms
    g_start, g_end = groups
    tie_mult = 1.0 if split_ties else 2.0
    for g in range(g0, g1):
        i = g - g0
        for k in range(K):
            sd[k, i] = 0.0
        if of.size:
            for j in range(g_start[g], g_end[g]):
                u = of[j]
                for k in range(K):
                    sd[k, i] -= values[0, k, u]
        else:
            for j in range(g_start[g], g_end[g]):
                m_j = mu[j]
                a_j = pa[j]
                b_j = pb[j]
                for k in range(K):
                    sd[k, i] -= b_j * fast_tanh((xs[k] - m_j) * a_j)
        w_total = wsum[g]
        for k in range(K):
            sv = sd[k, i]
            sl[k, i] = sv - w_total
            sw[k, i] = sv + w_total
            sd[k, i] = tie_mult * sv


@nb.njit(cache=True)
def _gaussian_sums_at(xs: np.ndarray, terms: DistinctTerms, values: np.ndarray,
                      groups: TieGroups, g0: int, g1: int, split_ties: bool, sl: np.ndarray,
                      sw: np.ndarray, sd: np.ndarray) -> None:
    K = xs.size
    of = terms.of
    mu, pa, _ = terms.terms
    g_start, g_end = groups
    for g in range(g0, g1):
        i = g - g0
        for k in range(K):
            sl[k, i] = 0.0
            sw[k, i] = 0.0
            sd[k, i] = 0.0
        for j in range(g_start[g], g_end[g]):
            if of.size:
                u = of[j]
                for k in range(K):
                    sl[k, i] += values[0, k, u]
                    sw[k, i] += values[1, k, u]
                    sd[k, i] += values[2, k, u]
            else:
                for k in range(K):
                    lv, wv, dv = _gaussian_values(xs[k], mu[j], pa[j], split_ties)
                    sl[k, i] += lv
                    sw[k, i] += wv
                    sd[k, i] += dv
