"""The command registry: every chat command, platform-neutral: (Command, Context) -> Reply."""

from __future__ import annotations

from bot.domain import Command, Reply
from handlers.ask import ASK
from handlers.base import CommandSpec, Context, Registry, ensure_digest_schedule
from handlers.feedback import FEEDBACK, FILTER, LESS, MORE
from handlers.following import LIST, followed_count
from handlers.like_follows import FOLLOW, UNFOLLOW
from handlers.overview import SETTINGS
from handlers.search import SEARCH
from handlers.settings import DIGEST, MUTE, MUTED, PAUSE, QUIET, RESUME, TIMEZONE, UNMUTE
from handlers.status import status
from handlers.subscriptions import EXAMPLE_TOPIC, LATEST
from handlers.topics import TOPIC, TOPICS, WHY
from handlers.trends import MOMENTUM, TRENDING


async def start(cmd: Command, ctx: Context) -> Reply:
    """Register the chat (or wake it up again) and say what the bot does."""
    async with ctx.uow() as uow:
        chat = await ensure_digest_schedule(
            uow, await uow.chats.get_or_create(cmd.chat, cmd.chat_kind), ctx.clock()
        )
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
        lines.insert(1, f"Welcome back: you follow {followed_count(followed)}; /list shows them.")
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


START = CommandSpec("start", start, "start or restart the bot in this chat", "/start", max_args=0)
HELP = CommandSpec("help", help_, "list the commands, or explain one", "/help [command]")

STATUS = CommandSpec(
    "status",
    status,
    "is the paper index fresh; when is arXiv's next mailing",
    "/status",
    max_args=0,
)

REGISTRY = Registry(
    [
        START,
        HELP,
        FOLLOW,
        UNFOLLOW,
        LIST,
        LATEST,
        SEARCH,
        ASK,
        TOPICS,
        TOPIC,
        WHY,
        MORE,
        LESS,
        FEEDBACK,
        FILTER,
        MOMENTUM,
        TRENDING,
        SETTINGS,
        MUTE,
        UNMUTE,
        MUTED,
        DIGEST,
        TIMEZONE,
        QUIET,
        PAUSE,
        RESUME,
        STATUS,
    ]
)
