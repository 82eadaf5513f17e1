"""The outbox's way into Telegram: one send, and PTB errors turned into delivery meanings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from telegram import LinkPreviewOptions, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TimedOut
from telegram.ext import Application

from bot.adapters.telegram.limits import NO_RETRIES, seconds
from bot.adapters.telegram.render import TelegramMessage, to_messages
from bot.domain import Chat, Platform, Reply
from bot.ports import ChatMoved, Permanent, RateLimited, RecipientGone, Transient

_GONE = ("chat not found", "bot was kicked", "bot is not a member", "user is deactivated")
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)  # frozen, so one serves every send


async def send(
    bot: Any, chat_id: int, message: TelegramMessage, *, retries: int | None = None
) -> Message:
    """Send one message; `retries` after a 429 (None: the limiter's default)."""
    return await bot.send_message(
        chat_id=chat_id,
        text=message.html,
        parse_mode=ParseMode.HTML,
        link_preview_options=_NO_PREVIEW,
        reply_markup=message.markup,
        rate_limit_args=retries,
    )


class TelegramMessenger:
    """The outbox's way into Telegram: PTB errors become delivery meanings."""

    platform = Platform.TELEGRAM

    def __init__(self, application: Application, key: bytes) -> None:
        self._app = application
        self._key = key

    def render(self, chat: Chat, reply: Reply) -> Sequence[TelegramMessage]:
        return to_messages(reply, chat.external_id, self._key)

    async def deliver(self, chat: Chat, message: object) -> None:
        assert isinstance(message, TelegramMessage)
        try:
            # A 429 goes back to the outbox (the row waits `retry_after`), rather than
            # holding the row's claim in the limiter past its lease.
            await send(self._app.bot, int(chat.external_id), message, retries=NO_RETRIES)
        except RetryAfter as exc:
            raise RateLimited(seconds(exc.retry_after), "Telegram flood control") from exc
        except ChatMigrated as exc:
            raise ChatMoved(str(exc.new_chat_id)) from exc
        except Forbidden as exc:
            raise RecipientGone(exc.message) from exc
        except BadRequest as exc:
            if any(reason in exc.message.lower() for reason in _GONE):
                raise RecipientGone(exc.message) from exc
            # Any other 400 ("can't parse entities", "message is too long", a bad
            # button) refuses this message as it is: retrying cannot help.
            raise Permanent(exc.message) from exc
        except (TimedOut, NetworkError) as exc:
            raise Transient(str(exc)) from exc
