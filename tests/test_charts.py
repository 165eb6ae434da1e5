"""The server-side SVG rating chart (a pure function) and its tick helpers."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.service.charts import ChartPoint, nice_ticks, rating_chart_svg, time_ticks

SVG = "{http://www.w3.org/2000/svg}"
DAY = 86_400
T0 = 1_600_000_000  # 2020-09-13 12:26:40 UTC


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # well-formed XML or it raises
    assert root.tag == f"{SVG}svg"
    return root


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def history(n: int = 12) -> list[ChartPoint]:
    ratings = [1500 + 40 * math.sin(k) + 15 * k for k in range(n)]
    return [
        ChartPoint(
            time_seconds=T0 + k * 30 * DAY, rating=ratings[k], perf=ratings[k] + (-1) ** k * 120,
            label=f"Round {k + 1}", change=ratings[k] - (ratings[k - 1] if k else 1500.0),
            place=k + 1, players=100, href=f"/contests/round%20{k + 1}",
        )
        for k in range(n)
    ]


def test_nice_ticks_known_answers() -> None:
    assert nice_ticks(1234, 1876) == [1300, 1400, 1500, 1600, 1700, 1800]
    assert nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(-3, 1000) == [0, 200, 400, 600, 800, 1000]
    assert nice_ticks(5, 5) == [5]
    assert nice_ticks(10, 0) == nice_ticks(0, 10)
    with pytest.raises(ValueError, match="finite"):
        nice_ticks(0, math.inf)


@settings(max_examples=200, deadline=None)
@given(st.floats(-1e5, 1e5), st.floats(1e-3, 1e5), st.integers(2, 12))
def test_nice_ticks_properties(lo: float, span: float, max_ticks: int) -> None:
    hi = lo + span
    ticks = nice_ticks(lo, hi, max_ticks)
    assert 1 <= len(ticks) <= max_ticks
    assert all(lo - 1e-6 * span <= t <= hi + 1e-6 * span for t in ticks)
    if len(ticks) > 1:
        steps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
        step = steps[0]
        assert all(s == pytest.approx(step, rel=1e-6) for s in steps)
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6


def test_time_ticks_years_months_days() -> None:
    start = int(datetime(2010, 2, 19, tzinfo=UTC).timestamp())
    end = int(datetime(2020, 6, 1, tzinfo=UTC).timestamp())
    years = time_ticks(start, end, 7)
    assert [label for _, label in years] == ["2012", "2014", "2016", "2018", "2020"]
    assert years[0][0] == int(datetime(2012, 1, 1, tzinfo=UTC).timestamp())
    months = time_ticks(int(datetime(2021, 1, 15, tzinfo=UTC).timestamp()),
                        int(datetime(2021, 6, 15, tzinfo=UTC).timestamp()), 7)
    assert [label for _, label in months] == ["2021-02", "2021-03", "2021-04", "2021-05",
                                              "2021-06"]
    days = time_ticks(T0, T0 + 4 * DAY, 7)
    assert [label for _, label in days] == ["2020-09-14", "2020-09-15", "2020-09-16",
                                            "2020-09-17"]
    for t, label in days + months + years:
        assert datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d").startswith(label)


def test_chart_structure() -> None:
    pts = history(12)
    root = parse(rating_chart_svg(pts, title="Rating history of alice"))
    assert root.find(f"{SVG}title").text == "Rating history of alice"
    paths = by_class(root, "rating-line")
    assert len(paths) == 1 and paths[0].tag == f"{SVG}path"
    d = paths[0].get("d")
    assert d.startswith("M") and d.count("L") == 11
    assert len(by_class(root, "rating-point")) == 12
    perf = [e for e in by_class(root, "perf-point") if e.find(f"{SVG}title") is not None]
    assert len(perf) == 12
    titles = [e.find(f"{SVG}title").text for e in by_class(root, "rating-point")]
    assert titles[0].startswith("Round 1 \u2014 2020-09-13")
    assert "place 3 of 100" in titles[2]
    assert all(f"Round {k + 1}" in titles[k] for k in range(12))
    links = [a.get("href") for a in root.iter(f"{SVG}a")]
    assert "/contests/round%201" in links
    assert len(by_class(root, "x-axis")) == 1 and len(by_class(root, "y-axis")) == 1


def _axis_map(root: ET.Element, axis: str) -> list[tuple[float, str]]:
    """(coordinate, label) of every tick label of an axis."""
    g = by_class(root, axis)[0]
    coord = "y" if axis == "y-axis" else "x"
    return [(float(t.get(coord)), t.text) for t in g.iter(f"{SVG}text")]


def test_points_agree_with_the_axis_labels() -> None:
    """Read each rating back from the drawing through the y tick labels, and each
    contest's date through the x tick labels: the axes say what the points show."""
    pts = history(12)
    root = parse(rating_chart_svg(pts))
    yt = _axis_map(root, "y-axis")
    assert len(yt) >= 3
    (y1, v1), (y2, v2) = yt[0], yt[-1]
    v1f, v2f = float(v1), float(v2)
    for p, c in zip(pts, by_class(root, "rating-point"), strict=True):
        y = float(c.get("cy"))
        value = v1f + (y - y1) * (v2f - v1f) / (y2 - y1)
        assert value == pytest.approx(p.rating, abs=0.05)
    perf = [e for e in by_class(root, "perf-point") if e.tag == f"{SVG}circle"
            and e.find(f"{SVG}title") is not None]
    assert len(perf) == len(pts)
    for p, c in zip(pts, perf, strict=True):
        assert p.perf is not None
        value = v1f + (float(c.get("cy")) - y1) * (v2f - v1f) / (y2 - y1)
        assert value == pytest.approx(p.perf, abs=0.05)
        assert float(c.get("cx")) == pytest.approx(
            float(by_class(root, "rating-point")[pts.index(p)].get("cx")))
    xt = _axis_map(root, "x-axis")
    assert len(xt) >= 2
    (x1, l1), (x2, l2) = xt[0], xt[-1]

    def when(label: str) -> float:
        fmt = {4: "%Y", 7: "%Y-%m", 10: "%Y-%m-%d"}[len(label)]
        return datetime.strptime(label, fmt).replace(tzinfo=UTC).timestamp()

    for p, c in zip(pts, by_class(root, "rating-point"), strict=True):
        x = float(c.get("cx"))
        t = when(l1) + (x - x1) * (when(l2) - when(l1)) / (x2 - x1)
        assert t == pytest.approx(p.time_seconds, abs=DAY / 10)
    # higher rating is drawn higher up
    ys = [float(c.get("cy")) for c in by_class(root, "rating-point")]
    order = sorted(range(12), key=lambda k: pts[k].rating)
    assert [ys[k] for k in order] == sorted(ys, reverse=True)


def test_far_performance_is_clipped_to_the_edge() -> None:
    pts = history(5)
    pts[2] = ChartPoint(pts[2].time_seconds, pts[2].rating, perf=9000.0, label="Blowout")
    root = parse(rating_chart_svg(pts))
    clipped = by_class(root, "perf-clipped")
    assert len(clipped) == 1
    assert "performance 9000" in clipped[0].find(f"{SVG}title").text
    top_label = max(float(t) for _, t in _axis_map(root, "y-axis"))
    assert top_label < 2500  # the axis was not stretched to 9000


def test_escaping_and_missing_values() -> None:
    pts = [
        ChartPoint(T0, 1500.0, perf=None, label='A <b>&"quoted"</b> round'),
        ChartPoint(T0 + DAY, 1520.0, perf=math.nan, label="Second"),
    ]
    svg = rating_chart_svg(pts, title="<x> & y")
    root = parse(svg)
    assert root.find(f"{SVG}title").text == "<x> & y"
    assert 'A <b>&"quoted"</b> round' in by_class(root, "rating-point")[0].find(
        f"{SVG}title").text
    assert not [e for e in by_class(root, "perf-point") if e.find(f"{SVG}title") is not None]
    assert "<b>" not in svg  # escaped in the text


def test_empty_single_and_same_time_histories() -> None:
    empty = parse(rating_chart_svg([]))
    assert "no rated contests" in "".join(empty.itertext())
    assert not by_class(empty, "rating-line")
    one = parse(rating_chart_svg([ChartPoint(T0, 1400.0, perf=1300.0, label="Only")]))
    assert len(by_class(one, "rating-point")) == 1
    assert re.fullmatch(r"M[\d.]+,[\d.]+", by_class(one, "rating-line")[0].get("d"))
    same = parse(rating_chart_svg([ChartPoint(0, 1500.0 + k, label=f"r{k}") for k in range(4)]))
    xs = [float(c.get("cx")) for c in by_class(same, "rating-point")]
    assert xs == sorted(xs) and len(set(xs)) == 4


def test_pure_and_sorted_by_time() -> None:
    pts = history(6)
    assert rating_chart_svg(pts) == rating_chart_svg(list(pts))
    shuffled = [pts[k] for k in (3, 0, 5, 1, 4, 2)]
    assert rating_chart_svg(shuffled) == rating_chart_svg(pts)
    with pytest.raises(ValueError, match="too small"):
        rating_chart_svg(pts, width=50)
