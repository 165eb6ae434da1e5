"""A system's per-player state beyond ``(mu, sigma)``, declared field by field.

:class:`SystemState` is what the :class:`~podium.rater.Rater` asks of a state (room for
newcomers, a checkpoint image, a copy, a roll-back); :class:`ArrayState` derives all of
it from a list of :class:`StateField` declarations.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Literal, Self

import numpy as np

from podium.core.state import grow

__all__ = ["SystemState", "StateField", "player_array", "whole_array", "int_scalar",
           "ArrayState", "NoPlayerState"]

class SystemState(ABC):
    """Per-player arrays a system keeps beyond (mu, sigma)."""

    @abstractmethod
    def ensure_players(self, n: int) -> None:
        """Make room for players ``0..n-1`` (new rows hold the newcomer prior)."""

    @abstractmethod
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to resume, as named arrays (for checkpoints)."""

    @classmethod
    @abstractmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> SystemState:
        """Inverse of :meth:`to_arrays`."""

    @abstractmethod
    def copy(self) -> SystemState:
        """A deep copy (used to roll back a round that failed)."""

    def truncate_players(self, n: int) -> None:
        """Forget players ``n..`` that a failed round made room for (the Rater calls it
        when a round raises): their rows are refilled with the newcomer prior when
        :meth:`ensure_players` grows the state again.  The default lowers the count
        ``n`` kept by :class:`ArrayState` and the factor pool."""
        if getattr(self, "n", 0) > n:
            self.n = n


@dataclass(frozen=True)
class StateField:
    """One named entry of an :class:`ArrayState` (and of its checkpoint image).

    Attributes
    ----------
    name:
        Attribute name, also the array's name in :meth:`ArrayState.to_arrays`.
    kind:
        ``"player"``: one row per player (grown geometrically, the first ``n`` rows
        valid and saved); ``"array"``: a whole array saved as it is (e.g. a table of
        pairs); ``"int"``: an integer saved as a one-element ``int64`` array.
    dtype:
        The array's dtype (``"player"`` and ``"array"``).
    fill:
        ``"player"``: a newcomer's value, a number or the name of an attribute of the
        state (e.g. a constructor parameter) holding it.
    optional:
        ``"int"``: the value may be ``None`` (saved as an empty array).
    required:
        ``"int"``: loading fails without it; ``False`` keeps the default (0).
    """

    name: str
    kind: Literal["player", "array", "int"]
    dtype: type[np.generic] = np.float64
    fill: float | str = 0.0
    optional: bool = False
    required: bool = True


def player_array(name: str, dtype: type[np.generic] = np.float64,
                 fill: float | str = 0.0) -> StateField:
    """A per-player array whose newcomer rows hold ``fill``."""
    return StateField(name, "player", dtype, fill)


def whole_array(name: str, dtype: type[np.generic] = np.float64) -> StateField:
    """An array saved and copied whole (not indexed by player)."""
    return StateField(name, "array", dtype)


def int_scalar(name: str, *, optional: bool = False, required: bool = True) -> StateField:
    """An integer (a counter, a time); ``optional`` allows ``None``."""
    return StateField(name, "int", np.int64, optional=optional, required=required)


class ArrayState(SystemState):
    """A :class:`SystemState` declared field by field.

    A subclass lists its entries in :attr:`FIELDS` (in checkpoint order) and the
    names of its constructor arguments in :attr:`PARAMS`; :meth:`ensure_players`,
    :meth:`to_arrays`, :meth:`from_arrays` and :meth:`copy` follow from them:

    * ``"player"`` fields grow with the players (new rows: the field's ``fill``) and
      are saved as their first ``n`` rows;
    * ``"array"`` fields are saved whole; ``"int"`` fields as one-element ``int64``
      arrays (an ``optional`` one that is ``None`` as an empty array);
    * the constructor arguments, when there are any, are saved last as one array
      named :attr:`PARAMS_KEY` (``"prior"``).

    ``n`` (the number of players) is an attribute of every state; it is saved only
    when a field named ``"n"`` is declared, and otherwise restored as the length of
    the player arrays.  A state with more structure (ragged lists, a pool) extends
    the derived methods and calls ``super()``.
    """

    FIELDS: ClassVar[tuple[StateField, ...]] = ()
    PARAMS: ClassVar[tuple[str, ...]] = ()
    PARAMS_KEY: ClassVar[str] = "prior"

    def __init__(self, *params: float) -> None:
        if len(params) != len(self.PARAMS):
            raise TypeError(
                f"{type(self).__name__} takes {len(self.PARAMS)} argument(s) "
                f"({', '.join(self.PARAMS)}), got {len(params)}"
            )
        for name, value in zip(self.PARAMS, params, strict=True):
            setattr(self, name, value)
        self.n = 0
        for f in self.FIELDS:
            if f.kind == "int":
                setattr(self, f.name, None if f.optional else 0)
            else:
                setattr(self, f.name, np.zeros(0, dtype=f.dtype))

    def _fill(self, f: StateField) -> float:
        return float(getattr(self, f.fill)) if isinstance(f.fill, str) else f.fill

    def ensure_players(self, n: int) -> None:
        """Make room for players ``0..n-1``; new rows of every ``"player"`` field hold
        its ``fill``."""
        if n <= self.n:
            return
        for f in self.FIELDS:
            if f.kind == "player":
                arr = grow(getattr(self, f.name), n)
                arr[self.n:n] = self._fill(f)
                setattr(self, f.name, arr)
        self.n = n

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The declared fields in order (player fields: first ``n`` rows), then the
        constructor arguments as ``"prior"`` (when there are any)."""
        out: dict[str, np.ndarray] = {}
        for f in self.FIELDS:
            v = getattr(self, f.name)
            if f.kind == "int":
                out[f.name] = (np.zeros(0, dtype=np.int64) if v is None
                               else np.array([v], dtype=np.int64))
            elif f.kind == "player":
                out[f.name] = v[: self.n].copy()
            else:
                out[f.name] = v.copy()
        if self.PARAMS:
            out[self.PARAMS_KEY] = np.array([getattr(self, p) for p in self.PARAMS])
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> Self:
        """Inverse of :meth:`to_arrays`.

        Raises
        ------
        KeyError, ValueError
            When an entry is missing or the player arrays disagree in length (the
            checkpoint readers turn these into :class:`~podium.errors.CheckpointError`).
        """
        params = [float(x) for x in np.asarray(d[cls.PARAMS_KEY]).reshape(-1)] \
            if cls.PARAMS else []
        st = cls(*params)
        rows: int | None = None
        for f in cls.FIELDS:
            if f.kind == "int":
                if f.name not in d and not f.required:
                    continue
                a = np.asarray(d[f.name]).reshape(-1)
                if a.size == 0 and not f.optional:
                    raise ValueError(f"state entry {f.name!r} is empty")
                setattr(st, f.name, int(a[0]) if a.size else None)
                continue
            arr = np.array(d[f.name], dtype=f.dtype)
            if f.kind == "player":
                if rows is not None and arr.shape[0] != rows:
                    raise ValueError(
                        f"state entry {f.name!r} has {arr.shape[0]} rows, not {rows}"
                    )
                rows = arr.shape[0]
            setattr(st, f.name, arr)
        if not any(f.name == "n" for f in cls.FIELDS):
            st.n = rows or 0
        return st

    def copy(self) -> Self:
        """A deep copy: every array copied, every integer and parameter kept."""
        st = type(self)(*[getattr(self, p) for p in self.PARAMS])
        for f in self.FIELDS:
            v = getattr(self, f.name)
            setattr(st, f.name, v if f.kind == "int" else v.copy())
        st.n = self.n
        return st


class NoPlayerState(ArrayState):
    """The state of a system that keeps nothing per player beyond ``(mu, sigma)``
    (which the :class:`~podium.rater.Rater` holds): it only counts the players."""

    FIELDS = (int_scalar("n", required=False),)
