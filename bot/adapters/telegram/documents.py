"""A file sent to the bot on Telegram (a BibTeX reading list): which chat, who, and whether
it is for us.

In a private chat every document is for the bot. In a group or channel people share files
with each other, so a document is for the bot only when its caption is a /follow command
(addressed to this bot, if to any). The file becomes `/follow like <its arXiv ids>`
(`handlers.like_follows.bibtex_command`), with the role the caption's sender has.
"""

from __future__ import annotations

from telegram import Chat as TgChat
from telegram import Update

from bot.adapters.telegram.commands import chat_kind, known_role
from bot.domain import ChatRef, Command, Platform
from handlers.text import parse_command


def document_command(
    update: Update, *, bot_username: str | None, group_admins_only: bool
) -> Command | None:
    """The command a sent document stands for (before its file is read), or None when the
    document is not for the bot."""
    message, chat, user = update.effective_message, update.effective_chat, update.effective_user
    if message is None or chat is None or message.document is None:
        return None
    if user is not None and user.is_bot:
        return None
    ref = ChatRef(Platform.TELEGRAM, str(chat.id))
    role = known_role(chat, message, group_admins_only=group_admins_only)
    user_id = str(user.id) if user else None
    caption = parse_command(
        message.caption or "",
        ref,
        chat_kind=chat_kind(chat),
        user_id=user_id,
        role=role,
        bot_username=bot_username,
    )
    if caption is not None and caption.name == "follow":
        return caption
    if chat.type != TgChat.PRIVATE:
        return None
    return Command("follow", "", ref, chat_kind(chat), user_id, role)
