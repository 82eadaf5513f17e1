"""The app's Home tab: a person's overview (`handlers.overview`) as a Block Kit view."""

from __future__ import annotations

from typing import Any

from bot.adapters.slack.commands import SLASH_COMMAND
from bot.adapters.slack.render import MAX_BLOCKS, Block, escape, paragraphs
from bot.adapters.slack.wording import slack_command
from handlers.overview import Overview

MAX_HOME_BLOCKS = MAX_BLOCKS * 2  # a Home tab holds 100 blocks


def home_view(overview: Overview) -> dict[str, Any]:
    """What they follow, what they mute, how papers reach them and the switches (as /settings
    shows them); then how to change it."""
    blocks: list[Block] = [
        {"type": "header", "text": {"type": "plain_text", "text": "paperwatch"}},
    ]
    for part in (overview.following, overview.muted, (*overview.delivery, *overview.switches)):
        blocks += paragraphs(tuple(map(slack_command, part)))
    hint = escape(f"Commands: {SLASH_COMMAND} follow, mute, digest ... ({SLASH_COMMAND} help)")
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": hint}]})
    return {"type": "home", "blocks": blocks[:MAX_HOME_BLOCKS]}
