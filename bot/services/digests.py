"""Digests: at each chat's local digest time, its waiting items become one digest row.

Each chat's digest is taken with a compare-and-set (`OutboxRepository.fold_digest`), so
two processes folding at once never give a chat two digests.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.domain import Chat, DigestMode
from bot.outbox_payloads import OutboxKind
from bot.ports import UnitOfWork
from bot.topics.chat_times import next_digest_at

log = logging.getLogger(__name__)


async def fold_due_digests(
    uow_factory: Callable[[], UnitOfWork], now: datetime, limit: int = 500
) -> int:
    """Turn the waiting items of every chat whose digest time has come into a digest.

    Each chat's digest is taken with a compare-and-set (`OutboxRepository.fold_digest`),
    so two processes folding at once (a poller that lost its lock and does not know it
    yet, say) never give a chat two digests.
    """
    async with uow_factory() as uow:
        chats = await uow.chats.due_for_digest(now, limit)
    folded = 0
    for chat in chats:
        async with uow_factory() as uow:
            items = await uow.outbox.fold_digest(
                chat.id, now, chat.next_digest_at, next_digest_at(chat, now)
            )
            if items is None:  # another process took this digest (or it moved)
                log.info("digest taken elsewhere chat=%s", chat.id)
                continue
            if not items and chat.empty_digest_note:
                await uow.outbox.enqueue_notice(
                    chat.id, OutboxKind.NOTE, await _nothing_new(uow, chat, now), now
                )
            await uow.commit()
        folded += 1 if items else 0
    return folded


async def _nothing_new(uow: UnitOfWork, chat: Chat, now: datetime) -> str:
    """The note for an empty digest: no matches, or no mailing at all."""
    weekly = chat.digest_mode == DigestMode.WEEKLY
    announced = await uow.papers.new_since(now - timedelta(days=7 if weekly else 1))
    period = "this week" if weekly else "since yesterday's digest"
    if announced:
        return (
            f"Nothing new on what you follow {period}: none of the {announced:,} new papers"
            " arXiv announced matched."
        )
    return (
        f"Nothing new {period}: arXiv announced no new papers (there is no mailing on"
        " weekends and holidays)."
    )
