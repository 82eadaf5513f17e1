"""Papers like these on both databases: the like_sets table (migration 0017) and its store,
a set followed from stored papers, new papers like it tagged at ingest and at retag,
alerted, and explained by /why (the closest paper of the set, and with the bundled catalog
the topics the paper shares with the set); inactive chats' sets drop out."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import sqlalchemy as sa

from bench.relevance_catalog import CATALOG_DIR, load_labels, load_split
from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from bot.domain import Paper, SubscriptionKind
from bot.ports import LikeSet
from bot.services.deliver import Deliverer
from bot.services.ingest import retag
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.like import LikeProfile, like_tag
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from tests.integration.test_delivery import START, Clock, Recorder, ingest, say

LIKE = SubscriptionKind.LIKE


@cache
def positives(slug: str) -> tuple[Paper, ...]:
    papers = load_split("dev")
    labels = load_labels(CATALOG_DIR / "labels" / "dev" / f"{slug}.jsonl")
    found = [papers[lb.arxiv_id] for lb in labels if lb.label]
    return tuple(replace(p, announced=START.date()) for p in found)


async def tables(db: Database) -> set[str]:
    async with db.engine.connect() as conn:
        return set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))


async def test_the_store_and_the_migration(db: Database) -> None:
    first = LikeSet("l:1", ("2401.00001", "hep-th/9901001"), '{"centroid":{}}', 0.12)
    async with db.uow() as uow:
        await uow.like_sets.save(first)
        await uow.like_sets.save(replace(first, threshold=0.2))  # replaced, not doubled
        await uow.like_sets.save(LikeSet("l:2", ("2401.00002",), "{}", 0.1))
        chat = await uow.chats.get_or_create(CONSOLE_CHAT)
        await uow.subscriptions.add(chat.id, LIKE, "l:1", "Papers like “A”", "l:1")
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.like_sets.get("l:1") == replace(first, threshold=0.2)
        assert await uow.like_sets.get("l:3") is None
        assert [s.tag for s in await uow.like_sets.followed()] == ["l:1"]  # l:2: nobody
        await uow.chats.set_active(chat.id, False)
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.like_sets.followed() == []
    assert "like_sets" in await tables(db)
    await db.downgrade("0014")
    assert "like_sets" not in await tables(db)
    await db.upgrade()
    assert "like_sets" in await tables(db)


async def test_a_set_tags_alerts_and_explains_new_papers(
    db: Database, small_catalog: Catalog
) -> None:
    clock = Clock(START)
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=clock)
    recorder = Recorder()
    deliverer = Deliverer(db.uow, {"console": recorder}, small_catalog, clock=clock)
    fl, sql = positives("federated-learning"), positives("text-to-sql")
    await ingest(db, small_catalog, clock, *fl[:3])  # the set's papers, stored before
    ids = [p.arxiv_id for p in fl[:3]]
    followed = await say(ctx, "/follow like " + " ".join(ids))
    assert followed.startswith("Now following Papers like “"), followed
    tag = like_tag(ids)
    listed = await say(ctx, "/list")
    assert "Papers like “" in listed and "(match score above 0." in listed
    await say(ctx, "/digest instant")

    await ingest(db, small_catalog, clock, *fl[3:13], *sql[:10])
    like_them = [p.arxiv_id for p in fl[3:13] if tag in await tags_of(db, p.arxiv_id)]
    assert len(like_them) >= 7
    assert not [p for p in sql[:10] if tag in await tags_of(db, p.arxiv_id)]
    why = (await tags_of(db, like_them[0]))[tag]
    assert why[0].startswith("like score ")  # ingest keeps the score; /why names the paper
    reply = await handle_line(f"/why {like_them[0]}", REGISTRY, ctx)
    assert reply is not None
    explained = render_reply(reply)
    assert f"Papers like “{fl[0].title[:20]}" in explained and "most like " in explained
    assert any(f"most like {i} “" in explained for i in ids)

    sent = await deliverer.drain()
    assert sent == len(like_them)
    assert all("Papers like “" in text for _, text in recorder.sent)

    async with db.uow() as uow:
        await uow.papers.replace_rule_tags(like_them, [])
        await uow.commit()
    assert [i for i in like_them if tag in await tags_of(db, i)] == []
    result = await retag(db.uow, small_catalog)
    assert result.papers == 23
    assert [i for i in like_them if tag in await tags_of(db, i)] == like_them


async def test_a_set_matches_by_its_topics_and_why_names_them(db: Database) -> None:
    """With the bundled catalog, the set's stored profile has topics; ingest matches new
    papers by them (with the tags it computed for the catalog) and /why names them."""
    catalog = load_catalog()
    clock = Clock(START)
    ctx = Context(uow=db.uow, catalog=catalog, clock=clock)
    code, fl = positives("code-generation"), positives("federated-learning")
    await ingest(db, catalog, clock, *code[:10])
    ids = [p.arxiv_id for p in code[:10]]
    followed = await say(ctx, "/follow like " + " ".join(ids))
    assert followed.startswith("Now following Papers like “"), followed
    tag = like_tag(ids)
    async with db.uow() as uow:
        stored = await uow.like_sets.get(tag)
    assert stored is not None
    profile = LikeProfile.from_json(stored.profile, stored.threshold)
    # AI for Software Engineering, whose definition covers code work, may weigh as much
    heaviest = sorted(profile.topics, key=lambda t: -profile.topics[t])[:2]
    assert "code-generation" in heaviest

    await ingest(db, catalog, clock, *code[10:30], *fl[:10])
    like_them = [p.arxiv_id for p in code[10:30] if tag in await tags_of(db, p.arxiv_id)]
    assert len(like_them) >= 12  # by words alone such a set found 1 in 25 in the bench
    assert not [p for p in fl[:10] if tag in await tags_of(db, p.arxiv_id)]
    tags = await tags_of(db, like_them[0])
    assert "code-generation" in tags
    assert tags[tag][0].startswith("like score ")
    reply = await handle_line(f"/why {like_them[0]}", REGISTRY, ctx)
    assert reply is not None
    shared = render_reply(reply).split("; shares the topics ", 1)[1].splitlines()[0]
    assert "Code Generation" in shared and "Federated Learning" not in shared


async def tags_of(db: Database, arxiv_id: str) -> dict[str, tuple[str, ...]]:
    async with db.uow() as uow:
        return dict(await uow.papers.tags_with_why(arxiv_id))
