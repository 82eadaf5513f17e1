"""The poller lock on PostgreSQL: a session advisory lock that is checked at every ask,
so a process whose session ended (a restart, a killed backend) finds out and steps
down when another took over. Each test has a database of its own: advisory locks
are per database."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from storage.database import Database
from tests.conftest import require_postgres
from tests.support.postgres import create_database, drop_database

pytestmark = pytest.mark.postgres


@pytest.fixture
def url() -> Iterator[str]:
    require_postgres()
    created = asyncio.run(create_database("pw_lock"))
    try:
        yield created
    finally:
        asyncio.run(drop_database(created))


async def end_the_lock_holders_session(url: str) -> None:
    """What a server restart does to the holder: its session (and lock) is gone. Only this
    test's database: pg_locks lists every database's locks, and a test running beside this
    one may hold the same key in its own (ending its session too failed CI once)."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            ended = await conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks"
                    " WHERE locktype = 'advisory' AND objid = :k AND granted AND database ="
                    " (SELECT oid FROM pg_database WHERE datname = current_database())"
                ),
                {"k": 0x706F6C6C},
            )
            assert ended.all() == [(True,)]
    finally:
        await engine.dispose()


async def test_a_lost_lock_is_noticed_and_the_loser_steps_down(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = Database(url), Database(url)
    try:
        assert await first.hold_poller_lock()
        assert not await second.hold_poller_lock()
        assert await first.hold_poller_lock()  # still held: the check finds it so

        await end_the_lock_holders_session(url)
        await asyncio.sleep(0.2)
        assert await second.hold_poller_lock()  # free now: the other one takes it
        assert not await first.hold_poller_lock()  # and the first steps down
        assert "stepping down" in caplog.text
        assert not await first.hold_poller_lock()
        assert await second.hold_poller_lock()
    finally:
        await first.dispose()
        await second.dispose()


async def test_a_lost_lock_nobody_else_took_is_taken_again(url: str) -> None:
    db = Database(url)
    try:
        assert await db.hold_poller_lock()
        await end_the_lock_holders_session(url)
        await asyncio.sleep(0.2)
        assert await db.hold_poller_lock()
        other = Database(url)
        try:
            assert not await other.hold_poller_lock()  # really held again, not just said
        finally:
            await other.dispose()
    finally:
        await db.dispose()


async def test_each_database_on_a_server_has_its_own_poller(url: str) -> None:
    """Advisory locks are per database: two deployments on one server each poll, and
    ending one's lock holder leaves the other's alone."""
    other_url = await create_database("pw_lock")
    here, there = Database(url), Database(other_url)
    try:
        assert await here.hold_poller_lock()
        assert await there.hold_poller_lock()  # another database: not blocked by `here`
        await end_the_lock_holders_session(url)  # ends exactly one session: this database's
        await asyncio.sleep(0.2)
        assert await there.hold_poller_lock()
        rival = Database(other_url)
        try:
            assert not await rival.hold_poller_lock()  # `there` still holds its lock
        finally:
            await rival.dispose()
    finally:
        await here.dispose()
        await there.dispose()
        await drop_database(other_url)
