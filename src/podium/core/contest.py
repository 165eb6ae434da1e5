"""The contest model: one ranked round, best first, with tie ranges.

A contest is stored the way the Elo-MMR data format stores it: a list of
``(handle, lo, hi)`` best-first, where ``lo..hi`` (0-based, inclusive) is the
range of places shared by the player's tie group.  Internally the handles are a
tuple and the ranges two NumPy ``int64`` arrays, so that a history of millions
of player-rounds costs a few bytes per row.

A *team* contest ranks teams, not players (see docs/teams.md): each team has a
tie range in team places and one or more members, each with a weight in (0, 1]
(partial play).  It is stored the same way, one row per member, the rows of a
team adjacent and ``lo``/``hi`` the team's range, plus a :class:`Teams` table
(names, row offsets, member weights).  An individual contest is the special case
of one-member teams.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.handles import HandlePool, Spelled, check_codes
from podium.core.standings import (
    check_handles,
    check_ranges,
    place_keys,
    score_keys,
)
from podium.core.teams import Teams, group_team_rows
from podium.errors import ContestError

__all__ = ["Contest", "HandlePool", "Standing", "TeamStanding", "Teams"]

Standing = tuple[str, int, int]
#: ``(team name, lo, hi, members)``; a member is a handle or a ``(handle, weight)`` pair.
TeamStanding = tuple[str, int, int, Sequence[Any]]


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

    A team contest is built with :meth:`from_teams` (or :meth:`from_team_arrays`,
    :meth:`from_team_places`, :meth:`from_team_scores`): ``handles`` then lists the
    members team by team, ``lo``/``hi`` give each row its team's range in *team
    places* (0-based, inclusive, contiguous) and :attr:`teams` holds the names, the
    row offsets and the member weights.  For an individual contest :attr:`teams` is
    ``None``.

    Raises
    ------
    ContestError
        On empty standings, a duplicate handle, tie ranges that are not
        contiguous or do not contain the player's position, a non-finite or
        non-positive weight, a non-finite time or a non-finite ceiling; for a team
        contest also on an empty team, a team name used twice, a player in two teams
        and a member weight outside (0, 1].
    """

    __slots__ = ("_handles", "lo", "hi", "name", "time_seconds", "weight", "perf_ceiling", "url",
                 "teams", "team_round", "_team_names", "_pool", "_codes")

    lo: npt.NDArray[np.int64]
    hi: npt.NDArray[np.int64]
    name: str
    time_seconds: int
    weight: float
    perf_ceiling: float | None
    url: str | None
    teams: Teams | None
    #: True when the round must be rated as a team round: some team has more than one
    #: member or some member weight is not 1.  A round of one-member teams of weight 1
    #: is an individual round (and rated exactly as one).
    team_round: bool

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
        return cls._from_keys(handles, place_keys(handles, places, meta), meta)

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
        return cls._from_keys(handles, score_keys(handles, scores, higher_is_better, meta),
                              meta)

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

    # ------------------------------------------------------------------ team builders
    @classmethod
    def from_teams(cls, teams: Sequence[TeamStanding] | Sequence[Sequence[Any]],
                   **meta: Any) -> Contest:
        """A team contest from ``(team name, lo, hi, members)`` rows, best team first.

        ``lo``/``hi`` are the team's 0-based, inclusive range of team places (two teams
        tied for first: ``lo = 0, hi = 1`` for both).  A member is a handle or a
        ``(handle, weight)`` pair, ``weight`` in (0, 1] (partial play; default 1).

        >>> c = Contest.from_teams([("red", 0, 0, ["ann", ("bob", 0.5)]),
        ...                         ("blue", 1, 1, ["cid", "dee"])], name="match 1")
        >>> c.teams.names, c.handles, c.lo.tolist()
        (('red', 'blue'), ('ann', 'bob', 'cid', 'dee'), [0, 0, 1, 1])
        """
        label = meta.get("name") or "<unnamed>"
        names: list[Any] = []
        t_lo: list[Any] = []
        t_hi: list[Any] = []
        handles: list[Any] = []
        weights: list[Any] = []
        sizes: list[int] = []
        for pos, row in enumerate(teams):
            if isinstance(row, str) or len(row) != 4:
                raise ContestError(
                    f"team #{pos} must be a (name, lo, hi, members) row, got {row!r}",
                    contest=label)
            name, lo, hi, members = row
            if isinstance(members, str) or not isinstance(members, Sequence):
                raise ContestError(f"members must be a list of handles, got {members!r}",
                                   contest=label, team=str(name))
            for m in members:
                if isinstance(m, str):
                    handles.append(m)
                    weights.append(1.0)
                elif isinstance(m, Sequence) and len(m) == 2:
                    handles.append(m[0])
                    weights.append(m[1])
                else:
                    raise ContestError(
                        f"a member must be a handle or a (handle, weight) pair, got {m!r}",
                        contest=label, team=str(name))
            names.append(name)
            t_lo.append(lo)
            t_hi.append(hi)
            sizes.append(len(members))
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return cls.from_team_arrays(handles, offsets, names, t_lo, t_hi, weights, **meta)

    @classmethod
    def from_team_arrays(
        cls,
        handles: Sequence[str],
        offsets: Any,
        names: Sequence[str],
        team_lo: Any,
        team_hi: Any,
        member_weight: Any = None,
        **meta: Any,
    ) -> Contest:
        """A team contest from arrays: members ``handles`` team by team, team ``t``
        being rows ``offsets[t]:offsets[t + 1]``; per team its name and ``(lo, hi)``
        in team places; per row the member weight ``member_weight`` (``None``: all 1).
        ``meta``: the contest's ``name``, ``time_seconds``, ``weight``, ``perf_ceiling``
        and ``url``, as for :class:`Contest`."""
        label = meta.get("name") or "<unnamed>"
        off = _as_int_array(offsets, "team offsets", label)
        n = len(handles)
        t = len(names)
        if off.shape != (t + 1,) or (t and (off[0] != 0 or off[-1] != n)):
            raise ContestError(
                f"{t} teams need {t + 1} row offsets from 0 to {n}, got {off.tolist()}",
                contest=label)
        sizes = np.diff(off)
        if np.any(sizes < 0):
            raise ContestError("team offsets must not decrease", contest=label)
        empty = np.flatnonzero(sizes == 0)
        if empty.size:
            raise ContestError("the team has no members", contest=label,
                               team=str(names[int(empty[0])]))
        lo_t = _as_int_array(team_lo, "team lo", label)
        hi_t = _as_int_array(team_hi, "team hi", label)
        if lo_t.shape != (t,) or hi_t.shape != (t,):
            raise ContestError(f"{t} teams but {lo_t.size} lo and {hi_t.size} hi values",
                               contest=label)
        weight = member_weight
        if weight is None:
            w = np.ones(n, dtype=np.float64)
        else:
            try:
                w = np.array(weight, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                w = np.full(n, np.nan)
                for i, x in enumerate(weight):
                    try:
                        w[i] = float(x) if not isinstance(x, bool) else np.nan
                    except (TypeError, ValueError):
                        break
                bad_i = int(np.flatnonzero(np.isnan(w))[0])
                raise ContestError(f"member weight must be a number in (0, 1], got "
                                   f"{list(weight)[bad_i]!r}", contest=label,
                                   player=str(handles[bad_i])) from None
            if w.shape != (n,):
                raise ContestError(f"{n} members but {w.size} weights", contest=label)
        bad = ~((w > 0.0) & (w <= 1.0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            team_i = int(np.searchsorted(off, i, side="right") - 1)
            raise ContestError(f"member weight must be in (0, 1], got {float(w[i])!r}",
                               contest=label, team=str(names[team_i]), player=str(handles[i]))
        self = cls.__new__(cls)
        team_names = tuple(names)
        self._init(handles, np.repeat(lo_t, sizes), np.repeat(hi_t, sizes),
                   meta.get("name", ""), meta.get("time_seconds", 0),
                   meta.get("weight", 1.0), meta.get("perf_ceiling"), meta.get("url"),
                   teams=(team_names, off, lo_t, hi_t, w))
        return self

    @classmethod
    def from_team_places(cls, handles: Sequence[str], teams: Sequence[str], places: Any,
                         member_weight: Any = None, **meta: Any) -> Contest:
        """A team contest from one row per member: its handle, its team's name and the
        team's 1-based place (the rows of a team must agree); lower is better and equal
        places tie.  ``member_weight``: per-row member weights (``None``: all 1)."""
        return cls._from_team_keys(handles, teams, place_keys(handles, places, meta),
                                   member_weight, "place", meta)

    @classmethod
    def from_team_scores(cls, handles: Sequence[str], teams: Sequence[str], scores: Any,
                         member_weight: Any = None, *, higher_is_better: bool = True,
                         **meta: Any) -> Contest:
        """As :meth:`from_team_places` with each team's score (higher is better by
        default; equal scores tie)."""
        return cls._from_team_keys(handles, teams,
                                   score_keys(handles, scores, higher_is_better, meta),
                                   member_weight, "score", meta)

    @classmethod
    def _from_team_keys(cls, handles: Sequence[str], teams: Sequence[str],
                        key: npt.NDArray[np.float64], weight: Any, what: str,
                        meta: Any) -> Contest:
        rows = group_team_rows(handles, teams, key, weight, what, meta.get("name") or "<unnamed>")
        return cls.from_team_arrays(*rows, **meta)

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
        teams: tuple[tuple[str, ...], npt.NDArray[np.int64], npt.NDArray[np.int64],
                     npt.NDArray[np.int64], npt.NDArray[np.float64]] | None = None,
        codes: tuple[HandlePool, npt.NDArray[np.int64]] | None = None,
    ) -> None:
        label = name or "<unnamed>"
        if not isinstance(name, str):
            raise ContestError(f"name must be a string, got {type(name).__name__}", contest=label)
        if codes is not None:  # handles of a pool: distinct names, each a valid handle
            hs: tuple[str, ...] | None = None
            n = check_codes(codes, label)
        else:
            hs = tuple(handles)
            n = len(hs)
            check_handles(hs, label)
        team_names: tuple[str, ...] = ()
        offsets = np.zeros(0, dtype=np.int64)
        if teams is not None:
            assert hs is not None
            team_names, offsets, t_lo, t_hi, _ = teams
            if set(map(type, team_names)) != {str} or not all(team_names):
                for nm in team_names:
                    if not isinstance(nm, str) or not nm:
                        raise ContestError(
                            f"every team name must be a non-empty string, got {nm!r}",
                            contest=label)
            if len(set(team_names)) != len(team_names):
                seen_t: set[str] = set()
                for nm in team_names:
                    if nm in seen_t:
                        raise ContestError("two teams of the contest have this name",
                                           contest=label, team=nm)
                    seen_t.add(nm)
        if hs is not None and len(set(hs)) != n:
            seen: dict[str, int] = {}
            for i, h in enumerate(hs):
                if h in seen:
                    if teams is None:
                        raise ContestError("duplicate handle", contest=label, player=h)
                    a = int(np.searchsorted(offsets, seen[h], side="right") - 1)
                    b = int(np.searchsorted(offsets, i, side="right") - 1)
                    where = (f"in two teams ({team_names[a]!r} and {team_names[b]!r})"
                             if a != b else f"twice in team {team_names[a]!r}")
                    raise ContestError(f"the player is {where}", contest=label, player=h)
                seen[h] = i
        lo_a = _as_int_array(lo, "lo", label)
        hi_a = _as_int_array(hi, "hi", label)
        if lo_a.shape != (n,) or hi_a.shape != (n,):
            raise ContestError(f"{n} handles but {lo_a.size} lo and {hi_a.size} hi values",
                               contest=label)
        if teams is None:
            check_ranges(lo_a, hi_a, hs if hs is not None else Spelled(codes), label,
                          "player")
        else:
            check_ranges(t_lo, t_hi, team_names, label, "team")
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
        self._handles = hs
        self.lo = lo_a
        self.hi = hi_a
        self.lo.flags.writeable = False
        self.hi.flags.writeable = False
        self.name = name
        self.time_seconds = t_int
        self.weight = w
        self.perf_ceiling = ceil
        self.url = url
        self.teams = None
        self.team_round = False
        self._team_names: tuple[str, ...] | None = None
        # a loader's numbers: the pool and this contest's codes in it (two slots, no
        # tuple per contest)
        self._pool: HandlePool | None = None
        self._codes: npt.NDArray[np.int64] | None = None
        if codes is not None:
            self._pool, self._codes = codes
            codes[1].flags.writeable = False
        if teams is not None:
            offsets.flags.writeable = False
            w_arr = teams[4]
            w_arr.flags.writeable = False
            self.teams = Teams(team_names, offsets, w_arr)
            self.team_round = len(team_names) != n or bool((w_arr != 1.0).any())

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return int(self.lo.shape[0])

    @property
    def handles(self) -> tuple[str, ...]:
        """The players' handles, best first (one per standing)."""
        hs = self._handles
        if hs is None:  # numbered by a loader: spelled out on first use
            assert self._pool is not None and self._codes is not None
            names = self._pool.names
            hs = self._handles = tuple(map(names.__getitem__, self._codes.tolist()))
        return hs

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
    def handle_codes(self) -> tuple[HandlePool, npt.NDArray[np.int64]] | None:
        """``(pool, codes)`` when a loader numbered the handles: ``pool.names[codes[k]]``
        is ``handles[k]`` (see :class:`HandlePool`); ``None`` otherwise."""
        if self._codes is None:
            return None
        assert self._pool is not None
        return self._pool, self._codes

    @classmethod
    def from_codes(
        cls, pool: HandlePool, codes: npt.NDArray[np.int64], lo: Any, hi: Any, *,
        name: str = "", time_seconds: int | float = 0, weight: float = 1.0,
        perf_ceiling: float | None = None, url: str | None = None,
    ) -> Contest:
        """Build from the handles' numbers in ``pool`` (for loaders, whose pool holds
        only valid, distinct handles): :meth:`from_arrays` without spelling the
        handles out until they are read."""
        self = cls.__new__(cls)
        self._init((), lo, hi, name, time_seconds, weight, perf_ceiling, url,
                   codes=(pool, codes))
        return self

    def __getstate__(self) -> dict[str, Any]:
        # a copy or pickle does not carry the load's handle pool
        state = {k: getattr(self, k) for k in Contest.__slots__
                 if k not in ("_pool", "_codes", "_handles")}
        state["_handles"] = self.handles
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._pool = self._codes = None

    @property
    def is_outcome_free(self) -> bool:
        """True when everybody (every team) tied, or there is one side only.

        Such a round has no order to predict, so the ranking metrics count it for
        nothing; the Rater rates it as a draw when it has two sides or more, unless
        the system's ``all_tied`` is ``"skip"``
        (:meth:`~podium.systems.RatingSystem.skip_reason`)."""
        return int(self.hi[0]) + 1 >= self.n_teams

    @property
    def n_teams(self) -> int:
        """Number of teams (of players, for an individual contest)."""
        return len(self) if self.teams is None else len(self.teams)

    @property
    def team_names(self) -> tuple[str, ...] | None:
        """Per row: the name of the row's team (``None`` for an individual contest)."""
        t = self.teams
        if t is None:
            return None
        if self._team_names is None:
            names = t.names
            self._team_names = tuple(names[i] for i in t.team_of.tolist())
        return self._team_names

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
        t = self.teams
        if t is None:
            d["standings"] = [[h, lo, hi] for h, lo, hi in self.standings]
            return d
        rows = []
        off = t.offsets.tolist()
        w = t.weight.tolist()
        for k, nm in enumerate(t.names):
            a, b = off[k], off[k + 1]
            members: list[Any] = [
                self.handles[i] if w[i] == 1.0 else [self.handles[i], w[i]] for i in range(a, b)
            ]
            rows.append([nm, int(self.lo[a]), int(self.hi[a]), members])
        d["standings"] = rows
        return d

    def __repr__(self) -> str:
        teams = "" if self.teams is None else f"teams={len(self.teams)}, "
        return (
            f"Contest(name={self.name!r}, {teams}players={len(self)}, "
            f"time_seconds={self.time_seconds}, "
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
            and self.teams == other.teams
        )

    __hash__ = None  # type: ignore[assignment]
