"""The explain routes (``GET /api/contests/{id}/players/{handle}/explain`` and
``GET /api/explain``) and ``podium explain``, on SQLite and PostgreSQL.

The answers are checked against ``Store.explain`` and the stored events; ids with
slashes (a URL) and handles with ``/`` and ``.`` reach the right contest and player,
and never the contest route.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterator
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium.cli import main  # noqa: E402
from podium.core.contest import Contest  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.store import Store  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

URL_ID = "https://example.org/contest/7/standings"
ODD = "a/b.c"  # a handle with a slash and a dot
DOTS = ".."


def _history() -> list[Contest]:
    out = []
    for k, c in enumerate(synthetic_contests(12, 6, seed=8, participation=1.0)):
        handles = [{3: ODD, 7: DOTS}.get(int(h[1:]), h) for h in c.handles]
        out.append(Contest.from_arrays(handles, c.lo, c.hi, name=f"round {k}",
                                       time_seconds=c.time_seconds,
                                       url=URL_ID if k == 4 else None))
    return out


@pytest.fixture()
def app(store_url: str) -> Iterator[tuple[TestClient, Store]]:
    with Store.create(store_url, "mmr", snapshot_every=2) as store:
        store.ingest_many(_history())
    with TestClient(create_app(store_url, "tok")) as client, Store.open(store_url) as reader:
        yield client, reader


def test_explain_route_with_url_id_and_odd_handle(app: tuple[TestClient, Store]) -> None:
    client, store = app
    want = store.explain(URL_ID, ODD)
    view = store.contest(URL_ID)
    assert view is not None
    me = next(c for c in view.changes if c.handle == ODD)
    for path in (f"/api/contests/{URL_ID}/players/{ODD}/explain",
                 f"/api/contests/{quote(URL_ID, safe='')}/players/{quote(ODD, safe='')}/explain"):
        r = client.get(path)
        assert r.status_code == 200, (path, r.text)
        d = r.json()
        assert d["contest_id"] == URL_ID and d["player"] == ODD
        assert (d["mu_before"], d["mu_after"]) == (want.mu_before, want.mu_after)
        assert d["mu_after"] == me.mu and d["sigma_after"] == me.sigma
        assert d["performance"] == want.performance == me.perf
        assert isinstance(d["terms"], list) and d["terms"]
        assert {"source", "kind", "value", "equation"} <= set(d["terms"][0])
        assert math.isclose(d["display_before"] + d["change"], d["display_after"],
                            abs_tol=1e-9)
    # the contest route still answers for the contest itself
    assert client.get(f"/api/contests/{URL_ID}").json()["contest_id"] == URL_ID


def test_explain_query_form_and_top(app: tuple[TestClient, Store]) -> None:
    client, store = app
    r = client.get("/api/explain", params={"contest": "round 5", "handle": DOTS, "top": 2})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["player"] == DOTS
    perf = next(q for q in d["equations"] if q["name"] == "performance")
    listed = [t["value"] for t in d["terms"] if t["equation"] == "performance"]
    assert len(listed) == 4 and perf["count"] == 12 and perf["omitted"] == 8
    assert math.fsum(listed) + perf["omitted_total"] == pytest.approx(perf["total"], abs=1e-12)
    assert perf["holds"]
    full = client.get("/api/explain", params={"contest": "round 5", "handle": DOTS,
                                              "all": "true"}).json()
    assert len([t for t in full["terms"] if t["equation"] == "performance"]) == 12
    assert full == store.explain("round 5", DOTS).to_dict()


@pytest.mark.parametrize(("params", "needle"), [
    ({"contest": "no such", "handle": "p01"}, "unknown contest"),
    ({"contest": "round 1", "handle": "nobody"}, "is not in contest"),
])
def test_explain_not_found(app: tuple[TestClient, Store], params: dict[str, str],
                           needle: str) -> None:
    client, _ = app
    r = client.get("/api/explain", params=params)
    assert r.status_code == 404 and needle in r.json()["detail"]
    r = client.get(f"/api/contests/{quote(params['contest'], safe='')}/players/"
                   f"{quote(params['handle'], safe='')}/explain")
    assert r.status_code == 404 and needle in r.json()["detail"]


def test_explain_bad_top(app: tuple[TestClient, Store]) -> None:
    client, _ = app
    r = client.get("/api/explain", params={"contest": "round 1", "handle": "p01", "top": -1})
    assert r.status_code == 422 and "top" in r.json()["detail"]


def test_explain_in_openapi(app: tuple[TestClient, Store]) -> None:
    client, _ = app
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/contests/{contest_id}/players/{handle}/explain" in paths
    assert "/api/explain" in paths


def test_podium_explain_cli(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with Store.create(store_url, "codeforces") as store:
        store.ingest_many(_history())
        want = store.explain(URL_ID, ODD)
    assert main(["explain", "--db", store_url, "--contest", URL_ID, "--player", ODD]) == 0
    text = capsys.readouterr().out
    assert f"{ODD} in " in text and "change: d_i" in text and "holds" in text
    assert f"{want.display_before:.4f}" in text and f"{want.display_after:.4f}" in text
    assert main(["explain", "--db", store_url, "--contest", URL_ID, "--player", ODD,
                 "--json", "--top", "0"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d == json.loads(json.dumps(want.to_dict()))
    assert sum(t["value"] for t in d["terms"] if t["equation"] == "change") == d["change"]
    assert main(["explain", "--db", store_url, "--contest", "nope", "--player", ODD]) == 1
    assert "unknown contest 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["explain", "--db", store_url, "--contest", URL_ID, "--player", ODD,
              "--top", "-3"])
