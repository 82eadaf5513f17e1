"""At shutdown `Jobs.stop` cancels the job runs under way and waits for them, so that each
leaves its unit of work (rolled back, its connection back in the pool) before the engine is
disposed of. Before it, the runs were cancelled only when the event loop closed, after the
database had gone: SQLAlchemy then logged a traceback for each connection it had to drop
(seen in a fresh-clone CI run, tests/e2e/test_ops_run.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.adapters.console import CONSOLE_CHAT
from bot.scheduler import Jobs
from storage.database import Database


class StuckRound:
    """A delivery round that waits inside a unit of work, as a long round does."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.inside = asyncio.Event()

    async def drain(self) -> None:
        async with self.db.uow() as uow:
            await uow.chats.get(CONSOLE_CHAT)  # the session now holds a connection
            self.inside.set()
            await asyncio.Event().wait()


async def test_stop_unwinds_the_runs_under_way_before_the_database_goes(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.scheduler")
    stuck = StuckRound(db)
    jobs = Jobs(db, None, stuck)  # type: ignore[arg-type]
    run = asyncio.create_task(jobs.deliver())
    await asyncio.wait_for(stuck.inside.wait(), 10)
    assert jobs.running == {run}
    assert db.engine.pool.checkedout() == 1  # type: ignore[attr-defined]
    await jobs.stop()
    assert run.done() and not run.cancelled()  # it ended by itself, quietly
    assert jobs.running == set()
    assert db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert "job deliver stopped at shutdown" in caplog.text
    await jobs.stop()  # nothing under way: nothing to do
    await db.dispose()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class RoundAfterABeat(StuckRound):
    """A round that first runs another job inside its own (as a poll runs a delivery round),
    then waits inside a unit of work."""

    jobs: Jobs

    async def drain(self) -> None:
        await self.jobs.heartbeat()  # a job run inside this one, which ends first
        await super().drain()


async def test_a_job_run_inside_another_leaves_it_tracked(db: Database) -> None:
    stuck = RoundAfterABeat(db)
    jobs = stuck.jobs = Jobs(db, None, stuck)  # type: ignore[arg-type]
    run = asyncio.create_task(jobs.deliver())
    await asyncio.wait_for(stuck.inside.wait(), 10)
    assert jobs.running == {run}  # the inner run's end did not drop the outer one
    await jobs.stop()
    assert run.done() and db.engine.pool.checkedout() == 0  # type: ignore[attr-defined]
