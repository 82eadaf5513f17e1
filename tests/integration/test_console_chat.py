"""The terminal chat driven line by line, on both databases: the handlers end to end."""

from __future__ import annotations

import asyncio
import io
import queue
from collections.abc import Callable

import pytest

from bot.adapters.console import (
    CONSOLE_CHAT,
    PROMPT,
    ConsoleMessenger,
    Prompt,
    handle_line,
    render_reply,
    run_console,
)
from bot.domain import Chat, Platform
from bot.services.ingest import load_sample_if_empty, sample_papers
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def subscriptions(db: Database) -> list[str]:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        return [s.target for s in await uow.subscriptions.for_chat(chat.id)] if chat else []


async def chat_count(db: Database) -> int:
    async with db.uow() as uow:
        return 0 if await uow.chats.get(CONSOLE_CHAT) is None else 1


async def test_a_whole_conversation(db: Database, ctx: Context) -> None:
    await load_sample_if_empty(db.uow)
    assert "/follow RL for LLM Agents" in await say(ctx, "/start")
    assert "Now following RL for LLM Agents" in await say(ctx, "/follow rl for llm agents")
    assert "already follow" in await say(ctx, "/follow RL-for-LLM-Agents")
    assert "RL for LLM Agents" in await say(ctx, "/list")

    latest = await say(ctx, "/latest")
    assert latest.startswith("Latest in the topics you follow:")
    assert latest.count("• ") == ctx.latest_limit
    assert "RL for LLM Agents ★" in latest  # the followed tag is marked
    assert "https://arxiv.org/" in latest

    assert "Stopped following RL for LLM Agents" in await say(ctx, "/unfollow RL for LLM Agents")
    assert await subscriptions(db) == []
    assert "don't follow any topic" in await say(ctx, "/list")


async def test_latest_by_topic_shows_only_that_topic(db: Database, ctx: Context) -> None:
    await load_sample_if_empty(db.uow)
    web_agent_titles = {p.title for p in sample_papers() if "Web Agents" in p.tags}
    text = await say(ctx, "/latest Web Agents")
    assert text.startswith("Latest in Web Agents:")
    shown = [line[2:] for line in text.splitlines() if line.startswith("• ")]
    assert shown and set(shown) <= web_agent_titles


async def test_sample_loads_once(db: Database) -> None:
    first = await load_sample_if_empty(db.uow)
    again = await load_sample_if_empty(db.uow)
    assert first is not None and len(first.new) == 30
    assert again is None
    async with db.uow() as uow:
        assert await uow.papers.count() == 30


async def test_latest_before_any_data(ctx: Context) -> None:
    assert "No papers are stored yet" in await say(ctx, "/latest")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/follow", "Usage: /follow <topic or query>"),
        ("/follow    ", "Usage: /follow <topic or query>"),
        ("/follow " + "x" * 10_000, "That is too long (10,000 characters"),
        (
            "/follow quantum gravity of cats",
            'I don\'t know a topic called "quantum gravity of cats"',
        ),
        ("/follow Reinforcment Lerning", "Now following Reinforcement Learning"),
        ("/follow Agentic Retrieval", "Agentic RAG?"),
        ("/follow quantum gravity of cats", '/follow "quantum gravity of cats"'),
        ("/follow NOT agents", "would match almost every paper"),
        ("/follow (agent AND", "missing ')'"),
        ('/follow "tool use', "unterminated quote"),
        ("/follow " + " OR ".join(["agent"] * 500), "That is too long"),
        ("/follow \x00\x1b[31mRL\x07 for LLM Agents\u200b", "Now following RL for LLM Agents"),
        ("/follow 🚀🚀", "I don't know a topic"),
        ("/follow <script>alert(1)</script>'; DROP TABLE chats;--", "unexpected '<' at position 0"),
        ("/follow (<b>x</b>)", "unexpected '<' at position 1"),
        ("/follow agents AND tool=use", "unexpected '='"),
        ("/unfollow", "Usage: /unfollow <topic>"),
        ("/unfollow Web Agents", 'You don\'t follow "Web Agents"'),
        ("/list everything", "Which page? Give its number"),
        ("/start now", "/start takes no arguments"),
        ("/frobnicate", "I don't know the command /frobnicate"),
        ("/folow RL", "Did you mean /follow?"),
        ("/mutes", "Did you mean /mute or /muted?"),
        ("/stat", "Did you mean /status or /start?"),
        ("hello there", "I answer commands"),
        ("\x1b[2J", "I answer commands"),
        ("follow RL for LLM Agents", "Commands start with a slash: /follow RL for LLM Agents"),
        ("Latest  Web\tAgents", "Commands start with a slash: /latest Web Agents"),
        ("follow " + "x" * 200, "/follow " + "x" * 72 + "…"),  # 80 characters in all
        ("followed Web Agents", "I answer commands"),
        ("/help follow", "/follow <topic or query>"),
        ("/why", "Give me an arXiv id"),
        ("/why not-an-id", "Give me an arXiv id"),
        ("/why 2601.99999", "I have no paper 2601.99999"),
        ("/topic", "Which topic?"),
        ("/topic quantum gravity of cats", "I don't know a topic"),
        ("/help nonsense", "There is no command /nonsense"),
    ],
)
async def test_bad_and_odd_input_gets_a_friendly_answer(
    db: Database, ctx: Context, line: str, expected: str
) -> None:
    text = await say(ctx, line)
    assert expected in text
    assert "\x1b" not in text and "\x00" not in text
    if "Now following" not in expected:
        assert await chat_count(db) == 0, "bad input must not store anything"


async def test_blank_lines_are_ignored(ctx: Context) -> None:
    assert await handle_line("   \n", REGISTRY, ctx) is None


async def test_help_lists_every_command(ctx: Context) -> None:
    text = await say(ctx, "/help")
    for spec in REGISTRY.specs:
        assert f"/{spec.name}" in text


async def test_hostile_paper_text_cannot_drive_the_terminal(db: Database, ctx: Context) -> None:
    from bot.domain import Paper
    from bot.services.ingest import store_papers

    title = (
        "Evil \x1b]0;pwned\x07 title <b>&amp;</b> $\\mathcal{O}(n^2)$ مرحبا 🚀\u200b" + "x" * 5000
    )
    await store_papers(db.uow, [Paper(arxiv_id="2601.00001", title=title, tags=("Web Agents",))])
    text = await say(ctx, "/latest Web Agents")
    assert "\x1b" not in text and "\x07" not in text
    assert "<b>&amp;</b> $\\mathcal{O}(n^2)$ مرحبا 🚀" in text


async def test_run_console_scripted(db: Database, ctx: Context) -> None:
    await load_sample_if_empty(db.uow)
    out = io.StringIO()
    script = io.StringIO("/follow RL for LLM Agents\n\n/latest\n/quit\n/list\n")
    await run_console(REGISTRY, ctx, script, out, interactive=False)
    text = out.getvalue()
    assert "Now following RL for LLM Agents" in text
    assert text.count("• ") == ctx.latest_limit
    assert "You follow" not in text  # nothing after /quit runs


class TypedLines:
    """A terminal's input: `readline` blocks (in run_console's worker thread) until the test
    types a line."""

    def __init__(self) -> None:
        self._lines: queue.Queue[str] = queue.Queue()

    def type(self, line: str) -> None:
        self._lines.put(line)

    def readline(self) -> str:
        return self._lines.get()

    def isatty(self) -> bool:
        return False


async def until(predicate: Callable[[], bool]) -> None:
    while True:
        if predicate():
            return
        await asyncio.sleep(0.001)


@pytest.mark.parametrize("interactive", [True, False])
async def test_an_alert_between_replies_draws_the_prompt_again(
    ctx: Context, interactive: bool
) -> None:
    """An alert printed while the chat waits for a line used to leave the terminal without
    its `you>` prompt; scripted (no prompt at all), the alert is printed alone."""
    stdin, out = TypedLines(), io.StringIO()
    prompt = Prompt(out, interactive=interactive)
    chat = Chat(id=1, platform=Platform.CONSOLE, external_id=CONSOLE_CHAT.external_id)
    task = asyncio.create_task(
        run_console(REGISTRY, ctx, stdin, out, interactive=interactive, prompt=prompt)
    )
    await until(lambda: prompt.waiting)
    await ConsoleMessenger(out, prompt).deliver(chat, "New on Web Agents: a paper")
    expected = "New on Web Agents: a paper\n\n" + (PROMPT if interactive else "")
    assert out.getvalue().endswith(expected)
    stdin.type("/quit\n")
    await task
