"""What keeps one client from starving the others: concurrency limits and spooled exports.

* :class:`Gate` -- at most ``limit`` requests of one kind at a time in this worker
  process; one more is answered at once with **429** and ``Retry-After``
  (:meth:`Gate.busy`), never queued.  The app has one gate for exports
  (``max_exports``) and one for explanations (``max_explains``): both cost far more than
  a page of the leaderboard (an export reads the whole store, an explanation may
  replay contests), and neither needs a token on a public server.
* :func:`spooled_export` -- an export streamed without holding a database connection
  while the client reads.  A producer thread reads the export in its one read
  transaction (:meth:`podium.store.export.Exporter.export`) into an anonymous temporary
  file as fast as the database gives it, then closes the transaction; the answer
  streams that file to the client in blocks of :data:`SEND_BLOCK` bytes as they are
  written, each block under a send timeout (``send_timeout_s``): a client that reads
  nothing for that long is dropped, its file deleted and its gate released.  So a
  stalled reader holds a file, never one of the pool's connections, and only until
  the timeout.

Measured on the whole Codeforces store (docs/service.md, "Limits under load"): without
the spool each stalled client held a pooled connection for as long as it stalled (16 of
them exhausted the pool and every route answered 503); with it the connection is held
for the time the database takes to produce the file.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import anyio.to_thread
from fastapi import HTTPException
from fastapi.responses import StreamingResponse

from podium.store.explain import release_memory

__all__ = ["SEND_BLOCK", "Gate", "StreamAborted", "spooled_export"]

log = logging.getLogger("podium.service")

#: Bytes sent per block of a spooled export (a client must read this much per
#: ``send_timeout_s``: 256 KiB in 30 s is under 9 KB/s).
SEND_BLOCK = 256 * 1024
# How long the streaming side sleeps while the producer has nothing new (seconds).
_POLL_S = (0.002, 0.05)


class Gate:
    """At most ``limit`` holders at a time; :meth:`enter` never waits.

    Parameters
    ----------
    what:
        What the gate limits, for the 429 message (``"exports"``).
    limit:
        Holders at a time (>= 1).
    retry_after_s:
        The ``Retry-After`` of a 429, in whole seconds.
    """

    def __init__(self, what: str, limit: int, retry_after_s: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the limit of {what} must be an integer >= 1, got {limit!r}")
        self.what = what
        self.limit = limit
        self.retry_after_s = max(1, int(retry_after_s))
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """Holders now."""
        with self._lock:
            return self._held

    def enter(self) -> bool:
        """Take a place if one is free (``False`` when the gate is full)."""
        with self._lock:
            if self._held >= self.limit:
                return False
            self._held += 1
            return True

    def leave(self) -> None:
        """Give a place back."""
        with self._lock:
            self._held = max(0, self._held - 1)

    def busy(self) -> HTTPException:
        """The 429 answer of a full gate."""
        return HTTPException(
            status_code=429, headers={"Retry-After": str(self.retry_after_s)},
            detail=f"too many {self.what} at once ({self.limit} run at a time in this server "
                   f"process); retry in {self.retry_after_s} s")


class _Spool:
    """An export being written to an anonymous temporary file by a producer thread."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._file = tempfile.TemporaryFile(prefix="podium-export-")
        self.fd = self._file.fileno()
        self.size = 0
        self.done = False
        self.error: BaseException | None = None
        self._stop = False
        self._users = 2  # the producer and the reader: the last one closes the file
        self._lock = threading.Lock()

    def produce(self) -> None:
        """Write every piece (runs in its own thread); the export's read transaction
        ends when this returns."""
        try:
            for piece in self._pieces:
                if self._stop:
                    break
                written = 0
                while written < len(piece):
                    written += os.pwrite(self.fd, piece[written:], self.size + written)
                with self._lock:
                    self.size += len(piece)
        except BaseException as exc:  # noqa: BLE001 - reported by the reader
            self.error = exc
        finally:
            close = getattr(self._pieces, "close", None)
            if close is not None:
                close()
            self.done = True
            self.release()

    def stop(self) -> None:
        """Ask the producer to stop at its next piece."""
        self._stop = True

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            last = self._users == 0
        if last:
            self._file.close()


class StreamAborted(Exception):
    """Raised by a body iterator of :class:`_TimedStream` to drop the connection (the
    answer is already under way; the reason was logged)."""


class _TimedStream(StreamingResponse):
    """A streamed answer whose every block must be taken by the client within
    ``send_timeout_s`` seconds; a client that takes longer is dropped (one log line)."""

    def __init__(self, content: AsyncIterator[bytes], send_timeout_s: float,
                 on_close: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.send_timeout_s = send_timeout_s
        self.on_close = on_close

    async def stream_response(self, send: Any) -> None:
        body = self.body_iterator
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            try:
                async for chunk in body:
                    try:
                        with anyio.fail_after(self.send_timeout_s):
                            await send({"type": "http.response.body", "body": chunk,
                                        "more_body": True})
                    except TimeoutError:
                        log.warning("export: the client took no block of %d bytes in %g s; "
                                    "connection dropped", len(chunk), self.send_timeout_s)
                        return  # left incomplete: the server closes the connection
            except StreamAborted:
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.on_close()  # even when the body was never started (a client gone early)
            aclose = getattr(body, "aclose", None)
            if aclose is not None:
                await aclose()


async def spooled_export(pieces: Iterator[bytes], gate: Gate, *, send_timeout_s: float,
                         media_type: str, headers: dict[str, str]) -> StreamingResponse:
    """The answer of an export whose place in ``gate`` is already taken (see the module
    notes): ``pieces`` (the store's export iterator) are spooled by a producer thread and
    streamed from the spool.  The gate is left when both are done.

    Raises
    ------
    Exception
        What the export raised before its first byte (the database unavailable, ...),
        so that the app answers it as usual (503); a failure after the first byte drops
        the connection (the answer is already under way) and logs one line.
    """
    spool = _Spool(pieces)
    producer = threading.Thread(target=spool.produce, name="podium-export", daemon=True)

    def leave_when_produced() -> None:
        producer.join()
        gate.leave()
        release_memory()  # the chunks' rows were many small objects: give them back

    closed = threading.Event()

    def close() -> None:
        """Once: stop the producer, let the file go, leave the gate when it stopped."""
        if closed.is_set():
            return
        closed.set()
        spool.stop()
        spool.release()
        threading.Thread(target=leave_when_produced, daemon=True).start()

    producer.start()
    try:
        delay = _POLL_S[0]
        while spool.size == 0 and not spool.done:  # the first byte, or the failure
            await anyio.sleep(delay)
            delay = min(delay * 2, _POLL_S[1])
        if spool.size == 0 and spool.error is not None:
            raise spool.error
    except BaseException:
        closed.set()
        spool.stop()
        spool.release()
        await anyio.to_thread.run_sync(leave_when_produced)
        raise

    async def blocks() -> AsyncIterator[bytes]:
        pos = 0
        delay = _POLL_S[0]
        try:
            while True:
                size, done = spool.size, spool.done
                if pos < size:
                    n = min(SEND_BLOCK, size - pos)
                    data = await anyio.to_thread.run_sync(os.pread, spool.fd, n, pos)
                    pos += len(data)
                    delay = _POLL_S[0]
                    yield data
                elif done:
                    if spool.error is not None:
                        log.warning("export failed after %d bytes (%s: %s); connection "
                                    "dropped", pos, type(spool.error).__name__, spool.error)
                        raise StreamAborted
                    return
                else:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, _POLL_S[1])
        finally:
            close()

    return _TimedStream(blocks(), send_timeout_s, close, media_type=media_type,
                        headers=headers)
