"""Background jobs on the bot's own asyncio loop (APScheduler 3, AsyncIOScheduler).

- poll: on start-up, then Sunday to Thursday at 20:30, 21:30, 22:30 and 23:30 US
  Eastern (arXiv announces at 20:00; the later runs catch a late feed and cost one
  conditional GET each). Each run first fills any gap through OAI-PMH.

Jobs coalesce, never overlap (`max_instances=1`) and run late within a grace period.
A job never raises into the scheduler: failures are logged and retried next time.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger

from bot.arxiv.client import ArxivHTTPError
from bot.arxiv.parse import FeedError
from bot.arxiv.poller import Poller, PollOutcome
from bot.arxiv.schedule import EASTERN

log = logging.getLogger(__name__)

POLL_TRIGGER = CronTrigger(
    day_of_week="sun,mon,tue,wed,thu", hour="20-23", minute=30, timezone=EASTERN
)


async def poll_job(poller: Poller) -> PollOutcome | None:
    """Catch up if the bot was down, then take today's announcement."""
    try:
        await poller.catch_up()
    except (ArxivHTTPError, FeedError) as exc:
        log.warning("arxiv catch-up failed, retried at the next poll: %s", exc)
    try:
        return await poller.poll_daily()
    except Exception:
        log.exception("arxiv poll crashed; retried at the next poll")
        return None


def build_scheduler(poller: Poller, *, poll_on_start: bool = True) -> AsyncIOScheduler:
    scheduler = AsyncIOScheduler(
        timezone=UTC,
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 3600},
    )
    scheduler.add_job(poll_job, POLL_TRIGGER, args=[poller], id="poll")
    if poll_on_start:
        scheduler.add_job(
            poll_job, "date", run_date=datetime.now(UTC), args=[poller], id="poll-on-start"
        )
    return scheduler
