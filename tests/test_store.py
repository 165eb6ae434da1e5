"""The persistent store on SQLite: schema, exact equality with the Rater, idempotence,
time order, recomputation, rollback, queries, schema versions and migrations."""

from __future__ import annotations

import json
import sqlite3

import _search_cases as search_cases
import _store_cases as cases
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

from podium import ConfigError, Contest
from podium.store import SCHEMA_VERSION, Store, StoreError, normalize_url
from podium.store import schema as S
from podium.store.engine import make_engine
from podium.store.migrations import set_meta, upgrade


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}"


def test_schema_created(url):
    cases.case_schema(url)


@pytest.mark.parametrize("mode", ["warm", "cold"])
@pytest.mark.parametrize("system", ["mmr", "codeforces", "tcsys", "trueskill"])
def test_ingest_equals_rater(url, system, mode):
    cases.case_ingest_equals_rater(url, system, mode)


def test_ingest_reopening_for_every_contest_equals_rater(url):
    cases.case_ingest_equals_rater(url, "mmr", "reopen")


def test_idempotent_by_id(url):
    cases.case_idempotence(url)


def test_older_contest_refused(url):
    cases.case_older_refused(url)


def test_recompute_from_equals_sorted_history(url):
    cases.case_recompute(url)


def test_two_stores_see_each_others_writes(url):
    cases.case_two_stores_interleaved(url)


def test_failure_mid_transaction_rolls_back(url, monkeypatch):
    cases.case_failure_rolls_back(url, monkeypatch)


def test_queries(url):
    cases.case_queries(url)


def test_values_round_trip(url):
    cases.case_values_round_trip(url)


def test_bare_path_is_sqlite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert normalize_url("x.db") == "sqlite:///x.db"
    assert normalize_url("/a/b.db") == "sqlite:////a/b.db"
    assert normalize_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    with Store.create("x.db", "tcsys") as store:
        store.ingest(Contest([("a", 0, 0), ("b", 1, 1)], name="r1"))
    assert (tmp_path / "x.db").exists()
    with Store.open(f"sqlite:///{tmp_path / 'x.db'}") as store:
        assert store.system_name == "tcsys" and store.count_players() == 2


def test_contest_without_id_and_bad_arguments(url):
    with Store.create(url, "mmr") as store:
        before = cases.dump(url)
        with pytest.raises(StoreError, match="neither url nor name"):
            store.ingest(Contest([("a", 0, 0), ("b", 1, 1)]))
        with pytest.raises(StoreError, match="64-bit"):
            store.ingest(Contest([("a", 0, 0), ("b", 1, 1)], name="x", time_seconds=2**70))
        with pytest.raises(TypeError):
            store.ingest([("a", 0, 0)])  # type: ignore[arg-type]
        assert store.ingest(Contest([("a", 0, 0), ("b", 1, 1)]), contest_id="given").status \
            == "applied"
        assert store.contest("given") is not None
        assert cases.dump(url) != before


def test_unknown_parameter_and_system_rejected(tmp_path):
    path = tmp_path / "new.db"
    with pytest.raises(ConfigError, match="bogus"):
        Store.create(str(path), "mmr", {"bogus": 1})
    with pytest.raises(ConfigError, match="unknown rating system"):
        Store.open_or_create(str(path), "no-such-system")
    assert not path.exists()  # nothing was created
    with Store.create(str(path), "mmr", {"weight_limit": 0.3}) as store:
        assert store.params["weight_limit"] == 0.3
    before = cases.dump(str(path))
    with pytest.raises(StoreError, match=r"weight_limit: stored 0.3, given 0.2"):
        Store.create(str(path), "mmr")
    with pytest.raises(StoreError, match="rates with 'mmr', not 'tcsys'"):
        Store.open_or_create(str(path), "tcsys")
    with pytest.raises(ConfigError, match="bogus"):
        Store.open_or_create(str(path), params={"bogus": 2})
    # the same system and parameters are accepted (also given in full)
    with Store.open_or_create(str(path), "mmr", {"weight_limit": 0.3}) as store:
        full = store.params
    Store.create(str(path), "mmr", full).close()
    assert cases.dump(str(path)) == before


def test_open_errors(tmp_path):
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match=r"no Podium store .*no such file.*podium ingest"):
        Store.open(str(missing))
    assert not missing.exists()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x INTEGER)").connection.commit()
    with pytest.raises(StoreError, match=r"holds no Podium store \(no schema\).*--system"):
        Store.open(str(empty))
    with pytest.raises(StoreError, match="unsupported database"):
        Store.open("mysql://u@h/d")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database file at all" * 100)
    with pytest.raises(StoreError, match=r"junk.db: cannot open .*not a database"):
        Store.open(str(junk))
    with pytest.raises(StoreError, match=r"junk.db: cannot open .*not a database"):
        Store.open_or_create(str(junk), "mmr")


def _set_version(url: str, version: str) -> None:
    eng = make_engine(url)
    with eng.begin() as conn:
        set_meta(conn, "schema_version", version)
    eng.dispose()


def test_schema_version_mismatch_messages(url):
    Store.create(url, "mmr").close()
    _set_version(url, str(SCHEMA_VERSION + 1))
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than this "
                       rf"Podium's {SCHEMA_VERSION}; upgrade Podium"):
        Store.open(url)
    with pytest.raises(StoreError, match="newer"):
        Store.create(url, "mmr")
    with pytest.raises(StoreError, match="newer"):
        Store.upgrade(url)
    _set_version(url, "garbage")
    with pytest.raises(StoreError, match="damaged store metadata"):
        Store.open(url)


def _make_v1_store(url: str, version: int = 1) -> None:
    """A store as version 1 of the schema wrote it (no players.handle_key), then
    migrated to ``version``."""
    eng = make_engine(url)
    with eng.begin() as conn:
        assert upgrade(conn, target=1) == [1]
        for k, v in (("system", "mmr"), ("params", json.dumps(Store_params())),
                     ("store_id", "v1store"), ("epoch", "0"), ("revision", "0")):
            set_meta(conn, k, v)
        conn.execute(text(
            "INSERT INTO players (pk, handle, mu, sigma, display_rating, contests, "
            "last_contest_time, max_display_rating, last_change) VALUES "
            "(0, 'Alice', 1600, 100, 1540, 1, 5, 1540, 850), "
            "(1, 'bob', 1400, 100, 1340, 1, 5, 1340, 650)"
        ))
        assert upgrade(conn, target=version) == list(range(2, version + 1))
    eng.dispose()


def Store_params():  # noqa: N802 - the mmr preset's full parameters, as a store records them
    from podium.systems import get_system

    return json.loads(json.dumps(get_system("mmr").params()))


@pytest.mark.parametrize("old", range(1, SCHEMA_VERSION))
def test_upgrade_from_older_version(url, old):
    _make_v1_store(url, old)
    with pytest.raises(StoreError, match=rf"schema version {old}, older than this Podium's "
                       rf"{SCHEMA_VERSION}; run `podium db-upgrade --db {url}`"):
        Store.open(url)
    with pytest.raises(StoreError, match="older"):
        Store.open_or_create(url)
    assert Store.upgrade(url) == (old, SCHEMA_VERSION)
    assert Store.upgrade(url) == (SCHEMA_VERSION, SCHEMA_VERSION)
    with Store.open(url) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.search_handles("AL") == ["Alice"]
        assert store.search_handles("") == ["Alice", "bob"]
        assert store.search_handles("b") == ["bob"] and store.search_handles("c") == []
    eng = make_engine(url)
    with eng.connect() as conn:
        keys = dict(conn.execute(select(S.players.c.handle, S.players.c.handle_key)).all())
    eng.dispose()
    assert keys == {"Alice": "alice", "bob": "bob"}
    # the migrated schema is the one a new store gets
    fresh = url.replace("store.db", "fresh.db")
    Store.create(fresh, "mmr").close()
    assert _schema_sql(url) == _schema_sql(fresh)


def _schema_sql(url: str) -> dict[str, set[str]]:
    from sqlalchemy import inspect

    eng = make_engine(url)
    insp = inspect(eng)
    out = {t: {f"{c['name']}:{c['type']}:{c['nullable']}" for c in insp.get_columns(t)}
           | {f"ix:{ix['name']}:{ix['column_names']}" for ix in insp.get_indexes(t)}
           for t in insp.get_table_names()}
    eng.dispose()
    return out


def test_reads_see_committed_state_only(url):
    """A reader holding a transaction keeps its state while a writer commits."""
    contests = cases.tied_history()
    with Store.create(url, "mmr") as store:
        store.ingest(contests[0])
        eng = make_engine(url)
        from podium.store.engine import read_txn

        with read_txn(eng) as conn:
            n0 = conn.execute(text("SELECT count(*) FROM events")).scalar_one()
            store.ingest(contests[1])
            assert conn.execute(text("SELECT count(*) FROM events")).scalar_one() == n0
        eng.dispose()
        assert store.stats()["events"] == n0 + len(contests[1])


def test_snapshots_kept_and_restored(url):
    contests = cases.tied_history()  # 8 contests
    with Store.create(url, "tcsys", snapshot_every=2, keep_snapshots=2) as store:
        for c in contests[:7]:
            store.ingest(c)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [4, 6]
        assert store.snapshot() is True
        assert store.snapshot() is False
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [6, 7]
        store.ingest(contests[7])
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [6, 7]  # 1 < 2 since
    # a damaged snapshot is ignored (replay from the start), never trusted
    eng = make_engine(url)
    with eng.begin() as conn:
        conn.execute(S.snapshots.update().values(data=b"garbage"))
    eng.dispose()
    extra = Contest([("p00", 0, 0), ("p01", 1, 1)], name="extra",
                    time_seconds=contests[-1].time_seconds + 1)
    with Store.open(url, cache=False, snapshot_every=2) as store:
        store.ingest(extra)
        assert [s["head_count"] for s in store.stats()["snapshots"]] == [7, 9]
        cases.assert_store_equals_rater(store, cases._reference([*contests, extra], "tcsys"))


_PERM_CONTESTS = cases.tied_history(n_players=20, rounds=5, seed=13)
# two contests at the same time: their order is the order of ingestion
_PERM_CONTESTS[2] = Contest(_PERM_CONTESTS[2].standings, name="same time as #1",
                            time_seconds=_PERM_CONTESTS[1].time_seconds)


@settings(max_examples=12, deadline=None)
@given(order=st.permutations(range(len(_PERM_CONTESTS))))
def test_any_ingestion_order_equals_stable_time_sort(order):
    """With --recompute-from, ingesting in any order gives the history sorted by time
    (stably, in ingestion order) rated from scratch."""
    given_order = [_PERM_CONTESTS[k] for k in order]
    with Store.create("sqlite://", "mmr", snapshot_every=2) as store:
        for c in given_order:
            store.ingest(c, recompute_from=True)
        expect = sorted(given_order, key=lambda c: c.time_seconds)
        assert store.contest_ids() == [c.name for c in expect]
        cases.assert_store_equals_rater(store, cases._reference(expect, "mmr"))


def test_prefix_upper_bound():
    from podium.store.store import prefix_upper_bound

    top = chr(0x10FFFF)
    assert prefix_upper_bound("") is None and prefix_upper_bound(top * 3) is None
    assert prefix_upper_bound("tour") == "tous"
    assert prefix_upper_bound("a_") == "a`" and prefix_upper_bound("a%") == "a&"
    assert prefix_upper_bound("a" + top + top) == "b"
    assert prefix_upper_bound("x\ud7ff") == "x\ue000"  # the surrogates are skipped
    assert prefix_upper_bound("σο") == "σπ"


@pytest.mark.parametrize("through", ["range", "rating-walk"])
def test_search_handles_equals_reference(monkeypatch, through):
    """Both ways of searching (index range, walk in rating order) give exactly the
    case-insensitive prefix matches, best rated first, unrated players left out."""
    search_cases.case_search("sqlite://", monkeypatch, through)


def test_pool_settings(url):
    Store.create(url, "mmr").close()
    with Store.open(url, pool_size=2, max_overflow=1) as store:
        assert store.engine.pool.size() == 2 and store.engine.pool._max_overflow == 1
        assert store.count_players() == 0
    with Store.open_or_create(url, pool_size=7) as store:
        assert store.engine.pool.size() == 7
    with pytest.raises(StoreError, match=r"pool_size must be an integer >= 1, got 0"):
        Store.open(url, pool_size=0)
    with pytest.raises(StoreError, match=r"max_overflow must be an integer >= 0, got -1"):
        Store.create(url, "mmr", max_overflow=-1)
    with pytest.raises(TypeError, match="pool_sise"):
        Store.open(url, pool_sise=3)
