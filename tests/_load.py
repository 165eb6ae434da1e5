"""Test helper: the load of issue 31 against a running server on loopback.

* **stalled export clients** -- each opens a TCP connection with a small receive
  buffer, asks for ``GET /api/export/history?format=csv`` (no token needed), reads one
  kilobyte and stops reading, keeping the connection open until the load ends;
* **an explain burst** -- threads asking ``GET /api/explain`` for contests spread over
  the whole store (so that they cycle past the explain cache);
* **probes** -- meanwhile, ``GET /api/health`` and ``GET /api/leaderboard`` one after the
  other, each timed (a request that times out counts as its timeout).

:func:`run_load` returns the probes' latencies and what the other clients were
answered; ``benchmarks/bench_service_load.py`` runs it on a big store and prints the
figures of docs/service.md.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

#: The receive buffer of a stalled client (the kernel may round it up).
STALLED_RCVBUF = 4096


@dataclass
class LoadResult:
    """What :func:`run_load` saw."""

    health_s: list[float] = field(default_factory=list)
    leaderboard_s: list[float] = field(default_factory=list)
    #: status line of each stalled export client's answer (``"HTTP/1.1 200 OK"``, ...)
    exports: Counter[str] = field(default_factory=Counter)
    #: status code of each explain (0: no answer within the timeout)
    explains: Counter[int] = field(default_factory=Counter)
    #: status codes of the probes (0: no answer within the timeout)
    probes: Counter[int] = field(default_factory=Counter)

    @staticmethod
    def p95(xs: list[float]) -> float:
        """The 95th percentile of ``xs`` (nearest rank)."""
        s = sorted(xs)
        return s[min(len(s) - 1, int(0.95 * len(s)))] if s else float("nan")

    def summary(self) -> str:
        return (f"health p95 {self.p95(self.health_s):.3f} s (max {max(self.health_s):.3f}, "
                f"n={len(self.health_s)}); leaderboard p95 {self.p95(self.leaderboard_s):.3f} s "
                f"(max {max(self.leaderboard_s):.3f}, n={len(self.leaderboard_s)}); exports "
                f"{dict(self.exports)}; explains {dict(self.explains)}; probes "
                f"{dict(self.probes)}")


def _stalled_client(base: str, path: str, out: Counter[str], opened: threading.Event,
                    stop: threading.Event, lock: threading.Lock) -> None:
    parts = urlsplit(base)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, STALLED_RCVBUF)
    try:
        sock.settimeout(30)
        sock.connect((parts.hostname or "127.0.0.1", parts.port or 80))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
        head = sock.recv(1024)
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        with lock:
            out[status] += 1
        opened.set()
        stop.wait()  # read nothing more: the server's writes back up
    except OSError as exc:
        with lock:
            out[f"error: {type(exc).__name__}"] += 1
        opened.set()
    finally:
        sock.close()


def _probe(client: httpx.Client, path: str, timeout: float, into: list[float],
           codes: Counter[int], lock: threading.Lock) -> None:
    t = time.perf_counter()
    try:
        code = client.get(path, timeout=timeout).status_code
    except httpx.HTTPError:
        code = 0
    dt = time.perf_counter() - t
    with lock:
        into.append(dt if code else max(dt, timeout))
        codes[code] += 1


def run_load(base: str, explain_queries: list[tuple[str, str]], *, stalled: int = 16,
             explainers: int = 20, probe_s: float = 8.0, timeout: float = 10.0,
             export_path: str = "/api/export/history?format=csv") -> LoadResult:
    """Stall ``stalled`` export clients, then run ``explainers`` concurrent explains of
    ``explain_queries`` (``(contest_id, handle)``, taken round-robin, each thread looping
    until the probes end) while probing ``/api/health`` and ``/api/leaderboard`` for
    ``probe_s`` seconds; every request times out after ``timeout`` seconds."""
    res = LoadResult()
    lock = threading.Lock()
    stop = threading.Event()
    threads: list[threading.Thread] = []
    opened: list[threading.Event] = []
    for _ in range(stalled):
        ev = threading.Event()
        opened.append(ev)
        th = threading.Thread(target=_stalled_client,
                              args=(base, export_path, res.exports, ev, stop, lock), daemon=True)
        th.start()
        threads.append(th)
    for ev in opened:
        ev.wait(timeout)
    time.sleep(0.5)  # let the server's writes back up

    probes_done = threading.Event()

    def explain_loop(k: int) -> None:
        with httpx.Client(base_url=base) as client:
            i = k
            while not probes_done.is_set():
                cid, handle = explain_queries[i % len(explain_queries)]
                i += explainers
                try:
                    code = client.get("/api/explain", params={"contest": cid, "handle": handle},
                                      timeout=timeout).status_code
                except httpx.HTTPError:
                    code = 0
                with lock:
                    res.explains[code] += 1
                if code == 429:
                    time.sleep(0.2)

    workers = [threading.Thread(target=explain_loop, args=(k,), daemon=True)
               for k in range(explainers)]
    for w in workers:
        w.start()
    try:
        with httpx.Client(base_url=base) as client:
            end = time.monotonic() + probe_s
            while time.monotonic() < end:
                _probe(client, "/api/health", timeout, res.health_s, res.probes, lock)
                _probe(client, "/api/leaderboard?limit=20", timeout, res.leaderboard_s,
                       res.probes, lock)
    finally:
        probes_done.set()
        for w in workers:
            w.join(timeout + 5)
        stop.set()
        for th in threads:
            th.join(5)
    return res
