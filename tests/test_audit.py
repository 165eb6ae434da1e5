"""The audit log (``podium.store.audit``): one row per write, committed with the write,
naming who, what, when, the contest and its content hash; ``GET /api/audit`` and
``podium audit``; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")
pytest.importorskip("sqlalchemy", reason="the service extra is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium import Contest  # noqa: E402
from podium.cli import main  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store, StoreError, content_hash  # noqa: E402
from podium.store.actor import acting_as, current_actor, set_default_actor  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

T0 = 1_700_000_000


def rounds(n: int, start: int = 0, t0: int = T0) -> list[Contest]:
    return [Contest([(f"p{(k + j) % 7}", j, j) for j in range(5)], name=f"round {k}",
                    time_seconds=t0 + 100 * k) for k in range(start, start + n)]


def test_every_write_is_recorded(store_url: str) -> None:
    cs = rounds(6)
    with Store.create(store_url, "mmr", snapshot_every=2) as store:
        assert store.audit().total == 0
        store.ingest(cs[0])
        with acting_as("importer"):
            store.ingest_many(cs[1:4])
        store.ingest(cs[0])  # a duplicate changes nothing: not recorded
        store.ingest_many([cs[1], cs[4]])  # one duplicate, one new
        late = Contest([("p1", 0, 0), ("zed", 1, 1)], name="late", time_seconds=T0 + 150)
        store.ingest(late, recompute_from=True)
        page = store.audit()
        rev = store.stats()
    entries = list(reversed(page.entries))  # oldest first
    assert page.total == 6 == len(entries)
    assert [(e.action, e.contest_id) for e in entries] == [
        ("ingest", "round 0"), ("ingest", "round 1"), ("ingest", "round 2"),
        ("ingest", "round 3"), ("ingest", "round 4"), ("recompute", "late")]
    assert [e.content_hash for e in entries] == [content_hash(c) for c in
                                                 (*cs[:5], late)]
    assert [e.revision for e in entries] == [1, 2, 2, 2, 3, 4]
    assert [e.actor for e in entries][1:4] == ["importer"] * 3
    assert entries[0].actor == current_actor() and entries[0].actor.startswith("python:")
    assert [e.detail for e in entries[:5]] == [{"index": k, "players": 5} for k in range(5)]
    assert entries[5].detail == {"index": 2, "players": 2, "rerated": 3}
    assert [e.id for e in entries] == sorted(e.id for e in entries)
    assert all(T0 < e.time for e in entries)
    assert rev["contests"] == 6


def test_corrections_are_recorded(store_url: str) -> None:
    """A delete and a replace are audited with the write (actor, ids, hashes, what was
    re-rated); an unchanged replacement and an unknown id record nothing."""
    from podium.store import UnknownContestError

    cs = rounds(5)
    fixed = Contest([("p2", 0, 0), ("p1", 1, 1), ("p4", 2, 2)], name="round 2",
                    time_seconds=cs[2].time_seconds)
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(cs)
        with acting_as("admin:alice"):
            store.delete("round 1")
            store.replace(fixed)
            store.replace(fixed)  # unchanged: nothing written
            with pytest.raises(UnknownContestError):
                store.delete("round 1")
        page = store.audit(action="delete")
        both = store.audit(limit=2).entries
    assert page.total == 1
    d = page.entries[0]
    assert (d.actor, d.contest_id, d.content_hash) == ("admin:alice", "round 1",
                                                       content_hash(cs[1]))
    assert d.detail is not None and d.detail["index"] == 1 and d.detail["rerated"] == 3
    r = both[0]
    assert (r.action, r.actor, r.contest_id, r.content_hash) == (
        "replace", "admin:alice", "round 2", content_hash(fixed))
    assert r.detail is not None and r.detail["content_hash_before"] == content_hash(cs[2])
    assert r.detail["players"] == 3 and r.detail["rerated"] == 2
    assert r.revision == d.revision + 1


def test_a_refused_write_records_nothing(store_url: str) -> None:
    cs = rounds(3)
    with Store.create(store_url, "mmr") as store:
        store.ingest(cs[0])
        clash = Contest([("x", 0, 0), ("y", 1, 1)], name="round 0", time_seconds=T0 + 500)
        with pytest.raises(StoreError, match="different content"):
            store.ingest_many([cs[1], clash])  # the whole batch is refused
        with pytest.raises(StoreError, match="older than"):
            store.ingest(Contest([("x", 0, 0), ("y", 1, 1)], name="old", time_seconds=T0 - 9))
        assert [e.contest_id for e in store.audit().entries] == ["round 0"]


def test_a_crashed_write_records_nothing(store_url: str) -> None:
    """The audit row is part of the write's transaction: a failure at the last stage
    before the commit leaves neither the contest nor its row."""
    class Stop(Exception):
        pass

    def hook(stage: str) -> None:
        if stage == "commit":
            raise Stop

    cs = rounds(2)
    with Store.create(store_url, "mmr") as store:
        store.ingest(cs[0])
    with Store.open(store_url, hooks=hook) as store:
        with pytest.raises(Stop):
            store.ingest(cs[1])
    with Store.open(store_url) as store:
        assert store.contest_ids() == ["round 0"]
        assert [e.contest_id for e in store.audit().entries] == ["round 0"]


def test_actor_resolution(store_url: str) -> None:
    cs = rounds(4)
    with Store.create(store_url, "mmr", actor="nightly") as store:
        store.ingest(cs[0])
        with acting_as("alice"):
            store.ingest(cs[1])
            with acting_as("bob"):
                store.ingest(cs[2])
        store.ingest(cs[3])
        actors = [e.actor for e in reversed(store.audit().entries)]
    assert actors == ["nightly", "alice", "bob", "nightly"]
    set_default_actor("svc")
    try:
        assert current_actor() == "svc" and current_actor("opt") == "opt"
    finally:
        set_default_actor(None)
    assert current_actor().startswith("python:")
    for bad in ("", "  ", "a\nb", "x" * 201):
        with pytest.raises(ValueError, match="actor"):
            with acting_as(bad):
                pass
    with pytest.raises(ValueError, match="actor"):
        Store.open(store_url, actor="")


def test_paging_and_filters(store_url: str) -> None:
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(rounds(5))
        store.create_token("t1", "read")
        page = store.audit(limit=2)
        assert page.total == 6 and [e.action for e in page.entries] == ["token-create",
                                                                        "ingest"]
        assert [e.contest_id for e in store.audit(offset=2, limit=2).entries] == [
            "round 3", "round 2"]
        only = store.audit(action="ingest")
        assert only.total == 5 and {e.action for e in only.entries} == {"ingest"}
        one = store.audit(contest_id="round 1")
        assert one.total == 1 and one.entries[0].detail == {"index": 1, "players": 5}
        assert store.audit(action="delete").total == 0
        assert store.audit(offset=10).entries == []
        for odd in ("\x00", "a\ud800"):  # text no database holds: nothing matches
            assert store.audit(contest_id=odd).total == 0 == store.audit(action=odd).total
        for kw in ({"offset": -1}, {"limit": 1001}, {"limit": -1}, {"action": ""},
                   {"contest_id": ""}):
            with pytest.raises(StoreError):
                store.audit(**kw)  # type: ignore[arg-type]


def test_over_http_and_cli(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.create(store_url, "mmr") as store:
        admin = store.create_token("root", "admin")
        writer = store.create_token("ci", "write")
    with TestClient(create_app(store_url, None)) as client:
        doc: dict[str, Any] = {"name": "web round", "time_seconds": T0,
                               "standings": [["ann", 0, 0], ["bob", 1, 1]]}
        r = client.post("/api/contests", json=doc,
                        headers={"Authorization": f"Bearer {writer}"})
        assert r.status_code == 201, r.text
        assert client.get("/api/audit",
                          headers={"Authorization": f"Bearer {writer}"}).status_code == 403
        auth = {"Authorization": f"Bearer {admin}"}
        r = client.get("/api/audit", headers=auth)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["total"] == 3 and body["offset"] == 0 and body["limit"] == 50
        top = body["entries"][0]
        assert (top["action"], top["contest_id"], top["actor"], top["revision"]) == (
            "ingest", "web round", "token:ci (write)", 1)
        assert top["content_hash"] == content_hash(
            Contest([("ann", 0, 0), ("bob", 1, 1)], name="web round", time_seconds=T0))
        r = client.get("/api/audit?action=token-create&limit=1&offset=1", headers=auth)
        assert [e["detail"] for e in r.json()["entries"]] == [{"name": "root",
                                                              "role": "admin"}]
        r = client.get("/api/audit?contest=web%20round", headers=auth)
        assert r.json()["total"] == 1
        for q in ("limit=0", "limit=1001", "offset=-1", "action="):
            assert client.get(f"/api/audit?{q}", headers=auth).status_code == 422, q
    assert main(["audit", "--db", store_url, "--json", "-n", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"] == 3 and len(out["entries"]) == 2
    assert main(["audit", "--db", store_url, "--contest", "web round"]) == 0
    text, err = capsys.readouterr()
    assert "token:ci (write)" in text and "ingest 'web round'" in text and "1 of 1" in err
    assert main(["audit", "--db", store_url, "-n", "5000"]) == 2
    # a command's writes are the command line's
    assert main(["token", "revoke", "ci", "--db", store_url]) == 0
    capsys.readouterr()
    with Store.open(store_url) as store:
        assert store.audit(limit=1).entries[0].actor.startswith("cli:")
