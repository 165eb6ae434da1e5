"""Saved ratings keep their meaning: a checkpoint, snapshot or store written before
``all_tied`` existed skipped every draw, and goes on skipping them; new ones rate
draws (``RatingSystem.params_added_later``, ``podium.systems.saved_params``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from podium import Contest, Rater
from podium.store import Store
from podium.store import schema as S
from podium.store.engine import make_engine
from podium.store.explain import ExplainNotFound
from podium.store.migrations import set_meta
from podium.systems import SYSTEMS, get_system, saved_params

HISTORY = [Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name=f"r{k}",
                   time_seconds=100 * k) for k in range(3)]
DRAW = Contest([("a", 0, 2), ("c", 0, 2), ("z", 0, 2)], name="draw", time_seconds=1000)


@pytest.mark.parametrize("name", list(SYSTEMS))
def test_saved_params_without_the_parameter_mean_skip(name: str) -> None:
    params = get_system(name).params()
    assert params["all_tied"] == "rate"
    old = {k: v for k, v in params.items() if k != "all_tied"}
    assert saved_params(name, old)["all_tied"] == "skip"
    assert saved_params(name, params)["all_tied"] == "rate"
    assert get_system(name, **saved_params(name, old)).all_tied == "skip"


def _without_all_tied(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An image as Podium wrote it before the parameter: no ``all_tied`` in its params."""
    meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    del meta["params"]["all_tied"]
    return {**arrays, "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}


def test_an_old_checkpoint_keeps_skipping_draws(tmp_path: Path) -> None:
    r = Rater("mmr")
    r.extend(HISTORY)
    old = Rater.from_arrays(_without_all_tied(r.to_arrays()))
    assert old.system.all_tied == "skip"
    rep = old.add(DRAW)
    assert rep.skipped and "z" not in old.players.index
    assert old.rating("a") == r.rating("a")
    # a checkpoint written now records the parameter and rates the draw when loaded
    path = tmp_path / "now.npz"
    r.save(path)
    again = Rater.load(path)
    assert again.system.all_tied == "rate"
    assert not again.add(DRAW).skipped and again.rating("a") != r.rating("a")
    # and the old one, saved again, still skips (its parameter is now written down)
    old.save(path)
    assert Rater.load(path).system.all_tied == "skip"


def _drop_all_tied_from_store(url: str) -> None:
    """Make the store look as Podium wrote it before the parameter."""
    eng = make_engine(url)
    try:
        with eng.begin() as conn:
            params = json.loads(conn.execute(
                select(S.meta.c.value).where(S.meta.c.key == "params")).scalar_one())
            del params["all_tied"]
            set_meta(conn, "params", json.dumps(params, sort_keys=True))
    finally:
        eng.dispose()


def test_an_old_store_keeps_skipping_draws_and_a_new_one_rates_them(tmp_path: Path) -> None:
    old_url = f"sqlite:///{tmp_path / 'old.db'}"
    new_url = f"sqlite:///{tmp_path / 'new.db'}"
    for url in (old_url, new_url):
        with Store.create(url, "glicko", snapshot_every=1) as store:
            store.ingest_many(HISTORY)
    _drop_all_tied_from_store(old_url)
    with Store.open(old_url, cache=False, snapshot_every=1) as store:
        assert store.params["all_tied"] == "skip"
        res = store.ingest(DRAW)
        assert res.new_players == 0 and res.warnings == (
            "contest 'draw' (#3): everybody tied; nothing changed",)
        view = store.contest("draw")
        assert view is not None and not view.rated and not view.changes
        with pytest.raises(ExplainNotFound, match=r"not rated \(everybody tied\)"):
            store.explain("draw", "a")
        old_a = store.player("a")
    with Store.open(new_url, cache=False, snapshot_every=1) as store:
        assert store.params["all_tied"] == "rate"
        res = store.ingest(DRAW)
        assert res.new_players == 1 and not res.warnings
        view = store.contest("draw")
        assert view is not None and view.rated and len(view.changes) == 3
        why = store.explain("draw", "z")
        assert why.mu_after == pytest.approx(view.changes[2].mu, abs=0)
        new_a = store.player("a")
    assert old_a is not None and new_a is not None and old_a.mu != new_a.mu
    # the same draws rated from scratch by a Rater, with each store's parameter
    for url, params in ((old_url, {"all_tied": "skip"}), (new_url, {})):
        r = Rater("glicko", **params)
        r.extend([*HISTORY, DRAW])
        with Store.open(url) as store:
            got = store.player("a")
            assert got is not None and (got.mu, got.sigma) == r.rating("a")
