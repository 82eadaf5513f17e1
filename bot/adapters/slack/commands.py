"""Slack payloads as neutral `Command`s: whose chat a request is about, and as whom."""

from __future__ import annotations

SLASH_COMMAND = "/paperwatch"


def chat_key(team: str, channel: str | None, user: str) -> str:
    """Channels own their subscriptions; in a DM (or the Home tab) the person does."""
    if channel and not channel.startswith("D"):
        return f"{team}:{channel}"
    return f"{team}:{user}"
