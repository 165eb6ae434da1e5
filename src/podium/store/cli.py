"""``podium ingest``, ``podium db-info``, ``podium db-upgrade`` and ``podium store
delete|replace``.

``podium ingest PATH [--db URL]`` rates the contests of PATH into a store -- in
batches of up to ``--batch`` contests, one transaction each
(:meth:`Store.ingest_many`; with ``--recompute-from``, one transaction per contest)
-- and prints one line per contest (applied / duplicate (unchanged) / recomputed N
later contests) and a summary.  Before anything is written the whole input is read
and checked -- against itself and against the store -- so that bad input (an
unreadable file, an invalid contest, an unknown parameter, an id stored with other
content, a contest older than the latest one without ``--recompute-from``) stops
with ``podium: error: ...`` and changes nothing.

``podium store delete CONTEST_ID`` and ``podium store replace CONTEST_FILE`` correct a
stored contest (:meth:`Store.delete`, :meth:`Store.replace`): one transaction that
re-rates every later contest, printing what was re-rated.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from podium.errors import PodiumError, UsageError
from podium.store.models import DEFAULT_DB, CorrectionResult, IngestResult, StoreError

__all__ = ["add_parsers", "batches", "BATCH_ROUNDS"]

#: A batch of ``podium ingest`` ends once it holds this many player-rounds, so that a
#: transaction of big contests stays small in memory.
BATCH_ROUNDS = 200_000


def batches(sizes: list[int], most: int, rounds: int = BATCH_ROUNDS) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges of consecutive contests of ``sizes`` players: at most
    ``most`` contests each, ending once one holds ``rounds`` player-rounds."""
    out: list[tuple[int, int]] = []
    start = total = 0
    for k, n in enumerate(sizes):
        total += n
        if k + 1 - start >= most or total >= rounds:
            out.append((start, k + 1))
            start, total = k + 1, 0
    if start < len(sizes):
        out.append((start, len(sizes)))
    return out


def add_parsers(subparsers: Any) -> None:
    """Register ``ingest``, ``db-info`` and ``db-upgrade`` on the ``podium`` command line."""
    from podium.cli_common import add_input_args, int_in

    p = subparsers.add_parser(
        "ingest", help="rate contests into a persistent store (SQLite file or PostgreSQL)",
        description="Rate the contests of PATH into the store at --db in batches, one "
        "transaction per batch (all of its rating events or none; with --recompute-from one "
        "transaction per contest).  A contest already stored under the same "
        "id (its url, else its name) with the same content is skipped as a duplicate; a "
        "contest older than the latest stored one is refused unless --recompute-from.  The "
        "input is checked completely before anything is written.",
    )
    p.add_argument("path", metavar="PATH",
                   help="JSON contest file, directory of N.json files, .tar.gz of one, or CSV")
    p.add_argument("--db", default=DEFAULT_DB, metavar="URL",
                   help=f"database: a SQLite file path or sqlite:///FILE, or "
                   f"postgresql://USER@HOST:PORT/DB (default {DEFAULT_DB})")
    p.add_argument("--system", "-s", default=None,
                   help="rating system of a new store (default mmr); must match an existing one")
    p.add_argument("--params", metavar="FILE",
                   help="JSON or TOML file of named parameters (as for `podium rate`)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override one parameter, e.g. --set weight_limit=0.3 (repeatable)")
    p.add_argument("--recompute-from", action="store_true",
                   help="accept contests older than the latest stored one: insert them in time "
                   "order and re-rate every later contest")
    add_input_args(p, raw_handles=False)
    p.add_argument("--case-insensitive-handles", action="store_true",
                   help="create the store so that handles differing only by case are one "
                   "player (shown as first seen); fixed at creation: an existing store must "
                   "have been created so")
    p.add_argument("--dedupe", action="store_true",
                   help="drop contests of PATH whose url repeats an earlier one")
    p.add_argument("--sort-by-time", action="store_true",
                   help="stable-sort the contests of PATH by time_seconds")
    p.add_argument("-n", type=int, default=None, metavar="N",
                   help="ingest only the first N contests of PATH")
    p.add_argument("--batch", type=int, default=200, metavar="N",
                   help="contests per transaction (default 200; a batch also ends after "
                   f"{BATCH_ROUNDS:,} player-rounds); 1: one transaction per contest")
    p.add_argument("--keep-snapshots", type=int_in(1), default=2, metavar="N",
                   help="snapshots of the rating state to keep, the newest (default 2); a "
                   "store that serves explanations keeps them all (a large N): then no "
                   "explanation replays more than one snapshot interval (docs/explain.md)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no line per contest (only the summary)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_ingest)

    i = subparsers.add_parser("db-info", help="show what a store holds",
                              description="Counts, rating system, parameters and schema "
                              "version of the store at --db.")
    i.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    i.add_argument("--json", action="store_true", help="print one JSON object")
    i.set_defaults(func=_cmd_info)

    u = subparsers.add_parser("db-upgrade", help="migrate a store to this Podium's schema",
                              description="Apply the schema migrations the store at --db "
                              "lacks, in one transaction.")
    u.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    u.set_defaults(func=_cmd_upgrade)

    _add_store_parsers(subparsers)


def _add_store_parsers(subparsers: Any) -> None:
    """``podium store delete`` and ``podium store replace``."""
    from podium.cli_common import add_input_args

    s = subparsers.add_parser(
        "store", help="correct a store: delete or replace a stored contest",
        description="Correct the past: delete a stored contest, or replace its standings, "
        "and re-rate every later contest -- one transaction (readers see the old state "
        "until it commits; a failure or a kill leaves the old state).")
    sub = s.add_subparsers(dest="store_command", metavar="COMMAND")
    sub.required = True
    d = sub.add_parser(
        "delete", help="delete a contest and re-rate every later one",
        description="Delete the contest CONTEST_ID (its url, else its name, as `podium "
        "ingest` stored it) and re-rate every later contest; players who appear in no "
        "remaining contest are removed.")
    d.add_argument("contest_id", metavar="CONTEST_ID", help="the id of the stored contest")
    d.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    d.set_defaults(func=_cmd_store_delete)
    r = sub.add_parser(
        "replace", help="replace a contest's standings and re-rate every later contest",
        description="Replace the stored contest named by CONTEST_FILE's id (its url, else "
        "its name; or --contest-id) by the contest of CONTEST_FILE (read as `podium ingest` "
        "reads it: JSON, or a CSV of one contest) and re-rate every later contest.  A new "
        "time moves the contest.  A file equal to the stored contest changes nothing.")
    r.add_argument("path", metavar="CONTEST_FILE", help="a file holding one contest")
    r.add_argument("--db", default=DEFAULT_DB, metavar="URL", help=f"default {DEFAULT_DB}")
    r.add_argument("--contest-id", metavar="ID", default=None,
                   help="the id of the stored contest (default: the file's url, else name)")
    add_input_args(r, raw_handles=False)
    r.set_defaults(func=_cmd_store_replace)


def _need_sqlalchemy() -> None:
    import importlib.util

    if importlib.util.find_spec("sqlalchemy") is None:
        raise PodiumError("the store commands need SQLAlchemy: pip install 'podium[service]'")


# ---------------------------------------------------------------------- ingest
def _preflight_batch(contests: list[Any], indices: list[int], path: str,
                     recompute: bool) -> tuple[list[str], list[str]]:
    """Ids and content hashes of the batch; errors for conflicts within the batch."""
    from podium.store.store import content_hash, default_contest_id
    from podium.store.store import fmt_time as _fmt_time

    ids: list[str] = []
    hashes: list[str] = []
    first: dict[str, int] = {}
    latest = -1
    for k, c in enumerate(contests):
        where = f"contest #{indices[k]} {c.label!r} of {path}"
        try:
            cid = default_contest_id(c)
        except StoreError as exc:
            raise StoreError(f"{where}: {exc}") from None
        h = content_hash(c)
        ids.append(cid)
        hashes.append(h)
        if cid in first:
            j = first[cid]
            if hashes[j] != h:
                raise StoreError(
                    f"{where} has the same id {cid!r} as contest #{indices[j]} "
                    f"{contests[j].label!r} but different content; --dedupe keeps the first "
                    "contest of each url"
                )
            continue
        first[cid] = k
        if not recompute and latest >= 0 and c.time_seconds < contests[latest].time_seconds:
            prev = contests[latest]
            raise StoreError(
                f"{where} ({_fmt_time(c.time_seconds)}) is older than contest "
                f"#{indices[latest]} {prev.label!r} ({_fmt_time(prev.time_seconds)}) before it; "
                "use --sort-by-time to ingest in time order, or --recompute-from"
            )
        if latest < 0 or c.time_seconds >= contests[latest].time_seconds:
            latest = k
    return ids, hashes


def _preflight_contests(contests: list[Any], indices: list[int], path: str,
                        allow_future: bool) -> list[Any]:
    """The contests under the store's rules (:func:`podium.store.checks.check_contest`:
    handles normalised; time, weight, ceiling, name and url checked), or an error naming
    the first one that breaks them -- before any store is opened or created."""
    from podium.errors import ContestError
    from podium.store.checks import check_contest

    out = []
    for k, c in enumerate(contests):
        try:
            out.append(check_contest(c, allow_future=allow_future))
        except ContestError as exc:
            raise StoreError(f"contest #{indices[k]} of {path}: {exc}") from None
    return out


def _preflight_spellings(store: Any, contests: list[Any], indices: list[int], ids: list[str],
                         path: str) -> tuple[list[Any], list[str], list[str]]:
    """For a store with case-insensitive handles: the contests with each handle spelt as
    the store (or an earlier contest of ``path``) first spelt it, and their hashes; an
    error for a contest holding two handles that differ only by case."""
    from podium.errors import ContestError
    from podium.store.checks import check_case_insensitive, respell
    from podium.store.store import content_hash

    for k, c in enumerate(contests):
        try:
            check_case_insensitive(c)
        except ContestError as exc:
            raise StoreError(f"contest #{indices[k]} of {path}: {exc}") from None
    spelling = store.handle_spellings({h for c in contests for h in c.handles})
    contests = respell(contests, spelling)
    return contests, ids, [content_hash(c) for c in contests]


def _preflight_teams(system: Any, name: str, contests: list[Any], indices: list[int],
                     path: str) -> None:
    """An error for the first team round when the rating system rates none."""
    if system.team_rule is not None:
        return
    for k, c in enumerate(contests):
        if c.team_round:
            raise StoreError(
                f"contest #{indices[k]} {c.label!r} of {path}: the rating system {name!r} "
                "does not rate team rounds (a team has more than one member or a member "
                "weight is not 1); docs/teams.md lists the systems that do"
            )


def _preflight_store(store: Any, contests: list[Any], indices: list[int], ids: list[str],
                     hashes: list[str], path: str, recompute: bool) -> None:
    """Errors for contests that conflict with what the store holds."""
    from podium.store.store import fmt_time as _fmt_time

    _preflight_teams(store.system, store.system_name, contests, indices, path)
    stored = store.lookup_contests(ids)
    first_new: int | None = None
    for k, (cid, h) in enumerate(zip(ids, hashes, strict=True)):
        c = contests[k]
        if cid in stored:
            sh, seq, name = stored[cid]
            if sh != h:
                raise StoreError(
                    f"contest #{indices[k]} {c.label!r} of {path}: id {cid!r} is already stored "
                    f"(#{seq} {name!r}) with different content; a stored contest is never "
                    "replaced: give this one another name/url or leave it out"
                )
        elif first_new is None:
            first_new = k
    if first_new is None or recompute:
        return
    latest = store.latest_contest()
    earliest_new = min(
        (k for k in range(len(contests)) if ids[k] not in stored),
        key=lambda k: contests[k].time_seconds,
    )
    c = contests[earliest_new]
    if latest is not None and c.time_seconds < latest.time_seconds:
        raise StoreError(
            f"contest #{indices[earliest_new]} {c.label!r} of {path} "
            f"({_fmt_time(c.time_seconds)}) is older than the latest stored contest "
            f"{latest.name!r} (id {latest.contest_id!r}, {_fmt_time(latest.time_seconds)}); "
            "use --recompute-from to insert it in time order and re-rate the later contests"
        )


def _line(res: IngestResult) -> str:
    head = f"#{res.index} {res.name!r}"
    if res.contest_id != res.name:
        head += f" ({res.contest_id})"
    if res.status == "duplicate":
        return f"duplicate   {head}: already stored, unchanged"
    text = f"{res.players} players, {res.new_players} new"
    if res.status == "recomputed":
        return f"recomputed  {head}: {text}; re-rated {res.recomputed} later contest(s)"
    return f"applied     {head}: {text}"


def _cmd_ingest(args: argparse.Namespace) -> int:
    from podium.cli_common import Progress, load_options, load_params
    from podium.io import check_history, load_contests

    _need_sqlalchemy()
    from podium.store.engine import display_url
    from podium.store.store import Store
    from podium.store.store import resolve_system as _resolve

    err = sys.stderr
    file_system, params = load_params(args.params, args.set or [])
    system = args.system or file_system
    given_params = params if (args.params or args.set) else None
    sysobj = None
    if system is not None:
        sysobj, _ = _resolve(system, given_params)  # unknown system/parameter: stop here
    if args.n is not None and args.n < 0:
        raise UsageError(f"-n must be >= 0, got {args.n}")
    if args.batch < 1:
        raise UsageError(f"--batch must be >= 1, got {args.batch}")

    t0 = time.perf_counter()
    history = load_contests(args.path, limit=args.n, dedupe_urls=args.dedupe,
                            sort_by_time=args.sort_by_time, **load_options(args))
    for line in history.warnings:
        print(f"warning: {line}", file=err)
    for line in history.changes:
        print(f"changed: {line}", file=err)
    for line in check_history(history.contests, history.indices):
        if not (args.recompute_from and "sort_by_time" in line):
            print(f"warning: {line}", file=err)
    indices = history.indices
    contests = _preflight_contests(history.contests, indices, args.path, args.allow_future)
    ids, hashes = _preflight_batch(contests, indices, args.path, args.recompute_from)
    if sysobj is not None:  # before a new store is created
        _preflight_teams(sysobj, str(system), contests, indices, args.path)

    with Store.open_or_create(args.db, system, given_params,
                              case_insensitive_handles=True if args.case_insensitive_handles
                              else None, allow_future=args.allow_future,
                              keep_snapshots=args.keep_snapshots) as store:
        if store.case_insensitive_handles:
            contests, ids, hashes = _preflight_spellings(store, contests, indices, ids,
                                                         args.path)
        _preflight_store(store, contests, indices, ids, hashes, args.path, args.recompute_from)
        quiet = args.quiet
        progress = Progress(len(contests), err,
                            not args.no_progress and (quiet or not sys.stdout.isatty()))
        counts = {"applied": 0, "duplicate": 0, "recomputed": 0}
        rerated = 0
        t1 = time.perf_counter()
        most = 1 if args.recompute_from else args.batch
        done_contests = 0
        for a, b in batches([len(c) for c in contests], most):
            try:
                if b - a == 1:
                    results = [store.ingest(contests[a], contest_id=ids[a],
                                            recompute_from=args.recompute_from)]
                else:
                    results = store.ingest_many(contests[a:b], contest_ids=ids[a:b])
            except PodiumError as exc:
                done = counts["applied"] + counts["recomputed"]
                what = (f"contest #{indices[a]} {contests[a].label!r}" if b - a == 1 else
                        f"the batch of contests #{indices[a]} to #{indices[b - 1]}")
                raise StoreError(
                    f"{what} of {args.path}: {exc} ({done} earlier contest(s) of this run "
                    f"were stored; {'it' if b - a == 1 else 'this batch'} and the rest were "
                    "not)"
                ) from None
            for c, res in zip(contests[a:b], results, strict=True):
                counts[res.status] += 1
                rerated += res.recomputed
                if not quiet:
                    print(_line(res), flush=True)
                    for w in res.warnings:
                        print(f"  warning: {w}", file=err)
                done_contests += 1
                progress.update(done_contests, len(c))
        progress.close()
        wrote = counts["applied"] + counts["recomputed"]
        if wrote:
            store.snapshot()
        stats = store.stats()
    elapsed = time.perf_counter() - t1
    print(
        f"ingested {len(contests)} contest(s) from {args.path} in {elapsed:.2f} s "
        f"(loading {t1 - t0:.2f} s): {counts['applied']} applied, {counts['duplicate']} "
        f"duplicate (unchanged), {counts['recomputed']} recomputed ({rerated} later contests "
        f"re-rated); {display_url(args.db)} now holds {stats['contests']} contests, "
        f"{stats['players']:,} players ({stats['system']})"
    )
    return 0


# ---------------------------------------------------------------------- info / upgrade
def _cmd_info(args: argparse.Namespace) -> int:
    _need_sqlalchemy()
    from podium.store.store import Store
    from podium.store.store import fmt_time as _fmt_time

    with Store.open(args.db) as store:
        st = store.stats()
    if args.json:
        print(json.dumps(st, allow_nan=True, sort_keys=True))
        return 0
    last = st["last_contest_time"]
    print(f"database:       {st['database']}")
    print(f"schema version: {st['schema_version']}")
    print(f"system:         {st['system']}")
    print(f"handle policy:  {st.get('handle_policy', 'exact')}")
    print(f"params:         {json.dumps(st['params'], allow_nan=True, sort_keys=True)}")
    print(f"contests:       {st['contests']} ({st['rated_contests']} rated)")
    print(f"players:        {st['players']} rated ({st['handles']} handles)")
    print(f"events:         {st['events']}")
    print(f"last contest:   {'-' if last is None else _fmt_time(last)}")
    snaps = ", ".join(f"{s['head_count']} contests ({s['bytes']:,} B)" for s in st["snapshots"])
    print(f"snapshots:      {snaps or '-'}")
    return 0


def _cmd_upgrade(args: argparse.Namespace) -> int:
    _need_sqlalchemy()
    from podium.store.engine import display_url
    from podium.store.store import Store

    before, after = Store.upgrade(args.db)
    if before == after:
        print(f"{display_url(args.db)}: schema version {after}, nothing to do")
    else:
        print(f"{display_url(args.db)}: migrated from schema version {before} to {after}")
    return 0


# ---------------------------------------------------------------------- corrections
def _correction_line(res: CorrectionResult, seconds: float) -> str:
    head = f"#{res.index} {res.name!r}"
    if res.contest_id != res.name:
        head += f" ({res.contest_id})"
    if res.status == "unchanged":
        return (f"unchanged {head}: the stored contest has exactly this content; nothing "
                "was re-rated")
    removed = f"{res.players_removed} player(s) removed"
    if res.status == "deleted":
        return (f"deleted {head}: re-rated {res.rerated} later contest(s), {removed}, in "
                f"{seconds:.1f} s")
    moved = "" if res.new_index == res.index else f", moved to #{res.new_index}"
    return (f"replaced {head}: {res.players} players (were {res.previous_players}){moved}; "
            f"re-rated {res.rerated} later contest(s), {removed}, {res.players_added} "
            f"added, in {seconds:.1f} s")


def _cmd_store_delete(args: argparse.Namespace) -> int:
    _need_sqlalchemy()
    from podium.store.store import Store

    with Store.open(args.db) as store:
        t0 = time.perf_counter()
        res = store.delete(args.contest_id)
        print(_correction_line(res, time.perf_counter() - t0))
    return 0


def _cmd_store_replace(args: argparse.Namespace) -> int:
    from podium.cli_common import load_options
    from podium.io import load_contests

    _need_sqlalchemy()
    from podium.store.store import Store

    history = load_contests(args.path, **load_options(args))
    for line in history.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if len(history.contests) != 1:
        raise PodiumError(f"{args.path}: holds {len(history.contests)} contests; `podium "
                          "store replace` takes a file of one contest")
    contest = history.contests[0]
    with Store.open(args.db, allow_future=args.allow_future) as store:
        t0 = time.perf_counter()
        try:
            res = store.replace(contest, contest_id=args.contest_id)
        except PodiumError as exc:
            raise PodiumError(f"{args.path}: {exc}") from None
        print(_correction_line(res, time.perf_counter() - t0))
        for w in res.warnings:
            print(f"  warning: {w}", file=sys.stderr)
    return 0
