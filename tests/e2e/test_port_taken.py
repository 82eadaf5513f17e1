"""A port that another program holds, as a person meets it: `paperwatch run` in Telegram's
webhook mode or Slack's HTTP mode, against the fake platforms, stops with one line naming
the port and the setting to change, and a non-zero exit (it was a 40-line traceback)."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import paperwatch
from tests.support.slack_server import serve_fake_slack
from tests.support.telegram_server import serve_fake_telegram


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port of 127.0.0.1 that another program is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr  # no traceback, no "Unclosed client session"
    return lines[0]


def test_a_taken_telegram_webhook_port_stops_the_start_in_one_line(
    tmp_path: Path, taken_port: int
) -> None:
    with serve_fake_telegram() as fake:
        env = {
            "TELEGRAM_BOT_TOKEN": "123456:TEST-token",
            "TELEGRAM_API_BASE_URL": fake.base_url,
            "TELEGRAM_WEBHOOK_URL": "https://bot.example.org/telegram",
            "TELEGRAM_WEBHOOK_SECRET": "s3cret",
            "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1",
            "TELEGRAM_WEBHOOK_PORT": str(taken_port),
        }
        line = one_line(paperwatch("run", cwd=tmp_path, env=env))
    assert line == (
        f"paperwatch: cannot listen on 127.0.0.1:{taken_port} for Telegram's webhook (the "
        "port is in use by another program); stop that program or set TELEGRAM_WEBHOOK_PORT "
        "to a free port"
    )


def test_a_taken_slack_http_port_stops_the_start_in_one_line(
    tmp_path: Path, taken_port: int
) -> None:
    with serve_fake_slack() as fake:
        env = {
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "signing-secret",
            "SLACK_API_URL": fake.api_url,
            "SLACK_HTTP_HOST": "127.0.0.1",
            "SLACK_HTTP_PORT": str(taken_port),
        }
        line = one_line(paperwatch("run", cwd=tmp_path, env=env))
    assert line == (
        f"paperwatch: cannot listen on 127.0.0.1:{taken_port} for Slack's HTTP mode (the port "
        "is in use by another program); stop that program or set SLACK_HTTP_PORT to a free port"
    )
