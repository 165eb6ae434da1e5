"""A small, polite HTTP client for the dataset fetchers (standard library only).

* **Transport.**  Every request goes through a *transport*, a function
  ``get(url) -> bytes`` that returns the response body of a successful (2xx)
  request, raises :class:`HttpStatusError` for any other HTTP status and lets
  network errors (:class:`OSError`, :class:`urllib.error.URLError`, timeouts)
  propagate.  :func:`urllib_transport` is the real one; tests pass a function
  that serves recorded responses.
* **Politeness.**  :class:`HttpClient` starts requests at least ``min_interval``
  seconds apart (measured with an injectable ``clock`` and waited with an
  injectable ``sleep``, so tests run instantly and can check the waits).
* **Retries.**  Network errors, HTTP 429 and 5xx, bodies that are not JSON and
  bodies that a caller-supplied check flags (Codeforces' ``"Call limit
  exceeded"``) are retried up to ``retries`` times with exponential backoff:
  the k-th retry (k = 0, 1, ...) starts no earlier than ``backoff * 2**k``
  seconds (at most ``max_backoff``; longer if the server sent ``Retry-After``)
  after the failure, and never sooner than ``min_interval`` after the previous
  request started.  When the attempts are spent, or on an HTTP status that
  retrying cannot fix (403, 404, ...), :class:`FetchError` says what was being
  fetched, the URL and what went wrong.
"""

from __future__ import annotations

import email.utils
import gzip
import http.client
import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection
from datetime import UTC
from importlib import metadata
from typing import Any

from podium.errors import PodiumError

__all__ = [
    "FetchError",
    "HttpClient",
    "HttpStatusError",
    "Transport",
    "USER_AGENT",
    "urllib_transport",
]

#: ``get(url) -> bytes``: the body of a 2xx answer; raises :class:`HttpStatusError`
#: for other statuses and ``OSError``/``URLError`` for network trouble.
Transport = Callable[[str], bytes]


def _version() -> str:
    try:
        return metadata.version("podium")
    except metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return "0"


#: Sent with every request, so that server operators know who is calling.
USER_AGENT = f"podium/{_version()} (Python urllib; rating dataset fetcher)"

#: Network-level exceptions that a retry may cure.
_NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    OSError,  # includes URLError, ConnectionError, TimeoutError, socket errors
    http.client.HTTPException,  # IncompleteRead, RemoteDisconnected, ...
)


class FetchError(PodiumError):
    """Fetching a dataset failed for good (after the retries, or on a status no retry fixes).

    Attributes
    ----------
    url : str or None
        The URL of the failed request, when the failure is about one request.
    status : int or None
        The HTTP status of the last answer, when there was one.
    """

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None):
        super().__init__(message)
        self.url = url
        self.status = status


class HttpStatusError(Exception):
    """A transport's signal that the server answered with a non-2xx status.

    Parameters
    ----------
    status : int
        The HTTP status code.
    url : str
        The requested URL.
    body : bytes
        The response body (APIs put their error message there).
    retry_after : float, optional
        Seconds the server asked to wait (``Retry-After``), when it said.
    """

    def __init__(self, status: int, url: str, body: bytes = b"", retry_after: float | None = None):
        super().__init__(f"HTTP {status} from {url}")
        self.status = status
        self.url = url
        self.body = body
        self.retry_after = retry_after


def _parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = when.timestamp() - now
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _decode_body(data: bytes, encoding: str | None) -> bytes:
    if encoding and encoding.lower() == "gzip":
        return gzip.decompress(data)
    return data


def urllib_transport(*, timeout: float = 120.0, user_agent: str = USER_AGENT) -> Transport:
    """The real transport: an HTTP GET with :mod:`urllib.request`.

    Parameters
    ----------
    timeout : float, default 120
        Seconds to wait for the server (connection and each read).
    user_agent : str
        The ``User-Agent`` header; by default it names Podium.

    Returns
    -------
    Transport
        ``get(url) -> bytes``: the (gzip-decoded) body of a 2xx answer.  Other
        statuses raise :class:`HttpStatusError` with the body and ``Retry-After``.
    """
    headers = {
        "User-Agent": user_agent,
        "Accept": "application/json",
        "Accept-Encoding": "gzip",
    }

    def get(url: str) -> bytes:
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _decode_body(response.read(), response.headers.get("Content-Encoding"))
        except urllib.error.HTTPError as exc:
            try:
                body = _decode_body(exc.read(), exc.headers.get("Content-Encoding"))
            except (OSError, EOFError, http.client.HTTPException):
                body = b""
            retry_after = _parse_retry_after(exc.headers.get("Retry-After"), time.time())
            raise HttpStatusError(exc.code, url, body, retry_after) from None

    return get


def _snippet(body: bytes, limit: int = 200) -> str:
    text = body.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class HttpClient:
    """Rate-limited GET requests with retries and exponential backoff.

    Parameters
    ----------
    transport : Transport, optional
        ``get(url) -> bytes``; default :func:`urllib_transport`.
    min_interval : float, default 2.0
        Least number of seconds between the starts of two requests (retries included).
    retries : int, default 5
        How many times a failed request is retried (so at most ``retries + 1`` attempts).
    backoff : float, default 2.0
        The first retry waits this many seconds after the failure; each further
        retry waits twice as long as the one before.
    max_backoff : float, default 300.0
        Cap on one backoff wait (also caps a server's ``Retry-After``).
    clock : callable, default time.monotonic
        Seconds, for the rate limit and backoff.
    sleep : callable, default time.sleep
        Waits; tests pass a fake that advances a fake clock.
    on_retry : callable, optional
        Called with a one-line message before each retry (for progress output).

    Attributes
    ----------
    attempts : int
        Requests sent so far (retries included).
    """

    def __init__(
        self,
        transport: Transport | None = None,
        *,
        min_interval: float = 2.0,
        retries: int = 5,
        backoff: float = 2.0,
        max_backoff: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        if not (math.isfinite(min_interval) and min_interval >= 0):
            raise ValueError(f"min_interval must be a finite number >= 0, got {min_interval!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be a non-negative integer, got {retries!r}")
        if not (math.isfinite(backoff) and backoff >= 0):
            raise ValueError(f"backoff must be a finite number >= 0, got {backoff!r}")
        self.transport: Transport = transport if transport is not None else urllib_transport()
        self.min_interval = float(min_interval)
        self.retries = retries
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.clock = clock
        self.sleep = sleep
        self.on_retry = on_retry
        self.attempts = 0
        self._next_start = -math.inf

    def _wait_turn(self) -> None:
        delay = self._next_start - self.clock()
        if delay > 0:
            self.sleep(delay)

    def get(
        self,
        url: str,
        *,
        what: str,
        ok_statuses: Collection[int] = (),
        retry_if: Callable[[bytes], str | None] | None = None,
    ) -> bytes:
        """GET ``url`` politely; retry transient failures.

        Parameters
        ----------
        url : str
        what : str
            What is being fetched ("contest 908"), for messages.
        ok_statuses : collection of int
            Non-2xx statuses whose body is returned like a success (an API that
            reports errors in a JSON body with HTTP 400, for instance).
        retry_if : callable, optional
            ``retry_if(body)`` returns a reason to retry (e.g. a rate-limit
            message in the body) or ``None`` to accept the body.

        Returns
        -------
        bytes
            The response body.

        Raises
        ------
        FetchError
            On a status no retry fixes, or when every attempt failed; the message
            names ``what``, the URL and the last failure.
        """
        last = ""
        for attempt in range(self.retries + 1):
            self._wait_turn()
            start = self.clock()
            self._next_start = start + self.min_interval
            self.attempts += 1
            retry_after: float | None = None
            status: int | None = None
            try:
                body = self.transport(url)
            except HttpStatusError as exc:
                status = exc.status
                if exc.status in ok_statuses:
                    body = exc.body
                elif exc.status == 429 or 500 <= exc.status <= 599:
                    body = None
                    retry_after = exc.retry_after
                    last = f"HTTP {exc.status}"
                    if exc.body:
                        last += f": {_snippet(exc.body, 120)}"
                else:
                    detail = f": {_snippet(exc.body)}" if exc.body else ""
                    raise FetchError(
                        f"{what}: {url} answered HTTP {exc.status}{detail}",
                        url=url, status=exc.status,
                    ) from None
            except _NETWORK_ERRORS as exc:
                body = None
                last = f"network error ({_describe(exc)})"
            if body is not None:
                reason = retry_if(body) if retry_if is not None else None
                if reason is None:
                    return body
                last = reason
            if attempt == self.retries:
                raise FetchError(
                    f"{what}: giving up on {url} after {attempt + 1} attempt"
                    f"{'s' if attempt else ''}; last failure: {last}",
                    url=url, status=status,
                )
            delay = min(self.max_backoff, self.backoff * 2.0**attempt)
            if retry_after is not None:
                delay = max(delay, min(retry_after, self.max_backoff))
            self._next_start = max(self._next_start, self.clock() + delay)
            if self.on_retry is not None:
                wait = max(0.0, self._next_start - self.clock())
                self.on_retry(
                    f"{what}: {last}; retry {attempt + 1} of {self.retries} in {wait:.0f} s"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def get_json(
        self,
        url: str,
        *,
        what: str,
        ok_statuses: Collection[int] = (),
        retry_json: Callable[[Any], str | None] | None = None,
    ) -> tuple[Any, bytes]:
        """GET ``url`` and parse it as JSON; a body that is not JSON is retried.

        Parameters
        ----------
        url, what, ok_statuses
            As :meth:`get`.
        retry_json : callable, optional
            ``retry_json(parsed)`` returns a reason to retry or ``None``.

        Returns
        -------
        tuple
            ``(parsed, raw_body)``; the raw body is what a cache stores.
        """
        parsed: list[Any] = []

        def check(body: bytes) -> str | None:
            try:
                value = json.loads(body)
            except (ValueError, UnicodeDecodeError):
                return f"the answer is not JSON ({_snippet(body, 80)!r})"
            reason = retry_json(value) if retry_json is not None else None
            if reason is None:
                parsed.append(value)
            return reason

        body = self.get(url, what=what, ok_statuses=ok_statuses, retry_if=check)
        return parsed[-1], body

