"""Shared pieces of the systems' explanations (:meth:`RatingSystem.explain`).

Every explanation starts from :func:`rerun`: the round's own update run again on a
copy of the state just before the round, so that ``mu_after`` and ``sigma_after`` are
the numbers the round produced, bit for bit.  :func:`explanation` fills the common
fields of :class:`~podium.core.explain.Explanation` from it; a system adds its
equations, terms and quantities.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from podium.core.explain import Equation, ExplainError, Explanation, Term

if TYPE_CHECKING:
    from podium.systems.base.rounds import RoundInput, RoundOutput
    from podium.systems.base.state import SystemState
    from podium.systems.base.system import RatingSystem

_S = TypeVar("_S", bound="SystemState")

__all__ = ["rerun", "prepared_copy", "explanation", "check_position", "sum_equation",
           "change_terms",
           "opponent_kind", "TEAM_NOTE"]

#: The note of a team round, whose update the systems do not break into terms.
TEAM_NOTE = ("team round: the rating before and after are the round's own, but the update "
             "is not broken into terms (it goes through the team's entity; docs/teams.md)")


def check_position(rnd: RoundInput, position: int) -> int:
    """``position`` as an ``int``; raise :class:`ExplainError` unless it is a row of the
    round."""
    n = int(rnd.players.size)
    if not (isinstance(position, int | np.integer) and 0 <= int(position) < n):
        raise ExplainError(f"contest {rnd.contest.label!r}: position {position!r} is not a "
                           f"participant (0..{n - 1})")
    return int(position)


def prepared_copy(state: _S, rnd: RoundInput) -> _S:
    """A copy of ``state`` with room for every participant of ``rnd`` (a newcomer's
    index is past the state's players, as when the Rater rates the round)."""
    st = cast("_S", state.copy())
    if rnd.players.size:
        st.ensure_players(int(rnd.players.max()) + 1)
    return st


def rerun(system: RatingSystem, state: SystemState, rnd: RoundInput) -> RoundOutput:
    """The round's update, run on a copy of ``state`` (``state`` is left as it is)."""
    return system.round_update(prepared_copy(state, rnd), rnd)


def explanation(system: RatingSystem, rnd: RoundInput, k: int, out: RoundOutput, *,
                performance: float | None | bool = True,
                equations: Sequence[Equation] = (), terms: Sequence[Term] = (),
                quantities: dict[str, float] | None = None,
                notes: Sequence[str] = ()) -> Explanation:
    """An :class:`Explanation` of participant ``k`` of ``rnd`` whose update was ``out``.

    ``performance``: ``True`` takes ``out.perf[k]``; ``None`` or ``False`` gives none;
    a number is used as it is.
    """
    mu0 = float(rnd.mu[k])
    s0 = float(rnd.sigma[k])
    mu1 = float(out.mu[k])
    s1 = float(out.sigma[k])
    shown = system.display_rating(np.array([mu0, mu1]), np.array([s0, s1]))
    d0, d1 = float(shown[0]), float(shown[1])
    if performance is True:
        perf: float | None = float(out.perf[k])
    elif performance is None or performance is False:
        perf = None
    else:
        perf = float(performance)
    all_notes = list(notes)
    if rnd.is_team_round and not equations:
        all_notes.insert(0, TEAM_NOTE)
    return Explanation(
        system=system.name, contest=rnd.contest.label, player=rnd.contest.handles[k],
        place=(int(rnd.lo[k]), int(rnd.hi[k])), participants=int(rnd.players.size),
        mu_before=mu0, sigma_before=s0, mu_after=mu1, sigma_after=s1,
        display_before=d0, display_after=d1, change=d1 - d0, performance=perf,
        debut=bool(rnd.played[k] == 0), equations=list(equations), terms=list(terms),
        quantities=dict(quantities or {}), notes=all_notes,
    )


def opponent_kind(lo: np.ndarray, k: int, j: int) -> str:
    """``"self"``, ``"beat"`` (``k`` placed above ``j``), ``"lost"`` or ``"tied"``."""
    if j == k:
        return "self"
    if lo[j] > lo[k]:
        return "beat"
    if lo[j] < lo[k]:
        return "lost"
    return "tied"


def sum_equation(name: str, formula: str, reference: str, terms: Sequence[Term], *,
                 target: float, at: float | None = None, slope: float | None = None,
                 tolerance: float | None = None, magnitude: float = 0.0) -> Equation:
    """An :class:`Equation` whose total is the sum of ``terms`` (in order).

    ``tolerance`` ``None``: the rounding bound of the sum, ``64 eps`` times the sum of
    the terms' magnitudes, ``|target|`` and ``magnitude`` (the size of the numbers the
    target was computed from: a change ``mu' - mu`` is as exact as ``mu`` is).
    """
    total = 0.0
    mag = abs(target) + abs(magnitude)
    for t in terms:
        total += t.value
        mag += abs(t.value)
    if tolerance is None:
        tolerance = 64.0 * np.finfo(np.float64).eps * mag
    return Equation(name, formula, reference, at, total, target, float(tolerance), slope)


def change_terms(rnd: RoundInput, k: int, values: np.ndarray, equation: str,
                 details: dict[str, np.ndarray] | None = None,
                 skip_self: bool = False) -> list[Term]:
    """One :class:`Term` per participant ``j`` of ``rnd`` with value ``values[j]``,
    named by its handle and kind (:func:`opponent_kind`), with the opponent's rating
    and place and ``details[name][j]`` in its detail."""
    handles = rnd.contest.handles
    out = []
    for j in range(int(rnd.players.size)):
        if skip_self and j == k:
            continue
        d: dict[str, float] = {"mu": float(rnd.mu[j]), "sigma": float(rnd.sigma[j]),
                               "place": float(rnd.lo[j])}
        for name, arr in (details or {}).items():
            d[name] = float(arr[j])
        out.append(Term(handles[j], opponent_kind(rnd.lo, k, j), float(values[j]), equation,
                        d))
    return out


def finite(x: Any) -> float:
    """``float(x)``, checked finite (an explanation never reports NaN as a number)."""
    v = float(x)
    if not math.isfinite(v):  # pragma: no cover - the updates are finite
        raise ExplainError(f"non-finite quantity {v!r} in an explanation")
    return v
