"""Per-destination spacing (Slack posts): a margin over the platform's figure."""

from __future__ import annotations

import asyncio

import pytest

from bot.adapters.slack.limits import KeyedLimiter


@pytest.fixture
async def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The event loop's clock, moved by hand (aiolimiter reads loop.time())."""
    now = [1000.0]
    monkeypatch.setattr(asyncio.get_running_loop(), "time", lambda: now[0])
    return now


async def test_one_destination_waits_more_than_exactly_one_second(clock: list[float]) -> None:
    bucket = KeyedLimiter(1.0)("C0PAPERS1")
    await bucket.acquire()
    clock[0] += 1.0
    assert not bucket.has_capacity()  # exactly 1/rate later is too soon: jitter eats it
    clock[0] += 0.11
    assert bucket.has_capacity()


async def test_destinations_do_not_wait_for_each_other(clock: list[float]) -> None:
    limiter = KeyedLimiter(1.0)
    await limiter("C1").acquire()
    assert limiter("C2").has_capacity()
    assert limiter("C1") is limiter("C1")
