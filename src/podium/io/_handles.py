"""A load's handle table: interning handles, checking and normalising each distinct
one once, and numbering them in a :class:`~podium.core.contest.HandlePool` (with the
compiled reader of :mod:`podium.io._scan` for large loads)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import islice, repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import HandlePool
from podium.core.guards import MAX_HANDLE_LENGTH, HandleError, normalize_handle

if TYPE_CHECKING:
    from podium.io._scan import ByteTable, Scanned

__all__ = ["SCAN_AFTER_ROWS", "HandleTable", "handle_table"]

#: Rows a coded handle table numbers one by one before the compiled reader of
#: :mod:`podium.io._scan` takes over (small loads never compile it).
SCAN_AFTER_ROWS = 200_000


class HandleTable:
    """A load's handle table: interns handles and checks each distinct one once.

    ``table`` maps each handle as given to the handle used: its normal form
    (:func:`podium.core.guards.normalize_handle`), or itself with ``raw=True`` (then
    only a lone surrogate, which is not Unicode text, is refused).  A normal form is
    also a key mapping to itself, so all spellings of a handle share one string.
    Errors are :class:`~podium.core.guards.HandleError`; the table is left as it was.

    :meth:`all` does a contest's handles at once: one C-level pass (``setdefault``)
    as plain interning does, then a bulk check of the handles new to the table (in
    insertion order at its end), per handle only when some is not printable ASCII.

    A *coded* table (``coded=True``, as :func:`podium.io.load_contests` makes) also
    numbers the handles in a :class:`~podium.core.contest.HandlePool`:
    :meth:`coded` returns the numbers of a contest's handles with one dictionary pass
    (``codes`` maps each handle as given to the number of its normal form).  Once it
    has numbered :data:`SCAN_AFTER_ROWS` rows, it starts the compiled reader of
    :mod:`podium.io._scan` (:meth:`switch`): the JSON readers then hand it whole
    standings arrays as bytes, and its table of handle bytes mirrors ``codes``.
    """

    __slots__ = ("table", "raw", "pool", "codes", "rows", "fast", "keep_refused", "refused")

    def __init__(self, table: dict[str, str] | None = None, raw: bool = False,
                 coded: bool = False, keep_refused: bool = False) -> None:
        self.table: dict[str, str] = {} if table is None else table
        self.raw = raw
        #: keep a handle that breaks the handle rules as written (and record it in
        #: ``refused``) instead of refusing it, when raw handles would accept it
        self.keep_refused = keep_refused
        #: handle as written -> why the handle rules refused it (``keep_refused``)
        self.refused: dict[str, str] = {}
        self.pool: HandlePool | None = HandlePool() if coded else None
        self.codes: dict[str, int] = {}
        #: rows numbered by :meth:`coded`; at ``SCAN_AFTER_ROWS`` the compiled reader
        #: starts
        self.rows = 0
        #: the compiled reader's table of handle bytes (:mod:`podium.io._scan`), once
        #: this load is large enough to pay for it
        self.fast: ByteTable | None = None

    def __call__(self, handle: str) -> str:
        """The handle to use for ``handle``."""
        found = self.table.get(handle)
        if found is None:
            self.table[handle] = handle
            self._check([handle])
            found = self.table[handle]
        return found

    def all(self, handles: Sequence[str]) -> tuple[str, ...]:
        """The handles to use for ``handles`` (a contest's, in order)."""
        table = self.table
        before = len(table)
        out = tuple(map(table.setdefault, handles, handles))
        added = len(table) - before
        if added and self._check(list(islice(reversed(table), added))):
            out = tuple(map(table.__getitem__, handles))
        return out

    def coded(self, handles: Sequence[str]) -> npt.NDArray[np.int64]:
        """The numbers in :attr:`pool` of the handles to use for ``handles`` (a
        contest's, in order; a coded table only)."""
        pool = self.pool
        assert pool is not None, "not a coded handle table"
        codes = self.codes
        found = np.fromiter(map(codes.get, handles, repeat(-1)), dtype=np.int64,
                            count=len(handles))
        where = np.flatnonzero(found < 0)
        if where.size:
            before = len(codes)
            self._number_new(handles, found, where, pool)
            if self.fast is not None:  # the compiled table mirrors the new keys
                self._mirror(list(islice(reversed(codes.items()), len(codes) - before)))
        self.rows += len(handles)
        if self.fast is None and self.rows >= SCAN_AFTER_ROWS:
            self.switch()
        return found

    def switch(self) -> None:
        """Start the compiled reader (:mod:`podium.io._scan`): its table gets every
        handle numbered so far."""
        from podium.io._scan import ByteTable, announce_compile

        announce_compile()
        fast = ByteTable()
        fast.add(self.codes.items())
        self.fast = fast

    def _mirror(self, added: list[tuple[str, int]]) -> None:
        """Add to the compiled table the keys the general path just numbered (newest
        first in ``added``); past the table's size the load goes on without it."""
        from podium.io._scan import MAX_KEYS

        assert self.fast is not None
        if max(self.fast.n_keys, len(self.codes)) + len(added) > MAX_KEYS:
            self.fast = None
            return
        self.fast.add(reversed(added))

    def scanned(self, scan: Scanned) -> None:
        """Take the handles a scan numbered first into the pool and ``codes``."""
        assert self.pool is not None
        names = self.pool.names
        names.extend(scan.new_names)
        self.codes.update(zip(scan.new_names, range(scan.first_code, len(names)), strict=True))
        self.rows += len(scan.codes)

    def unscanned(self, scan: Scanned) -> None:
        """Undo :meth:`scanned` (and the scan) for a contest refused after its scan."""
        assert self.pool is not None and self.fast is not None
        for h in scan.new_names:
            del self.codes[h]
        del self.pool.names[scan.first_code:]
        self.fast.forget(scan.keys_before)
        self.rows -= len(scan.codes)

    def _number_new(self, handles: Sequence[str], found: npt.NDArray[np.int64],
                    where: npt.NDArray[np.intp], pool: HandlePool) -> None:
        """Number the handles ``handles[where]`` (new to the table) into ``found``.
        Every new handle is checked before anything is added: on a
        :class:`~podium.core.guards.HandleError` the table is as it was."""
        at = where.tolist()
        new = list(dict.fromkeys(map(handles.__getitem__, at)))
        if self.raw:
            if not "".join(new).isascii():
                for h in new:
                    _check_unicode(h)
            norms = new
        elif _all_normal(new):
            norms = new
        else:
            norms = [self._normal(h) for h in new]
        codes = self.codes
        names = pool.names
        for h, norm in zip(new, norms, strict=True):
            code = codes.get(norm)
            if code is None:
                code = codes[norm] = len(names)
                names.append(norm)
            codes[h] = code
        found[where] = list(map(codes.__getitem__, map(handles.__getitem__, at)))

    def _check(self, new: list[str]) -> bool:
        """Check the handles just added to the table (each mapped to itself); fix the
        entries of those not in normal form.  Returns whether an entry changed."""
        if self.raw:
            if not "".join(new).isascii():
                for h in new:
                    self._undo_if(new, _check_unicode, h)
            return False
        if _all_normal(new):
            return False
        table = self.table
        changed = False
        for h in new:
            norm = self._undo_if(new, self._normal, h)
            if norm != h:
                table[h] = table.setdefault(norm, norm)
                changed = True
        return changed

    def _normal(self, handle: str) -> str:
        """:func:`~podium.core.guards.normalize_handle` of ``handle``; with
        ``keep_refused``, a handle it refuses (that raw handles accept) is kept as
        written and recorded in ``refused``."""
        try:
            return normalize_handle(handle)
        except HandleError as exc:
            if not (self.keep_refused and exc.raw_keeps):
                raise
            self.refused.setdefault(handle, exc.reason)
            return handle

    def _undo_if(self, new: list[str], check: Callable[[str], Any], handle: str) -> Any:
        try:
            return check(handle)
        except HandleError:
            for h in new:
                if self.table.get(h) is h:
                    del self.table[h]
            raise


def _all_normal(handles: list[str]) -> bool:
    """Whether every handle is printable ASCII of 1..128 characters with no space at
    either end (its own normal form), checked in bulk (C-level string passes)."""
    flat = "".join(handles)
    if not (flat.isascii() and flat.isprintable()):
        return False
    lengths = list(map(len, handles))
    if min(lengths) == 0 or max(lengths) > MAX_HANDLE_LENGTH:
        return False
    if " " in flat:
        joined = "\n".join(handles)  # no handle holds a newline (all printable)
        if joined[0] == " " or joined[-1] == " " or "\n " in joined or " \n" in joined:
            return False
    return True


def handle_table(table: dict[str, str] | None, raw_handles: bool) -> HandleTable:
    """The handle table of a call: a caller's dict (shared across calls) or a new one."""
    return HandleTable(table, raw_handles)


def _check_unicode(text: str, what: str = "handle") -> None:
    """Refuse a string holding a lone surrogate (not Unicode text; cannot be written)."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise HandleError(text, f"character {exc.start + 1} (U+{ord(text[exc.start]):04X}) "
                                f"is a lone surrogate: the {what} is not Unicode text") from None
