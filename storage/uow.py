"""The unit of work: one transaction, its repositories, and the only `commit`.

    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ref)
        await uow.subscriptions.add(chat.id, ...)
        await uow.commit()

Leaving the block without `commit()` rolls everything back. Papers stored in the block
join the full-text index before it commits, if nothing indexed them earlier
(`storage.search_index`).
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from storage.feedback_votes import FeedbackRepository
from storage.like_sets import LikeSetRepository
from storage.llm_budget import LlmBudgetRepository
from storage.momentum_counts import MomentumRepository
from storage.outbox import OutboxRepository
from storage.paper_search import SearchRepository
from storage.papers import PaperRepository
from storage.processes import ProcessRepository
from storage.repositories import (
    ChatRepository,
    MuteRepository,
    PollStateRepository,
    SubscriptionRepository,
)
from storage.search_index import forget_new_papers, index_new_papers


class UnitOfWork:
    chats: ChatRepository
    subscriptions: SubscriptionRepository
    mutes: MuteRepository
    papers: PaperRepository
    search: SearchRepository
    poll_state: PollStateRepository
    outbox: OutboxRepository
    momentum: MomentumRepository
    processes: ProcessRepository
    llm_budget: LlmBudgetRepository
    feedback: FeedbackRepository
    like_sets: LikeSetRepository

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._session: AsyncSession | None = None

    @property
    def session(self) -> AsyncSession:
        if self._session is None:
            raise RuntimeError("use the unit of work inside `async with`")
        return self._session

    @property
    def dialect(self) -> str:
        return self.session.get_bind().dialect.name

    async def __aenter__(self) -> Self:
        session = self._sessions()
        self._session = session
        self.chats = ChatRepository(session)
        self.subscriptions = SubscriptionRepository(session)
        self.mutes = MuteRepository(session)
        self.papers = PaperRepository(session)
        self.search = SearchRepository(session)
        self.poll_state = PollStateRepository(session)
        self.outbox = OutboxRepository(session)
        self.momentum = MomentumRepository(session)
        self.processes = ProcessRepository(session)
        self.llm_budget = LlmBudgetRepository(session)
        self.feedback = FeedbackRepository(session)
        self.like_sets = LikeSetRepository(session)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            forget_new_papers(self.session)
            await self.session.rollback()
        finally:
            await self.session.close()
            self._session = None

    async def commit(self) -> None:
        await index_new_papers(self.session)
        await self.session.commit()

    async def rollback(self) -> None:
        forget_new_papers(self.session)
        await self.session.rollback()
