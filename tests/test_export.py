"""Streamed exports (``podium.store.export``, ``GET /api/export/...``, ``podium export``):
equal to the store's leaderboard and events to the last bit, in several chunks, from one
consistent state; on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import math
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

import pyarrow.parquet as pq  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest  # noqa: E402
from podium.cli import main  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store, StoreError  # noqa: E402
from podium.store.export import HISTORY_COLUMNS, RATING_COLUMNS  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _history() -> list[Contest]:
    out = list(synthetic_contests(25, 6, seed=3, participation=0.8))
    # a team round, so that the team column is exercised
    out.append(Contest.from_teams([["red", 0, 0, ["p00", "p01"]], ["blue", 1, 1, ["p02"]]],
                                  name="cup", time_seconds=out[-1].time_seconds + 10))
    return out


HISTORY = _history()


@pytest.fixture()
def store(store_url: str) -> Any:
    with Store.create(store_url, "mmr") as s:
        s.ingest_many(HISTORY)
        yield s


def expected_ratings(store: Store) -> list[tuple[Any, ...]]:
    rows = store.leaderboard(limit=10**6)
    return [(r.rank, r.handle, r.display_rating, r.mu, r.sigma, r.contests,
             r.last_contest_time, r.max_display_rating, r.last_change) for r in rows]


def stored_part(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The stored columns of exported ratings, after checking the as-of columns: this
    system (mmr) has no time drift, so the ratings as of the export's time are the
    stored ones, and no player is provisional without a rule."""
    names = [n for n, _t in RATING_COLUMNS]
    for r in rows:
        d = dict(zip(names, r, strict=True))
        assert (d["mu_as_of"], d["sigma_as_of"], d["display_rating_as_of"]) == (
            d["mu"], d["sigma"], d["display_rating"])
        assert d["provisional"] is False and d["as_of"] >= d["last_contest_time"]
    return [r[:names.index("as_of")] for r in rows]


def expected_history(store: Store) -> set[tuple[Any, ...]]:
    """Every event as the players' histories show it (the store's own reads)."""
    out = set()
    for handle in [r.handle for r in store.leaderboard(limit=10**6)]:
        view = store.player(handle)
        assert view is not None
        for h in view.history:
            out.add((h.index, h.contest_id, h.contest_name, h.time_seconds, handle, h.place,
                     h.perf, h.mu, h.sigma, h.display_rating, h.change, h.team))
    return out


def _parse_csv(data: bytes, columns: tuple[tuple[str, Any], ...]) -> list[tuple[Any, ...]]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows[0] == [n for n, _t in columns]
    out = []
    for r in rows[1:]:
        vals: list[Any] = []
        for v, (_n, t) in zip(r, columns, strict=True):
            kind = str(t)
            if v == "":
                vals.append(None)
            elif kind == "int64":
                vals.append(int(v))
            elif kind == "double":
                vals.append(float(v))  # repr round-trips exactly
            elif kind == "bool":
                vals.append(v == "True")
            else:
                vals.append(v)
        out.append(tuple(vals))
    return out


def _history_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    names = [n for n, _t in HISTORY_COLUMNS]
    d = dict(zip(names, row, strict=True))
    return (d["contest_index"], d["contest_id"], d["contest_name"], d["time_seconds"],
            d["handle"], d["place"], d["perf"], d["mu"], d["sigma"], d["display_rating"],
            d["change"], d["team"])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_ratings_equal_the_leaderboard(store: Store, fmt: str) -> None:
    pieces = list(store.export("ratings", fmt, chunk_rows=4))
    data = b"".join(pieces)
    want = expected_ratings(store)
    assert len(want) == 25
    if fmt == "csv":
        got = _parse_csv(data, RATING_COLUMNS)
        assert len(pieces) == 1 + math.ceil(len(want) / 4)  # header, then one per chunk
    else:
        table = pq.read_table(io.BytesIO(data))
        assert table.schema.names == [n for n, _t in RATING_COLUMNS]
        got = [tuple(r.values()) for r in table.to_pylist()]
        assert pq.ParquetFile(io.BytesIO(data)).num_row_groups == math.ceil(len(want) / 4)
        assert len(pieces) > 2
    assert stored_part(got) == want  # floats compared exactly


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_history_equals_the_events(store: Store, fmt: str) -> None:
    pieces = list(store.export("history", fmt, chunk_rows=7))
    data = b"".join(pieces)
    if fmt == "csv":
        rows = _parse_csv(data, HISTORY_COLUMNS)
    else:
        rows = [tuple(r.values()) for r in pq.read_table(io.BytesIO(data)).to_pylist()]
    want = expected_history(store)
    assert len(rows) == len(want) == store.stats()["events"]
    assert {_history_key(r) for r in rows} == want
    # chronological, contest by contest; the team round names the teams
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)
    assert {r[4]: r[13] for r in rows if r[1] == "cup"} == {"p00": "red", "p01": "red",
                                                           "p02": "blue"}
    assert len(pieces) >= len(rows) // 7


def test_one_consistent_state(store_url: str) -> None:
    """A contest ingested while an export is being read is not in it."""
    with Store.create(store_url, "mmr") as s:
        s.ingest_many(HISTORY[:-2])
        before = b"".join(s.export("history", "csv", chunk_rows=5))
        it = s.export("history", "csv", chunk_rows=5)
        first = [next(it), next(it)]  # the header, and a first chunk read
        s.ingest(HISTORY[-2])
        rest = list(it)
        assert b"".join(first + rest) == before
        after = b"".join(s.export("history", "csv", chunk_rows=5))
        assert len(after) > len(before)


def test_empty_store_and_errors(store_url: str) -> None:
    with Store.create(store_url, "mmr") as s:
        assert b"".join(s.export("ratings", "csv")).decode().splitlines() == [
            ",".join(n for n, _t in RATING_COLUMNS)]
        table = pq.read_table(io.BytesIO(b"".join(s.export("history", "parquet"))))
        assert table.num_rows == 0 and table.schema.names == [n for n, _t in HISTORY_COLUMNS]
        for args, kw, needle in ((("players", "csv"), {}, "unknown export 'players'"),
                                 (("ratings", "xlsx"), {}, "unknown export format 'xlsx'"),
                                 (("ratings", "csv"), {"chunk_rows": 0}, "chunk_rows")):
            with pytest.raises(StoreError, match=needle):
                s.export(*args, **kw)


def test_over_http(store: Store, store_url: str) -> None:
    with TestClient(create_app(store_url, None, export_chunk_rows=3)) as client:
        r = client.get("/api/export/ratings")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("text/csv")
        assert r.headers["content-disposition"] == 'attachment; filename="podium-ratings.csv"'
        assert stored_part(_parse_csv(r.content, RATING_COLUMNS)) == expected_ratings(store)
        r = client.get("/api/export/ratings?format=parquet")
        assert r.headers["content-type"] == "application/vnd.apache.parquet"
        assert r.headers["content-disposition"].endswith('filename="podium-ratings.parquet"')
        got = [tuple(x.values()) for x in pq.read_table(io.BytesIO(r.content)).to_pylist()]
        assert stored_part(got) == expected_ratings(store)
        r = client.get("/api/export/history")  # Parquet by default
        assert r.headers["content-disposition"].endswith('filename="podium-history.parquet"')
        rows = [tuple(x.values()) for x in pq.read_table(io.BytesIO(r.content)).to_pylist()]
        assert {_history_key(x) for x in rows} == expected_history(store)
        assert pq.ParquetFile(io.BytesIO(r.content)).num_row_groups == math.ceil(len(rows) / 3)
        r = client.get("/api/export/history?format=csv")
        assert {_history_key(x) for x in _parse_csv(r.content, HISTORY_COLUMNS)} == \
            expected_history(store)
        assert client.get("/api/export/ratings?format=xml").status_code == 422
    # a private server needs a read token for it
    reader = store.create_token("viewer", "read")
    with TestClient(create_app(store_url, None, private=True)) as client:
        r = client.get("/api/export/history")
        assert r.status_code == 401
        r = client.get("/api/export/history", headers={"Authorization": f"Bearer {reader}"})
        assert r.status_code == 200 and pq.read_table(io.BytesIO(r.content)).num_rows > 0


def test_cli(store: Store, store_url: str, tmp_path: Path,
             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ratings.csv"
    assert main(["export", "ratings", "--db", store_url, "-o", str(out)]) == 0
    assert stored_part(_parse_csv(out.read_bytes(), RATING_COLUMNS)) == expected_ratings(store)
    pq_out = tmp_path / "history.parquet"
    assert main(["export", "history", "--db", store_url, "-o", str(pq_out)]) == 0
    rows = [tuple(x.values()) for x in pq.read_table(pq_out).to_pylist()]
    assert {_history_key(x) for x in rows} == expected_history(store)
    forced = tmp_path / "history.data"
    assert main(["export", "history", "--db", store_url, "--format", "parquet", "-o",
                 str(forced)]) == 0
    assert pq.read_table(forced).num_rows == len(rows)
    assert "wrote history" in capsys.readouterr().err
    bad = tmp_path / "missing-dir" / "x.csv"
    assert main(["export", "ratings", "--db", store_url, "-o", str(bad)]) == 1
    assert not bad.parent.exists()
    assert not list(tmp_path.glob("*.part"))
