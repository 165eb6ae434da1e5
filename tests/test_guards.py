"""The shared input guards: handle rules and contest-time checks (podium.core.guards)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podium.core.guards import (
    MAX_HANDLE_LENGTH,
    HandleError,
    TimeError,
    check_contest_time,
    handle_key,
    normalize_handle,
    normalize_handles,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize("raw, expected", [
    ("tourist", "tourist"),
    ("  Lewis Hamilton\t", None),  # a tab is a control character: refused
    ("  Lewis Hamilton ", "Lewis Hamilton"),
    ("e\u0301", "\u00e9"),  # NFD -> NFC
    ("\u00e9", "\u00e9"),
    ("\u3000name\u3000", "name"),  # ideographic spaces trimmed
    ("a" * MAX_HANDLE_LENGTH, "a" * MAX_HANDLE_LENGTH),
])
def test_normalize_accepts(raw: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(HandleError, match="control character"):
            normalize_handle(raw)
    else:
        assert normalize_handle(raw) == expected


def test_ascii_fast_path_returns_the_same_object() -> None:
    h = "".join(["tour", "ist"])
    assert normalize_handle(h) is h


@pytest.mark.parametrize("raw, reason", [
    ("", "empty"),
    ("   ", "empty"),
    ("\u00a0\u2003", "empty"),
    ("a\x00b", "U+0000"),
    ("evil\u202egnp", "U+202E"),
    ("zero\u200bwidth", "U+200B"),
    ("\ufeffbom", "U+FEFF"),
    ("a\u2028b", "line separator"),
    ("x\ud800y", "surrogate"),
    ("a" * (MAX_HANDLE_LENGTH + 1), "at most"),
])
def test_normalize_refuses(raw: str, reason: str) -> None:
    with pytest.raises(HandleError, match=re.escape(reason)) as info:
        normalize_handle(raw)
    assert info.value.handle == raw
    assert "handle " in str(info.value)


def test_normalize_type_error() -> None:
    with pytest.raises(TypeError, match="string"):
        normalize_handle(5)  # type: ignore[arg-type]


def test_normalize_handles_maps_each_distinct_once() -> None:
    assert normalize_handles(["b ", "a", "b "]) == {"b ": "b", "a": "a"}


def test_handle_key_is_case_insensitive() -> None:
    assert handle_key("Tourist") == handle_key("tOURIST")
    assert handle_key("Stra\u00dfe") == handle_key("STRASSE")
    assert handle_key("\u0435") != handle_key("e")  # Cyrillic ie stays distinct


@given(st.text())
def test_normalized_handles_are_fixed_points(raw: str) -> None:
    try:
        out = normalize_handle(raw)
    except HandleError:
        return
    assert normalize_handle(out) == out
    assert out == out.strip() and 0 < len(out) <= MAX_HANDLE_LENGTH


def test_time_ranges() -> None:
    check_contest_time(0, now=NOW)
    check_contest_time(NOW + 86_400, now=NOW)
    with pytest.raises(TimeError, match="before 1970"):
        check_contest_time(-1, now=NOW)
    with pytest.raises(TimeError, match="in the future.*--allow-future"):
        check_contest_time(NOW + 86_401, now=NOW)
    check_contest_time(NOW + 10 * 86_400, now=NOW, allow_future=True)
    with pytest.raises(TimeError, match="in the future"):
        check_contest_time(NOW + 3_601, now=NOW, future_margin_s=3_600)


def test_milliseconds_are_recognised() -> None:
    with pytest.raises(TimeError, match=r"after 2200.*milliseconds.*1602505600 \(2020-10-12"):
        check_contest_time(1_602_505_600_000, now=NOW)
    with pytest.raises(TimeError, match="after 2200"):
        check_contest_time(2**63 - 1 - 10**6, now=NOW, allow_future=True)


def test_normalize_contest() -> None:
    from podium import Contest
    from podium.core.guards import normalize_contest
    from podium.errors import ContestError

    c = Contest([("a", 0, 0), ("b", 1, 1)], name="r", time_seconds=5)
    assert normalize_contest(c) is c
    d = normalize_contest(Contest([(" a", 0, 0), ("e\u0301", 1, 2), ("x", 1, 2)], name="r",
                                  time_seconds=5, weight=0.5, url="u"))
    assert d.handles == ("a", "\u00e9", "x")
    assert d.lo.tolist() == [0, 1, 1] and d.hi.tolist() == [0, 2, 2]
    assert (d.name, d.time_seconds, d.weight, d.url) == ("r", 5, 0.5, "u")
    with pytest.raises(ContestError, match=r"contest 'r', player 'a '.*duplicate|duplicate"):
        normalize_contest(Contest([("a", 0, 0), ("a ", 1, 1)], name="r"))
    with pytest.raises(ContestError, match=r"contest 'r', player 'a\\u202e'.*U\+202E"):
        normalize_contest(Contest([("a\u202e", 0, 0), ("b", 1, 1)], name="r"))
    t = Contest.from_teams([(" red", 0, 0, [("p1 ", 0.5), "p2"]), ("blue", 1, 1, ["p3"])],
                           name="tm")
    u = normalize_contest(t)
    assert u.teams is not None and t.teams is not None
    assert u.teams.names == ("red", "blue") and u.handles == ("p1", "p2", "p3")
    assert u.teams.weight.tolist() == t.teams.weight.tolist()
    assert u.lo.tolist() == t.lo.tolist() and u.team_round
