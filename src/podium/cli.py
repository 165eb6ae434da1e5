"""The ``podium`` command line.

``podium rate PATH --system NAME --out DIR`` rates a history and writes
``DIR/ratings.csv`` (one row per player), ``DIR/histories.csv`` (one row per
player and contest) and ``DIR/contests.csv``.  ``podium --help`` and
``podium rate --help`` explain every option.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from podium.errors import PodiumError

__all__ = ["COMMAND_MODULES", "main"]

#: Modules that add further subcommands: each has ``add_parsers(subparsers)``,
#: registering its commands with ``set_defaults(func=...)`` (a function of the
#: parsed namespace returning the exit status).
COMMAND_MODULES: tuple[str, ...] = (
    "podium.replay",
    "podium.store.cli",
    "podium.service.cli",
    "podium.io.fetch.cli",
    "podium.evaluation.cli",
)

DESCRIPTION = """\
Podium rates players from the results of ranked multiplayer contests
(Elo-MMR and friends).

Input (PATH): one Elo-MMR JSON contest file, a directory of them (0.json,
1.json, ... in index order), a .tar.gz of such a directory (read without
unpacking), or a long CSV (contest, time_seconds, player, place|score).
"""


def _parse_value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if low in ("inf", "+inf", "infinity"):
        return math.inf
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _load_params(path: str | None, sets: Sequence[str]) -> tuple[str | None, dict[str, Any]]:
    """Parameters from a JSON/TOML config file (named keys) and ``--set k=v`` overrides."""
    system: str | None = None
    params: dict[str, Any] = {}
    if path:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise PodiumError(f"{path}: cannot read parameter file ({exc.strerror})") from None
        try:
            if p.suffix.lower() == ".toml":
                doc = tomllib.loads(raw.decode("utf-8"))
            else:
                doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise PodiumError(f"{path}: not a valid JSON/TOML parameter file ({exc})") from None
        if not isinstance(doc, dict):
            raise PodiumError(f"{path}: a parameter file must hold named keys (an object)")
        system = doc.get("system")
        inner = doc.get("params", {k: v for k, v in doc.items() if k != "system"})
        if not isinstance(inner, dict):
            raise PodiumError(f"{path}: 'params' must be an object of named parameters")
        params.update(inner)
    for item in sets:
        if "=" not in item:
            raise PodiumError(f"--set expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        params[k.strip()] = _parse_value(v.strip())
    return system, params


class _Progress:
    """A one-line progress bar on a terminal (nothing when not a TTY)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.enabled = enabled and stream.isatty()
        self.start = time.perf_counter()
        self.rows = 0
        self.last = 0.0

    def update(self, done: int, rows: int) -> None:
        self.rows += rows
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        width = 30
        filled = int(width * done / self.total)
        elapsed = now - self.start
        self.stream.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} contests, "
            f"{self.rows:,} player-rounds, {elapsed:.1f} s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _cmd_rate(args: argparse.Namespace) -> int:
    from podium.io import check_history, load_contests
    from podium.io.results import check_output_dir
    from podium.rater import Rater

    err = sys.stderr
    out = Path(args.out)
    check_output_dir(out)  # before any work: a bad --out must not cost a whole run
    file_system, params = _load_params(args.params, args.set or [])
    if args.resume:
        rater = Rater.load(args.resume)
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
        rater = Rater(system, **params)
    from podium._jit import announce_compile

    announce_compile(rater.system_name, rater.system, err)

    t0 = time.perf_counter()
    history = load_contests(
        args.path, limit=args.n, dedupe_urls=args.dedupe, sort_by_time=args.sort_by_time
    )
    load_s = time.perf_counter() - t0
    for line in history.changes:
        print(f"changed: {line}", file=err)
    warnings = check_history(history.contests, history.indices)
    for line in warnings:
        print(f"warning: {line}", file=err)
    if warnings and not (args.dedupe and args.sort_by_time):
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
    progress = _Progress(len(todo), err, not args.no_progress)
    n_warn = 0
    skipped = 0
    t1 = time.perf_counter()
    for k, c in enumerate(todo, 1):
        rep = rater.add(c)
        n_warn += len(rep.warnings)
        skipped += rep.skipped
        progress.update(k, len(c))
    progress.close()
    rate_s = time.perf_counter() - t1

    t2 = time.perf_counter()
    written = _write_outputs(rater, out, histories=not args.no_histories, fmt=args.format)
    write_s = time.perf_counter() - t2
    if args.checkpoint:
        rater.save(args.checkpoint)
        print(f"checkpoint written: {args.checkpoint}", file=err)
    print(
        f"rated {len(todo)} contests ({progress.rows:,} player-rounds, {skipped} skipped "
        f"because everybody tied) with {rater.system_name} in {rate_s:.2f} s "
        f"(loading {load_s:.2f} s, writing {write_s:.2f} s); {rater.num_players:,} players "
        f"-> {written[0]}",
        file=err,
    )
    if n_warn:
        print(f"{n_warn} warning(s) during rating; see the log above or rerun with -v", file=err)
    return 0


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


def _write_outputs(rater: Any, out: Path, *, histories: bool, fmt: str = "csv") -> list[Path]:
    """``OUT/ratings.FMT``, ``OUT/contests.FMT`` and ``OUT/histories.FMT`` (atomic each),
    straight from the rater's arrays (see :mod:`podium.io.results`)."""
    from podium.io.results import write_results

    return write_results(rater, out, fmt=fmt, histories=histories)


def _cmd_systems(args: argparse.Namespace) -> int:
    import dataclasses

    from podium.systems import SYSTEMS, get_system

    for name, (_cls, _preset, desc) in SYSTEMS.items():
        print(f"{name}: {desc}")
        if args.verbose:
            sysobj = get_system(name)
            print(f"    teams: {type(sysobj).team_rule or 'team rounds refused'}")
            for f in dataclasses.fields(sysobj):
                print(f"    {f.name} = {getattr(sysobj, f.name)!r}")
    return 0


def _cmd_example(args: argparse.Namespace) -> int:
    from podium.io import synthetic_contests, write_contest_dir

    contests = synthetic_contests(
        args.players, args.rounds, seed=args.seed, participation=args.participation,
        tie_resolution=args.tie_resolution,
    )
    write_contest_dir(contests, args.out)
    rows = sum(len(c) for c in contests)
    print(f"wrote {len(contests)} synthetic contests ({rows:,} player-rounds) to {args.out}/",
          file=sys.stderr)
    return 0


#: The commands this module defines itself (no other module is imported for them).
OWN_COMMANDS = frozenset({"rate", "systems", "example"})


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The subcommand named on the command line (the first word that is not an option)."""
    words = sys.argv[1:] if argv is None else argv
    return next((w for w in words if not w.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``podium`` parser.

    Parameters
    ----------
    argv:
        The command line about to be parsed (default ``sys.argv[1:]``).  When it names
        one of :data:`OWN_COMMANDS`, the modules of :data:`COMMAND_MODULES` are not
        imported (they pull in the store, the service and the evaluation tools, a
        large part of a short command's run time); otherwise all are.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="podium", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every warning")
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
                   help="rating system (default mmr; `podium systems` lists them)")
    r.add_argument("--out", "-o", required=True, metavar="DIR", help="output directory")
    r.add_argument("-n", type=int, default=None, metavar="N",
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
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_rate)

    s = sub.add_parser("systems", help="list the rating systems (with -v: their parameters)")
    s.add_argument("-v", "--verbose", action="store_true", help="show every parameter")
    s.set_defaults(func=_cmd_systems)

    e = sub.add_parser("example", help="write a synthetic history ([EbtekarLiu2021], Sec. 6.1)")
    e.add_argument("out", metavar="DIR", help="directory to write 0.json, 1.json, ...")
    e.add_argument("--players", type=int, default=2000, help="players (default 2000)")
    e.add_argument("--rounds", type=int, default=30, help="rounds (default 30)")
    e.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    e.add_argument("--participation", type=float, default=0.6,
                   help="chance a player joins a round (default 0.6; the paper: 1)")
    e.add_argument("--tie-resolution", type=float, default=5.0,
                   help="round performances to this many points, creating ties (default 5)")
    e.set_defaults(func=_cmd_example)

    if _command_of(argv) in OWN_COMMANDS:
        return parser
    import importlib

    for module in COMMAND_MODULES:
        importlib.import_module(module).add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import logging

    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.WARNING if args.verbose else logging.ERROR,
        format="%(levelname)s: %(message)s",
    )
    try:
        return int(args.func(args))
    except PodiumError as exc:
        print(f"podium: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("podium: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())


