"""Turning what a person typed into a `Command`, safely.

Shared by every adapter: the console reads lines, Telegram and Slack hand over
message text; all of them end up here.
"""

from __future__ import annotations

import re
import unicodedata

from bot.domain import ChatKind, ChatRef, Command, Role

# Longest argument any command takes; longer input is refused before any work.
MAX_ARGS = 300
# Longest line we look at at all (a 10,000-character paste is still answered politely).
MAX_LINE = 20_000

_COMMAND = re.compile(
    r"/(?P<name>[A-Za-z][A-Za-z0-9_]{0,31})(?:@(?P<bot>[A-Za-z0-9_]{1,64}))?(?=\s|$)"
)
_SPACE = re.compile(r"\s+")
# Terminal escape sequences (colours, cursor moves, titles) pasted along with text.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


# Invisible characters that never separate words (zero-width space, non-joiner, joiner,
# word joiner, byte-order mark, soft hyphen): "LLM\u200bAgents" is one word, so they go.
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


def _visible(ch: str) -> str:
    if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf"):
        return ch
    return " "  # any other control or format character separates what it sat between


def clean_text(text: str) -> str:
    """Normalise what a person typed: terminal escapes and zero-width characters go, every
    other control or format character becomes a space (`/follow\x00RL` is `/follow RL`,
    never `/followrl`), width forms are normalised (NFKC) and spaces collapsed."""
    text = unicodedata.normalize("NFKC", _ESCAPES.sub("", text[:MAX_LINE]))
    text = "".join(_visible(ch) for ch in text.translate(_ZERO_WIDTH))
    return _SPACE.sub(" ", text).strip()


def parse_command(
    text: str,
    chat: ChatRef,
    *,
    chat_kind: ChatKind = ChatKind.PRIVATE,
    user_id: str | None = None,
    role: Role = Role.MEMBER,
    bot_username: str | None = None,
) -> Command | None:
    """`/follow@PaperwatchBot RL for LLM Agents` -> Command("follow", "RL for LLM Agents").

    Returns None when the text is not a command at all, or when it is addressed to
    another bot (`/follow@otherbot ...` in a group; `bot_username` is this bot's).
    """
    cleaned = clean_text(text)
    match = _COMMAND.match(cleaned)
    if match is None:
        return None
    addressee = match.group("bot")
    if addressee and bot_username and addressee.lower() != bot_username.lower():
        return None
    return Command(
        name=match.group("name").lower(),
        args=cleaned[match.end() :].strip(),
        chat=chat,
        chat_kind=chat_kind,
        user_id=user_id,
        role=role,
    )
