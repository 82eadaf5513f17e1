"""Telegram updates run side by side across chats and in order within one
(`bot.adapters.telegram.updates.PerChatUpdates`), so a slow /ask holds up only its own chat."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from telegram import Chat, Message, Update

from bot.adapters.telegram.updates import PerChatUpdates, chat_key


def message(update_id: int, chat_id: int) -> Update:
    chat = Chat(chat_id, Chat.PRIVATE)
    return Update(update_id, message=Message(update_id, datetime.now(UTC), chat, text="/list"))


async def test_a_slow_update_holds_up_only_its_own_chat() -> None:
    processor = PerChatUpdates()
    done: list[str] = []
    slow_may_finish = asyncio.Event()

    async def slow() -> None:
        await slow_may_finish.wait()
        done.append("slow chat 1")

    async def quick(name: str) -> None:
        done.append(name)

    first = asyncio.create_task(processor.process_update(message(1, 1), slow()))
    second = asyncio.create_task(processor.process_update(message(2, 1), quick("next in chat 1")))
    other = asyncio.create_task(processor.process_update(message(3, 2), quick("chat 2")))
    await asyncio.wait_for(other, 1)
    assert done == ["chat 2"]  # chat 2 did not wait for chat 1's slow update
    assert not second.done()  # chat 1's next update waits for its first
    slow_may_finish.set()
    await asyncio.wait_for(asyncio.gather(first, second), 1)
    assert done == ["chat 2", "slow chat 1", "next in chat 1"]
    assert processor.chats_in_progress == 0  # no lock kept for idle chats


async def test_a_failing_update_releases_its_chat() -> None:
    processor = PerChatUpdates()

    async def boom() -> None:
        raise RuntimeError("handler failed")

    async def fine() -> None:
        return None

    failed = asyncio.create_task(processor.process_update(message(1, 5), boom()))
    after = asyncio.create_task(processor.process_update(message(2, 5), fine()))
    results = await asyncio.wait_for(asyncio.gather(failed, after, return_exceptions=True), 1)
    assert isinstance(results[0], RuntimeError) and results[1] is None
    assert processor.chats_in_progress == 0


def test_updates_are_keyed_by_chat() -> None:
    assert chat_key(message(1, -100123)) == -100123
    assert chat_key(Update(9)) is None
    assert chat_key("not an update") is None
