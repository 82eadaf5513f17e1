"""/ask against the fake unit of work: retrieval through the search port, the extractive
answer with its citations and links, the scope (a topic, the followed topics, everything),
and every kind of bad input answered in one reply that changes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot.domain import ChatRef, Paper, Platform, Reply, Role
from bot.topics.catalog import Catalog
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "777")
PRM = Paper(
    "2603.00011",
    "Step-Level Verifiers for Math Reasoning",
    "Large language models still make arithmetic slips in long derivations. We train a "
    "process reward model that scores every intermediate step of a solution, using labels "
    "obtained by Monte Carlo rollouts. Guiding best-of-n search with the step scores raises "
    "accuracy on MATH by 6 points.",
    announced=date(2026, 3, 2),
)
WEB = Paper(
    "2603.00012",
    "Web Agents that Remember",
    "Browsing agents forget what they saw on earlier pages. We give a web agent an episodic "
    "memory of visited pages, retrieved when it plans its next click. On WebArena the memory "
    "improves task success by 9%.",
    announced=date(2026, 3, 3),
)
FOLD = Paper(
    "2603.00013",
    "Protein Folding with Diffusion",
    "We predict protein structures with a diffusion model over backbone frames.",
    announced=date(2026, 3, 1),
)
HOSTILE = Paper(
    "2603.00014",
    "<b>Rewards</b> & R&D: $\\alpha$-shaped " + "x" * 5000,
    "עברית 🚀 zero\u200bwidth. Shaped rewards for web agents speed up their training a lot.",
    announced=date(2026, 3, 3),
)


@pytest.fixture
def fake() -> FakeDatabase:
    fake = FakeDatabase()
    fake.seed_papers(PRM, WEB, FOLD, HOSTILE)
    fake.state.tags = {
        WEB.arxiv_id: {"web-agents": ("web agent",)},
        HOSTILE.arxiv_id: {"web-agents": ("web agent",)},
        PRM.arxiv_id: {"reinforcement-learning": ("reward",)},
    }
    return fake


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


def _cited(reply: Reply) -> list[str]:
    return [line.rsplit("/", 1)[-1] for s in reply.sections for line in s.lines if "://" in line]


async def test_an_answer_quotes_the_abstract_and_cites_and_links_its_paper(ctx: Context) -> None:
    reply = await say(ctx, "/ask how do people score each intermediate step of a math solution?")
    assert not reply.is_error
    assert reply.lines == ("From 1 of the 4 papers stored:",)
    (section,) = reply.sections
    assert section.heading == PRM.title
    assert section.lines[-1] == "https://arxiv.org/abs/2603.00011"
    quoted = section.lines[:-1]
    assert 1 <= len(quoted) <= 2
    assert any("process reward model" in line for line in quoted)
    assert all(line.startswith("• ") and line.endswith("[arXiv:2603.00011]") for line in quoted)


async def test_a_topic_before_the_colon_limits_the_papers_asked(ctx: Context) -> None:
    reply = await say(ctx, "/ask Web Agents: how do agents remember earlier pages?")
    assert reply.lines == ("From 1 of the 2 papers on Web Agents:",)
    assert _cited(reply) == [WEB.arxiv_id]
    outside = await say(ctx, "/ask Web Agents: process reward model for math steps?")
    assert not outside.sections
    # since the first day the topic's papers cover: WEB and HOSTILE, both of 2026-03-03
    assert outside.lines[0].startswith("None of the 2 papers on Web Agents since 2026-03-03 talks")


async def test_without_a_topic_the_followed_topics_are_asked(ctx: Context) -> None:
    assert not (await say(ctx, "/follow Web Agents")).is_error
    reply = await say(ctx, "/ask process reward model scoring math steps")
    assert reply.lines[0] == (
        'None of the 2 papers on Web Agents since 2026-03-03 talks about "process", "reward", '
        '"model", "scoring", "math", "steps".'
    )
    found = await say(ctx, "/ask episodic memory of visited pages")
    assert _cited(found) == [WEB.arxiv_id]


async def test_an_off_subject_question_says_so_instead_of_quoting_noise(ctx: Context) -> None:
    reply = await say(ctx, "/ask how long should sourdough bread proof?")
    assert not reply.sections
    assert reply.lines == (
        'None of the 4 papers stored since 2026-03-01 talks about "long", "sourdough", '
        '"bread", "proof".',
    )
    vague = await say(ctx, "/ask which papers use a good method?")
    assert vague.lines[0].startswith("Ask about something specific")


@pytest.mark.parametrize(
    "typed",
    [
        'NEAR(web agents) "memory',
        "web* OR agents) AND NOT (",
        "title:memory ^agents -click",
        "'; DROP TABLE papers; --",
        "memory \u200b\u200f🚀 עברית",
    ],
)
async def test_search_syntax_in_a_question_is_only_words(ctx: Context, typed: str) -> None:
    reply = await say(ctx, f"/ask {typed}")
    assert reply.lines, reply
    assert not reply.is_error or "Usage" in "".join(reply.lines)


async def test_bad_input_gets_one_answer_and_changes_nothing(
    ctx: Context, fake: FakeDatabase
) -> None:
    before = repr(fake.state)
    empty = await say(ctx, "/ask")
    assert empty.is_error and empty.lines[0] == "What would you like to know? For example:"
    long = await say(ctx, "/ask " + "why " * 2500)
    assert long.is_error and "9,999 characters" in long.lines[0]
    unknown = await say(ctx, "/ask Basket Weaving: which looms are best?")
    assert unknown.is_error and 'topic called "Basket Weaving"' in unknown.lines[0]
    assert repr(fake.state) == before


async def test_hostile_paper_text_is_quoted_as_plain_text(ctx: Context) -> None:
    reply = await say(ctx, "/ask Web Agents: shaped rewards to speed up training of web agents")
    assert HOSTILE.arxiv_id in _cited(reply)
    section = next(s for s in reply.sections if s.lines[-1].endswith(HOSTILE.arxiv_id))
    assert len(section.heading) < 400  # the 5,000-character title is cut for display
    assert all(len(line) <= 500 for line in section.lines)


async def test_not_found_names_the_first_day_only_when_one_is_known(
    small_catalog: Catalog,
) -> None:
    fake = FakeDatabase()
    fake.seed_papers(Paper("2603.00021", "Undated", "Web agents click buttons."))
    ctx = Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)
    reply = await say(ctx, "/ask how long should sourdough bread proof?")
    assert reply.lines[0].startswith("The one paper stored does not talk about")
