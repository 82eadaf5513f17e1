"""A chat at a glance: what it follows and mutes, and how papers reach it.

The same reads and the same lines as /list (its first page), /muted and /digest, taken in
one unit of work, for views that show them together: Slack's Home tab, and `/settings`
(one of the three commands Telegram asks every bot to answer, with /start and /help), which
adds the chat's switches (momentum alerts, the learned filter) and how to change each.
Reading it changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain import ChatRef, Command, Reply
from handlers.base import CommandSpec, Context
from handlers.following import following_lines
from handlers.settings import muted_lines, settings_lines


@dataclass(frozen=True, slots=True)
class Overview:
    following: tuple[str, ...]  # as /list shows its first page
    muted: tuple[str, ...]  # as /muted
    delivery: tuple[str, ...]  # as /digest without arguments
    switches: tuple[str, ...] = ()  # momentum alerts and the learned filter, on or off


async def overview(ref: ChatRef, ctx: Context) -> Overview:
    async with ctx.uow() as uow:
        chat = await uow.chats.get(ref)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        mutes = await uow.mutes.for_chat(chat.id) if chat else []
    momentum = "on" if chat is None or chat.momentum_alerts else "off"
    learned = "on" if chat is not None and chat.learned_filter else "off"
    return Overview(
        following=following_lines(subs),
        muted=muted_lines(mutes, subs, ctx),
        delivery=settings_lines(chat),
        switches=(
            f"Momentum alerts: {momentum} (/momentum alerts on|off).",
            f"Learned filter: {learned} (/filter learned on|off).",
        ),
    )


async def settings(cmd: Command, ctx: Context) -> Reply:
    """Everything about this chat at once: how papers reach it, what it follows and mutes."""
    seen = await overview(cmd.chat, ctx)
    return Reply.text(*seen.delivery, *seen.switches, "", *seen.following, "", *seen.muted)


SETTINGS = CommandSpec(
    "settings",
    settings,
    "this chat at a glance: delivery, time zone, switches, what it follows and mutes",
    "/settings",
    max_args=0,
)
