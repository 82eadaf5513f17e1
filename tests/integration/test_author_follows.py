"""Followed authors on both databases: stored once per person, tagged at ingest and at
retag, alerted and pinned first in the digest, and bad names store nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from bot.adapters.console import CONSOLE_CHAT
from bot.domain import Author, SubscriptionKind
from bot.services.deliver import Deliverer
from bot.services.digests import fold_due_digests
from bot.services.ingest import retag
from bot.topics.authors import parse_author
from bot.topics.catalog import Catalog
from handlers.base import Context
from storage.database import Database
from tests.integration.test_delivery import START, WEB_RL, Clock, Recorder, ingest, paper, say

LEVINE = parse_author("Sergey Levine").tag
HIS = replace(
    paper(11, "Offline RL for robots", "Robots learn from logs."),
    authors=(Author("Chelsea Finn"), Author("S.\u200b Levine", ("UC Berkeley",))),
)
NAMESAKE = replace(
    paper(12, "Long-context language models", "Attention, again."),
    authors=(Author("Yoav Levine", ("AI21 Labs",)),),
)


async def authors_followed(db: Database) -> list[tuple[str, str, str]]:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        targets = await uow.subscriptions.query_targets(SubscriptionKind.AUTHOR)
        queries = await uow.subscriptions.query_targets()
    assert not queries  # an author is no query for the query tagger
    assert [t for t, _ in targets] == sorted({s.target for s in subs})
    return [(s.kind.value, s.target, s.label) for s in subs]


async def tags_of(db: Database, arxiv_id: str) -> dict[str, tuple[str, ...]]:
    async with db.uow() as uow:
        return dict(await uow.papers.tags_with_why(arxiv_id))


async def test_an_author_is_followed_once_and_bad_names_store_nothing(
    db: Database, ctx: Context
) -> None:
    for line in ("/follow author", "/follow author S. L.", "/follow author " + "x" * 201):
        assert "Nothing was changed" in await say(ctx, line)
    assert await authors_followed(db) == []
    assert "Now following the author" in await say(ctx, '/follow author "Sergey Levine"')
    assert "already follows" in await say(ctx, "/follow author Levine, Sergey")
    assert "Now following the author" in await say(ctx, "/follow author Sergey Levine @Berkeley")
    assert await authors_followed(db) == [
        ("author", "levine, sergey", "Sergey Levine"),
        ("author", "levine, sergey @berkeley", "Sergey Levine @Berkeley"),
    ]
    assert "Stopped following" in await say(ctx, "/unfollow author Sergey Levine")
    assert [t for _, t, _ in await authors_followed(db)] == ["levine, sergey @berkeley"]


async def test_his_papers_are_tagged_alerted_and_pinned_first(
    db: Database, small_catalog: Catalog
) -> None:
    clock = Clock(START)
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=clock)
    recorder = Recorder()
    deliverer = Deliverer(db.uow, {"console": recorder}, small_catalog, clock=clock)
    await say(ctx, "/follow Web Agents")
    await say(ctx, "/follow author Sergey Levine")
    await say(ctx, "/digest instant")
    await ingest(db, small_catalog, clock, HIS, NAMESAKE)
    assert (await tags_of(db, HIS.arxiv_id))[LEVINE] == ("S. Levine",)
    assert LEVINE not in await tags_of(db, NAMESAKE.arxiv_id)
    assert await deliverer.drain() == 1
    assert recorder.sent[0][1].startswith("[1/1] New on 👤 Sergey Levine:")

    await say(ctx, "/digest daily 07:30")
    clock.now = START.replace(hour=7, minute=0)
    both = replace(HIS, arxiv_id="2609.00021", tags=())
    await ingest(db, small_catalog, clock, WEB_RL, replace(both, title="Web agents, by him"))
    clock.now = datetime(2026, 9, 25, 7, 30, tzinfo=START.tzinfo)
    assert await fold_due_digests(db.uow, clock()) == 1
    assert await deliverer.drain() == 1
    text = recorder.sent[1][1]
    assert text.index("👤 Sergey Levine (1 new): Web agents, by him") < text.index("Web Agents (1")


async def test_retag_and_inactive_chats(db: Database, ctx: Context, small_catalog: Catalog) -> None:
    await ingest(db, small_catalog, Clock(START), HIS, NAMESAKE)  # stored before the follow
    await say(ctx, "/follow author Yoav Levine @AI21")
    async with db.uow() as uow:
        await uow.papers.replace_rule_tags([NAMESAKE.arxiv_id], [])
        await uow.commit()
    yoav = parse_author("Yoav Levine @AI21").tag
    assert yoav not in await tags_of(db, NAMESAKE.arxiv_id)
    result = await retag(db.uow, small_catalog)
    assert yoav in await tags_of(db, NAMESAKE.arxiv_id)
    assert yoav not in await tags_of(db, HIS.arxiv_id) and result.papers == 2
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        assert chat is not None
        await uow.chats.set_active(chat.id, False)
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.subscriptions.query_targets(SubscriptionKind.AUTHOR) == []
