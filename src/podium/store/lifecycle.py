"""Creating, opening, migrating and closing a store (the lifecycle layer of
:class:`~podium.store.Store`).

:meth:`StoreLifecycle.create` records the rating system and its full parameters
in a new store (or checks them against an existing one), :meth:`StoreLifecycle.open`
reads them back, :meth:`StoreLifecycle.upgrade` applies the schema migrations of
:mod:`podium.store.migrations` in one transaction.  Every method refuses a store
whose schema version this Podium cannot use, naming the database and what to do.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Self

from sqlalchemy import Connection

import podium.store.schema as S
from podium.errors import ConfigError
from podium.store.common import (
    CI_HANDLE_INDEX,
    POLICY_EXACT,
    POLICY_INSENSITIVE,
    StoreBase,
    resolve_system,
    same_params,
)
from podium.store.engine import (
    db_errors,
    display_url,
    make_engine,
    read_txn,
    sqlite_path,
    write_txn,
)
from podium.store.migrations import read_version, set_meta, upgrade
from podium.store.models import StoreError
from podium.systems import get_system, saved_params

__all__ = ["StoreLifecycle"]


class StoreLifecycle(StoreBase):
    """Opening and closing; see :class:`~podium.store.Store`."""

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _options(opts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Split ``opts`` into the Store's own options and :func:`make_engine`'s."""
        allowed = {"snapshot_every", "snapshot_events", "keep_snapshots", "cache", "hooks",
                   "allow_future", "future_margin_s", "actor"}
        engine_opts = {
            "busy_timeout": float(opts.pop("busy_timeout", 600.0)),
            "pool_size": opts.pop("pool_size", None),
            "max_overflow": opts.pop("max_overflow", None),
        }
        unknown = set(opts) - allowed
        if unknown:
            raise TypeError(f"unknown Store option(s): {', '.join(sorted(unknown))}")
        return opts, engine_opts

    @classmethod
    def create(cls, url: str, system: str, params: dict[str, Any] | None = None,
               *, case_insensitive_handles: bool | None = None, **options: Any) -> Self:
        """Create the store (or upgrade its schema), recording ``system`` and ``params``.

        When the database already holds a store it must be of the same system
        with the same (full) parameters, else :class:`StoreError`.  Unknown
        systems or parameters raise :class:`~podium.errors.ConfigError` before
        the database is touched.

        ``case_insensitive_handles``: the store's handle policy, fixed at creation and
        recorded in its metadata (``meta.handle_policy``): ``True`` makes handles that
        differ only by case (:func:`podium.core.guards.handle_key`) one player, shown
        with the first-seen spelling; ``False`` or ``None`` (the default) keeps them
        apart.  For an existing store, ``None`` accepts its policy and a boolean must
        equal it (else :class:`StoreError`).
        """
        opts, engine_opts = cls._options(dict(options))
        _sysobj, resolved = resolve_system(system, params)
        if case_insensitive_handles is not None and not isinstance(case_insensitive_handles,
                                                                   bool):
            raise TypeError("case_insensitive_handles must be a bool or None, got "
                            f"{case_insensitive_handles!r}")
        engine = make_engine(url, **engine_opts)
        try:
            with db_errors(url, "cannot create the store"), write_txn(engine) as conn:
                version = cls._checked_version(conn, url, allow_old=True)
                upgrade(conn)
                stored = cls._meta_map(conn)
                if "system" in stored:
                    cls._check_same_system(url, stored, system, resolved)
                    insensitive = cls._stored_policy(url, stored, case_insensitive_handles)
                else:
                    insensitive = bool(case_insensitive_handles)
                    now = int(time.time())
                    for key, value in (
                        ("system", system),
                        ("params", json.dumps(resolved, allow_nan=True, sort_keys=True)),
                        ("store_id", uuid.uuid4().hex),
                        ("epoch", "0"),
                        ("revision", "0"),
                        ("created_at", str(now)),
                        ("handle_policy", POLICY_INSENSITIVE if insensitive else POLICY_EXACT),
                    ):
                        set_meta(conn, key, value)
                    if insensitive:
                        # the database itself keeps one player per key, whoever writes
                        CI_HANDLE_INDEX.create(conn)
                if version != S.SCHEMA_VERSION:
                    from podium import __version__

                    set_meta(conn, "podium_version", __version__)
            return cls(engine, url, system_name=system, params=resolved,
                       schema_version=S.SCHEMA_VERSION, case_insensitive_handles=insensitive,
                       **opts)
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    def open(cls, url: str, *, case_insensitive_handles: bool | None = None,
             **options: Any) -> Self:
        """Open an existing store; its system, parameters and handle policy come from the
        database.

        ``options`` are the class's keyword options (``cache``, ``busy_timeout``,
        ``pool_size``, ``max_overflow``, ``allow_future``, ...), as for :meth:`create`;
        ``case_insensitive_handles``, when not ``None``, must equal the store's policy.

        Raises
        ------
        StoreError
            When there is no store there, its schema version differs from this
            Podium's (the message says whether to run ``podium db-upgrade``), or its
            handle policy is not the one asked for.
        """
        opts, engine_opts = cls._options(dict(options))
        path = sqlite_path(url)
        if path is not None and not path.exists():
            raise StoreError(
                f"no Podium store at {display_url(url)} (no such file); create one with "
                f"`podium ingest PATH --db {url} --system NAME`"
            )
        engine = make_engine(url, **engine_opts)
        try:
            with db_errors(url, "cannot open the store"), read_txn(engine) as conn:
                version = cls._checked_version(conn, url, allow_old=False)
                if version == 0:
                    raise StoreError(
                        f"{display_url(url)} holds no Podium store (no schema); create one with "
                        f"`podium ingest PATH --db {url} --system NAME`"
                    )
                stored = cls._meta_map(conn)
            if "system" not in stored:
                raise StoreError(f"{display_url(url)}: the store records no rating system; "
                                 "it was not created by Store.create")
            system = stored["system"]
            try:
                params = saved_params(system, json.loads(stored["params"]))
                get_system(system, **params)
            except (ConfigError, ValueError, KeyError) as exc:
                raise StoreError(
                    f"{display_url(url)}: the stored rating system {system!r} cannot be built by "
                    f"this Podium ({exc})"
                ) from None
            insensitive = cls._stored_policy(url, stored, case_insensitive_handles)
            return cls(engine, url, system_name=system, params=params,
                       schema_version=version, case_insensitive_handles=insensitive, **opts)
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    def open_or_create(cls, url: str, system: str | None = None,
                       params: dict[str, Any] | None = None, **options: Any) -> Self:
        """Open the store at ``url``, creating it (system ``system`` or ``"mmr"``) if absent.

        For an existing store, ``system`` (if given) must be the stored one and
        ``params`` (if given, even ``{}``) must resolve to the stored parameters.
        An existing store of an older schema version is not upgraded here: run
        ``podium db-upgrade`` (or :meth:`create`).
        """
        if system is not None:
            resolve_system(system, params)  # ConfigError before touching anything
        if cls._has_store(url, options.get("busy_timeout", 600.0)):
            store = cls.open(url, **options)  # checks case_insensitive_handles
            try:
                if system is not None and system != store.system_name:
                    raise StoreError(
                        f"{display_url(url)} rates with {store.system_name!r}, not {system!r}; "
                        "use another database for another system"
                    )
                if params is not None:
                    _sysobj, resolved = resolve_system(store.system_name, params)
                    if not same_params(resolved, store.params):
                        raise StoreError(cls._params_mismatch(url, store.params, resolved))
            except BaseException:
                store.close()
                raise
            return store
        return cls.create(url, system or "mmr", params, **options)

    @classmethod
    def upgrade(cls, url: str, *, busy_timeout: float = 600.0) -> tuple[int, int]:
        """Migrate the store at ``url`` to this Podium's schema version (one transaction).

        Returns
        -------
        (int, int)
            The version before and after.

        Raises
        ------
        StoreError
            When there is no store at ``url`` or it is newer than this Podium.
        """
        path = sqlite_path(url)
        if path is not None and not path.exists():
            raise StoreError(f"no Podium store at {display_url(url)} (no such file)")
        engine = make_engine(url, busy_timeout=busy_timeout)
        try:
            with db_errors(url, "cannot upgrade the store"), write_txn(engine) as conn:
                before = cls._checked_version(conn, url, allow_old=True)
                if before == 0:
                    raise StoreError(f"{display_url(url)} holds no Podium store (no schema) "
                                     "to upgrade")
                upgrade(conn)
                if before != S.SCHEMA_VERSION:
                    from podium import __version__

                    set_meta(conn, "podium_version", __version__)
            return before, S.SCHEMA_VERSION
        finally:
            engine.dispose()

    @staticmethod
    def _stored_policy(url: str, stored: dict[str, str], wanted: bool | None) -> bool:
        """The store's handle policy (``True``: case-insensitive); :class:`StoreError`
        when ``wanted`` is a boolean that differs from it, or the row is damaged."""
        policy = stored.get("handle_policy", POLICY_EXACT)  # stores before the policy
        if policy not in (POLICY_EXACT, POLICY_INSENSITIVE):
            raise StoreError(f"{display_url(url)}: damaged store metadata (handle_policy "
                             f"{policy!r}; expected {POLICY_EXACT!r} or "
                             f"{POLICY_INSENSITIVE!r})")
        insensitive = policy == POLICY_INSENSITIVE
        if wanted is not None and bool(wanted) != insensitive:
            raise StoreError(
                f"{display_url(url)} was created with {policy} handles; the handle policy "
                "is fixed when a store is created (use another database for "
                f"{POLICY_INSENSITIVE if wanted else POLICY_EXACT} handles)")
        return insensitive

    @staticmethod
    def _has_store(url: str, busy: float) -> bool:
        path = sqlite_path(url)
        if path is not None and not path.exists():
            return False
        engine = make_engine(url, busy_timeout=busy)
        try:
            with db_errors(url, "cannot open the database"), read_txn(engine) as conn:
                try:
                    return read_version(conn) > 0
                except ValueError:
                    return True  # let open() explain
        finally:
            engine.dispose()

    @staticmethod
    def _checked_version(conn: Connection, url: str, *, allow_old: bool) -> int:
        try:
            version = read_version(conn)
        except ValueError as exc:
            raise StoreError(f"{display_url(url)}: damaged store metadata ({exc})") from None
        if version > S.SCHEMA_VERSION:
            raise StoreError(
                f"{display_url(url)} has store schema version {version}, newer than this "
                f"Podium's {S.SCHEMA_VERSION}; upgrade Podium to use it"
            )
        if 0 < version < S.SCHEMA_VERSION and not allow_old:
            raise StoreError(
                f"{display_url(url)} has store schema version {version}, older than this "
                f"Podium's {S.SCHEMA_VERSION}; run `podium db-upgrade --db {url}` to migrate it"
            )
        return version

    @classmethod
    def _check_same_system(cls, url: str, stored: dict[str, str], system: str,
                           resolved: dict[str, Any]) -> None:
        if stored["system"] != system:
            raise StoreError(
                f"{display_url(url)} already holds a store rated with {stored['system']!r}, not "
                f"{system!r}; use another database for another system"
            )
        old = json.loads(stored["params"])
        if not same_params(old, resolved):
            raise StoreError(cls._params_mismatch(url, old, resolved))

    @staticmethod
    def _params_mismatch(url: str, old: dict[str, Any], new: dict[str, Any]) -> str:
        diffs = [
            f"{k}: stored {old.get(k)!r}, given {new.get(k)!r}"
            for k in sorted(set(old) | set(new)) if not same_params(
                {k: old.get(k)}, {k: new.get(k)})
        ]
        return (f"{display_url(url)} already holds a store with other parameters "
                f"({'; '.join(diffs)}); use another database for other parameters")

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Release the database connections (the store object is unusable afterwards)."""
        self._release()
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({display_url(self.url)!r}, system={self.system_name!r})"

