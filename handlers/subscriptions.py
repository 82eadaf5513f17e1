"""Following things: /follow, /unfollow, /latest (/list, what a chat follows, is
`handlers.following`).

A chat follows at most `Context.max_topics_per_chat` catalog topics and
`Context.max_queries_per_chat` own queries; a follow beyond that is refused with the
limit and the way to make room, and changes nothing. A query is stored in its canonical
form (`bot.topics.query.canonical`), which every ingest parses again: a query without a
storable canonical form is refused at /follow, never stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain import (
    Action,
    Button,
    Command,
    Paper,
    Reply,
    Subscription,
    SubscriptionKind,
    Topic,
)
from bot.ports import UnitOfWork
from bot.topics.card import paper_item
from bot.topics.query import canonical, parse_query
from bot.topics.query_tree import Query, QueryError
from bot.topics.resolve import looks_like_query, resolve_topic
from bot.topics.tag_rules import query_key
from bot.topics.tagger import Tagger
from handlers.base import (
    QUERY_ARGS,
    QUERY_ONLY_ARGS,
    CommandSpec,
    Context,
    ensure_digest_schedule,
    how_papers_arrive,
    with_args,
)
from handlers.lookup import find_subscription

log = logging.getLogger(__name__)

EXAMPLE_TOPIC = "RL for LLM Agents"
# A newly followed query is run over this many of the newest papers, so /latest has answers
# (about a day and a half of the watched categories; the matching runs in a worker thread).
QUERY_BACKFILL = 2000


def usage_error(usage: str, problem: str) -> Reply:
    return Reply.text(problem, f"Usage: {usage}", is_error=True)


def query_error(text: str, error: QueryError) -> Reply:
    return Reply.text(
        "That query has a problem; nothing was changed.",
        error.pretty(text),
        is_error=True,
    )


def unstorable_query(error: QueryError) -> Reply:
    """A query that parses but whose canonical (stored) form would not."""
    return Reply.text(
        "That query is too big to keep once written out in full "
        "(with every AND and parenthesis spelled out); nothing was changed.",
        f"{error.message}: {error.hint}" if error.hint else error.message,
        is_error=True,
    )


def over_limit(kind: SubscriptionKind, limit: int) -> Reply:
    """The refusal of a follow beyond the chat's limit, with the way to make room."""
    names = {"topic": "catalog topics", "author": "authors", "like": "sets of papers"}
    what = names.get(kind.value, "own queries")
    return Reply.text(
        f"This chat already follows {limit} {what}, the most it may. Nothing was changed.",
        "To make room, /unfollow one of them; /list shows them.",
        is_error=True,
    )


def _limit(ctx: Context, kind: SubscriptionKind) -> int:
    return ctx.max_topics_per_chat if kind is SubscriptionKind.TOPIC else ctx.max_queries_per_chat


def unknown_topic(
    text: str, suggestions: Sequence[Topic], *, offer_query: bool = False, changing: bool = False
) -> Reply:
    """The answer to a topic name that matches nothing; `changing` commands say that
    nothing was changed, the others (/latest, /momentum, /topic) only how to find one."""
    lines = [f'I don\'t know a topic called "{text}".']
    if suggestions:
        lines.append("Did you mean: " + "; ".join(t.name for t in suggestions) + "?")
    if offer_query:
        lines.append(f'To follow your own words as a search, quote them: /follow "{text}"')
    lines.append(("Nothing was changed. " if changing else "") + "/topics lists the catalog.")
    buttons = tuple((Button(t.name, Action.FOLLOW, t.slug),) for t in suggestions)
    return Reply(lines=tuple(lines), is_error=True, buttons=buttons)


def subscription_tag(sub: Subscription) -> str:
    return sub.tag


async def follow(cmd: Command, ctx: Context) -> Reply:
    """Follow a catalog topic, or your own query."""
    if not cmd.args:
        return usage_error(FOLLOW.usage, "Which topic? For example:")
    if looks_like_query(cmd.args):
        return await _follow_query(cmd, ctx)
    resolution = resolve_topic(cmd.args, ctx.catalog)
    topic = resolution.topic
    if topic is None:
        return unknown_topic(cmd.args, resolution.suggestions, offer_query=True, changing=True)
    kind = SubscriptionKind.TOPIC
    async with ctx.uow() as uow:
        chat = await ensure_digest_schedule(
            uow, await uow.chats.get_or_create(cmd.chat, cmd.chat_kind), ctx.clock()
        )
        followed = (await uow.subscriptions.count_by_kind(chat.id))[kind]
        _, created = await uow.subscriptions.add(chat.id, kind, topic.slug, topic.name, topic.slug)
        if created and followed >= _limit(ctx, kind):
            log.info("follow refused, limit reached chat=%s kind=%s", cmd.chat, kind.value)
            return over_limit(kind, _limit(ctx, kind))  # leaving without commit: no change
        await uow.commit()
    if not created:
        return Reply.text(f"This chat already follows {topic.name}.")
    lines = [f"Now following {topic.name}."]
    if not resolution.exact:
        lines.append(f'(I read "{cmd.args}" as {topic.name}; /unfollow {topic.name} undoes it.)')
    lines.append(f"{how_papers_arrive(chat)} /latest shows the newest ones now.")
    return Reply(lines=tuple(lines), changes_chat=True)


async def _follow_query(cmd: Command, ctx: Context) -> Reply:
    try:
        query = parse_query(cmd.args)
    except QueryError as error:
        return query_error(cmd.args, error)
    try:
        stored = canonical(query)
    except QueryError as error:
        return unstorable_query(error)
    kind = SubscriptionKind.QUERY
    async with ctx.uow() as uow:
        chat = await ensure_digest_schedule(
            uow, await uow.chats.get_or_create(cmd.chat, cmd.chat_kind), ctx.clock()
        )
        followed = (await uow.subscriptions.count_by_kind(chat.id))[kind]
        _, created = await uow.subscriptions.add(chat.id, kind, stored, cmd.args, query_key(query))
        if created and followed >= _limit(ctx, kind):
            log.info("follow refused, limit reached chat=%s kind=%s", cmd.chat, kind.value)
            return over_limit(kind, _limit(ctx, kind))  # leaving without commit: no change
        if created:
            await _tag_recent(uow, query)
        await uow.commit()
    if not created:
        return Reply.text(f"This chat already follows the query {stored}.")
    return Reply(
        lines=(
            f"Now following your query: {stored}",
            f"{how_papers_arrive(chat)} /latest shows the newest ones now.",
        ),
        changes_chat=True,
    )


async def _tag_recent(uow: UnitOfWork, query: Query) -> None:
    """Run a newly followed query over the newest `QUERY_BACKFILL` papers, so it has
    history at once. Reading and writing stay on the loop; the matching, pure CPU, runs
    in a worker thread so that other chats are answered meanwhile."""
    key = query_key(query)
    papers = await uow.papers.latest(None, limit=QUERY_BACKFILL)
    await uow.papers.add_tags(await asyncio.to_thread(_matches, key, query, papers))


def _matches(key: str, query: Query, papers: Sequence[Paper]) -> list[tuple[str, str, tuple]]:
    """(arxiv id, key, why) for each paper the query matches."""
    tagger = Tagger([(key, query)])
    return [(p.arxiv_id, key, why) for p in papers for why in [tagger.tag(p).get(key)] if why]


async def unfollow(cmd: Command, ctx: Context) -> Reply:
    """Stop following a topic or query."""
    if not cmd.args:
        return usage_error(UNFOLLOW.usage, "Which topic? /list shows what you follow.")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        match = find_subscription(cmd.args, subs, ctx.catalog)
        if chat is None or match is None:
            return Reply.text(
                f'You don\'t follow "{cmd.args}". /list shows what you follow.', is_error=True
            )
        await uow.subscriptions.remove(chat.id, match.kind, match.target)
        await uow.commit()
    return Reply(lines=(f"Stopped following {match.label}.",), changes_chat=True)


def page_number(text: str) -> int | None:
    """ "3" -> 3; None for anything but a small number in ASCII digits."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 6) or int(text) < 1:
        return None
    return int(text)


def _topic_and_page(
    text: str, subs: Sequence[Subscription], ctx: Context
) -> tuple[str, int | None]:
    """ "Diffusion Models 2" -> ("Diffusion Models", 2): a last word in digits is a page
    number (None when it is no page: 0, or too long), unless the whole text names a
    followed subscription or a catalog topic as it is (a topic called "GPT 4" stays one)."""
    words = text.split()
    if not (words and words[-1].isascii() and words[-1].isdigit()):
        return text, 1
    whole = text.strip().lower()
    if any(whole in (s.tag.lower(), s.label.lower(), s.target.lower()) for s in subs):
        return text, 1
    resolution = resolve_topic(text, ctx.catalog)
    if len(words) > 1 and resolution.topic is not None and resolution.exact:
        return text, 1
    return " ".join(words[:-1]), page_number(words[-1])


@dataclass(frozen=True, slots=True)
class _Listing:
    """What /latest lists: the tags (None: every paper), its heading, and how a command
    (`name`, "" for everything followed) and a button (`key`) name it again."""

    tags: list[str] | None
    heading: str
    name: str = ""
    key: str = ""


def _listing(text: str, subs: Sequence[Subscription], ctx: Context) -> _Listing | Reply:
    """What `/latest <text>` lists, or the answer when `text` names nothing."""
    if not text:
        tags = [subscription_tag(s) for s in subs] or None
        return _Listing(tags, "Latest in the topics you follow" if tags else "Latest papers")
    resolution = resolve_topic(text, ctx.catalog)
    own = find_subscription(text, subs, ctx.catalog)
    topic = resolution.topic if own is None else ctx.catalog.by_slug(own.tag)
    if topic is not None:  # any catalog topic, followed or not
        return _Listing([topic.slug], f"Latest in {topic.name}", topic.name, topic.slug)
    if own is not None:  # an own query (or a topic gone from the catalog)
        return _Listing([subscription_tag(own)], f"Latest for {own.label}", own.label, own.tag)
    if text.strip().startswith("q:"):  # a button of a query since unfollowed
        return Reply.text(
            "This chat no longer follows that query. /list shows what it follows.",
            is_error=True,
        )
    return unknown_topic(text, resolution.suggestions)


async def latest(cmd: Command, ctx: Context) -> Reply:
    """The newest papers on a topic or all it follows, a page: /latest [topic] [page]."""
    size = ctx.latest_limit
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        text, page = _topic_and_page(cmd.args, subs, ctx)
        if page is None:
            return usage_error(LATEST.usage, "Pages count from 1, e.g. /latest 2.")
        listing = _listing(text, subs, ctx)
        if isinstance(listing, Reply):
            return listing
        hidden = _muted_in(await uow.mutes.for_chat(chat.id) if chat else [], listing)
        found = await uow.papers.count(listing.tags, without=hidden)
        pages = max(1, -(-found // size))
        if found and page > pages:  # with nothing found, every page says so
            return usage_error(LATEST.usage, f"There is no page {page}: these papers fill {pages}.")
        offset = (page - 1) * size
        papers = await uow.papers.latest(listing.tags, size, offset, without=hidden)
        total = await uow.papers.count() if not papers else None
        muted = not papers and hidden and await uow.papers.count(listing.tags)
    if not papers:
        if total == 0:
            return Reply.text(
                "No papers are stored yet.",
                "They arrive with the next arXiv announcement (or run: paperwatch ingest).",
            )
        about = f"on {listing.name}" if listing.name else "in what you follow"
        about = about if listing.tags is not None else "stored"
        if muted:
            return Reply.text(f"Every paper {about} has a tag you muted; /muted lists them.")
        return Reply.text(f"No papers {about} yet. New ones reach you as they appear.")
    followed = {subscription_tag(s) for s in subs}
    heading = listing.heading + (", muted tags left out" if hidden else "")
    heading += f", page {page} of {pages}:" if page > 1 else ":"
    return Reply(
        lines=(heading,),
        papers=tuple(paper_item(ctx.catalog, p, followed, subs) for p in papers),
        footer=_page_footer(listing, page, pages),
        buttons=((Button("More", Action.LATEST, f"{listing.key} {page + 1}".strip()),),)
        if page < pages
        else (),
    )


def _muted_in(mutes: Sequence[tuple[str, str]], listing: _Listing) -> list[str]:
    """The tags /latest leaves out, as alerts do: those muted everywhere, and those muted
    within the one topic or query it lists."""
    return [tag for tag, scope in mutes if not scope or (listing.key and scope == listing.key)]


def _page_footer(listing: _Listing, page: int, pages: int) -> str | None:
    """ "Page 1 of 7: /latest Diffusion Models 2 for more." (as /list says it)."""
    if pages == 1:
        return None
    if page == pages:
        return f"Page {page} of {pages}."
    more = " ".join(w for w in ("/latest", listing.name, str(page + 1)) if w)
    return f"Page {page} of {pages}: {more} for more."


FOLLOW = CommandSpec(
    "follow",
    follow,
    "follow a topic, or your own query",
    f"/follow <topic or query>, e.g. /follow {EXAMPLE_TOPIC}"
    ' or /follow "diffusion policy" AND cat:cs.RO',
    changes=with_args,  # without a topic it only shows the usage
    max_args=QUERY_ONLY_ARGS,
)


UNFOLLOW = CommandSpec(
    "unfollow",
    unfollow,
    "stop following a topic or query",
    "/unfollow <topic>",
    changes=with_args,
    max_args=QUERY_ONLY_ARGS,
)


LATEST = CommandSpec(
    "latest",
    latest,
    "the newest papers on a topic, a page at a time",
    "/latest [topic] [page]",
    max_args=QUERY_ARGS,
)
