"""The time and weight check of a contest loader: a contest time outside 1800..2200,
or in the future unless allowed, and a weight outside the accepted range
(:func:`podium.core.guards.contest_weight_problem`) unless any weight is allowed, are
refused with a message naming the file, the contest and the option that gets past it."""

from __future__ import annotations

import time

from podium.core.contest import Contest
from podium.core.guards import TimeError, check_contest_time, contest_weight_problem
from podium.errors import ContestError
from podium.io._messages import contest_error_at, short_int

__all__ = ["TimeCheck"]


def _check_time(contest: Contest, where: str, allow_future: bool, now: float | None) -> None:
    """:func:`podium.core.guards.check_contest_time` of a loaded contest; the error names
    ``where`` (file, line or member) and the contest."""
    t = contest.time_seconds
    if not -(10**30) < t < 10**30:
        raise contest_error_at(ContestError(
            f"time_seconds={short_int(t)} is outside 1800-01-01 .. 2200-01-01 (seconds since "
            "the Unix epoch are expected)", contest=contest.label), where)
    try:
        check_contest_time(t, now=now, allow_future=allow_future)
    except TimeError as exc:
        raise contest_error_at(ContestError(str(exc), contest=contest.label), where) from None


class TimeCheck:
    """The time and weight check of a file loader: ``check(contest, where)`` refuses a
    contest time outside 1800..2200 or in the future (see :func:`_check_time`) and,
    unless ``any_weight``, a weight outside the accepted range."""

    __slots__ = ("allow_future", "now", "any_weight")

    def __init__(self, allow_future: bool = False, now: float | None = None,
                 any_weight: bool = False) -> None:
        self.allow_future = allow_future
        self.now = time.time() if now is None else now
        self.any_weight = any_weight

    def check(self, contest: Contest, where: str) -> None:
        _check_time(contest, where, self.allow_future, self.now)
        if not self.any_weight:
            problem = contest_weight_problem(contest.weight)
            if problem is not None:
                raise contest_error_at(ContestError(
                    f"{problem} (pass --any-weight, or any_weight=True, for research data)",
                    contest=contest.label), where)
