"""What a contest reader is given and reads: the path argument, the numbered contest
file names, the limit on how many contests are read, and a file's bytes (a missing or
unreadable file named in a :class:`~podium.errors.DataFormatError`)."""

from __future__ import annotations

import os
import re

from podium.errors import DataFormatError

__all__ = ["INDEX_RE", "PathArg", "check_limit", "read_bytes", "read_small"]

PathArg = str | os.PathLike[str]

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
#: The stem of a contest file name (``12`` of ``12.json``).
INDEX_RE = re.compile(r"[0-9]+")


def check_limit(limit: int | None) -> None:
    """Refuse a ``limit`` (contests to read) that is not ``None`` or an integer >= 0."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be None or a non-negative integer, got {limit!r}")


def _read_error(path: PathArg, exc: OSError) -> DataFormatError:
    """A missing or unreadable file as a :class:`~podium.errors.DataFormatError` naming
    it."""
    if isinstance(exc, FileNotFoundError):
        return DataFormatError(f"{path}: no such file")
    return DataFormatError(f"{path}: cannot read file: {exc.strerror or exc}")


def read_bytes(path: PathArg) -> bytes:
    """The bytes of the file ``path``; a missing or unreadable file is a
    :class:`~podium.errors.DataFormatError` naming it."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise _read_error(path, exc) from (None if isinstance(exc, FileNotFoundError) else exc)


def read_small(path: str, most: int) -> bytes | None:
    """The bytes of the file ``path`` when it holds at most ``most`` bytes, else
    ``None`` (:func:`read_bytes` then reads it); errors as :func:`read_bytes`.  One
    ``read`` system call and no file object: a directory of many small contest files
    is read in half the time of ``open(...).read()``."""
    try:
        fd = os.open(path, _READ_FLAGS)
        try:
            data = os.read(fd, most + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _read_error(path, exc) from (None if isinstance(exc, FileNotFoundError) else exc)
    return data if len(data) <= most else None
