"""Build an Elo-MMR contest history from the public CTFtime API.

Endpoints used (``https://ctftime.org/api/v1/``):

* ``results/<year>/``: ``{"<event id>": {"title": str, "time": number,
  "scores": [{"team_id": int, "points": "1234.5000", "place": int}, ...]}, ...}``,
  the final standings of every event of the year with results on CTFtime;
* ``events/<id>/``: the event's details (``title``, ``start``, ``finish`` as ISO
  8601 times like ``"2019-10-26T10:00:00+00:00"``, CTFtime ``weight``, ``url``,
  ``ctftime_url``, ``format``, ``onsite``, ...);
* ``teams/<id>/``: a team's current ``name``, former names (``aliases``),
  ``country``, ``academic``, ...

Conventions of the written history:

* **handles are team ids** (``"12345"``): team names change and collide, ids do
  not.  ``teams.csv`` next to the contests maps each handle to the team's current
  name, country and former names (``handle,name,country,aliases``; aliases as a
  JSON list), so that ratings can be shown by name;
* places come from ``place``; equal places tie; rows are ordered by place (the
  API's order is kept among equal places).  A team listed twice in one event
  keeps its best row (reported as a warning);
* ``name``: the event title; ``url``: ``https://ctftime.org/event/<id>``; weight
  1 (CTFtime's own event weight is a rating-points multiplier, not an Elo-MMR
  weight); ``time_seconds``: the event's ``finish`` (from ``events/<id>/``), or,
  with ``event_details=False``, the rounded ``time`` of the results;
* contests are ordered by time, then event id;
* skipped: events without scores and events of a single team, which carry no
  result.  An event in which every team tied is kept: a draw is a result, which the
  rating system rates or skips (its ``all_tied`` parameter).

The Elo-MMR authors' CTFtime loader used the same id handles and results
endpoint, but gave every team a distinct place (ignoring ties) and the results'
``time``; Podium keeps CTFtime's ties and uses the finish time.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from podium.core.contest import Contest
from podium.errors import DataFormatError
from podium.io.fetch._common import (
    FetchReport,
    Progress,
    SkippedContest,
    prepare_out_dir,
    read_cache,
    say,
    tie_ranges,
    write_cache,
    write_history,
    write_text,
)
from podium.io.fetch._http import FetchError, HttpClient, Transport

__all__ = ["API_BASE", "FIRST_YEAR", "contest_from_results", "fetch_ctftime"]

#: Base URL of the CTFtime API.
API_BASE = "https://ctftime.org/api/v1/"

#: The first year with results on CTFtime.
FIRST_YEAR = 2011

#: A year's results are cached only once this many seconds of the next year have
#: passed (late results are still being added in January).
_YEAR_SETTLE_SECONDS = 31 * 86_400

_MISSING = b'{"podium_missing": true}'


def event_url(event_id: int) -> str:
    """The human URL of a CTFtime event (the history's ``url``)."""
    return f"https://ctftime.org/event/{event_id}"


def _parse_time(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise DataFormatError(f"{where}: expected an ISO 8601 time string, got {value!r}")
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise DataFormatError(f"{where}: cannot read the time {value!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp())


def _results_time(event: dict[str, Any], where: str) -> int:
    t = event.get("time")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise DataFormatError(f"{where}: 'time' must be a number, got {t!r}")
    return round(t)


def contest_from_results(
    event_id: int,
    event: Any,
    *,
    time_seconds: int | None = None,
    source: str = "results",
) -> tuple[Contest | None, str, list[str]]:
    """Convert one event of ``results/<year>/`` into a :class:`Contest`.

    Parameters
    ----------
    event_id : int
        The event id (the key of the results object).
    event : dict
        ``{"title": ..., "scores": [{"team_id", "points", "place"}, ...], "time": ...}``.
    time_seconds : int, optional
        The contest time; default: the rounded ``time`` of the results.
    source : str
        Where the data came from, for messages.

    Returns
    -------
    tuple
        ``(contest or None, reason, warnings)``: ``None`` with a reason when the
        event has no scores or a single team.

    Raises
    ------
    DataFormatError
        When a field is missing or has the wrong type.
    """
    where = f"{source}: event {event_id}"
    if not isinstance(event, dict):
        raise DataFormatError(f"{where}: expected an object, got {type(event).__name__}")
    title = event.get("title")
    if not isinstance(title, str):
        raise DataFormatError(f"{where}: 'title' must be a string, got {title!r}")
    scores = event.get("scores")
    if not isinstance(scores, list):
        raise DataFormatError(f"{where}: 'scores' must be a list, got {type(scores).__name__}")
    if time_seconds is None:
        time_seconds = _results_time(event, where)
    rows: list[tuple[int, int]] = []
    for i, s in enumerate(scores):
        at = f"{where}: scores[{i}]"
        if not isinstance(s, dict):
            raise DataFormatError(f"{at}: expected an object, got {s!r}")
        team, place = s.get("team_id"), s.get("place")
        if isinstance(team, bool) or not isinstance(team, int):
            raise DataFormatError(f"{at}: 'team_id' must be an integer, got {team!r}")
        if isinstance(place, bool) or not isinstance(place, int) or place < 1:
            raise DataFormatError(f"{at}: 'place' must be an integer >= 1, got {place!r}")
        rows.append((place, team))
    warnings: list[str] = []
    if not rows:
        return None, "no scores", warnings
    rows.sort(key=lambda r: r[0])  # stable: the API's order among equal places
    seen: set[int] = set()
    kept: list[tuple[int, int]] = []
    dupes: list[int] = []
    for place, team in rows:
        if team in seen:
            dupes.append(team)
            continue
        seen.add(team)
        kept.append((place, team))
    if dupes:
        warnings.append(
            f"event {event_id} {title!r}: team(s) {', '.join(map(str, sorted(set(dupes))))} "
            "listed more than once; the best place is kept"
        )
    places = [p for p, _ in kept]
    if len(kept) == 1:
        return None, "no information (a single team)", warnings
    lo, hi = tie_ranges(places)
    contest = Contest.from_arrays(
        [str(team) for _, team in kept], lo, hi, name=title, time_seconds=time_seconds,
        url=event_url(event_id),
    )
    return contest, "", warnings


def _check_years(year: int | Iterable[int] | None) -> list[int] | None:
    if year is None:
        return None
    years = [year] if isinstance(year, int) else list(year)
    for y in years:
        if isinstance(y, bool) or not isinstance(y, int) or not 1990 <= y <= 9999:
            raise ValueError(f"years must be integers like 2020, got {y!r}")
    return sorted(set(years))


def _check_event_ids(event_ids: Iterable[int] | None) -> list[int] | None:
    if event_ids is None:
        return None
    ids = []
    for e in event_ids:
        if isinstance(e, bool) or not isinstance(e, int) or e <= 0:
            raise ValueError(f"event ids must be positive integers, got {e!r}")
        ids.append(e)
    return list(dict.fromkeys(ids))


class _Fetcher:
    """Cached, rate-limited JSON requests to CTFtime."""

    def __init__(self, client: HttpClient, cache: Path) -> None:
        self.client = client
        self.cache = cache
        self.cached = 0

    def get(self, path: str, cache_name: str | None, what: str, *,
            missing_ok: bool = False) -> Any:
        """The parsed answer of ``API_BASE + path`` (``None`` for a 404 when ``missing_ok``)."""
        file = self.cache / cache_name if cache_name else None
        if file is not None:
            raw = read_cache(file)
            if raw is not None:
                self.cached += 1
                value = json.loads(raw)
                if isinstance(value, dict) and value.get("podium_missing") is True:
                    return None
                return value
        url = API_BASE + path
        try:
            value, raw = self.client.get_json(url, what=what)
        except FetchError as exc:
            if missing_ok and exc.status == 404:
                if file is not None:
                    write_cache(file, _MISSING)
                return None
            raise
        if file is not None:
            write_cache(file, raw)
        return value


def _write_teams(out: Path, teams: dict[int, Any]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["handle", "name", "country", "aliases"])
    for team_id in sorted(teams):
        info = teams[team_id] if isinstance(teams[team_id], dict) else {}
        name = info.get("name")
        country = info.get("country")
        aliases = info.get("aliases")
        aliases = [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
        w.writerow([
            str(team_id),
            name if isinstance(name, str) else "",
            country if isinstance(country, str) else "",
            json.dumps(aliases, ensure_ascii=False) if aliases else "",
        ])
    write_text(out / "teams.csv", buf.getvalue())


def fetch_ctftime(
    out_dir: str | os.PathLike[str],
    *,
    year: int | Iterable[int] | None = None,
    event_ids: Iterable[int] | None = None,
    transport: Transport | None = None,
    min_interval: float = 1.0,
    retries: int = 5,
    backoff: float = 2.0,
    event_details: bool = True,
    team_names: bool = True,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
) -> FetchReport:
    """Fetch CTFtime event results into ``out_dir`` as ``0.json, 1.json, ...``.

    Asks for ``results/<year>/`` of each year, ``events/<id>/`` of each event
    with results (for its finish time) and ``teams/<id>/`` of each team (for
    ``teams.csv``), one request per ``min_interval`` seconds.  Every answer is
    cached under ``out_dir/.cache/`` (``results-<year>.json`` once the year is
    over, ``event-<id>.json``, ``team-<id>.json``), so an interrupted run resumes
    where it stopped.  Contest files, ``all_contests.csv`` and ``teams.csv`` are
    written atomically; the history loads with :func:`podium.io.load_contests`.

    Parameters
    ----------
    out_dir : str or os.PathLike
        Output directory (new, without contest files, or an earlier CTFtime fetch).
    year : int or iterable of int, optional
        Years of results to fetch; default: every year from 2011 to now (or,
        with ``event_ids``, the years of those events).
    event_ids : iterable of int, optional
        Keep only these events.  Needs ``event_details`` (for their years) unless
        ``year`` is given.  An id without results is skipped and reported.
    transport : callable, optional
        ``get(url) -> bytes``; default urllib.
    min_interval : float, default 1.0
        Seconds between request starts (CTFtime publishes no limit; be polite).
    retries, backoff : int, float
        Retries on network errors and HTTP 429/5xx, and the first backoff delay.
    event_details : bool, default True
        Ask ``events/<id>/`` for each event's finish time; without it the
        results' ``time`` is used (one request per year instead of per event).
    team_names : bool, default True
        Ask ``teams/<id>/`` for every team, for ``teams.csv`` (one request per
        team: the slow part of a full fetch).  Without it ``teams.csv`` lists
        the handles only.
    progress : callable, optional
        Receives progress lines.
    clock, sleep, now : callable
        Monotonic clock and sleep for the rate limit; wall clock (Unix seconds)
        for the default years and for when a year's results are final.

    Returns
    -------
    FetchReport

    Raises
    ------
    FetchError
        When a request fails for good (the message names the event/year and URL)
        or ``out_dir`` holds other data.
    DataFormatError
        When an answer does not have the documented shape.
    """
    years = _check_years(year)
    wanted = _check_event_ids(event_ids)
    if wanted is not None and years is None and not event_details:
        raise ValueError("event_ids without year needs event_details=True (to find the years)")
    out, cache = prepare_out_dir(out_dir, "ctftime")
    client = HttpClient(
        transport, min_interval=min_interval, retries=retries, backoff=backoff,
        clock=clock, sleep=sleep, on_retry=progress,
    )
    api = _Fetcher(client, cache)
    skipped: list[SkippedContest] = []
    warnings: list[str] = []
    details: dict[int, Any] = {}
    wall = now()
    this_year = datetime.fromtimestamp(wall, tz=UTC).year

    def event_details_of(eid: int) -> Any:
        if eid not in details:
            details[eid] = api.get(
                f"events/{eid}/", f"event-{eid}.json", f"CTFtime event {eid}", missing_ok=True
            )
        return details[eid]

    try:
        if years is None and wanted is not None:
            found: set[int] = set()
            for eid in wanted:
                d = event_details_of(eid)
                if not isinstance(d, dict):
                    continue
                for key in ("start", "finish"):
                    if key in d:
                        found.add(datetime.fromtimestamp(
                            _parse_time(d[key], f"CTFtime event {eid}: {key!r}"), tz=UTC).year)
            years = sorted(found)
        elif years is None:
            years = list(range(FIRST_YEAR, this_year + 1))

        events: dict[int, tuple[Any, int]] = {}
        for y in years:
            settled = wall >= datetime(y + 1, 1, 1, tzinfo=UTC).timestamp() + _YEAR_SETTLE_SECONDS
            say(progress, f"results of {y}")
            data = api.get(f"results/{y}/", f"results-{y}.json" if settled else None,
                           f"CTFtime results of {y}", missing_ok=True)
            if data is None:
                warnings.append(f"CTFtime has no results for {y} (HTTP 404)")
                continue
            if not isinstance(data, dict):
                raise DataFormatError(
                    f"{API_BASE}results/{y}/: expected an object keyed by event id, "
                    f"got {type(data).__name__}"
                )
            for key, ev in data.items():
                try:
                    eid = int(key)
                except ValueError:
                    raise DataFormatError(
                        f"{API_BASE}results/{y}/: key {key!r} is not an event id"
                    ) from None
                events.setdefault(eid, (ev, y))

        if wanted is not None:
            for eid in wanted:
                if eid not in events:
                    skipped.append(SkippedContest(str(eid), "", "no results on CTFtime"))
            chosen = [eid for eid in sorted(events) if eid in set(wanted)]
        else:
            chosen = sorted(events)

        contests: list[tuple[int, int, Contest]] = []
        n = len(chosen)
        for k, eid in enumerate(chosen, 1):
            ev, y = events[eid]
            title = ev.get("title", "") if isinstance(ev, dict) else ""
            tag = f"[{k}/{n}] event {eid}"
            source = f"{API_BASE}results/{y}/"
            contest, reason, more = contest_from_results(
                eid, ev, time_seconds=0 if event_details else None, source=source
            )
            warnings.extend(more)
            if contest is None:
                skipped.append(SkippedContest(str(eid), str(title), reason))
                say(progress, f"{tag} {title!r}: skipped ({reason})")
                continue
            if event_details:
                d = event_details_of(eid)
                if isinstance(d, dict) and "finish" in d:
                    t = _parse_time(d["finish"], f"CTFtime event {eid}: 'finish'")
                else:
                    warnings.append(f"event {eid} {title!r}: no event details on CTFtime; "
                                    "using the results' time")
                    t = _results_time(ev, f"{source}: event {eid}")
                contest = Contest.from_arrays(
                    contest.handles, contest.lo, contest.hi, name=contest.name,
                    time_seconds=t, url=contest.url,
                )
            contests.append((contest.time_seconds, eid, contest))
            say(progress, f"{tag} {contest.name!r}: {len(contest)} teams")
        contests.sort(key=lambda x: (x[0], x[1]))
        history = [c for _, _, c in contests]
        say(progress, f"writing {len(history)} contest files to {out}")
        write_history(out, history, progress)

        team_ids = sorted({int(h) for c in history for h in c.handles})
        teams: dict[int, Any] = {t: None for t in team_ids}
        if team_names:
            say(progress, f"names of {len(team_ids)} teams (for teams.csv)")
            for k, tid in enumerate(team_ids, 1):
                teams[tid] = api.get(f"teams/{tid}/", f"team-{tid}.json", f"CTFtime team {tid}",
                                     missing_ok=True)
                if k % 100 == 0 or k == len(team_ids):
                    say(progress, f"team names: {k}/{len(team_ids)}")
        _write_teams(out, teams)
    except KeyboardInterrupt:
        say(progress, f"interrupted: the answers received so far are kept in {cache}; "
            "run the same command again to resume")
        raise

    return FetchReport(
        out_dir=out, source="ctftime", contests=len(history),
        rows=sum(len(c) for c in history), requests=client.attempts, cached=api.cached,
        skipped=tuple(skipped), warnings=tuple(warnings),
    )
