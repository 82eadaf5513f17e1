"""/search: the stored papers whose title or abstract match some words, best first.

`/search reward hacking` looks in every stored paper; `/search Diffusion Models: guidance`
only in one topic's, when the text before the first colon names a catalog topic or a
query the chat follows (as /latest reads a name: `handlers.lookup`, `bot.topics.resolve`);
otherwise the whole text is the search. What counts as words and what as the query
language is `bot.topics.search_text`'s to say. Papers are listed as /latest lists them,
leaving out the tags the chat muted (everywhere, or within that topic). Bad input (no
words, a query with a mistake, au:/cat:) gets one answer and the search does not run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain import Command, Reply, Subscription, Topic
from bot.ports import UnitOfWork
from bot.topics.card import paper_item
from bot.topics.query_tree import QueryError
from bot.topics.resolve import looks_like_query, resolve_topic
from bot.topics.search_text import MAX_SEARCH_CHARS, SearchResult, parse_search
from handlers.base import CommandSpec, Context
from handlers.lookup import find_subscription
from handlers.subscriptions import subscription_tag, unknown_topic, usage_error

# A query's scope just before the colon (`ti:agents`, `title:agents`): no topic name.
_SCOPE = re.compile(r"\b(?:ti|abs|au|cat|title|abstract|author|category)$", re.IGNORECASE)
_SHOWN_CHARS = 80  # of the search text, when a reply repeats it
# A followed query's own tag before the colon (what an "Ask about" button sends): the tag
# has a colon of its own, so the first colon is not the one that ends the name.
_QUERY_TAG = re.compile(r"(q:[0-9a-f]{16})\s*:(.*)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Within:
    """The topic or followed query a search is limited to, and the words to search."""

    tag: str
    name: str
    words: str


def scope_of(text: str, subs: Sequence[Subscription], ctx: Context) -> Within | list[Topic]:
    """The topic named before the first colon, or (it names none) the topics it might
    have meant, perhaps none: then the whole text is the search."""
    tagged = _QUERY_TAG.fullmatch(text.strip())
    own_query = next((s for s in subs if tagged and s.tag == tagged[1]), None)
    if tagged:  # a query's tag names no catalog topic: followed, or no scope at all
        words = tagged[2].strip()
        if own_query is None or not words:
            return []
        return Within(subscription_tag(own_query), own_query.label, words)
    before, colon, after = text.partition(":")
    name, words = before.strip(), after.strip()
    if not (colon and name and words) or _SCOPE.search(before):
        return []  # no colon, or it ends a query's scope (ti:, title:)
    own = find_subscription(name, subs, ctx.catalog)
    if own is None and looks_like_query(name):
        return []  # a query, with a colon inside: the whole text is the search
    resolution = resolve_topic(name, ctx.catalog)
    topic = resolution.topic if own is None else ctx.catalog.by_slug(own.tag)
    if topic is not None:
        return Within(topic.slug, topic.name, words)
    if own is not None:
        return Within(subscription_tag(own), own.label, words)
    return list(resolution.suggestions)


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def search_error(text: str, error: QueryError) -> Reply:
    """A query with a mistake shows where, as /follow does; anything else is one line."""
    if looks_like_query(text):
        return Reply.text(
            "That query has a problem; nothing was searched.", error.pretty(text), is_error=True
        )
    return Reply.text(f"I can't search for that: {error.message} ({error.hint}).", is_error=True)


async def search(cmd: Command, ctx: Context) -> Reply:
    """The papers best matching some words or a query, in everything stored or one topic."""
    text = cmd.args.strip()
    if not text:
        return usage_error(SEARCH.usage, "What should I look for? For example:")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        within = scope_of(text, subs, ctx)
        words = within.words if isinstance(within, Within) else text
        try:
            parse_search(words)
        except QueryError as error:
            return search_error(words, error)
        mutes = await uow.mutes.for_chat(chat.id) if chat else []
        scope = within.tag if isinstance(within, Within) else ""
        hidden = [tag for tag, where in mutes if not where or (scope and where == scope)]
        tags = [scope] if scope else None
        result = await uow.search.search(words, tags=tags, without=hidden, limit=ctx.latest_limit)
        if not result.hits:
            return await _nothing(uow, words, tags, hidden, within)
    followed = {subscription_tag(s) for s in subs}
    return Reply(
        lines=_heading(words, within, result, bool(hidden)),
        papers=tuple(paper_item(ctx.catalog, h.paper, followed, subs) for h in result.hits),
        footer=_footer(result),
    )


def _heading(
    words: str, within: Within | list[Topic], result: SearchResult, muted: bool
) -> tuple[str, ...]:
    where = f" in {within.name}" if isinstance(within, Within) else ""
    left_out = ", muted tags left out" if muted else ""
    if result.loosened:
        return (
            f'No paper{where} has all of "{_shown(words)}"; '
            f"these have some of the words{left_out}:",
        )
    return (f'Best matches for "{_shown(words)}"{where}{left_out}:',)


def _footer(result: SearchResult) -> str | None:
    if result.total <= len(result.hits):
        return None
    return (
        f"{result.total:,} papers match; these are the best {len(result.hits)}. "
        'More words, a "quoted phrase" or NOT narrow it.'
    )


async def _nothing(
    uow: UnitOfWork,
    words: str,
    tags: list[str] | None,
    hidden: list[str],
    within: Within | list[Topic],
) -> Reply:
    """The answer when no paper (or none but muted ones) matches."""
    if await uow.papers.count() == 0:
        return Reply.text(
            "No papers are stored yet.",
            "They arrive with the next arXiv announcement (or run: paperwatch ingest).",
        )
    where = f" in {within.name}" if isinstance(within, Within) else ""
    if hidden and (await uow.search.search(words, tags=tags, limit=0)).total:
        return Reply.text(
            f'Every paper{where} matching "{_shown(words)}" has a tag you muted; /muted lists them.'
        )
    if isinstance(within, list) and within:  # topics the text before the colon may mean
        name = words.partition(":")[0].strip()
        return unknown_topic(name, within)
    return Reply.text(
        f'No paper{where} matches "{_shown(words)}".',
        "Try fewer or other words, or a prefix such as agent* (it finds agents, agentic).",
    )


SEARCH = CommandSpec(
    "search",
    search,
    "search the stored papers' titles and abstracts",
    "/search <words or query>, e.g. /search reward hacking, "
    "or within a topic: /search RL for LLM Agents: memory",
    max_args=MAX_SEARCH_CHARS,
)
