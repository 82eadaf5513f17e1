"""A chat at a glance: what it follows and mutes, and how papers reach it.

The same reads and the same lines as /list (its first page), /muted and /digest, taken in
one unit of work, for views that show them together (Slack's Home tab). Reading it changes
nothing and is not a command: no rate limit, no role.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain import ChatRef
from handlers.base import Context
from handlers.following import following_lines
from handlers.settings import muted_lines, settings_lines


@dataclass(frozen=True, slots=True)
class Overview:
    following: tuple[str, ...]  # as /list shows its first page
    muted: tuple[str, ...]  # as /muted
    delivery: tuple[str, ...]  # as /digest without arguments


async def overview(ref: ChatRef, ctx: Context) -> Overview:
    async with ctx.uow() as uow:
        chat = await uow.chats.get(ref)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        mutes = await uow.mutes.for_chat(chat.id) if chat else []
    return Overview(
        following=following_lines(subs),
        muted=muted_lines(mutes, subs, ctx),
        delivery=settings_lines(chat),
    )
