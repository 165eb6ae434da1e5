"""What a store refuses or rewrites before it rates a contest (podium.store.checks), on
SQLite and PostgreSQL: the time guard, the handle rules, the ranges of weight and
performance ceiling, the text of names and urls, and the case-insensitive handle
policy.  Every refusal must leave the database exactly as it was."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import _store_cases as cases
import pytest
from sqlalchemy import inspect, select

from podium import Contest
from podium.cli import main
from podium.errors import ContestError
from podium.io import write_contest_json
from podium.store import Store, StoreError
from podium.store import schema as S
from podium.store.checks import MAX_ID_BYTES, check_contest
from podium.store.engine import make_engine

T0 = 1_600_000_000
DAY = 86_400


def duel(name: str, t: int, a: str = "a", b: str = "b", **kw: Any) -> Contest:
    return Contest([(a, 0, 0), (b, 1, 1)], name=name, time_seconds=t, **kw)


def _meta(url: str) -> dict[str, str]:
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            return {k: v for k, v in conn.execute(select(S.meta.c.key, S.meta.c.value)).all()}
    finally:
        eng.dispose()


# ---------------------------------------------------------------------- times
def test_time_guard_refuses_and_changes_nothing(store_url: str) -> None:
    """A time in milliseconds (the issue's wedge), beyond 2200, before 1800 or more than
    a day ahead of the clock is refused; the store is unchanged and goes on accepting
    normal contests."""
    with Store.create(store_url, "mmr") as store:
        store.ingest(duel("r1", T0))
        before = cases.dump(store_url)
        with pytest.raises(ContestError, match=r"contest 'ms': time_seconds=1602505600000 is "
                           r"after 2200-01-01; it looks like milliseconds: in seconds it is "
                           r"1602505600 \(2020-10-12"):
            store.ingest(duel("ms", 1_602_505_600_000))
        with pytest.raises(ContestError, match="after 2200"):
            store.ingest(duel("huge", 2**63 - 1 - 10**6))
        with pytest.raises(ContestError, match="before 1800"):
            store.ingest(duel("old", -5_364_662_401), recompute_from=True)
        ahead = int(time.time()) + 2 * DAY
        with pytest.raises(ContestError, match=r"in the future.*--allow-future"):
            store.ingest(duel("ahead", ahead))
        # a batch holding one such contest: nothing of it, naming its position
        with pytest.raises(ContestError, match=r"contest #1 'ms' of the batch: .*milliseconds"):
            store.ingest_many([duel("r2", T0 + 10), duel("ms", 1_602_505_600_000)])
        assert cases.dump(store_url) == before
        assert store.ingest(duel("r2", T0 + 10)).status == "applied"
        # allowed per call, or for the store object
        assert store.ingest(duel("ahead", ahead), allow_future=True).status == "applied"
        with pytest.raises(ContestError, match="milliseconds"):
            store.ingest(duel("ms", 1_602_505_600_000), allow_future=True)
    with Store.open(store_url, allow_future=True) as store:
        assert store.ingest(duel("ahead2", ahead + 10)).status == "applied"
    with Store.open(store_url, future_margin_s=10 * DAY) as store:
        assert store.ingest(duel("ahead3", ahead + 20)).status == "applied"
        with pytest.raises(ContestError, match="more than 10 days in the future"):
            store.ingest(duel("far", ahead + 20 * DAY))


def test_ranges_and_text(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        before = cases.dump(store_url)
        bad: list[tuple[Contest, str, str]] = [
            (duel("w", T0, weight=1e300), "weight=1e+300 is outside [0.001, 100]", ""),
            (duel("w", T0, weight=1e-5), "weight=1e-05 is outside", ""),
            (duel("c", T0, perf_ceiling=-1e308), "perf_ceiling=-1e+308 is outside [-6000, "
             "9000]", ""),
            (duel("c", T0, perf_ceiling=9001.0), "perf_ceiling=9001.0", ""),
            (duel("n\x00", T0), "name: character 2 (U+0000) is a control character", ""),
            (duel("s\ud800", T0), "name: character 2 (U+D800) is a lone surrogate", ""),
            (duel("u", T0, url="http://x/\ud800"), "url: character 10 (U+D800)", ""),
            (duel("long", T0, url="u" * 3000), "url: 3000 characters; at most 2048", ""),
            (duel("rlo", T0, a="evil\u202egnp"), "player 'evil\\u202egnp': character 5 "
             "(U+202E) is an invisible format character", ""),
            (duel("ws", T0, a=" \u3000 "), "empty or only whitespace", ""),
            (duel("nul", T0, a="a\x00b"), "U+0000", ""),
            (duel("len", T0, a="x" * 129), "129 characters; at most 128", ""),
            (duel("merge", T0, a="e\u0301", b="\u00e9"), "duplicate", ""),
        ]
        for contest, needle, _ in bad:
            with pytest.raises(ContestError) as info:
                store.ingest(contest)
            assert needle in str(info.value), (needle, str(info.value))
            assert f"contest {contest.label!r}" in str(info.value)
        with pytest.raises(ContestError, match=f"at most {MAX_ID_BYTES}"):
            store.ingest(duel("x", T0), contest_id="\u00e9" * 1100)
        with pytest.raises(ContestError, match="team 'red\\\\u200b'.*U\\+200B"):
            store.ingest(Contest.from_teams([("red\u200b", 0, 0, ["a", "b"]),
                                             ("blue", 1, 1, ["c"])], name="t", time_seconds=T0))
        assert cases.dump(store_url) == before
        # the edges are accepted; +inf is "no ceiling"
        for k, kw in enumerate(({"weight": 100.0}, {"weight": 1e-3},
                                {"perf_ceiling": -6000.0}, {"perf_ceiling": float("inf")})):
            assert store.ingest(duel(f"ok{k}", T0 + k, **kw)).status == "applied"


def test_handles_are_normalised(store_url: str) -> None:
    """NFC, trimmed: the decomposed and the composed spelling are one player, and a
    lookup by any spelling finds it; the result equals a Rater's on normal handles."""
    raw = [Contest([("e\u0301mile", 0, 0), ("  bob ", 1, 1), ("ann", 2, 2)], name="r1",
                   time_seconds=T0),
           Contest([("\u00e9mile", 0, 0), ("bob", 1, 1)], name="r2", time_seconds=T0 + 10)]
    normal = [check_contest(c) for c in raw]
    assert normal[0].handles == ("\u00e9mile", "bob", "ann")
    with Store.create(store_url, "mmr") as store:
        store.ingest(raw[0])
        store.ingest(raw[1])
        assert store.ingest(raw[1]).status == "duplicate"  # same content once normalised
        cases.assert_store_equals_rater(store, cases._reference(normal, "mmr"))
        view = store.player("e\u0301mile ")
        assert view is not None and view.handle == "\u00e9mile" and view.contests == 2
        assert store.player("EMILE") is None  # exact handles: case matters
        assert store.player("a\x00") is None and store.player("\ud800") is None
        assert set(store.current_ratings([" bob", "e\u0301mile", "nobody"])) == {
            " bob", "e\u0301mile"}
        assert store.search_handles("e\u0301") == ["\u00e9mile"]
        assert store.search_handles("\x00") == []
        assert store.contest("\x00") is None and store.contest("\ud800") is None


def test_contest_pages(store_url: str) -> None:
    c = Contest([(f"p{k:02d}", k, k) for k in range(30)], name="big", time_seconds=T0)
    team = Contest.from_teams([("red", 0, 0, ["a", ("b", 0.5)]), ("blue", 1, 1, ["c", "d"]),
                               ("green", 2, 2, ["e"])], name="teams", time_seconds=T0 + 1)
    with Store.create(store_url, "mmr") as store:
        store.ingest(c)
        store.ingest(team)
        whole = store.contest("big")
        assert whole is not None and len(whole.changes) == 30 and whole.total == 30
        page = store.contest("big", offset=10, limit=7)
        assert page is not None and (page.offset, page.limit, page.total) == (10, 7, 30)
        assert page.changes == whole.changes[10:17]
        tail = store.contest("big", offset=28, limit=7)
        assert tail is not None and tail.changes == whole.changes[28:]
        assert store.contest("big", offset=40, limit=5).changes == []  # type: ignore[union-attr]
        t = store.contest("teams", offset=3, limit=1)
        assert t is not None and [x.handle for x in t.changes] == ["d"]
        assert t.teams is not None and [tm.name for tm in t.teams] == ["red", "blue", "green"]
        assert [m.handle for m in t.teams[0].members] == ["a", "b"]
        with pytest.raises(StoreError, match="offset"):
            store.contest("big", offset=-1)


# ---------------------------------------------------------------------- case-insensitive
def test_case_insensitive_policy(store_url: str) -> None:
    """Fixed at creation, recorded in meta; ``Tourist`` and ``tourist`` are one player
    shown as first seen; a contest holding both is refused; equal to a Rater over the
    contests spelt the store's way."""
    c1 = Contest([("Tourist", 0, 0), ("Petr", 1, 1), ("ann", 2, 2)], name="r1",
                 time_seconds=T0)
    c2 = Contest([("petr", 0, 0), ("TOURIST", 1, 1), ("Bob", 2, 2)], name="r2",
                 time_seconds=T0 + 10)
    with Store.create(store_url, "mmr", case_insensitive_handles=True) as store:
        assert store.case_insensitive_handles
        store.ingest(c1)
        res = store.ingest(c2)
        assert res.status == "applied" and res.new_players == 1
        assert store.ingest(Contest(c2.standings, name="r2", time_seconds=T0 + 10)).status \
            == "duplicate"
        spelt = [c1, Contest([("Petr", 0, 0), ("Tourist", 1, 1), ("Bob", 2, 2)], name="r2",
                             time_seconds=T0 + 10)]
        cases.assert_store_equals_rater(store, cases._reference(spelt, "mmr"))
        view = store.player("tOuRiSt")
        assert view is not None and view.handle == "Tourist" and view.contests == 2
        assert set(store.current_ratings(["TOURIST", "bob"])) == {"TOURIST", "bob"}
        before = cases.dump(store_url)
        with pytest.raises(ContestError, match=r"'ann' and 'Ann' differ only by case"):
            store.ingest(Contest([("ann", 0, 0), ("Ann", 1, 1)], name="r3",
                                 time_seconds=T0 + 20))
        with pytest.raises(ContestError, match=r"contest #0 'r3' of the batch: player 'Ann'"):
            store.ingest_many([Contest([("ann", 0, 0), ("Ann", 1, 1)], name="r3",
                                       time_seconds=T0 + 20)])
        assert cases.dump(store_url) == before
        # a batch introducing a new player in two spellings: the first one wins
        out = store.ingest_many([duel("r4", T0 + 30, "Zed", "ann"),
                                 duel("r5", T0 + 40, "ZED", "bob")])
        assert [r.new_players for r in out] == [1, 0]
        assert store.player("zed").handle == "Zed"  # type: ignore[union-attr]
        assert store.stats()["handle_policy"] == "case-insensitive"
    assert _meta(store_url)["handle_policy"] == "case-insensitive"
    eng = make_engine(store_url)
    try:
        indexes = {ix["name"]: ix for ix in inspect(eng).get_indexes("players")}
    finally:
        eng.dispose()
    assert indexes["ux_players_handle_key_ci"]["unique"]
    with Store.open(store_url) as store:  # the policy comes from the store
        assert store.case_insensitive_handles
    with pytest.raises(StoreError, match="created with case-insensitive handles; the handle "
                       "policy is fixed"):
        Store.open(store_url, case_insensitive_handles=False)
    with pytest.raises(StoreError, match="fixed when a store is created"):
        Store.create(store_url, "mmr", case_insensitive_handles=False)
    Store.create(store_url, "mmr", case_insensitive_handles=True).close()


def test_exact_policy_is_the_default_and_old_stores_read_exact(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        assert not store.case_insensitive_handles
        store.ingest(duel("r1", T0, "Tourist", "tourist"))
        assert store.stats()["players"] == 2
    assert _meta(store_url)["handle_policy"] == "exact"
    with pytest.raises(StoreError, match="created with exact handles"):
        Store.open(store_url, case_insensitive_handles=True)
    # a store written before the policy existed has no meta row: exact handles
    eng = make_engine(store_url)
    with eng.begin() as conn:
        conn.execute(S.meta.delete().where(S.meta.c.key == "handle_policy"))
    eng.dispose()
    with Store.open(store_url) as store:
        assert not store.case_insensitive_handles
        assert store.ingest(duel("r2", T0 + 1, "TOURIST", "x")).new_players == 2


def test_policy_change_under_a_process_is_noticed(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        eng = make_engine(store_url)
        with eng.begin() as conn:
            conn.execute(S.meta.update().where(S.meta.c.key == "handle_policy")
                         .values(value="case-insensitive"))
        eng.dispose()
        with pytest.raises(StoreError, match="changed under this process"):
            store.ingest(duel("r1", T0))
        eng = make_engine(store_url)
        with eng.begin() as conn:
            conn.execute(S.meta.update().where(S.meta.c.key == "handle_policy")
                         .values(value="sometimes"))
        eng.dispose()
    with pytest.raises(StoreError, match="damaged store metadata.*handle_policy 'sometimes'"):
        Store.open(store_url)


# ---------------------------------------------------------------------- podium ingest
def test_cli_refuses_before_creating_anything(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "in"
    d.mkdir()
    write_contest_json(duel("ok", T0), d / "0.json")
    write_contest_json(duel("ms", 1_602_505_600_000), d / "1.json")
    db = tmp_path / "p.db"
    assert main(["ingest", str(d), "--db", str(db), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "podium: error: " in err and "1.json: contest 'ms'" in err and "milliseconds" in err, err
    assert not db.exists()  # refused before any store was created
    # in the future: refused, then accepted with --allow-future
    ahead = int(time.time()) + 3 * DAY
    write_contest_json(duel("ahead", ahead), d / "1.json")
    assert main(["ingest", str(d), "--db", str(db), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "in the future" in err and "--allow-future" in err
    assert not db.exists()
    assert main(["ingest", str(d), "--db", str(db), "--no-progress", "--allow-future"]) == 0
    capsys.readouterr()
    with Store.open(str(db)) as store:
        assert store.contest_ids() == ["ok", "ahead"]


def test_cli_case_insensitive_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "in"
    d.mkdir()
    write_contest_json(duel("r1", T0, "Tourist", " petr"), d / "0.json")
    write_contest_json(duel("r2", T0 + 10, "PETR", "tourist"), d / "1.json")
    db = str(tmp_path / "ci.db")
    assert main(["ingest", str(d), "--db", db, "--no-progress", "--case-insensitive-handles",
                 "--batch", "1"]) == 0
    capsys.readouterr()
    with Store.open(db) as store:
        assert store.case_insensitive_handles
        assert sorted(store.ratings_frame()["handle"]) == ["Tourist", "petr"]
    # the same files again: duplicates (the respelt content is the stored content)
    assert main(["ingest", str(d), "--db", db, "--no-progress"]) == 0
    assert "2 duplicate" in capsys.readouterr().out
    assert main(["db-info", "--db", db]) == 0
    assert "handle policy:  case-insensitive" in capsys.readouterr().out
    # an exact store cannot become case-insensitive
    exact = str(tmp_path / "exact.db")
    assert main(["ingest", str(d), "--db", exact, "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["ingest", str(d), "--db", exact, "--no-progress",
                 "--case-insensitive-handles"]) == 1
    assert "fixed when a store is created" in capsys.readouterr().err
    both = tmp_path / "both"
    both.mkdir()
    write_contest_json(duel("r9", T0 + 99, "ann", "Ann"), both / "0.json")
    assert main(["ingest", str(both), "--db", db, "--no-progress"]) == 1
    assert "differ only by case" in capsys.readouterr().err
    with Store.open(db) as store:
        assert store.contest_ids() == ["r1", "r2"]
