"""Telegram, through python-telegram-bot: translate at the edge, nothing else.

Updates become neutral `Command`s for the shared handlers; `Reply`s come back as
escaped HTML (see `render`) with signed inline buttons. The same rate limiter
(`limits`) spaces replies and outbox deliveries (`messenger`) under Telegram's flood
limits and retries after its `retry_after` when it answers 429.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace

from telegram import BotCommand, CallbackQuery, Update, User
from telegram import Chat as TgChat
from telegram.constants import ChatMemberStatus
from telegram.error import BadRequest, InvalidToken, NetworkError, TimedOut
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot import buttons
from bot.adapters.telegram.ask_prompt import EXPIRED, AskPrompts
from bot.adapters.telegram.commands import chat_kind, to_command
from bot.adapters.telegram.documents import document_command
from bot.adapters.telegram.limits import MAX_IN_FLIGHT, TelegramRateLimiter
from bot.adapters.telegram.messenger import TelegramMessenger, send
from bot.adapters.telegram.render import popup, to_messages
from bot.adapters.telegram.transport import AiohttpRequest, ConnectFailed
from bot.adapters.telegram.updates import PerChatUpdates
from bot.config import Settings, StartupError
from bot.domain import Action, Button, ChatRef, Command, Platform, Reply, Role
from bot.network import cannot_listen, unreachable
from handlers.ask_about import ask_command
from handlers.base import Context, Registry, RoleLookup, not_a_command
from handlers.like_follows import bibtex_command, file_too_large
from handlers.trends import momentum_chart

log = logging.getLogger(__name__)

_ADMINS = (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)
_VOTES = (Action.MORE, Action.LESS)
# HTTP connections to the Bot API: the limiter's sends in flight, plus a few for the
# requests about no chat (answerCallbackQuery, getChatMember, ...) so that those never
# wait for a free connection.
CONNECTION_POOL_SIZE = MAX_IN_FLIGHT + 4


async def _role_or_member(lookup: RoleLookup) -> Role:
    try:
        return await lookup()
    except Exception:
        log.warning("telegram role lookup failed; treated as a member", exc_info=True)
        return Role.MEMBER


def _file_url(api_url: str) -> str:
    """The Bot API's file URL beside its method URL: ".../bot" -> ".../file/bot"."""
    base = api_url.rstrip("/")
    return base.removesuffix("/bot") + "/file/bot" if base.endswith("/bot") else base + "/file/bot"


def _unreached(exc: NetworkError) -> str:
    """Why the Bot API server could not be reached, in a few words."""
    if isinstance(exc, ConnectFailed):
        return exc.reason
    if isinstance(exc, TimedOut):
        return "no answer in time"
    return exc.message


class TelegramAdapter:
    """Runs the bot on Telegram: long polling, or a webhook when a public URL is set."""

    def __init__(self, settings: Settings, registry: Registry, ctx: Context) -> None:
        assert settings.telegram_bot_token is not None
        token = settings.telegram_bot_token.get_secret_value()
        self._settings = settings
        self._registry = registry
        self._ctx = ctx
        self.key = buttons.button_key(token)
        # One per process; `bot.services.peers` sets its share of the overall rate.
        self.limiter = TelegramRateLimiter(
            messages_per_second=settings.telegram_messages_per_second,
            chat_messages_per_second=settings.telegram_chat_messages_per_second,
            group_messages_per_minute=settings.telegram_group_messages_per_minute,
        )
        self.application = (
            Application.builder()
            .token(token)
            .base_url(settings.telegram_api_base_url)
            .base_file_url(_file_url(settings.telegram_api_base_url))
            .request(AiohttpRequest(CONNECTION_POOL_SIZE))
            .get_updates_request(AiohttpRequest(1))
            .rate_limiter(self.limiter)
            .concurrent_updates(PerChatUpdates())
            .build()
        )
        self.messenger = TelegramMessenger(self.application, self.key)
        self.prompts = AskPrompts(ctx)
        app = self.application
        updates = filters.UpdateType.MESSAGE | filters.UpdateType.CHANNEL_POST
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self._on_migrate))
        app.add_handler(MessageHandler(updates & filters.TEXT, self._on_text))
        app.add_handler(MessageHandler(updates & filters.Document.ALL, self._on_document))
        app.add_handler(CallbackQueryHandler(self._on_button))
        app.add_handler(ChatMemberHandler(self._on_membership, ChatMemberHandler.MY_CHAT_MEMBER))
        app.add_error_handler(self._on_error)

    async def start(self, *, receive_updates: bool = True) -> None:
        """Connect; with `receive_updates` also take chat updates (one process should).

        A refused token or an unreachable Bot API server stops the start with one line
        (a StartupError); the HTTP sessions opened so far are closed by `stop`."""
        try:
            await self._start(receive_updates)
        except InvalidToken:
            raise StartupError(
                "Telegram refused TELEGRAM_BOT_TOKEN; copy it again from @BotFather"
            ) from None
        except BadRequest:
            raise
        except NetworkError as exc:
            raise StartupError(
                unreachable(
                    "Telegram",
                    self._settings.telegram_api_base_url,
                    _unreached(exc),
                    "TELEGRAM_API_BASE_URL",
                )
            ) from None

    async def _start(self, receive_updates: bool) -> None:
        app = self.application
        await app.initialize()  # getMe: checks the token
        if not receive_updates:
            log.info("telegram adapter started mode=send-only")
            return
        if self._settings.telegram_webhook_url:
            self._settings.telegram_webhook_secret_value()  # refuse before anything starts
        await app.bot.set_my_commands(
            [BotCommand(spec.name, spec.summary[:256]) for spec in self._registry.specs]
        )
        await app.start()
        assert app.updater is not None
        allowed = ["message", "channel_post", "callback_query", "my_chat_member"]
        if self._settings.telegram_webhook_url:
            await self._start_webhook(allowed)
        else:
            await app.updater.start_polling(allowed_updates=allowed, timeout=30)
        log.info(
            "telegram adapter started mode=%s",
            "webhook" if self._settings.telegram_webhook_url else "polling",
        )

    async def _start_webhook(self, allowed: list[str]) -> None:
        settings, updater = self._settings, self.application.updater
        assert updater is not None
        try:
            await updater.start_webhook(
                listen=settings.telegram_webhook_listen,
                port=settings.telegram_webhook_port,
                url_path="telegram",
                webhook_url=settings.telegram_webhook_url,
                secret_token=settings.telegram_webhook_secret_value(),
                allowed_updates=allowed,
            )
        except OSError as exc:  # the port is taken, or not ours to open
            listen, port = settings.telegram_webhook_listen, settings.telegram_webhook_port
            service, setting = "Telegram's webhook", "TELEGRAM_WEBHOOK_PORT"
            raise StartupError(cannot_listen(service, listen, port, exc, setting)) from None

    async def stop(self) -> None:
        app = self.application
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()
        await app.shutdown()
        # After a failed getMe the Application counts as never initialized and its shutdown
        # does nothing, but the bot's HTTP sessions are open: close them ("Unclosed client
        # session" otherwise). Does nothing when they are closed already.
        await app.bot.shutdown()

    # --- updates -------------------------------------------------------------------

    def _to_command(self, update: Update, button: Button | None = None) -> Command | None:
        return to_command(
            update,
            bot_username=self.application.bot.username,
            group_admins_only=self._settings.telegram_group_admins_only,
            button=button,
        )

    @staticmethod
    def _lookup(chat: TgChat, user: User | None) -> RoleLookup | None:
        """Ask Telegram (getChatMember) whether `user` administers `chat`; called only when
        a command would change the chat."""
        if user is None or chat.type == TgChat.PRIVATE:
            return None

        async def lookup() -> Role:
            member = await chat.get_member(user.id)
            return Role.ADMIN if member.status in _ADMINS else Role.MEMBER

        return lookup

    async def _on_text(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        message, chat = update.effective_message, update.effective_chat
        if message is None or chat is None or not message.text:
            return
        user = update.effective_user
        if user is not None and user.is_bot:
            return  # other bots are not our audience
        command = self._to_command(update) or self._answer_to_prompt(update)
        if command is None:
            if self.prompts.looks_like_prompt(message, self.application.bot.id):
                await self._reply(chat.id, Reply.text(EXPIRED))
            elif chat.type == TgChat.PRIVATE:
                await self._reply(chat.id, not_a_command(message.text, self._registry))
            return  # groups: people talk to each other (or to other bots), not to us
        reply = await self._registry.dispatch(
            command, self._ctx, lookup_role=self._lookup(chat, user)
        )
        await self._reply(chat.id, reply)

    async def _on_document(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        """A file sent to the bot: a BibTeX reading list to follow papers like
        (`bot.adapters.telegram.documents`); a file over the limit is never fetched."""
        message, chat = update.effective_message, update.effective_chat
        command = document_command(
            update,
            bot_username=self.application.bot.username,
            group_admins_only=self._settings.telegram_group_admins_only,
        )
        if command is None or message is None or message.document is None or chat is None:
            return
        refused = file_too_large(message.document.file_size)
        if refused is not None:
            await self._reply(chat.id, refused)
            return
        file = await message.document.get_file()
        made = bibtex_command(bytes(await file.download_as_bytearray()), command)
        if isinstance(made, Reply):
            await self._reply(chat.id, made)
            return
        reply = await self._registry.dispatch(
            made, self._ctx, lookup_role=self._lookup(chat, update.effective_user)
        )
        await self._reply(chat.id, reply)

    def _answer_to_prompt(self, update: Update) -> Command | None:
        """A reply to one of our "Ask about" prompts: /ask about the prompt's topic."""
        message, chat, user = update.effective_message, update.effective_chat, update.effective_user
        if message is None or chat is None or not message.text:
            return None
        tag = self.prompts.tag_for(message, self.application.bot.id)
        if tag is None:
            return None
        ref = ChatRef(Platform.TELEGRAM, str(chat.id))
        user_id = str(user.id) if user else None
        return ask_command(tag, message.text, chat=ref, chat_kind=chat_kind(chat), user_id=user_id)

    async def _reply(self, chat_id: int, reply: Reply) -> None:
        if reply.is_empty:
            return
        for message in to_messages(reply, str(chat_id), self.key):
            await send(self.application.bot, chat_id, message)
        if reply.chart is not None:
            png = await momentum_chart(self._ctx, reply.chart)
            if png is not None:
                await self.application.bot.send_photo(chat_id=chat_id, photo=png)

    async def _on_button(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        query: CallbackQuery | None = update.callback_query
        chat = update.effective_chat
        if query is None:
            return
        button = (
            buttons.decode(query.data or "", str(chat.id), self.key) if chat is not None else None
        )
        command = self._to_command(update, button) if button is not None else None
        if button is not None and button.action is Action.ASK and chat is not None:
            await self.prompts.pressed(self.application.bot, query, chat, button.arg)
            return
        if command is None or chat is None:
            await query.answer(
                "This button is not valid here; nothing was changed.", show_alert=True
            )
            return
        lookup = self._lookup(chat, query.from_user)
        if chat.type == TgChat.CHANNEL and lookup is not None:
            # A post in a channel reaches every subscriber: whether this press may post
            # (or change anything) is known before it runs.
            command = replace(command, role=await _role_or_member(lookup))
            lookup = None
        reply = await self._registry.dispatch(command, self._ctx, lookup_role=lookup)
        if button is not None and button.action in _VOTES:  # told to the presser, not posted
            await query.answer(popup(reply) or None, show_alert=reply.is_error)
            return
        if reply.denied or (chat.type == TgChat.CHANNEL and not command.role.may_change):
            # Refused, or a subscriber's read-only press: only the presser sees the answer.
            await query.answer(popup(reply) or None, show_alert=not reply.is_empty)
            return
        await query.answer((reply.lines[0] if reply.lines else "Done.")[:190])
        await self._reply(chat.id, reply)

    async def _on_membership(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        change = update.my_chat_member
        if change is None:
            return
        status = change.new_chat_member.status
        if status in (ChatMemberStatus.BANNED, ChatMemberStatus.LEFT):
            ref = ChatRef(Platform.TELEGRAM, str(change.chat.id))
            async with self._ctx.uow() as uow:
                found = await uow.chats.get(ref)
                if found is not None:
                    await uow.chats.set_active(found.id, False)
                    await uow.commit()
            log.info("telegram chat=%s removed the bot; deactivated", change.chat.id)

    async def _on_migrate(self, update: Update, _: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.effective_message
        if message is None or message.migrate_to_chat_id is None:
            return
        old = ChatRef(Platform.TELEGRAM, str(message.chat.id))
        new = ChatRef(Platform.TELEGRAM, str(message.migrate_to_chat_id))
        async with self._ctx.uow() as uow:
            if await uow.chats.move(old, new):
                await uow.commit()
                log.info("telegram chat moved from=%s to=%s", old.external_id, new.external_id)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram update failed: %s", context.error, exc_info=context.error)
        if isinstance(update, Update) and update.callback_query is not None:
            with contextlib.suppress(Exception):
                await update.callback_query.answer("Sorry, that failed; nothing was changed.")
