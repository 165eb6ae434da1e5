"""``podium explain``: why a player's rating changed in a stored contest.

Text by default (the equations, the terms pushing most up and down, ``before + change =
after``); ``--json`` prints :meth:`~podium.core.explain.Explanation.to_dict`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from podium.errors import UsageError
from podium.store.ladder_cli import add_ladder_option
from podium.store.models import DEFAULT_DB

__all__ = ["add_parsers"]


def add_parsers(subparsers: Any) -> None:
    """Register ``explain`` on the ``podium`` command line."""
    p = subparsers.add_parser(
        "explain", help="explain a player's rating change in a stored contest",
        description="Re-run the rating update of contest --contest from the store's state "
        "just before it and show why --player's rating changed: the rating before and after, "
        "the performance, and the terms of the update's equations (for Elo-MMR the "
        "opponents pushing the performance most up and down, Theorem 3.2 of the Elo-MMR "
        "paper, and the weights of Eq. 6-8; for Codeforces the seed and the corrections); "
        "see docs/explain.md.  With --past (a ladder with a smoothed companion, podium "
        "smooth): what the companion's last update changed in --player's past -- which "
        "earlier ratings moved, by how much, and which new results revised them.")
    p.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    p.add_argument("--contest", metavar="ID", help="the contest's id (not with --past)")
    p.add_argument("--past", action="store_true",
                   help="what the last update of the smoothed curve changed in the "
                   "player's past (docs/history.md)")
    p.add_argument("--player", required=True, metavar="HANDLE", help="the player's handle")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--top", type=_top, default=5, metavar="K",
                   help="terms shown per direction of a long equation (default 5); with "
                   "--json, 0 lists every term")
    add_ladder_option(p)
    p.set_defaults(func=_cmd_explain)


def _top(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--top must be an integer, got {text!r}") from None
    if k < 0:
        raise argparse.ArgumentTypeError(f"--top must be >= 0, got {k}")
    return k


def _cmd_explain(args: argparse.Namespace) -> int:
    from podium.core.explain import format_explanation
    from podium.store.store import Store

    if args.past:
        return _explain_past(args)
    if not args.contest:
        raise UsageError("podium explain: --contest ID is needed (or --past)")
    # one explanation at the command line: no limit on its replay (a server's limit,
    # max_explain_replay, keeps one request from holding a worker for minutes)
    with Store.open(args.db, ladder=args.ladder, max_explain_replay=2**62) as store:
        out = store.explain(args.contest, args.player)
    if args.json:
        print(json.dumps(out.to_dict(top=args.top or None), allow_nan=False))
    else:
        print(format_explanation(out, top=max(args.top, 1)))
    return 0


def _explain_past(args: argparse.Namespace) -> int:
    from podium.store.smoothed import format_past_changes
    from podium.store.store import Store

    if args.contest:
        raise UsageError("podium explain: --past explains the last update; leave out "
                         "--contest")
    with Store.open(args.db, ladder=args.ladder) as store:
        out = store.past_changes(args.player)
        if out is None:
            why = ("no smoothed companion in this ladder (podium smooth --system mmr-smooth)"
                   if store.smoothing() is None else f"no player {args.player!r}")
            raise UsageError(f"podium explain --past: {why}")
    if args.json:
        print(json.dumps(asdict(out), allow_nan=False))
    else:
        print(format_past_changes(out, top=max(args.top, 1)))
    return 0
