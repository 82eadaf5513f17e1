"""The ports: what handlers and services need from the outside, as protocols.

Handlers are written against these and nothing concrete: `storage.uow.UnitOfWork` is the
implementation the bot runs (SQLite or PostgreSQL), `tests.support.uow.FakeUnitOfWork` an
in-memory one for pure handler tests. Every type that crosses a port is a domain object
(`bot.domain`, `bot.topics.momentum`), never an ORM row.

Each repository protocol lists only the methods its callers use; the storage classes have
more (ingest, delivery and the CLI call those on the concrete unit of work).
`tests/integration/test_ports.py` checks that storage keeps these signatures.

`Messenger` is the port every chat platform implements for outgoing messages; the
`DeliveryError` subclasses beside it are what can go wrong, the few meanings the outbox
worker (`bot.services.deliver`) acts on and each platform's messenger translates its SDK's
errors into. They live with the port, not in `bot.domain`, because they are part of its
contract (what `deliver` may raise), not facts about papers, chats or subscriptions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from bot.domain import (
    Chat,
    ChatKind,
    ChatRef,
    Paper,
    Platform,
    PollState,
    Reply,
    Subscription,
    SubscriptionKind,
)
from bot.outbox_payloads import Progress
from bot.topics.momentum import Momentum
from bot.topics.search_text import SearchResult


class Clock(Protocol):
    """Now, as an aware datetime (UTC in the bot; fixed in tests)."""

    def __call__(self) -> datetime: ...


class ChatStore(Protocol):
    """Chats and their settings, found by platform reference or by id."""

    async def get(self, ref: ChatRef) -> Chat | None: ...

    async def get_by_id(self, chat_id: int) -> Chat | None: ...

    async def get_or_create(self, ref: ChatRef, kind: ChatKind = ChatKind.PRIVATE) -> Chat: ...

    async def update(self, chat_id: int, **values: Any) -> None:
        """Change settings: any field of `Chat` but `id`, `platform`, `external_id` and
        `created_at` (anything else raises ValueError)."""
        ...

    async def set_active(self, chat_id: int, active: bool) -> None: ...

    async def move(self, ref: ChatRef, new_ref: ChatRef) -> bool:
        """Give a chat a new reference (a Telegram group became a supergroup); False when
        it is unknown or the new reference is taken."""
        ...


class SubscriptionStore(Protocol):
    """What each chat follows; one subscription per (chat, kind, target)."""

    async def add(
        self, chat_id: int, kind: SubscriptionKind, target: str, label: str, tag: str
    ) -> tuple[Subscription, bool]:
        """(the subscription, whether it was created): following twice changes nothing."""
        ...

    async def remove(self, chat_id: int, kind: SubscriptionKind, target: str) -> bool: ...

    async def count_by_kind(self, chat_id: int) -> Mapping[SubscriptionKind, int]:
        """Every kind, zero included."""
        ...

    async def for_chat(self, chat_id: int) -> Sequence[Subscription]:
        """Oldest first."""
        ...


class MuteStore(Protocol):
    """Muted tags as (tag, scope); scope "" mutes everywhere, else within the followed
    subscription whose tag it is."""

    async def add(self, chat_id: int, tag: str, scope: str = "") -> bool: ...

    async def remove(self, chat_id: int, tag: str) -> int:
        """Unmute `tag` in every scope; how many mutes went."""
        ...

    async def for_chat(self, chat_id: int) -> Sequence[tuple[str, str]]:
        """In no particular order."""
        ...


class PaperStore(Protocol):
    """The paper index and its tags, as the chat commands read it."""

    async def get(self, arxiv_id: str) -> Paper | None: ...

    async def latest(
        self,
        tags: Sequence[str] | None = None,
        limit: int = 5,
        offset: int = 0,
        without: Sequence[str] = (),
    ) -> Sequence[Paper]:
        """Newest first (announced, then arXiv id, descending), with any of `tags` if given
        and none of `without`, `limit` of them after the first `offset`; each paper carries
        its stored tags, sorted."""
        ...

    async def count(self, tags: Sequence[str] | None = None, without: Sequence[str] = ()) -> int:
        """Papers stored, or those with any of `tags`, and none of `without`: as many as
        `latest` can page through."""
        ...

    async def tags_with_why(self, arxiv_id: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        """(tag, the words that matched), by tag."""
        ...

    async def add_tags(
        self, tags: Iterable[tuple[str, str, Sequence[str]]], source: str = "rule"
    ) -> int:
        """Attach (arxiv id, tag, why) to stored papers, keeping pairs already there; how
        many were added."""
        ...


class PaperSearch(Protocol):
    """Full-text search over the titles and abstracts of the stored papers."""

    async def search(
        self,
        text: str,
        *,
        tags: Sequence[str] | None = None,
        without: Sequence[str] = (),
        limit: int = 10,
        offset: int = 0,
    ) -> SearchResult:
        """The papers matching `text` (plain words, or the query language: read by
        `bot.topics.search_text.parse_search`, whose `QueryError` it raises), with any of
        `tags` if given and none of `without`: `limit` hits after the first `offset`, best
        first and newest first among equal scores (each paper with its tags, sorted), and
        how many papers match in all. Plain words that no paper has all of fall back to
        papers with any of them (`SearchResult.loosened`)."""
        ...


class PollStateStore(Protocol):
    async def all(self) -> Sequence[PollState]: ...


class OutboxStore(Protocol):
    """The part of the outbox that chat commands and the group commit touch."""

    async def release_held(self, chat_id: int, now: datetime) -> None:
        """The chat switched to instant alerts: what waited for its digest is due now."""
        ...

    async def record(
        self, progress: Iterable[Progress], now: datetime, claimed_by: str | None = None
    ) -> None:
        """Save what claims got done (`bot.services.group_commit`): finished rows are sent,
        the rest due again now; only rows still claimed by `claimed_by` change."""
        ...


class MomentumStore(Protocol):
    """Weekly paper counts per tag (`bot.topics.momentum` has the rules)."""

    async def latest_announced(self, today: date | None = None) -> date | None: ...

    async def for_tags(
        self, tags: Sequence[str] | None, as_of: date, weeks: int = 26
    ) -> Mapping[str, Momentum]: ...

    async def for_tag(self, tag: str, as_of: date, weeks: int = 26) -> Momentum: ...


@runtime_checkable
class UnitOfWork(Protocol):
    """One transaction: use it in `async with`; leaving without `commit()` rolls back.

    The repositories are read-only attributes, valid inside the block.
    """

    @property
    def chats(self) -> ChatStore: ...
    @property
    def subscriptions(self) -> SubscriptionStore: ...
    @property
    def mutes(self) -> MuteStore: ...
    @property
    def papers(self) -> PaperStore: ...
    @property
    def search(self) -> PaperSearch: ...
    @property
    def poll_state(self) -> PollStateStore: ...
    @property
    def outbox(self) -> OutboxStore: ...
    @property
    def momentum(self) -> MomentumStore: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...

    async def rollback(self) -> None: ...


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
