"""``podium ladder``: the ladders of a store, their settings and seasons.

* ``podium ladder create NAME --db URL --system S [--params FILE] [--set k=v] [settings]``
  creates a ladder (:meth:`Store.create_ladder`); ``podium ingest PATH --ladder NAME
  --system S`` also creates one on first use.
* ``podium ladder list --db URL [--json]`` lists the ladders: system, counts, current
  season, settings.
* ``podium ladder set NAME --db URL [settings]`` changes a ladder's settings (the
  ladder ``default`` included).
* ``podium ladder new-season NAME --db URL [--reset POLICY] [--time T]`` starts the next
  season (:meth:`Store.new_season`); ``podium ladder seasons NAME --db URL`` lists them.

The settings (:class:`podium.store.ladders.LadderSettings`): ``--provisional-contests
N``, ``--provisional-sigma X`` (``none``: no such rule), ``--hide-provisional`` /
``--show-provisional``, ``--prior-from LADDER`` (``none``: the system's newcomer prior)
and ``--prior-widen W``.

:func:`add_ladder_option` gives the other store commands their ``--ladder NAME``.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from typing import Any

from podium.errors import PodiumError
from podium.store.models import DEFAULT_DB, DEFAULT_LADDER

__all__ = ["add_parsers", "add_ladder_option"]


def add_ladder_option(p: argparse.ArgumentParser) -> None:
    """The ``--ladder NAME`` option of a store command (default: the ladder ``default``,
    the store's meaning before ladders)."""
    p.add_argument("--ladder", default=None, metavar="NAME",
                   help=f"the ladder to act on (default: {DEFAULT_LADDER.name!r}); podium "
                   "ladder list shows a store's ladders")


def _int_ge0(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {v}")
    return v


def _sigma(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'none', got {text!r}") \
            from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0 or 'none', got {text!r}")
    return v


def _share(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return v


def _add_settings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--provisional-contests", type=_int_ge0, default=None, metavar="N",
                   help="a player with fewer rated contests is provisional (0: no such rule)")
    p.add_argument("--provisional-sigma", type=_sigma, default=argparse.SUPPRESS,
                   metavar="X", help="a player whose sigma (as of now) is above X is "
                   "provisional ('none': no such rule)")
    hide = p.add_mutually_exclusive_group()
    hide.add_argument("--hide-provisional", dest="hide_provisional", action="store_true",
                      default=None, help="leave provisional players out of the leaderboard")
    hide.add_argument("--show-provisional", dest="hide_provisional", action="store_false",
                      help="keep provisional players in the leaderboard (marked)")
    p.add_argument("--prior-from", default=argparse.SUPPRESS, metavar="LADDER",
                   help="start a newcomer rated in LADDER (same system) from that rating, "
                   "sigma widened ('none': the system's newcomer prior)")
    p.add_argument("--prior-widen", type=_share, default=None, metavar="W",
                   help="the share of the gap between the variance taken from --prior-from "
                   "and the newcomer prior's that is closed (default 0.5)")


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.provisional_contests is not None:
        out["provisional_contests"] = args.provisional_contests
    if hasattr(args, "provisional_sigma"):
        out["provisional_sigma"] = args.provisional_sigma
    if args.hide_provisional is not None:
        out["hide_provisional"] = args.hide_provisional
    if hasattr(args, "prior_from"):
        name = args.prior_from
        out["prior_from"] = None if name.strip().lower() == "none" else name
    if args.prior_widen is not None:
        out["prior_widen"] = args.prior_widen
    return out


def add_parsers(subparsers: Any) -> None:
    """Register ``ladder`` (``create``, ``list``, ``set``, ``new-season``, ``seasons``)."""
    top = subparsers.add_parser(
        "ladder", help="the ladders of a store: create, list, settings, seasons",
        description="A store holds ladders: independent leaderboards, each with its own "
        "rating system, contests, players and seasons (every store has 'default').")
    sub = top.add_subparsers(dest="ladder_command",
                             metavar="{create,list,set,new-season,seasons}")
    sub.required = True
    c = sub.add_parser("create", help="create a ladder",
                       description="Create the ladder NAME in the store at --db (created if "
                       "absent), rated with --system and its parameters.")
    c.add_argument("name", metavar="NAME")
    c.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    c.add_argument("--system", "-s", required=True, help="the ladder's rating system")
    c.add_argument("--params", metavar="FILE",
                   help="JSON or TOML file of named parameters (as for `podium rate`)")
    c.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override one parameter (repeatable)")
    _add_settings(c)
    c.set_defaults(func=_cmd_create)

    ls = sub.add_parser("list", help="list the ladders of a store")
    ls.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    ls.add_argument("--json", action="store_true", help="one JSON list")
    ls.set_defaults(func=_cmd_list)

    st = sub.add_parser("set", help="change a ladder's settings",
                        description="Change the provisional rule or the cross-ladder "
                        "newcomer prior of the ladder NAME ('default' included).")
    st.add_argument("name", metavar="NAME")
    st.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    _add_settings(st)
    st.set_defaults(func=_cmd_set)

    ns = sub.add_parser(
        "new-season", help="start the next season of a ladder",
        description="Close the current season of the ladder NAME (its final leaderboard "
        "stays readable: ?season= over HTTP) and reset every rated player: soft "
        "(mu shrunk toward the newcomer prior's mean, sigma widened toward its sigma), "
        "as the ladder's rating system defines it.")
    ns.add_argument("name", metavar="NAME")
    ns.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    ns.add_argument("--reset", default="soft", metavar="POLICY",
                    help="soft (keep 0.8 of mu's distance from the mean, close 0.1 of the "
                    "variance gap; the default), soft:KEEP, soft:KEEP:WIDEN, hard (every "
                    "player a newcomer) or none (a boundary only)")
    ns.add_argument("--time", type=int, default=None, metavar="T",
                    help="when the season starts, unix seconds (default now; not before the "
                    "latest contest)")
    ns.set_defaults(func=_cmd_new_season)

    ss = sub.add_parser("seasons", help="list the seasons of a ladder")
    ss.add_argument("name", metavar="NAME")
    ss.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    ss.add_argument("--json", action="store_true", help="one JSON list")
    ss.set_defaults(func=_cmd_seasons)


def _store(db: str, ladder: str | None = None) -> Any:
    import importlib.util

    if importlib.util.find_spec("sqlalchemy") is None:
        raise PodiumError("the store commands need SQLAlchemy: pip install 'podium[service]'")
    from podium.store.store import Store

    return Store.open(db, ladder=ladder)


def _cmd_create(args: argparse.Namespace) -> int:
    from podium.cli_common import load_params
    from podium.store.ladders import check_ladder_name
    from podium.store.store import Store

    name = check_ladder_name(args.name)
    file_system, params = load_params(args.params, args.set or [])
    if file_system is not None and file_system != args.system:
        raise PodiumError(f"--params names the system {file_system!r}, --system {args.system!r}")
    given = params if (args.params or args.set) else None
    with Store.open_or_create(args.db, args.system, given, check_system=False) as store:
        made = store.create_ladder(name, args.system, given, **_settings(args))
        info = next(x for x in made.ladders() if x.name == made.ladder_name)
    print(f"created ladder {info.name!r} ({info.system}) in {_shown(args.db)}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from podium.store.common import fmt_time

    with _store(args.db) as store:
        ladders = store.ladders()
    if args.json:
        print(json.dumps([asdict(x) for x in ladders], allow_nan=True, sort_keys=True))
        return 0
    width = max(len(x.name) for x in ladders)
    for x in ladders:
        extra = []
        s = x.settings
        if s["provisional_contests"] or s["provisional_sigma"] is not None:
            extra.append(f"provisional: < {s['provisional_contests']} contests"
                         + ("" if s["provisional_sigma"] is None
                            else f" or sigma > {s['provisional_sigma']:g}")
                         + (" (hidden)" if s["hide_provisional"] else ""))
        if s["prior_from"]:
            extra.append(f"newcomers from {s['prior_from']!r} (widen {s['prior_widen']:g})")
        print(f"{x.name:<{width}}  {x.system:<10}  {x.contests:>6} contests  {x.players:>8} "
              f"players  season {x.season}  created {fmt_time(x.created_at)}"
              + ("".join(f"; {e}" for e in extra)))
    return 0


def _cmd_set(args: argparse.Namespace) -> int:
    changes = _settings(args)
    if not changes:
        raise PodiumError("nothing to change: give a setting (--provisional-contests, "
                          "--provisional-sigma, --hide-provisional, --show-provisional, "
                          "--prior-from, --prior-widen)")
    with _store(args.db, args.name) as store:
        new = store.set_ladder_settings(**changes)
    print(f"ladder {args.name!r}: " + ", ".join(f"{k}={v!r}" for k, v in asdict(new).items()))
    return 0


def _cmd_new_season(args: argparse.Namespace) -> int:
    from podium.store.common import fmt_time

    with _store(args.db, args.name) as store:
        info = store.new_season(args.reset, time_seconds=args.time)
    print(f"ladder {args.name!r}: season {info.number} began {fmt_time(info.time_seconds or 0)} "
          f"({info.contest_id}); reset {info.reset}: {info.players} player(s)")
    return 0


def _cmd_seasons(args: argparse.Namespace) -> int:
    from podium.store.common import fmt_time

    with _store(args.db, args.name) as store:
        seasons = store.seasons()
    if args.json:
        print(json.dumps([asdict(x) for x in seasons], sort_keys=True))
        return 0
    for x in seasons:
        start = "from the start" if x.time_seconds is None else (
            f"from {fmt_time(x.time_seconds)} ({x.contest_id}, reset {x.reset}, "
            f"{x.players} player(s))")
        print(f"season {x.number}  {start}{'  (current)' if x.current else ''}")
    return 0


def _shown(db: str) -> str:
    from podium.store.engine import display_url

    return display_url(db)
