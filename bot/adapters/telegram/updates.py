"""Telegram updates of different chats handled at once, each chat's in the order they came.

PTB handles one update at a time by default, so a slow answer in one chat (an /ask waiting
for a language model for up to `PAPERWATCH_LLM_TIMEOUT` seconds, say) would hold up every
other chat. With `concurrent_updates` on its own, updates run at once but a chat's commands
could overtake one another (`/follow X` then `/list`). This processor keeps one lock per chat:
updates of different chats run side by side, up to `MAX_AT_ONCE`, and a chat's next update
starts when its previous one is done. Updates without a chat (none that paperwatch handles
today) share one lock. Locks are dropped when no update of their chat is running or waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

MAX_AT_ONCE = 64


def chat_key(update: object) -> int | None:
    """The chat an update belongs to, or None."""
    chat = update.effective_chat if isinstance(update, Update) else None
    return chat.id if chat is not None else None


class PerChatUpdates(BaseUpdateProcessor):
    """Concurrent across chats, in order within one (module docstring)."""

    def __init__(self, max_concurrent_updates: int = MAX_AT_ONCE) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: dict[int | None, asyncio.Lock] = {}
        self._users: dict[int | None, int] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                await coroutine
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]

    @property
    def chats_in_progress(self) -> int:
        """Chats with an update running or waiting (for tests and debugging)."""
        return len(self._locks)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down: the application awaits the running updates itself."""
