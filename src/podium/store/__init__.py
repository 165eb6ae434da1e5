"""Podium's persistent store: players, contests, standings and rating events in SQL.

>>> from podium import Contest
>>> from podium.store import Store
>>> with Store.create("sqlite://", "mmr") as store:       # in-memory SQLite
...     res = store.ingest(Contest([("ann", 0, 0), ("bob", 1, 1)], name="round 1"))
...     again = store.ingest(Contest([("ann", 0, 0), ("bob", 1, 1)], name="round 1"))
...     (res.status, again.status, [r.handle for r in store.leaderboard()])
('applied', 'duplicate', ['ann', 'bob'])

A SQLite file by default (``podium.db``), PostgreSQL by URL
(``postgresql://user@host:5432/db``), the same code.  See :mod:`podium.store.store`
for the design, :mod:`podium.store.schema` for the tables and
:mod:`podium.store.migrations` for schema versions.
"""

from typing import TYPE_CHECKING, Any

from podium.store.models import (
    DEFAULT_DB,
    ContestChange,
    ContestSummary,
    ContestTeam,
    ContestView,
    CorrectionResult,
    HistoryRow,
    IngestResult,
    LadderInfo,
    LeaderboardRow,
    PlayerView,
    SeasonInfo,
    StoreError,
    TeamMember,
    UnknownContestError,
    UnknownLadderError,
)

if TYPE_CHECKING:
    from podium.store.engine import display_url, normalize_url
    from podium.store.schema import SCHEMA_VERSION
    from podium.store.store import Store, content_hash, default_contest_id

__all__ = [
    "Store",
    "StoreError",
    "UnknownContestError",
    "UnknownLadderError",
    "LadderInfo",
    "SeasonInfo",
    "IngestResult",
    "CorrectionResult",
    "LeaderboardRow",
    "PlayerView",
    "HistoryRow",
    "ContestView",
    "ContestChange",
    "ContestTeam",
    "TeamMember",
    "ContestSummary",
    "SCHEMA_VERSION",
    "DEFAULT_DB",
    "content_hash",
    "default_contest_id",
    "display_url",
    "normalize_url",
]

#: Names that need SQLAlchemy, imported on first use so that ``podium`` without the
#: ``service`` extra still starts (``podium ingest`` then says what to install).
_LAZY = {
    "Store": "podium.store.store",
    "content_hash": "podium.store.store",
    "default_contest_id": "podium.store.store",
    "SCHEMA_VERSION": "podium.store.schema",
    "display_url": "podium.store.engine",
    "normalize_url": "podium.store.engine",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("sqlalchemy", "psycopg"):
            raise StoreError(
                f"the store needs {exc.name.split('.')[0]}: pip install 'podium[service]'"
            ) from None
        raise
    globals()[name] = value
    return value
