"""Engine creation, SQLite pragmas, and migrations on start.

One `Database` per process: it owns the async engine and hands out units of work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.util import CommandError
from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    async_sessionmaker,
    create_async_engine,
)

from storage.uow import UnitOfWork

log = logging.getLogger(__name__)

# Any constants work; they only have to be the same in every paperwatch process.
_MIGRATION_LOCK_KEY = 0x70617065  # "pape"
_POLLER_LOCK_KEY = 0x706F6C6C  # "poll"
# How long the poller lock's check (or taking it) may take before the connection is
# given up as dead: a database that does not answer cannot be trusted with the lock.
_LOCK_TIMEOUT = 5.0
# Whether this session holds the advisory lock (a one-int key has classid 0, objid the key).
_HOLDS_LOCK = text(
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 0"
    " AND objid = :k AND objsubid = 1 AND pid = pg_backend_pid() AND granted"
)


class DatabaseConfigError(RuntimeError):
    """The database URL cannot work; the message is one line for a person."""


def check_database_url(url: str) -> None:
    """Fail early, with a clear sentence, on a URL that cannot work."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseConfigError(
            f"PAPERWATCH_DATABASE_URL is not a database URL: {url!r}"
        ) from exc
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise DatabaseConfigError(
            f"unsupported database {backend!r}: use sqlite+aiosqlite:// or postgresql+asyncpg://"
        )
    if backend == "sqlite":
        if parsed.drivername != "sqlite+aiosqlite":
            raise DatabaseConfigError("SQLite needs the async driver: sqlite+aiosqlite:///path.db")
        _check_sqlite_path(parsed.database)
    elif parsed.drivername != "postgresql+asyncpg":
        raise DatabaseConfigError("PostgreSQL needs the async driver: postgresql+asyncpg://...")


def _check_sqlite_path(database: str | None) -> None:
    if not database or database == ":memory:":
        return
    path = Path(database)
    folder = path.parent
    if not folder.is_dir():
        raise DatabaseConfigError(f"cannot open database {path}: folder {folder} does not exist")
    target = path if path.exists() else folder
    if not os.access(target, os.W_OK):
        raise DatabaseConfigError(f"cannot open database {path}: {target} is not writable")
    try:  # the stdlib driver says at once, and plainly, what the async one would say later
        sqlite3.connect(path).close()
    except sqlite3.Error as exc:
        raise DatabaseConfigError(f"cannot open database {path}: {exc}") from exc


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class Database:
    """The engine and session factory of one process."""

    def __init__(self, url: str, **engine_options: Any) -> None:
        check_database_url(url)
        self.url = url
        self.engine: AsyncEngine = create_async_engine(url, **engine_options)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._lock_conn: AsyncConnection | None = None
        self._lock_guard = asyncio.Lock()  # the poll and digest jobs ask at once

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def uow(self) -> UnitOfWork:
        return UnitOfWork(self._sessions)

    async def upgrade(self, revision: str = "head") -> None:
        """Apply migrations; safe to call from several processes at once on PostgreSQL."""
        await self._migrate("upgrade", revision)

    async def downgrade(self, revision: str) -> None:
        await self._migrate("downgrade", revision)

    async def _migrate(self, command: str, revision: str) -> None:
        """Run Alembic in one transaction.

        On SQLite, Alembic changes a table by copying it into a new one and dropping the
        old; with foreign keys enforced, dropping `papers` would cascade into every table
        that points at it. So they are off while migrating (as Alembic's batch mode asks),
        and checked before the transaction commits.
        """
        async with self.engine.connect() as conn:
            if self.dialect == "sqlite":  # only takes effect outside a transaction
                await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
                await conn.commit()
            try:
                async with conn.begin():
                    if self.dialect == "postgresql":
                        await conn.execute(
                            text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK_KEY}
                        )
                    try:
                        await conn.run_sync(_alembic, command, revision)
                    except CommandError as exc:
                        raise DatabaseConfigError(_schema_problem(command, exc)) from exc
                    if self.dialect == "sqlite":
                        broken = (await conn.exec_driver_sql("PRAGMA foreign_key_check")).all()
                        if broken:
                            raise RuntimeError(f"migration left dangling references: {broken[:5]}")
            finally:
                if self.dialect == "sqlite":
                    await conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                    await conn.commit()

    async def current_revision(self) -> str | None:
        async with self.engine.connect() as conn:
            return await conn.run_sync(_current_revision)

    async def hold_poller_lock(self) -> bool:
        """Whether this process is (now) the one poller. Ask before each poller tick.

        PostgreSQL: a session advisory lock on a connection held open, so it is freed
        the moment the holder dies. Each call checks, on that connection, that the
        lock is still held: a database restart ends the session and the lock with it,
        and another process may take it. Then the connection is dropped and the lock
        taken again if it is free; if another process has it, this one steps down
        (and says so in the log). SQLite: one process per database file, always yes.
        """
        if self.dialect != "postgresql":
            return True
        async with self._lock_guard:
            if self._lock_conn is not None:
                if await self._still_holding(self._lock_conn):
                    return True
                await self._drop_lock_connection()
                if await self._take_lock():
                    log.warning("poller lock lost and taken again; still the poller")
                    return True
                log.warning("poller lock lost; another process is the poller now: stepping down")
                return False
            if await self._take_lock():
                log.info("poller lock taken: this process polls arXiv and folds digests")
                return True
            return False

    async def _still_holding(self, conn: AsyncConnection) -> bool:
        try:
            async with asyncio.timeout(_LOCK_TIMEOUT):
                held = (await conn.execute(_HOLDS_LOCK, {"k": _POLLER_LOCK_KEY})).scalar()
                await conn.commit()
        except (OSError, TimeoutError, SQLAlchemyError) as exc:
            log.warning("poller lock connection failed: %s", _first_line(exc))
            return False
        return bool(held)

    async def _take_lock(self) -> bool:
        """Try to take the lock on a new connection, kept open while it is held."""
        conn: AsyncConnection | None = None
        try:
            async with asyncio.timeout(_LOCK_TIMEOUT):
                conn = await self.engine.connect()
                got = (
                    await conn.execute(
                        text("SELECT pg_try_advisory_lock(:k)"), {"k": _POLLER_LOCK_KEY}
                    )
                ).scalar()
                await conn.commit()
        except (OSError, TimeoutError, SQLAlchemyError) as exc:
            log.warning("cannot reach the database for the poller lock: %s", _first_line(exc))
            got = False
        if got:
            self._lock_conn = conn
        elif conn is not None:
            await _discard(conn)
        return bool(got)

    async def _drop_lock_connection(self) -> None:
        conn, self._lock_conn = self._lock_conn, None
        if conn is not None:
            await _discard(conn)

    async def dispose(self) -> None:
        await self._drop_lock_connection()
        await self.engine.dispose()


async def _discard(conn: AsyncConnection) -> None:
    """Close a connection that may be dead: invalidated, so the pool never reuses it."""
    with contextlib.suppress(OSError, TimeoutError, SQLAlchemyError):
        async with asyncio.timeout(_LOCK_TIMEOUT):
            await conn.invalidate()
    with contextlib.suppress(OSError, TimeoutError, SQLAlchemyError):
        async with asyncio.timeout(_LOCK_TIMEOUT):
            await conn.close()


def _schema_problem(action: str, exc: CommandError) -> str:
    """Alembic's refusal as one line: a schema this version does not know is one that a
    newer paperwatch migrated (see the README, "Backup, restore and upgrade")."""
    if action == "upgrade":
        return (
            f"the database schema is newer than this paperwatch ({_first_line(exc)}): "
            "install the version that migrated it, or restore a backup made before"
        )
    return f"cannot {action} the database schema: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", "storage:migrations")
    cfg.attributes["connection"] = connection
    return cfg


def _alembic(connection: Connection, action: str, revision: str) -> None:
    getattr(command, action)(alembic_config(connection), revision)


def _current_revision(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()
