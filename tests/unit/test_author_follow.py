"""/follow author and /unfollow author on the fake unit of work, and how a followed
author's papers are pinned first in digests and named first in alerts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

import pytest

from bot.domain import Author, ChatRef, Paper, Platform, Reply, Role, Subscription
from bot.domain import SubscriptionKind as Kind
from bot.topics.authors import MAX_AUTHOR_CHARS, parse_author
from bot.topics.catalog import Catalog
from bot.topics.content import Audience, alert, digest
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")
LEVINE = parse_author("Sergey Levine")


@pytest.fixture
def fake() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


def papers() -> tuple[Paper, ...]:
    return (
        Paper(
            "2603.00001",
            "Robots",
            authors=(Author("A. Kumar"), Author("S. Levine")),
            announced=date(2026, 3, 3),
        ),
        Paper(
            "2603.00002", "Language", authors=(Author("Yoav Levine"),), announced=date(2026, 3, 4)
        ),
    )


async def test_follow_an_author_list_why_and_unfollow(ctx: Context, fake: FakeDatabase) -> None:
    fake.seed_papers(*papers())
    followed = await say(ctx, '/follow author "Sergey Levine"')
    assert followed.lines[0] == "Now following the author Sergey Levine (also as levine, sergey)."
    assert followed.changes_chat and not followed.is_error
    (sub,) = fake.state.subscriptions
    assert (sub.kind, sub.target, sub.label, sub.tag) == (
        Kind.AUTHOR,
        "levine, sergey",
        "Sergey Levine",
        LEVINE.tag,
    )
    again = await say(ctx, "/follow author Levine, Sergey")
    assert again.lines == ("This chat already follows the author Sergey Levine.",)
    assert len(fake.state.subscriptions) == 1

    # The stored papers were matched at once: his, not the other Levine's.
    latest = await say(ctx, "/latest Sergey Levine")
    assert [item.paper.arxiv_id for item in latest.papers] == ["2603.00001"]
    assert latest.papers[0].followed_tags == ("👤 Sergey Levine",)
    assert (await say(ctx, "/list")).lines[1] == "• 👤 author: Sergey Levine"
    (reasons,) = (await say(ctx, "/why 2603.00001")).sections
    assert "• 👤 Sergey Levine ★: S. Levine" in reasons.lines
    assert "Levine" not in " ".join((await say(ctx, "/why 2603.00002")).sections[0].lines)

    assert (await say(ctx, "/unfollow author Yoav Levine")).is_error
    gone = await say(ctx, "/unfollow author S. Levine")  # another spelling: not this follow
    assert gone.is_error and len(fake.state.subscriptions) == 1
    gone = await say(ctx, "/unfollow author levine, sergey")
    assert gone.lines == ("Stopped following the author Sergey Levine.",)
    assert not fake.state.subscriptions


async def test_an_affiliation_is_kept_and_narrows(ctx: Context, fake: FakeDatabase) -> None:
    fake.seed_papers(
        Paper("2603.00003", "Here", authors=(Author("Sergey Levine", ("UC Berkeley",)),)),
        Paper("2603.00004", "There", authors=(Author("Sergey Levine", ("ETH Zurich",)),)),
    )
    reply = await say(ctx, "/follow author Sergey Levine @Berkeley")
    assert reply.lines[0].startswith("Now following the author Sergey Levine @Berkeley")
    (sub,) = fake.state.subscriptions
    assert sub.target == "levine, sergey @berkeley"
    assert set(fake.state.tags["2603.00003"]) == {sub.tag} and not fake.state.tags.get("2603.00004")
    assert not (await say(ctx, "/unfollow Sergey Levine @Berkeley")).is_error  # by its label


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/follow author", "Which author?"),
        ('/follow author ""', "Which author?"),
        ("/follow author S. L.", "family name in full"),
        ("/follow author ?!.", "family name in full"),
        ("/follow author Levine", "first name or initial"),
        ("/follow author Sergey Levine @", "affiliation"),
        (f"/follow author {'Sergey Levine' * 16}", "too long"),
        ("/unfollow author", "Which author?"),
    ],
)
async def test_a_bad_name_gets_one_line_and_changes_nothing(
    ctx: Context, fake: FakeDatabase, line: str, says: str
) -> None:
    assert len(line) > MAX_AUTHOR_CHARS or "too long" not in says
    reply = await say(ctx, line)
    assert reply.is_error and says in reply.lines[0] and "Nothing was changed" in reply.lines[0]
    assert reply.lines[1].startswith("Usage: /follow author")
    assert not fake.state.subscriptions and not fake.state.chats


async def test_authors_have_a_limit_and_topics_still_follow(
    ctx: Context, fake: FakeDatabase
) -> None:
    ctx = replace(ctx, max_queries_per_chat=1)
    assert not (await say(ctx, "/follow author Chelsea Finn")).is_error
    refused = await say(ctx, "/follow author Sergey Levine")
    assert refused.is_error and "already follows 1 authors" in refused.lines[0]
    assert [s.label for s in fake.state.subscriptions] == ["Chelsea Finn"]
    assert (await say(ctx, "/follow Web Agents")).lines[0] == "Now following Web Agents."
    assert (await say(ctx, "/follow authorship")).is_error  # a topic name, not "author ..."
    assert "/follow author" in (await say(ctx, "/help follow")).lines[0]


def subscription(number: int, kind: Kind, tag: str, label: str) -> Subscription:
    return Subscription(number, 1, kind, tag, label, tag)


def test_author_matches_are_pinned_first_and_marked(small_catalog: Catalog) -> None:
    topic = subscription(1, Kind.TOPIC, "web-agents", "Web Agents")
    author = subscription(2, Kind.AUTHOR, LEVINE.tag, "Sergey Levine")
    audience = Audience((topic, author), ())
    his = Paper("2603.00001", "His", tags=("web-agents", LEVINE.tag), announced=date(2026, 3, 3))
    other = Paper("2603.00002", "Other", tags=("web-agents",), announced=date(2026, 3, 4))

    sent = alert(small_catalog, his, audience)
    assert sent is not None and sent.lines == ("New on 👤 Sergey Levine, Web Agents:",)
    assert sent.papers[0].followed_tags[-1] == "👤 Sergey Levine"
    plain = alert(small_catalog, other, audience)
    assert plain is not None and plain.lines == ("New on Web Agents:",)

    daily = digest(small_catalog, [other, his], audience, "Today")
    assert daily is not None
    assert [s.heading for s in daily.sections] == ["👤 Sergey Levine (1 new)", "Web Agents (1 new)"]
    assert [p.paper.arxiv_id for p in daily.sections[0].papers] == ["2603.00001"]
    assert [p.paper.arxiv_id for p in daily.sections[1].papers] == ["2603.00002"]
