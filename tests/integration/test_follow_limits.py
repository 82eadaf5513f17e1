"""Follows per chat, /list in pages, follow-time tagging off the event loop, and the
"Latest in <query>" button (issue 14, rows 7 and 13)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest

from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from bot.config import Settings
from bot.domain import Command, SubscriptionKind
from bot.services.ingest import load_sample_if_empty
from bot.topics.content import Audience, alert
from bot.topics.query_tree import MAX_QUERY_CHARS
from bot.topics.tagger import Tagger
from handlers.base import Context
from handlers.following import LIST_PAGE
from handlers.registry import REGISTRY
from handlers.text import MAX_ARGS
from storage.database import Database


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def followed(db: Database) -> list[tuple[str, str]]:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    return [(s.kind.value, s.target) for s in subs]


def test_the_limits_are_settings() -> None:
    default = Settings()
    assert (default.max_topics_per_chat, default.max_queries_per_chat) == (50, 20)
    tuned = Settings(PAPERWATCH_MAX_TOPICS_PER_CHAT="3", PAPERWATCH_MAX_QUERIES_PER_CHAT="0")
    assert (tuned.max_topics_per_chat, tuned.max_queries_per_chat) == (3, 0)


async def test_queries_beyond_the_limit_are_refused(db: Database, ctx: Context) -> None:
    ctx = replace(ctx, max_queries_per_chat=3)
    for n in range(3):
        assert "Now following your query" in await say(ctx, f'/follow "word{n}" AND agent*')
    before = await followed(db)
    answer = await say(ctx, '/follow "one more" AND agent*')
    assert "already follows 3 own queries, the most it may" in answer
    assert "Nothing was changed" in answer and "/unfollow" in answer
    assert await followed(db) == before
    # Following one again is still "already", and topics have a limit of their own.
    assert "already follow" in await say(ctx, '/follow "word1" AND agent*')
    assert "Now following" in await say(ctx, "/follow Web Agents")
    # Making room works.
    assert "Stopped following" in await say(ctx, '/unfollow "word0" AND agent*')
    assert "Now following your query" in await say(ctx, '/follow "one more" AND agent*')


async def test_a_query_up_to_the_query_languages_limit_can_be_followed(
    db: Database, ctx: Context
) -> None:
    """The query language takes 1,000 characters (README); /follow refused anything over
    300, so a 600-character query was "too long" for a reason the README does not give."""
    query = " OR ".join(f'"word{n}"' for n in range(50))  # 586 characters, 50 terms
    assert 300 < len(query) < MAX_QUERY_CHARS
    assert "Now following your query" in await say(ctx, f"/follow {query}")
    assert "too long" not in await say(ctx, f"/latest {query} 2")
    assert "Stopped following" in await say(ctx, f"/unfollow {query}")
    assert await followed(db) == []
    too_long = " OR ".join(f'"w{n:04d}"' for n in range(120))
    answer = await say(ctx, f"/follow {too_long}")
    assert "at most 1,000). Nothing was changed" in answer and await followed(db) == []


async def test_topics_beyond_the_limit_are_refused(db: Database, ctx: Context) -> None:
    ctx = replace(ctx, max_topics_per_chat=2)
    names = [t.name for t in ctx.catalog.topics]
    assert "Now following" in await say(ctx, f"/follow {names[0]}")
    assert "Now following" in await say(ctx, f"/follow {names[1]}")
    before = await followed(db)
    answer = await say(ctx, f"/follow {names[2]}")
    assert "already follows 2 catalog topics, the most it may" in answer
    assert await followed(db) == before
    assert "Now following your query" in await say(ctx, '/follow "own words"')  # queries: own


async def test_list_is_paginated_and_every_page_is_short(db: Database, ctx: Context) -> None:
    ctx = replace(ctx, max_queries_per_chat=100)
    long_word = "x" * 120
    total = 2 * LIST_PAGE + 3
    for n in range(total):
        query = f'"{long_word}{n}" AND "{long_word}" AND y{n}'
        assert len(query) <= MAX_ARGS
        assert "Now following your query" in await say(ctx, f"/follow {query}")
    first = await say(ctx, "/list")
    assert f"You follow {total} queries:" in first
    assert first.count("\n• ") == LIST_PAGE
    assert "Page 1 of 3: /list 2 for more" in first
    assert "Page 2 of 3: /list 3 for more" in await say(ctx, "/list 2")
    last = await say(ctx, "/list 3")
    assert last.count("\n• ") == 3 and "Page 3 of 3." in last
    for page in ("", " 2", " 3"):
        assert len(await say(ctx, "/list" + page)) < 4096  # one Telegram message
    assert "There is no page 4: the list has 3." in await say(ctx, "/list 4")
    for bad in ("0", "-1", "two", "᧚", "99999999999999999999"):
        assert "Usage: /list [page]" in await say(ctx, f"/list {bad}")


async def test_follow_matches_papers_off_the_event_loop(
    db: Database, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a query /follow tags the stored papers, the loop keeps running: the tagging
    waits, inside, until a callback scheduled on the loop has run. On the loop itself
    that callback could not run before the tagging ends (and the test would say so)."""
    await load_sample_if_empty(db.uow)
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    seen: dict[str, bool] = {}
    original = Tagger.tag

    def watched_tag(self: Tagger, item):  # type: ignore[no-untyped-def]
        if "loop_ran" not in seen:
            seen["on_loop_thread"] = threading.get_ident() == loop_thread
            if not seen["on_loop_thread"]:
                ran = threading.Event()
                loop.call_soon_threadsafe(ran.set)
                seen["loop_ran"] = ran.wait(timeout=60)  # only a failing run waits
            else:
                seen["loop_ran"] = False
        return original(self, item)

    monkeypatch.setattr(Tagger, "tag", watched_tag)
    assert "Now following your query" in await say(ctx, '/follow "language model" AND agent*')
    assert seen == {"on_loop_thread": False, "loop_ran": True}


async def test_ingest_matches_papers_off_the_event_loop(
    db: Database, ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same proof for an ingest: tagging new papers lets the loop run meanwhile."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    seen: dict[str, bool] = {}
    original = Tagger.tag

    def watched_tag(self: Tagger, item):  # type: ignore[no-untyped-def]
        if "loop_ran" not in seen:
            seen["on_loop_thread"] = threading.get_ident() == loop_thread
            ran = threading.Event()
            if not seen["on_loop_thread"]:
                loop.call_soon_threadsafe(ran.set)
            seen["loop_ran"] = not seen["on_loop_thread"] and ran.wait(timeout=60)
        return original(self, item)

    monkeypatch.setattr(Tagger, "tag", watched_tag)
    assert "Now following your query" in await say(ctx, '/follow "language model" AND agent*')
    seen.clear()
    result = await load_sample_if_empty(db.uow, ctx.catalog)
    assert result is not None and result.new
    assert seen == {"on_loop_thread": False, "loop_ran": True}


async def test_the_latest_in_query_button_answers(db: Database, ctx: Context) -> None:
    """An alert for a followed query carries "Latest in <query>" with the query's tag as
    its argument; pressing it runs /latest with that tag."""
    await load_sample_if_empty(db.uow)
    assert "Now following your query" in await say(ctx, '/follow "language model" AND agent*')
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        assert chat is not None
        subs = tuple(await uow.subscriptions.for_chat(chat.id))
        paper = (await uow.papers.latest([subs[0].tag], limit=1))[0]
    assert subs[0].kind is SubscriptionKind.QUERY
    message = alert(ctx.catalog, paper, Audience(subscriptions=subs, mutes=()))
    assert message is not None
    button = next(b for row in message.buttons for b in row if b.text.startswith("Latest in"))
    pressed = Command(button.action.value, button.arg, CONSOLE_CHAT)
    reply = await REGISTRY.dispatch(pressed, ctx)
    text = render_reply(reply)
    assert not reply.is_error, text
    assert text.startswith(f"Latest for {subs[0].label}:")
    assert paper.title in text
    # Pressed after an /unfollow: a plain answer, not "I don't know a topic called q:...".
    assert "Stopped following" in await say(ctx, "/unfollow " + subs[0].label)
    again = render_reply(await REGISTRY.dispatch(pressed, ctx))
    assert again.startswith("This chat no longer follows that query.")
