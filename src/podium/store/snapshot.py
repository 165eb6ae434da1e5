"""A :class:`~podium.rater.Rater` to bytes and back, without its event log.

The store keeps every rating event in its ``events`` table, so the rating
state it snapshots is what :mod:`podium.checkpoint` saves minus the event log:
the system's name and parameters, the player table, the system's per-player
state (``SystemState.to_arrays``), the processed contests' records and the
latest contest time.  The bytes are an uncompressed ``.npz`` (a zip of NumPy
arrays; no pickle).

A Rater rebuilt from these bytes continues exactly like the original (the same
property :mod:`podium.checkpoint` has): rating contests ``0..k``, taking a
snapshot, restoring it and rating ``k+1..n`` gives the numbers of one run.

The Rater the store works with records only the last round's events
(:class:`LastRoundLog`): the store writes them to the database right away.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import numpy as np

from podium.checkpoint import rater_arrays, restore_rater
from podium.core.state import EventLog
from podium.errors import CheckpointError
from podium.rater import Rater

__all__ = ["LastRoundLog", "SNAPSHOT_FORMAT", "SNAPSHOT_VERSION", "new_rater",
           "rater_to_bytes", "rater_from_bytes"]

SNAPSHOT_FORMAT = "podium-store-snapshot"
SNAPSHOT_VERSION = 1


class LastRoundLog(EventLog):
    """An event log that keeps only the latest round (the store saves events itself).

    ``last`` is ``(contest, players, mu, sigma, perf, place)`` of the latest
    :meth:`append`, or ``None``.
    """

    last: tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def append(
        self,
        contest: int,
        players: np.ndarray,
        mu: np.ndarray,
        sigma: np.ndarray,
        perf: np.ndarray,
        place: np.ndarray,
    ) -> None:
        self.last = (
            contest,
            np.array(players, dtype=np.int64),
            np.array(mu, dtype=np.float64),
            np.array(sigma, dtype=np.float64),
            np.array(perf, dtype=np.float64),
            np.array(place, dtype=np.int64),
        )


def new_rater(system: str, params: dict[str, Any]) -> Rater:
    """A fresh Rater of ``system`` with ``params`` and a :class:`LastRoundLog`."""
    rater = Rater(system, **params)
    rater.events = LastRoundLog()
    return rater


def rater_to_bytes(rater: Rater) -> bytes:
    """Serialise ``rater`` (all but its event log).

    Note that ``SystemState.to_arrays`` may compact the state in place (Elo-MMR
    packs its pool of logistic factors); that changes no rating.
    """
    arrays = rater_arrays(rater, fmt=SNAPSHOT_FORMAT, version=SNAPSHOT_VERSION, events=False)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def rater_from_bytes(data: bytes, *, where: str = "snapshot") -> Rater:
    """Rebuild a Rater (with a :class:`LastRoundLog`) from :func:`rater_to_bytes` output.

    Raises
    ------
    CheckpointError
        When the bytes are not a readable snapshot of a known version.
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError,
            UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where}: not a readable Podium snapshot ({exc})") from None
    if meta.get("format") != SNAPSHOT_FORMAT or meta.get("version") != SNAPSHOT_VERSION:
        raise CheckpointError(
            f"{where}: unsupported snapshot format {meta.get('format')!r} "
            f"version {meta.get('version')!r}"
        )
    rater = new_rater(meta["system"], meta["params"])
    return restore_rater(rater, arrays, meta, where=where, what="snapshot")
