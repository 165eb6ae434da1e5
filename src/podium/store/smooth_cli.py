"""``podium smooth``: a ladder's smoothed companion (issue 29, docs/history.md).

``podium smooth --db URL --system mmr-smooth [--set NAME=VALUE ...]`` turns it on (the
stored history is smoothed at once, and every later write recomputes it), ``--off``
turns it off, and without either the command prints the companion's status: its system,
the contests it covers, the level offset between the smoothed and the filtered curves,
and what its last update did.  ``podium explain --past --player H`` says what that
update changed in a player's past.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from podium.errors import UsageError
from podium.store.ladder_cli import add_ladder_option
from podium.store.models import DEFAULT_DB

__all__ = ["add_parsers", "format_status"]


def add_parsers(subparsers: Any) -> None:
    """Register ``smooth`` on the ``podium`` command line."""
    p = subparsers.add_parser(
        "smooth", help="a ladder's smoothed (whole-history) companion curve",
        description="Turn on (--system), off (--off) or show the ladder's smoothed "
        "companion: a whole-history system (mmr-smooth, ttt, whr) that re-estimates every "
        "past rating after each write, stored next to the filter's ratings; the player "
        "pages and the API show both curves (docs/history.md, 'In the store').")
    p.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--system", metavar="NAME",
                      help="turn the companion on with this whole-history system "
                      "(mmr-smooth takes the parameters it shares with an mmr ladder)")
    what.add_argument("--off", action="store_true", help="turn the companion off")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the whole-history system (repeatable), e.g. "
                   "--set p_draw=0.1 for ttt on contests with ties")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_ladder_option(p)
    p.set_defaults(func=_cmd_smooth)


def format_status(status: Any) -> str:
    """A :class:`~podium.store.smoothed.SmoothingStatus` as text (``None``: off)."""
    if status is None:
        return "no smoothed companion (turn one on with podium smooth --system mmr-smooth)"
    last = status.last
    off = ("no shared player-rounds yet" if status.offset is None else
           f"{status.offset:+.1f} (smoothed minus filtered display rating, mean over "
           f"{status.pairs} player-rounds; the pages subtract it); between the mu, "
           f"{status.offset_mu:+.1f}, the rest is the filter's display rule")
    return "\n".join([
        f"smoothed companion: {status.system}, {status.contests} contest(s) covered",
        f"level offset: {off}",
        f"last update: {last.get('reason')} at revision {last.get('revision')}, "
        f"{last.get('new_contests', 0)} new contest(s), {last.get('sweeps', 0)} sweep(s), "
        f"{last.get('touched', 0)} player curve(s) rewritten, {last.get('moved', 0)} "
        f"earlier rating(s) moved (largest {float(last.get('max_past_change', 0.0)):.2f})",
    ])


def _cmd_smooth(args: argparse.Namespace) -> int:
    from podium.cli_common import load_params
    from podium.store.store import Store

    _, params = load_params(None, args.set)
    if params and not args.system:
        raise UsageError("podium smooth: --set needs --system NAME")
    with Store.open(args.db, ladder=args.ladder) as store:
        if args.off:
            status = store.set_smoothing(None)
        elif args.system:
            status = store.set_smoothing(args.system, params)
        else:
            status = store.smoothing()
    if args.json:
        print(json.dumps(None if status is None else asdict(status), allow_nan=False))
    else:
        print(format_status(status))
    return 0
