"""The transactional outbox: messages owed to chats, and how workers claim them.

Rows are written in the transaction that stores the papers causing them (so a crash
either keeps both or neither), and are unique per (chat, paper, kind), so repeating
an ingest never queues a paper twice. Workers claim due rows for a short lease:
on PostgreSQL with `FOR UPDATE SKIP LOCKED`, so any number of workers share the
queue; a worker that dies leaves its claim to expire and be taken again, which
re-sends at most what was in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import JSON, case, exists, func, literal, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from storage.models import ChatRow, MutedTagRow, OutboxRow, PaperTagRow, SubscriptionRow

SENDABLE = ("alert", "digest", "spike")


@dataclass(frozen=True, slots=True)
class OutboxItem:
    id: int
    chat_id: int
    paper_id: int | None
    kind: str
    payload: dict[str, Any]
    attempts: int


def _insert(session: AsyncSession) -> Any:
    return (postgresql if session.get_bind().dialect.name == "postgresql" else sqlite).insert


class OutboxRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def enqueue_papers(self, paper_ids: Sequence[int], now: datetime) -> int:
        """One row per (chat, paper) for every active chat a new paper reaches.

        A paper reaches a chat through any subscription whose tag it carries, unless a
        muted tag of the paper applies to that subscription (unscoped mutes apply to
        all). Instant chats get an "alert"; digest chats an "item" for their digest.
        """
        if not paper_ids:
            return 0
        ids = list(paper_ids)
        tags = PaperTagRow.__table__.alias("paper_tag")
        muted = exists().where(
            MutedTagRow.chat_id == SubscriptionRow.chat_id,
            MutedTagRow.tag == tags.c.tag,
            tags.c.paper_id == PaperTagRow.paper_id,
            tags.c.paper_id.in_(ids),  # lets PostgreSQL look only at the new papers' tags
            or_(MutedTagRow.scope == "", MutedTagRow.scope == SubscriptionRow.tag),
        )
        instant = ChatRow.digest_mode == "instant"
        matches = (
            select(
                SubscriptionRow.chat_id,
                PaperTagRow.paper_id,
                case((instant, literal("alert")), else_=literal("item")).label("kind"),
                case(
                    (instant, literal(now)), else_=func.coalesce(ChatRow.next_digest_at, now)
                ).label("due_at"),
            )
            .select_from(PaperTagRow)
            .join(SubscriptionRow, SubscriptionRow.tag == PaperTagRow.tag)
            .join(ChatRow, ChatRow.id == SubscriptionRow.chat_id)
            .where(
                PaperTagRow.paper_id.in_(ids),
                ChatRow.active,
                ChatRow.digest_mode != "off",
                ~muted,
            )
            .subquery()
        )
        rows = select(
            matches.c.chat_id,
            matches.c.paper_id,
            matches.c.kind,
            literal({}, JSON),
            literal("pending"),
            matches.c.due_at,
            literal(0),
            literal(now),
        ).where(True)  # SQLite needs a WHERE before ON CONFLICT in INSERT ... SELECT
        # A (chat, paper) reached through several tags is dropped by ON CONFLICT, which is
        # cheaper than DISTINCT; chat order keeps the unique index's inserts local.
        rows = rows.order_by(matches.c.chat_id, matches.c.paper_id)
        statement = (
            _insert(self._s)(OutboxRow)
            .from_select(
                [
                    "chat_id",
                    "paper_id",
                    "kind",
                    "payload",
                    "status",
                    "due_at",
                    "attempts",
                    "created_at",
                ],
                rows,
            )
            .on_conflict_do_nothing()
        )
        result = await self._s.execute(statement)
        return int(result.rowcount or 0)

    async def claim(self, now: datetime, lease: timedelta, limit: int) -> list[OutboxItem]:
        """Take up to `limit` due rows of active, unpaused chats for `lease`."""
        due = (
            select(OutboxRow.id)
            .join(ChatRow, ChatRow.id == OutboxRow.chat_id)
            .where(
                OutboxRow.status.in_(("pending", "sending")),
                OutboxRow.kind.in_(SENDABLE),
                OutboxRow.due_at <= now,
                ChatRow.active,
                ~ChatRow.paused,
            )
            .order_by(OutboxRow.due_at, OutboxRow.id)
            .limit(limit)
            .with_for_update(skip_locked=True, of=OutboxRow)
        )
        statement = (
            update(OutboxRow)
            .where(OutboxRow.id.in_(due.scalar_subquery()))
            .values(status="sending", due_at=now + lease, attempts=OutboxRow.attempts + 1)
            .returning(
                OutboxRow.id,
                OutboxRow.chat_id,
                OutboxRow.paper_id,
                OutboxRow.kind,
                OutboxRow.payload,
                OutboxRow.attempts,
            )
        )
        rows = (await self._s.execute(statement)).all()
        return sorted((OutboxItem(*row) for row in rows), key=lambda item: item.id)

    async def mark_sent(self, item_id: int, now: datetime) -> None:
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id == item_id, OutboxRow.status == "sending")
            .values(status="sent", sent_at=now, last_error=None)
        )

    async def retry_at(
        self, item_id: int, when: datetime, error: str | None, *, count_attempt: bool = True
    ) -> None:
        values: dict[str, Any] = {"status": "pending", "due_at": when, "last_error": error}
        if not count_attempt:  # waiting out a rate limit is not a failed attempt
            values["attempts"] = OutboxRow.attempts - 1
        await self._s.execute(update(OutboxRow).where(OutboxRow.id == item_id).values(**values))

    async def mark_dead(self, item_id: int, error: str) -> None:
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id == item_id)
            .values(status="dead", last_error=error[:2000])
        )

    async def save_payload(self, item_id: int, payload: dict[str, Any]) -> None:
        await self._s.execute(
            update(OutboxRow).where(OutboxRow.id == item_id).values(payload=payload)
        )

    async def enqueue_notice(self, chat_id: int, kind: str, text: str, now: datetime) -> None:
        """A message not about one paper (a momentum spike, say), due now."""
        self._s.add(
            OutboxRow(
                chat_id=chat_id,
                paper_id=None,
                kind=kind,
                payload={"text": text},
                status="pending",
                due_at=now,
                created_at=now,
            )
        )
        await self._s.flush()

    async def fold_digest(self, chat_id: int, now: datetime) -> int:
        """Gather a chat's waiting items into one digest row; returns how many papers."""
        stmt = (
            select(OutboxRow.id, OutboxRow.paper_id)
            .where(
                OutboxRow.chat_id == chat_id,
                OutboxRow.kind == "item",
                OutboxRow.status == "pending",
            )
            .order_by(OutboxRow.id)
        )
        items = (await self._s.execute(stmt)).all()
        if not items:
            return 0
        self._s.add(
            OutboxRow(
                chat_id=chat_id,
                paper_id=None,
                kind="digest",
                payload={"papers": [paper for _, paper in items], "parts_sent": 0},
                status="pending",
                due_at=now,
                created_at=now,
            )
        )
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id.in_([item for item, _ in items]))
            .values(status="folded")
        )
        await self._s.flush()
        return len(items)

    async def release_held(self, chat_id: int, now: datetime) -> None:
        """A chat switched to instant alerts: its waiting items become alerts now."""
        await self._s.execute(
            update(OutboxRow)
            .where(
                OutboxRow.chat_id == chat_id,
                OutboxRow.kind == "item",
                OutboxRow.status == "pending",
            )
            .values(kind="alert", due_at=now)
        )

    async def counts(self) -> dict[str, int]:
        stmt = select(OutboxRow.status, func.count()).group_by(OutboxRow.status)
        return {status: int(n) for status, n in (await self._s.execute(stmt)).all()}

    async def dead_letters(self, limit: int = 5) -> list[tuple[int, int, str, str | None]]:
        stmt = (
            select(OutboxRow.id, OutboxRow.chat_id, OutboxRow.kind, OutboxRow.last_error)
            .where(OutboxRow.status == "dead")
            .order_by(OutboxRow.id.desc())
            .limit(limit)
        )
        return [tuple(row) for row in (await self._s.execute(stmt)).all()]  # type: ignore[misc]
