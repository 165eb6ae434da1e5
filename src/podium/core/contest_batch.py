"""A loader's contests as columns: many small individual contests checked at once and
kept in shared arrays, each :class:`~podium.core.contest.Contest` a view of one of them.

A history of many small contests (a game's matches) is mostly per-contest overhead:
building 200,000 contests with every attribute set costs more than reading the file.
The columnar readers (:mod:`podium.io._csv_fast`, :mod:`podium.io._json_batch`) check
a whole file at once and hand its columns to a :class:`ContestBatch`; its
:meth:`ContestBatch.contests` are :class:`LoadedContest` objects holding only the
batch and their index in it.  Every attribute (``lo``, ``hi``, ``name``,
``time_seconds``, ``weight``, ``perf_ceiling``, ``url``, ``handles``,
``handle_codes``) reads the batch's columns, so a loaded contest is a ``Contest``
like any other: equal to the one built by :meth:`~podium.core.contest.Contest.from_codes`
from the same rows, pickled and copied as a plain ``Contest``.

A :class:`~podium.Rater` rating such contests does not read them attribute by
attribute: :func:`batch_run` gives the columns of a run of contests of one batch
(handle numbers, tie ranges, times, weights, ceilings) as arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Any, ClassVar, cast

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.handles import HandlePool
from podium.core.standings import shared_ranges

__all__ = ["BatchRun", "ContestBatch", "LoadedContest", "batch_run", "plain_contest"]

IntArray = npt.NDArray[np.int64]
_K = attrgetter("_k")


class ContestBatch:
    """The columns of a loader's checked individual contests.

    Contest ``k`` is rows ``starts[k]:starts[k] + sizes[k]`` of ``codes`` (its
    handles' numbers in ``pool``), ``lo`` and ``hi`` (its tie ranges, 0-based within
    the contest), with ``names[k]``, ``times[k]``, ``weights[k]``, ``ceilings[k]``
    and ``urls[k]``.  The loader has checked everything as
    :meth:`~podium.core.contest.Contest.from_codes` checks one contest (distinct
    codes, tie ranges that :func:`~podium.core.standings.ranges_hold`, a finite
    positive weight, a ceiling ``None``, a number or ``+inf``); nothing is checked
    again.

    Parameters
    ----------
    pool : HandlePool
        The load's numbered handles.
    codes, lo, hi : ndarray of int64
        Per row (read-only): the handle's number, the tie range.
    starts, sizes : ndarray of int64
        Per contest: its first row and its number of rows (none empty).
    names : sequence of str
        Per contest: its name.
    times : ndarray of int64
        Per contest: ``time_seconds``.
    weights : ndarray of float64, optional
        Per contest: its weight (``None``: all 1).
    ceilings : sequence of float or None, optional
        Per contest: ``perf_ceiling`` (``None``: none given).
    urls : sequence of str or None, optional
        Per contest: ``url`` (``None``: none given).
    """

    __slots__ = ("pool", "codes", "lo", "hi", "starts", "sizes", "names", "times",
                 "weights", "ceilings", "urls", "size_list", "time_list", "weight_list",
                 "spelled", "_ranges", "_outcome_free")

    def __init__(self, pool: HandlePool, codes: IntArray, lo: IntArray, hi: IntArray,
                 starts: IntArray, sizes: IntArray, names: Sequence[str],
                 times: IntArray, weights: npt.NDArray[np.float64] | None = None,
                 ceilings: Sequence[float | None] | None = None,
                 urls: Sequence[str | None] | None = None) -> None:
        for a in (codes, lo, hi):
            a.flags.writeable = False
        self.pool = pool
        self.codes = codes
        self.lo = lo
        self.hi = hi
        self.starts = np.asarray(starts, dtype=np.int64)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.names = names
        self.times = np.asarray(times, dtype=np.int64)
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        self.ceilings = ceilings
        self.urls = urls
        # size_list, time_list and weight_list: made on first use (__getattr__)
        #: per contest whose handles were read: its handles, spelled out
        self.spelled: dict[int, tuple[str, ...]] = {}
        self._ranges: tuple[list[IntArray], list[IntArray]] | None = None
        self._outcome_free: list[bool] | None = None

    #: per contest: its number of rows, as Python ints (``len`` of a contest)
    size_list: list[int]
    #: per contest: ``time_seconds`` and the weight, as Python numbers
    time_list: list[int]
    weight_list: list[float] | None

    def __getattr__(self, name: str) -> Any:
        """``size_list``, ``time_list`` and ``weight_list``, made on first use (a slot
        not set yet): a load whose contests are only rated, through :func:`batch_run`,
        never makes them."""
        if name == "size_list":
            self.size_list = self.sizes.tolist()
        elif name == "time_list":
            self.time_list = self.times.tolist()
        elif name == "weight_list":
            self.weight_list = None if self.weights is None else self.weights.tolist()
        else:
            raise AttributeError(name)
        return getattr(self, name)

    def __len__(self) -> int:
        return len(self.sizes)

    def contests(self) -> list[Contest]:
        """Every contest of the batch, in order: :class:`LoadedContest` objects of a
        subclass made for this batch (whose class attribute ``_batch`` is the batch),
        each holding only its index (one slot)."""
        n = len(self)
        cls = cast(type[LoadedContest], type(LoadedContest.__name__, (LoadedContest,), {
            "__slots__": (), "__module__": __name__, "_batch": self}))
        out: list[LoadedContest] = list(map(cls.__new__, repeat(cls, n)))
        for k, contest in enumerate(out):  # a specialised slot store: cheaper than a map
            contest._k = k
        return cast(list[Contest], out)

    def ranges(self) -> tuple[list[IntArray], list[IntArray]]:
        """Each contest's ``lo`` and ``hi``: read-only views of the batch's, those of
        one tie pattern shared (:func:`~podium.core.standings.shared_ranges`), made
        for the whole batch on first use."""
        if self._ranges is None:
            self._ranges = shared_ranges(self.lo, self.hi, self.starts, self.sizes)
        return self._ranges

    def outcome_free(self) -> list[bool]:
        """Per contest: whether every player tied or there is one player only
        (:attr:`~podium.core.contest.Contest.is_outcome_free`), for the whole batch on
        first use."""
        if self._outcome_free is None:
            if len(self):
                free = self.hi[self.starts] + 1 >= self.sizes
            else:
                free = np.zeros(0, dtype=bool)
            self._outcome_free = free.tolist()
        return self._outcome_free

    def codes_of(self, k: int) -> IntArray:
        """Contest ``k``'s handle numbers (a read-only view)."""
        s = int(self.starts[k])
        return self.codes[s:s + self.size_list[k]]


class LoadedContest(Contest):
    """A contest of a :class:`ContestBatch`: its attributes read the batch's columns
    (:meth:`ContestBatch.contests` makes a subclass per batch, which names the batch).

    It is an individual contest (``teams`` is ``None``); it compares equal to the
    :class:`~podium.core.contest.Contest` built from the same rows, and a pickle or a
    copy of it is that plain ``Contest`` (without the load's handle pool, as for any
    loaded contest)."""

    __slots__ = ("_k",)
    #: the batch (a class attribute of the batch's subclass)
    _batch: ClassVar[ContestBatch]
    _k: int

    # the slots of an individual contest that no loaded contest sets
    teams = None
    team_round = False
    _team_names = None

    @property  # type: ignore[override]
    def lo(self) -> IntArray:  # type: ignore[override]
        return self._batch.ranges()[0][self._k]

    @property  # type: ignore[override]
    def hi(self) -> IntArray:  # type: ignore[override]
        return self._batch.ranges()[1][self._k]

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        return self._batch.names[self._k]

    @property  # type: ignore[override]
    def time_seconds(self) -> int:  # type: ignore[override]
        return self._batch.time_list[self._k]

    @property  # type: ignore[override]
    def weight(self) -> float:  # type: ignore[override]
        w = self._batch.weight_list
        return 1.0 if w is None else w[self._k]

    @property  # type: ignore[override]
    def perf_ceiling(self) -> float | None:  # type: ignore[override]
        c = self._batch.ceilings
        return None if c is None else c[self._k]

    @property  # type: ignore[override]
    def url(self) -> str | None:  # type: ignore[override]
        u = self._batch.urls
        return None if u is None else u[self._k]

    @property  # type: ignore[override]
    def _pool(self) -> HandlePool:  # type: ignore[override]
        return self._batch.pool

    @property  # type: ignore[override]
    def _codes(self) -> IntArray:  # type: ignore[override]
        return self._batch.codes_of(self._k)

    @property  # type: ignore[override]
    def _handles(self) -> tuple[str, ...] | None:  # type: ignore[override]
        """The handles once spelled out (``None`` before)."""
        return self._batch.spelled.get(self._k)

    @property
    def handles(self) -> tuple[str, ...]:
        """The players' handles, best first (spelled out on first use)."""
        spelled = self._batch.spelled
        hs = spelled.get(self._k)
        if hs is None:
            names = self._batch.pool.names
            hs = spelled[self._k] = tuple(map(names.__getitem__, self._codes.tolist()))
        return hs

    @property
    def is_outcome_free(self) -> bool:
        """As :attr:`Contest.is_outcome_free` (from the batch's column)."""
        return self._batch.outcome_free()[self._k]

    def __len__(self) -> int:
        return self._batch.size_list[self._k]

    def __reduce__(self) -> tuple[Any, ...]:
        # a pickle or a copy is the plain Contest (without the load's pool)
        return plain_contest, (self.__getstate__(),)


def plain_contest(state: dict[str, Any]) -> Contest:
    """The plain :class:`~podium.core.contest.Contest` of a pickled or copied
    :class:`LoadedContest` (its ``__getstate__``)."""
    contest = Contest.__new__(Contest)
    contest.__setstate__(state)
    return contest


@dataclass(frozen=True)
class BatchRun:
    """The columns of a run of contests of one :class:`ContestBatch` (fresh arrays,
    rows back to back): what a :class:`~podium.Rater` reads of a batch of rounds."""

    #: the load's handle pool
    pool: HandlePool
    #: per row: the handle's number in ``pool``
    codes: IntArray
    #: per row: its tie range
    lo: IntArray
    hi: IntArray
    #: where each contest's rows start, and the end (``len(contests) + 1`` entries)
    offsets: IntArray
    #: per contest
    time_seconds: IntArray
    weight: npt.NDArray[np.float64]
    #: per contest (NaN: no ceiling)
    perf_ceiling: npt.NDArray[np.float64]


def batch_run(contests: Sequence[Contest]) -> BatchRun | None:
    """The columns of ``contests`` when all are :class:`LoadedContest` objects of one
    batch (in any order, each at most once), else ``None``.  A run of consecutive
    contests reads slices of the batch's rows, any other a gather.

    Parameters
    ----------
    contests : sequence of Contest
        The contests, in the order of the rows wanted.

    Returns
    -------
    BatchRun or None
    """
    n = len(contests)
    types = set(map(type, contests))
    if not n or len(types) != 1 or not issubclass(cls := types.pop(), LoadedContest):
        return None
    b = cls._batch
    ks = np.fromiter(map(_K, contests), dtype=np.int64, count=n)
    sizes = b.sizes[ks]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    k0 = int(ks[0])
    if int(ks[-1]) - k0 == n - 1 and (n == 1 or bool((np.diff(ks) == 1).all())):
        a = int(b.starts[k0])
        rows: slice | IntArray = slice(a, a + int(offsets[-1]))
    else:
        rows = np.repeat(b.starts[ks] - offsets[:-1], sizes) + np.arange(offsets[-1])
    weight = np.ones(n, dtype=np.float64) if b.weights is None else b.weights[ks]
    ceil = np.full(n, np.nan, dtype=np.float64)
    if b.ceilings is not None:
        c = b.ceilings
        ceil = np.array([np.nan if (x := c[k]) is None else x for k in ks.tolist()],
                        dtype=np.float64)
    return BatchRun(pool=b.pool, codes=b.codes[rows].copy(), lo=b.lo[rows].copy(),
                    hi=b.hi[rows].copy(), offsets=offsets, time_seconds=b.times[ks],
                    weight=weight, perf_ceiling=ceil)
