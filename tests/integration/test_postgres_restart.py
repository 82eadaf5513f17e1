"""A PostgreSQL restart under two poller processes, on a throwaway cluster of the
test's own (its own port, started once for this module, always stopped).

The restart ends every session, and with it the session advisory lock that makes one
process the poller. Afterwards exactly one process is the poller again, every chat
gets exactly one digest per day, nothing waiting is lost, and both processes are
back (heartbeats and the lock) within 10 s of the server being up again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from bot.scheduler import Jobs
from bot.services.peers import Peers
from storage.database import Database
from tests.conftest import REQUIRE_PG
from tests.integration.test_delivery import Clock
from tests.integration.test_digest_folding import (
    CHATS,
    DUE,
    digest_chats_with_waiting_papers,
    digests_per_chat,
)
from tests.support.postgres import Cluster, postgres_bindir, throwaway_cluster

RECOVERY = 10.0  # seconds, the goal


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    bindir = postgres_bindir()
    if bindir is None:
        message = "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin"
        if REQUIRE_PG:
            pytest.fail(message + "; CI requires them", pytrace=False)
        pytest.skip(message + " (install postgresql to run this test)")
    with throwaway_cluster(bindir) as started:
        yield started


class Process:
    """What one `paperwatch run --role poller` process does for this test: each tick
    asks for the poller lock, folds due digests if it holds it, and beats."""

    def __init__(self, url: str, clock: Clock) -> None:
        self.db = Database(url)
        self.peers = Peers(self.db.uow, "poller", interval=0.2)
        self.jobs = Jobs(self.db, None, None, clock=clock, peers=self.peers)
        self.poller: bool | None = None
        self.asked_at = self.beat_at = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.poller = await self.db.hold_poller_lock()
            self.asked_at = time.monotonic()
            await self.jobs.digests()
            try:
                await self.peers.beat()
                self.beat_at = time.monotonic()
            except Exception as exc:  # the server is restarting
                logging.getLogger(__name__).info("beat failed: %s", exc)
            await asyncio.sleep(0.1)


async def until(condition, seconds: float, what: str) -> float:  # type: ignore[no-untyped-def]
    """Wait for `condition()` (awaited when it is a coroutine); returns the seconds."""
    started = time.monotonic()
    while True:
        result = condition()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return time.monotonic() - started
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds:g} s: {what}")
        await asyncio.sleep(0.05)


@pytest.mark.postgres
async def test_a_restart_under_two_pollers(cluster: Cluster) -> None:
    setup = Database(cluster.url)
    await setup.upgrade()
    clock = Clock(DUE - timedelta(minutes=1))
    await digest_chats_with_waiting_papers(setup, DUE)
    await setup.dispose()

    first, second = Process(cluster.url, clock), Process(cluster.url, clock)
    stop = asyncio.Event()
    tasks = [asyncio.create_task(first.run(stop))]
    try:
        await until(lambda: first.poller, 30, "the first process takes the poller lock")
        tasks.append(asyncio.create_task(second.run(stop)))
        await until(lambda: second.poller is False, 30, "the second process is not the poller")

        clock.advance(minutes=1)  # the first day's digests fall due
        await until(lambda: _all_have(first.db, 1), 30, "every chat gets its first day's digest")

        await asyncio.to_thread(cluster.restart)
        restarted = time.monotonic()
        # The next day's papers arrive and their digests fall due while the two
        # processes find out what the restart did to them.
        fresh = Database(cluster.url)
        try:
            await digest_chats_with_waiting_papers(fresh, DUE + timedelta(days=1), wave=1)
        finally:
            await fresh.dispose()
        clock.advance(days=1)

        def recovered() -> bool:
            answered = min(first.asked_at, second.asked_at, first.beat_at, second.beat_at)
            return answered > restarted and [first.poller, second.poller].count(True) == 1

        await until(recovered, RECOVERY, "exactly one poller, both beating again")
        took = time.monotonic() - restarted
        await until(lambda: _all_have(first.db, 2), RECOVERY, "every chat gets the next digest")
        await asyncio.sleep(1.0)  # a second poller would fold (and show) by now
        assert [first.poller, second.poller].count(True) == 1
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await first.db.dispose()
        await second.db.dispose()

    check = Database(cluster.url)
    try:
        per_chat = await digests_per_chat(check)
        async with check.uow() as uow:
            counts = await uow.outbox.counts()
    finally:
        await check.dispose()
    assert len(per_chat) == CHATS and set(per_chat.values()) == {2}, per_chat  # none twice
    assert counts == {"pending": 2 * CHATS, "folded": 2 * CHATS}  # every item in a digest
    print(f"recovered {took:.1f} s after the restart")


async def _all_have(db: Database, digests: int) -> bool:
    try:
        per_chat = await digests_per_chat(db)
    except Exception:  # the server is restarting
        return False
    return len(per_chat) == CHATS and min(per_chat.values()) >= digests
