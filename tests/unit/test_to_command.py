"""Each platform's `to_command`: a platform update in, the neutral Command out (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from telegram import CallbackQuery, Chat, Message, Update, User

from bot.adapters import console
from bot.adapters.slack import commands as slack
from bot.adapters.telegram import commands as telegram
from bot.domain import Action, Button, ChatKind, ChatRef, Command, Platform, Role
from tests.support.slack_wire import block_action_payload, slash_command_fields

ALICE = User(id=7, first_name="Alice", is_bot=False)
WHEN = datetime(2026, 3, 2, tzinfo=UTC)
UNFOLLOW = Button(text="", action=Action.UNFOLLOW, arg="rl-for-llm-agents")


def _text(chat: Chat, text: str, sender_chat: Chat | None = None) -> Update:
    message = Message(1, WHEN, chat, from_user=ALICE, text=text, sender_chat=sender_chat)
    return Update(1, message=message)


def _press(chat: Chat) -> Update:
    message = Message(2, WHEN, chat, text="an alert")
    return Update(2, callback_query=CallbackQuery("q1", ALICE, "inst", message=message, data="x"))


def _tg(update: Update, *, admins_only: bool = True, button: Button | None = None):
    return telegram.to_command(
        update, bot_username="PaperwatchBot", group_admins_only=admins_only, button=button
    )


def test_telegram_private_text_is_the_owners_command() -> None:
    command = _tg(_text(Chat(7, Chat.PRIVATE), "/follow@PaperwatchBot RL for LLM Agents"))
    ref = ChatRef(Platform.TELEGRAM, "7")
    assert command == Command("follow", "RL for LLM Agents", ref, ChatKind.PRIVATE, "7", Role.OWNER)


def test_telegram_text_for_another_bot_or_no_command_is_none() -> None:
    group = Chat(-100, Chat.SUPERGROUP)
    assert _tg(_text(group, "/follow@OtherBot x")) is None
    assert _tg(_text(group, "hello there")) is None


def test_telegram_group_roles_follow_the_setting_and_anonymous_admins() -> None:
    group = Chat(-100, Chat.SUPERGROUP)
    member = _tg(_text(group, "/list"))
    assert member is not None
    assert (member.chat_kind, member.role) == (ChatKind.GROUP, Role.MEMBER)
    anyone = _tg(_text(group, "/list"), admins_only=False)
    assert anyone is not None and anyone.role is Role.ADMIN
    anonymous = _tg(_text(group, "/list", sender_chat=group))
    assert anonymous is not None and anonymous.role is Role.ADMIN


def test_telegram_button_press_is_its_actions_command() -> None:
    channel = Chat(-200, Chat.CHANNEL)
    command = _tg(_press(channel), admins_only=False, button=UNFOLLOW)
    ref = ChatRef(Platform.TELEGRAM, "-200")
    expected = Command(
        "unfollow", "rl-for-llm-agents", ref, ChatKind.CHANNEL, "7", Role.MEMBER
    )  # channels always need an administrator: the adapter asks Telegram
    assert command == expected
    assert _tg(_press(channel)) is None  # no verified button: nothing asked


def _slack(payload: dict, *, admins_only: bool = False, button: Button | None = None):
    return slack.to_command(
        payload, admins_only=admins_only, allowed_users=("U0BOSS",), button=button
    )


def test_slack_slash_command_in_a_channel_belongs_to_the_channel() -> None:
    fields = slash_command_fields(
        text=" follow  RL for LLM Agents ", channel_id="C0PAPERS", team_id="T1"
    )
    command = _slack(fields)
    assert command is not None
    assert (command.name, command.args) == ("follow", "RL for LLM Agents")
    assert command.chat == ChatRef(Platform.SLACK, "T1:C0PAPERS")
    assert (command.chat_kind, command.role) == (ChatKind.CHANNEL, Role.ADMIN)
    restricted = _slack(fields, admins_only=True)
    assert restricted is not None and restricted.role is Role.MEMBER
    boss = _slack(slash_command_fields(text="list", user_id="U0BOSS"), admins_only=True)
    assert boss is not None and boss.role is Role.ADMIN


def test_slack_empty_slash_command_is_help_and_a_dm_is_the_persons() -> None:
    command = _slack(slash_command_fields(text="  ", channel_id="D0DM", user_id="U1", team_id="T1"))
    assert command == Command(
        "help", "", ChatRef(Platform.SLACK, "T1:U1"), ChatKind.PRIVATE, "U1", Role.OWNER
    )


def test_slack_button_press_from_the_home_tab_is_the_persons() -> None:
    body = block_action_payload("pw_unfollow_0_0", "v", user_id="U1", channel_id=None, team_id="T1")
    assert slack.origin(body) == slack.Origin("T1", None, "U1")
    command = _slack(body, admins_only=True, button=UNFOLLOW)
    ref = ChatRef(Platform.SLACK, "T1:U1")
    assert command == Command(
        "unfollow", "rl-for-llm-agents", ref, ChatKind.PRIVATE, "U1", Role.OWNER
    )
    assert _slack(body) is None  # no verified button: nothing asked


def test_console_line_is_the_terminal_owners_command() -> None:
    assert console.to_command("/digest daily 07:30") == Command(
        "digest", "daily 07:30", console.CONSOLE_CHAT, ChatKind.PRIVATE, "console", Role.OWNER
    )
    assert console.to_command("just words") is None
