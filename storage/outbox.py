"""The transactional outbox: messages owed to chats, and how workers claim them.

Rows are written in the transaction that stores the papers causing them, so a crash
keeps both or neither. The new papers of one ingest form a batch; each paper joins at
most one batch and each chat gets at most one row per batch, so a paper reaches a chat
at most once however often an ingest is repeated. Workers claim due rows for a short
lease: on PostgreSQL with `FOR UPDATE SKIP LOCKED`, so any number of workers share the
queue. A claim sends one message of a row and records it before the row can be
claimed again, so a worker that dies re-sends at most the message in flight.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta

from sqlalchemy import JSON, ColumnElement, and_, bindparam, func, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.outbox_payloads import (
    DigestPayload,
    NoticePayload,
    OutboxItem,
    OutboxKind,
    OutboxPayload,
    OutboxStatus,
    Progress,
)
from storage.fanout import enqueue_batch
from storage.models import ChatRow, OutboxRow
from storage.outbox_json import item_from_json, outbox_item, payload_to_json

SENDABLE = (OutboxKind.ALERT, OutboxKind.DIGEST, OutboxKind.SPIKE, OutboxKind.NOTE)


def _held_by(claimed_by: str | None) -> ColumnElement[bool]:
    """The row is still under the claim of `claimed_by` (None: a claim made without a
    process id, by a test or a bench)."""
    owner = OutboxRow.claimed_by
    held = owner.is_(None) if claimed_by is None else owner == claimed_by
    return and_(OutboxRow.status == OutboxStatus.SENDING, held)


class OutboxRepository:
    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def enqueue_papers(self, paper_ids: Sequence[int], now: datetime) -> int:
        """Make the papers one batch and give it to every chat it may reach
        (`storage.fanout.enqueue_batch`); returns the rows written."""
        return await enqueue_batch(self._s, paper_ids, now)

    async def claim(
        self,
        now: datetime,
        lease: timedelta,
        limit: int,
        share: tuple[int, int] = (0, 1),
        claimed_by: str | None = None,
    ) -> list[OutboxItem]:
        """Take up to `limit` due rows of active, unpaused chats for `lease`.

        `share` (slot, workers): only rows of chats whose id is `slot` modulo `workers`,
        so that each chat's messages leave through one worker's flood limits.
        `claimed_by`: the claiming process, whose claims are released when it dies
        (`ProcessRepository.forget`).
        """
        slot, workers = share
        due = (
            select(OutboxRow.id)
            .join(ChatRow, ChatRow.id == OutboxRow.chat_id)
            .where(
                OutboxRow.status.in_((OutboxStatus.PENDING, OutboxStatus.SENDING)),
                OutboxRow.kind.in_(SENDABLE),
                OutboxRow.due_at <= now,
                ChatRow.active,
                ~ChatRow.paused,
            )
            .order_by(OutboxRow.due_at, OutboxRow.id)
            .limit(limit)
            .with_for_update(skip_locked=True, of=OutboxRow)
        )
        if workers > 1:
            due = due.where(OutboxRow.chat_id % workers == slot)
        statement = (
            update(OutboxRow)
            .where(OutboxRow.id.in_(due.scalar_subquery()))
            .values(
                status=OutboxStatus.SENDING,
                due_at=now + lease,
                attempts=OutboxRow.attempts + 1,
                claimed_by=claimed_by,
            )
            .returning(
                OutboxRow.id,
                OutboxRow.chat_id,
                OutboxRow.batch_id,
                OutboxRow.kind,
                OutboxRow.payload,
                OutboxRow.attempts,
                OutboxRow.failing_since,
            )
        )
        rows = (await self._s.execute(statement)).all()
        return sorted((outbox_item(*row) for row in rows), key=lambda item: item.id)

    async def record(
        self, progress: Iterable[Progress], now: datetime, claimed_by: str | None = None
    ) -> None:
        """Save what claims got done: finished rows are sent, the rest due again now.

        Only rows still claimed by `claimed_by` are changed: a claim that was released
        (its process taken for dead) and taken by another must not be set back. A
        successful claim also clears the failures: attempts and `failing_since` count
        failures in a row, not the messages of a long row.
        """
        params = [
            {
                "item": p.item_id,
                "new_payload": payload_to_json(p.payload),
                "new_status": OutboxStatus.SENT if p.done else OutboxStatus.PENDING,
                "new_sent_at": now if p.done else None,
            }
            for p in progress
        ]
        if not params:
            return
        table = OutboxRow.__table__
        statement = (
            table.update()
            .where(table.c.id == bindparam("item"), _held_by(claimed_by))
            .values(
                payload=bindparam("new_payload", type_=JSON),
                status=bindparam("new_status"),
                sent_at=bindparam("new_sent_at", type_=OutboxRow.sent_at.type),
                due_at=now,
                attempts=0,
                last_error=None,
                failing_since=None,
                claimed_by=None,
            )
        )
        await self._s.execute(statement, params)

    async def retry_at(
        self, item_id: int, when: datetime, why: str | None, claimed_by: str | None = None
    ) -> None:
        """Release the claim until `when` without counting a failure (a rate limit, quiet
        hours, a moved chat): the claim's attempt is taken back. Like every settlement of
        a claim, it changes the row only while `claimed_by` still holds it."""
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id == item_id, _held_by(claimed_by))
            .values(
                status=OutboxStatus.PENDING,
                due_at=when,
                last_error=why,
                attempts=OutboxRow.attempts - 1,
                claimed_by=None,
            )
        )

    async def failed(
        self,
        item_id: int,
        when: datetime,
        error: str,
        now: datetime,
        claimed_by: str | None = None,
    ) -> None:
        """A failed try: due again at `when`; a first failure starts `failing_since`."""
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id == item_id, _held_by(claimed_by))
            .values(
                status=OutboxStatus.PENDING,
                due_at=when,
                last_error=error[:2000],
                failing_since=func.coalesce(
                    OutboxRow.failing_since, literal(now, OutboxRow.failing_since.type)
                ),
                claimed_by=None,
            )
        )

    async def mark_dead(self, item_id: int, error: str, claimed_by: str | None = None) -> None:
        await self._s.execute(
            update(OutboxRow)
            .where(OutboxRow.id == item_id, _held_by(claimed_by))
            .values(status=OutboxStatus.DEAD, last_error=error[:2000], claimed_by=None)
        )

    async def requeue_dead(self, now: datetime, item_id: int | None = None) -> int:
        """Dead rows (all, or the one `item_id`) become due now with their failures
        forgotten; returns how many. The last error stays until the next try."""
        statement = (
            update(OutboxRow)
            .where(OutboxRow.status == OutboxStatus.DEAD)
            .values(status=OutboxStatus.PENDING, due_at=now, attempts=0, failing_since=None)
        )
        if item_id is not None:
            statement = statement.where(OutboxRow.id == item_id)
        result = await self._s.execute(statement)
        return int(result.rowcount or 0)

    async def save_payloads(self, payloads: Mapping[int, OutboxPayload]) -> None:
        """Replace the payloads of rows (by id), in one statement."""
        if not payloads:
            return
        table = OutboxRow.__table__
        statement = (
            table.update()
            .where(table.c.id == bindparam("item"))
            .values(payload=bindparam("new_payload", type_=JSON))
        )
        await self._s.execute(
            statement,
            [{"item": k, "new_payload": payload_to_json(v)} for k, v in payloads.items()],
        )

    async def enqueue_notice(
        self, chat_id: int, kind: OutboxKind, text: str, now: datetime
    ) -> None:
        """A message not about one paper (a momentum spike, say), due now."""
        self._s.add(
            OutboxRow(
                chat_id=chat_id,
                batch_id=None,
                kind=kind,
                payload=payload_to_json(NoticePayload(text)),
                status=OutboxStatus.PENDING,
                due_at=now,
                created_at=now,
            )
        )
        await self._s.flush()

    async def fold_digest(
        self, chat_id: int, now: datetime, due: datetime | None, next_due: datetime | None
    ) -> int | None:
        """Take the chat's digest that fell due at `due`, and gather its waiting items
        into one digest row; returns how many items, or None when the digest was not
        there to take.

        Safe when several processes fold at once: the digest is taken with a
        compare-and-set of `next_digest_at` (from `due` to `next_due`), which only one
        transaction wins, and the items are those this transaction itself turned from
        pending to folded. The compare-and-set comes first, so on PostgreSQL a second
        folder waits on the chat's row and then finds it moved on, and on SQLite it
        waits for the write lock.
        """
        taken = await self._s.execute(
            update(ChatRow)
            .where(ChatRow.id == chat_id, ChatRow.next_digest_at == due)
            .values(next_digest_at=next_due)
            .execution_options(synchronize_session=False)
        )
        if not taken.rowcount:
            return None
        folded = (
            await self._s.execute(
                update(OutboxRow)
                .where(
                    OutboxRow.chat_id == chat_id,
                    OutboxRow.kind == OutboxKind.ITEM,
                    OutboxRow.status == OutboxStatus.PENDING,
                )
                .values(status=OutboxStatus.FOLDED)
                .returning(OutboxRow.id, OutboxRow.payload)
                .execution_options(synchronize_session=False)
            )
        ).all()
        if not folded:
            return 0
        items = [item_from_json(data) for _, data in folded]
        batches = sorted({b for item in items for b in item.batches or ()})
        papers = sorted({p for item in items for p in item.papers})
        self._s.add(
            OutboxRow(
                chat_id=chat_id,
                batch_id=None,
                kind=OutboxKind.DIGEST,
                payload=payload_to_json(DigestPayload(tuple(batches), tuple(papers))),
                status=OutboxStatus.PENDING,
                due_at=now,
                created_at=now,
            )
        )
        await self._s.flush()
        return len(folded)

    async def release_held(self, chat_id: int, now: datetime) -> None:
        """A chat switched to instant alerts: its waiting items become alerts now."""
        await self._s.execute(
            update(OutboxRow)
            .where(
                OutboxRow.chat_id == chat_id,
                OutboxRow.kind == OutboxKind.ITEM,
                OutboxRow.status == OutboxStatus.PENDING,
            )
            .values(kind=OutboxKind.ALERT, due_at=now)
        )

    async def counts(self) -> dict[OutboxStatus, int]:
        stmt = select(OutboxRow.status, func.count()).group_by(OutboxRow.status)
        return {OutboxStatus(status): int(n) for status, n in (await self._s.execute(stmt)).all()}

    async def dead_letters(self, limit: int = 5) -> list[tuple[int, int, OutboxKind, str | None]]:
        stmt = (
            select(OutboxRow.id, OutboxRow.chat_id, OutboxRow.kind, OutboxRow.last_error)
            .where(OutboxRow.status == OutboxStatus.DEAD)
            .order_by(OutboxRow.id.desc())
            .limit(limit)
        )
        rows = (await self._s.execute(stmt)).all()
        return [(item, chat, OutboxKind(kind), error) for item, chat, kind, error in rows]
