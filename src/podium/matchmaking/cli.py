"""``podium balance``: split a pool of players from a store into the fairest teams.

    podium balance --db URL --players a,b,c,d,e,f --teams 2 [--party a,b] [--json]

Prints each team with its win probability, then the match quality and whether the
split is the exact best (:func:`podium.matchmaking.balance`).  Bad input -- an unknown
system, a repeated player, a party larger than a team, more teams than players, a pool
above :data:`podium.matchmaking.MAX_POOL`, a store that cannot be opened -- ends in one
``podium: error: ...`` line and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from podium.errors import PodiumError

__all__ = ["add_parsers", "split_names"]


def split_names(text: str, option: str) -> list[str]:
    """The comma-separated handles of ``option`` (spaces around each trimmed);
    :class:`PodiumError` naming an empty one."""
    names = [h.strip() for h in text.split(",")]
    for k, h in enumerate(names):
        if not h:
            raise PodiumError(f"{option} {text!r}: name #{k + 1} is empty (give handles "
                              "separated by commas)")
    return names


def _cmd_balance(args: argparse.Namespace) -> int:
    try:
        return _balance(args)
    except PodiumError as exc:
        print(f"podium: error: {exc}", file=sys.stderr)
        return 2


def _balance(args: argparse.Namespace) -> int:
    from podium.matchmaking import balance_store
    from podium.outcomes import announce_compile
    from podium.store import Store
    from podium.systems import SYSTEMS

    players = split_names(args.players, "--players")
    parties = [split_names(p, "--party") for p in args.party or ()]
    if args.system is not None and args.system not in SYSTEMS:
        raise PodiumError(f"--system: unknown system {args.system!r} (`podium systems` "
                          "lists them)")
    with Store.open(args.db) as store:
        if args.system is not None and args.system != store.system_name:
            raise PodiumError(f"--system {args.system}: the store at {args.db} rates with "
                              f"{store.system_name!r}")
        announce_compile()
        got = balance_store(store, players, args.teams, parties, weight=args.weight)
        system = store.system_name
    pred = got.prediction
    if args.json:
        out: dict[str, Any] = {
            "system": system, "match_quality": got.match_quality, "exact": got.exact,
            "p_draw": pred.p_draw,
            "teams": [{"name": n, "members": m, "p_first": p}
                      for n, m, p in zip(pred.names, got.teams, pred.p_first.tolist(),
                                         strict=True)]}
        print(json.dumps(out))
        return 0
    for name, members, p in zip(pred.names, got.teams, pred.p_first.tolist(), strict=True):
        print(f"{name} (wins {100.0 * p:.1f} %): {', '.join(members)}")
    how = "the best split" if got.exact else "local search"
    draw = "" if pred.p_draw is None else f", draw {100.0 * pred.p_draw:.1f} %"
    print(f"match quality {got.match_quality:.4f} ({how}; {system}{draw})")
    return 0


def add_parsers(subparsers: Any) -> None:
    """Register ``balance`` on the ``podium`` command line."""
    b = subparsers.add_parser(
        "balance", help="split players of a store into the fairest teams",
        description="Split --players into --teams teams (sizes differing by at most one) "
        "with every --party on one team, maximising the match quality of the store's "
        "rating system: the best split for two teams of up to 16 players, a seeded local "
        "search beyond (docs/lobbies.md).  Unknown handles are newcomers.  Bad input exits "
        "with status 2.",
    )
    b.add_argument("--db", required=True, metavar="URL",
                   help="the store: a SQLite file path or sqlite:///FILE, or a PostgreSQL URL")
    b.add_argument("--players", required=True, metavar="A,B,C",
                   help="the pool: comma-separated handles")
    b.add_argument("--teams", type=int, default=2, metavar="T",
                   help="number of teams (default 2)")
    b.add_argument("--party", action="append", metavar="A,B",
                   help="players who play on one team (repeatable)")
    b.add_argument("--system", default=None, metavar="NAME",
                   help="the rating system expected (must be the store's)")
    b.add_argument("--weight", type=float, default=1.0,
                   help="weight of the proposed contest (default 1)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.set_defaults(func=_cmd_balance)
