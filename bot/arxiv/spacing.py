"""Request spacing for arXiv: at most one request every `interval` seconds.

Pure logic with injected clocks and sleep; the shared part (other processes) goes
through the small `RequestStamp` port, which storage implements
(`storage.politeness.DatabaseRequestStamp`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Protocol

Sleep = Callable[[float], Awaitable[None]]
WallClock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class RequestStamp(Protocol):
    """Where the processes sharing a database keep the (UTC) time of the last arXiv request."""

    async def last(self) -> datetime | None: ...

    async def record(self, at: datetime) -> None: ...


class RequestSpacer:
    """Keeps successive requests at least `interval` seconds apart (clocks injectable).

    Within the process the rule is exact (a lock and a monotonic clock). With `shared`,
    each request also waits until `interval` has passed since the last request any
    process recorded (wall clock, UTC), and records its own. That part is best effort:
    two processes that read the stamp at the same instant both go, and a stamp from a
    clock running ahead never makes us wait longer than one interval.
    """

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        *,
        shared: RequestStamp | None = None,
        wall: WallClock = _utcnow,
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._shared = shared
        self._wall = wall
        self._next = float("-inf")
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            delay = max(self._next - self._clock(), await self._shared_delay())
            if delay > 0:
                await self._sleep(delay)
            self._next = self._clock() + self.interval
            if self._shared is not None:
                await self._shared.record(self._wall())

    async def _shared_delay(self) -> float:
        """What is left of the interval since the last request of any process."""
        last = await self._shared.last() if self._shared is not None else None
        if last is None:
            return 0.0
        elapsed = (self._wall() - last).total_seconds()
        return min(self.interval, self.interval - elapsed)

    def hold_off(self, seconds: float) -> None:
        """No request before `seconds` from now (a server's Retry-After, already clamped)."""
        self._next = max(self._next, self._clock() + seconds)
