"""Ctrl-C in the terminal chat, as a person meets it: `paperwatch console` in a
pseudo-terminal. It used to print ^C and then wait, the process alive, until Enter was
pressed: asyncio.run waited for the thread blocked reading the line being typed."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.e2e.test_unreachable import Terminal


def _own_terminal() -> None:
    """In the child, as a shell starts a foreground job: the pseudo-terminal is its
    controlling terminal, so that Ctrl-C typed there is a SIGINT to it, and SIGINT is at its
    default. A pytest worker of the whole suite runs with SIGINT ignored, which exec keeps:
    the chat would then never see a Ctrl-C (seen in full runs, never alone)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_the_terminal_chat_without_waiting_for_enter(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))}
    env["PYTHONFAULTHANDLER"] = "1"  # SIGABRT prints every thread's stack (see below)
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "console"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=env,
        preexec_fn=_own_terminal,  # setsid, an ioctl and a signal reset, before exec
    )
    os.close(slave)
    terminal = Terminal(master)
    try:
        terminal.wait_for(lambda: "you> " in terminal.screen, "the prompt")
        terminal.type("/status\n")
        terminal.wait_for(lambda: "Papers in the index" in terminal.screen, "/status")
        terminal.type("/fol")  # a line half typed
        terminal.type("\x03")  # Ctrl-C
        try:
            terminal.wait_for(lambda: terminal.ended, "the chat to end, with no Enter pressed")
        except pytest.fail.Exception:
            # Still running: show where it waits (its threads' stacks, and its log).
            process.send_signal(signal.SIGABRT)
            with contextlib.suppress(pytest.fail.Exception):
                terminal.wait_for(lambda: terminal.ended, "the stacks", seconds=10)
            log = tmp_path / "paperwatch.log"
            logged = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            pytest.fail(f"Ctrl-C did not end the chat:\n{terminal.screen}\nlog:\n{logged}")
        assert process.wait(timeout=30) == 130, terminal.screen
    finally:
        process.kill()
        os.close(master)
    assert "Traceback" not in terminal.screen, terminal.screen
