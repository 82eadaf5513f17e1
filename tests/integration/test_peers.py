"""Processes sharing one bot: heartbeats, shares of the rate, and the chats split up."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from bot.adapters.console import CONSOLE_CHAT
from bot.domain import ChatKind
from bot.outbox_payloads import NoticePayload, OutboxKind, Progress
from bot.scheduler import Jobs
from bot.services.peers import Peers, Share, _rate, allot
from storage.database import Database
from tests.integration.test_delivery import START, Clock


async def test_live_processes_share_the_rate_and_split_the_chats(db: Database) -> None:
    clock = Clock(START)
    changes: list[Share] = []
    first = Peers(db.uow, "all", interval=5, clock=clock, on_share=changes.append)
    assert await first.beat() == Share(slot=0, workers=1, rate=30)
    assert first.ready()  # alone: nobody has to make room

    clock.advance(seconds=1)
    worker = Peers(db.uow, "worker", interval=5, clock=clock)
    assert await worker.beat() == Share(slot=1, workers=2, rate=15)
    assert not worker.ready()  # the first process still sends at the whole rate
    poller = Peers(db.uow, "poller", interval=5, clock=clock)
    # The poller only answers commands: a tenth of the rate; the workers split the rest
    # in whole messages a second (14 + 13).
    assert await poller.beat() == Share(slot=0, workers=2, rate=3)
    assert await first.beat() == Share(slot=0, workers=2, rate=14)
    assert changes == [Share(slot=0, workers=2, rate=14)]

    clock.advance(seconds=10)  # two intervals after the worker came
    assert worker.ready()
    await worker.leave()  # a clean stop: the others take over at their next beat
    assert await first.beat() == Share(slot=0, workers=1, rate=27)

    clock.advance(seconds=6)  # the poller is silent for over three intervals: dead
    assert await first.beat() == Share(slot=0, workers=1, rate=30)
    async with db.uow() as uow:
        assert [p.id for p in await uow.processes.live(START)] == [first.id]


async def test_each_worker_claims_only_its_own_chats(db: Database) -> None:
    async with db.uow() as uow:
        chats = [
            await uow.chats.get_or_create(
                replace(CONSOLE_CHAT, external_id=f"chat-{n}"), ChatKind.PRIVATE
            )
            for n in range(7)
        ]
        for chat in chats:
            await uow.outbox.enqueue_notice(chat.id, OutboxKind.NOTE, "hello", START)
        await uow.commit()
    claimed: list[set[int]] = []
    for slot in range(3):
        async with db.uow() as uow:
            items = await uow.outbox.claim(START, timedelta(minutes=2), 100, (slot, 3))
            await uow.commit()
        claimed.append({item.chat_id for item in items})
        assert all(chat_id % 3 == slot for chat_id in claimed[-1])
    assert set().union(*claimed) == {chat.id for chat in chats}
    assert sum(map(len, claimed)) == len(chats)  # nobody claimed another's chat


class Drains:
    def __init__(self) -> None:
        self.calls = 0

    async def drain(self) -> int:
        self.calls += 1
        return 0


async def test_a_newcomer_delivers_only_once_the_others_made_room(db: Database) -> None:
    clock = Clock(START)
    await Peers(db.uow, "worker", interval=5, clock=clock).beat()
    newcomer = Peers(db.uow, "worker", interval=5, clock=clock)
    drains = Drains()
    jobs = Jobs(db, None, drains, clock=clock, peers=newcomer)  # type: ignore[arg-type]
    await jobs.heartbeat()
    await jobs.deliver()
    assert drains.calls == 0
    clock.advance(seconds=10)
    await jobs.deliver()
    assert drains.calls == 1


@pytest.mark.parametrize("answering", range(4))
@pytest.mark.parametrize("workers", range(9))
def test_parts_are_whole_and_add_up_to_the_overall_rate(workers: int, answering: int) -> None:
    if not workers and not answering:
        return
    parts = [_rate(30.0, workers, answering, True, i) for i in range(workers)]
    parts += [_rate(30.0, workers, answering, False, i) for i in range(answering)]
    assert all(part == int(part) and part >= 1 for part in parts), parts
    assert sum(parts) == 30  # each limiter keeps any second to its whole number
    if workers:
        assert max(parts[:workers]) - min(parts[:workers]) <= 1  # an even split
    if workers and answering:
        assert sum(parts[workers:]) <= 15  # replies never take more than half


def test_less_than_one_a_second_each_is_split_evenly() -> None:
    assert allot(2.0, 4, 3) == 0.5
    assert allot(30.0, 4, 0) == 8.0 and allot(30.0, 4, 3) == 7.0


async def test_the_claims_of_a_process_taken_for_dead_are_released(db: Database) -> None:
    """A worker killed while it held a claim: once it has missed three beats, the first
    process to notice releases the claim, long before the lease would have ended."""
    clock = Clock(START)
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(CONSOLE_CHAT, ChatKind.PRIVATE)
        await uow.outbox.enqueue_notice(chat.id, OutboxKind.NOTE, "hello", START)
        await uow.commit()
    killed = Peers(db.uow, "worker", interval=5, clock=clock)
    survivor = Peers(db.uow, "worker", interval=5, clock=clock)
    await killed.beat()
    await survivor.beat()
    lease = timedelta(minutes=2)
    async with db.uow() as uow:
        (item,) = await uow.outbox.claim(START, lease, 10, claimed_by=killed.id)
        await uow.commit()

    clock.advance(seconds=10)  # two beats missed: not yet taken for dead
    await survivor.beat()
    async with db.uow() as uow:
        assert await uow.outbox.claim(clock(), lease, 10, claimed_by=survivor.id) == []
    clock.advance(seconds=6)  # three: dead, and its claim is released
    await survivor.beat()
    async with db.uow() as uow:
        (again,) = await uow.outbox.claim(clock(), lease, 10, claimed_by=survivor.id)
        await uow.commit()
    assert again.id == item.id and again.attempts == 1  # a kill is not a failed try

    # Should the "dead" one come back and settle its old claim, nothing changes: the
    # row belongs to the survivor's claim now.
    async with db.uow() as uow:
        await uow.outbox.record(
            [Progress(item.id, NoticePayload("hello"), done=True)], clock(), killed.id
        )
        await uow.outbox.failed(item.id, clock(), "timed out", clock(), killed.id)
        await uow.outbox.retry_at(item.id, clock(), "flood control", killed.id)
        await uow.outbox.mark_dead(item.id, "refused", killed.id)
        await uow.commit()
        assert await uow.outbox.counts() == {"sending": 1}
        await uow.outbox.record(
            [Progress(item.id, NoticePayload("hello"), done=True)], clock(), survivor.id
        )
        await uow.commit()
        assert await uow.outbox.counts() == {"sent": 1}


async def test_a_process_that_stops_releases_its_claims(db: Database) -> None:
    clock = Clock(START)
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(CONSOLE_CHAT, ChatKind.PRIVATE)
        await uow.outbox.enqueue_notice(chat.id, OutboxKind.NOTE, "hello", START)
        await uow.commit()
    stopping = Peers(db.uow, "worker", interval=5, clock=clock)
    await stopping.beat()
    async with db.uow() as uow:
        assert (
            len(await uow.outbox.claim(START, timedelta(minutes=2), 10, claimed_by=stopping.id))
            == 1
        )
        await uow.commit()
    await stopping.leave()
    async with db.uow() as uow:
        assert len(await uow.outbox.claim(START, timedelta(minutes=2), 10)) == 1
