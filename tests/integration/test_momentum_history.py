"""No momentum figure is computed from sample papers or from less history than it claims.

On both databases, through the chat commands and the spike job: a fresh database holding
only the bundled sample, one real day of arXiv, eight weeks of it, and eight weeks with a
week missing. Then the sample flag itself: the migration that marks the sample of an
existing database, and a real announcement of a sample paper taking its place.
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta

import sqlalchemy as sa

from bot.adapters.console import handle_line
from bot.domain import Action, Paper
from bot.services.ingest import load_sample_if_empty, store
from bot.services.spikes import check_spikes
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database
from storage.models import OutboxRow

AS_OF = date(2026, 11, 27)  # a Friday: the newest listing in the eight-week index
NOW = datetime(2026, 11, 28, 9, tzinfo=UTC)
_ids = itertools.count(1)


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return "\n".join(reply.lines)


def paper(day: date, *tags: str) -> Paper:
    return Paper(arxiv_id=f"2611.{next(_ids):05d}", title="A paper", announced=day, tags=tags)


async def add(db: Database, papers: list[Paper]) -> None:
    async with db.uow() as uow:
        await store(uow, papers, None, NOW)
        await uow.commit()


async def spike_notices(db: Database) -> list[str]:
    async with db.uow() as uow:
        stmt = sa.select(OutboxRow.payload).where(OutboxRow.kind == "spike")
        return [payload["text"] for payload in (await uow.session.execute(stmt)).scalars()]


def chat(db: Database, catalog: Catalog, now: datetime = NOW) -> Context:
    return Context(uow=db.uow, catalog=catalog, clock=lambda: now)


# --- the sample alone ----------------------------------------------------------------


async def test_sample_papers_alone_give_no_figures(db: Database, small_catalog: Catalog) -> None:
    today = datetime(2026, 12, 1, 9, tzinfo=UTC)
    assert await load_sample_if_empty(db.uow, small_catalog) is not None
    ctx = chat(db, small_catalog, today)
    await say(ctx, "/follow RL for LLM Agents")
    for line in ("/momentum RL for LLM Agents", "/momentum", "/trending"):
        text = await say(ctx, line)
        assert text.startswith("paperwatch holds no papers from arXiv yet"), (line, text)
        assert "sample papers never count" in text
        for claim in ("30 papers", "%", "trending", "Rising", "02 Aug 2026"):
            assert claim not in text, (line, text)
    assert await check_spikes(db.uow, small_catalog, today) == 0
    assert await spike_notices(db) == []
    async with db.uow() as uow:  # nor do they count as papers arXiv announced
        assert await uow.papers.new_since(today - timedelta(days=1)) == 0


# --- one real day ----------------------------------------------------------------------


async def one_real_day(db: Database, catalog: Catalog) -> Context:
    """The sample, then one 2024 listing: 21 Web Agents papers of 30."""
    await load_sample_if_empty(db.uow, catalog)
    listing = date(2024, 11, 28)
    await add(db, [paper(listing, "Web Agents") for _ in range(21)])
    await add(db, [paper(listing) for _ in range(9)])
    ctx = chat(db, catalog, datetime(2026, 12, 1, 9, tzinfo=UTC))
    await say(ctx, "/follow Web Agents")
    return ctx


async def test_one_real_day_gives_a_count_and_no_rate(db: Database, small_catalog: Catalog) -> None:
    ctx = await one_real_day(db, small_catalog)
    text = await say(ctx, "/momentum Web Agents")
    assert text == (
        "Momentum, newest paper 28 Nov 2024:\n"
        "Web Agents: 21 papers since 28 Nov 2024 (paperwatch has indexed 1 day so far; "
        "rises are shown after 8 weeks)."
    )
    followed = await say(ctx, "/momentum")
    assert followed.split("\n")[0] == (
        "Momentum, newest paper 28 Nov 2024 (paperwatch has indexed 1 day so far; rises are "
        "shown after 8 weeks):"
    )
    assert "Web Agents: 21 papers since 28 Nov 2024." in followed
    assert await say(ctx, "/trending") == (
        "No topic can be called rising yet: paperwatch has indexed 1 day so far; rises are "
        "shown after 8 weeks.\n/momentum <topic> shows what is known of any topic."
    )
    assert await check_spikes(db.uow, small_catalog, ctx.clock()) == 0
    assert await spike_notices(db) == []


# --- eight weeks -------------------------------------------------------------------------


def eight_weeks(skip: tuple[date, date] | None = None) -> list[Paper]:
    """Every listing day of the eight weeks ending at AS_OF: one untagged paper each; Web
    Agents once a week in the four weeks before, then four times a week (Monday to
    Thursday). `skip`: a stretch of days the index missed."""
    first = AS_OF - timedelta(days=55)  # a Saturday
    papers = []
    for n in range(56):
        day = first + timedelta(days=n)
        if day.weekday() >= 5 or (skip and skip[0] <= day <= skip[1]):
            continue
        papers.append(paper(day))
        recent = day > AS_OF - timedelta(days=28)
        if (recent and day.weekday() < 4) or (not recent and day.weekday() == 2):
            papers.append(paper(day, "Web Agents"))
    return papers


async def test_eight_weeks_of_real_papers_bring_the_sentences_back(
    db: Database, small_catalog: Catalog
) -> None:
    await load_sample_if_empty(db.uow, small_catalog)  # there, and still never counted
    await add(db, eight_weeks())
    ctx = chat(db, small_catalog)
    await say(ctx, "/follow Web Agents")
    sentence = (
        "16 papers in the last four weeks, up 300% on the four weeks before. "
        "44.4% of all new papers."
    )
    text = await say(ctx, "/momentum Web Agents")
    assert text.split("\n")[:2] == [
        "Momentum up to 27 Nov 2026 (8 weeks):",
        f"Web Agents (trending): {sentence}",
    ]
    assert text.split("\n")[2].startswith("▄▄▄▄████ ")
    assert (await say(ctx, "/trending")).split("\n")[:2] == [
        "Rising fastest, up to 27 Nov 2026:",
        f"• Web Agents: {sentence} ▄▄▄▄████",
    ]
    assert await check_spikes(db.uow, small_catalog, NOW) == 1
    [notice] = await spike_notices(db)
    assert notice.startswith(f"📈 Web Agents is heating up: {sentence} ")


async def test_a_week_missing_from_the_index_holds_the_rates_back(
    db: Database, small_catalog: Catalog
) -> None:
    await add(db, eight_weeks(skip=(date(2026, 10, 19), date(2026, 10, 23))))
    ctx = chat(db, small_catalog)
    await say(ctx, "/follow Web Agents")
    text = await say(ctx, "/momentum Web Agents")
    assert text.split("\n")[1] == (
        "Web Agents: 16 papers in the last four weeks (paperwatch holds no papers from "
        "17 Oct 2026 to 25 Oct 2026; rises are shown once it has 8 weeks without such a gap)."
    )
    assert text.split("\n")[0] == "Momentum up to 27 Nov 2026:"
    assert text.split("\n")[2].startswith("▄████ ")  # the five covered weeks only
    assert "No topic can be called rising yet" in await say(ctx, "/trending")
    assert await check_spikes(db.uow, small_catalog, NOW) == 0


async def test_an_old_newest_paper_is_named_as_such(db: Database, small_catalog: Catalog) -> None:
    await add(db, eight_weeks())
    later = chat(db, small_catalog, NOW + timedelta(days=60))
    text = await say(later, "/momentum Web Agents")
    assert text.startswith("Momentum, newest paper 27 Nov 2026 (8 weeks):\n")
    assert (await say(later, "/trending")).startswith("Rising fastest, newest paper 27 Nov 2026:")


# --- the sample flag ---------------------------------------------------------------------


async def test_a_real_announcement_of_a_sample_paper_takes_its_place(
    db: Database, small_catalog: Catalog
) -> None:
    await load_sample_if_empty(db.uow, small_catalog)
    real = Paper(arxiv_id="2607.21273", title="The real one", announced=date(2026, 7, 29))
    async with db.uow() as uow:
        result = await store(uow, [real], small_catalog, NOW)
        await uow.commit()
    assert result.updated == ("2607.21273",) and result.new == ()
    async with db.uow() as uow:
        assert await uow.momentum.latest_announced() == date(2026, 7, 29)
        stored = await uow.papers.get("2607.21273")
        assert stored is not None and stored.title == "The real one"
        # The sample never overwrites a real paper.
        await uow.papers.upsert(
            [Paper(arxiv_id="2607.21273", title="sample", version=3)], sample=True
        )
        again = await uow.papers.get("2607.21273")
        assert again is not None and again.title == "The real one"
        # A `sample:` key is a sample paper however it is stored.
        await uow.papers.upsert([Paper(arxiv_id="sample:x", title="x", announced=AS_OF)])
        assert await uow.momentum.latest_announced() == date(2026, 7, 29)


async def test_the_migration_marks_the_sample_of_an_existing_database(
    database_url: tuple[str, dict],
) -> None:
    url, options = database_url
    database = Database(url, **options)
    try:
        await database.upgrade("0008")
        aware = database.dialect != "sqlite"
        loaded = datetime(2026, 11, 30, 8, 0, 0, 123456, tzinfo=UTC if aware else None)
        later = loaded + timedelta(hours=1)
        batches = sa.table(
            "batches",
            sa.column("id", sa.Integer),
            sa.column("papers", sa.Integer),
            sa.column("created_at", sa.DateTime(timezone=aware)),
        )
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
            sa.column("batch_id", sa.Integer),
        )

        def row(arxiv_id: str, at: datetime, batch: int | None) -> dict:
            return {
                "arxiv_id": arxiv_id,
                "version": 1,
                "title": arxiv_id,
                "abstract": "",
                "authors": [],
                "categories": [],
                "announced": date(2026, 7, 30),
                "ingested_at": at,
                "updated_at": at,
                "batch_id": batch,
            }

        async with database.engine.begin() as conn:
            await conn.execute(
                batches.insert(),
                [
                    {"id": 1, "papers": 3, "created_at": loaded},
                    {"id": 2, "papers": 1, "created_at": later},
                ],
            )
            await conn.execute(
                papers.insert(),
                [
                    row("sample:one", loaded, 1),
                    row("2607.21273", loaded, 1),  # a sample paper with a real id
                    row("2607.17299", later, 1),  # ... stored with the sample's batch
                    row("sample:two", loaded, None),
                    row("2411.00001", later, 2),  # a real paper
                    row("2411.00002", later, None),
                ],
            )
        await database.upgrade()
        async with database.engine.connect() as conn:
            found = dict((await conn.execute(sa.text("SELECT arxiv_id, sample FROM papers"))).all())
        assert {k: bool(v) for k, v in found.items()} == {
            "sample:one": True,
            "2607.21273": True,
            "2607.17299": True,
            "sample:two": True,
            "2411.00001": False,
            "2411.00002": False,
        }
    finally:
        await database.dispose()


async def test_momentum_offers_to_ask_about_each_topic_it_shows(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = await one_real_day(db, small_catalog)
    for line in ("/momentum Web Agents", "/momentum"):
        reply = await handle_line(line, REGISTRY, ctx)
        assert reply is not None
        pressed = [(b.text, b.action, b.arg) for row in reply.buttons for b in row]
        assert pressed == [("Ask about Web Agents", Action.ASK, "web-agents")]
