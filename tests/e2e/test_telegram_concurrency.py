"""A slow command (an /ask waiting for a language model, say) holds up only its own chat:
the real PTB application, with paperwatch's update processor, against the fake Bot API."""

from __future__ import annotations

import asyncio

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.config import Settings
from bot.domain import Command, Reply
from bot.topics.catalog import Catalog
from handlers.base import CommandSpec, Context, Registry
from handlers.registry import REGISTRY
from storage.database import Database
from tests.support.telegram_server import serve_fake_telegram

TOKEN = "123456:TEST-token"
SLOW, OTHER = 501, 502
FAST = {
    "TELEGRAM_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_CHAT_MESSAGES_PER_SECOND": 10_000,
    "TELEGRAM_GROUP_MESSAGES_PER_MINUTE": 10_000,
}


async def test_a_slow_command_in_one_chat_does_not_hold_up_another(
    db: Database, small_catalog: Catalog
) -> None:
    release = asyncio.Event()

    async def slow(cmd: Command, ctx: Context) -> Reply:
        await release.wait()
        return Reply.text(f"slow answer {cmd.args}")

    registry = Registry([*REGISTRY.specs, CommandSpec("slow", slow, "waits", "/slow")])
    with serve_fake_telegram() as fake:
        settings = Settings(TELEGRAM_BOT_TOKEN=TOKEN, TELEGRAM_API_BASE_URL=fake.base_url, **FAST)
        adapter = TelegramAdapter(settings, registry, Context(uow=db.uow, catalog=small_catalog))
        await adapter.start()
        try:
            fake.push_message(SLOW, "/slow 1")
            fake.push_message(SLOW, "/help")  # queued behind the slow one: same chat
            fake.push_message(OTHER, "/help")
            await fake.async_wait_until(lambda f: f.messages_for(OTHER), seconds=10)
            assert fake.messages_for(SLOW) == []  # in order within the slow chat
            release.set()
            await fake.async_wait_until(lambda f: len(f.messages_for(SLOW)) >= 2, seconds=10)
        finally:
            release.set()  # lets the adapter stop even when the test failed
            await adapter.stop()
    texts = [m.visible_text for m in fake.messages_for(SLOW)]
    assert texts[0] == "slow answer 1" and texts[1].startswith("Commands:")
