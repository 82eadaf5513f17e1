"""Following papers like these: /follow like <arXiv id> [...], /unfollow like, and BibTeX files.

`FOLLOW` and `UNFOLLOW` here are the registry's /follow and /unfollow: text starting with
the word "like" is a set of arXiv ids (`bot.topics.like`); anything else goes on to the
author, topic and query handlers (`handlers.author_follows`) unchanged. A set is a LIKE
subscription whose target and tag are the set's tag ("l:" + hash of its sorted ids), named
after its first paper's title, with its profile and calibrated threshold stored once per
set (`uow.like_sets`); ingest tags every new paper like it.

Papers the index does not hold are asked from arXiv (`Context.paper_lookup`, the polite
client); a set already stored (another chat follows it) is reused without asking. A file
(Telegram document, Slack file share, `paperwatch follow-like --bib`) becomes the same
command through `bibtex_command`. A chat follows at most `Context.max_queries_per_chat`
sets. Every refusal is one line, and nothing changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from bot.domain import Command, Paper, Reply, Subscription, SubscriptionKind
from bot.ports import LikeSet, PaperLookupError, UnitOfWork
from bot.topics.bibtex import BibtexError, bibtex_ids, check_size
from bot.topics.catalog import Catalog
from bot.topics.like import (
    FIRE_SHARE,
    MAX_LIKE,
    LikeInputError,
    LikeProfile,
    like_tag,
    parse_ids,
)
from bot.topics.like_calibration import BACKGROUND_PAPERS, background_size, calibrated_profile
from bot.topics.like_index import LikeIndex
from bot.topics.tag_rules import catalog_tagger
from handlers import author_follows, subscriptions
from handlers.base import Context, ensure_digest_schedule, how_papers_arrive
from handlers.lookup import find_subscription

log = logging.getLogger(__name__)

LIKE_WORD = "like"
LIKE_USAGE = f"/follow like <arXiv id> [<arXiv id> ...] (up to {MAX_LIKE}), or send a .bib file"
KIND = SubscriptionKind.LIKE
# /follow like with 50 ids written as URLs: longer than a query may be.
LIKE_ARGS = 4000


def like_text(args: str) -> str | None:
    """The ids after a leading "like", or None when `args` is no like command."""
    head, _, rest = args.strip().partition(" ")
    return rest.strip() if head.lower() == LIKE_WORD else None


def _refusal(message: str) -> Reply:
    return Reply.text(f"{message} Nothing was changed.", f"Usage: {LIKE_USAGE}", is_error=True)


def threshold_text(threshold: float) -> str:
    """How a set's threshold is shown (the follow reply and /list)."""
    return f"match score above {threshold:.2f}, calibrated to fire on at most {FIRE_SHARE:.0%}"


def file_too_large(size: int | None) -> Reply | None:
    """The refusal of a sent file whose declared `size` is over the limit (so it is never
    fetched), or None."""
    try:
        check_size(size or 0)
    except BibtexError as error:
        return _refusal(str(error))
    return None


def bibtex_command(data: bytes, cmd: Command) -> Command | Reply:
    """A sent file as `/follow like <its ids>` for `cmd`'s chat and caller, or the one-line
    refusal of a file that is too large, binary or without an arXiv id."""
    try:
        ids = bibtex_ids(data)
    except BibtexError as error:
        return _refusal(str(error))
    if len(ids) > MAX_LIKE:
        return _refusal(f"That file names {len(ids)} arXiv papers; a set holds at most {MAX_LIKE}.")
    return replace(cmd, name="follow", args=f"{LIKE_WORD} {' '.join(ids)}")


async def follow(cmd: Command, ctx: Context) -> Reply:
    """/follow: a set after the word "like", else an author, a topic or a query."""
    text = like_text(cmd.args)
    if text is None:
        limit = subscriptions.FOLLOW.max_args  # what /follow takes when it is no set
        if len(cmd.args) > limit:
            return Reply.text(
                f"That is too long ({len(cmd.args):,} characters; at most {limit:,}). "
                "Nothing was changed.",
                f"Usage: {subscriptions.FOLLOW.usage}",
                is_error=True,
            )
        return await author_follows.follow(cmd, ctx)
    try:
        ids = parse_ids(text)
    except LikeInputError as error:
        return _refusal(str(error))
    tag = like_tag(ids)
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        stored = {i: await uow.papers.get(i) for i in ids}
        known = await uow.like_sets.get(tag)
        recent = [] if known else await uow.papers.latest(None, limit=BACKGROUND_PAPERS)
    same = next((s for s in subs if s.tag == tag), None)
    if same is not None:
        return Reply.text(f"This chat already follows {same.label}.")
    if sum(s.kind is KIND for s in subs) >= ctx.max_queries_per_chat:
        return subscriptions.over_limit(KIND, ctx.max_queries_per_chat)
    if known is None:
        papers = await _papers(ids, stored, ctx)
        if isinstance(papers, Reply):
            return papers
        profile = await asyncio.to_thread(calibrated_profile, papers, recent, ctx.catalog)
        calibrated = (ctx.clock(), background_size(recent))
        known = LikeSet(tag, tuple(ids), profile.to_json(), profile.threshold, *calibrated)
    return await _subscribe(cmd, ctx, known)


async def _papers(
    ids: Sequence[str], stored: dict[str, Paper | None], ctx: Context
) -> list[Paper] | Reply:
    """The set's papers in order, stored or asked from arXiv; or the refusal."""
    missing = [i for i in ids if stored[i] is None]
    fetched: dict[str, Paper] = {}
    if missing and ctx.paper_lookup is None:
        return _refusal(f"I don't have {_named(missing)} and cannot ask arXiv from here.")
    if missing and ctx.paper_lookup is not None:
        try:
            fetched = {p.arxiv_id: p for p in await ctx.paper_lookup.papers(missing)}
        except PaperLookupError:
            return Reply.text(
                "arXiv could not be reached to look the papers up; try again in a few minutes. "
                "Nothing was changed.",
                is_error=True,
            )
    unknown = [i for i in missing if i not in fetched]
    if unknown:
        return _refusal(f"arXiv has no paper {_named(unknown)}.")
    return [stored[i] or fetched[i] for i in ids]  # type: ignore[misc]


def _named(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:3])
    return shown + (f" (and {len(ids) - 3} more)" if len(ids) > 3 else "")


async def _subscribe(cmd: Command, ctx: Context, like_set: LikeSet) -> Reply:
    profile = LikeProfile.from_json(like_set.profile, like_set.threshold)
    first = profile.members[0].title if profile.members else like_set.arxiv_ids[0]
    label = f"Papers like “{first}”"
    async with ctx.uow() as uow:
        chat = await ensure_digest_schedule(
            uow, await uow.chats.get_or_create(cmd.chat, cmd.chat_kind), ctx.clock()
        )
        followed = (await uow.subscriptions.count_by_kind(chat.id))[KIND]
        if followed >= ctx.max_queries_per_chat:  # raced with another follow: no change
            return subscriptions.over_limit(KIND, ctx.max_queries_per_chat)
        await uow.like_sets.save(like_set)
        sub, created = await uow.subscriptions.add(chat.id, KIND, like_set.tag, label, like_set.tag)
        if created:
            await _tag_recent(uow, like_set.tag, profile, ctx.catalog)
        await uow.commit()
    if not created:
        return Reply.text(f"This chat already follows {sub.label}.")
    count = len(like_set.arxiv_ids)
    log.info("like set followed chat=%s tag=%s papers=%d", cmd.chat, like_set.tag, count)
    return Reply(
        lines=(
            f"Now following {label} ({count} paper{'s' * (count != 1)}; "
            f"{threshold_text(like_set.threshold)} of new papers).",
            f"{how_papers_arrive(chat)} /why <arXiv id> names the closest paper of the set.",
        ),
        changes_chat=True,
    )


async def _tag_recent(uow: UnitOfWork, tag: str, profile: LikeProfile, catalog: Catalog) -> None:
    """Tag the newest stored papers like the set, so /latest has them at once (in a thread)."""
    papers = await uow.papers.latest(None, limit=subscriptions.QUERY_BACKFILL)
    found = await asyncio.to_thread(_matches, tag, profile, papers, catalog)
    await uow.papers.add_tags(found)


def _matches(
    tag: str, profile: LikeProfile, papers: Sequence[Paper], catalog: Catalog
) -> list[tuple]:
    """The papers like the set, each with its catalog tags as ingest gives them (the set's
    topic profile is matched against those); no topic profile: the text alone."""
    index = LikeIndex({tag: profile})
    tagger = catalog_tagger(catalog) if profile.topics else None
    return [
        (p.arxiv_id, t, why)
        for p in papers
        for t, why in index.tag(p, tags=tagger.tag(p) if tagger else ()).items()
    ]


async def unfollow(cmd: Command, ctx: Context) -> Reply:
    """/unfollow: a set after the word "like" (its ids or its name), else as before."""
    text = like_text(cmd.args)
    if text is None:
        return await author_follows.unfollow(cmd, ctx)
    missing = f'You don\'t follow papers like "{text}". /list shows what you follow.'
    return await author_follows.unfollow_one(
        cmd, ctx, KIND, lambda likes: _find(text, likes, ctx), missing
    )


def _find(text: str, likes: Sequence[Subscription], ctx: Context) -> Subscription | None:
    try:
        tag = like_tag(parse_ids(text))
    except LikeInputError:
        tag = None
    by_ids = next((s for s in likes if s.tag == tag), None)
    by_title = next((s for s in likes if text.strip("“”\"' ").lower() in s.label.lower()), None)
    return by_ids or find_subscription(text, likes, ctx.catalog) or (by_title if text else None)


FOLLOW = replace(
    author_follows.FOLLOW,
    handler=follow,
    summary="follow a topic, your own query, an author, or papers like some you name",
    usage=author_follows.FOLLOW.usage + f", or {LIKE_USAGE}",
    max_args=LIKE_ARGS,
)
UNFOLLOW = replace(
    author_follows.UNFOLLOW,
    handler=unfollow,
    summary="stop following a topic, query, author or set of papers",
    usage=author_follows.UNFOLLOW.usage + ", or /unfollow like <name or ids>",
)
