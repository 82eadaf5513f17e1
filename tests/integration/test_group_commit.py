"""Group commit: concurrent records share transactions, and each caller learns the outcome."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from bot.domain import ChatKind, ChatRef, Platform
from bot.outbox_payloads import NoticePayload, OutboxKind, Progress
from bot.services.group_commit import GroupCommit
from storage.database import Database
from storage.uow import UnitOfWork

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


async def claimed_rows(db: Database, n: int) -> list[int]:
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ChatRef(Platform.CONSOLE, "1"), ChatKind.PRIVATE)
        for k in range(n):
            await uow.outbox.enqueue_notice(chat.id, OutboxKind.SPIKE, f"notice {k}", NOW)
        items = await uow.outbox.claim(NOW, timedelta(minutes=2), n)
        await uow.commit()
    return [item.id for item in items]


async def test_concurrent_records_share_transactions(db: Database) -> None:
    ids = await claimed_rows(db, 40)
    opened = []

    def counting() -> UnitOfWork:
        opened.append(1)
        return db.uow()

    commits = GroupCommit(counting, lambda: NOW)
    await asyncio.gather(
        *(
            commits.record([Progress(i, NoticePayload("notice", parts_sent=1), done=True)])
            for i in ids
        )
    )
    assert 1 <= len(opened) < len(ids) / 2  # the first goes alone, the rest wait together
    async with db.uow() as uow:
        assert await uow.outbox.counts() == {"sent": 40}


async def test_a_failed_commit_reaches_every_waiter(db: Database) -> None:
    ids = await claimed_rows(db, 5)

    class Broken(Exception):
        pass

    def broken() -> UnitOfWork:
        raise Broken("database went away")

    commits = GroupCommit(broken, lambda: NOW)
    results = await asyncio.gather(
        *(commits.record([Progress(i, NoticePayload("notice"), done=True)]) for i in ids),
        return_exceptions=True,
    )
    assert all(isinstance(r, Broken) for r in results)
    async with db.uow() as uow:
        assert await uow.outbox.counts() == {"sending": 5}  # nothing recorded: resent later


async def test_nothing_to_record_opens_nothing() -> None:
    def refuse() -> UnitOfWork:
        raise AssertionError("no transaction wanted")

    await GroupCommit(refuse, lambda: NOW).record([])
