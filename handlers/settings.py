"""Delivery settings: /digest, /timezone, /quiet, /pause, /resume, /mute, /unmute, /muted."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from rapidfuzz import process

from bot.domain import Chat, Command, DigestMode, Reply, Subscription
from bot.topics.card import tag_name
from bot.topics.chat_times import WEEKDAYS, next_digest_at, parse_hhmm
from bot.topics.resolve import resolve_topic
from handlers.base import QUERY_ARGS, CommandSpec, Context, with_args
from handlers.lookup import find_subscription
from handlers.mute_notes import broad_tag_warning, followed_tag_warning
from handlers.subscriptions import unknown_topic, usage_error


def _describe(chat: Chat) -> str:
    if chat.digest_mode is DigestMode.INSTANT:
        text = "New papers are sent as soon as they are announced"
    elif chat.digest_mode is DigestMode.DAILY:
        text = f"A daily digest at {chat.digest_time}"
    elif chat.digest_mode is DigestMode.WEEKLY:
        text = f"A weekly digest on {WEEKDAYS[chat.digest_weekday].title()} at {chat.digest_time}"
    else:
        text = "No alerts or digests (subscriptions are kept)"
    text += f", time zone {chat.timezone}."
    if chat.quiet_start and chat.quiet_end:
        text += f" Quiet hours {chat.quiet_start}-{chat.quiet_end}."
    if chat.empty_digest_note and chat.digest_mode in (DigestMode.DAILY, DigestMode.WEEKLY):
        text += " A digest with nothing new sends a one-line note."
    if chat.paused:
        text += " Paused: /resume to restart."
    return text


# ASCII digits only ("᧚:00" is no time); a whole hour may be written alone ("7", "22").
_HHMM = re.compile(r"[0-9]{1,2}(:[0-9]{2})?")


def _hhmm(text: str) -> str:
    """ "7:30" -> "07:30", "7" -> "07:00"; ValueError with a readable message for anything
    else."""
    try:
        if not _HHMM.fullmatch(text):
            raise ValueError(text)
        return parse_hhmm(text if ":" in text else f"{text}:00").strftime("%H:%M")
    except ValueError:
        raise ValueError("Write the time as HH:MM, e.g. 07:30.") from None


def _parse_digest(args: str) -> dict[str, object]:
    """ "daily 07:30" -> settings; ValueError with a readable message otherwise."""
    words = args.lower().split()
    if not words:
        raise ValueError("Which mode?")
    mode, rest = words[0], words[1:]
    if mode == "note":
        if rest not in (["on"], ["off"]):
            raise ValueError("Write /digest note on or /digest note off.")
        return {"empty_digest_note": rest == ["on"]}
    if mode in ("instant", "off"):
        if rest:
            raise ValueError(f"/digest {mode} takes nothing after it.")
        return {"digest_mode": mode}
    if mode == "daily" and len(rest) <= 1:
        values: dict[str, object] = {"digest_mode": mode}
        if rest:
            values["digest_time"] = _hhmm(rest[0])
        return values
    if mode == "weekly" and len(rest) <= 2:
        values = {"digest_mode": mode}
        for word in rest:
            if ":" in word or (word.isascii() and word.isdigit()):
                values["digest_time"] = _hhmm(word)
            else:
                day = next((d for d in WEEKDAYS if d.startswith(word[:3])), None)
                if day is None or len(word) < 3:
                    raise ValueError(f"{word!r} is not a day of the week.")
                values["digest_weekday"] = WEEKDAYS.index(day)
        return values
    raise ValueError(f"I don't understand {args!r}.")


def settings_lines(chat: Chat | None) -> tuple[str, ...]:
    """How papers reach a chat, and how to change it: what /digest alone shows."""
    current = _describe(chat) if chat else "A daily digest at 08:00, time zone UTC (default)."
    return (current, f"Change it with {DIGEST.usage}")


async def digest(cmd: Command, ctx: Context) -> Reply:
    """Choose instant alerts, a daily or weekly digest, or nothing."""
    if not cmd.args:
        async with ctx.uow() as uow:
            chat = await uow.chats.get(cmd.chat)
        return Reply(lines=settings_lines(chat))
    try:
        values = _parse_digest(cmd.args)
    except ValueError as exc:
        return usage_error(DIGEST.usage, f"{exc} Nothing was changed.")
    now = ctx.clock()
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        await uow.chats.update(chat.id, **values)
        chat = await uow.chats.get_by_id(chat.id)
        assert chat is not None
        await uow.chats.update(chat.id, next_digest_at=next_digest_at(chat, now))
        if chat.digest_mode is DigestMode.INSTANT:
            await uow.outbox.release_held(chat.id, now)
        await uow.commit()
    return Reply(lines=(_describe(chat),), changes_chat=True)


@cache
def _zones() -> dict[str, str]:
    """Lower-case IANA name -> its canonical spelling. Areas with a city ("Europe/Berlin",
    "Etc/UTC") and "UTC" itself; not the bare legacy names ("EST", "localtime") nor the
    `right/` and `posix/` variants (which `available_timezones` never lists)."""
    names = [n for n in available_timezones() if "/" in n or n == "UTC"]
    return {n.lower(): n for n in names if not n.lower().startswith(("right/", "posix/"))}


def zone_name(text: str) -> str | None:
    """The canonical IANA spelling of `text` in any case ("utc" -> "UTC"), or None."""
    name = _zones().get(text.strip().lower())
    if name is None:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


async def timezone(cmd: Command, ctx: Context) -> Reply:
    """Set the chat's time zone (IANA name in any case, e.g. Europe/Berlin or utc)."""
    typed = cmd.args.strip()
    if not typed:  # only shows the setting
        async with ctx.uow() as uow:
            chat = await uow.chats.get(cmd.chat)
        zone = f"{chat.timezone}." if chat else "UTC (the default)."
        return Reply.text(f"This chat's time zone is {zone}", f"Usage: {TIMEZONE.usage}")
    name = zone_name(typed)
    if name is None:
        close = process.extract(typed, sorted(_zones().values()), limit=3, score_cutoff=60)
        hint = f" Did you mean: {', '.join(c[0] for c in close)}?" if close else ""
        shown = typed if len(typed) <= 60 else typed[:59] + "…"
        return usage_error(
            TIMEZONE.usage, f'"{shown}" is not a time zone I know.{hint} Nothing was changed.'
        )
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        await uow.chats.update(chat.id, timezone=name)
        chat = await uow.chats.get_by_id(chat.id)
        assert chat is not None
        await uow.chats.update(chat.id, next_digest_at=next_digest_at(chat, ctx.clock()))
        await uow.commit()
    return Reply(lines=(_describe(chat),), changes_chat=True)


async def quiet(cmd: Command, ctx: Context) -> Reply:
    """Hold instant alerts during quiet hours, e.g. /quiet 22:00-07:00 (or /quiet off)."""
    text = cmd.args.strip().lower()
    if not text:  # say how things stand, as /digest and /timezone do
        async with ctx.uow() as uow:
            chat = await uow.chats.get(cmd.chat)
        if chat and chat.quiet_start and chat.quiet_end:
            now = f"Quiet hours {chat.quiet_start}-{chat.quiet_end} ({chat.timezone}): instant"
            now += " alerts wait for their end."
        else:
            now = "No quiet hours: instant alerts are sent at any hour."
        return Reply.text(now, f"Usage: {QUIET.usage}")
    if text == "off":
        values: dict[str, object] = {"quiet_start": None, "quiet_end": None}
    else:
        start, _, end = text.partition("-")
        try:
            values = {"quiet_start": _hhmm(start.strip()), "quiet_end": _hhmm(end.strip())}
        except ValueError:
            return usage_error(
                QUIET.usage,
                "Write the hours as HH:MM-HH:MM, e.g. 22:00-07:00 or 22-7. Nothing was changed.",
            )
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        await uow.chats.update(chat.id, **values)
        chat = await uow.chats.get_by_id(chat.id)
        await uow.commit()
    assert chat is not None
    return Reply(lines=(_describe(chat),), changes_chat=True)


async def _set_paused(cmd: Command, ctx: Context, paused: bool) -> Reply:
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        was = chat.paused
        await uow.chats.update(chat.id, paused=paused)
        await uow.commit()
    if was == paused:  # said twice: say how things stand, not that something happened
        if paused:
            return Reply.text("Already paused: nothing is sent until /resume; nothing is lost.")
        return Reply.text("Not paused: papers are sent as /settings shows; /pause stops them.")
    if paused:
        return Reply(
            lines=("Paused. Nothing is sent until /resume; nothing is lost.",), changes_chat=True
        )
    return Reply(lines=("Resumed. What waited will arrive shortly.",), changes_chat=True)


async def pause(cmd: Command, ctx: Context) -> Reply:
    """Stop sending alerts and digests for now."""
    return await _set_paused(cmd, ctx, True)


async def resume(cmd: Command, ctx: Context) -> Reply:
    """Start sending again."""
    return await _set_paused(cmd, ctx, False)


def _split_scope(text: str) -> tuple[str, str | None]:
    """ "Web Agents in RL for LLM Agents" -> ("Web Agents", "RL for LLM Agents")."""
    head, sep, tail = text.rpartition(" in ")
    return (head, tail) if sep and head.strip() and tail.strip() else (text, None)


async def mute(cmd: Command, ctx: Context) -> Reply:
    """Never send papers with this tag (optionally only within one followed topic)."""
    if not cmd.args:
        return usage_error(MUTE.usage, "Which tag?")
    tag_text, scope_text = _split_scope(cmd.args)
    resolution = resolve_topic(tag_text, ctx.catalog)
    if resolution.topic is None:
        return unknown_topic(tag_text, resolution.suggestions, changing=True)
    tag = resolution.topic
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        scope = ""
        scope_label = ""
        if scope_text is not None:
            subs = await uow.subscriptions.for_chat(chat.id)
            sub = find_subscription(scope_text, subs, ctx.catalog)
            if sub is None:
                return Reply.text(
                    f'You don\'t follow "{scope_text}", so there is nothing to mute it in.',
                    "Nothing was changed. /list shows what you follow.",
                    is_error=True,
                )
            scope, scope_label = sub.tag, sub.label
        created = await uow.mutes.add(chat.id, tag.slug, scope)
        await uow.commit()
    where = f" in {scope_label}" if scope_label else ""
    if not created:
        return Reply.text(f"{tag.name} is already muted{where}.")
    async with ctx.uow() as uow:
        # muted everywhere: say so when the tag is on much of what arrives
        broad = None if scope else await broad_tag_warning(uow, tag, ctx.clock().date())
        followed = await followed_tag_warning(uow, chat.id, tag.slug, scope)
    muted_line = f"Muted {tag.name}{where}: such papers will not be sent."
    return Reply(
        lines=(muted_line, *filter(None, [broad, followed]), f"/unmute {tag.name} undoes it."),
        changes_chat=True,
    )


async def unmute(cmd: Command, ctx: Context) -> Reply:
    """Send papers with this tag again."""
    if not cmd.args:
        return usage_error(UNMUTE.usage, "Which tag? /muted lists them.")
    resolution = resolve_topic(cmd.args, ctx.catalog)
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        removed = 0
        if chat is not None and resolution.topic is not None:
            removed = await uow.mutes.remove(chat.id, resolution.topic.slug)
            await uow.commit()
    if not removed:
        return Reply.text(f'"{cmd.args}" is not muted here. /muted lists what is.', is_error=True)
    assert resolution.topic is not None
    return Reply(lines=(f"Unmuted {resolution.topic.name}.",), changes_chat=True)


def muted_lines(
    mutes: Sequence[tuple[str, str]], subs: Sequence[Subscription], ctx: Context
) -> tuple[str, ...]:
    """A chat's muted tags (each `(tag, scope)`), named: what /muted shows."""
    if not mutes:
        return ("Nothing is muted.", f"Usage: {MUTE.usage}")
    labels = {s.tag: s.label for s in subs}
    lines = ["Muted:"]
    for tag, scope in sorted(mutes):
        name = tag_name(ctx.catalog, tag, subs)
        lines.append(f"• {name}" + (f" (in {labels.get(scope, scope)})" if scope else ""))
    return tuple(lines)


async def muted(cmd: Command, ctx: Context) -> Reply:
    """List the muted tags."""
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        mutes = await uow.mutes.for_chat(chat.id) if chat else []
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    return Reply(lines=muted_lines(mutes, subs, ctx))


DIGEST = CommandSpec(
    "digest",
    digest,
    "how papers reach you: instant, daily, weekly or off",
    "/digest instant | daily [HH:MM] | weekly [day] [HH:MM] | off | note on|off",
    changes=with_args,  # /digest alone shows the setting
)
TIMEZONE = CommandSpec(
    "timezone", timezone, "set this chat's time zone", "/timezone Europe/Berlin", changes=with_args
)
QUIET = CommandSpec(
    "quiet",
    quiet,
    "hold instant alerts during quiet hours",
    "/quiet 22:00-07:00 | off",
    changes=with_args,
)
PAUSE = CommandSpec("pause", pause, "stop sending for now", "/pause", changes_chat=True, max_args=0)
RESUME = CommandSpec(
    "resume", resume, "start sending again", "/resume", changes_chat=True, max_args=0
)
MUTE = CommandSpec(
    "mute",
    mute,
    "never send papers with a tag (optionally within one topic)",
    "/mute <tag> [in <followed topic>]",
    changes=with_args,
    max_args=QUERY_ARGS,
)
UNMUTE = CommandSpec(
    "unmute", unmute, "send papers with a tag again", "/unmute <tag>", changes=with_args
)
MUTED = CommandSpec("muted", muted, "list the muted tags", "/muted", max_args=0)
