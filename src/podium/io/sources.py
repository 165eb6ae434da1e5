"""Contest histories stored as many JSON files: a directory or a tar archive.

* a directory of ``0.json, 1.json, ...`` (the file number is the contest's
  chronological index; gaps in the numbering are allowed and reported by
  :func:`podium.io.load_contests`);
* a tar archive (``.tar.gz``, ``.tgz``, ``.tar``, ``.tar.bz2``, ``.tar.xz``) that
  holds such a directory under any prefix (``cache/codeforces/0.json``).  The
  archive is read as a stream: nothing is extracted to disk and only one member's
  JSON text is in memory at a time.

Both yield ``(file index, contest)`` in index order.

What is read and what is skipped
--------------------------------
Only regular files named ``<n>.json`` are contest files.  Skipped without a word:
directories, names starting with a dot (``.DS_Store``, macOS's ``._0.json``) and
other names not ending in ``.json`` (``README.md``, ``LICENSE``).  Skipped with a
warning naming the member: archive members that are not regular files (symbolic
and hard links, devices, FIFOs), and in a directory a ``<n>.json`` entry that is
not a regular file (a FIFO, a sub-directory; a symbolic link to a regular file
*is* read, as it is the user's own file system).
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import tarfile
import threading
import zlib
from collections.abc import Callable, Generator, Iterator
from pathlib import Path, PurePosixPath
from typing import IO

from podium.core.contest import Contest
from podium.errors import DataFormatError
from podium.io._handles import HandleTable
from podium.io._json_batch import BATCH_BYTES, BATCH_FILE_BYTES, batch_contests
from podium.io._paths import INDEX_RE, read_bytes, read_small
from podium.io._times import TimeCheck
from podium.io.json_contests import EmptyContest, decode_contest

__all__ = ["TAR_SUFFIXES", "Warn", "iter_dir", "iter_tar"]

#: Where a loader reports what it skipped (one line each), or ``None``.
Warn = Callable[[str], None] | None

TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_TAR_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error)


def _json_index(name: str, where: str) -> int | None:
    """The index of a ``<n>.json`` name; ``None`` for names to skip; error otherwise."""
    if name.startswith(".") or not name.lower().endswith(".json"):
        return None
    stem = name[: -len(".json")]
    if not INDEX_RE.fullmatch(stem):
        raise DataFormatError(
            f"{where}: contest files must be named by their index (0.json, 1.json, ...); "
            f"cannot read an index from {name!r}"
        )
    return int(stem)


def _dir_entries(directory: Path, warn: Warn = None) -> list[tuple[int, str]]:
    """The ``(index, path)`` of every contest file of a directory, by index."""
    found: dict[int, str] = {}
    try:
        entries = list(os.scandir(directory))
    except OSError as exc:
        raise DataFormatError(f"{directory}: cannot list directory: {exc.strerror or exc}") from exc
    # what str(Path(directory, name)) gives, without a Path per file
    folder = "" if str(directory) == "." else os.path.join(str(directory), "")
    for entry in entries:
        name = entry.name
        stem = name[:-5]
        if stem.isascii() and stem.isdigit() and name.endswith(".json"):
            idx: int | None = int(stem)  # the common name, without the general rule
        else:
            idx = _json_index(name, folder + name)
        if idx is None:
            continue
        if not entry.is_file():
            if warn is not None:
                what = "a directory" if entry.is_dir() else "not a regular file"
                warn(f"skipped {folder + name}: {what}")
            continue
        if idx in found:
            raise DataFormatError(
                f"{directory}: two files have index {idx}: "
                f"{os.path.basename(found[idx])!r} and {name!r}")
        found[idx] = folder + name
    if not found:
        raise DataFormatError(f"{directory}: no contest files (0.json, 1.json, ...) in directory")
    return sorted(found.items())


def iter_dir(
    directory: Path, limit: int | None, intern: HandleTable, times: TimeCheck | None,
    warn: Warn = None,
) -> Iterator[tuple[int, Contest | EmptyContest]]:
    """Contests of a directory of ``<n>.json`` files in index order (the first ``limit``
    files by index), each as :func:`podium.io.json_contests.decode_contest` reads it;
    ``warn`` is told of the ``<n>.json`` entries skipped (not regular files).

    Small files are read in batches (:func:`podium.io._json_batch.batch_contests`: a
    batch checked and built at once); a batch it does not take, and a large file, are
    read file by file."""
    entries = _dir_entries(directory, warn)
    if limit is not None:
        entries = entries[:limit]
    batch: list[tuple[int, str, bytes]] = []
    size = 0
    for idx, p in entries:
        try:
            data = read_small(p, BATCH_FILE_BYTES)
        except DataFormatError:
            yield from _dir_batch(batch, intern, times)  # an earlier file's error first
            raise
        if data is not None:
            batch.append((idx, p, data))
            size += len(data)
            if size < BATCH_BYTES:
                continue
        yield from _dir_batch(batch, intern, times)
        batch, size = [], 0
        if data is None:  # a large file: alone
            yield idx, decode_contest(read_bytes(p), p, intern, allow_empty=True, times=times)
    yield from _dir_batch(batch, intern, times)


def _dir_batch(batch: list[tuple[int, str, bytes]], intern: HandleTable, times: TimeCheck | None
               ) -> Iterator[tuple[int, Contest | EmptyContest]]:
    """The contests of a batch of ``(index, path, JSON text)`` of a directory: at once
    when :func:`~podium.io._json_batch.batch_contests` takes them, else file by file."""
    if not batch:
        return
    indices, paths, datas = (list(x) for x in zip(*batch, strict=True))
    found = batch_contests(datas, paths, intern, times) if len(batch) > 1 else None
    if found is not None:
        yield from zip(indices, found, strict=True)
        return
    for idx, p, data in batch:
        yield idx, decode_contest(data, p, intern, allow_empty=True, times=times)


def _not_regular(member: tarfile.TarInfo) -> str:
    """What an archive member that is not a regular file is, in words."""
    if member.issym():
        return f"a symbolic link (to {member.linkname!r})"
    if member.islnk():
        return f"a hard link (to {member.linkname!r})"
    if member.ischr() or member.isblk():
        return "a device"
    if member.isfifo():
        return "a FIFO"
    return "not a regular file"


# ====================================================================== tar archives
#: Compressed bytes read per step by :class:`_GzipPrefetch`.
_GZ_CHUNK = 1 << 20
#: Decompressed chunks the background thread may hold ahead of the reader.
_GZ_AHEAD = 16
_GZIP_MAGIC = b"\x1f\x8b"


class _GzipPrefetch(io.RawIOBase):
    """A gzip file's decompressed bytes, inflated ahead by a background thread.

    zlib releases the GIL while it inflates, so the archive's decompression (about a
    fifth of loading the Codeforces history) runs beside the parsing of the members
    already read.  At most :data:`_GZ_AHEAD` chunks are held ahead.  A decoding error
    or a truncated stream is raised by :meth:`readinto`, as :mod:`gzip` raises them
    (``zlib.error``, ``EOFError``); concatenated gzip members are read in turn.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(_GZ_AHEAD)
        self._buf = memoryview(b"")
        self._done = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._inflate, name="podium-gunzip",
                                        daemon=True)
        self._thread.start()

    def _put(self, item: bytes | BaseException | None) -> bool:
        while not self._stop.is_set():
            try:
                self._chunks.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _inflate(self) -> None:
        try:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            fresh = True  # no byte of the current member inflated yet
            while not self._stop.is_set():
                raw = d.unused_data or self._fh.read(_GZ_CHUNK)
                if not raw:
                    if not fresh and not d.eof:
                        raise EOFError("Compressed file ended before the end-of-stream "
                                       "marker was reached")
                    break
                if d.eof:  # another gzip member follows
                    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                fresh = False
                out = d.decompress(raw)
                if out and not self._put(out):
                    return
            self._put(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            self._put(exc)

    def readable(self) -> bool:
        return True

    def readinto(self, b: memoryview) -> int:  # type: ignore[override]
        while not self._buf and not self._done:
            item = self._chunks.get()
            if item is None:
                self._done = True
            elif isinstance(item, BaseException):
                self._done = True
                raise item
            else:
                self._buf = memoryview(item)
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._stop.set()
            self._thread.join()
            self._fh.close()
        super().close()


def _open_tar(path: Path) -> tuple[tarfile.TarFile, contextlib.AbstractContextManager[object]]:
    """``tarfile.open(path, "r|*")`` and what to close after it; a gzip archive is
    inflated by a background thread (:class:`_GzipPrefetch`)."""
    with open(path, "rb") as fh:
        gz = fh.read(2) == _GZIP_MAGIC
    if not gz:
        return tarfile.open(path, mode="r|*"), contextlib.nullcontext()
    stream: IO[bytes] = io.BufferedReader(_GzipPrefetch(path), buffer_size=_GZ_CHUNK)
    try:
        return tarfile.open(fileobj=stream, mode="r|"), stream
    except BaseException:
        stream.close()
        raise


def _scan_tar(
    path: Path, want: Callable[[int], bool], warn: Warn = None
) -> Generator[tuple[int, str, bytes], None, None]:
    """Stream a tar archive; yield ``(index, member name, bytes)`` for wanted contest files.

    Also checks that every contest file sits in one directory and that no index
    appears twice.  Members that are not ``.json`` files are skipped; members that are
    not regular files (links, devices) are skipped and reported to ``warn``.
    """
    try:
        tf, stream = _open_tar(path)
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except _TAR_ERRORS as exc:
        raise DataFormatError(f"{path}: not a readable tar archive ({exc})") from exc
    seen: dict[int, str] = {}
    folder: PurePosixPath | None = None
    folder_member = ""
    with stream, tf:
        members = iter(tf)
        while True:
            try:
                member = next(members, None)
            except _TAR_ERRORS as exc:
                raise DataFormatError(f"{path}: corrupt or truncated archive ({exc})") from exc
            if member is None:
                break
            if not member.isfile():
                if warn is not None and not member.isdir():
                    warn(f"skipped {path}, member {member.name}: {_not_regular(member)}; "
                         "only regular files are read from an archive")
                continue
            mpath = PurePosixPath(member.name)
            where = f"{path}, member {member.name}"
            idx = _json_index(mpath.name, where)
            if idx is None:
                continue
            if folder is None:
                folder, folder_member = mpath.parent, member.name
            elif mpath.parent != folder:
                raise DataFormatError(
                    f"{path}: contest files in more than one directory ({folder_member!r} and "
                    f"{member.name!r}); expected one directory of 0.json, 1.json, ..."
                )
            if idx in seen:
                raise DataFormatError(
                    f"{path}: index {idx} appears twice (members {seen[idx]!r} and "
                    f"{member.name!r})"
                )
            seen[idx] = member.name
            if not want(idx):
                continue
            try:
                fobj = tf.extractfile(member)
                data = fobj.read() if fobj is not None else b""
            except _TAR_ERRORS as exc:
                raise DataFormatError(f"{where}: corrupt or truncated archive ({exc})") from exc
            yield idx, member.name, data
    if not seen:
        raise DataFormatError(f"{path}: no contest files (0.json, 1.json, ...) in archive")


def iter_tar(
    path: Path, limit: int | None, intern: HandleTable, times: TimeCheck | None,
    warn: Warn = None,
) -> Iterator[tuple[int, Contest | EmptyContest]]:
    """Contests of an archive in index order, parsing one member at a time
    (:func:`podium.io.json_contests.decode_contest`); ``warn`` is told of the members
    skipped (not regular files).

    With ``limit=N`` only members with index < N are parsed; when the numbering
    has gaps so that fewer than N such members exist, a second streaming pass
    parses the next smallest indices.
    """

    def parse(member: str, data: bytes) -> Contest | EmptyContest:
        where = f"{path}, member {member}"
        return decode_contest(data, where, intern, allow_empty=True, times=times)

    pending: dict[int, Contest | EmptyContest] = {}
    all_indices: list[int] = []
    next_idx = 0
    emitted = 0

    def want_first(idx: int) -> bool:
        all_indices.append(idx)
        return limit is None or idx < limit

    with contextlib.closing(_scan_tar(path, want_first, warn)) as scan:
        for idx, member, data in scan:
            pending[idx] = parse(member, data)
            del data
            while next_idx in pending:  # yield the contiguous prefix as soon as it is complete
                yield next_idx, pending.pop(next_idx)
                next_idx += 1
                emitted += 1
            if limit is not None and next_idx >= limit:
                return  # indices 0..limit-1 all read: the rest of the archive is not needed
    for idx in sorted(pending):
        yield idx, pending.pop(idx)
        emitted += 1
    if limit is None or emitted >= limit:
        return
    extra = set(sorted(i for i in all_indices if i >= limit)[: limit - emitted])
    if not extra:
        return
    for idx, member, data in _scan_tar(path, extra.__contains__):
        pending[idx] = parse(member, data)
    for idx in sorted(pending):
        yield idx, pending.pop(idx)
