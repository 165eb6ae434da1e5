"""Issue 30, item 5: messy data keeps moving.

* a refused handle's error names ``--raw-handles``, the option that keeps handles as
  written (not where it cannot help: a store applies the rules whatever the file says);
* ``podium eval`` and ``podium compare`` go on past refused handles -- a team named
  U+00A0 stopped ``compare`` at file 153 of the paper's CTF data -- keeping them as
  written and reporting how many, why and where;
* contest times before 1970 (negative seconds) back to 1800, in files, the Rater, the
  store and the service: a history crossing 1970 is rated as the same history moved
  after 1970 (only differences of times matter), and the millisecond guard still holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podium import Contest, Rater, get_system
from podium.cli import main
from podium.io import load_contests

T0 = 1_600_000_000
NBSP = "\u00a0"


def _team_history(tmp: Path) -> Path:
    """Three team contests; the second has a team named NBSP and a member 'a\\u200bb'."""
    d = tmp / "ctf"
    d.mkdir()
    teams = [["red", ["r1", "r2"]], ["blue", ["b1", "b2"]], ["green", ["g1", "g2"]]]
    for k in range(3):
        rows = [[name, i, i, members] for i, (name, members) in enumerate(teams)]
        if k == 1:
            rows.append([NBSP, 3, 3, ["n1", "a\u200bb"]])
        (d / f"{k}.json").write_text(json.dumps(
            {"name": f"c{k}", "time_seconds": T0 + 86_400 * k, "standings": rows}))
        teams = teams[1:] + teams[:1]
    return d


def test_a_refused_handle_names_raw_handles(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    d = _team_history(tmp_path)
    assert main(["rate", str(d), "-o", str(tmp_path / "o"), "-s", "mmr"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("podium: error: "), err
    assert "empty or only whitespace" in err[0]
    assert err[0].endswith("(--raw-handles keeps handles as written)"), err
    assert main(["rate", str(d), "-o", str(tmp_path / "o"), "-s", "mmr", "--raw-handles"]) == 0
    capsys.readouterr()
    # a store never keeps such a handle: no option to name
    assert main(["ingest", str(d), "--db", str(tmp_path / "s.db"), "-q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty or only whitespace" in err[0] and "--raw" not in err[0]


@pytest.mark.parametrize("argv", [["eval", "-s", "mmr"], ["compare", "--systems", "mmr,glicko"]])
def test_eval_and_compare_go_on_and_report(tmp_path: Path, argv: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    d = _team_history(tmp_path)
    rc = main([argv[0], str(d), *argv[1:], "--train-frac", "0", "--min-history", "1"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "warning: 2 handles broke the handle rules and were kept as written" in err
    assert ("  '\\xa0': empty or only whitespace; first in contest 'c1' (file 1)" in err), err
    assert ("  'a\\u200bb': character 2 (U+200B) is an invisible format character; first in "
            "contest 'c1' (file 1)") in err, err


def test_load_contests_keeps_and_lists_refused_handles(tmp_path: Path) -> None:
    d = _team_history(tmp_path)
    hist = load_contests(d, keep_refused_handles=True)
    assert hist.refused_handles == {
        NBSP: "empty or only whitespace",
        "a\u200bb": "character 2 (U+200B) is an invisible format character"}
    assert NBSP in hist.contests[1].teams.names  # type: ignore[union-attr]
    assert load_contests(d, raw_handles=True).refused_handles == {}


# ------------------------------------------------------------------ before 1970
#: 1872-11-30, the first international football match; then across 1970
TIMES = [-3_063_744_000, -2_000_000_000, -86_400 * 400, -5, 0, 86_400 * 30]
SHIFT = 4_000_000_000  # all after 1970 (2096)


def _old_history(shift: int = 0) -> list[Contest]:
    out = []
    for k, t in enumerate(TIMES):
        order = ["a", "b", "c", "d"] if k % 2 == 0 else ["d", "c", "a", "b"]
        out.append(Contest([(h, i, i) for i, h in enumerate(order)], name=f"m{k}",
                           time_seconds=t + shift))
    return out


@pytest.mark.parametrize("system", ["mmr", "glicko", "trueskill", "codeforces"])
def test_a_history_crossing_1970_is_rated_as_after_1970(system: str) -> None:
    kw = {"drift_per_day": 5.0} if system == "mmr" else {}
    old, new = Rater(get_system(system, **kw)), Rater(get_system(system, **kw))
    old.extend(_old_history())
    new.extend(_old_history(SHIFT))
    a, b = old.ratings(), new.ratings()
    for col in ("mu", "sigma"):
        assert list(a[col]) == list(b[col]), (system, col)
    assert list(a["last_contest_time"]) == [t - SHIFT for t in b["last_contest_time"]]


def test_files_before_1970(tmp_path: Path) -> None:
    d = tmp_path / "old"
    d.mkdir()
    for k, c in enumerate(_old_history()):
        (d / f"{k}.json").write_text(json.dumps(c.to_json_dict()))
    csv = tmp_path / "old.csv"
    csv.write_text("contest,time_seconds,player,place\n" + "".join(
        f"{c.name},{c.time_seconds},{h},{i + 1}\n" for c in _old_history()
        for i, h in enumerate(c.handles)))
    for path in (d, csv):
        got = load_contests(path).contests
        assert [c.time_seconds for c in got] == TIMES
    assert main(["rate", str(d), "-o", str(tmp_path / "o")]) == 0
    # the millisecond guard by magnitude: 1872 in milliseconds is refused, named
    (d / "0.json").write_text(json.dumps({**_old_history()[0].to_json_dict(),
                                          "time_seconds": TIMES[0] * 1000}))
    with pytest.raises(Exception, match=r"before 1800.*looks like milliseconds.*-3063744000"):
        load_contests(d)


def test_store_and_service_before_1970(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the service extra is not installed")
    from fastapi.testclient import TestClient

    from podium.service.app import create_app
    from podium.store import Store

    url = f"sqlite:///{tmp_path / 'old.db'}"
    history = _old_history()
    with Store.create(url, "mmr") as store:
        store.ingest_many(history[:3])
    token = "t0ken"
    with TestClient(create_app(url, token)) as client:
        for c in history[3:]:
            r = client.post("/api/contests", json=c.to_json_dict(),
                            headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 201, r.text
        listed = client.get("/api/contests").json()
        assert sorted(c["time_seconds"] for c in listed["contests"]) == TIMES
        assert client.get("/contests").status_code == 200  # pages show 1872
        assert "1872-11-30" in client.get("/contest", params={"id": "m0"}).text
        assert client.get("/api/players/a").json()["contests"] == len(TIMES)
        r = client.post("/api/contests", json={**history[0].to_json_dict(), "name": "early",
                                               "time_seconds": -5_364_662_401},
                        headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 422 and "before 1800" in r.json()["detail"]
    rater = Rater(get_system("mmr"))
    rater.extend(history)
    with Store.open(url) as store:
        board = {r.handle: r.mu for r in store.leaderboard(limit=10)}
    assert board == dict(zip(rater.ratings()["handle"], rater.ratings()["mu"], strict=True))
