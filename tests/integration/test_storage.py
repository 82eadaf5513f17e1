"""Migrations and repositories against real SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import inspect

from bot.domain import (
    Author,
    ChatKind,
    ChatRef,
    Paper,
    Platform,
    PollState,
    SubscriptionKind,
)
from storage.database import Database

TABLES = {
    "chats",
    "subscriptions",
    "muted_tags",
    "papers",
    "paper_tags",
    "batches",
    "outbox",
    "poll_state",
    "announced_days",
    "tag_days",
}

PAPER = Paper(
    arxiv_id="2609.26811",
    version=1,
    title="The Drift Contract: $\\mathcal{O}(n^2)$ <b>&</b> Büttiker",
    abstract="Local learning… with émojis 🚀 and עברית.",
    authors=(Author("Ada Lovelace", ("Analytical Engines Ltd",)), Author("Alan Turing")),
    categories=("cs.LG", "cs.AI"),
    announced=date(2026, 9, 24),
    submitted=datetime(2026, 9, 22, 17, 0, tzinfo=UTC),
    doi="10.1000/xyz",
    journal_ref="J. Tests 1 (2026)",
    comment="12 pages",
)


async def _tables(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def test_migrates_from_empty_and_back(db: Database) -> None:
    assert await _tables(db) >= TABLES
    assert await db.current_revision() is not None
    await db.downgrade("base")
    assert not TABLES & await _tables(db)
    await db.upgrade()
    assert await _tables(db) >= TABLES


async def test_upgrade_twice_is_a_no_op(db: Database) -> None:
    before = await db.current_revision()
    await db.upgrade()
    assert await db.current_revision() == before


@pytest.mark.parametrize(
    ("platform", "external_id"),
    [
        (Platform.TELEGRAM, str(-1001234567890123)),  # supergroup ids need 64 bits
        (Platform.TELEGRAM, str(2**63 - 1)),
        (Platform.SLACK, "T024BE7LD:C024BE91L"),
        (Platform.CONSOLE, "1"),
    ],
)
async def test_chat_round_trip(db: Database, platform: Platform, external_id: str) -> None:
    ref = ChatRef(platform, external_id)
    async with db.uow() as uow:
        created = await uow.chats.get_or_create(ref, ChatKind.GROUP)
        again = await uow.chats.get_or_create(ref, ChatKind.GROUP)
        await uow.commit()
    assert created.id == again.id
    async with db.uow() as uow:
        chat = await uow.chats.get(ref)
    assert chat is not None
    assert (chat.platform, chat.external_id, chat.kind) == (platform, external_id, ChatKind.GROUP)
    assert chat.created_at is not None and chat.created_at.tzinfo is not None
    assert (chat.timezone, chat.digest_time, chat.active) == ("UTC", "08:00", True)


async def test_uncommitted_work_is_rolled_back(db: Database) -> None:
    ref = ChatRef(Platform.CONSOLE, "7")
    async with db.uow() as uow:
        await uow.chats.get_or_create(ref)
    async with db.uow() as uow:
        assert await uow.chats.get(ref) is None


async def test_subscriptions(db: Database) -> None:
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ChatRef(Platform.CONSOLE, "1"))
        sub, created = await uow.subscriptions.add(
            chat.id,
            SubscriptionKind.TOPIC,
            "rl-for-llm-agents",
            "RL for LLM Agents",
            "rl-for-llm-agents",
        )
        _, created_again = await uow.subscriptions.add(
            chat.id,
            SubscriptionKind.TOPIC,
            "rl-for-llm-agents",
            "RL for LLM Agents",
            "rl-for-llm-agents",
        )
        await uow.subscriptions.add(
            chat.id, SubscriptionKind.QUERY, '"x" AND y', '"x" AND y', "q:1"
        )
        await uow.commit()
    assert created and not created_again
    async with db.uow() as uow:
        subs = await uow.subscriptions.for_chat(chat.id)
        assert [s.target for s in subs] == ["rl-for-llm-agents", '"x" AND y']
        assert await uow.subscriptions.remove(chat.id, SubscriptionKind.TOPIC, sub.target)
        assert not await uow.subscriptions.remove(chat.id, SubscriptionKind.TOPIC, sub.target)
        await uow.commit()
    async with db.uow() as uow:
        assert [s.kind for s in await uow.subscriptions.for_chat(chat.id)] == [
            SubscriptionKind.QUERY
        ]


async def test_paper_round_trip_keeps_every_field(db: Database) -> None:
    async with db.uow() as uow:
        result = await uow.papers.upsert([PAPER])
        await uow.commit()
    assert result.new == (PAPER.arxiv_id,)
    async with db.uow() as uow:
        stored = await uow.papers.get(PAPER.arxiv_id)
    assert stored == PAPER
    assert stored.submitted == PAPER.submitted and stored.submitted.tzinfo is not None


async def test_upsert_is_idempotent_and_moves_to_newer_versions(db: Database) -> None:
    v2 = replace(PAPER, version=2, title="Retitled", announced=None)
    async with db.uow() as uow:
        first = await uow.papers.upsert([PAPER])
        again = await uow.papers.upsert([PAPER])
        newer = await uow.papers.upsert([v2, PAPER])  # the batch repeats the id
        older = await uow.papers.upsert([PAPER])
        await uow.commit()
        stored = await uow.papers.get(PAPER.arxiv_id)
        count = await uow.papers.count()
    assert (first.new, again.unchanged) == ((PAPER.arxiv_id,), (PAPER.arxiv_id,))
    assert newer.updated == (PAPER.arxiv_id,) and older.unchanged == (PAPER.arxiv_id,)
    assert count == 1
    assert (stored.version, stored.title, stored.announced) == (2, "Retitled", PAPER.announced)


async def test_tags_and_latest(db: Database) -> None:
    papers = [
        replace(PAPER, arxiv_id=f"2609.0000{i}", announced=date(2026, 9, 20 + i)) for i in range(4)
    ]
    async with db.uow() as uow:
        await uow.papers.upsert(papers)
        added = await uow.papers.add_tags(
            [
                ("2609.00001", "web-agents", ("web agent",)),
                ("2609.00003", "web-agents", ("web agent",)),
                ("2609.00003", "agentic-rag", ("rag",)),
                ("2609.00003", "agentic-rag", ("rag",)),  # repeated: stored once
                ("9999.99999", "web-agents", ()),  # unknown paper: ignored
            ]
        )
        await uow.commit()
    assert added == 3
    async with db.uow() as uow:
        everything = await uow.papers.latest(limit=10)
        web = await uow.papers.latest(["web-agents"], limit=10)
        none = await uow.papers.latest(["no-such-tag"])
    assert [p.arxiv_id for p in everything] == [p.arxiv_id for p in reversed(papers)]
    assert [p.arxiv_id for p in web] == ["2609.00003", "2609.00001"]
    assert web[0].tags == ("agentic-rag", "web-agents")
    assert none == []


async def test_poll_state_round_trip(db: Database) -> None:
    state = PollState(
        source="rss:cs.AI+cs.LG",
        etag='"abc"',
        last_announced=date(2026, 9, 24),
        last_count=1504,
        last_success_at=datetime(2026, 9, 25, 0, 30, tzinfo=UTC),
    )
    async with db.uow() as uow:
        await uow.poll_state.save(state)
        await uow.poll_state.save(replace(state, last_count=3))
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.poll_state.get(state.source) == replace(state, last_count=3)
        assert await uow.poll_state.all() == [replace(state, last_count=3)]


async def test_naive_timestamps_are_refused(db: Database) -> None:
    async with db.uow() as uow:
        with pytest.raises(Exception, match="naive datetime"):
            await uow.papers.upsert([replace(PAPER, submitted=datetime(2026, 1, 1))])


async def test_migrations_match_the_models(db: Database) -> None:
    """Every model change has its migration: autogenerate finds nothing to do."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from storage.models import Base
    from storage.paper_search import not_search_index

    def diff(connection):  # type: ignore[no-untyped-def]
        opts = {"compare_type": True, "include_name": not_search_index}
        context = MigrationContext.configure(connection, opts=opts)
        return compare_metadata(context, Base.metadata)

    async with db.engine.connect() as conn:
        changes = await conn.run_sync(diff)
    assert changes == []
