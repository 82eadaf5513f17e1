"""/latest pages through a topic, and a digest's "+N more" leads to the papers it left out.

Against the fake unit of work (`tests/support/uow.py`), through `Registry.dispatch` as every
adapter runs commands; a "More" button is dispatched as the command its action names.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.domain import (
    Action,
    ChatRef,
    Command,
    Paper,
    Platform,
    Reply,
    Role,
    Subscription,
    SubscriptionKind,
)
from bot.topics.catalog import Catalog
from bot.topics.content import Audience, digest
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 11, 28, 9, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")


@pytest.fixture
def fake() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


async def press(ctx: Context, reply: Reply) -> Reply:
    """What pressing the reply's "More" button runs."""
    [[button]] = reply.buttons
    assert button.text == "More" and button.action is Action.LATEST
    command = Command(button.action.value, button.arg, CHAT, role=Role.OWNER)
    return await REGISTRY.dispatch(command, ctx)


async def seed(fake: FakeDatabase, count: int, tag: str = "web-agents") -> list[Paper]:
    """`count` papers with `tag`, one a day back from 27 Nov 2026 (newest first)."""
    papers = [
        Paper(f"2611.{n:05d}", f"Paper {n}", announced=date(2026, 11, 27) - timedelta(days=n))
        for n in range(count)
    ]
    fake.seed_papers(*papers)
    async with fake.uow() as uow:
        await uow.papers.add_tags([(p.arxiv_id, tag, ("why",)) for p in papers])
        await uow.commit()
    return papers


def ids(reply: Reply) -> list[str]:
    return [item.paper.arxiv_id for item in reply.papers]


async def test_latest_pages_through_a_topic(ctx: Context, fake: FakeDatabase) -> None:
    papers = await seed(fake, 12)
    first = await say(ctx, "/latest Web Agents")
    assert first.lines == ("Latest in Web Agents:",)
    assert ids(first) == [p.arxiv_id for p in papers[:5]]
    assert first.footer == "Page 1 of 3: /latest Web Agents 2 for more."
    second = await say(ctx, "/latest Web Agents 2")
    assert second.lines == ("Latest in Web Agents, page 2 of 3:",)
    assert ids(second) == [p.arxiv_id for p in papers[5:10]]
    assert await press(ctx, first) == second  # the "More" button
    last = await say(ctx, "/latest web agnets 3")  # typos are read as ever
    assert ids(last) == [p.arxiv_id for p in papers[10:]]
    assert last.footer == "Page 3 of 3." and last.buttons == ()
    beyond = await say(ctx, "/latest Web Agents 4")
    assert beyond.is_error and beyond.lines[0] == "There is no page 4: these papers fill 3."
    assert "/latest [topic] [page]" in beyond.lines[1]
    for line in ("/latest Web Agents 0", "/latest 0", "/latest 1234567"):
        refused = await say(ctx, line)
        assert refused.is_error and refused.lines[0] == "Pages count from 1, e.g. /latest 2."


async def test_one_page_needs_no_paging(ctx: Context, fake: FakeDatabase) -> None:
    await seed(fake, 3)
    reply = await say(ctx, "/latest Web Agents")
    assert len(reply.papers) == 3 and reply.footer is None and reply.buttons == ()


async def test_latest_pages_through_everything_followed(ctx: Context, fake: FakeDatabase) -> None:
    papers = await seed(fake, 7)
    await say(ctx, "/follow Web Agents")
    first = await say(ctx, "/latest")
    assert first.footer == "Page 1 of 2: /latest 2 for more."
    second = await say(ctx, "/latest 2")
    assert second.lines == ("Latest in the topics you follow, page 2 of 2:",)
    assert ids(second) == [p.arxiv_id for p in papers[5:]]
    assert await press(ctx, first) == second


async def test_a_query_ending_in_a_number_is_still_one_query(
    ctx: Context, fake: FakeDatabase
) -> None:
    await say(ctx, "/follow paper AND 3")
    [sub] = fake.state.subscriptions
    await seed(fake, 6, tag=sub.tag)
    whole = await say(ctx, "/latest paper AND 3")
    assert whole.lines == ("Latest for paper AND 3:",) and len(whole.papers) == 5
    assert whole.footer == "Page 1 of 2: /latest paper AND 3 2 for more."
    assert len((await say(ctx, "/latest paper AND 3 2")).papers) == 1
    assert len((await press(ctx, whole)).papers) == 1  # the button names the query's tag


async def test_the_digest_hint_leads_to_every_paper_it_left_out(
    ctx: Context, fake: FakeDatabase, small_catalog: Catalog
) -> None:
    papers = await seed(fake, 35)
    sub = Subscription(1, 1, SubscriptionKind.TOPIC, "web-agents", "Web Agents", "web-agents")
    tagged = [
        Paper(p.arxiv_id, p.title, announced=p.announced, tags=("web-agents",)) for p in papers
    ]
    made = digest(small_catalog, tagged, Audience((sub,), ()), "Your daily digest")
    assert made is not None
    [section] = made.sections
    shown = {item.paper.arxiv_id for item in section.papers}
    assert section.footer is not None and section.footer.startswith("+30 more: ")
    match = re.search(r"(/latest [^:]*?)(?: pages through them)?$", section.footer)
    assert match is not None, section.footer
    line, seen = match.group(1), set[str]()
    for _ in range(10):  # follow each page's "for more" to the end
        reply = await say(ctx, line)
        assert not reply.is_error, reply.lines
        seen.update(ids(reply))
        more = re.search(r": (/latest .*) for more\.$", reply.footer or "")
        if more is None:
            break
        line = more.group(1)
    left_out = {p.arxiv_id for p in papers} - shown
    assert len(left_out) == 30 and left_out <= seen


@pytest.mark.parametrize("announced", [date(2026, 11, 27), None])
async def test_a_digest_shows_first_the_papers_latest_shows_first(
    ctx: Context, fake: FakeDatabase, small_catalog: Catalog, announced: date | None
) -> None:
    """Within one day (or with no announcement date, as an API response gives), a digest
    showed the lowest arXiv ids first (2012.11345 before 2510.14827), the oldest, while
    /latest, which its "+K more" points to, starts with the newest."""
    papers = [
        Paper(f"2611.{n:05d}", f"Paper {n}", announced=announced, tags=("web-agents",))
        for n in range(1, 9)
    ]
    fake.seed_papers(*papers)
    async with fake.uow() as uow:
        await uow.papers.add_tags([(p.arxiv_id, "web-agents", ("why",)) for p in papers])
        await uow.commit()
    sub = Subscription(1, 1, SubscriptionKind.TOPIC, "web-agents", "Web Agents", "web-agents")
    made = digest(small_catalog, papers, Audience((sub,), ()), "Your daily digest")
    assert made is not None
    [section] = made.sections
    first_page = await say(ctx, "/latest Web Agents")
    assert [item.paper.arxiv_id for item in section.papers] == ids(first_page)
    assert ids(first_page)[0] == "2611.00008"
