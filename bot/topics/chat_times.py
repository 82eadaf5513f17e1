"""When a chat's digest is due and when its quiet hours end, in its own time zone.

Pure functions over `Chat` settings; zoneinfo does the time zones, so daylight
saving changes move the UTC instant and keep the local time. A local time that
does not exist on a spring-forward day is taken as the instant the clock jumps to.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.domain import Chat, DigestMode

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def zone(name: str) -> ZoneInfo:
    """The chat's zone; an unknown name (it was validated when set) falls back to UTC."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def parse_hhmm(text: str) -> time:
    """ "8:00", "08:00" or "20:30" -> time; ValueError otherwise."""
    hours, _, minutes = text.strip().partition(":")
    if not (hours.isdigit() and minutes.isdigit() and len(minutes) == 2 and len(hours) <= 2):
        raise ValueError(f"not a time of day (HH:MM): {text!r}")
    return time(int(hours), int(minutes))


def next_digest_at(chat: Chat, after: datetime) -> datetime | None:
    """The first digest instant strictly after `after` (UTC), or None without digests."""
    if chat.digest_mode not in (DigestMode.DAILY, DigestMode.WEEKLY):
        return None
    tz = zone(chat.timezone)
    at = parse_hhmm(chat.digest_time)
    day = after.astimezone(tz).date()
    for offset in range(8 if chat.digest_mode is DigestMode.WEEKLY else 2):
        candidate_day = day + timedelta(days=offset)
        if chat.digest_mode is DigestMode.WEEKLY and candidate_day.weekday() != chat.digest_weekday:
            continue
        instant = datetime.combine(candidate_day, at, tzinfo=tz).astimezone(UTC)
        if instant > after:
            return instant
    # Only reached for a daily digest whose time already passed today and tomorrow's did too
    # (impossible), or a weekly one on the same weekday next week.
    return datetime.combine(day + timedelta(days=7), at, tzinfo=tz).astimezone(UTC)


def quiet_until(chat: Chat, now: datetime) -> datetime | None:
    """When the chat's quiet hours end, if `now` falls inside them."""
    if not chat.quiet_start or not chat.quiet_end:
        return None
    tz = zone(chat.timezone)
    local = now.astimezone(tz)
    start, end = parse_hhmm(chat.quiet_start), parse_hhmm(chat.quiet_end)
    current = local.time().replace(second=0, microsecond=0, tzinfo=None)
    if start <= end:
        inside = start <= current < end
        end_day = local.date()
    else:  # across midnight, e.g. 22:00-07:00
        inside = current >= start or current < end
        end_day = local.date() + timedelta(days=1) if current >= start else local.date()
    if not inside:
        return None
    return datetime.combine(end_day, end, tzinfo=tz).astimezone(UTC)
