"""/ask on a real database (SQLite and PostgreSQL): the reply that finds nothing names how
many papers were asked and the first day they cover."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bot.domain import AnnounceType, ChatRef, Paper, Platform, Reply, Role
from bot.services.ingest import store
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from storage.database import Database

CHAT = ChatRef(Platform.TELEGRAM, "4242")
PAPERS = [
    Paper(
        "2606.00101",
        "Web agents that remember",
        "A web agent keeps an episodic memory of the pages it visited.",
        announced=date(2026, 6, 3),
    ),
    Paper(
        "2606.00102",
        "Web agent benchmarks",
        "We test a web agent on shopping sites.",
        announced=date(2026, 6, 1),
    ),
    Paper(
        "2605.00103",
        "Protein folding with diffusion",
        "We fold proteins with a diffusion model.",
        announced=date(2026, 5, 29),
    ),
]


async def _say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


async def _store(db: Database, ctx: Context, papers: list[Paper]) -> None:
    async with db.uow() as uow:
        await store(uow, papers, ctx.catalog)
        await uow.commit()


async def test_not_found_names_the_papers_asked_and_their_first_day(
    db: Database, ctx: Context
) -> None:
    await _store(db, ctx, PAPERS)
    topic = await _say(ctx, "/ask Web Agents: which chess engines play blitz?")
    assert topic.lines == (
        'None of the 2 papers on Web Agents since 2026-06-01 talks about "chess", '
        '"engines", "play", "blitz".',
    )
    everything = await _say(ctx, "/ask which chess engines play blitz?")
    assert everything.lines[0].startswith("None of the 3 papers stored since 2026-05-29 talks")
    found = await _say(ctx, "/ask Web Agents: episodic memory of visited pages")
    assert found.lines == ("From 1 of the 2 papers on Web Agents:",)


async def test_papers_without_a_date_are_counted_from_the_day_they_were_stored(
    db: Database, ctx: Context
) -> None:
    late = Paper(
        "2604.00104",
        "A replaced paper never seen before",
        "A web agent for forms.",
        announced=date(2026, 6, 5),
        announce_type=AnnounceType.REPLACE,  # stored without a date (`store`)
    )
    before = datetime.now(UTC).date()
    await _store(db, ctx, [late])
    reply = await _say(ctx, "/ask which chess engines play blitz?")
    after = datetime.now(UTC).date()
    days = {f"since {day.isoformat()} does not talk" for day in (before, after)}
    assert any(day in reply.lines[0] for day in days), reply.lines
    assert reply.lines[0].startswith("The one paper stored since")
