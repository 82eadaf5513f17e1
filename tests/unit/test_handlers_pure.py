"""Real chat commands against the fake unit of work: no database, no adapter.

`tests/support/uow.py` implements `bot.ports.UnitOfWork` in memory (and
`tests/integration/test_fake_uow.py` holds it to storage's answers); these tests run the
registered handlers through `Registry.dispatch`, as every adapter does.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot.domain import ChatRef, Paper, Platform, Reply, Role, Subscription, SubscriptionKind
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.following import followed_count
from handlers.registry import REGISTRY
from handlers.settings import muted_lines
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")


@pytest.fixture
def fake() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW, max_topics_per_chat=2)


async def say(ctx: Context, line: str, role: Role = Role.OWNER) -> Reply:
    command = parse_command(line, CHAT, role=role)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


async def test_follow_list_and_unfollow_through_a_typo(ctx: Context, fake: FakeDatabase) -> None:
    assert (await say(ctx, "/follow RL for LLM Agents")).lines[
        0
    ] == "Now following RL for LLM Agents."
    assert (await say(ctx, "/follow rl-for-llm-agents")).lines == (
        "This chat already follows RL for LLM Agents.",
    )
    (chat,) = fake.state.chats.values()
    assert chat.next_digest_at is not None and chat.next_digest_at > NOW  # a daily digest

    listed = await say(ctx, "/list")
    assert listed.lines == ("You follow 1 topic:", "• RL for LLM Agents")
    assert [row[0].arg for row in listed.buttons] == ["rl-for-llm-agents"]

    gone = await say(ctx, "/unfollow RL for LLM Agnets")
    assert gone.lines == ("Stopped following RL for LLM Agents.",) and gone.changes_chat
    assert (await say(ctx, "/list")).lines[0] == "You don't follow any topic yet."
    assert (await say(ctx, "/unfollow Web Agents")).is_error


async def test_a_follow_over_the_limit_changes_nothing(ctx: Context, fake: FakeDatabase) -> None:
    for topic in ("Web Agents", "Agentic RAG"):
        assert not (await say(ctx, f"/follow {topic}")).is_error
    refused = await say(ctx, "/follow RL for LLM Agents")
    assert refused.is_error and "already follows 2 catalog topics" in refused.lines[0]
    assert [s.label for s in fake.state.subscriptions] == ["Web Agents", "Agentic RAG"]


async def test_a_followed_query_gets_the_stored_papers_at_once(
    ctx: Context, fake: FakeDatabase
) -> None:
    fake.seed_papers(
        Paper("2603.00001", "A survey of web agents", announced=date(2026, 3, 3)),
        Paper("2603.00002", "Agents without a review", announced=date(2026, 3, 4)),
    )
    followed = await say(ctx, "/follow (agent*) AND survey")
    assert followed.lines[0] == "Now following your query: agent* AND survey"

    latest = await say(ctx, "/latest agent* AND survey")
    assert latest.lines == ("Latest for (agent*) AND survey:",)
    assert [item.paper.arxiv_id for item in latest.papers] == ["2603.00001"]

    why = await say(ctx, "/why 2603.00001")
    assert [item.paper.arxiv_id for item in why.papers] == ["2603.00001"] and not why.lines
    (reasons,) = why.sections
    assert reasons.heading == "Why it has its topics:"
    assert reasons.lines[0] == "• (agent*) AND survey ★: agent*, survey"


async def test_mute_within_a_followed_topic(ctx: Context) -> None:
    await say(ctx, "/follow RL for LLM Agents")
    muted = await say(ctx, "/mute Web Agents in rl for llm agnets")
    assert muted.lines[0].startswith("Muted Web Agents in RL for LLM Agents:")
    assert (await say(ctx, "/muted")).lines == ("Muted:", "• Web Agents (in RL for LLM Agents)")
    assert "You don't follow" in (await say(ctx, "/mute Web Agents in Agentic RAG")).lines[0]

    assert (await say(ctx, "/unmute web agents")).lines == ("Unmuted Web Agents.",)
    assert (await say(ctx, "/muted")).lines[0] == "Nothing is muted."


def test_muted_tags_are_named_as_alerts_name_them(ctx: Context) -> None:
    """/muted names a tag as the alert's "Mute" button did (`bot.topics.card.tag_name`): a
    catalog topic by its name, a followed query as typed, anything else by its tag."""
    query = Subscription(
        1, 1, SubscriptionKind.QUERY, "agent* AND survey", "(agent*) AND survey", "q:abc"
    )
    lines = muted_lines([("web-agents", ""), ("q:abc", ""), ("q:other", "")], [query], ctx)
    assert lines == ("Muted:", "• (agent*) AND survey", "• q:other", "• Web Agents")


async def test_a_member_changes_nothing(ctx: Context, fake: FakeDatabase) -> None:
    reply = await say(ctx, "/follow Web Agents", role=Role.MEMBER)
    assert reply.denied and not fake.state.chats and not fake.state.subscriptions


async def test_a_follow_says_when_its_papers_will_come_and_how_to_change_it(
    ctx: Context,
) -> None:
    """New chats get a daily digest at 08:00 UTC without choosing it: the reply says so."""
    first = await say(ctx, "/follow RL for LLM Agents")
    assert "daily digest at 08:00 (UTC)" in first.lines[-1] and "/digest" in first.lines[-1]
    await say(ctx, "/digest weekly friday 09:30")
    query = await say(ctx, "/follow (agent*) AND survey")
    assert "weekly digest on Friday at 09:30 (UTC)" in query.lines[-1]


async def test_list_offers_unfollow_for_queries_too(ctx: Context) -> None:
    await say(ctx, "/follow RL for LLM Agents")
    await say(ctx, '/follow "world model" AND (agent* OR robot*)')
    listed = await say(ctx, "/list")
    args = [row[0].arg for row in listed.buttons]
    assert args[0] == "rl-for-llm-agents" and args[1].startswith("q:")
    assert all(len(arg) <= 40 for arg in args)  # room left in Telegram's 64-byte payload
    gone = await say(ctx, f"/unfollow {args[1]}")  # what pressing the button sends
    assert gone.lines[0].startswith("Stopped following") and gone.changes_chat
    assert [row[0].arg for row in (await say(ctx, "/list")).buttons] == ["rl-for-llm-agents"]


async def test_help_says_trending_covers_four_weeks(ctx: Context) -> None:
    text = "\n".join((await say(ctx, "/help")).lines)
    assert "/trending: topics rising fastest over the last four weeks" in text


async def test_timezone_alone_says_which_one_is_set(ctx: Context) -> None:
    """Alone, /timezone asked "Which time zone?" and never said which one the chat has."""
    first = await say(ctx, "/timezone")
    assert first.lines[0] == "This chat's time zone is UTC (the default)."
    assert "Usage: /timezone Europe/Berlin" in first.lines[1] and not first.changes_chat
    await say(ctx, "/timezone europe/berlin")
    assert (await say(ctx, "/timezone")).lines[0] == "This chat's time zone is Europe/Berlin."


@pytest.mark.parametrize(
    ("kinds", "said"),
    [
        (("topic",), "1 topic"),
        (("topic", "topic"), "2 topics"),
        (("query", "topic", "author", "topic"), "2 topics, 1 query and 1 author"),
        (("like", "like", "query"), "1 query and 2 sets of papers"),
        ((), "nothing"),
    ],
)
def test_what_a_chat_follows_is_counted_by_kind(kinds: tuple[str, ...], said: str) -> None:
    subs = [
        Subscription(n, 1, SubscriptionKind(kind), f"t{n}", f"label {n}")
        for n, kind in enumerate(kinds)
    ]
    assert followed_count(subs) == said
