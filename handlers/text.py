"""Turning what a person typed into a `Command`, safely.

Shared by every adapter: the console reads lines, Telegram and Slack hand over
message text; all of them end up here.
"""

from __future__ import annotations

import re
import unicodedata

from bot.domain import ChatKind, ChatRef, Command

# Longest argument any command takes; longer input is refused before any work.
MAX_ARGS = 300
# Longest line we look at at all (a 10,000-character paste is still answered politely).
MAX_LINE = 20_000

_COMMAND = re.compile(r"/(?P<name>[A-Za-z][A-Za-z0-9_]{0,31})(?:@[A-Za-z0-9_]{1,64})?(?=\s|$)")
_SPACE = re.compile(r"\s+")
# Terminal escape sequences (colours, cursor moves, titles) pasted along with text.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def clean_text(text: str) -> str:
    """Drop control and zero-width characters, normalise width forms, collapse spaces."""
    text = unicodedata.normalize("NFKC", _ESCAPES.sub("", text[:MAX_LINE]))
    kept = [ch for ch in text if ch.isspace() or unicodedata.category(ch) not in ("Cc", "Cf")]
    return _SPACE.sub(" ", "".join(kept)).strip()


def parse_command(
    text: str,
    chat: ChatRef,
    *,
    chat_kind: ChatKind = ChatKind.PRIVATE,
    user_id: str | None = None,
    is_admin: bool = True,
) -> Command | None:
    """`/follow@PaperwatchBot RL for LLM Agents` -> Command("follow", "RL for LLM Agents").

    Returns None when the text is not a command at all.
    """
    cleaned = clean_text(text)
    match = _COMMAND.match(cleaned)
    if match is None:
        return None
    return Command(
        name=match.group("name").lower(),
        args=cleaned[match.end() :].strip(),
        chat=chat,
        chat_kind=chat_kind,
        user_id=user_id,
        is_admin=is_admin,
    )
