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
    identifier_problem,
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
    # issue 31, item 4: invisible and unassigned characters, by UAX #31 / UTS #39
    ("tourist\u3164", "U+3164) is default-ignorable"),  # Hangul filler: looks like "tourist"
    ("\u115fx", "U+115F) is default-ignorable"),
    ("x\uffa0", "U+FFA0) is default-ignorable"),
    ("\u2800\u2800", "U+2800) is a blank Braille pattern"),  # looks blank
    ("a\u034fb", "U+034F) is default-ignorable"),  # combining grapheme joiner
    ("tourist\ufe0f", "U+FE0F) is invisible outside an emoji sequence"),
    ("a\u17b4", "U+17B4) is default-ignorable"),
    ("\u0301abc", "U+0301) is a combining mark with no base"),
    ("ab \u0301c", "character 4 (U+0301) is a combining mark with no base"),
    ("pua\ue000", "U+E000) is a private-use character"),
    ("x\U000F0000", "U+F0000) is a private-use character"),
    ("x\uffff", "U+FFFF) is a noncharacter"),
    ("x\ufdd0", "U+FDD0) is a noncharacter"),
    ("x\U0001FFFE", "U+1FFFE) is a noncharacter"),
    ("x\U000E0041", "U+E0041) is invisible outside an emoji sequence"),  # a lone tag
    ("x\u0378", "U+0378) is unassigned"),
    ("a\u200db", "U+200D) is invisible outside an emoji sequence"),  # ZWJ between letters
    ("a\u00adb", "U+00AD) is an invisible format character"),  # soft hyphen
])
def test_normalize_refuses(raw: str, reason: str) -> None:
    with pytest.raises(HandleError, match=re.escape(reason)) as info:
        normalize_handle(raw)
    assert info.value.handle == raw
    assert "handle " in str(info.value)


@pytest.mark.parametrize("emoji", [
    "\U0001F469\u200d\U0001F4BB",  # woman technologist: a ZWJ sequence
    "\U0001F469\U0001F3FD\u200d\U0001F4BB",  # with a skin tone
    "\U0001F3F3\ufe0f\u200d\U0001F308",  # rainbow flag: VS16 and ZWJ
    "\u2764\ufe0f",  # red heart with its emoji presentation selector
    "1\ufe0f\u20e3",  # keycap
    "\U0001F1EB\U0001F1F7",  # a flag of regional indicators
    "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",  # Scotland
    "team \U0001F468\u200d\U0001F469\u200d\U0001F467 rocks",  # a family in words
])
def test_emoji_sequences_are_emoji(emoji: str) -> None:
    assert identifier_problem(emoji) is None
    assert normalize_handle(emoji) == emoji


def test_the_rule_is_one_for_handles_team_names_and_contest_ids() -> None:
    from podium.store.checks import check_contest_id

    for bad in ("tourist\u3164", "\u2800", "a\ue000", "\u0301x"):
        problem = identifier_problem(bad)
        assert problem is not None
        assert problem in str(pytest.raises(HandleError, normalize_handle, bad).value)
        assert check_contest_id(bad) == problem


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
    check_contest_time(-1, now=NOW)  # 1969-12-31T23:59:59 (issue 30, item 5)
    check_contest_time(-3_092_601_600, now=NOW)  # 1872-01-01: international football
    check_contest_time(-5_364_662_400, now=NOW)  # 1800-01-01, the earliest
    with pytest.raises(TimeError, match="before 1800-01-01"):
        check_contest_time(-5_364_662_401, now=NOW)
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
    # before 1970 too: the guard goes by magnitude (1873-04-18 in milliseconds)
    with pytest.raises(TimeError, match=r"before 1800.*milliseconds.*-3051734400 \(1873-04"):
        check_contest_time(-3_051_734_400_000, now=NOW)
    with pytest.raises(TimeError, match="before 1800") as info:
        check_contest_time(-(2**62), now=NOW)
    assert "milliseconds" not in str(info.value)


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
