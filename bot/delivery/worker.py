"""Draining the outbox: claim due rows, render, send through the platform, mark sent.

- Rate-limited: the row waits the server's delay (not counted as a failed attempt).
- Recipient gone: the chat is deactivated (its subscriptions are kept for /start).
- Chat moved: the chat takes its new id and the row is retried at once.
- Anything else: exponential backoff with jitter, then dead-lettered after
  `max_attempts` (visible in `paperwatch status`).

A digest too long for one message is sent part by part, each part recorded, so a
crash re-sends at most the part that was in flight.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.delivery.content import Audience, alert, digest
from bot.delivery.messenger import ChatMoved, Messenger, RateLimited, RecipientGone
from bot.delivery.schedule import next_digest_at, quiet_until
from bot.domain import Chat, ChatRef, Paper, Reply, Subscription
from bot.topics.catalog import Catalog
from bot.topics.momentum import sentence
from storage.outbox import OutboxItem
from storage.uow import UnitOfWork

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Job:
    """A claimed row with what it says, ready to send."""

    item: OutboxItem
    chat: Chat
    reply: Reply


def backoff(attempts: int, base: float = 5.0, cap: float = 3600.0) -> float:
    """Seconds before retry number `attempts`: exponential, capped, with full jitter."""
    return random.uniform(0.5, 1.0) * min(cap, base * 2 ** max(0, attempts - 1))


class Deliverer:
    def __init__(
        self,
        uow_factory: Callable[[], UnitOfWork],
        messengers: Mapping[str, Messenger],
        catalog: Catalog,
        *,
        clock: Clock = _utcnow,
        max_attempts: int = 8,
        lease: timedelta = timedelta(minutes=2),
        batch: int = 200,
    ) -> None:
        self._uow = uow_factory
        self._messengers = dict(messengers)
        self._catalog = catalog
        self._clock = clock
        self.max_attempts = max_attempts
        self._lease = lease
        self._batch = batch

    async def run_once(self) -> int:
        """Claim one batch and deliver it; chats in parallel, each chat's rows in order."""
        now = self._clock()
        async with self._uow() as uow:
            items = await uow.outbox.claim(now, self._lease, self._batch)
            await uow.commit()
        if not items:
            return 0
        jobs = await self._prepare(items)
        by_chat: dict[int, list[Job]] = {}
        for job in jobs:
            by_chat.setdefault(job.item.chat_id, []).append(job)
        await asyncio.gather(*(self._deliver_chat(group) for group in by_chat.values()))
        return len(items)

    async def drain(self, rounds: int = 1000) -> int:
        """Deliver until nothing is due (tests and `paperwatch deliver`)."""
        total = 0
        for _ in range(rounds):
            done = await self.run_once()
            if not done:
                break
            total += done
        return total

    async def _prepare(self, items: list[OutboxItem]) -> list[Job]:
        """Load everything a batch needs in a few queries, and settle what needs no send."""
        now = self._clock()
        chat_ids = {item.chat_id for item in items}
        paper_ids = {item.paper_id for item in items if item.paper_id is not None}
        paper_ids |= {int(p) for item in items for p in item.payload.get("papers", [])}
        async with self._uow() as uow:
            chats = await uow.chats.by_ids(chat_ids)
            subs = await uow.subscriptions.for_chats(chat_ids)
            mutes = await uow.mutes.for_chats(chat_ids)
            papers = await uow.papers.by_ids(sorted(paper_ids))
            momentum = await self._momentum(uow, items, subs)
            jobs = []
            for item in items:
                chat = chats.get(item.chat_id)
                if chat is None:
                    await uow.outbox.mark_dead(item.id, "chat no longer exists")
                    continue
                audience = Audience(tuple(subs.get(chat.id, ())), tuple(mutes.get(chat.id, ())))
                reply = self._content(chat, item, audience, papers, momentum)
                if reply is None:  # every reason was muted or unfollowed since it was queued
                    await uow.outbox.mark_sent(item.id, now)
                    continue
                jobs.append(Job(item, chat, reply))
            await uow.commit()
        return jobs

    async def _deliver_chat(self, jobs: list[Job]) -> None:
        for job in jobs:
            try:
                await self._deliver(job)
            except Exception:  # one bad row must never stop the others
                log.exception("delivery crashed outbox=%s chat=%s", job.item.id, job.chat.id)
                await self._failed(job.item, "internal error (see the log)")

    async def _deliver(self, job: Job) -> None:
        item, chat = job.item, job.chat
        now = self._clock()
        messenger = self._messengers.get(chat.platform.value)
        if messenger is None:
            await self._later(item, now + timedelta(minutes=1), f"no {chat.platform} adapter here")
            return
        if item.kind == "alert" and (until := quiet_until(chat, now)) is not None:
            await self._later(item, until, "quiet hours")
            return
        await self._send(item, chat, messenger, job.reply)

    async def _send(self, item: OutboxItem, chat: Chat, messenger: Messenger, reply: Reply) -> None:
        parts = messenger.render(chat, reply)
        start = int(item.payload.get("parts_sent", 0))
        try:
            for index in range(start, len(parts)):
                await messenger.deliver(chat, parts[index])
                if index + 1 < len(parts):
                    async with self._uow() as uow:
                        await uow.outbox.save_payload(
                            item.id, {**item.payload, "parts_sent": index + 1}
                        )
                        await uow.commit()
        except RateLimited as exc:
            log.info("rate limited outbox=%s chat=%s wait=%.1fs", item.id, chat.id, exc.retry_after)
            await self._later(item, self._clock() + timedelta(seconds=exc.retry_after), str(exc))
            return
        except ChatMoved as exc:
            log.info("chat moved chat=%s to=%s", chat.id, exc.new_external_id)
            async with self._uow() as uow:
                await uow.chats.move(
                    ChatRef(chat.platform, chat.external_id),
                    ChatRef(chat.platform, exc.new_external_id),
                )
                await uow.outbox.retry_at(item.id, self._clock(), str(exc), count_attempt=False)
                await uow.commit()
            return
        except RecipientGone as exc:
            log.warning("recipient gone chat=%s: %s; deactivating it", chat.id, exc)
            async with self._uow() as uow:
                await uow.chats.set_active(chat.id, False)
                await uow.outbox.retry_at(item.id, self._clock(), str(exc), count_attempt=False)
                await uow.commit()
            return
        except Exception as exc:
            log.warning(
                "delivery failed outbox=%s chat=%s attempt=%d: %s",
                item.id,
                chat.id,
                item.attempts,
                exc,
            )
            await self._failed(item, f"{type(exc).__name__}: {exc}")
            return
        async with self._uow() as uow:
            await uow.outbox.mark_sent(item.id, self._clock())
            await uow.commit()

    async def _momentum(
        self, uow: UnitOfWork, items: list[OutboxItem], subs: dict[int, list[Subscription]]
    ) -> dict[str, str]:
        """Momentum sentences for the topics of the digests in this batch (tag -> text)."""
        tags = {s.tag for i in items if i.kind == "digest" for s in subs.get(i.chat_id, ())}
        if not tags:
            return {}
        today = self._clock().date()
        as_of = await uow.momentum.latest_announced(today) or today
        figures = await uow.momentum.for_tags(sorted(tags), as_of)
        return {tag: sentence(m) for tag, m in figures.items() if m.last_28 or m.prior_28}

    def _content(
        self,
        chat: Chat,
        item: OutboxItem,
        audience: Audience,
        papers: dict[int, Paper],
        momentum: dict[str, str],
    ) -> Reply | None:
        if item.kind == "alert" and item.paper_id is not None:
            paper = papers.get(item.paper_id)
            return alert(self._catalog, paper, audience) if paper else None
        if item.kind == "digest":
            ids = [int(i) for i in item.payload.get("papers", [])]
            weekly = chat.digest_mode.value == "weekly"
            title = "Your weekly digest" if weekly else "Your daily digest"
            found = [papers[i] for i in ids if i in papers]
            return digest(self._catalog, found, audience, title, momentum)
        text = item.payload.get("text")
        return Reply.text(str(text)) if text else None

    async def _later(self, item: OutboxItem, when: datetime, why: str) -> None:
        async with self._uow() as uow:
            await uow.outbox.retry_at(item.id, when, why, count_attempt=False)
            await uow.commit()

    async def _failed(self, item: OutboxItem, error: str) -> None:
        async with self._uow() as uow:
            if item.attempts >= self.max_attempts:
                log.error(
                    "dead letter outbox=%s chat=%s after %d attempts: %s",
                    item.id,
                    item.chat_id,
                    item.attempts,
                    error,
                )
                await uow.outbox.mark_dead(item.id, error)
            else:
                when = self._clock() + timedelta(seconds=backoff(item.attempts))
                await uow.outbox.retry_at(item.id, when, error)
            await uow.commit()


async def fold_due_digests(
    uow_factory: Callable[[], UnitOfWork], now: datetime, limit: int = 500
) -> int:
    """Turn the waiting items of every chat whose digest time has come into a digest."""
    async with uow_factory() as uow:
        chats = await uow.chats.due_for_digest(now, limit)
    folded = 0
    for chat in chats:
        async with uow_factory() as uow:
            papers = await uow.outbox.fold_digest(chat.id, now)
            await uow.chats.update(chat.id, next_digest_at=next_digest_at(chat, now))
            await uow.commit()
        folded += 1 if papers else 0
    return folded
