"""Ladders under kill -9 and concurrent writers (both databases; ``store_url``).

* A process writing one contest into ladder ``a`` is killed at every stage of its
  transaction (``tests/_store_cases.py``'s driver script, opened on the ladder): ladder
  ``a`` is left exactly as before (every row of every one of its tables), and every
  other ladder -- ``default`` and ``b`` -- is untouched.  On PostgreSQL, while the killed
  writer is stopped inside its transaction holding ladder ``a``'s lock, a contest is
  written to ladder ``b`` and commits: writes to different ladders do not wait for each
  other.  Afterwards both ladders go on and equal a Rater over their contests.
* A season start killed at each of its stages leaves the ladder as before.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import _store_cases as cases
from sqlalchemy import select

from podium import Contest, Rater
from podium.io import synthetic_contests, write_contest_dir
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine

SEASON_SCRIPT = """
import json, os, sys, time
from podium.store import Store
url, ladder = sys.argv[1], sys.argv[2]
want, _, marker = os.environ["PODIUM_STORE_TEST_HOOK"].partition(":")
seen = []
def hooks(stage):
    seen.append(stage)
    if stage == want:
        with open(marker + ".tmp", "w") as fh:
            json.dump({"pid": os.getpid(), "stages": seen}, fh)
        os.replace(marker + ".tmp", marker)
        time.sleep(120)
with Store.open(url, ladder=ladder, hooks=hooks) as store:
    store.new_season("soft", time_seconds=int(sys.argv[3]))
"""


def ladder_rows(url: str) -> dict[str, dict[str, list[tuple[Any, ...]]]]:
    """Every row of every table of every ladder (by ladder name), and of the shared
    tables (under ``""``)."""
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            ladders = conn.execute(select(S.ladders.c.name, S.ladders.c.prefix)).all()
            out: dict[str, dict[str, list[tuple[Any, ...]]]] = {}
            for name, prefix in ladders:
                t = S.ladder_tables(prefix)
                out[name] = {tab.name: [tuple(r) for r in conn.execute(
                    select(tab).order_by(*tab.primary_key.columns))] for tab in t.own}
            out[""] = {tab.name: [tuple(r) for r in conn.execute(
                select(tab).order_by(*tab.primary_key.columns))]
                for tab in (S.ladders, S.tokens)}
            return out
    finally:
        eng.dispose()


def _history(tag: str, seed: int, n: int) -> list[Contest]:
    cs = synthetic_contests(24, n, seed=seed, participation=0.7)
    return [Contest(c.standings, name=f"{tag} {c.name}", time_seconds=c.time_seconds)
            for c in cs]


def test_kill_in_one_ladder_leaves_every_other(store_url: str, tmp_path: Path) -> None:
    postgres = store_url.startswith("postgresql")
    a, b, d = _history("a", 1, 4), _history("b", 2, 12), _history("d", 3, 3)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(d)
        store.create_ladder("a", "mmr").ingest_many(a[:3])
        store.create_ladder("b", "glicko").ingest_many(b[:2])
    path = tmp_path / "next"
    write_contest_dir(a[3:], path)
    written = 2
    for stage in cases.INGEST_STAGES:
        before = ladder_rows(store_url)
        done: list[float] = []

        def write_b(done: list[float] = done, contest: Contest = b[written]) -> None:
            """Ladder b's write while ladder a's writer holds its lock (PostgreSQL)."""
            if not postgres:
                return
            t0 = time.monotonic()
            worker = threading.Thread(target=lambda: _ingest(store_url, "b", contest))
            worker.start()
            worker.join(60)
            assert not worker.is_alive(), "a write to ladder b waited for ladder a's lock"
            done.append(time.monotonic() - t0)

        reached = cases.kill_at_stage(
            [cases.INGEST_SCRIPT, store_url, str(path), "0", "1", "a"], stage, tmp_path,
            what=f"ingest into ladder a (stage {stage})", while_held=write_b)
        assert reached[-1] == stage
        after = ladder_rows(store_url)
        assert after["a"] == before["a"], stage
        assert after["default"] == before["default"], stage
        assert after[""] == before[""], stage
        if postgres:
            assert done and after["b"] != before["b"]
            written += 1
        else:
            assert after["b"] == before["b"], stage
        cases.check_integrity(store_url)
    with Store.open(store_url, ladder="a") as sa:
        sa.ingest(a[3])
        ref = Rater("mmr")
        ref.extend(a)
        cases.assert_store_equals_rater(sa, ref)
        rb = Rater("glicko")
        rb.extend(b[:written])
        cases.assert_store_equals_rater(sa.ladder("b"), rb)
        rd = Rater("mmr")
        rd.extend(d)
        cases.assert_store_equals_rater(sa.ladder("default"), rd)


def _ingest(url: str, ladder: str, contest: Contest) -> None:
    with Store.open(url, ladder=ladder) as store:
        store.ingest(contest)


def test_kill_while_a_season_starts(store_url: str, tmp_path: Path) -> None:
    cs = _history("s", 4, 4)
    with Store.create(store_url, "mmr") as store:
        store.create_ladder("s", "mmr").ingest_many(cs)
    when = str(cs[-1].time_seconds + 10)
    for stage in ("locked", "rated", "events", "players", "commit"):
        before = ladder_rows(store_url)
        cases.kill_at_stage([SEASON_SCRIPT, store_url, "s", when], stage, tmp_path,
                            what=f"new season (stage {stage})")
        assert ladder_rows(store_url) == before, stage
    with Store.open(store_url, ladder="s") as store:
        assert store.new_season("soft", time_seconds=int(when)).number == 2
