"""Telegram updates as neutral `Command`s: pure, no network, no state.

A text message is parsed as a command (`handlers.text.parse_command`); a pressed button
is the command of its action, with the button's argument. The caller's role is what the
update itself tells (`known_role`); asking Telegram more is the adapter's job.
"""

from __future__ import annotations

from telegram import Chat as TgChat
from telegram import Message, Update

from bot.domain import Button, ChatKind, ChatRef, Command, Platform, Role
from handlers.text import parse_command

_KINDS = {
    TgChat.PRIVATE: ChatKind.PRIVATE,
    TgChat.GROUP: ChatKind.GROUP,
    TgChat.SUPERGROUP: ChatKind.GROUP,
    TgChat.CHANNEL: ChatKind.CHANNEL,
}


def chat_kind(chat: TgChat) -> ChatKind:
    return _KINDS.get(chat.type, ChatKind.GROUP)


def known_role(chat: TgChat, message: Message | None, *, group_admins_only: bool) -> Role:
    """The caller's role as far as the update itself tells, without asking Telegram.

    `message` is the command's own message (None for a button press, whose message is
    the bot's). A private chat is its person's own; a message sent as the chat itself
    is a channel's post (only its administrators post) or a group's anonymous
    administrator. With TELEGRAM_GROUP_ADMINS_ONLY off every group member may change
    the group; channels always need an administrator.
    """
    if chat.type == TgChat.PRIVATE:
        return Role.OWNER
    sender = message.sender_chat if message is not None else None
    if sender is not None and sender.id == chat.id:
        return Role.ADMIN
    if chat.type != TgChat.CHANNEL and not group_admins_only:
        return Role.ADMIN
    return Role.MEMBER


def to_command(
    update: Update,
    *,
    bot_username: str | None,
    group_admins_only: bool,
    button: Button | None = None,
) -> Command | None:
    """The command an update asks for, or None when it asks none.

    For a button press (`update.callback_query`) `button` is the pressed button, already
    verified and decoded by the caller (which holds the signing key); without it the
    press asks nothing. Otherwise the update's message text is parsed.
    """
    chat = update.effective_chat
    if chat is None:
        return None
    ref = ChatRef(Platform.TELEGRAM, str(chat.id))
    kind = chat_kind(chat)
    query = update.callback_query
    if query is not None:
        if button is None:
            return None
        return Command(
            name=button.action.value,  # each action is the command of that name
            args=button.arg,
            chat=ref,
            chat_kind=kind,
            user_id=str(query.from_user.id),
            role=known_role(chat, None, group_admins_only=group_admins_only),
        )
    message, user = update.effective_message, update.effective_user
    if message is None or not message.text:
        return None
    return parse_command(
        message.text,
        ref,
        chat_kind=kind,
        user_id=str(user.id) if user else None,
        role=known_role(chat, message, group_admins_only=group_admins_only),
        bot_username=bot_username,
    )
