"""No network, as a person meets it: real `paperwatch` processes against a local port that
refuses connections. Each start or command ends with one line naming the host and what
to check, at once.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import paperwatch

HINT = "check the network connection, the proxy"
INFO = {"PAPERWATCH_LOG_LEVEL": "INFO"}  # the default level: every line a person would see


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port that refuses connections: bound (so nothing else takes it), never
    listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


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
