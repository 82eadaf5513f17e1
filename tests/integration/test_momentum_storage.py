"""Momentum figures from SQL on both databases, the alert state, and the handlers."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.domain import ChatKind, ChatRef, Command, Paper, Platform, Role, SubscriptionKind
from bot.topics.catalog import Catalog
from bot.topics.spike_rule import AlertState
from handlers.base import Context, Registry
from handlers.trends import MOMENTUM, TRENDING, momentum, momentum_chart, trending
from storage.database import Database
from storage.momentum_counts import MomentumRepository

AS_OF = date(2026, 11, 27)
TODAY = datetime(2026, 11, 28, 12, tzinfo=UTC)
CHAT = ChatRef(Platform.CONSOLE, "momentum-test")
_ids = itertools.count(1)


def day(days_ago: int) -> date:
    return AS_OF - timedelta(days=days_ago)


async def add_papers(db: Database, dates: Iterable[date | None], tags: Iterable[str]) -> None:
    """One paper per date, each carrying every tag in `tags`."""
    tags = tuple(tags)
    papers = [
        Paper(arxiv_id=f"2611.{next(_ids):05d}", title="A paper", announced=when) for when in dates
    ]
    async with db.uow() as uow:
        await uow.papers.upsert(papers)
        await uow.papers.add_tags([(p.arxiv_id, tag, ("why",)) for p in papers for tag in tags])
        await uow.commit()


async def figures(db: Database, tags: list[str] | None, weeks: int = 26) -> dict:
    async with db.uow() as uow:
        return await MomentumRepository(uow.session).for_tags(tags, AS_OF, weeks)


async def sample(db: Database) -> None:
    await add_papers(db, [day(0), day(6), day(7), day(55), day(181)], ["web-agents"])
    await add_papers(db, [day(182), day(-3), None], ["web-agents"])  # never counted
    await add_papers(db, [day(28)], ["reinforcement-learning", "web-agents"])
    await add_papers(db, [day(1), day(27), None], [])  # untagged: only in the total


async def watched(db: Database) -> None:
    """An untagged paper every seven days back to before the 26 weeks, so that the index
    covers them (`bot.topics.momentum`): days 2, 9, ..., 184 (4 in the last 28 days)."""
    await add_papers(db, [day(d) for d in range(2, 7 * 27, 7)], [])


async def test_weekly_counts_and_windows(db: Database) -> None:
    await sample(db)
    found = await figures(db, ["web-agents", "reinforcement-learning"])
    web = found["web-agents"]
    assert len(web.weekly) == 26 and web.as_of == AS_OF
    assert web.weekly[-1] == 2  # days 0 and 6
    assert web.weekly[-2] == 1  # day 7
    assert web.weekly[-5] == 1  # day 28: the first day of the prior window
    assert web.weekly[-8] == 1  # day 55
    assert web.weekly[0] == 1  # day 181, the oldest day counted
    assert sum(web.weekly) == 6
    assert (web.last_28, web.prior_28) == (3, 2)
    assert web.all_last_28 == 5  # days 0, 6, 7, 1, 27
    rl = found["reinforcement-learning"]
    assert (rl.last_28, rl.prior_28, sum(rl.weekly)) == (0, 1, 1)


async def test_every_tag_at_once_and_empty_topics(db: Database) -> None:
    await sample(db)
    everything = await figures(db, None)
    assert set(everything) == {"web-agents", "reinforcement-learning"}
    assert everything["web-agents"] == (await figures(db, ["web-agents"]))["web-agents"]
    empty = (await figures(db, ["agentic-rag"]))["agentic-rag"]
    assert empty.weekly == (0,) * 26 and (empty.last_28, empty.prior_28) == (0, 0)
    assert empty.all_last_28 == 5
    assert await figures(db, []) == {}
    assert len((await figures(db, ["web-agents"], weeks=52))["web-agents"].weekly) == 52


async def test_an_empty_index(db: Database) -> None:
    async with db.uow() as uow:
        repo = MomentumRepository(uow.session)
        assert await repo.for_tags(None, AS_OF) == {}
        assert await repo.latest_announced() is None
        m = await repo.for_tag("web-agents", AS_OF)
    assert m.last_28 == m.prior_28 == m.all_last_28 == 0


async def test_too_few_weeks_are_refused(db: Database) -> None:
    with pytest.raises(ValueError, match="at least 8"):
        await figures(db, ["web-agents"], weeks=7)


async def test_latest_announced_ignores_the_future(db: Database) -> None:
    await sample(db)
    async with db.uow() as uow:
        repo = MomentumRepository(uow.session)
        assert await repo.latest_announced() == day(-3)
        assert await repo.latest_announced(TODAY.date()) == AS_OF


async def test_alert_state_round_trip(db: Database) -> None:
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(CHAT)
        repo = MomentumRepository(uow.session)
        assert await repo.alert_state(chat.id, "web-agents") == AlertState()
        await repo.save_alert_state(chat.id, "web-agents", AlertState(False, TODAY))
        await repo.save_alert_state(chat.id, "agentic-rag", AlertState(True, None))
        await uow.commit()
    async with db.uow() as uow:
        repo = MomentumRepository(uow.session)
        assert await repo.alert_state(chat.id, "web-agents") == AlertState(False, TODAY)
        await repo.save_alert_state(chat.id, "web-agents", AlertState(True, TODAY))
        await uow.commit()
    async with db.uow() as uow:
        assert await MomentumRepository(uow.session).alert_state(
            chat.id, "web-agents"
        ) == AlertState(True, TODAY)


# --- the handlers --------------------------------------------------------------------


@pytest.fixture
def mctx(db: Database, small_catalog: Catalog) -> Context:
    return Context(uow=db.uow, catalog=small_catalog, clock=lambda: TODAY)


def cmd(name: str, args: str = "", *, role: Role = Role.OWNER) -> Command:
    return Command(name=name, args=args, chat=CHAT, chat_kind=ChatKind.PRIVATE, role=role)


async def spike(db: Database) -> None:
    """Agentic RAG: one paper a week for months, then four a week for a month."""
    await add_papers(db, [day(7 * w + 2) for w in range(4, 17)], ["agentic-rag"])
    await add_papers(db, [day(7 * w + d) for w in range(4) for d in (0, 1, 2, 3)], ["agentic-rag"])


async def chat_state(db: Database) -> tuple[bool, bool | None]:
    async with db.uow() as uow:
        chat = await uow.chats.get(CHAT)
    return chat is not None, chat.momentum_alerts if chat else None


async def test_momentum_of_one_topic(db: Database, mctx: Context) -> None:
    await sample(db)
    await watched(db)
    reply = await momentum(cmd("momentum", "Web Agents"), mctx)
    assert not reply.is_error
    assert reply.lines[0] == "Momentum up to 27 Nov 2026 (26 weeks):"
    assert reply.lines[1] == (
        "Web Agents: 3 papers in the last four weeks, up 50% on the four weeks before. "
        "33.3% of all new papers."
    )
    assert reply.lines[2].endswith(" weekly, oldest first") and len(reply.lines[2].split()[0]) == 26
    assert await chat_state(db) == (False, None)  # looking changes nothing


async def test_momentum_of_followed_topics(db: Database, mctx: Context) -> None:
    reply = await momentum(cmd("momentum"), mctx)
    assert "don't follow any topic" in reply.lines[0]
    await sample(db)
    await watched(db)
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(CHAT)
        for slug, name in (("web-agents", "Web Agents"), ("agentic-rag", "Agentic RAG")):
            await uow.subscriptions.add(chat.id, SubscriptionKind.TOPIC, slug, name, slug)
        await uow.commit()
    reply = await momentum(cmd("momentum"), mctx)
    assert reply.lines[1].startswith("Web Agents: 3 papers")
    assert reply.lines[3] == "Agentic RAG: No papers in the last eight weeks."
    assert reply.lines[4].startswith("▁" * 26)


async def test_bad_input_is_answered_and_changes_nothing(db: Database, mctx: Context) -> None:
    reply = await momentum(cmd("momentum", "quantum gravity of cats"), mctx)
    assert reply.is_error and "I don't know a topic" in reply.lines[0]
    reply = await momentum(cmd("momentum", "Web Agents please now"), mctx)
    assert reply.is_error
    for args in ("alerts maybe", "alerts on now"):
        reply = await momentum(cmd("momentum", args), mctx)
        assert reply.is_error and "Nothing was changed" in reply.lines[0]
    registry = Registry([MOMENTUM, TRENDING])
    reply = await registry.dispatch(cmd("momentum", "alerts off", role=Role.MEMBER), mctx)
    assert reply.is_error and "administrators" in reply.lines[0]
    reply = await registry.dispatch(cmd("trending", "now"), mctx)
    assert reply.is_error and "takes no arguments" in reply.lines[0]
    assert await chat_state(db) == (False, None)


async def test_momentum_alerts_switch(db: Database, mctx: Context) -> None:
    assert "are on" in (await momentum(cmd("momentum", "alerts"), mctx)).lines[0]
    reply = await momentum(cmd("momentum", "alerts OFF"), mctx)
    assert reply.changes_chat and "are off" in reply.lines[0]
    assert await chat_state(db) == (True, False)
    assert "are off" in (await momentum(cmd("momentum", "alerts"), mctx)).lines[0]
    await momentum(cmd("momentum", "alerts on"), mctx)
    assert await chat_state(db) == (True, True)


async def test_trending(db: Database, mctx: Context) -> None:
    await sample(db)
    await watched(db)
    reply = await trending(cmd("trending"), mctx)
    assert "No topic is rising unusually fast" in reply.lines[0]
    await spike(db)
    reply = await trending(cmd("trending"), mctx)
    assert reply.lines[0] == "Rising fastest, up to 27 Nov 2026:"
    assert reply.lines[1].startswith(
        "• Agentic RAG: 16 papers in the last four weeks, up 300% on the four weeks before."
    )
    assert len(reply.lines) == 2
    assert reply.buttons[0][0].arg == "agentic-rag"
    one = await momentum(cmd("momentum", "agentic rag"), mctx)
    assert one.lines[1].startswith("Agentic RAG (trending): 16 papers")


async def test_momentum_chart(db: Database, mctx: Context) -> None:
    await spike(db)
    data = await momentum_chart(mctx, "agentic-rag")
    assert data is not None and data.startswith(b"\x89PNG") and len(data) < 100_000
    assert await momentum_chart(mctx, "Agentic RAG") is not None
    assert await momentum_chart(mctx, "web-agents") is None  # no papers at all
    assert await momentum_chart(mctx, "quantum gravity of cats") is None
