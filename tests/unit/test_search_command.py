"""/search against the fake unit of work (its search: `tests/support/uow.FakeSearch`), and
how typed text is read as a search (`bot.topics.search_text`)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bot.domain import ChatRef, Paper, Platform, Reply, Role
from bot.topics.catalog import Catalog
from bot.topics.query_tree import And, Or, QueryError, Term
from bot.topics.search_text import parse_search
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")
PAPERS = (
    Paper(
        "2603.00001", "Memory for web agents", "Agents that remember.", announced=date(2026, 3, 1)
    ),
    Paper(
        "2603.00002", "Planning", "Web agents with a memory of maps.", announced=date(2026, 3, 3)
    ),
    Paper("2603.00003", "Reward models", "Rewards for RL agents.", announced=date(2026, 3, 2)),
    Paper("2603.00004", "Protein folding", "Nothing on that.", announced=date(2026, 3, 2)),
)


@pytest.fixture
def fake() -> FakeDatabase:
    fake = FakeDatabase()
    fake.seed_papers(*PAPERS)
    fake.state.tags = {
        "2603.00001": {"web-agents": ("web agent",)},
        "2603.00002": {"web-agents": ("web agent",), "rl-for-llm-agents": ("agent",)},
        "2603.00003": {"rl-for-llm-agents": ("reward",)},
    }
    return fake


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW, latest_limit=2)


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


def _ids(reply: Reply) -> list[str]:
    return [item.paper.arxiv_id for item in reply.papers]


async def test_search_lists_the_best_matches_title_first(ctx: Context) -> None:
    reply = await say(ctx, "/search memory")
    assert reply.lines == ('Best matches for "memory":',)
    assert _ids(reply) == ["2603.00001", "2603.00002"]
    assert reply.footer is None and not reply.is_error
    many = await say(ctx, "/search agents")
    assert _ids(many) == ["2603.00001", "2603.00002"]  # a title hit, then the newest
    assert many.footer is not None and many.footer.startswith(
        "3 papers match; these are the best 2"
    )


async def test_search_within_a_topic_or_a_followed_query(ctx: Context) -> None:
    reply = await say(ctx, "/search RL for LLM Agents: agents")
    assert reply.lines == ('Best matches for "agents" in RL for LLM Agents:',)
    assert _ids(reply) == ["2603.00002", "2603.00003"]
    typo = await say(ctx, "/search rl for llm agnets: reward")
    assert _ids(typo) == ["2603.00003"]
    assert not (await say(ctx, '/follow "reward models"')).is_error
    own = await say(ctx, '/search "reward models": rewards')
    assert own.lines == ('Best matches for "rewards" in "reward models":',)
    assert _ids(own) == ["2603.00003"]


async def test_a_colon_that_names_no_topic_is_part_of_the_search(ctx: Context) -> None:
    assert _ids(await say(ctx, "/search planning: maps")) == ["2603.00002"]
    assert _ids(await say(ctx, "/search title:memory")) == ["2603.00001"]
    # a topic name that means nothing: the whole text is searched, and when it finds
    # nothing, the answer offers the topics it may have meant
    unknown = await say(ctx, "/search Reinforcement: zeppelins")
    assert unknown.is_error
    assert unknown.lines[:2] == (
        'I don\'t know a topic called "Reinforcement".',
        "Did you mean: Reinforcement Learning; RL for LLM Agents?",
    )
    found = await say(ctx, "/search Web Agnts Deluxe Edition: agents")
    assert found.lines[0].startswith('No paper has all of "Web Agnts Deluxe Edition: agents"')


async def test_mutes_leave_papers_out_as_latest_does(ctx: Context, fake: FakeDatabase) -> None:
    assert not (await say(ctx, "/follow RL for LLM Agents")).is_error
    assert not (await say(ctx, "/mute Web Agents in RL for LLM Agents")).is_error
    within = await say(ctx, "/search RL for LLM Agents: agents")
    assert within.lines == ('Best matches for "agents" in RL for LLM Agents, muted tags left out:',)
    assert _ids(within) == ["2603.00003"]
    assert len((await say(ctx, "/search agents")).papers) == 2  # muted only within the topic
    fake.state.mutes.append((1, "web-agents", ""))  # /mute Web Agents (it needs momentum)
    everywhere = await say(ctx, "/search agents")
    assert everywhere.lines == ('Best matches for "agents", muted tags left out:',)
    assert _ids(everywhere) == ["2603.00003"]


async def test_every_match_muted_says_so(ctx: Context, fake: FakeDatabase) -> None:
    assert not (await say(ctx, "/follow Web Agents")).is_error
    fake.state.mutes.append((1, "web-agents", ""))  # /mute Web Agents (it needs momentum)
    reply = await say(ctx, "/search remember")
    assert reply.lines == (
        'Every paper matching "remember" has a tag you muted; /muted lists them.',
    )
    within = await say(ctx, "/search Web Agents: remember")
    assert within.lines == (
        'Every paper in Web Agents matching "remember" has a tag you muted; /muted lists them.',
    )


async def test_plain_words_fall_back_to_any_of_them(ctx: Context) -> None:
    reply = await say(ctx, "/search protein zeppelin")
    assert reply.lines == ('No paper has all of "protein zeppelin"; these have some of the words:',)
    assert _ids(reply) == ["2603.00004"]


@pytest.mark.parametrize(
    ("line", "start"),
    [
        ("/search", "What should I look for?"),
        ("/search    ", "What should I look for?"),
        ("/search ^ - * :", "I can't search for that: nothing to search for"),
        ("/search AND OR", "That query has a problem; nothing was searched."),
        ('/search "unclosed', "That query has a problem; nothing was searched."),
        ("/search au:turing", "That query has a problem; nothing was searched."),
        ("/search " + "word " * 300, "That is too long (1,499 characters; at most 1,000)"),
        ("/search zeppelin", 'No paper matches "zeppelin".'),
    ],
)
async def test_bad_input_gets_one_answer_and_changes_nothing(
    ctx: Context, fake: FakeDatabase, line: str, start: str
) -> None:
    before = repr(fake.state)
    reply = await say(ctx, line)
    assert reply.lines[0].startswith(start), reply.lines
    assert not reply.papers
    assert repr(fake.state) == before


async def test_an_empty_index_says_papers_are_coming(small_catalog: Catalog) -> None:
    ctx = Context(uow=FakeDatabase().uow, catalog=small_catalog)
    assert (await say(ctx, "/search agents")).lines[0] == "No papers are stored yet."


def test_plain_words_are_all_then_any_of_them() -> None:
    query = parse_search("web  agents web agent*")
    assert isinstance(query.strict, And) and isinstance(query.loose, Or)
    words = [(t.words, t.prefix) for t in query.strict.children if isinstance(t, Term)]
    assert words == [(("web",), False), (("agents",), False), (("agent",), True)]
    assert parse_search("GPT-4o").strict == Term(
        parse_search("GPT-4o").strict.scope,  # type: ignore[union-attr]
        ("gpt", "4o"),
        (),
    )
    assert parse_search("'; DROP TABLE papers; --").loose is not None


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "nothing to search for"),
        ("🚀 ^ -", "nothing to search for"),
        ("x" * 1001, "search too long"),
        ("au:turing", "'au:' does not work in a search"),
        ("cat:cs.AI AND agents", "'cat:' does not work in a search"),
        ("a AND NOT (NOT b OR c)", "NOT inside OR does not work in a search"),
        ("NEAR(", "missing ')'"),
    ],
)
def test_what_cannot_be_searched_is_a_query_error(typed: str, message: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse_search(typed)
    assert caught.value.message == message
