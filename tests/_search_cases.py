"""Prefix search of handles against a reference computed in Python (shared by the
SQLite and PostgreSQL store tests)."""

from __future__ import annotations

import unicodedata
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from podium import Contest
from podium.store import Store

# Case folding that changes length (ß -> ss, ﬀ -> ff), titlecase letters, LIKE's
# wildcards and escape character, the last letters before the surrogates and after the
# private-use area, the highest assigned letter (handles may hold no unassigned,
# private-use or noncharacter code point; the prefixes searched may: the last code
# points before the surrogates and of Unicode), the Kelvin sign (folds to k), equal
# prefixes of different case.
SEARCH_HANDLES = [
    "Ann", "anna", "ANNE", "a_b", "a%c", "a/d", "ab", "a", "Straße", "strasse", "STRASSE1",
    "\ufb00x", "ffy", "Σοφία", "σοφός", "\u01c5emal", "\u01c6uro", "名前", "名字",
    "x\ud7fb1", "x\uf900", "z\U000323af", "z\U000323afq", "za", "_under", "%pct", "0", "09",
    "k\u212a", "kk", "a-b", "a.b", "A b",
]

FIXED_PREFIXES = [
    "", "a", "A", "an", "ANN", "a_", "a%", "a/", "a\\", "a-", "a ", "ß", "STRASS", "strasse",
    "ff", "\ufb00", "ΣΟ", "σοφ", "\u01c4", "\u01c6", "名", "x\ud7ff", "x\ue000", "x\ud7fb",
    "x\uf900", "z", "z\U0010ffff", "z\U000323af", "k", "K", "\u212a", "_", "%", "0", "gh",
    "nobody", " ", "  an", "\tAN",
]


def search_reference(store: Store, prefix: str, limit: int) -> list[str]:
    """The rated handles whose case-folded form starts with ``prefix`` case-folded, by
    display rating (best first), then handle (by code point).  Like a stored handle,
    the prefix is NFC-normalised and loses its leading whitespace (no handle starts
    with any)."""
    board = [(r.handle, r.display_rating) for r in store.leaderboard(limit=10_000)]
    board.sort(key=lambda hr: (-hr[1], hr[0]))
    key = unicodedata.normalize("NFC", prefix.lstrip()).casefold()
    return [h for h, _ in board if h.casefold().startswith(key)][:limit]


def case_search(url: str, monkeypatch: Any, through: str) -> None:
    """``search_handles`` equals :func:`search_reference` on awkward handles and
    prefixes, reading the ``handle_key`` range (``through="range"``) or walking the
    players in rating order (``"rating-walk"``)."""
    import podium.store.queries as store_module

    monkeypatch.setattr(store_module, "SEARCH_RANGE_ROWS", 10**9 if through == "range" else 0)
    ranked = Contest([(h, k, k) for k, h in enumerate(SEARCH_HANDLES)], name="r1",
                     time_seconds=1)
    tied = Contest([("ghost", 0, 2), ("Ghost2", 0, 2), ("annabel", 0, 2)], name="tied",
                   time_seconds=2)  # everybody tied: with all_tied="skip", rates nobody
    with Store.create(url, "mmr", {"all_tied": "skip"}) as store:
        store.ingest(ranked)
        store.ingest(tied)
        assert store.count_players() == len(SEARCH_HANDLES)
        for prefix in FIXED_PREFIXES:
            for limit in (1, 3, 50):
                assert store.search_handles(prefix, limit) == \
                    search_reference(store, prefix, limit), (prefix, limit)
        assert store.search_handles("gh") == [] and store.search_handles("a", 0) == []

        alphabet = st.sampled_from(sorted(set("".join(SEARCH_HANDLES) + "Aa_%/\\SsK")))

        @settings(max_examples=100, deadline=None)
        @given(prefix=st.text(alphabet, max_size=4) | st.sampled_from(SEARCH_HANDLES).flatmap(
            lambda h: st.integers(0, len(h)).map(lambda k: h[:k].upper())))
        def check(prefix: str) -> None:
            assert store.search_handles(prefix, 5) == search_reference(store, prefix, 5)

        check()
