"""A followed query can never stop ingestion or retagging for everyone (issue 14, row 1).

A query is stored in its canonical form and parsed again at every ingest. `/follow`
refuses a query whose canonical form would not parse back (too long once "ß" becomes
"ss" and spaces become " AND ", or too deeply nested once precedence is spelled out);
and should a stored query fail to compile anyway, ingest and retag skip it, log it with
its subscription id, and tag the papers with everything else.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from bot.adapters.console import CONSOLE_CHAT, handle_line, render_reply
from bot.arxiv.parse import parse_feed
from bot.domain import SubscriptionKind
from bot.services.ingest import store_papers
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.query import canonical, parse_query
from bot.topics.query_tree import MAX_QUERY_CHARS, QueryError
from bot.topics.tag_rules import build_tagger
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

FEED = Path(__file__).parents[1] / "fixtures/arxiv/rss/jmmeus_aioarxiv_2024-11-28/rss_mock_feed.xml"
# The reproduction of the issue: 300 characters typed, 1,033 once written out.
LONG_ONCE_WRITTEN = "abs:(" + " ".join(["ßßßß"] * 39 + ["ßßß"] * 25) + ")"


def deep_once_written(levels: int = 16) -> str:
    """Depth 16 as typed (accepted), 17 levels once `a OR b (...)` gains its parentheses."""
    text = "x"
    for i in range(levels):
        text = f"a{i} OR b{i} ({text})"
    return text


GOOD_QUERY = '"language model" AND agent*'


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def feed_papers() -> list:
    return list(parse_feed(FEED.read_bytes()).papers)


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def followed(db: Database) -> list[str]:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        return [s.target for s in await uow.subscriptions.for_chat(chat.id)] if chat else []


async def store_broken_query(db: Database, target: str) -> int:
    """A stored query that does not compile, as an older version could have stored it."""
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(CONSOLE_CHAT)
        sub, _ = await uow.subscriptions.add(
            chat.id, SubscriptionKind.QUERY, target, target[:300], "q:broken"
        )
        await uow.commit()
    return sub.id


def test_the_reproduction_is_what_the_issue_says() -> None:
    assert len(LONG_ONCE_WRITTEN) == 300
    assert len(str(parse_query(LONG_ONCE_WRITTEN))) == 1033
    with pytest.raises(QueryError):
        parse_query(str(parse_query(LONG_ONCE_WRITTEN)))
    with pytest.raises(QueryError, match="nested too deeply"):
        parse_query(str(parse_query(deep_once_written())))


@pytest.mark.parametrize("text", [LONG_ONCE_WRITTEN, deep_once_written()])
def test_canonical_refuses_a_form_that_would_not_parse_back(text: str) -> None:
    with pytest.raises(QueryError):
        canonical(parse_query(text))


# --- round trip over many generated queries -------------------------------------------

_WORDS = [
    "agent",
    "agents",
    "RL",
    "LLM",
    "tool-use",
    "Straße",
    "ß",
    "ﬁne",
    "ｃｏｄｅ",
    "İstanbul",
    "ΣΑΣ",
    "x²",
    "①",
    "ǅ",
    "ŉ",
    "ᾈ",
    "ẞ",
    "Ω",
    "a\u0301b",
    "½",
    "㎏",
    "ǰ",
    "ﬆ",
    "naïve",
    "数据",
    "مرحبا",
    "😀x",
    "\u200bzero",
    "AND",
    "or",
    "not",
    "ti",
    "O'Neil",
    "3d",
]
_OPERATORS = [" ", " AND ", " OR ", " NOT ", " AND NOT ", " OR NOT "]
_SCOPES = ["ti:", "abs:", "au:", "title:", "author:"]
_CATEGORIES = ["cat:cs.RO", "cat:cs.*", "cat:math.ST", "cat:hep-th", "cat:CS.lg"]


def _term(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.15:
        return '"' + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3))) + '"'
    if roll < 0.25:
        return rng.choice(_SCOPES) + rng.choice(_WORDS)
    if roll < 0.3:
        return rng.choice(_CATEGORIES)
    word = rng.choice(_WORDS)
    return word + "*" if roll < 0.35 and word.isalpha() and len(word) >= 3 else word


def _expression(rng: random.Random, depth: int = 0) -> str:
    if depth < 20 and rng.random() < 0.35:
        group = "(" + _expression(rng, depth + 1) + ")"
        return rng.choice(["", "", *_SCOPES]) + group
    parts = [_term(rng)]
    for _ in range(rng.randint(0, 4)):
        parts += [
            rng.choice(_OPERATORS),
            _term(rng) if rng.random() < 0.6 else _expression(rng, depth + 1),
        ]
    return "".join(parts)


def generated_queries(count: int, seed: int = 14) -> list[str]:
    rng = random.Random(seed)
    return [_expression(rng) for _ in range(count)]


def test_every_storable_query_round_trips() -> None:
    """parse(canonical(q)) == q for every query `canonical` accepts, and whatever it
    refuses really would not have parsed back: nothing in between."""
    parsed = stored = 0
    for text in generated_queries(6000):
        try:
            query = parse_query(text)
        except QueryError:
            continue
        parsed += 1
        written = str(query)
        try:
            again = parse_query(written)
        except QueryError:
            again = None
        try:
            form = canonical(query)
        except QueryError:
            assert again != query or len(written) > MAX_QUERY_CHARS, text
            continue
        stored += 1
        assert form == written and again == query, text
        assert canonical(again) == form  # the stored form is a fixed point
    assert parsed > 2000 and stored > 2000  # the generator exercises both sides


# --- /follow refuses, changing nothing -------------------------------------------------


@pytest.mark.parametrize("text", [LONG_ONCE_WRITTEN, deep_once_written()])
async def test_follow_refuses_a_query_it_could_not_store(
    db: Database, ctx: Context, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    await say(ctx, "/follow RL for LLM Agents")
    before = await followed(db)
    with caplog.at_level(logging.WARNING):
        answer = await say(ctx, "/follow " + text)
    assert "too big to keep once written out in full" in answer
    assert "nothing was changed" in answer
    assert "went wrong" not in answer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert await followed(db) == before


async def test_reproduction_follow_then_ingest_stores_every_paper(
    db: Database, catalog: Catalog, feed_papers: list
) -> None:
    """The issue's steps: the follow is refused, and the ingest stores all papers."""
    ctx = Context(uow=db.uow, catalog=catalog)
    assert "too big to keep" in await say(ctx, "/follow " + LONG_ONCE_WRITTEN)
    assert "Now following your query" in await say(ctx, "/follow " + GOOD_QUERY)
    result = await store_papers(db.uow, feed_papers, catalog)
    async with db.uow() as uow:
        assert await uow.papers.count() == len({p.arxiv_id for p in feed_papers}) > 1000
    assert result.new
    assert await followed(db) == [str(parse_query(GOOD_QUERY))]


# --- defence in depth: a stored query that does not compile ----------------------------


@pytest.mark.parametrize(
    "broken",
    [str(parse_query(deep_once_written())), "abs:(unclosed", "NOT only"],
    ids=["too-deep", "unbalanced", "only-not"],
)
async def test_ingest_skips_a_stored_query_that_does_not_compile(
    db: Database,
    catalog: Catalog,
    feed_papers: list,
    broken: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    ctx = Context(uow=db.uow, catalog=catalog)
    broken_id = await store_broken_query(db, broken)
    assert "Now following your query" in await say(ctx, "/follow " + GOOD_QUERY)
    with caplog.at_level(logging.WARNING, logger="bot.topics.tag_rules"):
        result = await store_papers(db.uow, feed_papers, catalog)
    assert len(result.new) > 900  # 935 new papers, the rest cross-lists
    skipped = [r.getMessage() for r in caplog.records if "does not compile" in r.getMessage()]
    assert skipped and f"subscription={broken_id}" in skipped[0]
    good_tag = next(s.tag for s in await subscriptions(db) if s.target != broken)
    async with db.uow() as uow:
        assert await uow.papers.latest([good_tag], limit=3)  # the good query still tags
        # and the catalog (the 2024-11-28 feed has no RL-for-LLM-agents paper by its rule)
        assert await uow.papers.latest(["large-language-models"], limit=3)


async def test_ingest_skips_the_reproduction_stored_on_sqlite(
    tmp_path: Path, catalog: Catalog, feed_papers: list
) -> None:
    """The 1,033-character form itself (PostgreSQL's VARCHAR(1000) would refuse it)."""
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'row1.db'}")
    await db.upgrade()
    try:
        await store_broken_query(db, str(parse_query(LONG_ONCE_WRITTEN)))
        result = await store_papers(db.uow, feed_papers, catalog)
        assert len(result.new) > 900  # 935 new papers, the rest cross-lists
    finally:
        await db.dispose()


async def subscriptions(db: Database) -> list:
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        assert chat is not None
        return await uow.subscriptions.for_chat(chat.id)


def test_build_tagger_skips_what_does_not_compile(
    catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    good = str(parse_query(GOOD_QUERY))
    with caplog.at_level(logging.WARNING, logger="bot.topics.tag_rules"):
        tagger = build_tagger(catalog, [("abs:(", 7), good, (good, 8)])
    assert len(tagger) == len(build_tagger(catalog)) + 1  # one rule for the two copies
    assert "subscription=7" in caplog.text


async def test_a_stored_query_that_does_not_compile_breaks_no_command(
    db: Database, ctx: Context, caplog: pytest.LogCaptureFixture
) -> None:
    """The chat that holds such a row can still list, read, and unfollow it."""
    broken = str(parse_query(deep_once_written()))
    await store_broken_query(db, broken)
    with caplog.at_level(logging.WARNING):
        for line in ("/list", "/latest", "/momentum", "/why 2607.17299", "/start", "/muted"):
            assert "went wrong" not in await say(ctx, line), line
        assert "Stopped following" in await say(ctx, "/unfollow " + broken[:300])
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert await followed(db) == []
