"""Following things: /follow, /unfollow, /list, /latest.

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
from bot.topics.query import Query, QueryError, canonical, parse_query
from bot.topics.resolve import looks_like_query, resolve_topic
from bot.topics.tag_rules import query_key
from bot.topics.tagger import Tagger
from handlers.base import (
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
# /list shows this many subscriptions per page, each line cut to LIST_LINE characters,
# so that one page always fits one message on every platform.
LIST_PAGE = 15
LIST_LINE = 160


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
    what = "catalog topics" if kind is SubscriptionKind.TOPIC else "own queries"
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
        return Reply.text(f"You already follow {topic.name}.")
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
        return Reply.text(f"You already follow the query {stored}.")
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


def _page_number(text: str) -> int | None:
    """ "3" -> 3; None for anything but a small number in ASCII digits."""
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 6) or int(text) < 1:
        return None
    return int(text)


def _shorten(text: str, width: int = LIST_LINE) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _list_line(sub: Subscription) -> str:
    if sub.kind is SubscriptionKind.TOPIC:
        return "• " + _shorten(sub.label)
    return "• your query: " + _shorten(sub.target)


def following_lines(subs: Sequence[Subscription], page: int = 1) -> tuple[str, ...]:
    """What a chat follows, one page (`page` within the list): what /list shows."""
    if not subs:
        return ("You don't follow any topic yet.", f"Try: /follow {EXAMPLE_TOPIC}")
    pages = -(-len(subs) // LIST_PAGE)
    shown = subs[(page - 1) * LIST_PAGE : page * LIST_PAGE]
    more = f": /list {page + 1} for more" if page < pages else "."
    footer = (f"Page {page} of {pages}{more}",) if pages > 1 else ()
    return (f"You follow {len(subs)} topic(s):", *map(_list_line, shown), *footer)


async def list_(cmd: Command, ctx: Context) -> Reply:
    """Show what this chat follows, `LIST_PAGE` subscriptions a page: /list [page]."""
    page = _page_number(cmd.args) if cmd.args else 1
    if page is None:
        return usage_error(LIST.usage, "Which page? Give its number, e.g. /list 2.")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    pages = -(-len(subs) // LIST_PAGE)
    if subs and page > pages:  # with nothing followed, every page says so
        return usage_error(LIST.usage, f"There is no page {page}: the list has {pages}.")
    return Reply(
        lines=following_lines(subs, page),
        buttons=tuple(
            (Button(_shorten(f"Unfollow {s.label}", 60), Action.UNFOLLOW, s.tag),)
            for s in subs[(page - 1) * LIST_PAGE : page * LIST_PAGE]
        ),
    )


async def latest(cmd: Command, ctx: Context) -> Reply:
    """The newest papers on a topic, or on everything this chat follows."""
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        tags: list[str] | None
        if cmd.args:
            resolution = resolve_topic(cmd.args, ctx.catalog)
            own = find_subscription(cmd.args, subs, ctx.catalog)
            topic = resolution.topic if own is None else ctx.catalog.by_slug(own.tag)
            if topic is not None:  # any catalog topic, followed or not
                tags = [topic.slug]
                heading = f"Latest in {topic.name}:"
            elif own is not None:  # an own query (or a topic gone from the catalog)
                tags = [subscription_tag(own)]
                heading = f"Latest for {own.label}:"
            elif cmd.args.strip().startswith("q:"):  # a button of a query since unfollowed
                return Reply.text(
                    "This chat no longer follows that query. /list shows what it follows.",
                    is_error=True,
                )
            else:
                return unknown_topic(cmd.args, resolution.suggestions)
        else:
            tags = [subscription_tag(s) for s in subs] or None
            heading = "Latest in the topics you follow:" if tags else "Latest papers:"
        papers = await uow.papers.latest(tags, limit=ctx.latest_limit)
        total = await uow.papers.count() if not papers else None
    if not papers:
        if total == 0:
            return Reply.text(
                "No papers are stored yet.",
                "They arrive with the next arXiv announcement (or run: paperwatch ingest).",
            )
        return Reply.text("No papers on that yet. New ones will be sent to you as they appear.")
    followed = {subscription_tag(s) for s in subs}
    return Reply(
        lines=(heading,), papers=tuple(paper_item(ctx.catalog, p, followed, subs) for p in papers)
    )


FOLLOW = CommandSpec(
    "follow",
    follow,
    "follow a topic, or your own query",
    f"/follow <topic or query>, e.g. /follow {EXAMPLE_TOPIC}"
    ' or /follow "diffusion policy" AND cat:cs.RO',
    changes=with_args,  # without a topic it only shows the usage
)
UNFOLLOW = CommandSpec(
    "unfollow",
    unfollow,
    "stop following a topic or query",
    "/unfollow <topic>",
    changes=with_args,
)
LIST = CommandSpec("list", list_, "show the topics this chat follows", "/list [page]")
LATEST = CommandSpec("latest", latest, "the newest papers on a topic", "/latest [topic]")
