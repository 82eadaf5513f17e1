"""/timezone and the times of /digest and /quiet, typed in odd ways (issue 14, row 13)."""

from __future__ import annotations

import pytest

from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def settings(db: Database) -> tuple:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
    assert chat is not None
    return (
        chat.timezone,
        chat.digest_mode,
        chat.digest_time,
        chat.digest_weekday,
        chat.quiet_start,
        chat.quiet_end,
    )


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("utc", "UTC"),
        ("UTC", "UTC"),
        ("Etc/UTC", "Etc/UTC"),
        ("etc/utc", "Etc/UTC"),
        ("europe/berlin", "Europe/Berlin"),
        ("AMERICA/ARGENTINA/BUENOS_AIRES", "America/Argentina/Buenos_Aires"),
    ],
)
async def test_time_zones_in_any_case_are_stored_in_their_iana_spelling(
    db: Database, ctx: Context, typed: str, stored: str
) -> None:
    answer = await say(ctx, f"/timezone {typed}")
    assert f"time zone {stored}." in answer
    assert (await settings(db))[0] == stored


@pytest.mark.parametrize(
    "typed", ["right/UTC", "posix/Europe/Berlin", "RIGHT/utc", "localtime", "EST", "Mars/Olympus"]
)
async def test_other_zone_files_are_refused_and_change_nothing(
    db: Database, ctx: Context, typed: str
) -> None:
    await say(ctx, "/timezone Europe/Paris")
    before = await settings(db)
    answer = await say(ctx, f"/timezone {typed}")
    assert "is not a time zone I know" in answer and "Nothing was changed" in answer
    assert "Usage: /timezone" in answer
    assert await settings(db) == before


@pytest.mark.parametrize(
    "line",
    [
        "/digest daily ᧚:00",  # NEW TAI LUE THAM DIGIT ONE: isdigit(), but int() refuses it
        "/digest daily ٠٨:٠٠",  # Arabic-Indic digits: int() would accept them
        "/digest daily 25:00",
        "/digest daily 7:5",
        "/digest daily 07:30:00",
        "/digest weekly monday ᧚:00",
        "/digest weekly ٠٨:٠٠",
        "/digest daily 99999999999999999999:00",
        "/digest daily 24",
        "/digest daily 123",
        "/digest weekly monday 25",
    ],
)
async def test_digest_times_are_ascii_hh_mm(db: Database, ctx: Context, line: str) -> None:
    await say(ctx, "/digest weekly friday 09:15")
    before = await settings(db)
    answer = await say(ctx, line)
    assert "Write the time as HH:MM, e.g. 07:30. Nothing was changed." in answer
    assert "Usage: /digest" in answer
    assert "invalid literal" not in answer and "must be in" not in answer
    assert await settings(db) == before


@pytest.mark.parametrize(
    "hours", ["٠٨:٠٠-٠٩:٠٠", "᧚:00-07:00", "22:00-٠٧:٠٠", "24:00-07:00", "22-٧", "22", "22-"]
)
async def test_quiet_hours_are_ascii_hh_mm(db: Database, ctx: Context, hours: str) -> None:
    await say(ctx, "/quiet 22:00-07:00")
    before = await settings(db)
    answer = await say(ctx, f"/quiet {hours}")
    assert (
        "Write the hours as HH:MM-HH:MM, e.g. 22:00-07:00 or 22-7. Nothing was changed." in answer
    )
    assert await settings(db) == before


async def test_ascii_times_still_work(db: Database, ctx: Context) -> None:
    assert "A daily digest at 07:05" in await say(ctx, "/digest daily 7:05")
    assert "on Monday at 18:30" in await say(ctx, "/digest weekly mon 18:30")
    assert "Quiet hours 22:00-07:00" in await say(ctx, "/quiet 22:00 - 07:00")


async def test_a_whole_hour_may_be_written_alone(db: Database, ctx: Context) -> None:
    """ "/quiet 23-7" and "/digest daily 8" are how people write hours; they mean :00."""
    assert "A daily digest at 08:00" in await say(ctx, "/digest daily 8")
    assert "on Friday at 17:00" in await say(ctx, "/digest weekly fri 17")
    assert "on Monday at 06:00" in await say(ctx, "/digest weekly 6 monday")
    assert "Quiet hours 23:00-07:00" in await say(ctx, "/quiet 23-7")
    assert "Quiet hours 22:30-06:00" in await say(ctx, "/quiet 22:30 - 6")


async def test_quiet_alone_says_how_things_stand_and_changes_nothing(
    db: Database, ctx: Context
) -> None:
    answer = await say(ctx, "/quiet")
    assert answer.startswith("No quiet hours: instant alerts are sent at any hour.")
    assert "Usage: /quiet" in answer
    await say(ctx, "/timezone Europe/Berlin")
    await say(ctx, "/quiet 23-7")
    before = await settings(db)
    answer = await say(ctx, "/quiet")
    assert answer.startswith("Quiet hours 23:00-07:00 (Europe/Berlin): instant alerts wait")
    assert await settings(db) == before


async def test_pause_and_resume_said_twice_say_how_things_stand(db: Database, ctx: Context) -> None:
    assert "Not paused" in (await say(ctx, "/resume"))
    assert (await say(ctx, "/pause")).startswith("Paused. Nothing is sent until /resume")
    assert (await say(ctx, "/pause")).startswith("Already paused: nothing is sent until /resume")
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
    assert chat is not None and chat.paused
    assert (await say(ctx, "/resume")).startswith("Resumed. What waited will arrive shortly.")
    assert (await say(ctx, "/resume")).startswith("Not paused: papers are sent as /settings shows")
