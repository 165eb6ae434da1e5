"""``podium serve``: run the rating service (HTTP API and web pages) with uvicorn.

``podium serve --db URL --host H --port P --token T`` serves the store at ``URL``;
``--workers N`` starts N worker processes (each with its own connection pool of
``--pool-size`` connections plus up to ``--max-overflow`` more; the store serialises
their writes in the database).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from podium.cli_common import float_in, int_in
from podium.errors import PodiumError, UsageError
from podium.service import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_EXPLAINS,
    DEFAULT_MAX_EXPORTS,
    DEFAULT_MAX_PREDICT_BYTES,
    DEFAULT_MAX_PREDICT_PLAYERS,
    DEFAULT_SEND_TIMEOUT_S,
    MAX_PREDICT_PLAYERS_LIMIT,
)

__all__ = ["add_parsers"]


def _read_token(args: argparse.Namespace) -> str | None:
    if args.token and args.token_file:
        raise PodiumError("give --token or --token-file, not both")
    if args.token_file:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise PodiumError(
                f"{args.token_file}: cannot read token file ({exc.strerror or exc})"
            ) from None
        if not token:
            raise PodiumError(f"{args.token_file}: token file is empty")
        return token
    given: str | None = args.token if args.token is not None else os.environ.get("PODIUM_TOKEN")
    return given or None


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from podium.service.app import create_app
        from podium.store import DEFAULT_DB, display_url
    except ImportError as exc:
        raise PodiumError(
            f"`podium serve` needs the service extra ({exc.name or exc} is missing): "
            "pip install 'podium[service]'"
        ) from None
    if args.db is None:
        args.db = DEFAULT_DB

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be in 0..65535, got {args.port}")
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.max_body_bytes < 1:
        raise UsageError(f"--max-body-bytes must be >= 1, got {args.max_body_bytes}")
    if args.max_predict_bytes < 1:
        raise UsageError(f"--max-predict-bytes must be >= 1, got {args.max_predict_bytes}")
    if not 1 <= args.max_predict_players <= MAX_PREDICT_PLAYERS_LIMIT:
        raise UsageError(f"--max-predict-players must be in 1..{MAX_PREDICT_PLAYERS_LIMIT}, "
                          f"got {args.max_predict_players}")
    if args.pool_size is not None and args.pool_size < 1:
        raise UsageError(f"--pool-size must be >= 1, got {args.pool_size}")
    if args.max_overflow is not None and args.max_overflow < 0:
        raise UsageError(f"--max-overflow must be >= 0, got {args.max_overflow}")
    token = _read_token(args)
    from podium.service.app import check_cors_origins

    origins = check_cors_origins(args.cors_origin or ())
    params: dict[str, Any] | None = None
    system = args.system
    if args.params:
        from podium.cli_common import load_params

        file_system, params = load_params(args.params, [])
        if system is None:
            system = file_system
    # Open the store once here: a bad URL or a missing store is reported before
    # any worker starts.
    app = create_app(args.db, token, args.max_body_bytes, system=system, params=params,
                     pool_size=args.pool_size, max_overflow=args.max_overflow,
                     synchronous=args.synchronous,
                     max_predict_bytes=args.max_predict_bytes,
                     max_predict_players=args.max_predict_players,
                     allow_future=args.allow_future,
                     case_insensitive_handles=True if args.case_insensitive_handles else None,
                     private=args.private, cors_origins=origins,
                     max_exports=args.max_exports, max_explains=args.max_explains,
                     send_timeout_s=args.send_timeout, keep_snapshots=args.keep_snapshots,
                     explain_cache_s=args.explain_cache_s)
    store = app.state.store
    st = store.stats()
    named = store.count_tokens()
    writers = store.count_tokens(roles=("write", "admin"))
    access = (f"writes {'enabled' if token or writers else 'disabled (no --token, no token)'}"
              f"; {named} named token(s) in the store"
              + ("; private: every read needs a token" if args.private else "")
              + (f"; CORS for {', '.join(origins)}" if origins else ""))
    print(
        f"podium: serving {display_url(args.db)} ({st['system']}, {st['players']:,} players, "
        f"{st['contests']:,} contests) on http://{args.host}:{args.port}/ with "
        f"{args.workers} worker(s); {access}",
        file=sys.stderr, flush=True,
    )
    common: dict[str, Any] = dict(
        host=args.host, port=args.port, log_level=args.log_level,
        access_log=not args.no_access_log, timeout_graceful_shutdown=5,
        log_config=_log_config(),
    )
    if args.workers == 1:
        uvicorn.run(app, **common)
        store.close()
        return 0
    store.close()
    os.environ["PODIUM_DB"] = args.db
    os.environ["PODIUM_MAX_BODY_BYTES"] = str(args.max_body_bytes)
    os.environ["PODIUM_MAX_PREDICT_BYTES"] = str(args.max_predict_bytes)
    os.environ["PODIUM_MAX_PREDICT_PLAYERS"] = str(args.max_predict_players)
    os.environ["PODIUM_ALLOW_FUTURE"] = "1" if args.allow_future else "0"
    os.environ["PODIUM_PRIVATE"] = "1" if args.private else "0"
    os.environ["PODIUM_CORS_ORIGINS"] = ",".join(origins)
    os.environ["PODIUM_SYNCHRONOUS"] = args.synchronous
    if token:
        os.environ["PODIUM_TOKEN"] = token
    else:
        os.environ.pop("PODIUM_TOKEN", None)
    os.environ["PODIUM_MAX_EXPORTS"] = str(args.max_exports)
    os.environ["PODIUM_MAX_EXPLAINS"] = str(args.max_explains)
    os.environ["PODIUM_SEND_TIMEOUT"] = repr(float(args.send_timeout))
    for name, value in (("PODIUM_KEEP_SNAPSHOTS", args.keep_snapshots),
                        ("PODIUM_EXPLAIN_CACHE_S", args.explain_cache_s)):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)
    for name, value in (("PODIUM_POOL_SIZE", args.pool_size),
                        ("PODIUM_MAX_OVERFLOW", args.max_overflow)):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = str(value)
    uvicorn.run("podium.service.app:create_app_from_env", factory=True,
                workers=args.workers, **common)
    return 0


def _log_config() -> dict[str, Any]:
    """uvicorn's logging configuration with :class:`~podium.service.guard.RedactSecrets`
    on its handlers: a ``?token=...`` (or ``api_key``, ``password``, ...) in a request
    line is written as ``[REDACTED]`` (each worker process applies it)."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_secrets"] = {
        "()": "podium.service.guard.RedactSecrets"}
    for handler in config.get("handlers", {}).values():
        handler.setdefault("filters", []).append("redact_secrets")
    return config


def add_parsers(subparsers: Any) -> None:
    """Register ``podium serve``."""
    s = subparsers.add_parser(
        "serve", help="run the rating service: HTTP API under /api/ and web pages",
        description="Serve the store at --db: the JSON API under /api/ (OpenAPI docs at /docs), "
        "the leaderboard, player and contest pages.  POST /api/contests needs "
        "'Authorization: Bearer TOKEN' with a token of role write or admin (podium token "
        "create) or the --token given here; corrections and the audit log need role admin.",
    )
    s.add_argument("--db", default=None, metavar="URL",
                   help="store URL: sqlite:///FILE, a path, or postgresql://USER@HOST/DB "
                   "(default sqlite:///podium.db, the store's default)")
    s.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1; 0.0.0.0 for all)")
    s.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    s.add_argument("--token", default=None,
                   help="the server's own bearer token, with role admin (default: "
                   "$PODIUM_TOKEN); named tokens with roles come from the store (podium "
                   "token create); with neither the server is read-only")
    s.add_argument("--token-file", default=None, metavar="FILE",
                   help="read the bearer token from FILE (keeps it out of the process list)")
    s.add_argument("--private", action="store_true",
                   help="every route and page (but /api/health and /static/) needs a token "
                   "of role read or more")
    s.add_argument("--cors-origin", action="append", default=None, metavar="URL",
                   help="let pages of this origin (https://app.example.org, or *) call the "
                   "API from a browser (CORS); repeatable")
    s.add_argument("--workers", type=int, default=1,
                   help="worker processes (default 1); see docs/service.md for PostgreSQL")
    s.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
                   help=f"largest request body accepted, else 413 (default "
                   f"{DEFAULT_MAX_BODY_BYTES})")
    s.add_argument("--max-predict-bytes", type=int, default=DEFAULT_MAX_PREDICT_BYTES,
                   metavar="N", help="largest body of POST /api/predict (public) and of any "
                   f"request but a write, else 413 (default {DEFAULT_MAX_PREDICT_BYTES})")
    s.add_argument("--max-predict-players", type=int, default=DEFAULT_MAX_PREDICT_PLAYERS,
                   metavar="N", help="most players (handles and team members) in one "
                   f"prediction, at most {MAX_PREDICT_PLAYERS_LIMIT} (default "
                   f"{DEFAULT_MAX_PREDICT_PLAYERS})")
    s.add_argument("--max-exports", type=int_in(1, 1000), default=DEFAULT_MAX_EXPORTS,
                   metavar="N",
                   help="exports each worker streams at a time, else 429 with Retry-After "
                   f"(default {DEFAULT_MAX_EXPORTS})")
    s.add_argument("--max-explains", type=int_in(1, 1000), default=DEFAULT_MAX_EXPLAINS,
                   metavar="N",
                   help="explanations each worker computes at a time, else 429 with "
                   f"Retry-After (default {DEFAULT_MAX_EXPLAINS})")
    s.add_argument("--keep-snapshots", type=int_in(1), default=None, metavar="N",
                   help="snapshots the store keeps when this server writes (default 2); "
                   "keep them all (a large N) to bound every explanation (docs/explain.md)")
    s.add_argument("--explain-cache-s", type=float_in(0.0, 86_400.0), default=None,
                   metavar="S", help="seconds a Rater built for explanations is kept after "
                   "its last use (default 60); then its memory is given back")
    s.add_argument("--send-timeout", type=float_in(0.1, 3600.0), default=DEFAULT_SEND_TIMEOUT_S,
                   metavar="S",
                   help="seconds a client may take to accept one 256 KiB block of an "
                   f"export before it is dropped (default {DEFAULT_SEND_TIMEOUT_S:g})")
    s.add_argument("--allow-future", action="store_true",
                   help="accept contests dated more than a day after this machine's clock "
                   "(simulations, scheduled contests); times must still lie in 1800..2200")
    s.add_argument("--case-insensitive-handles", action="store_true",
                   help="with --system, create the store so that handles differing only by "
                   "case are one player (fixed at creation; an existing store must have "
                   "been created so)")
    s.add_argument("--pool-size", type=int, default=None, metavar="N",
                   help="database connections each worker keeps open (default 5, "
                   "SQLAlchemy's)")
    s.add_argument("--synchronous", choices=("normal", "full"), default="normal",
                   help="a SQLite store's durability: 'normal' (default) keeps every "
                   "committed write through a crash of the server (kill -9) and may lose "
                   "the last ones in a power loss; 'full' waits for the disk at every "
                   "commit (an fsync) so that a power loss loses nothing committed "
                   "(PostgreSQL: ignored, its synchronous_commit decides)")
    s.add_argument("--max-overflow", type=int, default=None, metavar="N",
                   help="connections each worker may open beyond --pool-size under load "
                   "(default 10); a worker opens at most the sum")
    s.add_argument("--system", default=None,
                   help="create the store with this rating system if --db holds none "
                   "(default: the store must exist)")
    s.add_argument("--params", default=None, metavar="FILE",
                   help="JSON/TOML parameters for --system (as for `podium rate`)")
    s.add_argument("--log-level", default="info",
                   choices=["critical", "error", "warning", "info", "debug"],
                   help="uvicorn log level (default info)")
    s.add_argument("--no-access-log", action="store_true",
                   help="do not log every request (the access log never shows the values "
                   "of token=, api_key=, password=... query parameters)")
    s.set_defaults(func=_cmd_serve)
