"""Fetch contest histories from public APIs into the Elo-MMR contest format.

* :func:`fetch_codeforces`: Codeforces rated rounds from ``contest.list`` and
  ``contest.ratingChanges``, in the conventions of the Elo-MMR authors'
  Codeforces dataset (gym contests from ``contest.standings``);
* :func:`fetch_ctftime`: CTFtime event results (``results/<year>/``), one
  handle per team id, with a ``teams.csv`` of team names.

Both write ``OUT/0.json, 1.json, ...`` plus ``OUT/all_contests.csv``, keep every
raw API answer under ``OUT/.cache/`` so that an interrupted fetch resumes where
it stopped, write every file atomically, space their requests (``min_interval``)
and retry transient failures with exponential backoff.  Both take a
``transport`` (``get(url) -> bytes``) and a fake ``clock``/``sleep`` for tests.
The command line is ``podium fetch codeforces|ctftime OUT_DIR ...``.
"""

from podium.io.fetch._common import FetchReport, SkippedContest
from podium.io.fetch._http import (
    USER_AGENT,
    FetchError,
    HttpClient,
    HttpStatusError,
    Transport,
    urllib_transport,
)
from podium.io.fetch.codeforces import (
    CODEFORCES_TEAM_CONTESTS,
    CodeforcesApiError,
    contest_from_rating_changes,
    contest_from_standings,
    fetch_codeforces,
)
from podium.io.fetch.ctftime import contest_from_results, fetch_ctftime

__all__ = [
    "CODEFORCES_TEAM_CONTESTS",
    "USER_AGENT",
    "CodeforcesApiError",
    "FetchError",
    "FetchReport",
    "HttpClient",
    "HttpStatusError",
    "SkippedContest",
    "Transport",
    "contest_from_rating_changes",
    "contest_from_results",
    "contest_from_standings",
    "fetch_codeforces",
    "fetch_ctftime",
    "urllib_transport",
]
