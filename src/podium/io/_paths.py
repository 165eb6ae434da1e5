"""What a contest reader is given and reads: the path argument, the numbered contest
file names, the limit on how many contests are read, and a file's bytes (a missing or
unreadable file named in a :class:`~podium.errors.DataFormatError`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from podium.errors import DataFormatError

__all__ = ["INDEX_RE", "PathArg", "check_limit", "read_bytes"]

PathArg = str | os.PathLike[str]

#: The stem of a contest file name (``12`` of ``12.json``).
INDEX_RE = re.compile(r"[0-9]+")


def check_limit(limit: int | None) -> None:
    """Refuse a ``limit`` (contests to read) that is not ``None`` or an integer >= 0."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be None or a non-negative integer, got {limit!r}")


def read_bytes(path: Path) -> bytes:
    """The bytes of the file ``path``; a missing or unreadable file is a
    :class:`~podium.errors.DataFormatError` naming it."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
