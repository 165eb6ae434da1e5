"""Creating, opening and migrating a store (the lifecycle of :class:`~podium.store.Store`).

:func:`create_context` records the rating system and its full parameters in a new
store (or checks them against an existing one), :func:`open_context` reads them back;
each returns the :class:`~podium.store.common.StoreContext` a store object's services
are built over (``Store.create``, ``Store.open``, ``Store.open_or_create``).
:func:`upgrade_store` applies the schema migrations of :mod:`podium.store.migrations` in
one transaction.  Every function refuses a store whose schema version this Podium
cannot use, naming the database and what to do.

Ladders (:mod:`podium.store.ladders`): :func:`ladder_context` gives the context of
another ladder of an open store (sharing its engine, options and hooks);
:func:`create_ladder_context` creates a ladder -- its row in the registry, its tables
and its ``meta`` (system, parameters, id, epoch, revision, handle policy, settings) --
in one transaction holding the registry's lock, and records it in the store's audit
log; :func:`write_settings` changes a ladder's settings.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from sqlalchemy import Connection, Index

import podium.store.schema as S
from podium.errors import ConfigError
from podium.store.audit import AuditLog
from podium.store.common import (
    CI_HANDLE_INDEX,
    POLICY_EXACT,
    POLICY_INSENSITIVE,
    STORE_OPTIONS,
    StoreContext,
    StoreHooks,
    StoreOptions,
    check_hooks,
    meta_map,
    resolve_system,
    same_params,
)
from podium.store.engine import (
    REGISTRY_LOCK_KEY,
    SYNCHRONOUS,
    check_synchronous,
    db_errors,
    display_url,
    dispose_engine,
    make_engine,
    read_txn,
    sqlite_path,
    write_txn,
)
from podium.store.ladders import LadderSettings, check_ladder_name, find_ladder, next_ladder_pk
from podium.store.migrations import read_version, set_meta, upgrade
from podium.store.models import Ladder, StoreError, UnknownLadderError
from podium.store.priors import source_system
from podium.systems import RatingSystem, get_system, saved_params

__all__ = ["create_context", "has_store", "open_context", "open_or_create_context",
           "split_options", "upgrade_store", "ladder_context", "create_ladder_context",
           "write_settings"]


def split_options(options: dict[str, Any]) -> tuple[StoreOptions, StoreHooks | None,
                                                    dict[str, Any]]:
    """A store's keyword options checked and split: its :class:`StoreOptions`, its test
    hook, and :func:`make_engine`'s options (``busy_timeout``, ``pool_size``,
    ``max_overflow``, ``synchronous``).

    Raises
    ------
    TypeError
        For an unknown option or a hook that is not callable.
    ValueError
        For an option out of range (see :class:`StoreOptions`).
    StoreError
        For a ``synchronous`` other than ``"normal"`` or ``"full"``.
    """
    opts = dict(options)
    engine_opts = {
        "busy_timeout": float(opts.pop("busy_timeout", 600.0)),
        "pool_size": opts.pop("pool_size", None),
        "max_overflow": opts.pop("max_overflow", None),
        "synchronous": check_synchronous(opts.pop("synchronous", SYNCHRONOUS[0])),
    }
    unknown = set(opts) - set(STORE_OPTIONS)
    if unknown:
        raise TypeError(f"unknown Store option(s): {', '.join(sorted(unknown))}")
    hooks = opts.pop("hooks", None)
    settings = StoreOptions(**opts)
    return settings, check_hooks(hooks), engine_opts


def create_context(url: str, system: str, params: dict[str, Any] | None = None,
                   *, case_insensitive_handles: bool | None = None,
                   **options: Any) -> StoreContext:
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
    settings, hooks, engine_opts = split_options(options)
    _sysobj, resolved = resolve_system(system, params)
    if case_insensitive_handles is not None and not isinstance(case_insensitive_handles,
                                                               bool):
        raise TypeError("case_insensitive_handles must be a bool or None, got "
                        f"{case_insensitive_handles!r}")
    engine = make_engine(url, **engine_opts)
    try:
        with db_errors(url, "cannot create the store"), write_txn(engine) as conn:
            version = _checked_version(conn, url, allow_old=True)
            upgrade(conn)
            stored = meta_map(conn)
            if "system" in stored:
                _check_same_system(url, stored, system, resolved)
                insensitive = _stored_policy(url, stored, case_insensitive_handles)
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
                _index_drift(conn, S.ladder_tables(""), _sysobj)
            if version != S.SCHEMA_VERSION:
                from podium._version import __version__

                set_meta(conn, "podium_version", __version__)
        return StoreContext(engine, url, system_name=system, params=resolved,
                            schema_version=S.SCHEMA_VERSION,
                            case_insensitive_handles=insensitive, options=settings, hooks=hooks)
    except BaseException:
        engine.dispose()
        raise


def _index_drift(conn: Connection, tables: S.LadderTables, system: RatingSystem) -> None:
    """Create the indexes of ``players`` that a ladder reads by when its ratings drift
    (:attr:`~podium.store.schema.LadderTables.drift_indexes`, schema version 8) if
    ``system``, the ladder's rating system, has time drift; nothing otherwise."""
    if system.has_time_drift:
        for index in tables.drift_indexes:
            index.create(conn)


def open_context(url: str, *, case_insensitive_handles: bool | None = None,
                 **options: Any) -> StoreContext:
    """Open an existing store; its system, parameters and handle policy come from the
    database.

    ``options`` are the store's keyword options (``cache``, ``busy_timeout``,
    ``pool_size``, ``max_overflow``, ``allow_future``, ...), as for ``create``;
    ``case_insensitive_handles``, when not ``None``, must equal the store's policy.

    Raises
    ------
    StoreError
        When there is no store there, its schema version differs from this
        Podium's (the message says whether to run ``podium db-upgrade``), or its
        handle policy is not the one asked for.
    """
    settings, hooks, engine_opts = split_options(options)
    path = sqlite_path(url)
    if path is not None and not path.exists():
        raise StoreError(
            f"no Podium store at {display_url(url)} (no such file); create one with "
            f"`podium ingest PATH --db {url} --system NAME`"
        )
    engine = make_engine(url, **engine_opts)
    try:
        with db_errors(url, "cannot open the store"), read_txn(engine) as conn:
            version = _checked_version(conn, url, allow_old=False)
            if version == 0:
                raise StoreError(
                    f"{display_url(url)} holds no Podium store (no schema); create one with "
                    f"`podium ingest PATH --db {url} --system NAME`"
                )
            stored = meta_map(conn)
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
        insensitive = _stored_policy(url, stored, case_insensitive_handles)
        return StoreContext(engine, url, system_name=system, params=params,
                            schema_version=version, case_insensitive_handles=insensitive,
                            options=settings, hooks=hooks)
    except BaseException:
        engine.dispose()
        raise


def open_or_create_context(url: str, system: str | None = None,
                           params: dict[str, Any] | None = None, *, check_system: bool = True,
                           **options: Any) -> StoreContext:
    """Open the store at ``url``, creating it (system ``system`` or ``"mmr"``) if absent.

    For an existing store, ``system`` (if given) must be the stored one and
    ``params`` (if given, even ``{}``) must resolve to the stored parameters (unless
    ``check_system`` is ``False``: the caller wants another ladder of the store).
    An existing store of an older schema version is not upgraded here: run
    ``podium db-upgrade`` (or ``create``).
    """
    if system is not None:
        resolve_system(system, params)  # ConfigError before touching anything
    if has_store(url, options.get("busy_timeout", 600.0)):
        ctx = open_context(url, **options)  # checks case_insensitive_handles
        if not check_system:
            return ctx
        try:
            if system is not None and system != ctx.system_name:
                raise StoreError(
                    f"{display_url(url)} rates with {ctx.system_name!r}, not {system!r}; "
                    "use another database for another system"
                )
            if params is not None:
                _sysobj, resolved = resolve_system(ctx.system_name, params)
                if not same_params(resolved, ctx.params):
                    raise StoreError(_params_mismatch(url, ctx.params, resolved))
        except BaseException:
            dispose_engine(ctx.engine)
            raise
        return ctx
    return create_context(url, system or "mmr", params, **options)


def upgrade_store(url: str, *, busy_timeout: float = 600.0) -> tuple[int, int]:
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
            before = _checked_version(conn, url, allow_old=True)
            if before == 0:
                raise StoreError(f"{display_url(url)} holds no Podium store (no schema) "
                                 "to upgrade")
            upgrade(conn)
            if before != S.SCHEMA_VERSION:
                from podium._version import __version__

                set_meta(conn, "podium_version", __version__)
        return before, S.SCHEMA_VERSION
    finally:
        engine.dispose()


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


def has_store(url: str, busy: float) -> bool:
    """Whether the database at ``url`` holds a Podium store (of any schema version)."""
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


def _check_same_system(url: str, stored: dict[str, str], system: str,
                       resolved: dict[str, Any]) -> None:
    if stored["system"] != system:
        raise StoreError(
            f"{display_url(url)} already holds a store rated with {stored['system']!r}, not "
            f"{system!r}; use another database for another system"
        )
    old = saved_params(system, json.loads(stored["params"]))  # as the store rates
    if not same_params(old, resolved):
        raise StoreError(_params_mismatch(url, old, resolved))


def _params_mismatch(url: str, old: dict[str, Any], new: dict[str, Any]) -> str:
    diffs = [
        f"{k}: stored {old.get(k)!r}, given {new.get(k)!r}"
        for k in sorted(set(old) | set(new)) if not same_params(
            {k: old.get(k)}, {k: new.get(k)})
    ]
    shown = url if ", ladder " in url else display_url(url)
    return (f"{shown} already holds a store with other parameters "
            f"({'; '.join(diffs)}); use another database for other parameters")


# ---------------------------------------------------------------------- ladders
def _ladder_meta_context(base: StoreContext, conn: Connection, ladder: Ladder) -> StoreContext:
    """The context of ``ladder`` from its ``meta`` (read in ``conn``), sharing ``base``'s
    engine, options and hooks."""
    where = f"{display_url(base.url)}, ladder {ladder.name!r}"
    stored = meta_map(conn, S.ladder_tables(ladder.prefix).meta)
    if "system" not in stored:
        raise StoreError(f"{where}: the ladder records no rating system (damaged)")
    system = stored["system"]
    try:
        params = saved_params(system, json.loads(stored["params"]))
        get_system(system, **params)
    except (ConfigError, ValueError, KeyError) as exc:
        raise StoreError(f"{where}: the stored rating system {system!r} cannot be built by "
                         f"this Podium ({exc})") from None
    insensitive = stored.get("handle_policy", POLICY_EXACT) == POLICY_INSENSITIVE
    return StoreContext(base.engine, base.url, system_name=system, params=params,
                        schema_version=base.schema_version, case_insensitive_handles=insensitive,
                        options=base.options, hooks=base.hooks, ladder=ladder)


def _unknown(base: StoreContext, name: str) -> UnknownLadderError:
    return UnknownLadderError(
        f"no ladder {name!r} in {display_url(base.url)} (podium ladder list --db "
        f"{base.url} shows them; podium ladder create makes one)", name)


def ladder_context(base: StoreContext, name: str) -> StoreContext:
    """The context of the ladder ``name`` of ``base``'s store (``base`` itself when it is
    that ladder's).

    Raises
    ------
    UnknownLadderError
        (a :class:`StoreError`) naming the ladder when the store has none of that name.
    """
    if name == base.ladder.name:
        return base
    with db_errors(base.url, f"cannot open ladder {name!r}"), read_txn(base.engine) as conn:
        ladder = find_ladder(conn, name)
        if ladder is None:
            raise _unknown(base, name)
        return _ladder_meta_context(base, conn, ladder)


def create_ladder_context(base: StoreContext, name: str, system: str,
                          params: dict[str, Any] | None = None,
                          settings: LadderSettings | None = None, *,
                          exist_ok: bool = False) -> StoreContext:
    """Create the ladder ``name`` of ``base``'s store, rated with ``system`` and
    ``params``, and return its context.

    With ``exist_ok`` an existing ladder of that name is returned when its system is
    ``system`` (and its parameters ``params``, when given); otherwise an existing name is
    refused.

    Raises
    ------
    StoreError
        For a name that breaks the rules (:func:`podium.store.ladders.check_ladder_name`),
        an existing ladder (see ``exist_ok``), or one of another system or parameters.
    ConfigError
        For an unknown system or parameter (before anything is written).
    """
    name = check_ladder_name(name)
    _sysobj, resolved = resolve_system(system, params)
    settings = LadderSettings() if settings is None else settings
    now = int(time.time())
    with db_errors(base.url, f"cannot create ladder {name!r}"), \
            write_txn(base.engine, REGISTRY_LOCK_KEY) as conn:
        found = find_ladder(conn, name)
        if found is not None:
            ctx = _ladder_meta_context(base, conn, found)
            if not exist_ok:
                raise StoreError(f"{ctx.where} exists already (rated with "
                                 f"{ctx.system_name!r}); podium ladder list shows the ladders")
            if ctx.system_name != system:
                raise StoreError(f"{ctx.where} rates with {ctx.system_name!r}, not {system!r}; "
                                 "use another ladder for another system")
            if params is not None and not same_params(resolved, ctx.params):
                raise StoreError(_params_mismatch(ctx.where, ctx.params, resolved))
            return ctx
        pk = next_ladder_pk(conn)
        ladder = Ladder(pk, name, S.ladder_prefix(pk))
        tables = S.ladder_tables(ladder.prefix)
        conn.execute(S.ladders.insert().values(pk=pk, name=name, prefix=ladder.prefix,
                                               created_at=now))
        for table in tables.own:
            table.create(conn)
        _index_drift(conn, tables, _sysobj)
        policy = meta_map(conn).get("handle_policy", POLICY_EXACT)
        for key, value in (
            ("system", system),
            ("params", json.dumps(resolved, allow_nan=True, sort_keys=True)),
            ("store_id", uuid.uuid4().hex),
            ("epoch", "0"),
            ("revision", "0"),
            ("created_at", str(now)),
            ("handle_policy", policy),
            ("settings", settings.to_json()),
        ):
            set_meta(conn, key, value, tables.meta)
        if policy == POLICY_INSENSITIVE:
            Index(f"ux_{ladder.prefix}players_handle_key_ci", tables.players.c.handle_key,
                  unique=True).create(conn)
        ctx = _ladder_meta_context(base, conn, ladder)
        if settings.prior_from is not None:
            check_prior_source(conn, ctx, settings)
        AuditLog(base, S.audit).record(conn, "ladder-create", revision=None,
                                       detail={"ladder": name, "system": system})
        return ctx


def check_prior_source(conn: Connection, ctx: StoreContext, settings: LadderSettings) -> None:
    """:class:`StoreError` unless the ladder ``settings.prior_from`` exists, is not
    ``ctx``'s and rates with ``ctx``'s system."""
    if settings.prior_from is not None:
        source_system(conn, ctx, settings.prior_from)


def write_settings(ctx: StoreContext, **changes: Any) -> LadderSettings:
    """Change settings of the ladder of ``ctx`` (:class:`LadderSettings`: names and
    rules); the change is recorded in the ladder's audit log and returns the new
    settings.

    Raises
    ------
    StoreError
        For an unknown setting or a value it refuses, or a ``prior_from`` ladder that
        does not exist or rates with another system.
    """
    with db_errors(ctx.url, f"cannot change the settings of ladder {ctx.ladder.name!r}"), \
            write_txn(ctx.engine, ctx.lock_key) as conn:
        m = ctx.read_meta(conn)
        new = LadderSettings.from_json(m.settings).changed(**changes)
        check_prior_source(conn, ctx, new)
        set_meta(conn, "settings", new.to_json(), ctx.tables.meta)
        set_meta(conn, "revision", str(m.revision + 1), ctx.tables.meta)
        AuditLog(ctx).record(conn, "ladder-set", revision=m.revision + 1,
                             detail=dict(changes))
    return new
