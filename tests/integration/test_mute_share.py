"""/mute says, in one line, how much of the recent index a broad tag is on (on both
databases): muting Large Language Models used to give no hint that it hid a quarter of
every listing."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime

from bot.adapters.console import handle_line
from bot.domain import Paper
from bot.services.ingest import load_sample_if_empty, store
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

DAY = date(2026, 11, 27)
NOW = datetime(2026, 11, 28, 9, tzinfo=UTC)
_ids = itertools.count(1)


async def say(ctx: Context, line: str) -> list[str]:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return list(reply.lines)


async def add(db: Database, count: int, *tags: str) -> None:
    papers = [
        Paper(arxiv_id=f"2611.{next(_ids):05d}", title="A paper", announced=DAY, tags=tags)
        for _ in range(count)
    ]
    async with db.uow() as uow:
        await store(uow, papers, None, NOW)
        await uow.commit()


async def test_muting_a_broad_tag_says_what_share_it_hides(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 30, "reinforcement-learning")
    await add(db, 2, "web-agents")
    await add(db, 8)
    broad = await say(ctx, "/mute Reinforcement Learning")
    assert broad[0].startswith("Muted Reinforcement Learning")
    [share] = [line for line in broad if "%" in line]
    assert "75% of the 40 papers" in share and "27 Nov 2026" in share
    narrow = await say(ctx, "/mute Web Agents")  # 5%: not worth a warning
    assert narrow[0].startswith("Muted Web Agents") and not any("%" in line for line in narrow)
    again = await say(ctx, "/mute Reinforcement Learning")  # nothing changed: no warning
    assert not any("%" in line for line in again)


async def test_sample_papers_never_make_a_tag_look_broad(
    db: Database, small_catalog: Catalog
) -> None:
    await load_sample_if_empty(db.uow, small_catalog)  # all 30 are RL for LLM Agents
    ctx = Context(uow=db.uow, catalog=small_catalog)
    lines = await say(ctx, "/mute RL for LLM Agents")
    assert lines[0].startswith("Muted RL for LLM Agents")
    assert not any("%" in line for line in lines)


async def test_latest_leaves_out_what_is_muted(db: Database, small_catalog: Catalog) -> None:
    """/mute promised "such papers will not be sent", yet /latest went on listing them first;
    it now leaves out the tags muted everywhere, and within a topic those muted there."""
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 2, "web-agents", "agentic-rag")
    await add(db, 3, "web-agents")
    await say(ctx, "/follow Web Agents")
    assert (await say(ctx, "/latest Web Agents"))[0] == "Latest in Web Agents:"
    await say(ctx, "/mute Agentic RAG")
    reply = await handle_line("/latest Web Agents", REGISTRY, ctx)
    assert reply is not None and len(reply.papers) == 3
    assert all("agentic-rag" not in item.paper.tags for item in reply.papers)
    assert "muted" in reply.lines[0]  # it says why fewer are listed
    await say(ctx, "/unmute Agentic RAG")
    await say(ctx, "/mute Agentic RAG in Web Agents")
    reply = await handle_line("/latest Web Agents", REGISTRY, ctx)
    assert reply is not None and len(reply.papers) == 3
    await say(ctx, "/mute Web Agents")
    assert await say(ctx, "/latest Web Agents") == [
        "Every paper on Web Agents has a tag you muted; /muted lists them."
    ]


async def test_latest_with_nothing_to_list_names_what_it_looked_at(
    db: Database, small_catalog: Catalog
) -> None:
    """/latest with nothing to show said "on that", whatever was asked: it names the topic,
    what the chat follows, or the whole index."""
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 2, "reinforcement-learning")
    await say(ctx, "/mute Reinforcement Learning")
    assert await say(ctx, "/latest Web Agents") == [
        "No papers on Web Agents yet. New ones reach you as they appear."
    ]
    assert await say(ctx, "/latest") == [
        "Every paper stored has a tag you muted; /muted lists them."
    ]
    await say(ctx, "/follow Reinforcement Learning")
    assert await say(ctx, "/latest") == [
        "Every paper in what you follow has a tag you muted; /muted lists them."
    ]
    await say(ctx, "/unmute Reinforcement Learning")
    await say(ctx, "/unfollow Reinforcement Learning")
    await say(ctx, "/follow Web Agents")
    assert await say(ctx, "/latest") == [
        "No papers in what you follow yet. New ones reach you as they appear."
    ]


async def test_muting_a_tag_most_of_a_followed_topic_carries_says_so(
    db: Database, small_catalog: Catalog
) -> None:
    """Muting Reinforcement Learning while following RL for LLM Agents silenced nearly all of
    it without a word (on the bundled sample, 29 of its 30 papers carry both)."""
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 3, "rl-for-llm-agents", "reinforcement-learning")
    await add(db, 1, "rl-for-llm-agents")
    await add(db, 1, "web-agents", "agentic-rag")
    await add(db, 3, "web-agents")
    await say(ctx, "/follow RL for LLM Agents")
    await say(ctx, "/follow Web Agents")
    lines = await say(ctx, "/mute Reinforcement Learning")
    [careful] = [line for line in lines if line.startswith("Careful")]
    assert careful == (
        "Careful: 3 of the 4 stored papers of RL for LLM Agents, which you follow, have it: "
        "they are held back too."
    )
    assert lines[-1] == "/unmute Reinforcement Learning undoes it."
    # on a quarter of Web Agents: not most of it, no warning
    assert not any(line.startswith("Careful") for line in await say(ctx, "/mute Agentic RAG"))
    # the followed topic itself: all of it
    [itself] = [line for line in await say(ctx, "/mute Web Agents") if "Careful" in line]
    assert itself.startswith("Careful: all 4 stored papers of Web Agents, which you follow,")
    # muted again: nothing changed, nothing said
    assert not any("Careful" in line for line in await say(ctx, "/mute Reinforcement Learning"))


async def test_a_scoped_mute_counts_only_its_own_topic(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 2, "rl-for-llm-agents", "reinforcement-learning")
    await add(db, 1, "web-agents", "reinforcement-learning")
    await add(db, 2, "web-agents")
    await say(ctx, "/follow RL for LLM Agents")
    await say(ctx, "/follow Web Agents")
    within = await say(ctx, "/mute Reinforcement Learning in Web Agents")  # 1 of 3: quiet
    assert within[0].startswith("Muted Reinforcement Learning in Web Agents")
    assert not any("Careful" in line for line in within)
    lines = await say(ctx, "/mute Reinforcement Learning in RL for LLM Agents")
    assert any(
        line.startswith("Careful: all 2 stored papers of RL for LLM Agents") for line in lines
    )


async def test_a_chat_that_follows_nothing_or_one_paper_gets_the_right_words(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await add(db, 1, "web-agents", "agentic-rag")
    assert not any("Careful" in line for line in await say(ctx, "/mute Agentic RAG"))
    await say(ctx, "/unmute Agentic RAG")
    await say(ctx, "/follow Web Agents")
    [careful] = [line for line in await say(ctx, "/mute Agentic RAG") if "Careful" in line]
    assert careful == (
        "Careful: the one stored paper of Web Agents, which you follow, has it: "
        "it is held back too."
    )
