"""Fakes for the dataset fetcher tests: a transport serving recorded responses and a clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from podium.io.fetch import HttpStatusError

FIXTURES = Path(__file__).parent / "fixtures"

#: A route's answer: a body, an exception to raise, or a callable producing either.
Answer = bytes | BaseException | Callable[[str], bytes]


def fixture(*parts: str) -> bytes:
    """The bytes of a recorded response under tests/fixtures/."""
    return FIXTURES.joinpath(*parts).read_bytes()


class FakeClock:
    """A monotonic clock that only moves when someone sleeps; records the sleeps."""

    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(round(seconds, 9))
        self.t += seconds


class FakeTransport:
    """``get(url) -> bytes`` from a table of recorded answers.

    Each route maps a URL to one answer or a list of answers used in turn (the
    last one repeats).  Unknown URLs answer HTTP 404.  ``interrupt`` raises the
    given exception instead of answering the ``n``-th request (1-based) whose
    URL contains ``substring``.
    """

    def __init__(self, routes: Mapping[str, Answer | list[Answer]]) -> None:
        self.routes: dict[str, list[Answer]] = {
            url: list(a) if isinstance(a, list) else [a] for url, a in routes.items()
        }
        self.calls: list[str] = []
        self.interrupt: tuple[str, int, BaseException] | None = None
        self._matching = 0

    def __call__(self, url: str) -> bytes:
        self.calls.append(url)
        if self.interrupt is not None and self.interrupt[0] in url:
            self._matching += 1
            if self._matching == self.interrupt[1]:
                raise self.interrupt[2]
        answers = self.routes.get(url)
        if answers is None:
            raise HttpStatusError(404, url, b'{"detail": "Not found."}')
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(url)
        return answer
