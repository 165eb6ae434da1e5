"""Bracketed, safeguarded Newton solvers for the monotone equations of the systems.

A kernel drives a solver one evaluation at a time, so that the function being solved
stays plain code in the kernel (no function objects, which Numba could not cache)::

    state = newton_begin(LO_BOUND, HI_BOUND, start)
    while state.running:
        value, deriv = f(state.x)          # a *decreasing* function of x
        state = newton_next(state, value, deriv)
    return state.x, state.status

:func:`newton_begin` / :func:`newton_next` solve every rating equation: Newton steps
clamped to cut at most 75% of the bracket, run until the bracket collapses to adjacent
floating-point numbers.  :func:`newton_rtol_begin` / :func:`newton_rtol_next` are
driven the same way, for solves nested inside another solve (Elo-R's noising,
[Ebtekar2015] Sec. 5.2): plain Newton with a bisection fallback, stopped once a step
(or the bracket) is below a relative tolerance.

The iteration cap (:data:`MAX_ITER`), the bracket of the Elo-MMR equations
(:data:`SOLVER_BOUNDS`) and the status codes are defined here once.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.numerics.constants import HI_BOUND, LO_BOUND, SOLVER_BOUNDS

__all__ = [
    "SOLVER_BOUNDS",
    "LO_BOUND",
    "HI_BOUND",
    "MAX_ITER",
    "STATUS_OK",
    "STATUS_AT_BOUND",
    "STATUS_MAX_ITER",
    "STATUS_RUNNING",
    "NewtonState",
    "newton_step",
    "newton_begin",
    "newton_next",
    "status_warnings",
    "NewtonRtolState",
    "newton_rtol_begin",
    "newton_rtol_next",
]

#: Safeguarded Newton: never cut more than this fraction of the bracket per step.
MAX_CUT = 0.75
#: Newton steps before a solve gives up (:data:`STATUS_MAX_ITER`).
MAX_ITER = 200

# Solver status codes (returned by the kernels, turned into warnings/errors in Python).
STATUS_OK = 0
#: The zero lies outside the bracket; the bound was returned (as the reference does).
STATUS_AT_BOUND = 1
#: The iteration limit was hit before the bracket collapsed.
STATUS_MAX_ITER = 2
#: Not finished yet (only inside :class:`NewtonState`).
STATUS_RUNNING = -1


class NewtonState(NamedTuple):
    """Where a bracketed Newton solve stands.

    Attributes
    ----------
    lo, hi:
        The current bracket.
    x:
        The current guess (the answer once ``running`` is false).
    lo0, hi0:
        The initial bracket (a zero at one of them is :data:`STATUS_AT_BOUND`).
    steps:
        Newton steps taken.
    status:
        :data:`STATUS_RUNNING` until the solve ends, then a final status code.
    running:
        Whether the caller should evaluate the function at ``x`` once more.
    """

    lo: float
    hi: float
    x: float
    lo0: float
    hi0: float
    steps: int
    status: int
    running: bool


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
        ceil = lo + MAX_CUT * (hi - lo)
        if extrapolate >= lo:
            new = extrapolate if extrapolate < ceil else ceil
        else:
            new = 0.5 * (lo + hi)
    else:
        hi = guess
        floor = hi - MAX_CUT * (hi - lo)
        if extrapolate <= hi:
            new = extrapolate if extrapolate > floor else floor
        else:
            new = 0.5 * (lo + hi)
    done = not (lo < new < hi)
    return lo, hi, new, done


@nb.njit(cache=True)
def newton_begin(lo: float, hi: float, start: float) -> NewtonState:
    """A solve on the bracket ``(lo, hi)`` from ``start`` (the midpoint if outside).

    Parameters
    ----------
    lo, hi:
        The bracket, usually ``LO_BOUND, HI_BOUND``.
    start:
        The first guess; only the number of steps depends on it.

    Returns
    -------
    NewtonState
        Running, at the first guess.
    """
    guess = start
    if not (lo < guess < hi):
        guess = 0.5 * (lo + hi)
    return NewtonState(lo, hi, guess, lo, hi, 0, STATUS_RUNNING, True)


@nb.njit(cache=True)
def newton_next(state: NewtonState, value: float, deriv: float) -> NewtonState:
    """Advance a solve by one safeguarded Newton step (:func:`newton_step`).

    Parameters
    ----------
    state:
        The solve, with ``value, deriv = f(state.x), f'(state.x)`` of a decreasing
        ``f`` (negate both for an increasing one).
    value, deriv:
        The function and its derivative at ``state.x``.

    Returns
    -------
    NewtonState
        Finished (``running`` false) when ``value`` is exactly 0
        (:data:`STATUS_OK`), when the bracket has collapsed (:data:`STATUS_OK`, or
        :data:`STATUS_AT_BOUND` at an end of the initial bracket) or after
        :data:`MAX_ITER` steps (:data:`STATUS_MAX_ITER`).
    """
    if value == 0.0:
        return NewtonState(state.lo, state.hi, state.x, state.lo0, state.hi0, state.steps,
                           STATUS_OK, False)
    lo, hi, x, done = newton_step(state.lo, state.hi, state.x, value, deriv)
    steps = state.steps + 1
    if done:
        status = STATUS_AT_BOUND if (x <= state.lo0 or x >= state.hi0) else STATUS_OK
    elif steps >= MAX_ITER:
        status = STATUS_MAX_ITER
    else:
        status = STATUS_RUNNING
    return NewtonState(lo, hi, x, state.lo0, state.hi0, steps, status,
                       status == STATUS_RUNNING)


class NewtonRtolState(NamedTuple):
    """Where a Newton solve with a relative stopping tolerance stands
    (:func:`newton_rtol_next`).

    Attributes
    ----------
    lo, hi:
        The current bracket.
    x:
        The current guess (the answer once ``running`` is false).
    steps:
        Newton steps taken.
    status:
        :data:`STATUS_RUNNING` until the solve ends, then :data:`STATUS_OK` or
        :data:`STATUS_MAX_ITER`.
    running:
        Whether the caller should evaluate the function at ``x`` once more.
    step_rtol, bracket_rtol, polish, max_iter:
        The stopping rule, as given to :func:`newton_rtol_begin`.
    """

    lo: float
    hi: float
    x: float
    steps: int
    status: int
    running: bool
    step_rtol: float
    bracket_rtol: float
    polish: bool
    max_iter: int


@nb.njit(cache=True, inline="always")
def newton_rtol_begin(lo: float, hi: float, start: float, step_rtol: float,
                      bracket_rtol: float, polish: bool, max_iter: int) -> NewtonRtolState:
    """A solve on the closed bracket ``[lo, hi]`` from ``start`` (the midpoint if outside).

    Parameters
    ----------
    lo, hi:
        The bracket (``lo <= hi``); the zero is assumed to lie in it.
    start:
        The first guess.
    step_rtol:
        Stop once a Newton step ``|x_new - x|`` is at most ``step_rtol * |x|``.
    bracket_rtol:
        Stop once the bracket ``hi - lo`` is at most ``bracket_rtol * |x|``
        (``0.0``: only when it has shrunk to a point).
    polish:
        Whether that last small Newton step is taken (when it stays in the bracket)
        or the point it starts from is returned.
    max_iter:
        Steps before the solve gives up (:data:`STATUS_MAX_ITER`), usually
        :data:`MAX_ITER`.

    Returns
    -------
    NewtonRtolState
        Running, at the first guess.
    """
    x = start if lo <= start <= hi else 0.5 * (lo + hi)
    return NewtonRtolState(lo, hi, x, 0, STATUS_RUNNING, True, step_rtol, bracket_rtol,
                           polish, max_iter)


@nb.njit(cache=True, inline="always")
def newton_rtol_next(state: NewtonRtolState, value: float, deriv: float
                     ) -> NewtonRtolState:
    """Advance a solve by one Newton step, with bisection when the step leaves the bracket.

    With ``f`` decreasing, ``value = f(x)`` and ``deriv = f'(x)`` at ``x = state.x``:
    ``x`` becomes the bracket's upper end when ``value < 0``, its lower end otherwise;
    the Newton point ``x - value / deriv`` is taken when it lies strictly inside the
    bracket and the midpoint otherwise.  Unlike :func:`newton_next` there is no clamp:
    the solve is meant for smooth equations started close to their zero, where plain
    Newton converges quadratically and the relative tests end it after a step or two.

    Parameters
    ----------
    state:
        The solve (negate ``value`` and ``deriv`` of an increasing function).
    value, deriv:
        The function and its derivative at ``state.x``.

    Returns
    -------
    NewtonRtolState
        Finished (``running`` false, :data:`STATUS_OK`) when ``value`` is exactly 0,
        when the Newton step is within ``step_rtol`` (``x`` moves by it only with
        ``polish``, and only inside the bracket), or when the bracket is within
        ``bracket_rtol`` (``x`` stays); :data:`STATUS_MAX_ITER` after ``max_iter``
        steps (``x`` is then the last step's, not evaluated).
    """
    x = state.x
    lo = state.lo
    hi = state.hi
    steps = state.steps
    status = STATUS_OK
    if value != 0.0:
        if value < 0.0:
            hi = x
        else:
            lo = x
        new = x - value / deriv
        if abs(new - x) <= state.step_rtol * abs(x):
            if state.polish and lo <= new <= hi:
                x = new
        elif not (hi - lo <= state.bracket_rtol * abs(x)):
            x = new if lo < new < hi else 0.5 * (lo + hi)
            steps += 1
            status = STATUS_MAX_ITER if steps >= state.max_iter else STATUS_RUNNING
    return NewtonRtolState(lo, hi, x, steps, status, status == STATUS_RUNNING,
                           state.step_rtol, state.bracket_rtol, state.polish,
                           state.max_iter)


def status_warnings(status: npt.ArrayLike, label: str, what: str) -> list[str]:
    """The warnings of a round whose equations ended with ``status`` (one code per
    equation): how many had no zero inside :data:`SOLVER_BOUNDS` (the bound was used,
    :data:`STATUS_AT_BOUND`) and how many hit :data:`MAX_ITER` (:data:`STATUS_MAX_ITER`).

    Parameters
    ----------
    status:
        Status codes of the round's solves.
    label:
        The contest's label, as messages name it.
    what:
        What was solved (``"performance"``, ``"rating"``, ``"Elo-R performance"``, ...).

    Returns
    -------
    list of str
        At most one line per kind of failure; empty when every solve converged.
    """
    codes = np.asarray(status)
    out = []
    n_bound = int(np.count_nonzero(codes == STATUS_AT_BOUND))
    n_iter = int(np.count_nonzero(codes == STATUS_MAX_ITER))
    if n_bound:
        out.append(f"contest {label!r}: {n_bound} {what} equation(s) had no zero inside "
                   f"({LO_BOUND:g}, {HI_BOUND:g}); the bound was used")
    if n_iter:
        out.append(f"contest {label!r}: {n_iter} {what} solve(s) did not converge")
    return out
