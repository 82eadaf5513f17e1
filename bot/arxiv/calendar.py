"""arXiv's announcement calendar: when to expect a mailing, and when to poll for it.

arXiv announces new submissions Sunday to Thursday at 20:00 US Eastern time (so the
listings dated Monday to Friday), and not on its holidays. A weekend without a
mailing is normal, not a fault. Pure functions; time zones through zoneinfo.

The RSS feed follows later: arXiv's feed service (github.com/arXiv/arxiv-feed,
`get_arxiv_midnight`) serves the updates dated with today's date in New York, and tells
caches to keep a feed until the next midnight there. So the listing announced at 20:00
reaches the feed at 00:00 Eastern on its listing date (info.arxiv.org/help/rss: "updated
daily at midnight"). `fast_window` is the hour from then in which the bot polls every
minute or two until the listing is stored.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

EASTERN = ZoneInfo("America/New_York")
ANNOUNCE_TIME = time(20, 0)
ANNOUNCE_WEEKDAYS = frozenset({6, 0, 1, 2, 3})  # Sunday..Thursday (Monday is 0)
# When the scheduled poll runs (bot.scheduler turns this into its cron trigger): POLL_DELAY
# after each announcement (the feeds take a few minutes to update), then LATE_POLLS more
# times an hour apart, for a feed that is late (each costs one conditional GET).
POLL_DELAY = timedelta(minutes=30)
LATE_POLLS = 3
# The feed switches to a listing at 00:00 Eastern on its date; the fast polls run from
# then for FAST_WINDOW (a switch later than that is caught by the next day's polls).
FEED_SWITCH = time(0, 0)
FAST_WINDOW = timedelta(hours=1)


def announcements_after(
    moment: datetime, holidays: Collection[date] = (), *, limit: int = 400
) -> list[datetime]:
    """The next `limit` announcement instants strictly after `moment` (aware, Eastern)."""
    local = moment.astimezone(EASTERN)
    day = local.date()
    found: list[datetime] = []
    while len(found) < limit:
        instant = datetime.combine(day, ANNOUNCE_TIME, tzinfo=EASTERN)
        if (
            day.weekday() in ANNOUNCE_WEEKDAYS
            and listing_date(instant) not in holidays
            and instant > local
        ):
            found.append(instant)
        day += timedelta(days=1)
    return found


def next_announcement(moment: datetime, holidays: Collection[date] = ()) -> datetime:
    """The first announcement strictly after `moment`."""
    return announcements_after(moment, holidays, limit=1)[0]


def previous_announcement(moment: datetime, holidays: Collection[date] = ()) -> datetime:
    """The latest announcement at or before `moment`."""
    local = moment.astimezone(EASTERN)
    day = local.date()
    while True:
        instant = datetime.combine(day, ANNOUNCE_TIME, tzinfo=EASTERN)
        if (
            day.weekday() in ANNOUNCE_WEEKDAYS
            and listing_date(instant) not in holidays
            and instant <= local
        ):
            return instant
        day -= timedelta(days=1)


def listing_date(announcement: datetime) -> date:
    """The date arXiv prints on the listing an announcement publishes (the next day, Eastern)."""
    return (announcement.astimezone(EASTERN) + timedelta(days=1)).date()


SUBMISSION_CUTOFF = time(14, 0)


def estimated_listing_date(submitted: datetime, holidays: Collection[date] = ()) -> date:
    """The listing a first version submitted at `submitted` most likely appeared in.

    arXiv's daily cut-off is 14:00 Eastern: what arrives before it Monday to Thursday
    is announced at 20:00 that day; Sunday's announcement takes what arrived before
    Friday's cut-off, and Monday's what arrived after it. An estimate, used only where
    a source gives no listing date (OAI-PMH, the export API).
    """
    for announcement in announcements_after(submitted, holidays, limit=14):
        if submitted < _cutoff_for(announcement):
            return listing_date(announcement)
    return listing_date(next_announcement(submitted, holidays))


def _cutoff_for(announcement: datetime) -> datetime:
    day = announcement.date()
    if day.weekday() == 6:  # Sunday's announcement closes at Friday's cut-off
        day -= timedelta(days=2)
    return datetime.combine(day, SUBMISSION_CUTOFF, tzinfo=EASTERN)


def fast_window(moment: datetime, holidays: Collection[date] = ()) -> tuple[datetime, datetime]:
    """The fast-polling window (start, end) that holds `moment`, or else the next one.

    It opens when arXiv's feed switches to a listing (FEED_SWITCH on the listing date,
    Eastern) and lasts FAST_WINDOW; the listing it waits for is dated `start.date()`.
    """
    local = moment.astimezone(EASTERN)
    since = local - FAST_WINDOW - timedelta(days=1)
    for announcement in announcements_after(since, holidays, limit=16):
        start = datetime.combine(listing_date(announcement), FEED_SWITCH, tzinfo=EASTERN)
        if local < start + FAST_WINDOW:
            return start, start + FAST_WINDOW
    raise AssertionError("unreachable: 16 announcements reach past any moment")


def latest_fast_window(
    moment: datetime, holidays: Collection[date] = ()
) -> tuple[datetime, datetime]:
    """The fast-polling window that opened last at or before `moment` (it may be over)."""
    local = moment.astimezone(EASTERN)
    window = fast_window(local - timedelta(days=7), holidays)
    while (following := fast_window(window[1], holidays))[0] <= local:
        window = following
    return window


def next_fast_poll(
    after: datetime, interval: timedelta, holidays: Collection[date] = ()
) -> datetime:
    """The first fast poll at or after `after`: the window's start, then every `interval`
    while the window lasts, and its end (so a switch late in the window is caught too);
    past that, the next window's start."""
    start, end = fast_window(after, holidays)
    if after <= start:
        return start
    steps = -(-(after - start) // interval)  # ceiling division of timedeltas
    return min(start + steps * interval, end)
