"""Many small JSON contest files checked and built at once.

A directory of ``<n>.json`` files (:func:`podium.io.sources.iter_dir`) is read in
batches of small files: every file of a batch is decoded by msgspec's typed decoder
(:func:`podium.io.json_contests.decoders`, types checked in C), then the rules that
:func:`podium.io.json_contests.decode_contest` applies to one file are applied to the
whole batch with NumPy -- integer times, finite positive weights, ceilings that are
numbers or ``+inf``, names and urls that are Unicode text, contiguous tie ranges
(:func:`podium.core.standings.ranges_hold`), distinct handles within a contest, the
load's time and weight check (:meth:`~podium.io._times.TimeCheck.accepts`) -- each
distinct handle is checked and numbered once by the load's
:class:`~podium.io._handles.HandleTable`, and the contests are built by
:class:`~podium.core.contest_batch.ContestBatch`, whose contests read the batch's arrays.

Whatever a batch cannot take as it is (a file msgspec refuses, a float time, a
number beyond 64 bits, a team contest) and every problem it finds make
:func:`batch_contests` return ``None``: the caller then reads the batch's files one
by one, and the first bad file raises its error, naming the file, the contest and
the player.  Handles are numbered only once every other check has passed, in the
order the one-by-one reader numbers them, so the result is the same contest for
contest (tests compare the two).
"""

from __future__ import annotations

import math
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.contest_batch import ContestBatch
from podium.core.guards import HandleError
from podium.core.standings import ranges_hold
from podium.io._handles import HandleTable
from podium.io._times import TimeCheck
from podium.io.json_contests import EmptyContest, decoders

__all__ = ["BATCH_BYTES", "BATCH_FILE_BYTES", "batch_contests"]

#: Files of at most this many bytes are read in batches; a larger file alone.
BATCH_FILE_BYTES = 1 << 16
#: A batch holds files of at most this many bytes in all.
BATCH_BYTES = 1 << 23

IntArray = npt.NDArray[np.int64]


class _Bail(Exception):
    """Something the batch leaves to the one-by-one reader."""


def batch_contests(datas: list[bytes], sources: list[str], intern: HandleTable,
                   times: TimeCheck | None) -> list[Contest | EmptyContest] | None:
    """The contests of a batch of JSON contest files, each as
    :func:`~podium.io.json_contests.decode_contest` reads it in a history
    (``allow_empty``: a file with empty standings is an
    :class:`~podium.io.json_contests.EmptyContest`), or ``None`` when they must be read
    one by one (the handle table then numbered none of them).

    Parameters
    ----------
    datas : list of bytes
        The files' JSON text, in index order.
    sources : list of str
        The files' names (an :class:`EmptyContest` keeps its own).
    intern : HandleTable
        The load's coded handle table.
    times : TimeCheck, optional
        The load's time and weight check.

    Returns
    -------
    list of Contest or EmptyContest, or None
    """
    dec = decoders()
    try:
        docs = list(map(dec.full.decode, datas))
        return _contests(docs, sources, intern, times)
    except (dec.error, _Bail, HandleError, OverflowError, UnicodeEncodeError):
        return None


def _numbers(values: list[Any], none_ok: bool) -> npt.NDArray[np.float64]:
    """``values`` (msgspec's ``int | float``) as doubles; bails on an integer beyond 64
    bits, as :func:`~podium.io.json_contests.plain_fields` refuses it."""
    kinds = set(map(type, values))
    if int in kinds and not all(-(2**63) <= v < 2**63 for v in values if type(v) is int):
        raise _Bail
    if none_ok and type(None) in kinds:  # no ceiling: +inf in the checks
        values = [math.inf if v is None else v for v in values]
    return np.array(values, dtype=np.float64)


def _texts(names: list[str], urls: list[str | None]) -> None:
    """Bails on a name or url that is not Unicode text (a lone surrogate)."""
    given = [u for u in urls if u is not None]
    if not ("".join(names).isascii() and "".join(given).isascii()):
        "".join(names + given).encode("utf-8")  # UnicodeEncodeError: a lone surrogate


def _contests(docs: list[Any], sources: list[str], intern: HandleTable,
              times: TimeCheck | None) -> list[Contest | EmptyContest]:
    """:func:`batch_contests` of the decoded files; :class:`_Bail` for the one-by-one
    reader."""
    pool = intern.pool
    assert pool is not None, "a coded handle table"
    all_docs = docs
    standings = list(map(attrgetter("standings"), docs))
    all_sizes = np.fromiter(map(len, standings), dtype=np.int64, count=len(docs))
    kept = np.flatnonzero(all_sizes > 0).tolist()
    if not kept:
        return [EmptyContest(d.name, s) for d, s in zip(docs, sources, strict=True)]
    if len(kept) != len(docs):
        docs = list(map(docs.__getitem__, kept))
        standings = list(map(standings.__getitem__, kept))
    sizes = all_sizes[kept]
    # ---- the contests' fields
    names = list(map(attrgetter("name"), docs))
    urls = list(map(attrgetter("url"), docs))
    t_given = list(map(attrgetter("time_seconds"), docs))
    if set(map(type, t_given)) - {int}:
        raise _Bail  # a float time: the one-by-one reader's exact handling
    t = np.array(t_given, dtype=np.int64)  # OverflowError beyond 64 bits
    w = _numbers(list(map(attrgetter("weight"), docs)), False)
    ceil_given = list(map(attrgetter("perf_ceiling"), docs))
    ceil = _numbers(ceil_given, True)
    if not bool((np.isfinite(w) & (w > 0)).all()) or bool((ceil == -np.inf).any()):
        raise _Bail
    _texts(names, urls)
    if times is not None and not times.accepts(t, w):
        raise _Bail
    # ---- the rows: handles and tie ranges
    raw, los, his = zip(*chain.from_iterable(standings), strict=True)
    m = len(raw)
    lo = np.fromiter(los, dtype=np.int64, count=m)
    hi = np.fromiter(his, dtype=np.int64, count=m)
    starts = np.cumsum(sizes) - sizes
    if not ranges_hold(lo, hi, starts, sizes):
        raise _Bail
    unique = list(dict.fromkeys(raw))
    norms = list(intern.all(unique))  # HandleError: the table is as it was
    of_raw = dict(zip(unique, range(len(unique)), strict=True))
    row_raw = np.fromiter(map(of_raw.__getitem__, raw), dtype=np.int64, count=m)
    first_of_norm: dict[str, int] = {}
    norm_id = np.fromiter(map(first_of_norm.setdefault, norms, range(len(norms))),
                          dtype=np.int64, count=len(norms))
    contest_of = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    pair = np.sort(contest_of * np.int64(len(unique)) + norm_id[row_raw])
    if bool((pair[1:] == pair[:-1]).any()):
        raise _Bail  # a handle twice in a contest
    # ---- every check passed: number the handles (in order of first appearance)
    codes = intern.numbered(norms)[row_raw]
    intern.rows += m
    for a in (codes, lo, hi):
        a.flags.writeable = False
    built = ContestBatch(
        pool, codes, lo, hi, starts, sizes, names, t,
        None if bool((w == 1.0).all()) else w,
        None if ceil_given.count(None) == len(ceil_given) else
        [None if c is None else float(c) for c in ceil_given],
        None if urls.count(None) == len(urls) else urls).contests()
    if len(kept) == len(all_docs):
        return list(built)
    out: list[Contest | EmptyContest] = [
        EmptyContest(d.name, s) for d, s in zip(all_docs, sources, strict=True)]
    for k, c in zip(kept, built, strict=True):
        out[k] = c
    return out
