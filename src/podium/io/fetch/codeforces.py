"""Build an Elo-MMR contest history from the public Codeforces API.

:func:`fetch_codeforces` reproduces the conventions of the Elo-MMR authors'
Codeforces dataset (``cache/codeforces/N.json`` with ``all_contests.csv``),
checked against contest 908 "Good Bye 2017" of that dataset:

* one contest per rated round, from ``contest.ratingChanges``: only the rated
  participants, in the API's order (by rank);
* ``standings``: ``[handle, lo, hi]`` where ``lo..hi`` (0-based, inclusive) are
  the positions of the participants who share the row's ``rank``;
* ``name``: the ``contestName`` of the rating changes; ``url``:
  ``https://codeforces.com/contest/<id>/standings``; weight 1, no ceiling;
* ``time_seconds``: the ``ratingUpdateTimeSeconds`` of the first row (when the
  ratings were applied, after the contest; for contest 908 it is 1514571000,
  exactly the dataset's value);
* order: by ``startTimeSeconds`` of ``contest.list``; contests starting at the
  same second (Div. 1 and Div. 2 of one round) by descending id, as the dataset
  has them.  Because the time is the rating update, a few contests are out of
  time order (index 820 of the dataset); ``podium rate --sort-by-time`` fixes that;
* skipped: contests that are not FINISHED, unrated ones (an empty
  ``ratingChanges`` or the answer "Rating changes are unavailable for this
  contest"), and the team contests the dataset leaves out
  (:data:`CODEFORCES_TEAM_CONTESTS`);
* a handle listed twice in one contest (it happened in contests 447, 472 and
  615) keeps its plain name on its lowest row; the rows above get ``_clone``
  appended, as in the dataset.

The dataset itself differs from a fresh fetch in ways no fetcher should copy: it
repeats contests 1508, 1529 and 1528 (indices 1161, 1175 and 1176) and, being a
2021 snapshot, lacks later contests and any later changes to rating changes.

Gym contests (``gym=True``) have no rating changes: their standings come from
``contest.standings`` (official contestants only; see :func:`contest_from_standings`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from typing import Any

from podium.core.contest import Contest
from podium.errors import DataFormatError
from podium.io.fetch._common import (
    FetchReport,
    Progress,
    SkippedContest,
    dedupe_handles,
    prepare_out_dir,
    read_cache,
    say,
    tie_ranges,
    to_unix,
    write_cache,
    write_history,
)
from podium.io.fetch._http import FetchError, HttpClient, Transport

__all__ = [
    "API_BASE",
    "CODEFORCES_TEAM_CONTESTS",
    "CodeforcesApiError",
    "contest_from_rating_changes",
    "contest_from_standings",
    "fetch_codeforces",
]

#: Base URL of the Codeforces API methods.
API_BASE = "https://codeforces.com/api/"

#: Rated team contests that the Elo-MMR Codeforces dataset leaves out (their
#: rating changes list every member of a team at the team's rank).
CODEFORCES_TEAM_CONTESTS: frozenset[int] = frozenset(
    {524, 532, 541, 562, 566, 639, 641, 643, 695, 771, 772, 773, 823, 923, 924, 925, 951}
)

#: An unrated answer for a contest that ended less than this many seconds ago is
#: not cached: rating changes may still be on their way.
UNRATED_RECHECK_SECONDS = 3 * 86_400

_UNRATED_COMMENT = "rating changes are unavailable"
_CALL_LIMIT_COMMENT = "call limit exceeded"


class CodeforcesApiError(FetchError):
    """The Codeforces API answered ``{"status": "FAILED", "comment": ...}``.

    Attributes
    ----------
    comment : str
        The API's explanation.
    """

    def __init__(self, message: str, *, url: str, comment: str, status: int | None = None):
        super().__init__(message, url=url, status=status)
        self.comment = comment


# ====================================================================== conversion
def _field(row: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(row, dict):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(row).__name__}")
    if key not in row:
        raise DataFormatError(f"{where}: missing field {key!r}")
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise DataFormatError(f"{where}: field {key!r} has the wrong type ({value!r})")
    return value


def contest_url(contest_id: int, *, gym: bool = False) -> str:
    """The human URL of a contest's standings (the dataset's ``url``)."""
    return f"https://codeforces.com/{'gym' if gym else 'contest'}/{contest_id}/standings"


def contest_from_rating_changes(
    rows: Sequence[Any], *, source: str = "contest.ratingChanges"
) -> tuple[Contest, list[str]]:
    """Convert the ``result`` of ``contest.ratingChanges`` into a :class:`Contest`.

    Parameters
    ----------
    rows : sequence of dict
        RatingChange objects (``contestId, contestName, handle, rank,
        ratingUpdateTimeSeconds, oldRating, newRating``) in standings order.
    source : str
        Where the rows came from (URL or cache file), for messages.

    Returns
    -------
    tuple
        ``(contest, warnings)``: the contest in the Elo-MMR dataset's conventions
        (see the module docstring) and lines about repaired oddities (handles
        listed twice, rows with another update time, ranks out of order).

    Raises
    ------
    DataFormatError
        When ``rows`` is empty, a row lacks a field or has the wrong type, or the
        rows disagree on the contest id or name.
    """
    if not isinstance(rows, list | tuple) or not rows:
        raise DataFormatError(f"{source}: expected a non-empty list of rating changes")
    first = rows[0]
    cid = _field(first, "contestId", int, f"{source}: row 0")
    name = _field(first, "contestName", str, f"{source}: row 0")
    t0 = _field(first, "ratingUpdateTimeSeconds", int, f"{source}: row 0")
    label = f"contest {cid} {name!r}"
    warnings: list[str] = []
    handles: list[str] = []
    ranks: list[int] = []
    odd_times = 0
    for i, row in enumerate(rows):
        where = f"{source}: row {i}"
        if _field(row, "contestId", int, where) != cid:
            raise DataFormatError(f"{where}: contestId {row['contestId']} differs from {cid}")
        if _field(row, "contestName", str, where) != name:
            raise DataFormatError(
                f"{where}: contestName {row['contestName']!r} differs from {name!r}"
            )
        if _field(row, "ratingUpdateTimeSeconds", int, where) != t0:
            odd_times += 1
        handle = _field(row, "handle", str, where)
        if not handle:
            raise DataFormatError(f"{where}: empty handle")
        handles.append(handle)
        ranks.append(_field(row, "rank", int, where))
    if odd_times:
        warnings.append(
            f"{label}: {odd_times} row(s) have another ratingUpdateTimeSeconds than the first "
            f"({t0}); the first is used"
        )
    if any(b < a for a, b in zip(ranks, ranks[1:], strict=False)):
        order = sorted(range(len(ranks)), key=ranks.__getitem__)
        handles = [handles[i] for i in order]
        ranks = [ranks[i] for i in order]
        warnings.append(f"{label}: rows were not in rank order; sorted by rank")
    handles, renamed = dedupe_handles(handles)
    if renamed:
        warnings.append(
            f"{label}: handle(s) listed more than once: {', '.join(sorted(set(renamed)))}; "
            "the higher rows get '_clone' appended"
        )
    lo, hi = tie_ranges(ranks)
    contest = Contest.from_arrays(
        handles, lo, hi, name=name, time_seconds=t0, url=contest_url(cid)
    )
    return contest, warnings


def _party_handle(party: Any, where: str) -> str:
    members = party.get("members") if isinstance(party, dict) else None
    if not isinstance(members, list):
        raise DataFormatError(f"{where}: party without a members list")
    team_id = party.get("teamId")
    if isinstance(team_id, int) and not isinstance(team_id, bool):
        return f"team:{team_id}"
    handles: list[Any] = [m.get("handle") for m in members if isinstance(m, dict)]
    if len(handles) == 1 and isinstance(handles[0], str) and handles[0]:
        return handles[0]
    team_name = party.get("teamName")
    if isinstance(team_name, str) and team_name:
        return f"party:{team_name}"
    if handles and all(isinstance(h, str) and h for h in handles):
        return "+".join(sorted(str(h) for h in handles))
    raise DataFormatError(f"{where}: cannot tell who this party is ({party!r:.120})")


def contest_from_standings(
    result: Any, *, source: str = "contest.standings"
) -> tuple[Contest | None, list[str]]:
    """Convert the ``result`` of ``contest.standings`` (used for gym contests).

    Only rows whose ``party.participantType`` is ``CONTESTANT`` count; rows
    sharing a ``rank`` tie.  Handles: the member's handle for a one-person
    party, ``team:<teamId>`` for a registered team, ``party:<teamName>`` for a
    named party without a team id (ghosts), else the members' handles joined by
    ``+``.  The time is the end of the contest (``startTimeSeconds +
    durationSeconds``): gym contests have no rating update.

    Returns
    -------
    tuple
        ``(contest or None when nobody took part officially, warnings)``.
    """
    if not isinstance(result, dict):
        raise DataFormatError(f"{source}: expected a JSON object with 'contest' and 'rows'")
    meta = result.get("contest")
    rows = result.get("rows")
    if not isinstance(rows, list):
        raise DataFormatError(f"{source}: missing 'rows' list")
    cid = _field(meta, "id", int, f"{source}: contest")
    name = _field(meta, "name", str, f"{source}: contest")
    start = _field(meta, "startTimeSeconds", int, f"{source}: contest")
    duration = _field(meta, "durationSeconds", int, f"{source}: contest")
    handles: list[str] = []
    ranks: list[int] = []
    for i, row in enumerate(rows):
        where = f"{source}: rows[{i}]"
        party = _field(row, "party", dict, where)
        if party.get("participantType") != "CONTESTANT":
            continue
        handles.append(_party_handle(party, where))
        ranks.append(_field(row, "rank", int, where))
    warnings: list[str] = []
    if not handles:
        return None, warnings
    if any(b < a for a, b in zip(ranks, ranks[1:], strict=False)):
        order = sorted(range(len(ranks)), key=ranks.__getitem__)
        handles = [handles[i] for i in order]
        ranks = [ranks[i] for i in order]
    handles, renamed = dedupe_handles(handles)
    if renamed:
        warnings.append(
            f"gym contest {cid} {name!r}: parties listed more than once: "
            f"{', '.join(sorted(set(renamed)))}; the higher rows get '_clone' appended"
        )
    lo, hi = tie_ranges(ranks)
    contest = Contest.from_arrays(
        handles, lo, hi, name=name, time_seconds=start + duration,
        url=contest_url(cid, gym=True),
    )
    return contest, warnings


# ====================================================================== API access
def _call_limited(obj: Any) -> str | None:
    if (
        isinstance(obj, dict)
        and obj.get("status") == "FAILED"
        and _CALL_LIMIT_COMMENT in str(obj.get("comment", "")).lower()
    ):
        return f"Codeforces: {obj.get('comment')}"
    return None


def _unwrap(obj: Any, url: str, what: str) -> tuple[bool, Any]:
    """``(True, result)`` for an OK envelope, ``(False, comment)`` for FAILED."""
    if not isinstance(obj, dict) or obj.get("status") not in ("OK", "FAILED"):
        raise FetchError(
            f"{what}: {url} did not answer with a Codeforces API envelope "
            "({\"status\": \"OK\" | \"FAILED\", ...})", url=url,
        )
    if obj["status"] == "OK":
        if "result" not in obj:
            raise FetchError(f"{what}: {url} answered OK without a 'result'", url=url)
        return True, obj["result"]
    return False, str(obj.get("comment", "")) or "(no comment)"


def _contest_list(client: HttpClient, gym: bool) -> list[dict[str, Any]]:
    url = f"{API_BASE}contest.list?gym={'true' if gym else 'false'}"
    what = "Codeforces contest list"
    obj, _raw = client.get_json(url, what=what, ok_statuses=(400,), retry_json=_call_limited)
    ok, result = _unwrap(obj, url, what)
    if not ok:
        raise CodeforcesApiError(
            f"{what}: the Codeforces API call {url} failed: {result}", url=url, comment=result
        )
    if not isinstance(result, list):
        raise FetchError(f"{what}: {url}: 'result' is not a list", url=url)
    contests = []
    for i, c in enumerate(result):
        where = f"{url}: result[{i}]"
        _field(c, "id", int, where)
        _field(c, "name", str, where)
        _field(c, "phase", str, where)
        contests.append(c)
    return contests


def _check_ids(contest_ids: Iterable[int] | None) -> list[int] | None:
    if contest_ids is None:
        return None
    ids = []
    for cid in contest_ids:
        if isinstance(cid, bool) or not isinstance(cid, int) or cid <= 0:
            raise ValueError(f"contest ids must be positive integers, got {cid!r}")
        ids.append(cid)
    return ids


def fetch_codeforces(
    out_dir: str | os.PathLike[str],
    *,
    contest_ids: Iterable[int] | None = None,
    since: date | datetime | int | str | None = None,
    until: date | datetime | int | str | None = None,
    limit: int | None = None,
    gym: bool = False,
    transport: Transport | None = None,
    min_interval: float = 2.0,
    retries: int = 5,
    backoff: float = 2.0,
    skip_team_contests: bool = True,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
) -> FetchReport:
    """Fetch Codeforces contests into ``out_dir`` as ``0.json, 1.json, ...``.

    Calls ``contest.list`` once, then ``contest.ratingChanges`` (gym:
    ``contest.standings``) for each finished contest, at most one request per
    ``min_interval`` seconds.  Every answer is stored under
    ``out_dir/.cache/<id>.json`` (gym: ``standings-<id>.json``) before the next
    request, so a run that is interrupted (Ctrl-C, network failure) loses
    nothing: the next run with the same directory re-uses the cached answers and
    only asks for the rest.  The contest files and ``all_contests.csv``
    (``name,url,weight,time_seconds,num_contestants``) are written, each
    atomically, once all contests are in; the result loads with
    :func:`podium.io.load_contests`.

    Parameters
    ----------
    out_dir : str or os.PathLike
        Output directory (created if needed).  It must be new, empty of contest
        files, or the directory of an earlier Codeforces fetch.
    contest_ids : iterable of int, optional
        Fetch only these contests (still ordered by start time).  An id that is
        not in ``contest.list`` is an error; one that has not finished is skipped.
    since, until : date, datetime, int or ``YYYY-MM-DD``, optional
        Keep contests that start at or after ``since`` and before ``until``
        (dates are midnight UTC; ints are Unix seconds).
    limit : int, optional
        Keep only the ``limit`` most recent of the selected finished contests.
    gym : bool, default False
        Fetch gym contests (``contest.list?gym=true``) from their standings.
    transport : callable, optional
        ``get(url) -> bytes`` (see :mod:`podium.io.fetch._http`); default urllib.
    min_interval : float, default 2.0
        Seconds between request starts.  Codeforces allows one call per 2 s and
        answers ``"Call limit exceeded"`` beyond that.
    retries : int, default 5
        Retries per request on network errors, HTTP 429/5xx and call limits.
    backoff : float, default 2.0
        First retry delay in seconds; doubled for each further retry.
    skip_team_contests : bool, default True
        Leave out :data:`CODEFORCES_TEAM_CONTESTS`, as the Elo-MMR dataset does.
    progress : callable, optional
        Receives one line per contest and per retry.
    clock, sleep, now : callable
        Monotonic clock and sleep for the rate limit (tests pass fakes), and the
        wall clock (Unix seconds) that decides whether an unrated answer is final.

    Returns
    -------
    FetchReport

    Raises
    ------
    FetchError
        When a request fails for good (the message names the contest and URL),
        when ``contest.list`` answers FAILED (:class:`CodeforcesApiError`), when
        a requested id is unknown, or when ``out_dir`` holds other data.
    CodeforcesApiError
        When ``contest.ratingChanges`` answers FAILED for another reason than an
        unrated contest (e.g. "Contest with id ... not found").
    KeyboardInterrupt
        Passed on after saying how to resume; the cache stays valid.
    """
    ids = _check_ids(contest_ids)
    t_since = to_unix(since, "since")
    t_until = to_unix(until, "until")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer, got {limit!r}")
    source = "codeforces-gym" if gym else "codeforces"
    out, cache = prepare_out_dir(out_dir, source)
    client = HttpClient(
        transport, min_interval=min_interval, retries=retries, backoff=backoff,
        clock=clock, sleep=sleep, on_retry=progress,
    )
    skipped: list[SkippedContest] = []
    warnings: list[str] = []

    say(progress, f"fetching the {'gym ' if gym else ''}contest list from Codeforces")
    listed = _contest_list(client, gym)
    by_id = {c["id"]: c for c in listed}
    if ids is not None:
        unknown = [cid for cid in ids if cid not in by_id]
        if unknown:
            raise FetchError(
                f"Codeforces contest(s) {', '.join(map(str, unknown))} are not in "
                f"contest.list{'?gym=true' if gym else ''}"
                f"{' (gym contests need --gym)' if not gym else ''}"
            )
        pool = [by_id[cid] for cid in dict.fromkeys(ids)]
    else:
        pool = listed
    candidates: list[dict[str, Any]] = []
    for c in pool:
        cid, name, phase = c["id"], c["name"], c["phase"]
        if phase != "FINISHED":
            if ids is not None:
                skipped.append(SkippedContest(str(cid), name, f"not finished (phase {phase})"))
            continue
        start = c.get("startTimeSeconds")
        if isinstance(start, bool) or not isinstance(start, int):
            skipped.append(SkippedContest(str(cid), name, "no start time in contest.list"))
            continue
        if t_since is not None and start < t_since:
            continue
        if t_until is not None and start >= t_until:
            continue
        candidates.append(c)
    candidates.sort(key=lambda c: (c["startTimeSeconds"], -c["id"]))
    if limit is not None:
        candidates = candidates[len(candidates) - limit:] if limit else []

    contests: list[Contest] = []
    cached = 0
    n = len(candidates)
    say(progress, f"{n} finished contests to get; responses are cached in {cache}")
    try:
        for k, c in enumerate(candidates, 1):
            cid, listed_name = c["id"], c["name"]
            tag = f"[{k}/{n}] contest {cid}"
            if not gym and skip_team_contests and cid in CODEFORCES_TEAM_CONTESTS:
                skipped.append(SkippedContest(str(cid), listed_name, "team contest"))
                say(progress, f"{tag} {listed_name!r}: skipped (team contest)")
                continue
            ended = c["startTimeSeconds"] + int(c.get("durationSeconds") or 0)
            final = now() - ended >= UNRATED_RECHECK_SECONDS
            if gym:
                path = cache / f"standings-{cid}.json"
                url = f"{API_BASE}contest.standings?contestId={cid}&showUnofficial=false"
            else:
                path = cache / f"{cid}.json"
                url = f"{API_BASE}contest.ratingChanges?contestId={cid}"
            raw = read_cache(path)
            from_cache = raw is not None
            if raw is None:
                obj, raw = client.get_json(
                    url, what=f"contest {cid} ({listed_name})", ok_statuses=(400,),
                    retry_json=_call_limited,
                )
            else:
                obj = json.loads(raw)
                cached += 1
            ok, result = _unwrap(obj, str(path) if from_cache else url, f"contest {cid}")
            where = str(path) if from_cache else url
            contest: Contest | None = None
            reason = ""
            if not ok:
                if gym or _UNRATED_COMMENT in result.lower():
                    reason = f"{'unavailable' if gym else 'unrated'}: {result}"
                else:
                    raise CodeforcesApiError(
                        f"contest {cid} ({listed_name}): the Codeforces API call {url} failed: "
                        f"{result}", url=url, comment=result,
                    )
            elif gym:
                contest, more = contest_from_standings(result, source=where)
                warnings.extend(more)
                if contest is None:
                    reason = "no official contestants"
            elif not result:
                reason = "unrated: no rating changes"
            else:
                contest, more = contest_from_rating_changes(result, source=where)
                warnings.extend(more)
            if not from_cache and (contest is not None or final):
                write_cache(path, raw)
            suffix = " (cached)" if from_cache else ""
            if contest is None:
                skipped.append(SkippedContest(str(cid), listed_name, reason))
                say(progress, f"{tag} {listed_name!r}: skipped ({reason}){suffix}")
                continue
            contests.append(contest)
            say(progress, f"{tag} {contest.name!r}: {len(contest)} "
                f"{'contestants' if gym else 'rated'}{suffix}")
    except KeyboardInterrupt:
        say(progress, f"interrupted: the answers received so far are kept in {cache}; "
            "run the same command again to resume")
        raise

    say(progress, f"writing {len(contests)} contest files to {out}")
    write_history(out, contests, progress)
    return FetchReport(
        out_dir=out, source=source, contests=len(contests),
        rows=sum(len(c) for c in contests), requests=client.attempts, cached=cached,
        skipped=tuple(skipped), warnings=tuple(warnings),
    )
