"""Compiled reading of a contest's standings: ``[[handle, lo, hi], ...]`` from JSON bytes,
each handle numbered through a hash table of handle bytes (no Python string per row).

The table (:class:`podium.io._scan.ByteTable` holds its arrays) maps the UTF-8 bytes of
a handle as written to its number in the load's :class:`~podium.core.handles.HandlePool`.
It is open addressing with linear probing over the rows of ``tab`` (a power of two of
them): ``[hash, number | key << 32, first 8 bytes, next 8 bytes]``, hash 0 for an
empty slot (the hash of a key mixes its first 16 bytes, the FNV-1a of the others
and its length, and is made odd).  Key ``k`` is ``arena[key_off[k]:
key_off[k] + key_len[k]]``, in slot ``key_slot[k]``; the arena is read only to
compare the bytes after the 16th.  Keys are only appended, so the last keys can be
taken out again exactly (in reverse order each one's slot was the first empty one on
its probe path): a scan that gives up, or a contest refused after its scan, leaves
the table as it was.

:func:`scan_standings` reads only the plain form of a standings array -- rows of
exactly three values, each handle of printable ASCII without a backslash escape,
``lo`` and ``hi`` integers of at most 18 digits, JSON whitespace anywhere -- and gives
up (status :data:`GAVE_UP`) on anything else, and on a handle new to the table that
is not its own normal form (empty, longer than 128 characters, a space at either
end).  The caller then reads the contest with the general path, which names every
problem; the compiled path only ever makes the same numbers faster.
"""

from __future__ import annotations

import numba as nb
import numpy as np

import podium.core.kernel_cache  # noqa: F401 (Numba's cache locators, before the kernels)
from podium.core.intrinsics import prefetch

#: :func:`scan_standings` read the standings.
OK = 0
#: It met something other than the plain form; the table is as it was.
GAVE_UP = 1

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_MIX_1 = np.uint64(0x9E3779B97F4A7C15)
_MIX_2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_3 = np.uint64(0x94D049BB133111EB)
#: The longest handle that is its own normal form (``podium.core.guards.MAX_HANDLE_LENGTH``).
_MAX_LEN = 128
#: Digits of the longest integer read here (``10**18 - 1`` fits in 64 bits).
_MAX_DIGITS = 18
_QUOTE, _BACKSLASH, _COMMA, _SPACE, _MINUS = 34, 92, 44, 32, 45
_OPEN, _CLOSE, _NEWLINE = 91, 93, 10
#: Bytes of a key kept in its slot: most handles are shorter, so finding one reads
#: one slot (one cache line) and no other array.
_HEAD = 16
_CODE_MASK = (1 << 32) - 1


@nb.njit(cache=True, nogil=True)
def _mix(w0, w1, tail, length):
    """The hash of a key from its first 16 bytes (two words), the FNV-1a of the bytes
    after them (``tail``) and its length: a splitmix64 finish, made odd (an occupied
    slot is never 0)."""
    h = (np.uint64(w0) * _MIX_1) ^ (np.uint64(w1) + np.uint64(length)) ^ (tail * _MIX_3)
    h = (h ^ (h >> np.uint64(30))) * _MIX_2
    h = (h ^ (h >> np.uint64(27))) * _MIX_3
    h ^= h >> np.uint64(31)
    return np.int64(h | np.uint64(1))


@nb.njit(cache=True, nogil=True)
def _key(buf, start, end):
    """``(hash, first word, second word)`` of the key ``buf[start:end]``: its first 16
    bytes as two little-endian words, zero padded (no handle byte is 0, so for keys of
    at most 16 bytes equal words mean equal keys)."""
    w0 = np.uint64(0)
    w1 = np.uint64(0)
    tail = _FNV_OFFSET
    for j in range(end - start):
        c = np.uint64(buf[start + j])
        if j < 8:
            w0 |= c << np.uint64(8 * j)
        elif j < _HEAD:
            w1 |= c << np.uint64(8 * (j - 8))
        else:
            tail = (tail ^ c) * _FNV_PRIME
    return _mix(w0, w1, tail, end - start), np.int64(w0), np.int64(w1)


@nb.njit(cache=True, nogil=True)
def _home(h, mask):
    """The first slot a key of hash ``h`` probes (not from bit 0, which is always 1)."""
    return (h >> 1) & mask


@nb.njit(cache=True, nogil=True)
def _find(buf, start, end, h, w0, w1, tab, arena, key_off, key_len):
    """The slot of the key equal to ``buf[start:end]`` (:func:`_key`: ``h``, ``w0``,
    ``w1``), or ``-1 - slot`` of the empty slot where it would go."""
    mask = tab.shape[0] - 1
    i = _home(h, mask)
    n = end - start
    while True:
        s = tab[i, 0]
        if s == 0:
            return -1 - i
        if s == h and tab[i, 2] == w0 and tab[i, 3] == w1:
            if n <= _HEAD:
                return i
            k = tab[i, 1] >> 32  # a long key: the rest of its bytes in the arena
            if key_len[k] == n:
                off = key_off[k]
                same = True
                for j in range(_HEAD, n):
                    if arena[off + j] != buf[start + j]:
                        same = False
                        break
                if same:
                    return i
        i = (i + 1) & mask


@nb.njit(cache=True, nogil=True)
def _put(buf, start, end, h, w0, w1, slot, code, tab, arena, used, key_off, key_len,
         key_hash, key_code, key_slot, n_keys):
    """Add ``buf[start:end]`` as key ``n_keys`` numbered ``code`` into the empty
    ``slot``; returns the arena's bytes used after."""
    n = end - start
    for j in range(n):  # loops, not slice assignment: it costs seconds to compile
        arena[used + j] = buf[start + j]
    tab[slot, 0] = h
    tab[slot, 1] = code | (n_keys << 32)
    tab[slot, 2] = w0
    tab[slot, 3] = w1
    key_off[n_keys] = used
    key_len[n_keys] = n
    key_hash[n_keys] = h
    key_code[n_keys] = code
    key_slot[n_keys] = slot
    return used + n


@nb.njit(cache=True, nogil=True)
def forget_keys(tab, key_slot, first, stop):
    """Take keys ``stop - 1`` down to ``first`` (the last ones added) out of ``tab``."""
    for k in range(stop - 1, first - 1, -1):
        slot = key_slot[k]
        for c in range(4):
            tab[slot, c] = 0


@nb.njit(cache=True, nogil=True)
def rehash(arena, key_off, key_len, key_hash, key_code, key_slot, n_keys, capacity):
    """A slot table of ``capacity`` (a power of two) holding keys ``0 .. n_keys - 1``."""
    tab = np.zeros((capacity, 4), dtype=np.int64)
    mask = capacity - 1
    for k in range(n_keys):
        i = _home(key_hash[k], mask)
        while tab[i, 0] != 0:
            i = (i + 1) & mask
        off = key_off[k]
        _, w0, w1 = _key(arena, off, off + key_len[k])
        tab[i, 0] = key_hash[k]
        tab[i, 1] = key_code[k] | (k << 32)
        tab[i, 2] = w0
        tab[i, 3] = w1
        key_slot[k] = i
    return tab


@nb.njit(cache=True, nogil=True)
def add_keys(data, ends, codes, tab, arena, used, key_off, key_len, key_hash, key_code,
             key_slot, n_keys):
    """Add the keys ``data[ends[j-1]:ends[j]]`` numbered ``codes[j]`` (those already in
    the table keep their number); returns ``(n_keys, used)`` after."""
    start = 0
    for j in range(ends.size):
        end = ends[j]
        h, w0, w1 = _key(data, start, end)
        found = _find(data, start, end, h, w0, w1, tab, arena, key_off, key_len)
        if found < 0:
            used = _put(data, start, end, h, w0, w1, -1 - found, codes[j], tab, arena, used,
                        key_off, key_len, key_hash, key_code, key_slot, n_keys)
            n_keys += 1
        start = end
    return n_keys, used


@nb.njit(cache=True, nogil=True)
def _skip_ws(buf, i, n):
    """The index of the first byte from ``i`` above a space.  Outside strings that is
    JSON whitespace (space, tab, newline, carriage return): :func:`_parse_rows` first
    gives up on a text holding any other byte below a space."""
    while i < n and buf[i] <= _SPACE:
        i += 1
    return i


@nb.njit(cache=True, nogil=True)
def _other_control(buf):
    """Whether ``buf`` holds a byte below a space that is not tab, newline or carriage
    return (none may stand outside a string in JSON, nor inside a handle here)."""
    bad = 0
    for j in range(buf.size):
        c = buf[j]
        bad += (c < _SPACE) & (c != 9) & (c != _NEWLINE) & (c != 13)
    return bad > 0


@nb.njit(cache=True, nogil=True)
def _int(buf, i, n):
    """``(value, next index)`` of a plain JSON integer at ``i``; next index -1 if not one."""
    neg = False
    if i < n and buf[i] == _MINUS:
        neg = True
        i += 1
    start = i
    v = np.int64(0)
    while i < n and 48 <= buf[i] <= 57:
        v = v * 10 + np.int64(buf[i] - 48)
        i += 1
    digits = i - start
    if digits == 0 or digits > _MAX_DIGITS or (digits > 1 and buf[start] == 48):
        return v, -1
    if i < n and (buf[i] == 46 or buf[i] == 101 or buf[i] == 69):  # . e E: not an integer
        return v, -1
    return (-v if neg else v), i


@nb.njit(cache=True, nogil=True)
def _after_comma(buf, i, n):
    """The index after ``,`` (whitespace around) at ``i``; -1 if there is none."""
    i = _skip_ws(buf, i, n)
    if i >= n or buf[i] != _COMMA:
        return -1
    return _skip_ws(buf, i + 1, n)


@nb.njit(cache=True, nogil=True)
def _parse_rows(buf, tab, lo, hi, starts, ends, hashes, w0s, w1s):
    """Pass 1 of :func:`scan_standings`: each row's handle (its bytes' range, hash and
    first 16 bytes), ``lo`` and ``hi``; the slot each handle probes first is fetched
    into the cache meanwhile.  Returns the number of rows, or -1 when the text is not
    the plain form."""
    n = buf.size
    if _other_control(buf):
        return -1
    flat = tab.reshape(tab.size)
    mask = tab.shape[0] - 1
    rows = 0
    i = _skip_ws(buf, 0, n)
    if i >= n or buf[i] != _OPEN:
        return -1
    i = _skip_ws(buf, i + 1, n)
    while i < n and buf[i] == _OPEN:
        i = _skip_ws(buf, i + 1, n)
        if i >= n or buf[i] != _QUOTE:
            return -1
        # the handle: printable ASCII, no escape; its key read on the way
        start = i + 1
        i = start
        w0 = np.uint64(0)
        w1 = np.uint64(0)
        tail = _FNV_OFFSET
        while i < n:
            c = buf[i]
            if c == _QUOTE:
                break
            if c < _SPACE or c > 126 or c == _BACKSLASH:
                return -1
            j = i - start
            if j < 8:
                w0 |= np.uint64(c) << np.uint64(8 * j)
            elif j < _HEAD:
                w1 |= np.uint64(c) << np.uint64(8 * (j - 8))
            else:
                tail = (tail ^ np.uint64(c)) * _FNV_PRIME
            i += 1
        if i >= n:
            return -1
        h = _mix(w0, w1, tail, i - start)
        prefetch(flat, 4 * _home(h, mask))
        starts[rows] = start
        ends[rows] = i
        hashes[rows] = h
        w0s[rows] = np.int64(w0)
        w1s[rows] = np.int64(w1)
        i = _after_comma(buf, i + 1, n)
        if i < 0:
            return -1
        lo_r, i = _int(buf, i, n)
        if i < 0:
            return -1
        i = _after_comma(buf, i, n)
        if i < 0:
            return -1
        hi_r, i = _int(buf, i, n)
        if i < 0:
            return -1
        lo[rows] = lo_r
        hi[rows] = hi_r
        rows += 1
        i = _skip_ws(buf, i, n)
        if i >= n or buf[i] != _CLOSE:
            return -1
        i = _skip_ws(buf, i + 1, n)
        if i < n and buf[i] == _COMMA:
            i = _skip_ws(buf, i + 1, n)
            continue
        if i < n and buf[i] == _CLOSE and _skip_ws(buf, i + 1, n) == n:
            return rows
        return -1
    return -1


@nb.njit(cache=True, nogil=True)
def scan_standings(buf, tab, arena, used, key_off, key_len, key_hash, key_code, key_slot,
                   n_keys, next_code, rows_out, names):
    """Read the plain standings array ``buf`` (module docstring).

    ``rows_out`` has 8 rows of work space, one column per row of the standings at
    least; row ``r``'s handle number, ``lo`` and ``hi`` go to ``rows_out[0, r]``,
    ``rows_out[1, r]``, ``rows_out[2, r]``.  A handle new to the table gets the
    number ``next_code``, the next one the one after, and its bytes go into
    ``names`` (new handles joined by newlines).  The arrays must have room: the key
    arrays for every row, ``arena`` and ``names`` for every byte of ``buf``, ``tab``
    at most half full after.

    Returns ``(status, rows, n_keys, used, next_code, names_len)`` after the scan; on
    :data:`GAVE_UP` the table is as it was and the other values are the inputs.
    """
    codes = rows_out[0]
    starts = rows_out[3]
    ends = rows_out[4]
    hashes = rows_out[5]
    w0s = rows_out[6]
    w1s = rows_out[7]
    rows = _parse_rows(buf, tab, rows_out[1], rows_out[2], starts, ends, hashes, w0s, w1s)
    if rows < 0:
        return GAVE_UP, 0, n_keys, used, next_code, 0
    keys0 = n_keys
    used0 = used
    code0 = next_code
    names_len = 0
    for r in range(rows):
        start = starts[r]
        end = ends[r]
        slot = _find(buf, start, end, hashes[r], w0s[r], w1s[r], tab, arena, key_off, key_len)
        if slot >= 0:
            codes[r] = tab[slot, 1] & _CODE_MASK
            continue
        # new: kept only if it is its own normal form
        length = end - start
        if length == 0 or length > _MAX_LEN or buf[start] == _SPACE or buf[end - 1] == _SPACE:
            forget_keys(tab, key_slot, keys0, n_keys)
            return GAVE_UP, 0, keys0, used0, code0, 0
        used = _put(buf, start, end, hashes[r], w0s[r], w1s[r], -1 - slot, next_code, tab,
                    arena, used, key_off, key_len, key_hash, key_code, key_slot, n_keys)
        if next_code > code0:
            names[names_len] = _NEWLINE
            names_len += 1
        for j in range(length):
            names[names_len + j] = buf[start + j]
        names_len += length
        codes[r] = next_code
        n_keys += 1
        next_code += 1
    return OK, rows, n_keys, used, next_code, names_len
