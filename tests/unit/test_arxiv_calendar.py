"""arXiv's announcement calendar, across weekends, time zones and DST."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot.arxiv.calendar import (
    EASTERN,
    estimated_listing_date,
    fast_window,
    latest_fast_window,
    listing_date,
    next_announcement,
    previous_announcement,
)


def et(*args: int) -> datetime:
    return datetime(*args, tzinfo=EASTERN)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (et(2026, 9, 21, 10, 0), et(2026, 9, 21, 20, 0)),  # Monday morning -> that evening
        (et(2026, 9, 21, 20, 0), et(2026, 9, 22, 20, 0)),  # strictly after
        (et(2026, 9, 24, 21, 0), et(2026, 9, 27, 20, 0)),  # Thursday night -> Sunday
        (et(2026, 9, 25, 12, 0), et(2026, 9, 27, 20, 0)),  # Friday: no mailing
        (et(2026, 9, 26, 23, 0), et(2026, 9, 27, 20, 0)),  # Saturday: no mailing
        # DST ends on Sunday 1 Nov 2026: the announcement is still 20:00 local (01:00 UTC).
        (et(2026, 10, 30, 12, 0), datetime(2026, 11, 2, 1, 0, tzinfo=UTC)),
    ],
)
def test_next_announcement(now: datetime, expected: datetime) -> None:
    assert next_announcement(now) == expected


def test_an_instant_in_utc_gives_the_same_answer() -> None:
    assert next_announcement(datetime(2026, 9, 25, 1, 30, tzinfo=UTC)) == et(2026, 9, 27, 20, 0)


def test_holidays_are_skipped() -> None:
    # If the Monday 28 Sep listing were a holiday, Sunday's announcement would not happen.
    assert next_announcement(et(2026, 9, 25, 12, 0), holidays={date(2026, 9, 28)}) == et(
        2026, 9, 28, 20, 0
    )


def test_listing_dates_and_previous_announcement() -> None:
    assert listing_date(et(2026, 9, 27, 20, 0)) == date(2026, 9, 28)  # Sunday -> Monday
    assert listing_date(et(2026, 9, 24, 20, 0)) == date(2026, 9, 25)  # Thursday -> Friday
    assert previous_announcement(et(2026, 9, 26, 12, 0)) == et(2026, 9, 24, 20, 0)
    assert previous_announcement(et(2026, 9, 24, 20, 0)) == et(2026, 9, 24, 20, 0)


@pytest.mark.parametrize(
    ("submitted", "listed"),
    [
        (et(2026, 9, 21, 10, 0), date(2026, 9, 22)),  # Mon before 14:00 -> Tue listing
        (et(2026, 9, 21, 15, 0), date(2026, 9, 23)),  # Mon after the cut-off -> Wed
        (et(2026, 9, 24, 15, 0), date(2026, 9, 28)),  # Thu afternoon -> Sunday's -> Mon
        (et(2026, 9, 25, 13, 0), date(2026, 9, 28)),  # Fri morning -> Sunday's -> Mon
        (et(2026, 9, 25, 15, 0), date(2026, 9, 29)),  # Fri afternoon -> Monday's -> Tue
        (et(2026, 9, 26, 12, 0), date(2026, 9, 29)),  # Saturday -> Monday's -> Tue
    ],
)
def test_estimated_listing_date(submitted: datetime, listed: date) -> None:
    assert estimated_listing_date(submitted) == listed


@pytest.mark.parametrize(
    ("now", "start"),
    [
        (et(2026, 9, 22, 0, 30), et(2026, 9, 22, 0, 0)),  # inside Tuesday's window
        (et(2026, 9, 21, 20, 5), et(2026, 9, 22, 0, 0)),  # announced; the feed follows at 00:00
        (et(2026, 9, 25, 1, 0), et(2026, 9, 28, 0, 0)),  # Friday's window over -> Monday's
        (et(2026, 9, 26, 12, 0), et(2026, 9, 28, 0, 0)),  # Saturday: nothing until Monday
    ],
)
def test_fast_window_opens_when_the_feed_switches(now: datetime, start: datetime) -> None:
    assert fast_window(now) == (start, et(start.year, start.month, start.day, 1, 0))


@pytest.mark.parametrize(
    ("now", "start"),
    [
        (et(2026, 9, 22, 0, 30), et(2026, 9, 22, 0, 0)),  # inside it
        (et(2026, 9, 22, 1, 0, 5), et(2026, 9, 22, 0, 0)),  # just over
        (et(2026, 9, 21, 23, 59), et(2026, 9, 21, 0, 0)),  # the day before's, long over
        (et(2026, 9, 27, 12, 0), et(2026, 9, 25, 0, 0)),  # Sunday: Friday's
    ],
)
def test_latest_fast_window_is_the_one_opened_last(now: datetime, start: datetime) -> None:
    assert latest_fast_window(now)[0] == start
