"""Contests for elo-mmr-py (the Rust reference's bindings), read as its users do; and
Podium's Rater fed as its users feed it (:func:`podium_rater`).

``json.load`` of each ``N.json`` member of an Elo-MMR archive (streamed), one
``elo_mmr_py.Contest`` per file, in time order (ties by file index).  Shared by the
benchmarks' child processes, which put this folder on ``sys.path``
(:data:`CHILD_ENV`), so that every benchmark times the reference on the same input.
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent

#: Environment of a child process that imports this module.
CHILD_ENV = {**os.environ,
             "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH_DIR),
                                                         os.environ.get("PYTHONPATH")]))}


def reference_contests(data: str, n: int, *, dedupe_urls: bool = False) -> list[Any]:
    """The first ``n`` contests (by file index) of the archive ``data`` as
    ``elo_mmr_py.Contest`` objects sorted by time; with ``dedupe_urls`` a contest whose
    url an earlier file already had is dropped (as ``podium rate --dedupe``)."""
    import elo_mmr_py as e

    found = {}
    with tarfile.open(data, "r|gz") as tf:
        for m in tf:
            hit = re.search(r"(\d+)\.json$", m.name)
            if not (m.isfile() and hit) or int(hit.group(1)) >= n:
                continue
            fh = tf.extractfile(m)
            assert fh is not None
            d = json.load(fh)
            found[int(hit.group(1))] = e.Contest(
                [tuple(s) for s in d["standings"]], name=d["name"],
                time_seconds=d["time_seconds"], url=d.get("url"))
    keep = sorted(found)
    if dedupe_urls:
        seen: set[str] = set()
        unique = []
        for i in keep:
            url = found[i].url
            if url is None or url not in seen:
                seen.add(url)
                unique.append(i)
        keep = unique
    return [found[i] for i in sorted(keep, key=lambda i: (found[i].time_seconds, i))]


def podium_rater(system: str, history: list[Any], mode: str) -> Any:
    """A fresh ``podium.Rater`` of ``system`` after ``history``: one ``extend`` call
    (``mode="extend"``) or one ``add`` per contest (any other mode)."""
    from podium import Rater

    r = Rater(system)
    if mode == "extend":
        r.extend(history)
    else:
        for c in history:
            r.add(c)
    return r
