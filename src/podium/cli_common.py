"""What the ``podium`` commands share: the options of every command that reads a
contest history (:func:`add_input_args`, :func:`load_options`), parameter files and
``--set`` overrides (:func:`load_params`) and the progress bar (:class:`Progress`).

Imported by :mod:`podium.cli` and by the command modules it dispatches to
(:data:`podium.cli.COMMAND_MODULES`), which therefore never import :mod:`podium.cli`.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from podium.errors import PodiumError, UsageError

__all__ = ["Progress", "add_input_args", "float_in", "int_in", "load_options", "load_params"]


def int_in(lo: int, hi: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an integer in ``[lo, hi]`` (a value outside is refused by
    the parser, naming the range: one ``podium: error:`` line, exit status 2)."""
    span = f"an integer >= {lo}" if hi is None else f"an integer in {lo}..{hi}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {span}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{text} is not {span}")
        return value

    parse.__name__ = "integer"
    return parse


def float_in(lo: float, hi: float, *, open_lo: bool = False,
             open_hi: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a number in ``[lo, hi]`` (an open end with ``open_lo``,
    ``open_hi``)."""
    span = f"a number in {'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {span}") from None
        if not (lo < value if open_lo else lo <= value) or not (
                value < hi if open_hi else value <= hi):
            raise argparse.ArgumentTypeError(f"{text} is not {span}")
        return value

    parse.__name__ = "number"
    return parse


def add_input_args(p: argparse.ArgumentParser, *, raw_handles: bool = True) -> None:
    """The options of every command that reads a contest history: ``--raw-handles`` and
    ``--any-weight`` (unless ``raw_handles=False``: a store applies its input rules
    whatever the file says), ``--allow-future`` and ``--no-times`` (see
    :func:`load_options`)."""
    if raw_handles:
        p.add_argument("--raw-handles", action="store_true",
                       help="keep handles as written (research data); by default they are "
                       "NFC-normalised and trimmed, and control, invisible or bidi "
                       "characters, empty handles and handles over 128 characters are "
                       "refused")
    p.add_argument("--allow-future", action="store_true",
                   help="accept contests dated more than a day after this machine's clock "
                   "(simulations, scheduled contests)")
    p.add_argument("--no-times", action="store_true",
                   help="accept a CSV without a time_seconds column: its contests are rated "
                   "in file order, all at time 0")
    if raw_handles:
        p.add_argument("--any-weight", action="store_true",
                       help="accept any positive contest weight (research data); by default "
                       "a weight outside [0.001, 100], the range the rating systems were "
                       "checked in and a store accepts, is refused")


def load_options(args: argparse.Namespace) -> dict[str, bool]:
    """The keyword arguments of :func:`podium.io.load_contests` given by
    :func:`add_input_args`'s options."""
    return {"raw_handles": bool(getattr(args, "raw_handles", False)),
            "allow_future": bool(getattr(args, "allow_future", False)),
            "require_times": not getattr(args, "no_times", False),
            "any_weight": bool(getattr(args, "any_weight", False))}


def _parse_value(text: str) -> Any:
    """The value of a ``--set NAME=VALUE``: true/false, none/null, inf, a JSON value,
    else the text itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
    except ValueError:  # an integer beyond Python's int-string conversion limit
        raise UsageError(f"--set: the number {text[:20]}... ({len(text)} characters) is "
                          "out of range") from None


def load_params(path: str | None, sets: Sequence[str]) -> tuple[str | None, dict[str, Any]]:
    """Parameters from a JSON/TOML config file (named keys) and ``--set k=v`` overrides.

    Parameters
    ----------
    path : str, optional
        The parameter file (``.toml``, else JSON): an object of named parameters, with
        an optional ``system`` key, or ``{"system": ..., "params": {...}}``.
    sets : sequence of str
        ``NAME=VALUE`` overrides, applied after the file.

    Returns
    -------
    tuple of (str or None, dict)
        The file's system (``None`` when it names none) and the parameters.

    Raises
    ------
    PodiumError
        When the file cannot be read or parsed, is not an object, or a value is out
        of range; the message names the file or the option.
    """
    system: str | None = None
    params: dict[str, Any] = {}
    if path:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise PodiumError(f"{path}: cannot read parameter file ({exc.strerror})") from None
        try:
            if p.suffix.lower() == ".toml":
                doc = tomllib.loads(raw.decode("utf-8"))
            else:
                doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PodiumError(f"{path}: not a valid JSON/TOML parameter file ({exc})") from None
        if not isinstance(doc, dict):
            raise PodiumError(f"{path}: a parameter file must hold named keys (an object)")
        system = doc.get("system")
        inner = doc.get("params", {k: v for k, v in doc.items() if k != "system"})
        if not isinstance(inner, dict):
            raise PodiumError(f"{path}: 'params' must be an object of named parameters")
        params.update(inner)
    for item in sets:
        if "=" not in item:
            raise UsageError(f"--set expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        params[k.strip()] = _parse_value(v.strip())
    for k, v in params.items():
        if type(v) is int and not -(2**63) <= v < 2**63:
            raise UsageError(f"parameter {k}: {str(v)[:20]}... ({len(str(v))} digits) is out "
                             "of range")
    return system, params


class Progress:
    """A one-line progress bar on a terminal (nothing when not a TTY).

    Parameters
    ----------
    total : int
        The contests to rate.
    stream : TextIO
        Where the bar is drawn (stderr).
    enabled : bool
        Draw it (``--no-progress`` turns it off); only on a terminal either way.
    """

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.enabled = enabled and stream.isatty()
        self.start = time.perf_counter()
        self.rows = 0
        self.last = 0.0

    def update(self, done: int, rows: int) -> None:
        self.rows += rows
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        width = 30
        filled = int(width * done / self.total)
        elapsed = now - self.start
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} contests, "
            f"{self.rows:,} player-rounds, {elapsed:.1f} s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
