"""The chat commands, platform-neutral: (Command, Context) -> Reply."""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain import Command, Paper, PaperItem, Reply, SubscriptionKind, Topic
from bot.topics.resolve import resolve_topic
from handlers.base import CommandSpec, Context, Registry
from handlers.status import status

EXAMPLE_TOPIC = "RL for LLM Agents"


def _usage_error(spec_usage: str, problem: str) -> Reply:
    return Reply.text(problem, f"Usage: {spec_usage}", is_error=True)


def _unknown_topic(text: str, suggestions: Sequence[Topic]) -> Reply:
    lines = [f'I don\'t know a topic called "{text}".']
    if suggestions:
        lines.append("Did you mean: " + "; ".join(t.name for t in suggestions) + "?")
    lines.append("Nothing was changed.")
    return Reply.text(*lines, is_error=True)


async def start(cmd: Command, ctx: Context) -> Reply:
    """Register the chat (or wake it up again) and say what the bot does."""
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        if not chat.active:
            await uow.chats.set_active(chat.id, True)
        followed = await uow.subscriptions.for_chat(chat.id)
        await uow.commit()
    lines = [
        "Hi! I watch arXiv for you and tell you about new papers on the topics you follow.",
        f"Try: /follow {EXAMPLE_TOPIC}",
        "Then /latest shows the newest papers. /help lists every command.",
    ]
    if followed:
        lines.insert(1, f"Welcome back: you follow {len(followed)} topic(s); /list shows them.")
    return Reply.text(*lines)


async def help_(cmd: Command, ctx: Context) -> Reply:
    """List the commands, or explain one."""
    wanted = cmd.args.lstrip("/").lower()
    if wanted:
        spec = REGISTRY.get(wanted)
        if spec is None:
            return Reply.text(
                f"There is no command /{wanted}. Send /help to see them all.", is_error=True
            )
        return Reply.text(f"{spec.usage}: {spec.summary}")
    return Reply.text("Commands:", *(f"{spec.usage}: {spec.summary}" for spec in REGISTRY.specs))


async def follow(cmd: Command, ctx: Context) -> Reply:
    """Follow a catalog topic."""
    if not cmd.args:
        return _usage_error(FOLLOW.usage, "Which topic? For example:")
    resolution = resolve_topic(cmd.args, ctx.catalog)
    topic = resolution.topic
    if topic is None:
        return _unknown_topic(cmd.args, resolution.suggestions)
    async with ctx.uow() as uow:
        chat = await uow.chats.get_or_create(cmd.chat, cmd.chat_kind)
        _, created = await uow.subscriptions.add(
            chat.id, SubscriptionKind.TOPIC, topic.slug, topic.name
        )
        await uow.commit()
    if not created:
        return Reply.text(f"You already follow {topic.name}.")
    return Reply.text(
        f"Now following {topic.name}.",
        "New papers on it will reach you here. /latest shows the newest ones now.",
    )


async def unfollow(cmd: Command, ctx: Context) -> Reply:
    """Stop following a topic."""
    if not cmd.args:
        return _usage_error(UNFOLLOW.usage, "Which topic? /list shows what you follow.")
    resolution = resolve_topic(cmd.args, ctx.catalog)
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        target = resolution.topic.slug if resolution.topic else None
        match = next(
            (s for s in subs if s.target == target or s.label.lower() == cmd.args.lower()), None
        )
        if chat is None or match is None:
            return Reply.text(
                f'You don\'t follow "{cmd.args}". /list shows what you follow.', is_error=True
            )
        await uow.subscriptions.remove(chat.id, match.kind, match.target)
        await uow.commit()
    return Reply.text(f"Stopped following {match.label}.")


async def list_(cmd: Command, ctx: Context) -> Reply:
    """Show what this chat follows."""
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
    if not subs:
        return Reply.text("You don't follow any topic yet.", f"Try: /follow {EXAMPLE_TOPIC}")
    return Reply.text(f"You follow {len(subs)} topic(s):", *(f"• {s.label}" for s in subs))


async def latest(cmd: Command, ctx: Context) -> Reply:
    """The newest papers on a topic, or on everything this chat follows."""
    async with ctx.uow() as uow:
        if cmd.args:
            resolution = resolve_topic(cmd.args, ctx.catalog)
            if resolution.topic is None:
                return _unknown_topic(cmd.args, resolution.suggestions)
            slugs: list[str] | None = [resolution.topic.slug]
            heading = f"Latest in {resolution.topic.name}:"
        else:
            chat = await uow.chats.get(cmd.chat)
            subs = await uow.subscriptions.for_chat(chat.id) if chat else []
            slugs = [s.target for s in subs if s.kind is SubscriptionKind.TOPIC] or None
            heading = "Latest in the topics you follow:" if slugs else "Latest papers:"
        papers = await uow.papers.latest(slugs, limit=ctx.latest_limit)
        total = await uow.papers.count() if not papers else None
    if not papers:
        if total == 0:
            return Reply.text(
                "No papers are stored yet.",
                "They arrive with the next arXiv announcement (or run: paperwatch ingest).",
            )
        return Reply.text("No papers on that yet. New ones will be sent to you as they appear.")
    followed = set(slugs or ())
    return Reply(lines=(heading,), papers=tuple(_item(p, ctx, followed) for p in papers))


def _item(paper: Paper, ctx: Context, followed: set[str]) -> PaperItem:
    def name(slug: str) -> str:
        topic = ctx.catalog.by_slug(slug)
        return topic.name if topic else slug

    return PaperItem(
        paper=paper,
        tags=tuple(name(t) for t in paper.tags),
        followed_tags=tuple(name(t) for t in paper.tags if t in followed),
    )


START = CommandSpec("start", start, "start or restart the bot in this chat", "/start", max_args=0)
HELP = CommandSpec("help", help_, "list the commands, or explain one", "/help [command]")
FOLLOW = CommandSpec(
    "follow", follow, "follow a topic", f"/follow <topic>, e.g. /follow {EXAMPLE_TOPIC}", True
)
UNFOLLOW = CommandSpec("unfollow", unfollow, "stop following a topic", "/unfollow <topic>", True)
LIST = CommandSpec("list", list_, "show the topics this chat follows", "/list", max_args=0)
LATEST = CommandSpec("latest", latest, "the newest papers on a topic", "/latest [topic]")

STATUS = CommandSpec(
    "status",
    status,
    "is the paper index fresh; when is arXiv's next mailing",
    "/status",
    max_args=0,
)

REGISTRY = Registry([START, HELP, FOLLOW, UNFOLLOW, LIST, LATEST, STATUS])
