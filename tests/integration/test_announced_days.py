"""`announced_days` holds, per announcement day, the counted papers the index holds.

On both databases: the counts follow ingest (new papers, a re-ingest of the same papers, a
newer version announced on another day, a replacement without a date, papers without a
date, the bundled sample, a real announcement of a sample paper, a rolled-back ingest),
always equal to counting the papers themselves; migration 0011 fills them from the papers
of an existing database.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import sqlalchemy as sa

from bot.domain import AnnounceType, Paper
from bot.services.ingest import load_sample_if_empty, store
from bot.topics.catalog import Catalog
from storage.database import Database
from storage.models import AnnouncedDayRow, PaperRow

MON, TUE, WED = date(2026, 11, 23), date(2026, 11, 24), date(2026, 11, 25)
NOW = datetime(2026, 11, 28, 9, tzinfo=UTC)


async def day_counts(db: Database) -> dict[date, int]:
    """The table, days with counted papers only."""
    stmt = sa.select(AnnouncedDayRow.day, AnnouncedDayRow.papers).where(AnnouncedDayRow.papers > 0)
    async with db.uow() as uow:
        return {day: n for day, n in (await uow.session.execute(stmt)).all()}


async def counted_papers(db: Database) -> dict[date, int]:
    """What the table must hold: the papers themselves, counted by day."""
    stmt = (
        sa.select(PaperRow.announced, sa.func.count())
        .where(PaperRow.announced.isnot(None), PaperRow.sample == sa.false())
        .group_by(PaperRow.announced)
    )
    async with db.uow() as uow:
        return {day: n for day, n in (await uow.session.execute(stmt)).all()}


async def ingest(db: Database, papers: list[Paper], *, sample: bool = False) -> None:
    async with db.uow() as uow:
        await store(uow, papers, None, NOW, sample=sample)
        await uow.commit()


async def expect(db: Database, counts: dict[date, int]) -> None:
    assert await day_counts(db) == counts
    assert await counted_papers(db) == counts


async def test_the_day_counts_follow_ingest(db: Database) -> None:
    first = [
        Paper(arxiv_id="2611.00001", title="a", announced=MON),
        Paper(arxiv_id="2611.00002", title="b", announced=MON),
        Paper(arxiv_id="2611.00003", title="c", announced=TUE),
        Paper(arxiv_id="2611.00004", title="no date"),
    ]
    await ingest(db, first)
    await expect(db, {MON: 2, TUE: 1})
    await ingest(db, first)  # the same papers again: nothing changes
    await ingest(db, first[:2])
    await expect(db, {MON: 2, TUE: 1})
    # A newer version announced on another day moves its paper there; a replacement
    # (no date of its own: ingest drops it) keeps the day it was counted on.
    await ingest(
        db,
        [
            Paper(arxiv_id="2611.00002", title="b2", version=2, announced=WED),
            Paper(
                arxiv_id="2611.00003",
                title="c2",
                version=2,
                announced=WED,
                announce_type=AnnounceType.REPLACE,
            ),
            Paper(arxiv_id="2611.00004", title="dated now", version=2, announced=WED),
        ],
    )
    await expect(db, {MON: 1, TUE: 1, WED: 2})


async def test_sample_papers_are_never_counted(db: Database, small_catalog: Catalog) -> None:
    await load_sample_if_empty(db.uow, small_catalog)
    async with db.uow() as uow:
        assert await uow.papers.count() > 0
    await expect(db, {})
    # A `sample:` key is a sample however it is stored, and again changes nothing.
    await ingest(db, [Paper(arxiv_id="sample:x", title="x", announced=MON)])
    await ingest(db, [Paper(arxiv_id="2611.09999", title="s", announced=MON)], sample=True)
    await ingest(db, [Paper(arxiv_id="2611.09999", title="s", announced=MON)], sample=True)
    await expect(db, {})


async def test_a_real_announcement_of_a_sample_paper_counts_and_a_sample_never_does(
    db: Database,
) -> None:
    await ingest(db, [Paper(arxiv_id="2607.21273", title="sample", announced=MON)], sample=True)
    await expect(db, {})
    await ingest(db, [Paper(arxiv_id="2607.21273", title="The real one", announced=TUE)])
    await expect(db, {TUE: 1})
    # A sample never overwrites a real paper, so its day stays.
    newer = Paper(arxiv_id="2607.21273", title="sample", version=3, announced=WED)
    await ingest(db, [newer], sample=True)
    await expect(db, {TUE: 1})


async def test_an_ingest_rolled_back_leaves_the_counts(db: Database) -> None:
    await ingest(db, [Paper(arxiv_id="2611.00001", title="a", announced=MON)])
    async with db.uow() as uow:
        await store(uow, [Paper(arxiv_id="2611.00002", title="b", announced=MON)], None, NOW)
        # leaving without commit rolls the papers and their counts back together
    await expect(db, {MON: 1})


async def test_the_migration_counts_the_papers_of_an_existing_database(
    database_url: tuple[str, dict],
) -> None:
    url, options = database_url
    database = Database(url, **options)
    try:
        await database.upgrade("0010")
        aware = database.dialect != "sqlite"
        stamp = datetime(2026, 11, 30, 8, tzinfo=UTC if aware else None)
        papers = sa.table(
            "papers",
            sa.column("arxiv_id", sa.String),
            sa.column("version", sa.Integer),
            sa.column("title", sa.Text),
            sa.column("abstract", sa.Text),
            sa.column("authors", sa.JSON),
            sa.column("categories", sa.JSON),
            sa.column("announced", sa.Date),
            sa.column("ingested_at", sa.DateTime(timezone=aware)),
            sa.column("updated_at", sa.DateTime(timezone=aware)),
            sa.column("sample", sa.Boolean),
        )

        def row(arxiv_id: str, day: date | None, sample: bool = False) -> dict:
            return {
                "arxiv_id": arxiv_id,
                "version": 1,
                "title": arxiv_id,
                "abstract": "",
                "authors": [],
                "categories": [],
                "announced": day,
                "ingested_at": stamp,
                "updated_at": stamp,
                "sample": sample,
            }

        async with database.engine.begin() as conn:
            await conn.execute(
                papers.insert(),
                [
                    row("2611.00001", MON),
                    row("2611.00002", MON),
                    row("2611.00003", WED),
                    row("2611.00004", None),  # no date: never counted
                    row("sample:one", MON, sample=True),
                    row("2607.21273", TUE, sample=True),  # a sample paper with a real id
                ],
            )
        await database.upgrade()
        await expect(database, {MON: 2, WED: 1})
        # ... and ingest goes on from there.
        await ingest(database, [Paper(arxiv_id="2611.00005", title="e", announced=WED)])
        await expect(database, {MON: 2, WED: 2})
    finally:
        await database.dispose()
