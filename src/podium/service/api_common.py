"""What the routes of the ``/api`` router share (:mod:`podium.service.api`,
:mod:`podium.service.api_corrections`): the store of the app, JSON answers, the token
check, the request body as JSON, a posted contest under the store's rules, and text
quoted for a message.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse

from podium.core.guards import DEFAULT_FUTURE_MARGIN_S
from podium.errors import ContestError, DataFormatError
from podium.service.guard import identity_problem
from podium.service.models import to_jsonable

__all__ = ["check_token", "contest_of", "get_store", "json_answer", "parse_json_body",
           "shown"]


def get_store(request: Request) -> Any:
    """The store the app serves."""
    return request.app.state.store


def json_answer(value: Any, status_code: int = 200) -> JSONResponse:
    """The answer as JSON (the route's ``response_model`` documents it)."""
    return JSONResponse(to_jsonable(value), status_code=status_code)


def check_token(request: Request, role: str = "write") -> None:
    """401 or 403 unless the guard found a token of at least ``role`` (the app's
    :class:`~podium.service.guard.RequestGuard` already refused such a request before
    reading its body, by the role its table names; this keeps the route safe without
    it)."""
    problem = identity_problem(request.scope, role)
    if problem is not None:
        status, detail = problem
        raise HTTPException(status_code=status, detail=detail,
                            headers={"WWW-Authenticate": 'Bearer realm="podium"'}
                            if status == 401 else None)


def parse_json_body(raw: bytes) -> Any:
    """The request body ``raw`` read as JSON (UTF-8); 400 saying why it cannot be."""
    if not raw.strip():
        raise HTTPException(status_code=400, detail="request body is empty: send a JSON object")
    try:
        return json.loads(raw.decode("utf-8"))  # JSON over HTTP is UTF-8 (RFC 8259)
    except UnicodeDecodeError as exc:
        raise HTTPException(
            status_code=400, detail=f"request body is not UTF-8 text ({exc.reason} at byte "
            f"{exc.start})",
        ) from None
    except json.JSONDecodeError as exc:
        raise HTTPException(
            status_code=400, detail=f"request body is not valid JSON: {exc.msg} at line "
            f"{exc.lineno}, column {exc.colno}",
        ) from None
    except RecursionError:
        raise HTTPException(status_code=400, detail="request body is nested too deeply") from None
    except ValueError as exc:  # Python's limit on the digits of an integer
        raise HTTPException(
            status_code=400, detail=f"request body holds a number with too many digits "
            f"({str(exc).split(';')[0]})",
        ) from None


def contest_of(doc: Any, where: str, contest_id: str | None, store: Any,
                allow_future: bool) -> Any:
    """The :class:`~podium.core.contest.Contest` of one posted contest, under the store's
    rules (:func:`podium.store.checks.check_contest`; 422 naming ``where`` when it is
    invalid)."""
    from podium.io.json_contests import contest_from_json_dict
    from podium.store.checks import check_case_insensitive, check_contest

    try:
        c = contest_from_json_dict(doc, source=where)
    except (DataFormatError, ContestError) as exc:
        raise HTTPException(status_code=422, detail=str(exc)) from None
    except (ValueError, TypeError, OverflowError, UnicodeError) as exc:  # defensive
        raise HTTPException(status_code=422, detail=f"{where}: not a valid contest "
                            f"({type(exc).__name__}: {ascii(str(exc))[1:-1][:200]})") from None
    # Checks of the request itself (422); what the store refuses after this is a
    # conflict with its contents (409).
    if contest_id is None and not (c.url or c.name):
        raise HTTPException(
            status_code=422, detail=f"{where}: the contest at time {c.time_seconds} "
            "has neither 'url' nor 'name' to identify it; give one or ?contest_id=",
        )
    if not -(2**63) <= c.time_seconds < 2**63:
        raise HTTPException(
            status_code=422, detail=f"{where}: contest {c.label!r}: time_seconds "
            f"{c.time_seconds} does not fit a 64-bit integer",
        )
    margin = getattr(store, "future_margin_s", None)
    try:
        c = check_contest(c, allow_future=allow_future, future_margin_s=float(margin)
                          if isinstance(margin, int | float) else DEFAULT_FUTURE_MARGIN_S)
        if getattr(store, "case_insensitive_handles", False) is True:
            check_case_insensitive(c)
    except ContestError as exc:
        raise HTTPException(status_code=422, detail=f"{where}: {exc}") from None
    return c


def shown(text: str) -> str:
    """``text`` quoted for a message, cut short, invisible characters escaped."""
    short = text if len(text) <= 80 else text[:80] + "..."
    return ascii(short) if not short.isprintable() else repr(short)
