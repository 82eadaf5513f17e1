"""The "Ask about <topic>" button: where it is offered (/topic, /momentum, digests), what it
carries (a signed topic slug or followed query's tag), how every platform shows it within
its limits, and the /ask it becomes (`handlers.ask_about`)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot import buttons
from bot.adapters.console import render_reply
from bot.adapters.slack import render as slack_render
from bot.adapters.telegram.render import to_messages
from bot.domain import (
    Action,
    Button,
    ChatRef,
    Paper,
    Platform,
    Reply,
    Role,
    Subscription,
    SubscriptionKind,
)
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.content import DIGEST_ASK_BUTTONS, Audience, ask_button, digest
from handlers.ask_about import ask_command, named_topic, topic_name
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.search import Within, scope_of
from handlers.text import parse_command
from tests.support.slack_blocks import check_message
from tests.support.uow import FakeDatabase

KEY = buttons.button_key("123456:test")
CHAT = ChatRef(Platform.TELEGRAM, "777")
NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
QUERY_TAG = "q:0123456789abcdef"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
def fake() -> FakeDatabase:
    fake = FakeDatabase()
    fake.seed_papers(
        Paper(
            "2603.00012",
            "Web Agents that Remember",
            "We give a web agent an episodic memory of visited pages.",
            announced=date(2026, 3, 3),
        )
    )
    fake.state.tags = {"2603.00012": {"web-agents": ("web agent",)}}
    return fake


@pytest.fixture
def ctx(fake: FakeDatabase, catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=catalog, clock=lambda: NOW)


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


def asks(reply: Reply) -> list[Button]:
    return [b for row in reply.buttons for b in row if b.action is Action.ASK]


async def test_topic_offers_to_ask_about_it(ctx: Context) -> None:
    reply = await say(ctx, "/topic Web Agents")
    assert asks(reply) == [Button("Ask about Web Agents", Action.ASK, "web-agents")]


@pytest.mark.parametrize("arg", ["rl-for-llm-agents", QUERY_TAG, "a" * 48])
def test_the_button_is_signed_for_its_chat_and_fits_telegram(arg: str) -> None:
    button = ask_button(arg, "Some Topic")
    data = buttons.encode(button, "777", KEY)
    assert data is not None and len(data.encode()) <= buttons.MAX_BYTES
    pressed = buttons.decode(data, "777", KEY)
    assert pressed is not None and (pressed.action, pressed.arg) == (Action.ASK, arg)
    assert buttons.decode(data, "778", KEY) is None  # another chat: refused
    forged = data[:-1] + ("x" if data[-1] != "x" else "y")
    assert buttons.decode(forged, "777", KEY) is None


def test_a_long_name_is_shortened_within_both_platforms_label_limits() -> None:
    button = ask_button(QUERY_TAG, "ti:agents AND " * 20)
    assert len(button.text) <= 60 and button.text.startswith("Ask about ti:agents")


def _digest(catalog: Catalog, n: int) -> Reply:
    slugs = [t.slug for t in catalog.topics[:n]]
    subs = tuple(
        Subscription(i, 1, SubscriptionKind.TOPIC, slug, catalog.by_slug(slug).name, slug)  # type: ignore[union-attr]
        for i, slug in enumerate(slugs, start=1)
    )
    papers = [
        Paper(f"2603.{i:05d}", f"Paper {i} <&>", "An abstract.", tags=(slug,))
        for i, slug in enumerate(slugs, start=1)
    ]
    reply = digest(catalog, papers, Audience(subs, ()), "Daily digest")
    assert reply is not None
    return reply


def test_a_digest_asks_about_each_section_within_the_platforms_limits(catalog: Catalog) -> None:
    small = _digest(catalog, 3)
    headings = [s.heading.split(" (")[0] for s in small.sections]
    assert [b.text for b in asks(small)] == [f"Ask about {name}" for name in headings]
    big = _digest(catalog, 40)
    assert len(asks(big)) == DIGEST_ASK_BUTTONS  # the first sections'; /ask reaches the rest
    for message in to_messages(big, "777", KEY):
        if message.markup is not None:
            rows = message.markup.inline_keyboard
            assert all(len(row) <= 8 for row in rows) and sum(map(len, rows)) <= 100
    for message in slack_render.render(big, lambda b: buttons.encode(b, "T:C", KEY)):
        assert check_message(message["text"], message["blocks"]) is None


def test_the_console_shows_the_line_to_type() -> None:
    reply = Reply(
        lines=("RL for LLM Agents",),
        buttons=(
            (Button("Latest", Action.LATEST, "rl-for-llm-agents"),),
            (ask_button("rl-for-llm-agents", "RL for LLM Agents"),),
            (ask_button(QUERY_TAG, "ti:agents AND abs:reward"),),
        ),
    )
    shown = render_reply(reply)
    assert "Buttons (on Telegram and Slack): [Latest]" in shown
    assert "Ask: /ask RL for LLM Agents: <your question>" in shown
    assert f"Ask: /ask {QUERY_TAG}: <your question>" in shown  # a name with a colon: the tag
    assert "[Ask about" not in shown


async def test_a_followed_querys_tag_scopes_a_question(ctx: Context) -> None:
    query = Subscription(5, 1, SubscriptionKind.QUERY, "ti:agents", "ti:agents", QUERY_TAG)
    assert scope_of(f"{QUERY_TAG}: which rewards?", [query], ctx) == Within(
        QUERY_TAG, "ti:agents", "which rewards?"
    )
    # Not followed: no scope (the whole text is the question, as before).
    assert scope_of(f"{QUERY_TAG}: which rewards?", [], ctx) == []


async def test_the_button_becomes_the_ask_anyone_could_type(ctx: Context) -> None:
    command = ask_command("web-agents", "how do agents\nremember  pages?", chat=CHAT)
    assert (command.name, command.args) == ("ask", "web-agents: how do agents remember pages?")
    reply = await REGISTRY.dispatch(command, ctx)
    assert reply.lines == ("From the one paper on Web Agents:",)
    assert reply.sections[0].lines[-1] == "https://arxiv.org/abs/2603.00012"
    blank = await REGISTRY.dispatch(ask_command("web-agents", "  \n ", chat=CHAT), ctx)
    assert blank.lines[0].startswith("Ask about something specific")


async def test_names_for_prompts_and_for_a_named_topic(ctx: Context) -> None:
    assert await topic_name(CHAT, "web-agents", ctx) == "Web Agents"
    assert await topic_name(CHAT, QUERY_TAG, ctx) is None  # a query no longer followed
    assert await named_topic(CHAT, "web agents", ctx) == "web-agents"
    unknown = await named_topic(CHAT, "quantum gravity of cats", ctx)
    assert isinstance(unknown, Reply) and unknown.is_error
