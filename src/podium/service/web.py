"""The HTML pages of the rating service (Jinja2, server-side SVG charts, no CDN).

* ``/`` -- the leaderboard (paged, optional activity window) with a search box
  that suggests handles as you type (``static/search.js`` asks ``/api/search``)
  and, without JavaScript, submits to ``/search``;
* ``/search?q=...`` -- the exact handle's page, or the list of matches;
* ``/players/{handle}`` (``/player?handle=...`` for the handles ``.`` and ``..``,
  which browsers resolve away as path segments: see :func:`player_url`) -- rating,
  rank, the rating-history chart
  (:func:`podium.service.charts.rating_chart_svg`) and the table of contests (with the
  player's team in each team contest);
* ``/contests`` and ``/contests/{id}`` (or ``/contest?id=...``) -- the contests, and one
  contest's rating changes, 500 standings rows a page read from the store (a team
  contest: grouped by team, each team's place, members, weights and changes); the
  start of a season is listed among them, its page the players' resets.

**Ladders.**  ``/ladders`` is the ladder picker (every ladder: its system, counts,
season); the pages above are the ladder ``default``'s, and every ladder has them under
``/ladders/{ladder}/`` (``/ladders/duo/``, ``/ladders/duo/players/ann``, ...).  The
leaderboard is read as of now (the system's time drift applied) and marks provisional
players (``?provisional=0`` leaves them out, ``1`` shows them, whatever the ladder's
default), and reads a finished season's final leaderboard with ``?season=N``.  A
player's page shows the player in every ladder (rating, rank, contests), with links.

Everything the pages need (CSS, the search script) is served by the app under
``/static/``; the pages work with no internet access.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context

from podium.service.api import active_since_for
from podium.service.api_common import get_store
from podium.service.charts import ChartPoint, rating_chart_svg

__all__ = ["build_router", "templates", "STATIC_DIR", "TEMPLATE_DIR", "PAGE_SIZE"]

HERE = Path(__file__).resolve().parent
TEMPLATE_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"
PAGE_SIZE = 50
#: Rows per page of a contest's rating changes (the largest Codeforces round has 18 743).
CONTEST_PAGE_SIZE = 500

#: Choices of the leaderboard's activity window (days; 0 = everybody).
ACTIVE_CHOICES = (0, 30, 90, 180, 365, 730)


def _date(t: int | None) -> str:
    if t is None:
        return ""
    try:
        return datetime.fromtimestamp(int(t), tz=UTC).strftime("%Y-%m-%d")
    except (OverflowError, OSError, ValueError):
        return str(t)


def _datetime(t: int | None) -> str:
    if t is None:
        return ""
    try:
        return datetime.fromtimestamp(int(t), tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return str(t)


def _num(x: float | None, digits: int = 0) -> str:
    if x is None or not math.isfinite(x):
        return "\u2013"
    return f"{x:,.{digits}f}"


def _signed(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "\u2013"
    r = round(x)
    return f"+{r}" if r > 0 else ("\u00b10" if r == 0 else f"\u2212{-r}")


def _sign_class(x: float | None) -> str:
    if x is None or not math.isfinite(x) or round(x) == 0:
        return "zero"
    return "up" if x > 0 else "down"


def _places(lo: int, hi: int) -> str:
    return str(lo + 1) if lo == hi else f"{lo + 1}\u2013{hi + 1}"


#: Path segments a browser (or curl, or httpx) removes or resolves, percent-encoded or
#: not (the WHATWG URL standard's single- and double-dot segments).
_DOT_SEGMENTS = frozenset({".", "..", "%2e", ".%2e", "%2e.", "%2e%2e"})


def player_url(handle: str) -> str:
    """Path of a player's page: ``/players/`` and the handle percent-encoded (``/``,
    ``%``, ``?``, ``#`` too), so that the route gets it back exactly.  A handle that
    would be a dot segment (``.``, ``..``) -- which browsers resolve away, encoded or
    not -- goes in the query string instead: ``/player?handle=..``."""
    seg = quote(handle, safe="")
    if seg.lower() in _DOT_SEGMENTS:
        return "/player?" + urlencode({"handle": handle})
    return "/players/" + seg


def contest_url(contest_id: str) -> str:
    """Path of a contest's page (the id percent-encoded, slashes too; an id ``.`` or
    ``..`` in the query string: ``/contest?id=..``)."""
    seg = quote(contest_id, safe="")
    if seg.lower() in _DOT_SEGMENTS:
        return "/contest?" + urlencode({"id": contest_id})
    return "/contests/" + seg


def ladder_base(ladder: str | None) -> str:
    """The path the pages of ``ladder`` start with (``""`` for ``default``)."""
    if ladder is None or ladder == "default":
        return ""
    return "/ladders/" + quote(ladder, safe="")


@pass_context
def _player_link(ctx: Any, handle: str) -> str:
    return str(ctx.get("base", "")) + player_url(handle)


@pass_context
def _contest_link(ctx: Any, contest_id: str) -> str:
    return str(ctx.get("base", "")) + contest_url(contest_id)


templates = Jinja2Templates(directory=str(TEMPLATE_DIR))
templates.env.filters.update(
    date=_date, datetime=_datetime, num=_num, signed=_signed, sign_class=_sign_class,
    player_url=_player_link, contest_url=_contest_link, ladder_base=ladder_base,
)
templates.env.globals.update(places=_places, ACTIVE_CHOICES=ACTIVE_CHOICES)


def _page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    ladder = request.path_params.get("ladder")
    store = request.app.state.store
    if ladder is not None:
        try:
            store = get_store(request)
        except HTTPException:  # the page of an unknown ladder: the error page
            ladder = None
    shown = getattr(store, "ladder_name", "default")
    base = ladder_base(None if ladder is None else shown)
    context.setdefault("system_name", getattr(store, "system_name", ""))
    context.setdefault("ladder", shown)
    context.setdefault("base", base)
    context.setdefault("api_base", "/api" + ("" if not base else "/ladders/"
                                             + quote(shown, safe="")))
    return templates.TemplateResponse(request, name, context, status_code=status_code)


def _store_or_page(request: Request) -> Any:
    """The request's ladder's store, or the 404 page for an unknown ladder."""
    try:
        return get_store(request)
    except HTTPException as exc:
        return not_found_page(request, str(exc.detail))


def not_found_page(request: Request, message: str) -> HTMLResponse:
    """The 404 page (also used by the app for unknown paths)."""
    return _page(request, "error.html", status_code=404, title="Not found", message=message)


def _pager(base: str, params: dict[str, Any], page: int, has_next: bool) -> dict[str, str | None]:
    def link(p: int) -> str:
        q = {k: v for k, v in params.items() if v not in (None, 0, "")}
        if p > 1:
            q["page"] = p
        return base + (("&" if "?" in base else "?") + urlencode(q) if q else "")

    return {"prev": link(page - 1) if page > 1 else None,
            "next": link(page + 1) if has_next else None}


def build_router(*, ladder: bool = False) -> APIRouter:
    """The HTML routes (not in the OpenAPI schema); with ``ladder`` the same pages of
    any ladder, under ``/ladders/{ladder}``, else those of ``default`` and the ladder
    picker ``/ladders``."""
    router = APIRouter(include_in_schema=False,
                       prefix="/ladders/{ladder}" if ladder else "")

    if not ladder:
        @router.get("/ladders", response_class=HTMLResponse)
        def ladders_page(request: Request) -> Response:
            """The ladder picker."""
            return _page(request, "ladders.html", title="Ladders",
                         ladders=request.app.state.store.ladders())

    @router.get("/", response_class=HTMLResponse)
    def leaderboard_page(
        request: Request,
        page: Annotated[int, Query(ge=1, le=10**7)] = 1,
        active_days: Annotated[int, Query(ge=0, le=10**6)] = 0,
        season: Annotated[int, Query(ge=0, le=10**6)] = 0,
        provisional: Annotated[int | None, Query(ge=0, le=1)] = None,
    ) -> Response:
        store = _store_or_page(request)
        if isinstance(store, Response):
            return store
        since = active_since_for(store, active_days or None)
        seasons = store.seasons()
        current = seasons[-1].number
        past = season if 0 < season < current else None
        show = None if provisional is None else bool(provisional)
        rows = store.leaderboard(offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE + 1,
                                 active_since=since, include_provisional=show, season=past)
        has_next = len(rows) > PAGE_SIZE
        latest = store.latest_contest()
        stats = {"contests": 0 if latest is None else latest.index + 1,
                 "last_contest_time": None if latest is None else latest.time_seconds}
        settings = store.ladder_settings()
        return _page(
            request, "leaderboard.html", title="Leaderboard", rows=rows[:PAGE_SIZE],
            page=page, active_days=active_days, stats=stats, seasons=seasons,
            season=past, current_season=current, settings=settings,
            provisional=provisional,
            total=store.count_players(active_since=since, include_provisional=show,
                                      season=past),
            pager=_pager(ladder_base(store.ladder_name if ladder else None) + "/",
                         {"active_days": active_days, "season": past or 0,
                          "provisional": provisional}, page, has_next),
        )

    @router.get("/search", response_class=HTMLResponse)
    def search_page(
        request: Request, q: Annotated[str, Query(max_length=100)] = ""
    ) -> Response:
        store = _store_or_page(request)
        if isinstance(store, Response):
            return store
        text = q.strip()
        matches: list[str] = store.search_handles(text, limit=50) if text else []
        exact = [h for h in matches if h == text] or (
            [h for h in matches if h.lower() == text.lower()] if text else []
        )
        if len(exact) == 1 or len(matches) == 1:
            target = exact[0] if len(exact) == 1 else matches[0]
            base = ladder_base(store.ladder_name if ladder else None)
            return RedirectResponse(base + player_url(target), status_code=303)
        return _page(request, "search.html", title=f"Search: {text}" if text else "Search",
                     q=text, matches=matches)

    @router.get("/player", response_class=HTMLResponse)
    def player_query_page(
        request: Request, handle: Annotated[str, Query(min_length=1, max_length=1000)]
    ) -> Response:
        """The player page of any handle (``/players/..`` never reaches the server)."""
        return player_page(request, handle)

    @router.get("/players/{handle:path}", response_class=HTMLResponse)
    def player_page(request: Request, handle: str) -> Response:
        store = _store_or_page(request)
        if isinstance(store, Response):
            return store
        view = store.player(handle)
        elsewhere = _across_ladders(request.app.state.store, store, handle)
        if view is None:
            if elsewhere:
                return _page(request, "player.html", title=handle, player=None, chart="",
                             history=[], has_teams=False, elsewhere=elsewhere)
            return not_found_page(request, f"No player with handle \u201c{handle}\u201d.")
        # in a team contest the place is the team's, among teams: no "of N players"
        points = [
            ChartPoint(
                time_seconds=int(h.time_seconds), rating=float(h.display_rating),
                perf=float(h.perf) if h.perf is not None else None,
                label=h.contest_name if h.team is None else f"{h.contest_name} \u00b7 team "
                f"{h.team}",
                change=float(h.change), place=int(h.place) + 1,
                players=int(h.players) if h.team is None else None,
                href=ladder_base(store.ladder_name if ladder else None)
                + contest_url(h.contest_id),
            ) if h.kind == "contest" else ChartPoint(
                time_seconds=int(h.time_seconds), rating=float(h.display_rating), perf=None,
                label=f"{h.contest_name} (reset)", change=float(h.change), place=None,
                players=None, href=None)
            for h in view.history
        ]
        # issue 29: the smoothed companion's curve (aligned to the filter's level)
        curve = store.smoothed_curve(view.handle)
        revised = [] if curve is None else [
            ChartPoint(time_seconds=q.time_seconds, rating=q.aligned, label=q.contest_name)
            for q in curve.points]
        chart = rating_chart_svg(points, title=f"Rating history of {view.handle}",
                                 revised=revised, revised_label=f"smoothed ({curve.system})"
                                 if curve is not None else "smoothed")
        return _page(request, "player.html", title=view.handle, player=view, chart=chart,
                     history=list(reversed(view.history)),
                     has_teams=any(h.team is not None for h in view.history),
                     elsewhere=elsewhere, curve=curve,
                     smoothed={q.contest_id: q for q in curve.points} if curve else {},
                     past=store.past_changes(view.handle) if curve is not None else None)

    @router.get("/contests", response_class=HTMLResponse)
    def contests_page(
        request: Request, page: Annotated[int, Query(ge=1, le=10**7)] = 1
    ) -> Response:
        store = _store_or_page(request)
        if isinstance(store, Response):
            return store
        rows = store.contests(offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE + 1)
        has_next = len(rows) > PAGE_SIZE
        base = ladder_base(store.ladder_name if ladder else None)
        return _page(request, "contests.html", title="Contests", rows=rows[:PAGE_SIZE],
                     page=page, pager=_pager(base + "/contests", {}, page, has_next))

    @router.get("/contest", response_class=HTMLResponse)
    def contest_query_page(
        request: Request, id: Annotated[str, Query(min_length=1, max_length=4000)],
        page: Annotated[int, Query(ge=1, le=10**7)] = 1,
    ) -> Response:
        """The contest page of any id (``/contests/..`` never reaches the server)."""
        return contest_page(request, id, page)

    @router.get("/contests/{contest_id:path}", response_class=HTMLResponse)
    def contest_page(
        request: Request, contest_id: str,
        page: Annotated[int, Query(ge=1, le=10**7)] = 1,
    ) -> Response:
        start = (page - 1) * CONTEST_PAGE_SIZE
        store = _store_or_page(request)
        if isinstance(store, Response):
            return store
        view = store.contest(contest_id, offset=start, limit=CONTEST_PAGE_SIZE)
        if view is None:
            return not_found_page(request, f"No contest with id \u201c{contest_id}\u201d.")
        rows = view.changes
        has_next = start + CONTEST_PAGE_SIZE < view.total
        team_sizes = {t.name: len(t.members) for t in view.teams or ()}
        base = ladder_base(store.ladder_name if ladder else None)
        return _page(request, "contest.html", title=view.name or view.contest_id, contest=view,
                     rows=rows, page=page, team_sizes=team_sizes,
                     pager=_pager(base + contest_url(view.contest_id), {}, page, has_next))

    return router


def _across_ladders(root: Any, here: Any, handle: str) -> list[dict[str, Any]]:
    """The player ``handle`` in every ladder of the store but ``here``: each ladder's
    name, the player's rating, rank and contests there and the link to that page
    (none for a ladder that never rated the player)."""
    out: list[dict[str, Any]] = []
    for info in root.ladders():
        if info.name == here.ladder_name:
            continue
        view = root.ladder(info.name).player(handle)
        if view is None:
            continue
        out.append({"ladder": info.name, "system": info.system, "player": view,
                    "href": (ladder_base(info.name) or "") + player_url(view.handle)})
    return out
