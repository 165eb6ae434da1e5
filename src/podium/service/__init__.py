"""Podium's live rating service: JSON API, web pages and server-side charts.

``podium serve`` (:mod:`podium.service.cli`) runs :func:`podium.service.app.create_app`
with uvicorn.  This package's ``__init__`` imports nothing heavy, so that the CLI
can register its command without FastAPI installed (the ``service`` extra).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_BODY_BYTES"]

#: Default limit on a request body: 16 MiB (the largest Codeforces round, about
#: 30 000 players, is about 1 MiB of JSON).
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
