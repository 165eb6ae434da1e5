"""Versioned, atomic checkpoints of a :class:`~podium.rater.Rater`.

A checkpoint is one ``.npz`` file (a zip of NumPy arrays, no pickle) holding
:meth:`Rater.to_arrays <podium.rater.Rater.to_arrays>` -- the system's name and
parameters, the player table, the system's state, the event log and the list of
processed contests -- with the file format's name and version first in its
metadata (:func:`checkpoint_header`).  It is written to a temporary file next to
the target and moved over it, so a crash during a save leaves the previous
checkpoint intact.  Rating contests ``0..k``, saving, loading and rating ``k+1..n``
gives exactly the numbers of one uninterrupted run.

This module handles the file and its version only (:func:`write_checkpoint`,
:func:`read_checkpoint`), and does not import the Rater: the Rater owns what goes
into the arrays (:meth:`~podium.rater.Rater.to_arrays`,
:meth:`~podium.rater.Rater.from_arrays`) and calls this module from
:meth:`~podium.rater.Rater.save` and :meth:`~podium.rater.Rater.load`.  The versions
live in :mod:`podium._version`.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from podium._files import atomic_write
from podium._version import CHECKPOINT_FORMAT, CHECKPOINT_VERSION, __version__
from podium.errors import CheckpointError

__all__ = ["write_checkpoint", "read_checkpoint", "checkpoint_header", "file_header",
           "CHECKPOINT_FORMAT", "CHECKPOINT_VERSION"]

#: The first bytes of a zip file (an ``.npz`` checkpoint is one).
_ZIP_MAGIC = b"PK\x03\x04"


def file_header(fmt: str, version: int) -> dict[str, Any]:
    """The first items of an image's metadata: format name, format version and the
    Podium version that wrote it (shared by checkpoints and the store's snapshots)."""
    return {"format": fmt, "version": version, "podium_version": __version__}


def checkpoint_header() -> dict[str, Any]:
    """The first items of a checkpoint's metadata: :func:`file_header` of
    :data:`CHECKPOINT_FORMAT` and :data:`CHECKPOINT_VERSION` (the ``header`` of
    :meth:`Rater.to_arrays <podium.rater.Rater.to_arrays>`)."""
    return file_header(CHECKPOINT_FORMAT, CHECKPOINT_VERSION)


def write_checkpoint(image: Mapping[str, np.ndarray], path: str | os.PathLike[str]) -> None:
    """Write a Rater's image to ``path`` atomically.

    Parameters
    ----------
    image : mapping of str to ndarray
        :meth:`Rater.to_arrays <podium.rater.Rater.to_arrays>` with
        ``header=checkpoint_header()``.
    path : str or os.PathLike
        The ``.npz`` file; a crash during the write leaves the previous one intact.
    """
    arrays: dict[str, Any] = dict(image)
    atomic_write(path, lambda fh: np.savez(fh, **arrays), binary=True)


def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The image stored by :func:`write_checkpoint`, its format and version checked.

    Returns
    -------
    dict of str to ndarray
        The named arrays, for :meth:`Rater.from_arrays
        <podium.rater.Rater.from_arrays>` (which checks their content).

    Raises
    ------
    CheckpointError
        When the file is missing, not a Podium checkpoint or of an unknown version.
    """
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            head = fh.read(len(_ZIP_MAGIC))
    except FileNotFoundError:
        raise CheckpointError(f"{where}: checkpoint file not found") from None
    except OSError as exc:
        raise CheckpointError(f"{where}: cannot read checkpoint: {exc.strerror or exc}") from None
    if head != _ZIP_MAGIC:  # e.g. the contest file passed as --resume by mistake
        raise CheckpointError(
            f"{where}: not a Podium checkpoint (expected the .npz file that --checkpoint or "
            "Rater.save writes)")
    try:
        with np.load(where, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        reason = "it holds pickled objects" if "pickle" in str(exc) else str(exc)
        raise CheckpointError(
            f"{where}: not a readable Podium checkpoint ({reason})") from None
    try:
        meta = json.loads(bytes(data["meta"]).decode("utf-8"))
    except (KeyError, UnicodeDecodeError, json.JSONDecodeError):
        raise CheckpointError(f"{where}: not a Podium checkpoint (no metadata)") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise CheckpointError(f"{where}: not a Podium checkpoint (format {fmt!r})")
    version = meta.get("version")
    if version != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{where}: checkpoint format version {version!r} is not supported "
            f"(this Podium reads version {CHECKPOINT_VERSION})"
        )
    return data
