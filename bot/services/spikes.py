"""Heads-up when a followed topic spikes: checked after each poll, sent through the outbox.

The rule (see `bot.topics.momentum`) fires only on a real rise, and never before the
index covers the weeks it compares (sample papers never count); each chat hears about a
topic at most once in 14 days, and again only after the topic has calmed down.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from bot.outbox_payloads import OutboxKind
from bot.ports import UnitOfWork
from bot.topics.catalog import Catalog
from bot.topics.momentum import sentence
from bot.topics.spike_rule import advance

log = logging.getLogger(__name__)


async def check_spikes(
    uow_factory: Callable[[], UnitOfWork], catalog: Catalog, now: datetime
) -> int:
    """Queue a spike alert for every (chat, followed topic) whose rise is real; returns
    how many were queued."""
    queued = 0
    async with uow_factory() as uow:
        chats = await uow.chats.with_momentum_alerts()
        if not chats:
            return 0
        subs = await uow.subscriptions.for_chats(chats)
        tags = sorted({s.tag for group in subs.values() for s in group if s.tag})
        as_of = await uow.momentum.latest_announced(now.date()) or now.date()
        figures = await uow.momentum.for_tags(tags, as_of)
        for chat_id, group in subs.items():
            for sub in group:
                if sub.tag not in figures:
                    continue
                state = await uow.momentum.alert_state(chat_id, sub.tag)
                send, new_state = advance(figures[sub.tag], state, now)
                if new_state != state:
                    await uow.momentum.save_alert_state(chat_id, sub.tag, new_state)
                if send:
                    text = (
                        f"📈 {sub.label} is heating up: {sentence(figures[sub.tag])} "
                        f"/momentum {sub.label} shows the chart; /momentum alerts off stops "
                        "these heads-ups."
                    )
                    await uow.outbox.enqueue_notice(chat_id, OutboxKind.SPIKE, text, now)
                    queued += 1
        await uow.commit()
    if queued:
        log.info("momentum spike alerts queued=%d", queued)
    return queued
