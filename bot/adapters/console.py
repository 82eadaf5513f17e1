"""The terminal chat: the embedded default when no chat platform is configured.

Reads one command per line from stdin and prints the replies as plain text.
Works interactively (with a prompt) and scripted (`printf '/follow X\\n' | paperwatch console`),
ending at end of input. Interactively the terminal is the chat's alone: log records go to
`LOG_FILE` (`bot.log_secrets.logging_to_file`), named in the first line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import unicodedata
from pathlib import Path
from typing import TextIO

from bot.domain import (
    Action,
    Button,
    Chat,
    ChatKind,
    ChatRef,
    Command,
    PaperItem,
    Platform,
    Reply,
    Role,
)
from bot.topics.card import Affiliations, Byline, Field, Links, Summary, Tags, Title, card
from bot.topics.content import ASK_PREFIX
from handlers.base import Context, Registry, not_a_command
from handlers.text import parse_command

CONSOLE_CHAT = ChatRef(Platform.CONSOLE, "1")
PROMPT = "you> "
# Where the interactive terminal chat's log records go: next to the default database.
LOG_FILE = Path("paperwatch.log")


def _safe(text: str) -> str:
    """Paper text is hostile: never let it move the cursor or change the terminal."""
    return "".join(
        ch if ch == "\n" or unicodedata.category(ch) not in ("Cc", "Cf") else " " for ch in text
    )


def _line(field: Field) -> str:
    match field:
        case Title(text):
            return f"• {text}"
        case Tags(tags):
            names = ", ".join(f"{t.name} ★" if t.followed else t.name for t in tags)
            return f"  tags: {names}{field.suffix}"
        case Summary(text):
            return f"  TL;DR: {text}"
        case Links(abs_url, pdf_url):  # no links in a terminal: the addresses themselves
            return f"  {abs_url}" + (f"  PDF {pdf_url}" if pdf_url else "")
        case Byline():
            return f"  {field.plain}"
        case Affiliations(text):
            return f"  {text}"


def render_paper(item: PaperItem) -> str:
    return "\n".join(_line(field) for field in card(item).fields)


def _ask_hint(button: Button) -> str:
    """An "Ask about" button as the line to type: the topic's name when /ask reads it back
    (no colon in it), else the tag the button carries."""
    name = button.text.removeprefix(ASK_PREFIX)
    named = name if ":" not in name and "…" not in name else button.arg
    return f"Ask: /ask {named}: <your question>"


# Buttons the terminal shows as the line to type instead.
_TYPED = (Action.ASK, Action.MORE, Action.LESS)


def render_reply(reply: Reply) -> str:
    parts = list(reply.lines)
    parts.extend(render_paper(item) for item in reply.papers)
    for section in reply.sections:
        parts.append(f"== {section.heading}")
        if section.note:
            parts.append(section.note)
        parts.extend(section.lines)
        parts.extend(render_paper(item) for item in section.papers)
        if section.footer:
            parts.append(section.footer)
    if reply.footer:
        parts.append(reply.footer)
    pressed = [b for row in reply.buttons for b in row]
    buttons = [f"[{b.text}]" for b in pressed if b.action not in _TYPED]
    if buttons:
        parts.append("Buttons (on Telegram and Slack): " + " ".join(buttons))
    votes = [b.arg for b in pressed if b.action is Action.MORE]
    if votes:
        paper = votes[0] if len(votes) == 1 else "<arXiv id>"
        parts.append(f"👍/👎: /more {paper} or /less {paper}")
    parts += [_ask_hint(b) for b in pressed if b.action is Action.ASK]
    return _safe("\n".join(parts))


def to_command(line: str) -> Command | None:
    """A typed line as a command, None if it is none; the terminal's user owns its chat."""
    return parse_command(
        line, CONSOLE_CHAT, chat_kind=ChatKind.PRIVATE, user_id="console", role=Role.OWNER
    )


async def handle_line(line: str, registry: Registry, ctx: Context) -> Reply | None:
    """One line in, one reply out (None for a blank line)."""
    if not line.strip():
        return None
    command = to_command(line)
    if command is None:
        return not_a_command(line, registry)
    return await registry.dispatch(command, ctx)


class Prompt:
    """The `you> ` prompt of the interactive chat, and whether it is waiting for a line:
    an alert printed meanwhile draws it again below itself (scripted, there is none)."""

    def __init__(self, stdout: TextIO, *, interactive: bool) -> None:
        self._stdout, self._interactive = stdout, interactive
        self.waiting = False

    def show(self) -> None:
        if self._interactive:
            self._stdout.write(PROMPT)
            self._stdout.flush()
        self.waiting = True

    def taken(self) -> None:
        self.waiting = False

    @property
    def redraw(self) -> str:
        """What goes after an alert: the prompt again, if it was waiting on screen."""
        return PROMPT if self._interactive and self.waiting else ""


async def read_line(stdin: TextIO) -> str:
    """The next line typed ("" at end of input). From a terminal, a daemon thread reads it
    straight from the file descriptor, so a Ctrl-C never waits for a line being typed (a
    thread of the default executor, blocked in readline, kept asyncio.run waiting for
    Enter); anything else is read in the default executor."""
    if not stdin.isatty():
        return await asyncio.to_thread(stdin.readline)
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()
    threading.Thread(target=_read_fd_line, args=(stdin.fileno(), loop, line), daemon=True).start()
    return await line


def _read_fd_line(fd: int, loop: asyncio.AbstractEventLoop, line: asyncio.Future[str]) -> None:
    data = bytearray()
    while not data.endswith(b"\n"):
        try:
            chunk = os.read(fd, 1)  # byte by byte: what follows the line stays for the next
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for it
        loop.call_soon_threadsafe(_settle, line, data.decode(errors="replace"))


def _settle(line: asyncio.Future[str], text: str) -> None:
    if not line.done():
        line.set_result(text)


async def run_console(
    registry: Registry,
    ctx: Context,
    stdin: TextIO,
    stdout: TextIO,
    *,
    interactive: bool,
    log_file: Path | None = None,
    prompt: Prompt | None = None,
) -> None:
    """Serve the terminal until end of input (Ctrl-D) or /quit; `log_file` is named in the
    first line (where the log records go meanwhile); `prompt` is shared with the
    `ConsoleMessenger` that prints alerts between the replies."""
    prompt = prompt or Prompt(stdout, interactive=interactive)
    if interactive:
        logs = f"; the log goes to {log_file}" if log_file is not None else ""
        stdout.write(f"paperwatch: type /help for commands, Ctrl-D to leave{logs}.\n")
    while True:
        prompt.show()
        line = await read_line(stdin)
        prompt.taken()
        if not line:
            break
        if line.strip().lower() in ("/quit", "/exit"):
            break
        reply = await handle_line(line, registry, ctx)
        if reply is not None and not reply.is_empty:
            stdout.write(render_reply(reply) + "\n\n")
            stdout.flush()


class ConsoleMessenger:
    """Alerts and digests for the terminal chat: printed between the replies."""

    platform = Platform.CONSOLE

    def __init__(self, stdout: TextIO, prompt: Prompt | None = None) -> None:
        self._stdout, self._prompt = stdout, prompt

    def render(self, chat: Chat, reply: Reply) -> list[str]:
        return [render_reply(reply)]

    async def deliver(self, chat: Chat, message: object) -> None:
        redraw = self._prompt.redraw if self._prompt is not None else ""
        self._stdout.write(f"\n{message}\n\n{redraw}")
        self._stdout.flush()
