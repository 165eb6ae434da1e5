"""Test helper: one request straight to an ASGI app, with a streamed body whose pulled
bytes are counted (to check that an app answers before reading a body)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

__all__ = ["StreamedBody", "call"]


class StreamedBody:
    """An ASGI ``receive`` that streams ``total`` bytes in 64 KiB chunks and counts
    what the app pulled."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.pulled = 0

    async def __call__(self) -> dict[str, Any]:
        if self.pulled >= self.total:
            if self.total == 0 and not self.pulled:  # an empty body: one empty message
                self.pulled = -1
                return {"type": "http.request", "body": b"", "more_body": False}
            await asyncio.sleep(3600)  # sent it all: the client waits for an answer
        n = min(65_536, self.total - self.pulled)
        self.pulled += n
        return {"type": "http.request", "body": b"x" * n,
                "more_body": self.pulled < self.total}


def call(app: Any, method: str, path: str, headers: dict[str, str],
          body: StreamedBody, query: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """One request straight to the ASGI app; ``path`` is decoded (as a server gives it)."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": method, "scheme": "http", "path": path,
        "raw_path": quote(path).encode("ascii"), "root_path": "", "query_string": query,
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1"))
                    for k, v in headers.items()],
        "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
    }
    out: dict[str, Any] = {"body": b""}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    asyncio.run(asyncio.wait_for(app(scope, body, send), 30))
    return out["status"], out["headers"], out["body"]
