"""Migration 0012 fills `tag_days` from an existing database and its downgrade drops it; on
both databases momentum's weekly counts read from it equal those the GROUP BY over every tag
of every counted paper gave before it (`test_tag_days.py` checks the table after each writer).
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import sqlalchemy as sa

from bot.domain import Paper
from storage.database import Database
from storage.models import PaperRow, PaperTagRow
from storage.momentum_counts import MomentumRepository
from tests.integration.test_tag_days import MON, WED, expect, ingest


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
