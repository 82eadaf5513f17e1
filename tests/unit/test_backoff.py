"""The delivery backoff: exponential from 5 s, with full jitter, capped at an hour."""

from __future__ import annotations

import random

from bot.services.deliver import backoff


def test_backoff_grows_then_stays_under_an_hour() -> None:
    random.seed(14)
    for attempt, ceiling in [(1, 5), (2, 10), (3, 20), (8, 640), (9, 1280), (10, 2560)]:
        waits = [backoff(attempt) for _ in range(200)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits), (attempt, min(waits), max(waits))
    for attempt in (11, 30, 10_000):  # a day of failures never waits more than an hour
        waits = [backoff(attempt) for _ in range(200)]
        assert all(1800 <= w <= 3600 for w in waits), attempt
