"""The web pages in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Starts ``podium serve`` on a temporary SQLite store holding a small synthetic history,
then: the leaderboard loads; typing a prefix in the search box suggests the player;
the suggestion opens the player page, whose rating chart is drawn (checked in the DOM
and in the pixels of a screenshot, saved under the test's tmp path); the contest page
lists the rating changes; the API page /docs (Swagger UI) renders and runs a request
with every request outside the server blocked; and no request leaves the server (no CDN).

Skipped when ``/usr/bin/chromium`` (``$PODIUM_CHROMIUM``) or the ``playwright`` package
is absent; failed instead under ``PODIUM_CI`` (tests/_require.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from _require import in_ci, require_chromium

from podium.core.contest import Contest
from podium.io import synthetic_contests

if not in_ci():  # skip the module at once; under PODIUM_CI each test fails (below)
    require_chromium()
pytestmark = pytest.mark.slow  # a browser and a server: seconds per test
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
pytest.importorskip("fastapi", reason="the service extra is not installed")

from _service import Server, running_server  # noqa: E402

from podium.store import Store  # noqa: E402

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
         "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
         "Zoë_the.Great", "yvonne", "xavier", "quentin", "ursula", "kate", "leo", "mike",
         "nora", "oscar", "pat"]
TARGET = "Zoë_the.Great"


def _history() -> list[Contest]:
    raw = synthetic_contests(len(NAMES), 14, seed=11, participation=0.85, tie_resolution=10.0)
    out = []
    for k, c in enumerate(raw):
        handles = [NAMES[int(h[1:])] for h in c.handles]
        url = f"https://example.org/contest/{k + 1}" if k % 2 else None
        out.append(Contest.from_arrays(handles, c.lo, c.hi, name=f"Weekly Round #{k + 1}",
                                       time_seconds=c.time_seconds + k * 6 * 86_400, url=url))
    # make sure the target played the first and the last contest (chart endpoints)
    assert TARGET in out[0].handles and TARGET in out[-1].handles
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Store]]:
    tmp = tmp_path_factory.mktemp("web")
    url = f"sqlite:///{tmp / 'web.db'}"
    with Store.create(url, "mmr") as store:
        for c in _history():
            store.ingest(c)
    # non-default pool options: `podium serve` must accept them and pass them on
    with running_server(url, tmp, extra=["--pool-size", "3", "--max-overflow", "2"]) as srv, \
            Store.open(url) as reader:
        yield srv, reader


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium = str(require_chromium())  # under PODIUM_CI: the reason each test fails
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def _new_page(browser: object, srv: Server) -> tuple[object, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    foreign: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(srv.url) or r.url.startswith("data:")
            else foreign.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return page, foreign, errors


def _colour_pixels(png: Path, rgb: tuple[int, int, int], tol: int = 40) -> int:
    """Pixels of the screenshot within ``tol`` of colour ``rgb`` (each channel)."""
    Image = pytest.importorskip("PIL.Image", reason="pip install pillow")

    px = np.asarray(Image.open(png).convert("RGB"), dtype=np.int64)
    close = np.all(np.abs(px - np.array(rgb, dtype=np.int64)) <= tol, axis=-1)
    return int(close.sum())


def test_leaderboard_search_player_chart_contest(
    server: tuple[Server, Store], browser: object, tmp_path: Path
) -> None:
    srv, store = server
    page, foreign, errors = _new_page(browser, srv)
    expect = sync_api.expect

    # 1. the leaderboard
    page.goto(srv.url + "/")
    assert page.title().startswith("Leaderboard")
    board = store.leaderboard(limit=50)
    rows = page.locator("table#leaderboard tbody tr")
    expect(rows).to_have_count(len(board))
    assert rows.first.locator("a.handle").inner_text() == board[0].handle
    assert rows.first.locator("td").first.inner_text() == "1"

    # 2. search as you type: the prefix "zo" (lower case) suggests the player
    box = page.locator("#search")
    box.click()
    box.press_sequentially("zo", delay=60)
    suggestion = page.locator("#suggestions a.suggestion", has_text=TARGET)
    expect(suggestion).to_be_visible(timeout=10_000)
    suggestion.click()
    page.wait_for_url(srv.url + "/players/" + quote(TARGET, safe=""))
    expect(page.locator("h1.player-name")).to_have_text(TARGET)

    # 3. the chart: one line through every contest, one performance point per contest
    view = store.player(TARGET)
    assert view is not None
    n = len(view.history)
    assert n >= 5
    chart = page.locator("figure.chart svg.rating-chart")
    expect(chart).to_be_visible()
    d = chart.locator("path.rating-line").get_attribute("d")
    assert d is not None and d.startswith("M") and d.count("L") == n - 1
    expect(chart.locator("circle.rating-point")).to_have_count(n)
    perf = chart.locator(".perf-points .perf-point")
    expect(perf).to_have_count(n)
    first_tip = chart.locator("circle.rating-point title").first.text_content()
    assert first_tip is not None and first_tip.startswith(view.history[0].contest_name)
    assert f"rating {view.history[0].display_rating:.0f}" in first_tip
    box_px = chart.bounding_box()
    assert box_px is not None and box_px["width"] > 500 and box_px["height"] > 150
    shot = tmp_path / "player-page.png"
    page.screenshot(path=str(shot), full_page=True)
    chart_png = tmp_path / "chart.png"
    chart.screenshot(path=str(chart_png))
    assert shot.stat().st_size > 10_000
    # the line (#1f4e79) and the performance points (#e07a1f) are really painted
    assert _colour_pixels(chart_png, (0x1F, 0x4E, 0x79)) > 300
    assert _colour_pixels(chart_png, (0xE0, 0x7A, 0x1F), tol=60) > 50
    if os.environ.get("PODIUM_DOCS_SCREENSHOT"):
        docs = Path(__file__).resolve().parents[1] / "docs" / "img" / "player-page.png"
        docs.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, docs)

    # 4. the newest contest from the history table: its rating changes
    last = view.history[-1]
    page.locator("table.history tbody tr").first.locator("td").first.locator("a").click()
    expect(page.locator("h1.contest-name")).to_have_text(last.contest_name)
    contest = store.contest(last.contest_id)
    assert contest is not None
    changes = page.locator("table#changes tbody tr")
    expect(changes).to_have_count(len(contest.changes))
    mine = changes.filter(has=page.locator("a.handle", has_text=TARGET))
    expect(mine).to_have_count(1)
    row = [c.inner_text() for c in mine.locator("td").all()]
    me = next(c for c in contest.changes if c.handle == TARGET)
    assert row[0] == (str(me.lo + 1) if me.lo == me.hi else f"{me.lo + 1}\u2013{me.hi + 1}")
    assert row[4] == f"{me.new_display:,.0f}"
    assert contest.url is None or contest.url in page.content()
    page.screenshot(path=str(tmp_path / "contest-page.png"), full_page=True)

    assert not foreign, f"requests outside the server: {foreign}"
    assert not errors, f"browser errors: {errors}"
    page.close()


def test_explain_panel(server: tuple[Server, Store], browser: object, tmp_path: Path) -> None:
    """The contest page's "why?" button opens the explain panel with the numbers of
    ``Store.explain``; the player page's "why?" link opens it at once."""
    srv, store = server
    page, foreign, errors = _new_page(browser, srv)
    expect = sync_api.expect
    view = store.player(TARGET)
    assert view is not None
    last = view.history[-1]
    want = store.explain(last.contest_id, TARGET)
    assert want.performance is not None
    page.goto(srv.url + "/contests/" + quote(last.contest_id, safe=""))
    panel = page.locator("#explain-panel")
    expect(panel).to_be_hidden()
    mine = page.locator("table#changes tbody tr").filter(
        has=page.locator("a.handle", has_text=TARGET))
    mine.locator("button.explain-btn").click()
    expect(panel).to_be_visible()
    expect(panel.locator(".explain-title")).to_contain_text(TARGET)
    expect(panel.locator(".explain-before")).to_have_text(f"{want.display_before:.2f}")
    expect(panel.locator(".explain-after")).to_have_text(f"{want.display_after:.2f}")
    sign = "+" if want.change >= 0 else "\u2212"
    expect(panel.locator(".explain-change")).to_have_text(f"{sign}{abs(want.change):.2f}")
    expect(panel.locator(".explain-performance")).to_have_text(f"{want.performance:.2f}")
    sections = panel.locator("section.explain-equation")
    expect(sections).to_have_count(len(want.equations))
    perf = panel.locator('section[data-equation="performance"]')
    up, down = want.top("performance", 5)
    expect(perf.locator(".up li")).to_have_count(len(up))
    expect(perf.locator(".down li")).to_have_count(len(down))
    assert perf.locator(".up .term-source").first.inner_text() == up[0].source
    assert perf.locator(".up .term-value").first.inner_text() == f"+{up[0].value:.6f}"
    assert "holds" in perf.inner_text()
    page.screenshot(path=str(tmp_path / "explain-panel.png"), full_page=True)
    # from the player page's history: the link opens the panel
    page.goto(srv.url + "/players/" + quote(TARGET, safe=""))
    page.locator("table.history tbody tr").first.locator("a.explain-link").click()
    expect(page.locator("#explain-panel .explain-after")).to_have_text(
        f"{want.display_after:.2f}")
    assert not foreign, f"requests outside the server: {foreign}"
    assert not errors, f"browser errors: {errors}"
    page.close()


def test_keyboard_search_and_plain_form(server: tuple[Server, Store], browser: object) -> None:
    srv, store = server
    page, foreign, errors = _new_page(browser, srv)
    expect = sync_api.expect
    page.goto(srv.url + "/contests")
    expect(page.locator("table.contests tbody tr")).to_have_count(14)
    box = page.locator("#search")
    box.click()
    box.press_sequentially("o", delay=60)
    expected = store.search_handles("o", limit=8)
    assert expected  # olivia, oscar
    expect(page.locator("#suggestions a.suggestion")).to_have_count(len(expected))
    assert page.locator("#suggestions a.suggestion").all_inner_texts() == expected
    box.press("ArrowDown")
    box.press("Enter")
    page.wait_for_url(srv.url + "/players/" + quote(expected[0], safe=""))
    # a prefix nobody has: a message instead of suggestions; Enter submits the form
    box = page.locator("#search")
    box.click()
    box.press_sequentially("qqq", delay=40)
    expect(page.locator("#suggestions li.none")).to_be_visible()
    box.press("Enter")
    page.wait_for_url("**/search?q=qqq")
    expect(page.locator("p.empty")).to_contain_text("No handle starts with")
    page.goto(srv.url + "/players/nobody-at-all")
    expect(page.locator("h1")).to_have_text("Not found")
    assert not foreign, f"requests outside the server: {foreign}"
    assert not [e for e in errors if "404" not in e], f"browser errors: {errors}"
    page.close()


def _api_paths(srv: Server) -> list[tuple[str, str]]:
    """``(method, path)`` of every operation in the server's OpenAPI schema."""
    import httpx

    spec = httpx.get(srv.url + "/openapi.json", timeout=10).json()
    return [(m, p) for p, ops in spec["paths"].items() for m in ops]


def test_api_docs_render_offline(server: tuple[Server, Store], browser: object) -> None:
    """/docs (Swagger UI) renders and runs a request with every non-local request blocked."""
    srv, store = server
    page, foreign, errors = _new_page(browser, srv)
    expect = sync_api.expect
    blocked: list[str] = []

    def only_local(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith(srv.url + "/") or url.startswith("data:"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            blocked.append(url)
            route.abort()  # type: ignore[attr-defined]

    page.route("**/*", only_local)
    page.goto(srv.url + "/docs")
    op = page.locator(".opblock", has=page.locator(
        '.opblock-summary-path[data-path="/api/leaderboard"]'))
    expect(op).to_be_visible(timeout=20_000)
    expect(op).to_contain_text("/api/leaderboard")
    # one block per operation of the schema
    expect(page.locator(".opblock-summary-path")).to_have_count(len(_api_paths(srv)))
    assert "Podium rating service" in page.locator(".info .title").inner_text()
    # the page works, not only renders: run GET /api/leaderboard from it
    op.locator(".opblock-summary").click()
    op.locator("button.try-out__btn").click()
    op.locator("button.execute").click()
    status = op.locator(".live-responses-table .response .response-col_status").first
    expect(status).to_have_text("200", timeout=20_000)
    top = store.leaderboard(limit=1)[0].handle
    body = op.locator(".live-responses-table .response .response-col_description")
    expect(body).to_contain_text(top)
    assert not blocked, f"/docs asked for something outside the server: {blocked}"
    assert not foreign, f"requests outside the server: {foreign}"
    assert not errors, f"browser errors: {errors}"
    page.close()


def test_team_contest_pages(server: tuple[Server, Store], browser: object,
                            tmp_path: Path) -> None:
    """A team contest posted to the running server (its system, Elo-MMR, rates team
    rounds): the contest page groups the rows by team, best team first, each team's
    place above its members, each member's rating change and weight; the player page
    names the player's team.  (Last in the module: it adds a contest to the store.)"""
    import httpx

    srv, store = server
    if store.system.team_rule is None:
        pytest.skip(f"system {store.system_name!r} does not rate team rounds")
    latest = store.latest_contest()
    assert latest is not None
    doc = {"name": "Team Cup final", "time_seconds": latest.time_seconds + 86_400,
           "standings": [["Red Foxes", 0, 0, [TARGET, ["bob", 0.5]]],
                         ["Blue Jays", 1, 2, ["carol", "dave", "erin"]],
                         ["Green Owls", 1, 2, ["frank"]],
                         ["Grey Cats", 3, 3, ["grace", ["heidi", 0.25]]]]}
    r = httpx.post(srv.url + "/api/contests", json=doc, timeout=30,
                   headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code in (200, 201), r.text
    view = store.contest("Team Cup final")
    assert view is not None and view.teams is not None and len(view.changes) == 8

    page, foreign, errors = _new_page(browser, srv)
    expect = sync_api.expect
    page.goto(srv.url + "/contests/" + quote("Team Cup final", safe=""))
    expect(page.locator("h1.contest-name")).to_have_text("Team Cup final")
    expect(page.locator("p.muted").first).to_contain_text("8 players in 4 teams")
    teams = page.locator("table#changes tr.team-row")
    expect(teams).to_have_count(4)
    assert [t.locator(".team-name").inner_text() for t in teams.all()] == [
        "Red Foxes", "Blue Jays", "Green Owls", "Grey Cats"]
    assert [t.locator("td").first.inner_text() for t in teams.all()] == [
        "1", "2\u20133", "2\u20133", "4"]
    expect(teams.nth(1)).to_contain_text("3 members")
    expect(teams.nth(2)).to_contain_text("1 member")
    # below each team row its members, with their own rating change
    rows = page.locator("table#changes tbody tr")
    expect(rows).to_have_count(12)
    kinds = [rw.get_attribute("class") for rw in rows.all()]
    assert kinds == ["team-row", "member-row", "member-row", "team-row", "member-row",
                     "member-row", "member-row", "team-row", "member-row", "team-row",
                     "member-row", "member-row"]
    members = page.locator("table#changes tr.member-row")
    for row, ch in zip(members.all(), view.changes, strict=True):
        cells = [c.inner_text() for c in row.locator("td").all()]
        assert cells[1].startswith(ch.handle)
        assert cells[4] == f"{ch.new_display:,.0f}"
        r_change = round(ch.change)
        sign = f"+{r_change}" if r_change > 0 else ("\u00b10" if r_change == 0
                                                     else f"\u2212{-r_change}")
        assert cells[5] == sign
    expect(members.nth(1)).to_contain_text("×0.50")
    expect(members.nth(7)).to_contain_text("×0.25")
    # the team rows stand out (the panel background), the members are indented
    bg = teams.first.locator("td").first.evaluate("e => getComputedStyle(e).backgroundColor")
    assert bg == "rgb(244, 246, 249)"
    pad = members.first.locator("td").nth(1).evaluate("e => getComputedStyle(e).paddingLeft")
    assert float(pad.removesuffix("px")) > 15
    page.screenshot(path=str(tmp_path / "team-contest-page.png"), full_page=True)

    # the player page: a Team column, the team of the team contest
    page.locator("table#changes a.handle", has_text=TARGET).click()
    page.wait_for_url(srv.url + "/players/" + quote(TARGET, safe=""))
    expect(page.locator("table.history thead")).to_contain_text("Team")
    first = page.locator("table.history tbody tr").first
    expect(first).to_contain_text("Team Cup final")
    expect(first.locator("td.team-name")).to_have_text("Red Foxes")
    older = page.locator("table.history tbody tr").nth(1).locator("td.team-name")
    expect(older).to_have_text("\u2013")
    tip = page.locator("figure.chart circle.rating-point title").last.text_content()
    assert tip is not None and tip.startswith("Team Cup final \u00b7 team Red Foxes")
    assert not foreign, f"requests outside the server: {foreign}"
    assert not errors, f"browser errors: {errors}"
    page.close()


ODD_HANDLES = [".", "..", "a/b", "%2e", "q?x=1", "h#1", "100%"]


def test_odd_and_long_handles_in_the_browser(server: tuple[Server, Store], browser: object,
                                             tmp_path: Path) -> None:
    """Every handle of a contest page is reachable by clicking it -- ``.`` and ``..``
    (which browsers resolve away as path segments), a slash, ``%2e``, ``?``, ``#``,
    ``%`` -- and a 128-character handle neither widens the page nor breaks it; the
    pages raise no Content-Security-Policy violation.  (Adds a contest to the store.)"""
    import httpx

    srv, store = server
    latest = store.latest_contest()
    assert latest is not None
    long_handle = "W" * 128
    handles = [*ODD_HANDLES, long_handle]
    doc = {"name": "Odd handles " + "L" * 300, "time_seconds": latest.time_seconds + 2 * 86_400,
           "standings": [[h, k, k] for k, h in enumerate(handles)]}
    r = httpx.post(srv.url + "/api/contests", json=doc, timeout=30,
                   headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code == 201, r.text
    cid = r.json()["contest_id"]

    page, foreign, errors = _new_page(browser, srv)
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text)
            if "Content Security Policy" in m.text else None)
    expect = sync_api.expect
    contest_url = srv.url + "/contests/" + quote(cid, safe="")
    for handle in handles:
        page.goto(contest_url)
        rows = page.locator("table#changes a.handle")
        texts = rows.all_inner_texts()
        link = rows.nth(texts.index(handle))
        link.click()
        expect(page.locator("h1.player-name")).to_have_text(handle)
        assert page.title().startswith(handle[:40])
    # a long handle and a long name wrap: the page is no wider than the window
    for url in (contest_url, srv.url + "/players/" + long_handle, srv.url + "/"):
        page.goto(url)
        width = page.evaluate("document.documentElement.scrollWidth")
        inner = page.evaluate("window.innerWidth")
        assert width <= inner, (url, width, inner)
    page.screenshot(path=str(tmp_path / "long-handle.png"), full_page=True)
    assert not violations, violations
    assert not foreign, f"requests outside the server: {foreign}"
    assert not errors, f"browser errors: {errors}"
    page.close()
