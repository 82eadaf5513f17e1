"""A chat's 👍/👎 votes and its learned model (`bot.topics.learned` has the rules)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol

from bot.topics.learned import ChatModel, Vote


class FeedbackStore(Protocol):
    """One vote per chat and paper (a new one replaces it), and at most one model a chat."""

    async def vote(self, chat_id: int, arxiv_id: str, value: int, now: datetime) -> int | None:
        """Record the chat's vote (+1 or -1) on a stored paper (version-free id); the vote
        it replaced, if any. A paper not stored raises LookupError."""
        ...

    async def votes(self, chat_id: int) -> Sequence[Vote]:
        """The chat's votes, each with its paper and the paper's tags, oldest first."""
        ...

    async def received(self, chat_id: int, arxiv_id: str) -> bool:
        """Was the paper sent to the chat, in an alert or a digest (the outbox's records)?"""
        ...

    async def clear(self, chat_id: int) -> int:
        """Forget the chat's votes and model; how many votes went."""
        ...

    async def model(self, chat_id: int) -> ChatModel | None: ...

    async def models(self, chat_ids: Iterable[int]) -> Mapping[int, ChatModel]:
        """The models of these chats that have one (with or without a trained model)."""
        ...

    async def save_model(self, chat_id: int, model: ChatModel) -> None:
        """Insert or replace the chat's model."""
        ...

    async def stale(self, limit: int = 100, share: tuple[int, int] = (0, 1)) -> Sequence[int]:
        """Chats with a vote newer than their model's `last_vote_at` (or with votes and no
        model), longest waiting first; `share` (slot, workers): only chats whose id is `slot`
        modulo `workers`."""
        ...
