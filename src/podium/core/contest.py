"""The contest model: one ranked round, best first, with tie ranges.

A contest is stored the way the Elo-MMR data format stores it: a list of
``(handle, lo, hi)`` best-first, where ``lo..hi`` (0-based, inclusive) is the
range of places shared by the player's tie group.  Internally the handles are a
tuple and the ranges two NumPy ``int64`` arrays, so that a history of millions
of player-rounds costs a few bytes per row.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.errors import ContestError

__all__ = ["Contest", "Standing"]

Standing = tuple[str, int, int]


def _as_int_array(values: Any, what: str, contest: str) -> npt.NDArray[np.int64]:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ContestError(f"{what} must be one-dimensional", contest=contest)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(
            arr == np.round(arr)
        ):
            arr = arr.astype(np.int64)
        else:
            raise ContestError(f"{what} must be integers", contest=contest)
    return arr.astype(np.int64, copy=False)


class Contest:
    """One ranked round.

    Parameters
    ----------
    standings:
        ``(handle, lo, hi)`` triples, best first.  ``lo`` and ``hi`` are the
        0-based, inclusive range of places shared by a tie (a three-way tie for
        first gives ``(h, 0, 2)`` to each of the three).
    name:
        Human-readable name; used in every error message.
    time_seconds:
        Unix time of the round (integer).  Used by ``drift_per_day``.
    weight:
        Relative informativeness of the round (default 1): Elo-MMR divides the
        performance variance by it.
    perf_ceiling:
        Upper bound on any performance in this round (``None``: no bound).
    url:
        Optional URL; the loaders use it to find duplicate contests.

    Raises
    ------
    ContestError
        On empty standings, a duplicate handle, tie ranges that are not
        contiguous or do not contain the player's position, a non-finite or
        non-positive weight, a non-finite time or a non-finite ceiling.
    """

    __slots__ = ("handles", "lo", "hi", "name", "time_seconds", "weight", "perf_ceiling", "url")

    handles: tuple[str, ...]
    lo: npt.NDArray[np.int64]
    hi: npt.NDArray[np.int64]
    name: str
    time_seconds: int
    weight: float
    perf_ceiling: float | None
    url: str | None

    def __init__(
        self,
        standings: Sequence[Standing] | Sequence[Sequence[Any]],
        *,
        name: str = "",
        time_seconds: int | float = 0,
        weight: float = 1.0,
        perf_ceiling: float | None = None,
        url: str | None = None,
    ) -> None:
        label = name or "<unnamed>"
        handles: list[str] = []
        lo: list[int] = []
        hi: list[int] = []
        for pos, row in enumerate(standings):
            if isinstance(row, str) or len(row) != 3:
                raise ContestError(
                    f"standing #{pos} must be a (handle, lo, hi) triple, got {row!r}",
                    contest=label,
                )
            handles.append(row[0])
            lo.append(row[1])
            hi.append(row[2])
        self._init(handles, lo, hi, name, time_seconds, weight, perf_ceiling, url)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_arrays(
        cls,
        handles: Sequence[str],
        lo: Any,
        hi: Any,
        *,
        name: str = "",
        time_seconds: int | float = 0,
        weight: float = 1.0,
        perf_ceiling: float | None = None,
        url: str | None = None,
    ) -> Contest:
        """Build from parallel arrays (the fast path used by the loaders)."""
        self = cls.__new__(cls)
        self._init(handles, lo, hi, name, time_seconds, weight, perf_ceiling, url)
        return self

    @classmethod
    def from_places(
        cls,
        handles: Sequence[str],
        places: Sequence[int] | npt.ArrayLike,
        **meta: Any,
    ) -> Contest:
        """Build from 1-based places; players with the same place are tied.

        Both competition ranking (1, 1, 3) and dense ranking (1, 1, 2) are
        accepted: only the order of places and their equalities matter.
        """
        label = meta.get("name") or "<unnamed>"
        p = np.asarray(places)
        if p.shape != (len(handles),):
            raise ContestError(
                f"{len(handles)} handles but {p.size} places", contest=label
            )
        if p.size and (not np.issubdtype(p.dtype, np.number) or not np.all(np.isfinite(p))):
            bad = _first_bad(handles, ~np.isfinite(p.astype(float, copy=False)))
            raise ContestError("place must be a finite number", contest=label, player=bad)
        if p.size and np.any(p < 1):
            raise ContestError(
                "places are 1-based and must be >= 1", contest=label,
                player=_first_bad(handles, p < 1),
            )
        return cls._from_keys(handles, p.astype(np.float64), meta)

    @classmethod
    def from_scores(
        cls,
        handles: Sequence[str],
        scores: Sequence[float] | npt.ArrayLike,
        *,
        higher_is_better: bool = True,
        **meta: Any,
    ) -> Contest:
        """Build from scores (higher is better by default); equal scores tie."""
        label = meta.get("name") or "<unnamed>"
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != (len(handles),):
            raise ContestError(f"{len(handles)} handles but {s.size} scores", contest=label)
        if s.size and not np.all(np.isfinite(s)):
            raise ContestError(
                "score must be a finite number", contest=label,
                player=_first_bad(handles, ~np.isfinite(s)),
            )
        return cls._from_keys(handles, -s if higher_is_better else s, meta)

    @classmethod
    def _from_keys(cls, handles: Sequence[str], key: npt.NDArray[np.float64], meta: Any) -> Contest:
        """Sort by ``key`` ascending (best first); equal keys form a tie group."""
        order = np.argsort(key, kind="stable")
        k = key[order]
        n = k.size
        lo = np.arange(n, dtype=np.int64)
        hi = np.arange(n, dtype=np.int64)
        if n:
            new_group = np.empty(n, dtype=bool)
            new_group[0] = True
            new_group[1:] = k[1:] != k[:-1]
            starts = np.flatnonzero(new_group)
            sizes = np.diff(np.append(starts, n))
            lo = np.repeat(starts, sizes).astype(np.int64)
            hi = np.repeat(starts + sizes - 1, sizes).astype(np.int64)
        sorted_handles = [handles[i] for i in order]
        return cls.from_arrays(sorted_handles, lo, hi, **meta)

    # ------------------------------------------------------------------ validation
    def _init(
        self,
        handles: Sequence[str],
        lo: Any,
        hi: Any,
        name: str,
        time_seconds: int | float,
        weight: float,
        perf_ceiling: float | None,
        url: str | None,
    ) -> None:
        label = name or "<unnamed>"
        if not isinstance(name, str):
            raise ContestError(f"name must be a string, got {type(name).__name__}", contest=label)
        hs = tuple(handles)
        n = len(hs)
        if n == 0:
            raise ContestError("standings are empty", contest=label)
        if set(map(type, hs)) != {str} or not all(hs):
            for h in hs:
                if not isinstance(h, str) or not h:
                    raise ContestError(f"every handle must be a non-empty string, got {h!r}",
                                       contest=label)
        if len(set(hs)) != n:
            seen: set[str] = set()
            for h in hs:
                if h in seen:
                    raise ContestError("duplicate handle", contest=label, player=h)
                seen.add(h)
        lo_a = _as_int_array(lo, "lo", label)
        hi_a = _as_int_array(hi, "hi", label)
        if lo_a.shape != (n,) or hi_a.shape != (n,):
            raise ContestError(f"{n} handles but {lo_a.size} lo and {hi_a.size} hi values",
                               contest=label)
        pos = np.arange(n, dtype=np.int64)
        bad = (lo_a > pos) | (hi_a < pos)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ContestError(
                f"tie range ({lo_a[i]}, {hi_a[i]}) does not contain the player's position {i}",
                contest=label, player=hs[i],
            )
        # Contiguity: each position either continues the previous tie group
        # (same lo and hi) or starts a new one right after it ends.
        same = np.zeros(n, dtype=bool)
        same[1:] = (lo_a[1:] == lo_a[:-1]) & (hi_a[1:] == hi_a[:-1])
        starts = np.zeros(n, dtype=bool)
        starts[0] = lo_a[0] == 0
        starts[1:] = (lo_a[1:] == pos[1:]) & (hi_a[:-1] == pos[:-1])
        bad = ~(same | starts)
        last_ok = hi_a[-1] == n - 1
        if bad.any() or not last_ok:
            i = int(np.flatnonzero(bad)[0]) if bad.any() else n - 1
            raise ContestError(
                f"tie range ({lo_a[i]}, {hi_a[i]}) at position {i} is not contiguous with its "
                "neighbours: tied players must be adjacent and share the same (lo, hi)",
                contest=label, player=hs[i],
            )
        if isinstance(time_seconds, bool):
            raise ContestError(f"time_seconds must be a number, got {time_seconds!r}",
                               contest=label)
        if isinstance(time_seconds, int | np.integer):
            t_int = int(time_seconds)  # exact, whatever its size
        else:
            try:
                t = float(time_seconds)
            except (TypeError, ValueError):
                raise ContestError(f"time_seconds must be a number, got {time_seconds!r}",
                                   contest=label) from None
            if not math.isfinite(t):
                raise ContestError(f"time_seconds must be finite, got {time_seconds!r}",
                                   contest=label)
            if t != int(t):
                raise ContestError(f"time_seconds must be a whole number, got {time_seconds!r}",
                                   contest=label)
            t_int = int(t)
        try:
            w = float(weight)
        except (TypeError, ValueError):
            raise ContestError(f"weight must be a number, got {weight!r}", contest=label) from None
        if not math.isfinite(w) or w <= 0:
            raise ContestError(f"weight must be finite and positive, got {weight!r}",
                               contest=label)
        ceil: float | None = None
        if perf_ceiling is not None:
            try:
                ceil = float(perf_ceiling)
            except (TypeError, ValueError):
                raise ContestError(f"perf_ceiling must be a number, got {perf_ceiling!r}",
                                   contest=label) from None
            if math.isnan(ceil) or ceil == -math.inf:
                raise ContestError(f"perf_ceiling must be a number or +inf, got {perf_ceiling!r}",
                                   contest=label)
        if url is not None and not isinstance(url, str):
            raise ContestError(f"url must be a string, got {url!r}", contest=label)
        self.handles = hs
        self.lo = lo_a
        self.hi = hi_a
        self.lo.flags.writeable = False
        self.hi.flags.writeable = False
        self.name = name
        self.time_seconds = t_int
        self.weight = w
        self.perf_ceiling = ceil
        self.url = url

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.handles)

    @property
    def label(self) -> str:
        """The name used in messages."""
        return self.name or "<unnamed>"

    @property
    def standings(self) -> list[Standing]:
        """The ``(handle, lo, hi)`` triples, best first."""
        return list(zip(self.handles, self.lo.tolist(), self.hi.tolist(), strict=True))

    def __iter__(self) -> Iterator[Standing]:
        return iter(self.standings)

    @property
    def is_outcome_free(self) -> bool:
        """True when everybody tied: such a round carries no information."""
        return int(self.hi[0]) + 1 >= len(self.handles)

    @property
    def places(self) -> npt.NDArray[np.int64]:
        """1-based places; tied players share the best place of their tie."""
        return self.lo + 1

    def to_json_dict(self) -> dict[str, Any]:
        """The Elo-MMR JSON form (``weight``/``perf_ceiling`` only when not default)."""
        d: dict[str, Any] = {"name": self.name}
        if self.url is not None:
            d["url"] = self.url
        d["time_seconds"] = self.time_seconds
        if self.weight != 1.0:
            d["weight"] = self.weight
        if self.perf_ceiling is not None:
            d["perf_ceiling"] = self.perf_ceiling
        d["standings"] = [[h, lo, hi] for h, lo, hi in self.standings]
        return d

    def __repr__(self) -> str:
        return (
            f"Contest(name={self.name!r}, players={len(self)}, time_seconds={self.time_seconds}, "
            f"weight={self.weight}, perf_ceiling={self.perf_ceiling})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Contest):
            return NotImplemented
        return (
            self.handles == other.handles
            and np.array_equal(self.lo, other.lo)
            and np.array_equal(self.hi, other.hi)
            and self.name == other.name
            and self.time_seconds == other.time_seconds
            and self.weight == other.weight
            and self.perf_ceiling == other.perf_ceiling
            and self.url == other.url
        )

    __hash__ = None  # type: ignore[assignment]


def _first_bad(handles: Sequence[str], mask: npt.NDArray[np.bool_]) -> str | None:
    idx = np.flatnonzero(mask)
    return handles[int(idx[0])] if idx.size else None
