"""The ops endpoint as the composition root serves it (`bot.app.ops_endpoint`): real
scheduler, real database (SQLite and PostgreSQL), real HTTP on 127.0.0.1.

/healthz tells a dead or wedged scheduler from a slow arXiv; /readyz says whether the
database answers at head; the endpoint is not there at all without a port.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.app import build_poller, ops_endpoint, running
from bot.config import Settings
from bot.liveness import PULSE_JOB
from bot.metrics import Metrics
from bot.scheduler import Jobs, build_scheduler
from bot.topics.catalog import Catalog
from storage.database import Database


def ops_settings(**values: Any) -> Settings:
    """The endpoint on a free port (0), whatever the environment says."""
    values.setdefault("PAPERWATCH_OPS_PORT", "0")
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


async def until(check: Callable[[], Any], what: str, seconds: float = 15.0) -> Any:
    """Wait for `await check()` to be truthy; returns it."""
    deadline = time.monotonic() + seconds
    while not (result := await check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        await asyncio.sleep(0.05)
    return result


@contextlib.asynccontextmanager
async def endpoint(
    settings: Settings, db: Database, scheduler: AsyncIOScheduler, *, start: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
    """The endpoint served, the scheduler running (unless not `start`), a client for it."""
    async with contextlib.AsyncExitStack() as stack:
        port = await stack.enter_async_context(ops_endpoint(settings, db, scheduler, Metrics()))
        if start:
            await stack.enter_async_context(running(scheduler))
        yield await stack.enter_async_context(
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10)
        )


def answer_is(http: httpx.AsyncClient, path: str, status: int) -> Callable[[], Any]:
    async def check() -> httpx.Response | None:
        response = await http.get(path)
        return response if response.status_code == status else None

    return check


def worker_scheduler(db: Database) -> AsyncIOScheduler:
    """A worker's jobs with nothing to deliver: the delivery tick and the heartbeat."""
    return build_scheduler(Jobs(db, None, None), role="worker")


async def test_healthz_stays_200_while_arxiv_cannot_be_reached(
    db: Database, small_catalog: Catalog, closed_port: int
) -> None:
    settings = ops_settings(
        ARXIV_RSS_URL=f"http://127.0.0.1:{closed_port}/rss/",
        ARXIV_OAI_URL=f"http://127.0.0.1:{closed_port}/oai",
        ARXIV_MIN_REQUEST_INTERVAL="0",
    )
    metrics = Metrics()
    poller = build_poller(settings, db, small_catalog, metrics)
    scheduler = build_scheduler(Jobs(db, poller, None, small_catalog), role="poller")
    failures = 'paperwatch_poll_failures_total{kind="unreachable",source="rss"} 1.0'
    async with (
        contextlib.aclosing(poller),
        ops_endpoint(settings, db, scheduler, metrics) as port,
        running(scheduler),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
    ):

        async def poll_failed() -> bool:
            return failures in (await http.get("/metrics")).text

        await until(poll_failed, "the poll on start fails: arXiv cannot be reached")
        health = await http.get("/healthz")
        assert (health.status_code, health.text) == (200, "ok\n")
        assert (await http.get("/readyz")).status_code == 200


async def test_healthz_is_503_once_the_scheduler_is_shut_down(db: Database) -> None:
    scheduler = worker_scheduler(db)
    async with endpoint(ops_settings(), db, scheduler) as http:
        await until(answer_is(http, "/healthz", 200), "healthy at start")
        scheduler.shutdown(wait=False)
        health = await http.get("/healthz")
        assert (health.status_code, health.text) == (503, "the scheduler is not running\n")


async def test_healthz_is_503_before_the_scheduler_starts(db: Database) -> None:
    async with endpoint(ops_settings(), db, worker_scheduler(db), start=False) as http:
        assert (await http.get("/healthz")).status_code == 503


async def test_healthz_is_503_while_the_scheduler_runs_no_job(db: Database) -> None:
    """A paused scheduler stands for one that stopped running jobs: its pulse ages past
    PAPERWATCH_OPS_STALE_AFTER, and comes back when it runs again."""
    scheduler = worker_scheduler(db)
    async with endpoint(ops_settings(PAPERWATCH_OPS_STALE_AFTER="0.4"), db, scheduler) as http:
        await until(answer_is(http, "/healthz", 200), "healthy at start")
        scheduler.pause()
        stale = await until(answer_is(http, "/healthz", 503), "the pulse goes stale")
        assert stale.text.startswith("the scheduler has run no job for ")
        assert "(limit 0.4 s)" in stale.text
        scheduler.resume()
        await until(answer_is(http, "/healthz", 200), "healthy again once it runs jobs")


class StuckPeers:
    """A heartbeat that never returns (say, a database connection that hangs)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def beat(self) -> None:
        await self.release.wait()

    def ready(self) -> bool:
        return True


async def test_healthz_is_503_when_the_heartbeat_job_is_wedged(db: Database) -> None:
    peers = StuckPeers()
    scheduler = build_scheduler(
        Jobs(db, None, None, peers=peers),  # type: ignore[arg-type]
        role="worker",
        heartbeat_interval=0.05,
    )
    try:
        async with endpoint(ops_settings(PAPERWATCH_OPS_STALE_AFTER="0.4"), db, scheduler) as http:
            wedged = await until(answer_is(http, "/healthz", 503), "the heartbeat overruns")
            assert wedged.text.startswith("job heartbeat has run for ")
            assert "over its 0.4 s" in wedged.text
    finally:
        peers.release.set()


async def test_readyz_is_200_at_head_and_503_below_it(db: Database) -> None:
    async with endpoint(ops_settings(), db, worker_scheduler(db), start=False) as http:
        ready = await http.get("/readyz")
        assert (ready.status_code, ready.text) == (200, "ok\n")
        await db.downgrade("-1")
        behind = await http.get("/readyz")
        assert behind.status_code == 503
        assert "not at head" in behind.text and "paperwatch db upgrade" in behind.text
        await db.upgrade()
        assert (await http.get("/readyz")).status_code == 200


async def test_readyz_is_503_when_the_database_cannot_be_reached(
    backend: str, tmp_path: Path, closed_port: int
) -> None:
    if backend == "sqlite":
        folder = tmp_path / "data"
        folder.mkdir()
        db = Database(f"sqlite+aiosqlite:///{folder / 'pw.db'}")
        await db.upgrade()
    else:  # a server that refuses connections
        db = Database(f"postgresql+asyncpg://postgres@127.0.0.1:{closed_port}/test")
    try:
        async with endpoint(ops_settings(), db, worker_scheduler(db), start=False) as http:
            if backend == "sqlite":
                assert (await http.get("/readyz")).status_code == 200
                counted = (await http.get("/metrics")).text
                assert 'paperwatch_outbox_rows{status="pending"} 0.0' in counted
                await db.engine.dispose()  # no pooled connection keeps the file open
                shutil.rmtree(folder)  # the disk (or mount) holding the database is gone
            down = await http.get("/readyz")
            assert down.status_code == 503
            assert down.text.startswith("the database cannot be reached: ")
            metrics = await http.get("/metrics")  # the rest, without the outbox's rows
            assert metrics.status_code == 200 and "paperwatch_outbox_rows{" not in metrics.text
    finally:
        await db.dispose()


async def test_no_port_no_endpoint(db: Database) -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.ops_port is None
    scheduler = worker_scheduler(db)
    async with ops_endpoint(settings, db, scheduler, Metrics()) as port:
        assert port is None
        assert scheduler.get_job(PULSE_JOB) is None  # no pulse job either: nothing added


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_port_is_unset(monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    monkeypatch.setenv("PAPERWATCH_OPS_PORT", blank)
    assert Settings(_env_file=None).ops_port is None  # type: ignore[call-arg]
