"""What paperwatch counts for Prometheus: every metric, defined in this one place.

One `Metrics` per process, built by the composition root (`bot.app`) and passed to the
services that record into it (poll, ingest, deliver, peers); the ops endpoint
(`bot.ops`) serves its registry at /metrics. The registry is the instance's own, never
prometheus_client's global one, so two instances (two tests) never see each other's
counts. A service built without one gets a fresh instance that nobody reads.

Recording costs a dictionary lookup and a lock: nothing next to a send or a query.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from bot.arxiv.calendar import ANNOUNCE_TIME, EASTERN
from bot.outbox_payloads import OutboxStatus

if TYPE_CHECKING:
    from bot.ports import UnitOfWork

ROLES = ("all", "poller", "worker")  # what a process runs: `paperwatch run --role`
# Seconds from arXiv's announcement to an alert's send: the goal is minutes, a poller
# down for a day is a day.
LAG_BUCKETS = (60, 300, 600, 1200, 1800, 3600, 7200, 14400, 43200, 86400, 172800, 604800)
PAPER_BUCKETS = (0, 10, 50, 100, 250, 500, 1000, 2000, 5000)
# Seconds the outbox count at scrape time may take.
SCRAPE_TIMEOUT = 2.0
TAGGING_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


def announced_at(listing: date) -> datetime:
    """When arXiv announced the listing dated `listing`: 20:00 US Eastern the day before."""
    return datetime.combine(listing - timedelta(days=1), ANNOUNCE_TIME, tzinfo=EASTERN)


class Metrics:
    """The metrics of one process, in a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._define_indexing(self.registry)
        self._define_delivery(self.registry)

    def _define_indexing(self, registry: CollectorRegistry) -> None:
        """Polling arXiv and tagging what it brings."""
        self.last_poll = Gauge(
            "paperwatch_last_successful_poll_timestamp_seconds",
            "When arXiv's feed was last read without error (unix seconds)",
            registry=registry,
        )
        self.poll_papers = Histogram(
            "paperwatch_poll_papers",
            "New papers stored by each successful poll of the daily feed",
            buckets=PAPER_BUCKETS,
            registry=registry,
        )
        self.poll_failures = Counter(
            "paperwatch_poll_failures",
            "Failed polls of arXiv (source rss or oai), by kind of failure",
            ["source", "kind"],
            registry=registry,
        )
        self.tagging = Histogram(
            "paperwatch_tagging_seconds",
            "Time to tag one stored listing (or page of a harvest) with the catalog and queries",
            buckets=TAGGING_BUCKETS,
            registry=registry,
        )

    def _define_delivery(self, registry: CollectorRegistry) -> None:
        """The outbox, its sends, and the processes sharing them."""
        self.outbox_rows = Gauge(
            "paperwatch_outbox_rows",
            "Outbox rows by status, read from the database at each scrape",
            ["status"],
            registry=registry,
        )
        self.messages = Counter(
            "paperwatch_messages",
            "Messages the outbox worker tried to send, by platform and result",
            ["platform", "result"],
            registry=registry,
        )
        self.rate_limited = Counter(
            "paperwatch_rate_limited",
            "Sends a platform refused with 429 (too many requests)",
            ["platform"],
            registry=registry,
        )
        self.rate_limited_wait = Counter(
            "paperwatch_rate_limited_wait_seconds",
            "Seconds the 429s asked to wait (retry_after), in all",
            ["platform"],
            registry=registry,
        )
        self.delivery_lag = Histogram(
            "paperwatch_delivery_lag_seconds",
            "From arXiv's announcement of a paper to the send of its instant alert",
            ["platform"],
            buckets=LAG_BUCKETS,
            registry=registry,
        )
        self.processes = Gauge(
            "paperwatch_processes",
            "Live paperwatch processes sharing the database, by role (at this one's last beat)",
            ["role"],
            registry=registry,
        )

    # --- recording, called by the services ------------------------------------------

    def polled(self, at: datetime, new_papers: int) -> None:
        self.last_poll.set(at.timestamp())
        self.poll_papers.observe(new_papers)

    def poll_failed(self, source: str, kind: str) -> None:
        self.poll_failures.labels(source, kind).inc()

    def sent(self, platform: str, result: str, count: int = 1) -> None:
        self.messages.labels(platform, result).inc(count)

    def limited(self, platform: str, wait: float) -> None:
        self.sent(platform, "rate_limited")
        self.rate_limited.labels(platform).inc()
        self.rate_limited_wait.labels(platform).inc(max(0.0, wait))

    def alert_sent(self, platform: str, listing: date | None, now: datetime) -> None:
        if listing is not None:
            lag = (now - announced_at(listing)).total_seconds()
            self.delivery_lag.labels(platform).observe(max(0.0, lag))

    def live(self, roles: Iterable[str]) -> None:
        """The roles of the live processes, one entry each."""
        counts = dict.fromkeys(ROLES, 0)
        for role in roles:
            counts[role] = counts.get(role, 0) + 1
        for role, count in counts.items():
            self.processes.labels(role).set(count)

    # --- at scrape time ------------------------------------------------------------

    async def exposition(self, uow_factory: Callable[[], UnitOfWork] | None = None) -> bytes:
        """The text format of every metric, with the outbox counted now (`uow_factory`);
        when the database does not answer within SCRAPE_TIMEOUT the outbox is left out
        rather than shown stale (/readyz says why)."""
        if uow_factory is not None:
            try:
                async with asyncio.timeout(SCRAPE_TIMEOUT), uow_factory() as uow:
                    counts = await uow.outbox.counts()
            except Exception:  # the database is down: the other metrics still matter
                self.outbox_rows.clear()
            else:
                self._outbox(counts)
        return generate_latest(self.registry)

    def _outbox(self, counts: Mapping[OutboxStatus, int]) -> None:
        for status in OutboxStatus:
            self.outbox_rows.labels(status.value).set(counts.get(status, 0))
