"""A :class:`~podium.rater.Rater` to bytes and back, without its event log.

The store keeps every rating event in its ``events`` table, so the rating
state it snapshots is what :mod:`podium.checkpoint` saves minus the event log
(:meth:`Rater.to_arrays(events=False) <podium.rater.Rater.to_arrays>`): the
system's name and parameters, the player table, the system's per-player state,
the processed contests' records and the latest contest time.  The bytes are an
uncompressed ``.npz`` (a zip of NumPy arrays; no pickle).  This module handles
the bytes and their format version only (:mod:`podium._version`).

A Rater rebuilt from these bytes continues exactly like the original (the same
property :mod:`podium.checkpoint` has): rating contests ``0..k``, taking a
snapshot, restoring it and rating ``k+1..n`` gives the numbers of one run.

The Rater the store works with keeps no event history: its event sink is a
:class:`RunEventLog` (passed to the Rater's constructor), which collects the
events of one run of contests while the store writes them to the database.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from podium._version import SNAPSHOT_FORMAT, SNAPSHOT_VERSION
from podium.checkpoint import file_header
from podium.core.state import EventLog
from podium.errors import CheckpointError
from podium.rater import Rater

__all__ = ["RunEventLog", "SNAPSHOT_FORMAT", "SNAPSHOT_VERSION", "new_rater",
           "rater_to_bytes", "rater_from_bytes"]


class RunEventLog(EventLog):
    """The event sink of a store's Rater: it keeps the events of one run of contests.

    The store writes every event to its ``events`` table itself, so outside a run the
    log keeps nothing.  Inside ``with sink.run():`` it collects the events of the
    contests rated there (read them with :meth:`arrays` before the block ends); the
    block's end drops them again.  The Rater is built with the sink
    (``Rater(system, events=sink)``) and never has its log replaced.
    """

    recording: bool = False

    def append(
        self,
        contest: int,
        players: np.ndarray,
        mu: np.ndarray,
        sigma: np.ndarray,
        perf: np.ndarray,
        place: np.ndarray,
        teams: Sequence[str] | None = None,
    ) -> None:
        if self.recording:
            super().append(contest, players, mu, sigma, perf, place, teams)

    def append_rounds(
        self,
        contest: np.ndarray,
        players: np.ndarray,
        mu: np.ndarray,
        sigma: np.ndarray,
        perf: np.ndarray,
        place: np.ndarray,
        teams: Sequence[str | None] | None = None,
    ) -> None:
        if self.recording:
            super().append_rounds(contest, players, mu, sigma, perf, place, teams)

    def round_events(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                    np.ndarray, np.ndarray]:
        """The events collected so far in the run, as ``(player, mu, sigma, perf, place,
        team)`` (``team``: an object array of team names, ``None`` for an individual
        round's players).

        A run of one round (a live match) logs one chunk, whose arrays the log copied
        when it took them: they are returned as they are, without the concatenation of
        :meth:`~podium.core.state.EventLog.arrays` (the run's end drops the chunk, never
        the arrays).
        """
        chunks = self._chunks
        if len(chunks) == 1 and not self._tail_n:
            _, player, mu, sigma, perf, place, team_ids = chunks[0]
        else:
            ev = self.arrays()
            player, mu, sigma, perf, place = (ev["player"], ev["mu"], ev["sigma"],
                                              ev["perf"], ev["place"])
            team_ids = ev["team"]
        if team_ids is None or not self.team_names:
            team = np.empty(len(player), dtype=object)  # None throughout
        else:
            names = np.array([*self.team_names, None], dtype=object)
            team = names[np.where(team_ids < 0, len(names) - 1, team_ids)]
        return player, mu, sigma, perf, place, team

    @contextmanager
    def run(self) -> Iterator[RunEventLog]:
        """Collect the events appended inside the block (none from before it)."""
        self._chunks, self._cache, self.recording = [], None, True
        self.team_names, self._team_ids = [], {}
        try:
            yield self
        finally:
            self._chunks, self._cache, self.recording = [], None, False
            self.team_names, self._team_ids = [], {}


def new_rater(system: str, params: dict[str, Any], *,
              events: RunEventLog | None = None) -> Rater:
    """A fresh Rater of ``system`` with ``params`` whose event sink is ``events``
    (default: a new :class:`RunEventLog`)."""
    return Rater(system, events=RunEventLog() if events is None else events, **params)


def rater_to_bytes(rater: Rater) -> bytes:
    """Serialise ``rater`` (all but its event log).

    Note that ``SystemState.to_arrays`` may compact the state in place (Elo-MMR
    packs its pool of logistic factors); that changes no rating.
    """
    header = file_header(SNAPSHOT_FORMAT, SNAPSHOT_VERSION)
    arrays: dict[str, Any] = rater.to_arrays(events=False, header=header)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def rater_from_bytes(data: bytes, *, where: str = "snapshot",
                     events: RunEventLog | None = None) -> Rater:
    """Rebuild a Rater from :func:`rater_to_bytes` output, with ``events`` as its event
    sink (default: a new :class:`RunEventLog`).

    Raises
    ------
    CheckpointError
        When the bytes are not a readable snapshot of a known version, or name an
        unknown system or parameter.
    """
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError,
            UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where}: not a readable Podium snapshot ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != SNAPSHOT_FORMAT \
            or meta.get("version") != SNAPSHOT_VERSION:
        fmt, ver = (meta.get("format"), meta.get("version")) if isinstance(meta, dict) \
            else (None, None)
        raise CheckpointError(f"{where}: unsupported snapshot format {fmt!r} version {ver!r}")
    sink = RunEventLog() if events is None else events
    return Rater.from_arrays(arrays, events=sink, where=where, what="snapshot")
