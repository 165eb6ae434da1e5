"""Player state as a struct of arrays, and the per-contest event log.

One row per player (index ``0..n-1``), handle <-> index in a dict.  Arrays grow
geometrically.  Every rating system keeps its own extra per-player arrays (for
Elo-MMR: the normal factor and the logistic factors) in its ``SystemState``; the
table below holds what every system reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from podium.core.records import ContestLog, ContestRecord

if TYPE_CHECKING:
    from podium.core.contest import Contest, HandlePool

__all__ = ["PlayerTable", "EventLog", "ContestLog", "ContestRecord", "grow"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def grow(arr: np.ndarray, size: int, fill: float | int = 0) -> np.ndarray:
    """Return ``arr`` with capacity for at least ``size`` rows (geometric growth)."""
    if arr.shape[0] >= size:
        return arr
    cap = max(size, int(arr.shape[0] * 1.5) + 16)
    out = np.full((cap,) + arr.shape[1:], fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


class PlayerTable:
    """Handles, current ratings and per-player counters.

    Attributes (first ``n`` rows valid)
    -----------------------------------
    mu, sigma:
        Current rating and uncertainty (posterior after the player's last round).
    contests:
        Number of rated rounds played.
    last_time:
        ``time_seconds`` of the player's last round.
    max_display, last_change:
        Highest display rating reached and the change of display rating in the
        last round (new minus old; for a debut, new minus the newcomer display).
    """

    _FIELDS = ("mu", "sigma", "contests", "last_time", "max_display", "last_change")

    def __init__(self) -> None:
        self.handles: list[str] = []
        self._index: dict[str, int] = {}
        self._indexed = 0  # handles[:_indexed] are in _index
        # the players of one handle pool's codes (-1: not known by code), see code_map
        self._pool: HandlePool | None = None
        self._by_code: IntArray = np.zeros(0, dtype=np.int64)
        self._n_by_code = 0  # how many players _by_code holds
        self.mu: FloatArray = np.zeros(0)
        self.sigma: FloatArray = np.zeros(0)
        self.contests: IntArray = np.zeros(0, dtype=np.int64)
        self.last_time: IntArray = np.zeros(0, dtype=np.int64)
        self.max_display: FloatArray = np.zeros(0)
        self.last_change: FloatArray = np.zeros(0)

    @property
    def n(self) -> int:
        return len(self.handles)

    @property
    def index(self) -> dict[str, int]:
        """``handle -> row`` of every player.  Brought up to date when asked: the
        players added since are entered then, so that a round whose players are all
        found by their handle numbers (a loader's, :meth:`lookup_rounds`) never builds
        it.  Add players through :meth:`add_players` (or by extending
        :attr:`handles`), not through this dictionary."""
        n = len(self.handles)
        if self._indexed < n:
            # a slice, not islice: islice steps over the first _indexed handles one by one
            # (28 us among 5,000 players, on every write that adds a player)
            self._index.update(zip(self.handles[self._indexed:n],
                                   range(self._indexed, n), strict=True))
            self._indexed = n
        return self._index

    def lookup(self, handles: Sequence[str]) -> tuple[IntArray, list[str]]:
        """Indices of ``handles``, ``-1`` for unknown ones; also the list of unknown handles."""
        idx = np.fromiter(
            map(self.index.get, handles, repeat(-1)), dtype=np.int64, count=len(handles)
        )
        missing = [handles[i] for i in np.flatnonzero(idx < 0).tolist()]
        return idx, missing

    def lookup_or_add(
        self, handles: Sequence[str], mu: float, sigma: float, time: int
    ) -> tuple[IntArray, int]:
        """Indices of ``handles`` (distinct), adding unknown ones with the newcomer prior.

        Returns the indices and the number of players added."""
        idx, missing = self.lookup(handles)
        if missing:
            start = self.n
            self.add_players(missing, mu, sigma, time)
            idx[idx < 0] = np.arange(start, self.n, dtype=np.int64)
        return idx, len(missing)

    def add_players(self, handles: Iterable[str], mu: float, sigma: float, time: int) -> None:
        """Append new players with the newcomer prior."""
        new = list(handles)
        if not new:
            return
        start = self.n
        self.handles.extend(new)  # the index enters them when asked
        end = self.n
        for name in self._FIELDS:
            setattr(self, name, grow(getattr(self, name), end))
        self.mu[start:end] = mu
        self.sigma[start:end] = sigma
        self.contests[start:end] = 0
        self.last_time[start:end] = time
        self.max_display[start:end] = -np.inf
        self.last_change[start:end] = 0.0

    def reserve(self, n: int) -> None:
        """Make room for ``n`` rows without adding players (rows ``n..`` beyond the
        players hold whatever the next players' code writes there)."""
        if self.mu.shape[0] < n:
            for name in self._FIELDS:
                setattr(self, name, grow(getattr(self, name), n))

    def truncate(self, n: int) -> None:
        """Forget players ``n..`` (used to roll back a failed round)."""
        for h in self.handles[n:self._indexed]:
            del self._index[h]
        self._indexed = min(self._indexed, n)
        del self.handles[n:]
        self._by_code[self._by_code >= n] = -1
        self._n_by_code = int(np.count_nonzero(self._by_code >= 0))

    def code_map(self, pool: HandlePool) -> IntArray:
        """``map[code]``: the player whose handle is ``pool.names[code]``, or ``-1`` when
        not known by code (a newcomer, or a player first seen under another pool: look
        it up in :attr:`index`).  The caller records the players it finds with
        :meth:`remember_codes`.  One pool is remembered at a time (the last one asked)."""
        if pool is not self._pool:
            self._pool = pool
            self._by_code = np.full(len(pool), -1, dtype=np.int64)
            self._n_by_code = 0
        elif self._by_code.size < len(pool):
            self._by_code = grow(self._by_code, len(pool), -1)
        return self._by_code

    def remember_codes(self, pool: HandlePool, codes: IntArray, players: IntArray, *,
                       distinct: bool = False) -> None:
        """Record that ``pool.names[codes[k]]`` is player ``players[k]`` (codes the map
        of :meth:`code_map` does not hold yet; ``distinct``: no code twice)."""
        if pool is self._pool and codes.size:
            self._by_code[codes] = players
            self._n_by_code += codes.size if distinct else int(np.unique(codes).size)

    def lookup_rounds(
        self, contests: Sequence[Contest], offsets: Sequence[int]
    ) -> tuple[IntArray, HandlePool | None, IntArray | None]:
        """The players of several rounds, back to back (``-1``: not a known player);
        ``offsets[r]`` is where round ``r``'s rows start.

        Contests whose handles a loader numbered (:attr:`Contest.handle_codes`) are
        looked up with one gather over the codes of their pool; the others, handle by
        handle in :attr:`index`.  Returns the players, the pool used (``None``: none)
        and each row's code in it (``-1`` for a row of a contest not numbered in it).
        """
        pool = next((hc[0] for c in contests if (hc := c.handle_codes) is not None), None)
        if pool is None:
            handles = chain.from_iterable(c.handles for c in contests)
            players = np.fromiter(map(self.index.get, handles, repeat(-1)), dtype=np.int64,
                                  count=offsets[-1])
            return players, None, None
        parts = []
        others: list[int] = []  # the contests not numbered in ``pool``
        for r, c in enumerate(contests):
            hc = c.handle_codes
            if hc is not None and hc[0] is pool:
                parts.append(hc[1])
            else:
                parts.append(np.full(len(c), -1, dtype=np.int64))
                others.append(r)
        codes = np.concatenate(parts)
        players = self.code_map(pool)[codes]
        for r in others:
            players[offsets[r]:offsets[r + 1]] = np.fromiter(
                map(self.index.get, contests[r].handles, repeat(-1)), dtype=np.int64,
                count=offsets[r + 1] - offsets[r])
        return players, pool, codes

    def number_newcomers(self, pool: HandlePool, codes: IntArray, players: IntArray,
                         where: IntArray, offsets: IntArray) -> tuple[list[str], list[int]]:
        """Number the newcomers from :attr:`n` on in order of first appearance, into
        ``players[where]`` (``where``: the rows whose code no player has, all of them
        newcomers' as :meth:`knows_all_by_code` tells; ``codes``: every row's code in
        ``pool``; ``offsets``: where each round starts, and the end), and remember
        their codes.  Returns their handles and how many debut in each round; the
        players themselves are not added."""
        found = codes[where]
        if found.size < 2 or bool((found[1:] > found[:-1]).all()):
            # distinct and numbered in order of first appearance (a loader's first
            # round): each row is a newcomer of its own, numbered in row order
            new_codes = found
            by_first = rank = np.arange(found.size)
            players[where] = self.n + rank
            debut_rows = where
        else:
            new_codes, first, inverse = np.unique(found, return_index=True,
                                                  return_inverse=True)
            by_first = np.argsort(first, kind="stable")
            rank = np.empty_like(by_first)
            rank[by_first] = np.arange(by_first.size)
            players[where] = self.n + rank[inverse]
            debut_rows = where[first[by_first]]
        rounds = np.searchsorted(offsets, debut_rows, side="right") - 1
        counts = np.bincount(rounds, minlength=offsets.size - 1).tolist()
        self.remember_codes(pool, new_codes, self.n + rank, distinct=True)
        names = pool.names
        return list(map(names.__getitem__, new_codes[by_first].tolist())), counts

    def knows_all_by_code(self, pool: HandlePool) -> bool:
        """Whether every player is in ``pool``'s map: then a code the map does not
        hold is a newcomer's."""
        return pool is self._pool and self._n_by_code == self.n

    def to_arrays(self) -> dict[str, np.ndarray]:
        n = self.n
        out: dict[str, np.ndarray] = {
            "handles": np.array(self.handles, dtype=object),
        }
        for name in self._FIELDS:
            out[name] = getattr(self, name)[:n].copy()
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> PlayerTable:
        t = cls()
        t.handles = [str(h) for h in d["handles"]]
        for name in cls._FIELDS:
            setattr(t, name, np.array(d[name]))
        return t


@dataclass
class EventLog:
    """Per-player, per-round rating events, appended a round or a batch of rounds at
    a time.

    Stored as chunks (one per :meth:`append` or :meth:`append_rounds`) and
    concatenated on demand, so appending costs O(events appended) and memory is a
    few dozen bytes per event.  A chunk's contest is one index (a round) or one index
    per event (a batch).  An event of a team round also names the player's team:
    :meth:`arrays` gives its index in :attr:`team_names` (-1 for an individual
    round).

    After the chunks comes an open *tail*: growable arrays into which compiled code
    writes the events of individual rounds in place (:meth:`reserve_tail`,
    :meth:`commit_tail`; ``Rater.add`` of a small round), which saves a chunk and six
    small arrays per round.  The next :meth:`append` or :meth:`append_rounds` first
    closes the tail into a chunk, so the log reads the same as after one
    :meth:`append` per round.  A subclass that filters what it keeps (overriding
    :meth:`append`) is never written through the tail.
    """

    _chunks: list[tuple[int | np.ndarray, np.ndarray, FloatArray, FloatArray, FloatArray,
                        np.ndarray, np.ndarray | None]] = field(default_factory=list)
    _cache: dict[str, np.ndarray] | None = None
    team_names: list[str] = field(default_factory=list)
    """The distinct team names of the logged events, in order of first appearance."""
    _team_ids: dict[str, int] = field(default_factory=dict)
    _tail_f: FloatArray | None = field(default=None, repr=False, compare=False)
    """The tail's mu, sigma and perf (rows), room for more events beyond ``_tail_n``."""
    _tail_i: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The tail's contest, player and place (rows of ``int32``)."""
    _tail_n: int = field(default=0, repr=False, compare=False)

    def append(
        self,
        contest: int,
        players: IntArray,
        mu: FloatArray,
        sigma: FloatArray,
        perf: FloatArray,
        place: IntArray,
        teams: Sequence[str] | None = None,
    ) -> None:
        """Log one round; ``teams`` names each player's team (``None``: an individual
        round)."""
        self._push(contest, players, mu, sigma, perf, place, teams)

    def append_rounds(
        self,
        contest: IntArray,
        players: IntArray,
        mu: FloatArray,
        sigma: FloatArray,
        perf: FloatArray,
        place: IntArray,
        teams: Sequence[str | None] | None = None,
    ) -> None:
        """Log several rounds at once: every argument has one entry per event, in the
        order :meth:`append` would log them round by round (``contest`` is each
        event's contest index).  ``teams`` names each event's team, ``None`` for the
        events of individual rounds (``teams=None``: no team round at all).  The log
        is then the same as after one :meth:`append` per round."""
        self._push(contest.astype(np.int32), players, mu, sigma, perf, place, teams)

    def _push(self, contest: int | IntArray, players: IntArray, mu: FloatArray,
              sigma: FloatArray, perf: FloatArray, place: IntArray,
              teams: Sequence[str | None] | None) -> None:
        """Store one chunk (copies of the arrays; team names as indices into
        :attr:`team_names`, -1 for ``None``)."""
        if self._tail_n:
            self._close_tail()
        team_ids: IntArray | None = None
        if teams is not None:
            ids = self._team_ids
            names = self.team_names
            team_ids = np.full(len(teams), -1, dtype=np.int32)
            for k, nm in enumerate(teams):
                if nm is None:
                    continue
                j = ids.get(nm)
                if j is None:
                    j = ids[nm] = len(names)
                    names.append(nm)
                team_ids[k] = j
        self._chunks.append(
            (
                contest,
                players.astype(np.int32),
                mu.astype(np.float64, copy=True),
                sigma.astype(np.float64, copy=True),
                perf.astype(np.float64, copy=True),
                place.astype(np.int32),
                team_ids,
            )
        )
        self._cache = None

    def reserve_tail(self, n: int) -> tuple[FloatArray, npt.NDArray[np.int32], int]:
        """Room for the ``n`` events of one individual round at the end of the log.

        Returns ``(values, ids, at)``: the round's events are to be written to columns
        ``at .. at + n - 1`` of ``values`` (rows: mu, sigma, perf; ``float64``) and of
        ``ids`` (rows: contest index, player, place; ``int32``), in standings order,
        then logged by :meth:`commit_tail`.  Until then the log is unchanged; the
        arrays are valid until the next call of a method of the log.
        """
        at = self._tail_n
        vals = self._tail_f
        if vals is None or self._tail_i is None or at + n > vals.shape[1]:
            cap = max(at + n, 1024, 0 if vals is None else vals.shape[1] * 3 // 2)
            new_f = np.empty((3, cap))
            new_i = np.empty((3, cap), dtype=np.int32)
            if at:
                assert vals is not None and self._tail_i is not None
                new_f[:, :at] = vals[:, :at]
                new_i[:, :at] = self._tail_i[:, :at]
            self._tail_f, self._tail_i = new_f, new_i
            vals = new_f
        assert self._tail_i is not None
        return vals, self._tail_i, at

    def commit_tail(self, n: int) -> None:
        """Log the ``n`` events written after the tail (:meth:`reserve_tail`)."""
        self._tail_n += n
        self._cache = None

    def _tail_chunk(self) -> tuple[np.ndarray, np.ndarray, FloatArray, FloatArray,
                                   FloatArray, np.ndarray, None]:
        """The tail's events as a chunk of views."""
        assert self._tail_f is not None and self._tail_i is not None
        m = self._tail_n
        vals, ids = self._tail_f[:, :m], self._tail_i[:, :m]
        return ids[0], ids[1], vals[0], vals[1], vals[2], ids[2], None

    def _close_tail(self) -> None:
        """Turn the tail's events into a chunk (copies) and empty the tail."""
        self._chunks.append(tuple(  # type: ignore[arg-type]
            None if a is None else a.copy() for a in self._tail_chunk()))
        self._tail_n = 0

    def __len__(self) -> int:
        return sum(c[1].size for c in self._chunks) + self._tail_n

    def arrays(self) -> dict[str, np.ndarray]:
        """All events as flat arrays: contest, player, mu, sigma, perf, place, team
        (index into :attr:`team_names`, -1 for none)."""
        if self._cache is None:
            chunks = self._chunks
            if self._tail_n:
                chunks = [*chunks, self._tail_chunk()]
            if chunks:
                contest = np.concatenate([
                    c[0] if isinstance(c[0], np.ndarray) else np.full(c[1].size, c[0], np.int32)
                    for c in chunks
                ])
                self._cache = {
                    "contest": contest,
                    "player": np.concatenate([c[1] for c in chunks]),
                    "mu": np.concatenate([c[2] for c in chunks]),
                    "sigma": np.concatenate([c[3] for c in chunks]),
                    "perf": np.concatenate([c[4] for c in chunks]),
                    "place": np.concatenate([c[5] for c in chunks]),
                    "team": np.concatenate([
                        np.full(c[1].size, -1, np.int32) if c[6] is None else c[6]
                        for c in chunks
                    ]),
                }
            else:
                self._cache = {
                    "contest": np.zeros(0, np.int32),
                    "player": np.zeros(0, np.int32),
                    "mu": np.zeros(0),
                    "sigma": np.zeros(0),
                    "perf": np.zeros(0),
                    "place": np.zeros(0, np.int32),
                    "team": np.zeros(0, np.int32),
                }
        return self._cache

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray],
                    team_names: Sequence[str] = ()) -> EventLog:
        """Inverse of :meth:`arrays` (with :attr:`team_names`); an image without a
        ``team`` entry (written before teams existed) has no teams."""
        log = cls()
        log.team_names = list(team_names)
        log._team_ids = {nm: i for i, nm in enumerate(log.team_names)}
        contest = np.asarray(d["contest"], dtype=np.int32)
        team = np.asarray(d["team"], dtype=np.int32) if "team" in d else None
        if contest.size:
            # split back into per-contest chunks (events are stored contest by contest)
            bounds = np.flatnonzero(np.diff(contest)) + 1
            starts = np.concatenate([[0], bounds])
            ends = np.concatenate([bounds, [contest.size]])
            for s, e in zip(starts, ends, strict=True):
                t = None if team is None or team[s] < 0 else team[s:e].copy()
                log._chunks.append(
                    (
                        int(contest[s]),
                        np.asarray(d["player"][s:e], dtype=np.int32),
                        np.asarray(d["mu"][s:e], dtype=np.float64),
                        np.asarray(d["sigma"][s:e], dtype=np.float64),
                        np.asarray(d["perf"][s:e], dtype=np.float64),
                        np.asarray(d["place"][s:e], dtype=np.int32),
                        t,
                    )
                )
        return log
