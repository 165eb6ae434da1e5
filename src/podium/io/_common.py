"""Helpers shared by the contest readers: message formatting and file access."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from podium.errors import ContestError, DataFormatError

PathArg = str | os.PathLike[str]

#: The stem of a contest file name (``12`` of ``12.json``).
INDEX_RE = re.compile(r"[0-9]+")


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _contest_error_at(err: ContestError, where: str) -> ContestError:
    """The same :class:`ContestError` (contest, player, reason) with ``where`` in front."""
    new = ContestError(err.reason, contest=err.contest, player=err.player, team=err.team)
    new.args = (f"{where}: {err}",)
    return new


def _check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be None or a non-negative integer, got {limit!r}")


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise DataFormatError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
