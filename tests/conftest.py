"""Shared fixtures: real databases (SQLite always, PostgreSQL when reachable).

`db` is a database migrated to head: on SQLite a copy of one file migrated once a session,
on PostgreSQL the test's own schema, migrated from empty, and dropped afterwards.
PostgreSQL tests use PAPERWATCH_TEST_POSTGRES_URL (default: the local server's `test`
database).
When the server is unreachable the tests skip with the reason, unless CI=true or
PAPERWATCH_REQUIRE_POSTGRES=1, in which case they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from storage.database import Database
from tests.support.postgres import PG_URL

FIXTURES = Path(__file__).parent / "fixtures"
SQLITE_URL = "sqlite+aiosqlite:///"
REQUIRE_PG = os.environ.get("CI", "").lower() == "true" or os.environ.get(
    "PAPERWATCH_REQUIRE_POSTGRES"
) in ("1", "true")

_pg_error: list[str | None] = []


async def _probe_postgres() -> str | None:
    engine = create_async_engine(PG_URL, connect_args={"timeout": 3})
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        return None
    except Exception as exc:  # any failure means "not usable here"
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        await engine.dispose()


def postgres_unavailable() -> str | None:
    """None when PostgreSQL answers; otherwise why not (probed once per session)."""
    if not _pg_error:
        _pg_error.append(asyncio.run(_probe_postgres()))
    return _pg_error[0]


def require_postgres() -> None:
    error = postgres_unavailable()
    if error is None:
        return
    message = f"PostgreSQL unreachable at {PG_URL} ({error})"
    if REQUIRE_PG:
        pytest.fail(message + "; CI requires it", pytrace=False)
    pytest.skip(message + "; set PAPERWATCH_TEST_POSTGRES_URL to run these tests")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "postgres":
        require_postgres()
    return request.param


@pytest.fixture
async def database_url(backend: str, tmp_path: Path) -> AsyncIterator[tuple[str, dict]]:
    """A URL (and engine options) for an empty database of the chosen backend."""
    if backend == "sqlite":
        yield f"{SQLITE_URL}{tmp_path / 'test.db'}", {}
        return
    schema = f"pw_test_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(PG_URL)
    async with admin.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield PG_URL, {"connect_args": {"server_settings": {"search_path": schema}}}
    finally:
        async with admin.begin() as conn:
            await conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once a session: `db` copies it rather than migrating
    every test's database from empty again (a few tenths of a second each)."""
    path = tmp_path_factory.mktemp("migrated") / "head.db"

    async def migrate() -> None:
        database = Database(f"{SQLITE_URL}{path}")
        await database.upgrade()
        await database.dispose()

    asyncio.run(migrate())
    # Closing the last connection checkpointed the write-ahead log into the file itself.
    assert not path.with_name(path.name + "-wal").exists()
    return path


@pytest.fixture
async def db(database_url: tuple[str, dict], migrated_sqlite: Path) -> AsyncIterator[Database]:
    url, options = database_url
    if url.startswith(SQLITE_URL):
        shutil.copyfile(migrated_sqlite, url.removeprefix(SQLITE_URL))
    database = Database(url, **options)
    await database.upgrade()
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture(scope="session")
def small_catalog() -> Catalog:
    return load_catalog(FIXTURES / "catalog_small.toml")


@pytest.fixture
def ctx(db: Database, small_catalog: Catalog) -> Context:
    return Context(uow=db.uow, catalog=small_catalog)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port that refuses connections: bound (so nothing else takes it), never
    listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]
