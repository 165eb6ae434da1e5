"""The lobby routes over HTTP (FastAPI TestClient, SQLite stores): ``POST /api/predict``
answers the outcome probabilities of :mod:`podium.predict`, ``POST /api/balance`` the
split of :func:`podium.matchmaking.balance` from the store's ratings, and every bad
request is a 4xx naming the problem."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi", reason="the service extra is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from podium.core.contest import Contest  # noqa: E402
from podium.io import synthetic_contests  # noqa: E402
from podium.matchmaking import balance  # noqa: E402
from podium.predict import predict, predict_teams  # noqa: E402
from podium.service.app import create_app  # noqa: E402
from podium.service.guard import required_role  # noqa: E402
from podium.store import Store  # noqa: E402
from podium.systems import get_system  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

HISTORY = [Contest.from_arrays(c.handles, c.lo, c.hi, name=c.name, time_seconds=c.time_seconds)
           for c in synthetic_contests(24, 8, seed=3, participation=0.8)]


def _store(url: str, system: str) -> dict[str, tuple[float, float, int]]:
    with Store.create(url, system) as store:
        for c in HISTORY:
            store.ingest(c)
        return store.current_ratings([f"{h}" for h in sorted({h for c in HISTORY
                                                             for h in c.handles})])


@pytest.fixture(scope="module", params=["mmr", "trueskill"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[TestClient, str, dict[str, tuple[float, float, int]]]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('lobby') / 'lobby.db'}"
    ratings = _store(url, request.param)
    with TestClient(create_app(url, None, max_predict_players=12)) as client:
        yield client, request.param, ratings


def assert_error(r: Any, status: int, *needles: str) -> None:
    assert r.status_code == status, r.text
    for n in needles:
        assert n in r.json()["detail"], r.json()["detail"]


def test_predict_answers_the_outcome_probabilities(served: Any) -> None:
    client, name, ratings = served
    players = sorted(ratings)[:3] + ["newcomer"]
    out = client.post("/api/predict", json={"handles": players}).json()
    want = predict(get_system(name), players, ratings)
    assert out["p_first"] == pytest.approx(want.p_first.tolist(), abs=1e-15)
    np.testing.assert_allclose(out["place_probability"], want.place_probability, atol=1e-15)
    assert (out["p_draw"] is None) == (name == "mmr")
    if name == "trueskill":
        assert out["p_draw"] == pytest.approx(want.p_draw, abs=1e-15)
    teams = [{"name": "red", "members": players[:2]}, {"name": "blue", "members": players[2:]}]
    out = client.post("/api/predict", json={"teams": teams}).json()
    tp = predict_teams(get_system(name), [("red", players[:2]), ("blue", players[2:])],
                       ratings)
    assert out["p_first"] == pytest.approx(tp.p_first.tolist(), abs=1e-15)
    assert sum(out["p_first"]) == pytest.approx(1.0, abs=1e-12)
    assert len(out["place_probability"]) == 2


def test_balance_answers_balance(served: Any) -> None:
    client, name, ratings = served
    pool = sorted(ratings)[:10]
    parties = [pool[:2], pool[5:8]]
    r = client.post("/api/balance", json={"players": pool, "teams": 2, "parties": parties})
    assert r.status_code == 200, r.text
    out = r.json()
    want = balance(name, pool, ratings, 2, parties)
    assert [t["members"] for t in out["teams"]] == want.teams
    assert out["match_quality"] == want.match_quality and out["exact"] is True
    for party in parties:
        assert any(set(party) <= set(t["members"]) for t in out["teams"])
    # the match quality is predict's for that split, from the store's ratings
    split = [(t["name"], t["members"]) for t in out["teams"]]
    pred = client.post("/api/predict", json={"teams": [{"name": n, "members": m}
                                                       for n, m in split]}).json()
    assert pred["match_quality"] == out["match_quality"]
    assert [t["p_first"] for t in out["teams"]] == pytest.approx(pred["p_first"], abs=1e-15)
    assert out["model"]["system"] == name
    assert (out["p_draw"] is None) == (name == "mmr")
    three = client.post("/api/balance", json={"players": pool[:9] + ["new"], "teams": 3,
                                              "system": name}).json()
    assert sorted(len(t["members"]) for t in three["teams"]) == [3, 3, 4]
    assert three["exact"] is False


def test_balance_errors_name_the_problem(served: Any) -> None:
    client, name, ratings = served
    pool = sorted(ratings)[:6]
    post = client.post
    assert_error(post("/api/balance", json={"players": pool, "system": "no-such"}), 422,
                 "unknown system 'no-such'")
    other = "glicko" if name == "mmr" else "mmr"
    assert_error(post("/api/balance", json={"players": pool, "system": other}), 422,
                 f"rates with {name!r}, not {other!r}")
    assert_error(post("/api/balance", json={"players": [pool[0], pool[1], pool[0]]}), 422,
                 f"player {pool[0]!r} is listed twice")
    assert_error(post("/api/balance", json={"players": pool, "parties": [pool[:4]]}), 422,
                 "party #1", "has 4 players, more than a team of 3")
    assert_error(post("/api/balance", json={"players": pool[:3], "teams": 4}), 422,
                 "4 teams but only 3 players")
    assert_error(post("/api/balance", json={"players": [f"h{k}" for k in range(13)]}), 422,
                 "13 players, more than this server's limit of 12")
    assert_error(post("/api/balance", json={"players": pool, "parties": [["zz", pool[0]]]}),
                 422, "player 'zz' is not in the pool")
    assert_error(post("/api/balance", json={"players": pool, "teams": 1}), 422, "'teams'")
    assert_error(post("/api/balance", json={"teams": 2}), 422, "'players'")
    assert_error(post("/api/balance", content=b"{nope",
                      headers={"content-type": "application/json"}), 400, "JSON")


def test_balance_access() -> None:
    """Balance reads like predict: open on a public server, a read token on a private
    one."""
    assert required_role("POST", "/api/balance") is None
    assert required_role("POST", "/api/balance", private=True) == "read"


_handles = st.text(max_size=4) | st.sampled_from(["p00", "p01", "p02", "p03", " p01", "\u202e"])
_anything = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.fixed_dictionaries(
    {}, optional={"players": st.lists(_handles, max_size=7) | _anything,
                  "teams": st.integers(-1, 9) | _anything,
                  "parties": st.lists(st.lists(_handles, max_size=4), max_size=3) | _anything,
                  "system": st.sampled_from(["mmr", "trueskill", "x"]) | _anything,
                  "weight": st.floats() | _anything}))
def test_any_balance_body_is_answered_below_500(served: Any, body: dict) -> None:
    client = served[0]
    r = client.post("/api/balance", content=json.dumps(body).encode("utf-8", "surrogatepass"),
                    headers={"content-type": "application/json"})
    assert r.status_code in (200, 400, 422), r.text
    assert r.json()["detail" if r.status_code != 200 else "teams"]
