"""Concurrent writers and readers against a running server on loopback.

Two scenarios, each on its own ``podium serve`` process and SQLite store, each
bounded in time (the writers must finish within ``WRITE_TIMEOUT`` seconds):

* **racing duplicates** -- 4 writer threads post the *same* ordered list of contests,
  each moving to the next contest only after the server answered for the previous
  one.  Whoever loses a race gets ``duplicate``; since "duplicate" means "already
  applied", no writer can ever post a contest before its predecessor is applied, so
  the final order is the list's and no answer may be 409.  Exactly one ``applied``
  per contest; the end state must equal the batch :class:`~podium.rater.Rater`.
* **distinct contests at one time** -- 4 writers post 4 different contests each, all
  with the same ``time_seconds`` (so none is older than another and any order is
  valid), to a server with 2 worker processes (3 on PostgreSQL).  Every contest must
  be applied once (no update lost), the stored indexes must be 0..15, and the end state must equal
  the Rater over the contests in the order the server applied them.  It runs on
  SQLite and, when ``PODIUM_TEST_POSTGRES_URL`` is set (``.ci/postgres.sh`` starts a
  server), on PostgreSQL (the ``store_url`` fixture of ``tests/conftest.py``; failed
  under ``PODIUM_CI`` when the server is missing).

Meanwhile reader threads hammer the GET routes: every answer must be 200 (or 404
for a player or contest not written yet), and no read may see half a contest (a
contest's changes cover all its players; a player's history has ``contests`` rows).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
httpx = pytest.importorskip("httpx")

from _service import Server, running_server  # noqa: E402

from podium import Rater  # noqa: E402
from podium.core.contest import Contest  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402

WRITERS = 4
READERS = 3
WRITE_TIMEOUT = 45.0


def _post(client: httpx.Client, srv: Server, c: Contest) -> httpx.Response:
    return client.post("/api/contests", json=c.to_json_dict(),
                       headers={"Authorization": f"Bearer {srv.token}"})


class Readers:
    """Reader threads checking every answer until stopped."""

    def __init__(self, srv: Server, handles: list[str], contest_ids: list[str]) -> None:
        self.srv = srv
        self.handles = handles
        self.contest_ids = contest_ids
        self.stop = threading.Event()
        self.failures: list[str] = []
        self.counts: Counter[str] = Counter()
        self.threads = [threading.Thread(target=self._run, args=(k,), daemon=True)
                        for k in range(READERS)]

    def __enter__(self) -> Readers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)

    def _check(self, ok: bool, what: str) -> None:
        if not ok and len(self.failures) < 20:
            self.failures.append(what)

    def _run(self, seed: int) -> None:
        rng = random.Random(seed)
        last_count = 0
        with httpx.Client(base_url=self.srv.url, timeout=30.0) as client:
            while not self.stop.is_set():
                kind = rng.choice(["health", "board", "player", "search", "contest"])
                try:
                    if kind == "health":
                        r = client.get("/api/health")
                        self._check(r.status_code == 200, f"health {r.status_code} {r.text}")
                        n = r.json()["contests"]
                        self._check(n >= last_count, f"contest count went back {last_count}->{n}")
                        last_count = n
                    elif kind == "board":
                        r = client.get("/api/leaderboard", params={"limit": 100})
                        self._check(r.status_code == 200, f"leaderboard {r.status_code} {r.text}")
                        ranks = [x["rank"] for x in r.json()["rows"]]
                        self._check(ranks == list(range(1, len(ranks) + 1)), "ranks")
                    elif kind == "player":
                        h = rng.choice(self.handles)
                        r = client.get("/api/players/" + quote(h, safe=""))
                        self._check(r.status_code in (200, 404), f"player {r.status_code}")
                        if r.status_code == 200:
                            p = r.json()
                            self._check(len(p["history"]) == p["contests"],
                                        f"{h}: {len(p['history'])} rows, {p['contests']} contests")
                    elif kind == "search":
                        r = client.get("/api/search", params={"prefix": rng.choice("pP")})
                        self._check(r.status_code == 200, f"search {r.status_code}")
                    else:
                        cid = rng.choice(self.contest_ids)
                        r = client.get("/api/contests/" + quote(cid, safe=""))
                        self._check(r.status_code in (200, 404), f"contest {r.status_code}")
                        if r.status_code == 200:
                            v = r.json()
                            self._check(len(v["changes"]) == v["players"],
                                        f"{cid}: half a contest ({len(v['changes'])} of "
                                        f"{v['players']})")
                    self.counts[kind] += 1
                except httpx.HTTPError as exc:
                    self._check(False, f"{kind}: {type(exc).__name__}: {exc}")


def _run_writers(target: Callable[[int], None]) -> list[str]:
    errors: list[str] = []

    def guarded(k: int) -> None:
        try:
            target(k)
        except Exception as exc:  # reported below
            errors.append(f"writer {k}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=guarded, args=(k,), daemon=True) for k in range(WRITERS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.1, WRITE_TIMEOUT - (time.monotonic() - start)))
    stuck = [k for k, t in enumerate(threads) if t.is_alive()]
    assert not stuck, f"writers {stuck} still running after {WRITE_TIMEOUT} s"
    return errors


def _assert_same_as_batch(srv: Server, ordered: list[Contest]) -> None:
    batch = Rater("mmr")
    batch.extend(ordered)
    want = batch.ratings()
    with httpx.Client(base_url=srv.url, timeout=30.0) as client:
        page = client.get("/api/leaderboard", params={"limit": 500}).json()
        ids = [c["contest_id"] for c in client.get(
            "/api/contests", params={"limit": 500}).json()["contests"]][::-1]
    assert ids == [c.name for c in ordered]
    rows = page["rows"]
    assert page["total"] == len(want)
    assert [x["handle"] for x in rows] == want["handle"].tolist()
    for key in ("mu", "sigma", "display_rating", "last_change", "max_display_rating"):
        assert [x[key] for x in rows] == pytest.approx(want[key].tolist(), rel=1e-12, abs=1e-9)
    assert [x["contests"] for x in rows] == want["contests"].tolist()


@pytest.mark.slow
def test_racing_writers_post_the_same_list(tmp_path: Path) -> None:
    contests = synthetic_contests(60, 16, seed=21, participation=0.6)
    handles = sorted({h for c in contests for h in c.handles})
    url = f"sqlite:///{tmp_path / 'race.db'}"
    statuses: list[Counter[str]] = [Counter() for _ in range(WRITERS)]
    with running_server(url, tmp_path, extra=["--system", "mmr"]) as srv:
        def writer(k: int) -> None:
            order = contests
            with httpx.Client(base_url=srv.url, timeout=60.0) as client:
                for c in order:
                    r = _post(client, srv, c)
                    status = r.json().get("status") if r.status_code in (200, 201) else None
                    statuses[k][status or f"HTTP {r.status_code}: {r.text[:200]}"] += 1
                    if k == 0:
                        time.sleep(0.001)  # a little jitter between the racers

        with Readers(srv, handles, [c.name for c in contests]) as readers:
            errors = _run_writers(writer)
        assert not errors, errors
        assert not readers.failures, readers.failures
        assert sum(readers.counts.values()) > 20, readers.counts
        total = sum(statuses, Counter())
        assert set(total) <= {"applied", "duplicate"}, total
        assert total["applied"] == len(contests), total
        assert total["duplicate"] == (WRITERS - 1) * len(contests), total
        _assert_same_as_batch(srv, contests)
        log = srv.log_text()
    assert "Traceback" not in log, log


@pytest.mark.slow
def test_distinct_writers(store_url: str, tmp_path: Path) -> None:
    """2 worker processes on SQLite, 3 on PostgreSQL."""
    workers = 2 if store_url.startswith("sqlite") else 3
    _distinct_writers(store_url, tmp_path, workers=workers)


def _distinct_writers(url: str, tmp_path: Path, *, workers: int) -> None:
    base = synthetic_contests(60, 16, seed=33, participation=0.6)
    t = 1_700_000_000
    contests = [Contest.from_arrays(c.handles, c.lo, c.hi, name=f"batch round {k}",
                                    time_seconds=t) for k, c in enumerate(base)]
    mine = [contests[k::WRITERS] for k in range(WRITERS)]
    handles = sorted({h for c in contests for h in c.handles})
    answers: list[list[Any]] = [[] for _ in range(WRITERS)]
    extra = ["--system", "mmr", "--workers", str(workers)]
    with running_server(url, tmp_path, extra=extra) as srv:
        def writer(k: int) -> None:
            with httpx.Client(base_url=srv.url, timeout=60.0) as client:
                for c in mine[k]:
                    r = _post(client, srv, c)
                    answers[k].append((r.status_code, r.json()))

        with Readers(srv, handles, [c.name for c in contests]) as readers:
            errors = _run_writers(writer)
        assert not errors, errors
        assert not readers.failures, readers.failures
        assert sum(readers.counts.values()) > 20, readers.counts
        flat = [a for w in answers for a in w]
        assert [code for code, _ in flat] == [201] * len(contests), flat
        assert sorted(body["index"] for _, body in flat) == list(range(len(contests)))
        assert sorted(body["contest_id"] for _, body in flat) == sorted(c.name for c in contests)
        # the order the server applied them in, and the batch run in that order
        by_index = {body["index"]: body["contest_id"] for _, body in flat}
        named = {c.name: c for c in contests}
        ordered = [named[by_index[i]] for i in range(len(contests))]
        _assert_same_as_batch(srv, ordered)
        log = srv.log_text()
    assert "Traceback" not in log, log
