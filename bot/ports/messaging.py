"""The messenger: the port every chat platform implements for outgoing messages.

The `DeliveryError` subclasses beside it are what can go wrong, the few meanings the
outbox worker (`bot.services.deliver`) acts on and each platform's messenger translates
its SDK's errors into. They live with the port, not in `bot.domain`, because they are
part of its contract (what `deliver` may raise), not facts about papers, chats or
subscriptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.domain import Chat, Platform, Reply

# The messenger: outgoing messages, and what can go wrong.
#
# The outbox worker renders a neutral `Reply` into the platform's messages (several when
# limits demand) and sends them one by one; platform errors are mapped to the few meanings
# the worker acts on.


class DeliveryError(Exception):
    """Base class; the message is for logs and `paperwatch status`."""


class RecipientGone(DeliveryError):
    """Blocked, kicked, chat deleted or archived: deactivate the chat, keep its settings."""


class RateLimited(DeliveryError):
    """The platform asked us to wait `retry_after` seconds."""

    def __init__(self, retry_after: float, message: str = "rate limited") -> None:
        super().__init__(f"{message}; retry after {retry_after:g} s")
        self.retry_after = retry_after


class ChatMoved(DeliveryError):
    """The chat has a new id (a Telegram group upgraded to a supergroup)."""

    def __init__(self, new_external_id: str) -> None:
        super().__init__(f"chat moved to {new_external_id}")
        self.new_external_id = new_external_id


class Transient(DeliveryError):
    """Worth retrying later: network trouble, a 5xx, a timeout."""


class Permanent(DeliveryError):
    """The platform refuses this message and always will (a Telegram 400 such as
    "can't parse entities" or "message is too long", Slack's `invalid_blocks`):
    retrying cannot help, so the row is dead at once, for the operator to see."""


class Messenger(Protocol):
    """One chat platform's way out: render a `Reply`, send what it rendered."""

    platform: Platform

    def render(self, chat: Chat, reply: Reply) -> Sequence[object]:
        """The platform messages for `reply`, in sending order (at least one)."""
        ...

    async def deliver(self, chat: Chat, message: object) -> None:
        """Send one rendered message; raises a `DeliveryError` subclass on failure."""
        ...
