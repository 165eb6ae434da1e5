"""The Codeforces fetcher on recorded API responses (tests/fixtures/codeforces; no network).

The expected contest files below are written out by hand from the fixtures: the
rated rows in rank order, equal ranks sharing one 0-based [lo, hi] range,
``time_seconds`` = the first row's ``ratingUpdateTimeSeconds``, contests ordered
by start time (same start: larger id first), unrated and team contests skipped.
"""

from __future__ import annotations

import json
import os
import urllib.error
from pathlib import Path

import numpy as np
import pytest
from _fetch_fakes import FakeClock, FakeTransport, fixture
from _require import require_codeforces, require_data

from podium import cli
from podium.errors import PodiumError
from podium.io import check_history, load_contests, read_contest_json
from podium.io.fetch import (
    CodeforcesApiError,
    FetchError,
    HttpStatusError,
    contest_from_rating_changes,
    fetch_codeforces,
)

API = "https://codeforces.com/api/"
LIST = API + "contest.list?gym=false"
LIST_GYM = API + "contest.list?gym=true"
NOW = 1_700_000_000.0  # long after every fixture contest


def rc_url(cid: int) -> str:
    return f"{API}contest.ratingChanges?contestId={cid}"


def cf(name: str) -> bytes:
    return fixture("codeforces", name)


def routes() -> dict[str, object]:
    return {
        LIST: cf("contest.list.json"),
        rc_url(908): cf("contest.ratingChanges.908.json"),
        rc_url(1002): HttpStatusError(400, rc_url(1002), cf("contest.ratingChanges.1002.json")),
        rc_url(1003): cf("contest.ratingChanges.1003.json"),
        rc_url(1004): cf("contest.ratingChanges.1004.json"),
        rc_url(1005): cf("contest.ratingChanges.1005.json"),
    }


EXPECTED = [
    {
        "name": "Good Bye 2017",
        "url": "https://codeforces.com/contest/908/standings",
        "time_seconds": 1514571000,
        "standings": [
            ["Petr", 0, 0], ["dotorya", 1, 1], ["V--o_o--V", 2, 2], ["Radewoosh", 3, 3],
            ["Endagorion", 4, 4], ["Merkurev", 5, 6], ["abeker", 5, 6], ["newbie314159", 7, 7],
        ],
    },
    {
        "name": "Codeforces Round 496 (Div. 2)",
        "url": "https://codeforces.com/contest/1005/standings",
        "time_seconds": 1530012600,
        "standings": [
            ["pupil_01", 0, 0], ["crow.bar_clone", 1, 2], ["newbie-7", 1, 2], ["crow.bar", 3, 3],
            ["gray_cat", 4, 4],
        ],
    },
    {
        "name": "Codeforces Round 496 (Div. 1)",
        "url": "https://codeforces.com/contest/1004/standings",
        "time_seconds": 1530012600,
        "standings": [
            ["red_fox", 0, 2], ["lime.owl", 0, 2], ["Quokka-9", 0, 2], ["blue_heron", 3, 3],
            ["tan_gecko", 4, 4],
        ],
    },
]

EXPECTED_CSV = (
    "name,url,weight,time_seconds,num_contestants\n"
    "Good Bye 2017,https://codeforces.com/contest/908/standings,1.0,1514571000,8\n"
    "Codeforces Round 496 (Div. 2),https://codeforces.com/contest/1005/standings,1.0,"
    "1530012600,5\n"
    "Codeforces Round 496 (Div. 1),https://codeforces.com/contest/1004/standings,1.0,"
    "1530012600,5\n"
)


def run(out: Path, transport: FakeTransport, clock: FakeClock | None = None, **kw: object):
    clock = clock or FakeClock()
    kw.setdefault("now", lambda: NOW)
    return fetch_codeforces(out, transport=transport, clock=clock.clock, sleep=clock.sleep,
                            **kw)


def contest_files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


# ---------------------------------------------------------------- conversion and order
def test_fixture_fetch_writes_the_expected_history(tmp_path: Path) -> None:
    t = FakeTransport(routes())
    clock = FakeClock()
    lines: list[str] = []
    rep = run(tmp_path, t, clock, min_interval=2.0, progress=lines.append)

    for k, want in enumerate(EXPECTED):
        assert json.loads((tmp_path / f"{k}.json").read_text(encoding="utf-8")) == want
    assert not (tmp_path / "3.json").exists()
    assert (tmp_path / "all_contests.csv").read_text(encoding="utf-8") == EXPECTED_CSV
    # one contest.list, then rating changes by start time; no call for team contest 951
    assert t.calls == [LIST, rc_url(908), rc_url(1002), rc_url(1003), rc_url(1005),
                       rc_url(1004)]
    assert clock.sleeps == [2.0] * 5  # the polite pace between the 6 requests
    assert [(s.id, s.reason.split(":")[0]) for s in rep.skipped] == [
        ("951", "team contest"), ("1002", "unrated"), ("1003", "unrated")]
    assert "Rating changes are unavailable" in rep.skipped[1].reason
    assert (rep.contests, rep.rows, rep.requests, rep.cached) == (3, 18, 6, 0)
    assert any("crow.bar" in w and "_clone" in w for w in rep.warnings)
    assert any("ratingUpdateTimeSeconds" in w for w in rep.warnings)
    assert any("[1/6] contest 908 'Good Bye 2017': 8 rated" in line for line in lines)
    # raw answers are cached for the next run (unrated ones too: they are final)
    cached = {p.name for p in (tmp_path / ".cache").iterdir()}
    assert {"908.json", "1002.json", "1003.json", "1004.json", "1005.json"} <= cached


def test_history_loads_back(tmp_path: Path) -> None:
    run(tmp_path, FakeTransport(routes()), min_interval=0.0)
    history = load_contests(tmp_path)
    assert [c.to_json_dict() for c in history.contests] == EXPECTED
    assert history.changes == []
    assert check_history(history.contests, history.indices) == []
    div1 = history.contests[2]
    assert div1.lo.tolist() == [0, 0, 0, 3, 4] and div1.hi.tolist() == [2, 2, 2, 3, 4]


def test_conversion_compacts_rank_gaps_and_sorts_ranks() -> None:
    rows = json.loads(cf("contest.ratingChanges.908.json"))["result"]
    shuffled = [rows[5], *rows[:5], rows[7], rows[6]]  # ranks 93,1..5,6691,93
    contest, warnings = contest_from_rating_changes(shuffled)
    assert contest.standings[5:] == [("Merkurev", 5, 6), ("abeker", 5, 6),
                                     ("newbie314159", 7, 7)]
    assert any("not in rank order" in w for w in warnings)


def test_since_until_limit_and_ids(tmp_path: Path) -> None:
    t = FakeTransport(routes())
    rep = run(tmp_path / "a", t, min_interval=0.0, since="2018-01-01", limit=1)
    assert rep.contests == 1 and t.calls == [LIST, rc_url(1004)]
    assert read_contest_json(tmp_path / "a" / "0.json").name.endswith("(Div. 1)")

    t = FakeTransport(routes())
    rep = run(tmp_path / "b", t, min_interval=0.0, until="2018-01-01")
    assert rep.contests == 1 and t.calls == [LIST, rc_url(908)]

    t = FakeTransport(routes())
    rep = run(tmp_path / "c", t, min_interval=0.0, contest_ids=[1004, 908, 1010])
    assert t.calls == [LIST, rc_url(908), rc_url(1004)]  # start-time order, not given order
    assert [s.id for s in rep.skipped] == ["1010"] and "BEFORE" in rep.skipped[0].reason

    with pytest.raises(FetchError, match=r"4242 are not in contest.list"):
        run(tmp_path / "d", FakeTransport(routes()), min_interval=0.0, contest_ids=[4242])


def test_gym_contests_come_from_standings(tmp_path: Path) -> None:
    url = f"{API}contest.standings?contestId=102000&showUnofficial=false"
    t = FakeTransport({LIST_GYM: cf("contest.list.gym.json"),
                       url: cf("contest.standings.102000.json")})
    rep = run(tmp_path, t, min_interval=0.0, gym=True)
    assert t.calls == [LIST_GYM, url]
    assert json.loads((tmp_path / "0.json").read_text(encoding="utf-8")) == {
        "name": "2019 ICPC Training Camp, Day 1",
        "url": "https://codeforces.com/gym/102000/standings",
        "time_seconds": 1549018000,  # start + duration
        "standings": [["team:1234", 0, 0], ["alice_cf", 1, 2],
                      ["party:Moscow SU Ghosts", 1, 2], ["bob_cf", 3, 3]],
    }
    assert [(s.id, s.reason) for s in rep.skipped] == [("101999", "no start time in contest.list")]


# ---------------------------------------------------------------- errors
def test_failed_envelope_is_a_clear_error(tmp_path: Path) -> None:
    t = FakeTransport({LIST: HttpStatusError(400, LIST, cf("contest.list.failed.json"))})
    with pytest.raises(CodeforcesApiError) as err:
        run(tmp_path, t, min_interval=0.0)
    msg = str(err.value)
    assert LIST in msg and "gym: Field should contain boolean value" in msg
    assert isinstance(err.value, PodiumError) and len(t.calls) == 1  # not retried

    bad = dict(routes())
    bad[rc_url(908)] = HttpStatusError(400, rc_url(908),
                                       cf("contest.ratingChanges.not-found.json"))
    with pytest.raises(CodeforcesApiError, match=r"contest 908 \(Good Bye 2017\).*"
                       r"contestId=908 failed: contestId: Contest with id 999999 not found"):
        run(tmp_path / "x", FakeTransport(bad), min_interval=0.0)


def test_retries_follow_backoff_and_min_interval(tmp_path: Path) -> None:
    t = FakeTransport({
        LIST: [HttpStatusError(503, LIST, b"<html>Service Temporarily Unavailable</html>"),
               HttpStatusError(429, LIST), cf("call-limit.json"), cf("contest.list.json")],
        rc_url(908): cf("contest.ratingChanges.908.json"),
    })
    clock = FakeClock()
    lines: list[str] = []
    rep = run(tmp_path, t, clock, contest_ids=[908], min_interval=3.0, backoff=2.0,
              progress=lines.append)
    # retry k waits max(min_interval since the last start, backoff * 2**k since the failure)
    assert clock.sleeps == [3.0, 4.0, 8.0, 3.0]
    assert t.calls == [LIST] * 4 + [rc_url(908)]
    assert rep.requests == 5 and rep.contests == 1
    assert any("HTTP 503" in line and "retry 1 of 5" in line for line in lines)
    assert any("Call limit exceeded" in line for line in lines)


def test_retry_after_and_network_errors(tmp_path: Path) -> None:
    t = FakeTransport({
        LIST: [HttpStatusError(429, LIST, retry_after=30.0),
               urllib.error.URLError(ConnectionResetError(104, "Connection reset by peer")),
               TimeoutError("timed out"), b"{\"status\": \"OK\", \"res", cf("contest.list.json")],
        rc_url(908): cf("contest.ratingChanges.908.json"),
    })
    clock = FakeClock()
    run(tmp_path, t, clock, contest_ids=[908], min_interval=0.0, backoff=1.0)
    assert clock.sleeps == [30.0, 2.0, 4.0, 8.0]  # Retry-After, then 2**k for k = 1, 2, 3


def test_permanent_failure_names_url_and_contest(tmp_path: Path) -> None:
    t = FakeTransport({LIST: cf("contest.list.json"),
                       rc_url(908): HttpStatusError(502, rc_url(908), b"Bad Gateway")})
    clock = FakeClock()
    with pytest.raises(FetchError) as err:
        run(tmp_path, t, clock, contest_ids=[908], min_interval=0.0, backoff=2.0, retries=2)
    msg = str(err.value)
    assert "contest 908 (Good Bye 2017)" in msg and rc_url(908) in msg
    assert "3 attempts" in msg and "HTTP 502" in msg
    assert clock.sleeps == [2.0, 4.0]

    t = FakeTransport({LIST: HttpStatusError(403, LIST, b"Forbidden")})
    with pytest.raises(FetchError, match=r"answered HTTP 403: Forbidden"):
        run(tmp_path / "y", t, min_interval=0.0)
    assert t.calls == [LIST]  # 403 is not retried


# ---------------------------------------------------------------- resume and atomicity
@pytest.mark.parametrize("failure", [KeyboardInterrupt(), FetchError("network down")])
def test_resume_after_interruption(tmp_path: Path, failure: BaseException) -> None:
    clean = tmp_path / "clean"
    run(clean, FakeTransport(routes()), min_interval=0.0)

    out = tmp_path / "out"
    t1 = FakeTransport(routes())
    t1.interrupt = ("contestId=1005", 1, failure)  # after 908, 1002 and 1003 are in
    with pytest.raises(type(failure)):
        run(out, t1, min_interval=0.0)
    assert not list(out.glob("*.json")) and not (out / "all_contests.csv").exists()
    assert {p.name for p in (out / ".cache").glob("*.json")} == {
        "908.json", "1002.json", "1003.json", "podium-fetch.json"}

    t2 = FakeTransport(routes())
    rep = run(out, t2, min_interval=0.0)
    assert t2.calls == [LIST, rc_url(1005), rc_url(1004)]  # nothing cached is asked again
    assert rep.cached == 3
    assert contest_files(out) == contest_files(clean)

    t3 = FakeTransport(routes())
    run(out, t3, min_interval=0.0)
    assert t3.calls == [LIST]
    assert contest_files(out) == contest_files(clean)


def test_recent_unrated_answers_are_asked_again(tmp_path: Path) -> None:
    soon = 1_528_000_000 + 7200 + 3600.0  # an hour after contest 1002 ended
    t = FakeTransport(routes())
    run(tmp_path, t, min_interval=0.0, contest_ids=[1002], now=lambda: soon)
    assert not (tmp_path / ".cache" / "1002.json").exists()
    t = FakeTransport(routes())
    run(tmp_path, t, min_interval=0.0, contest_ids=[1002], now=lambda: NOW)
    assert t.calls == [LIST, rc_url(1002)]
    assert (tmp_path / ".cache" / "1002.json").exists()


def test_no_partial_contest_file_after_interrupted_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import podium._files as files

    clean = tmp_path / "clean"
    run(clean, FakeTransport(routes()), min_interval=0.0)
    out = tmp_path / "out"
    real_fsync = os.fsync
    calls = {"n": 0}

    def dying_fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # the temporary 1.json is complete but not yet renamed
            raise KeyboardInterrupt
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", dying_fsync)
    # every cache file costs an fsync too: start with a warm cache
    for p in (clean / ".cache").iterdir():
        (out / ".cache").mkdir(parents=True, exist_ok=True)
        (out / ".cache" / p.name).write_bytes(p.read_bytes())
    with pytest.raises(KeyboardInterrupt):
        run(out, FakeTransport(routes()), min_interval=0.0)
    names = sorted(p.name for p in out.iterdir())
    assert names == [".cache", "0.json"]  # no 1.json, no leftover temporary file
    assert (out / "0.json").read_bytes() == (clean / "0.json").read_bytes()
    monkeypatch.setattr(files.os, "fsync", real_fsync)
    run(out, FakeTransport(routes()), min_interval=0.0)
    assert contest_files(out) == contest_files(clean)


def test_output_directory_rules(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "0.json").write_text("{}", encoding="utf-8")
    with pytest.raises(FetchError, match="did not write"):
        run(foreign, FakeTransport(routes()), min_interval=0.0)

    out = tmp_path / "out"
    run(out, FakeTransport(routes()), min_interval=0.0)
    rep = run(out, FakeTransport(routes()), min_interval=0.0, contest_ids=[908])
    assert rep.contests == 1
    assert sorted(p.name for p in out.glob("*.json")) == ["0.json"]  # stale 1, 2 removed
    with pytest.raises(FetchError, match="holds a codeforces fetch"):
        run(out, FakeTransport({}), min_interval=0.0, gym=True)


# ---------------------------------------------------------------- command line
def test_cli_on_fixtures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> None:
    import podium.io.fetch.cli as fetch_cli

    t = FakeTransport(routes())
    monkeypatch.setattr(fetch_cli, "make_transport", lambda: t)
    out = tmp_path / "cf"
    assert cli.main(["fetch", "codeforces", str(out), "--min-interval", "0"]) == 0
    err = capsys.readouterr().err
    assert "[1/6] contest 908 'Good Bye 2017': 8 rated" in err
    assert "skipped: 2 unrated, 1 team contest" in err
    assert "codeforces: wrote 3 contests (18 player-rounds)" in err
    assert [c.to_json_dict() for c in load_contests(out).contests] == EXPECTED

    t = FakeTransport({LIST: HttpStatusError(400, LIST, cf("contest.list.failed.json"))})
    monkeypatch.setattr(fetch_cli, "make_transport", lambda: t)
    assert cli.main(["fetch", "codeforces", str(tmp_path / "x"), "--min-interval", "0"]) == 1
    err = capsys.readouterr().err
    assert "podium: error: Codeforces contest list:" in err and LIST in err

    with pytest.raises(SystemExit) as stop:  # the parser refuses it: one line, status 2
        cli.main(["fetch", "codeforces", str(out), "--since", "2018-13-01"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "podium: error: fetch codeforces: argument --since: expected a day YYYY-MM-DD, got "
        "'2018-13-01' (see podium fetch codeforces --help)"]


# ---------------------------------------------------------------- the shared dataset
def test_908_conversion_matches_the_elo_mmr_dataset() -> None:
    import tarfile

    OFFICIAL = require_data("codeforces-official", "908.json")
    DATASET = require_codeforces()

    from podium.io import contest_from_json_dict

    rows = json.loads(OFFICIAL.read_bytes())
    ours, warnings = contest_from_rating_changes(rows)
    # "Good Bye 2017" is index 704 of the dataset (line 706 of all_contests.csv)
    with tarfile.open(DATASET) as archive:
        member = next(m for m in archive if m.name.endswith("codeforces/704.json"))
        data = archive.extractfile(member)
        assert data is not None
        theirs = contest_from_json_dict(json.load(data), source=member.name)
    assert warnings == []
    assert (ours.name, ours.url, ours.time_seconds, ours.weight, ours.perf_ceiling) == (
        theirs.name, theirs.url, theirs.time_seconds, theirs.weight, theirs.perf_ceiling)
    assert ours.time_seconds == rows[0]["ratingUpdateTimeSeconds"] == 1514571000
    assert np.array_equal(ours.lo, theirs.lo) and np.array_equal(ours.hi, theirs.hi)
    # The snapshot (2021) predates handle changes that the API now reports, and the API
    # lists tied players in another order: compare tie groups, allowing renamed handles
    # (a handle in neither file of the other side) to differ.
    ours_all, theirs_all = set(ours.handles), set(theirs.handles)
    groups_ours: dict[tuple[int, int], set[str]] = {}
    groups_theirs: dict[tuple[int, int], set[str]] = {}
    for h, lo, hi in ours.standings:
        groups_ours.setdefault((lo, hi), set()).add(h)
    for h, lo, hi in theirs.standings:
        groups_theirs.setdefault((lo, hi), set()).add(h)
    assert groups_ours.keys() == groups_theirs.keys()
    for key, mine in groups_ours.items():
        only_mine, only_theirs = mine - groups_theirs[key], groups_theirs[key] - mine
        assert len(only_mine) == len(only_theirs)
        assert not only_mine & theirs_all and not only_theirs & ours_all
    same = len(ours_all & theirs_all)
    assert same == 5637 and len(ours) == len(theirs) == 6691


# ---------------------------------------------------------------- the real transport
def test_urllib_transport_on_a_loopback_server() -> None:
    """The urllib transport against a local server (127.0.0.1 only, no outside network)."""
    import gzip
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from podium.io.fetch import USER_AGENT, urllib_transport

    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            seen.append(self.headers.get("User-Agent", ""))
            if self.path == "/ok":
                body = gzip.compress(b'{"status": "OK", "result": []}')
                self.send_response(200)
                self.send_header("Content-Encoding", "gzip")
            else:
                body = b'{"status": "FAILED", "comment": "Call limit exceeded"}'
                self.send_response(429)
                self.send_header("Retry-After", "7")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        get = urllib_transport(timeout=10)
        assert json.loads(get(base + "/ok")) == {"status": "OK", "result": []}
        with pytest.raises(HttpStatusError) as err:
            get(base + "/busy")
        assert err.value.status == 429 and err.value.retry_after == 7.0
        assert b"Call limit exceeded" in err.value.body
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [USER_AGENT, USER_AGENT] and USER_AGENT.startswith("podium/")
