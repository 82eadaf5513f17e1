"""Replies name commands as Slack users type them: `/latest` is `/paperwatch latest`.

The handlers are platform-neutral and write "/follow RL for LLM Agents" or "Page 1 of 3:
/list 2 for more"; in Slack there is one slash command and every chat command is a word
after it, so a bare `/latest` is a Slack command that does not exist. Only the reply's own
text changes (its lines, notes and footers), only where a known command's name stands as a
word of its own; a paper's title or abstract, a URL and an unknown "/folow" stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.adapters.slack.commands import SLASH_COMMAND
from bot.domain import Reply, Section
from handlers.registry import REGISTRY

_NAMES = "|".join(sorted((re.escape(spec.name) for spec in REGISTRY.specs), key=len, reverse=True))
_COMMAND = re.compile(rf"(?<![\w/.:<>&-])/({_NAMES})(?![\w/-])")


def slack_command(text: str) -> str:
    return _COMMAND.sub(rf"{SLASH_COMMAND} \1", text)


def _section(section: Section) -> Section:
    return replace(
        section,
        lines=tuple(map(slack_command, section.lines)),
        note=section.note and slack_command(section.note),
        footer=section.footer and slack_command(section.footer),
    )


def in_slack_words(reply: Reply) -> Reply:
    """`reply` with its commands written `/paperwatch <command>`."""
    return replace(
        reply,
        lines=tuple(map(slack_command, reply.lines)),
        sections=tuple(map(_section, reply.sections)),
        footer=reply.footer and slack_command(reply.footer),
    )
