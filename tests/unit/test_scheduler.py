"""The real APScheduler running the bot's jobs."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from bot.arxiv.calendar import EASTERN, POLL_DELAY, announcements_after, listing_date
from bot.scheduler import POLL_TRIGGER, ROLES, FastPollTrigger, Jobs, build_scheduler


class SlowDrain:
    def __init__(self) -> None:
        self.rounds = 0
        self.running = 0
        self.most_at_once = 0

    async def drain(self) -> int:
        self.rounds += 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        await asyncio.sleep(0.5)
        self.running -= 1
        return 0


async def test_a_delivery_round_longer_than_its_interval_is_not_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    slow = SlowDrain()
    jobs = Jobs(None, None, slow)  # type: ignore[arg-type]
    scheduler = build_scheduler(jobs, role="worker", deliver_interval=0.05, heartbeat_interval=60)
    with caplog.at_level(logging.WARNING):
        scheduler.start()
        try:
            await asyncio.sleep(0.8)
        finally:
            scheduler.shutdown(wait=False)
    assert slow.rounds >= 1 and slow.most_at_once == 1  # ticks during a round are skipped
    assert [r.getMessage() for r in caplog.records] == []


class SlowLock:
    """A database whose poller lock takes long to answer (and says no)."""

    def __init__(self) -> None:
        self.asked = 0

    async def hold_poller_lock(self) -> bool:
        self.asked += 1
        await asyncio.sleep(0.5)
        return False


async def test_a_skipped_digest_tick_is_logged_but_a_skipped_delivery_round_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    slow, lock = SlowDrain(), SlowLock()
    jobs = Jobs(lock, None, slow)  # type: ignore[arg-type]
    scheduler = build_scheduler(
        jobs, role="all", deliver_interval=0.05, heartbeat_interval=60, poll_on_start=False
    )
    scheduler.reschedule_job("digests", trigger="interval", seconds=0.05)
    with caplog.at_level(logging.WARNING):
        scheduler.start()
        try:
            await asyncio.sleep(0.8)
        finally:
            scheduler.shutdown(wait=False)
    assert lock.asked >= 1 and slow.rounds >= 1
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert skipped and all("Jobs.digests" in message for message in skipped), skipped


class Lock:
    def __init__(self) -> None:
        self.asked = 0

    async def hold_poller_lock(self) -> bool:
        self.asked += 1
        return True


async def test_a_process_that_may_poll_checks_its_lock_at_every_beat() -> None:
    lock = Lock()
    await Jobs(lock, object(), None).heartbeat()  # type: ignore[arg-type]
    assert lock.asked == 1
    await Jobs(lock, None, SlowDrain()).heartbeat()  # type: ignore[arg-type]  # a worker
    assert lock.asked == 1


def test_an_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown role 'boss'"):
        build_scheduler(Jobs(None, None, None), role="boss")  # type: ignore[arg-type]


def test_the_poll_runs_after_each_announcement_and_three_times_more_an_hour_apart() -> None:
    """The cron trigger and arXiv's calendar agree, across the end of daylight saving."""
    start = datetime(2026, 10, 20, 12, 0, tzinfo=UTC)  # 08:00 Eastern, a Tuesday
    expected = [
        announcement + POLL_DELAY + timedelta(hours=late)
        for announcement in announcements_after(start, limit=12)
        for late in range(4)
    ]
    fired: list[datetime] = []
    moment = start
    while len(fired) < len(expected):
        moment = POLL_TRIGGER.get_next_fire_time(None, moment)
        fired.append(moment)
        moment += timedelta(seconds=1)
    assert fired == expected


def test_fast_polls_run_every_interval_in_the_hour_after_each_feed_switch() -> None:
    """From 00:00 Eastern on each listing date (Monday to Friday, across the end of daylight
    saving), every 90 s for an hour, its end included; never on a weekend or outside it."""
    trigger = FastPollTrigger(timedelta(seconds=90))
    start = datetime(2026, 10, 27, 12, 0, tzinfo=UTC)  # a Tuesday; DST ends Sunday 1 Nov
    switches = [
        datetime.combine(listing_date(a), datetime.min.time(), tzinfo=EASTERN)
        for a in announcements_after(start, limit=6)
    ]
    expected = [s + timedelta(seconds=90 * k) for s in switches for k in range(41)]
    fired: list[datetime] = []
    previous = None
    while len(fired) < len(expected):
        previous = trigger.get_next_fire_time(previous, previous or start)
        fired.append(previous)
    assert fired == expected
    assert {moment.astimezone(EASTERN).weekday() for moment in fired} == {0, 1, 2, 3, 4}
    assert {moment.astimezone(UTC).hour for moment in fired} == {4, 5, 6}  # EDT, then EST
    # An interval that does not divide the hour still ends on the window's end.
    odd = FastPollTrigger(timedelta(seconds=100))
    last = odd.get_next_fire_time(switches[0] + timedelta(seconds=3500), start)
    assert last == switches[0] + timedelta(hours=1)


def test_the_fast_polls_are_a_job_of_pollers_only_and_can_be_turned_off() -> None:
    jobs = Jobs(None, None, None)  # type: ignore[arg-type]
    ids = {r: {j.id for j in build_scheduler(jobs, role=r).get_jobs()} for r in ROLES}
    assert "poll-fast" in ids["all"] and "poll-fast" in ids["poller"]
    assert "poll-fast" not in ids["worker"]
    off = build_scheduler(jobs, role="all", fast_poll_interval=0).get_jobs()
    assert "poll-fast" not in {j.id for j in off}
