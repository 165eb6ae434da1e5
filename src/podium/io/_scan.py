"""Compiled standings reading for large loads (:mod:`podium.io._scan_kernels`).

A coded handle table (:class:`podium.io._handles.HandleTable`) switches to it once a
load has read ``SCAN_AFTER_ROWS`` rows (:mod:`podium.io._handles`): from then on the
loader decodes each contest's top-level fields with msgspec, keeps its standings as
raw JSON bytes, and reads them with :func:`~podium.io._scan_kernels.scan_standings`,
which numbers the handles through a hash table of their bytes instead of making a
Python string and a dictionary lookup per row.  Only the handles new to the load
become Python strings (one ``split`` of the new handles' bytes).  Small loads (the
README's example, a test) never switch, so they never compile these kernels.

The table mirrors the handle table's ``codes`` dictionary (handle as written ->
number): every key of printable ASCII is in both, with the same number.  A contest
the scanner does not take (module docstring of the kernels) is read by the general
path, whose new keys are then added here too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

import numpy as np
import numpy.typing as npt

from podium.io import _scan_kernels as kern

__all__ = ["COMPILE_SECONDS", "MAX_KEYS", "ByteTable", "Scanned", "announce_compile", "plain_key"]

#: Rough compile time (seconds) of the kernels when Numba's cache is cold (2.5-2.7 s
#: measured on the 2-core development machine, quiet, with a fresh ``NUMBA_CACHE_DIR``).
COMPILE_SECONDS = 3.0
#: ``[`` in UTF-8.
_OPEN = 0x5B
#: The most keys and numbers the table holds (a slot keeps both in 32 bits); a load
#: beyond it goes on with the general path.
MAX_KEYS = 2**31 - 1


def plain_key(handle: str) -> bool:
    """Whether the scanner can meet ``handle`` as written: printable ASCII with no
    quote or backslash (those come escaped in JSON text, which the scanner refuses)."""
    return handle.isascii() and handle.isprintable() and '"' not in handle \
        and "\\" not in handle


class Scanned:
    """One scanned standings array: the rows' handle numbers, ``lo``, ``hi``, and the
    handles it numbered first (in order, numbered from ``first_code``)."""

    __slots__ = ("codes", "lo", "hi", "new_names", "first_code", "keys_before")

    def __init__(self, codes: npt.NDArray[np.int64], lo: npt.NDArray[np.int64],
                 hi: npt.NDArray[np.int64], new_names: list[str], first_code: int,
                 keys_before: int) -> None:
        self.codes, self.lo, self.hi = codes, lo, hi
        self.new_names, self.first_code, self.keys_before = new_names, first_code, keys_before


class ByteTable:
    """Handle bytes -> number: the arrays of the compiled hash table."""

    __slots__ = ("tab", "arena", "used", "key_off", "key_len", "key_hash", "key_code",
                 "key_slot", "n_keys", "_rows", "_names")

    def __init__(self) -> None:
        self.tab = np.zeros((1 << 16, 4), dtype=np.int64)
        self.arena = np.empty(1 << 20, dtype=np.uint8)
        self.used = 0
        keys = 1 << 15
        self.key_off: npt.NDArray[np.int64] = np.empty(keys, dtype=np.int64)
        self.key_len: npt.NDArray[np.int64] = np.empty(keys, dtype=np.int64)
        self.key_hash: npt.NDArray[np.int64] = np.empty(keys, dtype=np.int64)
        self.key_code: npt.NDArray[np.int64] = np.empty(keys, dtype=np.int64)
        self.key_slot: npt.NDArray[np.int64] = np.empty(keys, dtype=np.int64)
        self.n_keys = 0
        self._rows = np.empty((8, 0), dtype=np.int64)  # a scan's work space
        self._names = np.empty(0, dtype=np.uint8)  # a scan's new handles

    def _room(self, keys: int, nbytes: int) -> None:
        """Grow the arrays so that ``keys`` more keys of ``nbytes`` bytes in all fit,
        the slots staying at most half full."""
        need = self.n_keys + keys
        if need > self.key_off.size:
            size = max(need, 2 * self.key_off.size)
            self.key_off, self.key_len, self.key_hash, self.key_code, self.key_slot = (
                np.concatenate([a[: self.n_keys], np.empty(size - self.n_keys, a.dtype)])
                for a in (self.key_off, self.key_len, self.key_hash, self.key_code,
                          self.key_slot))
        if self.used + nbytes > self.arena.size:
            arena = np.empty(max(self.used + nbytes, 2 * self.arena.size), dtype=np.uint8)
            arena[: self.used] = self.arena[: self.used]
            self.arena = arena
        if 2 * need > self.tab.shape[0]:
            capacity = self.tab.shape[0]
            while 2 * need > capacity:
                capacity *= 2
            self.tab = kern.rehash(self.arena, self.key_off, self.key_len, self.key_hash,
                                   self.key_code, self.key_slot, self.n_keys, capacity)

    def add(self, items: Iterable[tuple[str, int]]) -> None:
        """Add ``(handle, number)`` pairs; only handles the scanner can meet are kept
        (:func:`plain_key`)."""
        pairs = [(h, c) for h, c in items if plain_key(h)]
        if not pairs:
            return
        data = "".join(h for h, _ in pairs).encode("ascii")
        ends = np.cumsum([len(h) for h, _ in pairs], dtype=np.int64)
        codes = np.array([c for _, c in pairs], dtype=np.int64)
        self._room(len(pairs), len(data))
        self.n_keys, self.used = kern.add_keys(
            np.frombuffer(data, dtype=np.uint8), ends, codes, self.tab, self.arena,
            self.used, self.key_off, self.key_len, self.key_hash, self.key_code,
            self.key_slot, self.n_keys)

    def scan(self, standings: npt.NDArray[np.uint8], next_code: int) -> Scanned | None:
        """Read a standings array (its JSON bytes); ``None`` when the scanner does not
        take it (the table is then as it was)."""
        # every row opens with "[": the brackets bound the rows (tightly, unlike the
        # text's size, which would size the table for rows of 10 bytes)
        bound = int(np.count_nonzero(standings == _OPEN))
        if max(self.n_keys, next_code) + bound > MAX_KEYS:
            return None
        self._room(bound, standings.size)
        if self._rows.shape[1] < bound:  # scratch, reused by the next scans
            self._rows = np.empty((8, max(bound, 2 * self._rows.shape[1])), dtype=np.int64)
        if self._names.size < standings.size:
            self._names = np.empty(max(standings.size, 2 * self._names.size), dtype=np.uint8)
        names = self._names
        keys_before = self.n_keys
        status, rows, n_keys, used, after, names_len = kern.scan_standings(
            standings, self.tab, self.arena, self.used, self.key_off, self.key_len,
            self.key_hash, self.key_code, self.key_slot, self.n_keys, next_code, self._rows,
            names)
        if status != kern.OK:
            return None
        self.n_keys, self.used = n_keys, used
        new_names = (names[:names_len].tobytes().decode("ascii").split("\n")
                     if after > next_code else [])
        codes, lo, hi = self._rows[:3, :rows].copy()
        return Scanned(codes, lo, hi, new_names, next_code, keys_before)

    def forget(self, keys_before: int) -> None:
        """Take out the keys added since there were ``keys_before`` (the last ones)."""
        kern.forget_keys(self.tab, self.key_slot, keys_before, self.n_keys)
        if keys_before < self.n_keys:
            self.used = int(self.key_off[keys_before])
        self.n_keys = keys_before


def announce_compile(stream: TextIO | None = None) -> bool:
    """Print ``compiling kernels for the JSON reader, once: ~N s`` when none of the
    kernels is in Numba's cache yet (see :mod:`podium._jit`)."""
    from podium._jit import announce_module_compile

    return announce_module_compile("the JSON reader", kern, COMPILE_SECONDS,
                                   sys.stderr if stream is None else stream)
