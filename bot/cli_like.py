"""`paperwatch follow-like --bib FILE [--chat console]` or `paperwatch follow-like ID ...`:
/follow like for the terminal chat, from a BibTeX file's arXiv ids or from ids given.

The answer is the one the terminal chat gives (`handlers.like_follows`); papers not stored
are looked up on arXiv through the polite client. A file that is too large, binary or
without an arXiv id, an unreadable file, or a refused set is one line on stderr and exit 2;
nothing changes.
"""

from __future__ import annotations

import argparse
import sys

from bot.adapters.console import CONSOLE_CHAT, render_reply
from bot.cli_actions import build_context, lookup_for, opened
from bot.config import Settings
from bot.domain import Command, Reply, Role
from bot.topics.bibtex import MAX_BIB_BYTES
from handlers.like_follows import LIKE_WORD, bibtex_command
from handlers.registry import REGISTRY

CHATS = ("console",)  # the chats a terminal command may act for


def _read(path: str) -> bytes | str:
    """The file's bytes (one byte past the limit at most), or why it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_BIB_BYTES + 1)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or type(exc).__name__}."


def _fail(reply: Reply | str) -> int:
    text = reply if isinstance(reply, str) else " ".join(reply.lines[:1])
    print("paperwatch: " + " ".join(text.split()), file=sys.stderr)
    return 2


async def cmd_follow_like(args: argparse.Namespace, settings: Settings) -> int:
    """Follow papers like a BibTeX file's (or the ids given) in the terminal chat."""
    if bool(args.bib) == bool(args.ids):
        return _fail("give a BibTeX file (--bib FILE) or arXiv ids, not both or neither.")
    command = Command(
        "follow",
        f"{LIKE_WORD} {' '.join(args.ids)}",
        CONSOLE_CHAT,
        user_id="console",
        role=Role.OWNER,
    )
    if args.bib:
        data = _read(args.bib)
        if isinstance(data, str):
            return _fail(data)
        made = bibtex_command(data, command)
        if isinstance(made, Reply):
            return _fail(made)
        command = made
    async with opened(settings) as it:
        lookup = await it.stack.enter_async_context(lookup_for(settings, it.db))
        ctx = build_context(it.db, it.catalog, settings, lookup=lookup)
        reply = await REGISTRY.dispatch(command, ctx)
    if reply.is_error:
        return _fail(reply)
    print(render_reply(reply))
    return 0
