"""Issue 31, item 3: spreadsheet formulas in CSV files.

Handles and contest names such as ``=1+1``, ``@SUM(1+1)``, ``=cmd|' /C calc'!A0`` and
``=HYPERLINK(...)`` used to be written as they are into every CSV.  Now:

* the service's CSV exports and ``podium export`` neutralise them by default (a ``'``
  in front, OWASP), with ``raw=true`` / ``--raw`` for the values as stored;
* ``podium rate`` writes the values as they are by default (research output read by
  programs) and neutralises them with ``--csv-safe``;
* ``-101-`` (a real Codeforces handle) becomes ``'-101-`` when neutralised, and
  :func:`podium.io.spreadsheet.restore` gives it back; numbers are never touched.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium import Contest
from podium.cli import main
from podium.io.spreadsheet import FORMULA_TRIGGERS, neutralize, restore

EVIL = ["=1+1", "@SUM(1+1)", "=cmd|' /C calc'!A0",
        '=HYPERLINK("http://evil.example/","click")', "+1+2", "-101-", "'quoted"]
PLAIN = ["tourist", "Petr", "a=b"]
EVIL_NAME = '=HYPERLINK("http://evil.example/","click")'
T0 = 1_600_000_000


def _contests() -> list[Contest]:
    everyone = EVIL + PLAIN
    return [Contest([(h, k, k) for k, h in enumerate(everyone)], name=EVIL_NAME,
                    time_seconds=T0),
            Contest([(h, k, k) for k, h in enumerate(reversed(everyone))], name="@round 2",
                    time_seconds=T0 + 100)]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _assert_safe(rows: list[list[str]]) -> None:
    """No cell would be run as a formula; the text cells give back the values."""
    for row in rows[1:]:
        for cell in row:
            assert not cell or cell[0] not in FORMULA_TRIGGERS or _number(cell), row


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-101-", "'-101-"), ("@SUM(1+1)", "'@SUM(1+1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("'a", "''a"), ("tourist", "tourist"), ("", ""),
    ("a=b", "a=b"),
])
def test_neutralize(text: str, cell: str) -> None:
    assert neutralize(text) == cell
    assert restore(cell) == text


@given(st.text())
def test_restore_undoes_neutralize(text: str) -> None:
    cell = neutralize(text)
    assert restore(cell) == text
    assert not cell or cell[0] not in FORMULA_TRIGGERS


def _history(tmp: Path) -> Path:
    d = tmp / "hist"
    d.mkdir()
    for k, c in enumerate(_contests()):
        (d / f"{k}.json").write_text(json.dumps(c.to_json_dict()), encoding="utf-8")
    return d


def test_podium_rate_writes_values_by_default_and_neutralises_on_request(
        tmp_path: Path) -> None:
    src = _history(tmp_path)
    assert main(["rate", str(src), "--out", str(tmp_path / "raw"), "--no-progress"]) == 0
    assert main(["rate", str(src), "--out", str(tmp_path / "safe"), "--no-progress",
                 "--csv-safe"]) == 0
    for name in ("ratings", "histories", "contests"):
        raw = _cells((tmp_path / "raw" / f"{name}.csv").read_text(encoding="utf-8"))
        safe = _cells((tmp_path / "safe" / f"{name}.csv").read_text(encoding="utf-8"))
        assert raw[0] == safe[0] and len(raw) == len(safe)
        _assert_safe(safe)
        # the same cells once restored: text neutralised, numbers untouched
        assert [[restore(c) for c in r] for r in safe] == raw
    handles = {r[0] for r in _cells((tmp_path / "raw" / "ratings.csv").read_text())[1:]}
    assert handles == set(EVIL + PLAIN)  # research output: the values as they are
    safe_handles = {r[0] for r in _cells((tmp_path / "safe" / "ratings.csv").read_text())[1:]}
    assert "'-101-" in safe_handles and "'=1+1" in safe_handles and "tourist" in safe_handles
    names = [r[1] for r in _cells((tmp_path / "safe" / "contests.csv").read_text())[1:]]
    assert names == ["'" + EVIL_NAME, "'@round 2"]
    changes = [r[-1] for r in _cells((tmp_path / "safe" / "ratings.csv").read_text())[1:]]
    assert any(c.startswith("-") for c in changes)  # a negative number stays a number


pytest.importorskip("fastapi", reason="the service extra is not installed")


@pytest.fixture()
def store_url(tmp_path: Path) -> str:
    from podium.store import Store

    url = f"sqlite:///{tmp_path / 'csv.db'}"
    with Store.create(url, "mmr") as store:
        store.ingest_many(_contests())
    return url


@pytest.mark.parametrize("what", ["ratings", "history"])
def test_service_csv_exports_are_safe_unless_raw(store_url: str, what: str) -> None:
    from fastapi.testclient import TestClient

    from podium.service.app import create_app

    with TestClient(create_app(store_url, None)) as client:
        safe = _cells(client.get(f"/api/export/{what}?format=csv").text)
        raw = _cells(client.get(f"/api/export/{what}?format=csv&raw=true").text)
    _assert_safe(safe)
    assert [[restore(c) for c in r] for r in safe] == raw
    col = safe[0].index("handle")
    assert {r[col] for r in safe[1:]} >= {"'-101-", "'=1+1", "'@SUM(1+1)", "''quoted",
                                            "tourist"}
    assert {r[col] for r in raw[1:]} == set(EVIL + PLAIN)
    if what == "history":
        assert {r[safe[0].index("contest_name")] for r in safe[1:]} == {
            "'" + EVIL_NAME, "'@round 2"}


def test_podium_export_is_safe_unless_raw(store_url: str, tmp_path: Path) -> None:
    safe_file, raw_file = tmp_path / "safe.csv", tmp_path / "raw.csv"
    assert main(["export", "history", "--db", store_url, "-o", str(safe_file)]) == 0
    assert main(["export", "history", "--db", store_url, "-o", str(raw_file), "--raw"]) == 0
    safe, raw = _cells(safe_file.read_text()), _cells(raw_file.read_text())
    _assert_safe(safe)
    assert [[restore(c) for c in r] for r in safe] == raw
    assert any(EVIL_NAME in r for r in raw)
