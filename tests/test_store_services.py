"""The store as composed services (src/podium/store/store.py): the facade's API, what
each service owns and drops on close, and the one storable-text rule of every lookup.

On SQLite and, when ``PODIUM_TEST_POSTGRES_URL`` is set, on PostgreSQL (which refuses a
NUL in a query: a lookup that let one through would fail there).
"""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("sqlalchemy")

from podium import Contest  # noqa: E402
from podium.core.guards import storable_text  # noqa: E402
from podium.store import Store, UnknownContestError  # noqa: E402
from podium.store.explain import ExplainNotFound  # noqa: E402

#: Every public method, classmethod and attribute of ``Store`` before it became a facade
#: over services (issue 26): the facade keeps each of them.
PUBLIC_API = {
    # methods and classmethods
    "audit", "check_token", "close", "contest", "contest_ids", "contests", "count_players",
    "count_tokens", "create", "create_token", "current_ratings", "delete", "explain",
    "export", "handle_spellings", "ingest", "ingest_many", "latest_contest", "leaderboard",
    "lookup_contests", "open", "open_or_create", "player", "ratings_frame", "replace",
    "revoke_token", "search_handles", "snapshot", "stats", "tokens", "upgrade",
    # ladders and seasons (issue 28)
    "create_ladder", "has_ladder", "ladder", "ladder_settings", "ladders", "new_season",
    "seasons", "set_ladder_settings",
    # the smoothed companion (issue 29)
    "set_smoothing", "smoothing", "smoothed_curve", "past_changes",
    # attributes
    "actor", "allow_future", "case_insensitive_handles", "engine", "future_margin_s",
    "hooks", "keep_snapshots", "params", "schema_version", "snapshot_events",
    "snapshot_every", "system", "system_name", "url", "use_cache", "ladder_name",
}

T0 = 1_600_000_000


def _history() -> list[Contest]:
    return [
        Contest([("ann", 0, 0), ("bob", 1, 1), ("cy", 2, 2)], name="r1", time_seconds=T0),
        Contest([("bob", 0, 0), ("cy", 1, 1), ("ann", 2, 2)], name="r2",
                time_seconds=T0 + 86_400),
        Contest([("cy", 0, 0), ("ann", 1, 1), ("dee", 2, 2)], name="r3",
                time_seconds=T0 + 2 * 86_400),
    ]


def test_facade_keeps_the_public_api(store_url: str) -> None:
    with Store.create(store_url, "glicko") as store:
        public = {n for n in dir(store) if not n.startswith("_")}
        assert public - PUBLIC_API == {"services"}
        assert PUBLIC_API <= public
        assert store.services.context.system is store.system


def test_close_drops_every_service_state(store_url: str) -> None:
    store = Store.create(store_url, "mmr")
    services = store.services
    store.ingest_many(_history())
    store.explain("r2", "ann")
    cached = services.raters.cached()
    assert cached is not None and cached.count == 3
    assert services.explain.cache_size() == 1
    assert len(services.handles.names_by_key()) == 4
    rater = weakref.ref(cached.rater)
    del cached
    store.close()
    assert services.raters.cached() is None
    assert services.explain.cache_size() == 0
    assert len(services.handles.names_by_key()) == 0
    gc.collect()
    assert rater() is None  # nothing else holds the Rater of the latest state


def test_facade_attributes_reach_the_context(store_url: str) -> None:
    seen: list[str] = []
    with Store.create(store_url, "glicko", snapshot_every=50, actor="importer") as store:
        ctx = store.services.context
        assert (store.snapshot_every, store.actor, store.use_cache) == (50, "importer", True)
        store.hooks = seen.append
        store.snapshot_every = 1
        store.actor = "fixer"
        assert ctx.hooks is not None and ctx.options.snapshot_every == 1
        store.ingest(_history()[0])
        assert "snapshot" in seen
        assert store.audit().entries[0].actor == "fixer"
        store.hooks = None
        store.ingest(_history()[1])
        assert seen.count("locked") == 1


def test_storable_text() -> None:
    assert storable_text("tourist") and storable_text("Σοφία") and storable_text("a\tb")
    assert not storable_text("a\x00b")
    assert not storable_text("\ud800x")  # a lone surrogate: not Unicode text
    assert not storable_text("\x00")


@pytest.mark.parametrize("text", ["r1\x00", "\x00", "r\ud800", "ann\x00", "\udcff"])
def test_unstorable_text_is_never_found(store_url: str, text: str) -> None:
    """Every lookup applies the one rule (:func:`storable_text`): such a text is not
    found, and never reaches the database (PostgreSQL refuses a NUL in a query, every
    driver a lone surrogate)."""
    with Store.create(store_url, "mmr") as store:
        store.ingest_many(_history())
        with pytest.raises(UnknownContestError, match="no stored id holds a NUL or a lone "
                           "surrogate"):
            store.delete(text)
        assert store.contest(text) is None
        assert store.player(text) is None
        assert store.search_handles(text) == []
        assert store.lookup_contests([text, "r1"]).keys() == {"r1"}
        assert store.handle_spellings([text, "ann"]) == {"ann": "ann"}
        assert store.current_ratings([text, "ann"]).keys() == {"ann"}
        assert store.audit(contest_id=text).total == 0
        assert store.audit(action=text).total == 0
        with pytest.raises(ExplainNotFound, match="unknown contest"):
            store.explain(text, "ann")
        with pytest.raises(ExplainNotFound, match="is not in contest"):
            store.explain("r1", text)
        assert len(store.contest_ids()) == 3  # nothing was changed
