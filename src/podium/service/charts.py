"""Server-side SVG rating-history charts (no JavaScript, no external assets).

:func:`rating_chart_svg` turns a player's history into one self-contained ``<svg>``
element: the display rating after each contest as a line with a dot per contest,
the contest's performance as a separate point, axes with "nice" ticks (ratings in
steps of 1, 2 or 5 times a power of ten; dates in days, months or years), and a
``<title>`` tooltip on every point naming the contest.  The function is pure
(same input, same text), so it is tested on its own and the web page embeds its
output as is.

Performances far outside the ratings (an unbounded performance of a player who
won a round outright can be thousands of points away) would squash the rating
line, so the y-axis spans the ratings plus a margin (at least 200 points, or half
the ratings' range) and a performance outside it is drawn on the edge as a
triangle pointing outwards (its tooltip gives the true value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

__all__ = ["CHART_STYLE", "ChartPoint", "nice_ticks", "rating_chart_svg", "time_ticks"]


@dataclass(frozen=True)
class ChartPoint:
    """One contest of a player's history.

    Attributes
    ----------
    time_seconds:
        Unix time of the contest.
    rating:
        Display rating after the contest.
    perf:
        Performance in the contest (``None``: not shown).
    label:
        Contest name (shown in the tooltips).
    change:
        Display-rating change in the contest (``None``: not shown).
    place:
        1-based place (``None``: not shown).
    players:
        Number of participants (``None``: not shown).
    href:
        Link of the contest page (``None``: the points are not links).
    """

    time_seconds: int
    rating: float
    perf: float | None = None
    label: str = ""
    change: float | None = None
    place: int | None = None
    players: int | None = None
    href: str | None = None


def nice_ticks(lo: float, hi: float, max_ticks: int = 7) -> list[float]:
    """Round tick values covering ``[lo, hi]``: multiples of 1, 2 or 5 times a power of 10.

    Parameters
    ----------
    lo, hi:
        The range (``lo <= hi``; a single value gets a range around it).
    max_ticks:
        Upper bound on the number of ticks returned (>= 2).

    Returns
    -------
    list of float
        Increasing ticks inside ``[lo, hi]``, evenly spaced.
    """
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"tick range must be finite, got [{lo}, {hi}]")
    if hi < lo:
        lo, hi = hi, lo
    if max_ticks < 2:
        raise ValueError(f"max_ticks must be >= 2, got {max_ticks}")
    span = hi - lo
    if span == 0:
        return [lo]
    raw = span / (max_ticks - 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    for mult in (1.0, 2.0, 5.0, 10.0):
        step = mult * mag
        first = math.ceil(lo / step - 1e-9)
        last = math.floor(hi / step + 1e-9)
        if last - first + 1 <= max_ticks:
            return [round(k * step, 10) for k in range(first, last + 1)]
    step = 20.0 * mag  # unreachable in practice; keeps the function total
    first = math.ceil(lo / step)
    return [first * step + k * step for k in range(max_ticks) if first * step + k * step <= hi]


_DAY = 86_400


def _month_start(year: int, month: int) -> int:
    return int(datetime(year, month, 1, tzinfo=UTC).timestamp())


def time_ticks(t0: int, t1: int, max_ticks: int = 7) -> list[tuple[int, str]]:
    """Calendar ticks (UTC) covering ``[t0, t1]``: days, weeks, months or years.

    Returns
    -------
    list of (int, str)
        ``(unix time, label)`` pairs inside the range, at most ``max_ticks``;
        labels are ``YYYY-MM-DD`` for day steps, ``YYYY-MM`` for month steps and
        ``YYYY`` for year steps.
    """
    if t1 < t0:
        t0, t1 = t1, t0
    span = t1 - t0
    for days in (1, 2, 7, 14):
        if span / (days * _DAY) + 1 <= max_ticks:
            start = math.ceil(t0 / (days * _DAY)) * days * _DAY
            out = []
            t = start
            while t <= t1:
                out.append((t, datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d")))
                t += days * _DAY
            return out
    d0 = datetime.fromtimestamp(t0, tz=UTC)
    d1 = datetime.fromtimestamp(t1, tz=UTC)
    months_span = (d1.year - d0.year) * 12 + d1.month - d0.month + 1
    for months in (1, 2, 3, 6):
        if months_span / months <= max_ticks:
            out = []
            index = d0.year * 12 + d0.month - 1
            index = -(-index // months) * months  # first multiple of `months`
            while True:
                year, m0 = divmod(index, 12)
                t = _month_start(year, m0 + 1)
                if t > t1:
                    break
                if t >= t0:
                    out.append((t, f"{year:04d}-{m0 + 1:02d}"))
                index += months
            return out
    years = d1.year - d0.year + 1
    step = 1
    for step in (1, 2, 5, 10, 20, 50, 100):
        if years / step <= max_ticks:
            break
    out = []
    year = -(-d0.year // step) * step
    while year <= d1.year:
        t = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
        if t0 <= t <= t1:
            out.append((t, f"{year:04d}"))
        year += step
    return out


#: Default look, inside the SVG so that it is self-contained (a page may override it);
#: the pages' Content-Security-Policy allows it by its hash (:mod:`podium.service.guard`).
CHART_STYLE = (
    ".rating-chart text{fill:#5d6b7a;font:11px system-ui,sans-serif}"
    ".rating-chart .plot-area{fill:#fff;stroke:#d9dee5}"
    ".rating-chart .grid{stroke:#e8ebf0}"
    ".rating-chart .axis,.rating-chart .tick{stroke:#5d6b7a}"
    ".rating-chart .rating-line,.rating-chart .legend-rating"
    "{fill:none;stroke:#1f4e79;stroke-width:2;stroke-linejoin:round}"
    ".rating-chart .rating-point{fill:#fff;stroke:#1f4e79;stroke-width:2}"
    ".rating-chart .smoothed-line,.rating-chart .legend-smoothed"
    "{fill:none;stroke:#7b3fa0;stroke-width:2;stroke-dasharray:6 4;stroke-linejoin:round}"
    ".rating-chart .smoothed-point{fill:#7b3fa0}"
    ".rating-chart .perf-point{fill:#e07a1f;fill-opacity:.75}"
)


def _fmt(x: float) -> str:
    """Coordinates with two decimals, no trailing zeros (compact, deterministic)."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _date(t: int) -> str:
    try:
        return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return f"t={t}"


def _tooltip(p: ChartPoint, *, perf: bool) -> str:
    parts = [p.label or "contest", _date(p.time_seconds)]
    if perf:
        assert p.perf is not None
        parts.append(f"performance {p.perf:.0f}")
    else:
        rating = f"rating {p.rating:.0f}"
        if p.change is not None:
            rating += f" ({p.change:+.0f})"
        parts.append(rating)
    if p.place is not None:
        parts.append(f"place {p.place}" + (f" of {p.players}" if p.players is not None else ""))
    return escape(" \u2014 ".join(parts), quote=False)


def rating_chart_svg(
    points: Sequence[ChartPoint],
    *,
    width: int = 800,
    height: int = 320,
    title: str = "Rating history",
    show_performance: bool = True,
    revised: Sequence[ChartPoint] = (),
    revised_label: str = "smoothed",
) -> str:
    """An SVG chart of a rating history.

    Parameters
    ----------
    points:
        The contests in chronological order (sorted here by time, stably, anyway).
    width, height:
        Size of the drawing in SVG user units (the element scales with CSS).
    title:
        Accessible title of the chart (``<title>`` and ``aria-label``).
    show_performance:
        Draw the performance points.
    revised:
        A second curve over the same contests (the smoothed ratings of a whole-history
        companion, issue 29), drawn dashed (``smoothed-line``, ``smoothed-point``).
    revised_label:
        Its name in the legend.

    Returns
    -------
    str
        One ``<svg>`` element.  Its parts have classes for styling and tests:
        ``rating-line`` (a ``<path>``), ``rating-point`` and ``perf-point`` (one per
        contest, each with a ``<title>`` naming the contest), ``perf-clipped`` (a
        performance outside the y-range), ``x-axis``/``y-axis`` (``<g>`` of ticks
        with ``<text>`` labels) and ``legend``.
    """
    if width < 200 or height < 120:
        raise ValueError(f"chart too small: {width}x{height} (need at least 200x120)")
    left, right, top, bottom = 56, 16, 28, 36
    pw, ph = width - left - right, height - top - bottom
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}">'
        f"<title>{escape(title, quote=False)}</title><style>{CHART_STYLE}</style>"
    )
    pts = sorted(
        (p for p in points if math.isfinite(p.rating)), key=lambda p: p.time_seconds
    )
    if not pts:
        return (
            f'{head}<text class="empty" x="{width / 2:g}" y="{height / 2:g}" '
            f'text-anchor="middle">no rated contests yet</text></svg>'
        )

    second = sorted((p for p in revised if math.isfinite(p.rating)),
                    key=lambda p: p.time_seconds)
    ratings = [p.rating for p in pts] + [p.rating for p in second]
    r_lo, r_hi = min(ratings), max(ratings)
    margin = max(100.0, 0.25 * (r_hi - r_lo))
    perfs = [p.perf for p in pts if show_performance and p.perf is not None
             and math.isfinite(p.perf)]
    y_lo, y_hi = r_lo - margin, r_hi + margin
    cap = max(200.0, 0.5 * (r_hi - r_lo))
    if perfs:
        y_lo = min(y_lo, max(min(perfs), r_lo - cap))
        y_hi = max(y_hi, min(max(perfs), r_hi + cap))
    # widen the range to whole tick steps, then tick it
    coarse = nice_ticks(y_lo, y_hi, 6)
    step = coarse[1] - coarse[0] if len(coarse) > 1 else 100.0
    y_lo = math.floor(y_lo / step) * step
    y_hi = math.ceil(y_hi / step) * step
    ticks = nice_ticks(y_lo, y_hi, 8)

    times = [p.time_seconds for p in pts]
    t0, t1 = times[0], times[-1]
    by_index = t1 == t0  # every contest at the same time: spread them by index
    n = len(pts)

    def x_of(k: int) -> float:
        if by_index:
            return left + (pw / 2 if n == 1 else pw * k / (n - 1))
        return left + pw * (pts[k].time_seconds - t0) / (t1 - t0)

    def y_of(v: float) -> float:
        return top + ph * (y_hi - v) / (y_hi - y_lo)

    out = [head]
    out.append(f'<rect class="plot-area" x="{left}" y="{top}" width="{pw}" height="{ph}"/>')
    # y axis
    out.append('<g class="y-axis">')
    for v in ticks:
        y = _fmt(y_of(v))
        out.append(
            f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{y}" y2="{y}"/>'
            f'<text x="{left - 6}" y="{y}" text-anchor="end" dominant-baseline="middle">'
            f"{v:.0f}</text>"
        )
    out.append("</g>")
    # x axis
    out.append('<g class="x-axis">')
    out.append(
        f'<line class="axis" x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}"/>'
    )
    if by_index:
        labels = [(k, str(k + 1)) for k in range(n)] if n <= 12 else []
        for k, text in labels:
            x = _fmt(x_of(k))
            out.append(
                f'<line class="tick" x1="{x}" x2="{x}" y1="{top + ph}" y2="{top + ph + 4}"/>'
                f'<text x="{x}" y="{top + ph + 18}" text-anchor="middle">#{text}</text>'
            )
    else:
        for t, text in time_ticks(t0, t1, max(2, min(8, pw // 90))):
            x = _fmt(left + pw * (t - t0) / (t1 - t0))
            out.append(
                f'<line class="tick" x1="{x}" x2="{x}" y1="{top + ph}" y2="{top + ph + 4}"/>'
                f'<text x="{x}" y="{top + ph + 18}" text-anchor="middle">{text}</text>'
            )
    out.append("</g>")
    # rating line
    d = " ".join(
        f"{'M' if k == 0 else 'L'}{_fmt(x_of(k))},{_fmt(y_of(p.rating))}"
        for k, p in enumerate(pts)
    )
    out.append(f'<path class="rating-line" d="{d}"/>')
    if second:
        def x_at(k: int, q: ChartPoint) -> float:
            if by_index:
                return x_of(min(k, n - 1))
            return left + pw * (min(max(q.time_seconds, t0), t1) - t0) / (t1 - t0)

        d2 = " ".join(f"{'M' if k == 0 else 'L'}{_fmt(x_at(k, q))},{_fmt(y_of(q.rating))}"
                      for k, q in enumerate(second))
        out.append(f'<path class="smoothed-line" d="{d2}"/><g class="smoothed-points">')
        out.extend(
            f'<circle class="smoothed-point" cx="{_fmt(x_at(k, q))}" '
            f'cy="{_fmt(y_of(q.rating))}" r="2.5"><title>{escape(revised_label)}: '
            f'{_tooltip(q, perf=False)}</title></circle>' for k, q in enumerate(second))
        out.append("</g>")

    def link(inner: str, href: str | None) -> str:
        return f'<a href="{escape(href)}">{inner}</a>' if href else inner

    # performance points (under the rating dots)
    if show_performance:
        out.append('<g class="perf-points">')
        for k, p in enumerate(pts):
            if p.perf is None or not math.isfinite(p.perf):
                continue
            px = x_of(k)
            tip = f"<title>{_tooltip(p, perf=True)}</title>"
            if p.perf > y_hi or p.perf < y_lo:
                up = p.perf > y_hi
                py = top + 1 if up else top + ph - 1
                half = 5.0
                tri = (
                    f"{_fmt(px - half)},{_fmt(py + half if up else py - half)} "
                    f"{_fmt(px + half)},{_fmt(py + half if up else py - half)} "
                    f"{_fmt(px)},{_fmt(py)}"
                )
                shape = f'<polygon class="perf-point perf-clipped" points="{tri}">{tip}</polygon>'
            else:
                shape = (
                    f'<circle class="perf-point" cx="{_fmt(px)}" cy="{_fmt(y_of(p.perf))}" '
                    f'r="3">{tip}</circle>'
                )
            out.append(link(shape, p.href))
        out.append("</g>")
    out.append('<g class="rating-points">')
    for k, p in enumerate(pts):
        shape = (
            f'<circle class="rating-point" cx="{_fmt(x_of(k))}" cy="{_fmt(y_of(p.rating))}" '
            f'r="3.5"><title>{_tooltip(p, perf=False)}</title></circle>'
        )
        out.append(link(shape, p.href))
    out.append("</g>")
    # legend
    lx = left + 8
    out.append(
        f'<g class="legend"><line class="legend-rating" x1="{lx}" x2="{lx + 18}" y1="14" y2="14"/>'
        f'<text x="{lx + 24}" y="14" dominant-baseline="middle">rating</text>'
    )
    if second:
        sx = lx + 190
        out.append(
            f'<line class="legend-smoothed" x1="{sx}" x2="{sx + 18}" y1="14" y2="14"/>'
            f'<text x="{sx + 24}" y="14" dominant-baseline="middle">'
            f"{escape(revised_label, quote=False)}</text>"
        )
    if show_performance and perfs:
        out.append(
            f'<circle class="perf-point" cx="{lx + 88}" cy="14" r="3"/>'
            f'<text x="{lx + 96}" y="14" dominant-baseline="middle">performance</text>'
        )
    out.append("</g></svg>")
    return "".join(out)
