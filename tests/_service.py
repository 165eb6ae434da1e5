"""Test helper: run ``podium serve`` in a subprocess on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Server:
    """A running server: its base URL, bearer token and log file."""

    url: str
    token: str
    log: Path
    pid: int

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""


@contextmanager
def running_server(
    db_url: str,
    tmp: Path,
    *,
    token: str = "test-token",
    extra: Sequence[str] = (),
    startup_timeout: float = 90.0,
    access_log: bool = False,
    env_extra: dict[str, str] | None = None,
) -> Iterator[Server]:
    """Start ``podium serve`` on ``db_url``; stop it (SIGTERM, then SIGKILL) afterwards.

    ``access_log``: log every request (at level info) instead of warnings only;
    ``env_extra``: more environment of the server (e.g. ``PYTHONPATH`` of another
    checkout's sources, for a benchmark's "before").

    Raises
    ------
    RuntimeError
        If the server exits or does not answer ``/api/health`` within
        ``startup_timeout`` seconds (the message holds the end of its log).
    """
    port = free_port()
    log = tmp / f"server-{port}.log"
    cmd = [
        sys.executable, "-m", "podium.cli", "serve", "--db", db_url, "--host", "127.0.0.1",
        "--port", str(port), "--token-file", str(_token_file(tmp, token)),
        *(("--log-level", "info") if access_log else ("--log-level", "warning",
                                                         "--no-access-log")), *extra,
    ]
    env = dict(os.environ)
    env.pop("PODIUM_TOKEN", None)
    env.setdefault("NUMBA_NUM_THREADS", "1")
    env.update(env_extra or {})
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    server = Server(f"http://127.0.0.1:{port}", token, log, proc.pid)
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"podium serve exited with status {proc.returncode}:\n{server.log_text()}"
                )
            try:
                if httpx.get(server.url + "/api/health", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"podium serve did not answer within {startup_timeout} s:\n"
                    f"{server.log_text()}"
                )
            time.sleep(0.2)
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def _token_file(tmp: Path, token: str) -> Path:
    path = tmp / "token.txt"
    path.write_text(token + "\n", encoding="utf-8")
    return path
