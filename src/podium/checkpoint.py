"""Versioned, atomic checkpoints of a :class:`~podium.rater.Rater`.

A checkpoint is one ``.npz`` file (a zip of NumPy arrays, no pickle) holding
the system's name and parameters, the player table, the system's state, the
event log and the list of processed contests.  It is written to a temporary
file next to the target and moved over it, so a crash during a save leaves the
previous checkpoint intact.  Rating contests ``0..k``, saving, loading and
rating ``k+1..n`` gives exactly the numbers of one uninterrupted run.
"""

from __future__ import annotations

import json
import os
import zipfile
from typing import TYPE_CHECKING, Any

import numpy as np

from podium import __version__
from podium._files import atomic_write
from podium.core.state import ContestRecord, EventLog, PlayerTable
from podium.errors import CheckpointError, ConfigError

if TYPE_CHECKING:
    from podium.rater import Rater

__all__ = ["save_checkpoint", "load_checkpoint", "rater_arrays", "restore_rater",
           "CHECKPOINT_FORMAT", "CHECKPOINT_VERSION"]

CHECKPOINT_FORMAT = "podium-checkpoint"
CHECKPOINT_VERSION = 1


def _json_bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(obj, allow_nan=True).encode("utf-8"), dtype=np.uint8)


def rater_arrays(
    rater: Rater, *, fmt: str, version: int, events: bool = True
) -> dict[str, Any]:
    """The arrays of an ``.npz`` image of ``rater``: metadata (``fmt``, ``version``, system,
    parameters, contests), the player table, the system state and, if ``events``, the
    event log.  Shared by checkpoints and the store's snapshots."""
    meta = {
        "format": fmt,
        "version": version,
        "podium_version": __version__,
        "system": rater.system_name,
        "params": rater.system.params(),
        "last_time": rater.last_time,
        "contests": [
            [c.name, c.time_seconds, c.url, c.players, c.skipped] for c in rater.contests
        ],
    }
    table = rater.players.to_arrays()
    handles = table.pop("handles").tolist()
    arrays: dict[str, Any] = {
        "meta": _json_bytes(meta),
        "handles": _json_bytes(handles),
    }
    for k, v in table.items():
        arrays[f"table.{k}"] = v
    for k, v in rater.state.to_arrays().items():
        arrays[f"state.{k}"] = v
    if events:
        for k, v in rater.events.arrays().items():
            arrays[f"events.{k}"] = v
    return arrays


def restore_rater(
    rater: Rater, data: dict[str, np.ndarray], meta: dict[str, Any], *, where: str,
    what: str = "checkpoint",
) -> Rater:
    """Fill a fresh ``rater`` of the right system from :func:`rater_arrays` output
    (its event log too when the image has one); :class:`CheckpointError` naming
    ``where`` if the image is damaged."""
    try:
        handles = json.loads(bytes(data["handles"]).decode("utf-8"))
        table = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("table.")}
        table["handles"] = np.array(handles, dtype=object)
        rater.players = PlayerTable.from_arrays(table)
        state = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("state.")}
        rater.state = type(rater.state).from_arrays(state)
        rater.state.ensure_players(rater.players.n)
        events = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("events.")}
        if events:
            rater.events = EventLog.from_arrays(events)
        rater.contests = [ContestRecord(*row) for row in meta["contests"]]
        rater.last_time = meta["last_time"]
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{where}: {what} is damaged or inconsistent ({exc})") from None
    if rater.players.mu.size != rater.players.n:
        raise CheckpointError(f"{where}: {what} is inconsistent (player arrays)")
    return rater


def save_checkpoint(rater: Rater, path: str | os.PathLike[str]) -> None:
    """Write ``rater`` to ``path`` atomically."""
    arrays = rater_arrays(rater, fmt=CHECKPOINT_FORMAT, version=CHECKPOINT_VERSION)
    atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)


def load_checkpoint(path: str | os.PathLike[str]) -> Rater:
    """Read a checkpoint written by :func:`save_checkpoint`.

    Raises
    ------
    CheckpointError
        When the file is missing, not a Podium checkpoint, of an unknown
        version, or inconsistent.
    """
    from podium.rater import Rater

    where = os.fspath(path)
    try:
        with np.load(where, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise CheckpointError(f"{where}: checkpoint file not found") from None
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise CheckpointError(f"{where}: not a readable Podium checkpoint ({exc})") from None
    try:
        meta = json.loads(bytes(data["meta"]).decode("utf-8"))
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(f"{where}: not a Podium checkpoint (no metadata)") from None
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{where}: not a Podium checkpoint (format {meta.get('format')!r})")
    version = meta.get("version")
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{where}: checkpoint format version {version!r} is not supported "
            f"(this Podium reads version {CHECKPOINT_VERSION})"
        )
    try:
        rater = Rater(meta["system"], **meta["params"])
    except ConfigError as exc:
        raise CheckpointError(f"{where}: {exc}") from None
    return restore_rater(rater, data, meta, where=where)
