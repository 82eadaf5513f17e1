"""Secrets never reach the logs, even at DEBUG: a real `paperwatch run` in webhook mode
against the fake Telegram server, its stderr read whole."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.arxiv_server import Canned, serve_fake_arxiv
from tests.support.telegram_server import serve_fake_telegram

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
SMALL_RSS = FIXTURES / "rss" / "msudars_laya-reader" / "arxiv_rss.xml"
TOKEN = "987654:SECRET-bot-token-value"
WEBHOOK_SECRET = "webhook-secret-value-42"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_update(chat_id: int) -> bytes:
    message = {
        "message_id": 1,
        "date": 0,
        "chat": {"id": chat_id, "type": "private"},
        "from": {"id": chat_id, "is_bot": False, "first_name": "A"},
        "text": "/start",
        "entities": [{"type": "bot_command", "offset": 0, "length": 6}],
    }
    return json.dumps({"update_id": 1, "message": message}).encode()


def post_until_accepted(url: str, body: bytes, deadline: float) -> httpx.Response:
    headers = {
        "Content-Type": "application/json",
        "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET,
    }
    while True:
        try:
            return httpx.post(url, content=body, headers=headers)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def webhook_bot(
    tmp_path: Path, arxiv_url: str, telegram_url: str, port: int, **settings: str
) -> subprocess.Popen[str]:
    """`paperwatch run` at DEBUG in webhook mode on `port`, against the fake arXiv and
    the fake Telegram server, with `settings` added to its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERWATCH_", "ARXIV_"))}
    env |= {
        "PAPERWATCH_LOG_LEVEL": "DEBUG",
        "ARXIV_RSS_URL": arxiv_url + "/rss/",
        "ARXIV_OAI_URL": arxiv_url + "/oai",
        "ARXIV_CATEGORIES": "cs.LG",
        "ARXIV_MIN_REQUEST_INTERVAL": "0",
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": telegram_url,
        "TELEGRAM_WEBHOOK_URL": "https://bot.example.org/telegram",
        "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1",
        "TELEGRAM_WEBHOOK_PORT": str(port),
    } | settings
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "run"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )


def test_debug_logs_show_no_token_and_no_webhook_secret(tmp_path: Path) -> None:
    port = free_port()
    with serve_fake_arxiv() as arxiv, serve_fake_telegram() as telegram:
        arxiv.add("/rss/cs.LG", Canned(SMALL_RSS.read_bytes()))
        process = webhook_bot(tmp_path, arxiv.url, telegram.base_url, port)
        try:
            telegram.wait_until(lambda f: "setWebhook" in f.calls, seconds=60)
            deadline = time.monotonic() + 30
            response = post_until_accepted(
                f"http://127.0.0.1:{port}/telegram", start_update(11), deadline
            )
            assert response.status_code == 200
            telegram.wait_until(lambda f: len(f.messages_for(11)) == 1, seconds=30)
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=60)
        finally:
            process.kill()
    assert " DEBUG " in stderr  # debug logging was on
    assert TOKEN not in stderr
    assert WEBHOOK_SECRET not in stderr
    assert TOKEN.split(":")[1] not in stderr
