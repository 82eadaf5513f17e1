"""`paperwatch outbox retry-dead` as an operator runs it, on a real SQLite file."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.domain import ChatKind, ChatRef, Platform
from bot.outbox_payloads import OutboxKind, OutboxStatus
from storage.database import Database
from tests.e2e.test_cli import paperwatch


async def dead_letters(url: str, count: int) -> list[int]:
    """`count` notices to one chat, each dead-lettered; returns their ids."""
    db = Database(url)
    await db.upgrade()
    now = datetime.now(UTC)
    try:
        async with db.uow() as uow:
            chat = await uow.chats.get_or_create(
                ChatRef(Platform.TELEGRAM, "4242"), ChatKind.PRIVATE
            )
            for n in range(count):
                await uow.outbox.enqueue_notice(chat.id, OutboxKind.NOTE, f"notice {n}", now)
            items = await uow.outbox.claim(now, timedelta(minutes=2), 99)
            for item in items:
                await uow.outbox.mark_dead(item.id, "Permanent: message is too long")
            await uow.commit()
            assert await uow.outbox.counts() == {"dead": count}
    finally:
        await db.dispose()
    return [item.id for item in items]


async def counts(url: str) -> dict[OutboxStatus, int]:
    db = Database(url)
    try:
        async with db.uow() as uow:
            return await uow.outbox.counts()
    finally:
        await db.dispose()


def test_retry_dead_requeues_one_or_all_and_status_shows_what_is_left(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'pw.db'}"
    env = {"PAPERWATCH_DATABASE_URL": url}
    first, second, _ = asyncio.run(dead_letters(url, 3))

    status = paperwatch("status", cwd=tmp_path, env=env)
    assert f"dead letter #{first} (note to chat 1): Permanent: message is too long" in status.stdout

    missing = paperwatch("outbox", "retry-dead", "--id", "999", cwd=tmp_path, env=env)
    assert missing.returncode == 1 and "No dead letter #999" in missing.stdout
    one = paperwatch("outbox", "retry-dead", "--id", str(second), cwd=tmp_path, env=env)
    assert one.returncode == 0 and "Requeued 1 dead letter(s)" in one.stdout, one.stderr
    assert asyncio.run(counts(url)) == {"dead": 2, "pending": 1}

    rest = paperwatch("outbox", "retry-dead", cwd=tmp_path, env=env)
    assert rest.returncode == 0 and "Requeued 2 dead letter(s)" in rest.stdout, rest.stderr
    assert asyncio.run(counts(url)) == {"pending": 3}
    status = paperwatch("status", cwd=tmp_path, env=env)
    assert "3 pending" in status.stdout and "dead letter #" not in status.stdout


def test_retry_dead_with_nothing_dead_says_so(tmp_path: Path) -> None:
    env = {"PAPERWATCH_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'pw.db'}"}
    result = paperwatch("outbox", "retry-dead", cwd=tmp_path, env=env)
    assert result.returncode == 0 and "Requeued 0 dead letter(s)" in result.stdout
    bad = paperwatch("outbox", "resurrect", cwd=tmp_path, env=env)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
