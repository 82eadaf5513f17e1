"""A chat's 👍/👎 votes and its learned model (`bot.ports.FeedbackStore`, migration 0016)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.outbox_payloads import AlertPayload, DigestPayload, OutboxKind, OutboxStatus
from bot.topics.learned import ChatModel, Vote
from storage.models import ChatRow, OutboxRow, PaperRow
from storage.models_personal import ChatModelRow, VoteRow
from storage.outbox_json import payload_from_json
from storage.papers import PaperRepository
from storage.repositories import chunks

# The newest outbox rows of a chat that `received` reads: months of alerts and digests.
RECEIVED_ROWS = 5000


def _model(row: ChatModelRow) -> ChatModel:
    return ChatModel(
        model=row.model,
        trained_at=row.trained_at,
        last_vote_at=row.last_vote_at,
        up=row.up,
        down=row.down,
        taught=tuple(str(t) for t in row.taught or ()),
    )


class FeedbackRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def _paper_id(self, arxiv_id: str) -> int | None:
        stmt = select(PaperRow.id).where(PaperRow.arxiv_id == arxiv_id)
        return (await self._s.execute(stmt)).scalar_one_or_none()

    async def vote(self, chat_id: int, arxiv_id: str, value: int, now: datetime) -> int | None:
        if value not in (1, -1):
            raise ValueError(f"a vote is +1 or -1, not {value!r}")
        paper_id = await self._paper_id(arxiv_id)
        if paper_id is None:
            raise LookupError(f"no paper {arxiv_id} stored")
        row = await self._s.get(VoteRow, (chat_id, paper_id))
        if row is None:
            self._s.add(VoteRow(chat_id=chat_id, paper_id=paper_id, value=value, voted_at=now))
            await self._s.flush()
            return None
        before = row.value
        row.value, row.voted_at = value, now
        await self._s.flush()
        return before

    async def votes(self, chat_id: int) -> list[Vote]:
        stmt = (
            select(VoteRow.paper_id, VoteRow.value, VoteRow.voted_at)
            .where(VoteRow.chat_id == chat_id)
            .order_by(VoteRow.voted_at, VoteRow.paper_id)
        )
        rows = (await self._s.execute(stmt)).all()
        papers = await PaperRepository(self._s).by_ids([p for p, _, _ in rows])
        return [Vote(papers[p], v, at) for p, v, at in rows if p in papers]

    async def received(self, chat_id: int, arxiv_id: str) -> bool:
        """Read from the chat's alert and digest rows: an alert's papers up to those sent
        (all once the row is sent), a digest's papers once a part of it went out."""
        paper_id = await self._paper_id(arxiv_id)
        if paper_id is None:
            return False
        stmt = (
            select(OutboxRow.kind, OutboxRow.status, OutboxRow.payload)
            .where(
                OutboxRow.chat_id == chat_id,
                OutboxRow.kind.in_((OutboxKind.ALERT, OutboxKind.DIGEST)),
            )
            .order_by(OutboxRow.id.desc())
            .limit(RECEIVED_ROWS)
        )
        for kind, status, data in (await self._s.execute(stmt)).all():
            payload = payload_from_json(kind, data)
            done, sent = status == OutboxStatus.SENT, ()
            if isinstance(payload, AlertPayload):
                sent = payload.papers if done else payload.papers[: payload.sent]
            elif isinstance(payload, DigestPayload):
                sent = payload.papers if done or payload.parts_sent else ()
            if paper_id in sent:
                return True
        return False

    async def clear(self, chat_id: int) -> int:
        await self._s.execute(delete(ChatModelRow).where(ChatModelRow.chat_id == chat_id))
        gone = await self._s.execute(delete(VoteRow).where(VoteRow.chat_id == chat_id))
        return int(gone.rowcount or 0)

    async def model(self, chat_id: int) -> ChatModel | None:
        row = await self._s.get(ChatModelRow, chat_id)
        return _model(row) if row else None

    async def models(self, chat_ids: Iterable[int]) -> dict[int, ChatModel]:
        found: dict[int, ChatModel] = {}
        for chunk in chunks(sorted(set(chat_ids))):
            rows = await self._s.execute(
                select(ChatModelRow).where(ChatModelRow.chat_id.in_(chunk))
            )
            found.update({row.chat_id: _model(row) for row in rows.scalars()})
        return found

    async def save_model(self, chat_id: int, model: ChatModel) -> None:
        row = await self._s.get(ChatModelRow, chat_id)
        if row is None:
            row = ChatModelRow(chat_id=chat_id)
            self._s.add(row)
        row.model, row.trained_at, row.last_vote_at = (
            model.model,
            model.trained_at,
            model.last_vote_at,
        )
        row.up, row.down, row.taught = model.up, model.down, list(model.taught)
        await self._s.flush()

    async def stale(self, limit: int = 100, share: tuple[int, int] = (0, 1)) -> Sequence[int]:
        # Per chat, its newest vote is one seek in ix_votes_chat_id_voted_at: the round costs
        # the chats, not the votes (grouping 200,000 votes took 0.3 s on SQLite each round).
        newest = (
            select(func.max(VoteRow.voted_at))
            .where(VoteRow.chat_id == ChatRow.id)
            .scalar_subquery()
        )
        stmt = (
            select(ChatRow.id)
            .outerjoin(ChatModelRow, ChatModelRow.chat_id == ChatRow.id)
            .where(newest.is_not(None))
            .where(ChatModelRow.last_vote_at.is_(None) | (newest > ChatModelRow.last_vote_at))
            .order_by(newest, ChatRow.id)
            .limit(limit)
        )
        slot, workers = share
        if workers > 1:
            stmt = stmt.where(ChatRow.id % workers == slot)
        return list((await self._s.execute(stmt)).scalars())
