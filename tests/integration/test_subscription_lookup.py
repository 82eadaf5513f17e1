"""Every command that names a followed subscription finds the same one for the same words.

/unfollow, /latest, /momentum and /mute <tag> in <followed> all read the typed text with
`handlers.lookup.find_subscription`; before they did, `/unfollow (agent*) AND survey`
found a query that `/momentum (agent*) AND survey` did not.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.adapters.console import CONSOLE_CHAT
from bot.domain import Command, Paper, Reply, Role
from bot.topics.query import parse_query
from bot.topics.tag_rules import query_key
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

NOW = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
QUERY = "agent* AND survey"  # as typed at /follow: the query's label
QUERY_TAG = query_key(parse_query(QUERY))
TOPIC = "RL for LLM Agents"
NOTHING_FOLLOWED = None


async def run(ctx: Context, name: str, args: str) -> Reply:
    command = Command(name, args, CONSOLE_CHAT, role=Role.OWNER)
    return await REGISTRY.dispatch(command, ctx, limited=False)


@pytest.fixture
async def followed(db: Database, ctx: Context) -> Context:
    """The console chat follows a catalog topic and a query, each with a paper."""
    ctx = Context(uow=db.uow, catalog=ctx.catalog, clock=lambda: NOW)
    for typed in (TOPIC, QUERY):
        assert (await run(ctx, "follow", typed)).changes_chat
    async with db.uow() as uow:
        await uow.papers.upsert(
            [
                Paper("2603.00001", "Agents that learn", announced=NOW.date()),
                Paper("2603.00002", "A survey of agents", announced=NOW.date()),
            ]
        )
        await uow.papers.add_tags(
            [("2603.00001", "rl-for-llm-agents", ("RL",)), ("2603.00002", QUERY_TAG, ("survey",))]
        )
        await uow.commit()
    return ctx


async def named_by(ctx: Context, typed: str) -> dict[str, str | None]:
    """Which subscription (by label) each command took `typed` to mean; None: none."""
    replies = {
        "momentum": await run(ctx, "momentum", typed),
        "latest": await run(ctx, "latest", typed),
        "mute": await run(ctx, "mute", f"Web Agents in {typed}"),
        "unfollow": await run(ctx, "unfollow", typed),  # last: it changes what others find
    }
    first_lines = {
        "momentum": lambda r: r.lines[1].split(":")[0],  # "<name>: 3 papers in the last..."
        "latest": lambda r: r.lines[0].split(" ", 2)[2].removesuffix(":"),  # "Latest in <name>:"
        "mute": lambda r: r.lines[0].removeprefix("Muted Web Agents in ").split(":")[0],
        "unfollow": lambda r: r.lines[0].removeprefix("Stopped following ").removesuffix("."),
    }
    return {
        name: None if reply.is_error else first_lines[name](reply)
        for name, reply in replies.items()
    }


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        (QUERY, QUERY),  # the label, as typed at /follow
        ("(agent*) AND survey", QUERY),  # the example
        ("(agent*)   AND (survey)", QUERY),
        ("AGENT* AND SURVEY", QUERY),  # the label in another case
        (QUERY_TAG, QUERY),  # a button's argument
        (TOPIC, TOPIC),
        ("rl-for-llm-agents", TOPIC),  # the slug
        ("RL for LLM Agnets", TOPIC),  # a typo
        ("agentic reinforcement learning", TOPIC),  # an alias
        ("(agent*) AND NOT survey", NOTHING_FOLLOWED),
    ],
)
async def test_every_command_finds_the_same_subscription(
    followed: Context, typed: str, meant: str | None
) -> None:
    found = await named_by(followed, typed)
    assert found == dict.fromkeys(found, meant)
