"""Topics from the chat with the bundled catalog: follow by meaning, queries, /topic, /why."""

from __future__ import annotations

import re

import pytest

from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from bot.services.ingest import load_sample_if_empty
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.resolve import search
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture
async def ctx(db: Database, catalog: Catalog) -> Context:
    await load_sample_if_empty(db.uow, catalog)
    return Context(uow=db.uow, catalog=catalog)


async def followed_slugs(ctx: Context) -> list[str]:
    async with ctx.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        return [s.target for s in await uow.subscriptions.for_chat(chat.id)] if chat else []


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


@pytest.mark.parametrize(
    ("typed", "topic"),
    [
        ("RL for LLM Agents", "RL for LLM Agents"),
        ("rl-for-llm-agents", "RL for LLM Agents"),
        ("reinforcement learning for large language model agents", "RL for LLM Agents"),
        ("RL for LLM Agnets", "RL for LLM Agents"),
        ("web agents", "Web Agents"),
        ("retrieval augmented generation", "Retrieval-Augmented Generation"),
    ],
)
async def test_follow_understands_people(ctx: Context, typed: str, topic: str) -> None:
    assert f"Now following {topic}." in await say(ctx, f"/follow {typed}")


@pytest.mark.parametrize(
    ("typed", "not_meant"),
    [("Machine Learning", "Machine Unlearning"), ("machine learnings", "Machine Unlearning")],
)
async def test_a_real_word_is_not_read_as_a_typo_of_another(
    ctx: Context, typed: str, not_meant: str
) -> None:
    """ "/follow Machine Learning" answered "Now following Machine Unlearning": one real word
    read as a typo of another. A name that differs from what was typed by a word that is a
    word of its own is offered, not followed."""
    reply = await handle_line(f"/follow {typed}", REGISTRY, ctx)
    assert reply is not None and reply.is_error
    text = render_reply(reply)
    assert "Now following" not in text and "Did you mean:" in text
    assert not_meant not in await followed_slugs(ctx)  # nothing was followed


async def test_ambiguous_input_offers_three_candidates(ctx: Context) -> None:
    reply = await handle_line("/follow agents", REGISTRY, ctx)
    assert reply is not None and reply.is_error
    assert "Did you mean:" in reply.lines[1]
    assert len(reply.buttons) == 3
    assert all(row[0].arg for row in reply.buttons)


async def test_following_a_query(db: Database, ctx: Context) -> None:
    text = await say(ctx, '/follow "credit assignment" AND (agent OR agents)')
    assert 'Now following your query: "credit assignment" AND (agent OR agents)' in text
    listed = await say(ctx, "/list")
    assert 'your query: "credit assignment" AND (agent OR agents)' in listed
    latest = await say(ctx, "/latest")
    titles = [line[2:] for line in latest.splitlines() if line.startswith("• ")]
    assert "BiCAA: Bidirectional Credit Assignment for Search-Augmented Agent" in titles
    # Only papers the query matches: every one carries the query's tag, marked as followed.
    assert latest.count("★") == len(titles)
    assert "Stopped following" in await say(
        ctx, '/unfollow "credit assignment" AND (agent OR agents)'
    )


async def test_topics_topic_and_why(ctx: Context) -> None:
    topics = await say(ctx, "/topics memory")
    assert "LLM Agent Memory" in topics
    everything = await say(ctx, "/topics")
    assert "The catalog has" in everything and "more" in everything
    # A word the glossary abbreviates ("reinforcement learning" is keyed as "rl") still
    # finds the topics that spell it out, as the abbreviation does.
    for words in ("reinforcement", "RL", "reinforcement learning"):
        found = await say(ctx, f"/topics {words}")
        assert "• Reinforcement Learning:" in found and "• RL for LLM Agents:" in found

    about = await say(ctx, "/topic RL for LLM Agents")
    assert "Part of: Reinforcement Learning" in about or "Part of:" in about
    assert "Matches papers where:" in about
    assert "Recent papers:" in about

    why = await say(ctx, "/why 2607.17299")  # a sample paper with a real arXiv id
    lines = why.splitlines()
    # The card first (what the paper is), then the reasons.
    assert (
        lines[0] == "• WAR: Workload-Aware Rollouts for Synchronous Agentic Reinforcement Learning"
    )
    assert lines[1].startswith("  arXiv:2607.17299 · ")
    reasons = lines.index("== Why it has its topics:")
    assert reasons > 1 and all(line.startswith("• ") for line in lines[reasons + 1 :])
    assert "RL for LLM Agents" in why
    assert "reinforcement learning" in why.lower()


async def test_topics_shows_name_matches_first_and_counts_the_rest(
    ctx: Context, catalog: Catalog
) -> None:
    """`/topics agents` is about the topics called "... Agents": they come before those that
    only mention agents in their description, and "… and N more" counts every other match
    (it said "1 more" whenever there were more than twelve)."""
    found = await say(ctx, "/topics agents")
    shown = [line[2:].split(":")[0] for line in found.splitlines() if line.startswith("• ")]
    assert shown[0] == "RL for LLM Agents" and "LLM Agents" in shown
    assert "Reinforcement Learning" not in shown  # "agents" only in its description
    more = re.search(r"… and (\d+) more", found)
    assert more is not None
    matching = len(search("agents", catalog, limit=len(catalog.topics)))
    assert int(more.group(1)) == matching - len(shown) > 1
    assert "e.g. /topics agents" not in found  # no example that repeats what was typed


async def test_why_takes_every_id_latest_shows(ctx: Context) -> None:
    latest = await say(ctx, "/latest RL for LLM Agents")
    shown = re.findall(r"^  (\S+) · ", latest, re.MULTILINE)
    assert len(shown) >= 3 and any(i.startswith("sample:") for i in shown)
    assert any(i.startswith("arXiv:") for i in shown)
    for paper_id in shown:
        why = await say(ctx, f"/why {paper_id}")
        assert f"  {paper_id} · " in why and "== Why it has its topics:" in why


async def test_the_sample_carries_the_real_id_it_has(ctx: Context) -> None:
    why = await say(ctx, "/why arXiv:2608.07531")
    assert why.startswith("• Search-G1: Grounded Search Agents")
    assert "cs.CL" in why and "Cheng Ruoxi, Ma Haoxuan, Zhang Hongyi +7" in why


async def test_sample_papers_are_tagged_by_rules_too(db: Database, ctx: Context) -> None:
    async with db.uow() as uow:
        tags = dict(await uow.papers.tags_with_why("2607.17299"))
    assert "rl-for-llm-agents" in tags
    assert any(why != ("curated",) for why in tags.values())
