"""``podium token``, ``podium audit`` and ``podium export``: access, audit log and
exports of a store from the command line.

* ``podium token create --db URL --role read|write|admin --name NAME`` prints the new
  token's secret on stdout -- and nothing else, so that ``TOKEN=$(podium token create
  ...)`` works -- once: the store keeps only its hash.  ``podium token list --db URL
  [--json]`` lists the tokens (never a secret); ``podium token revoke NAME --db URL``
  revokes one.
* ``podium audit --db URL [--json] [-n N] [--action A] [--contest ID]`` prints the
  audit log, newest first.
* ``podium export ratings|history --db URL --format csv|parquet -o FILE`` writes an
  export (:mod:`podium.store.export`), streamed into ``FILE.part`` and renamed to
  ``FILE`` once complete.

Each command's writes are recorded as made by ``cli:USER`` (or ``$PODIUM_ACTOR``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from podium.errors import PodiumError, UsageError
from podium.store.models import DEFAULT_DB

__all__ = ["add_parsers"]


def add_parsers(subparsers: Any) -> None:
    """Register ``token``, ``audit`` and ``export`` on the ``podium`` command line."""
    t = subparsers.add_parser(
        "token", help="create, list or revoke the service's bearer tokens",
        description="Named bearer tokens with a role (read < write < admin), kept hashed in "
        "the store: read is needed on a private server (podium serve --private), write "
        "ingests (POST /api/contests), admin also corrects contests and reads the audit log.")
    ts = t.add_subparsers(dest="token_command", metavar="{create,list,revoke}")
    ts.required = True
    c = ts.add_parser("create", help="create a token and print its secret (once)",
                      description="Create a token; its secret is printed on stdout, alone, "
                      "and cannot be shown again (the store keeps its SHA-256).")
    c.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    c.add_argument("--role", required=True, choices=["read", "write", "admin"])
    c.add_argument("--name", required=True,
                   help="a unique name (letters, digits, . _ @ + -), recorded in the audit "
                   "log as the author of this token's writes")
    c.set_defaults(func=_cmd_token_create)
    ls = ts.add_parser("list", help="list the tokens (never their secrets)")
    ls.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    ls.add_argument("--json", action="store_true", help="one JSON list")
    ls.set_defaults(func=_cmd_token_list)
    r = ts.add_parser("revoke", help="revoke a token")
    r.add_argument("name", metavar="NAME")
    r.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    r.set_defaults(func=_cmd_token_revoke)

    a = subparsers.add_parser("audit", help="show the store's audit log (newest first)",
                              description="Every write of the store -- ingestion, "
                              "recomputation, corrections, token management -- with who, "
                              "when, the contest and its content hash; newest first.")
    a.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    a.add_argument("-n", type=int, default=50, metavar="N",
                   help="show the N newest rows (default 50, at most 1000)")
    a.add_argument("--offset", type=int, default=0, metavar="K",
                   help="skip the K newest rows first")
    a.add_argument("--action", default=None, help="only rows of this action (ingest, ...)")
    a.add_argument("--contest", default=None, metavar="ID", help="only rows about this contest")
    a.add_argument("--json", action="store_true", help="one JSON object")
    a.set_defaults(func=_cmd_audit)

    e = subparsers.add_parser("export", help="write every rating, or every rating event, "
                              "to a CSV or Parquet file",
                              description="Export the store at --db, read in chunks from "
                              "one consistent state: 'ratings' (every rated player, best "
                              "first) or 'history' (every rating event, contest by contest).")
    e.add_argument("what", choices=["ratings", "history"])
    e.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    e.add_argument("--format", choices=["csv", "parquet"], default=None,
                   help="file format (default: from the suffix of -o, else csv)")
    e.add_argument("-o", "--out", required=True, metavar="FILE", help="the file to write")
    e.add_argument("--raw", action="store_true",
                   help="CSV cells exactly as stored, for programs; by default a text cell "
                   "that a spreadsheet would run as a formula (=, +, -, @, tab, CR first) "
                   "is written with a ' in front ('-101-: docs/service.md, \"CSV and "
                   "spreadsheets\")")
    e.set_defaults(func=_cmd_export)


def _open(db: str) -> Any:
    import importlib.util

    if importlib.util.find_spec("sqlalchemy") is None:
        raise PodiumError("the store commands need SQLAlchemy: pip install 'podium[service]'")
    from podium.store.store import Store

    return Store.open(db)


def _cmd_token_create(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        secret = store.create_token(args.name, args.role)
    print(secret, flush=True)
    print(f"podium: token {args.name!r} (role {args.role}) created; its secret, above, is "
          "shown only now", file=sys.stderr)
    return 0


def _cmd_token_list(args: argparse.Namespace) -> int:
    from podium.store.common import fmt_time

    with _open(args.db) as store:
        tokens = store.tokens()
    if args.json:
        print(json.dumps([{**asdict(t), "active": t.active} for t in tokens]))
        return 0
    if not tokens:
        print("no tokens (podium token create --role ROLE --name NAME creates one)")
        return 0
    width = max(len(t.name) for t in tokens)
    for t in tokens:
        state = "active" if t.active else f"revoked {fmt_time(t.revoked_at or 0)}"
        print(f"{t.name:<{width}}  {t.role:<5}  created {fmt_time(t.created_at)} by "
              f"{t.created_by}  {state}")
    return 0


def _cmd_token_revoke(args: argparse.Namespace) -> int:
    with _open(args.db) as store:
        info = store.revoke_token(args.name)
    print(f"revoked token {info.name!r} (role {info.role}); a running server refuses it "
          "within its token cache time (5 s by default)")
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from podium.store.common import fmt_time

    if not 0 <= args.n <= 1000:
        raise UsageError(f"-n must be in 0..1000, got {args.n}")
    if args.offset < 0:
        raise UsageError(f"--offset must be >= 0, got {args.offset}")
    with _open(args.db) as store:
        page = store.audit(offset=args.offset, limit=args.n, action=args.action,
                           contest_id=args.contest)
    if args.json:
        print(json.dumps({"offset": page.offset, "limit": page.limit, "total": page.total,
                          "entries": [asdict(e) for e in page.entries]}, sort_keys=True))
        return 0
    for e in page.entries:
        what = e.action
        if e.contest_id is not None:
            what += f" {e.contest_id!r}"
            if e.content_hash:
                what += f" (sha256 {e.content_hash[:12]})"
        detail = "" if not e.detail else " " + json.dumps(e.detail, sort_keys=True)
        print(f"#{e.id}  {fmt_time(int(e.time))}  {e.actor}  {what}  revision "
              f"{e.revision}{detail}")
    shown = len(page.entries)
    print(f"{shown} of {page.total} row(s)" + (f" from offset {page.offset}"
                                                if page.offset else ""), file=sys.stderr)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    fmt = args.format or ("parquet" if out.suffix.lower() in (".parquet", ".pq") else "csv")
    part = out.with_name(out.name + ".part")
    size = 0
    with _open(args.db) as store:
        pieces = store.export(args.what, fmt, csv_safe=not args.raw)
        try:
            with open(part, "wb") as fh:
                for piece in pieces:
                    fh.write(piece)
                    size += len(piece)
            os.replace(part, out)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
    from podium.store.engine import display_url

    print(f"wrote {args.what} of {display_url(args.db)} to {out} ({fmt}, {size:,} bytes)",
          file=sys.stderr)
    return 0
