"""The migration to schema version 6 (ladders) on a store made by the release before it,
the migration to version 7 (the indexes of ratings as of a time) of every ladder, and
the migration to version 8 (those indexes only in the ladders whose ratings drift).

``tests/fixtures/store_v5/store_v5.db`` was written by Podium at commit 55f931e (schema
version 5; ``make_store_v5.py`` beside it says how): 14 contests (one in which everybody
tied, a team contest), snapshots, a corrected contest, tokens and audit rows.  The
migration must make it the ladder ``default`` of a version-6 store with every row of
every version-5 table unchanged -- ratings, events, snapshots (their bytes), standings,
tokens, audit -- bit for bit, and the store must then go on exactly like a Rater over
the whole history.  On PostgreSQL the same rows are loaded into a schema built by the
migrations up to version 5, then migrated.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import _store_cases as cases
import pytest
from sqlalchemy import MetaData, Table, inspect, select

from podium import Contest, Rater
from podium.io import synthetic_contests
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine, write_txn
from podium.store.migrations import upgrade

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "store_v5"
V5_TABLES = ("meta", "players", "contests", "standings", "events", "snapshots", "tokens",
             "audit")


def _history() -> list[Contest]:
    """The fixture's history as it is stored: the contests of ``make_store_v5.py``, the
    corrected one in place."""
    spec = importlib.util.spec_from_file_location("make_store_v5", FIXTURE / "make_store_v5.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cs: list[Contest] = mod.history()
    fixed = cs[2]
    cs[2] = Contest([(h, i, i) for i, h in enumerate(reversed(fixed.handles))],
                    name=fixed.name, url=fixed.url, time_seconds=fixed.time_seconds)
    return cs


def _rows(url: str, tables: tuple[str, ...] = V5_TABLES) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of ``tables`` as the database holds them, in key order (columns of
    version 5 only)."""
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            md = MetaData()
            out = {}
            for name in tables:
                t = Table(name, md, autoload_with=conn)
                cols = [c for c in t.columns if not (name == "tokens" and c.name == "ladders")]
                keys = list(t.primary_key.columns) or cols
                out[name] = [tuple(r) for r in conn.execute(select(*cols).order_by(*keys))]
            return out
    finally:
        eng.dispose()


def _v5_sqlite(tmp_path: Path) -> str:
    path = tmp_path / "v5.db"
    shutil.copyfile(FIXTURE / "store_v5.db", path)
    return f"sqlite:///{path}"


def _v5_postgres(url: str, tmp_path: Path) -> str:
    """The fixture's rows loaded into a PostgreSQL schema made by the migrations up to
    version 5."""
    src = _rows(_v5_sqlite(tmp_path))
    eng = make_engine(url)
    try:
        with write_txn(eng) as conn:
            assert upgrade(conn, target=5) == [1, 2, 3, 4, 5]
            md = MetaData()
            for name in V5_TABLES:
                t = Table(name, md, autoload_with=conn)
                if name == "meta":
                    conn.execute(t.delete())
                rows = src[name]
                if rows:
                    cols = [c.name for c in t.columns]
                    conn.execute(t.insert(), [dict(zip(cols, r, strict=True)) for r in rows])
            for name in ("tokens", "audit"):  # rows inserted with their keys: move on
                conn.exec_driver_sql(f"SELECT setval(pg_get_serial_sequence('{name}', 'pk'), "
                                     f"(SELECT max(pk) FROM {name}))")
    finally:
        eng.dispose()
    return url


@pytest.fixture()
def v5_url(store_url: str, tmp_path: Path) -> str:
    if store_url.startswith("sqlite"):
        return _v5_sqlite(tmp_path)
    return _v5_postgres(store_url, tmp_path)


def test_the_fixture_is_a_schema_5_store(tmp_path: Path) -> None:
    rows = _rows(_v5_sqlite(tmp_path))
    meta = dict(rows["meta"])
    assert meta["schema_version"] == "5" and meta["system"] == "mmr"
    assert len(rows["contests"]) == 14 and rows["snapshots"] and len(rows["tokens"]) == 2
    eng = make_engine(_v5_sqlite(tmp_path))
    try:
        with eng.connect() as conn:
            assert not inspect(conn).has_table("ladders")
    finally:
        eng.dispose()


def test_migration_keeps_every_row_and_the_store_goes_on(v5_url: str) -> None:
    before = _rows(v5_url)
    with pytest.raises(Exception, match=f"schema version 5, older than this Podium's "
                                         f"{S.SCHEMA_VERSION}"):
        Store.open(v5_url)
    assert Store.upgrade(v5_url) == (5, S.SCHEMA_VERSION)
    after = _rows(v5_url)
    for name in V5_TABLES:
        if name == "meta":
            drop = {"schema_version", "podium_version"}
            old = [r for r in before[name] if r[0] not in drop]
            new = [r for r in after[name] if r[0] not in drop]
            assert new == old
            assert dict(after[name])["schema_version"] == str(S.SCHEMA_VERSION)
        else:
            assert after[name] == before[name], name  # bit for bit: floats, bytes
    new_tables = _rows(v5_url, ("ladders", "seasons", "season_ratings", "priors"))
    assert [r[:3] for r in new_tables["ladders"]] == [(0, "default", "")]
    assert not new_tables["seasons"] and not new_tables["season_ratings"]
    history = _history()
    # a store saved before all_tied existed keeps skipping the all-tied contest
    # (RatingSystem.params_added_later), as it did when it was written
    ref = Rater("mmr", all_tied="skip")
    ref.extend(history)
    with Store.open(v5_url) as store:
        assert store.params["all_tied"] == "skip"
        assert store.ladder_name == "default" and [x.name for x in store.ladders()] == \
            ["default"]
        cases.assert_store_equals_rater(store, ref)
        assert [t.name for t in store.tokens()] == ["reader", "old-writer"]
        assert all(t.ladders is None for t in store.tokens())
        # the store goes on: from its snapshot, without replaying, exactly as the Rater
        later = [Contest(c.standings, name=c.name + " (later)",
                         time_seconds=history[-1].time_seconds + 100 + k)
                 for k, c in enumerate(history[:4])]
        store.ingest_many(later[:2])
        store.ingest(later[2])
        ref.extend(later[:3])
        cases.assert_store_equals_rater(store, ref)
        # and it takes ladders
        duo = store.create_ladder("duo", "glicko")
        duo.ingest_many(later)
        solo = Rater("glicko")
        solo.extend(later)
        cases.assert_store_equals_rater(duo, solo)
        cases.assert_store_equals_rater(store, ref)
    assert Store.upgrade(v5_url) == (S.SCHEMA_VERSION, S.SCHEMA_VERSION)


def test_the_schema_of_a_migrated_store_is_the_schema(v5_url: str, tmp_path: Path) -> None:
    """Migrated and new stores have the same tables, columns and indexes."""
    Store.upgrade(v5_url)
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    Store.create(fresh, "mmr").close()
    if not v5_url.startswith("sqlite"):
        return  # the column types are compared on one back end
    shapes = []
    for url in (v5_url, fresh):
        eng = make_engine(url)
        try:
            with eng.connect() as conn:
                ins = inspect(conn)
                shapes.append({t: (sorted(c["name"] for c in ins.get_columns(t)),
                                   sorted(i["name"] for i in ins.get_indexes(t)))
                               for t in ins.get_table_names()})
        finally:
            eng.dispose()
    assert shapes[0] == shapes[1]
    assert set(shapes[1]) == {t.name for t in S.metadata.sorted_tables}


V7_INDEXES = ("players_mu", "players_sigma", "season_ratings_mu", "season_ratings_sigma")


def _all_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            names = sorted(inspect(conn).get_table_names())
    finally:
        eng.dispose()
    return _rows(url, tuple(names))


def _indexes(url: str) -> dict[str, list[tuple[str, list[str]]]]:
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            ins = inspect(conn)
            return {t: sorted((str(i["name"]), [str(c) for c in i["column_names"]])
                              for i in ins.get_indexes(t))
                    for t in ins.get_table_names()}
    finally:
        eng.dispose()


def _upgrade_keeps_every_row(store_url: str, version: int,
                             schema: dict[str, list[tuple[str, list[str]]]]) -> None:
    """A store at ``version`` is refused by ``Store.open``, and ``Store.upgrade`` brings
    it to this Podium's version with every row as it was (the version aside) and the
    indexes ``schema`` of a store created now."""
    before = _all_rows(store_url)
    assert _indexes(store_url) != schema
    with pytest.raises(Exception, match=f"schema version {version}, older than this "
                                         f"Podium's {S.SCHEMA_VERSION}"):
        Store.open(store_url)
    assert Store.upgrade(store_url) == (version, S.SCHEMA_VERSION)
    after = _all_rows(store_url)
    assert after.pop("meta") != before.pop("meta")  # the version, nothing else
    assert after == before
    assert _indexes(store_url) == schema


def test_migration_7_indexes_every_ladder(store_url: str) -> None:
    """A version-6 store (two ladders with time drift, a finished season): version 7 only
    adds four indexes to each ladder's tables -- every row stays as it is -- and the
    leaderboards as of a time read the same rows as before."""
    history = synthetic_contests(30, 8, seed=5, participation=0.7, start_time=1_600_000_000)
    with Store.create(store_url, "mmr", {"drift_per_day": 25.0}) as store:
        store.ingest_many(history[:5])
        store.new_season("soft", time_seconds=history[5].time_seconds - 1)
        store.ingest_many(history[5:])
        duo = store.create_ladder("duo", "mmr-plus", {"drift_per_day": 9.0})
        duo.ingest_many(history)
        at = history[-1].time_seconds + 400 * 86_400
        boards = [store.leaderboard(limit=100, as_of=at), store.leaderboard(limit=100, season=1),
                  duo.leaderboard(limit=100, as_of=at)]
    schema = _indexes(store_url)
    eng = make_engine(store_url)
    try:
        with write_txn(eng) as conn:
            for prefix in ("", "ladder1_"):
                for name in V7_INDEXES:
                    conn.exec_driver_sql(f"DROP INDEX ix_{prefix}{name}")
            conn.exec_driver_sql("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    finally:
        eng.dispose()
    _upgrade_keeps_every_row(store_url, 6, schema)
    with Store.open(store_url) as store:
        assert [store.leaderboard(limit=100, as_of=at), store.leaderboard(limit=100, season=1),
                store.ladder("duo").leaderboard(limit=100, as_of=at)] == boards


def test_migration_8_drops_the_drift_indexes_where_nothing_drifts(store_url: str) -> None:
    """A version-7 store (ladders with and without time drift, a finished season): version
    8 drops ``ix_players_mu`` and ``ix_players_sigma`` from the ladders whose system has
    no time drift -- every row stays as it is, bit for bit -- keeps them where ratings
    drift, and leaves the indexes a store created now has; the leaderboards read the
    same, and the store goes on like a Rater."""
    history = synthetic_contests(30, 24, seed=6, participation=0.7, start_time=1_600_000_000)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(history[:5])
        store.new_season("soft", time_seconds=history[5].time_seconds - 1)
        store.ingest_many(history[5:20])
        duo = store.create_ladder("duo", "mmr-plus", {"drift_per_day": 9.0})
        duo.ingest_many(history[:20])
        trio = store.create_ladder("trio", "mmr")
        trio.ingest_many(history[:20])
        at = history[19].time_seconds + 400 * 86_400
        boards = [store.leaderboard(limit=100), store.leaderboard(limit=100, season=1),
                  duo.leaderboard(limit=100, as_of=at), trio.leaderboard(limit=100, as_of=at)]
    schema = _indexes(store_url)
    assert "ix_players_mu" not in dict(schema["players"])
    assert "ix_ladder2_players_sigma" not in dict(schema["ladder2_players"])
    assert {"ix_ladder1_players_mu", "ix_ladder1_players_sigma"} <= set(
        dict(schema["ladder1_players"]))
    eng = make_engine(store_url)
    try:
        with write_txn(eng) as conn:  # what version 7 had: both indexes in every ladder
            for prefix in ("", "ladder2_"):
                conn.exec_driver_sql(f"CREATE INDEX ix_{prefix}players_mu ON {prefix}players "
                                     "(mu DESC, handle)")
                conn.exec_driver_sql(f"CREATE INDEX ix_{prefix}players_sigma ON "
                                     f"{prefix}players (sigma)")
            conn.exec_driver_sql("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    finally:
        eng.dispose()
    _upgrade_keeps_every_row(store_url, 7, schema)
    with Store.open(store_url) as store:
        assert [store.leaderboard(limit=100), store.leaderboard(limit=100, season=1),
                store.ladder("duo").leaderboard(limit=100, as_of=at),
                store.ladder("trio").leaderboard(limit=100, as_of=at)] == boards
        store.ladder("trio").ingest_many(history[20:])
        for c in history[20:]:
            store.ladder("duo").ingest(c)
    ref = Rater("mmr")
    ref.extend(history)
    with Store.open(store_url) as store:
        cases.assert_store_equals_rater(store.ladder("trio"), ref)
        ref_duo = Rater("mmr-plus", drift_per_day=9.0)
        ref_duo.extend(history)
        cases.assert_store_equals_rater(store.ladder("duo"), ref_duo)
