"""What the ops endpoint costs the bot: CPU per answer of /metrics, /healthz and /readyz.

    .venv/bin/python -m bench.bench_ops [--chats 200] [--scrapes 200]

A fresh SQLite file holds the outbox of `--chats` instant chats (one alert row each, as in
bench_delivery) and a Metrics with every series recorded; the endpoint (`bot.ops`, as
`bot.app.ops_endpoint` composes it, on a running scheduler) serves them. A client in
another process asks each path `--scrapes` times, one request after the other; this
process's CPU time over those requests, divided by their number, is the cost of one
answer (the client's CPU is not in it). At Prometheus's usual 15 s interval, one scrape
of each path costs the bot that much CPU every 15 s; the last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from datetime import UTC, date, datetime
from typing import Any

from bench.delivery_run import queue_alerts
from bench.harness import fresh_database
from bot.app import ops_endpoint, running
from bot.config import Settings
from bot.metrics import Metrics
from bot.scheduler import Jobs, build_scheduler
from bot.topics.catalog import load_catalog
from storage.database import Database

PATHS = ("/metrics", "/healthz", "/readyz")
# The client: asks `path` `count` times, one after the other, and says when it is done.
CLIENT = """
import sys, urllib.request
url, count = sys.argv[1], int(sys.argv[2])
for _ in range(count):
    urllib.request.urlopen(url, timeout=30).read()
"""


def recorded_metrics() -> Metrics:
    """A Metrics with a series of each kind recorded, as a running bot has them."""
    metrics = Metrics()
    now = datetime.now(UTC)
    metrics.polled(now, 1504)
    metrics.poll_failed("rss", "timeout")
    metrics.tagging.observe(0.2)
    for platform in ("telegram", "slack"):
        metrics.sent(platform, "sent", 1000)
        metrics.limited(platform, 3.0)
        for _ in range(100):
            metrics.alert_sent(platform, date(2026, 11, 2), now)
    metrics.live(["all", "worker", "worker"])
    return metrics


async def cost_of(url: str, scrapes: int) -> float:
    """ms of this process's CPU per answer while another process asks `url` `scrapes` times."""
    cpu = time.process_time()
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", CLIENT, url, str(scrapes))
    if await child.wait() != 0:
        raise SystemExit(f"the client failed on {url}")
    return 1000 * (time.process_time() - cpu) / scrapes


async def measure(chats: int, scrapes: int) -> dict[str, Any]:
    catalog = load_catalog()
    async with fresh_database("sqlite", "pw_ops") as url:
        rows = await queue_alerts(url, [3000 + n for n in range(chats)], 1, catalog)
        db = Database(url)
        settings = Settings(_env_file=None, PAPERWATCH_OPS_PORT="0")  # type: ignore[call-arg]
        scheduler = build_scheduler(Jobs(db, None, None), role="worker")
        try:
            async with (
                ops_endpoint(settings, db, scheduler, recorded_metrics()) as port,
                running(scheduler),
            ):
                base = f"http://127.0.0.1:{port}"
                costs = {path: await cost_of(base + path, scrapes) for path in PATHS}
        finally:
            await db.dispose()
    return {"outbox_rows": rows, "scrapes": scrapes, "cpu_ms_per_answer": costs}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chats", type=int, default=200, help="outbox rows (one per chat)")
    parser.add_argument("--scrapes", type=int, default=200, help="requests of each path")
    args = parser.parse_args()
    figures = asyncio.run(measure(args.chats, args.scrapes))
    print(f"ops endpoint, {figures['outbox_rows']} outbox rows, {args.scrapes} requests a path:")
    for path, ms in figures["cpu_ms_per_answer"].items():
        share = ms / 15_000 * 100
        print(
            f"  {path:9} {ms:6.2f} ms of the bot's CPU an answer ({share:.3f}% of a core at 15 s)"
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
