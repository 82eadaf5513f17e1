"""Fan-out: the new papers of an ingest become one batch, owed to every chat they may reach.

Written in the transaction that stores the papers, so a crash keeps both or neither.
Each paper joins at most one batch and each chat gets at most one outbox row per batch
(`chat_batch`), so a paper reaches a chat at most once however often an ingest is
repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, case, exists, func, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import DigestMode
from bot.outbox_payloads import ItemPayload, OutboxKind, OutboxStatus
from storage.models import BatchRow, ChatRow, OutboxRow, PaperRow, PaperTagRow, SubscriptionRow
from storage.outbox_json import payload_to_json
from storage.repositories import chunks


def _insert(session: AsyncSession) -> Any:
    return (postgresql if session.get_bind().dialect.name == "postgresql" else sqlite).insert


async def enqueue_batch(session: AsyncSession, paper_ids: Sequence[int], now: datetime) -> int:
    """Make the papers one batch and give it to every chat it may reach.

    A chat gets a row when it is active, not "off", and follows a tag of some paper
    in the batch; which papers it gets (after mutes) is worked out when the row is
    first claimed. Instant chats get an "alert" row, digest chats an "item" for their
    digest. Papers already in a batch are left out. Returns the rows written.
    """
    if not paper_ids:
        return 0
    batch = BatchRow(papers=0, created_at=now)
    session.add(batch)
    await session.flush()
    joined = 0
    for chunk in chunks(sorted(set(paper_ids))):
        result = await session.execute(
            update(PaperRow)
            .where(PaperRow.id.in_(chunk), PaperRow.batch_id.is_(None))
            .values(batch_id=batch.id)
            .execution_options(synchronize_session=False)
        )
        joined += int(result.rowcount or 0)
    if not joined:
        await session.delete(batch)
        await session.flush()
        return 0
    batch.papers = joined
    tags = (
        select(PaperTagRow.tag)
        .join(PaperRow, PaperRow.id == PaperTagRow.paper_id)
        .where(PaperRow.batch_id == batch.id)
        .distinct()
    )
    follows = exists().where(SubscriptionRow.chat_id == ChatRow.id, SubscriptionRow.tag.in_(tags))
    instant = ChatRow.digest_mode == DigestMode.INSTANT
    alert, item = literal(OutboxKind.ALERT.value), literal(OutboxKind.ITEM.value)
    # Items and alerts share a payload shape (`storage.outbox_json`).
    queued = payload_to_json(ItemPayload(batches=(batch.id,)))
    rows = select(
        ChatRow.id,
        literal(batch.id),
        case((instant, alert), else_=item),
        literal(queued, JSON),
        literal(OutboxStatus.PENDING.value),
        case((instant, literal(now)), else_=func.coalesce(ChatRow.next_digest_at, now)),
        literal(0),
        literal(now),
    ).where(ChatRow.active, ChatRow.digest_mode != DigestMode.OFF, follows)
    columns = ["chat_id", "batch_id", "kind", "payload", "status", "due_at", "attempts"]
    statement = _insert(session)(OutboxRow).from_select([*columns, "created_at"], rows)
    result = await session.execute(statement.on_conflict_do_nothing())
    return int(result.rowcount or 0)
