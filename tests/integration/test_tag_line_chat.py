"""In the chat, on both databases: /latest shows the short tag line, /why still lists every
tag a paper carries (the bundled sample's AIGB-R1, tagged by the bundled catalog)."""

from __future__ import annotations

import pytest

from bot.adapters.console import handle_line, render_reply
from bot.services.ingest import load_sample_if_empty
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.tagline import MAX_OTHERS
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

AIGB_R1 = "2607.17281"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


def tag_line(text: str) -> str:
    (line,) = [ln for ln in text.splitlines() if ln.startswith("  tags: ")]
    return line.removeprefix("  tags: ")


async def test_why_lists_every_tag_while_the_paper_line_stays_short(
    db: Database, catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=catalog)
    await load_sample_if_empty(db.uow, catalog)
    async with db.uow() as uow:
        tags = [t for t in (await uow.papers.get(AIGB_R1)).tags if catalog.by_slug(t)]
    assert len(tags) >= 8
    await say(ctx, "/follow RL for LLM Agents")

    reply = await handle_line(f"/why {AIGB_R1}", REGISTRY, ctx)
    assert reply is not None
    (section,) = reply.sections  # under the card: "Why it has its topics:"
    reasons = section.lines  # "• <topic>[ ★]: <words>", one per tag
    assert {ln[2:].split(":")[0].removesuffix(" ★") for ln in reasons} == {
        catalog.by_slug(t).name for t in tags
    }
    line = tag_line(render_reply(reply))
    assert line.startswith("RL for LLM Agents ★, ")
    shown, more = line.rsplit(" +", 1)
    assert len(shown.split(", ")) <= 1 + MAX_OTHERS
    assert len(shown.split(", ")) + int(more) == len(tags)


async def test_latest_shows_the_short_line(db: Database, catalog: Catalog) -> None:
    ctx = Context(uow=db.uow, catalog=catalog)
    await load_sample_if_empty(db.uow, catalog)
    await say(ctx, "/follow RL for LLM Agents")
    text = await say(ctx, "/latest")
    lines = [tag_line(part) for part in text.split("\n• ")[1:]]
    assert lines
    for line in lines:
        assert line.startswith("RL for LLM Agents ★")
        assert len(line.rsplit(" +", 1)[0].split(", ")) <= 1 + MAX_OTHERS
