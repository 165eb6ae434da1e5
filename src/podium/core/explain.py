"""Why a rating changed: the result model of a rating system's explanation.

A rating system explains one player's update in one round
(:meth:`podium.systems.RatingSystem.explain`) by re-running that round's update from
the state just before it and reading its intermediate quantities.  The result is an
:class:`Explanation`:

* the rating before and after (``mu``, ``sigma``, the display rating and its change);
* the player's performance in the round (``None`` for a system without one);
* the equations of the update (:class:`Equation`): each names its formula and where it
  comes from (a seed and equation number), the value its :class:`Term`\\ s must add up
  to and the tolerance within which they do;
* the terms (:class:`Term`): each names the opponent (a handle) or the factor it comes
  from, its kind, its value and the equation it belongs to;
* system-specific named quantities (``quantities``) and notes.

:class:`Explanation` is plain data (``dataclasses.asdict``-able); :meth:`Explanation.to_dict`
is its JSON form, optionally keeping only the largest terms of each equation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Term", "Equation", "Explanation", "ExplainError", "top_terms", "format_explanation"]


class ExplainError(ValueError):
    """A round that cannot be explained (the player is not in it, it was not rated, ...)."""


@dataclass(frozen=True)
class Term:
    """One term of one equation of a rating update.

    Attributes
    ----------
    source:
        What the term comes from: an opponent's handle, or the name of a factor
        (``"prior"``, ``"performance 3 of 7"``, ``"correction 1"``, ...).
    kind:
        The term's role: ``"beat"`` (the player finished above the opponent),
        ``"lost"`` (below), ``"tied"``, ``"self"`` (the player's own term), or a factor
        kind (``"prior"``, ``"history"``, ``"new"``, ``"raw"``, ``"correction"``, ...).
    value:
        Its value in the equation.
    equation:
        The :attr:`Equation.name` it belongs to.
    detail:
        Numbers behind the value (an opponent's ``mu``, spread, place, a factor's
        weight), by name.
    """

    source: str
    kind: str
    value: float
    equation: str
    detail: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Equation:
    """An equation of the update whose terms are listed in :attr:`Explanation.terms`.

    The terms of an equation add up to :attr:`total`, which equals :attr:`target`
    within :attr:`tolerance` (an absolute bound on ``|total - target|``).

    Attributes
    ----------
    name:
        Short name (``"performance"``, ``"rating"``, ``"change"``, ...).
    formula:
        The equation in words and symbols.
    reference:
        Where it comes from (``"seed 002, Theorem 3.2"``, ...).
    at:
        The value of the unknown at which the terms are evaluated (the solved
        performance or rating), or ``None`` for a plain sum.
    total:
        The sum of the terms (summed in order, in double precision).
    target:
        What the terms add up to: ``0`` for the equation whose zero was solved, the
        change for a decomposition of the change.
    tolerance:
        The bound on ``|total - target|`` this explanation guarantees (and tests).
    slope:
        For a solved equation, its derivative at :attr:`at` (``total / slope`` is how
        far ``at`` lies from the zero of the summed terms); else ``None``.
    """

    name: str
    formula: str
    reference: str
    at: float | None
    total: float
    target: float
    tolerance: float
    slope: float | None = None

    @property
    def residual(self) -> float:
        """``total - target``."""
        return self.total - self.target

    @property
    def holds(self) -> bool:
        """Whether ``|total - target| <= tolerance`` (a Python ``bool``, whatever the
        numbers' type: it goes into JSON)."""
        return bool(abs(self.residual) <= self.tolerance)


@dataclass(frozen=True)
class Explanation:
    """One player's rating update in one round, as the system computed it.

    Attributes
    ----------
    system:
        The system's name.
    contest:
        The contest's label (its name, or ``#index``); the store also fills
        :attr:`contest_id`.
    player:
        The player's handle.
    place:
        The player's 0-based tie range ``(lo, hi)`` in the standings.
    participants:
        Number of participants of the round.
    mu_before, sigma_before, mu_after, sigma_after:
        The rating and uncertainty before and after the round (``mu_after`` and
        ``sigma_after`` are the values the round produced, bit for bit).
    display_before, display_after, change:
        The display rating before and after and ``change = display_after -
        display_before`` (for a debut ``display_before`` is the newcomer prior's).
    performance:
        The performance the system measured (``None`` for a system without one).
    debut:
        Whether it was the player's first rated round.
    equations, terms:
        The equations of the update and their terms (see :class:`Equation`).
    quantities:
        Named numbers of the update (``beta``, ``gamma``, ``seed``, ...).
    notes:
        What the numbers mean or leave out, in sentences.
    contest_id:
        The store's contest id (``None`` outside a store).
    """

    system: str
    contest: str
    player: str
    place: tuple[int, int]
    participants: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    display_before: float
    display_after: float
    change: float
    performance: float | None
    debut: bool
    equations: list[Equation] = field(default_factory=list)
    terms: list[Term] = field(default_factory=list)
    quantities: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    contest_id: str | None = None

    def equation(self, name: str) -> Equation:
        """The equation called ``name``.

        Raises
        ------
        KeyError
            When the explanation has no such equation.
        """
        for eq in self.equations:
            if eq.name == name:
                return eq
        raise KeyError(f"no equation {name!r} in this explanation "
                       f"(has: {', '.join(e.name for e in self.equations) or 'none'})")

    def terms_of(self, name: str) -> list[Term]:
        """The terms of equation ``name``, in the order the system listed them."""
        return [t for t in self.terms if t.equation == name]

    def top(self, name: str, k: int = 5) -> tuple[list[Term], list[Term]]:
        """The ``k`` terms of equation ``name`` with the largest values (pushing up,
        largest first) and the ``k`` with the smallest negative values (pushing down,
        most negative first); see :func:`top_terms`."""
        return top_terms(self.terms_of(name), k)

    def to_dict(self, *, top: int | None = None) -> dict[str, Any]:
        """The JSON form.

        Parameters
        ----------
        top:
            ``None``: every term.  Else, for each equation with more than ``2 * top``
            terms, only its ``top`` largest and ``top`` most negative terms are listed
            (``terms``), and the equation says how many were left out and what they
            add up to (``omitted``, ``omitted_total``), so that the listed terms plus
            ``omitted_total`` still give ``total``.

        Returns
        -------
        dict
            The fields of the dataclass (floats as they are, non-finite ones as
            ``None``), each equation with ``residual``, ``holds``, ``count`` (its
            number of terms), ``omitted`` and ``omitted_total``, and the terms, each
            with ``source``, ``kind``, ``value``, ``equation`` and ``detail``.
        """
        if top is not None and top < 0:
            raise ValueError(f"top must be >= 0 or None, got {top}")
        terms_out: list[dict[str, Any]] = []
        eqs_out: list[dict[str, Any]] = []
        for eq in self.equations:
            own = self.terms_of(eq.name)
            kept, omitted = own, []
            if top is not None and len(own) > 2 * top:
                up, down = top_terms(own, top)
                chosen = {id(t) for t in (*up, *down)}
                kept = [t for t in own if id(t) in chosen]
                omitted = [t for t in own if id(t) not in chosen]
            eqs_out.append({
                "name": eq.name, "formula": eq.formula, "reference": eq.reference,
                "at": _num(eq.at), "total": _num(eq.total), "target": _num(eq.target),
                "tolerance": _num(eq.tolerance), "slope": _num(eq.slope),
                "residual": _num(eq.residual), "holds": eq.holds, "count": len(own),
                "omitted": len(omitted), "omitted_total": _num(math.fsum(t.value for t in omitted)),
            })
            terms_out.extend(_term_dict(t) for t in kept)
        names = {eq.name for eq in self.equations}
        terms_out.extend(_term_dict(t) for t in self.terms if t.equation not in names)
        return {
            "system": self.system, "contest": self.contest, "contest_id": self.contest_id,
            "player": self.player, "place": list(self.place),
            "participants": self.participants, "debut": self.debut,
            "mu_before": _num(self.mu_before), "sigma_before": _num(self.sigma_before),
            "mu_after": _num(self.mu_after), "sigma_after": _num(self.sigma_after),
            "display_before": _num(self.display_before),
            "display_after": _num(self.display_after), "change": _num(self.change),
            "performance": _num(self.performance),
            "equations": eqs_out, "terms": terms_out,
            "quantities": {k: _num(v) for k, v in self.quantities.items()},
            "notes": list(self.notes),
        }


def top_terms(terms: Sequence[Term], k: int) -> tuple[list[Term], list[Term]]:
    """The ``k`` largest positive terms (largest first) and the ``k`` most negative
    ones (most negative first); ties keep the listed order."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    up = sorted((t for t in terms if t.value > 0), key=lambda t: -t.value)[:k]
    down = sorted((t for t in terms if t.value < 0), key=lambda t: t.value)[:k]
    return up, down


def _num(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _term_dict(t: Term) -> dict[str, Any]:
    return {"source": t.source, "kind": t.kind, "value": _num(t.value),
            "equation": t.equation, "detail": {k: _num(v) for k, v in t.detail.items()}}


def format_explanation(e: Explanation, *, top: int = 5) -> str:
    """``e`` as text (what ``podium explain`` prints): the rating before and after
    (``before + change = after``), the performance, then each equation with its sum and
    tolerance and its terms (the ``top`` pushing up and down most of a long one), the
    named quantities and the notes."""
    where = e.contest if e.contest_id in (None, e.contest) else f"{e.contest} [{e.contest_id}]"
    lo, hi = e.place
    place = f"{lo + 1}" if lo == hi else f"{lo + 1}-{hi + 1} (tied)"
    lines = [
        f"{e.player} in {where} ({e.system}): place {place} of {e.participants}"
        + (", debut" if e.debut else ""),
        f"  rating  mu {e.mu_before:.4f} -> {e.mu_after:.4f}, "
        f"sigma {e.sigma_before:.4f} -> {e.sigma_after:.4f}",
        f"  display {e.display_before:.4f} {'+' if e.change >= 0 else '-'} "
        f"{abs(e.change):.4f} = {e.display_after:.4f}",
    ]
    if e.performance is not None:
        lines.append(f"  performance {e.performance:.4f}")
    for eq in e.equations:
        own = e.terms_of(eq.name)
        at = "" if eq.at is None else f" at {eq.at:.6f}"
        lines += ["", f"{eq.name}: {eq.formula}", f"  [{eq.reference}]",
                  f"  {len(own)} terms{at} sum to {eq.total:.10g} (target {eq.target:.10g}, "
                  f"|difference| {abs(eq.residual):.3g} <= tolerance {eq.tolerance:.3g}: "
                  f"{'holds' if eq.holds else 'DOES NOT HOLD'})"]
        if len(own) <= 2 * top:
            lines += [_term_line(t) for t in own]
        else:
            up, down = top_terms(own, top)
            if up:
                lines.append(f"  pushing up most (top {len(up)}):")
                lines += [_term_line(t, 4) for t in up]
            if down:
                lines.append(f"  pushing down most (top {len(down)}):")
                lines += [_term_line(t, 4) for t in down]
    if e.quantities:
        lines += ["", "quantities: " + ", ".join(f"{k}={v:.6g}" for k, v in e.quantities.items())]
    if e.notes:
        lines += ["", *(f"- {n}" for n in e.notes)]
    return "\n".join(lines)


def _term_line(t: Term, indent: int = 2) -> str:
    detail = ", ".join(f"{k} {v:.6g}" for k, v in t.detail.items())
    return f"{' ' * indent}{t.value:+.8g}  {t.source} ({t.kind}{'; ' + detail if detail else ''})"
