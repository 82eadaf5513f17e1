"""/metrics after a real poll and a real delivery: the poller reads a fake arXiv, the
outbox worker sends through the real PTB client to a fake Bot API (which answers one
send with a 429), and the endpoint serves what they counted, parsed back with
prometheus_client's own text parser.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.app import build_deliverer, build_peers, build_poller
from bot.config import Settings
from bot.metrics import Metrics
from bot.ops import Checks, serving
from bot.topics.catalog import load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from storage.readiness import Readiness
from tests.e2e.test_telegram import FAST_LIMITS, TOKEN
from tests.support.arxiv_server import Canned, serve_fake_arxiv
from tests.support.telegram_server import serve_fake_telegram

SMALL_RSS = Path(__file__).parents[1] / "fixtures" / "arxiv" / "rss" / "msudars_laya-reader"
ALICE = 111

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of the exposition, by (name, labels)."""
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


async def test_a_poll_and_a_delivery_move_the_metrics(db: Database) -> None:
    catalog = load_catalog()
    metrics = Metrics()
    with serve_fake_telegram() as fake, serve_fake_arxiv() as arxiv:
        arxiv.add("/rss/cs.LG+cs.AI", Canned((SMALL_RSS / "arxiv_rss.xml").read_bytes()))
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            TELEGRAM_BOT_TOKEN=TOKEN,
            TELEGRAM_API_BASE_URL=fake.base_url,
            ARXIV_RSS_URL=arxiv.url + "/rss/",
            ARXIV_OAI_URL=arxiv.url + "/oai",
            ARXIV_CATEGORIES="cs.LG,cs.AI",
            ARXIV_MIN_REQUEST_INTERVAL="0",
            **FAST_LIMITS,
        )
        adapter = TelegramAdapter(settings, REGISTRY, Context(uow=db.uow, catalog=catalog))
        messengers = {"telegram": adapter.messenger}
        deliverer = build_deliverer(settings, db, messengers, catalog, "p", metrics)  # type: ignore[arg-type]
        peers = build_peers(settings, db, "all", "p", deliverer, {}, metrics)
        checks = Checks(
            live=lambda: None,
            ready=Readiness(db).problem,
            metrics=functools.partial(metrics.exposition, db.uow),
        )
        await adapter.start()
        try:
            async with (
                contextlib.aclosing(build_poller(settings, db, catalog, metrics)) as poller,
                serving(checks, "127.0.0.1", 0) as port,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http,
            ):
                before = samples((await http.get("/metrics")).text)
                for command in ("/follow cat:cs.LG OR cat:cs.AI", "/digest instant"):
                    fake.push_message(ALICE, command)
                    count = len(fake.messages_for(ALICE))
                    await fake.async_wait_until(lambda f, n=count: len(f.messages_for(ALICE)) > n)
                replies = len(fake.messages_for(ALICE))
                polled_from = time.time()
                assert (await poller.poll_daily()).new == 3
                await peers.beat()
                fake.fail_next("sendMessage", 429, retry_after=1, times=1)
                for _ in range(40):  # the 429's row is due again after retry_after
                    await deliverer.drain()
                    if len(fake.messages_for(ALICE)) == replies + 2:
                        break
                    await asyncio.sleep(0.25)
                response = await http.get("/metrics")
        finally:
            await adapter.stop()
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    after = samples(response.text)
    assert len(fake.messages_for(ALICE)) == replies + 2  # the two new papers in cs.LG or cs.AI

    assert value(before, "paperwatch_poll_papers_count") == 0
    assert value(after, "paperwatch_poll_papers_count") == 1
    assert value(after, "paperwatch_poll_papers_sum") == 3
    assert value(after, "paperwatch_last_successful_poll_timestamp_seconds") >= polled_from  # type: ignore[operator]
    assert value(after, "paperwatch_tagging_seconds_count") >= 1  # type: ignore[operator]

    telegram = {"platform": "telegram"}
    assert value(before, "paperwatch_messages_total", result="sent", **telegram) is None
    assert value(after, "paperwatch_messages_total", result="sent", **telegram) == 2
    assert value(after, "paperwatch_messages_total", result="rate_limited", **telegram) == 1
    assert value(after, "paperwatch_rate_limited_total", **telegram) == 1
    assert value(after, "paperwatch_rate_limited_wait_seconds_total", **telegram) == 1
    assert value(after, "paperwatch_delivery_lag_seconds_count", **telegram) == 2
    assert value(after, "paperwatch_delivery_lag_seconds_sum", **telegram) > 0  # type: ignore[operator]

    assert value(before, "paperwatch_outbox_rows", status="sent") == 0
    assert value(after, "paperwatch_outbox_rows", status="sent") == 1  # one row per chat
    assert value(after, "paperwatch_outbox_rows", status="pending") == 0
    assert value(after, "paperwatch_processes", role="all") == 1
    assert value(after, "paperwatch_processes", role="worker") == 0
