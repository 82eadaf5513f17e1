"""The unit of work: one transaction and its repositories; and the clock."""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from bot.ports.feedback_store import FeedbackStore
from bot.ports.language_model import TokenBudgetStore

# The repository protocols are needed at run time: tests read the properties' types.
from bot.ports.outbox_store import OutboxStore
from bot.ports.papers_like import LikeSetStore
from bot.ports.stores import (
    ChatStore,
    MomentumStore,
    MuteStore,
    PaperSearch,
    PaperStore,
    PollStateStore,
    ProcessStore,
    SubscriptionStore,
)


class Clock(Protocol):
    """Now, as an aware datetime (UTC in the bot; fixed in tests)."""

    def __call__(self) -> datetime: ...


@runtime_checkable
class UnitOfWork(Protocol):
    """One transaction: use it in `async with`; leaving without `commit()` rolls back.

    The repositories are read-only attributes, valid inside the block. Services take a
    factory of these (`Callable[[], UnitOfWork]`, `Database.uow` in the bot).
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
    @property
    def processes(self) -> ProcessStore: ...
    @property
    def llm_budget(self) -> TokenBudgetStore: ...
    @property
    def feedback(self) -> FeedbackStore: ...
    @property
    def like_sets(self) -> LikeSetStore: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def commit(self) -> None: ...

    async def rollback(self) -> None: ...
