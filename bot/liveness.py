"""Whether the scheduler (`bot.scheduler`) is alive, for the ops endpoint's /healthz: it
runs, its pulse (a job that only stamps the time, on the loop) is fresh, and no job whose
runs are short has run past its bound (the heartbeat). A poll, digest or delivery round may
rightly run long (a poll ends with a delivery round as long as the outbox), and what arXiv
or a chat platform does never enters into it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobEvent,
)
from apscheduler.schedulers.asyncio import AsyncIOScheduler

PULSE_JOB = "pulse"


class Liveness:
    """Whether a scheduler is alive: running, its pulse fresh within `stale_after`
    seconds, and no job of `bounds` (job id -> seconds) running for longer than its
    bound. Watches the scheduler from before it starts."""

    def __init__(
        self,
        scheduler: AsyncIOScheduler,
        *,
        stale_after: float = 60.0,
        bounds: Mapping[str, float] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._scheduler = scheduler
        self._stale_after = stale_after
        self._bounds = dict(bounds or {})
        self._clock = clock
        self._pulse = clock()
        self._started: dict[str, float] = {}  # job id -> when its run began
        scheduler.add_job(
            self._beat,
            "interval",
            seconds=stale_after / 4,
            id=PULSE_JOB,
            next_run_time=datetime.now(UTC),  # at once when the scheduler starts
        )
        scheduler.add_listener(
            self._seen,
            EVENT_JOB_SUBMITTED | EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED,
        )

    async def _beat(self) -> None:  # a coroutine: it runs on the loop, not in a thread
        self._pulse = self._clock()

    def _seen(self, event: JobEvent) -> None:
        if event.code == EVENT_JOB_SUBMITTED:
            self._started[event.job_id] = self._clock()
        else:
            self._started.pop(event.job_id, None)

    def problem(self) -> str | None:
        """None while alive; otherwise what is wrong, in one line."""
        if not self._scheduler.running:
            return "the scheduler is not running"
        now = self._clock()
        if (age := now - self._pulse) > self._stale_after:
            return f"the scheduler has run no job for {age:.0f} s (limit {self._stale_after:g} s)"
        for job_id, since in self._started.items():
            bound = self._bounds.get(job_id)
            if bound is not None and now - since > bound:
                return f"job {job_id} has run for {now - since:.0f} s, over its {bound:g} s"
        return None
