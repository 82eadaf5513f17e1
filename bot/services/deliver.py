"""Draining the outbox: claim due rows, send one message of each, record it.

A row holds everything one batch of papers owes a chat (one alert a paper), a digest
(one message a part) or a notice. Each claim sends the row's next message and records
how far it got; a row with more to say is due again at once and goes to the back of
the queue, so a chat with forty alerts does not hold up the next chat's first one. The
records of concurrent sends share transactions (`GroupCommit`), and a row cannot be
claimed again before its record is committed: a crash re-sends at most the messages
that were in flight, one per chat (delivery is at least once).

- Rate-limited: the row waits the server's delay (not counted as a failed attempt).
- Recipient gone: the chat is deactivated (its subscriptions are kept for /start).
- Chat moved: the chat takes its new id and the row is retried at once.
- Permanent (the platform refuses this message and always will): dead at once.
- Anything else (an outage, a 5xx, a timeout): exponential backoff with jitter,
  capped at an hour, for as long as the failures last; the row dies only once they
  have lasted `give_up_after` (24 hours by default) counted from the first failure
  in a row. Dead rows show in `paperwatch status`; `paperwatch outbox retry-dead`
  brings them back.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

from bot.domain import Chat, ChatRef, Subscription
from bot.log_json import log_context
from bot.metrics import Metrics
from bot.outbox_payloads import OutboxItem, OutboxKind, OutboxPayload, Progress
from bot.ports import ChatMoved, Messenger, Permanent, RateLimited, RecipientGone, UnitOfWork
from bot.services.deliver_steps import Job, learns, next_step, papers_wanted, unresolved_payload
from bot.services.group_commit import GroupCommit
from bot.services.model_training import train_stale
from bot.topics.catalog import Catalog
from bot.topics.chat_times import quiet_until
from bot.topics.content import Audience
from bot.topics.momentum import sentence

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def backoff(attempts: int, base: float = 5.0, cap: float = 3600.0) -> float:
    """Seconds before retry number `attempts`: exponential, capped, with full jitter.

    Any number of attempts is fine (an outage may last the whole give-up budget): the
    exponent stops growing long before a float could overflow."""
    exponent = min(max(0, attempts - 1), 64)
    return random.uniform(0.5, 1.0) * min(cap, base * 2.0**exponent)


class Deliverer:
    def __init__(
        self,
        uow_factory: Callable[[], UnitOfWork],
        messengers: Mapping[str, Messenger],
        catalog: Catalog,
        *,
        clock: Clock = _utcnow,
        give_up_after: timedelta = timedelta(hours=24),
        lease: timedelta = timedelta(minutes=2),
        concurrency: int = 128,
        process_id: str | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._uow = uow_factory
        self.metrics = metrics or Metrics()
        self._messengers = dict(messengers)
        self._catalog = catalog
        self._clock = clock
        self.give_up_after = give_up_after
        self._lease = lease
        self._concurrency = max(1, concurrency)
        # Claims carry this process's id (`bot.services.peers`), so they are released
        # when it is taken for dead, and only this process records what it sent.
        self._process_id = process_id
        self._commits = GroupCommit(uow_factory, clock, claimed_by=process_id)
        # (slot, workers): this worker's part of the chats (`bot.services.peers`).
        self.share = (0, 1)

    async def drain(self) -> int:
        """Deliver until nothing is due; returns the messages sent.

        Up to `concurrency` rows are in flight; more are claimed whenever half of them
        are done. A chat's rows are sent one after the other, in the order claimed.
        Cancelled (the process stops), it claims no more and waits for those in flight.
        Chats that voted since their model was trained get it retrained first.
        """
        await train_stale(self._uow, self._clock, share=self.share)
        sent = 0
        running = 0
        latest: dict[int, asyncio.Task[int]] = {}  # each chat's last task
        finished: list[tuple[int, asyncio.Task[int]]] = []
        wake = asyncio.Event()

        def done(chat_id: int, task: asyncio.Task[int]) -> None:
            # O(1) a message; asyncio.wait() would re-hook every task in flight each time.
            finished.append((chat_id, task))
            wake.set()

        idle = False
        try:
            while True:
                room = self._concurrency - running
                if not idle and room >= max(1, self._concurrency // 2):
                    claimed, jobs = await self._claim(room)
                    idle = not claimed
                    for job in jobs:
                        task = asyncio.create_task(self._deliver(job, latest.get(job.chat.id)))
                        task.add_done_callback(partial(done, job.chat.id))
                        latest[job.chat.id] = task
                        running += 1
                    if claimed and not jobs:
                        continue  # all settled without a message: look for more
                if not running:
                    if idle:
                        return sent
                    continue
                await wake.wait()
                wake.clear()
                for chat_id, task in finished:
                    running -= 1
                    sent += task.result()
                    if latest.get(chat_id) is task:
                        del latest[chat_id]
                finished.clear()
                idle = False  # finished rows may be due again
        except asyncio.CancelledError:  # stopping: claim nothing more, let the sends in
            if latest:  # flight end and be recorded (each chat's last waits for the others)
                await asyncio.wait(list(latest.values()))
            raise

    async def _claim(self, limit: int) -> tuple[int, list[Job]]:
        """Claim up to `limit` rows, load what they need, and settle those with nothing
        to send. Returns how many rows were claimed and the messages to send."""
        now = self._clock()
        async with self._uow() as uow:
            items = await uow.outbox.claim(
                now, self._lease, limit, self.share, claimed_by=self._process_id
            )
            claimed = len(items)
            if not items:
                return 0, []
            chat_ids = {item.chat_id for item in items}
            chats = await uow.chats.by_ids(chat_ids)
            subs = await uow.subscriptions.for_chats(chat_ids)
            mutes = await uow.mutes.for_chats(chat_ids)
            audiences = {
                chat_id: Audience(tuple(subs.get(chat_id, ())), tuple(mutes.get(chat_id, ())))
                for chat_id in chats
            }
            for item in items:
                if item.chat_id not in chats:
                    await uow.outbox.mark_dead(item.id, "chat no longer exists", self._process_id)
            items = await self._resolve(uow, [i for i in items if i.chat_id in chats], audiences)
            papers = await uow.papers.by_ids(sorted({p for i in items for p in papers_wanted(i)}))
            momentum = await self._momentum(uow, items, subs)
            models = await uow.feedback.models({i.chat_id for i in items if learns(i, chats)})
            await uow.commit()
        jobs: list[Job] = []
        settled: list[Progress] = []
        for item in items:
            chat = chats[item.chat_id]
            audience, model = audiences[chat.id], models.get(chat.id)
            step = next_step(self._catalog, item, chat, audience, papers, momentum, model)
            if isinstance(step, Job):
                jobs.append(step)
            else:
                settled.append(step)
        await self._commits.record(settled)
        return claimed, jobs

    async def _resolve(
        self, uow: UnitOfWork, items: list[OutboxItem], audiences: dict[int, Audience]
    ) -> list[OutboxItem]:
        """Turn the batches of rows claimed for the first time into the papers each chat
        gets (after mutes), and keep that list: later claims send from the same list."""
        unresolved = {item.id: p for item in items if (p := unresolved_payload(item)) is not None}
        batch_ids = {b for p in unresolved.values() for b in p.batches or ()}
        if not batch_ids:
            return items
        by_tag: dict[int, dict[str, list[int]]] = {}
        tags_of: dict[int, Sequence[str]] = {}
        for batch, papers in (await uow.papers.batch_tags(batch_ids)).items():
            index = by_tag.setdefault(batch, {})
            for paper, tags in papers.items():
                tags_of[paper] = tags
                for tag in tags:
                    index.setdefault(tag, []).append(paper)
        frozen: dict[int, OutboxPayload] = {}
        resolved = []
        for item in items:
            pending = unresolved.get(item.id)
            if pending is None:
                resolved.append(item)
                continue
            audience = audiences[item.chat_id]
            found = set(pending.papers)
            for batch in pending.batches or ():
                index = by_tag.get(batch, {})
                for sub in audience.subscriptions:
                    found.update(
                        p for p in index.get(sub.tag, ()) if audience.reasons_for(tags_of[p])
                    )
            payload = replace(pending, batches=None, papers=tuple(sorted(found)))
            frozen[item.id] = payload
            resolved.append(replace(item, payload=payload))
        await uow.outbox.save_payloads(frozen)
        return resolved

    async def _deliver(self, job: Job, before: asyncio.Task[int] | None) -> int:
        """Send one job after the chat's previous one; returns the messages sent."""
        if before is not None:
            await asyncio.wait([before])
        with log_context(chat_id=job.chat.id, outbox_id=job.item.id):  # JSON log lines
            try:
                return await self._send(job)
            except Exception:  # one bad row must never stop the others
                log.exception("delivery crashed outbox=%s chat=%s", job.item.id, job.chat.id)
                await self._failed(job.item, "internal error (see the log)")
                return 0

    async def _send(self, job: Job) -> int:
        item, chat = job.item, job.chat
        now = self._clock()
        messenger = self._messengers.get(chat.platform.value)
        if messenger is None:
            await self._later(item, now + timedelta(minutes=1), f"no {chat.platform} adapter here")
            return 0
        if item.kind == OutboxKind.ALERT and (until := quiet_until(chat, now)) is not None:
            await self._later(item, until, "quiet hours")
            return 0
        parts = messenger.render(chat, job.reply)
        last = job.last
        if job.part is not None:
            if job.part >= len(parts):  # the digest got shorter since its last part
                await self._commits.record([Progress(item.id, job.payload, done=True)])
                return 0
            parts, last = [parts[job.part]], job.part + 1 >= len(parts)
        try:
            for message in parts:
                await messenger.deliver(chat, message)
        except Exception as exc:
            await self._not_sent(item, chat, exc)
            return 0
        await self._commits.record([Progress(item.id, job.payload, done=last)])
        self.metrics.sent(chat.platform.value, "sent", len(parts))
        if item.kind == OutboxKind.ALERT:
            self.metrics.alert_sent(chat.platform.value, job.announced, self._clock())
        return len(parts)

    async def _not_sent(self, item: OutboxItem, chat: Chat, exc: Exception) -> None:
        """What a failed send means for the row (and the chat), by the error's meaning."""
        platform = chat.platform.value
        if isinstance(exc, RateLimited):
            log.info("rate limited outbox=%s chat=%s wait=%.1fs", item.id, chat.id, exc.retry_after)
            self.metrics.limited(platform, exc.retry_after)
            await self._later(item, self._clock() + timedelta(seconds=exc.retry_after), str(exc))
        elif isinstance(exc, ChatMoved):
            log.info("chat moved chat=%s to=%s", chat.id, exc.new_external_id)
            self.metrics.sent(platform, "chat_moved")
            async with self._uow() as uow:
                await uow.chats.move(
                    ChatRef(chat.platform, chat.external_id),
                    ChatRef(chat.platform, exc.new_external_id),
                )
                await uow.outbox.retry_at(item.id, self._clock(), str(exc), self._process_id)
                await uow.commit()
        elif isinstance(exc, RecipientGone):
            log.warning("recipient gone chat=%s: %s; deactivating it", chat.id, exc)
            self.metrics.sent(platform, "recipient_gone")
            async with self._uow() as uow:
                await uow.chats.set_active(chat.id, False)
                await uow.outbox.retry_at(item.id, self._clock(), str(exc), self._process_id)
                await uow.commit()
        elif isinstance(exc, Permanent):
            self.metrics.sent(platform, "refused")
            await self._failed(item, f"refused for good: {exc}", permanent=True)
        else:
            log.warning(
                "delivery failed outbox=%s chat=%s attempt=%d: %s",
                item.id,
                chat.id,
                item.attempts,
                exc,
            )
            self.metrics.sent(platform, "failed")
            await self._failed(item, f"{type(exc).__name__}: {exc}")

    async def _momentum(
        self,
        uow: UnitOfWork,
        items: list[OutboxItem],
        subs: Mapping[int, Sequence[Subscription]],
    ) -> dict[str, str]:
        """Momentum sentences for the topics of the digests in this batch (tag -> text),
        only once the index covers the weeks they compare: before that a digest section
        has its own count ("(21 new)") and nothing more is known."""
        tags = {
            s.tag for i in items if i.kind == OutboxKind.DIGEST for s in subs.get(i.chat_id, ())
        }
        if not tags:
            return {}
        today = self._clock().date()
        as_of = await uow.momentum.latest_announced(today) or today
        figures = await uow.momentum.for_tags(sorted(tags), as_of)
        return {
            tag: sentence(m)
            for tag, m in figures.items()
            if m.compared and (m.last_28 or m.prior_28)
        }

    async def _later(self, item: OutboxItem, when: datetime, why: str) -> None:
        async with self._uow() as uow:
            await uow.outbox.retry_at(item.id, when, why, self._process_id)
            await uow.commit()

    async def _failed(self, item: OutboxItem, error: str, *, permanent: bool = False) -> None:
        """A failed try: dead when `permanent` or when the failures have lasted
        `give_up_after`; otherwise due again after a backoff (never past that budget,
        so the last try comes when it ends)."""
        now = self._clock()
        since = item.failing_since or now
        give_up_at = since + self.give_up_after
        async with self._uow() as uow:
            if permanent or now >= give_up_at:
                log.error(
                    "dead letter outbox=%s chat=%s after %d attempt(s) since %s: %s",
                    item.id,
                    item.chat_id,
                    item.attempts,
                    since.isoformat(timespec="seconds"),
                    error,
                )
                await uow.outbox.mark_dead(item.id, error, self._process_id)
            else:
                when = min(now + timedelta(seconds=backoff(item.attempts)), give_up_at)
                await uow.outbox.failed(item.id, when, error, now, self._process_id)
            await uow.commit()
