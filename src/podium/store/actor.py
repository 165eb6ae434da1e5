"""Who is writing: the *actor* the audit log (:mod:`podium.store.audit`) records.

An actor is a short text naming who made a write: over HTTP the token's name and role
(``token:ci-bot (write)``), from the command line ``cli:USER``, from Python whatever the
caller says.  It is resolved at each write, first match wins:

1. the innermost :func:`acting_as` block of the current thread or task (a
   :class:`contextvars.ContextVar`: the service sets it per request, and it follows the
   request into the thread pool that runs the write);
2. the store's ``actor=`` option (``Store.open(url, actor="nightly-import")``);
3. the process default, :func:`set_default_actor`, else ``python:USER``.

The ``podium`` command line runs each command inside ``acting_as(cli_actor())``
(``cli:USER``, or ``$PODIUM_ACTOR`` when set: a deployment script may name itself).

This module needs nothing beyond the standard library, so that the command line can
set its default before the store (and SQLAlchemy) is imported.
"""

from __future__ import annotations

import functools
import getpass
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["MAX_ACTOR_CHARS", "acting_as", "check_actor", "cli_actor", "current_actor",
           "set_default_actor"]

#: The longest actor text accepted.
MAX_ACTOR_CHARS = 200

_ACTOR: ContextVar[str | None] = ContextVar("podium_actor", default=None)
_default: list[str | None] = [None]


def check_actor(actor: object) -> str:
    """``actor`` if it is a usable actor text, else :class:`ValueError` saying why
    (non-empty, at most :data:`MAX_ACTOR_CHARS` characters, no control character)."""
    if not isinstance(actor, str) or not actor.strip():
        raise ValueError(f"an actor must be a non-empty string, got {actor!r}")
    if len(actor) > MAX_ACTOR_CHARS:
        raise ValueError(f"an actor has at most {MAX_ACTOR_CHARS} characters, got "
                         f"{len(actor)}")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in actor):
        raise ValueError(f"actor {actor!r} contains a control character")
    return actor


@functools.cache
def _user() -> str:
    """The process's user name (asked once: a lookup of the password database)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name for this uid (containers)
        return "unknown"


@contextmanager
def acting_as(actor: str) -> Iterator[str]:
    """Record the writes made inside the block as made by ``actor``.

    >>> with acting_as("nightly-import"):
    ...     current_actor()
    'nightly-import'
    """
    token = _ACTOR.set(check_actor(actor))
    try:
        yield actor
    finally:
        _ACTOR.reset(token)


def cli_actor() -> str:
    """The actor of a ``podium`` command: ``$PODIUM_ACTOR`` if set, else ``cli:USER``."""
    given = os.environ.get("PODIUM_ACTOR", "").strip()
    if not given:
        return f"cli:{_user()}"
    try:
        return check_actor(given)
    except ValueError as exc:
        from podium.errors import PodiumError

        raise PodiumError(f"PODIUM_ACTOR: {exc}") from None


def set_default_actor(actor: str | None) -> None:
    """The actor of this process's writes outside any :func:`acting_as` block and
    without a store ``actor=`` option (``None``: ``python:USER``)."""
    _default[0] = None if actor is None else check_actor(actor)


def current_actor(store_actor: str | None = None) -> str:
    """The actor of a write made now (see the module notes for the order)."""
    given = _ACTOR.get()
    if given is not None:
        return given
    if store_actor is not None:
        return store_actor
    return _default[0] or f"python:{_user()}"
