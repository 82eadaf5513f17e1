"""Digest folding by two processes at once (a poller that lost its lock without
knowing it yet, beside the new one): every chat still gets exactly one digest."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta

from sqlalchemy import func, select

from bot.domain import ChatKind, ChatRef, Paper, Platform, SubscriptionKind
from bot.services.digests import fold_due_digests
from bot.services.ingest import store
from bot.topics.catalog import load_catalog
from storage.database import Database
from storage.models import OutboxRow
from tests.integration.test_delivery import START

CHATS = 200
DUE = (START + timedelta(days=1)).replace(hour=8)  # the default digest time, 08:00 UTC


async def digest_chats_with_waiting_papers(db: Database, due: datetime, wave: int = 0) -> None:
    """CHATS Telegram chats with a daily digest due at `due`, each with papers waiting
    for it (wave `wave` of papers: call again with another for a new batch)."""
    catalog = load_catalog()
    async with db.uow() as uow:
        for n in range(CHATS):
            chat = await uow.chats.get_or_create(
                ChatRef(Platform.TELEGRAM, str(5000 + n)), ChatKind.PRIVATE
            )
            await uow.chats.update(chat.id, next_digest_at=due)
            if not wave:
                await uow.subscriptions.add(
                    chat.id,
                    SubscriptionKind.TOPIC,
                    "rl-for-llm-agents",
                    "RL for LLM Agents",
                    "rl-for-llm-agents",
                )
        papers = [
            Paper(
                arxiv_id=f"2611.{wave:02d}{i:03d}",
                title=f"Paper {wave}-{i}",
                abstract="We propose a thing.",
                categories=("cs.LG",),
                announced=date(2026, 11, 2),
                tags=("RL for LLM Agents",),
            )
            for i in range(3)
        ]
        await store(uow, papers, catalog, due - timedelta(hours=1))
        await uow.commit()


async def digests_per_chat(db: Database) -> dict[int, int]:
    async with db.uow() as uow:
        rows = await uow.session.execute(
            select(OutboxRow.chat_id, func.count())
            .where(OutboxRow.kind == "digest")
            .group_by(OutboxRow.chat_id)
        )
        return {chat: int(n) for chat, n in rows.all()}


async def test_two_folds_at_once_give_each_chat_one_digest(
    db: Database, database_url: tuple[str, dict]
) -> None:
    url, options = database_url
    due = DUE
    await digest_chats_with_waiting_papers(db, due)
    other = Database(url, **options)  # a second process on the same database
    try:
        folded = await asyncio.gather(
            fold_due_digests(db.uow, due), fold_due_digests(other.uow, due)
        )
    finally:
        await other.dispose()
    assert sum(folded) == CHATS
    per_chat = await digests_per_chat(db)
    assert len(per_chat) == CHATS and set(per_chat.values()) == {1}, per_chat
    async with db.uow() as uow:
        counts = await uow.outbox.counts()
        chats = await uow.chats.due_for_digest(due + timedelta(hours=23), CHATS)
    assert counts == {"pending": CHATS, "folded": CHATS}  # every item folded, once
    assert chats == []  # and every chat's next digest is tomorrow's


async def test_a_digest_moved_meanwhile_is_left_to_the_next_tick(db: Database) -> None:
    """A chat whose digest time changed between the read and the fold is not folded on
    the stale time (the compare-and-set misses); the next tick folds it on the new."""
    due = DUE
    await digest_chats_with_waiting_papers(db, due)
    async with db.uow() as uow:
        (chat, *_) = await uow.chats.due_for_digest(due, 1)
        await uow.commit()
    async with db.uow() as uow:
        later = due + timedelta(hours=2)
        await uow.chats.update(chat.id, next_digest_at=later)
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.outbox.fold_digest(chat.id, due, chat.next_digest_at, None) is None
    assert await fold_due_digests(db.uow, due) == CHATS - 1
    assert chat.id not in await digests_per_chat(db)
    assert await fold_due_digests(db.uow, later) == 1
    assert (await digests_per_chat(db))[chat.id] == 1
