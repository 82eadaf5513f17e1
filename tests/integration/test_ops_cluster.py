"""/readyz and /healthz while the PostgreSQL server stops and comes back, on a throwaway
cluster of the test's own (its own port; always stopped and removed).

Readiness follows the database: 503 once it is gone, 200 once it is back. Liveness
does not: a worker whose heartbeats fail at once (the connection is refused) is still
alive, and restarting it would not bring the database back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from bot.scheduler import Jobs, build_scheduler
from bot.services.peers import Peers
from storage.database import Database
from tests.conftest import REQUIRE_PG
from tests.integration.test_ops_endpoint import answer_is, endpoint, ops_settings, until
from tests.support.postgres import Cluster, postgres_bindir, throwaway_cluster


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


@pytest.mark.postgres
async def test_readyz_follows_the_database_down_and_back(cluster: Cluster) -> None:
    db = Database(cluster.url)
    await db.upgrade()
    peers = Peers(db.uow, "worker", interval=0.2)
    scheduler = build_scheduler(
        Jobs(db, None, None, peers=peers), role="worker", heartbeat_interval=0.2
    )
    try:
        async with endpoint(ops_settings(PAPERWATCH_OPS_STALE_AFTER="2"), db, scheduler) as http:
            await until(answer_is(http, "/readyz", 200), "ready at start")
            await until(answer_is(http, "/healthz", 200), "alive at start")

            await asyncio.to_thread(cluster.stop)
            stopped = time.monotonic()
            down = await until(
                answer_is(http, "/readyz", 503), "not ready once the server stops", 30
            )
            to_503 = time.monotonic() - stopped
            assert down.text.startswith("the database cannot be reached: ")
            await asyncio.sleep(3 * 0.2)  # three failed heartbeats: still alive
            assert (await http.get("/healthz")).status_code == 200

            await asyncio.to_thread(cluster.start)
            started = time.monotonic()
            await until(answer_is(http, "/readyz", 200), "ready once the server is back", 30)
            to_200 = time.monotonic() - started
    finally:
        if not (cluster.data / "postmaster.pid").exists():
            await asyncio.to_thread(cluster.start)  # for any later test of the module
        await db.dispose()
    print(f"readyz 503 {to_503:.1f} s after the stop, 200 {to_200:.1f} s after the start")
