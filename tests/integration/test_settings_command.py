"""/settings: the chat at a glance (Telegram asks every bot to answer /start, /help and
/settings), on both databases; it reads and changes nothing."""

from __future__ import annotations

from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def test_a_new_chat_sees_the_defaults_and_what_to_type(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog)
    shown = await say(ctx, "/settings")
    assert shown.startswith("A daily digest at 08:00, time zone UTC")
    assert "Momentum alerts: on" in shown and "Learned filter: off" in shown
    assert "You don't follow any topic yet." in shown and "Nothing is muted." in shown
    async with db.uow() as uow:  # reading made no chat
        assert await uow.chats.get(CONSOLE_CHAT) is None


async def test_every_setting_the_chat_changed_is_shown(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog)
    for line in (
        "/follow Web Agents",
        "/mute Agentic RAG in Web Agents",
        "/mute Reinforcement Learning",
        "/digest weekly friday 17:30",
        "/timezone europe/berlin",
        "/quiet 22:00-07:00",
        "/momentum alerts off",
        "/filter learned on",
        "/pause",
    ):
        await say(ctx, line)
    shown = await say(ctx, "/settings")
    assert "A weekly digest on Friday at 17:30, time zone Europe/Berlin." in shown
    assert "Quiet hours 22:00-07:00." in shown and "Paused: /resume to restart." in shown
    assert "Momentum alerts: off" in shown and "Learned filter: on" in shown
    assert "You follow 1 topic:\n• Web Agents" in shown
    assert "• Agentic RAG (in Web Agents)" in shown and "• Reinforcement Learning" in shown
    assert await say(ctx, "/settings") == shown  # reading changed nothing


async def test_settings_takes_no_arguments(db: Database, small_catalog: Catalog) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog)
    assert "/settings takes no arguments." in await say(ctx, "/settings digest instant")
    assert "A daily digest at 08:00" in await say(ctx, "/settings")
