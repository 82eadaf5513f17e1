"""The "Ask about <topic>" button on Telegram: a ForceReply prompt, and the reply to it.

Pressing the button sends "Ask about RL for LLM Agents:" with `ForceReply`, so the person's
app opens a reply to it with the question field ready. Which topic a reply asks about is
read back from what this process sent: the prompt's (chat, message id) is kept with the
tag from the signed button, and only a reply to one of those, a message the bot itself
sent, asks anything. A reply to any other message, or to a message a person wrote to look
like a prompt, is an ordinary message. Prompts live in memory (the newest `KEPT`): after a
restart an old prompt's reply is told to press the button again.
"""

from __future__ import annotations

from collections import OrderedDict
from html import escape

from telegram import Bot, CallbackQuery, ForceReply, Message, User
from telegram import Chat as TgChat
from telegram.constants import ParseMode

from bot.domain import ChatRef, Platform
from handlers.ask_about import GONE, PLACEHOLDER, prompt_text, topic_name
from handlers.base import Context

KEPT = 10_000
PLACEHOLDER_CHARS = 64  # Telegram's limit for input_field_placeholder
POPUP_CHARS = 190
EXPIRED = "That question prompt has expired: press the Ask button again."


class AskPrompts:
    """The prompts this process sent, and the topic each asks about."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._open: OrderedDict[tuple[int, int], str] = OrderedDict()

    async def pressed(self, bot: Bot, query: CallbackQuery, chat: TgChat, tag: str) -> None:
        """The button was pressed (its payload verified): ask for the question."""
        name = await topic_name(ChatRef(Platform.TELEGRAM, str(chat.id)), tag, self._ctx)
        if name is None:
            await query.answer(GONE[:POPUP_CHARS], show_alert=True)
            return
        if chat.type == TgChat.CHANNEL:  # nobody can reply in a channel as themselves
            hint = f"Ask me in a private chat: /ask {name}: <your question>"
            await query.answer(hint[:POPUP_CHARS], show_alert=True)
            return
        await query.answer()
        await self.send(bot, chat, query.from_user, tag, name)

    async def send(self, bot: Bot, chat: TgChat, user: User | None, tag: str, name: str) -> None:
        """The prompt; in a group it names the person, and only their app opens the reply."""
        text = escape(prompt_text(name))
        selective = chat.type != TgChat.PRIVATE and user is not None
        if selective and user is not None:
            text = f"{user.mention_html()}, {text[0].lower()}{text[1:]}"
        sent = await bot.send_message(
            chat.id,
            text,
            parse_mode=ParseMode.HTML,
            reply_markup=ForceReply(
                selective=selective, input_field_placeholder=PLACEHOLDER[:PLACEHOLDER_CHARS]
            ),
        )
        self._open[(chat.id, sent.message_id)] = tag
        while len(self._open) > KEPT:
            self._open.popitem(last=False)

    def tag_for(self, message: Message, bot_id: int) -> str | None:
        """The topic `message` answers, when it replies to one of our prompts."""
        prompt = message.reply_to_message
        if prompt is None or prompt.from_user is None or prompt.from_user.id != bot_id:
            return None
        return self._open.get((message.chat.id, prompt.message_id))

    @staticmethod
    def looks_like_prompt(message: Message, bot_id: int) -> bool:
        """Whether `message` seems to reply to a prompt of ours this process no longer knows
        (sent before a restart): only ever answered with `EXPIRED`, so the text is enough."""
        prompt = message.reply_to_message
        return (
            prompt is not None
            and prompt.from_user is not None
            and prompt.from_user.id == bot_id
            and "ask about " in (prompt.text or "").lower()
            and (prompt.text or "").endswith(":")
        )
