"""The CTFtime fetcher on recorded API responses (tests/fixtures/ctftime; no network).

Expected files are written out by hand from the fixtures: handles are team ids,
equal places tie, a team listed twice keeps its best place, events are ordered by
their finish time, events without scores or of a single team are skipped (a draw is kept).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _fetch_fakes import FakeClock, FakeTransport, fixture

from podium import cli
from podium.errors import DataFormatError
from podium.io import load_contests
from podium.io.fetch import FetchError, HttpStatusError, contest_from_results, fetch_ctftime

API = "https://ctftime.org/api/v1/"
NOW = 1_700_000_000.0  # November 2023: 2019 and 2020 are settled


def results(y: int) -> str:
    return f"{API}results/{y}/"


def event(e: int) -> str:
    return f"{API}events/{e}/"


def team(t: int) -> str:
    return f"{API}teams/{t}/"


def ct(name: str) -> bytes:
    return fixture("ctftime", name)


def routes() -> dict[str, object]:
    r: dict[str, object] = {
        results(2019): ct("results.2019.json"),
        results(2020): ct("results.2020.json"),
    }
    for e in (900, 901, 903, 950):
        r[event(e)] = ct(f"event.{e}.json")
    for t in (1001, 1002, 1003, 1004, 1006, 1007):  # team 1005 is gone: HTTP 404
        r[team(t)] = ct(f"team.{t}.json")
    return r


EXPECTED = [
    {
        "name": "Lighthouse CTF 2019",
        "url": "https://ctftime.org/event/903",
        "time_seconds": 1570147200,  # 2019-10-04T00:00:00+00:00, the event's finish
        # places 1, 2, 2, 7 (team 1003 again: dropped), 4
        "standings": [["1003", 0, 0], ["1006", 1, 2], ["1001", 1, 2], ["1002", 3, 3]],
    },
    {
        "name": "Harbor CTF 2019",
        "url": "https://ctftime.org/event/900",
        "time_seconds": 1571587200,  # 2019-10-20T16:00:00+00:00
        "standings": [["1001", 0, 0], ["1002", 1, 2], ["1003", 1, 2], ["1004", 3, 3],
                      ["1005", 4, 4]],
    },
    {
        "name": "Harbor CTF 2020",
        "url": "https://ctftime.org/event/950",
        "time_seconds": 1603036800,  # 2020-10-18T16:00:00+00:00
        "standings": [["1002", 0, 0], ["1001", 1, 1], ["1007", 2, 2]],
    },
]

EXPECTED_TEAMS = (
    "handle,name,country,aliases\n"
    '1001,Null Pointers,DE,"[""nullptr"", ""Null Ptrs""]"\n'
    '1002,"Sea Shells, Inc.",US,\n'
    '1003,Kraken,,"[""Kraken""]"\n'
    "1004,Kraken,PL,\n"
    "1005,,,\n"
    "1006,Ünïcode Team,FR,\n"
    "1007,late joiners,BR,\n"
)

ALL_CALLS = [
    results(2019), results(2020), event(900), event(903), event(950),
    *[team(t) for t in range(1001, 1008)],
]


def run(out: Path, transport: FakeTransport, clock: FakeClock | None = None, **kw: object):
    clock = clock or FakeClock()
    kw.setdefault("now", lambda: NOW)
    kw.setdefault("min_interval", 0.0)
    return fetch_ctftime(out, transport=transport, clock=clock.clock, sleep=clock.sleep, **kw)


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_fixture_fetch_writes_the_expected_history(tmp_path: Path) -> None:
    t = FakeTransport(routes())
    clock = FakeClock()
    rep = run(tmp_path, t, clock, year=[2019, 2020], min_interval=1.0)
    for k, want in enumerate(EXPECTED):
        assert json.loads((tmp_path / f"{k}.json").read_text(encoding="utf-8")) == want
    assert not (tmp_path / "3.json").exists()
    assert (tmp_path / "teams.csv").read_text(encoding="utf-8") == EXPECTED_TEAMS
    assert (tmp_path / "all_contests.csv").read_text(encoding="utf-8") == (
        "name,url,weight,time_seconds,num_contestants\n"
        "Lighthouse CTF 2019,https://ctftime.org/event/903,1.0,1570147200,4\n"
        "Harbor CTF 2019,https://ctftime.org/event/900,1.0,1571587200,5\n"
        "Harbor CTF 2020,https://ctftime.org/event/950,1.0,1603036800,3\n"
    )
    # no event details are asked for events that are skipped anyway (901, 902)
    assert t.calls == ALL_CALLS
    assert clock.sleeps == [1.0] * (len(ALL_CALLS) - 1)
    assert [(s.id, s.reason) for s in rep.skipped] == [
        ("901", "no information (a single team)"), ("902", "no scores")]
    assert any("1003" in w and "more than once" in w for w in rep.warnings)
    assert (rep.contests, rep.rows, rep.requests, rep.cached) == (3, 12, 12, 0)


def test_history_loads_back(tmp_path: Path) -> None:
    run(tmp_path, FakeTransport(routes()), year=[2019, 2020], team_names=False)
    history = load_contests(tmp_path)
    assert [c.to_json_dict() for c in history.contests] == EXPECTED
    assert history.changes == []
    # without team names, teams.csv still lists every handle
    assert (tmp_path / "teams.csv").read_text(encoding="utf-8").splitlines()[1:] == [
        f"{t},,," for t in range(1001, 1008)]


def test_without_event_details_the_results_time_orders(tmp_path: Path) -> None:
    t = FakeTransport(routes())
    run(tmp_path, t, year=2019, event_details=False, team_names=False)
    assert t.calls == [results(2019)]
    times = [c.time_seconds for c in load_contests(tmp_path).contests]
    assert times == [1570000000, 1571587200]  # the results' "time" of 903 and 900


def test_event_ids_find_their_years(tmp_path: Path) -> None:
    t = FakeTransport(routes())
    rep = run(tmp_path, t, event_ids=[903, 4242], team_names=False)
    assert t.calls == [event(903), event(4242), results(2019)]
    assert [c.to_json_dict() for c in load_contests(tmp_path).contests] == [EXPECTED[0]]
    assert [(s.id, s.reason) for s in rep.skipped] == [("4242", "no results on CTFtime")]


def test_default_years_run_from_2011_to_now(tmp_path: Path) -> None:
    t = FakeTransport({})
    in_2012 = 1_341_000_000.0  # 2012-06-29
    rep = run(tmp_path, t, now=lambda: in_2012)
    assert t.calls == [results(2011), results(2012)]
    assert rep.contests == 0 and len(rep.warnings) == 2 and "HTTP 404" in rep.warnings[0]
    with pytest.raises(DataFormatError, match="no contest files"):
        load_contests(tmp_path)


def test_retry_then_success_and_permanent_failure(tmp_path: Path) -> None:
    t = FakeTransport({**routes(), results(2019): [
        HttpStatusError(502, results(2019), b"Bad Gateway"),
        HttpStatusError(429, results(2019), retry_after=60.0), ct("results.2019.json")]})
    clock = FakeClock()
    run(tmp_path / "a", t, clock, year=2019, team_names=False, min_interval=1.0, backoff=5.0)
    # retry 0 waits 5 s (backoff), retry 1 waits 60 s (Retry-After), then 1 s per request
    assert clock.sleeps == [5.0, 60.0, 1.0, 1.0]

    t = FakeTransport({results(2019): HttpStatusError(403, results(2019), b"Forbidden")})
    with pytest.raises(FetchError) as err:
        run(tmp_path / "b", t, year=2019)
    assert "CTFtime results of 2019" in str(err.value) and results(2019) in str(err.value)
    assert "HTTP 403" in str(err.value) and t.calls == [results(2019)]


@pytest.mark.parametrize("stop_at", [f"{API}events/", f"{API}teams/"])
def test_resume_after_interruption(tmp_path: Path, stop_at: str) -> None:
    clean = tmp_path / "clean"
    run(clean, FakeTransport(routes()), year=[2019, 2020])

    out = tmp_path / "out"
    t1 = FakeTransport(routes())
    t1.interrupt = (stop_at, 2, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run(out, t1, year=[2019, 2020])
    done = t1.calls[:-1]  # answered before the interruption
    assert not (out / "teams.csv").exists()

    t2 = FakeTransport(routes())
    rep = run(out, t2, year=[2019, 2020])
    assert not set(t2.calls) & set(done)  # nothing answered before is asked again
    assert t2.calls == [c for c in ALL_CALLS if c not in done]
    assert rep.cached == len(done)
    assert files(out) == files(clean)


def test_unsettled_year_is_asked_again(tmp_path: Path) -> None:
    in_2020 = 1_600_000_000.0  # September 2020
    t = FakeTransport(routes())
    run(tmp_path, t, year=[2019, 2020], team_names=False, now=lambda: in_2020)
    t = FakeTransport(routes())
    run(tmp_path, t, year=[2019, 2020], team_names=False, now=lambda: in_2020)
    assert t.calls == [results(2020)]  # 2019 came from the cache, 2020 may still change


def test_malformed_results_name_the_event() -> None:
    with pytest.raises(DataFormatError, match=r"event 77: scores\[1\]: 'place' must be"):
        contest_from_results(77, {"title": "X", "time": 1.0, "scores": [
            {"team_id": 1, "points": "1.0", "place": 1}, {"team_id": 2, "points": "0.5"}]})
    contest, reason, _ = contest_from_results(78, {"title": "Y", "time": 5.6, "scores": [
        {"team_id": 1, "points": "1", "place": 1}, {"team_id": 2, "points": "1", "place": 1}]})
    assert contest is not None and reason == ""  # a draw: kept, the rating system decides
    assert contest.is_outcome_free and list(contest.handles) == ["1", "2"]


def test_cli_on_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    import podium.io.fetch.cli as fetch_cli

    t = FakeTransport(routes())
    monkeypatch.setattr(fetch_cli, "make_transport", lambda: t)
    out = tmp_path / "ctf"
    code = cli.main(["fetch", "ctftime", str(out), "--year", "2019,2020", "--min-interval", "0"])
    assert code == 0
    err = capsys.readouterr().err
    assert "[4/5] event 903 'Lighthouse CTF 2019': 4 teams" in err
    assert "ctftime: wrote 3 contests (12 player-rounds)" in err
    assert "warning: event 903" in err
    assert [c.to_json_dict() for c in load_contests(out).contests] == EXPECTED

    with pytest.raises(SystemExit) as exc:
        cli.main(["fetch", "ctftime", str(out), "--year", "20x9"])
    assert exc.value.code == 2
    assert "expected comma-separated integers" in capsys.readouterr().err


def test_scores_are_ordered_by_place() -> None:
    contest, _, _ = contest_from_results(79, {"title": "Z", "time": 1e9, "scores": [
        {"team_id": 3, "points": "1", "place": 3}, {"team_id": 1, "points": "9", "place": 1},
        {"team_id": 4, "points": "1", "place": 3}, {"team_id": 2, "points": "5", "place": 2}]})
    assert contest is not None
    assert contest.standings == [("1", 0, 0), ("2", 1, 1), ("3", 2, 3), ("4", 2, 3)]
    assert contest.time_seconds == 1_000_000_000
