"""The smoothed companion of a ladder (issue 29, item 4; ``podium.store.smoothing``),
on SQLite and PostgreSQL (``store_url``).

* every write recomputes it, and the stored curves equal a HistoryRater fed the same
  contests in the same writes, bit for bit; a rebuild (after a correction) equals one
  HistoryRater over the corrected history; the incremental ``mmr-smooth`` curves stay
  within a stated tolerance of smoothing the whole history at once;
* kill -9 inside an ingest's transaction (before any row, after the filter's rows,
  after the companion's, at the commit) leaves the ladder *and* its companion as they
  were;
* the player page draws both curves and states the level offset; the API returns both
  curves and the past changes; ``podium explain --past`` lists them, with their causes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import _store_cases as cases
import numpy as np
import pytest
from _history_cases import team_contests
from sqlalchemy import select

from podium import Contest
from podium.cli import main
from podium.history_rater import HistoryRater
from podium.io import synthetic_contests, write_contest_dir
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine
from podium.store.models import StoreError
from podium.store.smoothing import companion_params, smooth_tables

T0 = 1_600_000_000


def _history(n: int = 9, players: int = 24, seed: int = 3) -> list[Contest]:
    cs = synthetic_contests(players, n, seed=seed, participation=0.7)
    return [Contest(c.standings, name=f"round {k}", time_seconds=T0 + 86_400 * k)
            for k, c in enumerate(cs)]


def _stored(store: Store) -> dict[tuple[str, str], tuple[float, float]]:
    """``(handle, contest name) -> (mu, sigma)`` of every stored smoothed row."""
    ctx = store.services.context
    st, p, c = smooth_tables(ctx.tables.prefix), ctx.tables.players, ctx.tables.contests
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(p.c.handle, c.c.name, st.events.c.mu, st.events.c.sigma)
            .select_from(st.events.join(p, p.c.pk == st.events.c.player_pk)
                         .join(c, c.c.pk == st.events.c.contest_pk))).all()
    return {(h, n): (float(mu), float(sg)) for h, n, mu, sg in rows}


def _rows_of(hr: HistoryRater) -> dict[tuple[str, str], tuple[float, float]]:
    ev = hr.events.arrays()
    names = [hr.contests.names[k] for k in ev["contest"].tolist()]
    handles = [hr.players.handles[i] for i in ev["player"].tolist()]
    return {(h, n): (float(mu), float(sg)) for h, n, mu, sg in
            zip(handles, names, ev["mu"].tolist(), ev["sigma"].tolist(), strict=True)}


def _reference(store: Store, system: str) -> HistoryRater:
    params = companion_params(store.system_name, store.params, system, None)
    return HistoryRater(system, **params)


def test_every_write_recomputes_and_equals_a_history_rater(store_url: str) -> None:
    cs = _history()
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs[:3])
        assert store.smoothing() is None and store.smoothed_curve("p00") is None
        status = store.set_smoothing("mmr-smooth")
        assert status is not None and status.contests == 3 and status.last["reason"] == "enable"
        ref = _reference(store, "mmr-smooth")
        ref.extend(cs[:3])
        assert _stored(store) == _rows_of(ref)
        for c in cs[3:6]:
            store.ingest(c)
            ref.add(c)
            assert _stored(store) == _rows_of(ref)  # bit for bit
        store.ingest_many(cs[6:])  # one batch: one extend
        ref.extend(cs[6:])
        assert _stored(store) == _rows_of(ref)
        last = store.smoothing()
        assert last is not None and last.contests == len(cs)
        assert last.last["new_contests"] == 3 and last.last["moved"] > 0
        # the incremental curves against smoothing the whole history at once: the
        # bounded updates (update_sweeps 3, tol 0.01) leave them within 25 rating points
        # on this history (a stated tolerance; docs/history.md "In the store")
        whole = _reference(store, "mmr-smooth")
        whole.extend(cs)
        a, b = _stored(store), _rows_of(whole)
        assert a.keys() == b.keys()
        gap = max(abs(a[k][0] - b[k][0]) for k in a)
        assert 0 < gap < 25.0
        # a new process reads the state from the database: same curves as one going on
        store.ingest(Contest(cs[0].standings, name="round x", time_seconds=T0 + 86_400 * 20))
        ref.add(Contest(cs[0].standings, name="round x", time_seconds=T0 + 86_400 * 20))
        expected = _rows_of(ref)
    with Store.open(store_url, cache=False) as again:
        assert _stored(again) == expected
        nxt = Contest(cs[1].standings, name="round y", time_seconds=T0 + 86_400 * 21)
        again.ingest(nxt)
        ref.add(nxt)
        assert _stored(again) == _rows_of(ref)


def test_a_correction_rebuilds_and_the_past_changes_are_explained(store_url: str) -> None:
    cs = _history(7)
    with Store.create(store_url, "mmr") as store:
        store.set_smoothing("mmr-smooth")
        store.ingest_many(cs[:6])
        before = _stored(store)
        store.ingest(cs[6])
        after = _stored(store)
        handle = cs[6].handles[0]
        pc = store.past_changes(handle)
        assert pc is not None and pc.reason == "write" and pc.contests == [["round 6",
                                                                            "round 6"]]
        moved = {(handle, n): after[(handle, n)][0] - before[(handle, n)][0]
                 for (h, n) in before if h == handle}
        big = sorted((v for v in moved.values() if abs(v) >= 0.005), key=abs, reverse=True)
        assert pc.moved == len(big) > 0
        assert [round(x.change, 9) for x in pc.changes] == [round(v, 9) for v in big[:10]]
        top = pc.changes[0]
        assert top.own  # the player played in round 6
        assert top.before == pytest.approx(before[(handle, top.contest_name)][0])
        # every named opponent met the player in that contest and played in round 6
        earlier = next(c for c in cs if c.name == top.contest_name)
        assert set(top.via) <= (set(earlier.handles) & set(cs[6].handles)) - {handle}
        # a correction re-rates the history: the companion is smoothed again from scratch
        store.delete("round 2")
        kept = [c for c in cs if c.name != "round 2"]
        ref = _reference(store, "mmr-smooth")
        ref.extend(kept)
        rebuilt = _stored(store)
        assert rebuilt == _rows_of(ref)
        pc = store.past_changes(handle)
        assert pc is not None and pc.reason == "rebuild" and pc.changes
        for x in pc.changes:  # against the curve stored before the correction
            assert x.before == after[(handle, x.contest_name)][0]
            assert x.after == rebuilt[(handle, x.contest_name)][0]
            assert not x.own and not x.via


def test_whr_companion_and_refusals(store_url: str) -> None:
    cs = _history(5, players=12, seed=8)
    with Store.create(store_url, "glicko") as store:
        store.ingest_many(cs[:2])
        with pytest.raises(StoreError, match="not a whole-history system"):
            store.set_smoothing("mmr")
        with pytest.raises(StoreError, match="unknown parameter"):
            store.set_smoothing("whr", {"nope": 1})
        assert store.smoothing() is None
        store.set_smoothing("whr")
        ref = _reference(store, "whr")
        ref.extend(cs[:2])
        for c in cs[2:]:
            store.ingest(c)
            ref.add(c)
        got, want = _stored(store), _rows_of(ref)
        assert got == want
        curve = store.smoothed_curve(cs[0].handles[0])
        assert curve is not None and curve.system == "whr" and curve.filter_system == "glicko"
        assert curve.offset is not None and all(
            p.aligned == pytest.approx(p.smoothed - curve.offset) for p in curve.points)
        store.set_smoothing(None)
        assert store.smoothing() is None and store.smoothed_curve(cs[0].handles[0]) is None
        with store.engine.connect() as conn:
            assert not conn.dialect.has_table(conn, smooth_tables("").events.name)


def test_a_team_ladder_is_smoothed_and_a_new_process_goes_on(store_url: str) -> None:
    """An ``mmr`` ladder of team rounds (weights, ties) with the ``mmr-smooth``
    companion: the stored curves equal a HistoryRater fed the same writes, bit for bit,
    and a new process that reads the state (with the members' noises) goes on as it."""
    cs = team_contests(8, n_players=30, n_rounds=9, start=T0)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs[:5])
        store.set_smoothing("mmr-smooth")
        ref = _reference(store, "mmr-smooth")
        ref.extend(cs[:5])
        assert _stored(store) == _rows_of(ref)
        for c in cs[5:7]:
            store.ingest(c)
            ref.add(c)
        assert _stored(store) == _rows_of(ref)
    with Store.open(store_url, cache=False) as again:
        for c in cs[7:]:
            again.ingest(c)
            ref.add(c)
        assert _stored(again) == _rows_of(ref)


def test_a_refused_contest_leaves_ladder_and_companion_unchanged(store_url: str) -> None:
    cs = _history(3)
    # ttt's default p_draw 0 refuses a tie
    tie = Contest([("p00", 0, 0), ("p01", 1, 2), ("p02", 1, 2)], name="tie",
                  time_seconds=T0 + 86_400 * 10)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs)
        store.set_smoothing("ttt")
        before = _all_rows(store_url)
        with pytest.raises(StoreError, match="smoothed companion.*podium smooth --off"):
            store.ingest(tie)
        assert _all_rows(store_url) == before
        store.ingest(Contest(cs[0].standings, name="later", time_seconds=T0 + 86_400 * 11))
        assert store.smoothing().contests == 4  # type: ignore[union-attr]


def _all_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the store's tables and of the default ladder's companion."""
    out = cases.dump(url)
    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            for t in smooth_tables("").metadata.sorted_tables:
                if conn.dialect.has_table(conn, t.name):
                    out[t.name] = [tuple(r) for r in conn.execute(
                        select(t).order_by(*t.primary_key.columns))]
    finally:
        eng.dispose()
    return out


def test_kill_mid_ingest_leaves_the_companion(store_url: str, tmp_path: Path) -> None:
    cs = _history(5)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs[:3])
        store.set_smoothing("mmr-smooth")
    path = tmp_path / "next"
    write_contest_dir(cs[3:4], path)
    # the filter's stages are those of tests/test_store_crash.py; here: before any row,
    # the filter's rows written but not the companion's, both written, at the commit
    for stage in ("rated", "players", "smoothed", "commit"):
        before = _all_rows(store_url)
        reached = cases.kill_at_stage([cases.INGEST_SCRIPT, store_url, str(path), "0", "1"],
                                      stage, tmp_path, what=f"ingest (stage {stage})")
        assert reached[-1] == stage
        assert ("smoothed" in reached) == (stage in ("smoothed", "commit"))
        assert _all_rows(store_url) == before, stage
        cases.check_integrity(store_url)
    with Store.open(store_url) as store:
        store.ingest_many(cs[3:])
        ref = _reference(store, "mmr-smooth")
        ref.extend(cs[:3])
        ref.extend(cs[3:])
        assert _stored(store) == _rows_of(ref)


def test_page_api_and_explain_show_both_curves(store_url: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from podium.service.app import create_app

    cs = _history(6)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs[:5])
        handle = cs[5].handles[0]
        plain = create_app(store_url, "tok")
        with TestClient(plain) as client:
            assert 'class="smoothed-line"' not in client.get(f"/players/{handle}").text
            assert client.get(f"/api/players/{handle}/smoothed").status_code == 404
        store.set_smoothing("mmr-smooth")
        store.ingest(cs[5])
        curve = store.smoothed_curve(handle)
        assert curve is not None and curve.offset is not None
    app = create_app(store_url, "tok")
    with TestClient(app) as client:
        page = client.get(f"/players/{handle}").text
        assert 'class="rating-line"' in page and 'class="smoothed-line"' in page
        assert 'id="level-offset"' in page
        side = "above" if curve.offset >= 0 else "below"
        assert f"sit {abs(curve.offset):,.0f} {side} the filtered ones" in page  # stated
        assert 'id="past-changes"' in page and "own new result" in page
        api = client.get(f"/api/players/{handle}/smoothed").json()
        assert api["offset"] == pytest.approx(curve.offset)
        assert len(api["points"]) == len(curve.points)
        assert all(p["filtered"] is not None for p in api["points"])
        assert [p["smoothed"] for p in api["points"]] == [p.smoothed for p in curve.points]
        past = client.get("/api/past-changes", params={"handle": handle}).json()
        assert past["reason"] == "write" and past["changes"]
        assert client.get("/api/players/nobody/smoothed").status_code == 404
    assert main(["explain", "--db", store_url, "--player", handle, "--past"]) == 0
    text = capsys.readouterr().out
    assert f"What changed in the past of {handle}" in text and "'round 5'" in text
    assert "->" in text and "why:" in text
    assert main(["explain", "--db", store_url, "--player", handle, "--past", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["changes"][0]["change"] == pytest.approx(past["changes"][0]["change"])
    assert main(["smooth", "--db", store_url]) == 0
    assert "level offset" in capsys.readouterr().out


def test_level_offset_is_the_mean_gap(store_url: str) -> None:
    cs = _history(6)
    with Store.create(store_url, "mmr") as store:
        store.set_smoothing("mmr-smooth")
        store.ingest_many(cs)
        gaps = []
        for h in {h for c in cs for h in c.handles}:
            cv = store.smoothed_curve(h)
            assert cv is not None
            gaps += [p.smoothed - p.filtered for p in cv.points if p.filtered is not None]
        status = store.smoothing()
        assert status is not None and status.pairs == len(gaps)
        assert status.offset == pytest.approx(float(np.mean(gaps)), abs=1e-9)
        with store.engine.connect() as conn:
            n = conn.execute(select(S.events.c.player_pk)).all()
        assert len(n) == len(gaps)


def test_season_boundaries_are_left_to_the_filter(store_url: str) -> None:
    cs = _history(5)
    with Store.create(store_url, "mmr") as store:
        store.set_smoothing("mmr-smooth")
        store.ingest_many(cs[:3])
        store.new_season("soft", time_seconds=cs[2].time_seconds + 10)
        for c in cs[3:]:
            store.ingest(c)
        ref = _reference(store, "mmr-smooth")
        ref.extend(cs[:3])
        for c in cs[3:]:
            ref.add(c)
        assert _stored(store) == _rows_of(ref)
        status = store.smoothing()
        assert status is not None and status.contests == len(cs) + 1  # the boundary's row
