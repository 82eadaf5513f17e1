"""bot.metrics: each Metrics counts in a registry of its own, and the few rules it applies."""

from __future__ import annotations

from datetime import UTC, date, datetime

import prometheus_client

from bot.arxiv.parse import FeedError
from bot.arxiv.responses import ArxivBusyError, ArxivHTTPError, ArxivUnreachableError
from bot.metrics import Metrics, announced_at
from bot.services.poll import failure_kind


def test_each_instance_counts_alone_and_never_in_the_global_registry() -> None:
    first, second = Metrics(), Metrics()
    first.sent("telegram", "sent", 3)
    labels = {"platform": "telegram", "result": "sent"}
    assert first.registry.get_sample_value("paperwatch_messages_total", labels) == 3
    assert second.registry.get_sample_value("paperwatch_messages_total", labels) is None
    assert prometheus_client.REGISTRY.get_sample_value("paperwatch_messages_total", labels) is None


def test_the_lag_starts_at_the_announcement_the_evening_before_the_listing() -> None:
    monday = date(2026, 11, 30)
    assert announced_at(monday) == datetime(2026, 11, 30, 1, 0, tzinfo=UTC)  # Sun 20:00 EST
    metrics = Metrics()
    metrics.alert_sent("slack", monday, datetime(2026, 11, 30, 1, 10, tzinfo=UTC))
    sample = metrics.registry.get_sample_value
    assert sample("paperwatch_delivery_lag_seconds_sum", {"platform": "slack"}) == 600
    assert sample("paperwatch_delivery_lag_seconds_bucket", {"platform": "slack", "le": "600.0"})


def test_every_role_is_shown_even_with_no_process() -> None:
    metrics = Metrics()
    metrics.live(["worker", "worker", "all"])
    counts = {
        role: metrics.registry.get_sample_value("paperwatch_processes", {"role": role})
        for role in ("all", "poller", "worker")
    }
    assert counts == {"all": 1, "poller": 0, "worker": 2}


def test_poll_failures_are_named_by_kind() -> None:
    assert failure_kind(TimeoutError()) == "timeout"
    assert failure_kind(ArxivUnreachableError("refused")) == "unreachable"
    assert failure_kind(ArxivBusyError("503", 30.0)) == "busy"
    assert failure_kind(ArxivHTTPError("404")) == "http"
    assert failure_kind(FeedError("not a feed")) == "feed"
