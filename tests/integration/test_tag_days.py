"""`tag_days` holds, per tag and announcement day, the counted papers carrying the tag.

On both databases, after every path that changes tags, announcement days or the sample
flag (ingest with its curated and catalog tags, a re-ingest, a newer version announced on
another day, a replacement without a date, a real announcement of a sample paper,
`paperwatch retag`, a followed query's tags on older papers, a rolled-back transaction, and
on PostgreSQL a tag written while another transaction moves its paper) the table equals
counting the tags of the papers themselves. `test_tag_days_reads.py`: migration 0012 fills it
from an existing database and its downgrade drops it; momentum's weekly counts read from it
equal the old GROUP BY over every tag of every paper.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.adapters.console import handle_line
from bot.domain import AnnounceType, Paper
from bot.services.ingest import load_sample_if_empty, retag, store
from bot.topics.catalog import Catalog, load_catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from storage.models import PaperRow, PaperTagRow, TagDayRow

MON, TUE, WED = date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 25)
NOW = datetime(2026, 11, 28, 9, tzinfo=UTC)
RL, AGENTS, WEB, RAG = "reinforcement-learning", "rl-for-llm-agents", "web-agents", "agentic-rag"

TagDays = dict[tuple[str, date], int]


async def tag_counts(db: Database) -> TagDays:
    """The table, pairs with counted papers only."""
    stmt = sa.select(TagDayRow.tag, TagDayRow.day, TagDayRow.papers).where(TagDayRow.papers > 0)
    async with db.uow() as uow:
        return {(tag, day): n for tag, day, n in (await uow.session.execute(stmt)).all()}


async def counted_tags(db: Database) -> TagDays:
    """What the table must hold: the tags of the counted papers themselves, by day."""
    stmt = (
        sa.select(PaperTagRow.tag, PaperRow.announced, sa.func.count())
        .join(PaperRow, PaperRow.id == PaperTagRow.paper_id)
        .where(PaperRow.announced.isnot(None), PaperRow.sample == sa.false())
        .group_by(PaperTagRow.tag, PaperRow.announced)
    )
    async with db.uow() as uow:
        return {(tag, day): n for tag, day, n in (await uow.session.execute(stmt)).all()}


async def expect(db: Database, counts: TagDays | None = None) -> TagDays:
    """The table equals the reference (and `counts`, when given); returns it."""
    held = await tag_counts(db)
    assert held == await counted_tags(db)
    if counts is not None:
        assert held == counts
    return held


async def ingest(
    db: Database, papers: list[Paper], catalog: Catalog | None, *, sample: bool = False
) -> None:
    async with db.uow() as uow:
        await store(uow, papers, catalog, NOW, sample=sample)
        await uow.commit()


async def test_the_counts_follow_ingest(db: Database, small_catalog: Catalog) -> None:
    first = [
        Paper(
            arxiv_id="2611.00001", title="Reinforcement learning <for> agent & co", announced=MON
        ),
        Paper(arxiv_id="2611.00002", title="A web agent, RL", announced=MON, tags=("Hand Picked",)),
        Paper(arxiv_id="2611.00003", title="RAG agent 🚀", announced=TUE),
        Paper(arxiv_id="2611.00004", title="An RL agent, date unknown"),
    ]
    await ingest(db, first, small_catalog)
    counts = {(RL, MON): 2, (AGENTS, MON): 2, (WEB, MON): 1, ("hand-picked", MON): 1}
    counts |= {(RAG, TUE): 1}
    await expect(db, counts)
    await ingest(db, first, small_catalog)  # the same papers again: nothing changes
    await expect(db, counts)
    # A newer version announced on another day takes its tags there, old and new; a
    # replacement (no date of its own: ingest drops it) keeps the day they count on; an
    # undated paper given a date starts counting.
    await ingest(
        db,
        [
            Paper(arxiv_id="2611.00002", title="A web agent with RAG", version=2, announced=WED),
            Paper(
                arxiv_id="2611.00003",
                title="RAG agent, now with reinforcement learning",
                version=2,
                announced=WED,
                announce_type=AnnounceType.REPLACE,
            ),
            Paper(arxiv_id="2611.00004", title="An RL agent", version=2, announced=WED),
        ],
        small_catalog,
    )
    await expect(
        db,
        {
            (RL, MON): 1,
            (AGENTS, MON): 1,
            (RL, TUE): 1,
            (AGENTS, TUE): 1,
            (RAG, TUE): 1,
            (RL, WED): 2,
            (AGENTS, WED): 2,
            (WEB, WED): 1,
            (RAG, WED): 1,
            ("hand-picked", WED): 1,
        },
    )


async def test_sample_papers_count_only_once_really_announced(
    db: Database, small_catalog: Catalog
) -> None:
    await load_sample_if_empty(db.uow, small_catalog)
    await ingest(db, [Paper(arxiv_id="sample:x", title="RL agent", announced=MON)], small_catalog)
    sample = Paper(arxiv_id="2611.07777", title="RL agent", announced=MON, tags=("Picked",))
    await ingest(db, [sample], small_catalog, sample=True)
    async with db.uow() as uow:
        assert len(await uow.papers.tags_with_why("2611.07777")) == 3
    await expect(db, {})
    # The real announcement brings the tags the sample had (and any new ones) to its day.
    real = Paper(arxiv_id="2611.07777", title="The real web agent", announced=TUE)
    await ingest(db, [real], small_catalog)
    counts = {(RL, TUE): 1, (AGENTS, TUE): 1, ("picked", TUE): 1, (WEB, TUE): 1}
    await expect(db, counts)
    # A sample never overwrites a real paper, so its day and tags stay.
    newer = Paper(arxiv_id="2611.07777", title="RAG agent", version=3, announced=WED)
    await ingest(db, [newer], small_catalog, sample=True)
    await expect(db, counts)


async def test_retag_rewrites_the_counts(
    db: Database, small_catalog: Catalog, tmp_path: Path
) -> None:
    papers = [
        Paper(arxiv_id=f"2611.{i:05d}", title=title, announced=day, tags=curated)
        for i, (title, day, curated) in enumerate(
            [
                ("RL agent", MON, ("Kept",)),
                ("A web agent", MON, ()),
                ("RAG agent", TUE, ()),
                ("RAG agent, undated", None, ()),
                ("Reinforcement learning", WED, ()),
            ]
        )
    ]
    await ingest(db, papers, small_catalog)
    before = await expect(db)
    await retag(db.uow, small_catalog, page_size=2)  # the same rules: the same counts
    await expect(db, before)
    # Rules that change: agentic-rag is gone, web-agents matches any agent.
    changed = tmp_path / "catalog.toml"
    text = (Path(__file__).parents[1] / "fixtures" / "catalog_small.toml").read_text()
    text = text.replace("rule = '\"web agent\"'", "rule = 'agent*'")
    changed.write_text(text.replace("rule = 'RAG AND agent*'", "rule = 'nothing-matches-this'"))
    await retag(db.uow, load_catalog(changed), page_size=2)
    after = await expect(db)
    assert after[WEB, MON] == 2 and after[WEB, TUE] == 1 and after["kept", MON] == 1
    assert not any(tag == RAG for tag, _ in after)


async def test_a_followed_query_counts_on_older_papers(
    db: Database, small_catalog: Catalog
) -> None:
    await ingest(
        db,
        [
            Paper(arxiv_id="2611.00001", title="Graph transformers", announced=MON),
            Paper(arxiv_id="2611.00002", title="Graph transformers again", announced=TUE),
            Paper(arxiv_id="2611.00003", title="Graph transformers, undated"),
        ],
        small_catalog,
    )
    await ingest(db, [Paper(arxiv_id="2611.00009", title="graph transformers")], None, sample=True)
    await expect(db, {})
    reply = await handle_line(
        '/follow "graph transformers"', REGISTRY, Context(db.uow, small_catalog)
    )
    assert reply is not None
    counts = await expect(db)
    assert sorted(counts.values()) == [1, 1]
    assert {day for _, day in counts} == {MON, TUE} and len({tag for tag, _ in counts}) == 1


async def test_a_rolled_back_transaction_leaves_the_counts(
    db: Database, small_catalog: Catalog
) -> None:
    await ingest(db, [Paper(arxiv_id="2611.00001", title="RL agent", announced=MON)], small_catalog)
    counts = await expect(db)
    async with db.uow() as uow:
        new = Paper(arxiv_id="2611.00002", title="RL agent", announced=MON)
        moved = Paper(arxiv_id="2611.00001", title="web agent", version=2, announced=TUE)
        await store(uow, [new, moved], small_catalog, NOW)
        await uow.papers.replace_rule_tags(["2611.00001"], [])
        # leaving without commit rolls the tags and their counts back together
    await expect(db, counts)


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite writes one at a time
@pytest.mark.parametrize("tags_first", [True, False])
async def test_tags_written_while_an_ingest_moves_their_paper_count_on_its_new_day(
    db: Database, tags_first: bool
) -> None:
    """Two transactions at once on PostgreSQL: one attaching a tag, one moving the paper
    to another day; whichever writes first, the tag counts on the paper's day in the end."""
    await ingest(db, [Paper(arxiv_id="2611.00001", title="a", announced=MON, tags=("old",))], None)
    newer = Paper(arxiv_id="2611.00001", title="a", version=2, announced=TUE)
    if tags_first:
        async with db.uow() as uow:
            await uow.papers.add_tags([("2611.00001", "x", ("why",))])
            moving = asyncio.create_task(ingest(db, [newer], None))
            await asyncio.sleep(0.5)  # the move waits for this transaction
            assert not moving.done()
            await uow.commit()
        await moving
    else:
        async with db.uow() as uow:
            await store(uow, [newer], None, NOW)
            tagging = asyncio.create_task(tag(db, "2611.00001", "x"))
            await asyncio.sleep(0.5)  # the tags wait for the move
            assert not tagging.done()
            await uow.commit()
        await tagging
    await expect(db, {("old", TUE): 1, ("x", TUE): 1})


async def tag(db: Database, arxiv_id: str, key: str) -> None:
    async with db.uow() as uow:
        await uow.papers.add_tags([(arxiv_id, key, ("why",))])
        await uow.commit()
