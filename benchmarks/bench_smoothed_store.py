"""The cost and the closeness of a ladder's smoothed companion (issue 29, item 4),
written into docs/history.md (block ``<!-- bench:history-store -->``).

On the first ``--contests`` Codeforces contests: two SQLite stores rated by ``mmr``
take the first ones in one batch; one of them then turns on its ``mmr-smooth``
companion (``Store.set_smoothing``: the stored history smoothed at once); both then
ingest the last ``--singles`` contests one at a time.  Reported:

* per single ingest, the companion's store against the plain one (ratio first, then
  seconds: median over the singles);
* turning the companion on (a full smoothing of the stored history, and its rows);
* the level offset (mean smoothed minus filtered display rating over every
  player-round) after the last contest;
* how far the stored curves (one bounded update per ingest) are from smoothing all the
  contests at once (``HistoryRater.extend``, the fixed point to ``tol``).

Usage::

    python benchmarks/bench_smoothed_store.py --contests 100 --singles 10 --write-docs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import data_dir, load_average, write_section  # noqa: E402

from podium.history_rater import HistoryRater  # noqa: E402
from podium.io import load_contests  # noqa: E402
from podium.store import Store  # noqa: E402
from podium.store.smoothing import companion_params  # noqa: E402

DOC = "docs/history.md"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contests", type=int, default=100)
    ap.add_argument("--singles", type=int, default=10)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    load0 = load_average()
    cs = list(load_contests(data_dir() / "codeforces" / "cache_codeforces.tar.gz",
                            limit=args.contests).contests)
    head, tail = cs[:-args.singles], cs[-args.singles:]
    rounds = sum(len(c) for c in cs)
    times: dict[str, list[float]] = {"plain": [], "smoothed": []}
    with tempfile.TemporaryDirectory() as tmp:
        stores = {name: Store.create(f"sqlite:///{tmp}/{name}.db", "mmr")
                  for name in times}
        for st in stores.values():
            st.ingest_many(head)
        t0 = time.perf_counter()
        status = stores["smoothed"].set_smoothing("mmr-smooth")
        enable_s = time.perf_counter() - t0
        assert status is not None
        for c in tail:  # alternate, so that both see the same load
            for name, st in stores.items():
                t0 = time.perf_counter()
                st.ingest(c)
                times[name].append(time.perf_counter() - t0)
        sm = stores["smoothed"]
        status = sm.smoothing()
        assert status is not None and status.offset is not None
        assert status.offset_mu is not None
        handles = sm.ratings_frame()["handle"].tolist()
        stored = {}
        for h in handles:
            curve = sm.smoothed_curve(h)
            assert curve is not None
            for p in curve.points:
                stored[(h, p.contest_name)] = p.smoothed
        params = companion_params("mmr", sm.params, "mmr-smooth", None)
        for st in stores.values():
            st.close()
    whole = HistoryRater("mmr-smooth", **params)
    t0 = time.perf_counter()
    whole.extend(cs)
    whole_s = time.perf_counter() - t0
    ev = whole.events.arrays()
    gaps = [abs(stored[(whole.players.handles[p], whole.contests.names[k])] - mu)
            for p, k, mu in zip(ev["player"].tolist(), ev["contest"].tolist(),
                                ev["mu"].tolist(), strict=True)]
    plain, smooth = statistics.median(times["plain"]), statistics.median(times["smoothed"])
    last = status.last
    moves = (f"{last['sweeps']} / {last['touched']:,} / {last['moved']:,} / "
             f"{last['max_past_change']:.1f}")
    gap = f"{statistics.fmean(gaps):.2f} / {max(gaps):.1f}"
    body = f"""
First {len(cs):,} Codeforces contests ({rounds:,} player-rounds), SQLite: {len(head)} in one
batch, then {len(tail)} ingested one at a time into a plain `mmr` ladder and into one with
the `mmr-smooth` companion (`update_sweeps` 3, `tol` 0.01).

| measure | value |
|---|---:|
| single ingest, companion against plain (median) | {smooth / plain:.1f}x |
| single ingest, plain s (median) | {plain:.3f} |
| single ingest, with companion s (median) | {smooth:.3f} |
| turning the companion on ({len(head)} contests smoothed, rows written) s | {enable_s:.2f} |
| smoothing all {len(cs)} contests at once (`HistoryRater.extend`) s | {whole_s:.2f} |
| last ingest: sweeps / curves rewritten / earlier ratings moved / largest move | {moves} |
| level offset (smoothed minus filtered display rating, mean over {status.pairs:,} \
player-rounds) | {status.offset:+.1f} |
| of which between the mu (the rest: Elo-MMR's display rule) | {status.offset_mu:+.1f} |
| stored curves against smoothing all at once: mean / max abs difference | {gap} |
"""
    print(body)
    if args.write_docs:
        write_section(DOC, "history-store", body, load_at_start=load0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
