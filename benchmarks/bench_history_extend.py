"""Several contests added at once to a ``ttt`` or ``whr`` fit (``HistoryRater.extend``,
``podium rate --resume``, a store batch): the engine's ``fit`` from the previous fit
against the whole history solved from scratch (what it did for two or more contests
before), same process.

The history is the first ``--contests`` international football results
(``bench_history.football_history``; ``ttt`` with ``p_draw`` 0.25).  For each ``k`` of
``--k`` the history but its last ``k`` matches is fitted in full (the engine's
defaults), then the ``k`` matches are added two ways through
:meth:`~podium.history.engines.WholeHistorySystem.fit`:

* *scratch*: the whole history solved from scratch;
* *from previous*: ``ttt``'s bounded update (up to ``TTT_UPDATE_CONTESTS`` contests;
  beyond, the same as scratch), ``whr``'s full solve started from the previous
  ratings (one contest: its bounded update).

Times are the best of ``--repeats``; the table gives the sweeps, the players
recomputed and the largest distance of a rating to the scratch solve (display scale:
``ttt`` skill units, ``whr`` Elo).

``--kernels`` prints instead what the update kernels (``ttt_update``, ``whr_update``)
leave when all ``k`` contests are given to them at once: their distance to the
scratch solve after the default 3 sweeps and when run until settled (at most 1,000
sweeps), with the sweeps taken.

``--write-docs`` writes the table into docs/history.md (block ``history-extend``;
with ``--kernels``, block ``history-extend-kernels``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average, write_section  # noqa: E402
from bench_history import football_history  # noqa: E402
from bench_history_update import PARAMS, best  # noqa: E402

from podium.history import ContestHistory  # noqa: E402
from podium.history.engines import TTT_UPDATE_CONTESTS, get_history_system  # noqa: E402

DOC = "docs/history.md"


def _history(n_contests: int) -> ContestHistory:
    """The first ``n_contests`` football matches (0: all)."""
    h_all, _ = football_history(data_dir() / "football")
    return h_all.prefix(min(n_contests or h_all.n_contests, h_all.n_contests))


def _about(h: ContestHistory) -> str:
    """The history in words, for a block's first line."""
    return (f"The first {h.n_contests:,} international football matches ({h.n_rows:,} "
            f"player-rounds, {int(np.unique(h.player).size)} teams)")


def run(h: ContestHistory, ks: list[int], systems: list[str], repeats: int) -> list[str]:
    """One table row per system and ``k`` (the last ``k`` contests of ``h`` added)."""
    n = h.n_contests
    rows = []
    for name in systems:
        system = get_history_system(name, **PARAMS[name])

        def fit(hh: ContestHistory, previous: Any = None) -> Any:
            m = hh.n_contests
            return system.fit(hh, contest_weight=np.ones(m),  # noqa: B023
                              perf_ceiling=np.full(m, np.inf), previous=previous)

        for k in ks:
            base = fit(h.prefix(n - k))
            full, t_full = best(lambda: fit(h), repeats)  # noqa: B023
            new, t_new = best(lambda: fit(h, base), repeats)  # noqa: B023
            dist = float(np.nanmax(np.abs(new.mu - full.mu)))
            rows.append(f"| `{name}` | {k} | {t_full:.3f} | {t_new:.3f} | "
                        f"{100 * t_new / t_full:.0f} % | {full.sweeps} | {new.sweeps} "
                        f"(converged/settled: {new.converged}) | {new.players} | "
                        f"{dist:.3g} |")
            print(rows[-1], flush=True)
    return rows


def kernels(n_contests: int, ks: list[int]) -> str:
    """The update kernels given ``k`` contests at once: 3 sweeps and until settled;
    the block's Markdown."""
    from podium.history.ttt import ttt, ttt_update
    from podium.history.whr import ELO_PER_NAT, whr, whr_update

    h = _history(n_contests)
    n = h.n_contests
    head = ("| *k* | `ttt` 3 sweeps | `ttt` settled (sweeps) | `whr` 3 sweeps, Elo | "
            "`whr` settled (sweeps), Elo |\n|---:|---:|---:|---:|---:|")
    print(head, flush=True)
    rows = []
    for k in ks:
        cells = [str(k)]
        prev_t, full_t = ttt(h.prefix(n - k), p_draw=0.25), ttt(h, p_draw=0.25)
        for sweeps in (3, 1000):
            up, _ = ttt_update(prev_t, h, p_draw=0.25, max_sweeps=sweeps)
            d = np.abs(up.mu[up.row_slot] - full_t.mu[full_t.row_slot]).max()
            cells.append(f"{d:.3g}" + ("" if sweeps == 3 else f" ({up.sweeps})"))
        prev_w, full_w = whr(h.prefix(n - k)), whr(h)
        for sweeps in (3, 1000):
            out = whr_update(prev_w, h, max_sweeps=sweeps)
            if out is None:
                cells.append("declined")
                continue
            d = np.abs(out[0].r[out[0].row_slot] - full_w.r[full_w.row_slot]).max()
            cells.append(f"{d * ELO_PER_NAT:.3g}"
                         + ("" if sweeps == 3 else f" ({out[0].sweeps})"))
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    return (f"{_about(h)}; the last *k* added at once to the full fit of the others by "
            "the update kernels (`ttt_update`, `whr_update`), after the default 3 sweeps "
            "and run until settled (at most 1,000 sweeps).  Largest distance of a rating "
            "to the full solve from scratch (`ttt` skill units, `whr` Elo).\n\n"
            + head + "\n" + "\n".join(rows))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--contests", type=int, default=5000,
                    help="the first N matches (0: all)")
    ap.add_argument("--k", default="2,5,10,20", help="contests added at once")
    ap.add_argument("--systems", default="ttt,whr")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--kernels", action="store_true",
                    help="the update kernels' distance to the full solve instead")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the table into docs/history.md (block history-extend, "
                         "or history-extend-kernels with --kernels)")
    args = ap.parse_args(argv)
    systems = args.systems.split(",")
    ks = [int(k) for k in args.k.split(",")]
    load = load_average()
    print(f"load {load} at the start", flush=True)
    if args.kernels:
        body = kernels(args.contests, ks)
        print(f"load {load_average()} at the end", flush=True)
        if args.write_docs:
            write_section(DOC, "history-extend-kernels", body, load_at_start=load)
        return
    h = _history(args.contests)
    run(h.prefix(min(60, h.n_contests)), [2], systems, 1)  # compile (or load) the kernels
    head = ("| engine | *k* | scratch s | from previous s | ratio | scratch sweeps | "
            "sweeps from previous | players | distance to scratch |\n"
            "|---|---:|---:|---:|---:|---:|---|---:|---:|")
    print(head, flush=True)
    rows = run(h, ks, systems, args.repeats)
    print(f"load {load_average()} at the end", flush=True)
    if args.write_docs:
        body = (f"{_about(h)}; the last *k* added to the full fit of "
                "the others through the engine's `fit`: *scratch* the whole history "
                "solved from scratch, *from previous* `ttt`'s bounded update (up to "
                f"{TTT_UPDATE_CONTESTS} contests; beyond, from scratch) and `whr`'s full "
                "solve started from the previous ratings (one contest: its bounded "
                f"update).  Best of {args.repeats}, same process, kernels compiled "
                "beforehand; distance: the largest to scratch (`ttt` skill units, `whr` "
                "Elo).\n\n" + head + "\n" + "\n".join(rows))
        write_section(DOC, "history-extend", body, load_at_start=load)


if __name__ == "__main__":
    main()
