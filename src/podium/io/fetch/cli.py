"""``podium fetch codeforces|ctftime OUT_DIR ...``: download a contest history.

Registered by :func:`add_parsers` through ``podium.cli.COMMAND_MODULES``.
Progress goes to stderr, one line per contest; the last line sums up.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from podium.errors import PodiumError
from podium.io.fetch._common import FetchReport
from podium.io.fetch._http import Transport, urllib_transport

__all__ = ["add_parsers", "make_transport"]

#: Builds the transport the commands use; tests replace it with a fake.
make_transport: Callable[[], Transport] = urllib_transport

_MAX_LISTED = 10


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.replace(" ", "").split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers like 1,2,3, got {text!r}"
        ) from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def _day(text: str) -> str:
    """A day ``YYYY-MM-DD`` (returned as given; the fetchers read it)."""
    import datetime

    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a day YYYY-MM-DD, got {text!r}") from None
    return text


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _report(rep: FetchReport) -> None:
    err = sys.stderr
    if rep.skipped:
        reasons = Counter(s.reason.split(":")[0] for s in rep.skipped)
        print("skipped: " + ", ".join(f"{n} {r}" for r, n in reasons.most_common()), file=err)
    for line in rep.warnings[:_MAX_LISTED]:
        print(f"warning: {line}", file=err)
    if len(rep.warnings) > _MAX_LISTED:
        print(f"warning: ... and {len(rep.warnings) - _MAX_LISTED} more", file=err)
    print(rep.summary(), file=err)


def _run(call: Callable[[], FetchReport]) -> int:
    try:
        rep = call()
    except ValueError as exc:
        if isinstance(exc, PodiumError):
            raise
        raise PodiumError(str(exc)) from None
    _report(rep)
    return 0


def _cmd_codeforces(args: argparse.Namespace) -> int:
    from podium.io.fetch.codeforces import fetch_codeforces

    return _run(lambda: fetch_codeforces(
        args.out_dir, contest_ids=args.contests, since=args.since, until=args.until,
        limit=args.limit, gym=args.gym, transport=make_transport(),
        min_interval=args.min_interval, retries=args.retries,
        skip_team_contests=not args.include_team_contests, progress=_progress,
    ))


def _cmd_ctftime(args: argparse.Namespace) -> int:
    from podium.io.fetch.ctftime import fetch_ctftime

    return _run(lambda: fetch_ctftime(
        args.out_dir, year=args.year, event_ids=args.events, transport=make_transport(),
        min_interval=args.min_interval, retries=args.retries,
        event_details=not args.no_event_details, team_names=not args.no_team_names,
        progress=_progress,
    ))


def add_parsers(subparsers: Any) -> None:
    """Register ``fetch codeforces`` and ``fetch ctftime`` on an argparse subparsers object."""
    f = subparsers.add_parser(
        "fetch", help="download a contest history from Codeforces or CTFtime",
        description="Download contest results from a public API into OUT_DIR as 0.json, "
        "1.json, ... (the Elo-MMR format) plus all_contests.csv.  Raw answers are cached "
        "in OUT_DIR/.cache: run the same command again to resume an interrupted fetch "
        "or to bring the history up to date.",
    )

    def usage(_args: argparse.Namespace) -> int:
        f.print_help(sys.stderr)
        return 2

    f.set_defaults(func=usage)
    sub = f.add_subparsers(dest="source", metavar="SOURCE")

    cf = sub.add_parser(
        "codeforces", help="Codeforces rated rounds (contest.ratingChanges)",
        description="Fetch every finished Codeforces contest (contest.list), then its rating "
        "changes (contest.ratingChanges): rated participants only, ties from equal ranks, "
        "time = when ratings were updated, as in the Elo-MMR Codeforces dataset.  Unrated "
        "contests are skipped.  At the default pace (one request per 2 s, the API's limit) "
        "the whole history takes 1 to 2 hours.",
    )
    cf.add_argument("out_dir", metavar="OUT_DIR", help="output directory")
    cf.add_argument("--contests", type=_int_list, metavar="ID,ID,...",
                    help="only these contest ids")
    cf.add_argument("--since", type=_day, metavar="YYYY-MM-DD",
                    help="only contests starting on or after this day (UTC)")
    cf.add_argument("--until", type=_day, metavar="YYYY-MM-DD",
                    help="only contests starting before this day (UTC)")
    cf.add_argument("--limit", type=_count, metavar="N",
                    help="only the N most recent of the selected contests")
    cf.add_argument("--gym", action="store_true",
                    help="gym contests instead (from contest.standings; unrated)")
    cf.add_argument("--include-team-contests", action="store_true",
                    help="keep the 17 team contests the Elo-MMR dataset leaves out")
    cf.add_argument("--min-interval", type=_non_negative, default=2.0, metavar="S",
                    help="seconds between requests (default 2, Codeforces' limit)")
    cf.add_argument("--retries", type=_count, default=5, metavar="N",
                    help="retries per request with exponential backoff (default 5)")
    cf.set_defaults(func=_cmd_codeforces)

    ct = sub.add_parser(
        "ctftime", help="CTFtime event results (results/<year>/)",
        description="Fetch CTFtime results per year, each event's finish time and each "
        "team's name.  Handles are team ids; OUT_DIR/teams.csv maps them to names.  Ties "
        "come from equal places.  A full history is a few thousand events (one request "
        "each) and tens of thousands of teams (one request each unless --no-team-names).",
    )
    ct.add_argument("out_dir", metavar="OUT_DIR", help="output directory")
    ct.add_argument("--year", type=_int_list, metavar="Y,Y,...",
                    help="years of results (default: 2011 to this year, or the years of "
                    "--events)")
    ct.add_argument("--events", type=_int_list, metavar="ID,ID,...",
                    help="only these event ids")
    ct.add_argument("--no-event-details", action="store_true",
                    help="do not ask each event's finish time; use the results' time")
    ct.add_argument("--no-team-names", action="store_true",
                    help="do not ask each team's name (teams.csv lists ids only)")
    ct.add_argument("--min-interval", type=_non_negative, default=1.0, metavar="S",
                    help="seconds between requests (default 1)")
    ct.add_argument("--retries", type=_count, default=5, metavar="N",
                    help="retries per request with exponential backoff (default 5)")
    ct.set_defaults(func=_cmd_ctftime)
