"""Following authors: /follow author <name> [@affiliation], /unfollow author <name>.

`FOLLOW` and `UNFOLLOW` here are the registry's /follow and /unfollow: text starting with
the word "author" is a person's name (`bot.topics.authors`), anything else goes on to the
topic and query handlers of `handlers.subscriptions` unchanged. A followed author is an
AUTHOR subscription whose target is the canonical name, so "Sergey Levine" and
"Levine, Sergey" are one follow, and whose tag ("a:" + hash) ingest puts on every paper
that person writes. A chat follows at most `Context.max_queries_per_chat` authors (the
limit of its own queries). A name that cannot be a person's gets one line, and nothing
changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.domain import Command, Paper, Reply, Subscription, SubscriptionKind
from bot.ports import UnitOfWork
from bot.topics.authors import AuthorIndex, AuthorNameError, AuthorPattern, parse_author
from handlers import subscriptions
from handlers.base import Context, ensure_digest_schedule, how_papers_arrive
from handlers.lookup import find_subscription

log = logging.getLogger(__name__)

AUTHOR_WORD = "author"
AUTHOR_USAGE = '/follow author "Sergey Levine" [@affiliation]'
KIND = SubscriptionKind.AUTHOR


def author_text(args: str) -> str | None:
    """The name after a leading "author" ("author Sergey Levine" -> "Sergey Levine"),
    or None when `args` is no author command."""
    head, _, rest = args.strip().partition(" ")
    return rest.strip() if head.lower() == AUTHOR_WORD else None


def _refusal(error: AuthorNameError) -> Reply:
    return Reply.text(f"{error} Nothing was changed.", f"Usage: {AUTHOR_USAGE}", is_error=True)


def _label(text: str, pattern: AuthorPattern) -> str:
    """The name as typed, tidied: what /list and alerts call the follow."""
    name, _, place = text.partition("@")
    name = " ".join(name.strip().strip("\"'“”").split())
    return f"{name} @{' '.join(place.split())}" if pattern.affiliation else name


async def follow(cmd: Command, ctx: Context) -> Reply:
    """/follow: an author after the word "author", else a topic or a query."""
    name = author_text(cmd.args)
    if name is None:
        return await subscriptions.follow(cmd, ctx)
    try:
        pattern = parse_author(name)
    except AuthorNameError as error:
        return _refusal(error)
    limit = ctx.max_queries_per_chat
    async with ctx.uow() as uow:
        chat = await ensure_digest_schedule(
            uow, await uow.chats.get_or_create(cmd.chat, cmd.chat_kind), ctx.clock()
        )
        followed = (await uow.subscriptions.count_by_kind(chat.id))[KIND]
        label = _label(name, pattern)
        sub, created = await uow.subscriptions.add(
            chat.id, KIND, pattern.canonical, label, pattern.tag
        )
        if created and followed >= limit:
            log.info("follow refused, limit reached chat=%s kind=%s", cmd.chat, KIND.value)
            return subscriptions.over_limit(KIND, limit)  # leaving without commit: no change
        if created:
            await _tag_recent(uow, pattern)
        await uow.commit()
    if not created:
        return Reply.text(f"This chat already follows the author {sub.label}.")
    return Reply(
        lines=(
            f"Now following the author {label} (also as {pattern.canonical}).",
            f"{how_papers_arrive(chat)} /latest {label} shows their newest papers.",
        ),
        changes_chat=True,
    )


async def _tag_recent(uow: UnitOfWork, pattern: AuthorPattern) -> None:
    """Tag the newest papers by a newly followed author, so /latest has them at once;
    the matching runs in a worker thread (`handlers.subscriptions.QUERY_BACKFILL`)."""
    papers = await uow.papers.latest(None, limit=subscriptions.QUERY_BACKFILL)
    await uow.papers.add_tags(await asyncio.to_thread(_matches, pattern, papers))


def _matches(pattern: AuthorPattern, papers: Sequence[Paper]) -> list[tuple[str, str, tuple]]:
    index = AuthorIndex([pattern])
    return [(p.arxiv_id, tag, why) for p in papers for tag, why in index.tag(p).items()]


async def unfollow(cmd: Command, ctx: Context) -> Reply:
    """/unfollow: an author after the word "author", else a topic or a query."""
    name = author_text(cmd.args)
    if name is None:
        return await subscriptions.unfollow(cmd, ctx)
    try:
        target = parse_author(name).canonical
    except AuthorNameError as error:
        return _refusal(error)

    def pick(authors: Sequence[Subscription]) -> Subscription | None:
        found = next((s for s in authors if s.target == target), None)
        return found or find_subscription(name, authors, ctx.catalog)

    missing = f'You don\'t follow the author "{name}". /list shows what you follow.'
    return await unfollow_one(cmd, ctx, KIND, pick, missing, "the author ")


async def unfollow_one(
    cmd: Command,
    ctx: Context,
    kind: SubscriptionKind,
    pick: Callable[[Sequence[Subscription]], Subscription | None],
    missing: str,
    what: str = "",
) -> Reply:
    """Stop the chat's subscription of `kind` that `pick` chooses among them (an author, a
    set of papers); `missing` is the answer when there is none."""
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        found = pick([s for s in subs if s.kind is kind])
        if chat is None or found is None:
            return Reply.text(missing, is_error=True)
        await uow.subscriptions.remove(chat.id, kind, found.target)
        await uow.commit()
    return Reply(lines=(f"Stopped following {what}{found.label}.",), changes_chat=True)


FOLLOW = replace(
    subscriptions.FOLLOW,
    handler=follow,
    summary="follow a topic, your own query, or an author",
    usage=subscriptions.FOLLOW.usage + f", or {AUTHOR_USAGE}",
)
UNFOLLOW = replace(
    subscriptions.UNFOLLOW,
    handler=unfollow,
    summary="stop following a topic, query or author",
    usage="/unfollow <topic>, or /unfollow author <name>",
)
