"""Background jobs on the bot's own asyncio loop (APScheduler 3, AsyncIOScheduler).

Poller duties (one process at a time: a PostgreSQL advisory lock decides which):
- poll: on start-up, then Sunday to Thursday at 20:30, 21:30, 22:30 and 23:30 US
  Eastern (arXiv announces at 20:00; each costs one conditional GET). Each run first
  fills any gap through OAI-PMH. The feed itself only switches at midnight (below), so
  these find the listing the night's fast polls stored.
- poll-fast: arXiv's RSS feed switches to the new listing at 00:00 Eastern (Monday to
  Friday); from then, for an hour, a conditional GET every `fast_poll_interval` seconds
  (90) until that listing is stored, then none until the next switch. A tick while
  another poll runs is skipped (one request in flight; the client spaces them).
- momentum: after each poll, a heads-up to chats whose followed topic spikes.
- digests: every minute, chats whose `next_digest_at` has come get their digest
  (found through that indexed column, never one job per chat).

Worker duties (any number of processes share the outbox):
- deliver: every `deliver_interval` seconds, and right after a poll, once the other
  processes have made room for this one.

Every process:
- heartbeat: every `heartbeat_interval` seconds, to share the flood limits and the
  chats with the other live processes (`bot.services.peers`); in a process that may
  poll it also checks the poller lock, so that one lost to a database restart is
  taken again (by this process or another) within a beat, and a process that lost it
  steps down.

Jobs coalesce, never overlap (`max_instances=1`) and run late within a grace period.
A job never raises into the scheduler: failures are logged and retried next time.

At shutdown the scheduler starts no more jobs and `Jobs.stop` cancels those still running
and waits for them, so that each closes its database session before the engine goes.
Whether all this is alive is `bot.liveness`'s.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

from bot.arxiv.calendar import (
    ANNOUNCE_TIME,
    ANNOUNCE_WEEKDAYS,
    EASTERN,
    LATE_POLLS,
    POLL_DELAY,
    latest_fast_window,
    next_fast_poll,
)
from bot.arxiv.parse import FeedError
from bot.arxiv.responses import ArxivHTTPError
from bot.log_json import log_context
from bot.metrics import ROLES
from bot.services.deliver import Deliverer
from bot.services.digests import fold_due_digests
from bot.services.like_recalibration import recalibrate_due
from bot.services.peers import Peers
from bot.services.poll import Poller, PollOutcome
from bot.services.spikes import check_spikes
from bot.topics.catalog import Catalog
from storage.database import Database

log = logging.getLogger(__name__)


def poll_trigger() -> CronTrigger:
    """arXiv's calendar (`bot.arxiv.calendar`) as a cron trigger: on announcement days,
    POLL_DELAY after the announcement, then hourly LATE_POLLS more times."""
    first = (datetime.combine(datetime.min, ANNOUNCE_TIME) + POLL_DELAY).time()
    days = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # date.weekday() order
    return CronTrigger(
        day_of_week=",".join(days[day] for day in sorted(ANNOUNCE_WEEKDAYS)),
        hour=f"{first.hour}-{first.hour + LATE_POLLS}",
        minute=first.minute,
        timezone=EASTERN,
    )


POLL_TRIGGER = poll_trigger()
# The window's last tick (at its end) still polls when it fires up to this late.
LATE_TICK = timedelta(minutes=1)


class FastPollTrigger(BaseTrigger):
    """Every `interval` inside arXiv's feed-switch window (`bot.arxiv.calendar.fast_window`),
    never outside it."""

    def __init__(self, interval: timedelta) -> None:
        self.interval = interval

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        after = previous_fire_time + timedelta(microseconds=1) if previous_fire_time else now
        return next_fast_poll(after, self.interval)

    def __str__(self) -> str:
        return f"every {self.interval.total_seconds():g} s in arXiv's feed-switch window"


STOP_WAIT = 10.0  # seconds `Jobs.stop` waits for cancelled runs to unwind


async def poll_job(poller: Poller) -> PollOutcome | None:
    """Catch up if the bot was down, then take today's announcement."""
    try:
        await poller.catch_up()
    except (ArxivHTTPError, FeedError) as exc:
        log.warning("arxiv catch-up failed, retried at the next poll: %s", exc)
    return await daily_poll(poller)


async def daily_poll(poller: Poller) -> PollOutcome | None:
    """One poll of the RSS feed; failures are logged, never raised."""
    try:
        outcome = await poller.poll_daily()
    except Exception:
        log.exception("arxiv poll crashed; retried at the next poll")
        return None
    if outcome.status == "failed":
        log.warning("arxiv poll failed source=%s error=%s", outcome.source, outcome.error)
    return outcome


def _stops_quietly(job: Callable[[Jobs], Awaitable[None]]) -> Callable[[Jobs], Awaitable[None]]:
    """A job cancelled at shutdown ends without a scary traceback in the log."""

    @functools.wraps(job)
    async def run(self: Jobs) -> None:
        task = asyncio.current_task()
        # A run inside another (a poll's delivery round) leaves the task to the outer run.
        mine = task is not None and task not in self.running
        if mine:
            self.running.add(task)  # type: ignore[arg-type]
        with log_context(job=job.__name__):  # JSON log lines name the job
            try:
                await job(self)
            except asyncio.CancelledError:
                log.info("job %s stopped at shutdown", job.__name__)
            finally:
                if mine:
                    self.running.discard(task)  # type: ignore[arg-type]

    return run


class Jobs:
    """The jobs of one process, by role."""

    def __init__(
        self,
        db: Database,
        poller: Poller | None,
        deliverer: Deliverer | None,
        catalog: Catalog | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        peers: Peers | None = None,
    ) -> None:
        self._db = db
        self._peers = peers
        self._catalog = catalog
        self._poller = poller
        self._deliverer = deliverer
        self._clock = clock
        self._polling = asyncio.Lock()  # one poll at a time, scheduled or fast
        self.running: set[asyncio.Task[object]] = set()  # the runs under way

    async def stop(self) -> None:
        """Cancel the runs under way (call it once the scheduler starts no more) and wait
        up to `STOP_WAIT` seconds for them to unwind: each leaves its unit of work, which
        rolls back and returns its connection, before the database is disposed of."""
        if under_way := [task for task in self.running if not task.done()]:
            for task in under_way:
                task.cancel()
            await asyncio.wait(under_way, timeout=STOP_WAIT)

    @_stops_quietly
    async def poll(self) -> None:
        if self._poller is None or not await self._db.hold_poller_lock():
            return
        async with self._polling:
            await poll_job(self._poller)
        await self._after_poll()

    @_stops_quietly
    async def fast_poll(self) -> None:
        """A tick of the feed-switch window: poll unless the listing the window waits for
        is stored, another poll is running, or the window is over (a late tick)."""
        if self._poller is None or self._polling.locked():
            return
        now = self._clock()
        start, end = latest_fast_window(now)
        late = now - end > LATE_TICK  # a tick that fired long after its window (a misfire)
        if now < start or late or await self._poller.has_listing(start.date()):
            return
        if not await self._db.hold_poller_lock():
            return
        async with self._polling:  # the catch-up is the scheduled polls' work, not this
            outcome = await daily_poll(self._poller)
        if outcome is not None and outcome.status == "stored" and outcome.new:
            await self._after_poll()

    async def _after_poll(self) -> None:
        """Spike heads-ups, the new alerts out at once (workers also look every
        `deliver_interval`), then like sets recalibrated (`bot.services.like_recalibration`)."""
        if self._catalog is not None:
            try:
                await check_spikes(self._db.uow, self._catalog, self._clock())
            except Exception:
                log.exception("momentum check failed; retried after the next poll")
        await self.deliver()
        try:
            await recalibrate_due(self._db.uow, self._catalog, self._clock())
        except Exception:
            log.exception("like-set recalibration failed; retried after the next poll")

    @_stops_quietly
    async def digests(self) -> None:
        if not await self._db.hold_poller_lock():
            return
        try:
            await fold_due_digests(self._db.uow, self._clock())
        except Exception:
            log.exception("digest tick failed; retried in a minute")

    @_stops_quietly
    async def heartbeat(self) -> None:
        if self._poller is not None:
            # Checked each beat too (not only at the minutely digest tick), so a lock lost
            # to a database restart is taken up again, here or elsewhere, within a beat.
            await self._db.hold_poller_lock()
        if self._peers is None:
            return
        try:
            await self._peers.beat()
        except Exception:
            log.exception("heartbeat failed; the share stays as it was until the next one")

    @_stops_quietly
    async def deliver(self) -> None:
        if self._deliverer is None or (self._peers is not None and not self._peers.ready()):
            return
        try:
            await self._deliverer.drain()
        except Exception:
            log.exception("delivery round failed; retried at the next tick")


# Jobs whose runs may outlast their interval as a matter of course (a long delivery
# round, a heartbeat held up by a busy database): the ticks skipped meanwhile are not
# news. A skipped poll or digest tick is, and stays in the log.
_OVERLAP_EXPECTED = frozenset({"deliver", "heartbeat", "poll-fast"})


class _OverlapIsExpected(logging.Filter):
    """Drops APScheduler's "skipped: maximum number of running instances reached"
    warning for the jobs of `_OVERLAP_EXPECTED` only."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "maximum number of running instances reached" not in record.getMessage():
            return True
        job = record.args[0] if isinstance(record.args, tuple) and record.args else None
        return getattr(job, "id", None) not in _OVERLAP_EXPECTED


_OVERLAP = _OverlapIsExpected()


def build_scheduler(
    jobs: Jobs,
    *,
    role: str = "all",
    deliver_interval: float = 10.0,
    heartbeat_interval: float = 5.0,
    poll_on_start: bool = True,
    fast_poll_interval: float = 90.0,
) -> AsyncIOScheduler:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    logging.getLogger("apscheduler.scheduler").addFilter(_OVERLAP)
    scheduler = AsyncIOScheduler(
        timezone=UTC,
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 3600},
    )
    if role in ("all", "poller"):
        scheduler.add_job(jobs.poll, POLL_TRIGGER, id="poll")
        if fast_poll_interval > 0:
            fast = FastPollTrigger(timedelta(seconds=fast_poll_interval))
            scheduler.add_job(jobs.fast_poll, fast, id="poll-fast")
        scheduler.add_job(jobs.digests, "interval", seconds=60, id="digests")
        if poll_on_start:
            scheduler.add_job(jobs.poll, "date", run_date=datetime.now(UTC), id="poll-on-start")
    if role in ("all", "worker"):
        scheduler.add_job(jobs.deliver, "interval", seconds=deliver_interval, id="deliver")
    scheduler.add_job(jobs.heartbeat, "interval", seconds=heartbeat_interval, id="heartbeat")
    return scheduler
