"""The outbox end to end on both databases, with a recording messenger at the port.

Time is injected: every test runs on a fake clock.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from bot.adapters.console import CONSOLE_CHAT, handle_line
from bot.domain import (
    AnnounceType,
    Author,
    Chat,
    ChatKind,
    Paper,
    Platform,
    Reply,
    SubscriptionKind,
)
from bot.ports import ChatMoved, Permanent, RateLimited, RecipientGone, Transient
from bot.services.deliver import Deliverer
from bot.services.digests import fold_due_digests
from bot.services.ingest import store
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

START = datetime(2026, 9, 24, 6, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class Recorder:
    """A Messenger at the port: records what would be sent; can be told to fail."""

    platform = Platform.CONSOLE

    def __init__(self, parts: int = 1) -> None:
        self.sent: list[tuple[str, str]] = []
        self.failures: list[Exception] = []
        self.fail_on: dict[int, Exception] = {}  # call number (from 1) -> error
        self.calls = 0
        self.parts = parts

    def render(self, chat: Chat, reply: Reply) -> list[str]:
        text = "\n".join(reply.lines + tuple(p.paper.title for p in reply.papers))
        text += "".join(
            f"\n{s.heading}: " + ", ".join(p.paper.title for p in s.papers) + f" [{s.note}]"
            for s in reply.sections
        )
        return [f"[{i + 1}/{self.parts}] {text}" for i in range(self.parts)]

    async def deliver(self, chat: Chat, message: object) -> None:
        self.calls += 1
        if self.calls in self.fail_on:
            raise self.fail_on.pop(self.calls)
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((chat.external_id, str(message)))


def paper(n: int, title: str, abstract: str, **extra: object) -> Paper:
    return Paper(
        arxiv_id=f"2609.{n:05d}",
        title=title,
        abstract=abstract,
        authors=(Author("Ada Lovelace", ("Analytical Engines",)),),
        categories=("cs.LG",),
        announced=START.date(),
        **extra,  # type: ignore[arg-type]
    )


WEB_RL = paper(
    1,
    "Reinforcement learning for web agents",
    "We train a web agent with reinforcement learning on browsing tasks.",
)
RAG = paper(2, "Agentic RAG for agents", "An agent decides when to call RAG retrieval.")
OTHER = paper(3, "Protein folding", "Nothing about our topics.")


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def chat_ctx(db: Database, small_catalog: Catalog, clock: Clock) -> Context:
    return Context(uow=db.uow, catalog=small_catalog, clock=clock)


@pytest.fixture
def deliverer(db: Database, small_catalog: Catalog, clock: Clock, recorder: Recorder) -> Deliverer:
    return Deliverer(db.uow, {"console": recorder}, small_catalog, clock=clock)


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return "\n".join(reply.lines)


async def ingest(db: Database, catalog: Catalog, clock: Clock, *papers: Paper) -> None:
    async with db.uow() as uow:
        await store(uow, papers, catalog, clock())
        await uow.commit()


async def outbox(db: Database) -> dict[str, int]:
    async with db.uow() as uow:
        return await uow.outbox.counts()


async def test_one_alert_per_paper_listing_every_followed_topic(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/follow Reinforcement Learning")
    assert "sent as soon as" in await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL, OTHER)
    assert await deliverer.drain() == 1
    assert len(recorder.sent) == 1
    text = recorder.sent[0][1]
    assert "New on Web Agents, Reinforcement Learning:" in text
    assert WEB_RL.title in text

    # Storing the same papers again, or a new version of one, alerts nobody.
    await ingest(db, small_catalog, clock, WEB_RL, OTHER)
    await ingest(
        db, small_catalog, clock, replace(WEB_RL, version=2, announce_type=AnnounceType.REPLACE)
    )
    assert await deliverer.drain() == 0
    assert await outbox(db) == {"sent": 1}


async def test_unscoped_and_scoped_mutes(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Reinforcement Learning")
    await say(chat_ctx, "/follow RL for LLM Agents")
    await say(chat_ctx, "/digest instant")
    # Web Agents muted only within "Reinforcement Learning": WEB_RL still comes via the other topic.
    assert "Muted Web Agents in Reinforcement Learning" in await say(
        chat_ctx, "/mute Web Agents in Reinforcement Learning"
    )
    await ingest(db, small_catalog, clock, WEB_RL)
    await deliverer.drain()
    assert len(recorder.sent) == 1 and "New on RL for LLM Agents:" in recorder.sent[0][1]

    # Muted everywhere: the next such paper is never queued at all.
    await say(chat_ctx, "/mute Web Agents")
    await ingest(db, small_catalog, clock, replace(WEB_RL, arxiv_id="2609.00099"))
    assert await deliverer.drain() == 0 and len(recorder.sent) == 1
    muted = await say(chat_ctx, "/muted")
    assert "• Web Agents" in muted and "(in Reinforcement Learning)" in muted


async def test_a_mute_pressed_after_queueing_still_holds(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    await say(chat_ctx, "/unfollow Web Agents")
    assert await deliverer.drain() == 0
    assert recorder.sent == []  # nothing left to say: dropped, not sent
    assert await outbox(db) == {"sent": 1}


async def test_daily_digest_in_the_chats_time_zone(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/timezone Europe/Berlin")
    assert "daily digest at 07:30" in await say(chat_ctx, "/digest daily 07:30")
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/follow Agentic RAG")
    await ingest(db, small_catalog, clock, WEB_RL, RAG, OTHER)
    assert await deliverer.drain() == 0  # held for the digest

    clock.now = datetime(2026, 9, 25, 5, 29, tzinfo=UTC)  # 07:29 in Berlin (CEST)
    assert await fold_due_digests(db.uow, clock()) == 0
    clock.now = datetime(2026, 9, 25, 5, 30, tzinfo=UTC)  # 07:30 in Berlin
    assert await fold_due_digests(db.uow, clock()) == 1
    assert await deliverer.drain() == 1
    text = recorder.sent[0][1]
    assert "Your daily digest: 2 new paper(s)" in text
    assert (
        f"Web Agents (1 new): {WEB_RL.title} [" in text
        and f"Agentic RAG (1 new): {RAG.title} [" in text
    )
    # One day indexed: no momentum line (a rate from one day would claim what it cannot).
    assert text.count(" [None]") == 2 and "of all new papers" not in text, text
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
    assert chat.next_digest_at == datetime(2026, 9, 26, 5, 30, tzinfo=UTC)

    # Nothing new by the next digest: no message at all.
    clock.now = datetime(2026, 9, 26, 5, 31, tzinfo=UTC)
    await fold_due_digests(db.uow, clock())
    assert await deliverer.drain() == 0


async def test_a_digest_carries_momentum_once_eight_weeks_are_indexed(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/digest daily 08:00")
    await say(chat_ctx, "/follow Web Agents")
    first = START.date() - timedelta(days=55)  # the first day of the eight weeks
    days = [first + timedelta(days=n) for n in range(55)]
    background = [
        replace(paper(100 + n, "Protein folding", "Nothing about our topics."), announced=day)
        for n, day in enumerate(d for d in days if d.weekday() < 5)
    ]
    await ingest(db, small_catalog, clock, *background)
    await ingest(db, small_catalog, clock, WEB_RL, OTHER)
    clock.now = START.replace(hour=8)
    assert await fold_due_digests(db.uow, clock()) == 1
    assert await deliverer.drain() == 1
    text = recorder.sent[0][1]
    # 1 of the 21 papers of the last 28 days: 19 background ones, WEB_RL and OTHER.
    assert "[1 paper, new in the last four weeks. 4.8% of all new papers.]" in text, text


async def test_digest_time_follows_daylight_saving(db, small_catalog, clock, chat_ctx) -> None:
    clock.now = datetime(2026, 10, 24, 12, 0, tzinfo=UTC)
    await say(chat_ctx, "/timezone Europe/Berlin")
    await say(chat_ctx, "/digest daily 08:00")
    async with db.uow() as uow:
        before = await uow.chats.get(CONSOLE_CHAT)
    assert before.next_digest_at == datetime(2026, 10, 25, 7, 0, tzinfo=UTC)  # CET from 25 Oct
    clock.now = datetime(2026, 10, 25, 7, 0, tzinfo=UTC)
    await fold_due_digests(db.uow, clock())
    async with db.uow() as uow:
        after = await uow.chats.get(CONSOLE_CHAT)
    assert after.next_digest_at == datetime(2026, 10, 26, 7, 0, tzinfo=UTC)


async def test_quiet_hours_hold_instant_alerts(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await say(chat_ctx, "/quiet 22:00-07:00")
    clock.now = datetime(2026, 9, 24, 23, 0, tzinfo=UTC)
    await ingest(db, small_catalog, clock, WEB_RL)
    await deliverer.drain()
    assert recorder.sent == []
    clock.now = datetime(2026, 9, 25, 7, 0, tzinfo=UTC)
    await deliverer.drain()
    assert len(recorder.sent) == 1


async def test_paused_chats_wait_and_lose_nothing(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await say(chat_ctx, "/pause")
    await ingest(db, small_catalog, clock, WEB_RL)
    assert await deliverer.drain() == 0
    await say(chat_ctx, "/resume")
    assert await deliverer.drain() == 1 and len(recorder.sent) == 1


@pytest.mark.parametrize(
    ("failure", "expect_active", "expect_sent_after_retry"),
    [
        (RateLimited(7), True, True),
        (Transient("timeout"), True, True),
        (RecipientGone("blocked"), False, False),
    ],
)
async def test_platform_errors_mean_something(
    db,
    small_catalog,
    clock,
    chat_ctx,
    deliverer,
    recorder,
    failure,
    expect_active,
    expect_sent_after_retry,
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    recorder.failures.append(failure)
    await deliverer.drain()
    assert recorder.sent == []
    clock.advance(hours=2)
    await deliverer.drain()
    assert (len(recorder.sent) == 1) is expect_sent_after_retry
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
    assert chat.active is expect_active
    if not expect_active:  # /start brings the chat back, and what waited is delivered
        await say(chat_ctx, "/start")
        await deliverer.drain()
        assert len(recorder.sent) == 1


async def instant_alert_waiting(db, small_catalog, clock, chat_ctx) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)


async def test_an_outage_of_hours_loses_no_alert(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    """The platform is unreachable for three hours (every send is Transient), with the
    worker looking every 10 s: the row stays alive, and is sent once it is back."""
    await instant_alert_waiting(db, small_catalog, clock, chat_ctx)
    outage = Transient("Timed out")
    started = clock()

    async def tick(seconds: float) -> None:
        recorder.failures[:] = [outage] * 10  # whatever is tried now fails
        await deliverer.drain()
        clock.advance(seconds=seconds)

    while clock() - started < timedelta(minutes=9):
        await tick(10)
    assert await outbox(db) == {"pending": 1}  # once dead after 8:00-8:50
    while clock() - started < timedelta(hours=3):
        await tick(60)
    assert await outbox(db) == {"pending": 1}
    tries = recorder.calls
    assert 10 <= tries <= 20  # backoff grows to an hour: no hammering during an outage

    recorder.failures.clear()  # the platform is back
    while not recorder.sent and clock() - started < timedelta(hours=4, minutes=1):
        await deliverer.drain()
        clock.advance(seconds=10)
    assert len(recorder.sent) == 1 and WEB_RL.title in recorder.sent[0][1]
    assert await outbox(db) == {"sent": 1}


async def test_failures_end_in_the_dead_letter_queue_after_the_budget(
    db, small_catalog, clock, chat_ctx, recorder
) -> None:
    deliverer = Deliverer(
        db.uow, {"console": recorder}, small_catalog, clock=clock, give_up_after=timedelta(hours=5)
    )
    await instant_alert_waiting(db, small_catalog, clock, chat_ctx)
    started = clock()
    while clock() - started < timedelta(hours=4, minutes=59):
        recorder.failures[:] = [Transient("server error")]
        await deliverer.drain()
        clock.advance(minutes=5)
    assert await outbox(db) == {"pending": 1}
    clock.advance(minutes=2)  # the budget counts from the first failure: now it is spent
    recorder.failures[:] = [Transient("server error")]
    await deliverer.drain()
    assert await outbox(db) == {"dead": 1}
    async with db.uow() as uow:
        dead = await uow.outbox.dead_letters()
    assert "server error" in (dead[0][3] or "")


async def test_a_success_starts_the_budget_afresh(
    db, small_catalog, clock, chat_ctx, recorder
) -> None:
    """Failures in a row count, not failures of a long row: a batch whose sends fail now
    and then for longer than the budget, each time recovering, is never dead."""
    deliverer = Deliverer(
        db.uow, {"console": recorder}, small_catalog, clock=clock, give_up_after=timedelta(hours=1)
    )
    await say(chat_ctx, "/follow Reinforcement Learning")
    await say(chat_ctx, "/digest instant")
    papers = [
        paper(50 + n, f"Reinforcement learning study {n}", "We study reinforcement learning.")
        for n in range(3)
    ]
    await ingest(db, small_catalog, clock, *papers)
    for _ in papers:
        recorder.failures[:] = [Transient("connection reset")]
        await deliverer.drain()  # fails, then the next tick sends one
        clock.advance(minutes=50)
        await deliverer.drain()
    assert await outbox(db) == {"sent": 1}
    assert [text.split("\n")[-1] for _, text in recorder.sent] == [p.title for p in papers]


async def test_a_permanent_refusal_is_dead_after_one_try(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await instant_alert_waiting(db, small_catalog, clock, chat_ctx)
    recorder.failures.append(Permanent("Bad Request: message is too long"))
    await deliverer.drain()
    assert recorder.calls == 1
    assert await outbox(db) == {"dead": 1}
    async with db.uow() as uow:
        ((_, _, kind, error),) = await uow.outbox.dead_letters()
    assert kind == "alert" and "message is too long" in (error or "")
    clock.advance(hours=2)
    assert await deliverer.drain() == 0 and recorder.calls == 1  # never tried again


async def test_dead_letters_can_be_requeued_and_are_then_delivered(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await instant_alert_waiting(db, small_catalog, clock, chat_ctx)
    recorder.failures.append(Permanent("Bad Request: can't parse entities"))
    await deliverer.drain()
    async with db.uow() as uow:
        ((dead_id, *_),) = await uow.outbox.dead_letters()
        assert await uow.outbox.requeue_dead(clock(), dead_id + 1) == 0  # no such dead row
        assert await uow.outbox.requeue_dead(clock(), dead_id) == 1
        await uow.commit()
    assert await deliverer.drain() == 1
    assert await outbox(db) == {"sent": 1}
    async with db.uow() as uow:
        assert await uow.outbox.requeue_dead(clock()) == 0  # nothing dead any more


async def test_a_moved_chat_keeps_everything(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    recorder.failures.append(ChatMoved("-1009999"))
    await deliverer.drain()
    assert len(recorder.sent) == 1 and recorder.sent[0][0] == "-1009999"
    async with db.uow() as uow:
        assert await uow.chats.get(CONSOLE_CHAT) is None
        assert (await uow.subscriptions.for_chat(1))[0].label == "Web Agents"


async def test_a_long_digest_resumes_at_the_part_that_failed(
    db, small_catalog, clock, chat_ctx, recorder
) -> None:
    recorder.parts = 3
    deliverer = Deliverer(db.uow, {"console": recorder}, small_catalog, clock=clock)
    await say(chat_ctx, "/follow Web Agents")
    await ingest(db, small_catalog, clock, WEB_RL)
    clock.advance(days=1)
    await fold_due_digests(db.uow, clock())
    recorder.fail_on[recorder.calls + 2] = Transient("connection reset")
    await deliverer.drain()
    clock.advance(hours=1)
    await deliverer.drain()
    assert [m[:5] for _, m in recorder.sent] == ["[1/3]", "[2/3]", "[3/3]"]


async def test_a_batch_is_one_row_per_chat_sent_one_alert_at_a_time(
    db, small_catalog, clock, chat_ctx, recorder
) -> None:
    def ticking() -> datetime:  # time moves on a little with every look at the clock
        clock.advance(milliseconds=1)
        return clock()

    messengers = {"console": recorder}
    deliverer = Deliverer(db.uow, messengers, small_catalog, clock=ticking, concurrency=1)
    await say(chat_ctx, "/follow Reinforcement Learning")
    await say(chat_ctx, "/digest instant")
    async with db.uow() as uow:
        second = await uow.chats.get_or_create(
            replace(CONSOLE_CHAT, external_id="second"), ChatKind.PRIVATE
        )
        await uow.chats.update(second.id, digest_mode="instant")
        await uow.subscriptions.add(
            second.id, SubscriptionKind.TOPIC, "web-agents", "Web Agents", "web-agents"
        )
        await uow.commit()
    rl = [
        paper(10 + n, f"Reinforcement learning study {n}", "We study reinforcement learning.")
        for n in range(3)
    ]
    await ingest(db, small_catalog, clock, *rl, WEB_RL)
    assert await outbox(db) == {"pending": 2}  # one row per chat for the whole batch

    assert await deliverer.drain() == 5
    order = [(chat, text.split("\n")[-1]) for chat, text in recorder.sent]
    # The second chat's only alert does not wait behind the first chat's four.
    assert order.index(("second", WEB_RL.title)) <= 1
    first = [title for chat, title in order if chat != "second"]
    assert sorted(first) == sorted([p.title for p in rl] + [WEB_RL.title])
    assert await outbox(db) == {"sent": 2}


async def test_a_failure_mid_batch_resumes_at_the_next_paper(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Reinforcement Learning")
    await say(chat_ctx, "/digest instant")
    papers = [
        paper(30 + n, f"Reinforcement learning study {n}", "We study reinforcement learning.")
        for n in range(3)
    ]
    await ingest(db, small_catalog, clock, *papers)
    recorder.fail_on[2] = Transient("connection reset")
    assert await deliverer.drain() == 1
    clock.advance(hours=1)
    assert await deliverer.drain() == 2
    titles = [text.split("\n")[-1] for _, text in recorder.sent]
    assert titles == [p.title for p in papers]  # each once, in order


async def test_a_paper_is_queued_for_a_chat_only_once(db, small_catalog, clock, chat_ctx) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    async with db.uow() as uow:
        ids = await uow.papers.ids_for([WEB_RL.arxiv_id])
        # However the same paper comes back (a retried ingest, a bug), its batch is taken.
        assert await uow.outbox.enqueue_papers(list(ids.values()), clock()) == 0
        await uow.commit()
    assert await outbox(db) == {"pending": 1}


async def test_rows_resolve_to_the_chats_matches_after_mutes(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Reinforcement Learning")
    await say(chat_ctx, "/mute Web Agents")
    await say(chat_ctx, "/digest instant")
    plain = paper(40, "Reinforcement learning for robots", "We study reinforcement learning.")
    await ingest(db, small_catalog, clock, WEB_RL, plain, OTHER, RAG)
    assert await deliverer.drain() == 1
    assert [text.split("\n")[-1] for _, text in recorder.sent] == [plain.title]


async def test_alerts_queued_before_batches_survive_the_migration(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    await db.downgrade("0004")  # drops the batch and its row
    async with db.engine.begin() as conn:  # a row as revision 0004 wrote them: one per paper
        await conn.execute(
            text(
                "INSERT INTO outbox (chat_id, paper_id, kind, payload, status, due_at,"
                " attempts, created_at) VALUES (1, 1, 'alert', '{}', 'pending', :now, 0, :now)"
            ),
            {"now": clock().replace(tzinfo=None) if db.dialect == "sqlite" else clock()},
        )
    await db.upgrade()
    async with db.uow() as uow:  # rebuilding tables on SQLite must not cascade into others
        assert "web-agents" in (await uow.papers.by_ids([1]))[1].tags
    assert await deliverer.drain() == 1
    assert recorder.sent[0][1].endswith(WEB_RL.title)
    assert await outbox(db) == {"sent": 1}


async def test_an_empty_digest_sends_a_note_only_when_asked(
    db, small_catalog, clock, chat_ctx, deliverer, recorder
) -> None:
    await say(chat_ctx, "/follow Web Agents")  # a daily digest at 08:00 UTC by default

    async def next_digest(**later: float) -> list[str]:
        clock.advance(**later)
        await fold_due_digests(db.uow, clock())
        await deliverer.drain()
        sent = [text for _, text in recorder.sent]
        recorder.sent.clear()
        return sent

    assert await next_digest(days=1) == []  # nothing new, nothing said
    assert "Nothing was changed" in await say(chat_ctx, "/digest note maybe")
    assert await next_digest(days=1) == []
    assert "one-line note" in await say(chat_ctx, "/digest note on")
    assert "daily digest at 08:00" in await say(chat_ctx, "/digest")

    (note,) = await next_digest(days=1)
    assert "arXiv announced no new papers" in note
    await ingest(db, small_catalog, clock, OTHER)  # announced, but nobody follows it
    (note,) = await next_digest(hours=3)
    assert "none of the 1 new papers arXiv announced matched" in note
    await ingest(db, small_catalog, clock, WEB_RL)
    (digest,) = await next_digest(days=1)
    assert WEB_RL.title in digest and "Nothing new" not in digest

    await say(chat_ctx, "/digest note off")
    assert await next_digest(days=1) == []


class Held(Recorder):
    """A Recorder whose sends wait until released, as a slow platform does."""

    def __init__(self) -> None:
        super().__init__()
        self.sending = asyncio.Event()
        self.release = asyncio.Event()

    async def deliver(self, chat: Chat, message: object) -> None:
        self.sending.set()
        await self.release.wait()
        await super().deliver(chat, message)


async def test_a_stopping_worker_finishes_and_records_the_sends_in_flight(
    db, small_catalog, clock, chat_ctx
) -> None:
    """Stopped (its delivery round cancelled at shutdown), a worker claims nothing more but
    waits for the message it is sending and records it, so it is not sent again when the
    lease runs out. Before, the round ended at once and the send was cut off with the loop."""
    held = Held()
    deliverer = Deliverer(db.uow, {"console": held}, small_catalog, clock=clock)
    await say(chat_ctx, "/follow Web Agents")
    await say(chat_ctx, "/digest instant")
    await ingest(db, small_catalog, clock, WEB_RL)
    round_ = asyncio.create_task(deliverer.drain())
    await asyncio.wait_for(held.sending.wait(), 10)
    round_.cancel()
    await asyncio.sleep(0.1)
    assert not round_.done()  # waiting for the send in flight
    held.release.set()
    with pytest.raises(asyncio.CancelledError):
        await round_
    assert len(held.sent) == 1
    assert await outbox(db) == {"sent": 1}  # recorded: nothing left to send twice
