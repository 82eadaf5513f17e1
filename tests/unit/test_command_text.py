"""What a person typed becomes a Command: control characters separate, invisible ones
vanish, and a command addressed to another bot is not ours."""

from __future__ import annotations

import pytest

from bot.domain import ChatRef, Platform, Role
from handlers.text import clean_text, parse_command

CHAT = ChatRef(Platform.TELEGRAM, "-100")


@pytest.mark.parametrize(
    ("typed", "name", "args"),
    [
        ("/follow\x00RL for LLM Agents", "follow", "RL for LLM Agents"),
        ("/follow\x07RL", "follow", "RL"),
        ("/follow\u202eRL", "follow", "RL"),  # a bidi override separates too
        ("/follow RL\x00for LLM\tAgents", "follow", "RL for LLM Agents"),
        ("/fol\u200blow RL", "follow", "RL"),  # zero-width characters are not there at all
        ("/follow agent\u200dic RAG\ufeff", "follow", "agentic RAG"),
        ("/follow \x1b[31mRL\x1b[0m", "follow", "RL"),
    ],
)
def test_control_characters_separate_and_invisible_ones_vanish(
    typed: str, name: str, args: str
) -> None:
    command = parse_command(typed, CHAT)
    assert command is not None
    assert (command.name, command.args) == (name, args)


def test_clean_text_keeps_words_whole() -> None:
    assert clean_text("zero\u200bwidth\u00adjoiner") == "zerowidthjoiner"
    assert clean_text("a\x00b\x1fc") == "a b c"


def test_a_command_for_another_bot_is_not_ours() -> None:
    ours = "paperwatch_bot"
    assert parse_command("/follow@otherbot RL", CHAT, bot_username=ours) is None
    mine = parse_command("/follow@PaperWatch_Bot RL", CHAT, bot_username=ours)
    assert mine is not None and (mine.name, mine.args) == ("follow", "RL")
    assert parse_command("/follow RL", CHAT, bot_username=ours) is not None


def test_the_role_defaults_to_the_least_privilege() -> None:
    command = parse_command("/follow RL", CHAT)
    assert command is not None and command.role is Role.MEMBER
