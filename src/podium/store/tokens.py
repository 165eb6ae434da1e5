"""Named bearer tokens with roles, kept hashed in the store (``tokens`` table).

A token is a random secret, ``podium_`` followed by 43 URL-safe characters (32 random
bytes, :func:`secrets.token_urlsafe`): the prefix makes a leaked token easy to spot
(secret scanners, logs).  The store keeps only its SHA-256 (``secret_hash``, unique):
the secret is shown once, by :meth:`TokenRegistry.create_token`, and cannot be read back.
As the secret carries 256 random bits, a plain (unsalted) hash is as strong as a
password hash would be, and lets a request's token be found with one index lookup.

Roles, each including the ones before it:

``read``
    Only needed by a server started *private* (``podium serve --private``): every read
    route and page then needs a token.
``write``
    Also ``POST /api/contests`` (ingestion).
``admin``
    Also corrections (``DELETE``/``PUT /api/contests/{id}``), the audit log
    (``GET /api/audit``) and everything else.

:meth:`TokenRegistry.check_token` answers who a secret belongs to: it hashes the secret,
looks the hash up, and compares the stored hash with :func:`hmac.compare_digest`.
Creating and revoking a token are audited (``token-create``, ``token-revoke``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Connection, func, select, update

import podium.store.schema as S
from podium.store.actor import current_actor
from podium.store.audit import AuditLog
from podium.store.common import StoreContext
from podium.store.engine import db_errors, read_txn, write_txn
from podium.store.models import StoreError

__all__ = ["ROLES", "TOKEN_PREFIX", "TokenRegistry", "TokenIdentity", "TokenInfo",
           "hash_secret", "role_allows"]

#: The roles, weakest first: each allows what the ones before it allow.
ROLES = ("read", "write", "admin")
#: The start of every token's secret.
TOKEN_PREFIX = "podium_"
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")


def role_allows(role: str, needed: str) -> bool:
    """Whether a token of ``role`` may do what needs ``needed``."""
    return ROLES.index(role) >= ROLES.index(needed)


def hash_secret(secret: str) -> str:
    """The hex SHA-256 of a token's secret, as the store keeps it."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class TokenIdentity:
    """Who a valid token belongs to: its ``name`` and ``role``."""

    name: str
    role: str


@dataclass(frozen=True)
class TokenInfo:
    """A token as :meth:`TokenRegistry.tokens` lists it (never its secret).

    ``created_at`` and ``revoked_at`` are unix times (``revoked_at`` ``None`` while the
    token is valid); ``created_by`` the actor who created it.
    """

    name: str
    role: str
    created_at: int
    created_by: str
    revoked_at: int | None

    @property
    def active(self) -> bool:
        """Whether the token is still valid."""
        return self.revoked_at is None


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise StoreError(f"token name {name!r}: use 1 to 64 characters of letters, digits "
                         "and . _ @ + -, starting with a letter or digit")
    return name


def _check_role(role: object) -> str:
    if role not in ROLES:
        raise StoreError(f"token role {role!r}: must be one of {', '.join(ROLES)}")
    return str(role)


def _revision(conn: Connection) -> int | None:
    raw = conn.execute(select(S.meta.c.value).where(S.meta.c.key == "revision")).scalar()
    return None if raw is None else int(raw)


class TokenRegistry:
    """The tokens of a store (a service of :class:`~podium.store.Store`; see the module
    notes): creating and revoking them is audited through ``audit``."""

    def __init__(self, ctx: StoreContext, audit: AuditLog) -> None:
        self.ctx = ctx
        self.audit = audit

    def create_token(self, name: str, role: str) -> str:
        """Create a token and return its secret (shown only now: the store keeps its hash).

        Raises
        ------
        StoreError
            For a name outside the allowed characters, an unknown role, or a name
            already used by a token (revoked ones included: names stay unique so that
            the audit log names one token).
        """
        _check_name(name)
        _check_role(role)
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        t = S.tokens

        def body(conn: Connection) -> None:
            old = conn.execute(select(t.c.revoked_at).where(t.c.name == name)).first()
            if old is not None:
                state = "revoked" if old.revoked_at is not None else "active"
                raise StoreError(f"a token named {name!r} exists already ({state}); token "
                                 "names are never reused: choose another name")
            conn.execute(t.insert().values(
                name=name, role=role, secret_hash=hash_secret(secret),
                created_at=int(time.time()), created_by=current_actor(self.ctx.options.actor),
                revoked_at=None))
            self.audit.record(conn, "token-create", revision=_revision(conn),
                              detail={"name": name, "role": role})

        with db_errors(self.ctx.url, f"cannot create token {name!r}"), \
                write_txn(self.ctx.engine) as conn:
            body(conn)
        return secret

    def tokens(self) -> list[TokenInfo]:
        """Every token (revoked ones too), oldest first; never their secrets."""
        t = S.tokens
        with read_txn(self.ctx.engine) as conn:
            rows = conn.execute(select(t.c.name, t.c.role, t.c.created_at, t.c.created_by,
                                       t.c.revoked_at).order_by(t.c.pk)).all()
        return [TokenInfo(r.name, r.role, int(r.created_at), r.created_by,
                          None if r.revoked_at is None else int(r.revoked_at)) for r in rows]

    def revoke_token(self, name: str) -> TokenInfo:
        """Revoke the token ``name``: it is refused from then on (a server caches a valid
        token for a few seconds, see :mod:`podium.service.guard`).

        Raises
        ------
        StoreError
            When there is no such token or it is revoked already.
        """
        t = S.tokens

        def body(conn: Connection) -> TokenInfo:
            row = conn.execute(select(t.c.role, t.c.created_at, t.c.created_by,
                                      t.c.revoked_at).where(t.c.name == name)).first()
            if row is None:
                raise StoreError(f"no token named {name!r} (podium token list shows them)")
            if row.revoked_at is not None:
                raise StoreError(f"the token {name!r} is revoked already")
            now = int(time.time())
            conn.execute(update(t).where(t.c.name == name).values(revoked_at=now))
            self.audit.record(conn, "token-revoke", revision=_revision(conn),
                              detail={"name": name, "role": row.role})
            return TokenInfo(name, row.role, int(row.created_at), row.created_by, now)

        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise StoreError(f"no token named {name!r} (podium token list shows them)")
        with db_errors(self.ctx.url, f"cannot revoke token {name!r}"), \
                write_txn(self.ctx.engine) as conn:
            return body(conn)

    def check_token(self, secret: str) -> TokenIdentity | None:
        """The name and role of the valid (not revoked) token whose secret is ``secret``,
        else ``None``.

        The secret's SHA-256 is looked up by its unique index, then compared with the
        stored one in constant time (:func:`hmac.compare_digest`).
        """
        if not isinstance(secret, str) or not secret.startswith(TOKEN_PREFIX) \
                or len(secret) > 200:
            return None
        digest = hash_secret(secret)
        t = S.tokens
        with read_txn(self.ctx.engine) as conn:
            row = conn.execute(select(t.c.name, t.c.role, t.c.secret_hash)
                               .where(t.c.secret_hash == digest, t.c.revoked_at.is_(None))
                               ).first()
        if row is None or not hmac.compare_digest(str(row.secret_hash), digest):
            return None
        return TokenIdentity(row.name, row.role)

    def count_tokens(self, *, roles: tuple[str, ...] = ROLES) -> int:
        """How many valid tokens have one of ``roles``."""
        t = S.tokens
        with read_txn(self.ctx.engine) as conn:
            return int(conn.execute(select(func.count()).select_from(t).where(
                t.c.revoked_at.is_(None), t.c.role.in_(list(roles)))).scalar_one())
