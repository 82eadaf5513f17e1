"""Exploring the catalog: /topics, /topic, /why."""

from __future__ import annotations

from bot.domain import Action, Button, Command, Reply, Section, SubscriptionKind, paper_key
from bot.topics.card import paper_item, tag_name
from bot.topics.content import ask_button
from bot.topics.like import match_reason
from bot.topics.resolve import resolve_topic, search
from bot.topics.tag_rules import stage_refusals
from handlers.base import CommandSpec, Context
from handlers.feedback import why_section
from handlers.subscriptions import subscription_tag, unknown_topic

TOPICS_SHOWN = 12


async def topics(cmd: Command, ctx: Context) -> Reply:
    """Search the catalog (or list it)."""
    found = search(cmd.args, ctx.catalog, limit=len(ctx.catalog.topics)) if cmd.args else None
    shown = found if found is not None else ctx.catalog.topics
    if not shown:
        return Reply.text(f'No topic matches "{cmd.args}".', "/topics without words lists them.")
    heading = (
        f'Topics matching "{cmd.args}":' if cmd.args else f"The catalog has {len(shown)} topics:"
    )
    lines = [heading]
    lines += [
        f"• {t.name}: {t.description}" if t.description else f"• {t.name}"
        for t in shown[:TOPICS_SHOWN]
    ]
    if len(shown) > TOPICS_SHOWN:
        example = "" if cmd.args else ", e.g. /topics agents"
        lines.append(f"… and {len(shown) - TOPICS_SHOWN} more: add words to narrow it{example}")
    lines.append("/topic <name> shows one; /follow <name> follows it.")
    return Reply(lines=tuple(lines))


async def topic(cmd: Command, ctx: Context) -> Reply:
    """Describe one topic: rule, parent, children and recent papers."""
    if not cmd.args:
        return Reply.text("Which topic?", f"Usage: {TOPIC.usage}", is_error=True)
    resolution = resolve_topic(cmd.args, ctx.catalog)
    found = resolution.topic
    if found is None:
        return unknown_topic(cmd.args, resolution.suggestions)
    lines = [found.name]
    if found.description:
        lines.append(found.description)
    if found.aliases:
        lines.append("Also known as: " + ", ".join(found.aliases))
    if found.parent and (parent := ctx.catalog.by_slug(found.parent)):
        lines.append(f"Part of: {parent.name}")
    children = ctx.catalog.children(found.slug)
    if children:
        lines.append("Narrower: " + ", ".join(c.name for c in children))
    if found.rule:
        lines.append(f"Matches papers where: {found.rule}")
    async with ctx.uow() as uow:
        papers = await uow.papers.latest([found.slug], limit=3)
    if papers:
        lines.append("Recent papers:")
    return Reply(
        lines=tuple(lines),
        papers=tuple(paper_item(ctx.catalog, p, {found.slug}) for p in papers),
        buttons=(
            (
                Button(f"Follow {found.name}", Action.FOLLOW, found.slug),
                Button("Latest", Action.LATEST, found.slug),
            ),
            (ask_button(found.slug, found.name),),
        ),
    )


async def why(cmd: Command, ctx: Context) -> Reply:
    """Why a paper carries its topics: its card (what the paper is), then the words that
    matched. Takes any id a card shows, a bundled sample paper's key included."""
    try:
        arxiv_id = paper_key(cmd.args)
    except ValueError:
        return Reply.text(
            "Give me an arXiv id, like /why 2607.17299.", f"Usage: {WHY.usage}", is_error=True
        )
    async with ctx.uow() as uow:
        paper = await uow.papers.get(arxiv_id)
        tags = await uow.papers.tags_with_why(arxiv_id) if paper else []
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        model = await uow.feedback.model(chat.id) if chat else None
        liked = {s.tag for s in subs if s.kind == SubscriptionKind.LIKE}
        sets = [found for t, _ in tags if t in liked and (found := await uow.like_sets.get(t))]
    if paper is None:
        return Reply.text(f"I have no paper {arxiv_id} in the index.", is_error=True)
    own = {subscription_tag(s) for s in subs}
    visible = [(t, w) for t, w in tags if ctx.catalog.by_slug(t) or t in own]
    topics = [t for t, _ in tags if ctx.catalog.by_slug(t)]
    like_reasons = {s.tag: match_reason(s.profile, s.threshold, paper, topics) for s in sets}
    reasons = []
    for tag, words in visible:
        reason = like_reasons.get(tag) or (
            ", ".join(words) if words and words != ("curated",) else "tagged by the curated index"
        )
        marker = " ★" if tag in own else ""
        reasons.append(f"• {tag_name(ctx.catalog, tag, subs)}{marker}: {reason}")
    tagged = {tag for tag, _ in tags}
    for decision in stage_refusals(ctx.catalog, paper):
        if decision.slug not in tagged:  # stored before the stage said no: the tag stands
            name = tag_name(ctx.catalog, decision.slug, subs)
            reasons.append(f"• not {name}: its rule matches, but {decision.words()}")
    lines = tuple(reasons) or ("No topic in the catalog matches this paper.",)
    sections = (Section("Why it has its topics:", lines=lines),)
    learned = why_section(model, paper, ctx)
    return Reply(
        papers=(paper_item(ctx.catalog, paper, own, subs),),
        sections=sections + ((learned,) if learned else ()),
    )


TOPICS = CommandSpec("topics", topics, "search the topic catalog", "/topics [words]")
TOPIC = CommandSpec("topic", topic, "what a topic covers, and its recent papers", "/topic <name>")
WHY = CommandSpec("why", why, "why a paper matched its topics (and your 👍/👎)", "/why <arXiv id>")
