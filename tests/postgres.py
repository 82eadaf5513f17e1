"""The PostgreSQL server that tests and benches use, and throwaway databases on it.

PAPERWATCH_TEST_POSTGRES_URL names it (default: the local server's `test` database).
A whole database, rather than a schema, is for runs where other processes connect.
"""

from __future__ import annotations

import os
import uuid

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine

PG_URL = os.environ.get(
    "PAPERWATCH_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)


async def _admin(statement: str) -> None:
    engine = create_async_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


async def create_database(prefix: str) -> str:
    """A new empty database on the server; returns its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    await _admin(f'CREATE DATABASE "{name}"')
    return PG_URL.rsplit("/", 1)[0] + f"/{name}"


async def drop_database(url: str) -> None:
    """Drop a database `create_database` made, closing its connections."""
    name = url.rsplit("/", 1)[1]
    await _admin(f'DROP DATABASE "{name}" WITH (FORCE)')


async def registered_processes(url: str) -> int:
    """How many `paperwatch run` processes the database at `url` lists (0 before it is
    migrated)."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(text("SELECT count(*) FROM processes"))).scalar_one())
    except SQLAlchemyError:  # no processes table yet
        return 0
    finally:
        await engine.dispose()
