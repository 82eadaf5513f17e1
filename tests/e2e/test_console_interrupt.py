"""Ctrl-C in the terminal chat, as a person meets it: `paperwatch console` in a
pseudo-terminal. It used to print ^C and then wait, the process alive, until Enter was
pressed: asyncio.run waited for the thread blocked reading the line being typed."""

from __future__ import annotations

import fcntl
import os
import pty
import subprocess
import sys
import termios
from pathlib import Path

from tests.e2e.test_unreachable import Terminal


def _own_terminal() -> None:
    """In the child: make the pseudo-terminal its controlling terminal, as a shell does, so
    that Ctrl-C typed there is a SIGINT to it."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_ctrl_c_ends_the_terminal_chat_without_waiting_for_enter(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))}
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "console"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=env,
        preexec_fn=_own_terminal,  # only setsid and an ioctl, before exec
    )
    os.close(slave)
    terminal = Terminal(master)
    try:
        terminal.wait_for(lambda: "you> " in terminal.screen, "the prompt")
        terminal.type("/status\n")
        terminal.wait_for(lambda: "Papers in the index" in terminal.screen, "/status")
        terminal.type("/fol")  # a line half typed
        terminal.type("\x03")  # Ctrl-C
        terminal.wait_for(lambda: terminal.ended, "the chat to end, with no Enter pressed")
        assert process.wait(timeout=30) == 130, terminal.screen
    finally:
        process.kill()
        os.close(master)
    assert "Traceback" not in terminal.screen, terminal.screen
