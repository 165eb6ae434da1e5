"""Podium's live rating service: JSON API, web pages and server-side charts.

``podium serve`` (:mod:`podium.service.cli`) runs :func:`podium.service.app.create_app`
with uvicorn.  This package's ``__init__`` imports nothing heavy, so that the CLI
can register its command without FastAPI installed (the ``service`` extra).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_EXPLAINS", "DEFAULT_MAX_EXPORTS",
           "DEFAULT_MAX_PREDICT_BYTES", "DEFAULT_MAX_PREDICT_PLAYERS", "DEFAULT_SEND_TIMEOUT_S",
           "MAX_PREDICT_PLAYERS_LIMIT"]

#: Default limit on the body of a write (``POST /api/contests``, authenticated first):
#: 16 MiB (the largest Codeforces round, about 30 000 players, is about 1 MiB of JSON).
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
#: Default limit on the body of ``POST /api/predict`` (public) and of any other request:
#: 256 KiB (200 handles of 128 characters, each character written as a ``\\uXXXX``
#: escape, fit).
DEFAULT_MAX_PREDICT_BYTES = 256 * 1024
#: Default cap on the players (handles and team members) of one prediction.
DEFAULT_MAX_PREDICT_PLAYERS = 200
#: The highest cap a server may set (the answer holds an n x n matrix of probabilities).
MAX_PREDICT_PLAYERS_LIMIT = 1000
#: Exports one worker process streams at a time (``--max-exports``; one more: 429).
DEFAULT_MAX_EXPORTS = 2
#: Explanations one worker process computes at a time (``--max-explains``; one more: 429).
DEFAULT_MAX_EXPLAINS = 2
#: Seconds a client may take to accept one block of an export (``--send-timeout``).
DEFAULT_SEND_TIMEOUT_S = 30.0
