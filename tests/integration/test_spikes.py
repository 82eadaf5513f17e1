"""Spike heads-ups end to end on both databases: real figures in SQL, the rule, the outbox."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from bot.adapters.console import CONSOLE_CHAT, handle_line
from bot.domain import Paper
from bot.services.spikes import check_spikes
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

TODAY = date(2026, 11, 26)
NOW = datetime(2026, 11, 27, 2, 0, tzinfo=UTC)


def papers_for(tag: str, per_week: list[int]) -> list[Paper]:
    """`per_week[i]` papers in the week ending i weeks before TODAY (newest last)."""
    found = []
    weeks = len(per_week)
    for index, count in enumerate(per_week):
        end = TODAY - timedelta(weeks=weeks - 1 - index)
        for n in range(count):
            found.append(
                Paper(
                    arxiv_id=f"{2600 + index:04d}.{n:05d}",
                    title=f"{tag} {index} {n}",
                    announced=end - timedelta(days=n % 5),
                    tags=(tag,),
                )
            )
    return found


async def seed(db: Database, catalog: Catalog, steady: int, recent: int) -> None:
    from bot.services.ingest import store

    history = [steady] * 14 + [recent] * 4
    async with db.uow() as uow:
        await store(uow, papers_for("Web Agents", history), catalog, NOW)
        await uow.commit()


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return "\n".join(reply.lines)


async def notices(db: Database) -> list[str]:
    async with db.uow() as uow:
        from sqlalchemy import select

        from storage.models import OutboxRow

        rows = await uow.session.execute(select(OutboxRow.payload).where(OutboxRow.kind == "spike"))
        return [p["text"] for p in rows.scalars()]


async def test_a_real_rise_alerts_once_then_cools_down(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await say(ctx, "/follow Web Agents")
    await seed(db, small_catalog, steady=2, recent=12)
    assert await check_spikes(db.uow, small_catalog, NOW) == 1
    [text] = await notices(db)
    assert text.startswith("📈 Web Agents is heating up: 48 papers in the last four weeks, up")
    # Within the 14-day cooldown: nothing more.
    assert await check_spikes(db.uow, small_catalog, NOW + timedelta(days=3)) == 0
    assert len(await notices(db)) == 1


async def test_steady_topics_and_opted_out_chats_hear_nothing(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await say(ctx, "/follow Web Agents")
    await seed(db, small_catalog, steady=6, recent=6)
    assert await check_spikes(db.uow, small_catalog, NOW) == 0
    assert "off" in (await say(ctx, "/momentum alerts off")).lower()
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
    assert chat.momentum_alerts is False
    assert await check_spikes(db.uow, small_catalog, NOW) == 0


async def test_momentum_command_shows_sentence_and_sparkline(
    db: Database, small_catalog: Catalog
) -> None:
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    await seed(db, small_catalog, steady=2, recent=12)
    text = await say(ctx, "/momentum Web Agents")
    assert (
        "Web Agents (trending): 48 papers in the last four weeks, up 500% on the four weeks before."
        in text
    )
    # 17 of the 18 weeks are covered (the first starts before the first indexed day):
    # no bar for a week the index does not hold.
    assert "\n▃▃▃▃▃▃▃▃▃▃▃▃▃████ weekly, oldest first" in text
    assert text.startswith("Momentum up to 26 Nov 2026 (17 weeks):")
    reply = await handle_line("/momentum Web Agents", REGISTRY, ctx)
    assert reply is not None and reply.chart == "web-agents"
