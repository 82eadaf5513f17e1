"""`tag_days` holds, per tag and announcement day, the counted papers carrying the tag.

On both databases, after every path that changes tags, announcement days or the sample
flag (ingest with its curated and catalog tags, a re-ingest, a newer version announced on
another day, a replacement without a date, a real announcement of a sample paper,
`paperwatch retag`, a followed query's tags on older papers, a rolled-back transaction) the
table equals counting the tags of the papers themselves; migration 0012 fills it from an
existing database and its downgrade drops it; and momentum's weekly counts read from it are
those the old GROUP BY over every tag of every paper gave.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, date, datetime, timedelta
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
from storage.momentum_counts import MomentumRepository

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


@pytest.mark.parametrize("tags_first", [True, False])
async def test_tags_written_while_an_ingest_moves_their_paper_count_on_its_new_day(
    db: Database, tags_first: bool
) -> None:
    """Two transactions at once on PostgreSQL: one attaching a tag, one moving the paper
    to another day; whichever writes first, the tag counts on the paper's day in the end."""
    if db.dialect == "sqlite":
        pytest.skip("SQLite runs one writing transaction at a time")
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


async def test_the_migration_counts_an_existing_database_and_goes_back(
    database_url: tuple[str, dict],
) -> None:
    url, options = database_url
    database = Database(url, **options)
    try:
        await database.upgrade("0011")
        aware = database.dialect != "sqlite"
        stamp = datetime(2026, 11, 30, 8, tzinfo=UTC if aware else None)
        papers = [
            ("2611.00001", MON, False, ("x", "y")),
            ("2611.00002", MON, False, ("x",)),
            ("2611.00003", WED, False, ("y",)),
            ("2611.00004", None, False, ("x",)),  # no date: never counted
            ("2607.21273", MON, True, ("x",)),  # a sample paper with a real id
        ]
        async with database.engine.begin() as conn:
            for arxiv_id, day, sample, tags in papers:
                inserted = await conn.execute(
                    sa.text(
                        "INSERT INTO papers (arxiv_id, version, title, abstract, authors,"
                        " categories, announced, ingested_at, updated_at, sample) VALUES"
                        " (:arxiv_id, 1, 't', '', '[]', '[]', :day, :at, :at, :sample) RETURNING id"
                    ).bindparams(
                        sa.bindparam("day", type_=sa.Date),
                        sa.bindparam("at", type_=sa.DateTime(timezone=aware)),
                    ),
                    {"arxiv_id": arxiv_id, "day": day, "at": stamp, "sample": sample},
                )
                i = inserted.scalar_one()
                await conn.execute(
                    sa.text(
                        "INSERT INTO paper_tags (paper_id, tag, source, why)"
                        " VALUES (:id, :tag, 'curated', '[]')"
                    ),
                    [{"id": i, "tag": tag} for tag in tags],
                )
        await database.upgrade()
        counts = {("x", MON): 2, ("y", MON): 1, ("y", WED): 1}
        await expect(database, counts)
        # ... and the writers go on from there.
        await ingest(
            database, [Paper(arxiv_id="2611.00005", title="e", announced=WED, tags=("x",))], None
        )
        await expect(database, counts | {("x", WED): 1})
        await database.downgrade("0011")
        async with database.engine.connect() as conn:
            names = await conn.run_sync(lambda c: sa.inspect(c).get_table_names())
        assert "tag_days" not in names and "paper_tags" in names
    finally:
        await database.dispose()


# --- momentum reads the same figures as the GROUP BY over the papers it replaces ----------


async def old_weekly_counts(
    db: Database, tags: list[str] | None, as_of: date, weeks: int
) -> dict[str, list[int]]:
    """The weekly counts as momentum computed them before `tag_days`: every tag of every
    counted paper of the weeks, grouped (by day here, bucketed in Python)."""
    start = as_of - timedelta(days=7 * weeks - 1)
    stmt = (
        sa.select(PaperTagRow.tag, PaperRow.announced, sa.func.count())
        .join(PaperRow, PaperRow.id == PaperTagRow.paper_id)
        .where(PaperRow.announced.between(start, as_of), PaperRow.sample == sa.false())
        .group_by(PaperTagRow.tag, PaperRow.announced)
    )
    if tags is not None:
        stmt = stmt.where(PaperTagRow.tag.in_(tags))
    found: dict[str, list[int]] = {}
    async with db.uow() as uow:
        for tag, day, n in (await uow.session.execute(stmt)).all():
            found.setdefault(tag, [0] * weeks)[weeks - 1 - (as_of - day).days // 7] += n
    return found


def mixed_papers(seed: int, n: int) -> list[Paper]:
    """Papers over 40 weeks before and 2 after 2026-11-27, a few undated, with 1-4 of
    eight curated tags each."""
    rng = random.Random(seed)
    tags = [f"Topic {i}" for i in range(8)]
    papers = []
    for i in range(n):
        day = date(2026, 11, 27) - timedelta(days=rng.randrange(-14, 280))
        papers.append(
            Paper(
                arxiv_id=f"2611.{i:05d}",
                title=f"paper {i}",
                announced=None if rng.random() < 0.05 else day,
                tags=tuple(rng.sample(tags, rng.randint(1, 4))),
            )
        )
    return papers


async def test_momentum_counts_equal_the_old_query(db: Database) -> None:
    papers = mixed_papers(11, 400)
    await ingest(db, papers[:300], None)
    await ingest(db, papers[300:], None, sample=True)  # shown, never counted
    rng = random.Random(5)
    # Newer versions on other days, real announcements of samples, then tags dropped by
    # a retag (curated tags stay, so rule tags are added and dropped here).
    moved = [
        Paper(
            arxiv_id=p.arxiv_id,
            title="v2",
            version=2,
            announced=p.announced and p.announced - timedelta(days=rng.randrange(1, 30)),
        )
        for p in rng.sample(papers, 80)
    ]
    await ingest(db, moved, None)
    async with db.uow() as uow:
        rule = [(p.arxiv_id, f"rule-{i % 3}", ("why",)) for i, p in enumerate(papers[::3])]
        await uow.papers.add_tags(rule)
        await uow.commit()
    async with db.uow() as uow:
        await uow.papers.replace_rule_tags([p.arxiv_id for p in papers[::6]], rule[::4])
        await uow.commit()
    await expect(db)
    wanted = ["topic-0", "topic-3", "rule-1", "never-seen"]
    for as_of in (date(2026, 11, 27), date(2026, 10, 2), date(2026, 12, 10)):
        async with db.uow() as uow:
            repo = MomentumRepository(uow.session)
            assert await repo.weekly_counts(None, as_of, 26) == await old_weekly_counts(
                db, None, as_of, 26
            )
            got = await repo.weekly_counts(wanted, as_of, 8)
            assert got == await old_weekly_counts(db, wanted, as_of, 8)
            every = await repo.for_tags(None, as_of, 26)
        old = await old_weekly_counts(db, None, as_of, 26)
        assert {tag: list(m.weekly) for tag, m in every.items()} == old
