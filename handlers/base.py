"""What every handler gets, and how a command finds its handler.

A handler is `async (Command, Context) -> Reply`. It imports the domain and the ports
(`bot.ports`), never storage, a chat SDK or httpx.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rapidfuzz import process

from bot.domain import Chat, Command, DigestMode, Reply, Role
from bot.ports import AnswerWriter, Clock, PaperLookup, UnitOfWork
from bot.topics.catalog import Catalog
from bot.topics.chat_times import WEEKDAYS, next_digest_at
from bot.topics.query_tree import MAX_QUERY_CHARS
from handlers.rate_limit import CommandRateLimit, Verdict
from handlers.text import MAX_ARGS

log = logging.getLogger(__name__)

# The longest argument of a command that is a followed query (/follow, /unfollow,
# /momentum): the query language's limit; with room for a page number or a tag beside the
# query (/latest <query> <page>, /mute <tag> in <query>): QUERY_ARGS.
QUERY_ONLY_ARGS = MAX_QUERY_CHARS
QUERY_ARGS = MAX_QUERY_CHARS + 100

# Who the caller is, asked only when a command would change the chat (it may cost a call
# to the platform, e.g. Telegram's getChatMember).
RoleLookup = Callable[[], Awaitable[Role]]

DENIED = (
    "Only the chat's administrators can change what this chat follows or how it gets papers. "
    "Nothing was changed."
)
TOO_FAST = "You're sending commands faster than I can answer; wait a few seconds."
# An unknown command is offered a second likely one when it scores this close to the best
# (rapidfuzz's 0-100 WRatio): "/mutes" scores 89 against /mute and 80 against /muted.
CLOSE_SCORES = 10


@dataclass(frozen=True)
class Context:
    """Long-lived collaborators, built once in the composition root."""

    uow: Callable[[], UnitOfWork]
    catalog: Catalog
    latest_limit: int = 5
    clock: Clock = field(default=lambda: datetime.now(UTC))
    max_topics_per_chat: int = 50  # catalog topics one chat may follow (Settings)
    max_queries_per_chat: int = 20  # own queries one chat may follow (Settings)
    rate_limit: CommandRateLimit | None = None  # None: no command rate limit (tests, tools)
    # /ask's optional language model (None: extractive answers only), and the tokens it may
    # spend per UTC day across processes (Settings; `handlers.ask_llm`).
    answer_writer: AnswerWriter | None = None
    llm_daily_tokens: int = 0
    # arXiv's papers by id, for /follow like (None: only papers already stored can be named).
    paper_lookup: PaperLookup | None = None


Handler = Callable[[Command, Context], Awaitable[Reply]]


@dataclass(frozen=True)
class CommandSpec:
    name: str
    handler: Handler
    summary: str  # one line, shown in /help and in platform command menus
    usage: str  # e.g. "/follow <topic>"
    changes_chat: bool = False  # changes subscriptions or settings: admins or owners only
    max_args: int = MAX_ARGS
    # Whether a call with these (stripped) arguments changes the chat, for commands that
    # both read and change (`/digest` shows, `/digest daily` changes). None: `changes_chat`.
    changes: Callable[[str], bool] | None = None

    def would_change(self, args: str) -> bool:
        """Does running this command with `args` change the chat's subscriptions or settings?"""
        return self.changes(args) if self.changes is not None else self.changes_chat


def with_args(args: str) -> bool:
    """A `changes` rule: without arguments the command only shows the current setting."""
    return bool(args.strip())


class Registry:
    """The commands, registered explicitly in one place (`handlers.registry`)."""

    def __init__(self, specs: Sequence[CommandSpec]) -> None:
        self.specs = tuple(specs)
        self._by_name = {spec.name: spec for spec in specs}

    def get(self, name: str) -> CommandSpec | None:
        return self._by_name.get(name)

    def suggest(self, name: str) -> tuple[str, ...]:
        """The commands `name` was likely meant as: the closest, and a second as close
        (within `CLOSE_SCORES`): /mutes may be /mute or /muted, /stat /status or /start."""
        found = process.extract(name, list(self._by_name), limit=2, score_cutoff=60)
        return tuple(n for n, score, _ in found if score >= found[0][1] - CLOSE_SCORES)

    async def dispatch(
        self,
        command: Command,
        ctx: Context,
        *,
        lookup_role: RoleLookup | None = None,
        limited: bool = True,
    ) -> Reply:
        """Run one command; any failure becomes a polite reply and changes nothing.

        This is the one place that decides whether a caller may run a command, deny by
        default: a call that would change the chat (`CommandSpec.would_change`, after the
        arguments are parsed) needs `Role.ADMIN` or `Role.OWNER`, from the command or, when
        the command says less, from `lookup_role` (asked only then). Read-only commands are
        open to everyone. Before anything else, `ctx.rate_limit` may refuse a flood
        (`limited=False` for the bot's own internal reads, e.g. Slack's Home tab).
        """
        clog = logging.LoggerAdapter(log, _context(command))  # JSON logs: the chat, the user
        if limited and ctx.rate_limit is not None:
            verdict = await ctx.rate_limit.check(command)
            if verdict is not Verdict.ALLOW:
                clog.info("command rate limited chat=%s user=%s", command.chat, command.user_id)
                if verdict is Verdict.SILENT:
                    return Reply(denied=True)
                return Reply(lines=(TOO_FAST,), is_error=True, denied=True)
        spec = self.get(command.name)
        if spec is None:
            return self._unknown(command.name)
        if command.args and spec.max_args == 0:
            return Reply.text(
                f"/{spec.name} takes no arguments.", f"Usage: {spec.usage}", is_error=True
            )
        if len(command.args) > spec.max_args:
            return Reply.text(
                f"That is too long ({len(command.args):,} characters; "
                f"at most {spec.max_args:,}). Nothing was changed.",
                f"Usage: {spec.usage}",
                is_error=True,
            )
        if spec.would_change(command.args) and not await _may_change(command, lookup_role):
            clog.info(
                "command refused command=%s chat=%s user=%s",
                spec.name,
                command.chat,
                command.user_id,
            )
            return Reply(lines=(DENIED,), is_error=True, denied=True)
        try:
            return await spec.handler(command, ctx)
        except Exception:
            clog.exception("command failed command=%s chat=%s", command.name, command.chat)
            return Reply.text(
                "Sorry, something went wrong on my side. Nothing was changed; please try again.",
                is_error=True,
            )

    def _unknown(self, name: str) -> Reply:
        hints = self.suggest(name)
        lines = [f"I don't know the command /{name}."]
        if hints:
            lines.append(f"Did you mean {' or '.join(f'/{hint}' for hint in hints)}?")
        lines.append("Send /help to see what I can do.")
        return Reply.text(*lines, is_error=True)


def _context(command: Command) -> dict[str, object]:
    """The context fields of a command's log records (JSON logs)."""
    return {
        "platform": command.chat.platform.value,
        "external_chat_id": command.chat.external_id,
        "user_id": command.user_id,
        "command": command.name,
    }


async def _may_change(command: Command, lookup_role: RoleLookup | None) -> bool:
    """True when the caller administers or owns the chat; a failed lookup denies."""
    if command.role.may_change:
        return True
    if lookup_role is None:
        return False
    try:
        role = await lookup_role()
    except Exception:
        log.warning(
            "role lookup failed chat=%s user=%s; refused",
            command.chat,
            command.user_id,
            exc_info=True,
            extra=_context(command),
        )
        return False
    return role.may_change


async def ensure_digest_schedule(uow: UnitOfWork, chat: Chat, now: datetime) -> Chat:
    """Give a chat (new ones included) its next digest time if it has none yet."""
    if chat.next_digest_at is None and chat.digest_mode in (DigestMode.DAILY, DigestMode.WEEKLY):
        when = next_digest_at(chat, now)
        await uow.chats.update(chat.id, next_digest_at=when)
        chat = await uow.chats.get_by_id(chat.id) or chat
    return chat


def how_papers_arrive(chat: Chat) -> str:
    """One sentence for a new follow: when its papers will come, and how to change that
    (a new chat gets the default daily digest at 08:00 UTC without having chosen it)."""
    where = f"({chat.timezone})"
    if chat.digest_mode is DigestMode.INSTANT:
        text = "New papers reach you here as soon as they are announced (/digest changes that)."
    elif chat.digest_mode is DigestMode.DAILY:
        text = (
            f"New papers reach you here in a daily digest at {chat.digest_time} {where}; "
            "/digest instant sends each at once, /digest and /timezone change when."
        )
    elif chat.digest_mode is DigestMode.WEEKLY:
        day = WEEKDAYS[chat.digest_weekday].title()
        text = (
            f"New papers reach you here in a weekly digest on {day} at {chat.digest_time} "
            f"{where} (/digest changes that)."
        )
    else:
        text = "Alerts are off in this chat: /digest daily or /digest instant turns them on."
    return text + (" Sending is paused: /resume restarts it." if chat.paused else "")


#: How much of a line typed without its slash `not_a_command` shows back.
SHOWN_CHARS = 80


def not_a_command(text: str, registry: Registry) -> Reply:
    """The answer to a line that is no command. One that begins with the name of one of
    `registry`'s commands ("follow RL for LLM Agents") is shown back with its slash."""
    words = text.split()
    if words and registry.get(words[0].casefold()) is not None:
        typed = " ".join([words[0].casefold(), *words[1:]])
        shown = typed if len(typed) <= SHOWN_CHARS else typed[: SHOWN_CHARS - 1] + "…"
        return Reply.text(
            f"Commands start with a slash: /{shown}", "Send /help to see them all.", is_error=True
        )
    return Reply.text(
        "I answer commands, such as /follow RL for LLM Agents.",
        "Send /help to see them all.",
        is_error=True,
    )
