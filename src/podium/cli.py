"""The ``podium`` command line.

``podium rate PATH --system NAME --out DIR`` rates a history and writes
``DIR/ratings.csv`` (one row per player), ``DIR/histories.csv`` (one row per
player and contest) and ``DIR/contests.csv``.  ``podium --help`` and
``podium rate --help`` explain every option.

Messages go to stderr: every failure ends in one ``podium: error: ...`` line
naming the file, line or member, or the option and its range.  Exit status: 0 done;
1 the input or the run failed (a bad file, a store that refuses); 2 the command line is
wrong (an unknown option, a value out of its range, a ``--set`` parameter the system
refuses: :class:`~podium.errors.UsageError`, :class:`~podium.errors.ConfigError`).
Warnings are printed as
``warning: ...`` lines by default (``-q`` silences them, ``-v`` adds notes and
lifts the cap of :data:`MAX_SHOWN_WARNINGS`).
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from podium.cli_common import (
    Progress,
    add_input_args,
    float_in,
    int_in,
    load_options,
    load_params,
)
from podium.errors import ConfigError, PodiumError, UsageError

__all__ = ["COMMAND_MODULES", "COMMAND_OWNERS", "MAX_SHOWN_WARNINGS", "OneLineErrors", "main"]

#: Without ``-v``, at most this many warnings are printed by one command (then a count).
MAX_SHOWN_WARNINGS = 20

#: Modules that add further subcommands: each has ``add_parsers(subparsers)``,
#: registering its commands with ``set_defaults(func=...)`` (a function of the
#: parsed namespace returning the exit status).
COMMAND_MODULES: tuple[str, ...] = (
    "podium.replay",
    "podium.store.cli",
    "podium.store.explain_cli",
    "podium.store.smooth_cli",
    "podium.store.admin_cli",
    "podium.store.ladder_cli",
    "podium.service.cli",
    "podium.io.fetch.cli",
    "podium.evaluation.cli",
    "podium.matchmaking.cli",
)

#: The module of :data:`COMMAND_MODULES` that registers each of their commands: a
#: command line naming one of them imports that module only (``podium eval`` need not
#: import the store, the service, the fetchers and matchmaking); any other (``--help``,
#: a misspelt command) imports them all.  ``tests/test_cold_start.py`` checks it
#: against what the modules register.
COMMAND_OWNERS: dict[str, str] = {
    "replay-codeforces": "podium.replay",
    **dict.fromkeys(("db-info", "db-upgrade", "ingest", "store"), "podium.store.cli"),
    "explain": "podium.store.explain_cli",
    "smooth": "podium.store.smooth_cli",
    **dict.fromkeys(("audit", "export", "token"), "podium.store.admin_cli"),
    "ladder": "podium.store.ladder_cli",
    "serve": "podium.service.cli",
    "fetch": "podium.io.fetch.cli",
    **dict.fromkeys(("compare", "eval", "incentive", "teams-sim", "tune"),
                    "podium.evaluation.cli"),
    "balance": "podium.matchmaking.cli",
}

DESCRIPTION = """\
Podium rates players from the results of ranked multiplayer contests
(Elo-MMR and friends).

Input (PATH): one Elo-MMR JSON contest file, a directory of them (0.json,
1.json, ... in index order), a .tar.gz of such a directory (read without
unpacking), or a long CSV (contest, time_seconds, player, place|score).
"""


class _StderrLog(logging.Handler):
    """Prints Podium's log records on stderr as ``warning: ...`` lines, and counts them.

    Parameters
    ----------
    show : int
        The lowest level printed (WARNING by default, INFO with ``-v``, ERROR with
        ``-q``); warnings below it are still counted.

    Attributes
    ----------
    cap : int or None
        Print at most this many warnings (``None``, the default: all); the rest are
        counted.  ``podium rate`` sets :data:`MAX_SHOWN_WARNINGS` unless ``-v``.
    warnings, shown : int
        The warnings logged, and printed.
    """

    def __init__(self, show: int) -> None:
        super().__init__(logging.DEBUG)
        self.show = show
        self.cap: int | None = None
        self.warnings = 0
        self.shown = 0

    def emit(self, record: logging.LogRecord) -> None:
        warning = logging.WARNING <= record.levelno < logging.ERROR
        if warning:
            self.warnings += 1
        if record.levelno < self.show:
            return
        if warning:
            if self.cap is not None and self.shown >= self.cap:
                return
            self.shown += 1
        try:
            text = f"{record.levelname.lower()}: {record.getMessage()}"
            if record.exc_info:  # log.exception: keep the traceback (the service's)
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            sys.stderr.write(text + "\n")
        except Exception:  # noqa: BLE001 - logging's contract: report, never raise
            self.handleError(record)


def _stderr_log() -> _StderrLog | None:
    """The handler :func:`main` installed on the ``podium`` logger, if any."""
    for h in logging.getLogger("podium").handlers:
        if isinstance(h, _StderrLog):
            return h
    return None


def _warning_summary() -> str | None:
    """The closing line about the warnings of this command (``None``: there were none)."""
    log = _stderr_log()
    if log is None or not log.warnings:
        return None
    n = log.warnings
    if log.shown == n:
        return f"{n} warning(s), shown above"
    if log.show > logging.WARNING:
        return f"{n} warning(s), not shown (--quiet)"
    return f"{n} warning(s); the first {log.shown} are shown above, -v shows all"


def _cmd_rate(args: argparse.Namespace) -> int:
    from podium.history_rater import load_rater, make_rater
    from podium.io import check_history, load_contests
    from podium.io.small_results import check_output_dir

    err = sys.stderr
    out = Path(args.out)
    check_output_dir(out)  # before any work: a bad --out must not cost a whole run
    if args.checkpoint:
        _check_output_file(args.checkpoint, "--checkpoint")
    file_system, params = load_params(args.params, args.set or [])
    if args.resume:
        rater = load_rater(args.resume)
        if args.system and args.system != rater.system_name:
            raise PodiumError(
                f"--system {args.system} differs from the checkpoint's system "
                f"{rater.system_name!r} ({args.resume})"
            )
        if params:
            raise PodiumError("parameters cannot be changed when resuming from a checkpoint")
        print(f"resumed {args.resume}: {rater.contests_processed} contests, "
              f"{rater.num_players} players ({rater.system_name})", file=err)
    else:
        system = args.system or file_system or "mmr"
        rater = make_rater(system, **params)
    from podium._jit import announce_compile

    announce_compile(rater.system_name, rater.system, err)

    t0 = time.perf_counter()
    history = load_contests(
        args.path, limit=args.n, dedupe_urls=args.dedupe, sort_by_time=args.sort_by_time,
        **load_options(args),
    )
    load_s = time.perf_counter() - t0
    for line in history.changes:
        print(f"changed: {line}", file=err)
    handler = _stderr_log()
    if handler is not None and not getattr(args, "verbose", False):
        handler.cap = MAX_SHOWN_WARNINGS  # a history may have thousands: the first ones
    log = logging.getLogger("podium.cli")
    for line in history.warnings:
        log.warning(line)
    warnings = check_history(history.contests, history.indices)
    for line in warnings:
        log.warning(line)
    if warnings and not (args.dedupe and args.sort_by_time) and not getattr(args, "quiet", 0):
        print("hint: --dedupe removes contests repeated under the same url, "
              "--sort-by-time puts contests in time order", file=err)
    contests = history.contests
    skip = 0
    if args.resume and rater.contests_processed:
        skip = _resume_offset(rater, contests, args.resume)
        if skip:
            print(f"skipping the first {skip} contests of {args.path}: already in the checkpoint",
                  file=err)
    todo = contests[skip:]
    progress = Progress(len(todo), err, not args.no_progress)
    skipped = 0
    done = 0

    def rated(rep: Any) -> None:  # the Rater logs each round's warnings (see _StderrLog)
        nonlocal skipped, done
        done += 1
        skipped += rep.skipped
        progress.update(done, rep.players)

    t1 = time.perf_counter()
    # in batches: small rounds (lobbies) are rated in one compiled loop, bit for bit
    # as one add() per contest
    # (a whole-history system adds them all, then smooths the whole history once)
    rater.extend(todo, progress=rated)
    progress.close()
    rate_s = time.perf_counter() - t1

    t2 = time.perf_counter()
    written = _write_outputs(rater, out, histories=not args.no_histories, fmt=args.format,
                             csv_safe=args.csv_safe)
    write_s = time.perf_counter() - t2
    if args.checkpoint:
        rater.save(args.checkpoint)
        print(f"checkpoint written: {args.checkpoint}", file=err)
    print(
        f"rated {len(todo)} contests ({progress.rows:,} player-rounds, "
        f"{_unrated_note(rater, todo, skipped)}) with {rater.system_name} in {rate_s:.2f} s "
        f"(loading {load_s:.2f} s, writing {write_s:.2f} s); {rater.num_players:,} players "
        f"-> {written[0]}",
        file=err,
    )
    summary = _warning_summary()
    if summary:
        print(summary, file=err)
    return 0


def _unrated_note(rater: Any, contests: list[Any], skipped: int) -> str:
    """What the summary line of ``podium rate`` says about draws (contests in which every
    side tied, of two sides or more) and about the contests left unrated."""
    if rater.system.all_tied == "skip":
        return (f"{skipped} skipped: one side only, or everybody tied with "
                "all_tied='skip'")
    draws = sum(1 for c in contests if c.is_outcome_free and c.n_teams > 1)
    return f"{draws} draw{'' if draws == 1 else 's'} rated, {skipped} skipped: one side only"


def _check_output_file(path: str, option: str) -> None:
    """Fail before any work when ``path`` cannot be written as a file: it is a
    directory, or its directory is missing or not a directory."""
    p = Path(path)
    if p.is_dir():
        raise PodiumError(f"{option} {p} is a directory; give a file name")
    parent = p.parent
    if not parent.is_dir():
        what = "does not exist" if not parent.exists() else "is not a directory"
        raise PodiumError(f"{option} {p}: its directory {parent} {what}")


def _resume_offset(rater: Any, contests: list[Any], where: str) -> int:
    """How many leading contests of the input the checkpoint already holds."""
    k = rater.contests_processed
    recs = rater.contests
    def same(i: int) -> bool:
        c = contests[i]
        r = recs[i]
        return bool(c.name == r.name and c.time_seconds == r.time_seconds and c.url == r.url)
    if len(contests) >= k and all(same(i) for i in range(k)):
        return k
    if contests and any(
        contests[0].name == r.name and contests[0].time_seconds == r.time_seconds for r in recs
    ):
        raise PodiumError(
            f"the input overlaps the contests in checkpoint {where} but does not start with "
            f"exactly those {k} contests; pass either the full history or only new contests"
        )
    return 0


def _write_outputs(rater: Any, out: Path, *, histories: bool, fmt: str = "csv",
                   csv_safe: bool = False) -> list[Path]:
    """``OUT/ratings.FMT``, ``OUT/contests.FMT`` and ``OUT/histories.FMT`` (atomic each),
    straight from the rater's arrays (see :mod:`podium.io.results`); the CSV of a small
    rater without importing Arrow (:mod:`podium.io.small_results`, the same bytes)."""
    if fmt == "csv" and not csv_safe:
        from podium.io.small_results import write_small_results

        written = write_small_results(rater, out, histories=histories)
        if written is not None:
            return written
    from podium.io.results import write_results

    return write_results(rater, out, fmt=fmt, histories=histories, csv_safe=csv_safe)


def _cmd_systems(args: argparse.Namespace) -> int:
    import dataclasses

    from podium.systems import SYSTEMS, get_system, system_spec

    for name, (_cls, _preset, desc) in SYSTEMS.items():
        print(f"{name}: {desc}")
        if args.verbose:
            sysobj = get_system(name)
            spec = system_spec(name)
            print(f"    teams: {type(sysobj).team_rule or 'team rounds refused'}")
            space = spec.search_spaces.get(name)
            print("    tuned by podium tune: " + (", ".join(
                f"{p} in [{r.low:g}, {r.high:g}]{' (log)' if r.log else ''}"
                for p, r in space.items()) if space else "no search space"))
            print(f"    kernels: {spec.compile_seconds:g} s to compile once (one idle core)"
                  if spec.kernels else "    kernels: none")
            for f in dataclasses.fields(sysobj):
                print(f"    {f.name} = {getattr(sysobj, f.name)!r}")
    from podium.history.engines import HISTORY_SYSTEMS

    for name, cls in HISTORY_SYSTEMS.items():  # re-estimate every past rating
        print(f"{name}: {cls.description}")
        if args.verbose:
            print("    every past rating revised by later contests (docs/history.md); "
                  "histories.csv is the smoothed learning curve")
            for k, v in cls.defaults.items():
                print(f"    {k} = {v!r}")
    return 0


def _cmd_example(args: argparse.Namespace) -> int:
    from podium.io import synthetic_contests, write_contest_dir
    from podium.io.small_results import check_output_dir

    check_output_dir(args.out, "DIR")

    contests = synthetic_contests(
        args.players, args.rounds, seed=args.seed, participation=args.participation,
        tie_resolution=args.tie_resolution,
    )
    write_contest_dir(contests, args.out)
    rows = sum(len(c) for c in contests)
    print(f"wrote {len(contests)} synthetic contests ({rows:,} player-rounds) to {args.out}/",
          file=sys.stderr)
    return 0


#: The commands this module defines itself (no other module is imported for them, and
#: none of them opens a store, so :func:`main` names no audit actor for them).
OWN_COMMANDS = frozenset({"rate", "systems", "example"})
#: Commands of other modules that are, like :data:`OWN_COMMANDS`, one short pass over
#: files and open no store: :func:`main` tunes the collector for them and names no
#: audit actor (an evaluation of a history builds as many objects as ``podium rate``).
SHORT_COMMANDS = OWN_COMMANDS | {"eval", "compare"}


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The subcommand named on the command line (the first word that is not an option)."""
    words = sys.argv[1:] if argv is None else argv
    return next((w for w in words if not w.startswith("-")), None)


class OneLineErrors(argparse.ArgumentParser):
    """An argument parser whose refusal is one ``podium: error: ...`` line (the command,
    the option and why; ``--help`` for the usage) and exit status 2; its subcommands'
    parsers are of the same kind."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("podium").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"podium: error: {where}{message} (see {self.prog} --help)\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``podium`` parser.

    Parameters
    ----------
    argv:
        The command line about to be parsed (default ``sys.argv[1:]``).  When it names
        one of :data:`OWN_COMMANDS`, the modules of :data:`COMMAND_MODULES` are not
        imported (they pull in the store, the service and the evaluation tools, a
        large part of a short command's run time); when it names one of
        :data:`COMMAND_OWNERS`, only the module that registers it is; otherwise all
        are.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = OneLineErrors(
        prog="podium", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every warning (not only the first "
                        f"{MAX_SHOWN_WARNINGS}) and informational notes")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="print no warnings (errors and the summary only)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser(
        "rate", help="rate a contest history and write ratings.csv",
        description="Rate the contests of PATH in order and write DIR/ratings.csv "
        "(handle, mu, sigma, display_rating, contests, last_contest_time, "
        "max_display_rating, last_change), DIR/histories.csv (handle, contest_index, mu, "
        "sigma, display_rating, perf, place: one row per player and contest) and "
        "DIR/contests.csv (contest_index, name, time_seconds, url, players, skipped). "
        "Floats are unrounded: shortest text that reads back bit-equal.",
    )
    r.add_argument("path", metavar="PATH",
                   help="JSON contest file, directory of N.json files, .tar.gz of one, or CSV")
    r.add_argument("--system", "-s", default=None,
                   help="rating system (default mmr; `podium systems` lists them, the "
                   "whole-history ones ttt, whr, mmr-smooth last)")
    r.add_argument("--out", "-o", required=True, metavar="DIR", help="output directory")
    r.add_argument("-n", type=int_in(0), default=None, metavar="N",
                   help="rate only the first N contests of PATH")
    r.add_argument("--params", metavar="FILE",
                   help="JSON or TOML file of named parameters: "
                   "{\"system\": ..., \"params\": {...}} or a flat object")
    r.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override one parameter, e.g. --set weight_limit=0.3 (repeatable)")
    r.add_argument("--checkpoint", metavar="FILE",
                   help="save the full rating state to FILE at the end (atomic)")
    r.add_argument("--resume", metavar="FILE",
                   help="start from a checkpoint; contests of PATH already in it are skipped")
    r.add_argument("--dedupe", action="store_true",
                   help="drop contests whose url repeats an earlier one (and say which)")
    r.add_argument("--sort-by-time", action="store_true",
                   help="stable-sort contests by time_seconds (and say what moved)")
    r.add_argument("--no-histories", action="store_true",
                   help="do not write histories.csv (the largest output)")
    r.add_argument("--format", choices=("csv", "parquet"), default="csv",
                   help="output format: csv (default) or parquet (ratings.parquet, "
                   "histories.parquet, contests.parquet)")
    r.add_argument("--csv-safe", action="store_true",
                   help="write CSV text cells that a spreadsheet would run as formulas "
                   "(=, +, -, @, tab, CR first) with a ' in front, for a file opened in a "
                   "spreadsheet; by default the values are written as they are, for "
                   "programs (docs/service.md, \"CSV and spreadsheets\")")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_input_args(r)
    r.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="as `podium -v`: print every warning and informational notes")
    r.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="as `podium -q`: print no warnings")
    r.set_defaults(func=_cmd_rate)

    s = sub.add_parser("systems", help="list the rating systems (with -v: their parameters)")
    s.add_argument("-v", "--verbose", action="store_true", help="show every parameter")
    s.set_defaults(func=_cmd_systems)

    e = sub.add_parser("example", help="write a synthetic history ([EbtekarLiu2021], Sec. 6.1)")
    e.add_argument("out", metavar="DIR", help="directory to write 0.json, 1.json, ...")
    e.add_argument("--players", type=int_in(2), default=2000, help="players (default 2000)")
    e.add_argument("--rounds", type=int_in(1), default=30, help="rounds (default 30)")
    e.add_argument("--seed", type=int_in(0, 2**32 - 1), default=0,
                   help="random seed (default 0)")
    e.add_argument("--participation", type=float_in(0.0, 1.0, open_lo=True), default=0.6,
                   help="chance a player joins a round (default 0.6; the paper: 1)")
    e.add_argument("--tie-resolution", type=float_in(0.0, 1e6), default=5.0,
                   help="round performances to this many points, creating ties (default 5)")
    e.set_defaults(func=_cmd_example)

    command = _command_of(argv)
    if command in OWN_COMMANDS:
        return parser
    import importlib

    owner = COMMAND_OWNERS.get(command or "")
    for module in COMMAND_MODULES if owner is None else (owner,):
        importlib.import_module(module).add_parsers(sub)
    return parser


def _short_lived_gc() -> None:
    """Tune Python's garbage collector for a ``podium`` process (see :func:`main`).

    A command's start-up imports NumPy, Numba (and the compiler registries it loads
    with the first cached kernel) and Arrow: about 130,000 long-lived objects, which
    the collector's older generations walk again and again as the heap grows (measured
    on a warm ``podium rate`` of three contests: 64 ms of collections, 13 ms with the
    thresholds below).  The youngest generation is collected as usual, so short-lived
    reference cycles are still freed at once; the middle one is collected 100 times
    less often, and the whole heap only after 1000 of those.
    """
    young = gc.get_threshold()[0]
    gc.set_threshold(young, 1000, 1000)


def _skip_final_collection() -> None:
    """Skip the collector's walk over every object at interpreter exit.

    Python's finalisation collects the whole heap once more (measured: 60-100 ms of a
    warm ``podium rate``, most of it freeing Numba's objects one by one).  Frozen
    objects are left to the operating system; the output files are closed and
    renamed into place before this, and the standard streams and ``atexit`` handlers
    are flushed and run as usual.
    """
    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``podium`` command.

    Parameters
    ----------
    argv:
        The arguments (without the program name).  ``None``, the default, reads this
        process's command line (``sys.argv[1:]``): the ``podium`` command and ``python
        -m podium``.  Only then is the whole process one command, and ``main`` skips
        the collection at exit (:func:`_skip_final_collection`) and, for the commands
        of :data:`SHORT_COMMANDS` (not a long-lived server), tunes the collector for a
        short process (:func:`_short_lived_gc`): a warm ``podium rate`` of a small
        file spends a fifth of its time in collections otherwise.

    Returns
    -------
    int
        The exit status.
    """
    if argv is not None:
        return _main(argv)
    if _command_of(None) in SHORT_COMMANDS:
        _short_lived_gc()
    try:
        return _main(argv)
    finally:
        _skip_final_collection()


def _main(argv: Sequence[str] | None) -> int:
    import logging

    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    verbose = bool(getattr(args, "verbose", False))
    quiet = bool(getattr(args, "quiet", False)) and not verbose
    logging.basicConfig(  # other libraries' messages
        level=logging.WARNING if verbose else logging.ERROR,
        format="%(levelname)s: %(message)s",
    )
    show = logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING
    handler = _StderrLog(show)
    plog = logging.getLogger("podium")
    saved = (plog.level, plog.propagate)
    plog.addHandler(handler)
    plog.setLevel(logging.INFO)
    plog.propagate = False
    try:
        if args.command in SHORT_COMMANDS:  # they open no store: no audit actor to name
            return int(args.func(args))
        from podium.store.actor import acting_as, cli_actor

        with acting_as(cli_actor()):  # the audit log's "who" of this command's writes
            return int(args.func(args))
    except (UsageError, ConfigError) as exc:
        print(f"podium: error: {exc}", file=sys.stderr)
        return 2
    except PodiumError as exc:
        hint = ""
        if (getattr(exc, "raw_keeps", False) and hasattr(args, "raw_handles")
                and not args.raw_handles):
            hint = " (--raw-handles keeps handles as written)"
        print(f"podium: error: {exc}{hint}", file=sys.stderr)
        return 1
    except ArithmeticError as exc:  # every value is checked: a numeric failure is a bug
        print(f"podium: error: the computation failed ({type(exc).__name__}: {exc}); the "
              "parameters and contest weights were in their ranges (or --any-weight was "
              "given): please report it", file=sys.stderr)
        return 1
    except OSError as exc:  # a file the command writes or reads outside the loaders
        print(f"podium: error: {_os_error(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("podium: interrupted", file=sys.stderr)
        return 130
    finally:
        plog.removeHandler(handler)
        plog.setLevel(saved[0])
        plog.propagate = saved[1]


def _os_error(exc: OSError) -> str:
    """An :class:`OSError` as one line: ``file: reason``."""
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    reason = exc.strerror or str(exc)
    return f"{' -> '.join(names)}: {reason}" if names else reason


if __name__ == "__main__":
    raise SystemExit(main())


