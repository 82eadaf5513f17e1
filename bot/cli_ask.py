"""`paperwatch ask "question" [--topic T]`: /ask for scripts, answered on stdout.

The answer is the one /ask gives in the terminal chat: over the console's followed topics
when no topic is named, and written by the language model when one is configured. A bad
question or an unknown topic is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys

from bot.adapters.console import CONSOLE_CHAT, render_reply
from bot.adapters.llm import answer_writer
from bot.cli_actions import build_context, opened
from bot.config import Settings
from bot.domain import Command, Reply
from handlers.ask_about import ask_command, named_topic
from handlers.registry import REGISTRY


async def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    """/ask in the terminal: the answer on stdout; bad input one line on stderr, exit 2."""
    question = " ".join(args.question.split())
    if not question:
        print(
            'paperwatch: ask what? e.g. paperwatch ask "which rewards do web agents use?"',
            file=sys.stderr,
        )
        return 2
    async with answer_writer(settings) as writer, opened(settings) as it:
        ctx = build_context(it.db, it.catalog, settings, writer)
        tag = await named_topic(CONSOLE_CHAT, args.topic, ctx) if args.topic else None
        if isinstance(tag, Reply):
            reply = tag
        elif tag is not None:
            reply = await REGISTRY.dispatch(ask_command(tag, question, chat=CONSOLE_CHAT), ctx)
        else:
            reply = await REGISTRY.dispatch(Command("ask", question, CONSOLE_CHAT), ctx)
    if reply.is_error:
        print("paperwatch: " + " ".join(" ".join(reply.lines[:2]).split()), file=sys.stderr)
        return 2
    print(render_reply(reply))
    return 0
