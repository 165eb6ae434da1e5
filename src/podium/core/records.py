"""What a Rater keeps of each contest and reports of each round, stored as columns.

A long history (a game studio's millions of matches) would otherwise hold one Python
object per contest in :attr:`Rater.contests <podium.rater.Rater.contests>` and
build another per round for the reports of :meth:`Rater.extend
<podium.rater.Rater.extend>`.  Every such object stays tracked by the garbage
collector, which scans them all at each full collection: rating 100,000 lobbies
spent about a tenth of its time there, and each object costs ~150 bytes.  Here they
are lists of plain values (names, times, counts), a few objects in all, and a
:class:`ContestRecord` or :class:`RoundReport` is built when one is asked for.
Both sequences compare equal to any sequence of the same records, so code that
treated them as lists keeps working; they are appended to, never edited.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple, overload

__all__ = ["ContestRecord", "ContestLog", "RoundReport", "RoundReports"]


class ContestRecord(NamedTuple):
    """What the rater remembers of each processed contest (a named tuple)."""

    name: str
    time_seconds: int
    url: str | None
    players: int
    skipped: bool


class RoundReport(NamedTuple):
    """What happened to one contest (a named tuple: built three times faster than a
    frozen dataclass, which ``Rater.add`` of a small round notices).

    ``index`` is the contest's position in the Rater's history; as a field it hides
    the tuple method of that name.
    """

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    players: int
    new_players: int
    skipped: bool
    warnings: tuple[str, ...] = ()


class _Columns:
    """A sequence of records kept as one list per field (the subclasses say which)."""

    __slots__ = ()
    _record: Any

    def _cols(self) -> tuple[list[Any], ...]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._cols()[0])

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        cols = self._cols()
        if isinstance(i, slice):
            return [self._record(*row) for row in zip(*(c[i] for c in cols), strict=True)]
        return self._record(*(c[i] for c in cols))

    def __iter__(self) -> Iterator[Any]:
        make = self._record
        for row in zip(*self._cols(), strict=True):
            yield make(*row)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, type(self)):
            return self._cols() == other._cols()
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                          strict=False))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        n = len(self)
        shown = ", ".join(repr(r) for r in self[:3])
        more = f", ... ({n} in all)" if n > 3 else ""
        return f"{type(self).__name__}([{shown}{more}])"


class ContestLog(_Columns, Sequence[ContestRecord]):
    """:attr:`Rater.contests <podium.rater.Rater.contests>`: one
    :class:`ContestRecord` per contest processed, in order, kept as columns.

    Indexing and iteration give :class:`ContestRecord` objects (built on demand);
    the columns themselves are :attr:`names`, :attr:`times`, :attr:`urls`,
    :attr:`players` and :attr:`skipped`.
    """

    __slots__ = ("names", "times", "urls", "players", "skipped")
    _record = ContestRecord

    def __init__(self, records: Iterable[ContestRecord | Sequence[Any]] = ()) -> None:
        self.names: list[str] = []
        self.times: list[int] = []
        self.urls: list[str | None] = []
        self.players: list[int] = []
        self.skipped: list[bool] = []
        for rec in records:  # records, or a checkpoint's rows of the same fields
            self.add(*rec)

    def _cols(self) -> tuple[list[Any], ...]:
        return self.names, self.times, self.urls, self.players, self.skipped

    def __len__(self) -> int:  # asked for on every Rater.add
        return len(self.names)

    def add(self, name: str, time_seconds: int, url: str | None, players: int,
            skipped: bool) -> None:
        """Record one contest (the fields of :class:`ContestRecord`)."""
        self.names.append(name)
        self.times.append(time_seconds)
        self.urls.append(url)
        self.players.append(players)
        self.skipped.append(skipped)

    def append(self, record: ContestRecord) -> None:
        """Record one contest."""
        self.add(*record)


class RoundReports(_Columns, Sequence[RoundReport]):
    """The reports of :meth:`Rater.extend <podium.rater.Rater.extend>`: one
    :class:`RoundReport` per contest, in order, kept as columns and built on demand.

    ``reports[k]``, iteration, ``len`` and comparison with a list of reports work as
    on a list; :meth:`warnings` lists the warnings without building any report.
    """

    __slots__ = ("indices", "names", "players", "new_players", "skipped", "_warnings")
    _record = RoundReport

    def __init__(self, reports: Iterable[RoundReport] = ()) -> None:
        self.indices: list[int] = []
        self.names: list[str] = []
        self.players: list[int] = []
        self.new_players: list[int] = []
        self.skipped: list[bool] = []
        self._warnings: list[tuple[str, ...]] = []
        self.extend(reports)

    def _cols(self) -> tuple[list[Any], ...]:
        return (self.indices, self.names, self.players, self.new_players, self.skipped,
                self._warnings)

    def add(self, index: int, name: str, players: int, new_players: int, skipped: bool,
            warnings: tuple[str, ...] = ()) -> None:
        """Report one contest (the fields of :class:`RoundReport`)."""
        self.indices.append(index)
        self.names.append(name)
        self.players.append(players)
        self.new_players.append(new_players)
        self.skipped.append(skipped)
        self._warnings.append(warnings)

    def append(self, report: RoundReport) -> None:
        """Append one report."""
        self.add(*report)

    def extend(self, reports: Iterable[RoundReport]) -> None:
        """Append ``reports`` (another :class:`RoundReports`: column by column)."""
        if isinstance(reports, RoundReports):
            for mine, theirs in zip(self._cols(), reports._cols(), strict=True):
                mine.extend(theirs)
        else:
            for rep in reports:
                self.append(rep)

    def __iadd__(self, other: Iterable[RoundReport]) -> RoundReports:
        self.extend(other)
        return self

    def warnings(self) -> list[tuple[int, str]]:
        """Every warning, as ``(contest index, message)`` in order."""
        return [(i, w) for i, ws in zip(self.indices, self._warnings, strict=True)
                for w in ws]
