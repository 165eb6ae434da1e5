"""Several processes of one prebuild compiling into one directory, each kernel once.

:mod:`podium.prebuild` may compile a job in several processes side by side
(``--jobs``), all of them storing Numba cache entries in the same prebuilt directory
(:class:`podium.core.kernel_cache.KernelCache`).  Two things make that safe and
useful, both with POSIX file locks (:func:`can_share`; elsewhere a prebuild runs in
one process):

* **The index lock** (:func:`index_lock`, file :data:`INDEX_LOCK`).  Numba adds an
  entry to a kernel's index by reading the index, choosing the first free data file
  name and writing both back.  Two processes storing two signatures of the same kernel
  at once would both read the old index: the last write would drop the other's entry,
  and both would write their machine code under the same data file name, so that an
  entry could point at the other signature's code.  Under the lock they take turns.
* **Claims** (:func:`claim`, :func:`release`; folder :data:`CLAIMS`).  The jobs of
  one system share most of their kernels, so two processes would compile most of them
  twice.  A process about to compile a signature claims it first; one that finds it
  claimed waits until the claim is released (the owner stored the kernel, or ended)
  and then loads the kernel instead of compiling it.  A claim is a lock on a file, so
  it ends with the process that holds it.  A process waits on a kernel only while
  compiling the kernels that call it, which the owner of the claim does not need
  unless kernels call each other in a cycle; a wait is bounded
  (:data:`WAIT_SECONDS`) all the same: then the kernel is compiled where it is needed.

Nothing here changes what is compiled, only which process compiles it: each process
still calls every kernel its jobs call, and loads what it did not compile.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import time
from collections.abc import Iterator

__all__ = ["INDEX_LOCK", "CLAIMS", "WAIT_SECONDS", "waits", "can_share", "index_lock",
           "claim", "release", "clean"]

#: The lock file of a prebuilt directory, held while a process stores a kernel.
INDEX_LOCK = ".index.lock"
#: The folder of a prebuilt directory holding the claims' lock files.
CLAIMS = ".claims"
#: The longest a process waits for a kernel that another process claimed.
WAIT_SECONDS = 120.0
#: How often a waiting process looks whether a claim was released.
_POLL_SECONDS = 0.02

#: Claims held by this process: claim file -> its open descriptor (holding the lock).
_held: dict[str, int] = {}
#: How long this process waited for other processes' claims, in seconds, and how many.
waits = [0.0, 0]


def can_share() -> bool:
    """Whether several processes can compile into one prebuilt directory here (POSIX
    file locks).

    Returns
    -------
    bool
    """
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - not POSIX
        return False
    return True


@contextlib.contextmanager
def index_lock(directory: str) -> Iterator[None]:
    """Hold ``directory``'s :data:`INDEX_LOCK` (nothing without POSIX locks: there the
    prebuild runs in one process).

    Parameters
    ----------
    directory:
        The prebuilt directory (made if missing).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    os.makedirs(directory, exist_ok=True)
    fd = os.open(os.path.join(directory, INDEX_LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _path(directory: str, what: str) -> str:
    return os.path.join(directory, CLAIMS, hashlib.sha256(what.encode()).hexdigest()[:32])


def claim(directory: str, what: str) -> bool:
    """Claim the compilation of ``what`` (a kernel's index file and signature), or wait
    while another process holds the claim.

    Parameters
    ----------
    directory:
        The prebuilt directory.
    what:
        Names the compilation, the same in every process.

    Returns
    -------
    bool
        ``True``: compile it -- this process holds the claim (then store it and
        :func:`release`), or already held it, or cannot lock files, or waited
        :data:`WAIT_SECONDS` in vain; ``False``: another process held it and released
        it -- look in the cache again (and claim again if the kernel is not there).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return True
    path = _path(directory, what)
    if path in _held:
        return True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    start = time.monotonic()
    waited = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            waited = True
            if time.monotonic() - start <= WAIT_SECONDS:
                time.sleep(_POLL_SECONDS)
                continue
        if not waited:
            _held[path] = fd
            return True
        os.close(fd)  # the other process is done with it, or took too long
        waits[0] += time.monotonic() - start
        waits[1] += 1
        return time.monotonic() - start > WAIT_SECONDS


def release(directory: str, what: str) -> None:
    """Release this process's claim on ``what``, if it holds one.

    Parameters
    ----------
    directory:
        The prebuilt directory.
    what:
        As given to :func:`claim`.
    """
    fd = _held.pop(_path(directory, what), None)
    if fd is not None:
        os.close(fd)


def clean(directory: str) -> None:
    """Remove the claims and the index lock from ``directory`` once every process of
    the prebuild has ended (they are not part of the prebuilt kernels).

    Parameters
    ----------
    directory:
        The prebuilt directory.
    """
    shutil.rmtree(os.path.join(directory, CLAIMS), ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(directory, INDEX_LOCK))
