"""Queueing alerts and draining them through the real Telegram messenger: what every phase
of bench_delivery runs.

Chats (instant alerts) follow one topic and real papers arrive on it, stored with
`bot.services.ingest.store`, which queues one alert row per chat; a `Deliverer` then drains the
outbox through a `TelegramAdapter` started with `receive_updates=False` against a fake Bot
API at `base_url`. The limits below are Telegram's, which the fake enforces when asked to.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import functools
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from bench.fixtures import FIXTURES, read_paper_file
from bench.harness import fresh_database
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.config import Settings
from bot.domain import ChatKind, ChatRef, Paper, Platform, SubscriptionKind
from bot.metrics import Metrics
from bot.ops import Checks, serving
from bot.services.deliver import Deliverer
from bot.services.ingest import store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from storage.readiness import Readiness

TOKEN = "123456:BENCH-token"
GLOBAL_PER_S = 30.0
CHAT_PER_S = 1.0
GROUP_PER_MIN = 20
TOPIC = ("rl-for-llm-agents", "RL for LLM Agents")
UNLIMITED = 1_000_000.0
SAMPLE = FIXTURES / "papers_sample.jsonl"


def real_papers(count: int) -> list[Paper]:
    """Real arXiv papers (titles, abstracts, authors), so that rendering costs what it will."""
    papers = read_paper_file(SAMPLE)[:count]
    if len(papers) < count:
        raise SystemExit(f"{SAMPLE} has only {len(papers)} papers; asked for {count}")
    return papers


async def queue_alerts(url: str, chat_ids: list[int], papers: int, catalog: Catalog) -> int:
    """Every chat (instant alerts) follows one topic; `papers` new papers arrive on it.
    The database at `url` is migrated; returns the alert rows queued."""
    db = Database(url)
    async with db.uow() as uow:
        for external in chat_ids:
            kind = ChatKind.PRIVATE if external > 0 else ChatKind.GROUP
            chat = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, str(external)), kind)
            await uow.chats.update(chat.id, digest_mode="instant")
            await uow.subscriptions.add(
                chat.id, SubscriptionKind.TOPIC, TOPIC[0], TOPIC[1], TOPIC[0]
            )
        batch = [
            replace(paper, announced=date(2026, 11, 2), tags=(TOPIC[1],))
            for paper in real_papers(papers)
        ]
        await store(uow, batch, catalog, datetime.now(UTC))
        await uow.commit()
        counts = await uow.outbox.counts()
    await db.dispose()
    return counts.get("pending", 0)


def settings_for(base_url: str, url: str, *, unlimited: bool) -> Settings:
    """Settings as the worker would read them; `unlimited` lifts the bot's flood limits."""
    values: dict[str, Any] = {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": base_url,
        "PAPERWATCH_DATABASE_URL": url,
    }
    if unlimited:
        values |= {
            "TELEGRAM_MESSAGES_PER_SECOND": UNLIMITED,
            "TELEGRAM_CHAT_MESSAGES_PER_SECOND": UNLIMITED,
            "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": UNLIMITED,
        }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


# A scraper in a process of its own (its CPU is not the bot's), as Prometheus would be;
# every second, ten times as often as a usual 10-15 s scrape interval.
SCRAPER = """
import sys, time, urllib.request
while True:
    for path in ("/metrics", "/healthz", "/readyz"):
        urllib.request.urlopen(sys.argv[1] + path, timeout=10).read()
    time.sleep(1.0)
"""


@contextlib.contextmanager
def scraping(port: int) -> Iterator[None]:
    child = subprocess.Popen([sys.executable, "-c", SCRAPER, f"http://127.0.0.1:{port}"])
    try:
        yield
    finally:
        child.kill()
        child.wait()


@contextlib.asynccontextmanager
async def ops_served(db: Database, metrics: Metrics, on: bool) -> AsyncIterator[None]:
    """With `on`, the ops endpoint serves the deliverer's metrics and a scraper reads them."""
    if not on:
        yield
        return
    checks = Checks(
        live=lambda: None,
        ready=Readiness(db).problem,
        metrics=functools.partial(metrics.exposition, db.uow),
    )
    async with serving(checks, "127.0.0.1", 0) as port:
        with scraping(port):
            yield


@dataclass(slots=True)
class Run:
    """What one delivery run did, seen from the bot's side."""

    messages: int
    started: float  # time.monotonic() when delivery began
    cpu_seconds: float  # this process's CPU time over the run
    complete: bool
    outbox: dict[str, int]


async def deliver(
    base_url: str,
    chat_ids: list[int],
    papers: int,
    *,
    unlimited: bool,
    give_up_after: float,
    profile: cProfile.Profile | None = None,
    ops: bool = False,
) -> Run:
    """Queue alerts on a fresh SQLite file and drain them through the real messenger
    (with `ops`, while the ops endpoint serves its metrics to a scraper)."""
    catalog = load_catalog()
    async with fresh_database("sqlite", "pw_delivery") as url, contextlib.AsyncExitStack() as stack:
        rows = await queue_alerts(url, chat_ids, papers, catalog)  # one per chat
        db = Database(url)
        adapter = TelegramAdapter(
            settings_for(base_url, url, unlimited=unlimited),
            REGISTRY,
            Context(uow=db.uow, catalog=catalog),
        )
        await adapter.start(receive_updates=False)
        metrics = Metrics()
        deliverer = Deliverer(db.uow, {"telegram": adapter.messenger}, catalog, metrics=metrics)
        complete = False
        outbox: dict[str, int] = {}
        try:
            await stack.enter_async_context(ops_served(db, metrics, ops))
            if profile is not None:
                profile.enable()
            cpu, started = time.process_time(), time.monotonic()
            deadline = started + give_up_after
            while time.monotonic() < deadline:
                await deliverer.drain()
                async with db.uow() as uow:
                    outbox = await uow.outbox.counts()
                if outbox.get("sent", 0) >= rows:
                    complete = True
                    break
                await asyncio.sleep(0.02)  # rows waiting out a 429 become due later
            cpu = time.process_time() - cpu
        finally:
            if profile is not None:
                profile.disable()
            await stack.aclose()
            await adapter.stop()
            await db.dispose()
    return Run(len(chat_ids) * papers, started, cpu, complete, outbox)
