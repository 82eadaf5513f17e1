"""Fast polls in the hour after arXiv's feed switches to a new listing, end to end.

The bot's poller and jobs, the real httpx client against a local fake arXiv whose feed
switches listings at a chosen moment, a real database; time is a simulated clock that the
scheduler's own triggers step (tests/support/feed_switch.py), so nothing sleeps.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.arxiv.calendar import EASTERN
from bot.scheduler import POLL_TRIGGER, Jobs
from bot.services.poll import Poller
from storage.database import Database
from storage.models import OutboxRow
from tests.support.arxiv_server import FakeArxiv, serve_fake_arxiv
from tests.support.feed_switch import (
    RSS_PATH,
    SimClock,
    SwitchingFeed,
    follow_instantly,
    listing_rss,
    run_fast_polls,
    simulated_poller,
    switch_moment,
)

TUESDAY, WEDNESDAY, THURSDAY = date(2026, 10, 20), date(2026, 10, 21), date(2026, 10, 22)
FAST = timedelta(seconds=90)


def et(*args: int) -> datetime:
    return datetime(*args, tzinfo=EASTERN).astimezone(UTC)


@pytest.fixture
def fake() -> Iterator[FakeArxiv]:
    with serve_fake_arxiv() as server:
        yield server


@pytest.fixture
def clock() -> SimClock:
    return SimClock(et(2026, 10, 20, 12, 0))


@pytest.fixture
def feed(fake: FakeArxiv, clock: SimClock) -> SwitchingFeed:
    """Tuesday's listing until 00:07:10 Eastern on Wednesday, then Wednesday's."""
    switching = SwitchingFeed(
        clock,
        before=listing_rss(TUESDAY, 1),
        after=listing_rss(WEDNESDAY, 2),
        switch_at=switch_moment(WEDNESDAY) + timedelta(minutes=7, seconds=10),
    )
    fake.responder = switching
    return switching


@pytest.fixture
async def poller(
    db: Database, fake: FakeArxiv, clock: SimClock, small_catalog
) -> AsyncIterator[Poller]:
    made = simulated_poller(fake, db, clock, small_catalog)
    yield made
    await made.aclose()


@pytest.fixture
async def jobs(db: Database, poller: Poller, clock: SimClock, small_catalog) -> Jobs:
    """Tuesday's listing stored (by Tuesday's polls), a chat on instant alerts."""
    await follow_instantly(db)
    assert (await poller.poll_daily()).status == "stored"
    return Jobs(db, poller, None, small_catalog, clock=clock)


def _rss(feed: SwitchingFeed) -> list[tuple[datetime, int]]:
    return [(r.at, r.status) for r in feed.log if r.path == RSS_PATH]


def _gaps(feed: SwitchingFeed) -> list[float]:
    times = [r.at for r in feed.log]
    return [(b - a).total_seconds() for a, b in itertools.pairwise(times)]


async def _alerts_enqueued(db: Database) -> list[datetime]:
    async with db.engine.connect() as conn:
        rows = await conn.execute(select(OutboxRow.created_at).where(OutboxRow.kind == "alert"))
    return sorted(at if at.tzinfo else at.replace(tzinfo=UTC) for (at,) in rows)


async def test_fast_polls_get_304s_until_the_switch_then_ingest_and_stop_for_the_day(
    db, clock, feed, jobs
) -> None:
    tuesday_alert = await _alerts_enqueued(db)
    ticks = await run_fast_polls(jobs, clock, FAST, until=et(2026, 10, 22, 0, 10))
    wednesday = [et(2026, 10, 21, 0, 0) + FAST * k for k in range(6)]  # 00:00 ... 00:07:30
    thursday = [et(2026, 10, 22, 0, 0) + FAST * k for k in range(7)]  # 00:00 ... 00:09:00
    assert _rss(feed)[1:] == (
        [(at, 304) for at in wednesday[:-1]]
        + [(wednesday[-1], 200)]  # the first poll after the switch ingests...
        + [(at, 304) for at in thursday]  # ...and none follows until the next window
    )
    assert all(r.if_none_match for r in feed.log[1:])  # every fast poll is conditional
    assert len(ticks) > len(wednesday) + len(thursday)  # the other ticks asked nothing
    assert await jobs._poller.has_listing(WEDNESDAY)
    alerts = await _alerts_enqueued(db)
    assert len(alerts) == len(tuesday_alert) + 1  # one row for the chat for the new batch
    assert alerts[-1] == wednesday[-1]  # enqueued by the poll that ingested, 20 s after


async def test_requests_keep_the_politeness_spacing_whatever_the_interval(
    db, clock, feed, jobs
) -> None:
    """Ticks every second (the setting refuses under 30 s; the trigger is given 1 s here):
    the request spacer still holds every request 3 s after the one before."""
    start = switch_moment(WEDNESDAY)
    await run_fast_polls(jobs, clock, timedelta(seconds=1), until=start + timedelta(seconds=60))
    assert len(feed.log) > 15
    assert min(_gaps(feed)) >= 3.0
    asked = len(feed.log)
    clock.jump(start + timedelta(hours=1, minutes=5))  # a tick that fired long after its window
    await jobs.fast_poll()
    assert len(feed.log) == asked


async def test_outside_the_window_the_hourly_schedule_holds(db, clock, feed, jobs) -> None:
    """A whole Tuesday evening and Wednesday with both triggers: the scheduled polls at
    20:30-23:30 Eastern (each a conditional GET, after a catch-up look at OAI-PMH), then the
    fast ones from 00:00 until the listing is in, and nothing from then until Wednesday's
    20:30."""
    scheduled, moment = [], et(2026, 10, 20, 12, 0)
    while (moment := POLL_TRIGGER.get_next_fire_time(None, moment)) < et(2026, 10, 21, 21, 0):
        scheduled.append(moment)
        moment += timedelta(seconds=1)
    for at in scheduled[:4]:
        clock.jump(at)
        await jobs.poll()
        await jobs.fast_poll()  # outside the window: asks nothing
    await run_fast_polls(jobs, clock, FAST, until=scheduled[4])
    clock.jump(scheduled[4])
    await jobs.poll()
    fast = [et(2026, 10, 21, 0, 0) + FAST * k for k in range(6)]  # 00:00 ... 00:07:30
    expected = [*scheduled[:4], *fast, scheduled[4]]
    assert scheduled[4] == et(2026, 10, 21, 20, 30)
    at = [t for t, _ in _rss(feed)[1:]]
    assert len(at) == len(expected)
    # A scheduled poll's RSS request waits its 3 s after the catch-up's request to OAI-PMH.
    assert all(
        timedelta(0) <= a - e <= timedelta(seconds=3) for a, e in zip(at, expected, strict=True)
    )
    assert [s for _, s in _rss(feed)[1:]] == [304] * 9 + [200, 304]
    assert min(_gaps(feed)) >= 3.0
