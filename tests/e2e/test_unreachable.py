"""No network, as a person meets it: real `paperwatch` processes against a local port that
refuses connections. Each start or command ends with one line naming the host and what
to check, at once; the terminal chat keeps log lines out of its prompt.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.test_cli import paperwatch
from tests.support.arxiv_server import serve_fake_arxiv

HINT = "check the network connection, the proxy"
INFO = {"PAPERWATCH_LOG_LEVEL": "INFO"}  # the default level: every line a person would see


def stopped_in_one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr  # no traceback, no "Unclosed client session"
    return lines[0]


def test_telegram_unreachable_stops_the_start_with_one_line(
    tmp_path: Path, closed_port: int
) -> None:
    env = {
        **INFO,
        "TELEGRAM_BOT_TOKEN": "123456:never-sent-anywhere",
        "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{closed_port}/bot",
    }
    line = stopped_in_one_line(paperwatch("run", cwd=tmp_path, env=env))
    assert line == (
        f"paperwatch: cannot reach Telegram at 127.0.0.1:{closed_port} (connection refused); "
        f"{HINT} (HTTPS_PROXY, NO_PROXY) and TELEGRAM_API_BASE_URL"
    )


def test_slack_unreachable_stops_the_start_with_one_line(tmp_path: Path, closed_port: int) -> None:
    env = {
        **INFO,
        "SLACK_BOT_TOKEN": "xoxb-never-sent-anywhere",
        "SLACK_APP_TOKEN": "xapp-never-sent-anywhere",
        "SLACK_API_URL": f"http://127.0.0.1:{closed_port}/api/",
    }
    line = stopped_in_one_line(paperwatch("run", cwd=tmp_path, env=env))
    assert line == (
        f"paperwatch: cannot reach Slack at 127.0.0.1:{closed_port} (connection refused); "
        f"{HINT} (HTTPS_PROXY) and SLACK_API_URL"
    )


def _offline_arxiv(port: int) -> dict[str, str]:
    return {
        **INFO,
        "ARXIV_RSS_URL": f"http://127.0.0.1:{port}/rss/",
        "ARXIV_OAI_URL": f"http://127.0.0.1:{port}/oai",
        "ARXIV_CATEGORIES": "cs.AI",
        "ARXIV_MIN_REQUEST_INTERVAL": "0",
    }


def _attempts(stderr: str) -> int:
    """Requests the client made (it logs each attempt at INFO before sending it)."""
    return stderr.count("arxiv request url=")


def test_offline_ingest_tries_once_and_ends_with_what_to_check(
    tmp_path: Path, closed_port: int
) -> None:
    result = paperwatch("ingest", cwd=tmp_path, env=_offline_arxiv(closed_port))
    assert result.returncode == 2
    assert _attempts(result.stderr) == 1
    assert "arxiv retry" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"paperwatch: arXiv poll failed: cannot reach arXiv at 127.0.0.1:{closed_port} "
        f"(connection refused); {HINT} (HTTPS_PROXY, NO_PROXY) and ARXIV_RSS_URL"
    )


def test_offline_backfill_tries_once_and_ends_with_what_to_check(
    tmp_path: Path, closed_port: int
) -> None:
    result = paperwatch("backfill", "--days", "3", cwd=tmp_path, env=_offline_arxiv(closed_port))
    assert result.returncode == 2
    assert _attempts(result.stderr) == 1
    assert "arxiv retry" not in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "paperwatch: backfill stopped (run it again to resume): cannot reach arXiv at "
        f"127.0.0.1:{closed_port} (connection refused); {HINT} (HTTPS_PROXY, NO_PROXY) "
        "and ARXIV_OAI_URL"
    )


class Terminal:
    """The master side of a pseudo-terminal: what a person would see on their screen."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.screen = ""
        self.ended = False

    def _read(self, deadline: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: every process holding the other side has gone
            data = b""
        self.ended = not data
        self.screen += data.decode(errors="replace")

    def wait_for(self, done: Callable[[], bool], what: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not done():
            if self.ended or time.monotonic() > deadline:
                pytest.fail(f"never saw {what}; the screen:\n{self.screen}")
            self._read(min(deadline, time.monotonic() + 0.2))

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())


def test_the_terminal_chat_keeps_log_lines_out_of_its_prompt(tmp_path: Path) -> None:
    """`paperwatch run` in a terminal polls arXiv in the background; arXiv answers 404, so
    the poll fails at once and logs a WARNING. The terminal shows the chat only; the log
    records are in the file its first line names."""
    log_file = tmp_path / "paperwatch.log"
    with serve_fake_arxiv() as fake:  # every path: 404
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))}
        env |= {
            **INFO,
            "ARXIV_RSS_URL": fake.url + "/rss/",
            "ARXIV_OAI_URL": fake.url + "/oai",
            "ARXIV_CATEGORIES": "cs.AI",
            "ARXIV_MIN_REQUEST_INTERVAL": "0",
        }
        master, slave = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=tmp_path,
            env=env,
        )
        os.close(slave)
        terminal = Terminal(master)
        try:
            terminal.wait_for(lambda: "you> " in terminal.screen, "the prompt")

            def logged() -> bool:
                in_file = log_file.exists() and "arxiv poll failed" in log_file.read_text()
                return in_file or "arxiv poll failed" in terminal.screen

            terminal.wait_for(logged, "the failed poll logged, in the file or on the screen")
            terminal.type("/status\n")
            terminal.wait_for(lambda: "Papers in the index" in terminal.screen, "/status")
            terminal.type("\x04")  # Ctrl-D: the chat ends
            terminal.wait_for(lambda: terminal.ended, "the end of the output")
            assert process.wait(timeout=30) == 0, terminal.screen
        finally:
            process.kill()
            os.close(master)
    screen = terminal.screen
    assert screen.startswith(
        "paperwatch: type /help for commands, Ctrl-D to leave; the log goes to paperwatch.log."
    )
    for record in (" INFO ", " WARNING ", "arxiv poll failed", "arxiv request"):
        assert record not in screen, screen
    assert "FAILED" in screen  # /status tells the person what the log says
    logged_lines = log_file.read_text()
    assert "INFO bot.app: paperwatch running role=all adapters=console" in logged_lines
    assert "WARNING " in logged_lines and "arxiv poll failed" in logged_lines
